#!/bin/bash
# The GPU suite (`make gpu-test`, `make gpu-test-quick`, `make fixtures`).
#
# Builds test_programs/*.cu with nvcc, runs every program and PyTorch script
# under `syncsight run`, analyzes each trace with `syncsight report --format
# json` and checks it against <name>.expect (tests/check_findings.py).  Also:
#   - capture_basic built three ways (shared cudart, static cudart, per-thread
#     default stream): the recorded API calls must agree (compare_api_counts.py);
#   - every program with a <name>.ptds.expect is also built from the same
#     source with --default-stream per-thread as <name>_ptds and checked
#     against that file (label <name>_ptds);
#   - fork_child, threads8, graph_replay, capture_basic: stdout under the shim
#     must equal stdout without it, and so must the exit status;
#   - the race scripts also run under PyTorch's CUDA sanitizer
#     (TORCH_CUDA_SANITIZER=1, without syncsight); what it prints is saved.
# Prints one line per check, a summary table, and "N passed, N failed[, N
# skipped]"; exits 1 when anything failed.
#
# Usage: run_gpu_tests.sh [--quick] [--fixtures] [NAME...]
#   --quick     a handful of programs (GPU_QUICK below)
#   --fixtures  only the programs in FIXTURES, then copy their traces and
#               expect files to tests/fixtures/
#   NAME...     only these programs (file names without .cu/.py; a program
#               with a .ptds.expect runs in both builds)
# Environment: GPU_TEST_OUT (default build/gpu-test: traces, reports, logs),
# SYNCSIGHT (build/syncsight), NVCC, NVCC_ARCH (-arch=sm_90), PYTHON (python3),
# SS_TEST_CUDART (static|shared: how the rule programs link cudart; default static,
# what plain nvcc does), RUN_TIMEOUT (seconds per run, default 120).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${GPU_TEST_OUT:-build/gpu-test}
SYNCSIGHT=${SYNCSIGHT:-build/syncsight}
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
NVCC_ARCH=${NVCC_ARCH:--arch=sm_90}
PYTHON=${PYTHON:-python3}
SS_TEST_CUDART=${SS_TEST_CUDART:-static}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
TP=test_programs

