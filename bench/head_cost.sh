#!/bin/bash
# What the sampled head costs a PyTorch loop, component by component (docs/performance.md,
# "where the head's cost goes"): each configuration switches one part of recording off; for each
# process, the first K timed steps (the head) against the median of steps 600+ of the same process.
#   bash bench/head_cost.sh            [CFGS="none def ..."] [REPS="1 2 3"] [STEPS=1500] [K=300]
# Any other configuration name is taken as VAR=value words joined by "+" (SYNCSIGHT_STACKS=0+SYNCSIGHT_HOST_SYNC=0).
# Needs a GPU, PyTorch, and `make` (build/libsyncsight.so, build/syncsight).
set -u
cd "$(dirname "$0")/.."
root=$PWD; lib=$PWD/build/libsyncsight.so
STEPS=${STEPS:-1500}; K=${K:-300}
for rep in ${REPS:-1 2 3}; do
  for cfg in ${CFGS:-none def off def_s0 def_h0 def_cub0 def_k def_act0}; do
    d=$(mktemp -d); envs=()
    case $cfg in
      none) ;;
      def) envs=(LD_PRELOAD=$lib) ;;
      off) envs=(LD_PRELOAD=$lib SYNCSIGHT_SAMPLE=0,1,86400000) ;;
      def_s0) envs=(LD_PRELOAD=$lib SYNCSIGHT_STACKS=0) ;;
      def_h0) envs=(LD_PRELOAD=$lib SYNCSIGHT_HOST_SYNC=0) ;;
      def_cub0) envs=(LD_PRELOAD=$lib SYNCSIGHT_CUBIN_MB=0) ;;
      def_k) envs=(LD_PRELOAD=$lib SYNCSIGHT_ACTIVITY=kernel) ;;
      def_act0) envs=(LD_PRELOAD=$lib SYNCSIGHT_ACTIVITY=none) ;;
      def_c0) envs=(LD_PRELOAD=$lib SYNCSIGHT_CUPTI=0) ;;
      *) envs=(LD_PRELOAD=$lib ${cfg//+/ }) ;;
    esac
    [ ${#envs[@]} -gt 0 ] && envs+=(SYNCSIGHT_OUTPUT_DIR=$d)
    st=$d/steps.txt
    out=$( (cd $d && env "${envs[@]}" BENCH_STEP_TIMES=$st BENCH_TRAIN_STEPS=$STEPS python3 $root/bench/train_loop.py) 2>$d/err.txt | grep -E "BENCH" | tail -1)
    [ -n "$out" ] || { echo "$rep $cfg NO BENCH: $(tail -c 300 $d/err.txt)"; rm -rf $d; continue; }
    f=$(ls $d/*.sstrace 2>/dev/null | head -1); span=""
    [ -n "$f" ] && span=$(python3 tools/steps_by_span.py $st $f --syncsight build/syncsight 2>&1 | head -3 | tr '\n' '|')
    [ -n "$f" ] && $root/build/syncsight report $f 2>/dev/null | grep -i "recording cost" | head -1 > $d/rc.txt
    python3 - "$st" "$K" "$rep" "$cfg" "$(cat $d/rc.txt 2>/dev/null)" <<'PY'
import sys, statistics
st, K, rep, cfg, rc = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
e = [int(x) for x in open(st).read().split()]
d = [(b - a) / 1e3 for a, b in zip(e, e[1:])]  # us
steady = statistics.median(d[600:])
head = d[:K]
print(f"{rep} {cfg:10s} wall={(e[-1]-e[0])/1e9:.3f}s steady_p50={steady:.0f}us headK_p50={statistics.median(head):.0f}us "
      f"head_excess={(sum(head)-K*steady)/1e3:.1f}ms first50_excess={(sum(d[:50])-50*steady)/1e3:.1f}ms  {rc}")
PY
    echo "   $span"
    rm -rf $d
  done
done
