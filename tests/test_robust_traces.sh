#!/bin/bash
# CPU rows of issue 7 about the analyzer's inputs (docs/robustness.md):
#  - several processes: a job whose parent and fork child each write a trace;
#    `syncsight report DIR` reports each process and the total (text, JSON);
#  - bad traces never crash or hang the analyzer: every truncation point of a
#    real trace, seeded random byte flips, garbage and empty files through
#    report (text/json), dump and export html; the exit status must be 0 or 2
#    (never a signal, never a timeout).
# The traces come from the shim's SYNCSIGHT_SELFTEST hook (no GPU).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac   # absolute: the test runs programs elsewhere
LIB=$BUILD/libsyncsight.so
SS=$BUILD/syncsight
PYTHON=${PYTHON:-python3}
for f in "$LIB" "$SS"; do [ -f "$f" ] || { echo "test_robust_traces: $f missing (make all)"; exit 1; }; done
command -v "$PYTHON" > /dev/null || { echo "python3 not found"; exit 77; }
T=$(mktemp -d /tmp/ss_robust_tr.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAIL=0
fail() { echo "FAIL: $*"; FAIL=1; }
ok() { echo "ok: $*"; }
cat > "$T/prog.c" << 'EOF'
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
int main(void)
{
    pid_t c = fork();
    if (c == 0) exit(0);
    int status;
    waitpid(c, &status, 0);
    return 0;
}
EOF
cc -o "$T/forker" "$T/prog.c" || { echo "cannot build the test program"; exit 1; }

# 1. Two processes -> two traces -> one report with each and a total.
( cd "$T" && LD_PRELOAD="$LIB" SYNCSIGHT_SELFTEST=50 SYNCSIGHT_OUTPUT_DIR="$T/job" "$T/forker" 2> /dev/null )
n=$(ls "$T"/job/*.sstrace 2> /dev/null | wc -l)
"$SS" report "$T/job" > "$T/report.txt" 2> "$T/report.err"; rc_text=$?
"$SS" report --format json "$T/job" > "$T/report.json" 2>> "$T/report.err"; rc_json=$?
check=$("$PYTHON" - "$T/report.json" "$T/job" << 'PY'
import json, sys, os
r = json.load(open(sys.argv[1]))
traces = r.get("traces", [])
pids = sorted(t.get("pid") for t in traces)
files = sorted(int(f.split(".")[-2]) for f in os.listdir(sys.argv[2]) if f.endswith(".sstrace"))
problems = []
if pids != files: problems.append(f"report pids {pids} != trace files {files}")
if r.get("summary", {}).get("processes") != len(files): problems.append(f"summary.processes = {r.get('summary', {}).get('processes')}")
print("; ".join(problems) or "ok")
PY
)
pids_named=0
for f in "$T"/job/*.sstrace; do p=$(basename "$f" .sstrace); p=${p##*.}; grep -q "$p" "$T/report.txt" && pids_named=$((pids_named + 1)); done
if [ "$n" = 2 ] && [ $rc_text = 0 ] && [ $rc_json = 0 ] && [ "$check" = ok ] && [ $pids_named = 2 ] &&
   grep -q "total over 2 processes" "$T/report.txt"; then ok "report DIR: 2 processes and a total"
else fail "report DIR: $n traces, rc $rc_text/$rc_json, json: $check, $pids_named pids in text, $(tail -n 3 "$T/report.txt" | tr '\n' ' ')"; fi

# 2. Damaged traces.
good=$(ls "$T"/job/*.sstrace | head -1)
mkdir -p "$T/bad"
"$PYTHON" - "$good" "$T/bad" << 'PY'
import os, random, sys
data = open(sys.argv[1], "rb").read()
out = sys.argv[2]
rng = random.Random(7)
def put(name, blob):
    with open(os.path.join(out, name + ".sstrace"), "wb") as f:
        f.write(blob)
put("empty", b"")
put("magic-only", data[:8])
put("garbage", bytes(rng.randrange(256) for _ in range(4096)))
put("header-garbage", data[:256] + bytes(rng.randrange(256) for _ in range(4096)))
# Every truncation point in the first 4 KiB, then every 97th byte.
cuts = list(range(0, min(len(data), 4096), 7)) + list(range(4096, len(data), 97))
for c in cuts:
    put(f"cut{c}", data[:c])
# Byte flips (CRC-protected payload, but headers and sizes too).
for i in range(150):
    b = bytearray(data)
    for _ in range(rng.randrange(1, 8)):
        pos = rng.randrange(len(b))
        b[pos] = rng.randrange(256)
    put(f"flip{i}", bytes(b))
# Block header claiming a huge payload / record sizes of 0 and 0xffffffff.
b = bytearray(data)
if len(b) > 256 + 16:
    b[256 + 4:256 + 8] = (0xFFFFFFF0).to_bytes(4, "little")
    put("huge-block", bytes(b))
PY
count=0 bad=0 worst=""
for f in "$T"/bad/*.sstrace; do
    for cmd in "report" "report --format json" "dump" "dump --json" "export --format html -o $T/out.html"; do
        # shellcheck disable=SC2086 # cmd is several words on purpose
        timeout 20 "$SS" $cmd "$f" > /dev/null 2> "$T/err"
        rc=$?
        count=$((count + 1))
        if [ $rc != 0 ] && [ $rc != 2 ]; then
            bad=$((bad + 1)); [ -z "$worst" ] && worst="$(basename "$f") '$cmd' -> exit $rc: $(head -c 200 "$T/err")"
        fi
    done
done
if [ $bad = 0 ]; then ok "damaged traces: $count analyzer runs over $(ls "$T/bad" | wc -l) files, none crashed or hung"
else fail "damaged traces: $bad of $count runs crashed, hung or exited oddly; first: $worst"; fi

# 3. A trace cut mid-block still reports what came before, with a warning.
size=$(stat -c %s "$good")
head -c $((size - 5)) "$good" > "$T/cut.sstrace"
"$SS" report --format json "$T/cut.sstrace" > "$T/cut.json" 2> "$T/cut.err"; rc=$?
if [ $rc = 0 ] && grep -q "truncated" "$T/cut.err" &&
   "$PYTHON" -c 'import json,sys; t=json.load(open(sys.argv[1]))["traces"][0]; sys.exit(0 if t["truncated"] and t["records"] > 0 else 1)' "$T/cut.json"; then
    ok "cut trace: analyzed up to its last block, marked truncated"
else fail "cut trace: rc $rc, stderr $(cat "$T/cut.err")"; fi

[ $FAIL = 0 ] && echo "test_robust_traces: all passed"
exit $FAIL
