#!/bin/bash
# The CPU test suite behind `make test` (tests/tests.mk runs it after `all`).
#
#   1. every tests/test_*.c: built by make as $BUILD/tests/<name> (ASan+UBSan)
#      and run;
#   2. every tests/test_*.sh (but test_fixtures.sh), run with bash and
#      BUILD, SYNCSIGHT, SHIM in the environment;
#   3. every fixture tests/fixtures/<name>.sstrace, through tests/test_fixtures.sh.
#
# One line per test: PASS/FAIL/SKIP <name>, the output of a failed test
# indented below it (full logs in $BUILD/tests/logs/), then the closing line
# "N passed, N failed[, N skipped]".  A test exits 77 to say it was skipped;
# its last output line is the reason.  Exit status 1 when anything failed.
#
# Environment (set by tests.mk): MAKE, BUILD, PYTHON, ANALYZER_LIB_SRCS (empty
# when analyzer/analyzer.mk does not define it yet), TEST_TIMEOUT (seconds per
# test, default 600).  Arguments: name filters (substring match) to run fewer.
set -u
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
LOGS=$BUILD/tests/logs
mkdir -p "$LOGS"
export BUILD PYTHON SYNCSIGHT=$BUILD/syncsight SHIM=$BUILD/libsyncsight.so

passed=0 failed=0 skipped=0

selected() {
    [ ${#FILTERS[@]} -eq 0 ] && return 0
    local f
    for f in "${FILTERS[@]}"; do
        case "$1" in *"$f"*) return 0 ;; esac
    done
    return 1
}
FILTERS=("$@")

# report NAME RC LOG: print the verdict line for one finished test.
report() {
    local name=$1 rc=$2 log=$3
    if [ "$rc" -eq 0 ]; then
        echo "PASS $name"; passed=$((passed + 1))
    elif [ "$rc" -eq 77 ]; then
        local reason
        reason=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
        echo "SKIP $name (${reason:-no reason given})"; skipped=$((skipped + 1))
    else
        local why="exit $rc"
        [ "$rc" -eq 124 ] && why="timed out after ${TEST_TIMEOUT}s"
        echo "FAIL $name ($why; log: $log)"
        tail -n 40 "$log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

skip() {
    echo "SKIP $1 ($2)"; skipped=$((skipped + 1))
}

# ---- 1. C unit tests
for src in tests/test_*.c; do
    [ -e "$src" ] || continue
    name=$(basename "$src" .c)
    selected "$name" || continue
    case "$name" in
    test_analyzer_* | test_symbolize*)
        if [ -z "${ANALYZER_LIB_SRCS:-}" ]; then
            skip "$name" "ANALYZER_LIB_SRCS is not defined by analyzer/analyzer.mk yet"
            continue
        fi ;;
    esac
    log=$LOGS/$name.log
    if ! "$MAKE" --no-print-directory "$BUILD/tests/$name" > "$log" 2>&1; then
        echo "FAIL $name (does not build; log: $log)"
        tail -n 40 "$log" | sed 's/^/    /'
        failed=$((failed + 1))
        continue
    fi
    timeout "$TEST_TIMEOUT" "$BUILD/tests/$name" >> "$log" 2>&1
    report "$name" $? "$log"
done

# ---- 2. shell tests
for script in tests/test_*.sh; do
    [ -e "$script" ] || continue
    name=$(basename "$script" .sh)
    [ "$name" = test_fixtures ] && continue # run per fixture below
    selected "$name" || continue
    log=$LOGS/$name.log
    timeout "$TEST_TIMEOUT" bash "$script" > "$log" 2>&1
    report "$name" $? "$log"
done

# ---- 3. fixtures recorded on a GPU
if selected fixture; then
    found=0
    # an analyzer that can symbolize nothing (no libdw, and neither
    # llvm-symbolizer nor addr2line found) skips the native call-site lines of
    # the fixtures (tests/test_fixtures.sh); say so once, as a skipped check
    sym=$("${BUILD:-build}/syncsight" --version 2>/dev/null | sed -n 's/^symbolizer: none/none/p')
    [ -z "$sym" ] || skip fixture-native-sites \
        "the analyzer has no symbolizer (built without libdw, and no addr2line or llvm-symbolizer found): native call sites of the fixtures not checked"

    for trace in tests/fixtures/*.sstrace; do
        [ -e "$trace" ] || continue
        found=1
        name=$(basename "$trace" .sstrace)
        log=$LOGS/fixture-$name.log
        timeout "$TEST_TIMEOUT" bash tests/test_fixtures.sh "$name" > "$log" 2>&1
        report "fixture:$name" $? "$log"
    done
    [ "$found" -eq 1 ] || skip fixtures "no tests/fixtures/*.sstrace yet: record them on a GPU machine with make fixtures"
fi

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
