#!/bin/bash
# GPU test of the NVTX ranges the shim emits (issue: findings on the Nsight
# Systems timeline): an NVTX injection library of the test's own
# (tests/nvtx_probe/inject.c) receives them and logs them; this script asserts
# their names and nesting.  Run on a GPU machine after `make all`.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
CC=${CC:-cc}
nvidia-smi -L > /dev/null 2>&1 || { echo "SKIP gpu_nvtx_emit (no GPU)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL gpu_nvtx_emit: $*"; fails=$((fails + 1)); }
$CC -std=gnu11 -Wall -Wextra -fPIC -shared -I"$CUDA_HOME/include" -o "$T/inject.so" tests/nvtx_probe/inject.c -lpthread ||
    { echo "FAIL gpu_nvtx_emit: cannot build the probe"; exit 1; }
$NVCC -arch=sm_90 -cudart shared -o "$T/prog" tests/nvtx_probe/prog.cu || { echo "FAIL: cannot build prog"; exit 1; }
NVTX_INJECTION64_PATH="$T/inject.so" NVTX_PROBE_LOG="$T/nvtx.log" SYNCSIGHT_OUTPUT_DIR="$T/traces" \
    LD_PRELOAD="$ROOT/build/libsyncsight.so" "$T/prog" > "$T/out" 2>&1 || fail "program failed: $(cat "$T/out")"
grep -q "nvtx_probe: done" "$T/out" || fail "program output: $(cat "$T/out")"
L=$T/nvtx.log
[ -s "$L" ] || { fail "the probe received no NVTX call"; exit 1; }
grep -qx "init ok" "$L" || fail "probe init: $(head -1 "$L")"
grep -qx "domain syncsight" "$L" || fail "no 'syncsight' domain created"
grep -q "^category syncsight [0-9]* device-wide sync$" "$L" || fail "no named category 'device-wide sync'"
grep -q "^push syncsight 0 cudaDeviceSynchronize (device-wide sync)$" "$L" || fail "no top-level range 'cudaDeviceSynchronize (device-wide sync)'"
grep -q "^push syncsight 0 cudaStreamSynchronize (" "$L" || fail "no range for cudaStreamSynchronize"
grep -q "^push syncsight 0 cudaFree (" "$L" || fail "no range for cudaFree"
grep -q "^mark syncsight .*cudaFree blocked [0-9.]* ms$" "$L" || fail "no mark for the cudaFree that blocked"
grep -q "^stream " "$L" || fail "the stream was not named (nvtxNameCudaStreamA)"
# Nesting: every push of ours is popped, at the depth it was pushed, never below 0.
python3 - "$L" <<'PY' || fails=$((fails + 1))
import sys
depth, pushes, pops = 0, 0, 0
for line in open(sys.argv[1]):
    w = line.split(" ", 3)
    if w[0] == "push" and w[1] == "syncsight":
        assert int(w[2]) == depth, f"push at depth {w[2]}, expected {depth}: {line}"
        depth += 1; pushes += 1
    elif w[0] == "pop" and w[1] == "syncsight":
        depth -= 1; pops += 1
        assert depth >= 0 and int(w[2]) == depth, f"pop to depth {w[2]}, expected {depth}: {line}"
assert pushes == pops and pushes >= 3, f"{pushes} pushes, {pops} pops"
print(f"ok: {pushes} syncsight ranges, balanced")
PY
# SYNCSIGHT_NVTX=0 switches emission off.
NVTX_INJECTION64_PATH="$T/inject.so" NVTX_PROBE_LOG="$T/off.log" SYNCSIGHT_NVTX=0 SYNCSIGHT_OUTPUT_DIR="$T/traces2" \
    LD_PRELOAD="$ROOT/build/libsyncsight.so" "$T/prog" > /dev/null 2>&1
! grep -q "^push syncsight" "$T/off.log" 2>/dev/null || fail "SYNCSIGHT_NVTX=0 still emitted ranges"
echo "--- probe log (head)"; head -20 "$L"
[ $fails -eq 0 ] && { echo "PASS gpu_nvtx_emit"; exit 0; }
exit 1
