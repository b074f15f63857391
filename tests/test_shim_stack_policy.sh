#!/bin/bash
# CPU check of the shim's call-stack policy (preload/callsite.c) through the
# interposer and the fake libcudart.so.13:
#   SYNCSIGHT_STACKS=1 (default): cudaSetDevice and stream creation get a
#     stack; launches on a non-default stream are sampled per (kernel, call
#     site): launches 1-4 and then every 256th are unwound (their real stack),
#     the others carry the stack captured last; legacy-stream launches are all
#     unwound;
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

# Default policy: sampled launches.
other, sampled, legacy = split(api(1))
for name, _, sid in other:
    if sid == 0:
        fail("SYNCSIGHT_STACKS=1: %s has no stack" % name)
if 0 in legacy:
    fail("SYNCSIGHT_STACKS=1: a legacy-stream launch has no stack: %s" % legacy)
if len(set(legacy[:3])) != 3:
    fail("SYNCSIGHT_STACKS=1: legacy-stream launches were not each unwound: %s" % legacy)
ids = sampled[:3]
if len(set(ids)) != 3 or 0 in ids:
    fail("SYNCSIGHT_STACKS=1: the first launches were not unwound: %s" % sampled[:4])
unwound, last = 0, None
for k, sid in enumerate(sampled, 1):
    captured = k <= FULL_FIRST or (k - FULL_FIRST) % EVERY == 0
    want = ids[(k - 1) % 3] if captured else last
    if sid != want:
        fail("SYNCSIGHT_STACKS=1: launch %d has stack %d, expected %d (%s)"
             % (k, sid, want, "unwound" if captured else "cached"))
    unwound += captured
    last = want
# Off: nothing.
if any(r[2] for r in api(0)):
    fail("SYNCSIGHT_STACKS=0: a record has a stack")
print("PASS: stack policy (%d of %d launches unwound, the rest cached; set-device/stream-create/legacy launches full)"
      % (unwound, N))
PY
