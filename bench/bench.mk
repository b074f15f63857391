# Benchmarks (bench/).
#
#   make bench-analyzer [BENCH_RECORDS=N | BENCH_SIZES="1000000 10000000 50000000"]
#       CPU: generate synthetic traces and time `syncsight report --format json`
#       (seconds, records/s, peak RSS, bytes/record, growth with size).
#       Results: bench/results/analyzer-<date>.{md,json}.
#   make bench           GPU: capture overhead of the shim vs no tool, Nsight Systems and
#                        torch.profiler (bench/run_bench.sh): every configuration 3+
#                        times, interleaved, within ~8 minutes.  Results:
#                        bench/results/capture-<date>.md, or under $BENCH_OUT (a directory).
#   make test-bench      CPU self-test of the generator and the reader check.
#   make bench-hostsync  CPU: cost of the shim's pthread/semaphore wrappers (below).
#   make bench-hot-off   CPU: what a hot CUDA call costs while sampled recording is OFF.
#   make bench-cubin     CPU: what recording a module's image costs the loading thread.
#   make fuzz / fuzz-ci  see fuzz/fuzz.mk (included by the top-level Makefile).

BENCH_RECORDS ?= 1000000
BENCH_SIZES   ?= $(BENCH_RECORDS)
# Where the benchmark's traces go (deleted after each size unless BENCH_KEEP=1).
BENCH_DIR     ?= $(BUILD)/bench-traces
BENCH_KEEP    ?= 0
# The analyzer command under test (arguments after `syncsight`, before the trace).
BENCH_ANALYZER_ARGS ?= report --format json
# GPU benchmark programs: sm_90 machine code (H100) plus PTX for newer GPUs.
BENCH_NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
# Dynamic cudart, as PyTorch uses it, so that the interposer sees the calls
# (nvcc links cudart statically by default: cuda-facts.md).
BENCH_NVCC_FLAGS ?= -O2 -std=c++17 -cudart shared $(BENCH_NVCC_ARCH)
BENCH_REPS ?= 5
# Results: a directory (capture-<date>.md and .tsv go in it) or the .md file;
# empty: bench/results/capture-<date>.md.
BENCH_OUT ?=
# When `make bench` started: run_bench.sh's time limits count from here, so
# that the build before it is inside them (the GPU machines end a command at
# 600 s, build included).
BENCH_T0 := $(shell date +%s)

BENCH_TOOL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) -I$(CUPTI_INC_DIR)

$(BUILD)/ss-gen-trace: bench/gen_trace.c $(COMMON_SRCS) include/syncsight/trace_format.h include/syncsight/trace_io.h | check-cuda
	@mkdir -p $(@D)
	$(CC) $(BENCH_TOOL_CFLAGS) -o $@ bench/gen_trace.c $(COMMON_SRCS)

$(BUILD)/ss-read-trace: bench/read_trace.c $(COMMON_SRCS) include/syncsight/trace_format.h include/syncsight/trace_io.h
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ bench/read_trace.c $(COMMON_SRCS)

$(BUILD)/bench/launch_bound: bench/launch_bound.cu bench/bench_util.h | check-cuda
	@mkdir -p $(@D)
	$(NVCC) $(BENCH_NVCC_FLAGS) -o $@ $<

# The same loop with cudart linked statically, nvcc's default (most CUDA
# programs): the interposer sees none of its calls, the shim only CUPTI's
# callbacks (issue #12's targets include such programs).
$(BUILD)/bench/launch_static: bench/launch_bound.cu bench/bench_util.h | check-cuda
	@mkdir -p $(@D)
	$(NVCC) $(filter-out -cudart shared,$(BENCH_NVCC_FLAGS)) -cudart static -DBENCH_NAME='"launch_static"' -o $@ $<

$(BUILD)/bench/copy_bound: bench/copy_bound.cu bench/bench_util.h | check-cuda
	@mkdir -p $(@D)
	$(NVCC) $(BENCH_NVCC_FLAGS) -o $@ $<

# What each CUPTI mechanism costs a launch-bound loop (docs/performance.md,
# "CUPTI mechanisms, measured"): links libcupti itself.
$(BUILD)/bench/cupti_cost: bench/cupti_cost.cu bench/bench_util.h | check-cuda
	@mkdir -p $(@D)
	$(NVCC) $(BENCH_NVCC_FLAGS) -I$(CUPTI_INC_DIR) -o $@ $< -L$(CUPTI_LIB_DIR) -lcupti -Xlinker -rpath -Xlinker $(CUPTI_LIB_DIR)

