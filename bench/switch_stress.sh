#!/usr/bin/env bash
# What sampled recording's switches of CUPTI activity kinds do to a PyTorch
# program (docs/sampling.md, "CUPTI and the switches"): RUNS runs of
# test_programs/torch_transformer_amp.py under the shim with a 5 ms window
# every 20 ms (about 200 windows, 400 switches a run), counting the runs that
# died.  Extra VAR=VALUE arguments go into each run's environment, e.g.
# SYNCSIGHT_SWITCH_KINDS=hot (switch the memcpy and memset kinds too; the event
# kind, off by default since 2026-11-28, with SYNCSIGHT_ACTIVITY=all)
# or SYNCSIGHT_CUPTI_LIB=/path/libcupti.so.13 (another CUPTI).
#   usage: bench/switch_stress.sh LABEL RUNS [VAR=VALUE ...]
# Prints one line per death and "LABEL: D of N runs died (S s)"; the CUPTI
# status the first run's trace recorded (version, path, what was switched).
# Exit 0 whatever died: the count is the result.
set -u
label=$1 runs=$2; shift 2
BUILD=${BUILD:-build}
PY=${PYTHON:-python3}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
t0=$(date +%s); died=0
for i in $(seq 1 "$runs"); do
    env "$@" LD_PRELOAD="$PWD/$BUILD/libsyncsight.so" SYNCSIGHT_SAMPLE=3000,5,20 \
        SYNCSIGHT_OUTPUT_DIR="$work/t$i" "$PY" test_programs/torch_transformer_amp.py >"$work/out$i" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        died=$((died + 1))
        echo "$label run $i rc=$rc: $(grep -v '^syncsight' "$work/out$i" | tail -1 | cut -c1-160)"
    fi
    if [ "$i" = 1 ]; then
        f=$(ls "$work"/t1/*.sstrace 2>/dev/null | head -1)
        if [ -n "$f" ]; then
            "$BUILD/syncsight" dump "$f" >"$work/dump1" 2>/dev/null
            echo "$label cupti: $(grep -m1 'meta key="cupti"' "$work/dump1" | cut -c1-240)"
            echo "$label run 1 records: $(awk '{print $1}' "$work/dump1" | sort | uniq -c | sort -rn |
                awk '$2 ~ /^(api|kernel|memcpy|memset|event|capture)$/ {printf "%s %s  ", $2, $1}')"
        fi
    fi
    rm -rf "$work/t$i"
done
echo "$label: $died of $runs runs died ($(( $(date +%s) - t0 )) s)"
