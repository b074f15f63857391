# The shim: build/libsyncsight.so (LD_PRELOAD or CUDA_INJECTION64_PATH).
#
# Linked with -ldl -pthread only: the real cudart is reached through dlsym and
# libcupti is dlopen'ed at run time, so the library loads into programs that
# have no CUDA and degrades when CUPTI is missing.  The build-time libcupti
# path is embedded as the last dlopen fallback.

PRELOAD_CFLAGS := $(BASE_CFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -pthread \
	-I$(CUDA_HOME)/include -I$(CUPTI_INC_DIR) -Ipreload -I$(BUILD)/gen \
	-DSS_CUPTI_FALLBACK_PATH=\"$(CUPTI_LIB)\"
PRELOAD_LDFLAGS := -shared -ldl -pthread

# $(API_GEN_SRCS) comes from preload/api.mk, included before this file.
PRELOAD_SRCS := $(wildcard preload/*.c)
PRELOAD_OBJS := $(patsubst preload/%.c,$(BUILD)/preload/%.o,$(PRELOAD_SRCS)) \
                $(patsubst common/%.c,$(BUILD)/preload/common/%.o,$(COMMON_SRCS)) \
                $(patsubst $(BUILD)/gen/%.c,$(BUILD)/preload/gen/%.o,$(API_GEN_SRCS))

$(BUILD)/preload/%.o: preload/%.c | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/preload/common/%.o: common/%.c | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/preload/gen/%.o: $(BUILD)/gen/%.c | check-cuda
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -MMD -MP -c $< -o $@

# The sources in preload/ may include headers generated with the API code.
$(patsubst preload/%.c,$(BUILD)/preload/%.o,$(PRELOAD_SRCS)): | $(API_GEN_SRCS)

# The host sync wrappers read their TLS on every lock and unlock: TLS
# descriptors make that a static offset when the shim is preloaded, while a
# dlopen (CUDA_INJECTION64_PATH) still works, unlike initial-exec TLS
# (x86-64; aarch64 uses descriptors already).
ifneq ($(filter x86_64%,$(shell $(CC) -dumpmachine 2>/dev/null)),)
$(BUILD)/preload/hostsync.o: PRELOAD_CFLAGS += -mtls-dialect=gnu2
endif

-include $(wildcard $(BUILD)/preload/*.d $(BUILD)/preload/*/*.d)

.PHONY: shim
shim: $(BUILD)/libsyncsight.so

# ---- exact memory mode (preload/exact_memory.c, docs/shim.md) -------------
# Built in only when the CUDA Sanitizer API header is found: the toolkit's
# compute-sanitizer/include, or SANITIZER_HOME (a toolkit, a compute-sanitizer
# folder, or the prefix of the PyPI wheel nvidia-cuda-sanitizer-api, e.g.
# SANITIZER_HOME=/tmp/sanapi/nvidia/cu13), and nvcc to compile the device
# patch.  Without them exact_memory.c builds as a stub that says so at run
# time.  libsanitizer-public.so is dlopen'ed at run time only; the path found
# here is its last fallback.
SANITIZER_HOME ?=
SANITIZER_INC ?= $(firstword $(wildcard $(if $(SANITIZER_HOME),$(SANITIZER_HOME)/include/sanitizer.h \
	$(SANITIZER_HOME)/compute-sanitizer/include/sanitizer.h) $(CUDA_HOME)/compute-sanitizer/include/sanitizer.h))
SANITIZER_LIB ?= $(firstword $(wildcard $(if $(SANITIZER_HOME),$(SANITIZER_HOME)/lib/libsanitizer-public.so \
	$(SANITIZER_HOME)/libsanitizer-public.so $(SANITIZER_HOME)/compute-sanitizer/libsanitizer-public.so) \
	$(CUDA_HOME)/compute-sanitizer/libsanitizer-public.so))
XM_NVCC := $(shell command -v $(NVCC) 2>/dev/null)
# SASS for every architecture this nvcc knows (sm_75 and up), PTX of the newest.
XM_ARCHS ?= $(if $(XM_NVCC),$(shell $(NVCC) --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p' | sort -n))
XM_COMMA := ,
XM_GENCODE = $(foreach a,$(XM_ARCHS),-gencode arch=compute_$(a)$(XM_COMMA)code=sm_$(a)) \
	$(if $(XM_ARCHS),-gencode arch=compute_$(lastword $(XM_ARCHS))$(XM_COMMA)code=compute_$(lastword $(XM_ARCHS)))

ifneq ($(and $(SANITIZER_INC),$(XM_NVCC),$(XM_ARCHS)),)
$(BUILD)/preload/exact_memory.o: PRELOAD_CFLAGS += -DSS_HAVE_SANITIZER -I$(patsubst %/,%,$(dir $(SANITIZER_INC))) \
	-DSS_SANITIZER_FALLBACK_PATH=\"$(SANITIZER_LIB)\"

# The device patch: the Sanitizer API's patch format (the flags of NVIDIA's
# compute-sanitizer-samples; ptxas refuses -rdc=true with --compile-as-tools-patch).
$(BUILD)/gen/exact_memory_patch.fatbin: preload/exact_memory_patch.cu preload/exact_memory.h
	@mkdir -p $(dir $@)
	$(NVCC) -I$(patsubst %/,%,$(dir $(SANITIZER_INC))) -Ipreload --fatbin --keep-device-functions \
		-Xptxas --compile-as-tools-patch $(XM_GENCODE) -o $@ -c $<

$(BUILD)/gen/ss_xm_patch.c: $(BUILD)/gen/exact_memory_patch.fatbin tools/bin2c.py
	$(PYTHON) tools/bin2c.py $< $@ ss_xm_patch_image

PRELOAD_OBJS += $(BUILD)/preload/gen/ss_xm_patch.o
endif

.PHONY: exact-memory-info
exact-memory-info:
	@echo "sanitizer.h: $(or $(SANITIZER_INC),not found (set SANITIZER_HOME))"
	@echo "libsanitizer-public.so (fallback): $(or $(SANITIZER_LIB),not found)"
	@echo "nvcc: $(or $(XM_NVCC),not found)  archs: $(XM_ARCHS)"

# After the exact memory block: it adds the device patch to PRELOAD_OBJS.
$(BUILD)/libsyncsight.so: $(PRELOAD_OBJS) | check-cuda
	$(CC) $(PRELOAD_OBJS) $(PRELOAD_LDFLAGS) -o $@

# ---- call-stack capture benchmark (bench/bench_callsite.c) -----------------
# ns per captured stack for each unwinder, and for the full capture path:
# preload/callsite.c and pystack.c against the test stand-in for the layers
# below them (tests/callsite_fake_runtime.c), as tests/test_symbolize*.sh use.
CALLSITE_SHIM_SRCS := preload/callsite.c preload/pystack.c

.PHONY: bench-callsite
bench-callsite: $(BUILD)/bench_callsite
	$(BUILD)/bench_callsite

# The capture path is built as a library of its own, like the real shim: its
# frames are dropped from captured stacks as the shim's, the benchmark's kept.
$(BUILD)/libss_bench_callsite.so: bench/bench_callsite_shim.c $(CALLSITE_SHIM_SRCS) tests/callsite_fake_runtime.c \
		tests/callsite_fake_runtime.h $(COMMON_SRCS) $(wildcard preload/*.h)
	@mkdir -p $(BUILD)
	$(CC) $(BASE_CFLAGS) -Ipreload -Itests -O2 -g -fPIC -shared -fvisibility=hidden -o $@ bench/bench_callsite_shim.c \
		$(CALLSITE_SHIM_SRCS) tests/callsite_fake_runtime.c $(COMMON_SRCS) -ldl -lpthread

$(BUILD)/bench_callsite: bench/bench_callsite.c $(BUILD)/libss_bench_callsite.so
	$(CC) $(BASE_CFLAGS) -O2 -g -fno-omit-frame-pointer -o $@ bench/bench_callsite.c \
		$(BUILD)/libss_bench_callsite.so -Wl,-rpath,'$$ORIGIN' -ldl