.PHONY: bench-analyzer bench bench-programs test-bench
bench-programs: $(BUILD)/bench/launch_bound $(BUILD)/bench/launch_static $(BUILD)/bench/copy_bound $(BUILD)/bench/cupti_cost

bench-analyzer: $(BUILD)/ss-gen-trace $(BUILD)/ss-read-trace $(BUILD)/syncsight
	$(PYTHON) bench/bench_analyzer.py --build $(BUILD) --dir $(BENCH_DIR) --sizes "$(BENCH_SIZES)" \
		--keep $(BENCH_KEEP) --analyzer-args "$(BENCH_ANALYZER_ARGS)" --results bench/results

bench: $(BUILD)/libsyncsight.so $(BUILD)/syncsight bench-programs
	BUILD=$(BUILD) PYTHON=$(PYTHON) BENCH_REPS=$(BENCH_REPS) BENCH_OUT="$(BENCH_OUT)" BENCH_T0=$(BENCH_T0) bash bench/run_bench.sh

# The generator's traces must read back clean and pass every consistency
# check, at several sizes and seeds; a cut-short trace must be reported as
# truncated (exit 1), never read as complete.
test-bench: $(BUILD)/ss-gen-trace $(BUILD)/ss-read-trace
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	for spec in "200 1" "5000 2" "100000 3" "300000 4"; do \
		set -- $$spec; \
		$(BUILD)/ss-gen-trace -n $$1 --seed $$2 -o $$d/t.sstrace 2>/dev/null; \
		$(BUILD)/ss-read-trace --check --quiet $$d/t.sstrace; \
	done; \
	$(BUILD)/ss-gen-trace -n 5000 --threads 1 -o $$d/t1.sstrace 2>/dev/null; \
	$(BUILD)/ss-read-trace --check --quiet $$d/t1.sstrace; \
	$(BUILD)/ss-gen-trace -n 5000 --seed 9 -o $$d/a.sstrace 2>/dev/null; \
	$(BUILD)/ss-gen-trace -n 5000 --seed 9 -o $$d/b.sstrace 2>/dev/null; \
	cmp -s -i 256 $$d/a.sstrace $$d/b.sstrace || { echo "test-bench: same seed, different records" >&2; exit 1; }; \
	size=$$(stat -c %s $$d/t.sstrace); head -c $$((size - 100)) $$d/t.sstrace > $$d/cut.sstrace; \
	if $(BUILD)/ss-read-trace --quiet $$d/cut.sstrace 2>/dev/null; then \
		echo "test-bench: a truncated trace read as complete" >&2; exit 1; fi; \
	echo "test-bench: OK"

# ---- host synchronization wrappers (preload/hostsync.c): CPU, no GPU --------
#   make bench-hostsync [HOSTSYNC_ITERS=N]
#       ns per uncontended lock/unlock (and sem post/wait) pair without the shim,
#       with it, and with SYNCSIGHT_HOST_SYNC=0, for a clean thread, a thread
#       that made a (fake) CUDA call, and one that makes one before every pair
#       (docs/performance.md, "Host synchronization wrappers").  The shim runs
#       record everything (SYNCSIGHT_SAMPLE=off): past the default head a
#       thread's calls are not recorded and publish no work, so "active"
#       would time the OFF path instead.
HOSTSYNC_ITERS ?= 20000000

# The CPU benchmarks of the shim's own paths, linked against the tests' fake
# libcudart.so.13 (hostsync_bench here, hot_call_bench below).
FAKE_CUDART_BENCHES = $(BUILD)/bench/hostsync_bench $(BUILD)/bench/hot_call_bench
$(FAKE_CUDART_BENCHES): $(BUILD)/bench/%: bench/%.c bench/bench_util.h tests/api_fake_cudart.c tests/fake_cuda.sh | check-cuda
	@mkdir -p $(@D)/fakecuda
	@. tests/fake_cuda.sh && CC="$(CC)" CUDA_HOME="$(CUDA_HOME)" build_fake_cuda $(@D)/fakecuda cudart-only
	$(CC) $(BASE_CFLAGS) -O2 -pthread -I$(CUDA_HOME)/include -o $@ $< $(@D)/fakecuda/libcudart.so.13 \
		-Wl,-rpath,$(abspath $(@D)/fakecuda)

