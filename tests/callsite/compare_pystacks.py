"""Compare the Python stacks recorded in a trace with what the interpreter
said they were (tests/callsite/pyprog.py's EXPECTED_JSON).

usage: compare_pystacks.py CHECK_OUTPUT EXPECTED_JSON MODE

CHECK_OUTPUT is tests/callsite/check.c's output for the trace.  MODE:
  direct  every call must have exactly the expected stack
  api     the C-API reader: calls made with the GIL held must have exactly
          the expected stack, calls made without it none
Exit 0 when everything matches; otherwise print each mismatch and exit 1."""
import json
import re
import sys

check_path, expected_path, mode = sys.argv[1], sys.argv[2], sys.argv[3]

# check.c writes strings as the raw bytes of the trace; the shim writes a
# surrogate-escaped path byte as that byte, so decoding with surrogateescape
# gives back the interpreter's own str.
text = open(check_path, "rb").read().decode("utf-8", "surrogateescape")
PY_LINE = re.compile(r"^py (.*):(\d+) (.*)$")

calls = {}          # cbid -> [stack, ...] in trace order; a stack is a list of frames
current = None
for line in text.splitlines():
    if line.startswith("api "):
        current = []
        calls.setdefault(int(line.split()[1]), []).append(current)
    elif current is not None and line.startswith("py "):
        m = PY_LINE.match(line)
        if not m:
            sys.exit("unparsable line: %r" % line)
        current.append([m.group(1), int(m.group(2)), m.group(3)])

expected = json.load(open(expected_path))
seen = {}
errors = []
for exp in expected:
    cbid = exp["cbid"]
    k = seen.get(cbid, 0)
    seen[cbid] = k + 1
    got_all = calls.get(cbid, [])
    if k >= len(got_all):
        errors.append("call %d #%d: not in the trace" % (cbid, k + 1))
        continue
    got = got_all[k]
    want = [list(f) for f in exp["frames"]] if mode == "direct" or exp["gil"] else []
    if got != want:
        errors.append("call %d #%d (GIL %s):\n  got:\n%s\n  expected:\n%s" % (
            cbid, k + 1, "held" if exp["gil"] else "released",
            "\n".join("    %s:%d %s" % tuple(f) for f in got) or "    (none)",
            "\n".join("    %s:%d %s" % tuple(f) for f in want) or "    (none)"))

if errors:
    print("\n".join(errors))
    sys.exit(1)
print("%d calls match" % len(expected))
