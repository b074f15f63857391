/*
 * What a kernel does with each of its pointer parameters, read from its SASS.
 *
 * The trace holds each loaded module's cubin (SS_REC_CUBIN).  For a kernel of
 * such an image, ss_sass_classify() finds its parameter block in constant
 * bank 0 from the ELF (.nv.info.<kernel>: EIATTR_PARAM_CBANK,
 * EIATTR_KPARAM_INFO), disassembles the image with the toolkit's nvdisasm
 * once, and runs a forward taint analysis over the kernel's basic blocks:
 * registers loaded from a parameter word carry its taint through moves and
 * arithmetic; a global/generic load, store or atomic whose address is tainted
 * reads / writes / read-writes through that word.  A word whose value leaves
 * what the analysis follows (stored to memory, passed to an external call,
 * used by an instruction it does not know, read through a dynamic constant
 * index) is SS_ACCESS_UNKNOWN, never NONE.  docs/design.md ("How kernel reads
 * and writes are known") has the method, the limits and the settings.
 *
 * Everything here is independent of the model: it works on an ELF image in
 * memory, which is untrusted input (every read is bounds-checked).
 */
#ifndef SYNCSIGHT_ANALYZER_SASS_H
#define SYNCSIGHT_ANALYZER_SASS_H

#include <stddef.h>
#include <stdint.h>

typedef enum ss_param_access {
    SS_ACCESS_UNKNOWN = 0,  /* no evidence: no cubin, no disassembler, data flow not tracked (escapes, calls) */
    SS_ACCESS_NONE,         /* never used as an address of a global/generic memory access */
    SS_ACCESS_READ,
    SS_ACCESS_WRITE,
    SS_ACCESS_READ_WRITE,   /* includes atomics / reductions */
} ss_param_access;

/* Classify the 8-byte-aligned parameter words of kernel `mangled` found in ELF image img.
 * out[k] is the access through the word at parameter-buffer offset 8*k, for k < nwords
 * (words past the kernel's parameter block are UNKNOWN).
 * Returns 0 on success, -1 with a one-line reason in err (kernel not in image, no disassembler, ...).
 * Results are cached per image (by content hash) and function: each function is
 * disassembled once per process (nvdisasm -fun: only the functions asked about). */
int ss_sass_classify(const uint8_t *img, size_t len, const char *mangled,
                     ss_param_access *out, uint32_t nwords, char *err, size_t errlen);
const char *ss_param_access_name(ss_param_access a);

/* Classify, from one disassembly restricted to them, the kernels among
 * `names` that the image defines, into the cache that ss_sass_classify reads
 * (which would otherwise disassemble the image once per kernel asked about).
 * Safe on several threads at once (one image each, or the same). */
void ss_sass_prepare(const uint8_t *img, size_t len, const char *const *names, uint32_t nnames);

/* Drop the process-wide cache of disassembled images (results are recomputed
 * on the next ss_sass_classify). */
void ss_sass_cache_free(void);

/* ---- the ELF side, exposed for the model glue and the tests ------------- */

typedef struct ss_kparam {
    uint16_t ordinal;       /* position in the signature */
    uint16_t offset;        /* byte offset in the parameter buffer */
    uint32_t size;          /* bytes */
} ss_kparam;

typedef struct ss_cubin_kernel {
    uint32_t cbank_offset;  /* where the parameter buffer starts in c[0x0] */
    uint32_t cbank_size;    /* its size in bytes */
    ss_kparam *params;      /* sorted by ordinal; owned (ss_cubin_kernel_free) */
    uint32_t nparams;
} ss_cubin_kernel;

/* 1 when the image's symbol table defines function `name`, 0 when not, -1
 * when img is not a well-formed 64-bit little-endian ELF. */
int ss_cubin_has_function(const uint8_t *img, size_t len, const char *name);
/* Parameter layout of kernel `name` from .nv.info.<name>.  0 on success; -1
 * with a reason in err (not an ELF, no such kernel, no EIATTR_PARAM_CBANK). */
int ss_cubin_kernel_info(const uint8_t *img, size_t len, const char *name,
                         ss_cubin_kernel *out, char *err, size_t errlen);
void ss_cubin_kernel_free(ss_cubin_kernel *k);

/* The analysis on disassembly text (nvdisasm -c output) of one function,
 * given its parameter block: what ss_sass_classify runs once the image is
 * disassembled.  `text` holds the function's lines (its .text.<name> section).
 * out has cbank_size/8 (rounded up) entries.  0, or -1 with a reason. */
int ss_sass_analyze_text(const char *text, size_t textlen, uint32_t cbank_offset,
                         uint32_t cbank_size, ss_param_access *out, char *err, size_t errlen);

/* Path of the nvdisasm that ss_sass_classify would run ($SYNCSIGHT_NVDISASM,
 * $CUDA_HOME/bin/nvdisasm, /usr/local/cuda/bin/nvdisasm, then PATH), or NULL
 * with the reason in err (also when SYNCSIGHT_SASS=0). */
const char *ss_sass_disassembler(char *err, size_t errlen);

#endif
