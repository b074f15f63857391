#!/bin/bash
# The CPU proof of the interposer: a program linked against a fake
# libcudart.so.13 (+ a fake libcuda.so.1 for memory kinds and kernel
# parameter layouts) runs with LD_PRELOAD=build/libsyncsight.so; the program
# checks that return codes and errno reach it unchanged, and api_check_trace
# reads the trace back through the real reader (common/trace_io.c) and checks
# records, enter/exit times, slots, memory kinds, the _ptsz flag, kernel
# parameters and API names against what the program really did.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$SHIM" ]; then echo "SKIP: $SHIM not built"; exit 77; fi
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then echo "SKIP: no CUDA headers under $CUDA_HOME"; exit 77; fi
SHIM=$(readlink -f "$SHIM")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -I$CUDA_HOME/include -g"

. tests/fake_cuda.sh
build_fake_cuda "$T/lib" || { echo "FAIL: cannot build the fake CUDA libraries"; exit 1; }
$CC $W -O1 -o "$T/prog" tests/api_prog.c "$T/lib/libcudart.so.13" "$T/lib/libcuda.so.1" -Wl,-rpath,"$T/lib"
$CC $W -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -o "$T/check" tests/api_check_trace.c common/*.c

# Sanity: the program binds to the fake cudart's versioned symbols, as it
# would to the real one (so the shim's unversioned ones must interpose them).
nm -D "$T/prog" | grep -q 'cudaMemcpyAsync@libcudart.so.13' || { echo "FAIL: prog does not bind versioned symbols"; exit 1; }

# Without the shim: the program's own checks pass on the fake alone.
"$T/prog" > "$T/expected.plain" || { echo "FAIL: api_prog fails even without the shim"; exit 1; }

mkdir "$T/out"
if ! env SYNCSIGHT_OUTPUT_DIR="$T/out" SYNCSIGHT_CUPTI=0 LD_PRELOAD="$SHIM" "$T/prog" > "$T/expected" 2> "$T/stderr"; then
    echo "FAIL: under the shim the program saw altered results:"; cat "$T/stderr"; exit 1
fi
TRACE=$(ls "$T"/out/*.sstrace 2>/dev/null | head -1)
[ -n "$TRACE" ] || { echo "FAIL: no trace written"; ls -la "$T/out"; cat "$T/stderr"; exit 1; }
"$T/check" "$TRACE" "$T/expected" || { echo "FAIL: trace does not match the calls made"; exit 1; }
echo "PASS: interposer recorded the fake cudart's calls exactly"
