#!/bin/bash
# tools/steps_by_span.py (docs/performance.md, 2026-11-23): step times put
# beside a sampled trace's recording spans.  On the real sampled fixture
# (tests/fixtures/sampled_pipeline.sstrace: the head ends at 95.58 ms, window
# 1 runs 216.00-246.08 ms), 1 ms steps that take 3 ms inside window 1: each
# stretch gets the steps whose end falls in it, with their median; bad input
# gets one line and exit code 1.
set -u
cd "$(dirname "$0")/.."
SYNCSIGHT=${SYNCSIGHT:-build/syncsight}
PYTHON=${PYTHON:-python3}
TRACE=tests/fixtures/sampled_pipeline.sstrace
[ -x "$SYNCSIGHT" ] || { echo "SKIP: $SYNCSIGHT not built"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
start=$("$SYNCSIGHT" dump --json "$TRACE" | $PYTHON -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["type"] == "header":
        print(r["start_ns"]); break')
# step ends: every 1 ms from 0.5 ms, every 3 ms between 216.5 and 245.5 ms
$PYTHON - "$start" > "$T/steps.txt" <<'PY'
import sys
s = int(sys.argv[1])
t, out = 500_000, []
while t < 300_000_000:
    out.append(s + t)
    t += 3_000_000 if 216_500_000 <= t < 245_000_000 else 1_000_000
print("\n".join(map(str, out)))
PY
"$PYTHON" tools/steps_by_span.py --syncsight "$SYNCSIGHT" "$T/steps.txt" "$TRACE" > "$T/out.tsv" || {
    echo "FAIL: steps_by_span exited $?"; exit 1; }
fail=0
expect() {   # LINE_NO STRETCH STEPS MEDIAN_US
    local got
    got=$(sed -n "$(( $1 + 1 ))p" "$T/out.tsv" | cut -f1,3,4)
    [ "$got" = "$(printf '%s\t%s\t%s' "$2" "$3" "$4")" ] || { echo "FAIL: row $1: '$got', expected '$2 $3 $4'"; fail=1; }
}
expect 1 "head" 95 1000.0
expect 2 "not recorded" 120 1000.0
expect 3 "window 1" 10 3000.0
expect 4 "not recorded" 54 1000.0
[ "$(wc -l < "$T/out.tsv")" -eq 5 ] || { echo "FAIL: $(wc -l < "$T/out.tsv") lines"; cat "$T/out.tsv"; fail=1; }
# bad input: one line naming the file, exit 1
echo "not a time" > "$T/bad.txt"
"$PYTHON" tools/steps_by_span.py --syncsight "$SYNCSIGHT" "$T/bad.txt" "$TRACE" > /dev/null 2> "$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "bad.txt" "$T/err" && [ "$(wc -l < "$T/err")" -eq 1 ] ||
    { echo "FAIL: bad step file: exit $rc, stderr: $(cat "$T/err")"; fail=1; }
[ $fail = 0 ] && echo "PASS: steps_by_span"
exit $fail
