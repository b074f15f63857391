#!/bin/bash
# `syncsight export --format html`, loaded in headless Chromium, with
# assertions on what the page drew (it sets data attributes on <body> once it
# has drawn):
#   - every synthetic trace below, the injection trace (a kernel name and NVTX
#     text holding "</script>", "<!--", quotes, ESC) and every fixture: the
#     number of tracks drawn equals the threads with CUDA calls + threads with
#     NVTX ranges + streams with GPU work (from `report --format json` and the
#     Perfetto export); the findings listed equal the report's; the findings
#     drawn equal those whose span meets the view; no label is drawn wider than
#     its box (labels are shortened or ellipsized, never squeezed); the side
#     panel never runs sideways nor cuts a line without a tooltip; a legend;
#     the injected markup never becomes part of the DOM;
#   - a sampled trace's unrecorded stretches are shaded on every row where
#     they meet the view, with a legend line; a full trace shades nothing;
#   - the default view starts at the first GPU operation (not at the program's
#     start: item_in_loop spends 5.3 s importing torch before its loop);
#   - #finding=0 (what a click does) zooms in to that finding's time span;
#   - kernel names are drawn inside the kernels (legacy_stream);
#   - a multi-process job (tests/fixtures/torchrun_2ranks): one page, a row
#     group per process, a process selector; #pid=N shows that process only.
# One screenshot must not be blank (several colours).  Skips (77) when no
# browser is installed (CI installs chromium: .ci/run).
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
[ -x "$SYNCSIGHT" ] || { echo "$SYNCSIGHT not built"; exit 77; }
[ -n "$CHROMIUM" ] || { echo "chromium not installed: HTML rendering not tested (apt-get install chromium)"; exit 77; }
export SYNCSIGHT_SYMBOL_PATH=${SYNCSIGHT_SYMBOL_PATH:-tests/fixtures/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/export_traces.sh
export_test_traces "$tmp"
# Rendering is slow: of the synthetic traces, only these five, plus the fixtures.
traces=("$tmp/t/injection.sstrace" "$tmp/t/legacy.sstrace" "$tmp/t/missing_fence.sstrace" "$tmp/t/implicit_sync.sstrace" "$tmp/t/unrecorded_event.sstrace")
for f in tests/fixtures/*.sstrace; do [ -e "$f" ] && traces+=("$f"); done
chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" "$@" 2>/dev/null; }

# check.py PAGE.html DOM [--url-hash H] [REPORT.json PERFETTO.json]: the assertions
cat > "$tmp/check.py" <<'PY'
import json, re, sys
page, dom_path, what = sys.argv[1], sys.argv[2], sys.argv[3]
dom = open(dom_path, encoding="utf-8", errors="replace").read()
html = open(page, encoding="utf-8").read()
data = json.loads(re.search(r'<script type="application/json" id="syncsight-data">(.*?)</script>', html, re.S).group(1))
m = re.search(r"<body([^>]*)>", dom)
attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1) if m else ""))
errors = []
def num(k):
    try: return float(attrs[k])
    except (KeyError, ValueError): errors.append("no data-%s: the page did not finish drawing" % k); return float("nan")
procs = data["procs"]
v0, v1 = num("view-start"), num("view-end")
if num("labels-too-wide") != 0: errors.append("%s labels drawn wider than their box" % attrs.get("labels-too-wide"))
if num("side-overflow") != 0: errors.append("%s side panel items run past its width without a tooltip" % attrs.get("side-overflow"))
if num("legend-items") < 9 or not all(w in dom for w in ("kernel", "copy", "memset", "NVTX range", "warning finding")):
    errors.append("no legend (%s items)" % attrs.get("legend-items"))
if "data-pwned" in dom or re.search(r"<img[^>]*pwned", dom): errors.append("injected markup became part of the page")
if len(re.findall(r"<script", dom)) != 2: errors.append("%d script elements in the DOM" % len(re.findall(r"<script", dom)))
if what == "single":
    report, trace = json.load(open(sys.argv[4])), json.load(open(sys.argv[5]))
    summary = report["traces"][0]["summary"]
    api_threads = {t["tid"] for t in summary["threads"] if t["calls"] > 0}
    nvtx_threads = {e["tid"] for e in trace["traceEvents"] if e.get("cat") == "nvtx"} & {t["tid"] for t in summary["threads"]}
    streams = sum(len(d["streams"]) for d in summary["devices"])
    want_tracks = len(api_threads) + len(nvtx_threads) + streams
    if num("tracks-drawn") != want_tracks: errors.append("tracks drawn %s, expected %d" % (attrs.get("tracks-drawn"), want_tracks))
    if num("findings-listed") != len(report["findings"]): errors.append("findings listed %s, report has %d" % (attrs.get("findings-listed"), len(report["findings"])))
    fs = procs[0]["findings"]
    in_view = sum(1 for f in fs if f["t"] <= v1 and f["t"] + f["d"] >= v0)
    if num("findings-drawn") != in_view: errors.append("findings drawn %s, %d meet the view" % (attrs.get("findings-drawn"), in_view))
    if want_tracks and num("rects-drawn") < 1: errors.append("no rectangle drawn")
    # a sampled trace: its unrecorded stretches shaded on every row, with a legend line; none otherwise
    gaps = procs[0].get("gaps")
    if gaps is not None:
        shaded = sum(1 for g in gaps if not (g[0] > v1 or g[0] + g[1] < v0)) * want_tracks
        if num("gap-rects-drawn") != shaded: errors.append("unrecorded stretches drawn %s times, expected %d" % (attrs.get("gap-rects-drawn"), shaded))
        if "not recorded (sampled)" not in dom: errors.append("no legend line for the unrecorded stretches")
    elif "gap-rects-drawn" in attrs or "not recorded (sampled)" in dom:
        errors.append("a trace recorded in full drew unrecorded stretches")
    p = procs[0]
    if p["first_op"] is not None:
        width = v1 - v0
        # from the first GPU operation (or a later one, after a long idle GPU), with a small margin
        if v0 < p["first_op"] - 0.05 * width: errors.append("the view starts at %.3f ms, before the first GPU operation (%.3f ms)" % (v0, p["first_op"]))
    print("tracks=%s findings=%s/%s rects=%s labels=%s view=%.1f..%.1f ms" % (attrs.get("tracks-drawn"), attrs.get("findings-drawn"),
          attrs.get("findings-listed"), attrs.get("rects-drawn"), attrs.get("labels-drawn"), v0, v1))
elif what == "finding0":   # loaded with #finding=0: zoomed in to the first listed finding
    f = procs[0]["findings"][0]
    if attrs.get("selected-finding") != "0": errors.append("finding 0 not selected: %r" % attrs.get("selected-finding"))
    if not (v0 <= f["t"] + 1e-9 and v1 >= f["t"] + f["d"] - 1e-9): errors.append("view %.4f..%.4f does not hold the finding %.4f+%.4f" % (v0, v1, f["t"], f["d"]))
    if v1 - v0 > max(1.1 * f["d"], f["d"] + 0.004) + 1e-6: errors.append("view %.4f ms wide for a finding of %.4f ms: not zoomed in to it" % (v1 - v0, f["d"]))
    full = procs[0]["view"][1] - procs[0]["view"][0]
    if f["d"] < 0.5 * full and v1 - v0 >= full: errors.append("clicking the finding zoomed out (%.3f ms >= default %.3f ms)" % (v1 - v0, full))
    print("finding 0 (%.3f+%.3f ms) -> view %.3f..%.3f" % (f["t"], f["d"], v0, v1))
elif what.startswith("job"):   # the multi-process page; "job:PID" loaded with #pid=PID
    if len(procs) < 2 or num("processes") != len(procs): errors.append("processes %s, data has %d" % (attrs.get("processes"), len(procs)))
    opts = re.findall(r"<option[^>]*>([^<]*)</option>", dom)
    if len(opts) != len(procs) + 1 or not all(("pid %d" % p["pid"]) in " ".join(opts) for p in procs): errors.append("process selector options %r" % opts)
    pid = int(what[4:]) if what[3:4] == ":" else None
    ps = [p for p in procs if pid is None or p["pid"] == pid]
    if num("process-shown") != (pid or 0): errors.append("process shown %s, expected %s" % (attrs.get("process-shown"), pid or 0))
    if num("tracks-drawn") != sum(len(p["tracks"]) for p in ps): errors.append("tracks drawn %s, expected %d" % (attrs.get("tracks-drawn"), sum(len(p["tracks"]) for p in ps)))
    if num("findings-listed") != sum(len(p["findings"]) for p in ps): errors.append("findings listed %s" % attrs.get("findings-listed"))
    print("%s: %s processes, tracks=%s findings=%s" % (what, attrs.get("processes"), attrs.get("tracks-drawn"), attrs.get("findings-listed")))
for e in errors: print("ERROR", e)
sys.exit(1 if errors else 0)
PY

fails=0
check() {   # NAME PAGE URL-SUFFIX MODE [ARGS]
    local name=$1 page=$2 suffix=$3; shift 3
    chrome --dump-dom "file://$page$suffix" > "$tmp/dom"
    if out=$("$PYTHON" "$tmp/check.py" "$page" "$tmp/dom" "$@"); then echo "ok $name ($out)"
    else echo "FAIL $name:"; echo "$out" | sed 's/^/    /'; fails=$((fails + 1)); fi
}
for t in "${traces[@]}"; do
    name=$(basename "$t" .sstrace)
    "$SYNCSIGHT" export --format html -o "$tmp/$name.html" "$t" || { echo "FAIL $name: export failed"; fails=$((fails + 1)); continue; }
    "$SYNCSIGHT" export --format perfetto -o "$tmp/$name.json" "$t" && "$SYNCSIGHT" report --format json -o "$tmp/$name.report.json" "$t" || { echo "FAIL $name: reference exports failed"; fails=$((fails + 1)); continue; }
    check "$name" "$tmp/$name.html" "" single "$tmp/$name.report.json" "$tmp/$name.json"
    if "$PYTHON" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["findings"] else 1)' "$tmp/$name.report.json"; then
        check "$name #finding=0" "$tmp/$name.html" "#finding=0" finding0
    fi
done

# kernel names drawn inside the 30 ms kernels of legacy_stream, readable (shortened or whole, never squeezed)
if [ -f "$tmp/legacy_stream.html" ]; then
    chrome --dump-dom "file://$tmp/legacy_stream.html" > "$tmp/dom"
    "$PYTHON" - "$tmp/dom" <<'PY' || fails=$((fails + 1))
import re, sys
a = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', re.search(r"<body([^>]*)>", open(sys.argv[1]).read()).group(1)))
# 4 track names + the 3 kernels and the long synchronizing calls
if int(a["labels-drawn"]) < int(a["tracks-drawn"]) + 3: print("FAIL legacy_stream: only %s labels drawn" % a["labels-drawn"]); sys.exit(1)
print("ok legacy_stream: %s labels drawn, %s of them shortened, none too wide" % (a["labels-drawn"], a["labels-shortened"]))
PY
fi
# item_in_loop: the default view skips the seconds of start-up (import torch,
# a few set-up ops) before the training loop: it starts past the GPU's longest
# idle gap, which the trace's own ops say where it is
if [ -f "$tmp/item_in_loop.html" ]; then
    chrome --dump-dom "file://$tmp/item_in_loop.html" > "$tmp/dom"
    "$SYNCSIGHT" dump --json tests/fixtures/item_in_loop.sstrace > "$tmp/item.dump"
    "$PYTHON" - "$tmp/dom" "$tmp/item.dump" <<'PY' || fails=$((fails + 1))
import json, re, sys
a = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', re.search(r"<body([^>]*)>", open(sys.argv[1]).read()).group(1)))
ops = sorted((d["start_ms"], d["start_ms"] + d["dur_ms"]) for d in map(json.loads, open(sys.argv[2]))
             if d.get("type") in ("kernel", "memcpy", "memset"))
busy_end, gap = ops[0][1], (0, 0, 0)
for s, e in ops[1:]:
    if s - busy_end > gap[0]: gap = (s - busy_end, busy_end, s)
    busy_end = max(busy_end, e)
if gap[0] < 1000: print("FAIL item_in_loop: no start-up gap in the fixture (longest %.0f ms)" % gap[0]); sys.exit(1)
if float(a["view-start"]) <= gap[1]:
    print("FAIL item_in_loop: the default view starts at %s ms, in the start-up (the GPU idles from %.1f to %.1f ms)"
          % (a["view-start"], gap[1], gap[2])); sys.exit(1)
print("ok item_in_loop: default view from %.0f ms, past the start-up gap %.0f..%.0f ms" % (float(a["view-start"]), gap[1], gap[2]))
PY
fi
# a multi-process job: one page, a process selector
job=tests/fixtures/torchrun_2ranks
if [ -d "$job" ]; then
    if "$SYNCSIGHT" export --format html -o "$tmp/job.html" "$job"; then
        check "torchrun_2ranks" "$tmp/job.html" "" job
        pid=$(ls "$job" | sed -n 's/.*\.\([0-9]*\)\.sstrace$/\1/p' | tail -1)
        check "torchrun_2ranks #pid=$pid" "$tmp/job.html" "#pid=$pid" "job:$pid"
    else
        echo "FAIL torchrun_2ranks: export of the job failed"; fails=$((fails + 1))
    fi
fi

# a screenshot that is not blank: decode the PNG and count its colours
chrome --window-size=1400,900 --screenshot="$tmp/shot.png" "file://$tmp/legacy.html" >/dev/null
"$PYTHON" - "$tmp/shot.png" <<'PY' || fails=$((fails + 1))
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w, h, ct = 8, b"", 0, 0, 0
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8]); body = data[pos + 8:pos + 8 + n]; pos += 12 + n
    if typ == b"IHDR": w, h, depth, ct = struct.unpack(">IIBB", body[:10])
    elif typ == b"IDAT": idat += body
raw = zlib.decompress(idat); bpp = {2: 3, 6: 4}[ct]; stride = w * bpp
prev = bytearray(stride); colours = set()
for y in range(h):
    f = raw[y * (stride + 1)]; line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 4 == 0: colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 4))
print("screenshot %dx%d, %d colours sampled" % (w, h, len(colours)))
if len(colours) < 8: print("FAIL: the screenshot is blank"); sys.exit(1)
PY
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ${#traces[@]} pages drawn"
