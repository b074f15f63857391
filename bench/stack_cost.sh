#!/bin/bash
# Per-call stack cost in the interposer-only mode (docs/performance.md): launch_bound and copy_bound under no tool,
# SYNCSIGHT_CUPTI=0 with SYNCSIGHT_STACKS=0 and 1, and the default mode; 3 interleaved repetitions (GPU machine).
set -u
cd "$(dirname "$0")/.."
: "${OUT:=/tmp}"

make -j16 bench-programs > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
root=$PWD; lib=$root/build/libsyncsight.so
for rep in 1 2 3; do
  for prog in launch_bound copy_bound; do
    for cfg in none s0 s1 d1; do
      d=$(mktemp -d); envs=()
      case $cfg in
        s0) envs=(LD_PRELOAD=$lib SYNCSIGHT_CUPTI=0 SYNCSIGHT_STACKS=0) ;;
        s1) envs=(LD_PRELOAD=$lib SYNCSIGHT_CUPTI=0 SYNCSIGHT_STACKS=1) ;;
        d1) envs=(LD_PRELOAD=$lib) ;;
      esac
      [ ${#envs[@]} -gt 0 ] && envs+=(SYNCSIGHT_OUTPUT_DIR=$d)
      out=$( (cd $d && env "${envs[@]}" $root/build/bench/$prog) 2>&1 | grep BENCH | tail -1)
      echo "$rep $prog $cfg $out"
      rm -rf $d
    done
  done
done
