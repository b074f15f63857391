/*
 * Exact memory mode (SYNCSIGHT_EXACT_MEMORY=1, `syncsight run --exact-memory`):
 * the byte ranges each kernel launch really read and wrote, per recorded
 * pointer parameter, measured with the CUDA Sanitizer API.  See docs/shim.md.
 *
 *   - libsanitizer-public.so is dlopen'ed only when the mode is on; the shim
 *     is built with this file's real body only when sanitizer.h was found
 *     (SS_HAVE_SANITIZER, preload/preload.mk), else the mode says in one
 *     stderr line that this build lacks it.
 *   - Every loaded module is patched: each global memory access of its
 *     kernels calls ss_xm_global_access (preload/exact_memory_patch.cu,
 *     embedded as ss_xm_patch_image) with the launch's tracker.
 *   - Driver-API ENTER of a kernel launch: the launch's parameter words,
 *     read exactly as the launch record's (ss_api_driver_launch_words).
 *   - LAUNCH_BEGIN: the allocation each word points into (from the
 *     Sanitizer's allocation callbacks), uploaded into a tracker slot on the
 *     launch stream; sanitizerSetLaunchCallbackData hands it to the kernel.
 *   - LAUNCH_END: wait for the launch stream, copy the tracker back, write
 *     SS_REC_KERNEL_ACCESS joined to the launch record by its correlation id
 *     or (tid, t_enter).  Each kernel therefore runs to completion before its
 *     launch returns: GPU timings mean nothing in this mode.
 *   Launches on a capturing stream (they do not execute) and launches the
 *   shim does not record are not tracked (their tracker is NULL).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "producers.h"

#ifndef SS_HAVE_SANITIZER

int ss_exact_memory_start(void)
{
    fprintf(stderr, "syncsight: exact memory mode (SYNCSIGHT_EXACT_MEMORY=1, --exact-memory) is not available: "
                    "this libsyncsight.so was built without the CUDA Sanitizer API header (sanitizer.h; rebuild "
                    "with SANITIZER_HOME set); recording as usual\n");
    return 0;
}

#else /* SS_HAVE_SANITIZER */

#include <cuda.h>
#include <sanitizer.h>
#include <generated_cuda_meta.h>   /* the driver launch params structs */

#include "api_support.h"
#include "exact_memory.h"

#ifndef SS_SANITIZER_FALLBACK_PATH
#define SS_SANITIZER_FALLBACK_PATH ""
#endif

/* The patch image, generated from exact_memory_patch.cu at build time. */
extern const unsigned char ss_xm_patch_image[];
extern const unsigned long ss_xm_patch_image_size;

#define SS_XM_FUNCS(X)                      \
    X(sanitizerSubscribe)                   \
    X(sanitizerEnableCallback)              \
    X(sanitizerGetResultString)             \
    X(sanitizerAddPatches)                  \
    X(sanitizerPatchInstructions)           \
    X(sanitizerPatchModule)                 \
    X(sanitizerSetLaunchCallbackData)       \
    X(sanitizerAlloc)                       \
    X(sanitizerAllocHost)                   \
    X(sanitizerSetCallbackData)             \
    X(sanitizerFree)                        \
    X(sanitizerFreeHost)                    \
    X(sanitizerMemcpyHostToDeviceAsync)     \
    X(sanitizerMemcpyDeviceToHost)          \
    X(sanitizerStreamSynchronize)

#define SS_XM_DECLARE(name) static __typeof__(&name) x_##name;
SS_XM_FUNCS(SS_XM_DECLARE)
#undef SS_XM_DECLARE

typedef CUresult (CUDAAPI *ss_xm_is_capturing_fn)(CUstream, CUstreamCaptureStatus *);
typedef CUresult (CUDAAPI *ss_xm_pointer_attrs_fn)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr);
static ss_xm_is_capturing_fn    x_cuStreamIsCapturing;
static ss_xm_pointer_attrs_fn   x_cuPointerGetAttributes;
static int                      x_driver_tried;

static Sanitizer_SubscriberHandle xm_subscriber;
/* SYNCSIGHT_EXACT_MEMORY_DEBUG=1: one stderr line per event (diagnosis). */
static int xm_debug;
static const char *xm_callback_name = SS_XM_CALLBACK_NAME;
/* Trackers live in pinned host memory (sanitizerAllocHost), which the
 * kernel's callbacks update directly.  Measured (H100, CUDA 13.0): with
 * device trackers (sanitizerAlloc + sanitizerMemcpyHostToDeviceAsync) the
 * patched kernels saw a bad userdata (misaligned address faults) and
 * sanitizerMemcpyDeviceToHost returned INVALID_PARAMETER; the pinned host
 * layout is the one NVIDIA's DeviceMalloc sample uses.
 * SYNCSIGHT_EXACT_MEMORY_DEBUG=device|func restore the device trackers or
 * the per-function sanitizerSetCallbackData (diagnosis only). */
