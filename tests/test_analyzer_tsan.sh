#!/bin/bash
# Loading runs its steps two by two and sorts over slices on threads
# (analyzer/model.c), and the rules run on threads (analyzer/rules.c: each
# rule into its own findings, beside the replay's build), sharing the model's
# caches: the memory ranges of calls (rule_common.c), the symbolizer, the
# replay and its what-if scratch.  This builds the analyzer under
# ThreadSanitizer and reports every fixture, the multi-process fixture
# directory and generated traces on 8 threads: any data race ThreadSanitizer
# sees fails the test.  (That the report is the same on any number of threads
# is tests/test_replay_invariance.sh.)  Skipped, with the reason, where the
# compiler cannot build or run a ThreadSanitizer program.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
TSAN_BUILD=$BUILD/tsan-nodw
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CC=${CC:-cc}

printf '#include <pthread.h>\nstatic void *f(void *a){return a;}\nint main(void){pthread_t t;pthread_create(&t,0,f,0);return pthread_join(t,0);}\n' > "$OUT/probe.c"
if ! "$CC" -fsanitize=thread -pthread -o "$OUT/probe" "$OUT/probe.c" > "$OUT/probe.log" 2>&1; then
    echo "the compiler ($CC) cannot build with -fsanitize=thread (libtsan missing?): $(head -n 1 "$OUT/probe.log")"
    exit 77
fi
if ! "$OUT/probe" > "$OUT/probe.log" 2>&1; then
    echo "a ThreadSanitizer program does not run here: $(grep -m 1 . "$OUT/probe.log")"
    exit 77
fi

# Its own build directory and flags: the sanitizer's objects never mix
# with the normal build's.  LIBDW=0: the symbolizer runs as a child process.
if ! "$MAKE" --no-print-directory BUILD="$TSAN_BUILD" LIBDW=0 CFLAGS="-O1 -g -fsanitize=thread" \
        "$TSAN_BUILD/syncsight" > "$OUT/build.log" 2>&1; then
    echo "FAIL: the analyzer does not build with -fsanitize=thread"
    tail -n 20 "$OUT/build.log"
    exit 1
fi
"$MAKE" --no-print-directory "$BUILD/ss-gen-trace" BUILD="$BUILD" > /dev/null || exit 1

export SYNCSIGHT_THREADS=8 SYNCSIGHT_SYMBOL_PATH=${SYNCSIGHT_SYMBOL_PATH:-tests/fixtures/bin}
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
fail=0 n=0
check() {   # NAME TRACE|DIR
    local name=$1 trace=$2 rc
    n=$((n + 1))
    "$TSAN_BUILD/syncsight" report --format json "$trace" > "$OUT/r.json" 2> "$OUT/r.err"
    rc=$?
    if grep -q "ThreadSanitizer" "$OUT/r.err" || [ "$rc" -eq 66 ]; then
        echo "FAIL $name: ThreadSanitizer reports a problem"
        grep -A 30 -m 1 "WARNING: ThreadSanitizer\|ThreadSanitizer" "$OUT/r.err" | head -n 40 | sed 's/^/    /'
        fail=1
    fi
}
for trace in tests/fixtures/*.sstrace; do
    [ -e "$trace" ] || continue
    check "$(basename "$trace" .sstrace)" "$trace"
done
[ -d tests/fixtures/torchrun_2ranks ] && check torchrun_2ranks tests/fixtures/torchrun_2ranks
for seed in 1 2; do
    "$BUILD/ss-gen-trace" -n 50000 --seed $seed --threads $((seed + 3)) -o "$OUT/gen$seed.sstrace" 2>/dev/null || exit 1
    check "generated-50k-seed$seed" "$OUT/gen$seed.sstrace"
done
# Large enough that loading sorts and makes the calls over slices on threads
# (SS_MIN_SLICE records a slice, util.h), beside making the ops.
"$BUILD/ss-gen-trace" -n 300000 --seed 3 --threads 5 -o "$OUT/gen300k.sstrace" 2>/dev/null || exit 1
check "generated-300k-seed3" "$OUT/gen300k.sstrace"
[ "$n" -gt 2 ] || { echo "FAIL: no trace was reported"; exit 1; }
[ "$fail" -eq 0 ] && echo "PASS: $n reports on $SYNCSIGHT_THREADS threads, no data race"
exit $fail
