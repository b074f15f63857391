#!/bin/bash
# tools/shrink_debug.py, which make fixtures runs on each fixture's debug
# file: it keeps the symbols the fixture traces' stacks reach and drops the
# rest (mostly the static cudart's symbol table).  Checked on a committed
# fixture (sample_stream_priorities, a static-cudart program):
#   - on the committed (already shrunk) file it changes no symbol;
#   - the report through the file it writes is the report through the
#     committed one, sites included;
#   - with no trace naming the binary, every symbol goes, and the report's
#     call sites then change: the kept symbols are the ones it reads.
# Skipped (77) without objcopy/nm, the fixture, or a symbolizer.
set -u
cd "$(dirname "$0")/.."
SYNCSIGHT=${SYNCSIGHT:-build/syncsight}
PYTHON=${PYTHON:-python3}
NAME=sample_stream_priorities
FX=tests/fixtures
command -v objcopy > /dev/null && command -v nm > /dev/null || { echo "SKIP: no objcopy/nm"; exit 77; }
[ -f "$FX/$NAME.sstrace" ] && [ -f "$FX/bin/$NAME.debug" ] || { echo "SKIP: no $NAME fixture"; exit 77; }
"$SYNCSIGHT" --version 2>/dev/null | grep -q '^symbolizer: none' &&
    { echo "SKIP: the analyzer has no symbolizer (no libdw, addr2line or llvm-symbolizer)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

mkdir -p "$T/one/bin" "$T/none/bin"
cp "$FX/$NAME.sstrace" "$FX/$NAME.sstrace.kaccess" "$T/one/" 2>/dev/null
cp "$FX/bin/$NAME.debug" "$T/one/bin/"
cp "$FX/bin/$NAME.debug" "$T/none/bin/"
report() { SYNCSIGHT_SYMBOL_PATH=$1 "$SYNCSIGHT" report "$FX/$NAME.sstrace" 2>/dev/null; }
want=$(report "$FX/bin")
SYNCSIGHT="$SYNCSIGHT" "$PYTHON" tools/shrink_debug.py --dir "$T/one" || fail=1
check "the committed file keeps every symbol" \
    '[ "$(nm --defined-only "$FX/bin/$NAME.debug" | sort | md5sum)" = "$(nm --defined-only "$T/one/bin/$NAME.debug" | sort | md5sum)" ]'
check "the report through it is the same" '[ "$(report "$T/one/bin")" = "$want" ]'
check "the report names the program's line" 'report "$T/one/bin" | grep -q "sample_stream_priorities.cu:80 main"'
SYNCSIGHT="$SYNCSIGHT" "$PYTHON" tools/shrink_debug.py --dir "$T/none" || fail=1
check "no trace: no symbol left" '[ "$(nm --defined-only "$T/none/bin/$NAME.debug" 2>/dev/null | wc -l)" -eq 0 ]'
check "no symbol: the report changes" '[ "$(report "$T/none/bin")" != "$want" ]'
exit $fail
