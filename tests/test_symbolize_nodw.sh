#!/bin/bash
# The analyzer built without elfutils' libdw (`make LIBDW=0`, what a machine
# without libdw-dev gets) symbolizes native call sites through llvm-symbolizer
# or binutils' addr2line run as child processes: the fixture checks with a
# native `site` must run (not skip) and pass with each program installed, and
# tests/test_fixture_sites.sh must pass.  With no program at all, the fixture
# checks skip their native sites saying why, and a report says once why its
# sites are module+offset and how to fix it.  Skips (77) only when neither
# program exists.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NODW=$BUILD/nodw
fail() { echo "FAIL: $*"; exit 1; }
tools=()
for t in addr2line llvm-symbolizer; do command -v $t >/dev/null 2>&1 && tools+=("$t"); done
[ ${#tools[@]} -gt 0 ] || { echo "neither addr2line nor llvm-symbolizer is installed: the fallback cannot be tested"; exit 77; }
${MAKE:-make} --no-print-directory BUILD="$NODW" LIBDW=0 "$NODW/syncsight" > "$NODW.log" 2>&1 \
    || { tail -20 "$NODW.log"; fail "the analyzer does not build with LIBDW=0"; }
S=$NODW/syncsight
# Fixtures with a native `site` line (the Python ones resolve without a symbolizer).
native=()
for e in tests/fixtures/*.expect; do
    n=$(basename "$e" .expect)
    grep -q '^site .*\.cu' "$e" && [ -f "tests/fixtures/$n.sstrace" ] && native+=("$n")
done
[ ${#native[@]} -gt 0 ] || fail "no fixture with a native site line"
for t in "${tools[@]}"; do
    export SYNCSIGHT_SYMBOLIZER=$t
    "$S" --version | grep -q "^symbolizer: $t " || fail "--version does not name $t: $("$S" --version | tail -1)"
    out=$(SYNCSIGHT=$S bash tests/test_fixtures.sh "${native[@]}" 2>&1) || { echo "$out" | grep -v '^PASS'; fail "fixture checks fail with $t"; }
    if grep -q "SKIP" <<< "$out"; then fail "fixture native-site checks skipped with $t: $(grep SKIP <<< "$out")"; fi
    echo "ok: ${#native[@]} fixtures with native sites pass through $t"
    out=$(SYNCSIGHT=$S bash tests/test_fixture_sites.sh 2>&1) || { echo "$out"; fail "test_fixture_sites.sh fails with $t"; }
    echo "ok: $t: $(grep 'have a file:line site' <<< "$out")"
done

# No program: native checks skip with the reason, and the report says once why.
export SYNCSIGHT_SYMBOLIZER=none
out=$(SYNCSIGHT=$S bash tests/test_fixtures.sh legacy_stream 2>&1) || { echo "$out"; fail "fixture check without a symbolizer"; }
grep -q "^SKIP native call-site checks: none (" <<< "$out" || fail "no skip reason without a symbolizer: $out"
rep=$(SYNCSIGHT_SYMBOL_PATH=tests/fixtures/bin "$S" report tests/fixtures/legacy_stream.sstrace 2>&1)
[ "$(grep -c 'call sites could not be' <<< "$rep")" = 1 ] || { echo "$rep"; fail "the report does not say once why its sites are not resolved"; }
grep 'call sites could not be' <<< "$rep" | grep -q "SYNCSIGHT_SYMBOL_PATH" || fail "the note does not say how to fix it"
echo "ok: without a symbolizer program the native checks skip with a reason and the report says why once"
help=$("$S" --help)
for v in SYNCSIGHT_SYMBOL_PATH SYNCSIGHT_SYMBOLIZER; do grep -q "$v=" <<< "$help" || fail "--help does not mention $v"; done
echo "ok: --help names SYNCSIGHT_SYMBOL_PATH and SYNCSIGHT_SYMBOLIZER"