GPU_QUICK="implicit_sync_free legacy_stream legacy_stream_fixed missing_fence missing_fence_fixed capture_basic side_stream_race"
FIXTURES="implicit_sync_free implicit_sync_free_fixed legacy_stream device_sync_loop missing_fence missing_fence_fixed pageable_d2h_loop graph_replay item_in_loop side_stream_race"
# Legacy vs per-thread default stream, and programs written the way the CUDA
# samples write them (their _ptds builds are fixtures too).
FIXTURES="$FIXTURES legacy_barrier_needed legacy_barrier_needed_fixed readonly_factor readonly_factor_racy"
FIXTURES="$FIXTURES ptds_consumer ptds_consumer_fixed memset_async memset_async_fixed graph_pageable graph_pageable_fixed"
FIXTURES="$FIXTURES incomplete_sync incomplete_sync_fixed event_timing_gap event_timing_gap_fixed"
FIXTURES="$FIXTURES sample_simple_streams sample_concurrent_kernels sample_async_api"
# Happens-before across host threads (OpenMP, pthreads, Python threads).
FIXTURES="$FIXTURES omp_chunked_streams omp_chunked_streams_fixed pthread_handoff pthread_handoff_racy"
FIXTURES="$FIXTURES threading_handoff threading_handoff_racy threading_handoff_wait"
# Why streams did not overlap: hardware queues, lazy loading, PTX JIT (and the
# env-* variants of stream_waves).
FIXTURES="$FIXTURES stream_waves stream_waves_fixed first_launch_jit first_launch_jit_fixed"
# CUDA graph replays against eager work on another stream (replayed nodes
# linked to the captured launches' arguments: trace format 1.5).
FIXTURES="$FIXTURES graph_side_race graph_side_race_fixed"
# The same race with the graph built node by node (cudaGraphAddKernelNode): the
# node's arguments come from that call (the driver call inside it, for a static
# cudart's stub).
FIXTURES="$FIXTURES graph_added_race graph_added_race_fixed"
# ... and with the node added by the generic cudaGraphAddNode (CUDA 12.2+).
FIXTURES="$FIXTURES graph_generic_race graph_generic_race_fixed"
# One executable graph launched on several streams (CUDA orders its launches) against an exec per stream.
FIXTURES="$FIXTURES graph_exec_streams graph_exec_streams_racy"
# An event recorded by a launch attribute (programmatic dependent launch across streams) against a
# launch-completion event, which fires when the producer's blocks start.
FIXTURES="$FIXTURES pdl_event_handoff pdl_event_handoff_racy"
# Memory mapped with cuMemMap (as PyTorch's expandable segments grow): a buffer spanning two mapped chunks.
FIXTURES="$FIXTURES vmm_race vmm_race_fixed"
# A host wait for an event record that the legacy barrier holds back, against a wait for its stream (which an
# H200 does not hold back: tools/legacy_marker_probe.cu).
FIXTURES="$FIXTURES legacy_record_handoff legacy_record_handoff_racy"
# Launches through the driver API (recorded from CUPTI's driver callbacks): a
# driver-only program, CuPy's RawKernel, a torch.compile'd (Triton) reader.
FIXTURES="$FIXTURES driver_launch_race driver_launch_race_fixed cupy_rawkernel_race cupy_rawkernel_race_fixed"
FIXTURES="$FIXTURES triton_reader_race triton_reader_race_fixed"
# CuPy streams with blocking gets against non-blocking ones; its first stream makes the context.
FIXTURES="$FIXTURES cupy_stream_pipeline cupy_stream_pipeline_fixed"
# Managed memory prefetched (runtime and driver API) and waited for with cudaDeviceSynchronize:
# GPU work CUPTI does not record, which a sync that waited for it must not be called idle for.
FIXTURES="$FIXTURES sample_um_prefetch_devsync"
# A graph's event record node (cudaEventRecordExternal) ordering another stream, and a wait taken too early.
FIXTURES="$FIXTURES graph_event_node graph_event_node_racy"
# A training loop as people write it: setup vs steady state, the blocking-copy idiom (model.cuda()).
FIXTURES="$FIXTURES train_item_loop train_item_loop_fixed"
# cuDNN's own buffer behind a batch-norm kernel: the library's, not the program's.
FIXTURES="$FIXTURES torch_cnn_batchnorm"
# CUDA tensors received from another process (torch.multiprocessing): waits on the sender's IPC event.
FIXTURES="$FIXTURES torch_mp_cuda_handoff"
# A kernel launched from two lines through one stub (each site its own calls), and
# streams named through NVTX and by their creation line.
FIXTURES="$FIXTURES same_kernel_two_lines stream_names"
# A long pipeline recorded sampled (a head, then recording windows: trace format 1.6).
FIXTURES="$FIXTURES sampled_pipeline sampled_pipeline_fixed"
# The fixed twins the what-if replay is checked against (tests/test_replay_reality.sh:
# a pair's measured difference means something only when both were recorded in one
# session), and the other single-GPU .cu programs the CPU tests read.
FIXTURES="$FIXTURES legacy_stream_fixed device_sync_loop_fixed pageable_d2h_loop_fixed"
FIXTURES="$FIXTURES missing_fence_wrong_stream unrecorded_event unrecorded_event_fixed"
# Sample-style correct programs: stream-ordered allocation with pool reuse across streams,
# and cuBLAS on several streams (what cuBLAS synchronizes on the program's behalf).
FIXTURES="$FIXTURES sample_stream_ordered_alloc sample_cublas_streams"
# Correct programs whose kernels index from a base pointer (NVIDIA's overlap sample) and
# whose 2D copies interleave (tiles of a pitched image): possible races, never proven.
FIXTURES="$FIXTURES sample_overlap_offsets pitched_tiles"
# More programs in the style of the CUDA samples, correct (2026-11-24): host
# callbacks from worker threads, managed memory on streams, zero-copy, HyperQ,
# graphs built and captured, a captured Jacobi iteration updated in place.
FIXTURES="$FIXTURES sample_simple_callback sample_unified_memory_streams sample_zero_copy sample_hyperq"
FIXTURES="$FIXTURES sample_cuda_graphs sample_jacobi_graph_update"
# Graphs as CUDA 12.4+ samples build them (2026-11-29): conditional nodes (a
# device-side while loop, whose body's ops CUPTI gives no correlation id) and
# graph memory nodes.
FIXTURES="$FIXTURES sample_graph_conditional sample_graph_conditional_racy sample_graph_conditional_while"
FIXTURES="$FIXTURES sample_graph_memory_nodes"
# Event record / wait nodes of graphs built node by node (2026-11-29).
FIXTURES="$FIXTURES graph_event_node_explicit graph_event_node_explicit_racy"
# Benchmarking as triton.testing.do_bench writes it (events around each
# repetition, one synchronize).
FIXTURES="$FIXTURES torch_do_bench"
# More CUDA-sample strangers (2026-11-29): StreamPriorities (pageable cudaMemcpy in, then
# kernels on non-blocking streams: a possible race, never a proven one), a context per
# worker thread (threadMigration), dynamic parallelism (cdpSimpleQuicksort, tail launches).
FIXTURES="$FIXTURES sample_stream_priorities sample_thread_contexts sample_cdp_quicksort"
# A pageable cudaMemcpy is no fence for a non-blocking stream: its copies land after it returns.
FIXTURES="$FIXTURES pageable_memcpy_race pageable_memcpy_race_fixed"
# Green contexts (2026-11-29): each context has a legacy stream of its own; a green
# context's streams count as its parent's for cudaDeviceSynchronize.
FIXTURES="$FIXTURES green_context_legacy green_context_legacy_fixed sample_green_contexts"
# Thrust on streams with its synchronizing policy, and the CUB way (2026-11-24):
# what a header-only library synchronizes for the program is the library's.
FIXTURES="$FIXTURES sample_thrust_streams sample_thrust_streams_fixed"
# A ring of events whose first lap syncs on events not recorded yet (NVIDIA's
# simpleMultiCopy; a triple-buffered pipeline): unrecorded-event-wait's "possibly harmless" info.
FIXTURES="$FIXTURES sample_multi_copy sample_buffer_ring sample_buffer_ring_racy"
# Programs whose output must not change under the shim.
STDOUT_SAME="fork_child threads8 graph_replay capture_basic graph_side_race_fixed graph_added_race_fixed graph_generic_race_fixed vmm_race_fixed graph_exec_streams pdl_event_handoff"
# Scripts also run under PyTorch's CUDA sanitizer.  CSAN_MUST_FLAG: CSAN has
# to report a race (proof the program has one); CSAN_MUST_PASS: it must not.
CSAN_MUST_FLAG="side_stream_race"
CSAN_MUST_PASS="side_stream_race_fixed"
CSAN_INFO="torch_side_stream_prefetch pinned_copy_event pinned_copy_event_fixed missing_record_stream missing_record_stream_fixed seed002_default_vs_custom"

