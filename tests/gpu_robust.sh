#!/bin/bash
# GPU rows of the fault matrix (issue 7; docs/robustness.md).  Run by the lead
# on a machine with one GPU, after `make all`:
#
#     bash tests/gpu_robust.sh            (all rows)
#     bash tests/gpu_robust.sh sigkill strings   (only these rows)
#
# Each row runs a test program with and without libsyncsight.so, compares
# stdout and exit status, reads the trace back (a small reader built here from
# common/trace_io.c, and `syncsight dump/report`) and prints PASS/FAIL/SKIP;
# the last line is "N passed, N failed[, N skipped]".  Exit 1 on any failure.
# Work files: $ROBUST_OUT (default build/gpu-robust), kept for inspection.
# Environment: NVCC, NVCC_ARCH (-arch=sm_90), CUDA_HOME, MANY_CALLS (10000000),
# RSS_LIMIT_KB (262144: allowed VmHWM growth under the shim in the 10M-call row).
# The rows that measure what a trace keeps of a long loop (sigkill's loss
# bound, fsize, disk-full, many-calls) record everything (SYNCSIGHT_SAMPLE=off):
# under the sampled default (docs/sampling.md) a loop past the head leaves
# records only in its windows, and a bound on loss or size would test nothing.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
NVCC_ARCH=${NVCC_ARCH:--arch=sm_90}
OUT=${ROBUST_OUT:-build/gpu-robust}
SYNCSIGHT=$ROOT/build/syncsight
LIB=$ROOT/build/libsyncsight.so
MANY_CALLS=${MANY_CALLS:-10000000}
RSS_LIMIT_KB=${RSS_LIMIT_KB:-262144}
TP=$ROOT/test_programs
ROWS_ALL="clean sigkill segv abort thread-exit fork-noexec fork-exec fsize disk-full unwritable many-calls strings late-dlopen no-cuda errors cupti-taken"
ROWS=${*:-$ROWS_ALL}

for f in "$SYNCSIGHT" "$LIB"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "gpu_robust: $f missing (make all)"; exit 2; }
done
command -v "$NVCC" > /dev/null || { echo "gpu_robust: nvcc not found ($NVCC)"; exit 2; }
nvidia-smi -L > /dev/null 2>&1 || { echo "gpu_robust: no GPU visible (nvidia-smi -L failed)"; exit 2; }

rm -rf "$OUT"; mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
passed=0 failed=0 skipped=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "SKIP $1 ($2)"; skipped=$((skipped + 1)); }
want() { case " $ROWS " in *" $1 "*) return 0;; esac; return 1; }

# ---- the trace reader: one "key value" line per fact
cat > "$OUT/summ.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "syncsight/trace_io.h"
/* note <code> <value> | call <api name> <n> | api <n> | api-interposer <n> |
 * kernel <n> | memcpy <n> | nvtx <n> | kernel-name-max <bytes> |
 * nvtx-name-max <bytes> | device <d> (GPU records per device) |
 * last-api-ns <t> | pid <pid> | ppid <ppid> | meta-cupti <value> | end ok|truncated */