static int xm_host_trackers = 1;
static int xm_per_function;
#define XM_DEBUG(...) do { if (xm_debug) fprintf(stderr, "syncsight-xm: " __VA_ARGS__); } while (0)

/* ------------------------------------------------------------ messages */

static const char *xm_result(SanitizerResult r)
{
    const char *s = NULL;
    if (x_sanitizerGetResultString && x_sanitizerGetResultString(r, &s) == SANITIZER_SUCCESS && s)
        return s;
    return "unknown Sanitizer API error";
}

/* One stderr line per kind of problem, and a note in the trace. */
static void xm_problem(unsigned bit, const char *what, SanitizerResult r)
{
    static unsigned printed;
    if (__atomic_fetch_or(&printed, 1u << bit, __ATOMIC_RELAXED) & (1u << bit))
        return;
    char msg[300];
    snprintf(msg, sizeof msg, "exact memory mode: %s (%s): some launches carry no exact ranges", what,
             xm_result(r));
    fprintf(stderr, "syncsight: %s\n", msg);
    ss_note(SS_NOTE_EXACT_MEMORY, 0, msg, 0);
}

/* --------------------------------------------------------- allocations */

/* Live allocations the Sanitizer reported, sorted by lo, non-overlapping. */
typedef struct xm_alloc { uint64_t lo, hi; } xm_alloc;
static pthread_mutex_t xm_alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static xm_alloc *xm_allocs;
static size_t xm_nallocs, xm_cap_allocs;

