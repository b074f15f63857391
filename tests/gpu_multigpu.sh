#!/bin/bash
# Multi-GPU and multi-process rows of issue 7 (docs/robustness.md).  Run by
# the lead on the 2-GPU machine (nvidia-h200-x2) after `make all`:
#
#     bash tests/gpu_multigpu.sh
#
#   multigpu_fence / multigpu_fence_fixed: producer on GPU 0, consumer on GPU 1
#     through peer access, without / with a cross-device event wait, plus a
#     cudaMemcpyPeerAsync and both devices' legacy streams; findings checked
#     against the .expect files, and the trace must really span two devices.
#   torchrun: `syncsight run -o DIR -- python3 -m torch.distributed.run
#     --nproc_per_node=2 test_programs/torchrun_ranks.py`: one trace per rank
#     process, and `syncsight report DIR` reports each process and a total.
#   torch_ddp_train, torch_fsdp2_train: strangers' DDP and FSDP2 training
#     (NCCL; bucketed all-reduce overlapping backward / all-gathers and
#     reduce-scatters on streams of their own) under torchrun with 2 ranks;
#     each rank's report checked against test_programs/<name>.expect.
# Prints PASS/FAIL/SKIP per check and "N passed, N failed[, N skipped]".
# With fewer than 2 GPUs every check SKIPs and the script exits 77.
# Environment: NVCC, NVCC_ARCH (-arch=sm_90), CUDA_HOME, PYTHON (python3),
# MULTIGPU_OUT (build/gpu-multigpu).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
NVCC_ARCH=${NVCC_ARCH:--arch=sm_90}
PYTHON=${PYTHON:-python3}
OUT=${MULTIGPU_OUT:-build/gpu-multigpu}
SYNCSIGHT=$ROOT/build/syncsight
TP=$ROOT/test_programs
# NVLink multicast stays off on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

[ -x "$SYNCSIGHT" ] && [ -f "$ROOT/build/libsyncsight.so" ] || { echo "gpu_multigpu: build/syncsight or build/libsyncsight.so missing (make all)"; exit 2; }
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
if [ "${gpus:-0}" -lt 2 ]; then
    echo "SKIP multigpu_fence (needs 2 GPUs, found ${gpus:-0})"
    echo "SKIP multigpu_fence_fixed (needs 2 GPUs, found ${gpus:-0})"
    echo "SKIP torchrun (needs 2 GPUs, found ${gpus:-0})"
    echo "SKIP torch_ddp_train (needs 2 GPUs, found ${gpus:-0})"
    echo "SKIP torch_fsdp2_train (needs 2 GPUs, found ${gpus:-0})"
    echo "0 passed, 0 failed, 5 skipped"
    echo "gpu_multigpu: needs a machine with 2 GPUs (nvidia-smi lists ${gpus:-0}); run it on nvidia-h200-x2"
    exit 77
fi
rm -rf "$OUT"; mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
passed=0 failed=0 skipped=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "SKIP $1 ($2)"; skipped=$((skipped + 1)); }

