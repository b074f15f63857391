/*
 * What each launch does with its pointer parameters: the model-facing side of
 * sass.c.  A launch's kernel is found by its mangled name in the symbol tables
 * of the trace's cubins (SS_REC_CUBIN); the recorded parameter offsets
 * (SS_API_F_PARAM_OFFSETS) say which parameter word each recorded value is.
 * Results are cached per kernel in ss_model.kaccess.
 */
#ifndef SYNCSIGHT_ANALYZER_KERNEL_ACCESS_H
#define SYNCSIGHT_ANALYZER_KERNEL_ACCESS_H

#include <stdint.h>
#include "sass.h"

struct ss_model;
struct ss_call;
struct ss_kaccess;

/* Access through the i-th recorded parameter word of launch call c (cls SS_API_LAUNCH): uses the call's first kernel
 * op's name (mangled), the recorded offsets, and the cubins of the trace; cached per kernel.
 * SS_ACCESS_UNKNOWN whenever there is no evidence (no offsets, no cubin, no
 * disassembler, an escape). */
ss_param_access ss_kernel_param_access(const struct ss_model *m, const struct ss_call *c, uint32_t i);
/* Classify now every kernel that the questions here can ask about (each
 * launched kernel whose launch recorded parameters): afterwards they only read
 * the model and its cache, so the rules may ask from several threads at once,
 * and the classifications do not depend on which rule asked first. */
void ss_kernel_access_prepare(const struct ss_model *m);
/* NULL when every kernel asked about was classified; else one line saying why some were not (for the report). */
const char *ss_kernel_access_limits(const struct ss_model *m);
/* How many of the kernels asked about were not classified (*of: how many
 * were asked about; *why: the first reason), 0 when all were.  Of them,
 * *no_disasm were in a recorded image but nothing here disassembles it (no
 * .kaccess file beside the trace, no nvdisasm): that is fixable where the
 * report is made (*disasm_why: the first); the others' code was not recorded
 * (a library's kernels loaded outside the recorded modules). */
uint32_t ss_kernel_access_unknown(const struct ss_model *m, uint32_t *of, const char **why, uint32_t *no_disasm,
                                  const char **disasm_why);
/* What to do about kernels not classified: said with the count. */
#define SS_KERNEL_ACCESS_FIX "keep the FILE.sstrace.kaccess file that syncsight run writes beside the trace, or install the " \
    "CUDA toolkit's nvdisasm where you report (set SYNCSIGHT_NVDISASM or CUDA_HOME): without either, a kernel's " \
    "pointers count as read and written, so findings that depend on them are only possible"

/* The memory a kernel launch touches, one entry per allocation range: what
 * every rule that reasons about kernel memory uses (missing-fence, the
 * "may depend" test of rules.c).  From an exact-memory record when the trace
 * has one (SYNCSIGHT_EXACT_MEMORY: the byte ranges it really read and
 * wrote); else from its pointer arguments: certainly the byte at the pointer,
 * possibly up to the end of its allocation, reads/writes from the kernel's
 * code (ss_kernel_param_access; an argument it never dereferences is no
 * access; the same pointer passed twice is one access). */
typedef struct ss_kernel_mem {
    uint64_t lo, hi;        /* bytes certainly touched */
    uint64_t reach;         /* end of what it may touch (== hi when exact) */
    int32_t  alloc;         /* ss_model.allocs index */
    uint8_t  read, write;   /* what it does (both when not known) */
    uint8_t  known;         /* 0: may read or write (unclassified) */
    uint8_t  exact;         /* from an exact-memory record */
} ss_kernel_mem;
/* A graph launch (cudaGraphLaunch) touches what its nodes touch: the union of
 * ss_op_mem_accesses over its ops. */
uint32_t ss_kernel_mem_accesses(const struct ss_model *m, const struct ss_call *c, ss_kernel_mem *out, uint32_t max);
/* The bytes of a copy's or memset's end at p (bytes long) made by call c,
 * resolved against the allocations live at t (0 outside every one): exact,
 * or for a 2D/3D one (ss_call_is_strided) only the byte at p known and up
 * to the allocation's end possibly touched (exact 0, known 1). */
uint32_t ss_copy_range(const struct ss_model *m, const struct ss_call *c, uint64_t p, uint64_t bytes, uint64_t t,
                       int write, ss_kernel_mem *out, uint32_t max);
/* The memory one op of a graph launch touches, from the call its node runs
 * the parameters of (ss_gpu_op.node_call): a kernel node as that launch's
 * pointer arguments, read by this op's kernel; a copy or memset node as the
 * exact byte ranges of that call.  Resolved against the allocations live when
 * the graph was launched (graph-pool memory allocated at capture and reused by
 * every replay).  0 entries for ops that are no graph node or whose node is
 * unknown. */
uint32_t ss_op_mem_accesses(const struct ss_model *m, int32_t op, ss_kernel_mem *out, uint32_t max);

#endif