/* First index with lo >= addr. */
static size_t xm_alloc_lower(uint64_t addr)
{
    size_t a = 0, b = xm_nallocs;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (xm_allocs[mid].lo < addr)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

static void xm_alloc_add(uint64_t lo, uint64_t size)
{
    if (lo == 0 || size == 0 || lo + size < lo)
        return;
    uint64_t hi = lo + size;
    pthread_mutex_lock(&xm_alloc_lock);
    /* Drop stale entries it overlaps (a free we did not see). */
    size_t i = xm_alloc_lower(lo);
    if (i > 0 && xm_allocs[i - 1].hi > lo)
        i--;
    size_t j = i;
    while (j < xm_nallocs && xm_allocs[j].lo < hi)
        j++;
    if (j > i) {
        memmove(&xm_allocs[i], &xm_allocs[j], (xm_nallocs - j) * sizeof *xm_allocs);
        xm_nallocs -= j - i;
    }
    if (xm_nallocs == xm_cap_allocs) {
        size_t cap = xm_cap_allocs ? xm_cap_allocs * 2 : 256;
        xm_alloc *v = realloc(xm_allocs, cap * sizeof *v);
        if (v == NULL) {
            pthread_mutex_unlock(&xm_alloc_lock);
            return;
        }
        xm_allocs = v;
        xm_cap_allocs = cap;
    }
    memmove(&xm_allocs[i + 1], &xm_allocs[i], (xm_nallocs - i) * sizeof *xm_allocs);
    xm_allocs[i] = (xm_alloc){ lo, hi };
    xm_nallocs++;
    pthread_mutex_unlock(&xm_alloc_lock);
}

static void xm_alloc_remove(uint64_t lo)
{
    pthread_mutex_lock(&xm_alloc_lock);
    size_t i = xm_alloc_lower(lo);
    if (i < xm_nallocs && xm_allocs[i].lo == lo) {
        memmove(&xm_allocs[i], &xm_allocs[i + 1], (xm_nallocs - i - 1) * sizeof *xm_allocs);
        xm_nallocs--;
    }
    pthread_mutex_unlock(&xm_alloc_lock);
}

static void xm_driver_resolve(void)
{
    if (__atomic_load_n(&x_driver_tried, __ATOMIC_ACQUIRE))
        return;
    /* Only the driver the program loaded; never load one ourselves. */
    void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    if (h != NULL) {
        x_cuStreamIsCapturing = (ss_xm_is_capturing_fn)dlsym(h, "cuStreamIsCapturing");
        x_cuPointerGetAttributes = (ss_xm_pointer_attrs_fn)dlsym(h, "cuPointerGetAttributes");
    }
    __atomic_store_n(&x_driver_tried, 1, __ATOMIC_RELEASE);
}

/* The allocation holding addr: [*lo, *hi).  0 when none is known. */
static int xm_alloc_find(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    int found = 0;
    pthread_mutex_lock(&xm_alloc_lock);
    size_t i = xm_alloc_lower(addr + 1);
    if (i > 0 && xm_allocs[i - 1].lo <= addr && addr < xm_allocs[i - 1].hi) {
        *lo = xm_allocs[i - 1].lo;
        *hi = xm_allocs[i - 1].hi;
        found = 1;
    }
    pthread_mutex_unlock(&xm_alloc_lock);
    if (found || addr == 0)
        return found;
    /* Not reported to us (virtual memory mappings, host registrations the
     * Sanitizer reports differently): ask the driver for the range. */
    xm_driver_resolve();
    if (x_cuPointerGetAttributes == NULL)
        return 0;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUpointer_attribute attrs[2] = { CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE };
    void *data[2] = { &start, &size };
    if (x_cuPointerGetAttributes(2, attrs, data, (CUdeviceptr)addr) != CUDA_SUCCESS || start == 0 || size == 0 ||
        addr < (uint64_t)start || addr - (uint64_t)start >= size)
        return 0;
    *lo = (uint64_t)start;
    *hi = (uint64_t)start + size;
    return 1;
}

/* ---------------------------------------------------- tracker slots */

/* Per context, a ring of device trackers allocated once (sanitizerAlloc);
 * a launch holds one from LAUNCH_BEGIN to LAUNCH_END on its thread. */
#define XM_SLOTS     32
#define XM_CONTEXTS  64
#define XM_SLOT_BYTES ((sizeof(ss_xm_tracker) + 255u) & ~(size_t)255u)

typedef struct xm_ctx {
    CUcontext ctx;
    char     *dev;              /* XM_SLOTS * XM_SLOT_BYTES of device memory */
    uint32_t  busy;             /* bit per slot */
    int       patched;          /* the patch image is loaded in this context */
} xm_ctx;

static pthread_mutex_t xm_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static xm_ctx xm_ctxs[XM_CONTEXTS];

/* Caller holds xm_ctx_lock. */
static xm_ctx *xm_ctx_get(CUcontext ctx)
{
    xm_ctx *empty = NULL;
    for (int i = 0; i < XM_CONTEXTS; i++) {
        if (xm_ctxs[i].ctx == ctx)
            return &xm_ctxs[i];
        if (xm_ctxs[i].ctx == NULL && empty == NULL)
            empty = &xm_ctxs[i];
    }
    if (empty != NULL) {
        memset(empty, 0, sizeof *empty);
        empty->ctx = ctx;
    }
    return empty;
}

static void *xm_slot_take(CUcontext ctx, int *slot)
{
    void *p = NULL;
    SanitizerResult r = SANITIZER_SUCCESS;
    pthread_mutex_lock(&xm_ctx_lock);
    xm_ctx *c = xm_ctx_get(ctx);
    if (c != NULL && c->dev == NULL) {
        void *dev = NULL;
        r = xm_host_trackers ? x_sanitizerAllocHost(ctx, &dev, XM_SLOTS * XM_SLOT_BYTES)
                             : x_sanitizerAlloc(ctx, &dev, XM_SLOTS * XM_SLOT_BYTES);
        if (r == SANITIZER_SUCCESS)
            c->dev = dev;
    }
    if (c != NULL && c->dev != NULL && c->busy != UINT32_MAX) {
        int i = __builtin_ctz(~c->busy);
        c->busy |= 1u << i;
        *slot = i;
        p = c->dev + (size_t)i * XM_SLOT_BYTES;
    }
    pthread_mutex_unlock(&xm_ctx_lock);
    if (r != SANITIZER_SUCCESS)
        xm_problem(1, "sanitizerAlloc of the trackers failed", r);
    return p;
}

static void xm_slot_give(CUcontext ctx, int slot)
{
    pthread_mutex_lock(&xm_ctx_lock);
    for (int i = 0; i < XM_CONTEXTS; i++)
        if (xm_ctxs[i].ctx == ctx)
            xm_ctxs[i].busy &= ~(1u << slot);
    pthread_mutex_unlock(&xm_ctx_lock);
}

static void xm_ctx_destroying(CUcontext ctx)
{
    pthread_mutex_lock(&xm_ctx_lock);
    for (int i = 0; i < XM_CONTEXTS; i++) {
        if (xm_ctxs[i].ctx != ctx)
            continue;
        if (xm_ctxs[i].dev != NULL)
            (void)(xm_host_trackers ? x_sanitizerFreeHost(ctx, xm_ctxs[i].dev) : x_sanitizerFree(ctx, xm_ctxs[i].dev));
        memset(&xm_ctxs[i], 0, sizeof xm_ctxs[i]);
    }
    pthread_mutex_unlock(&xm_ctx_lock);
}

/* ------------------------------------------------------------ modules */

static pthread_mutex_t xm_patch_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int xm_in_patch;

static void xm_module_loaded(const Sanitizer_ResourceModuleData *md)
{
    if (md == NULL || md->module == NULL || xm_in_patch)
        return;
    xm_in_patch = 1;
    /* The Sanitizer API wants these four serialized. */
    pthread_mutex_lock(&xm_patch_lock);
    int need_patches = 0;
    pthread_mutex_lock(&xm_ctx_lock);
    xm_ctx *c = xm_ctx_get(md->context);
    need_patches = c != NULL && !c->patched;
    pthread_mutex_unlock(&xm_ctx_lock);
    SanitizerResult r = SANITIZER_SUCCESS;
    if (need_patches) {
        r = x_sanitizerAddPatches(ss_xm_patch_image, md->context);
        if (r == SANITIZER_SUCCESS) {
            pthread_mutex_lock(&xm_ctx_lock);
            if ((c = xm_ctx_get(md->context)) != NULL)
                c->patched = 1;
            pthread_mutex_unlock(&xm_ctx_lock);
        } else {
            xm_problem(2, "loading the device patch failed (sanitizerAddPatches)", r);
        }
    }
    if (r == SANITIZER_SUCCESS) {
        r = x_sanitizerPatchInstructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, md->module,
                                         xm_callback_name);
        if (r == SANITIZER_SUCCESS)
            r = x_sanitizerPatchModule(md->module);
        if (r != SANITIZER_SUCCESS)
            xm_problem(3, "patching a module failed (sanitizerPatchInstructions/PatchModule)", r);
    }
    pthread_mutex_unlock(&xm_patch_lock);
    xm_in_patch = 0;
}