# ---- two devices, one process
for n in multigpu_fence multigpu_fence_fixed; do
    if ! "$NVCC" $NVCC_ARCH -O2 -g -lineinfo -std=c++17 -o "$OUT/bin/$n" "$TP/$n.cu" > "$OUT/$n.build.log" 2>&1; then
        fail "$n" "does not build: $(tail -n 5 "$OUT/$n.build.log" | tr '\n' ' ')"; continue
    fi
    "$OUT/bin/$n" > "$OUT/$n.plain.out" 2> "$OUT/$n.plain.err"; plain_rc=$?
    timeout 300 "$SYNCSIGHT" run -o "$OUT/$n.sstrace" --no-report -- "$OUT/bin/$n" > "$OUT/$n.shim.out" 2> "$OUT/$n.shim.err"
    rc=$?
    if [ "$rc" != 0 ] || [ "$plain_rc" != 0 ] || ! cmp -s "$OUT/$n.plain.out" "$OUT/$n.shim.out"; then
        fail "$n" "exit $plain_rc plain, $rc under the shim, or stdout differs: $(tail -n 3 "$OUT/$n.shim.err" | tr '\n' ' ')"; continue
    fi
    "$SYNCSIGHT" report --format json "$OUT/$n.sstrace" > "$OUT/$n.json" 2> "$OUT/$n.report.err"
    "$SYNCSIGHT" dump --json "$OUT/$n.sstrace" > "$OUT/$n.dump.jsonl" 2> "$OUT/$n.dump.err"
    # The trace must show kernels on both devices, a peer copy, and a context
    # per device: otherwise the run proved nothing about two GPUs.
    devices=$("$PYTHON" - "$OUT/$n.dump.jsonl" << 'PY'
import json, sys
kernel_devices, contexts, peer = set(), set(), 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    t = r.get("type")
    if t == "kernel":
        kernel_devices.add(r.get("device"))
    elif t == "context":
        contexts.add(r.get("device"))
    elif t == "memcpy" and (r.get("copy_kind") in (10, "PtoP", "peer") or r.get("src_device") != r.get("dst_device")):
        peer += 1
print(f"kernel-devices={len(kernel_devices)} contexts={len(contexts)} peer-copies={peer}")
PY
)
    if ! grep -q "kernel-devices=2 contexts=2 peer-copies=[1-9]" <<< "$devices"; then
        fail "$n" "trace does not span two devices ($devices; dump: $OUT/$n.dump.jsonl)"; continue
    fi
    if "$PYTHON" tests/check_findings.py --name "$n" "$OUT/$n.json" "$TP/$n.expect" > "$OUT/$n.check" 2>&1; then
        pass "$n ($devices)"
    else fail "$n" "findings differ from $TP/$n.expect: $(tr '\n' ' ' < "$OUT/$n.check")"; fi
done

# ---- several processes: torchrun with 2 ranks
torch2=0   # can torch see 2 GPUs? (torchrun and the DDP script need it)
"$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.device_count() >= 2 else 1)' > "$OUT/torch-probe.log" 2>&1 && torch2=1
if [ $torch2 = 0 ]; then
    skip torchrun "$PYTHON cannot import torch or sees fewer than 2 GPUs: $(tail -n 1 "$OUT/torch-probe.log")"
