#!/bin/bash
# tools/steps_by_span.py (docs/performance.md, 2026-11-23): step times put
# beside a sampled trace's recording spans.  On the real sampled fixture
# (tests/fixtures/sampled_pipeline.sstrace: its head and window 1 read from
# the trace itself, so a re-recorded fixture keeps the test meaningful; the
# recording of 2026-11-23 ends inside window 3, a span without an end), 1 ms
# steps that take 3 ms inside window 1: each stretch gets the steps whose end
# falls in it, with their median; bad input gets one line and exit code 1.
set -u
cd "$(dirname "$0")/.."
SYNCSIGHT=${SYNCSIGHT:-build/syncsight}
PYTHON=${PYTHON:-python3}
TRACE=tests/fixtures/sampled_pipeline.sstrace
[ -x "$SYNCSIGHT" ] || { echo "SKIP: $SYNCSIGHT not built"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The trace's start and its capture switches (ms since the start): the head's
# end, window 1's start and end.
read -r start head w1 w1_end < <("$SYNCSIGHT" dump --json "$TRACE" | $PYTHON -c '
import json, sys
start, offs, ons = None, [], []
for line in sys.stdin:
    r = json.loads(line)
    if r["type"] == "header": start = r["start_ns"]
    elif r["type"] == "capture": (offs if r["state"] == "off" else ons).append(r["t_ms"])
print(start, offs[0], ons[0], offs[1])')
[ -n "${w1_end:-}" ] || { echo "FAIL: $TRACE has no head and window 1"; exit 1; }
# Step ends every 1 ms from 0.5 ms to 300 ms, every 3 ms inside window 1 (from
# its start + 0.5 ms to 1 ms before its end); the expected rows counted here
# the way the tool is documented to: a step belongs to the stretch its end
# falls in, its duration is the time since the previous end (the first step
# has none).
$PYTHON - "$start" "$head" "$w1" "$w1_end" "$T/steps.txt" > "$T/want.tsv" <<'PY'
import statistics, sys
s, head, w1, w1_end = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
t, ends = 0.5, []
while t < 300:
    ends.append(t)
    t += 3 if w1 + 0.5 <= t < w1_end - 1 else 1
open(sys.argv[5], "w").write("\n".join(str(s + round(x * 1e6)) for x in ends) + "\n")
bounds = [("head", 0, head), ("not recorded", head, w1), ("window 1", w1, w1_end), ("not recorded", w1_end, 300)]
for name, lo, hi in bounds:
    d = [(ends[i] - ends[i - 1]) * 1000 for i in range(1, len(ends)) if lo < ends[i] <= hi]
    print("%s\t%d\t%.1f" % (name, len(d), statistics.median(d)))
PY
"$PYTHON" tools/steps_by_span.py --syncsight "$SYNCSIGHT" "$T/steps.txt" "$TRACE" > "$T/out.tsv" || {
    echo "FAIL: steps_by_span exited $?"; exit 1; }
fail=0
for row in 1 2 3 4; do
    got=$(sed -n "$(( row + 1 ))p" "$T/out.tsv" | cut -f1,3,4)
    want=$(sed -n "${row}p" "$T/want.tsv")
    [ "$got" = "$want" ] || { echo "FAIL: row $row: '$got', expected '$want'"; fail=1; }
done
# window 1's steps are the 3 ms ones: the stretches really were told apart
[ "$(sed -n 3p "$T/want.tsv" | cut -f1,3)" = "$(printf 'window 1\t3000.0')" ] ||
    { echo "FAIL: the synthetic steps do not fill window 1: $(sed -n 3p "$T/want.tsv")"; fail=1; }
[ "$(wc -l < "$T/out.tsv")" -eq 5 ] || { echo "FAIL: $(wc -l < "$T/out.tsv") lines"; cat "$T/out.tsv"; fail=1; }
# bad input: one line naming the file, exit 1
echo "not a time" > "$T/bad.txt"
"$PYTHON" tools/steps_by_span.py --syncsight "$SYNCSIGHT" "$T/bad.txt" "$TRACE" > /dev/null 2> "$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "bad.txt" "$T/err" && [ "$(wc -l < "$T/err")" -eq 1 ] ||
    { echo "FAIL: bad step file: exit $rc, stderr: $(cat "$T/err")"; fail=1; }
[ $fail = 0 ] && echo "PASS: steps_by_span"
exit $fail
