# The CPU test suite: `make test` builds everything, then runs tests/run_tests.sh
# (C unit tests under ASan+UBSan, shell tests, fixture checks).  No GPU needed.
# `make test TESTS="trace_io fixture"` runs only tests whose names contain one
# of the words.  docs/testing.md describes the suite.

TEST_TIMEOUT ?= 600
TESTS ?=
# Unit tests see the project's internal headers next to the public ones.
TEST_CFLAGS = $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) -Itests -Ianalyzer -Ipreload
TEST_LIBS := -lm -lpthread -ldl

.PHONY: test test-cpu-suite
test: all
	@$(MAKE) --no-print-directory test-cpu-suite

# Separate from `test` so that the suite can be rerun without relinking `all`.
test-cpu-suite:
	@MAKE="$(MAKE)" BUILD="$(BUILD)" PYTHON="$(PYTHON)" TEST_TIMEOUT="$(TEST_TIMEOUT)" \
	  ANALYZER_LIB_SRCS="$(strip $(ANALYZER_LIB_SRCS))" NVCC="$(NVCC)" CUDA_HOME="$(CUDA_HOME)" \
	  bash tests/run_tests.sh $(TESTS)

# Analyzer and symbolizer tests link the analyzer's sources (all but main.c);
# the most specific pattern wins, so these two come before the generic rule.
$(BUILD)/tests/test_analyzer_%: tests/test_analyzer_%.c $(COMMON_SRCS) $(ANALYZER_LIB_SRCS) $(wildcard include/syncsight/*.h analyzer/*.h)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SYMBOLIZE_CFLAGS) -o $@ $< $(COMMON_SRCS) $(ANALYZER_LIB_SRCS) $(SYMBOLIZE_LIBS) $(TEST_LIBS)

# test_analyzer_export holds the outputs to fuzz_export's promises
$(BUILD)/tests/test_analyzer_export: $(wildcard fuzz/*.h)

$(BUILD)/tests/test_symbolize%: tests/test_symbolize%.c $(COMMON_SRCS) $(ANALYZER_LIB_SRCS) $(wildcard include/syncsight/*.h analyzer/*.h)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SYMBOLIZE_CFLAGS) -o $@ $< $(COMMON_SRCS) $(ANALYZER_LIB_SRCS) $(SYMBOLIZE_LIBS) $(TEST_LIBS)

$(BUILD)/tests/test_%: tests/test_%.c $(COMMON_SRCS) $(wildcard include/syncsight/*.h)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(COMMON_SRCS) $(TEST_LIBS)

# The layer order of preload/ (and analyzer/ once analyzer/LAYERS exists),
# from includes and calls: tools/check_layers.py.  `make test` runs it as
# tests/test_layers.sh, with self-tests of the checker.
.PHONY: check-layers
check-layers: $(API_GEN_SRCS) $(BUILD)/gen/ss_api_classes.c
	$(PYTHON) tools/check_layers.py --gen $(BUILD)/gen preload $(if $(wildcard analyzer/LAYERS),analyzer)
