#!/bin/bash
# Sampled traces (trace format 1.6, docs/sampling.md): the window-cut
# property.  Every real fixture is turned into sampled traces as the shim's
# sampled recording would have written them (tests/sample_cut.py: CAPTURE
# records, and no hot call nor GPU record while OFF), at several placements:
# an early head then one window, an OFF stretch in the middle, a head only,
# many short windows, and a window opening before the full report's first
# finding.  The report of each cut trace may hold only findings (rule + call
# site) that the full trace's report has, never at a higher severity: a
# sampled trace must never say what the full one would not.  On the
# pathology fixtures whose pathology repeats, the window placed around it
# must still find it.  Every cut report says it is sampled (text and JSON).
set -u
cd "$(dirname "$0")/.."
S=${SYNCSIGHT:-${BUILD:-build}/syncsight}
PYTHON=${PYTHON:-python3}
ls tests/fixtures/*.sstrace >/dev/null 2>&1 || { echo "no fixtures"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
SYNCSIGHT=$S SYNCSIGHT_SYMBOL_PATH=tests/fixtures/bin "$PYTHON" - "$T" <<'PY'
import bisect, glob, json, os, subprocess, sys
sys.path.insert(0, "tests")
import sample_cut

S, tmp = os.environ["SYNCSIGHT"], sys.argv[1]
SEV = {"info": 0, "warning": 1, "error": 2}
# pathology fixtures whose pathology repeats in the run: a window over it finds it
MUST_FIND = {"device_sync_loop": "device-sync-overuse",
             "train_item_loop": "implicit-sync", "item_in_loop": "implicit-sync",
             "missing_fence": "missing-fence", "memset_async": "missing-fence",
             "side_stream_race": "missing-fence"}
fails = []

def report(path):
    r = subprocess.run([S, "report", "--format", "json", path], capture_output=True, text=True)
    if r.returncode not in (0, 1) or not r.stdout:
        fails.append(f"{path}: report exited {r.returncode}: {r.stderr.strip()[:200]}")
        return None
    return json.loads(r.stdout)

def keyed(rep):
    out = {}
    for x in rep["findings"]:
        k = (x["rule"], x["site"])
        out[k] = max(out.get(k, -1), SEV[x["severity"]])
    return out

ncuts = kept = full_n = 0
for f in sorted(glob.glob("tests/fixtures/*.sstrace")):
    name = os.path.basename(f)[:-8]
    full = report(f)
    if full is None: continue
    allowed = keyed(full)
    times, t0 = sample_cut.hot_times(f, ".")
    if len(times) < 4: continue
    placements = {"early": [(0.1, 0.6)], "middle": [(0.4, 0.7)], "head": [(0.5, 1.0)],
                  "many": [(0.1, 0.2), (0.25, 0.35), (0.4, 0.5), (0.55, 0.65), (0.7, 0.8), (0.85, 0.95)]}
    # the window opens ahead of the pathology's first call (of the rule that
    # must be found, where there is one: a setup finding of another rule may
    # come with the process's first hot call)
    watched = [x for x in full["findings"] if x["calls"] and (name not in MUST_FIND or x["rule"] == MUST_FIND[name])]
    if watched:
        first = min(x["calls"][0]["t_ms"] for x in watched)
        fr = bisect.bisect_left(times, t0 + int(first * 1e6)) / len(times)
        # OFF before the first finding, the window opening ahead of it
        if int(fr * 0.7 * len(times)) > int(fr * 0.3 * len(times)):
            placements["around"] = [(fr * 0.3, fr * 0.7)]
        elif name in MUST_FIND:
            fails.append(f"{name}: no hot call before its first finding to leave out")
    elif name in MUST_FIND:
        fails.append(f"{name}: the full report has no {MUST_FIND[name]} finding")
    for pname, spans in placements.items():
        dst = os.path.join(tmp, f"{name}.{pname}.sstrace")
        switches = sample_cut.cut(f, dst, spans, ".")
        ncuts += 1
        rep = report(dst)
        if rep is None: continue
        kept += len(rep["findings"])
        full_n += len(full["findings"])
        cap = rep["traces"][0].get("capture")
        # no switch: the OFF spans fell inside stream captures, which the
        # shim records whole (never OFF while a capture is open)
        if switches and (not cap or not cap.get("sampled")):
            fails.append(f"{name}.{pname}: the JSON report does not say the trace is sampled")
        for k, sev in keyed(rep).items():
            if k not in allowed:
                fails.append(f"{name}.{pname}: {k[0]} at {k[1]}: not in the full trace's report")
            elif sev > allowed[k]:
                fails.append(f"{name}.{pname}: {k[0]} at {k[1]}: severity {sev} above the full trace's {allowed[k]}")
        if pname == "around" and name in MUST_FIND and not any(x["rule"] == MUST_FIND[name] for x in rep["findings"]):
            fails.append(f"{name}.around: {MUST_FIND[name]} lost with the window over it")
    if name == "device_sync_loop":
        text = subprocess.run([S, "report", os.path.join(tmp, f"{name}.early.sstrace")], capture_output=True,
                              text=True).stdout
        if "sampled: recorded" not in text:
            fails.append(f"{name}.early: the text report has no 'sampled:' line")
for x in fails: print("FAIL", x)
print(f"{ncuts} cut traces, {kept} findings kept of {full_n} in the full reports, {len(fails)} failures")
sys.exit(1 if fails or ncuts == 0 else 0)
PY
