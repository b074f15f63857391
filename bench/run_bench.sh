#!/usr/bin/env bash
# Capture-overhead benchmark (make bench; GPU machine).
#
# Runs the same binaries under every tool configuration, interleaved
# (rep 1: every program under every configuration, then rep 2, ...), so that
# drift of the machine hits all configurations alike.  Each program prints its
# own timing of its timed loop (BENCH lines, see bench/bench_util.h), which
# excludes process start, CUDA context creation and tool start-up/teardown.
#
# Configurations:
#   none        no tool
#   default     LD_PRELOAD=libsyncsight.so (sampled: a recorded head, then
#               recording windows, docs/sampling.md)
#   full        + SYNCSIGHT_SAMPLE=off (everything recorded)
#   Only when BENCH_CONFIGS names them:
#   longhead    the default with the head it had until 2026-11-23, 10 000 hot
#               calls (SYNCSIGHT_SAMPLE=10000,100,2000); the Python programs
#   offstart    recording OFF from the first call (SYNCSIGHT_SAMPLE=0,1,86400000):
#               what the interposer's pass-through and CUPTI's structural
#               callbacks cost; the launch-bound programs, as are the next four
#   offstart_nocupti  the same with SYNCSIGHT_CUPTI=0
#   disabled    the shim loaded and disabled (SYNCSIGHT_DISABLE=1)
#   default_nocupti   the default with SYNCSIGHT_CUPTI=0
#   default_nohostsync  the default with SYNCSIGHT_HOST_SYNC=0
#   default_nocopykinds the default without CUPTI's memcpy, memset and event
#               kinds (SYNCSIGHT_ACTIVITY=kernel,sync,stream,context,jit): what
#               those kinds, on while OFF, cost (docs/sampling.md)
#   offstart_nocopykinds  the same, recording OFF from the first call
#   The breakdown of full recording's cost (all with SYNCSIGHT_SAMPLE=off):
#   stacks      + SYNCSIGHT_STACKS=2 (a native + Python stack for every call)
#   interposer  SYNCSIGHT_CUPTI=0 (symbol interposer only)
#   callbacks   SYNCSIGHT_ACTIVITY=none (+ CUPTI runtime callbacks)
#   kernel      SYNCSIGHT_ACTIVITY=kernel (+ kernel activity)
#   activity    SYNCSIGHT_ACTIVITY=kernel,memcpy,memset,sync (the default's kinds of
#               GPU work; with event until 2026-11-28)
#   nsys        nsys profile -t cuda,nvtx (collection only; a failure to write
#               the report after the program printed its timing is accepted)
#   torchprof   train_loop.py --torch-profiler (CPU + CUDA activities)
#
# Programs: launch_bound, copy_bound (bench/*.cu, shared cudart), launch_static
# (launch_bound with cudart linked statically: CUPTI callbacks only), train_loop
# (bench/train_loop.py) and train_compiled (the same loop, torch.compile'd),
# each under the configurations listed for it below (fewer for the costly
# Python programs, so that the whole run stays within ~8 minutes).
#
# Every configuration of every program runs BENCH_MIN_REPS times (3) whatever
# the clock says (unless BENCH_HARD_LIMIT_S, 540, is reached); further repetitions, up to BENCH_REPS (5), start only while
# the run is under BENCH_TIME_LIMIT_S (300) and a repetition as long as the
# slowest one so far would still end before BENCH_BUDGET_S (480).
#
# Environment (all optional): BENCH_PROGRAMS, BENCH_CONFIGS (subsets; see
# below), BENCH_TRAIN_LONG_STEPS (10000), BUILD (build), PYTHON (python3), BENCH_REPS,
# BENCH_MIN_REPS, BENCH_LAUNCHES (200000), BENCH_COPY_ITERS (50000),
# BENCH_TRAIN_STEPS (1500), BENCH_TIME_LIMIT_S, BENCH_BUDGET_S, NSYS (path of
# nsys), BENCH_OUT: a directory (existing, or given with a trailing /) to
# write capture-<date>.md and .tsv into, or the .md file itself; default
# bench/results/capture-<date>.md.
set -u

BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
REPS=${BENCH_REPS:-5}
MIN_REPS=${BENCH_MIN_REPS:-3}
[ "$MIN_REPS" -le "$REPS" ] || REPS=$MIN_REPS
TIME_LIMIT=${BENCH_TIME_LIMIT_S:-300}
BUDGET=${BENCH_BUDGET_S:-480}
# Past this, not even the minimum repetitions go on (the GPU machines stop a
# command at 600 s): the table then says which configurations fell short.
HARD_LIMIT=${BENCH_HARD_LIMIT_S:-540}
export BENCH_LAUNCHES=${BENCH_LAUNCHES:-200000}
export BENCH_COPY_ITERS=${BENCH_COPY_ITERS:-50000}
export BENCH_TRAIN_STEPS=${BENCH_TRAIN_STEPS:-1500}

root=$(pwd)
build=$(cd "$BUILD" && pwd) || { echo "run_bench: no build directory $BUILD" >&2; exit 1; }
lib=$build/libsyncsight.so
date=$(date +%Y-%m-%d)
out=${BENCH_OUT:-}
[ -n "$out" ] || out=$root/bench/results/capture-$date.md
if [ -d "$out" ] || [[ $out == */ ]]; then
    out=${out%/}/capture-$date.md
fi
mkdir -p "$(dirname "$out")"
for f in "$lib" "$build/bench/launch_bound" "$build/bench/launch_static" "$build/bench/copy_bound"; do
    [ -e "$f" ] || { echo "run_bench: missing $f (run make bench)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/syncsight-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
raw=$tmp/raw.tsv
printf 'program\tconfig\trep\twall_s\tcalls\touter_s\trc\ttraces\ttrace_bytes\tapi_records\tnote\tstep_p50_us\n' > "$raw"

# Nsight Systems: on the GPU machines only inside the Nsight Compute folder.
if [ -z "${NSYS:-}" ]; then
    NSYS=$( { command -v nsys; ls -d /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys \
              /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/bin/nsys; } 2>/dev/null |
            while read -r p; do [ -x "$p" ] && echo "$p"; done | sort -V | tail -n 1)
fi
[ -n "$NSYS" ] || echo "run_bench: nsys not found: the nsys column stays empty" >&2

have_torch=0
if "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    have_torch=1
else
    echo "run_bench: $PYTHON has no CUDA-enabled torch: skipping train_loop" >&2
fi

programs=(launch_bound launch_static copy_bound)
[ "$have_torch" = 1 ] && programs+=(train_loop train_compiled)
# BENCH_PROGRAMS picks programs (and adds train_long: the training loop run
# BENCH_TRAIN_LONG_STEPS steps, long enough for sampled recording's windows);
# BENCH_CONFIGS keeps only these configurations of each program.  Both let
# the GPU run be split into calls that each fit the machine's time limit.
if [ -n "${BENCH_PROGRAMS:-}" ]; then
    read -r -a programs <<< "$BENCH_PROGRAMS"
fi
export BENCH_TRAIN_LONG_STEPS=${BENCH_TRAIN_LONG_STEPS:-10000}
# configs_of PROGRAM: its configurations, in run order.
configs_all() {
    case $1 in
        launch_bound)   echo none default full stacks interposer callbacks activity nsys ;;
        launch_static)  echo none default full nsys ;;
        copy_bound)     echo none default full interposer activity nsys ;;
        train_loop)     echo none default full interposer torchprof nsys ;;
        train_long)     echo none default full nsys ;;
        train_compiled) echo none default full nsys ;;
    esac
}
# Run only when BENCH_CONFIGS names them (above): what a longer head costs,
# and where the default's cost beyond its head goes on the launch-bound loop.
configs_optional() {
    case $1 in
        train_loop|train_long|train_compiled) echo longhead default_nocopykinds ;;
        launch_bound|launch_static) echo offstart offstart_nocupti disabled default_nocupti default_nohostsync default_nocopykinds offstart_nocopykinds ;;
    esac
}
configs_of() {
    local c keep
    if [ -z "${BENCH_CONFIGS:-}" ]; then configs_all "$1"; return; fi
    keep=()
    for c in $(configs_all "$1") $(configs_optional "$1"); do
        [[ " $BENCH_CONFIGS " == *" $c "* ]] && keep+=("$c")
    done
    echo "${keep[@]}"
}

