#!/bin/bash
# A real 2-rank torchrun job (recorded on 2x H200, tests/fixtures/torchrun_2ranks/:
# one trace per rank) reported as a directory: each process and the total, and
# the findings NCCL's own calls produce (waits on never-recorded events,
# small pageable copies, all inside NVTX ranges "nccl...") are info, marked
# "inside NCCL", never warnings or errors against the user's code; a range
# whose end CUPTI never reported claims only the calls made before Python
# ran again.
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
# NCCL 2.24+ ends ncclCommInitRankConfig's and ncclCommFinalize's ranges with
# nvtxRangePopPayload, which CUPTI does not report: in these traces both are
# open until the process exits.  Such a range claims only the calls made
# while Python was still in the call that entered it (init_process_group at
# line 50, destroy_process_group at line 57), never the user's later calls
# (all_gather_object's copy and sync at line 54: they were claimed before).
claims = {"ncclCommInitRankConfig": ":50 ", "ncclCommFinalize": ":57 "}
for f in nccl:
    for rng, line in claims.items():
        if f"inside NCCL ({rng})" in f["message"]:
            assert line in (f.get("site") or "") + " ", (rng, f.get("site"), f["message"][:120])
at54 = [f for f in d["findings"] if ":54 " in (f.get("site") or "") + " "]
assert at54, "the fixture's findings at line 54 (all_gather_object) are gone"
assert not [f for f in at54 if "inside NCCL" in f["message"]], "a call after ncclCommInitRankConfig returned was claimed by its unclosed range"
# ... nor shown as inside it (the calls' "nvtx": every consumer asks ss_model_call_nvtx)
shown = [c.get("nvtx") for f in at54 for c in f.get("calls", []) if (c.get("nvtx") or "").startswith("nccl")]
assert not shown, f"calls at line 54 shown inside {shown}"
PY
"$S" report --fail-on warning "$D" > /dev/null 2>&1 || fail "--fail-on warning failed on a job whose only findings are NCCL-internal"
echo "ok: 2 processes, total, NCCL-internal findings are info"