mode=full
names=()
for arg in "$@"; do
    case "$arg" in
    --quick) mode=quick ;;
    --fixtures) mode=fixtures ;;
    -*) echo "run_gpu_tests.sh: unknown option $arg" >&2; exit 2 ;;
    *) names+=("$arg") ;;
    esac
done
if [ ${#names[@]} -eq 0 ]; then
    case $mode in
    quick) read -r -a names <<< "$GPU_QUICK" ;;
    fixtures) read -r -a names <<< "$FIXTURES" ;;
    full) for f in $TP/*.cu $TP/*.py; do
              n=$(basename "$f"); n=${n%.*}
              [ "$n" = compare_api_counts ] || names+=("$n")
          done ;;
    esac
fi

for tool in "$SYNCSIGHT" "$NVCC"; do
    if ! command -v "$tool" > /dev/null 2>&1; then
        echo "run_gpu_tests.sh: $tool not found (run make all first; set NVCC or CUDA_HOME)" >&2
        exit 2
    fi
done
if ! nvidia-smi -L > /dev/null 2>&1; then
    echo "run_gpu_tests.sh: no GPU visible (nvidia-smi -L failed): this suite needs one" >&2
    exit 2
fi
rm -rf "$OUT"
mkdir -p "$OUT"/{bin,traces,reports,logs,stdout,csan,dumps}
OUT=$(cd "$OUT" && pwd)
SYNCSIGHT=$(cd "$(dirname "$SYNCSIGHT")" && pwd)/$(basename "$SYNCSIGHT")

passed=0 failed=0 skipped=0
declare -A RESULT FINDINGS
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
skip() { echo "SKIP $1 ($2)"; skipped=$((skipped + 1)); }
note_result() { # NAME VERDICT: the table shows the worst verdict per program
    case "${RESULT[$1]:-}" in FAIL) ;; *) RESULT[$1]=$2 ;; esac
}
has() { local x; for x in $2; do [ "$x" = "$1" ] && return 0; done; return 1; }

# ---- build (in parallel)
echo "== building with $NVCC $NVCC_ARCH (rule programs: $SS_TEST_CUDART cudart)"
build_jobs=()
# Extra nvcc flags a program asks for in its own source, on a line
# "// NVCC-FLAGS: <flags>" (e.g. -Xcompiler -fopenmp); test_programs.mk and
# tests/test_programs_compile.sh read the same line.
src_nvcc_flags() { sed -n 's|^// NVCC-FLAGS:||p' "$1" | tr '\n' ' '; }
# "// NVCC-ARCH: <flags>" replaces $NVCC_ARCH for that program (a PTX-only
# build, say); "// RUN-ENV: VAR=value ..." is the environment of its every run.
src_nvcc_arch() { sed -n 's|^// NVCC-ARCH:||p' "$1" | tr '\n' ' '; }
src_run_env() { sed -n 's|^// RUN-ENV:||p' "$1" | tr '\n' ' '; }
# Variants run the same binary in another environment: <name>.env-<variant>.expect,
# whose "# RUN-ENV: VAR=value ..." lines add to the program's own (label <name>_<variant>).
expect_run_env() { sed -n 's|^# RUN-ENV:||p' "$1" | tr '\n' ' '; }
# run_env_variants NAME BASE_ENV CMD...: each <NAME>.env-<v>.expect, CMD run
# traced as NAME_<v> in BASE_ENV plus the variant's RUN-ENV, and checked.
run_env_variants() {
    local n=$1 base=$2 ve v
    shift 2
    for ve in "$TP/$n".env-*.expect; do
        [ -f "$ve" ] || continue
        v=${ve#"$TP/$n".env-}; v=${v%.expect}
        # a variant named like a program would overwrite that program's
        # trace and report (stream_waves.env-fixed did: stream_waves_fixed)
        if [ -f "$TP/${n}_$v.cu" ] || [ -f "$TP/${n}_$v.py" ]; then
            fail "${n}_$v" "$ve: the variant's name is a program's; rename it"
            note_result "$n" FAIL
            continue
        fi
        RUN_ENV="$base $(expect_run_env "$ve")"
        run_traced "${n}_$v" "$@"
        check_program "$n" "${n}_$v" "$ve"
    done
}
for n in "${names[@]}"; do
    [ -f "$TP/$n.cu" ] || continue
    if [ "$n" = capture_basic ]; then
        build_jobs+=("capture_basic_shared|-cudart shared|capture_basic")
        build_jobs+=("capture_basic_static|-cudart static|capture_basic")
        build_jobs+=("capture_basic_ptds|-cudart shared --default-stream per-thread|capture_basic")
    else
        extra=$(src_nvcc_flags "$TP/$n.cu")
        arch=$(src_nvcc_arch "$TP/$n.cu")
        build_jobs+=("$n|-cudart $SS_TEST_CUDART $extra|$n|$arch")
        [ -f "$TP/$n.ptds.expect" ] && build_jobs+=("${n}_ptds|-cudart $SS_TEST_CUDART --default-stream per-thread $extra|$n|$arch")
    fi
done
build_one() { # "BINARY|NVCC FLAGS|SOURCE NAME[|ARCH FLAGS]"
    local bin flags src arch
    IFS="|" read -r bin flags src arch <<< "$1"
    # shellcheck disable=SC2086 # flags are several words on purpose
    "$NVCC" ${arch:-$NVCC_ARCH} -O2 -g -lineinfo -std=c++17 $flags -o "$OUT/bin/$bin" "$TP/$src.cu" \
        > "$OUT/logs/build-$bin.log" 2>&1 || echo "$bin" >> "$OUT/logs/build-failures"
}
export -f build_one
export NVCC NVCC_ARCH OUT TP
printf '%s\n' "${build_jobs[@]}" | xargs -P "$(nproc)" -I{} bash -c 'build_one "$1"' _ {}

# run_traced LABEL CMD...: run CMD under `syncsight run`, keep stdout, stderr, exit status.
run_traced() {
    local label=$1; shift
    local trace=$OUT/traces/$label.sstrace
    # shellcheck disable=SC2086 # RUN_ENV is VAR=value words
    env ${RUN_ENV:-} timeout "$RUN_TIMEOUT" "$SYNCSIGHT" run -o "$trace" --no-report -- "$@" \
        > "$OUT/stdout/$label.shim.out" 2> "$OUT/logs/$label.shim.err"
    echo $? > "$OUT/logs/$label.shim.rc"
}

analyze() { # LABEL: writes reports/LABEL.json; returns non-zero when no JSON came out
    local label=$1
    "$SYNCSIGHT" report --format json "$OUT/traces/$label.sstrace" \
        > "$OUT/reports/$label.json" 2> "$OUT/logs/$label.report.err"
    [ -s "$OUT/reports/$label.json" ]
}

summarize_findings() { # LABEL -> "rule:count ..." for the table
    "$PYTHON" - "$OUT/reports/$1.json" << 'PY' 2> /dev/null || echo "?"
import json, sys
sys.path.insert(0, "tests")
from check_findings import find_findings, rule_of
findings, _ = find_findings(json.load(open(sys.argv[1])))
counts = {}
for f in findings:
    counts[rule_of(f)] = counts.get(rule_of(f), 0) + 1
print(" ".join(f"{r}:{n}" for r, n in sorted(counts.items())) or "none")
PY
}

check_program() { # NAME LABEL EXPECT
    local name=$1 label=$2 expect=$3
    local rc
    rc=$(cat "$OUT/logs/$label.shim.rc")
    if [ "$rc" != 0 ]; then
        fail "$label" "exited $rc under the shim (log: $OUT/logs/$label.shim.err)"
        tail -n 15 "$OUT/logs/$label.shim.err" | sed 's/^/    /'
        note_result "$name" FAIL
    fi
    if ! analyze "$label"; then
        fail "$label" "syncsight report produced no JSON"
        sed 's/^/    /' "$OUT/logs/$label.report.err" | tail -n 15
        note_result "$name" FAIL; FINDINGS[$name]="(no report)"
        return
    fi
    FINDINGS[$name]=$(summarize_findings "$label")
    if "$PYTHON" tests/check_findings.py --name "$label" "$OUT/reports/$label.json" "$expect" \
        > "$OUT/logs/$label.check" 2>&1; then
        [ "$rc" = 0 ] && { pass "$label"; note_result "$name" PASS; }
    else
        fail "$label" "findings differ from $expect"
        sed 's/^/    /' "$OUT/logs/$label.check"
        # what the report said, so that a failure seen once can be explained
        # from this log alone (the reports directory may not survive the run)
        "$PYTHON" -c 'import json, sys
for f in json.load(open(sys.argv[1])).get("findings", [])[:6]:
    print("    report: [%s] %s: %s" % (f.get("severity"), f.get("rule"), str(f.get("message"))[:400]))' \
            "$OUT/reports/$label.json" 2>/dev/null
        note_result "$name" FAIL
    fi
}

have_torch=unknown
torch_ok() {
    if [ "$have_torch" = unknown ]; then
        if "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' > "$OUT/logs/torch-probe.log" 2>&1; then
            have_torch=yes
        else
            have_torch=no
        fi
    fi
    [ "$have_torch" = yes ]
}

echo "== running (traces, reports and logs under $OUT)"
for n in "${names[@]}"; do
    if [ -f "$TP/$n.cu" ]; then
        if [ "$n" = capture_basic ]; then
            ok=1
            for v in shared static ptds; do
                if grep -qx "capture_basic_$v" "$OUT/logs/build-failures" 2> /dev/null; then
                    fail "capture_basic_$v" "does not build (log: $OUT/logs/build-capture_basic_$v.log)"
                    ok=0; note_result capture_basic FAIL; continue
                fi
                run_traced "capture_basic_$v" "$OUT/bin/capture_basic_$v"
                check_program capture_basic "capture_basic_$v" "$TP/capture_basic.expect"
                "$SYNCSIGHT" dump --json "$OUT/traces/capture_basic_$v.sstrace" > "$OUT/dumps/capture_basic_$v.jsonl" \
                    2> "$OUT/logs/capture_basic_$v.dump.err" || ok=0
            done
            if [ "$ok" = 1 ] && "$PYTHON" $TP/compare_api_counts.py shared="$OUT/dumps/capture_basic_shared.jsonl" \
                static="$OUT/dumps/capture_basic_static.jsonl" ptds="$OUT/dumps/capture_basic_ptds.jsonl" \
                > "$OUT/logs/capture_basic.api-counts" 2>&1; then
                pass "capture_basic:api-sets-equal"
                cat "$OUT/logs/capture_basic.api-counts"
            else
                fail "capture_basic:api-sets-equal" "(table: $OUT/logs/capture_basic.api-counts)"
                sed 's/^/    /' "$OUT/logs/capture_basic.api-counts" 2> /dev/null
                note_result capture_basic FAIL
            fi
            bin=$OUT/bin/capture_basic_shared label=capture_basic_shared
        else
            if grep -qx "$n" "$OUT/logs/build-failures" 2> /dev/null; then
                fail "$n" "does not build (log: $OUT/logs/build-$n.log)"
                tail -n 15 "$OUT/logs/build-$n.log" | sed 's/^/    /'
                note_result "$n" FAIL; continue
            fi
            bin=$OUT/bin/$n label=$n
            RUN_ENV=$(src_run_env "$TP/$n.cu")
            run_traced "$n" "$bin"
            check_program "$n" "$n" "$TP/$n.expect"
            run_env_variants "$n" "$(src_run_env "$TP/$n.cu")" "$bin"
            if [ -f "$TP/$n.ptds.expect" ]; then
                # The same source built with --default-stream per-thread.
                p=${n}_ptds
                if grep -qx "$p" "$OUT/logs/build-failures" 2> /dev/null; then
                    fail "$p" "does not build (log: $OUT/logs/build-$p.log)"
                    tail -n 15 "$OUT/logs/build-$p.log" | sed 's/^/    /'
                    note_result "$p" FAIL
                else
                    RUN_ENV=$(src_run_env "$TP/$n.cu")
                    run_traced "$p" "$OUT/bin/$p"
                    check_program "$p" "$p" "$TP/$n.ptds.expect"
                fi
            fi
        fi
        RUN_ENV=
        if has "$n" "$STDOUT_SAME"; then
            timeout "$RUN_TIMEOUT" "$bin" > "$OUT/stdout/$label.plain.out" 2> "$OUT/logs/$label.plain.err"
            plain_rc=$?
            shim_rc=$(cat "$OUT/logs/$label.shim.rc")
            if [ "$plain_rc" = "$shim_rc" ] && diff -u "$OUT/stdout/$label.plain.out" "$OUT/stdout/$label.shim.out" \
                > "$OUT/logs/$label.stdout.diff"; then
                pass "$n:stdout-unchanged"
            else
                fail "$n:stdout-unchanged" "exit $plain_rc without the shim, $shim_rc with it"
                sed 's/^/    /' "$OUT/logs/$label.stdout.diff" | head -20
                note_result "$n" FAIL
            fi
        fi
    elif [ -f "$TP/$n.py" ]; then
        if ! torch_ok; then
            skip "$n" "python3 cannot import torch with CUDA: $(tail -n 1 "$OUT/logs/torch-probe.log")"
            RESULT[$n]=SKIP; continue
        fi
        run_traced "$n" "$PYTHON" "$TP/$n.py"
        check_program "$n" "$n" "$TP/$n.expect"
        run_env_variants "$n" "" "$PYTHON" "$TP/$n.py"
        RUN_ENV=
        if has "$n" "$CSAN_MUST_FLAG $CSAN_MUST_PASS $CSAN_INFO"; then
            TORCH_CUDA_SANITIZER=1 timeout "$RUN_TIMEOUT" "$PYTHON" "$TP/$n.py" > "$OUT/csan/$n.txt" 2>&1
            echo "exit status: $?" >> "$OUT/csan/$n.txt"
            flagged=no
            grep -q "CSAN detected a possible data race" "$OUT/csan/$n.txt" && flagged=yes
            FINDINGS[$n]="${FINDINGS[$n]:-} | CSAN race: $flagged"
            if has "$n" "$CSAN_MUST_FLAG"; then
                [ $flagged = yes ] && pass "$n:csan-flags-it" || fail "$n:csan-flags-it" "CSAN reported no race ($OUT/csan/$n.txt)"
            elif has "$n" "$CSAN_MUST_PASS"; then
                [ $flagged = no ] && pass "$n:csan-clean" || fail "$n:csan-clean" "CSAN reported a race ($OUT/csan/$n.txt)"
            fi
        fi
    else
        fail "$n" "no $TP/$n.cu or $TP/$n.py"
    fi
done

echo
# The issue's capture check, side by side: the three builds of capture_basic
# and a PyTorch script (shown for comparison; the equality check above covers
# the three builds only).
if [ -f "$OUT/dumps/capture_basic_shared.jsonl" ] && [ -f "$OUT/traces/item_in_loop.sstrace" ]; then
    "$SYNCSIGHT" dump --json "$OUT/traces/item_in_loop.sstrace" > "$OUT/dumps/item_in_loop.jsonl" 2> /dev/null &&
    { echo; echo "== recorded CUDA calls: capture_basic built three ways, and the PyTorch script item_in_loop.py"
      "$PYTHON" $TP/compare_api_counts.py shared="$OUT/dumps/capture_basic_shared.jsonl" \
          static="$OUT/dumps/capture_basic_static.jsonl" ptds="$OUT/dumps/capture_basic_ptds.jsonl" \
          +pytorch="$OUT/dumps/item_in_loop.jsonl" | tee "$OUT/logs/capture-vs-pytorch.api-counts"; } || true
fi

echo
echo "== summary"
printf '%-34s %-6s %s\n' program result "findings (rule:count)"
for n in "${names[@]}"; do
    printf '%-34s %-6s %s\n' "$n" "${RESULT[$n]:-FAIL}" "${FINDINGS[$n]:-}"
    if [ -f "$TP/$n.cu" ] && [ -f "$TP/$n.ptds.expect" ]; then
        printf '%-34s %-6s %s\n' "${n}_ptds" "${RESULT[${n}_ptds]:-FAIL}" "${FINDINGS[${n}_ptds]:-}"
    fi
done | tee "$OUT/summary.txt"

if [ "$mode" = fixtures ] && [ "$failed" -eq 0 ]; then
    echo
    echo "== copying fixtures to tests/fixtures/"
    mkdir -p tests/fixtures/bin
    # copy_fixture FIXTURE LABEL EXPECT: the trace of LABEL and EXPECT (sites
    # made explicit) as tests/fixtures/FIXTURE.*, and the debug file of a
    # native program's binary (objcopy --only-keep-debug; named after the
    # binary, which is what the trace names) so its call sites resolve on the
    # CPU through tests/fixtures/bin/.
    copy_fixture() {
        local fixture=$1 label=$2 expect=$3
        [ -f "$OUT/traces/$label.sstrace" ] || return 0
        # the kernels' read/write classification travels with the trace, so
        # that CI needs no nvdisasm (analyzer/kernel_access.c)
        rm -f "tests/fixtures/$fixture.sstrace.kaccess"
        [ -f "$OUT/traces/$label.sstrace.kaccess" ] &&
            cp "$OUT/traces/$label.sstrace.kaccess" "tests/fixtures/$fixture.sstrace.kaccess"
        # A trace over 1 MB with that classification beside it is copied
        # without its device code images: a PyTorch process's are ~40 MB, and
        # the analyzer's verdicts are the same from the classification
        # (tools/strip_cubins.py).  Smaller traces keep theirs, which
        # test_analyzer_sass disassembles.
        if [ "$(stat -c %s "$OUT/traces/$label.sstrace")" -gt 1048576 ] &&
           [ -f "$OUT/traces/$label.sstrace.kaccess" ]; then
            rm -f "tests/fixtures/$fixture.sstrace"   # the tool creates its output (O_EXCL)
            "$PYTHON" tools/strip_cubins.py "$OUT/traces/$label.sstrace" "tests/fixtures/$fixture.sstrace" ||
                { fail "fixture:$fixture" "tools/strip_cubins.py failed"; return 0; }
        else
            cp "$OUT/traces/$label.sstrace" "tests/fixtures/$fixture.sstrace"
        fi
        if ! "$PYTHON" tests/check_findings.py --for-fixture "$expect" > "tests/fixtures/$fixture.expect"; then
            fail "fixture:$fixture" "cannot write tests/fixtures/$fixture.expect"; return 0
        fi
        if [ -f "$OUT/bin/$label" ] && command -v objcopy > /dev/null 2>&1; then
            objcopy --only-keep-debug "$OUT/bin/$label" "tests/fixtures/bin/$label.debug" ||
                fail "fixture:$fixture" "objcopy --only-keep-debug $OUT/bin/$label failed"
        fi
        local size
        size=$(stat -c %s "tests/fixtures/$fixture.sstrace")
        echo "tests/fixtures/$fixture.sstrace: $size bytes$([ "$size" -gt 1048576 ] && echo ' (over 1 MB: consider SYNCSIGHT_STACKS=0 or a smaller run)')"
    }
    for n in "${names[@]}"; do
        label=$n
        [ "$n" = capture_basic ] && label=capture_basic_shared
        copy_fixture "$n" "$label" "$TP/$n.expect"
        [ -f "$TP/$n.ptds.expect" ] && copy_fixture "${n}_ptds" "${n}_ptds" "$TP/$n.ptds.expect"
        for ve in "$TP/$n".env-*.expect; do
            [ -f "$ve" ] || continue
            v=${ve#"$TP/$n".env-}; v=${v%.expect}
            copy_fixture "${n}_$v" "${n}_$v" "$ve"
        done
    done
    # Each debug file keeps only the symbols its fixtures' stacks reach: the
    # rest is mostly the static cudart's symbol table (a 340 KB file becomes
    # about 50 KB; tools/shrink_debug.py says why the reports do not change).
    if command -v objcopy > /dev/null 2>&1 && command -v nm > /dev/null 2>&1; then
        SYNCSIGHT="$SYNCSIGHT" "$PYTHON" tools/shrink_debug.py --dir tests/fixtures ||
            fail "fixtures" "tools/shrink_debug.py failed"
    fi
elif [ "$mode" = fixtures ]; then
    echo "fixtures not copied: the suite failed"
fi

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary" | tee -a "$OUT/summary.txt"
[ "$failed" -eq 0 ]