else
    mkdir -p "$OUT/torchrun"
    timeout 600 "$SYNCSIGHT" run -o "$OUT/torchrun/" --no-report -- "$PYTHON" -m torch.distributed.run \
        --nproc_per_node=2 --master_port=29533 "$TP/torchrun_ranks.py" > "$OUT/torchrun.out" 2> "$OUT/torchrun.err"
    rc=$?
    ntr=$(ls "$OUT"/torchrun/*.sstrace 2> /dev/null | wc -l)
    "$SYNCSIGHT" report "$OUT/torchrun" > "$OUT/torchrun.report.txt" 2> "$OUT/torchrun.report.err"; rrc=$?
    "$SYNCSIGHT" report --format json "$OUT/torchrun" > "$OUT/torchrun.json" 2>> "$OUT/torchrun.report.err"
    check=$("$PYTHON" - "$OUT/torchrun.json" "$OUT/torchrun" << 'PY'
import json, sys, glob, os, struct
report = json.load(open(sys.argv[1]))
traces = report.get("traces", [])
problems = []
# Which trace files belong to rank processes: those with kernels (the
# launcher, if it left a trace at all, launches none).
with_gpu = [t for t in traces if any(d.get("gpu_busy_ms", 0) > 0 for d in t.get("summary", {}).get("devices", []))]
if len(with_gpu) != 2:
    problems.append(f"{len(with_gpu)} traces with GPU work (want 2, one per rank)")
devs = sorted({d["device"] for t in with_gpu for d in t["summary"]["devices"] if d.get("gpu_busy_ms", 0) > 0})
if devs != [0, 1]:
    problems.append(f"ranks used devices {devs}, want [0, 1]")
pids = {t.get("pid") for t in traces}
if len(pids) != len(traces):
    problems.append("two traces with the same pid")
if report.get("summary", {}).get("processes") != len(traces):
    problems.append(f"total says {report.get('summary', {}).get('processes')} processes, {len(traces)} traces listed")
if len(traces) != len(glob.glob(os.path.join(sys.argv[2], "*.sstrace"))):
    problems.append("report lists a different number of traces than the directory holds")
print("; ".join(problems) or f"ok: {len(traces)} traces, {len(with_gpu)} with GPU work on devices {devs}")
PY
)
    agree=$(grep -c "all ranks agree: True" "$OUT/torchrun.out")
    if [ "$rc" = 0 ] && [ "$agree" = 2 ] && [ "$rrc" = 0 ] && [[ "$check" == ok:* ]]; then
        pass "torchrun ($check)"
    else fail torchrun "exit $rc, $agree ranks agreed, report exit $rrc, $check (logs: $OUT/torchrun.err)"; fi
    # The text report must name each process and end with a total.
    pids_in_text=0
    for f in "$OUT"/torchrun/*.sstrace; do
        p=$(basename "$f" .sstrace); p=${p##*.}
        grep -q "$p" "$OUT/torchrun.report.txt" && pids_in_text=$((pids_in_text + 1))
    done
    if [ "$pids_in_text" = "$ntr" ] && grep -qi "total" "$OUT/torchrun.report.txt"; then pass "torchrun:text-report ($ntr processes named, total present)"
    else fail torchrun:text-report "$pids_in_text of $ntr pids named in $OUT/torchrun.report.txt, or no total"; fi
fi

# ---- strangers' data-parallel training, 2 ranks: each rank's findings against its expect
#   torch_ddp_train: DDP (bucketed all-reduce overlapping backward);
#   torch_fsdp2_train: FSDP2 (fully_shard: all-gathers prefetched on streams
#   of their own, reduce-scatters on another, ordered by CUDA events).
port=29534
for n in torch_ddp_train torch_fsdp2_train; do
    port=$((port + 1))
    if [ $torch2 = 0 ]; then
        skip $n "$PYTHON cannot import torch or sees fewer than 2 GPUs"; continue
    fi
    mkdir -p "$OUT/$n"
    timeout 600 "$SYNCSIGHT" run -o "$OUT/$n/" --no-report -- "$PYTHON" -m torch.distributed.run \
        --nproc_per_node=2 --master_port=$port "$TP/$n.py" > "$OUT/$n.out" 2> "$OUT/$n.err"
    rc=$?
    agree=$(grep -c "weights agree: True" "$OUT/$n.out")
    ranks=0 bad=""
    for f in "$OUT/$n"/*.sstrace; do
        [ -f "$f" ] || continue
        b=$(basename "$f" .sstrace)
        "$SYNCSIGHT" report --format json "$f" > "$OUT/$n/$b.json" 2> "$OUT/$n/$b.report.err"
        # the launcher's own trace, if any, has no GPU work: not a rank
        "$PYTHON" -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r.get("traces",[r])[0]; sys.exit(0 if any(d.get("gpu_busy_ms",0)>0 for d in t.get("summary",{}).get("devices",[])) else 1)' "$OUT/$n/$b.json" || continue
        ranks=$((ranks + 1))
        "$PYTHON" tests/check_findings.py --name "$n:$b" "$OUT/$n/$b.json" "$TP/$n.expect" > "$OUT/$n/$b.check" 2>&1 ||
            bad="$bad $b: $(tr '\n' ' ' < "$OUT/$n/$b.check")"
    done
    if [ "$rc" = 0 ] && [ "$agree" = 2 ] && [ "$ranks" = 2 ] && [ -z "$bad" ]; then pass "$n (2 ranks, findings as expected)"
    else fail $n "exit $rc, $agree ranks agreed, $ranks rank traces;$bad (logs: $OUT/$n.err)"; fi
done

echo "$passed passed, $failed failed$([ $skipped -gt 0 ] && echo ", $skipped skipped")"
[ $failed = 0 ]
