/*
 * The recording of CUDA runtime calls: what the code generated from
 * preload/cuda_api.tab by tools/gen_api.py ($(BUILD)/gen/ss_api_*.c) calls,
 * implemented in api_support.c, and what the generated code provides.
 *
 * Two ways a call reaches a record:
 *   - the interposer: an exported wrapper with cudart's name runs, calls the
 *     real function it resolved once, and writes the record at exit;
 *   - the CUPTI runtime callback (for programs with statically linked
 *     cudart, which the interposer cannot see): API_ENTER stores the enter
 *     time, API_EXIT writes the record.
 * A call must be recorded once.  While the interposer is inside a call it
 * publishes its record in TLS (ss_api_tls.active); the CUPTI callback that
 * fires inside the real call then only stores the correlation id there, and
 * callbacks for runtime calls that cudart makes internally are ignored.
 *
 * Driver-API calls (rows with domain=driver: Triton, CuPy, JAX) are recorded
 * from CUPTI's driver callbacks, by ss_api_cupti_driver_dispatch, only when
 * the thread is in no runtime call: `active` (interposer) and `cb_depth`
 * (CUPTI runtime path) are the per-thread runtime depth.  Inside a runtime
 * call a driver callback only lends a launch its parameters.
 */
#ifndef SYNCSIGHT_API_SUPPORT_H
#define SYNCSIGHT_API_SUPPORT_H

#include <stdint.h>
#include <stddef.h>
#include <cuda_runtime_api.h>
#include "producers.h"

/* NVTX ranges (ss_nvtx_begin_call/end_call, enum ss_nvtx_category) and
 * stream names (ss_nvtx_name_stream) come from nvtx.c via producers.h. */

/* Kernel parameters: at most this many 8-byte values per launch record. */
#define SS_API_MAX_PARAMS 32

/* Per-thread state of the call recording. */
typedef struct ss_api_tls {
    ss_api_rec *active;     /* interposer record of the call in flight, or NULL */
    uint32_t    lent_ctx;   /* interposer: CUPTI's context id of the call in flight, lent by the
                               callback inside it with its correlation id (SS_CALL_CONTEXT; stale
                               while the record has no corr) */
    uint32_t    trace_ctx;  /* the context of this thread's last SS_REC_THREAD_CONTEXT, 0 none */
    /* A recorded runtime launch in flight on this thread (interposer wrapper
     * or CUPTI path between API_ENTER and API_EXIT): the driver-level
     * callback that fires inside it hands it the kernel parameters when the
     * runtime level cannot learn the layout (a stub registered with another,
     * static, cudart: cuBLAS, statically linked programs). */
    const void *launch_func;    /* the runtime call's function (stub or cudaKernel_t) */
    uintptr_t   launch_caller;  /* interposer: the wrapper's return address, else 0 */
    uint8_t     launch_pending; /* set at the runtime enter, cleared by the first driver launch */
    uint8_t     drv_have;       /* drv_params below belong to the launch in flight */
    uint8_t     drv_nparams;
    uint8_t     drv_truncated;
    uint64_t    drv_params[SS_API_MAX_PARAMS];
    uint16_t    drv_offsets[SS_API_MAX_PARAMS]; /* byte offset of each drv_params word */
    /* Offsets of the values ss_api_launch_params last returned, for
     * ss_api_emit to store beside them: `offsets_of` is the params array
     * they describe (NULL when none), `noffsets` their count. */
    const uint64_t *offsets_of;
    uint8_t     noffsets;
    uint16_t    offsets[SS_API_MAX_PARAMS];
    uint64_t    cb_t_enter; /* CUPTI path: enter time of the outermost call    */
    uint32_t    cb_depth;   /* CUPTI path: nesting of runtime calls            */
    uint32_t    cb_cbid;    /* CUPTI path: cbid of the outermost call          */
    int8_t      device;     /* device set by cudaSetDevice on this thread, -1  */
    uint8_t     cb_nvtx;    /* CUPTI path: an NVTX range was opened at enter   */
    uint8_t     drv_nvtx;   /* driver path: an NVTX range was opened at enter  */
    uint32_t    drv_depth;  /* driver path: nesting of recorded driver calls   */
    uint32_t    drv_cbid;   /* driver path: recorded cbid of the outermost one */
    uint64_t    drv_t_enter;/* driver path: its enter time                     */
    /* Sampled recording (sampling.c): this thread's hot-call counter slot
     * (base.h), and for the outermost CUPTI-path call (runtime, driver)
     * whether it is hot, whether it is recorded, and the sampling epoch it
     * was entered in. */
    uint64_t   *hot_count;
    uint8_t     hot_shared; /* the slot is shared: add atomically */
    uint8_t     cb_hot, cb_record, drv_hot, drv_record;
    uint32_t    cb_epoch, drv_epoch;
} ss_api_tls;

