#!/bin/bash
# Fixture traces recorded on a GPU (`make fixtures`) analyzed on the CPU: for
# each tests/fixtures/<name>.sstrace, `syncsight report --format json` must
# match tests/fixtures/<name>.expect (format: docs/testing.md).
#
#   tests/test_fixtures.sh            every fixture; exit 77 (skip) when there are none
#   tests/test_fixtures.sh NAME...    only these fixtures (the make test runner
#                                     calls it once per fixture)
# Environment: SYNCSIGHT (default build/syncsight), PYTHON (python3),
# FIXTURE_OUT (where reports go; default a temporary directory).
set -u
cd "$(dirname "$0")/.."
SYNCSIGHT=${SYNCSIGHT:-build/syncsight}
PYTHON=${PYTHON:-python3}
DIR=tests/fixtures
# The recorded programs' symbols (objcopy --only-keep-debug of the binaries that
# made the fixtures), so native call sites resolve to file:line on any machine.
export SYNCSIGHT_SYMBOL_PATH=${SYNCSIGHT_SYMBOL_PATH:-$DIR/bin}

if [ $# -gt 0 ]; then
    names=("$@")
else
    names=()
    for trace in "$DIR"/*.sstrace; do
        [ -e "$trace" ] && names+=("$(basename "$trace" .sstrace)")
    done
fi
if [ ${#names[@]} -eq 0 ]; then
    echo "no fixtures in $DIR (record them on a GPU machine with: make fixtures)"
    exit 77
fi
if [ ! -x "$SYNCSIGHT" ]; then
    echo "$SYNCSIGHT is not built"
    exit 77
fi
# An analyzer that can symbolize nothing (built without libdw, and neither
# llvm-symbolizer nor addr2line found: `syncsight --version` says
# "symbolizer: none") shows native frames as module+offset: the fixtures'
# native site lines cannot match, so they are skipped, saying why; counts,
# severities, messages and Python sites are still checked.
site_opt=()
if "$SYNCSIGHT" --version 2>/dev/null | grep -q "^symbolizer: none"; then
    site_opt=(--no-native-sites)
    echo "SKIP native call-site checks: $("$SYNCSIGHT" --version | sed -n 's/^symbolizer: //p')"
fi
OUT=${FIXTURE_OUT:-$(mktemp -d)}
[ -n "${FIXTURE_OUT:-}" ] || trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT"

failed=0
for name in "${names[@]}"; do
    trace=$DIR/$name.sstrace expect=$DIR/$name.expect
    if [ ! -f "$trace" ] || [ ! -f "$expect" ]; then
        echo "FAIL $name: needs both $trace and $expect"
        failed=$((failed + 1)); continue
    fi
    if ! "$SYNCSIGHT" report --format json "$trace" > "$OUT/$name.json" 2> "$OUT/$name.err"; then
        # A report may exit non-zero because it has findings (CI exit codes);
        # it failed only if it wrote no JSON.
        if [ ! -s "$OUT/$name.json" ]; then
            echo "FAIL $name: syncsight report failed:"; sed 's/^/    /' "$OUT/$name.err"
            failed=$((failed + 1)); continue
        fi
    fi
    if "$PYTHON" tests/check_findings.py "${site_opt[@]}" --name "$name" "$OUT/$name.json" "$expect"; then
        echo "PASS $name"
    else
        failed=$((failed + 1))
    fi
done
[ "$failed" -eq 0 ]