#define MAXID 65536
static uint32_t str_len[MAXID];
static char *api_name[4096];
static unsigned long api_count[4096];
int main(int argc, char **argv)
{
    char err[256];
    if (argc < 2) return 2;
    ss_reader *r = ss_reader_open(argv[1], err, sizeof err);
    if (!r) { printf("open-error %s\n", err); return 1; }
    const ss_rec_hdr *h;
    int st;
    unsigned long api = 0, interp = 0, kernel = 0, memcpy_n = 0, nvtx = 0, per_dev[64] = {0};
    uint32_t kname[1 << 16], nkname = 0, nname[1 << 16], nnname = 0;
    uint64_t last_api = 0;
    while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
        switch (h->type) {
        case SS_REC_STRING: { const ss_string_rec *s = (const void *)h; if (s->id < MAXID) str_len[s->id] = s->len;
            break; }
        case SS_REC_API_NAME: { const ss_api_name_rec *a = (const void *)h;
            if (a->cbid < 4096 && !api_name[a->cbid]) api_name[a->cbid] = strndup((const char *)(a + 1), a->len);
            break; }
        case SS_REC_API: { const ss_api_rec *a = (const void *)h; api++;
            if (a->flags & SS_API_F_INTERPOSER) interp++;
            if (a->cbid < 4096) api_count[a->cbid]++;
            if (a->t_exit > last_api) last_api = a->t_exit;
            break; }
        case SS_REC_KERNEL: { const ss_kernel_rec *k = (const void *)h; kernel++;
            if (nkname < (1 << 16)) kname[nkname++] = k->name_id;
            if (k->g.device < 64) per_dev[k->g.device]++;
            break; }
        case SS_REC_MEMCPY: { const ss_memcpy_rec *m = (const void *)h; memcpy_n++;
            if (m->g.device < 64) per_dev[m->g.device]++;
            break; }
        case SS_REC_NVTX: { const ss_nvtx_rec *v = (const void *)h; nvtx++;
            if (nnname < (1 << 16)) nname[nnname++] = v->name_id;
            break; }
        case SS_REC_NOTE: { const ss_note_rec *n = (const void *)h;
            printf("note %u %llu\n", n->code, (unsigned long long)n->value);
            break; }
        case SS_REC_META: { const ss_meta_rec *m = (const void *)h; const char *k = (const char *)(m + 1);
            if (m->key_len == 5 && !memcmp(k, "cupti", 5))
                printf("meta-cupti %.*s\n", (int)m->value_len, k + m->key_len + 1);
            break; }
        default: break;
        }
    }
    uint32_t kmax = 0, nmax = 0;
    for (uint32_t i = 0; i < nkname; i++) if (kname[i] < MAXID && str_len[kname[i]] > kmax) kmax = str_len[kname[i]];
    for (uint32_t i = 0; i < nnname; i++) if (nname[i] < MAXID && str_len[nname[i]] > nmax) nmax = str_len[nname[i]];
    for (int c = 0; c < 4096; c++)
        if (api_count[c]) printf("call %s %lu\n", api_name[c] ? api_name[c] : "?", api_count[c]);
    for (int d = 0; d < 64; d++) if (per_dev[d]) printf("device %d %lu\n", d, per_dev[d]);
    const ss_file_header *fh = ss_reader_header(r);
    printf("pid %u\nppid %u\n", fh->pid, fh->ppid);
    printf("api %lu\napi-interposer %lu\nkernel %lu\nmemcpy %lu\nnvtx %lu\n", api, interp, kernel, memcpy_n, nvtx);
    printf("kernel-name-max %u\nnvtx-name-max %u\nlast-api-ns %llu\nend %s\n", kmax, nmax,
           (unsigned long long)last_api, st == SS_READ_END ? "ok" : "truncated");
    ss_reader_close(r);
    return 0;
}
EOF
cc -std=gnu11 -O2 -I"$ROOT/include" -o "$OUT/summ" "$OUT/summ.c" "$ROOT/common/trace_io.c" || { echo "gpu_robust: cannot build the reader"; exit 2; }

# ---- builds
build() { # NAME SOURCE FLAGS...
    local name=$1 src=$2; shift 2
    "$NVCC" $NVCC_ARCH -O2 -g -std=c++17 "$@" -o "$OUT/bin/$name" "$src" > "$OUT/build-$name.log" 2>&1 ||
        { echo "gpu_robust: build of $name failed:"; tail -n 20 "$OUT/build-$name.log"; exit 2; }
}
echo "== building"
build robust_faults "$TP/robust_faults.cu" &
build robust_faults_shared "$TP/robust_faults.cu" -cudart shared &
build fork_child "$TP/fork_child.cu" &
# Host code only, built by the host compiler: nvcc would add fat-binary
# registration that needs a linked cudart, which this program must not have.
${CXX:-g++} -O2 -g -std=c++17 -x c++ -I"$CUDA_HOME/include" -o "$OUT/bin/robust_late_dlopen" \
    "$TP/robust_late_dlopen.cu" -ldl > "$OUT/build-robust_late_dlopen.log" 2>&1 ||
    { echo "gpu_robust: build of robust_late_dlopen failed:"; tail -n 20 "$OUT/build-robust_late_dlopen.log"; exit 2; }
