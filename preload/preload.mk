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

PRELOAD_SRCS := $(wildcard preload/*.c)
# Recursive (=) and expanded a second time in the link rule: api.mk, which
# defines API_GEN_SRCS, is included after this fragment.
PRELOAD_OBJS = $(patsubst preload/%.c,$(BUILD)/preload/%.o,$(PRELOAD_SRCS)) \
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

.SECONDEXPANSION:
# Hand-written sources may include headers generated with the API code.
$(patsubst preload/%.c,$(BUILD)/preload/%.o,$(PRELOAD_SRCS)): | $$(API_GEN_SRCS)

$(BUILD)/libsyncsight.so: $$(PRELOAD_OBJS) | check-cuda
	$(CC) $(PRELOAD_OBJS) $(PRELOAD_LDFLAGS) -o $@

-include $(wildcard $(BUILD)/preload/*.d $(BUILD)/preload/*/*.d)

.PHONY: shim
shim: $(BUILD)/libsyncsight.so
