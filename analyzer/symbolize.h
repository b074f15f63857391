/*
 * Offline symbolization of recorded call stacks, and THE user-code policy
 * (implementation: analyzer/symbolize.c, on elfutils' libdw, or without it
 * through llvm-symbolizer / addr2line run as child processes).
 *
 * The caller feeds the symbolizer the SS_REC_MODULE records of a trace and
 * asks for the frames of each return address of an SS_REC_STACK.  Which
 * frames are the user's own code -- native frames and Python files alike --
 * is decided here and nowhere else: the call site of a finding, the stars of
 * a printed stack and the rules that look at Python frames all ask this file.
 *
 * Everything here works on raw addresses and strings (no analyzer model), so
 * that the call-site tests can link it alone (tests/callsite/check.c).  Strings
 * handed out are the program's own bytes: escaping them is the renderer's job.
 */
#ifndef SYNCSIGHT_SYMBOLIZE_H
#define SYNCSIGHT_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ss_frame {
    uint64_t    addr;        /* address as recorded */
    const char *module;      /* path of the module, or NULL when unknown (owned by the symbolizer) */
    uint64_t    offset;      /* addr - module base */
    const char *function;    /* demangled when possible, NULL when unknown (owned by the symbolizer) */
    const char *file;        /* source file, NULL when no line info (owned by the symbolizer) */
    int         line;        /* 0 when unknown */
    int         inlined;     /* 1 for a frame inlined into the next one */
    int         is_user;     /* ss_frame_is_user() of this frame alone */
    /* Set by ss_stack_walk on the user frame it shows: the header-only CUDA
     * library (ss_header_library) whose code the compiler inlined into it at
     * this address, and that library's outermost inlined function there (the
     * call the user wrote, thrust::reduce); NULL when none. */
    const char *header_lib;
    const char *header_fn;
} ss_frame;

typedef struct ss_symbolizer ss_symbolizer;

ss_symbolizer *ss_symbolizer_new(void);
void ss_symbolizer_free(ss_symbolizer *s);

/* Register a module of the traced process (from SS_REC_MODULE). */
void ss_symbolizer_add_module(ss_symbolizer *s, const char *path, uint64_t base, uint64_t size,
                              const uint8_t *build_id, size_t build_id_len);

/* The traced program's working directory (META "cwd"), or NULL.  addr2line
 * prints file names joined with their compilation directory; those under
 * this directory are shown relative to it, as libdw and llvm-symbolizer show
 * them (a program is usually built where it runs).  Call before resolving. */
void ss_symbolizer_set_cwd(ss_symbolizer *s, const char *cwd, size_t len);

/* Resolve one return address into up to `max` frames, innermost (inlined)
 * first.  Always returns at least 1 when max >= 1: with no symbols the frame
 * carries module + offset (or only the address).  Results are cached; the
 * strings live as long as the symbolizer. */
size_t ss_symbolizer_resolve(ss_symbolizer *s, uint64_t addr, ss_frame *out, size_t max);

/* Why symbols are missing for a module ("binary not found", "stripped", ...),
 * or NULL when it was symbolized fine. */
const char *ss_symbolizer_module_problem(ss_symbolizer *s, const char *path);

/* ---- the user-code policy -------------------------------------------------- */

/* A module (shared object or executable, by path) that can hold the user's
 * code: not the CUDA libraries, syncsight, the C/C++ runtime and loader, the
 * Python interpreter and its extension directory, PyTorch's own libraries. */
int ss_module_is_user(const char *path);
/* The family of an NVIDIA CUDA library ("libcudnn", "libcublas", "libnccl",
 * ...) that `path` is one of, or NULL. */
const char *ss_module_cuda_library(const char *path);

/* A module that makes CUDA calls for every program and is no library the
 * program chose to call: the driver and its helpers, the CUDA runtime, the
 * tool interfaces (CUPTI, the Sanitizer API), NVTX, syncsight, the C/C++
 * runtime and the loader.  Never the user's (ss_module_is_user). */
int ss_module_is_plumbing(const char *path);