# run_one PROGRAM CONFIG REP: one run in a fresh directory (the shim writes its
# trace into $dir/traces); appends a row to $raw.
run_one() {
    local prog=$1 cfg=$2 rep=$3 dir=$tmp/run
    rm -rf "$dir"; mkdir -p "$dir"
    local -a cmd envs=()
    case $prog in
        train_loop) cmd=("$PYTHON" "$root/bench/train_loop.py") ;;
        train_long) cmd=(env BENCH_TRAIN_STEPS="$BENCH_TRAIN_LONG_STEPS" "$PYTHON" "$root/bench/train_loop.py") ;;
        train_compiled) cmd=("$PYTHON" "$root/bench/train_loop.py" --compile) ;;
        *)          cmd=("$build/bench/$prog") ;;
    esac
    case $cfg in
        none) ;;
        default)    envs=(LD_PRELOAD="$lib") ;;
        full)       envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=off) ;;
        longhead)   envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=10000,100,2000) ;;
        offstart)   envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=0,1,86400000) ;;
        offstart_nocupti) envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=0,1,86400000 SYNCSIGHT_CUPTI=0) ;;
        disabled)   envs=(LD_PRELOAD="$lib" SYNCSIGHT_DISABLE=1) ;;
        default_nocupti) envs=(LD_PRELOAD="$lib" SYNCSIGHT_CUPTI=0) ;;
        default_nohostsync) envs=(LD_PRELOAD="$lib" SYNCSIGHT_HOST_SYNC=0) ;;
        default_nocopykinds) envs=(LD_PRELOAD="$lib" SYNCSIGHT_ACTIVITY=kernel,sync,stream,context,jit) ;;
        offstart_nocopykinds) envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=0,1,86400000 SYNCSIGHT_ACTIVITY=kernel,sync,stream,context,jit) ;;
        stacks)     envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=off SYNCSIGHT_STACKS=2) ;;
        interposer) envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=off SYNCSIGHT_CUPTI=0) ;;
        callbacks)  envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=off SYNCSIGHT_ACTIVITY=none) ;;
        kernel)     envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=off SYNCSIGHT_ACTIVITY=kernel) ;;
        activity)   envs=(LD_PRELOAD="$lib" SYNCSIGHT_SAMPLE=off SYNCSIGHT_ACTIVITY=kernel,memcpy,memset,sync) ;;
        nsys)       [ -n "$NSYS" ] || return 0
                    cmd=("$NSYS" profile -t cuda,nvtx -o "$dir/nsys-report" --force-overwrite true "${cmd[@]}") ;;
        torchprof)  cmd+=(--torch-profiler) ;;
    esac
    # the shim's trace goes to a known place (default: ./syncsight.data/)
    [ "${#envs[@]}" -gt 0 ] && envs+=(SYNCSIGHT_OUTPUT_DIR="$dir/traces")
    local t0 t1 rc
    t0=$(date +%s.%N)
    (cd "$dir" && env "${envs[@]}" "${cmd[@]}") > "$dir/out.txt" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    local line wall calls note="" step=NA
    line=$(grep -m1 '^BENCH ' "$dir/out.txt")
    if [ -z "$line" ]; then
        wall=NA; calls=NA; note="no timing line (exit $rc)"
        cp "$dir/out.txt" "$tmp/fail-$prog-$cfg-$rep.txt"
        echo "run_bench: $prog/$cfg rep $rep printed no timing (exit $rc); last lines:" >&2
        tail -n 5 "$dir/out.txt" >&2
    else
        wall=$(sed -n 's/.* wall_s=\([^ ]*\).*/\1/p' <<<"$line")
        calls=$(sed -n 's/.* calls=\([^ ]*\).*/\1/p' <<<"$line")
        # the training loop's median step (bench/train_loop.py): not moved by
        # the head's steps nor by a stall of the machine
        step=$(sed -n 's/.* step_p50_us=\([^ ]*\).*/\1/p' <<<"$line")
        [ -n "$step" ] || step=NA
        [ "$rc" != 0 ] && note="exit $rc after the timing line"
    fi
    # The traces the shim wrote: how many and how big; the number of API
    # records of the full-recording runs gives the train loop's call count.
    local traces=0 bytes=0 apis=NA
    shopt -s nullglob
    local files=("$dir"/traces/*.sstrace "$dir"/syncsight.data/*.sstrace)
    shopt -u nullglob
    traces=${#files[@]}
    if [ "$traces" -gt 0 ]; then
        bytes=$(cat "${files[@]}" | wc -c)
        if [ "$cfg" = full ] && [ -x "$build/ss-read-trace" ]; then
            apis=0
            for f in "${files[@]}"; do
                local n
                n=$("$build/ss-read-trace" "$f" 2>/dev/null | awk '$1 == "api" { print $2 }')
                apis=$((apis + ${n:-0}))
            done
        fi
    elif [ "$cfg" != none ] && [ "$cfg" != nsys ] && [ "$cfg" != torchprof ]; then
        note="${note:+$note; }NO TRACE WRITTEN"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$prog" "$cfg" "$rep" "$wall" "$calls" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$rc" "$traces" "$bytes" "$apis" "$note" \
        "$step" >> "$raw"
    printf 'run_bench: rep %s %-12s %-10s wall_s=%s\n' "$rep" "$prog" "$cfg" "$wall" >&2
}

# The limits count from BENCH_T0 (epoch seconds: make bench sets it when it
# starts, before the build) or from here.
# The table of the runs so far: at the end, or when the run is stopped from
# outside (timeout's TERM), so that a cut run still leaves its table.
summarize() {
    elapsed=$((SECONDS - start))
    local gpu
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
    cp "$raw" "${out%.md}.tsv"
    "$PYTHON" "$root/bench/summarize_capture.py" "$raw" "$out" \
        --gpu "${gpu:-unknown}" --nsys "${NSYS:-none}" --elapsed "$elapsed" --stopped "${stopped_at:-}" \
        --train-steps "$BENCH_TRAIN_STEPS" --train-long-steps "$BENCH_TRAIN_LONG_STEPS" --min-reps "$MIN_REPS"
}
trap 'echo "run_bench: stopped from outside in rep ${rep:-1}" >&2; stopped_at=${rep:-1}; summarize; exit 143' TERM INT
start=$((SECONDS - ($(date +%s) - ${BENCH_T0:-$(date +%s)})))
stopped_at=""
slowest=0
for rep in $(seq 1 "$REPS"); do
    now=$((SECONDS - start))
    if [ "$rep" -gt "$MIN_REPS" ] && { [ "$now" -ge "$TIME_LIMIT" ] || [ $((now + slowest)) -gt "$BUDGET" ]; }; then
        stopped_at=$rep
        echo "run_bench: ${now}s used (limit ${TIME_LIMIT}s, budget ${BUDGET}s, slowest repetition ${slowest}s): stopping before rep $rep" >&2
        break
    fi
    rep_start=$SECONDS
    for prog in "${programs[@]}"; do
        for cfg in $(configs_of "$prog"); do
            if [ $((SECONDS - start)) -ge "$HARD_LIMIT" ]; then
                [ -n "$stopped_at" ] || echo "run_bench: hard limit ${HARD_LIMIT}s reached in rep $rep" >&2
                stopped_at=$rep
                break 2
            fi
            run_one "$prog" "$cfg" "$rep"
        done
    done
    [ -n "$stopped_at" ] && break
    [ $((SECONDS - rep_start)) -gt "$slowest" ] && slowest=$((SECONDS - rep_start))
done
summarize || exit 1
for f in "$tmp"/fail-*.txt; do
    [ -e "$f" ] || continue
    echo "---- $(basename "$f")" >&2
    tail -n 20 "$f" >&2
done
echo "run_bench: wrote $out (raw runs: ${out%.md}.tsv) in ${elapsed}s" >&2
