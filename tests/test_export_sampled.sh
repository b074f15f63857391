#!/bin/bash
# The Perfetto and HTML exports of sampled traces (docs/sampling.md, "In the
# exports"), on the real fixtures:
#   - tests/fixtures/sampled_pipeline.sstrace (a sampled H100 run: a head,
#     three windows, the trace ends OFF): the track "syncsight recording"
#     holds exactly the slices below (names, begin/end in µs; for the
#     recording committed with them, by its sha256), each boundary
#     one of the trace's own CAPTURE switches (`syncsight dump --json`) or the
#     run's end; every sampled fixture: its HTML page's gaps are the Perfetto
#     export's "not recorded" slices, and the recorded slices' hot calls are
#     those of `report --format json`'s capture spans;
#   - every fixture recorded in full (and the torchrun_2ranks job): the Perfetto
#     and HTML exports are byte for byte what they were before sampled traces
#     were drawn, compared with the digests in tests/fixtures/export.sha256.
#     A digest is keyed by the trace's own sha256: a fixture recorded again
#     (make fixtures) or added has none and is named as not compared.  When an
#     export changes on purpose (a finding's text, the page), write them again:
#         bash tests/test_export_sampled.sh --update
set -u
cd "$(dirname "$0")/.."
SYNCSIGHT=${SYNCSIGHT:-${BUILD:-build}/syncsight}
PYTHON=${PYTHON:-python3}
DIGESTS=tests/fixtures/export.sha256
[ -x "$SYNCSIGHT" ] || { echo "$SYNCSIGHT not built"; exit 77; }
[ -f tests/fixtures/sampled_pipeline.sstrace ] || { echo "no sampled fixture"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# what the exports read from the environment, fixed
unset SYNCSIGHT_SYMBOLS SYNCSIGHT_SYMBOLIZER SYNCSIGHT_SYMBOLIZER_TIMEOUT SYNCSIGHT_SASS SYNCSIGHT_SASS_CACHE SYNCSIGHT_REPLAY_FULL
export SYNCSIGHT_SYMBOL_PATH=tests/fixtures/bin
fails=0

is_sampled() { "$SYNCSIGHT" dump --json "$1" 2>/dev/null | grep -q '"type":"capture"'; }
trace_sum() { if [ -d "$1" ]; then cat "$1"/*.sstrace | sha256sum | cut -c1-64; else sha256sum < "$1" | cut -c1-64; fi; }

# ---- traces recorded in full: unchanged exports
inputs=()
for f in tests/fixtures/*.sstrace tests/fixtures/torchrun_2ranks; do [ -e "$f" ] && inputs+=("$f"); done
if [ "${1:-}" = "--update" ]; then
    : > "$tmp/new"
    for f in "${inputs[@]}"; do
        [ -f "$f" ] && is_sampled "$f" && continue
        sum=$(trace_sum "$f")
        for fmt in perfetto html; do
            d=$("$SYNCSIGHT" export --format $fmt "$f" 2>/dev/null | sha256sum | cut -c1-64)
            echo "$sum $fmt $d $(basename "$f")" >> "$tmp/new"
        done
    done
    cp "$tmp/new" "$DIGESTS"
    echo "wrote $(wc -l < "$DIGESTS") digests to $DIGESTS"
    exit 0
fi
compared=0 missing=()
for f in "${inputs[@]}"; do
    name=$(basename "$f" .sstrace)
    [ -f "$f" ] && is_sampled "$f" && continue
    sum=$(trace_sum "$f")
    for fmt in perfetto html; do
        want=$(awk -v s="$sum" -v f=$fmt '$1 == s && $2 == f { print $3 }' "$DIGESTS" 2>/dev/null | head -1)
        if [ -z "$want" ]; then missing+=("$name.$fmt"); continue; fi
        got=$("$SYNCSIGHT" export --format $fmt "$f" 2>/dev/null | sha256sum | cut -c1-64)
        compared=$((compared + 1))
        [ "$got" = "$want" ] || { echo "FAIL $name: the $fmt export changed (traces recorded in full must export as before; on purpose: bash $0 --update)"; fails=$((fails + 1)); }
    done
done
echo "ok: $compared exports of traces recorded in full compared with their digests"
[ ${#missing[@]} -eq 0 ] || echo "not compared (no digest for this recording): ${missing[*]}"

# ---- sampled traces: the recording track and the HTML gaps
for f in tests/fixtures/*.sstrace; do
    is_sampled "$f" || continue
    name=$(basename "$f" .sstrace)
    "$SYNCSIGHT" export --format perfetto -o "$tmp/$name.json" "$f" 2>/dev/null &&
    "$SYNCSIGHT" export --format html -o "$tmp/$name.html" "$f" 2>/dev/null &&
    "$SYNCSIGHT" report --format json -o "$tmp/$name.report.json" "$f" 2>/dev/null
    [ $? -le 1 ] || { echo "FAIL $name: export or report failed"; fails=$((fails + 1)); continue; }
    "$SYNCSIGHT" dump --json "$f" | grep -E '"type":"(header|capture)"' > "$tmp/$name.capture"
    "$PYTHON" - "$name" "$tmp/$name.json" "$tmp/$name.html" "$tmp/$name.report.json" "$tmp/$name.capture" "$(trace_sum "$f")" <<'PY' || fails=$((fails + 1))
import json, re, sys
name, pf, page, rep, cap, tsum = sys.argv[1:7]
errors = []
trace = json.load(open(pf))
ev = trace["traceEvents"]
track = [e for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"]["name"] == "syncsight recording"]
if len(track) != 1: errors.append("%d tracks named syncsight recording" % len(track))
tid = track[0]["tid"] if track else None
sl = [e for e in ev if e.get("cat") == "syncsight.capture"]
if any(e["ph"] != "X" or e["tid"] != tid for e in sl): errors.append("a recording slice off its track")
# consecutive, covering the run
for a, b in zip(sl, sl[1:]):
    if abs(a["ts"] + a["dur"] - b["ts"]) > 0.0015: errors.append("slices %r and %r do not meet" % (a["name"], b["name"]))
# each boundary inside the run is one of the trace's switches (dump: ms since the header's start)
zero = trace["otherData"]["ts_zero_trace_clock_ns"]
recs = [json.loads(l) for l in open(cap)]
start = [r["start_ns"] for r in recs if r["type"] == "header"][0]
switches = [(start - zero) / 1e3 + r["t_ms"] * 1e3 for r in recs if r["type"] == "capture"]
for e in sl[1:]:
    if not any(abs(e["ts"] - t) < 0.0015 for t in switches):
        errors.append("slice %r starts at %.3f us, at no CAPTURE switch" % (e["name"], e["ts"]))
# the recorded slices: the report's capture spans (window numbers and hot calls)
spans = json.load(open(rep))["traces"][0]["capture"]["spans"]
rec = [e for e in sl if e["name"] != "not recorded (sampled)"]
got = [(e["name"], e["args"]["hot_calls"]) for e in rec]
want = [("head" if s["window"] == 0 else "window %d" % s["window"], s["hot_calls"]) for s in spans]
if got != want: errors.append("recorded slices %r, report spans %r" % (got, want))
# the HTML page: its gaps are the Perfetto export's unrecorded slices (ms / us)
data = json.loads(re.search(r'<script type="application/json" id="syncsight-data">(.*?)</script>', open(page).read(), re.S).group(1))
gaps = data["procs"][0].get("gaps")
off = [(e["ts"] / 1e3, e["dur"] / 1e3) for e in sl if e["name"] == "not recorded (sampled)"]
if gaps is None or len(gaps) != len(off) or any(abs(a - c) > 2e-6 or abs(b - d) > 2e-6 for (a, b), (c, d) in zip(gaps, off)):
    errors.append("HTML gaps %r, Perfetto %r" % (gaps, off))
if tsum == "c1a54e6be5e771b6ba20a92c24cccacae031927813d3cc85cb3823cbdca1e2bc":   # this recording of sampled_pipeline
    # the H100 run: head to 95.576162 ms after the header's start, windows at
    # 216.002306-246.079944, 336.010165-366.128833, 455.857684-485.953961 ms,
    # the run from -137.039681 to 548.131649 ms (ts 0 is the first record)
    expect = [("head", 0, 232615.843), ("not recorded (sampled)", 232615.843, 353041.987),
              ("window 1", 353041.987, 383119.625), ("not recorded (sampled)", 383119.625, 473049.846),
              ("window 2", 473049.846, 503168.514), ("not recorded (sampled)", 503168.514, 592897.365),
              ("window 3", 592897.365, 622993.642), ("not recorded (sampled)", 622993.642, 685171.33)]
    gotx = [(e["name"], e["ts"], e["ts"] + e["dur"]) for e in sl]
    if len(gotx) != len(expect) or any(a[0] != b[0] or abs(a[1] - b[1]) > 0.0015 or abs(a[2] - b[2]) > 0.0015 for a, b in zip(gotx, expect)):
        errors.append("slices %r, expected %r" % (gotx, expect))
for e in errors: print("ERROR %s: %s" % (name, e))
print("%s %s: %d recording slices, %d of them not recorded" % ("FAIL" if errors else "ok", name, len(sl), len(off)))
sys.exit(1 if errors else 0)
PY
done
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
