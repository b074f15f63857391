# Call-site symbolization (analyzer/symbolize.c).  Included before analyzer.mk,
# which compiles symbolize.c into build/syncsight with $(SYMBOLIZE_CFLAGS) and
# links it with $(SYMBOLIZE_LIBS).

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
