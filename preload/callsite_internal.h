/*
 * Interfaces between the two halves of call-site capture in the shim:
 * callsite.c (native stacks, module map) and pystack.c (Python stacks).
 * Not used outside preload/.
 */
#ifndef SYNCSIGHT_CALLSITE_INTERNAL_H
#define SYNCSIGHT_CALLSITE_INTERNAL_H

#include <stdint.h>
#include "producers.h"

/* Deepest Python stack recorded: the innermost frames are the ones that name
 * the user's call site, so a deep stack is cut at its outer end. */
#define SS_PYSTACK_MAX_DEPTH 32

/* Incremented whenever the module map is rescanned (a dlopen happened): lets
 * pystack.c retry resolving the Python C API in a program that loads
 * libpython late (an embedding application). */
SS_HIDDEN uint32_t ss_callsite_module_generation(void);

/* "libunwind" or "backtrace": the unwinder chosen at init. */
SS_HIDDEN const char *ss_callsite_unwinder(void);

/* Python stack of the calling thread as an SS_REC_PYSTACK id, or 0 when the
 * thread is not running Python or Python is absent.  The GIL is not needed:
 * the direct reader reads the interpreter's frames itself (pystack.c); only
 * the fallback C-API reader (unknown interpreter layouts) needs it. */
SS_HIDDEN uint32_t ss_pystack_capture(void);

/* After fork() in the child: forget the ids of the parent's trace. */
SS_HIDDEN void ss_pystack_atfork_child(void);

#endif
