/*
 * Offline symbolization of recorded call stacks (implementation:
 * analyzer/symbolize.c, on elfutils' libdw, or without it through
 * llvm-symbolizer / addr2line run as child processes).  The analyzer feeds it the
 * SS_REC_MODULE records of a trace and asks for the frames of each return
 * address of an SS_REC_STACK.
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
    int         is_user;     /* 0 for CUDA libraries, syncsight, libc/libstdc++/ld.so, the Python
                                interpreter and PyTorch's own libraries; 1 otherwise */
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

/* Which symbolizer this analyzer uses, for `syncsight --version`: "libdw",
 * "llvm-symbolizer (PATH, ...)", "addr2line (PATH, ...)" or "none (why)".  The
 * first word is what scripts test. */
void ss_symbolizer_describe(char *out, size_t outlen);

#endif
