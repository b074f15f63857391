# The shim's CUDA API recording: code generated from preload/cuda_api.tab by
# tools/gen_api.py.  Included before preload/preload.mk, which compiles and
# links $(API_GEN_SRCS) with $(PRELOAD_CFLAGS) beside preload/*.c
# (api_support.c among them).
#
#   make api-gen      generate build/gen/ss_api_*.c (ss_api_classes.c is the
#                     analyzer's table: analyzer/analyzer.mk compiles it)
#   make api-check    compile the generated and support code on its own
#                     (the CUPTI path against CUPTI's params structs: a
#                     wrong field name in the table fails here)
#   make api-docs     regenerate docs/api-coverage.md from the table
#   make api-bench    wrapper overhead against a fake "real" function (CPU)
#   make api-driver-bench  cost of the CUPTI driver callbacks (CPU, fake libcupti)

API_TAB      := preload/cuda_api.tab
API_GEN      := tools/gen_api.py
API_GEN_DIR  := $(BUILD)/gen
API_GEN_SRCS := $(API_GEN_DIR)/ss_api_wrap.c $(API_GEN_DIR)/ss_api_wrap_pt.c $(API_GEN_DIR)/ss_api_cupti.c
API_SYMBOLS  := $(API_GEN_DIR)/ss_api_symbols.txt

.PHONY: api-gen api-check api-docs api-bench api-driver-bench

# One generator run makes every output: a pattern rule with several targets
# is run once for all of them (portable to make < 4.3, unlike &:).
%/ss_api_wrap.c %/ss_api_wrap_pt.c %/ss_api_cupti.c %/ss_api_symbols.txt %/ss_api_classes.c: $(API_TAB) $(API_GEN)
	@mkdir -p $*
	$(PYTHON) $(API_GEN) $(API_TAB) --out $*

api-gen: $(API_GEN_SRCS) $(API_SYMBOLS) $(BUILD)/gen/ss_api_classes.c

API_CHECK_OBJS := $(patsubst $(API_GEN_DIR)/%.c,$(BUILD)/api-check/%.o,$(API_GEN_SRCS)) \
                  $(BUILD)/api-check/api_support.o

# With the shim's own flags ($(PRELOAD_CFLAGS), preload/preload.mk).
$(BUILD)/api-check/%.o: $(API_GEN_DIR)/%.c $(wildcard preload/*.h) | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -Werror -c $< -o $@

$(BUILD)/api-check/api_support.o: preload/api_support.c $(wildcard preload/*.h) | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -Werror -c $< -o $@

api-check: $(API_CHECK_OBJS)

api-docs: $(API_TAB) $(API_GEN)
	$(PYTHON) $(API_GEN) $(API_TAB) --doc docs/api-coverage.md

# Micro-benchmark on the CPU: tests/api_bench.c against the fake cudart and
# driver of the interposer test, without and with the shim preloaded.
API_BENCH_DIR := $(BUILD)/api-bench
API_FAKE_FLAGS := -std=gnu11 -Wall -Wextra -O2 -Iinclude -I$(CUDA_HOME)/include

$(API_BENCH_DIR)/lib/libcudart.so.13: tests/api_fake_cudart.c tests/api_fake_cudart.map | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(API_FAKE_FLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,libcudart.so.13 \
		-Wl,--version-script=tests/api_fake_cudart.map -o $@ tests/api_fake_cudart.c -ldl

$(API_BENCH_DIR)/lib/libcuda.so.1: tests/api_fake_cuda.c | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(API_FAKE_FLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $@ tests/api_fake_cuda.c

$(API_BENCH_DIR)/api_bench: tests/api_bench.c $(API_BENCH_DIR)/lib/libcudart.so.13 $(API_BENCH_DIR)/lib/libcuda.so.1
	$(CC) $(API_FAKE_FLAGS) -o $@ tests/api_bench.c $(API_BENCH_DIR)/lib/libcudart.so.13 \
		$(API_BENCH_DIR)/lib/libcuda.so.1 -Wl,-rpath,'$$ORIGIN/lib'

api-bench: $(API_BENCH_DIR)/api_bench $(BUILD)/libsyncsight.so
	@echo "--- without the shim"
	@$(API_BENCH_DIR)/api_bench
	@echo "--- with LD_PRELOAD=$(BUILD)/libsyncsight.so (SYNCSIGHT_CUPTI=0, trace in $(API_BENCH_DIR)/out)"
	@rm -rf $(API_BENCH_DIR)/out
	@SYNCSIGHT_CUPTI=0 SYNCSIGHT_OUTPUT_DIR=$(API_BENCH_DIR)/out LD_PRELOAD=$(abspath $(BUILD)/libsyncsight.so) \
		$(API_BENCH_DIR)/api_bench

# The CUPTI driver-callback path on the CPU: tests/api_driver_bench.c calls
# the shim's subscriber callback as CUPTI would (fake libcupti), for a nested
# driver call (ignored) and for driver calls the program makes (recorded).
$(API_BENCH_DIR)/lib/libcupti.so.13: tests/api_fake_cupti.c | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(API_FAKE_FLAGS) -I$(CUPTI_INC_DIR) -fPIC -shared -fvisibility=hidden -Wl,-soname,libcupti.so.13 \
		-o $@ tests/api_fake_cupti.c -lpthread

$(API_BENCH_DIR)/api_driver_bench: tests/api_driver_bench.c $(API_BENCH_DIR)/lib/libcudart.so.13 \
		$(API_BENCH_DIR)/lib/libcuda.so.1
	$(CC) $(API_FAKE_FLAGS) -I$(CUPTI_INC_DIR) -o $@ tests/api_driver_bench.c \
		-Wl,--no-as-needed $(API_BENCH_DIR)/lib/libcudart.so.13 $(API_BENCH_DIR)/lib/libcuda.so.1 \
		-Wl,--as-needed -Wl,-rpath,'$$ORIGIN/lib' -ldl

api-driver-bench: $(API_BENCH_DIR)/api_driver_bench $(API_BENCH_DIR)/lib/libcupti.so.13 $(BUILD)/libsyncsight.so
	@rm -rf $(API_BENCH_DIR)/out-driver
	@SYNCSIGHT_CUPTI_LIB=$(abspath $(API_BENCH_DIR)/lib/libcupti.so.13) SYNCSIGHT_OUTPUT_DIR=$(API_BENCH_DIR)/out-driver \
		LD_PRELOAD=$(abspath $(BUILD)/libsyncsight.so) $(API_BENCH_DIR)/api_driver_bench
