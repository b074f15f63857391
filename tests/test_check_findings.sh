#!/bin/bash
# The expect-file checker (tests/check_findings.py) on hand-written reports:
# it must accept matching reports and reject each kind of mismatch, because a
# checker that always says "match" would make the whole GPU suite meaningless.
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failures=0

# expect_rc WANT DESCRIPTION REPORT_JSON EXPECT_TEXT
expect_rc() {
    local want=$1 what=$2
    printf '%s\n' "$3" > "$T/report.json"
    printf '%s\n' "$4" > "$T/case.expect"
    "$PYTHON" tests/check_findings.py "$T/report.json" "$T/case.expect" > "$T/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $what: exit $rc, wanted $want"; sed 's/^/    /' "$T/out"; failures=$((failures + 1))
    fi
}

# A source file with markers, as the test programs have.
cat > "$T/prog.cu" <<'SRC'
int main() {
    cudaFree(p); // EXPECT-SITE implicit-sync
    cudaDeviceSynchronize();
}
SRC
IS='{"rule":"implicit-sync","severity":"warning","cost_ms":48.2,"count":1,"site":"prog.cu:2 main"}'
DS='{"rule":"device-sync-overuse","cost_ms":3.0,"site":"/src/prog.cu:3 main"}'

expect_rc 0 "exact match with site and cost" "{\"findings\":[$IS]}" \
    "implicit-sync 1
site implicit-sync prog.cu
cost implicit-sync >=30"
expect_rc 1 "site on the wrong line" "{\"findings\":[{\"rule\":\"implicit-sync\",\"site\":\"prog.cu:3 main\"}]}" \
    "implicit-sync >=1
site implicit-sync prog.cu"
expect_rc 1 "cost too small" "{\"findings\":[$IS]}" "implicit-sync >=1
cost implicit-sync >=100"
expect_rc 1 "unlisted rule fires" "{\"findings\":[$IS,$DS]}" "implicit-sync >=1"
expect_rc 0 "'any' allows a rule" "{\"findings\":[$IS,$DS]}" "implicit-sync >=1
device-sync-overuse any"
expect_rc 1 "expected finding missing" '{"findings":[]}' "implicit-sync >=1"
expect_rc 0 "clean report, empty expect" '{"findings":[]}' "# nothing"
expect_rc 1 "count upper bound" "{\"findings\":[$IS,$IS]}" "implicit-sync <=1"
expect_rc 0 "findings nested per process" "{\"processes\":[{\"pid\":1,\"findings\":[$IS]},{\"pid\":2,\"findings\":[]}]}" \
    "implicit-sync 1"
expect_rc 0 "site as a file/line object" '{"findings":[{"rule":"implicit-sync","where":{"file":"/x/prog.cu","line":2}}]}' \
    "implicit-sync 1
site implicit-sync prog.cu:2"
expect_rc 1 "unknown rule id in report" '{"findings":[{"rule":"made-up-rule"}]}' "# nothing"
expect_rc 1 "report without findings" '{"summary":{}}' "# nothing"
expect_rc 2 "unknown rule id in expect" '{"findings":[]}' "made-up-rule 1"
expect_rc 2 "marker missing in source" '{"findings":[]}' "device-sync-overuse >=1
site device-sync-overuse prog.cu"
expect_rc 2 "report is not JSON" 'not json' "# nothing"

# --for-fixture: marker-based sites (Python and native) become explicit lines.
printf 'x = 1\ny = x.item()  # EXPECT-SITE implicit-sync\n' > "$T/script.py"
printf 'int a;\n\ncudaFree(p); // EXPECT-SITE implicit-sync\n' > "$T/prog.cu"
printf 'implicit-sync >=1\nsite implicit-sync script.py\nsite implicit-sync prog.cu\n' > "$T/f.expect"
"$PYTHON" tests/check_findings.py --for-fixture "$T/f.expect" > "$T/fixture.expect"
if ! grep -qx 'site implicit-sync script.py:2' "$T/fixture.expect" || ! grep -qx 'site implicit-sync prog.cu:3' "$T/fixture.expect"; then
    echo "FAIL: --for-fixture output:"; sed 's/^/    /' "$T/fixture.expect"; failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "check_findings: all cases behave" || exit 1
