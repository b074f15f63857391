# Fuzzing (docs/fuzzing.md), included by the top-level Makefile after
# analyzer/analyzer.mk and bench/bench.mk (its seeds use $(BUILD)/ss-gen-trace).
#
#   make fuzz [FUZZ_SECONDS=600] [FUZZ_JOBS=N]   each target for FUZZ_SECONDS
#   make fuzz-ci                                  a bounded pass (~FUZZ_CI_SECONDS in all)
#
# Targets: fuzz_reader (common/trace_io.c), fuzz_analyzer (the analyzer's
# load + analysis path, in process) and fuzz_export (every output format, held
# to what it promises: fuzz/output_checks.h).  libFuzzer needs clang.

FUZZ_CC         ?= clang
FUZZ_SECONDS    ?= 600
FUZZ_CI_SECONDS ?= 90
FUZZ_CFLAGS     := $(BASE_CFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined \
                   -fno-sanitize-recover=undefined -fno-omit-frame-pointer

FUZZ_TARGETS := fuzz_reader fuzz_analyzer fuzz_export

$(BUILD)/fuzz/fuzz_reader: fuzz/fuzz_reader.c fuzz/fuzz_common.h $(COMMON_SRCS) include/syncsight/trace_format.h include/syncsight/trace_io.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ fuzz/fuzz_reader.c $(COMMON_SRCS)

# The harness calls the model, the rules and the findings itself: the
# subcommands (cmd_*.c) and the exporters (export_*.c) are not linked in.
FUZZ_ANALYZER_SRCS := $(filter-out analyzer/cmd_%.c analyzer/export%.c,$(ANALYZER_LIB_SRCS))

$(BUILD)/fuzz/fuzz_analyzer: fuzz/fuzz_analyzer.c fuzz/fuzz_common.h fuzz/fuzz_judge.h fuzz/output_checks.h $(COMMON_SRCS) $(FUZZ_ANALYZER_SRCS) $(wildcard analyzer/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ianalyzer $(SYMBOLIZE_CFLAGS) -o $@ fuzz/fuzz_analyzer.c $(FUZZ_ANALYZER_SRCS) $(COMMON_SRCS) $(SYMBOLIZE_LIBS) -pthread -lm

# The same with the exporters (export_*.c) and dump's work (cmd_dump.c's
# ss_dump_file): every output format in memory.
FUZZ_EXPORT_SRCS := $(filter-out analyzer/cmd_%.c,$(ANALYZER_LIB_SRCS)) analyzer/cmd_dump.c

$(BUILD)/fuzz/fuzz_export: fuzz/fuzz_export.c fuzz/fuzz_common.h fuzz/fuzz_judge.h fuzz/output_checks.h fuzz/export_promises.h $(COMMON_SRCS) $(FUZZ_EXPORT_SRCS) $(wildcard analyzer/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ianalyzer $(SYMBOLIZE_CFLAGS) -o $@ fuzz/fuzz_export.c $(FUZZ_EXPORT_SRCS) $(COMMON_SRCS) $(SYMBOLIZE_LIBS) -pthread -lm

# Seeds: recorded fixtures, small generated traces and their truncations.
$(BUILD)/fuzz/seeds/.stamp: $(BUILD)/ss-gen-trace fuzz/make_seeds.sh $(wildcard tests/fixtures/*.sstrace)
	rm -rf $(@D)
	bash fuzz/make_seeds.sh $(BUILD)/ss-gen-trace $(@D)
	@touch $@

.PHONY: fuzz fuzz-ci fuzz-build
fuzz-build: $(addprefix $(BUILD)/fuzz/,$(FUZZ_TARGETS)) $(BUILD)/fuzz/seeds/.stamp

fuzz: fuzz-build
	bash fuzz/run_fuzz.sh $(FUZZ_SECONDS) $(BUILD) $(FUZZ_TARGETS)

fuzz-ci: fuzz-build
	bash fuzz/run_fuzz.sh $$(( $(FUZZ_CI_SECONDS) / $(words $(FUZZ_TARGETS)) )) $(BUILD) $(FUZZ_TARGETS)
