#!/bin/bash
# Python call sites: preload/pystack.c must record the calling script's
# file, line and function when the thread holds the GIL (ctypes.PyDLL), none
# when it released it (ctypes.CDLL), deduplicated like native stacks.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
CC=${CC:-cc}
PY=${PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; echo "--- check output:"; cat "$T/out" 2>/dev/null || true; exit 1; }
command -v "$PY" >/dev/null || { echo "FAIL: $PY not found"; exit 1; }

if printf '#include <elfutils/libdwfl.h>\n' | $CC -E -x c - >/dev/null 2>&1; then
    DW_LIBS="-ldw -lelf"; DW_FLAGS=""
else
    DW_LIBS=""; DW_FLAGS="-DSS_NO_LIBDW"
fi
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -Ipreload -Itests -Ianalyzer -g"
SRC=tests/callsite
$CC $W -O2 -fPIC -shared -fvisibility=hidden -o "$T/libsyncsight_test.so" \
    $SRC/testshim.c preload/callsite.c preload/pystack.c tests/callsite_fake_runtime.c common/*.c -ldl -lpthread
$CC $W $DW_FLAGS -O1 -o "$T/check" $SRC/check.c analyzer/symbolize.c common/*.c $DW_LIBS -ldl

S="$ROOT/$SRC/pyprog.py"
line_of() { grep -n "$1" "$S" | head -1 | cut -d: -f1; }
L_STEP=$(line_of LINE-PY-STEP); L_TRAIN=$(line_of LINE-PY-TRAIN)
L_MOD=$(line_of LINE-PY-MODULE); L_TOP=$(line_of LINE-PY-TOP)

"$PY" "$S" "$T/libsyncsight_test.so" "$T/trace" || fail "python program failed"
"$T/check" "$T/trace" > "$T/out" || fail "check failed"

# Expected Python stack of call 201, innermost first.  Function names are
# co_qualname on Python >= 3.11, co_name before.
if "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    STEP_NAME=Trainer.step
else
    STEP_NAME=step
fi
want="py $S:$L_STEP $STEP_NAME
py $S:$L_TRAIN train
py $S:$L_MOD <module>"
got=$(awk '/^api 201 /{p=1; next} /^api /{p=0} p && /^py /' "$T/out" | head -3)
[ "$got" = "$(printf '%s\n%s' "$want" "")" ] || [ "$got" = "$want" ] || fail "python stack of call 201:
$got
expected:
$want"
# Both iterations of the loop are one stack.
ids=$(grep -c '^api 201 ' "$T/out")
[ "$ids" = 2 ] || fail "expected two 201 calls, got $ids"
pyids=$(awk '/^api 201 /{p=1; next} p && /^pystack=/{print; p=0}' "$T/out" | sort -u)
[ "$pyids" = "pystack=1" ] || fail "repeated Python stack not deduplicated: $pyids"
# GIL released (CDLL): no Python stack; native stack still there.
awk '/^api 202 /{p=1; next} p && /^pystack=/{print; exit}' "$T/out" | grep -qx 'pystack=0' \
    || fail "Python stack taken while the GIL was released"
grep -q '^api 202 stack=[1-9]' "$T/out" || fail "no native stack for the GIL-released call"
awk '/^api 203 /{p=1; next} p && /^py /{print; exit}' "$T/out" | grep -qxF "py $S:$L_TOP <module>" \
    || fail "top-level call site"
grep -qx 'pystacks 2' "$T/out" || fail "expected 2 distinct Python stacks"
echo "PASS test_symbolize_py"
