/*
 * Call sites of a model's calls: where the user's code made a call, from the
 * native and Python stacks the trace recorded (implementation:
 * analyzer/callsite.c).
 *
 * One symbolizer per model (its module map), created on first use and freed
 * with the model; which frames are the user's is symbolize.h's policy.  What
 * this file hands out is raw program text (paths, function names): every
 * renderer escapes it for its own output.
 */
#ifndef SYNCSIGHT_ANALYZER_CALLSITE_H
#define SYNCSIGHT_ANALYZER_CALLSITE_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"
#include "symbolize.h"

/* The model's symbolizer, with the trace's modules registered. */
ss_symbolizer *ss_model_symbolizer(const ss_model *m);

typedef enum ss_site_kind {
    SS_SITE_NONE = 0,   /* nothing to point at: "(no call)" */
    SS_SITE_NATIVE,     /* the first user frame of the native stack */
    SS_SITE_PYTHON,     /* the first user frame of the Python stack, else its innermost */
    SS_SITE_CALL,       /* no stack to tell: the call itself, "<api> on <stream>" */
    SS_SITE_OP,         /* a GPU operation without a call: "<op> on <stream>" */
} ss_site_kind;

typedef struct ss_site {
    ss_site_kind kind;
    ss_frame native;                /* SS_SITE_NATIVE */
    ss_string_ref py_file, py_function;   /* SS_SITE_PYTHON ({NULL,0} when unknown) */
    uint32_t py_line;
    int32_t call, op;               /* the call (or op) the site is of, -1 */
} ss_site;

/* The site of model call `call`: its first user native frame, else its
 * Python stack's, else the call itself. */
void ss_call_site(const ss_model *m, int32_t call, ss_site *site);
/* The site of GPU op `op` that has no call to blame. */
void ss_op_site(const ss_model *m, int32_t op, ss_site *site);

/* The library that made call `call` on the user's behalf: walking its
 * native stack from the innermost frame, past the CUDA driver and runtime,
 * CUPTI, syncsight and the C/C++ runtime, the first frame is not the user's
 * and a user frame follows (the user's code called that library, and the
 * library made the call: cublasDestroy synchronizes the device).  The
 * library's file name ("libcublas.so.13") into lib and the function of its
 * that the user's code called, as far out as the library goes, into fn (""
 * when unknown); returns 1.  A header-only library's code (Thrust, CUB,
 * libcu++: ss_header_library), compiled into the user's binary and often
 * inlined into the user's line, is a library too: lib is its name
 * ("Thrust") and fn the call as written ("thrust::reduce").  0 when the user's code made the call itself,
 * when the call has a Python stack (a framework's calls are the Python
 * line's), or when no native stack says.  Thread-safe. */
int ss_call_library(const ss_model *m, int32_t call, char *lib, size_t liblen, char *fn, size_t fnlen);

/* The NVIDIA CUDA library (ss_module_cuda_library: cuDNN, cuBLAS, NCCL,
 * ...) that made call `call` itself, whoever called that library: its
 * native stack's innermost frames past the driver, runtime, CUPTI and C
 * runtime are that library's.  Its file name into lib and its outermost
 * function there into fn; returns 1.  0 when the innermost frames are
 * anything else (a framework's, the program's) or no native stack says.
 * Thread-safe. */
int ss_call_cuda_library(const ss_model *m, int32_t call, char *lib, size_t liblen, char *fn, size_t fnlen);

/* The module that made call `call` itself: its native stack's innermost
 * frame past the driver, runtime, CUPTI and C runtime, when that frame is no
 * module of the user's (a library: libcudnn_ops.so.9, a framework:
 * libtorch_cuda.so), Python stack or not.  Its file name into lib and that
 * frame's function into fn; returns 1.  0 when the frame is in the user's
 * own module, -1 when no native stack says.  Thread-safe. */
int ss_call_maker(const ss_model *m, int32_t call, char *lib, size_t liblen, char *fn, size_t fnlen);

/* The Python framework whose compiled code made call `call`: the innermost
 * frame of its native stack in a PyTorch module (libtorch*, libc10*, under
 * torch/) or a CuPy one (under cupy/ or cupy_backends/).  Its name
 * ("PyTorch", "CuPy") into name; returns 1.  0 when no frame is one of
 * theirs or no native stack says.  Thread-safe. */
int ss_call_framework(const ss_model *m, int32_t call, char *name, size_t len);

/* Was host wait `call` made by a Python framework's own machinery rather
 * than by the user's line?  Its Python stack, innermost first: the
 * innermost frame (past generated <string> frames) is the framework's
 * synchronize API (torch.cuda.synchronize, Stream.synchronize,
 * Event.synchronize); the frame that called it, when it lies in another
 * file inside the user's innermost frame, is the framework's own code
 * (Inductor's autotuner timing Triton configs under a compiled model's
 * call), not the user's (the user's line calling torch.cuda.synchronize(),
 * or the code torch.compile generated from it).  Then *pkg is its package
 * ("torch": the directory under site-packages/ or dist-packages/) and *where
 * that frame ("torch/_inductor/runtime/benchmarking.py:376
 * InductorBenchmarker.benchmark_gpu"); returns 1, else 0. */
int ss_call_python_library(const ss_model *m, int32_t call, char *pkg, size_t pkglen, char *where, size_t wlen);

/* The site as text, NUL-terminated (cut to fit): "file:line function",
 * "module+0xoffset function", "<api> on stream 0x... (<kind>)", ... */
void ss_site_text(const ss_model *m, const ss_site *site, char *buf, size_t len);

/* The source file (len bytes, not NUL-terminated) and line of a site that
 * has one (a native frame with line info, a Python frame); 0 when it has
 * none. */
int ss_site_source(const ss_site *site, const char **file, size_t *file_len, uint32_t *line);

/* A native site that stayed module+offset (no file:line): why, as raw text
 * "module: problem" into `why`, and 1; 0 for any other site.  The reports
 * say it once, with SS_UNRESOLVED_FIX. */
int ss_site_unresolved(const ss_model *m, const ss_site *site, char *why, size_t len);
#define SS_UNRESOLVED_FIX "build the program with -g; if its binaries moved or the trace was recorded on another " \
    "machine, set SYNCSIGHT_SYMBOL_PATH to the directories holding them or their NAME.debug files"

/* Line `line` (1-based) of the program's source file `file` (as a stack
 * names it: absolute, or relative to the traced program's cwd, META "cwd"),
 * NUL-terminated into buf without its newline.  Returns 0 when the file
 * cannot be read here or has no such line. */
int ss_model_source_line(const ss_model *m, const char *file, size_t flen, uint32_t line, char *buf, size_t len);

/* The frames of native stack `stack_id` as ss_stack_walk() shows them. */
void ss_model_stack_walk(const ss_model *m, uint32_t stack_id, ss_frame_visit visit, void *ctx);

/* The frames of Python stack `pystack_id`, innermost first. */
typedef void (*ss_pyframe_visit)(void *ctx, uint32_t i, ss_string_ref file, uint32_t line,
                                 ss_string_ref function, int is_user);
void ss_model_pystack_walk(const ss_model *m, uint32_t pystack_id, ss_pyframe_visit visit, void *ctx);

#endif
