#!/bin/bash
# `syncsight export --format perfetto` and `--format sarif` on every fixture
# (tests/fixtures/*.sstrace), the analyzer's synthetic traces
# (test_analyzer_rules / test_analyzer_export --write-traces) and, when built,
# a 20000-record trace from build/ss-gen-trace.  Perfetto: well-formed JSON,
# timestamps never decrease within a track, every flow id has exactly one start
# and one end, each bound inside a slice of its track, every finding of
# `syncsight report --format json` appears as a finding slice with its rule and
# cost, and event record -> wait flows exist where the trace has them; a
# multi-process job (a directory) gives one timeline with a group per pid.  SARIF:
# 2.1.0, six rules with helpUri, one result per finding with the right level
# and the cost in the message; `report --format sarif` gives the same results.
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
[ -x "$SYNCSIGHT" ] || { echo "$SYNCSIGHT not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/export_traces.sh
export_test_traces "$tmp"
[ -x "$BUILD/ss-gen-trace" ] && "$BUILD/ss-gen-trace" -n 20000 --seed 3 -o "$tmp/t/generated.sstrace" 2>/dev/null &&
    traces+=("$tmp/t/generated.sstrace")

fails=0
flows_total=0
for t in "${traces[@]}"; do
    name=$(basename "$t" .sstrace)
    "$SYNCSIGHT" report --format json -o "$tmp/$name.report.json" "$t" 2>/dev/null || { echo "FAIL $name: report failed"; fails=$((fails + 1)); continue; }
    if ! "$SYNCSIGHT" export --format perfetto -o "$tmp/$name.json" "$t" 2>"$tmp/err"; then
        echo "FAIL $name: perfetto export failed: $(cat "$tmp/err")"; fails=$((fails + 1)); continue
    fi
    if ! "$SYNCSIGHT" export --format sarif -o "$tmp/$name.sarif" "$t" 2>"$tmp/err"; then
        echo "FAIL $name: sarif export failed: $(cat "$tmp/err")"; fails=$((fails + 1)); continue
    fi
    if "$SYNCSIGHT" report --format sarif -o "$tmp/$name.report.sarif" "$t" 2>/dev/null; then
        cmp -s "$tmp/$name.sarif" "$tmp/$name.report.sarif" || { echo "FAIL $name: report --format sarif differs from export"; fails=$((fails + 1)); }
    else
        echo "FAIL $name: report --format sarif failed"; fails=$((fails + 1))
    fi
    out=$("$PYTHON" - "$tmp/$name.json" "$tmp/$name.report.json" "$tmp/$name.sarif" <<'PY'
import glob, json, os, re, sys, collections
errors = []
trace = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
sarif = json.load(open(sys.argv[3]))
events = trace["traceEvents"]
last = {}
slices = collections.defaultdict(list)
flows = collections.defaultdict(lambda: {"s": [], "f": []})
for e in events:
    for k in ("ph", "pid", "tid"):
        if k not in e: errors.append("event without %s: %r" % (k, e))
    ph = e.get("ph")
    if ph == "M": continue
    if not isinstance(e.get("ts"), (int, float)): errors.append("event without numeric ts: %r" % e); continue
    key = (e["pid"], e["tid"])
    if key in last and e["ts"] < last[key]:
        errors.append("track %r goes back in time: %r after %r" % (key, e["ts"], last[key]))
    last[key] = e["ts"]
    if ph == "X":
        if e.get("dur", -1) < 0: errors.append("slice with negative or no dur: %r" % e)
        slices[key].append((e["ts"], e["ts"] + e["dur"]))
    elif ph in ("s", "f"):
        flows[e["id"]][ph].append((key, e["ts"]))
for fid, ends in flows.items():
    if len(ends["s"]) != 1 or len(ends["f"]) != 1:
        errors.append("flow %r has %d starts and %d ends" % (fid, len(ends["s"]), len(ends["f"])))
        continue
    for ph in ("s", "f"):
        key, ts = ends[ph][0]
        if not any(a <= ts <= b for a, b in slices[key]):
            errors.append("flow %r %s at %r is in no slice of its track %r" % (fid, ph, ts, key))
found = collections.Counter((e["args"]["rule"], round(e["args"]["cost_ms"], 3)) for e in events
                            if e.get("cat") == "syncsight.finding" and e["ph"] == "X")
want = collections.Counter((f["rule"], round(f["cost_ms"], 3)) for f in report["findings"])
if found != want: errors.append("finding slices %r != report findings %r" % (dict(found), dict(want)))
instants = sum(1 for e in events if e.get("cat") == "syncsight.finding" and e["ph"] == "i")
blamed = sum(1 for f in report["findings"] if any("api" in c for c in f["calls"]))
if instants < min(blamed, 1): errors.append("no instant on the blamed calls")
names = [e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"]
for dev in report["traces"][0]["summary"]["devices"]:
    for s in dev["streams"]:
        # named as the report names it (never the handle alone), with its kind
        if s["stream_kind"] not in s["stream_name"] or (s["stream"] != "0x0" and s["stream"] in s["stream_name"]):
            errors.append("stream %s named %r" % (s["stream"], s["stream_name"]))
        if not any(n.startswith(s["stream_name"]) for n in names):
            errors.append("no track named %r" % s["stream_name"])
# SARIF
if sarif.get("version") != "2.1.0": errors.append("SARIF version %r" % sarif.get("version"))
run = sarif["runs"][0]
rules = run["tool"]["driver"]["rules"]
ids = {r["id"] for r in rules}
# every rule, each with its page under docs/rules/
pages = {os.path.basename(p)[:-3] for p in glob.glob("docs/rules/*.md")}
if ids != pages: errors.append("SARIF rules %r, rule pages %r" % (sorted(ids), sorted(pages)))
for r in rules:
    if not re.match(r"https://[^/]+/.*/rules/%s\.md$" % re.escape(r["id"]), r.get("helpUri", "")) or not r["shortDescription"]["text"]:
        errors.append("SARIF rule %r lacks an absolute helpUri (%r) or shortDescription" % (r["id"], r.get("helpUri")))
levels = {"error": "error", "warning": "warning", "info": "note"}
res = run["results"]
if len(res) != len(report["findings"]): errors.append("SARIF has %d results, report %d findings" % (len(res), len(report["findings"])))
for r, f in zip(res, report["findings"]):
    if r["ruleId"] != f["rule"] or r["level"] != levels[f["severity"]]: errors.append("SARIF result %r vs finding %r" % (r["ruleId"], f["rule"]))
    if rules[r["ruleIndex"]]["id"] != r["ruleId"]: errors.append("ruleIndex wrong")
    if ("Cost: %.3f ms" % f["cost_ms"]) not in r["message"]["text"]: errors.append("cost missing from SARIF message: %r" % r["message"]["text"][:200])
    loc = r["locations"][0]
    if "physicalLocation" in loc:
        if loc["physicalLocation"]["region"]["startLine"] < 1: errors.append("bad startLine")
        # source files relative to the source root, C++ and Python alike
        art = loc["physicalLocation"]["artifactLocation"]
        base = run.get("originalUriBaseIds", {}).get(art.get("uriBaseId", ""), {}).get("uri", "")
        if art["uri"].startswith("file:") == bool(art.get("uriBaseId")) or (art.get("uriBaseId") and not base.startswith("file:///")):
            errors.append("SARIF artifact %r (base %r)" % (art, base))
print("flows=%d" % len(flows))
for e in errors[:20]: print("ERROR", e)
sys.exit(1 if errors else 0)
PY
)
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL $name:"; echo "$out" | sed 's/^/    /'; fails=$((fails + 1)); continue; fi
    n=${out#flows=}; n=${n%%[^0-9]*}; flows_total=$((flows_total + n))
    # a launch recording its event through a launch attribute is a record: each of the
    # 20 steps has two record -> wait arrows (the launch's event, then cudaEventRecord's)
    if [ "$name" = pdl_event_handoff ] && [ "$n" -ne 40 ]; then
        echo "FAIL $name: $n record -> wait flows, want 40 (2 a step)"; fails=$((fails + 1)); continue
    fi
    echo "ok $name ($out)"
done
# the synthetic traces record events and wait on them: flows must show up
[ "$flows_total" -gt 0 ] || { echo "FAIL: no event record -> wait flow in any trace"; fails=$((fails + 1)); }
# a wrong format, no trace, two traces: usage errors
"$SYNCSIGHT" export --format xml "${traces[0]}" >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: bad --format not exit 2"; fails=$((fails + 1)); }
"$SYNCSIGHT" export --format perfetto >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: no trace not exit 2"; fails=$((fails + 1)); }
"$SYNCSIGHT" export --format nvtxt "${traces[0]}" "${traces[1]}" >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: two traces to nvtxt not exit 2"; fails=$((fails + 1)); }
# A multi-process job (a directory of traces): one timeline, a process group per
# pid (its threads and findings), its GPUs in groups of their own named with the
# pid, no group shared by two processes, every track in time order, every
# finding of every process, flow ids unique across the job.
job=tests/fixtures/torchrun_2ranks
if [ -d "$job" ]; then
    if "$SYNCSIGHT" export --format perfetto -o "$tmp/job.json" "$job" 2>"$tmp/err" &&
       "$SYNCSIGHT" report --format json -o "$tmp/job.report.json" "$job" 2>/dev/null; then
        "$PYTHON" - "$tmp/job.json" "$tmp/job.report.json" <<'PY' || fails=$((fails + 1))
import collections, json, sys
trace, report = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = trace["traceEvents"]
pids = [t["pid"] for t in report["traces"]]
errors = []
pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
for pid in pids:
    if pid not in pname or ("(pid %d)" % pid) not in pname[pid]: errors.append("no process group for pid %d: %r" % (pid, pname.get(pid)))
gpu = {p: n for p, n in pname.items() if n.startswith("GPU ")}
for pid in pids:
    if not any(("(pid %d)" % pid) in n for n in gpu.values()): errors.append("no GPU group of pid %d: %r" % (pid, gpu))
for p, n in gpu.items():
    if sum(("(pid %d)" % q) in n for q in pids) != 1: errors.append("GPU group %r is not one process's" % n)
last = {}
for e in ev:
    if e.get("ph") == "M": continue
    if e["pid"] not in pname: errors.append("event in an unnamed group %r" % e["pid"]); break
    k = (e["pid"], e["tid"])
    if k in last and e["ts"] < last[k]: errors.append("track %r goes back in time" % (k,)); break
    last[k] = e["ts"]
got = collections.Counter((e["pid"], e["args"]["rule"], round(e["args"]["cost_ms"], 3)) for e in ev if e.get("cat") == "syncsight.finding" and e["ph"] == "X")
want = collections.Counter((f["process"], f["rule"], round(f["cost_ms"], 3)) for f in report["findings"])
if got != want: errors.append("finding slices per process %r != report %r" % (dict(got), dict(want)))
flows = collections.Counter((e["id"], e["ph"]) for e in ev if e.get("ph") in ("s", "f"))
if any(c != 1 for c in flows.values()): errors.append("a flow id is used twice in the job")
for e in errors: print("ERROR", e)
print("job: %d processes, %d groups, %d findings" % (len(pids), len(pname), sum(want.values())))
sys.exit(1 if errors else 0)
PY
    else
        echo "FAIL: export --format perfetto of the job $job: $(cat "$tmp/err")"; fails=$((fails + 1))
    fi
fi
"$SYNCSIGHT" export --help | grep -q "usage: syncsight export" || { echo "FAIL: export --help"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ${#traces[@]} traces ok"
