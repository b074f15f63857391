#!/bin/bash
# `syncsight export --format html`: the page of each synthetic trace, of the
# injection trace (a kernel name and NVTX text holding "</script>", "<!--",
# quotes, ESC) and of every fixture is loaded in headless Chromium; the page
# sets data attributes on <body> once it has drawn.  The number of tracks drawn
# must equal the threads with CUDA calls + threads with NVTX ranges + streams
# with GPU work (from `report --format json` and the Perfetto export), the
# number of findings drawn and listed must equal the report's findings, and the
# injected markup must not become part of the DOM.  One screenshot must not be
# blank (several colours).  Skips (77) when chromium is absent.
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
[ -x "$SYNCSIGHT" ] || { echo "$SYNCSIGHT not built"; exit 77; }
[ -n "$CHROMIUM" ] || { echo "chromium not installed: HTML rendering not tested"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/export_traces.sh
export_test_traces "$tmp"
# Rendering is slow: of the synthetic traces, only these five, plus the fixtures.
traces=("$tmp/t/injection.sstrace" "$tmp/t/legacy.sstrace" "$tmp/t/missing_fence.sstrace" "$tmp/t/implicit_sync.sstrace" "$tmp/t/unrecorded_event.sstrace")
for f in tests/fixtures/*.sstrace; do [ -e "$f" ] && traces+=("$f"); done
chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" "$@" 2>/dev/null; }

fails=0
for t in "${traces[@]}"; do
    name=$(basename "$t" .sstrace)
    "$SYNCSIGHT" export --format html -o "$tmp/$name.html" "$t" || { echo "FAIL $name: export failed"; fails=$((fails + 1)); continue; }
    "$SYNCSIGHT" export --format perfetto -o "$tmp/$name.json" "$t" && "$SYNCSIGHT" report --format json -o "$tmp/$name.report.json" "$t" || { echo "FAIL $name: reference exports failed"; fails=$((fails + 1)); continue; }
    chrome --dump-dom "file://$tmp/$name.html" >"$tmp/$name.dom"
    out=$("$PYTHON" - "$tmp/$name.dom" "$tmp/$name.json" "$tmp/$name.report.json" <<'PY'
import json, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
trace = json.load(open(sys.argv[2])); report = json.load(open(sys.argv[3]))
m = re.search(r"<body([^>]*)>", dom)
attrs = dict(re.findall(r'data-([a-z-]+)="(\d+)"', m.group(1) if m else ""))
summary = report["traces"][0]["summary"]
api_threads = {t["tid"] for t in summary["threads"] if t["calls"] > 0}
nvtx_threads = {e["tid"] for e in trace["traceEvents"] if e.get("cat") == "nvtx"} & {t["tid"] for t in summary["threads"]}
streams = sum(len(d["streams"]) for d in summary["devices"])
want_tracks = len(api_threads) + len(nvtx_threads) + streams
want_findings = len(report["findings"])
errors = []
if "tracks-drawn" not in attrs: errors.append("the page did not finish drawing (no data-tracks-drawn); body: %r" % (m.group(0) if m else None))
else:
    if int(attrs["tracks-drawn"]) != want_tracks: errors.append("tracks drawn %s, expected %d" % (attrs["tracks-drawn"], want_tracks))
    if int(attrs.get("findings-drawn", -1)) != want_findings: errors.append("findings drawn %s, expected %d" % (attrs.get("findings-drawn"), want_findings))
    if int(attrs.get("findings-listed", -1)) != want_findings: errors.append("findings listed %s, expected %d" % (attrs.get("findings-listed"), want_findings))
    if want_tracks and int(attrs.get("rects-drawn", 0)) < 1: errors.append("no rectangle drawn")
if "data-pwned" in dom or re.search(r"<img[^>]*pwned", dom): errors.append("injected markup became part of the page")
if len(re.findall(r"<script", dom)) != 2: errors.append("%d script elements in the DOM" % len(re.findall(r"<script", dom)))
print("tracks=%s findings=%s rects=%s" % (attrs.get("tracks-drawn"), attrs.get("findings-drawn"), attrs.get("rects-drawn")))
for e in errors: print("ERROR", e)
sys.exit(1 if errors else 0)
PY
)
    if [ $? -ne 0 ]; then echo "FAIL $name:"; echo "$out" | sed 's/^/    /'; fails=$((fails + 1)); else echo "ok $name ($out)"; fi
done

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
