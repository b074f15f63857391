#!/bin/bash
# The what-if replays run on a thread pool (SYNCSIGHT_THREADS, replay.h's
# ss_replay_savings), and the replay is built on its own thread while the
# rules run (ss_replay_prefetch): the report must not depend on how many
# threads ran them, nor on which thread ran which what-if.  Every fixture, the
# multi-process fixture directory (what-ifs of several models in one batch)
# and generated traces: the JSON report with 1 thread and with 4 byte for
# byte the same, and with 4 threads and every what-if replayed in full
# (SYNCSIGHT_REPLAY_FULL=1: no memo, so more replays run side by side).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
export SYNCSIGHT_SYMBOL_PATH=${SYNCSIGHT_SYMBOL_PATH:-tests/fixtures/bin}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
${MAKE:-make} --no-print-directory "$BUILD/ss-gen-trace" BUILD="$BUILD" > /dev/null || exit 1

fail=0 n=0 savings=0
run() {   # OUTFILE TRACE ENV...
    local out=$1 trace=$2
    shift 2
    env "$@" "$SYNCSIGHT" report --format json "$trace" > "$out" 2> "$out.err"
    echo $?
}
compare() {   # NAME TRACE [full]
    local name=$1 trace=$2 full=${3:-}
    local rc1 rc4 rcf
    rc1=$(run "$OUT/t1.json" "$trace" SYNCSIGHT_THREADS=1)
    rc4=$(run "$OUT/t4.json" "$trace" SYNCSIGHT_THREADS=4)
    n=$((n + 1))
    if [ "$rc1" -ne "$rc4" ] || ! cmp -s "$OUT/t1.json" "$OUT/t4.json"; then
        echo "FAIL $name: the report with 4 threads differs from the one with 1 (exit $rc1 vs $rc4)"
        diff "$OUT/t1.json" "$OUT/t4.json" | head -n 20 | sed 's/^/    /'
        fail=1
    fi
    if [ -n "$full" ]; then
        rcf=$(run "$OUT/tf.json" "$trace" SYNCSIGHT_THREADS=4 SYNCSIGHT_REPLAY_FULL=1)
        if [ "$rc1" -ne "$rcf" ] || ! cmp -s "$OUT/t1.json" "$OUT/tf.json"; then
            echo "FAIL $name: the full replay on 4 threads differs from 1 thread's report (exit $rc1 vs $rcf)"
            diff "$OUT/t1.json" "$OUT/tf.json" | head -n 20 | sed 's/^/    /'
            fail=1
        fi
    fi
    savings=$((savings + $(grep -c '"saving_ms"' "$OUT/t1.json")))
}

for trace in tests/fixtures/*.sstrace; do
    [ -e "$trace" ] || continue
    compare "$(basename "$trace" .sstrace)" "$trace"
done
[ -d tests/fixtures/torchrun_2ranks ] && compare torchrun_2ranks tests/fixtures/torchrun_2ranks
for seed in 1 2; do
    "$BUILD/ss-gen-trace" -n 60000 --seed $seed -o "$OUT/gen$seed.sstrace" 2>/dev/null || exit 1
    compare "generated-60k-seed$seed" "$OUT/gen$seed.sstrace" full
done

# the comparison means something only where there were savings to compare
if [ "$savings" -lt 100 ]; then
    echo "FAIL only $savings savings in $n reports: nothing was compared"
    fail=1
fi
[ $fail -eq 0 ] && echo "ok: $n reports with $savings savings the same with 1 and 4 threads"
exit $fail
