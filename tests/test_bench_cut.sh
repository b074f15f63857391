#!/bin/bash
# bench/run_bench.sh on a machine that ends its command (the GPU machines stop
# one at 600 s): a run stopped from outside still writes its table and raw
# runs, and the time limits count from BENCH_T0 (when `make bench`
# started, build included), not from the script's start. The programs are
# stand-ins that print a timing line (no GPU here); what is checked is the
# script's bookkeeping, not a measurement.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
[ -e "$BUILD/libsyncsight.so" ] || { echo "no $BUILD/libsyncsight.so"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# table NAME: the table that run NAME wrote into $T/NAME/; none: its log on
# stderr, status 1.
table() {
    local md
    md=$(ls "$T/$1"/capture-*.md 2> /dev/null | head -n 1)
    [ -n "$md" ] || { sed 's/^/    /' "$T/$1.log" >&2; return 1; }
    echo "$md"
}

mkdir -p "$T/build/bench"
cp "$BUILD/libsyncsight.so" "$T/build/"
for p in launch_bound launch_static copy_bound; do
    printf '#!/bin/sh\nsleep 1\necho "BENCH name=%s wall_s=0.5 calls=100"\n' "$p" > "$T/build/bench/$p"
    chmod +x "$T/build/bench/$p"
done
# No torch: only the two CUDA programs run (PYTHON is asked whether it has one).
cat > "$T/py" <<EOF
#!/bin/sh
case "\$*" in *"import torch"*) exit 1 ;; esac
exec "$PYTHON" "\$@"
EOF
chmod +x "$T/py"

# 1. Stopped from outside in the first repetition: the table and the raw runs
#    of what ran are there, saying where it stopped.
BUILD="$T/build" PYTHON="$T/py" NSYS=/bin/true BENCH_OUT="$T/cut/" \
    timeout 5 bash bench/run_bench.sh > "$T/cut.log" 2>&1
rc=$?
[ "$rc" = 124 ] || fail "the cut run exited $rc, wanted 124 (timeout's)"
if ! md=$(table cut); then
    fail "a run stopped from outside left no table"
else
    grep -q 'at repetition 1' "$md" || fail "the table does not say where the run stopped"
    grep -q '^| no tool | 1 ' "$md" || fail "the table lacks the run that finished"
    [ "$(grep -c . "${md%.md}.tsv")" -ge 2 ] || fail "no raw runs beside the table"
fi

# 2. The limits count from BENCH_T0: with make's start 600 s ago, the hard
#    limit (540 s) is past before the first run, and nothing runs.
BUILD="$T/build" PYTHON="$T/py" NSYS=/bin/true BENCH_OUT="$T/late/" BENCH_T0=$(($(date +%s) - 600)) \
    bash bench/run_bench.sh > "$T/late.log" 2>&1
grep -q 'hard limit 540s reached in rep 1' "$T/late.log" || fail "BENCH_T0 600 s ago did not stop the run"
grep -q 'rep 1 launch_bound' "$T/late.log" && fail "a program ran past the hard limit"

# 3. A whole (small) run: the static-cudart build of the launch-bound loop has its own section and verdict,
#    and an optional configuration runs when BENCH_CONFIGS names it.
BUILD="$T/build" PYTHON="$T/py" NSYS=/bin/true BENCH_OUT="$T/all/" BENCH_CONFIGS="none default offstart nsys" \
    BENCH_MIN_REPS=1 BENCH_REPS=1 bash bench/run_bench.sh > "$T/all.log" 2>&1
if ! md=$(table all); then
    fail "a whole run left no table"
else
    grep -q "^## (a-static) " "$md" || fail "no (a-static) section in the table"
    grep -q '^- (a-static) default slowdown' "$md" || fail "no (a-static) verdict in the table"
    [ "$(grep -c '^| syncsight, recording OFF from the first call ' "$md")" = 2 ] ||
        fail "the optional offstart configuration is not in both launch-bound sections"
fi

[ "$failures" = 0 ] && echo "run_bench: a cut run leaves its table; limits count from BENCH_T0"
exit $((failures > 0))
