# Call-site symbolization (analyzer/symbolize.c) and the call-stack capture
# benchmark.  analyzer.mk compiles symbolize.c into build/syncsight with
# $(SYMBOLIZE_CFLAGS) and links it with $(SYMBOLIZE_LIBS).

# elfutils' libdw gives function, file:line and inlined frames.  Without its
# headers (a machine without libdw-dev) symbolize.c hands each module to
# llvm-symbolizer or binutils' addr2line run as a child process, and without
# those reports module+offset and says why.  `make LIBDW=0` builds without
# libdw even where it is installed (tests/test_symbolize_nodw.sh does).
# Probe by compiling AND linking what symbolize.c uses: a compiler may ship
# some elfutils headers without dwarf.h or without the library itself.
ifeq ($(LIBDW),0)
SYMBOLIZE_HAVE_LIBDW := no
else
SYMBOLIZE_HAVE_LIBDW := $(shell printf '#include <dwarf.h>\n#include <elfutils/libdw.h>\n#include <elfutils/libdwfl.h>\n#include <gelf.h>\nint main(void){return dwfl_begin(0)!=0;}\n' | $(CC) -x c - -o /dev/null -ldw -lelf >/dev/null 2>&1 && echo yes)
endif
ifeq ($(SYMBOLIZE_HAVE_LIBDW),yes)
SYMBOLIZE_CFLAGS :=
SYMBOLIZE_LIBS   := -ldw -lelf -ldl
else
SYMBOLIZE_CFLAGS := -DSS_NO_LIBDW
SYMBOLIZE_LIBS   := -ldl
endif

# The shim's call-site sources, with the test stand-ins for runtime.c that the
# benchmark and tests/test_symbolize*.sh link them against.
CALLSITE_SHIM_SRCS := preload/callsite.c preload/pystack.c

.PHONY: bench-callsite
# ns per captured stack for each unwinder, and for the full capture path.
bench-callsite: $(BUILD)/bench_callsite
	$(BUILD)/bench_callsite

$(BUILD)/bench_callsite: bench/bench_callsite.c $(CALLSITE_SHIM_SRCS) tests/callsite_fake_runtime.c tests/callsite_fake_runtime.h $(COMMON_SRCS) preload/shim.h preload/callsite_internal.h
	@mkdir -p $(BUILD)
	$(CC) $(BASE_CFLAGS) -Ipreload -Itests -O2 -g -fno-omit-frame-pointer -o $@ bench/bench_callsite.c $(CALLSITE_SHIM_SRCS) tests/callsite_fake_runtime.c $(COMMON_SRCS) -ldl -lpthread