/* A hot call entered on the CUPTI path before a switch to OFF may never get
 * its exit callback (the hot callbacks were disabled in between): its depth
 * is stale once the epoch moved on. */
static inline int ss_api_cb_stale(const ss_api_tls *t)
{
    return t->cb_depth != 0 && t->cb_hot && t->cb_epoch != ss_sampling_epoch();
}
static inline int ss_api_drv_stale(const ss_api_tls *t)
{
    return t->drv_depth != 0 && t->drv_hot && t->drv_epoch != ss_sampling_epoch();
}

/* Is this thread inside a runtime API call (recorded by the interposer or
 * the CUPTI runtime path)?  Then a driver call it makes is part of it. */
static inline int ss_api_in_runtime_call(const ss_api_tls *t)
{
    return t->active != NULL || (t->cb_depth != 0 && !ss_api_cb_stale(t));
}

SS_HIDDEN void ss_api_hot_count_slow(ss_api_tls *t);

/* Every hot call (classes: tools/gen_api.py HOT_CLASSES), at its entry:
 * counts it on this thread and says whether to record it.  While OFF this is
 * all a hot call costs the shim: one relaxed load of the state and a plain
 * increment of the thread's own counter. */
static inline int ss_api_hot_admit(ss_api_tls *t)
{
    int state = ss_hot_state_now();
    if (__builtin_expect(state == SS_HOT_HEAD, 0))
        state = ss_sampling_head_admit();       /* counted after the decision */
    uint64_t *n = t->hot_count;
    if (__builtin_expect(n != NULL && !t->hot_shared, 1))
        __atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    else
        ss_api_hot_count_slow(t);
    return state != SS_HOT_OFF;
}

/* The same for a call that reaches the shim through a CUPTI callback
 * (statically linked cudart, the driver API): such calls made while OFF go
 * uncounted, which every later CAPTURE record says (base.h). */
static inline int ss_api_callback_admit(ss_api_tls *t, int hot)
{
    if (!hot)
        return 1;
    ss_hot_seen_via_callback();
    return ss_api_hot_admit(t);
}

SS_HIDDEN ss_api_tls *ss_api_thread(void);

/* Resolve a cudart entry point: dlsym(RTLD_NEXT), else through a cudart
 * that was dlopen'ed RTLD_LOCAL.  Caches into *slot (atomic).  NULL when
 * no cudart exports `name`. */
SS_HIDDEN void *ss_api_resolve(const char *name, void *volatile *slot);

/* Read an out-parameter only when the call succeeded (the generated code
 * has `ret` in scope). */
#define SS_OUT(p) ((ret == cudaSuccess && (p) != NULL) ? (uint64_t)(uintptr_t)*(p) : (uint64_t)0)

/* Memory kind of a pointer as the driver knows it (enum ss_mem_kind):
 * PAGEABLE when the driver does not know a host pointer, UNKNOWN when the
 * driver is not loaded or the pointer is NULL.  Never enters cudart. */
SS_HIDDEN uint8_t ss_api_mem_kind(const void *p);

/* The bytes a graph's memset node spans from its dst (struct
 * cudaMemsetParams, CUDA_MEMSET_NODE_PARAMS: the same fields): whole rows of
 * `pitch` but the last, which is `width` elements. */
#define SS_MEMSET_NODE_BYTES(p) ((p) == NULL ? (uint64_t)0 : \
    ss_api_memset_extent((p)->pitch, (p)->elementSize, (p)->width, (p)->height))
static inline uint64_t ss_api_memset_extent(uint64_t pitch, uint64_t element_size, uint64_t width, uint64_t height)
{
    if (width == 0 || height == 0)
        return 0;
    uint64_t row = width * element_size;
    return height > 1 ? pitch * (height - 1) + row : row;
}