/* ------------------------------------------------------------ launches */

/* Per thread: the words of the driver launch in flight (ENTER of
 * cuLaunchKernel*) and the tracker of the launch between BEGIN and END. */
typedef struct xm_thread {
    /* driver launch in flight */
    int      have_words;        /* 1: words valid, -1: layout unknown, 0: none */
    int      truncated;
    uint32_t nwords;
    uint64_t words[SS_API_MAX_PARAMS];
    uint16_t offsets[SS_API_MAX_PARAMS];
    /* tracked launch between LAUNCH_BEGIN and LAUNCH_END */
    int      pending;
    int      slot;
    CUcontext ctx;
    Sanitizer_StreamHandle hstream;
    Sanitizer_LaunchHandle hlaunch;
    void    *dev;
    uint32_t corr, tid;
    uint64_t t_enter;
    uint64_t func;
    uint16_t rec_flags;
    uint32_t nentries;
    struct { uint32_t word; uint16_t offset; uint8_t range; uint64_t value; } entries[SS_API_MAX_PARAMS];
    ss_xm_tracker host;         /* upload and read-back buffer */
} xm_thread;

static __thread xm_thread *xm_tls;

static xm_thread *xm_thread_get(void)
{
    if (xm_tls == NULL)
        xm_tls = calloc(1, sizeof *xm_tls);   /* freed never: one per thread that launches */
    return xm_tls;
}

static void xm_driver_enter(Sanitizer_CallbackId cbid, const Sanitizer_CallbackData *d)
{
    xm_thread *x = xm_thread_get();
    if (x == NULL)
        return;
    if (d->callbackSite != SANITIZER_API_ENTER) {
        /* EXIT: a launch whose LAUNCH_END never came (it failed) gives its
         * tracker back here; the words are for this launch only. */
        if (x->pending) {
            (void)x_sanitizerStreamSynchronize(x->hstream);
            xm_slot_give(x->ctx, x->slot);
            x->pending = 0;
        }
        x->have_words = 0;
        return;
    }
    const void *f = NULL;
    void **kernel_params = NULL, **extra = NULL;
    switch (cbid) {
    case SANITIZER_CBID_DRIVER_API_cuLaunchKernel:
    case SANITIZER_CBID_DRIVER_API_cuLaunchKernel_ptsz: {
        const cuLaunchKernel_params *p = d->functionParams;
        f = p->f; kernel_params = p->kernelParams; extra = p->extra;
        break;
    }
    case SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx:
    case SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx_ptsz: {
        const cuLaunchKernelEx_params *p = d->functionParams;
        f = p->f; kernel_params = p->kernelParams; extra = p->extra;
        break;
    }
    case SANITIZER_CBID_DRIVER_API_cuLaunchCooperativeKernel:
    case SANITIZER_CBID_DRIVER_API_cuLaunchCooperativeKernel_ptsz: {
        const cuLaunchCooperativeKernel_params *p = d->functionParams;
        f = p->f; kernel_params = p->kernelParams;
        break;
    }
    default:
        return;
    }
    int truncated = 0;
    int n = ss_api_driver_launch_words(f, kernel_params, extra, x->words, x->offsets, &truncated);
    x->have_words = n < 0 ? -1 : 1;
    x->nwords = n < 0 ? 0 : (uint32_t)n;
    x->truncated = truncated;
}

