/*
 * Device side of exact memory mode (SYNCSIGHT_EXACT_MEMORY=1, see
 * preload/exact_memory.c and docs/shim.md).  The CUDA Sanitizer API calls
 * ss_xm_global_access before every global memory access of a patched kernel
 * (sanitizerPatchInstructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS));
 * `userdata` is the launch's tracker (preload/exact_memory.h) or NULL for a
 * launch the shim does not track.
 *
 * Built by preload/preload.mk with
 *   nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch
 * (the Sanitizer API's patch format; -rdc=true is refused by ptxas together
 * with --compile-as-tools-patch) and embedded into libsyncsight.so.
 */
#include <stdint.h>
#include <sanitizer_patching.h>
#include "exact_memory.h"

/* Plain loads first: atomics only when they would change something, so a
 * kernel streaming through a buffer pays a compare per access, not a
 * contended atomic. */
static __device__ __forceinline__ void ss_xm_min(unsigned long long *p, unsigned long long v)
{
    if (v < *(volatile unsigned long long *)p)
        atomicMin(p, v);
}

static __device__ __forceinline__ void ss_xm_max(unsigned long long *p, unsigned long long v)
{
    if (v > *(volatile unsigned long long *)p)
        atomicMax(p, v);
}

extern "C" __device__ __noinline__ SanitizerPatchResult
ss_xm_global_access(void *userdata, uint64_t pc, void *ptr, uint32_t accessSize, uint32_t flags,
                    const void *pData)
{
    (void)pc;
    (void)pData;
    ss_xm_tracker *t = (ss_xm_tracker *)userdata;
    if (t == 0 || (flags & SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH))
        return SANITIZER_PATCH_SUCCESS;
    unsigned int rd = flags & SANITIZER_MEMORY_DEVICE_FLAG_READ;
    unsigned int wr = flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE;
    unsigned int bits = (rd ? SS_XM_READ : 0u) | (wr ? SS_XM_WRITE : 0u);
    /* An atomic reads and writes: reported with both flags, or (older
     * drivers) with neither. */
    if (bits == 0u || bits == (SS_XM_READ | SS_XM_WRITE))
        bits = SS_XM_READ | SS_XM_WRITE | SS_XM_ATOMIC;
    unsigned long long a = (unsigned long long)(uintptr_t)ptr;
    unsigned long long e = a + (accessSize ? accessSize : 1u);
    unsigned int n = *(volatile unsigned int *)&t->n;
    if (n > SS_XM_MAX_RANGES)
        n = SS_XM_MAX_RANGES;
    for (unsigned int i = 0; i < n; i++) {
        ss_xm_range *r = &t->r[i];
        if (a < r->lo || a >= r->hi)
            continue;
        if (bits & SS_XM_READ) {
            ss_xm_min(&r->read_lo, a);
            ss_xm_max(&r->read_hi, e);
        }
        if (bits & SS_XM_WRITE) {
            ss_xm_min(&r->write_lo, a);
            ss_xm_max(&r->write_hi, e);
        }
        if ((*(volatile unsigned int *)&r->flags & bits) != bits)
            atomicOr(&r->flags, bits);
        return SANITIZER_PATCH_SUCCESS;
    }
    atomicAdd(&t->outside, 1ull);
    return SANITIZER_PATCH_SUCCESS;
}

/* Diagnosis only (SYNCSIGHT_EXACT_MEMORY_DEBUG=noop|count): the same hook
 * doing nothing, or only counting, to tell a Sanitizer/driver problem from
 * one of the tracker code above. */
extern "C" __device__ __noinline__ SanitizerPatchResult
ss_xm_global_access_noop(void *userdata, uint64_t pc, void *ptr, uint32_t accessSize, uint32_t flags,
                         const void *pData)
{
    (void)userdata; (void)pc; (void)ptr; (void)accessSize; (void)flags; (void)pData;
    return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult
ss_xm_global_access_count(void *userdata, uint64_t pc, void *ptr, uint32_t accessSize, uint32_t flags,
                          const void *pData)
{
    (void)pc; (void)ptr; (void)accessSize; (void)flags; (void)pData;
    ss_xm_tracker *t = (ss_xm_tracker *)userdata;
    if (t != 0)
        atomicAdd(&t->outside, 1ull);
    return SANITIZER_PATCH_SUCCESS;
}
