# Sourced by the export tests: writes the synthetic traces of the analyzer's
# tests (every rule's positive and negative case, and the trace of hostile
# strings) into DIR/t and sets `traces` to them plus every committed GPU
# fixture.  Needs BUILD and SYNCSIGHT set; exits 77 when the analyzer is not built.
#   export_test_traces DIR
export_test_traces() {
    local dir=$1
    [ -x "$SYNCSIGHT" ] || { echo "$SYNCSIGHT not built"; exit 77; }
    for g in test_analyzer_rules test_analyzer_export; do
        [ -x "$BUILD/tests/$g" ] || ${MAKE:-make} --no-print-directory "$BUILD/tests/$g" >/dev/null ||
            { echo "cannot build $g"; exit 1; }
    done
    "$BUILD/tests/test_analyzer_rules" --write-traces "$dir/t" >/dev/null || { echo "cannot write traces"; exit 1; }
    "$BUILD/tests/test_analyzer_export" --write-traces "$dir/t" >/dev/null ||
        { echo "cannot write the injection trace"; exit 1; }
    traces=("$dir"/t/*.sstrace)
    local f
    for f in tests/fixtures/*.sstrace; do [ -e "$f" ] && traces+=("$f"); done
}
