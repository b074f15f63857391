#!/bin/bash
# The shim must export a wrapper for every entry point of preload/cuda_api.tab
# and for every _ptsz/_ptds twin of those names that libcudart.so.13 exports
# (a per-thread-default-stream build calls only the twins); and every name in
# the table must really be a cudart export (a typo would interpose nothing).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PYTHON=${PYTHON:-python3}
CUDART=$(ls "$CUDA_HOME"/lib64/libcudart.so.13 "$CUDA_HOME"/targets/*/lib/libcudart.so.13 2>/dev/null | head -1 || true)
if [ ! -f "$SHIM" ]; then echo "SKIP: $SHIM not built"; exit 77; fi
if [ -z "$CUDART" ]; then echo "SKIP: libcudart.so.13 not found under $CUDA_HOME"; exit 77; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

nm -D --defined-only "$SHIM" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$T/shim"
nm -D --defined-only "$CUDART" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$T/cudart"
$PYTHON tools/gen_api.py preload/cuda_api.tab --list-symbols | sort -u > "$T/table"
grep -Ev '_pt(sz|ds)$' "$T/table" > "$T/base"

fail=0
# Twins cudart exports for the covered names.
while read -r name; do
    for twin in "${name}_ptsz" "${name}_ptds"; do
        if grep -qx "$twin" "$T/cudart" && ! grep -qx "$twin" "$T/shim"; then
            echo "FAIL: libcudart.so.13 exports $twin but the shim does not interpose it (add the twin to the table)"
            fail=1
        fi
    done
done < "$T/base"
while read -r sym; do
    grep -qx "$sym" "$T/shim" || { echo "FAIL: table entry $sym is not exported by $SHIM"; fail=1; }
    grep -qx "$sym" "$T/cudart" || { echo "FAIL: table entry $sym is not a libcudart.so.13 export"; fail=1; }
done < "$T/table"
[ $fail -eq 0 ] || exit 1
echo "PASS: $(wc -l < "$T/table") entry points and twins exported; every cudart twin of a covered name covered"
