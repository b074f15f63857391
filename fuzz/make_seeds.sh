#!/usr/bin/env bash
# Build the fuzzers' seed corpus in DIR:
#   - the recorded fixtures tests/fixtures/*.sstrace (when present and small);
#   - small synthetic traces from ss-gen-trace (several seeds and thread counts);
#   - truncations of one of them (inside the file header, inside a block header,
#     inside a payload, one byte short), which a crash or a full disk leaves.
# usage: make_seeds.sh GEN_TRACE DIR [MAX_BYTES]
set -eu
gen=$1 dir=$2 max=${3:-262144}
mkdir -p "$dir"
for f in tests/fixtures/*.sstrace; do
    [ -e "$f" ] || continue
    if [ "$(stat -c %s "$f")" -le "$max" ]; then
        cp "$f" "$dir/fixture-$(basename "$f")"
    else
        head -c "$max" "$f" > "$dir/fixture-head-$(basename "$f")"
    fi
done
for seed in 1 2 3 4 5 6; do
    "$gen" -n 200 --seed "$seed" -o "$dir/gen-200-s$seed.sstrace" 2>/dev/null
done
"$gen" -n 150 --threads 1 --seed 7 -o "$dir/gen-150-t1.sstrace" 2>/dev/null
"$gen" -n 1500 --threads 8 --seed 8 -o "$dir/gen-1500-t8.sstrace" 2>/dev/null
src=$dir/gen-200-s1.sstrace
size=$(stat -c %s "$src")
for cut in 0 8 100 256 264 272 1000 $((size / 2)) $((size - 8)) $((size - 1)); do
    [ "$cut" -lt "$size" ] && head -c "$cut" "$src" > "$dir/trunc-$cut.sstrace"
done
exit 0