/* A launch the shim does not track: its patched code must see a NULL
 * tracker (the callback data of a launch is not defined until set). */
static void xm_untracked_(const Sanitizer_LaunchData *ld, int line)
{
    XM_DEBUG("launch %s untracked (line %d)\n", ld->functionName ? ld->functionName : "?", line);
    SanitizerResult r = xm_per_function ? x_sanitizerSetCallbackData(ld->function, NULL)
                                        : x_sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, NULL);
    if (r != SANITIZER_SUCCESS)
        xm_problem(7, "clearing the tracker of an untracked launch failed", r);
}
#define xm_untracked(ld) xm_untracked_((ld), __LINE__)

static void xm_launch_begin(const Sanitizer_LaunchData *ld)
{
    xm_thread *x = xm_thread_get();
    if (x == NULL) {
        xm_untracked(ld);
        return;
    }
    int have_words = x->have_words;
    x->have_words = 0;
    if (x->pending) {                       /* a previous launch never ended */
        (void)x_sanitizerStreamSynchronize(x->hstream);
        xm_slot_give(x->ctx, x->slot);
        x->pending = 0;
    }
    /* Only launches the shim records as a kernel launch on this thread:
     * the record this one joins. */
    ss_api_tls *t = ss_api_thread();
    if (!ss_recording() || t->launch_func == NULL) {
        xm_untracked(ld);
        return;
    }
    uint64_t t_enter;
    uint32_t corr = 0;
    if (t->active != NULL) {                /* interposer: its record, corr lent by CUPTI */
        t_enter = t->active->t_enter;
        corr = t->active->corr;
    } else if (t->cb_depth > 0) {           /* CUPTI runtime callback path */
        t_enter = t->cb_t_enter;
    } else if (t->drv_depth > 0) {          /* a driver launch recorded as itself */
        t_enter = t->drv_t_enter;
    } else {
        xm_untracked(ld);
        return;
    }
    /* Work on a capturing stream does not run: never touch it. */
    xm_driver_resolve();
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if (x_cuStreamIsCapturing == NULL || x_cuStreamIsCapturing(ld->stream, &cs) != CUDA_SUCCESS ||
        cs != CU_STREAM_CAPTURE_STATUS_NONE) {
        xm_untracked(ld);
        return;
    }

    /* The table: one range per distinct allocation a word points into. */
    ss_xm_tracker *h = &x->host;
    memset(h, 0, sizeof *h);
    x->nentries = 0;
    x->rec_flags = 0;
    if (have_words <= 0)
        x->rec_flags |= SS_KACCESS_F_PARAMS_UNKNOWN;
    for (uint32_t w = 0; have_words > 0 && w < x->nwords; w++) {
        uint64_t lo, hi;
        if (!xm_alloc_find(x->words[w], &lo, &hi))
            continue;
        uint32_t k = 0;
        while (k < h->n && h->r[k].lo != lo)
            k++;
        if (k == h->n) {
            if (h->n == SS_XM_MAX_RANGES) {
                x->rec_flags |= SS_KACCESS_F_TRUNCATED;
                continue;
            }
            ss_xm_range *r = &h->r[h->n++];
            r->lo = lo;
            r->hi = hi;
            r->read_lo = r->write_lo = ~0ull;
        }
        x->entries[x->nentries].word = w;
        x->entries[x->nentries].offset = x->offsets[w];
        x->entries[x->nentries].range = (uint8_t)k;
        x->entries[x->nentries].value = x->words[w];
        x->nentries++;
    }
    int slot = -1;
    void *dev = xm_slot_take(ld->context, &slot);
    if (dev == NULL) {
        xm_problem(4, "more launches in flight than tracker slots", SANITIZER_SUCCESS);
        xm_untracked(ld);
        return;
    }
    SanitizerResult r = SANITIZER_SUCCESS;
    if (xm_host_trackers)
        memcpy(dev, h, sizeof *h);
    else
        r = x_sanitizerMemcpyHostToDeviceAsync(dev, h, sizeof *h, ld->hStream);
    if (r == SANITIZER_SUCCESS)
        r = xm_per_function ? x_sanitizerSetCallbackData(ld->function, dev)
                            : x_sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, dev);
    if (r != SANITIZER_SUCCESS) {
        (void)x_sanitizerStreamSynchronize(ld->hStream);
        xm_slot_give(ld->context, slot);
        xm_problem(5, "handing the tracker to a launch failed", r);
        xm_untracked(ld);
        return;
    }
    x->pending = 1;
    x->slot = slot;
    x->ctx = ld->context;
    x->hstream = ld->hStream;
    x->hlaunch = ld->hLaunch;
    x->dev = dev;
    x->corr = corr;
    x->tid = ss_tid();
    x->t_enter = t_enter;
    x->func = (uint64_t)(uintptr_t)ld->function;
    XM_DEBUG("launch %s tracked: %u words (have %d), %u ranges, corr %u, tracker %p, stream %p/%p\n",
             ld->functionName ? ld->functionName : "?", x->nwords, have_words, h->n, corr, dev,
             (void *)ld->hStream, (void *)ld->stream);
}

