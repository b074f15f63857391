#!/bin/bash
# GPU check of Python stacks for PyTorch calls (preload/pystack.c).  Lead, on
# the GPU machine after `make all`:
#   bash tests/gpu_pystack.sh          (PYTHON=... to choose the interpreter;
#                                       default: /opt/torch/.venv/bin/python if
#                                       present, else python3)
# Runs tests/callsite/gpu_pyprog.py under build/libsyncsight.so.  PyTorch
# releases the GIL around .item() and copies, so these stacks come from the
# direct frame reader.  Passes when the recorded Python stacks name:
#   the .item() line inside train_step, called from the loop line, and
#   the pageable non_blocking copy line,
# and prints, for every Python stack recorded from the script, the CUDA calls
# (cbid) that carry it.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
CC=${CC:-cc}
if [ -z "${PYTHON:-}" ] && [ -x /opt/torch/.venv/bin/python ]; then PYTHON=/opt/torch/.venv/bin/python; fi
PY=${PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; [ -f "$T/out" ] && grep -E '^(api|pystack=|py )' "$T/out" | tail -80; exit 1; }
[ -f build/libsyncsight.so ] || fail "build/libsyncsight.so missing: make all"
"$PY" -c 'import torch, sys; assert torch.cuda.is_available(); print("python", sys.version.split()[0], "torch", torch.__version__)' \
    || fail "$PY has no torch with CUDA"
DW="-ldw -lelf"; DWF=""
printf '#include <elfutils/libdwfl.h>\n' | $CC -E -x c - >/dev/null 2>&1 || { DW=""; DWF="-DSS_NO_LIBDW"; }
$CC -std=gnu11 -Iinclude -Ianalyzer $DWF -O1 -g -o "$T/check" tests/callsite/check.c analyzer/symbolize.c common/*.c $DW -ldl

P=$ROOT/tests/callsite/gpu_pyprog.py
line_of() { grep -n "$1" "$P" | head -1 | cut -d: -f1; }
L_ITEM=$(line_of LINE-GPU-ITEM); L_LOOP=$(line_of LINE-GPU-LOOP); L_COPY=$(line_of LINE-GPU-COPY)
mkdir -p "$T/run"
# The shim writes to ./syncsight.data/ unless told: name the directory.
(cd "$T/run" && SYNCSIGHT_OUTPUT_DIR=$T/run LD_PRELOAD=$ROOT/build/libsyncsight.so "$PY" "$P" -) || fail "python program failed"
tr=""
for f in $(ls -t "$T/run"); do [ -f "$T/run/$f" ] && [ "$(head -c 8 "$T/run/$f")" = SYNCSGHT ] && { tr="$T/run/$f"; break; }; done
[ -n "$tr" ] || fail "no trace in $T/run"
"$T/check" "$tr" > "$T/out" || fail "check failed"

# "cbid | innermost Python frame | its caller (- if none)" for every API
# record that has a Python stack.
awk 'function flush() { if (k) print cbid " | " first " | " (k > 1 ? second : "-") }
     $1 == "api" {flush(); cbid = $2; k = 0; next}
     /^py / {k++; if (k == 1) first = substr($0, 4); if (k == 2) second = substr($0, 4)}
     END {flush()}' "$T/out" > "$T/sites"
echo "Python call sites recorded from the script (count | cbid | innermost | caller):"
grep -F "$P" "$T/sites" | sort | uniq -c || true

grep -qF " | $P:$L_ITEM train_step | $P:$L_LOOP <module>" "$T/sites" \
    || fail ".item() in the loop: no CUDA call with Python stack $P:$L_ITEM train_step <- $P:$L_LOOP <module>"
grep -qF " | $P:$L_COPY <module> | -" "$T/sites" \
    || fail "pageable non_blocking copy: no CUDA call with Python stack $P:$L_COPY <module>"
echo "PASS gpu_pystack"