"$NVCC" $NVCC_ARCH -O2 -std=c++17 -DROBUST_CUPTI_HOLDER_LIB -shared -Xcompiler -fPIC -I"$CUDA_HOME/include" \
    -L"$CUDA_HOME/lib64" -lcupti -Xlinker -rpath,"$CUDA_HOME/lib64" \
    -o "$OUT/bin/librobust_cupti_holder.so" "$TP/robust_cupti_taken.cu" > "$OUT/build-holder.log" 2>&1 || echo holder >> "$OUT/build-failed"
wait
[ -f "$OUT/build-failed" ] && { echo "gpu_robust: holder library build failed:"; cat "$OUT/build-holder.log"; exit 2; }
# The program links the holder with --no-as-needed: it only has weak
# references to it, and the holder must be a DT_NEEDED library so that its
# constructor runs before the preloaded shim's.
build robust_cupti_taken "$TP/robust_cupti_taken.cu" -cudart shared -Xlinker --no-as-needed \
    -L"$OUT/bin" -lrobust_cupti_holder -Xlinker -rpath,"$OUT/bin"
B=$OUT/bin

# run_pair ROW PROGRAM ARGS...: plain run and shim run (LD_PRELOAD, output dir
# $OUT/ROW/traces), stdout/stderr/rc of each in $OUT/ROW.  Extra environment
# for the shim run: the SHIM_ENV array.
SHIM_ENV=()
run_pair() {
    local row=$1; shift
    local d=$OUT/$row
    mkdir -p "$d"
    timeout 300 "$@" > "$d/plain.out" 2> "$d/plain.err"; echo $? > "$d/plain.rc"
    timeout 300 env LD_PRELOAD="$LIB" SYNCSIGHT_OUTPUT_DIR="$d/traces" "${SHIM_ENV[@]}" "$@" \
        > "$d/shim.out" 2> "$d/shim.err"; echo $? > "$d/shim.rc"
}
same_output() { # ROW: stdout and exit status equal with and without the shim
    local d=$OUT/$1
    cmp -s "$d/plain.out" "$d/shim.out" && [ "$(cat "$d/plain.rc")" = "$(cat "$d/shim.rc")" ]
}
why_differs() {
    local d=$OUT/$1
    echo "rc plain $(cat "$d/plain.rc") shim $(cat "$d/shim.rc"); stdout diff: $(diff "$d/plain.out" "$d/shim.out" | head -5 | tr '\n' ' '); shim stderr: $(head -c 400 "$d/shim.err")"
}
traces() { ls "$OUT/$1"/traces/*.sstrace 2> /dev/null; }
ntraces() { traces "$1" | wc -l; }
summ() { # ROW [N]: summary of the N-th (default first) trace of ROW, cached
    local f; f=$(traces "$1" | sed -n "${2:-1}p")
    [ -n "$f" ] || { echo "no-trace"; return; }
    [ -f "$f.summ" ] || "$OUT/summ" "$f" > "$f.summ"
    cat "$f.summ"
}
has() { summ "$1" | grep -qx -- "$2"; }
val() { summ "$1" | awk -v k="$2" '$1 == k { print $2; exit }'; }
brief() { summ "$1" | grep -v '^call ' | tr '\n' ' '; }

echo "== rows: $ROWS"

# 1. A clean run: same output, full trace, clean end.
if want clean; then
    run_pair clean "$B/robust_faults"
    if same_output clean && has clean "note 7 0" && has clean "end ok" && [ "$(val clean kernel)" -gt 0 ] &&
       [ "$(val clean memcpy)" -gt 0 ] && [ "$(ntraces clean)" = 1 ]; then pass clean
    else fail clean "$(why_differs clean) | $(brief clean)"; fi
fi

# 2. SIGKILL mid-run: the trace reads back to its last flush, and what is lost
#    is bounded by the flush interval.
if want sigkill; then
    d=$OUT/sigkill; mkdir -p "$d"
    FLUSH_MS=100
    LD_PRELOAD="$LIB" SYNCSIGHT_OUTPUT_DIR="$d/traces" SYNCSIGHT_FLUSH_MS=$FLUSH_MS SYNCSIGHT_SAMPLE=off \
        "$B/robust_faults" loop 0 > "$d/shim.out" 2> "$d/shim.err" &
    pid=$!
    for _ in $(seq 1 300); do [ "$(wc -l < "$d/shim.out")" -ge 200 ] && break; sleep 0.1; done
    sleep 1
    kill_ns=$(python3 -c 'import time; print(time.monotonic_ns())')
    kill -KILL $pid; wait $pid 2> /dev/null
    lines=$(wc -l < "$d/shim.out")
    last=$(val sigkill last-api-ns)
    lost_ms=$(( (kill_ns - ${last:-0}) / 1000000 ))
    syncs=$(summ sigkill | awk '$1 == "call" && $2 ~ /^cudaStreamSynchronize/ { print $3 }')
    # The loss bound: the writer flushes every FLUSH_MS; allow one period of
    # scheduling slack on top of it.
    # A block cut by the kill is dropped by the reader ("end truncated"):
    # still a trace that reads back to its last complete flush.
    if [ "$(val sigkill api)" -gt 0 ] && ! summ sigkill | grep -q '^note 7 ' && [ "${syncs:-0}" -gt 0 ] &&
       [ "$lost_ms" -le $((2 * FLUSH_MS + 100)) ]; then
        pass "sigkill ($(summ sigkill | grep '^end '), program printed $lines iterations, trace has $syncs stream syncs, last record ${lost_ms} ms before the kill, flush ${FLUSH_MS} ms)"
    else fail sigkill "lost ${lost_ms} ms (bound $((2 * FLUSH_MS + 100))), $lines iterations printed, $(brief sigkill)"; fi
fi

# 3-4. SIGSEGV and abort(): handlers flush, then the program dies of its signal.
for sig in segv:11:139 abort:6:134; do
    IFS=: read -r mode signo rc <<< "$sig"
    want "$mode" || continue
    run_pair "$mode" "$B/robust_faults" "$mode"
    if same_output "$mode" && [ "$(cat "$OUT/$mode/shim.rc")" = "$rc" ] && has "$mode" "note 6 $signo" &&
       [ "$(val "$mode" api)" -gt 0 ] && ! summ "$mode" | grep -q '^note 7 '; then
        pass "$mode (GPU records flushed before death: kernel $(val "$mode" kernel), memcpy $(val "$mode" memcpy))"
    else fail "$mode" "$(why_differs "$mode") | $(brief "$mode")"; fi
done

# 5. exit() from a worker thread that made CUDA calls.
if want thread-exit; then
    run_pair thread-exit "$B/robust_faults" thread-exit
    if same_output thread-exit && has thread-exit "note 7 7" && [ "$(val thread-exit kernel)" -ge 2 ] && has thread-exit "end ok"; then
        pass thread-exit
    else fail thread-exit "$(why_differs thread-exit) | $(brief thread-exit)"; fi
fi

# 6. fork() without exec: the CPU-only child leaves no trace, the parent's is whole.
if want fork-noexec; then
    run_pair fork-noexec "$B/robust_faults" fork-noexec
    if same_output fork-noexec && [ "$(ntraces fork-noexec)" = 1 ] && has fork-noexec "note 7 0" &&
       [ "$(val fork-noexec kernel)" -ge 2 ]; then pass fork-noexec
    else fail fork-noexec "$(why_differs fork-noexec) | $(ntraces fork-noexec) traces | $(brief fork-noexec)"; fi
fi

# 7. fork()+exec() of a CUDA child: traced separately (two traces, each with
#    its own kernels and a clean end); the CPU-only fork child leaves none.
if want fork-exec; then
    run_pair fork-exec "$B/fork_child"
    ok=1; detail=""
    [ "$(ntraces fork-exec)" = 2 ] || ok=0
    for i in 1 2; do
        s=$(summ fork-exec $i | grep -v '^call ' | tr '\n' ' '); detail="$detail [trace $i: $s]"
        summ fork-exec $i | grep -qx "note 7 0" || ok=0
        [ "$(summ fork-exec $i | awk '$1 == "kernel" { print $2 }')" -gt 0 ] 2> /dev/null || ok=0
    done
    p1=$(summ fork-exec 1 | awk '$1 == "pid" { print $2 }'); p2=$(summ fork-exec 2 | awk '$1 == "pid" { print $2 }')
    pp1=$(summ fork-exec 1 | awk '$1 == "ppid" { print $2 }'); pp2=$(summ fork-exec 2 | awk '$1 == "ppid" { print $2 }')
    # The exec child is a child of the parent process.
    [ "$pp1" = "$p2" ] || [ "$pp2" = "$p1" ] || ok=0
    if same_output fork-exec && [ $ok = 1 ]; then pass fork-exec
    else fail fork-exec "$(why_differs fork-exec) | $(ntraces fork-exec) traces $detail"; fi
fi

# 8. RLIMIT_FSIZE: the program carries on (no SIGXFSZ), the trace stops below
#    the limit and says it is incomplete, with the blocks written before it
#    (API records: a limit below the first block, which carries CUDA's start-up
#    with its host-sync records and module images, would prove nothing).
#    stdout goes through a pipe so the limit applies to the trace only.
if want fsize; then
    d=$OUT/fsize; mkdir -p "$d"
    "$B/robust_faults" loop 20000 > "$d/plain.out" 2> "$d/plain.err"; echo $? > "$d/plain.rc"
    ( ulimit -f 1024; exec env LD_PRELOAD="$LIB" SYNCSIGHT_OUTPUT_DIR="$d/traces" SYNCSIGHT_FLUSH_MS=20 SYNCSIGHT_SAMPLE=off \
        "$B/robust_faults" loop 20000 2> "$d/shim.err" ) | cat > "$d/shim.out"
    echo "${PIPESTATUS[0]}" > "$d/shim.rc"
    f=$(traces fsize | head -1); size=$(stat -c %s "$f" 2> /dev/null || echo 0)
    if same_output fsize && [ "$size" -le 1048576 ] && [ "$(val fsize api)" -gt 0 ] && summ fsize | grep -q '^note 5 ' &&
       has fsize "end ok" && [ "$(grep -c '^syncsight:' "$d/shim.err")" = 1 ]; then pass "fsize (trace $size bytes)"
    else fail fsize "$(why_differs fsize) | size $size | $(brief fsize)"; fi
fi

# 9. The disk fills: a 1 MiB tmpfs (mounted as root, else in a user+mount
#    namespace).  The program carries on; one stderr line; the trace reads
#    back up to its last complete block and says it is incomplete (the note
#    when it still fitted, else the reader's truncation).
if want disk-full; then
    d=$OUT/disk-full; mkdir -p "$d/mnt"
    "$B/robust_faults" loop 20000 > "$d/plain.out" 2> "$d/plain.err"; echo $? > "$d/plain.rc"
    inner="mount -t tmpfs -o size=1m tmpfs '$d/mnt' && { LD_PRELOAD='$LIB' SYNCSIGHT_OUTPUT_DIR='$d/mnt/traces' \
        SYNCSIGHT_FLUSH_MS=20 SYNCSIGHT_SAMPLE=off '$B/robust_faults' loop 20000 > '$d/shim.out' 2> '$d/shim.err'; echo \$? > '$d/shim.rc';
        mkdir -p '$d/traces'; cp '$d'/mnt/traces/*.sstrace '$d/traces/'; umount '$d/mnt'; }"
    how=""
    if [ "$(id -u)" = 0 ]; then sh -c "$inner" > "$d/mount.log" 2>&1 && how=root
    elif unshare -r -m true 2> /dev/null; then unshare -r -m sh -c "$inner" > "$d/mount.log" 2>&1 && how=userns
    fi
    if [ -z "$how" ]; then skip disk-full "cannot mount a small tmpfs (not root, no user namespaces): $(head -c 200 "$d/mount.log" 2> /dev/null)"
    elif same_output disk-full && [ "$(grep -c '^syncsight:' "$d/shim.err")" = 1 ] && [ "$(val disk-full api)" -gt 0 ] &&
         { summ disk-full | grep -q '^note 5 ' || has disk-full "end truncated"; }; then
        pass "disk-full ($how; $(grep '^syncsight:' "$d/shim.err"))"
    else fail disk-full "$(why_differs disk-full) | $(brief disk-full)"; fi
fi

# 10. Output that cannot be created: one clear stderr line, the program runs untraced.
if want unwritable; then
    mkdir -p "$OUT/unwritable"; : > "$OUT/unwritable/notadir"
    SHIM_ENV=(SYNCSIGHT_OUTPUT_FILE="$OUT/unwritable/notadir/trace.sstrace")
    run_pair unwritable "$B/robust_faults"
    SHIM_ENV=()
    n=$(grep -c '^syncsight:' "$OUT/unwritable/shim.err")
    if same_output unwritable && [ "$n" = 1 ] && grep -q "notadir/trace.sstrace" "$OUT/unwritable/shim.err"; then pass unwritable
    else fail unwritable "$(why_differs unwritable) | $n syncsight lines"; fi
    # A directory without write permission (not meaningful as root).
    if [ "$(id -u)" != 0 ]; then
        mkdir -p "$OUT/unwritable-dir/ro"; chmod 0500 "$OUT/unwritable-dir/ro"
        SHIM_ENV=(SYNCSIGHT_OUTPUT_DIR="$OUT/unwritable-dir/ro")
        run_pair unwritable-dir "$B/robust_faults"
        SHIM_ENV=()
        if same_output unwritable-dir && [ "$(grep -c '^syncsight:' "$OUT/unwritable-dir/shim.err")" = 1 ]; then pass unwritable-dir
        else fail unwritable-dir "$(why_differs unwritable-dir)"; fi
    fi
fi

# 11. Ten million intercepted calls: memory stays bounded, every call is either
#     recorded or counted as dropped.
if want many-calls; then
    d=$OUT/many-calls; mkdir -p "$d"
    start=$(date +%s)
    SHIM_ENV=(SYNCSIGHT_SAMPLE=off)
    run_pair many-calls "$B/robust_faults" many-calls "$MANY_CALLS"
    SHIM_ENV=()
    secs=$(( $(date +%s) - start ))
    plain_kb=$(awk '$1 == "rss-growth-kb" { print $2 }' "$d/plain.err")
    shim_kb=$(awk '$1 == "rss-growth-kb" { print $2 }' "$d/shim.err")
    queries=$(summ many-calls | awk '$1 == "call" && $2 ~ /^cudaStreamQuery/ { n += $3 } END { print n + 0 }')
    dropped=$(summ many-calls | awk '$1 == "note" && $2 == 3 { n += $3 } END { print n + 0 }')
    if same_output many-calls && [ -n "$shim_kb" ] && [ "$shim_kb" -le "$RSS_LIMIT_KB" ] &&
       [ $((queries + dropped)) -ge "$MANY_CALLS" ] && ! has many-calls "end truncated"; then
        pass "many-calls ($MANY_CALLS calls in ${secs}s for both runs; VmHWM growth ${shim_kb} kB with the shim, ${plain_kb} kB without; recorded $queries, dropped $dropped)"
    else fail many-calls "$(why_differs many-calls) | growth ${shim_kb:-?} kB (limit $RSS_LIMIT_KB) recorded $queries dropped $dropped | $(brief many-calls)"; fi
    rm -f "$d"/traces/*.sstrace   # over a gigabyte
fi

# 12. 64 KiB kernel names and NVTX strings with control characters: the
#     program is unaffected, the strings are recorded, and no output of the
#     analyzer carries a raw control character (text, JSON, HTML, NVTXT).
if want strings; then
    d=$OUT/strings
    run_pair strings "$B/robust_faults" strings
    f=$(traces strings | head -1)
    ok=1; why=""
    same_output strings || { ok=0; why="$(why_differs strings)"; }
    if [ -n "$f" ]; then
        "$SYNCSIGHT" dump "$f" > "$d/dump.txt" 2> "$d/dump.err" || { ok=0; why="$why dump failed"; }
        "$SYNCSIGHT" dump --json "$f" > "$d/dump.jsonl" 2> "$d/dump.err" || { ok=0; why="$why dump --json failed"; }
        "$SYNCSIGHT" report "$f" > "$d/report.txt" 2> "$d/report.err" || { ok=0; why="$why report failed"; }
        "$SYNCSIGHT" report --format json "$f" > "$d/report.json" 2>> "$d/report.err" || { ok=0; why="$why report json failed"; }
        "$SYNCSIGHT" export --format html -o "$d/export.html" "$f" 2>> "$d/report.err" || { ok=0; why="$why html failed"; }
        "$SYNCSIGHT" export --format nvtxt -o "$d/export.nvtxt" "$f" 2>> "$d/report.err" || { ok=0; why="$why nvtxt failed"; }
        "$SYNCSIGHT" export --format perfetto -o "$d/export.json" "$f" 2>> "$d/report.err" || { ok=0; why="$why perfetto failed"; }
        bad=$(python3 - "$d" << 'PY'
import json, sys, os
d = sys.argv[1]
bad = []
for name in ("dump.txt", "dump.jsonl", "report.txt", "report.json", "export.html", "export.nvtxt", "export.json", "dump.err", "report.err"):
    data = open(os.path.join(d, name), "rb").read()
    raw = [b for b in data if b < 0x20 and b not in (0x0a, 0x09, 0x0d) or b == 0x7f]
    # \r is allowed only as part of \r\n line ends (NVTXT may use them)
    if raw or b"\r" in data.replace(b"\r\n", b""):
        bad.append(f"{name}: raw control bytes")
    if b"\x1b[" in data:
        bad.append(f"{name}: raw ESC sequence")
    if name == "export.html" and (b"</script><b>" in data):
        bad.append("export.html: unescaped HTML from the program")
try:
    json.load(open(os.path.join(d, "report.json")))
    json.load(open(os.path.join(d, "export.json")))
    for line in open(os.path.join(d, "dump.jsonl")):
        json.loads(line)
except Exception as e:
    bad.append(f"invalid JSON: {e}")
print("; ".join(bad))
PY
)
        [ -z "$bad" ] || { ok=0; why="$why $bad"; }
        kmax=$(val strings kernel-name-max); nmax=$(val strings nvtx-name-max)
        # The long kernel's mangled name is over 64 KiB, the NVTX texts 64 KiB.
        [ "${kmax:-0}" -ge 65536 ] || { ok=0; why="$why longest kernel name recorded: ${kmax:-0} bytes (want >= 65536)"; }
        [ "${nmax:-0}" -ge 65534 ] || { ok=0; why="$why longest NVTX text recorded: ${nmax:-0} bytes (want >= 65534)"; }
    else ok=0; why="$why no trace"; fi
    if [ $ok = 1 ]; then pass "strings (kernel name $kmax bytes, NVTX $nmax bytes, all outputs escaped)"
    else fail strings "$why"; fi
fi

# 13. cudart loaded late with dlopen(RTLD_LOCAL): calls still recorded.
if want late-dlopen; then
    run_pair late-dlopen env CUDA_HOME="$CUDA_HOME" "$B/robust_late_dlopen"
    calls=$(summ late-dlopen | awk '$1 == "call" { print $2 }' | tr '\n' ' ')
    if same_output late-dlopen && summ late-dlopen | grep -q '^call cudaMalloc ' &&
       summ late-dlopen | grep -q '^call cudaMemcpy ' && [ "$(val late-dlopen memcpy)" -gt 0 ] && has late-dlopen "note 7 0"; then
        pass "late-dlopen (calls: $calls)"
    else fail late-dlopen "$(why_differs late-dlopen) | calls: $calls | $(brief late-dlopen)"; fi
fi

# 14. A program that never uses CUDA: same output, no trace, nothing on stderr.
if want no-cuda; then
    d=$OUT/no-cuda; mkdir -p "$d"
    run_pair no-cuda sh -c 'ls -la /etc | sort; echo done'
    if same_output no-cuda && [ "$(ntraces no-cuda)" = 0 ] && [ ! -e "$d/traces" ] && [ ! -s "$d/shim.err" ]; then pass no-cuda
    else fail no-cuda "$(why_differs no-cuda) | traces: $(ntraces no-cuda)"; fi
    # And a Python program that imports nothing CUDA-related.
    run_pair no-cuda-python python3 -c 'import json, hashlib; print(hashlib.sha256(json.dumps(list(range(1000))).encode()).hexdigest())'
    if same_output no-cuda-python && [ "$(ntraces no-cuda-python)" = 0 ] && [ ! -s "$OUT/no-cuda-python/shim.err" ]; then pass no-cuda-python
    else fail no-cuda-python "$(why_differs no-cuda-python)"; fi
fi

# 15. CUDA errors returned to the program unchanged, static cudart (CUPTI
#     path) and shared cudart (interposer path).
if want errors; then
    for v in robust_faults robust_faults_shared; do
        row=errors-static; [ "$v" = robust_faults_shared ] && row=errors-shared
        run_pair "$row" "$B/$v" errors
        if same_output "$row" && grep -q "errors: done" "$OUT/$row/shim.out" && [ "$(ntraces "$row")" = 1 ]; then
            pass "$row ($(grep -c ' = ' "$OUT/$row/shim.out") return codes identical)"
        else fail "$row" "$(why_differs "$row")"; fi
    done
fi

# 16. CUPTI already taken by another subscriber: the program and the other
#     tool work as before; the shim says so once, notes it in the trace and
#     still records what the interposer sees.
if want cupti-taken; then
    run_pair cupti-taken "$B/robust_cupti_taken"
    d=$OUT/cupti-taken
    if same_output cupti-taken && grep -qx "holder cuptiSubscribe = 0" "$d/shim.out" &&
       grep -qx "holder saw runtime calls: yes" "$d/shim.out" &&
       [ "$(grep -c '^syncsight: CUPTI is in use by another tool' "$d/shim.err")" = 1 ] &&
       [ "$(grep -c '^syncsight:' "$d/shim.err")" = 1 ] &&
       summ cupti-taken | grep -q '^note 1 ' && summ cupti-taken | grep -q '^meta-cupti taken' &&
       [ "$(val cupti-taken api-interposer)" -gt 0 ] && summ cupti-taken | grep -q '^call cudaMemcpyAsync' ; then
        "$SYNCSIGHT" report --format json "$(traces cupti-taken | head -1)" > "$d/report.json" 2> "$d/report.err"
        if python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r["traces"][0]["summary"]; sys.exit(0 if t.get("gpu_timeline") is False and t.get("note") else 1)' "$d/report.json"; then
            pass "cupti-taken (interposer recorded $(val cupti-taken api-interposer) calls; report says: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["traces"][0]["summary"]["note"])' "$d/report.json"))"
        else fail cupti-taken "report does not say the GPU timeline is missing: $(head -c 300 "$d/report.json")"; fi
    else fail cupti-taken "$(why_differs cupti-taken) | $(brief cupti-taken)"; fi
fi

echo "$passed passed, $failed failed$([ $skipped -gt 0 ] && echo ", $skipped skipped")"
[ $failed = 0 ]
