#!/bin/bash
# CPU rows of issue 7's security part (docs/robustness.md): how the shim
# creates trace files (0600, O_EXCL, never through a symlink, directory
# 0700) whatever the umask and whatever is planted in its way.  No GPU: the
# shim's SYNCSIGHT_SELFTEST hook writes synthetic records through the real
# writer.  Exit 1 on any failure.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac   # absolute: the test runs programs elsewhere
LIB=$BUILD/libsyncsight.so
[ -f "$LIB" ] || { echo "test_robust_security: $LIB missing (make $BUILD/libsyncsight.so)"; exit 1; }
T=$(mktemp -d /tmp/ss_robust_sec.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAIL=0
fail() { echo "FAIL: $*"; FAIL=1; }
ok() { echo "ok: $*"; }
printf 'int main(void) { return 0; }\n' > "$T/prog.c"
cc -o "$T/prog" "$T/prog.c" || { echo "cannot build the test program"; exit 1; }

# 1. A symlink where the trace file is to be created: the shim must not
#    write through it, must not touch its target, and the program runs on.
echo "precious" > "$T/target"
ln -s "$T/target" "$T/link.sstrace"
( cd "$T" && LD_PRELOAD="$LIB" SYNCSIGHT_SELFTEST=3 SYNCSIGHT_OUTPUT_FILE="$T/link.sstrace" SYNCSIGHT_ROOT_PID=$$ \
    sh -c 'exec "$0"' "$T/prog" > "$T/1.out" 2> "$T/1.err" ); rc=$?
# (ROOT_PID is the shell's pid; the exec'd program has another pid, so it
#  writes link.sstrace.<pid>: run it again with its own pid as root.)
( cd "$T" && sh -c 'SYNCSIGHT_ROOT_PID=$$ LD_PRELOAD="$1" SYNCSIGHT_SELFTEST=3 SYNCSIGHT_OUTPUT_FILE="$2" exec "$0"' \
    "$T/prog" "$LIB" "$T/link.sstrace" > "$T/1b.out" 2> "$T/1b.err" ); rc2=$?
if [ "$(cat "$T/target")" = precious ] && [ -L "$T/link.sstrace" ] && [ $rc = 0 ] && [ $rc2 = 0 ] &&
   [ "$(grep -v CUPTI "$T/1b.err" | grep -c '^syncsight: cannot create trace file')" = 1 ]; then ok "symlink at the trace path: not followed, target untouched"
else fail "symlink: target now '$(head -c 40 "$T/target")', rc $rc/$rc2, stderr: $(cat "$T/1b.err")"; fi

# 2. A symlink planted at the exact <exe>.<pid>.sstrace name in the output
#    directory (the pid is known in advance: exec keeps it).
mkdir -p "$T/out2"
echo "precious" > "$T/target2"
( cd "$T" && sh -c 'ln -s "$2" "$3/prog.$$.sstrace"; LD_PRELOAD="$1" SYNCSIGHT_SELFTEST=3 SYNCSIGHT_OUTPUT_DIR="$3" exec "$0"' \
    "$T/prog" "$LIB" "$T/target2" "$T/out2" > "$T/2.out" 2> "$T/2.err" ); rc=$?
if [ "$(cat "$T/target2")" = precious ] && [ $rc = 0 ] && grep -q "^syncsight: cannot create trace file" "$T/2.err"; then
    ok "planted symlink in the output directory: refused with one stderr line"
else fail "planted symlink: target '$(head -c 40 "$T/target2")', rc $rc, stderr: $(cat "$T/2.err")"; fi

# 3. An existing regular file at the path: never truncated or appended to.
echo "old trace" > "$T/existing.sstrace"
( cd "$T" && sh -c 'SYNCSIGHT_ROOT_PID=$$ LD_PRELOAD="$1" SYNCSIGHT_SELFTEST=3 SYNCSIGHT_OUTPUT_FILE="$2" exec "$0"' \
    "$T/prog" "$LIB" "$T/existing.sstrace" > /dev/null 2> "$T/3.err" ); rc=$?
if [ "$(cat "$T/existing.sstrace")" = "old trace" ] && [ $rc = 0 ]; then ok "existing file kept (O_EXCL)"
else fail "existing file changed: '$(head -c 40 "$T/existing.sstrace")', rc $rc"; fi

# 4. Permissive umask: the trace is still 0600, a directory the shim creates 0700.
#    (One level: the shim creates the output directory, not its parents.)
( cd "$T" && umask 000 && LD_PRELOAD="$LIB" SYNCSIGHT_SELFTEST=3 SYNCSIGHT_OUTPUT_DIR="$T/made-by-shim" "$T/prog" 2> "$T/4.err" )
f=$(ls "$T"/made-by-shim/*.sstrace 2> /dev/null | head -1)
if [ -n "$f" ] && [ "$(stat -c %a "$f")" = 600 ] && [ "$(stat -c %a "$T/made-by-shim")" = 700 ]; then ok "umask 000: file 0600, directory 0700"
else fail "umask 000: file $(stat -c %a "$f" 2> /dev/null) dir $(stat -c %a "$T/made-by-shim" 2> /dev/null) stderr: $(cat "$T/4.err")"; fi

# 5. The trace file name comes from the executable's real name, not argv[0]:
#    an argv[0] with "../" cannot move the trace out of the output directory.
mkdir -p "$T/out5/sub"
( cd "$T/out5/sub" && LD_PRELOAD="$LIB" SYNCSIGHT_SELFTEST=3 SYNCSIGHT_OUTPUT_DIR="$T/out5/sub" \
    bash -c 'exec -a "../../escaped" "$0"' "$T/prog" 2> "$T/5.err" )
if [ -z "$(find "$T" -maxdepth 2 -name '*escaped*')" ] && [ "$(ls "$T/out5/sub" | grep -c '\.sstrace$')" = 1 ]; then
    ok "argv[0] with ../ stays inside the output directory"
else fail "argv[0]: files: $(find "$T" -name '*.sstrace*' | tr '\n' ' ')"; fi

# 6. The analyzer writes only where -o says, and never replaces a symlink's
#    target it was not given: report -o onto a dangling symlink is the user's
#    choice, so only check that reading a trace creates nothing next to it.
tr=$(ls "$T"/made-by-shim/*.sstrace | head -1)
before=$(ls -A "$T/made-by-shim" | wc -l)
"$BUILD/syncsight" report "$tr" > /dev/null 2>&1
"$BUILD/syncsight" report --format json "$tr" > /dev/null 2>&1
"$BUILD/syncsight" dump "$tr" > /dev/null 2>&1
after=$(ls -A "$T/made-by-shim" | wc -l)
if [ "$before" = "$after" ]; then ok "report/dump create no files"
else fail "report/dump created files next to the trace: $(ls -A "$T/made-by-shim" | tr '\n' ' ')"; fi

[ $FAIL = 0 ] && echo "test_robust_security: all passed"
exit $FAIL
