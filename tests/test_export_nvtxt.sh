#!/bin/bash
# `syncsight export --format nvtxt` against the NVTXT grammar, as Nsight's
# documentation describes it (docs/viewing.md):
#
#   file        := line*
#   line        := blank | comment | assignment | declaration | call
#   comment     := ws* '#' any*
#   assignment  := IDENT ws* '=' ws* value                 (variables in force until reassigned)
#   declaration := '@' FUNC (ws* ',' ws* IDENT)+           (the positional parameters of FUNC)
#   call        := FUNC (ws* ',' ws* value)*               (one value per declared parameter)
#   value       := '"' [^"\n]* '"' | INT64 | 0x HEX+ | IDENT
#   FUNC        := RangePush | RangePop | RangeStart | RangeEnd | RangeStartEnd | Marker | SetFileDisplayName
#
# plus what ImportNvtxt needs to place an event: every parameter of the call is
# positional or a variable in force (RangeStartEnd: Start End ThreadId Message
# ProcessId TimeBase; Marker: Time ThreadId Message ProcessId TimeBase), times
# are non-negative integers, Start <= End, TimeBase is Manual, Relative,
# ClockMonotonicRaw or CNTVCT.  The checker is first shown to reject malformed
# files, then run on the export of every fixture and synthetic trace, with
# both time bases; the number of annotations must equal the findings that
# have a place on the timeline.
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
[ -x "$SYNCSIGHT" ] || { echo "$SYNCSIGHT not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/export_traces.sh
export_test_traces "$tmp"

cat >"$tmp/check.py" <<'PY'
import re, sys
FUNCS = {"RangePush", "RangePop", "RangeStart", "RangeEnd", "RangeStartEnd", "Marker", "SetFileDisplayName"}
NEEDS = {"RangeStartEnd": ["Start", "End", "ThreadId", "Message", "ProcessId", "TimeBase"],
         "Marker": ["Time", "ThreadId", "Message", "ProcessId", "TimeBase"],
         "RangePush": ["Time", "ThreadId", "Message", "ProcessId", "TimeBase"],
         "RangePop": ["Time", "ThreadId", "ProcessId", "TimeBase"]}
TIMEBASES = {"Manual", "Relative", "ClockMonotonicRaw", "CNTVCT"}
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
VALUE = r'(?:"[^"\n]*"|-?[0-9]+|0[xX][0-9A-Fa-f]+|%s)' % IDENT
SEP = r"[ \t]*,[ \t]*"
def parse_value(v):
    if v.startswith('"'): return v[1:-1]
    if re.fullmatch(r"0[xX][0-9A-Fa-f]+", v): return int(v, 16)
    if re.fullmatch(r"-?[0-9]+", v):
        n = int(v)
        if not -2**63 <= n < 2**63: raise ValueError("integer out of Int64 range: " + v)
        return n
    return ("ident", v)
def check(text):
    errs, variables, decls, events = [], {}, {}, 0
    for no, line in enumerate(text.split("\n"), 1):
        def err(msg): errs.append("line %d: %s: %r" % (no, msg, line[:120]))
        if line.strip() == "" or line.lstrip().startswith("#"): continue
        m = re.fullmatch(r"(%s)[ \t]*=[ \t]*(%s)[ \t]*" % (IDENT, VALUE), line)
        if m:
            variables[m.group(1)] = parse_value(m.group(2))
            if m.group(1) == "TimeBase" and variables["TimeBase"] not in [("ident", t) for t in TIMEBASES]:
                err("unknown TimeBase")
            continue
        m = re.fullmatch(r"@(%s)((?:%s%s)+)[ \t]*" % (IDENT, SEP, IDENT), line)
        if m:
            if m.group(1) not in FUNCS: err("declaration of an unknown function")
            decls[m.group(1)] = [p.strip() for p in m.group(2).split(",")[1:]]
            continue
        m = re.fullmatch(r"(%s)((?:%s%s)*)[ \t]*" % (IDENT, SEP, VALUE), line)
        if not m: err("not a comment, assignment, declaration or call"); continue
        f = m.group(1)
        if f not in FUNCS: err("unknown function " + f); continue
        args = re.findall(VALUE, m.group(2))
        if f == "SetFileDisplayName":
            if len(args) != 1: err("SetFileDisplayName takes one value")
            continue
        params = decls.get(f)
        if params is None: err("call of %s before its @ declaration" % f); continue
        if len(args) != len(params): err("%d values for %d declared parameters" % (len(args), len(params))); continue
        env = dict(variables); env.update(zip(params, (parse_value(a) for a in args)))
        missing = [p for p in NEEDS.get(f, []) if p not in env]
        if missing: err("no value for " + ", ".join(missing)); continue
        for p in ("Start", "End", "Time", "ThreadId", "ProcessId"):
            if p in env and (not isinstance(env[p], int) or env[p] < 0): err(p + " is not a non-negative integer")
        if f == "RangeStartEnd" and isinstance(env["Start"], int) and isinstance(env["End"], int) and env["Start"] > env["End"]:
            err("Start after End")
        if "Message" in env and not isinstance(env["Message"], str): err("Message is not a string")
        events += 1
    return errs, events
if __name__ == "__main__":
    errs, events = check(open(sys.argv[1], encoding="utf-8").read())
    for e in errs[:20]: print("ERROR", e)
    print("events=%d" % events)
    sys.exit(1 if errs else 0)
PY

fails=0
# the checker must reject malformed files (else it proves nothing)
good='ProcessId = 1
TimeBase = ClockMonotonicRaw
@Marker, Time, ThreadId, Message
Marker, 10, 2, "ok"'
printf '%s\n' "$good" >"$tmp/good.nvtxt"
"$PYTHON" "$tmp/check.py" "$tmp/good.nvtxt" >/dev/null || { echo "FAIL: checker rejects a valid file"; fails=$((fails + 1)); }
bad=(
  $'ProcessId = 1\nTimeBase = ClockMonotonicRaw\n@Marker, Time, ThreadId, Message\nMarker, 10, 2, "a "quoted" word"'
  $'ProcessId = 1\nTimeBase = ClockMonotonicRaw\nMarker, 10, 2, "no declaration"'
  $'ProcessId = 1\nTimeBase = ClockMonotonicRaw\n@Marker, Time, ThreadId, Message\nMarker, 10, "too few"'
  $'TimeBase = ClockMonotonicRaw\n@Marker, Time, ThreadId, Message\nMarker, 10, 2, "no ProcessId"'
  $'ProcessId = 1\nTimeBase = Monotonic\n@Marker, Time, ThreadId, Message\nMarker, 10, 2, "bad time base"'
  $'ProcessId = 1\nTimeBase = Manual\n@RangeStartEnd, Start, End, ThreadId, Message\nRangeStartEnd, 20, 10, 2, "reversed"'
  $'ProcessId = 1\nTimeBase = Manual\n@Marker, Time, ThreadId, Message\nMarker, -5, 2, "negative"'
  $'ProcessId = 1\nTimeBase = Manual\n@Marker, Time, ThreadId, Message\nMarker, 10, 2, "line\nbreak"'
  $'ProcessId = 1\nTimeBase = Manual\nRangeFoo, 1, 2'
)
for i in "${!bad[@]}"; do
    printf '%s\n' "${bad[$i]}" >"$tmp/bad$i.nvtxt"
    if "$PYTHON" "$tmp/check.py" "$tmp/bad$i.nvtxt" >/dev/null; then
        echo "FAIL: checker accepts malformed sample $i:"; sed 's/^/    /' "$tmp/bad$i.nvtxt"; fails=$((fails + 1))
    fi
done

for t in "${traces[@]}"; do
    name=$(basename "$t" .sstrace)
    want=$("$SYNCSIGHT" report --format json "$t" 2>/dev/null | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for f in d["findings"] if f["calls"]))')
    for tb in manual raw; do
        if ! "$SYNCSIGHT" export --format nvtxt --time-base $tb -o "$tmp/$name.$tb.nvtxt" "$t" 2>"$tmp/err"; then
            echo "FAIL $name ($tb): export failed: $(cat "$tmp/err")"; fails=$((fails + 1)); continue
        fi
        out=$("$PYTHON" "$tmp/check.py" "$tmp/$name.$tb.nvtxt") || { echo "FAIL $name ($tb):"; echo "$out" | sed 's/^/    /'; fails=$((fails + 1)); continue; }
        # one RangeStartEnd/Marker per placed finding, plus a Marker per other involved call
        ranges=$(grep -c '^\(RangeStartEnd\|Marker\), [0-9]*, [0-9, ]*"syncsight \[' "$tmp/$name.$tb.nvtxt")
        [ "$ranges" -eq "$want" ] || { echo "FAIL $name ($tb): $ranges annotations for $want findings"; fails=$((fails + 1)); }
    done
    echo "ok $name ($want findings)"
done
# an explicit offset shifts every time by exactly that much
t=$tmp/t/implicit_sync.sstrace
"$SYNCSIGHT" export --format nvtxt --time-base manual -o "$tmp/a.nvtxt" "$t" &&
"$SYNCSIGHT" export --format nvtxt --raw-offset-ns 1000 -o "$tmp/b.nvtxt" "$t" || { echo "FAIL: offset export"; fails=$((fails + 1)); }
a=$(grep -m1 '^RangeStartEnd' "$tmp/a.nvtxt" | cut -d, -f2); b=$(grep -m1 '^RangeStartEnd' "$tmp/b.nvtxt" | cut -d, -f2)
[ -n "$a" ] && [ $((b - a)) -eq 1000 ] || { echo "FAIL: --raw-offset-ns 1000 moved the range from $a to $b"; fails=$((fails + 1)); }
grep -q '^TimeBase = ClockMonotonicRaw$' "$tmp/b.nvtxt" || { echo "FAIL: raw export without TimeBase = ClockMonotonicRaw"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ${#traces[@]} traces ok"
