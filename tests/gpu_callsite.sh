#!/bin/bash
# GPU check of call sites (lead: run on the GPU machine after `make all`):
#   bash tests/gpu_callsite.sh
# Runs a CUDA program (dynamic and static cudart) and a Python program under
# build/libsyncsight.so and checks with the real symbolizer that the blocking
# calls point at their source lines.  Traces are looked for in the program's
# working directory (any file starting with the trace magic).
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
CC=${CC:-cc}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PY=${PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; [ -f "$T/out" ] && cat "$T/out"; exit 1; }
[ -f build/libsyncsight.so ] || fail "build/libsyncsight.so missing: make all"
DW="-ldw -lelf"; DWF=""
printf '#include <elfutils/libdwfl.h>\n' | $CC -E -x c - >/dev/null 2>&1 || { DW=""; DWF="-DSS_NO_LIBDW"; echo "note: no libdw: module+offset only"; }
$CC -std=gnu11 -Iinclude -Ianalyzer $DWF -O1 -g -o "$T/check" tests/callsite/check.c analyzer/symbolize.c common/*.c $DW -ldl

S=$ROOT/tests/callsite/gpu_prog.cu
L_SYNC=$(grep -n LINE-GPU-SYNC "$S" | cut -d: -f1); L_FREE=$(grep -n LINE-GPU-FREE "$S" | cut -d: -f1)
newest_trace() { for f in $(ls -t "$1"); do [ "$(head -c 8 "$1/$f")" = SYNCSGHT ] && { echo "$1/$f"; return; }; done; }

for cudart in shared static; do
    mkdir -p "$T/$cudart"
    $NVCC -g -O1 -cudart $cudart -o "$T/$cudart/prog" "$S"
    (cd "$T/$cudart" && SYNCSIGHT_OUTPUT_DIR=$T/$cudart LD_PRELOAD=$ROOT/build/libsyncsight.so ./prog) || fail "$cudart: program failed"
    tr=$(newest_trace "$T/$cudart"); [ -n "$tr" ] || fail "$cudart: no trace in $T/$cudart (where does the shim write?)"
    "$T/check" "$tr" > "$T/out" || fail "$cudart: check failed"
    grep -q "site=$S:$L_SYNC solver::Solver::run()" "$T/out" || fail "$cudart: cudaStreamSynchronize site"
    grep -q "site=$S:$L_FREE main" "$T/out" || fail "$cudart: cudaFree site"
    echo "ok: $cudart cudart"
done

P=$ROOT/tests/callsite/gpu_pyprog.py
L_PY=$(grep -n LINE-GPU-PY "$P" | cut -d: -f1)
mkdir -p "$T/py"
CUDART=$(ldconfig -p | awk '/libcudart.so/{print $NF; exit}'); CUDART=${CUDART:-/usr/local/cuda/lib64/libcudart.so}
(cd "$T/py" && SYNCSIGHT_OUTPUT_DIR=$T/py LD_PRELOAD=$ROOT/build/libsyncsight.so "$PY" "$P" "$CUDART") || fail "python program failed"
tr=$(newest_trace "$T/py"); [ -n "$tr" ] || fail "python: no trace"
"$T/check" "$tr" > "$T/out" || fail "python: check failed"
grep -qxF "py $P:$L_PY <module>" "$T/out" || fail "python: no Python call site for cudaDeviceSynchronize"
echo "ok: python (GIL held)"
echo "info: Python stacks recorded for the torch calls (read without the GIL, so PyTorch's released GIL does not hide them):"
grep -E "^py $P:" "$T/out" | sort | uniq -c
echo "PASS gpu_callsite"