static void xm_launch_end(const Sanitizer_LaunchData *ld)
{
    xm_thread *x = xm_tls;
    XM_DEBUG("launch end %s: pending %d, same launch %d\n", ld->functionName ? ld->functionName : "?",
             x ? x->pending : -1, x ? x->hlaunch == ld->hLaunch : -1);
    if (x == NULL || !x->pending || x->hlaunch != ld->hLaunch)
        return;
    x->pending = 0;
    /* The kernel must finish before its ranges are known: this wait is what
     * makes the mode slow, and GPU timings meaningless. */
    SanitizerResult r = x_sanitizerStreamSynchronize(x->hstream);
    ss_xm_tracker *h = &x->host;
    XM_DEBUG("sync %d (stream %p, end's %p)\n", (int)r, (void *)x->hstream, (void *)ld->hStream);
    if (r == SANITIZER_SUCCESS && xm_host_trackers)
        memcpy(h, x->dev, sizeof *h);
    else if (r == SANITIZER_SUCCESS)
        r = x_sanitizerMemcpyDeviceToHost(h, x->dev, sizeof *h, x->hstream);
    XM_DEBUG("read back %d: n %u outside %llu\n", (int)r, h->n, (unsigned long long)h->outside);
    xm_slot_give(x->ctx, x->slot);
    if (r != SANITIZER_SUCCESS) {
        xm_problem(6, "reading a tracker back failed", r);
        return;
    }
    static int noted;
    if (!__atomic_exchange_n(&noted, 1, __ATOMIC_RELAXED))
        ss_note(SS_NOTE_EXACT_MEMORY, 1,
                "exact memory mode: every kernel ran to completion inside its launch call (GPU timings "
                "are not meaningful); SS_REC_KERNEL_ACCESS holds the byte ranges each launch read and wrote", 0);
    uint32_t n = x->nentries;
    ss_kernel_access_rec *rec = ss_rec_begin(SS_REC_KERNEL_ACCESS, sizeof *rec,
                                             n * (uint32_t)sizeof(ss_kernel_access_entry));
    if (rec == NULL)
        return;
    rec->h.flags = x->rec_flags;
    rec->corr = x->corr;
    rec->tid = x->tid;
    rec->t_enter = x->t_enter;
    rec->func = x->func;
    rec->nentries = n;
    rec->nallocs = h->n <= SS_XM_MAX_RANGES ? h->n : SS_XM_MAX_RANGES;
    rec->outside_accesses = h->outside;
    ss_kernel_access_entry *e = (ss_kernel_access_entry *)(rec + 1);
    for (uint32_t i = 0; i < n; i++) {
        const ss_xm_range *g = &h->r[x->entries[i].range];
        e[i].word = x->entries[i].word;
        e[i].offset = x->entries[i].offset;
        e[i].value = x->entries[i].value;
        e[i].alloc_lo = g->lo;
        e[i].alloc_hi = g->hi;
        uint16_t fl = 0;
        if ((g->flags & SS_XM_READ) && g->read_lo < g->read_hi) {
            fl |= SS_KACCESS_E_READ;
            e[i].read_lo = g->read_lo;
            e[i].read_hi = g->read_hi;
        }
        if ((g->flags & SS_XM_WRITE) && g->write_lo < g->write_hi) {
            fl |= SS_KACCESS_E_WRITE;
            e[i].write_lo = g->write_lo;
            e[i].write_hi = g->write_hi;
        }
        if (g->flags & SS_XM_ATOMIC)
            fl |= SS_KACCESS_E_ATOMIC;
        e[i].flags = fl;
    }
    ss_rec_commit(rec);
}

