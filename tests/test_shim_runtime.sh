#!/bin/sh
# CPU tests of the shim's lifecycle, buffers and file (preload/lifecycle.c,
# buffers.c, writer.c): file creation, exit paths, fatal signals, SIGKILL,
# fork, unwritable output, RLIMIT_FSIZE.  No GPU: SYNCSIGHT_SELFTEST=<n> makes the constructor write n
# synthetic API records (cbid 0) + a string, a kernel and an NVTX record
# through the real buffer/writer path; a small reader built here from
# common/trace_io.c reads the traces back.  Exits non-zero on any failure.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac   # absolute: the test runs programs elsewhere
LIB="$BUILD/libsyncsight.so"
CC=${CC:-cc}
[ -f "$LIB" ] || { echo "test_shim_runtime: $LIB missing (make $BUILD/libsyncsight.so)"; exit 1; }
T=$(mktemp -d /tmp/ss_shim_test.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAIL=0
fail() { echo "FAIL: $*"; FAIL=1; }
ok() { echo "ok: $*"; }

# --- helpers: a trace summarizer and a victim program ----------------------
cat > "$T/summ.c" <<'EOF'
#include <stdio.h>
#include "syncsight/trace_io.h"
/* Prints: one line per NOTE ("note <code> <value>"), "api <n>" (selftest
 * API records), "kernel <n>", "thread <n>", "end <ok|truncated>". */
int main(int argc, char **argv)
{
    char err[256];
    if (argc < 2) return 2;
    ss_reader *r = ss_reader_open(argv[1], err, sizeof err);
    if (!r) { printf("open-error %s\n", err); return 1; }
    const ss_rec_hdr *h;
    int st, api = 0, kernel = 0, thread = 0;
    while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
        if (h->type == SS_REC_NOTE) {
            const ss_note_rec *n = (const void *)h;
            printf("note %u %llu\n", n->code, (unsigned long long)n->value);
        } else if (h->type == SS_REC_API && ((const ss_api_rec *)h)->cbid == 0) {
            api++;
        } else if (h->type == SS_REC_KERNEL) {
            kernel++;
        } else if (h->type == SS_REC_THREAD) {
            thread++;
        }
    }
    printf("api %d\nkernel %d\nthread %d\nend %s\n", api, kernel, thread,
           st == SS_READ_END ? "ok" : "truncated");
    ss_reader_close(r);
    return 0;
}
EOF
cat > "$T/victim.c" <<'EOF'
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static void *exit_from_thread(void *arg) { (void)arg; exit(7); }
int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    printf("victim %s\n", mode);
    fflush(stdout);
    if (!strcmp(mode, "exit")) return 3;
    if (!strcmp(mode, "thread-exit")) {
        pthread_t t;
        pthread_create(&t, NULL, exit_from_thread, NULL);
        pthread_join(t, NULL);
        return 1;
    }
    if (!strcmp(mode, "segv")) { volatile int *p = (int *)(long)argc - argc; *p = 1; }
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "sleep")) { sleep(30); return 0; }
    if (!strcmp(mode, "fork")) {
        pid_t c = fork();
        if (c == 0) exit(5);
        int status;
        waitpid(c, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
    }
    return 0;
}
EOF
$CC -std=gnu11 -I"$ROOT/include" -o "$T/summ" "$T/summ.c" "$ROOT/common/trace_io.c" || { echo "cannot build reader"; exit 1; }
$CC -std=gnu11 -pthread -o "$T/victim" "$T/victim.c" || { echo "cannot build victim"; exit 1; }

