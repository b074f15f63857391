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

# Kernel parameters of launches inside cuBLAS (its own static cudart): the
# driver-level launch callback must give the gemm's launch record params that
# include the device pointers of A, B and C, in a shared- and a static-cudart
# build.  Needs build/syncsight for `dump`.
cublas_check() {  # name cudart
    local name=$1 cudart=$2
    if ! $NVCC -O2 --cudart "$cudart" -o "$OUT/$name" tests/api_gpu/cublas_prog.cu -lcublas 2> "$OUT/$name.build"; then
        echo "FAIL $name: build"; cat "$OUT/$name.build"; fail=1; return
    fi
    mkdir -p "$OUT/$name.out"
    local ptrs; ptrs=$(SYNCSIGHT_OUTPUT_DIR="$OUT/$name.out" LD_PRELOAD="$SHIM" "$OUT/$name") \
        || { echo "FAIL $name: program failed"; fail=1; return; }
    "$BUILD/syncsight" dump "$OUT/$name.out"/*.sstrace > "$OUT/$name.dump" 2>&1
    local a b c; read -r a b c <<< "$(echo "$ptrs" | sed 's/[ABC]=//g')"
    # Launch records (any launch entry point) whose params hold all three.
    local hits; hits=$(grep -E '^api name="(cudaLaunchKernel|cudaLaunchKernelExC|cudaLaunchCooperativeKernel)' "$OUT/$name.dump" \
        | grep -F "$a" | grep -F "$b" | grep -F "$c" | wc -l)
    if [ "$hits" -ge 3 ]; then
        echo "PASS $name: $hits gemm launch records carry A=$a B=$b C=$c in their params"
    else
        echo "FAIL $name: $hits launch records carry A=$a B=$b C=$c (want >= 3); launch records:"
        grep -E '^api name="cudaLaunch' "$OUT/$name.dump" | head -5; fail=1
    fi
}
if [ -x "$BUILD/syncsight" ]; then
    cublas_check cublas_shared shared
    cublas_check cublas_static static
else
    echo "FAIL cublas: $BUILD/syncsight not built (make all)"; fail=1
fi
echo "outputs in $OUT"
exit $fail
