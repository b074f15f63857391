#!/bin/bash
# GPU check of the shim's API recording (the lead runs it on a GPU machine):
#   tests/api_gpu/run.sh            (after `make build/libsyncsight.so`)
# Builds tests/api_gpu/prog.cu three ways and checks each trace:
#   shared cudart            -> interposer records (+ CUPTI correlation ids)
#   shared, per-thread stream -> interposer, _ptsz twins
#   static cudart (default)  -> CUPTI callback records, via LD_PRELOAD and
#                               via CUDA_INJECTION64_PATH
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SHIM=$(readlink -f "$BUILD/libsyncsight.so")
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
OUT=${API_GPU_OUT:-$BUILD/api-gpu}
rm -rf "$OUT"; mkdir -p "$OUT"
set -e
cc -std=gnu11 -Wall -Wextra -O1 -g -Iinclude -o "$OUT/check" tests/api_gpu/check.c common/*.c
$NVCC -O2 --cudart shared -o "$OUT/prog_shared" tests/api_gpu/prog.cu
$NVCC -O2 --cudart shared --default-stream per-thread -o "$OUT/prog_ptsz" tests/api_gpu/prog.cu
$NVCC -O2 -o "$OUT/prog_static" tests/api_gpu/prog.cu
set +e
fail=0
run() {  # name prog mode ptsz env...
    local name=$1 prog=$2 mode=$3 ptsz=$4; shift 4
    mkdir -p "$OUT/$name"
    if ! env SYNCSIGHT_OUTPUT_DIR="$OUT/$name" "$@" "$OUT/$prog" > "$OUT/$name.expected" 2> "$OUT/$name.stderr"; then
        echo "FAIL $name: program failed"; cat "$OUT/$name.stderr"; fail=1; return
    fi
    local trace; trace=$(ls "$OUT/$name"/*.sstrace | head -1)
    if "$OUT/check" "$trace" "$OUT/$name.expected" "$mode" "$ptsz" > "$OUT/$name.check" 2>&1; then
        echo "PASS $name: $(cat "$OUT/$name.check")"
    else
        echo "FAIL $name:"; cat "$OUT/$name.check"; fail=1
    fi
    [ -x "$BUILD/syncsight" ] && "$BUILD/syncsight" dump "$trace" > "$OUT/$name.dump" 2>&1
}
run shared        prog_shared interposer 0 LD_PRELOAD="$SHIM"
run shared_ptsz   prog_ptsz   interposer 1 LD_PRELOAD="$SHIM"
run static        prog_static cupti      0 LD_PRELOAD="$SHIM"
run static_inject prog_static cupti      0 CUDA_INJECTION64_PATH="$SHIM"
echo "outputs in $OUT"
exit $fail
