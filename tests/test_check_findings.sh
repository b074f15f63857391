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

# New rule ids are known to the checker.
expect_rc 0 "new rule ids" '{"findings":[{"rule":"incomplete-sync"},{"rule":"event-timing-gap"},{"rule":"relies-on-legacy-sync"}]}' \
    "incomplete-sync 1
event-timing-gap 1
relies-on-legacy-sync 1"

# phase / steady-only: the setup / steady-state split.
STEADY='{"rule":"implicit-sync","severity":"warning","phase":"steady","site":"train.py:40 <module>"}'
SETUP_INFO='{"rule":"implicit-sync","severity":"info","phase":"setup","folded":true,"site":"train.py:40 <module>"}'
SETUP_WARN='{"rule":"pageable-async-copy","severity":"warning","phase":"setup","site":"train.py:12 <module>"}'
expect_rc 0 "steady-only: folded setup findings are not counted" "{\"findings\":[$STEADY,$SETUP_INFO]}" "steady-only
implicit-sync 1
phase implicit-sync steady
severity implicit-sync warning"
expect_rc 1 "steady-only: a setup finding at warning" "{\"findings\":[$STEADY,$SETUP_WARN]}" "steady-only
implicit-sync 1
pageable-async-copy any"
expect_rc 1 "without steady-only every finding counts" "{\"findings\":[$STEADY,$SETUP_INFO]}" "implicit-sync 1"
expect_rc 1 "phase differs" "{\"findings\":[$STEADY,$SETUP_INFO]}" "implicit-sync 2
phase implicit-sync steady"
expect_rc 2 "phase: bad value" '{"findings":[]}' "implicit-sync any
phase implicit-sync warmup"
# A process without a repeated iteration has no setup / steady split: its
# findings are all "steady" by definition, and a phase line does not judge
# them; a process with one is judged as before.
NOSPLIT='{"rule":"first-launch-stall","severity":"info","phase":"steady","process":7,"site":"train.py:44 forward"}'
SPLIT='{"rule":"first-launch-stall","severity":"info","phase":"steady","process":8,"site":"train.py:44 forward"}'
expect_rc 0 "phase: a process without iterations is not judged" \
    "{\"traces\":[{\"pid\":7,\"iterations\":null}],\"findings\":[$NOSPLIT]}" "first-launch-stall any
phase first-launch-stall setup"
expect_rc 1 "phase: a process with iterations is judged" \
    "{\"traces\":[{\"pid\":7,\"iterations\":null},{\"pid\":8,\"iterations\":{\"count\":5}}],\"findings\":[$NOSPLIT,$SPLIT]}" \
    "first-launch-stall any
phase first-launch-stall setup"

# severity / message / nomessage / nosite.
RACE='{"rule":"missing-fence","severity":"error","message":"data race: k on stream 0x0 (per-thread default) reads what k2 on stream 0x5 (non-blocking) wrote","site":"prog.cu:2 main"}'
INFO='{"rule":"relies-on-legacy-sync","severity":"info","message":"correct only because of the legacy stream","site":"prog.cu:3 main"}'
expect_rc 0 "severity matches" "{\"findings\":[$RACE,$INFO]}" "missing-fence 1
relies-on-legacy-sync >=1
severity missing-fence error
severity relies-on-legacy-sync info"
expect_rc 1 "severity differs" "{\"findings\":[$INFO]}" "relies-on-legacy-sync >=1
severity relies-on-legacy-sync warning"
expect_rc 1 "severity: every finding, not some" \
    "{\"findings\":[$INFO,{\"rule\":\"relies-on-legacy-sync\",\"severity\":\"warning\",\"message\":\"x\"}]}" \
    "relies-on-legacy-sync >=1
severity relies-on-legacy-sync info"
expect_rc 0 "severity of the findings a message names" \
    "{\"findings\":[$INFO,{\"rule\":\"relies-on-legacy-sync\",\"severity\":\"warning\",\"message\":\"x\"}]}" \
    "relies-on-legacy-sync >=1
