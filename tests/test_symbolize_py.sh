#!/bin/bash
# Python call sites (preload/pystack.c, docs/call-sites.md "Python"): the
# shim must record the calling script's exact file, line and function for
# calls made with the GIL held (ctypes.PyDLL) AND with it released
# (ctypes.CDLL, like PyTorch), deduplicated like native stacks, on every
# CPython 3.10-3.13 this machine has:
#   $PYTHON (default python3), the interpreters named in SS_TEST_PYTHONS
#   (space-separated), python3.10 ... python3.13 on PATH, and pyenv's.
# Each interpreter runs tests/callsite/pyprog.py with the direct reader
# (default), the fault-safe reader (SYNCSIGHT_PYSTACK_READER=safe) and the
# C-API fallback (=api, GIL-held calls only); then with every other
# version's layout (SYNCSIGHT_PYSTACK_LAYOUT), which must be rejected
# without a crash; then the capture benchmark (tests/callsite/pybench.py):
# "pybench ... ns=" lines, for the docs.
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
SHIM_SRCS="preload/callsite.c preload/pystack.c tests/callsite_fake_runtime.c common/*.c"
$CC $W -O2 -fPIC -shared -fvisibility=hidden -o "$T/libsyncsight_test.so" \
    $SRC/testshim.c $SHIM_SRCS -ldl -lpthread
$CC $W -O2 -fPIC -shared -fvisibility=hidden -o "$T/libpybench.so" \
    $SRC/pybench.c $SHIM_SRCS -ldl -lpthread
$CC $W $DW_FLAGS -O1 -o "$T/check" $SRC/check.c analyzer/symbolize.c common/*.c $DW_LIBS -ldl

# ---------------------------------------------------------------- interpreters
candidates="$PY ${SS_TEST_PYTHONS:-}"
for v in 10 11 12 13; do candidates="$candidates python3.$v"; done
if command -v pyenv >/dev/null; then
    candidates="$candidates $(ls -d "$(pyenv root)"/versions/3.1[0-3]*/bin/python3 2>/dev/null | tr '\n' ' ')"
fi
PYTHONS=""; VERSIONS=" "
for p in $candidates; do
    v=$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
    case "$VERSIONS" in *" $v "*) continue ;; esac
    VERSIONS="$VERSIONS$v "; PYTHONS="$PYTHONS $p"
done
echo "interpreters:$VERSIONS"

S="$ROOT/$SRC/pyprog.py"
line_of() { grep -n "$1" "$S" | head -1 | cut -d: -f1; }
L_STEP=$(line_of LINE-PY-STEP); L_NOGIL=$(line_of LINE-PY-NOGIL); L_TRAIN=$(line_of LINE-PY-TRAIN)
L_SYNC=$(line_of LINE-PY-SYNC); L_MOD=$(line_of LINE-PY-MODULE); L_TOP=$(line_of LINE-PY-TOP)

# py_lines CBID: the "py" lines of the first call CBID in $T/out.
py_lines() { awk -v c="$1" '$1 == "api" {p = ($2 == c && !done); if (p) done = 1; next} p && /^py /' "$T/out"; }
# pystack_ids CBID: the distinct pystack ids of all calls CBID.
pystack_ids() { awk -v c="$1" '$1 == "api" {p = ($2 == c); next} p && /^pystack=/ {print; p = 0}' "$T/out" | sort -u; }

for P in $PYTHONS; do
    V=$("$P" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if "$P" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
        STEP=Trainer.step SYNC=Trainer.sync     # co_qualname
    else
        STEP=step SYNC=sync                     # co_name before 3.11
    fi
    for reader in direct safe api; do
        what="python $V, $reader reader"
        rm -f "$T/trace" "$T/expected.json" "$T/out"
        SYNCSIGHT_PYSTACK_READER=$reader "$P" "$S" "$T/libsyncsight_test.so" "$T/trace" "$T/expected.json" \
            || fail "$what: python program failed"
        "$T/check" "$T/trace" > "$T/out" || fail "$what: check failed"

        # GIL held (PyDLL): exact stack, both loop iterations one stack.
        want="py $S:$L_STEP $STEP
py $S:$L_TRAIN train
py $S:$L_MOD <module>"
        [ "$(py_lines 201)" = "$want" ] || fail "$what: Python stack of call 201 (GIL held):
$(py_lines 201)
expected:
$want"
        [ "$(pystack_ids 201 | wc -l)" = 1 ] || fail "$what: call 201's repeated stack not deduplicated"
        py_lines 203 | head -1 | grep -qxF "py $S:$L_TOP <module>" || fail "$what: top-level call site"

        # GIL released (CDLL).
        if [ $reader = api ]; then
            [ "$(pystack_ids 202)" = "pystack=0" ] || fail "$what: a stack without the GIL from the API reader"
        else
            want="py $S:$L_NOGIL $SYNC
py $S:$L_SYNC train
py $S:$L_MOD <module>"
            [ "$(py_lines 202)" = "$want" ] || fail "$what: Python stack of call 202 (GIL released):
$(py_lines 202)
expected:
$want"
            [ "$(pystack_ids 202 | wc -l)" = 1 ] || fail "$what: call 202's repeated stack not deduplicated"
        fi
        grep -q '^api 202 stack=[1-9]' "$T/out" || fail "$what: no native stack for the GIL-released call"

        # Everything else against the interpreter's own view.
        mode=direct; [ $reader = api ] && mode=api
        "$PY" "$SRC/compare_pystacks.py" "$T/out" "$T/expected.json" $mode > "$T/cmp" \
            || { cat "$T/cmp"; fail "$what: stacks differ from the interpreter's"; }
        echo "ok: $what: $(cat "$T/cmp")"
    done

    # A layout that does not fit this interpreter (every other version's):
    # the first capture must detect it without faulting and hand over to
    # the API reader, so GIL-held calls still get their exact stacks.
    for other in 3.10 3.11 3.12 3.13; do
        [ $other = "$V" ] && continue
        what="python $V read with the $other layout"
        rm -f "$T/trace" "$T/expected.json" "$T/out"
        SYNCSIGHT_PYSTACK_LAYOUT=$other "$P" "$S" "$T/libsyncsight_test.so" "$T/trace" "$T/expected.json" \
            || fail "$what: python program failed"
        "$T/check" "$T/trace" > "$T/out" || fail "$what: check failed"
        "$PY" "$SRC/compare_pystacks.py" "$T/out" "$T/expected.json" api > "$T/cmp" \
            || { cat "$T/cmp"; fail "$what: not the API reader's stacks"; }
    done
    echo "ok: python $V: wrong layouts rejected, API reader took over"

    for reader in direct safe api; do
        iterations=20000; [ $reader = safe ] && iterations=500     # ~100 us each here
        SYNCSIGHT_PYSTACK_READER=$reader "$P" "$SRC/pybench.py" "$T/libpybench.so" $iterations > "$T/bench" \
            || fail "python $V: pybench failed"
        sed "s/^pybench /pybench reader=$reader /" "$T/bench"
        if [ $reader = api ]; then
            grep 'gil=held' "$T/bench" | grep -q 'stack_id=0$' && fail "python $V: api reader captured nothing with the GIL"
        else
            grep -q 'stack_id=0$' "$T/bench" && fail "python $V: $reader reader: a capture recorded no stack"
        fi
    done
done
echo "PASS test_symbolize_py"