/* ------------------------------------------------------------ dispatch */

static void SANITIZERAPI xm_callback(void *userdata, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
                                     const void *cbdata)
{
    (void)userdata;
    XM_DEBUG("callback domain %d cbid %u\n", (int)domain, (unsigned)cbid);
    switch (domain) {
    case SANITIZER_CB_DOMAIN_RESOURCE:
        switch (cbid) {
        case SANITIZER_CBID_RESOURCE_MODULE_LOADED:
            xm_module_loaded(cbdata);
            break;
        case SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
            xm_ctx_destroying(((const Sanitizer_ResourceContextData *)cbdata)->context);
            break;
        case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_ALLOC:
        case SANITIZER_CBID_RESOURCE_HOST_MEMORY_ALLOC:
        case SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC: {
            const Sanitizer_ResourceMemoryData *m = cbdata;
            xm_alloc_add(m->address, m->size);
            break;
        }
        case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_FREE:
        case SANITIZER_CBID_RESOURCE_HOST_MEMORY_FREE:
        case SANITIZER_CBID_RESOURCE_MEMORY_FREE_ASYNC:
            xm_alloc_remove(((const Sanitizer_ResourceMemoryData *)cbdata)->address);
            break;
        default:
            break;
        }
        break;
    case SANITIZER_CB_DOMAIN_DRIVER_API: {
        const Sanitizer_CallbackData *d = cbdata;
        xm_driver_enter(cbid, d);
        ss_api_forward_callback(1, cbid, d->callbackSite != SANITIZER_API_ENTER, d->functionName,
                                d->functionParams, d->functionReturnValue, d->symbolName, d->context);
        break;
    }
    case SANITIZER_CB_DOMAIN_RUNTIME_API: {
        const Sanitizer_CallbackData *d = cbdata;
        ss_api_forward_callback(0, cbid, d->callbackSite != SANITIZER_API_ENTER, d->functionName,
                                d->functionParams, d->functionReturnValue, d->symbolName, d->context);
        break;
    }
    case SANITIZER_CB_DOMAIN_GRAPHS: {
        /* Kernel nodes of a graph launch get no LAUNCH callback; their
         * callback data is undefined until set (measured: misaligned-address
         * faults in the graph's kernels).  They are not tracked. */
        const Sanitizer_GraphNodeLaunchData *g = cbdata;
        if (cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN && g->nodeType == CU_GRAPH_NODE_TYPE_KERNEL &&
            !g->isGraphUpload)
            xm_untracked(&g->launchData);
        break;
    }
    case SANITIZER_CB_DOMAIN_LAUNCH:
        if (cbid == SANITIZER_CBID_LAUNCH_BEGIN)
            xm_launch_begin(cbdata);
        else if (cbid == SANITIZER_CBID_LAUNCH_END)
            xm_launch_end(cbdata);
        break;
    default:
        break;
    }
}

/* ---------------------------------------------------------------- start */

