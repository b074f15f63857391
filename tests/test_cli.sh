#!/bin/bash
# The command line as perf, uftrace and nsys users expect it (docs/cli.md):
# `report` without a trace reads ./syncsight.data; the filters --rule,
# --min-severity, --top and --pid; --color=auto|always|never with NO_COLOR
# and TERM=dumb; a top-level --help naming every subcommand and format; the
# man page, installed by `make install`; findings inside NCCL folded into one
# line per process (kept in JSON); streams named, never by a pointer alone.
set -u
cd "$(dirname "$0")/.."
S=${SYNCSIGHT:-${BUILD:-build}/syncsight}
S=$(realpath "$S")
PYTHON=${PYTHON:-python3}
for f in legacy_stream device_sync_loop memset_async; do
    [ -f tests/fixtures/$f.sstrace ] || { echo "fixture $f missing"; exit 77; }
done
[ -d tests/fixtures/torchrun_2ranks ] || { echo "fixture torchrun_2ranks missing"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export SYNCSIGHT_SYMBOL_PATH=$PWD/tests/fixtures/bin
unset NO_COLOR

# A job: three single-process fixtures and the two NCCL ranks.
J=$T/job
mkdir -p "$J"
for f in legacy_stream device_sync_loop memset_async; do
    cp tests/fixtures/$f.sstrace "$J/"
    [ -f tests/fixtures/$f.sstrace.kaccess ] && cp tests/fixtures/$f.sstrace.kaccess "$J/"
done
cp tests/fixtures/torchrun_2ranks/*.sstrace "$J/"

# ---- report with no argument: ./syncsight.data, as `run` writes it
mkdir -p "$T/here" && cp -r "$J" "$T/here/syncsight.data"
(cd "$T/here" && "$S" report > "$T/noarg.txt" 2> "$T/noarg.err"); rc=$?
"$S" report "$J" > "$T/dir.txt" 2>/dev/null
[ $rc -le 1 ] && [ -s "$T/noarg.txt" ] || { cat "$T/noarg.err"; fail "report with no argument in a dir holding syncsight.data: exit $rc"; }
[ "$(grep -c '^process ' "$T/noarg.txt")" = 5 ] || fail "report with no argument did not read the 5 traces of ./syncsight.data"
(cd "$T" && "$S" report > /dev/null 2> "$T/none.err"); rc=$?
[ $rc = 2 ] && grep -q 'syncsight.data' "$T/none.err" || fail "report with no argument and no ./syncsight.data: exit $rc, $(cat "$T/none.err")"
grep -q 'default ./syncsight.data' <("$S" run --help) || fail "run --help does not say it writes ./syncsight.data"
echo "ok: report with no argument reads ./syncsight.data"

# ---- filters (on the JSON report, whose findings they choose)
"$S" report --format json "$J" > "$T/all.json" 2>/dev/null
filtered() { "$S" report --format json "$@" "$J" 2>/dev/null; }
filtered --rule legacy-stream-serialization,device-sync-overuse > "$T/rule.json"
filtered --min-severity warning > "$T/sev.json"
filtered --top 1 > "$T/top.json"
pid=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["traces"][0]["pid"])' "$T/all.json")
filtered --pid "$pid" > "$T/pid.json"
"$PYTHON" - "$T" "$pid" <<'PY' || exit 1
import json, sys
T, pid = sys.argv[1], int(sys.argv[2])
load = lambda n: json.load(open(f"{T}/{n}.json"))
all_, errs = load("all"), []
def per_pid(r):
    d = {}
    for x in r["findings"]: d.setdefault(x["process"], []).append(x)
    return d
rules = {x["rule"] for x in all_["findings"]}
want = {"legacy-stream-serialization", "device-sync-overuse"}
if not want <= rules or len(rules) < 3: errs.append(f"the job's findings do not exercise --rule: {sorted(rules)}")
r = load("rule")
if {x["rule"] for x in r["findings"]} != want: errs.append(f"--rule: rules {sorted({x['rule'] for x in r['findings']})}")
if len(r["findings"]) != sum(x["rule"] in want for x in all_["findings"]): errs.append("--rule dropped findings of the rules named")
r = load("sev")
if any(x["severity"] == "info" for x in r["findings"]) or len(r["findings"]) != sum(x["severity"] != "info" for x in all_["findings"]):
    errs.append("--min-severity warning: wrong findings")
if not any(x["severity"] == "info" for x in all_["findings"]): errs.append("no info finding to filter out")
r, full = per_pid(load("top")), per_pid(all_)
if any(len(v) > 1 for v in full.values()) is False: errs.append("no process with 2 findings to cut with --top")
for p, v in full.items():
    got = r.get(p, [])
    if [(x["rule"], x["site"]) for x in got] != [(x["rule"], x["site"]) for x in v[:1]]:
        errs.append(f"--top 1: pid {p} got {[(x['rule']) for x in got]}, expected its first finding")
r = load("pid")
if [t["pid"] for t in r["traces"]] != [pid] or any(x["process"] != pid for x in r["findings"]):
    errs.append(f"--pid {pid}: traces {[t['pid'] for t in r['traces']]}")
for e in errs: print("FAIL:", e)
sys.exit(1 if errs else 0)
PY
"$S" report --rule no-such-rule "$J" > /dev/null 2> "$T/err"; rc=$?
[ $rc = 2 ] && grep -q "unknown rule 'no-such-rule'" "$T/err" || fail "--rule with an unknown id: exit $rc"
"$S" report --pid 1 "$J" > /dev/null 2> "$T/err"; rc=$?
[ $rc = 2 ] || fail "--pid naming no process of the job: exit $rc"
for bad in "--top 0" "--top x" "--min-severity loud" "--pid 12x" "--color sometimes"; do
    # shellcheck disable=SC2086
    "$S" report $bad "$J" > /dev/null 2>&1; [ $? = 2 ] || fail "report $bad: not a usage error"
done
# --fail-on judges what is reported
"$S" report --fail-on warning --rule pageable-async-copy "$J/memset_async.sstrace" > /dev/null 2>&1; rc1=$?
"$S" report --fail-on warning "$J/memset_async.sstrace" > /dev/null 2>&1; rc2=$?
[ $rc2 = 1 ] && [ $rc1 = 0 ] || fail "--fail-on with --rule: exit $rc1 (filtered) / $rc2 (all), expected 0 / 1"
echo "ok: --rule, --min-severity, --top, --pid, --fail-on on what is reported"

# ---- colour: escapes only where wanted
esc=$'\033['
has_esc() { grep -qF "$esc" "$1"; }
"$S" report --color=always "$J/legacy_stream.sstrace" > "$T/c" 2>/dev/null; has_esc "$T/c" || fail "--color=always: no colour"
NO_COLOR=1 "$S" report --color always "$J/legacy_stream.sstrace" > "$T/c" 2>/dev/null; has_esc "$T/c" || fail "--color=always under NO_COLOR: no colour"
"$S" report --color=never "$J/legacy_stream.sstrace" > "$T/c" 2>/dev/null; has_esc "$T/c" && fail "--color=never: colour"
"$S" report "$J/legacy_stream.sstrace" > "$T/c" 2>/dev/null; has_esc "$T/c" && fail "auto, not a terminal: colour"
# auto on a terminal (script(1) gives the report a pty)
if command -v script > /dev/null; then
    tty_report() { env "$@" script -qec "$S report $J/legacy_stream.sstrace" /dev/null > "$T/tty" 2>&1; }
    tty_report TERM=xterm; has_esc "$T/tty" || fail "auto on a terminal: no colour"
    tty_report TERM=xterm NO_COLOR=1; has_esc "$T/tty" && fail "auto on a terminal with NO_COLOR: colour"
    tty_report TERM=dumb; has_esc "$T/tty" && fail "auto on a terminal with TERM=dumb: colour"
    env TERM=xterm script -qec "$S report --color=never $J/legacy_stream.sstrace" /dev/null > "$T/tty" 2>&1
    has_esc "$T/tty" && fail "--color=never on a terminal: colour"
    echo "ok: --color auto|always|never, NO_COLOR and TERM=dumb (on a pty too)"
else
    echo "ok: --color auto|always|never, NO_COLOR (no script(1): terminal cases not run)"
fi

# ---- top-level help: every subcommand and every format
"$S" --help > "$T/help" || fail "syncsight --help failed"
for cmd in run report export dump; do
    grep -q "^  $cmd " "$T/help" || fail "--help does not list the subcommand $cmd"
    "$S" $cmd --help > /dev/null || fail "$cmd --help failed"
done
for fmt in text json sarif perfetto html nvtxt; do
    grep -q -- "--format $fmt" "$T/help" || fail "--help does not list the format $fmt"
done
for opt in --rule --min-severity --top --pid --color; do
    grep -q -- "$opt" <("$S" report --help) || fail "report --help lacks $opt"
    grep -q -- "$opt" <("$S" run --help) || fail "run --help lacks $opt"
done
grep -q SYNCSIGHT_SYMBOL_PATH "$T/help" || fail "--help lacks SYNCSIGHT_SYMBOL_PATH"
echo "ok: --help lists run report export dump and the six formats"

# ---- the man page: installed, and naming what --help names
make -s install DESTDIR="$T/inst" PREFIX=/usr BUILD="$(dirname "$S")" > "$T/install.log" 2>&1 || { cat "$T/install.log"; fail "make install"; }
M=$T/inst/usr/share/man/man1/syncsight.1
[ -f "$M" ] || fail "make install did not install share/man/man1/syncsight.1"
for w in run report export dump --rule --min-severity --top --pid --color NO_COLOR SYNCSIGHT_SYMBOL_PATH syncsight.data \
         perfetto html nvtxt sarif; do
    grep -q -- "$(printf '%s' "$w" | sed 's/-/\\\\-/g')\|$w" "$M" || fail "the man page does not mention $w"
done
url=$(sed -n 's/^#define SS_DOCS_URL "\(.*\)"$/\1/p' analyzer/render.h)
[ -n "$url" ] && grep -qF "$url" "$M" || fail "the man page does not name the docs URL ($url)"
if command -v groff > /dev/null; then
    groff -man -Tutf8 -ww "$M" 2> "$T/groff.err" > /dev/null
    [ -s "$T/groff.err" ] && { cat "$T/groff.err"; fail "groff warns on the man page"; }
fi
echo "ok: man page installed ($M)"

# ---- NCCL: one line per process in text, every finding in JSON
"$S" report tests/fixtures/torchrun_2ranks > "$T/nccl.txt" 2>/dev/null
"$S" report --format json tests/fixtures/torchrun_2ranks > "$T/nccl.json" 2>/dev/null
"$PYTHON" - "$T/nccl.txt" "$T/nccl.json" <<'PY' || exit 1
import json, re, sys
text, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
errs = []
for t in rep["traces"]:
    mine = [x for x in rep["findings"] if x["process"] == t["pid"]]
    nccl = [x for x in mine if x["inside_nccl"]]
    if not nccl: errs.append(f"pid {t['pid']}: no finding inside NCCL in the JSON report")
    block = text.split(f"process {t['pid']} ")[1].split("\nprocess ")[0]
    lines = re.findall(r"^(\d+) findings? inside NCCL, not your code", block, re.M)
    if lines != [str(len(nccl))]: errs.append(f"pid {t['pid']}: NCCL lines {lines}, expected one saying {len(nccl)}")
    if "not in your code:" in block or re.search(r"^\[info\]", block, re.M) and len(nccl) == len(mine):
        errs.append(f"pid {t['pid']}: a finding inside NCCL is still listed in the text report")
    if any("inside NCCL" not in x["message"] for x in nccl): errs.append("a JSON finding inside NCCL lost its detail")
for e in errs: print("FAIL:", e)
sys.exit(1 if errs else 0)
PY
# SARIF: no code-scanning result for them (they would sit on the user's lines), only their number
"$S" report --format sarif tests/fixtures/torchrun_2ranks 2>/dev/null |
    "$PYTHON" -c '
import json, sys
run = json.load(sys.stdin)["runs"][0]
texts = [r["message"]["text"] for r in run["results"]]
ok = run.get("properties", {}).get("findings_inside_nccl", 0) > 0 and texts and not any("inside NCCL" in t for t in texts)
sys.exit(0 if ok else 1)' || fail "SARIF: a finding inside NCCL is a result, or their count is missing"
echo "ok: NCCL findings folded to one line per process, kept in JSON, counted in SARIF"

# ---- streams: named, never by a raw pointer alone (text, JSON)
for f in tests/fixtures/*.sstrace tests/fixtures/torchrun_2ranks/*.sstrace; do
    "$S" report "$f" 2>/dev/null | grep -o 'stream 0x[0-9a-f]*' | grep -v '^stream 0x0$' > "$T/ptr" && \
        fail "$(basename "$f"): the text report names a stream by its pointer: $(head -1 "$T/ptr")"
done
"$S" report --format json "$J" 2>/dev/null > "$T/s.json"
"$PYTHON" - "$T/s.json" <<'PY' || exit 1
import json, re, sys
rep, errs, named = json.load(open(sys.argv[1])), [], 0
def walk(o):
    global named
    if isinstance(o, dict):
        if "stream_name" in o and o.get("stream") is not None:
            n = o["stream_name"]
            if o["stream"] != "0x0" and o["stream"] in n: errs.append(f"stream {o['stream']} named {n!r}")
            if o["stream_kind"] not in n: errs.append(f"stream {o['stream']} named {n!r} without its kind")
            named += "created at" in n
        for v in o.values(): walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(rep)
if not named: errs.append("no stream named with the place it was created")
for e in errs[:10]: print("FAIL:", e)
sys.exit(1 if errs else 0)
PY
echo "ok: streams named by number and creation site"

# SYNCSIGHT_TIMINGS=1: each step's wall time on stderr, the report unchanged.
"$S" report --format json tests/fixtures/legacy_stream.sstrace > "$T/plain.json" 2>/dev/null
SYNCSIGHT_TIMINGS=1 SYNCSIGHT_THREADS=2 "$S" report --format json tests/fixtures/legacy_stream.sstrace \
    > "$T/timed.json" 2> "$T/timed.err" || fail "report with SYNCSIGHT_TIMINGS=1 failed"
cmp -s "$T/plain.json" "$T/timed.json" || fail "SYNCSIGHT_TIMINGS=1 changed the report"
for step in load.read load rules.prepare rule.missing-fence replay.build.record replay.build rules whatifs report.write; do
    grep -Eq "^syncsight: timing: $step +[0-9]+\.[0-9]{3} s  \(ended at [0-9]+\.[0-9]{3} s\)$" "$T/timed.err" ||
        fail "no timing line for $step"
done
# the two long walks say what they waited for
for rule in missing-fence relies-on-legacy-sync; do
    grep -Eq "^syncsight: waits: $rule waited [0-9]+\.[0-9]{3} s for its [a-z ]+, [0-9]+\.[0-9]{3} s for the [a-z]+ replay$" \
        "$T/timed.err" || fail "no waits line for $rule"
done
# the end times say which of the steps run side by side ended last: never before the step began
awk '/^syncsight: timing: /{ d = $4; e = $8 + 0; if (e + 0.0005 < d) bad = 1 } END { exit bad }' "$T/timed.err" ||
    fail "a step ended before its own duration had passed"
grep -q "timing" "$T/plain.json" && fail "timings in the report itself"
# each replayed what-if: how it ran, how long it waited for the baseline and replayed
grep -Eq "^syncsight: whatif: 1 of [1-9][0-9]*: (whole run|with shortcuts), [1-9][0-9]* relaxations?, [0-9]+ items from its first change; waited [0-9]+\.[0-9]{3} s for the baseline, replayed in [0-9]+\.[0-9]{3} s \(ended at [0-9]+\.[0-9]{3} s\)$" "$T/timed.err" ||
    fail "no timing line for a replayed what-if"
"$S" report tests/fixtures/legacy_stream.sstrace 2>&1 >/dev/null | grep -q "timing" && fail "timings without SYNCSIGHT_TIMINGS"
echo "ok: SYNCSIGHT_TIMINGS=1 times each step on stderr, the report unchanged"

# On several threads the findings' what-ifs are replayed while the last rules
# run (rule.h's removes_causes): finish finds every one answered.  A rule
# that gives causes without saying so leaves its what-ifs for the end.
SYNCSIGHT_TIMINGS=1 SYNCSIGHT_THREADS=1 "$S" report tests/fixtures/legacy_stream.sstrace 2>&1 >/dev/null |
    grep -Eq "^syncsight: whatifs: [1-9][0-9]* asked, [1-9][0-9]* replayed at the end" ||
    fail "on one thread the what-ifs are not replayed at the end"
asked=0
for f in tests/fixtures/*.sstrace; do
    SYNCSIGHT_TIMINGS=1 SYNCSIGHT_THREADS=2 SYNCSIGHT_SYMBOL_PATH=tests/fixtures/bin "$S" report "$f" \
        > /dev/null 2> "$T/ahead.err"
    line=$(grep "^syncsight: whatifs: " "$T/ahead.err") || continue
    asked=$((asked + 1))
    case "$line" in
    *" 0 replayed at the end"*) ;;
    *) fail "$f: what-ifs left for the end: $line" ;;
    esac
done
[ "$asked" -ge 20 ] || fail "only $asked fixtures asked for what-ifs"
echo "ok: the what-ifs of $asked fixtures replayed beside the last rules"

# A call made by a library the program called (cublasDestroy's device
# synchronizations) is said to be the library's, in the text and in JSON;
# calls the program made itself are not.
if [ -f tests/fixtures/sample_cublas_streams.sstrace ]; then
    "$S" report --format json tests/fixtures/sample_cublas_streams.sstrace > "$T/lib.json" 2>/dev/null
    "$S" report --format json tests/fixtures/device_sync_loop.sstrace > "$T/nolib.json" 2>/dev/null
    "$PYTHON" - "$T/lib.json" "$T/nolib.json" <<'PY' || fail "findings inside a library"
import json, sys
def findings(path):
    out = []
    def walk(o):
        if isinstance(o, dict):
            if "rule" in o and "message" in o: out.append(o)
            for v in o.values(): walk(v)
        elif isinstance(o, list):
            for v in o: walk(v)
    walk(json.load(open(path)))
    return out
lib = findings(sys.argv[1])
ok = lib and all(f.get("inside_library", "").startswith("libcublas.so") and f["message"].startswith("inside libcublas.so")
                 and "not by your code" in f["fix"] for f in lib)
mine = findings(sys.argv[2])
ok = ok and mine and not any("inside_library" in f for f in mine)
sys.exit(0 if ok else 1)
PY
    echo "ok: calls made inside a library the program called are said to be that library's"
fi

# ---- a trace copied without its .kaccess file, reported where nvdisasm is
# not (SYNCSIGHT_SASS=0 stands for it): the verdicts that depend on kernels'
# accesses become "possible", and the report says why, once, with the fix.
mkdir -p "$T/nokacc"
cp tests/fixtures/legacy_stream.sstrace "$T/nokacc/a.sstrace"
SYNCSIGHT_SASS=0 "$S" report "$T/nokacc/a.sstrace" > "$T/nokacc.txt" 2>&1
grep -q '^note: for 1 of 1 kernels, which pointer arguments they read or write is unknown' "$T/nokacc.txt" ||
    fail "no note on unknown kernel accesses: $(tail -3 "$T/nokacc.txt")"
grep -q 'kaccess' "$T/nokacc.txt" || fail "the unknown kernel accesses note does not name the .kaccess file"
SYNCSIGHT_SASS=0 "$S" report --format json "$T/nokacc/a.sstrace" 2>/dev/null |
    "$PYTHON" -c 'import json,sys; u=json.load(sys.stdin)["traces"][0]["summary"]["unknown_kernel_accesses"]; sys.exit(0 if u and u["kernels"]==1 and u["of"]==1 and "disabled" in u["reason"] else 1)' ||
    fail "JSON summary.unknown_kernel_accesses missing or wrong"
"$S" report tests/fixtures/legacy_stream.sstrace 2>&1 | grep -q 'pointer arguments they read or write is unknown' &&
    fail "a note on unknown kernel accesses with the .kaccess file beside the trace"
"$S" report --format json tests/fixtures/legacy_stream.sstrace 2>/dev/null |
    "$PYTHON" -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["traces"][0]["summary"]["unknown_kernel_accesses"] is None else 1)' ||
    fail "JSON summary.unknown_kernel_accesses not null with the .kaccess file"
echo "ok: kernels whose accesses are unknown are said so, with the fix"

# ---- run: a program that cannot be executed is one line and 127; a program
# that records nothing leaves no empty ./syncsight.data behind; -o - and the
# filters say what they did
mkdir -p "$T/runhere"
(cd "$T/runhere" && "$S" run -- /nonexistent/prog > /dev/null 2> "$T/run.err"); rc=$?
[ $rc = 127 ] && [ "$(wc -l < "$T/run.err")" = 1 ] && grep -q 'cannot execute /nonexistent/prog' "$T/run.err" ||
    fail "run of a missing program: exit $rc, $(cat "$T/run.err")"
(cd "$T/runhere" && "$S" run -- /bin/true > /dev/null 2> "$T/run.err"); rc=$?
[ $rc = 0 ] && grep -q 'no trace was written' "$T/run.err" || fail "run of a program without CUDA: exit $rc, $(cat "$T/run.err")"
[ -e "$T/runhere/syncsight.data" ] && fail "run left an empty ./syncsight.data behind"
(cd "$T/runhere" && "$S" run -- sh -c 'exit 127' > /dev/null 2> "$T/run.err"); rc=$?
[ $rc = 127 ] && ! grep -q 'cannot execute' "$T/run.err" || fail "a program's own exit 127 taken for a failed exec"
(cd "$T/runhere" && "$S" report -o - "$J/legacy_stream.sstrace" > "$T/dash.txt" 2>/dev/null)
[ -e "$T/runhere/-" ] && fail "report -o - wrote a file named -"
grep -q '^findings: ' "$T/dash.txt" || fail "report -o - did not write the report to stdout"
"$S" report --rule implicit-sync "$J/legacy_stream.sstrace" 2>/dev/null | grep -q 'no findings shown (2 left out by --rule' ||
    fail "a filter that hides every finding does not say so"
"$S" report --top 1 --format json "$J/legacy_stream.sstrace" 2>/dev/null |
    "$PYTHON" -c 'import json,sys; t=json.load(sys.stdin)["traces"][0]; sys.exit(0 if t["findings_not_shown"]==1 else 1)' ||
    fail "JSON findings_not_shown wrong under --top 1"
"$S" report --top 0 "$J/legacy_stream.sstrace" 2>&1 | grep -q "not '0'" || fail "--top 0: the message does not name the value"
echo "ok: run's failures in one line, no empty syncsight.data, -o -, filters say what they left out"
