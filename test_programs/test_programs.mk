# GPU test programs and the GPU suite (test_programs/run_gpu_tests.sh; see
# docs/testing.md).  These targets need a GPU; `make test` does not.
#
#   make gpu-test          every program and PyTorch script, checked against its .expect
#   make gpu-test-quick    a handful of them, for fast iteration
#   make gpu-test GPU_TESTS="legacy_stream missing_fence"   only these
#   make fixtures          record the fixture programs and copy their traces and
#                          expect files to tests/fixtures/ (then commit them)
#   make test-programs-build   compile every program here (no GPU needed), and
#                          <name>_ptds (--default-stream per-thread) of every
#                          program that has a <name>.ptds.expect
# Outputs (traces, reports, logs, summary.txt) go to $(GPU_TEST_OUT).

GPU_TEST_OUT ?= $(BUILD)/gpu-test
GPU_TESTS ?=
TEST_PROGRAMS_ARCH ?= -arch=sm_90
TEST_PROGRAM_SRCS := $(wildcard test_programs/*.cu)
# Programs also built with --default-stream per-thread (checked against <name>.ptds.expect).
TEST_PROGRAM_PTDS := $(patsubst test_programs/%.ptds.expect,%,$(wildcard test_programs/*.ptds.expect))
# Extra nvcc flags a program asks for in its own source, on a line
# "// NVCC-FLAGS: <flags>" (e.g. -Xcompiler -fopenmp); read by the shell when
# the recipe runs.  run_gpu_tests.sh and tests/test_programs_compile.sh read
# the same line.
TEST_PROGRAM_SRC_FLAGS = $$(sed -n 's|^// NVCC-FLAGS:||p' $<)
# "// NVCC-ARCH: <flags>" replaces TEST_PROGRAMS_ARCH for that program (a
# PTX-only build that the driver must JIT-compile, say).
TEST_PROGRAM_ARCH = $$(a=$$(sed -n 's|^// NVCC-ARCH:||p' $<); echo "$${a:-$(TEST_PROGRAMS_ARCH)}")

GPU_SUITE_ENV = GPU_TEST_OUT="$(GPU_TEST_OUT)" SYNCSIGHT="$(BUILD)/syncsight" NVCC="$(NVCC)" \
	NVCC_ARCH="$(TEST_PROGRAMS_ARCH)" PYTHON="$(PYTHON)" CUDA_HOME="$(CUDA_HOME)"

.PHONY: gpu-test gpu-test-quick fixtures test-programs-build
gpu-test: all
	$(GPU_SUITE_ENV) bash test_programs/run_gpu_tests.sh $(GPU_TESTS)

gpu-test-quick: all
	$(GPU_SUITE_ENV) bash test_programs/run_gpu_tests.sh --quick $(GPU_TESTS)

fixtures: all
	$(GPU_SUITE_ENV) bash test_programs/run_gpu_tests.sh --fixtures $(GPU_TESTS)

# Compile-only check of the programs (the CPU suite runs the same check as
# tests/test_programs_compile.sh).
test-programs-build: $(patsubst test_programs/%.cu,$(BUILD)/test_programs/%,$(TEST_PROGRAM_SRCS)) \
	$(patsubst %,$(BUILD)/test_programs/%_ptds,$(TEST_PROGRAM_PTDS))

$(BUILD)/test_programs/%: test_programs/%.cu test_programs/ss_test.cuh | check-cuda
	@mkdir -p $(@D)
	$(NVCC) $(TEST_PROGRAM_ARCH) -O2 -g -lineinfo -std=c++17 -Xcompiler -Wall,-Wextra $(TEST_PROGRAM_SRC_FLAGS) -o $@ $<

# The per-thread default stream build (the shorter stem wins over the rule above).
$(BUILD)/test_programs/%_ptds: test_programs/%.cu test_programs/ss_test.cuh | check-cuda
	@mkdir -p $(@D)
	$(NVCC) $(TEST_PROGRAM_ARCH) -O2 -g -lineinfo -std=c++17 -Xcompiler -Wall,-Wextra --default-stream per-thread \
		$(TEST_PROGRAM_SRC_FLAGS) -o $@ $<

# Twins that #include the program they fix.
$(BUILD)/test_programs/legacy_stream_fixed: test_programs/legacy_stream.cu
$(BUILD)/test_programs/device_sync_loop_fixed: test_programs/device_sync_loop.cu
$(BUILD)/test_programs/implicit_memcpy_pageable_fixed: test_programs/implicit_memcpy_pageable.cu
$(BUILD)/test_programs/missing_fence_wrong_stream $(BUILD)/test_programs/missing_fence_fixed \
$(BUILD)/test_programs/unrecorded_event $(BUILD)/test_programs/unrecorded_event_fixed: test_programs/missing_fence.cu
$(BUILD)/test_programs/multigpu_fence_fixed: test_programs/multigpu_fence.cu
$(BUILD)/test_programs/first_launch_jit_fixed: test_programs/first_launch_jit.cu
$(BUILD)/test_programs/stream_waves_fixed: test_programs/stream_waves.cu
$(BUILD)/test_programs/legacy_barrier_needed_fixed $(BUILD)/test_programs/legacy_barrier_needed_fixed_ptds: \
	test_programs/legacy_barrier_needed.cu
$(BUILD)/test_programs/readonly_factor_racy: test_programs/readonly_factor.cu
$(BUILD)/test_programs/ptds_consumer_fixed $(BUILD)/test_programs/ptds_consumer_fixed_ptds: test_programs/ptds_consumer.cu
$(BUILD)/test_programs/memset_async_fixed $(BUILD)/test_programs/memset_async_fixed_ptds: test_programs/memset_async.cu
$(BUILD)/test_programs/graph_pageable_fixed: test_programs/graph_pageable.cu
$(BUILD)/test_programs/incomplete_sync_fixed $(BUILD)/test_programs/incomplete_sync_fixed_ptds: \
	test_programs/incomplete_sync.cu
$(BUILD)/test_programs/event_timing_gap_fixed $(BUILD)/test_programs/event_timing_gap_fixed_ptds: \
	test_programs/event_timing_gap.cu
$(BUILD)/test_programs/omp_chunked_streams_fixed $(BUILD)/test_programs/omp_chunked_streams_fixed_ptds: \
	test_programs/omp_chunked_streams.cu
$(BUILD)/test_programs/pthread_handoff_racy: test_programs/pthread_handoff.cu
$(BUILD)/test_programs/legacy_record_handoff_racy: test_programs/legacy_record_handoff.cu
