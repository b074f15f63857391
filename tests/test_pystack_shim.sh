#!/bin/bash
# Python stacks through the real shim (build/libsyncsight.so), no GPU: a
# Python program calls a fake libcudart.so.13 (tests/api_fake_cudart.c)
# through ctypes.CDLL, i.e. with the GIL released as PyTorch does, under
# LD_PRELOAD; the trace must give every call the exact script lines.  Runs
# on $PYTHON (default python3) and every python3.10 ... python3.13 present
# (on PATH or pyenv's).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
if [ ! -f "$SHIM" ]; then echo "SKIP: $SHIM not built"; exit 77; fi
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then echo "SKIP: no CUDA headers under $CUDA_HOME"; exit 77; fi
SHIM=$(readlink -f "$SHIM")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; cat "$T/out" 2>/dev/null || true; exit 1; }
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -I$CUDA_HOME/include -g"
. tests/fake_cuda.sh
build_fake_cuda "$T/lib" || fail "cannot build the fake CUDA libraries"
$CC $W -Ianalyzer -DSS_NO_LIBDW -O1 -o "$T/check" tests/callsite/check.c analyzer/symbolize.c common/*.c -ldl

cat > "$T/prog.py" <<'PY'
import ctypes
ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
cuda = ctypes.CDLL(None)    # global scope: the preloaded shim's cudaFree comes first


class Model:
    def release(self):
        cuda.cudaFree(None)  # LINE-FREE


def loop():
    m = Model()
    for _ in range(2):
        m.release()  # LINE-LOOP


loop()  # LINE-MODULE
PY
S=$T/prog.py
L_FREE=$(grep -n LINE-FREE "$S" | cut -d: -f1); L_LOOP=$(grep -n LINE-LOOP "$S" | cut -d: -f1)
L_MOD=$(grep -n LINE-MODULE "$S" | cut -d: -f1)

candidates="$PY python3.10 python3.11 python3.12 python3.13"
if command -v pyenv >/dev/null; then
    candidates="$candidates $(ls -d "$(pyenv root)"/versions/3.1[0-3]*/bin/python3 2>/dev/null | tr '\n' ' ')"
fi
n=0
for P in $candidates; do
    V=$("$P" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
    case " ${seen:-} " in *" $V "*) continue ;; esac
    seen="${seen:-} $V"
    if "$P" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then F=Model.release; else F=release; fi
    rm -rf "$T/out.d"; mkdir "$T/out.d"
    LD_LIBRARY_PATH="$T/lib" SYNCSIGHT_OUTPUT_DIR="$T/out.d" SYNCSIGHT_CUPTI=0 LD_PRELOAD="$SHIM" "$P" "$S" \
        || fail "python $V: program failed under the shim"
    TRACE=$(ls "$T"/out.d/*.sstrace 2>/dev/null | head -1)
    [ -n "$TRACE" ] || fail "python $V: no trace written"
    "$T/check" "$TRACE" > "$T/out" || fail "python $V: check failed"
    want="py $S:$L_FREE $F
py $S:$L_LOOP loop
py $S:$L_MOD <module>"
    got=$(awk '$1 == "api" {k++} k == 1 && /^py /' "$T/out")
    [ "$got" = "$want" ] || fail "python $V: stack of the GIL-released cudaFree:
$got
expected:
$want"
    [ "$(grep -c '^api ' "$T/out")" = 2 ] || fail "python $V: expected 2 API records"
    [ "$(grep '^pystack=' "$T/out" | sort -u)" = "pystack=1" ] || fail "python $V: both calls must share one Python stack"
    echo "ok: python $V"
    n=$((n + 1))
done
[ $n -gt 0 ] || fail "no python interpreter ran"
echo "PASS test_pystack_shim"