# Run the victim under the shim with its trace in $T/<name>.
run() {  # run NAME MODE [env...]
    name=$1; mode=$2; shift 2
    mkdir -p "$T/$name"
    ( cd "$T/$name" && env LD_PRELOAD="$LIB" SYNCSIGHT_OUTPUT_DIR="$T/$name/out" "$@" \
        "$T/victim" "$mode" > stdout 2> stderr )
    echo $? > "$T/$name/rc"
}
trace_of() { ls "$T/$1"/out/*.sstrace 2>/dev/null | head -1; }
summary() { f=$(trace_of "$1"); [ -n "$f" ] && "$T/summ" "$f"; }
has() { summary "$1" | grep -qx "$2"; }

# 1. A program that never uses CUDA: same output, no file, no directory.
ls -la /etc > "$T/plain.out" 2>&1
( cd "$T" && LD_PRELOAD="$LIB" ls -la /etc > "$T/pre.out" 2>&1 )
if cmp -s "$T/plain.out" "$T/pre.out" && [ ! -e "$T/syncsight.data" ]; then ok "non-CUDA program untouched"
else fail "non-CUDA program: output differs or ./syncsight.data was created"; fi
run nocuda exit
if [ "$(cat "$T/nocuda/rc")" = 3 ] && [ ! -e "$T/nocuda/out" ] && [ ! -s "$T/nocuda/stderr" ]; then ok "no records: no trace, no stderr"
else fail "no-record run left $(ls "$T/nocuda")/stderr: $(cat "$T/nocuda/stderr")"; fi

# 2. Return from main: all records and EXIT with the status.
run ret exit SYNCSIGHT_SELFTEST=5
if has ret "api 5" && has ret "kernel 1" && has ret "note 7 3" && has ret "end ok" && has ret "thread 1"; then ok "return from main"
else fail "return from main: $(summary ret | tr '\n' ' ')"; fi
case $(basename "$(trace_of ret)") in victim.[0-9]*.sstrace) ok "file name <exe>.<pid>.sstrace";;
  *) fail "file name $(trace_of ret)";; esac
[ "$(stat -c %a "$(trace_of ret)")" = 600 ] && ok "mode 0600" || fail "trace mode $(stat -c %a "$(trace_of ret)")"

# 3. exit() from a worker thread.
run thr thread-exit SYNCSIGHT_SELFTEST=5
if [ "$(cat "$T/thr/rc")" = 7 ] && has thr "api 5" && has thr "note 7 7"; then ok "exit from a thread"
else fail "exit from thread: rc $(cat "$T/thr/rc") $(summary thr | tr '\n' ' ')"; fi

# 4. SIGSEGV (a real fault) and abort(): records flushed, SIGNAL note, the
#    program still dies of its signal.
run segv segv SYNCSIGHT_SELFTEST=5
if [ "$(cat "$T/segv/rc")" = 139 ] && has segv "api 5" && has segv "note 6 11" && ! summary segv | grep -q "^note 7 "; then ok "SIGSEGV"
else fail "SIGSEGV: rc $(cat "$T/segv/rc") $(summary segv | tr '\n' ' ')"; fi
run abrt abort SYNCSIGHT_SELFTEST=5
if [ "$(cat "$T/abrt/rc")" = 134 ] && has abrt "api 5" && has abrt "note 6 6"; then ok "abort"
else fail "abort: rc $(cat "$T/abrt/rc") $(summary abrt | tr '\n' ' ')"; fi

# 5. SIGKILL: what the writer thread flushed (every SYNCSIGHT_FLUSH_MS) survives.
mkdir -p "$T/kill"
( cd "$T/kill" && LD_PRELOAD="$LIB" SYNCSIGHT_OUTPUT_DIR="$T/kill/out" SYNCSIGHT_SELFTEST=5 \
    SYNCSIGHT_FLUSH_MS=50 "$T/victim" sleep > stdout 2>&1 & echo $! > "$T/kill/pid"; wait ) &
sleep 1
kill -KILL "$(cat "$T/kill/pid")" 2>/dev/null
wait
if has kill "api 5" && has kill "end ok" && ! summary kill | grep -q "^note 7 "; then ok "SIGKILL keeps flushed records"
else fail "SIGKILL: $(summary kill | tr '\n' ' ')"; fi

# 6. fork(): the child writes its own file with SS_NOTE_FORKED and only its
#    own records; the parent's file is not disturbed.
run fork fork SYNCSIGHT_SELFTEST=4
n=$(ls "$T/fork/out"/*.sstrace 2>/dev/null | wc -l)
ppid_file=""; child_file=""
for f in "$T/fork/out"/*.sstrace; do
    if "$T/summ" "$f" | grep -q "^note 8 "; then child_file=$f; else ppid_file=$f; fi
done
if [ "$n" = 2 ] && [ -n "$child_file" ] && "$T/summ" "$child_file" | grep -qx "api 4" &&
   "$T/summ" "$child_file" | grep -qx "note 7 5" && "$T/summ" "$ppid_file" | grep -qx "api 4" &&
   "$T/summ" "$ppid_file" | grep -qx "note 7 5"; then ok "fork: separate child trace"
else fail "fork: $n files; child: $([ -n "$child_file" ] && "$T/summ" "$child_file" | tr '\n' ' ') parent: $("$T/summ" "$ppid_file" | tr '\n' ' ')"; fi

# 7. Unwritable output directory: one stderr line naming the path, program unharmed.
mkdir -p "$T/ro/out"; chmod 0500 "$T/ro/out"
if [ "$(id -u)" != 0 ]; then
    run ro exit SYNCSIGHT_SELFTEST=5
    lines=$(grep -c "syncsight: cannot create trace file $T/ro/out/" "$T/ro/stderr")
    if [ "$(cat "$T/ro/rc")" = 3 ] && [ "$lines" = 1 ] && grep -qx "victim exit" "$T/ro/stdout"; then ok "unwritable directory"
    else fail "unwritable directory: rc $(cat "$T/ro/rc") stderr: $(cat "$T/ro/stderr")"; fi
fi
# root can write anywhere: a path under a regular file fails for everyone.
: > "$T/notadir"
run nd exit SYNCSIGHT_SELFTEST=5 SYNCSIGHT_OUTPUT_FILE="$T/notadir/trace"
lines=$(grep -c "syncsight: cannot create trace file $T/notadir/trace" "$T/nd/stderr")
# (a machine without a GPU also gets the one "CUPTI unavailable" line)
if [ "$(cat "$T/nd/rc")" = 3 ] && [ "$lines" = 1 ] && [ "$(grep -vc CUPTI "$T/nd/stderr")" = 1 ]; then ok "uncreatable output file"
else fail "uncreatable file: rc $(cat "$T/nd/rc") stderr: $(cat "$T/nd/stderr")"; fi

# 8. SYNCSIGHT_OUTPUT_FILE + SYNCSIGHT_ROOT_PID naming: the root process
#    writes the exact name, its fork child name.<pid>.
mkdir -p "$T/named"
( cd "$T/named" && SYNCSIGHT_OUTPUT_FILE="$T/named/t.sstrace" SYNCSIGHT_SELFTEST=2 \
    sh -c 'SYNCSIGHT_ROOT_PID=$$ LD_PRELOAD="$1" exec "$0" fork' "$T/victim" "$LIB" > /dev/null 2>&1 )
if [ -f "$T/named/t.sstrace" ] && "$T/summ" "$T/named/t.sstrace" | grep -qx "note 7 5" &&
   ! "$T/summ" "$T/named/t.sstrace" | grep -q "^note 8 " &&
   [ "$(ls "$T/named" | grep -c '^t\.sstrace\.[0-9]*$')" = 1 ]; then ok "OUTPUT_FILE/ROOT_PID naming"
else fail "OUTPUT_FILE naming: $(ls "$T/named" | tr '\n' ' ')"; fi

# 9. RLIMIT_FSIZE: the trace stops below the limit; no SIGXFSZ kills the program.
mkdir -p "$T/fsz"
( cd "$T/fsz" && ulimit -f 64 && LD_PRELOAD="$LIB" SYNCSIGHT_OUTPUT_DIR="$T/fsz/out" \
    SYNCSIGHT_SELFTEST=5000 "$T/victim" exit > stdout 2> stderr; echo $? > rc )
f=$(trace_of fsz)
size=$(stat -c %s "$f" 2>/dev/null || echo 0)
if [ "$(cat "$T/fsz/rc")" = 3 ] && [ "$size" -le 65536 ] && "$T/summ" "$f" | grep -q "^note 5 " &&
   "$T/summ" "$f" | grep -qx "end ok" && grep -q "file size limit" "$T/fsz/stderr"; then ok "RLIMIT_FSIZE"
else fail "RLIMIT_FSIZE: rc $(cat "$T/fsz/rc") size $size $("$T/summ" "$f" | tr '\n' ' ') $(cat "$T/fsz/stderr")"; fi

# 10. SYNCSIGHT_DISABLE=1: nothing at all.
run dis exit SYNCSIGHT_SELFTEST=5 SYNCSIGHT_DISABLE=1
if [ ! -e "$T/dis/out" ] && [ "$(cat "$T/dis/rc")" = 3 ]; then ok "SYNCSIGHT_DISABLE"
else fail "SYNCSIGHT_DISABLE left a trace"; fi

# 11. Buffer pool exhaustion: bounded memory, losses counted (SS_NOTE_DROPPED_API).
run drop exit SYNCSIGHT_SELFTEST=200000 SYNCSIGHT_BUFFER_MB=4 SYNCSIGHT_FLUSH_MS=60000
if has drop "end ok" && summary drop | grep -q "^note 3 [1-9]" && has drop "note 7 3"; then ok "pool exhaustion counted"
else fail "pool exhaustion: $(summary drop | tr '\n' ' ')"; fi

[ $FAIL = 0 ] && echo "test_shim_runtime: all passed"
exit $FAIL
