#!/bin/bash
# The what-if replay's answers do not depend on how it is run:
#   - its shortcuts (a what-if already replayed is not replayed again; a
#     replay starts where its first removed cause can act, and skips the
#     stretches where every live time is the baseline's shifted by one
#     constant) give every saving the full replay gives
#     (SYNCSIGHT_REPLAY_FULL=1: every what-if replayed in full, start to end);
#   - its threads (the what-ifs on a pool, replay.h's ss_replay_savings; the
#     replay built beside the rules, ss_replay_prefetch) change nothing, nor
#     does which thread ran which what-if;
#   - nor do the rules' threads (rules.c: each rule on a thread of its own,
#     into its own findings, joined in the registry's order; the caches they
#     share filled in whatever order the threads ask).
# Every fixture, the multi-process fixture directory (what-ifs of several
# models in one batch) and generated traces are reported with
# SYNCSIGHT_THREADS=1, then with the full replay, with 4 threads, and with 4
# threads and the full replay (no memo: more replays side by side); every
# JSON report must be byte for byte the first.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
export SYNCSIGHT_SYMBOL_PATH=${SYNCSIGHT_SYMBOL_PATH:-tests/fixtures/bin}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
${MAKE:-make} --no-print-directory "$BUILD/ss-gen-trace" BUILD="$BUILD" > /dev/null || exit 1

fail=0 n=0 savings=0
run() {   # OUTFILE TRACE ENV...: the report's exit code
    local out=$1 trace=$2
    shift 2
    env "$@" "$SYNCSIGHT" report --format json "$trace" > "$out" 2> "$out.err"
    echo $?
}
compare() {   # NAME TRACE
    local name=$1 trace=$2 ref variant rc
    ref=$(run "$OUT/ref.json" "$trace" SYNCSIGHT_THREADS=1)
    n=$((n + 1))
    for variant in "SYNCSIGHT_THREADS=1 SYNCSIGHT_REPLAY_FULL=1" "SYNCSIGHT_THREADS=4" \
                   "SYNCSIGHT_THREADS=4 SYNCSIGHT_REPLAY_FULL=1"; do
        # shellcheck disable=SC2086  # the variant is a list of assignments
        rc=$(run "$OUT/var.json" "$trace" $variant)
        if [ "$ref" -ne "$rc" ] || ! cmp -s "$OUT/ref.json" "$OUT/var.json"; then
            echo "FAIL $name: the report with $variant differs from the one with SYNCSIGHT_THREADS=1 (exit $ref vs $rc)"
            diff "$OUT/ref.json" "$OUT/var.json" | head -n 20 | sed 's/^/    /'
            fail=1
        fi
    done
    savings=$((savings + $(grep -c '"saving_ms"' "$OUT/ref.json")))
}

