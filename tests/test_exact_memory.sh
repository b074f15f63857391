#!/bin/bash
# Exact memory mode on the CPU (no GPU, no Sanitizer library): the shim still
# builds and runs against the fake CUDA (tests/fake_cuda.sh) with and without
# SYNCSIGHT_EXACT_MEMORY=1.  With the mode asked for but unavailable (this
# build lacks sanitizer.h, or libsanitizer-public.so is missing), the shim
# prints exactly one stderr line saying so, and the program's output, exit
# status and trace are what they are without the mode.  `syncsight run
# --exact-memory` sets the variable.  The GPU side: tests/gpu_exact_memory.sh.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
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
$CC $W -O1 -o "$T/check" tests/api_check_trace.c common/*.c

# The shim's exact_memory.c, compiled on its own both ways: the stub, and
# (when a Sanitizer header is at hand) the real body, warning-free.
SAN_INC=""
for d in "${SANITIZER_HOME:-}/include" "$CUDA_HOME/compute-sanitizer/include"; do
    [ -f "$d/sanitizer.h" ] && { SAN_INC=$d; break; }
done
CUPTI_INC=$(dirname "$(ls "$CUDA_HOME"/extras/CUPTI/include/cupti.h "$CUDA_HOME"/include/cupti.h 2>/dev/null | head -1)")
PC="-std=gnu11 -Wall -Wextra -Werror -fPIC -Iinclude -Ipreload -I$BUILD/gen -I$CUDA_HOME/include -I$CUPTI_INC"
$CC $PC -c -o "$T/xm_stub.o" preload/exact_memory.c || { echo "FAIL: exact_memory.c (stub) does not compile"; exit 1; }
if [ -n "$SAN_INC" ]; then
    $CC $PC -DSS_HAVE_SANITIZER -I"$SAN_INC" -c -o "$T/xm_real.o" preload/exact_memory.c ||
        { echo "FAIL: exact_memory.c (Sanitizer API) does not compile"; exit 1; }
    echo "ok: exact_memory.c compiles with the Sanitizer API ($SAN_INC) and without"
else
    echo "note: no sanitizer.h (set SANITIZER_HOME): only the stub compiled"
fi

# run NAME ENV...: the program under the shim; stdout, stderr, trace kept.
run() {
    local name=$1; shift
    mkdir -p "$T/$name"
    env "$@" SYNCSIGHT_OUTPUT_DIR="$T/$name" SYNCSIGHT_CUPTI=0 LD_PRELOAD="$SHIM" "$T/prog" \
        > "$T/$name.out" 2> "$T/$name.err"
}
"$T/prog" > "$T/plain.out" || { echo "FAIL: api_prog fails without the shim"; exit 1; }
run off || { echo "FAIL: the program fails under the shim:"; cat "$T/off.err"; exit 1; }
# The library is made unavailable on purpose: this machine may have one
# (a wheel, a toolkit), which without a GPU would only say nothing.
run on SYNCSIGHT_EXACT_MEMORY=1 SYNCSIGHT_SANITIZER_LIB="$T/no/libsanitizer-public.so" ||
    { echo "FAIL: the program fails with SYNCSIGHT_EXACT_MEMORY=1:"; cat "$T/on.err"; exit 1; }
# api_prog prints addresses (they vary run to run): compare what each line is.
shape() { awk '{print $1}' "$1"; }
[ "$(shape "$T/plain.out")" = "$(shape "$T/off.out")" ] || { echo "FAIL: output differs under the shim"; exit 1; }
[ "$(shape "$T/off.out")" = "$(shape "$T/on.out")" ] ||
    { echo "FAIL: output differs with SYNCSIGHT_EXACT_MEMORY=1"; diff "$T/off.out" "$T/on.out" | head; exit 1; }
n=$(grep -c 'exact memory mode' "$T/on.err" || true)
[ "$n" = 1 ] || { echo "FAIL: expected one stderr line about exact memory mode, got $n:"; cat "$T/on.err"; exit 1; }
grep -q 'not available' "$T/on.err" || { echo "FAIL: the line does not say the mode is unavailable:"; cat "$T/on.err"; exit 1; }
if grep -q 'exact memory' "$T/off.err"; then echo "FAIL: the mode spoke while off:"; cat "$T/off.err"; exit 1; fi
echo "ok: one line: $(cat "$T/on.err" | grep 'exact memory' | cut -c1-160)..."
for m in off on; do
    TRACE=$(ls "$T/$m"/*.sstrace 2>/dev/null | head -1)
    [ -n "$TRACE" ] || { echo "FAIL: no trace written ($m)"; exit 1; }
    "$T/check" "$TRACE" "$T/$m.out" > "$T/check_$m.log" 2>&1 || { echo "FAIL: trace ($m) does not match the calls:"; cat "$T/check_$m.log"; exit 1; }
    if [ -x "$SYNCSIGHT" ] && "$SYNCSIGHT" dump "$TRACE" | grep -q '^kernel_access'; then
        echo "FAIL: kernel_access records without a Sanitizer ($m)"; exit 1
    fi
done
echo "ok: traces with and without the mode match the calls made"

# syncsight run --exact-memory sets the variable (and the program still runs).
if [ -x "$SYNCSIGHT" ]; then
    SYNCSIGHT_LIB="$SHIM" SYNCSIGHT_CUPTI=0 SYNCSIGHT_SANITIZER_LIB="$T/no/lib.so" \
        "$SYNCSIGHT" run --exact-memory --no-report -o "$T/run/" -- "$T/prog" > "$T/run.out" 2> "$T/run.err" ||
        { echo "FAIL: syncsight run --exact-memory:"; cat "$T/run.err"; exit 1; }
    [ "$(shape "$T/off.out")" = "$(shape "$T/run.out")" ] || { echo "FAIL: output differs under syncsight run --exact-memory"; exit 1; }
    grep -q 'exact memory mode' "$T/run.err" || { echo "FAIL: --exact-memory did not reach the shim:"; cat "$T/run.err"; exit 1; }
    "$SYNCSIGHT" run --help | grep -q -- '--exact-memory' || { echo "FAIL: --exact-memory missing from the usage"; exit 1; }
    echo "ok: syncsight run --exact-memory"
fi
echo "PASS: exact memory mode off/unavailable leaves the program and its trace unchanged"
