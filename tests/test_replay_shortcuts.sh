#!/bin/bash
# The what-if replay's shortcuts (a what-if already replayed is not replayed
# again; a replay starts where its first removed cause can act, and skips the
# stretches where every live time is the baseline's shifted by one constant)
# give every saving the full replay gives: the JSON report of every fixture
# and of generated traces is byte for byte the same with
# SYNCSIGHT_REPLAY_FULL=1 (every what-if replayed in full, start to end).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
export SYNCSIGHT_SYMBOL_PATH=${SYNCSIGHT_SYMBOL_PATH:-tests/fixtures/bin}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
${MAKE:-make} --no-print-directory "$BUILD/ss-gen-trace" BUILD="$BUILD" > /dev/null || exit 1

fail=0 n=0 savings=0
compare() {   # NAME TRACE
    local name=$1 trace=$2
    "$SYNCSIGHT" report --format json "$trace" > "$OUT/fast.json" 2> "$OUT/fast.err"
    local rc1=$?
    SYNCSIGHT_REPLAY_FULL=1 "$SYNCSIGHT" report --format json "$trace" > "$OUT/full.json" 2> "$OUT/full.err"
    local rc2=$?
    n=$((n + 1))
    if [ $rc1 -ne $rc2 ] || ! cmp -s "$OUT/fast.json" "$OUT/full.json"; then
        echo "FAIL $name: the report differs from the full replay's (exit $rc1 vs $rc2)"
        diff "$OUT/full.json" "$OUT/fast.json" | head -n 20 | sed 's/^/    /'
        fail=1
    fi
    savings=$((savings + $(grep -c '"saving_ms"' "$OUT/full.json")))
}

for trace in tests/fixtures/*.sstrace; do
    [ -e "$trace" ] || continue
    compare "$(basename "$trace" .sstrace)" "$trace"
done
for seed in 1 2 3; do
    "$BUILD/ss-gen-trace" -n 60000 --seed $seed -o "$OUT/gen$seed.sstrace" 2>/dev/null || exit 1
    compare "generated-60k-seed$seed" "$OUT/gen$seed.sstrace"
done
"$BUILD/ss-gen-trace" -n 20000 --threads 1 --seed 5 -o "$OUT/gen1t.sstrace" 2>/dev/null || exit 1
compare "generated-20k-1-thread" "$OUT/gen1t.sstrace"

# the comparison means something only where there were savings to compare
if [ "$savings" -lt 100 ]; then
    echo "FAIL only $savings savings in $n reports: nothing was compared"
    fail=1
fi
[ $fail -eq 0 ] && echo "ok: $n reports with $savings savings the same as the full replay's"
exit $fail