severity relies-on-legacy-sync info legacy stream"
expect_rc 1 "severity of the findings a message names: differs" \
    "{\"findings\":[$INFO,{\"rule\":\"relies-on-legacy-sync\",\"severity\":\"warning\",\"message\":\"x\"}]}" \
    "relies-on-legacy-sync >=1
severity relies-on-legacy-sync warning legacy stream"
expect_rc 1 "severity of the findings a message names: none" "{\"findings\":[$INFO]}" "relies-on-legacy-sync >=1
severity relies-on-legacy-sync info no such text"
expect_rc 2 "severity: bad level" '{"findings":[]}' "missing-fence any
severity missing-fence fatal"
expect_rc 2 "severity without a count line" '{"findings":[]}' "severity missing-fence error"
expect_rc 0 "message with spaces found" "{\"findings\":[$RACE]}" "missing-fence 1
message missing-fence per-thread default"
expect_rc 1 "message not found" "{\"findings\":[$RACE]}" "missing-fence 1
message missing-fence legacy default"
expect_rc 1 "message of another rule does not count" "{\"findings\":[$RACE,$INFO]}" "missing-fence 1
relies-on-legacy-sync 1
message missing-fence legacy stream"
expect_rc 2 "message without text" '{"findings":[]}' "missing-fence any
message missing-fence"
expect_rc 0 "nomessage absent" "{\"findings\":[$RACE]}" "missing-fence 1
nomessage (blocking)"
expect_rc 1 "nomessage present" "{\"findings\":[$RACE]}" "missing-fence 1
nomessage (non-blocking)"
expect_rc 1 "nomessage looks at every rule" "{\"findings\":[$RACE,$INFO]}" "missing-fence 1
relies-on-legacy-sync 1
nomessage legacy stream"
expect_rc 0 "nosite elsewhere" "{\"findings\":[$RACE]}" "missing-fence 1
nosite missing-fence prog.cu:3"
expect_rc 1 "nosite hit" "{\"findings\":[$RACE]}" "missing-fence 1
nosite missing-fence prog.cu:2,3"
cat > "$T/nosite.cu" <<'SRC'
int main() {
    cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s); // EXPECT-NOSITE pageable-async-copy
    cudaGraphLaunch(g, s); // EXPECT-SITE pageable-async-copy
}
SRC
PAC2='{"rule":"pageable-async-copy","severity":"warning","site":"nosite.cu:2 main"}'
PAC3='{"rule":"pageable-async-copy","severity":"warning","message":"cudaGraphLaunch copies into pageable host memory","site":"nosite.cu:3 main"}'
expect_rc 0 "nosite marker, finding elsewhere" "{\"findings\":[$PAC3]}" "pageable-async-copy >=1
site pageable-async-copy nosite.cu
nosite pageable-async-copy nosite.cu"
expect_rc 1 "nosite marker hit" "{\"findings\":[$PAC3,$PAC2]}" "pageable-async-copy >=1
nosite pageable-async-copy nosite.cu"
expect_rc 2 "nosite marker missing" '{"findings":[]}' "missing-fence any
nosite missing-fence nosite.cu"

# --for-fixture: marker-based sites (Python and native) become explicit lines.
printf 'x = 1\ny = x.item()  # EXPECT-SITE implicit-sync\n' > "$T/script.py"
printf 'int a;\n\ncudaFree(p); // EXPECT-SITE implicit-sync\n' > "$T/prog.cu"
printf 'implicit-sync >=1\nsite implicit-sync script.py\nsite implicit-sync prog.cu\n' > "$T/f.expect"
"$PYTHON" tests/check_findings.py --for-fixture "$T/f.expect" > "$T/fixture.expect"
if ! grep -qx 'site implicit-sync script.py:2' "$T/fixture.expect" || ! grep -qx 'site implicit-sync prog.cu:3' "$T/fixture.expect"; then
    echo "FAIL: --for-fixture output:"; sed 's/^/    /' "$T/fixture.expect"; failures=$((failures + 1))
