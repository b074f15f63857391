#!/bin/bash
# Driver-API calls recorded as API records (Triton, CuPy and JAX launch and
# copy through the driver), proven on the CPU with the fake libcupti
# (tests/api_fake_cupti.c) firing CUPTI's driver callbacks as the real one
# would (tests/api_driver_prog.c plays the driver):
#   - each driver call made outside every runtime call is one SS_REC_API
#     record with SS_API_F_DRIVER | SS_API_F_CUPTI_CB, cbid = 0x10000 + CUPTI's
#     driver cbid, its API_NAME without "_v2" (cuMemcpyDtoH, ..._ptsz), its
#     correlation id, return code and the slots of its runtime twin: a
#     launch's stream, grid, block and kernel parameters with their offsets
#     (kernelParams and the packed `extra` buffer), a copy's direction (arg =
#     cudaMemcpyKind) and memory kinds, a memset's bytes (N * 4), the
#     out-parameters of cuStreamCreate / cuMemAlloc (not read when it failed),
#     SS_REC_STREAM for the new stream;
#   - driver calls made inside a runtime call are not recorded: inside the
#     CUPTI runtime path (one cudaMemcpyAsync record) and inside an
#     interposed cudaLaunchKernel (which still gets the kernel parameters
#     from the nested cuLaunchKernel);
#   - the analyzer classifies them (syncsight report runs on the trace).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
PYTHON=${PYTHON:-python3}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$SHIM" ]; then echo "SKIP: $SHIM not built"; exit 77; fi
if [ ! -x "$SYNCSIGHT" ]; then echo "SKIP: $SYNCSIGHT not built"; exit 77; fi
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then echo "SKIP: no CUDA headers under $CUDA_HOME"; exit 77; fi
CUPTI_INC_DIR=${CUPTI_INC_DIR:-$(dirname "$(ls "$CUDA_HOME"/include/cupti.h "$CUDA_HOME"/extras/CUPTI/include/cupti.h 2>/dev/null | head -1)")}
export CUPTI_INC_DIR
SHIM=$(readlink -f "$SHIM")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -Itests -I$CUDA_HOME/include -I$CUPTI_INC_DIR -g"

. tests/fake_cuda.sh
build_fake_cuda "$T/lib" with-cupti || { echo "FAIL: cannot build the fake CUDA libraries"; exit 1; }
$CC $W -O1 -o "$T/prog" tests/api_driver_prog.c -Wl,--no-as-needed "$T/lib/libcudart.so.13" \
    "$T/lib/libcuda.so.1" -Wl,--as-needed -Wl,-rpath,"$T/lib" -ldl

mkdir "$T/out"
if ! env SYNCSIGHT_OUTPUT_DIR="$T/out" SYNCSIGHT_CUPTI_LIB="$T/lib/libcupti.so.13" LD_PRELOAD="$SHIM" \
        "$T/prog" > "$T/values" 2> "$T/stderr"; then
    echo "FAIL: the program failed under the shim:"; cat "$T/stderr"; exit 1