/* Is this a launch on the legacy default stream (blameable: it serializes)? */
static inline int ss_api_is_legacy_stream(uint64_t stream, uint32_t flags)
{
    return (stream == 0 && !(flags & SS_API_F_PTSZ)) || stream == (uint64_t)(uintptr_t)cudaStreamLegacy;
}

/* Helpers named by `fill=` in the table. */
SS_HIDDEN void ss_api_fill_memcpy3d(ss_api_rec *r, const struct cudaMemcpy3DParms *p);
SS_HIDDEN void ss_api_fill_memcpy3d_peer(ss_api_rec *r, const struct cudaMemcpy3DPeerParms *p);
SS_HIDDEN void ss_api_fill_memcpy_batch(ss_api_rec *r, void *const *dsts, const void *const *srcs,
                                        const size_t *sizes, size_t count);
/* A batch of address ranges (cudaMemPrefetchBatchAsync, cudaMemDiscard*,
 * their cuMem* twins): ptr = the first range, bytes = all of them, arg = the
 * count.  `ptrs` is the batch's array of void * (runtime) or CUdeviceptr
 * (driver): both 8-byte addresses. */
SS_HIDDEN void ss_api_fill_range_batch(ss_api_rec *r, const void *ptrs, const size_t *sizes, size_t count);
/* CUPTI's id of an executable graph, 0 unknown (graphs.c): what a graph
 * launch records in `arg`. */
SS_HIDDEN uint32_t ss_graphs_exec_id(const void *exec);
SS_HIDDEN void ss_api_fill_memcpy3d_batch(ss_api_rec *r, size_t num_ops,
                                          const struct cudaMemcpy3DBatchOp *ops);
SS_HIDDEN void ss_api_fill_launch_config(ss_api_rec *r, const cudaLaunchConfig_t *config);
/* Driver rows (struct tags: cuda.h's CUlaunchConfig, CUDA_MEMCPY2D/3D). */
struct CUlaunchConfig_st;
struct CUDA_MEMCPY2D_st;
struct CUDA_MEMCPY3D_st;
SS_HIDDEN void ss_api_fill_cu_launch_config(ss_api_rec *r, const struct CUlaunchConfig_st *config);
SS_HIDDEN void ss_api_fill_cu_memcpy2d(ss_api_rec *r, const struct CUDA_MEMCPY2D_st *p);
SS_HIDDEN void ss_api_fill_cu_memcpy3d(ss_api_rec *r, const struct CUDA_MEMCPY3D_st *p);

/* Kernel parameters: fill `params` (capacity SS_API_MAX_PARAMS) with the
 * 8-byte parameters of `func` read through `args`; returns the count and
 * sets SS_API_F_PARAMS_TRUNCATED in r->flags when more existed.
 * `func` may be a host stub or a cudaKernel_t; `known_kernel` says it is
 * certainly a cudaKernel_t (__cudaLaunchKernel). */

/* Widen the address range [lo, hi) that holds every allocation seen so far.
 * Kernel parameters passed inside structs (PyTorch's TensorIterator
 * arguments, cuBLAS parameter blocks) are scanned for 8-byte words in this
 * range: a cheap filter that keeps buffer pointers and drops sizes, strides
 * and float values. */
SS_HIDDEN void ss_api_note_alloc(uint64_t ptr, uint64_t bytes);

/* Start of a recorded runtime launch (before the real call / at API_ENTER
 * of the outermost runtime call): arms the driver-level fallback. */
static inline void ss_api_launch_enter(ss_api_tls *t, const void *func, uintptr_t caller)
{
    t->launch_func = func;
    t->launch_caller = caller;
    t->drv_have = 0;
    t->launch_pending = 1;
}

/* At the launch's exit: the runtime-level parameters (from the function's
 * cached parameter layout) when the runtime level knows the function's layout, else those the
 * driver-level callback captured inside the call.  Disarms the fallback.
 * The values' parameter-buffer offsets are left in t->offsets (t->offsets_of
 * = params), where ss_api_emit finds them for the same `params`. */
SS_HIDDEN uint32_t ss_api_launch_params(ss_api_rec *r, ss_api_tls *t, const void *func, void **args,
                                        int known_kernel, uint64_t *params);

