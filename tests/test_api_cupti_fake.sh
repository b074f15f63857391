#!/bin/bash
# The CPU proof of the shim's CUPTI-side recording, through a fake libcupti
# (tests/api_fake_cupti.c) that makes the callbacks a real one would:
#   - SS_REC_CUBIN: each distinct module image once (image A is loaded by two
#     threads at once), its bytes, size and hash; an image over the per-image
#     limit, past the SYNCSIGHT_CUBIN_MB budget or with capture off
#     (SYNCSIGHT_CUBIN_MB=0) is skipped and counted in one
#     SS_NOTE_CUBIN_SKIPPED; a 9 MiB image (SYNCSIGHT_CUBIN_IMAGE_MB=10) is
#     written whole although it is far larger than a thread buffer;
#   - kernel parameter offsets (SS_API_F_PARAM_OFFSETS) of a launch whose
#     parameters are (ptr, int, ptr, struct{ptr, u64, ptr, u64}), through the
#     runtime-level layout, and of one laid out (int, ptr, struct, ptr) that
#     only the driver-level callback sees; and of a graph kernel node of that
#     kernel, added and set (the driver calls inside cudaGraphAddKernelNode
#     and cudaGraphKernelNodeSetParams: a static cudart's stubs);
#   - `syncsight dump` (text and --json) shows both;
#   - SS_NOTE_CUBIN_COST: the loads, images written and bytes, and the time
#     they cost the loading threads, which `syncsight report` shows.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$SHIM" ]; then echo "SKIP: $SHIM not built"; exit 77; fi
if [ ! -x "$SYNCSIGHT" ]; then echo "SKIP: $SYNCSIGHT not built"; exit 77; fi
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then echo "SKIP: no CUDA headers under $CUDA_HOME"; exit 77; fi
SHIM=$(readlink -f "$SHIM")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -Itests -I$CUDA_HOME/include -g"

. tests/fake_cuda.sh
build_fake_cuda "$T/lib" with-cupti || { echo "FAIL: cannot build the fake CUDA libraries"; exit 1; }
# --no-as-needed: the program calls nothing in libcuda itself, but it must be
# loaded, as the real cudart loads it, for the shim to ask it about layouts.
$CC $W -O1 -o "$T/prog" tests/api_cupti_prog.c -Wl,--no-as-needed "$T/lib/libcudart.so.13" \
    "$T/lib/libcuda.so.1" -Wl,--as-needed -Wl,-rpath,"$T/lib" -ldl -lpthread
$CC $W -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -o "$T/check" tests/api_cupti_check.c common/*.c

fails=0
# run NAME WRITTEN SKIPPED [VAR=VALUE...]: one traced run and its checks.
run() {
    local name=$1 written=$2 skipped=$3
    shift 3
    mkdir "$T/$name"
    if ! env SYNCSIGHT_OUTPUT_DIR="$T/$name" SYNCSIGHT_CUPTI_LIB="$T/lib/libcupti.so.13" "$@" \
            LD_PRELOAD="$SHIM" "$T/prog" > "$T/$name.expected" 2> "$T/$name.stderr"; then
        echo "FAIL ($name): the program failed under the shim:"; cat "$T/$name.stderr"; fails=$((fails + 1)); return
    fi
    local trace
    trace=$(ls "$T/$name"/*.sstrace 2>/dev/null | head -1)
    if [ -z "$trace" ]; then
        echo "FAIL ($name): no trace written"; cat "$T/$name.stderr"; fails=$((fails + 1)); return
    fi
    if ! "$T/check" "$trace" "$T/$name.expected" "$written" "$skipped"; then
        echo "FAIL ($name): the trace does not match"; fails=$((fails + 1)); return
    fi
    # dump: one line per cubin record (never its bytes), offsets beside params
    local ncubin want=0
    [ "$written" != - ] && want=$(echo "$written" | tr ',' '\n' | wc -l)
    "$SYNCSIGHT" dump "$trace" > "$T/$name.dump"
    "$SYNCSIGHT" dump --json "$trace" > "$T/$name.json"
    ncubin=$(grep -c '^cubin hash=0x[0-9a-f]* size=[0-9]* module=[1-5] ' "$T/$name.dump" || true)
    if [ "$ncubin" != "$want" ] || [ "$(grep -c '"type":"cubin"' "$T/$name.json" || true)" != "$want" ] ||
       [ "$(grep -c ' param_offsets=0,16,24,40$' "$T/$name.dump" || true)" != 1 ] ||
       [ "$(grep -c ' param_offsets=8,16,32,48$' "$T/$name.dump" || true)" != 3 ] ||
       [ "$(grep -c '"param_offsets":\[0,16,24,40\]' "$T/$name.json" || true)" != 1 ] ||
       [ "$(grep -c '"param_offsets":\[8,16,32,48\]' "$T/$name.json" || true)" != 3 ] ||
       [ "$(wc -c < "$T/$name.dump")" -gt 200000 ]; then
        echo "FAIL ($name): syncsight dump does not show the cubin records ($ncubin of $want) or the offsets"
        grep '^cubin\|param_offsets' "$T/$name.dump" | head; fails=$((fails + 1)); return
    fi
    # the report says what the images cost the loading threads (not with capture off)
    local cost
    cost=$("$SYNCSIGHT" report "$trace" 2>&1 | grep -c '^  recording cost: [0-9]*\.[0-9]* ms on module images, ' || true)
    if [ "$cost" != "$([ "$written" = - ] && echo 0 || echo 1)" ]; then
        echo "FAIL ($name): the report shows $cost recording-cost lines"; "$SYNCSIGHT" report "$trace" 2>&1 | head -12
        fails=$((fails + 1)); return
    fi
    echo "ok ($name)"
}

# Defaults: 8 MiB per image, 64 MiB in all: the 9 MiB image is skipped.
run default 1,3,4 1
# Capture off: every load (5) is counted, nothing written.
run off - 5 SYNCSIGHT_CUBIN_MB=0
# 1 MiB budget: A and B (600 KiB) fit, D (600 KiB more) and C do not.
run budget 1,3 2 SYNCSIGHT_CUBIN_MB=1
# 10 MiB per image: the 9 MiB image goes out as a record of its own.
run big 1,3,4,5 0 SYNCSIGHT_CUBIN_IMAGE_MB=10

[ "$fails" -eq 0 ] || exit 1
echo "PASS: module images and kernel parameter offsets recorded through the fake CUPTI"
