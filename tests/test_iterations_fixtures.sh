#!/bin/bash
# The setup / steady-state split (analyzer/iterations.c) on real traces in
# tests/fixtures/: the iterations found, and where the steady state starts.
set -u
cd "$(dirname "$0")/.."
SYNCSIGHT=${SYNCSIGHT:-build/syncsight}
PYTHON=${PYTHON:-python3}
fail=0

# check NAME PYTHON-EXPRESSION-ON-it (the trace's "iterations" member, or None)
check() {
    local name=$1 cond=$2 trace=tests/fixtures/$1.sstrace
    [ -e "$trace" ] || { echo "SKIP $name: no fixture"; return; }
    if ! "$SYNCSIGHT" report --format json "$trace" | "$PYTHON" -c "
import json, sys
it = json.load(sys.stdin)['traces'][0]['iterations']
ok = $cond
print('$name:', json.dumps(it))
sys.exit(0 if ok else 1)"; then
        echo "FAIL $name: iterations do not satisfy: $cond"
        fail=1
    fi
}

# item_in_loop.py: 30 steps of the same calls; the first (allocations, cuBLAS
# set-up) is setup, the other 29 the steady state, found from the calls.
check item_in_loop "it and it['found_by'] == 'call-pattern' and 27 <= it['count'] <= 30 and not it['setup_dominates']"
# pageable_d2h_loop.cu / device_sync_loop.cu: C++ loops of ten iterations.
check pageable_d2h_loop "it and it['count'] == 10 and not it['setup_dominates']"
check device_sync_loop "it and it['count'] == 10 and not it['setup_dominates']"
# nothing repeats that submits GPU work (PyTorch creating its stream pool is
# a run of identical calls, not an iteration): the whole run is steady.
check missing_record_stream "it is None"
check threading_handoff "it is None"
# a one-off script whose setup does more GPU work than its short loop: setup
# dominates, its findings are shown and counted.
check nonblocking_pageable "it and it['setup_dominates']"
# torchrun_ranks.py, two ranks: NCCL's communicator set-up maps and clears
# buffers in a tight loop of 7 calls (inside its ranges "nccl..."), once
# taken for the steady state; the program's own loop is the step's four
# matmul + tanh + add (3 calls each).  Every rank's trace.
dir=tests/fixtures/torchrun_2ranks
if [ -d "$dir" ]; then
    if ! "$SYNCSIGHT" report --format json "$dir" | "$PYTHON" -c "
import json, sys
its = [t['iterations'] for t in json.load(sys.stdin)['traces']]
print('torchrun_2ranks:', json.dumps(its))
sys.exit(0 if len(its) == 2 and all(it and 'pattern of 3 calls' in it['what'] and it['count'] >= 3 for it in its) else 1)"; then
        echo "FAIL torchrun_2ranks: the steady state is not the ranks' own loop"
        fail=1
    fi
fi
exit $fail