/* A driver-API launch recorded as itself (cuLaunchKernel*, outside every
 * runtime call): its parameters read from kernelParams or the packed buffer
 * of `extra` with the driver-level layout of CUfunction `f`, their offsets
 * left for ss_api_emit like ss_api_launch_params does. */
SS_HIDDEN uint32_t ss_api_driver_launch_params(ss_api_rec *r, ss_api_tls *t, const void *f, void **kernel_params,
                                               void **extra, uint64_t *params);

/* ss_api_on_driver_callback / ss_api_wanted_driver_cbids: see producers.h. */

/* Exact memory mode (exact_memory.c): the parameter words of a driver-level
 * launch of CUfunction `f` (kernelParams or `extra` form), read exactly as
 * the launch record's are (same layout cache, same struct-word filter), and
 * each word's byte offset.  `params`/`offsets` hold SS_API_MAX_PARAMS.
 * Returns the count, or -1 when the layout cannot be learned. */
SS_HIDDEN int ss_api_driver_launch_words(const void *f, void **kernel_params, void **extra, uint64_t *params,
                                         uint16_t *offsets, int *truncated);
/* Exact memory mode: a Sanitizer API runtime (driver = 0) or launch
 * driver-API (driver = 1) callback, handed on as if CUPTI had made it
 * (the Sanitizer's cbids are CUPTI's numbers); no correlation id. */
SS_HIDDEN void ss_api_forward_callback(int driver, uint32_t cbid, int exit_site, const char *function_name,
                                       const void *params, const void *ret, const char *symbol, void *context);


/* Emit the record built in `r` (with `nparams` kernel parameters): call-site
 * capture as `stack_want` (enum ss_stack_want) says, the SS_REC_API_NAME record the first time this cbid is seen, the
 * record itself. `name` is the CUPTI spelling of the cbid.  When `params` is
 * the array ss_api_launch_params just filled on this thread, their offsets
 * go into the tail too (SS_API_F_PARAM_OFFSETS).  `context` is CUPTI's id of
 * the context the call ran in (0 unknown): a change from the thread's last
 * one is written first (SS_REC_THREAD_CONTEXT). */
SS_HIDDEN void ss_api_emit(ss_api_rec *r, const char *name, int stack_want,
                           const uint64_t *params, uint32_t nparams, uint32_t context);

/* After a successful stream creation: SS_REC_STREAM and the NVTX name. */
SS_HIDDEN void ss_api_stream_created(const ss_api_rec *r);

/* After cudaSetDevice. */
SS_HIDDEN void ss_api_set_device(ss_api_tls *t, int device, cudaError_t ret);

/* Generated (ss_api_cupti.c): the per-cbid CUPTI path. Returns 0 when the
 * cbid is not in the table. */
SS_HIDDEN int ss_api_cupti_dispatch(uint32_t cbid, const void *cbdata, ss_api_tls *t, int site);

/* Generated (ss_api_cupti.c): the per-cbid driver path, for driver calls
 * made outside every runtime call.  Returns 0 when the cbid is not in the
 * table. */
SS_HIDDEN int ss_api_cupti_driver_dispatch(uint32_t cbid, const void *cbdata, ss_api_tls *t, int site);

/* Generated: the wanted cbids (runtime; driver: the table's driver rows). */
SS_HIDDEN extern const uint32_t ss_api_cbids[];
SS_HIDDEN extern const size_t ss_api_cbid_count;
SS_HIDDEN extern const uint32_t ss_api_driver_cbids[];
SS_HIDDEN extern const size_t ss_api_driver_cbid_count;
/* Generated: the cbids of hot rows (sampling switches their callbacks). */
SS_HIDDEN extern const uint32_t ss_api_hot_cbids[];
SS_HIDDEN extern const size_t ss_api_hot_cbid_count;
SS_HIDDEN extern const uint32_t ss_api_hot_driver_cbids[];
SS_HIDDEN extern const size_t ss_api_hot_driver_cbid_count;

/* Forget which SS_REC_API_NAME records were written (fork child: new file). */
SS_HIDDEN void ss_api_reset_name_flags(void);

#endif /* SYNCSIGHT_API_SUPPORT_H */
