#!/usr/bin/env bash
# Run the fuzz targets (make fuzz / make fuzz-ci; docs/fuzzing.md).
# usage: run_fuzz.sh SECONDS_EACH BUILD TARGET...
# Each target keeps its growing corpus in BUILD/fuzz/corpus-<target> (seeded
# from BUILD/fuzz/seeds) and writes crashing inputs to BUILD/fuzz/crashes/<target>/.
# FUZZ_JOBS=N (default 1) runs N fuzzing processes per target (-fork=N).
# Exit status 1 when any target found a crash, a leak or a timeout.
set -u
secs=$1 build=$2
shift 2
jobs=${FUZZ_JOBS:-1}
status=0
for t in "$@"; do
    corpus=$build/fuzz/corpus-$t crashes=$build/fuzz/crashes/$t
    mkdir -p "$corpus" "$crashes"
    extra=()
    [ "$jobs" -gt 1 ] && extra=(-fork="$jobs" -ignore_crashes=0)
    echo "fuzz: $t for ${secs}s (corpus $corpus, crashes -> $crashes)" >&2
    "$build/fuzz/$t" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$crashes/" "${extra[@]}" "$corpus" "$build/fuzz/seeds" \
        > "$build/fuzz/$t.log" 2>&1
    rc=$?
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$build/fuzz/$t.log" >&2
    found=$(find "$crashes" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    if [ "$rc" != 0 ] || [ "$found" != 0 ]; then
        echo "fuzz: $t FAILED (exit $rc, $found input(s) in $crashes); log: $build/fuzz/$t.log" >&2
        grep -m 20 -E 'ERROR|SUMMARY|promise|runtime error' "$build/fuzz/$t.log" >&2
        status=1
    else
        echo "fuzz: $t: no crash in ${secs}s, corpus $(ls "$corpus" | wc -l) inputs" >&2
    fi
done
exit $status
