#!/bin/bash
# CPU check of the shim's call-stack policy (preload/callsite.c) through the
# interposer and the fake libcudart.so.13:
#   SYNCSIGHT_STACKS=1 (default): cudaSetDevice and stream creation get a
#     stack; launches (non-default and legacy stream alike) go through the
#     verified per-thread cache, and every one must carry its own real stack:
#     the program launches one kernel from one wrapper return address through
#     three different chains of callers in turn, which the old cache (keyed by
#     kernel and return address) gave the stack captured last;
#   SYNCSIGHT_STACKS=2: every launch carries its own real stack;
#   SYNCSIGHT_STACKS=0: no stacks.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
CC=${CC:-cc}
PYTHON=${PYTHON:-python3}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$SHIM" ] || [ ! -x "$BUILD/syncsight" ]; then echo "SKIP: $SHIM or $BUILD/syncsight not built"; exit 77; fi
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then echo "SKIP: no CUDA headers under $CUDA_HOME"; exit 77; fi
SHIM=$(readlink -f "$SHIM")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -I$CUDA_HOME/include -g"
. tests/fake_cuda.sh
build_fake_cuda "$T/lib" cudart-only || { echo "FAIL: cannot build the fake libcudart"; exit 1; }
$CC $W -O1 -o "$T/prog" tests/api_sample_prog.c "$T/lib/libcudart.so.13" -Wl,-rpath,"$T/lib"

run() {  # mode -> $T/dump.<mode>
    mkdir -p "$T/out$1"
    env SYNCSIGHT_STACKS="$1" SYNCSIGHT_CUPTI=0 SYNCSIGHT_OUTPUT_DIR="$T/out$1" LD_PRELOAD="$SHIM" "$T/prog" \
        || { echo "FAIL: prog failed under SYNCSIGHT_STACKS=$1"; exit 1; }
    "$BUILD/syncsight" dump "$T"/out"$1"/*.sstrace > "$T/dump.$1"
}
run 0; run 1; run 2

"$PYTHON" - "$T" <<'PY'
import re, sys
T = sys.argv[1]
FULL_FIRST, EVERY, N = 4, 256, 600

def api(mode):
    recs = []
    for line in open("%s/dump.%s" % (T, mode)):
        m = re.match(r'api name="([^"]+)" .*? stream=(\S+) .* stack=(\d+) ', line)
        if m:
            recs.append((m.group(1), m.group(2), int(m.group(3))))
    return recs

def fail(msg):
    print("FAIL:", msg); sys.exit(1)

def split(recs):
    other = [r for r in recs if r[0] != "cudaLaunchKernel"]
    launches = [r for r in recs if r[0] == "cudaLaunchKernel"]
    sampled = [r[2] for r in launches if r[1] != "0x0"]
    legacy = [r[2] for r in launches if r[1] == "0x0"]
    if len(sampled) != N or len(legacy) != 10:
        fail("expected %d + 10 launches, got %d + %d" % (N, len(sampled), len(legacy)))
    return other, sampled, legacy

# Every call, fully: the three depths give three stacks, in turn.
_, full, legacy2 = split(api(2))
depth_id = full[:3]
if len(set(depth_id)) != 3 or 0 in depth_id:
    fail("SYNCSIGHT_STACKS=2: launches at 3 depths did not give 3 stacks: %s" % depth_id)
for k, sid in enumerate(full):
    if sid != depth_id[k % 3]:
        fail("SYNCSIGHT_STACKS=2: launch %d has stack %d, expected %d" % (k + 1, sid, depth_id[k % 3]))

# Default policy: cached launches, each with its own stack: the same three
# stacks in turn as under SYNCSIGHT_STACKS=2.
other, sampled, legacy = split(api(1))
for name, _, sid in other:
    if sid == 0:
        fail("SYNCSIGHT_STACKS=1: %s has no stack" % name)
for what, ids_all in (("non-default", sampled), ("legacy", legacy)):
    ids = ids_all[:3]
    if len(set(ids)) != 3 or 0 in ids:
        fail("SYNCSIGHT_STACKS=1: %s-stream launches at 3 depths did not give 3 stacks: %s" % (what, ids))
    for k, sid in enumerate(ids_all):
        if sid != ids[k % 3]:
            fail("SYNCSIGHT_STACKS=1: %s-stream launch %d has stack %d, its own is %d"
                 % (what, k + 1, sid, ids[k % 3]))
# Same frames as the full unwinds: the stacks of mode 1 and mode 2 symbolize alike.
def stacks(mode):
    # Addresses as (module path, offset): the two runs load at different bases.
    mods, raw, out = [], {}, {}
    for line in open("%s/dump.%s" % (T, mode)):
        m = re.match(r'module base=(\S+) size=(\S+) .*?path="([^"]*)"', line)
        if m:
            mods.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
        m = re.match(r'stack id=(\d+) depth=\d+ addrs=(\S+)', line)
        if m:
            raw[int(m.group(1))] = [int(a, 16) for a in m.group(2).split(",")]
    for sid, addrs in raw.items():
        out[sid] = [next(((p, a - b) for b, n, p in mods if b <= a < b + n), ("?", a)) for a in addrs]
    return out
s1, s2 = stacks(1), stacks(2)
for k in range(3):
    if s1.get(sampled[k]) != s2.get(full[k]):
        fail("SYNCSIGHT_STACKS=1: launch %d's stack %s differs from the full unwind's %s"
             % (k + 1, s1.get(sampled[k]), s2.get(full[k])))
# One chain of frames is one stack in the trace, however the cache learnt it
# (verified with its return-address slots, or unwound without them).
for mode, st in ((1, s1), (2, s2)):
    seen = {}
    for sid, frames in sorted(st.items()):
        key = tuple(frames)
        if key in seen:
            fail("SYNCSIGHT_STACKS=%d: stacks %d and %d hold the same frames" % (mode, seen[key], sid))
        seen[key] = sid
# Off: nothing.
if any(r[2] for r in api(0)):
    fail("SYNCSIGHT_STACKS=0: a record has a stack")
print("PASS: stack policy (%d launches, each with its own stack through the verified cache)" % (N + 10))
PY