for trace in tests/fixtures/*.sstrace; do
    [ -e "$trace" ] || continue
    compare "$(basename "$trace" .sstrace)" "$trace"
done
[ -d tests/fixtures/torchrun_2ranks ] && compare torchrun_2ranks tests/fixtures/torchrun_2ranks
for seed in 1 2 3; do
    "$BUILD/ss-gen-trace" -n 60000 --seed $seed -o "$OUT/gen$seed.sstrace" 2>/dev/null || exit 1
    compare "generated-60k-seed$seed" "$OUT/gen$seed.sstrace"
done
"$BUILD/ss-gen-trace" -n 20000 --threads 1 --seed 5 -o "$OUT/gen1t.sstrace" 2>/dev/null || exit 1
compare "generated-20k-1-thread" "$OUT/gen1t.sstrace"
# Large enough for the loops that go over slices of at least SS_MIN_SLICE
# records (loading's, the replay build's, its merge of the measured order in
# time intervals) and for several batches of relies-on-legacy-sync's memory
# comparisons: 1 and 4 threads only (the full replay is slow at this size).
# Seeds 1 and 5: with 4 threads, the recording pass replays one chunk again
# (seed 1) and three, one round each (seed 5: each read the one before's).
for seed_again in 1:1 5:3; do
    seed=${seed_again%:*} least=${seed_again#*:}
    "$BUILD/ss-gen-trace" -n 400000 --seed $seed -o "$OUT/gen400k.sstrace" 2>/dev/null || exit 1
    ref=$(run "$OUT/ref.json" "$OUT/gen400k.sstrace" SYNCSIGHT_THREADS=1 SYNCSIGHT_TIMINGS=1)
    rc=$(run "$OUT/var.json" "$OUT/gen400k.sstrace" SYNCSIGHT_THREADS=4 SYNCSIGHT_TIMINGS=1)
    n=$((n + 1))
    if [ "$ref" -ne "$rc" ] || ! cmp -s "$OUT/ref.json" "$OUT/var.json"; then
        echo "FAIL generated-400k-seed$seed: the report with SYNCSIGHT_THREADS=4 differs from the one with SYNCSIGHT_THREADS=1"
        diff "$OUT/ref.json" "$OUT/var.json" | head -n 20 | sed 's/^/    /'
        fail=1
    fi
    # The baseline's recording pass on threads (replay.c, record_chunks): the
    # chunks replay at once, taking values made before them as measured, and
    # a chunk that took one its sources made otherwise is replayed again.  The
    # baseline the shortcuts read must be the one pass's, as a digest; a
    # generated trace has values the replay does not reproduce (the JSON
    # report alone does not show them), so some chunk must be replayed again.
    base1=$(sed -n 's/^syncsight: replay: the recording pass: 1 chunks, 0 replayed again in 0 rounds, baseline \([0-9a-f]*\)$/\1/p' "$OUT/ref.json.err")
    line4=$(grep '^syncsight: replay: the recording pass: .* chunks' "$OUT/var.json.err")
    base4=${line4##* baseline }
    again=$(echo "$line4" | sed -n 's/.* chunks, \([0-9]*\) replayed again.*/\1/p')
    if [ -z "$base1" ] || [ "$base1" != "$base4" ] || [ "${again:-0}" -lt "$least" ]; then
        echo "FAIL generated-400k-seed$seed: the recording pass on chunks gave another baseline, or fewer than $least were replayed again"
        echo "    1 thread:  $(grep 'chunks' "$OUT/ref.json.err")"
        echo "    4 threads: $line4"
        fail=1
    fi
done

# Large enough for several slices of the calls that record or wait on events
# (the build's events_walk: at least SS_MIN_SLICE each, ~29% of a generated
# trace's records): 1 and 4 threads, the report and the baseline's digest.
"$BUILD/ss-gen-trace" -n 700000 --seed 3 -o "$OUT/gen700k.sstrace" 2>/dev/null || exit 1
ref=$(run "$OUT/ref.json" "$OUT/gen700k.sstrace" SYNCSIGHT_THREADS=1 SYNCSIGHT_TIMINGS=1)
rc=$(run "$OUT/var.json" "$OUT/gen700k.sstrace" SYNCSIGHT_THREADS=4 SYNCSIGHT_TIMINGS=1)
n=$((n + 1))
base1=$(sed -n 's/^syncsight: replay: the recording pass: .* baseline \([0-9a-f]*\)$/\1/p' "$OUT/ref.json.err")
base4=$(sed -n 's/^syncsight: replay: the recording pass: .* baseline \([0-9a-f]*\)$/\1/p' "$OUT/var.json.err")
if [ "$ref" -ne "$rc" ] || ! cmp -s "$OUT/ref.json" "$OUT/var.json" || [ -z "$base1" ] || [ "$base1" != "$base4" ]; then
    echo "FAIL generated-700k-seed3: 4 threads gave another report or baseline than 1 (exit $ref vs $rc, baseline $base1 vs $base4)"
    diff "$OUT/ref.json" "$OUT/var.json" | head -n 20 | sed 's/^/    /'
    fail=1
fi

# the comparison means something only where there were savings to compare
if [ "$savings" -lt 100 ]; then
    echo "FAIL only $savings savings in $n reports: nothing was compared"
    fail=1
fi
[ $fail -eq 0 ] && echo "ok: $n reports with $savings savings, the same with the full replay and with 4 threads"
exit $fail
