#!/bin/bash
# Host thread ordering (preload/hostsync.c, docs/shim.md "Host thread
# ordering"): programs linked against the fake libcudart.so.13 run under the
# shim, and tests/hostsync_check.py reads `syncsight dump --json` of the
# trace: mutex and semaphore handoffs give matching release/acquire seqs, a
# thread that never calls CUDA writes nothing, create/join and barrier keys
# match, GOMP_parallel regions give fork/join records for the workers that
# call CUDA (GCC's libgomp; also LLVM's libomp through OMPT when clang -fopenmp
# can build the program, skipped otherwise); SYNCSIGHT_HOST_SYNC=0 gives none; return values and errno are
# checked by the programs themselves, with and without the shim.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
PYTHON=${PYTHON:-python3}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$SHIM" ] || [ ! -x "$SYNCSIGHT" ]; then echo "SKIP: $SHIM or $SYNCSIGHT not built"; exit 77; fi
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then echo "SKIP: no CUDA headers under $CUDA_HOME"; exit 77; fi
SHIM=$(readlink -f "$SHIM")
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -I$CUDA_HOME/include -g"

. tests/fake_cuda.sh
build_fake_cuda "$T/lib" || { echo "FAIL: cannot build the fake CUDA libraries"; exit 1; }
$CC $W -O1 -pthread -Ipreload -o "$T/prog" tests/hostsync_prog.c "$T/lib/libcudart.so.13" -Wl,-rpath,"$T/lib"
have_omp=1
$CC $W -O1 -fopenmp -o "$T/omp_prog" tests/hostsync_omp_prog.c "$T/lib/libcudart.so.13" -Wl,-rpath,"$T/lib" \
    2> "$T/omp.cc.err" || have_omp=0

# run NAME PROG [ENV...]: the program under the shim; dump in $T/NAME.jsonl
run() {
    local name=$1 prog=$2
    shift 2
    mkdir -p "$T/$name"
    if ! env "$@" SYNCSIGHT_OUTPUT_DIR="$T/$name" SYNCSIGHT_CUPTI=0 LD_PRELOAD="$SHIM" "$prog" \
            > "$T/$name.out" 2> "$T/$name.err"; then
        echo "FAIL: $name: the program failed under the shim"; cat "$T/$name.err"; exit 1
    fi
    local trace
    trace=$(ls "$T/$name"/*.sstrace 2>/dev/null | head -1)
    [ -n "$trace" ] || { echo "FAIL: $name: no trace"; cat "$T/$name.err"; exit 1; }
    "$SYNCSIGHT" dump --json "$trace" > "$T/$name.jsonl"
    "$SYNCSIGHT" dump "$trace" > "$T/$name.txt"
}

fail=0
# Without the shim: the program's own return value / errno checks pass.
"$T/prog" > /dev/null || { echo "FAIL: hostsync_prog fails without the shim"; exit 1; }

run pthread "$T/prog"
grep -q '^host_sync kind="release" what="mutex" tid=' "$T/pthread.txt" || { echo "FAIL: text dump lacks host_sync"; fail=1; }
$PYTHON tests/hostsync_check.py pthread "$T/pthread.jsonl" "$T/pthread.out" || fail=1

# Locks taken inside a library: recorded when it is the application's, not
# when it is a CUDA library (the object holding the caller decides).
for lib in app cuda; do
    so=libhsapp.so; [ $lib = cuda ] && so=libcublasLt_hstest.so
    mkdir -p "$T/$lib"
    $CC $W -O1 -fPIC -shared -o "$T/$lib/$so" tests/hostsync_lib.c -pthread
    $CC $W -O1 -pthread -o "$T/libprog_$lib" tests/hostsync_libprog.c "$T/$lib/$so" "$T/lib/libcudart.so.13" \
        -Wl,-rpath,"$T/$lib" -Wl,-rpath,"$T/lib"
    run "lib_$lib" "$T/libprog_$lib"
    mu=$(printf '0x%x' "$(awk '/^handoff_mu /{print $2}' "$T/lib_$lib.out")")
    n=$(grep -c "^host_sync kind=\"release\" what=\"mutex\" .*object=$mu " "$T/lib_$lib.txt" || true)
    if [ $lib = app ] && [ "$n" -lt 1 ]; then
        echo "FAIL: a lock released in an application library was not recorded"; fail=1
    elif [ $lib = cuda ] && [ "$n" -ne 0 ]; then
        echo "FAIL: $n releases recorded of a lock taken inside a CUDA library ($so)"; fail=1
    fi
done

run off "$T/prog" SYNCSIGHT_HOST_SYNC=0
$PYTHON tests/hostsync_check.py off "$T/off.jsonl" "$T/off.out" || fail=1

if [ $have_omp = 1 ]; then
    "$T/omp_prog" > /dev/null || { echo "FAIL: hostsync_omp_prog fails without the shim"; exit 1; }
    run omp "$T/omp_prog" OMP_WAIT_POLICY=passive
    $PYTHON tests/hostsync_check.py omp "$T/omp.jsonl" "$T/omp.out" || fail=1
else
    echo "FAIL: cannot build the OpenMP program with -fopenmp:"; cat "$T/omp.cc.err"; fail=1
fi

# The same program with clang -fopenmp: LLVM's libomp, seen through OMPT.
CLANG=${CLANG:-clang}
if ! command -v "$CLANG" > /dev/null 2>&1; then
    echo "SKIP (libomp part): no $CLANG"
elif ! "$CLANG" $W -O1 -fopenmp -o "$T/llvm_omp_prog" tests/hostsync_omp_prog.c "$T/lib/libcudart.so.13" \
        -Wl,-rpath,"$T/lib" 2> "$T/llvm_omp.cc.err"; then
    echo "SKIP (libomp part): $CLANG -fopenmp cannot build the program (no libomp?):"; head -3 "$T/llvm_omp.cc.err"
elif ! ldd "$T/llvm_omp_prog" 2>/dev/null | grep -q 'libomp\.so'; then
    echo "SKIP (libomp part): the $CLANG -fopenmp program does not load libomp"
else
    "$T/llvm_omp_prog" > /dev/null || { echo "FAIL: hostsync_omp_prog (libomp) fails without the shim"; exit 1; }
    run llvm_omp "$T/llvm_omp_prog" OMP_WAIT_POLICY=passive
    $PYTHON tests/hostsync_check.py omp "$T/llvm_omp.jsonl" "$T/llvm_omp.out" || fail=1
    run llvm_omp_off "$T/llvm_omp_prog" OMP_WAIT_POLICY=passive SYNCSIGHT_HOST_SYNC=0
    $PYTHON tests/hostsync_check.py off "$T/llvm_omp_off.jsonl" "$T/llvm_omp_off.out" || fail=1
    for n in llvm_omp llvm_omp_off; do
        grep -q '^sum 4999950000$' "$T/$n.out" || { echo "FAIL: $n: wrong result under the shim"; fail=1; }
    done
fi

[ $fail = 0 ] && echo "PASS: host synchronization recorded as expected"
exit $fail