/* One resolved frame: its module is the user's, and it is none of the code
 * linked into the user's binary that still is not theirs -- nvcc's static
 * cudart (cudaFree, cudart::..., without line info), the glue nvcc generates
 * around a <<<>>> launch (__device_stub__*, __cudaLaunchKernel_helper, the
 * toolkit's headers), the C start-up code (_start, __libc_start_main, ...,
 * whatever line info it has). */
int ss_frame_is_user(const ss_frame *f);

/* The header-only CUDA C++ library a source file belongs to, by its place in
 * an include tree (".../include/[cccl/]thrust/...": "Thrust"; cub: "CUB";
 * cuda/: "libcu++"), or NULL.  Their code is compiled into the user's binary
 * (templates), so its frames are the user's module but not the user's code:
 * a CUDA call made inside thrust::reduce is Thrust's, made on the user's
 * behalf, as a call made inside libcublas is cuBLAS's. */
const char *ss_header_library(const char *file);
/* `name` (one ss_header_library gives) is a library whose algorithms
 * synchronize by themselves, unasked (Thrust); CUB's and libcu++'s syncs are
 * calls the program makes by name. */
int ss_header_library_syncs_by_itself(const char *name);

/* A C++ function name as a person writes the call: no return type, template
 * arguments, parameter list or ABI-versioning inline namespaces
 * ("thrust::THRUST_300001_SM_900_NS::reduce<...>(...)" -> "thrust::reduce");
 * a name that is no C++ name comes back as it is (truncated to `len`). */
void ss_function_short(const char *fn, char *out, size_t len);

/* A Python source file of the user's, as opposed to the interpreter's
 * frozen/bootstrap modules ("<frozen importlib._bootstrap>", "<string>") and
 * PyTorch's or Triton's own Python.  `len` bytes, not NUL-terminated. */
int ss_pyfile_is_user(const char *file, size_t len);

/* The part of a Python file's path from its package on: after the last
 * site-packages/ or dist-packages/ ("torch/cuda/__init__.py"), else the
 * whole path.  Its length in *n. */
const char *ss_pyfile_package_path(const char *file, size_t len, size_t *n);

/* Python code that torch.compile generated from the user's (the output code
 * under /tmp/torchinductor_<user>/). */
int ss_pyfile_is_generated(const char *file, size_t len);

/* ---- stacks as the user sees them ------------------------------------------ */

/* Walk a native stack (return addresses innermost first, as in SS_REC_STACK):
 * visit(ctx, i, shown, is_user) once per address i with the frame to show for
 * it -- of its chain of inlined calls, the innermost user frame, else the
 * function the address is in -- and whether that is the user's code.
 *
 * A kernel launch goes through frames that are the user's by module but not
 * by what they are: nvcc's __device_stub__<kernel>, and the host function
 * with the kernel's own name that calls it, whose line info is the kernel's
 * DEFINITION (ss_test.cuh:47 spin_kernel(...)), not the launch.  Past a
 * stub, a frame named like its kernel is skipped, inlined or not, so that the
 * first user frame is the line with the <<<>>>. */
typedef void (*ss_frame_visit)(void *ctx, uint32_t i, const ss_frame *shown, int is_user);
void ss_stack_walk(ss_symbolizer *s, const uint64_t *addrs, uint32_t depth, ss_frame_visit visit, void *ctx);

/* The first user frame of a stack (as ss_stack_walk shows it) into *site;
 * returns its index in addrs, or -1 when no frame is the user's. */
int ss_stack_site(ss_symbolizer *s, const uint64_t *addrs, uint32_t depth, ss_frame *site);

/* A frame as text: "file:line function", or without line info
 * "module+0xoffset function" / "module+0xoffset", or "0xaddr". */
void ss_frame_format(const ss_frame *f, char *out, size_t outlen);

/* ss_stack_site() as text into `site` ("" when no user frame): the form
 * tests/callsite/check.c prints.  Returns the frame's index or -1. */
int ss_site_format(ss_symbolizer *s, const uint64_t *addrs, uint32_t depth, char *site, size_t sitelen);

/* Which symbolizer this analyzer uses, for `syncsight --version`: "libdw",
 * "llvm-symbolizer (PATH, ...)", "addr2line (PATH, ...)" or "none (why)".  The
 * first word is what scripts test. */
void ss_symbolizer_describe(char *out, size_t outlen);

#endif