fi
# ... and carries severity/message/nomessage unchanged, nosite markers as lines.
printf 'pageable-async-copy >=1\nsite pageable-async-copy nosite.cu\nnosite pageable-async-copy nosite.cu\nseverity pageable-async-copy warning\nmessage pageable-async-copy pageable host memory\nnomessage (blocking)\n' > "$T/g.expect"
"$PYTHON" tests/check_findings.py --for-fixture "$T/g.expect" > "$T/fixture2.expect"
for want in 'site pageable-async-copy nosite.cu:3' 'nosite pageable-async-copy nosite.cu:2' \
    'severity pageable-async-copy warning' 'message pageable-async-copy pageable host memory' 'nomessage (blocking)'; do
    if ! grep -qxF "$want" "$T/fixture2.expect"; then
        echo "FAIL: --for-fixture lost '$want':"; sed 's/^/    /' "$T/fixture2.expect"; failures=$((failures + 1))
    fi
done
# The fixture expect file works without the source: same verdicts.
rm "$T/nosite.cu"
printf '%s\n' "{\"findings\":[$PAC3]}" > "$T/r.json"
if ! "$PYTHON" tests/check_findings.py "$T/r.json" "$T/fixture2.expect" > "$T/out" 2>&1; then
    echo "FAIL: fixture expect rejects a matching report:"; sed 's/^/    /' "$T/out"; failures=$((failures + 1))
fi
printf '%s\n' "{\"findings\":[$PAC3,$PAC2]}" > "$T/r.json"
if "$PYTHON" tests/check_findings.py "$T/r.json" "$T/fixture2.expect" > "$T/out" 2>&1; then
    echo "FAIL: fixture expect accepts a finding at the nosite line"; failures=$((failures + 1))
fi

# occurrences: the findings at given lines fold exactly this many occurrences.
cat > "$T/two.cu" <<'SRC'
int main() {
    k<<<1, 1, 0, s>>>(p); // EXPECT-SITE missing-fence
    k<<<1, 1, 0, s>>>(q); // EXPECT-SITE missing-fence
}
SRC
MF2='{"rule":"missing-fence","count":200,"site":"two.cu:2 main"}'
MF3='{"rule":"missing-fence","count":200,"site":"two.cu:3 main"}'
MF3B='{"rule":"missing-fence","count":158,"site":"two.cu:3 main"}'
expect_rc 0 "occurrences per line" "{\"findings\":[$MF2,$MF3]}" "missing-fence 2
occurrences missing-fence two.cu:2 200
occurrences missing-fence two.cu:3 200"
expect_rc 1 "occurrences borrowed by another line" "{\"findings\":[$MF2,$MF3B]}" "missing-fence 2
occurrences missing-fence two.cu:2 200
occurrences missing-fence two.cu:3 200"
expect_rc 0 "occurrences over the marked lines" "{\"findings\":[$MF2,$MF3B]}" "missing-fence 2
occurrences missing-fence two.cu 358"
expect_rc 1 "occurrences with no finding at the line" "{\"findings\":[$MF2]}" "missing-fence 1
occurrences missing-fence two.cu:3 >=1"
expect_rc 2 "occurrences without a count line" "{\"findings\":[$MF2]}" "occurrences missing-fence two.cu:2 200"

# Every expect file of the GPU suite must be usable (known rules, a count line
# for each site/message, every marker-based site found in its source): an
# unusable one would only show on the GPU machine.  Against an empty report a
# usable file exits 0 (expects nothing) or 1 (expects a finding), never 2.
printf '%s\n' '{"findings":[]}' > "$T/empty.json"
for expect in test_programs/*.expect; do
    "$PYTHON" tests/check_findings.py "$T/empty.json" "$expect" > "$T/out" 2>&1
    if [ $? -eq 2 ]; then
        echo "FAIL: $expect is not usable:"; sed 's/^/    /' "$T/out"; failures=$((failures + 1))
    fi
done

[ "$failures" -eq 0 ] && echo "check_findings: all cases behave" || exit 1
