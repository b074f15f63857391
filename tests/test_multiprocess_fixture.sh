#!/bin/bash
# A real 2-rank torchrun job (recorded on 2x H200, tests/fixtures/torchrun_2ranks/:
# one trace per rank) reported as a directory: each process and the total, and
# the findings NCCL's own calls produce (waits on never-recorded events,
# small pageable copies, all inside NVTX ranges "nccl...") are info, marked
# "inside NCCL", never warnings or errors against the user's code.
set -u
cd "$(dirname "$0")/.."
S=${SYNCSIGHT:-build/syncsight}
D=tests/fixtures/torchrun_2ranks
[ -d "$D" ] || { echo "SKIP: no $D"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
out=$("$S" report "$D" 2>&1) || fail "report DIR exited $?"
[ "$(grep -c '^process [0-9]* (' <<< "$out")" = 2 ] || fail "expected 2 processes in: $out"
grep -qi "total" <<< "$out" || fail "no total in the report"
json=$("$S" report --format json "$D") || fail "report --format json"
python3 - "$json" <<'PY' || exit 1
import json, sys
d = json.loads(sys.argv[1])
assert len(d["traces"]) == 2, "two traces"
assert d["summary"]["processes"] == 2, d["summary"]
pids = {f["process"] for f in d["findings"]}
assert pids <= {t["pid"] for t in d["traces"]}, pids
nccl = [f for f in d["findings"] if "inside NCCL" in f["message"]]
assert nccl, "NCCL-internal findings are still shown (as info)"
bad = [f for f in nccl if f["severity"] != "info"]
assert not bad, bad[0]
PY
"$S" report --fail-on warning "$D" > /dev/null 2>&1 || fail "--fail-on warning failed on a job whose only findings are NCCL-internal"
echo "ok: 2 processes, total, NCCL-internal findings are info"