fi
trace=$(ls "$T/out"/*.sstrace | head -1)
"$SYNCSIGHT" dump --json "$trace" > "$T/dump.json"
"$PYTHON" - "$T/values" "$T/dump.json" <<'PY'
import json, sys
vals = dict(l.split() for l in open(sys.argv[1]))
v = {k: int(x) for k, x in vals.items()}
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
apis = [r for r in recs if r.get("type") == "api"]
names = {r["cbid"]: r["name"] for r in recs if r.get("type") == "api_name"}
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)
DRIVER, CUPTI_CB, PTSZ, OFFS = 0x80, 0x2, 0x4, 0x40
def hx(n):
    return "0x%x" % n
def by_corr(c):
    return [r for r in apis if r["corr"] == c]
def one(key, name, ptsz=False):
    rs = by_corr(v[key])
    check(len(rs) == 1, "%s: %d records for corr %d" % (key, len(rs), v[key]))
    if len(rs) != 1:
        return None
    r = rs[0]
    check(r.get("name") == name, "%s: name %r, want %r" % (key, r.get("name"), name))
    check(r["cbid"] >= 0x10000 and names.get(r["cbid"]) == name, "%s: cbid %#x (%r)" % (key, r["cbid"], names.get(r["cbid"])))
    flags = int(r["flags"], 16)
    check(flags & DRIVER and flags & CUPTI_CB, "%s: flags %s lack DRIVER|CUPTI_CB" % (key, r["flags"]))
    check(bool(flags & PTSZ) == ptsz, "%s: PTSZ flag %s" % (key, r["flags"]))
    return r
S1, EV = hx(0x5151000), hx(0x6161000)
buf = v["buf"]
params = [hx(0x1111000), hx(buf + 16), hx(buf + 64), hx(0x2222000)]
r = one("launch", "cuLaunchKernel")
if r:
    check(r["stream"] == S1 and r["func"] == hx(0xF00F) and r["arg"] == 8 and r["arg2"] == 128, "launch slots %s" % r)
    check(r.get("params") == params and r.get("param_offsets") == [8, 16, 32, 48], "launch params %s" % r)
r = one("launch_ex", "cuLaunchKernelEx_ptsz", ptsz=True)
if r:
    check(r["stream"] == S1 and r["arg"] == 3 and r["arg2"] == 128, "launch_ex slots %s" % r)
    # the programmatic event among its launch attributes: recorded by the launch, after its kernel
    check(r["event"] == hx(0x7E7E000) and int(r["flags"], 16) & 0x100 and not int(r["flags"], 16) & 0x200,
          "launch_ex: its programmatic event %s, flags %s" % (r["event"], r["flags"]))
    check(r.get("params") == params and r.get("param_offsets") == [8, 16, 32, 48], "launch_ex params %s" % r)
r = one("kernel_node", "cuGraphAddKernelNode")
if r:   # nothing runs: no stream; the node's kernel parameters as a launch's
    check(r["stream"] == "0x0" and r["func"] == hx(0xF00F), "kernel node slots %s" % r)
    check(r.get("params") == params and r.get("param_offsets") == [8, 16, 32, 48], "kernel node params %s" % r)
r = one("memset_node", "cuGraphAddMemsetNode")
if r:   # 4 rows of 10 2-byte elements, 256 bytes apart: 3 * 256 + 20
    check(r["ptr"] == hx(v["dev"]) and r["bytes"] == 788, "memset node slots %s" % r)
r = one("h2d_async", "cuMemcpyHtoDAsync")
if r:   # cudaMemcpyHostToDevice = 1; SS_MEM_DEVICE 3, PINNED 2
    check(r["arg"] == 1 and r["mem_dst"] == 3 and r["mem_src"] == 2 and r["bytes"] == 1024 and r["stream"] == S1
          and r["ptr"] == hx(v["dev"]) and r["ptr2"] == hx(v["pinned"]), "h2d slots %s" % r)
r = one("d2h", "cuMemcpyDtoH")
if r:   # cudaMemcpyDeviceToHost = 2, PAGEABLE 1
    check(r["arg"] == 2 and r["mem_dst"] == 1 and r["mem_src"] == 3 and r["bytes"] == 512, "d2h slots %s" % r)
r = one("copy2d", "cuMemcpy2DAsync_ptsz", ptsz=True)
if r:
    check(r["arg"] == 2 and r["mem_dst"] == 2 and r["mem_src"] == 3 and r["bytes"] == 512 and r["stream"] == S1
          and r["ptr"] == hx(v["pinned"]), "copy2d slots %s" % r)
r = one("memset", "cuMemsetD32Async")
if r:
    check(r["bytes"] == 400 and r["arg"] == 0xABCD and r["mem_dst"] == 3 and r["stream"] == S1, "memset slots %s" % r)
r = one("record", "cuEventRecord")
if r:
    check(r["stream"] == S1 and r["event"] == EV, "record slots %s" % r)
r = one("create", "cuStreamCreate")
if r:
    check(r["stream"] == hx(0x7171000) and r["arg"] == 1, "create slots %s" % r)
    check(any(x.get("type") == "stream" and x.get("handle") == hx(0x7171000) for x in recs), "no STREAM record for the new stream")
r = one("ipc_open", "cuIpcOpenEventHandle")
if r:   # the event handle the driver wrote
    check(r["event"] == hx(0x7E9E000), "ipc_open: event %s" % r["event"])
r = one("wait", "cuStreamWaitEvent_ptsz", ptsz=True)
if r:
    check(r["stream"] == hx(0x7171000) and r["event"] == EV, "wait slots %s" % r)
r = one("alloc", "cuMemAlloc")
if r:
    check(r["ptr"] == hx(0x8181000) and r["bytes"] == 4096 and r["ret"] == 0, "alloc slots %s" % r)
r = one("alloc_failed", "cuMemAlloc")
if r:
    check(r["ptr"] == "0x0" and r["ret"] == 2, "failed alloc %s" % r)
r = one("map", "cuMemMap")
if r:
    check(r["ptr"] == hx(0xA0000000) and r["bytes"] == 2 << 20 and r["ret"] == 0, "map slots %s" % r)
r = one("unmap", "cuMemUnmap")
if r:
    check(r["ptr"] == hx(0xA0000000) and r["bytes"] == 2 << 20 and r["ret"] == 0, "unmap slots %s" % r)
r = one("green_create", "cuGreenCtxStreamCreate")
if r:   # a green context's stream: non-blocking, its priority
    check(r["stream"] == hx(0x7272000) and r["arg"] == 1 and r["arg2"] == -2, "green stream create slots %s" % r)
    check(any(x.get("type") == "stream" and x.get("handle") == hx(0x7272000) and x.get("kind") == 2 for x in recs),
          "no non-blocking STREAM record for the green context's stream")
for key, arg in (("green_record", 1), ("green_wait", 2)):
    r = one(key, "cuGreenCtxRecordEvent" if arg == 1 else "cuGreenCtxWaitEvent")
    if r:   # context-wide event calls: the event, the context handle, 1 record / 2 wait
        check(r["event"] == EV and r["ptr"] == hx(0x6A6A000) and r["arg"] == arg, "%s slots %s" % (key, r))
# SS_REC_THREAD_CONTEXT: the thread's context before its first call with one,
# and at each change (3 for the green stream's creation, then 1 again)
tc = [r for r in recs if r.get("type") == "thread_context"]
check([r["context"] for r in tc] == [1, 3, 1], "thread contexts %s" % [(r["context"], r["t_ms"]) for r in tc])
gr = by_corr(v["green_create"])
if len(tc) == 3 and gr:
    wait = by_corr(v["wait"])
    check(tc[1]["t_ms"] == gr[0]["t_ms"] and wait and tc[2]["t_ms"] == wait[0]["t_ms"],
          "thread contexts at the calls that changed it: %s" % tc)
    check(all(r["tid"] == gr[0]["tid"] for r in tc), "thread contexts of another thread: %s" % tc)
one("sync", "cuStreamSynchronize_ptsz", ptsz=True)
one("ctxsync", "cuCtxSynchronize")
# nested: one runtime record, no driver record
check(len(by_corr(v["nested_copy"])) == 0, "the driver copy inside a runtime call was recorded")
rt = by_corr(v["runtime_copy"])
check(len(rt) == 1 and rt[0]["name"] == "cudaMemcpyAsync" and not int(rt[0]["flags"], 16) & DRIVER,
      "the runtime call around it: %s" % rt)
launches = [r for r in apis if r.get("name") == "cudaLaunchKernel"]
check(len(launches) == 1 and launches[0].get("params") == params, "interposed launch: %s" % launches)
drv = [r for r in apis if int(r["flags"], 16) & DRIVER]
check(len(drv) == 21, "%d driver records, want 21: %s" % (len(drv), [r["name"] for r in drv]))
if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("ok: %d driver records" % len(drv))
PY
# The analyzer reads them (classes from the generated table): no crash, and
# the dump names them.
"$SYNCSIGHT" report "$trace" > "$T/report" 2>&1 || { echo "FAIL: syncsight report failed:"; cat "$T/report"; exit 1; }
"$SYNCSIGHT" dump "$trace" | grep -q 'cuMemcpyHtoDAsync' || { echo "FAIL: dump does not name cuMemcpyHtoDAsync"; exit 1; }
echo "PASS: driver-API calls recorded once, as their runtime twins are"
