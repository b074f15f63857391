#!/bin/bash
# Call sites on real traces, off the GPU machine: at least 80% of the findings
# of the committed fixtures must carry a `site` of the form "file:line function"
# in the JSON report (native ones resolved through tests/fixtures/bin/, Python
# ones from the recorded Python stacks); and the site is the first frame the
# finding's stack marks as the user's (one policy for both: nvcc's launch stub
# is in neither), never the C start-up code.
set -u
cd "$(dirname "$0")/.."
ls tests/fixtures/*.sstrace > /dev/null 2>&1 || { echo "SKIP: no fixtures"; exit 77; }
# An analyzer that can symbolize nothing (built without libdw, and neither
# addr2line nor llvm-symbolizer found) cannot give native sites: skip, saying why.
sym=$("${SYNCSIGHT:-build/syncsight}" --version | sed -n 's/^symbolizer: //p')
case "$sym" in none*) echo "native call sites cannot be resolved by this analyzer: $sym"; exit 77 ;; esac
SYNCSIGHT=${SYNCSIGHT:-build/syncsight} SYNCSIGHT_SYMBOL_PATH=tests/fixtures/bin python3 - <<'PY' || exit 1
import glob, json, os, re, subprocess, sys
total = sited = 0
bad = []
for f in sorted(glob.glob("tests/fixtures/*.sstrace")):
    r = subprocess.run([os.environ["SYNCSIGHT"], "report", "--format", "json", f], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: report {f}: {r.stderr.strip()}")
    for x in json.loads(r.stdout)["findings"]:
        total += 1
        if re.search(r"\S:\d+ \S", x.get("site") or ""):
            sited += 1
        else:
            print(f"no file:line site: {os.path.basename(f)} {x['rule']} {x.get('site')!r}")
        native = [fr for fr in x.get("stack", []) if "frame" in fr]
        user = [fr["frame"] for fr in native if fr["user"]]
        if user and user[0] != x.get("site"):
            bad.append(f"{os.path.basename(f)} {x['rule']}: site {x.get('site')!r}, first user frame {user[0]!r}")
        bad += [f"{os.path.basename(f)} {x['rule']}: start-up code marked as the user's: {u!r}"
                for u in user if re.search(r" (_start|__libc_start\w*)$", u)]
print(f"{sited}/{total} fixture findings have a file:line site")
if total == 0 or sited < 0.8 * total:
    sys.exit("FAIL: fewer than 80%")
if bad:
    sys.exit("FAIL: stacks and sites disagree:\n  " + "\n  ".join(bad))
PY
# SYNCSIGHT_SYMBOLS=0: the analyzer opens no module the trace names, so a native
# program's site falls back to module+offset.
site=$(SYNCSIGHT_SYMBOL_PATH=tests/fixtures/bin SYNCSIGHT_SYMBOLS=0 "${SYNCSIGHT:-build/syncsight}" report --format json \
       tests/fixtures/legacy_stream.sstrace | python3 -c 'import json,sys; print(json.load(sys.stdin)["findings"][0]["site"])')
case "$site" in
    *.cu:[0-9]*) echo "FAIL: SYNCSIGHT_SYMBOLS=0 still symbolized: $site"; exit 1 ;;
    legacy_stream+0x*) echo "ok: SYNCSIGHT_SYMBOLS=0 gives $site" ;;
    *) echo "FAIL: unexpected site with SYNCSIGHT_SYMBOLS=0: $site"; exit 1 ;;
esac