static void *xm_load_library(char *why, size_t why_len)
{
    char cuda_home_path[4096] = "";
    const char *env_path = getenv("SYNCSIGHT_SANITIZER_LIB");
    const char *cuda_home = getenv("CUDA_HOME");
    if (cuda_home && *cuda_home)
        snprintf(cuda_home_path, sizeof cuda_home_path, "%s/compute-sanitizer/libsanitizer-public.so", cuda_home);
    const char *candidates[] = { cuda_home_path, "/usr/local/cuda/compute-sanitizer/libsanitizer-public.so",
                                 "libsanitizer-public.so", SS_SANITIZER_FALLBACK_PATH };
    const char *env_only[] = { env_path };
    const char **list = env_path && *env_path ? env_only : candidates;
    size_t count = env_path && *env_path ? 1 : sizeof candidates / sizeof candidates[0];
    const char *last_error = "no candidate";
    for (size_t i = 0; i < count; i++) {
        if (!list[i] || !*list[i])
            continue;
        void *h = dlopen(list[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
        last_error = dlerror();
    }
    snprintf(why, why_len, "libsanitizer-public.so not found (%s; set SYNCSIGHT_SANITIZER_LIB, or CUDA_HOME to a "
             "toolkit with compute-sanitizer/)", last_error ? last_error : "?");
    return NULL;
}

int ss_exact_memory_start(void)
{
    char why[600];
    const char *dbg = getenv("SYNCSIGHT_EXACT_MEMORY_DEBUG");
    xm_debug = dbg && *dbg && *dbg != '0';
    if (dbg && strstr(dbg, "noop"))
        xm_callback_name = SS_XM_CALLBACK_NAME "_noop";
    else if (dbg && strstr(dbg, "count"))
        xm_callback_name = SS_XM_CALLBACK_NAME "_count";
    xm_host_trackers = !(dbg && strstr(dbg, "device") != NULL);
    xm_per_function = dbg && strstr(dbg, "func") != NULL;
    void *lib = xm_load_library(why, sizeof why);
    int ok = lib != NULL;
#define SS_XM_RESOLVE(name)                                                          \
    if (ok && (x_##name = (__typeof__(&name))dlsym(lib, #name)) == NULL) {           \
        snprintf(why, sizeof why, "libsanitizer-public.so lacks %s (too old)", #name); \
        ok = 0;                                                                      \
    }
    SS_XM_FUNCS(SS_XM_RESOLVE)
#undef SS_XM_RESOLVE
    SanitizerResult r = SANITIZER_SUCCESS;
    if (ok && (r = x_sanitizerSubscribe(&xm_subscriber, xm_callback, NULL)) != SANITIZER_SUCCESS) {
        snprintf(why, sizeof why, "sanitizerSubscribe failed: %s", xm_result(r));
        ok = 0;
    }
    if (!ok) {
        fprintf(stderr, "syncsight: exact memory mode (SYNCSIGHT_EXACT_MEMORY=1) is not available: %s; "
                        "recording as usual\n", why);
        return 0;
    }
    static const Sanitizer_CallbackId resource[] = {
        SANITIZER_CBID_RESOURCE_MODULE_LOADED, SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
        SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_ALLOC, SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_FREE,
        SANITIZER_CBID_RESOURCE_HOST_MEMORY_ALLOC, SANITIZER_CBID_RESOURCE_HOST_MEMORY_FREE,
        SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC, SANITIZER_CBID_RESOURCE_MEMORY_FREE_ASYNC,
    };
    static const Sanitizer_CallbackId driver[] = {
        SANITIZER_CBID_DRIVER_API_cuLaunchKernel, SANITIZER_CBID_DRIVER_API_cuLaunchKernel_ptsz,
        SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx, SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx_ptsz,
        SANITIZER_CBID_DRIVER_API_cuLaunchCooperativeKernel,
        SANITIZER_CBID_DRIVER_API_cuLaunchCooperativeKernel_ptsz,
    };
    for (size_t i = 0; i < sizeof resource / sizeof resource[0]; i++)
        (void)x_sanitizerEnableCallback(1, xm_subscriber, SANITIZER_CB_DOMAIN_RESOURCE, resource[i]);
    for (size_t i = 0; i < sizeof driver / sizeof driver[0]; i++)
        (void)x_sanitizerEnableCallback(1, xm_subscriber, SANITIZER_CB_DOMAIN_DRIVER_API, driver[i]);
    /* The driver calls the program makes itself (Triton, CuPy), recorded
     * as with CUPTI: the table's driver rows, same cbid numbers. */
    const uint32_t *drv = NULL;
    size_t ndrv = ss_api_wanted_driver_cbids(&drv);
    for (size_t i = 0; i < ndrv; i++)
        (void)x_sanitizerEnableCallback(1, xm_subscriber, SANITIZER_CB_DOMAIN_DRIVER_API, drv[i]);
    (void)x_sanitizerEnableCallback(1, xm_subscriber, SANITIZER_CB_DOMAIN_LAUNCH, SANITIZER_CBID_LAUNCH_BEGIN);
    (void)x_sanitizerEnableCallback(1, xm_subscriber, SANITIZER_CB_DOMAIN_LAUNCH, SANITIZER_CBID_LAUNCH_END);
    (void)x_sanitizerEnableCallback(1, xm_subscriber, SANITIZER_CB_DOMAIN_GRAPHS,
                                    SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN);
    /* What CUPTI's runtime callbacks would have reported (statically linked
     * cudart): the same cbids, handed to the call recording (api_support.c). */
    const uint32_t *ids = NULL;
    size_t n = ss_api_wanted_cbids(&ids);
    for (size_t i = 0; i < n; i++)
        (void)x_sanitizerEnableCallback(1, xm_subscriber, SANITIZER_CB_DOMAIN_RUNTIME_API, ids[i]);
    XM_DEBUG("subscribed; patch image %lu bytes\n", ss_xm_patch_image_size);
    return 1;
}

#endif /* SS_HAVE_SANITIZER */
