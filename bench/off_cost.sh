#!/usr/bin/env bash
# What the default costs (a) beyond its head: the launch-bound loop (shared
# and static cudart) under configurations that switch off one part of the
# shim at a time, interleaved, 5 repetitions, medians of the timed loop.
#
#   bash bench/off_cost.sh        (after make bench-programs; on a GPU machine)
#
# none              no tool
# default           LD_PRELOAD=libsyncsight.so
# offstart          recording OFF from the start (SYNCSIGHT_SAMPLE=0,1,86400000):
#                   the interposer's pass-through and CUPTI's structural callbacks
# offstart_nocupti  the same without CUPTI (SYNCSIGHT_CUPTI=0)
# disabled          the shim loaded but disabled (SYNCSIGHT_DISABLE=1)
# nocupti_default   the default without CUPTI
# hostsync0         the default without host-sync records (SYNCSIGHT_HOST_SYNC=0)
#
# Raw runs: $OUT/off.tsv (OUT defaults to build/off-cost); the table on stdout.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/off-cost}
L=$PWD/$BUILD/libsyncsight.so
cfgs=(none default offstart offstart_nocupti disabled nocupti_default hostsync0)
envof() {
    case $1 in
        none) echo "" ;;
        default) echo "LD_PRELOAD=$L" ;;
        offstart) echo "LD_PRELOAD=$L SYNCSIGHT_SAMPLE=0,1,86400000" ;;
        offstart_nocupti) echo "LD_PRELOAD=$L SYNCSIGHT_SAMPLE=0,1,86400000 SYNCSIGHT_CUPTI=0" ;;
        disabled) echo "LD_PRELOAD=$L SYNCSIGHT_DISABLE=1" ;;
        nocupti_default) echo "LD_PRELOAD=$L SYNCSIGHT_CUPTI=0" ;;
        hostsync0) echo "LD_PRELOAD=$L SYNCSIGHT_HOST_SYNC=0" ;;
    esac
}
mkdir -p "$OUT/tr"
: > "$OUT/off.tsv"
for rep in 1 2 3 4 5; do
    for prog in launch_bound launch_static; do
        for c in "${cfgs[@]}"; do
            rm -rf "$OUT"/tr/*
            # shellcheck disable=SC2046  # the configuration's words are separate variables
            w=$(env $(envof "$c") SYNCSIGHT_OUTPUT_DIR="$OUT/tr" "$BUILD/bench/$prog" 2> /dev/null |
                sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p')
            printf '%s\t%s\t%s\t%s\n' "$prog" "$c" "$rep" "$w" >> "$OUT/off.tsv"
        done
    done
done
rm -rf "$OUT/tr"
OFF_TSV=$OUT/off.tsv python3 - <<'PY'
import collections, os, statistics
runs = collections.defaultdict(list)
for line in open(os.environ["OFF_TSV"]):
    prog, cfg, _, wall = line.rstrip("\n").split("\t")
    if wall:
        runs[(prog, cfg)].append(float(wall))
for (prog, cfg), v in runs.items():
    base = statistics.median(runs[(prog, "none")])
    m = statistics.median(v)
    print(f"{prog:14s} {cfg:18s} n={len(v)} median={m:.4f} min={min(v):.4f} max={max(v):.4f} {100 * (m / base - 1):+.1f}%")
PY
