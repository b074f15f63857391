# The analyzer CLI, build/syncsight (analyzer/), and `make demo`.
#
# ANALYZER_LIB_SRCS: every analyzer source but main.c, for the tests
# (tests/test_analyzer_*.c link against them, see tests/tests.mk) and the
# fuzzer.  analyzer/LAYERS says which file may use which (tools/check_layers.py).
# Included after analyzer/symbolize.mk, which decides SYMBOLIZE_CFLAGS/LIBS.

# The API table (class and host behaviour of every recorded entry point) is
# generated from preload/cuda_api.tab by tools/gen_api.py, with the shim's
# wrappers (the rule is in preload/api.mk): it is part of ANALYZER_LIB_SRCS,
# so everything that links those (tests, fuzz) gets it.  Python only, no CUDA.
ANALYZER_GEN_SRCS := $(BUILD)/gen/ss_api_classes.c
ANALYZER_LIB_SRCS := $(filter-out analyzer/main.c,$(wildcard analyzer/*.c)) $(ANALYZER_GEN_SRCS)
ANALYZER_HDRS     := $(wildcard analyzer/*.h) $(wildcard include/syncsight/*.h)
ANALYZER_OBJS     := $(patsubst %.c,$(BUILD)/%.o,$(filter analyzer/%,$(ANALYZER_LIB_SRCS)) analyzer/main.c) \
                     $(patsubst $(BUILD)/gen/%.c,$(BUILD)/analyzer-gen/%.o,$(ANALYZER_GEN_SRCS))
ANALYZER_COMMON_OBJS := $(patsubst %.c,$(BUILD)/analyzer/%.o,$(COMMON_SRCS))
ANALYZER_CFLAGS   := $(BASE_CFLAGS) $(CFLAGS) $(SYMBOLIZE_CFLAGS) -pthread

$(BUILD)/analyzer/%.o: analyzer/%.c $(ANALYZER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ANALYZER_CFLAGS) -c -o $@ $<

$(BUILD)/analyzer-gen/%.o: $(BUILD)/gen/%.c $(ANALYZER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ANALYZER_CFLAGS) -Ianalyzer -c -o $@ $<

$(BUILD)/analyzer/common/%.o: common/%.c $(ANALYZER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ANALYZER_CFLAGS) -c -o $@ $<

$(BUILD)/syncsight: $(ANALYZER_OBJS) $(ANALYZER_COMMON_OBJS)
	$(CC) $(CFLAGS) -pthread -o $@ $^ $(SYMBOLIZE_LIBS) -lm

.PHONY: analyzer demo
analyzer: $(BUILD)/syncsight

# `make demo`: a bundled pathology under syncsight; without a GPU, the report
# of a recorded trace of the same program from tests/fixtures/.
DEMO_PROGRAM ?= legacy_stream
DEMO_FIXTURE ?= $(firstword $(wildcard tests/fixtures/$(DEMO_PROGRAM)*.sstrace) $(wildcard tests/fixtures/*.sstrace))
demo: $(BUILD)/syncsight
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && [ -e /dev/nvidia0 ]; then \
	    $(MAKE) --no-print-directory $(BUILD)/libsyncsight.so $(BUILD)/test_programs/$(DEMO_PROGRAM) && \
	    $(BUILD)/syncsight run -o $(BUILD)/demo/ -- $(BUILD)/test_programs/$(DEMO_PROGRAM); \
	else \
	    if [ -n "$(DEMO_FIXTURE)" ]; then \
	        echo "demo: no GPU here (nvidia-smi or /dev/nvidia0 missing): reporting the recorded trace $(DEMO_FIXTURE) instead"; \
	        SYNCSIGHT_SYMBOL_PATH=$${SYNCSIGHT_SYMBOL_PATH:-tests/fixtures/bin} $(BUILD)/syncsight report $(DEMO_FIXTURE); \
	    else \
	        echo "demo: no GPU here and no recorded trace in tests/fixtures/: reporting a synthetic trace of the same pathology (tests/test_analyzer_rules.c)"; \
	        $(MAKE) --no-print-directory $(BUILD)/tests/test_analyzer_rules >/dev/null && \
	        $(BUILD)/tests/test_analyzer_rules --write-traces $(BUILD)/demo-synthetic >/dev/null && \
	        $(BUILD)/syncsight report $(BUILD)/demo-synthetic/legacy.sstrace; \
	    fi; \
	fi