.PHONY: bench-hostsync
bench-hostsync: $(BUILD)/bench/hostsync_bench $(BUILD)/libsyncsight.so
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	$(BUILD)/bench/hostsync_bench $(HOSTSYNC_ITERS) > $$d/plain; \
	SYNCSIGHT_OUTPUT_DIR=$$d/o1 SYNCSIGHT_CUPTI=0 SYNCSIGHT_SAMPLE=off LD_PRELOAD=$(abspath $(BUILD)/libsyncsight.so) \
		$(BUILD)/bench/hostsync_bench $(HOSTSYNC_ITERS) > $$d/shim; \
	SYNCSIGHT_OUTPUT_DIR=$$d/o2 SYNCSIGHT_CUPTI=0 SYNCSIGHT_SAMPLE=off SYNCSIGHT_HOST_SYNC=0 LD_PRELOAD=$(abspath $(BUILD)/libsyncsight.so) \
		$(BUILD)/bench/hostsync_bench $(HOSTSYNC_ITERS) > $$d/off; \
	printf '%-20s %12s %12s %16s\n' "ns per pair" "no shim" "shim" "HOST_SYNC=0"; \
	join $$d/plain $$d/shim | join - $$d/off | awk '{ printf "%-20s %12s %12s %16s\n", $$1, $$2, $$3, $$4 }'

# ---- a hot call while sampled recording is OFF: CPU, no GPU -----------------
#   make bench-hot-off [HOT_CALLS=N]
#       ns per hot call (cudaStreamQuery, cudaEventRecord into the tests' fake
#       cudart, which returns at once) without the shim, with it disabled, in
#       the default mode after the head (OFF: counted and passed through) and
#       with every call recorded (docs/performance.md, "A hot call while OFF").
HOT_CALLS ?= 2000000

.PHONY: bench-hot-off
bench-hot-off: $(BUILD)/bench/hot_call_bench $(BUILD)/libsyncsight.so
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	$(BUILD)/bench/hot_call_bench $(HOT_CALLS) > $$d/none; \
	for cfg in disabled:SYNCSIGHT_DISABLE=1 default: full:SYNCSIGHT_SAMPLE=off; do \
		SYNCSIGHT_OUTPUT_DIR=$$d/o SYNCSIGHT_CUPTI=0 LD_PRELOAD=$(abspath $(BUILD)/libsyncsight.so) \
			env $${cfg#*:} $(BUILD)/bench/hot_call_bench $(HOT_CALLS) > $$d/$${cfg%%:*}; \
	done; \
	printf '%-18s %10s %10s %12s %10s\n' "ns per call" "no shim" "disabled" "default/OFF" "recorded"; \
	join $$d/none $$d/disabled | join - $$d/default | join - $$d/full | \
		awk '{ printf "%-18s %10s %10s %12s %10s\n", $$1, $$2, $$3, $$4, $$5 }'

# ---- module images (preload/cubin.c): CPU, no GPU ---------------------------
#   make bench-cubin [CUBIN_IMAGES=N CUBIN_KIB=K]
#       ms the loading thread spends in the MODULE_LOADED callback for N distinct
#       images of K KiB (default 96 x 384 KiB = 36 MiB, what a PyTorch training
#       process loads), under the shim with the fake libcupti, and with image
#       capture off (SYNCSIGHT_CUBIN_MB=0) (docs/performance.md, "Module images").
CUBIN_IMAGES ?= 96
CUBIN_KIB    ?= 384

$(BUILD)/bench/cubin_load_bench: bench/cubin_load_bench.c tests/api_fake_cudart.c tests/api_fake_cuda.c \
		tests/api_fake_cupti.c tests/fake_cuda.sh | check-cuda
	@mkdir -p $(@D)/fakecupti
	@. tests/fake_cuda.sh && CC="$(CC)" CUDA_HOME="$(CUDA_HOME)" build_fake_cuda $(@D)/fakecupti with-cupti
	$(CC) $(BASE_CFLAGS) -O2 -I$(CUDA_HOME)/include -o $@ $< -Wl,--no-as-needed $(@D)/fakecupti/libcudart.so.13 \
		$(@D)/fakecupti/libcuda.so.1 -Wl,--as-needed -Wl,-rpath,$(abspath $(@D)/fakecupti) -ldl

.PHONY: bench-cubin
bench-cubin: $(BUILD)/bench/cubin_load_bench $(BUILD)/libsyncsight.so
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	for mb in 64 0; do \
		SYNCSIGHT_OUTPUT_DIR=$$d/o$$mb SYNCSIGHT_CUPTI_LIB=$(abspath $(BUILD)/bench/fakecupti/libcupti.so.13) \
		SYNCSIGHT_CUBIN_MB=$$mb SYNCSIGHT_CUBIN_IMAGE_MB=8 LD_PRELOAD=$(abspath $(BUILD)/libsyncsight.so) \
			$(BUILD)/bench/cubin_load_bench $(CUBIN_IMAGES) $(CUBIN_KIB) | sed "s/^/SYNCSIGHT_CUBIN_MB=$$mb: /"; \
	done
