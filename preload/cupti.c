/*
 * CUPTI: loading, the one subscription, and GPU activity -> trace records.
 *
 * libcupti is dlopen'ed, never linked, so the shim loads into programs that
 * have no CUDA at all and degrades (interposer only) when CUPTI is missing or
 * held by another tool.  RTLD_GLOBAL: a PyTorch loaded later asks for
 * libcupti.so.13 by soname and reuses this copy, whose single subscriber slot
 * is then ours.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "producers.h"

#ifndef SS_CUPTI_FALLBACK_PATH
#define SS_CUPTI_FALLBACK_PATH ""
#endif

/* Every CUPTI entry point we use, resolved once by name from the loaded
 * library.  X(name, required): a missing required one makes CUPTI unusable;
 * optional ones (newer than CUDA 12) are used when present. */
#define SS_CUPTI_FUNCS(X)                                   \
    X(cuptiSubscribe, 1)                                    \
    X(cuptiSubscribe_v2, 0)                                 \
    X(cuptiEnableCallback, 1)                               \
    X(cuptiEnableDomain, 1)                                 \
    X(cuptiGetResultString, 1)                              \
    X(cuptiGetTimestamp, 1)                                 \
    X(cuptiActivityRegisterCallbacks, 1)                    \
    X(cuptiActivityRegisterTimestampCallback, 0)            \
    X(cuptiActivityEnable, 1)                               \
    X(cuptiActivityDisable, 1)                              \
    X(cuptiActivityGetNextRecord, 1)                        \
    X(cuptiActivityFlushAll, 1)                             \
    X(cuptiActivityGetNumDroppedRecords, 1)                 \
    X(cuptiActivityEnableAllSyncRecords, 0)                 \
    X(cuptiActivityEnableCudaEventDeviceTimestamps, 0)      \
    X(cuptiGetStreamIdEx, 0)                                \
    X(cuptiGetContextId, 0)                                 \
    X(cuptiGetDeviceId, 0)                                  \
    X(cuptiGetVersion, 0)

#define SS_DECLARE_PTR(name, required) static __typeof__(&name) p_##name;
SS_CUPTI_FUNCS(SS_DECLARE_PTR)
#undef SS_DECLARE_PTR

static void             *cupti_lib;
static CUpti_SubscriberHandle subscriber;
static int               subscribed;
static int               activity_on;
static uint32_t          kinds_enabled;     /* bit i: kinds[i] below was enabled */
static char              status[512] = "not loaded";
static _Atomic uint64_t  dropped_activity;

#define ACTIVITY_BUFFER_BYTES (4u << 20)

const char *ss_cupti_status(void)
{
    if (!ss_cfg.cupti)
        return "disabled (SYNCSIGHT_CUPTI=0)";
    return status;
}

int ss_cupti_active(void)
{
    return activity_on;
}

uint64_t ss_cupti_timestamp(void)
{
    uint64_t ts = 0;
    if (cupti_lib && p_cuptiGetTimestamp && p_cuptiGetTimestamp(&ts) != CUPTI_SUCCESS)
        ts = 0;
    return ts;
}

uint64_t ss_cupti_dropped(void)
{
    return atomic_load_explicit(&dropped_activity, memory_order_relaxed);
}

void ss_cupti_flush(int forced)
{
    if (activity_on)
        p_cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

static const char *result_text(CUptiResult r)
{
    const char *s = NULL;
    if (p_cuptiGetResultString && p_cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

/* ------------------------------------------------------------- loading */

static int load_library(char *why, size_t why_len)
{
    const char *env_path = getenv("SYNCSIGHT_CUPTI_LIB");
    const char *candidates[] = { env_path, "libcupti.so.13", "libcupti.so", SS_CUPTI_FALLBACK_PATH };
    const char *last_error = "no candidate";
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (!candidates[i] || !*candidates[i])
            continue;
        cupti_lib = dlopen(candidates[i], RTLD_NOW | RTLD_GLOBAL);
        if (cupti_lib)
            break;
        last_error = dlerror();
    }
    if (!cupti_lib) {
        snprintf(why, why_len, "libcupti could not be loaded (%s)", last_error ? last_error : "?");
        return -1;
    }
#define SS_RESOLVE(name, required)                                               \
    p_##name = (__typeof__(&name))dlsym(cupti_lib, #name);                      \
    if (!p_##name && (required)) {                                               \
        snprintf(why, why_len, "libcupti lacks %s (older than the headers we were built with)", #name); \
        return -1;                                                               \
    }
    SS_CUPTI_FUNCS(SS_RESOLVE)
#undef SS_RESOLVE
    return 0;
}

/* The NVTX loader inside the program injects only what NVTX_INJECTION64_PATH
 * names; it never finds a preloaded library by itself.  Pointing it at the
 * libcupti we loaded makes the program's NVTX calls reach our NVTX-domain
 * callbacks.  A value set by the user (or by Nsight Systems) is left alone. */
static void point_nvtx_at_cupti(void)
{
    if (getenv("NVTX_INJECTION64_PATH"))
        return;
    Dl_info info;
    if (dladdr((void *)p_cuptiSubscribe, &info) && info.dli_fname && info.dli_fname[0] == '/')
        setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

/* ------------------------------------------------------ activity records */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *max_records = 0;
    *buffer = aligned_alloc(8, ACTIVITY_BUFFER_BYTES);
    *size = *buffer ? ACTIVITY_BUFFER_BYTES : 0;   /* none: CUPTI drops and counts */
}

static void fill_gpu(ss_gpu_common *g, uint64_t start, uint64_t end, uint32_t corr,
                     uint32_t stream_id, uint32_t context_id, uint32_t device)
{
    g->start = start;
    g->end = end;
    g->corr = corr;
    g->stream_id = stream_id;
    g->context_id = context_id;
    g->device = device;
}

static void put_stream(uint64_t handle, uint32_t stream_id, uint32_t context_id, uint32_t device,
                       uint32_t kind, int32_t priority, uint32_t corr)
{
    ss_stream_rec *s = ss_rec_begin(SS_REC_STREAM, sizeof *s, 0);
    if (!s)
        return;
    s->handle = handle;
    s->stream_id = stream_id;
    s->context_id = context_id;
    s->device = device;
    s->kind = kind;
    s->priority = priority;
    s->corr = corr;
    ss_rec_commit(s);
}

static void convert_kernel(const CUpti_ActivityKernel10 *a)
{
    uint32_t name_id = a->name ? ss_string_id(a->name, strlen(a->name)) : 0;
    ss_kernel_rec *k = ss_graphs_gpu_rec_begin(SS_REC_KERNEL, sizeof *k, a->graphNodeId);
    if (!k)
        return;
    fill_gpu(&k->g, a->start, a->end, a->correlationId, a->streamId, a->contextId, a->deviceId);
    k->name_id = name_id;
    k->grid[0] = (uint32_t)a->gridX;
    k->grid[1] = (uint32_t)a->gridY;
    k->grid[2] = (uint32_t)a->gridZ;
    k->block[0] = (uint32_t)a->blockX;
    k->block[1] = (uint32_t)a->blockY;
    k->block[2] = (uint32_t)a->blockZ;
    k->shared_bytes = (uint32_t)a->staticSharedMemory + (uint32_t)a->dynamicSharedMemory;
    k->graph_id = a->graphId;
    ss_rec_commit(k);
}

/* CUPTI's plain and peer-to-peer copy records share their field names but
 * not their struct: one body for both, the devices given by the caller. */
#define CONVERT_MEMCPY(a, src_dev, dst_dev)                                                       \
    do {                                                                                         \
        ss_memcpy_rec *m = ss_graphs_gpu_rec_begin(SS_REC_MEMCPY, sizeof *m, (a)->graphNodeId);  \
        if (!m)                                                                                  \
            return;                                                                              \
        fill_gpu(&m->g, (a)->start, (a)->end, (a)->correlationId, (a)->streamId, (a)->contextId, \
                 (a)->deviceId);                                                                 \
        m->bytes = (a)->bytes;                                                                   \
        m->copy_kind = (a)->copyKind;                                                            \
        m->src_kind = (a)->srcKind;                                                              \
        m->dst_kind = (a)->dstKind;                                                              \
        m->async = ((a)->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;                         \
        m->src_device = (src_dev);                                                               \
        m->dst_device = (dst_dev);                                                               \
        m->graph_id = (a)->graphId;                                                              \
        ss_rec_commit(m);                                                                        \
    } while (0)

static void convert_memcpy(const CUpti_ActivityMemcpy6 *a)
{
    CONVERT_MEMCPY(a, a->deviceId, a->deviceId);
}

static void convert_memcpy_peer(const CUpti_ActivityMemcpyPtoP4 *a)
{
    CONVERT_MEMCPY(a, a->srcDeviceId, a->dstDeviceId);
}

static void convert_memset(const CUpti_ActivityMemset4 *a)
{
    ss_memset_rec *m = ss_graphs_gpu_rec_begin(SS_REC_MEMSET, sizeof *m, a->graphNodeId);
    if (!m)
        return;
    fill_gpu(&m->g, a->start, a->end, a->correlationId, a->streamId, a->contextId, a->deviceId);
    m->bytes = a->bytes;
    m->value = a->value;
    m->mem_kind = (uint8_t)a->memoryKind;
    m->async = (a->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
    m->graph_id = a->graphId;
    ss_rec_commit(m);
}

static uint32_t valid_or_zero(uint32_t v)
{
    return v == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : v;
}

static void convert_sync(const CUpti_ActivitySynchronization2 *a)
{
    ss_sync_rec *s = ss_rec_begin(SS_REC_SYNC, sizeof *s, 0);
    if (!s)
        return;
    /* No device in the record: the analyzer gets it from the context. */
    fill_gpu(&s->g, a->start, a->end, a->correlationId, valid_or_zero(a->streamId),
             a->contextId, 0);
    s->sync_type = (uint32_t)a->type;
    s->event_id = valid_or_zero(a->cudaEventId);
    ss_rec_commit(s);
}

static void convert_cuda_event(const CUpti_ActivityCudaEvent2 *a)
{
    ss_cuda_event_rec *e = ss_rec_begin(SS_REC_CUDA_EVENT, sizeof *e, 0);
    if (!e)
        return;
    fill_gpu(&e->g, a->deviceTimestamp, a->deviceTimestamp, a->correlationId, a->streamId,
             a->contextId, a->deviceId);
    e->event_id = a->eventId;
    ss_rec_commit(e);
}

static void convert_stream(const CUpti_ActivityStream *a)
{
    uint32_t kind = SS_STREAM_UNKNOWN;
    switch (a->flag & CUPTI_ACTIVITY_STREAM_CREATE_MASK) {
    case CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT:      kind = SS_STREAM_BLOCKING; break;
    case CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING: kind = SS_STREAM_NON_BLOCKING; break;
    case CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL:         kind = SS_STREAM_LEGACY_NULL; break;
    default: break;
    }
    put_stream(0, a->streamId, a->contextId, 0, kind, (int32_t)a->priority, a->correlationId);
}

static void convert_context(const CUpti_ActivityContext3 *a)
{
    ss_context_rec *c = ss_rec_begin(SS_REC_CONTEXT, sizeof *c, 0);
    if (!c)
        return;
    c->context_id = a->contextId;
    c->device = a->deviceId;
    c->null_stream_id = a->nullStreamId;
    c->parent_id = a->isGreenContext ? a->parentContextId : 0;
    ss_rec_commit(c);
    /* The legacy default stream is handle 0 of this context. */
    put_stream(0, a->nullStreamId, a->contextId, a->deviceId, SS_STREAM_LEGACY_NULL, 0, 0);
}

static void convert_jit(const CUpti_ActivityJit2 *a)
{
    ss_jit_rec *j = ss_rec_begin(SS_REC_JIT, sizeof *j, 0);
    if (!j)
        return;
    fill_gpu(&j->g, a->start, a->end, a->correlationId, 0, 0, a->deviceId);
    j->entry_type = (uint32_t)a->jitEntryType;
    j->op_type = (uint32_t)a->jitOperationType;
    j->cache_size = a->cacheSize;
    j->tid = a->threadId;
    ss_rec_commit(j);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid_size)
{
    (void)size;
    CUpti_Activity *rec = NULL;
    while (valid_size > 0 &&
           p_cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            convert_kernel((const CUpti_ActivityKernel10 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            convert_memcpy((const CUpti_ActivityMemcpy6 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY2:
            convert_memcpy_peer((const CUpti_ActivityMemcpyPtoP4 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            convert_memset((const CUpti_ActivityMemset4 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
            convert_sync((const CUpti_ActivitySynchronization2 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
            convert_cuda_event((const CUpti_ActivityCudaEvent2 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_STREAM:
            convert_stream((const CUpti_ActivityStream *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_CONTEXT:
            convert_context((const CUpti_ActivityContext3 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_JIT:
            convert_jit((const CUpti_ActivityJit2 *)rec);
            break;
        default:
            break;
        }
    }
    size_t dropped = 0;
    if (p_cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add_explicit(&dropped_activity, dropped, memory_order_relaxed);
    free(buffer);
}

/* ------------------------------------------------------------ callbacks */

/* A new stream: its handle is known only here (activity records carry
 * CUPTI's id), so this is where the handle <-> stream_id link is written.
 * cudaStreamGetId(handle) differs from CUPTI's id (facts: +1), hence
 * cuptiGetStreamIdEx. */
static void on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
    if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
        /* The image is valid only during this callback: cubin.c writes it
         * out before returning. */
        const CUpti_ModuleResourceData *mod = rd->resourceDescriptor;
        if (mod)
            ss_cubin_on_module_loaded(mod->pCubin, mod->cubinSize, mod->moduleId);
        return;
    }
    if (cbid != CUPTI_CBID_RESOURCE_STREAM_CREATED && cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        ss_graphs_on_resource(cbid, rd);
        return;
    }
    uint32_t ctx_id = 0, device = 0;
    if (p_cuptiGetContextId && rd->context)
        p_cuptiGetContextId(rd->context, &ctx_id);
    if (p_cuptiGetDeviceId && rd->context)
        p_cuptiGetDeviceId(rd->context, &device);
    if (cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED) {
        uint32_t sid = 0;
        if (p_cuptiGetStreamIdEx)
            p_cuptiGetStreamIdEx(rd->context, rd->resourceHandle.stream, 0, &sid);
        put_stream((uint64_t)(uintptr_t)rd->resourceHandle.stream, sid, ctx_id, device,
                   SS_STREAM_UNKNOWN, 0, 0);
    } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        uint32_t null_sid = 0;
        if (p_cuptiGetStreamIdEx)
            p_cuptiGetStreamIdEx(rd->context, NULL, 0, &null_sid);
        ss_context_rec *c = ss_rec_begin(SS_REC_CONTEXT, sizeof *c, 0);
        if (c) {
            c->context_id = ctx_id;
            c->device = device;
            c->null_stream_id = null_sid;
            c->parent_id = 0;   /* the activity record says (convert_context) */
            ss_rec_commit(c);
        }
    }
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
                                 CUpti_CallbackId cbid, const void *cbdata)
{
    (void)userdata;
    if (!ss_recording())
        return;
    switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
        ss_api_on_runtime_callback(cbid, cbdata);
        break;
    case CUPTI_CB_DOMAIN_DRIVER_API:
        ss_api_on_driver_callback(cbid, cbdata);
        break;
    case CUPTI_CB_DOMAIN_RESOURCE:
        on_resource(cbid, cbdata);
        break;
    case CUPTI_CB_DOMAIN_NVTX:
        ss_nvtx_on_callback(cbid, cbdata);
        break;
    default:
        break;
    }
}

/* ---------------------------------------------------------------- start */

static CUptiResult subscribe(char *holder, size_t holder_len)
{
    holder[0] = '\0';
    if (p_cuptiSubscribe_v2) {
        char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = "";
        CUpti_SubscriberParams params;
        memset(&params, 0, sizeof params);
        params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        params.subscriberName = "syncsight";
        params.oldSubscriberName = old_name;
        params.oldSubscriberSize = sizeof old_name;
        CUptiResult r = p_cuptiSubscribe_v2(&subscriber, on_callback, NULL, &params);
        snprintf(holder, holder_len, "%s", old_name);
        return r;
    }
    return p_cuptiSubscribe(&subscriber, on_callback, NULL);
}

/* The activity kinds, each under its SYNCSIGHT_ACTIVITY bit, and what
 * sampled recording does with them (docs/sampling.md):
 *   KIND_ALWAYS     on all along: structure, and the cheap kinds of hot work
 *                   (their records of work submitted while OFF have no API
 *                   record; the analyzer leaves them out);
 *   KIND_HOT        off while recording is OFF, on again in each window;
 *   KIND_HEAD_ONLY  off at the end of the head and never on again;
 *   KIND_HOT_WORK   memcpy, memset and event: KIND_ALWAYS, or KIND_HOT under
 *                   SYNCSIGHT_SWITCH_KINDS=hot (to reproduce the crash below).
 *                   CUDA_EVENT is not enabled unless SYNCSIGHT_ACTIVITY asks
 *                   for it (its timestamps change the GPU's schedule:
 *                   enable_activity).
 * Only CONCURRENT_KERNEL is switched with the windows.  With the five kinds
 * of hot work switched at each switch, a PyTorch Transformer run died in a
 * thread of CUPTI's own (SIGSEGV, or glibc's "double free or corruption"):
 * 6 of 44 runs under the default sampling, 8 of 18 with a 5 ms window every
 * 20 ms, 4 of 5 with the five switches 1 ms apart; with one kind switched,
 * 1 of 60 of the latter and none of 34 under the default (H100, CUPTI 13.0,
 * 2026-11-24; docs/sampling.md).  The price: the memcpy, memset and event
 * kinds on while OFF cost a launch-bound loop ~30% (docs/performance.md);
 * SYNCSIGHT_ACTIVITY without them takes it back, with no copy records.
 * Newer CUPTIs die the same way (2026-11-28, H200: 13.2 5 of 12 runs, 13.5
 * 1 of 1, 13.0.1 4 of 18), and not through our buffers: with completed
 * buffers held back under a canary, none was written after completion or
 * completed twice, and 6 of 14 runs still died (bench/results).
 * Tried and not usable: a forced flush before switching, CUPTI's global
 * activity buffers (still dies), per-context switching (CUDA_EVENT refused,
 * and no cheaper on a launch-bound loop; docs/performance.md).
 * SYNCHRONIZATION is head-only: enabled again on a live context (a window)
 * and then disabled, it left every later step of a PyTorch training loop
 * 12-25% slower than before the window (H100, CUDA 13, 2026-11-22; the
 * other kinds toggled alone left no such cost, docs/performance.md).  No
 * rule reads its records; the head keeps them for `dump`. */
enum { KIND_ALWAYS, KIND_HOT, KIND_HEAD_ONLY, KIND_HOT_WORK };
static const struct { uint32_t bit; CUpti_ActivityKind kind; int sampled; } kinds[] = {
    /* CONCURRENT_KERNEL, never KERNEL: KERNEL serializes every kernel and
     * would create the very serialization syncsight diagnoses. */
    { SS_ACT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, KIND_HOT },
    { SS_ACT_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, KIND_HOT_WORK },
    { SS_ACT_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, KIND_HOT_WORK },
    { SS_ACT_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET, KIND_HOT_WORK },
    { SS_ACT_SYNC, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, KIND_HEAD_ONLY },
    { SS_ACT_EVENT, CUPTI_ACTIVITY_KIND_CUDA_EVENT, KIND_HOT_WORK },
    { SS_ACT_STREAM, CUPTI_ACTIVITY_KIND_STREAM, KIND_ALWAYS },
    { SS_ACT_CONTEXT, CUPTI_ACTIVITY_KIND_CONTEXT, KIND_ALWAYS },
    /* JIT compilations of PTX at a kernel's first launch: rare, and the
     * only way to tell a JIT stall from a lazy module load. */
    { SS_ACT_JIT, CUPTI_ACTIVITY_KIND_JIT, KIND_ALWAYS },
};

/* what sampling does to a kind, SYNCSIGHT_SWITCH_KINDS applied */
static int kind_sampling(int sampled)
{
    if (sampled != KIND_HOT_WORK)
        return sampled;
    return ss_cfg.switch_kinds == SS_SWITCH_HOT ? KIND_HOT : KIND_ALWAYS;
}

/* The enabled kinds that sampled recording switches with its windows */
static uint32_t switched_kinds(void)
{
    uint32_t bits = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((kinds_enabled & (1u << i)) && kind_sampling(kinds[i].sampled) == KIND_HOT) bits |= kinds[i].bit;
    return bits;
}

static void enable_activity(void)
{
    /* Our clock first: GPU timestamps then arrive in the trace clock.
     * CUPTI accepts it only before any activity kind is enabled. */
    const char *own_clock = getenv("SYNCSIGHT_CUPTI_CLOCK");
    if (p_cuptiActivityRegisterTimestampCallback && !(own_clock && own_clock[0] == '0'))
        p_cuptiActivityRegisterTimestampCallback(ss_now);
    if (p_cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
        return;
    /* Queries that found work unfinished (cudaEventQuery/cudaStreamQuery
     * returning cudaErrorNotReady) produce no SYNCHRONIZATION record: every
     * SYNC record is then a completed wait, and the not-ready queries stay
     * visible as API records with ret == 600.  The SYNC format has no field
     * for CUPTI's returnValue, so keeping them would make them look like
     * waits that completed. */
    if (p_cuptiActivityEnableAllSyncRecords)
        p_cuptiActivityEnableAllSyncRecords(0);
    /* Without device timestamps a CUDA_EVENT record has no GPU time, which
     * is all the analyzer reads of it; with them each event record holds its
     * hardware work queue until the work before it on its stream is done,
     * so a kernel of another stream sharing that queue starts only then:
     * 32 blocking streams on the default 8 queues, an event recorded after
     * each stream's two 2 ms kernels, ran in waves 4 ms apart (the last
     * kernel 16.3 ms after the first) against 2 ms apart (10.2 ms) with
     * them off or without the kind (H200, CUDA 13.0, 2026-11-28;
     * docs/shim.md).  So the kind is off unless SYNCSIGHT_ACTIVITY asks for
     * it, and then it has its timestamps. */
    if (p_cuptiActivityEnableCudaEventDeviceTimestamps && (ss_cfg.activity_mask & SS_ACT_EVENT))
        p_cuptiActivityEnableCudaEventDeviceTimestamps(1);

    int enabled = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((ss_cfg.activity_mask & kinds[i].bit) &&
            p_cuptiActivityEnable(kinds[i].kind) == CUPTI_SUCCESS) {
            kinds_enabled |= 1u << i;
            enabled++;
        }
    activity_on = enabled > 0;
}

void ss_cupti_start(ss_startup_note *note)
{
    note->code = 0;
    char why[256];
    if (load_library(why, sizeof why) != 0) {
        snprintf(status, sizeof status, "unavailable: %s", why);
        note->code = SS_NOTE_CUPTI_UNAVAILABLE;
        note->print_on_first_record = 1;
        char msg[400];
        snprintf(msg, sizeof msg, "CUPTI unavailable (%s): recording only the calls the "
                 "interposer sees; no GPU timeline", why);
        size_t len = strnlen(msg, sizeof note->msg - 1);     /* a note's text is cut there */
        memcpy(note->msg, msg, len);
        note->msg[len] = '\0';
        return;
    }
    point_nvtx_at_cupti();

    char holder[128];
    CUptiResult r = subscribe(holder, sizeof holder);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        note->code = SS_NOTE_CUPTI_TAKEN;
        note->print_on_first_record = 0;
        snprintf(note->msg, sizeof note->msg, "CUPTI is in use by another tool (%s): recording only the "
                 "calls the interposer sees; no GPU timeline",
                 holder[0] ? holder : "holder unknown");
        snprintf(status, sizeof status, "taken: %s", holder[0] ? holder : "holder unknown");
        /* Printed now: another profiler attached means CUDA is in play. */
        fprintf(stderr, "syncsight: %s\n", note->msg);
        return;
    }
    if (r != CUPTI_SUCCESS) {
        snprintf(status, sizeof status, "unavailable: cuptiSubscribe failed: %s", result_text(r));
        note->code = SS_NOTE_CUPTI_UNAVAILABLE;
        note->print_on_first_record = 1;
        snprintf(note->msg, sizeof note->msg, "CUPTI unavailable (cuptiSubscribe: %s): recording only the "
                 "calls the interposer sees; no GPU timeline", result_text(r));
        return;
    }

    subscribed = 1;
    const uint32_t *ids = NULL;
    size_t n = ss_api_wanted_cbids(&ids);
    for (size_t i = 0; i < n; i++)
        p_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, ids[i]);
    /* Only the driver rows of cuda_api.tab: driver calls the program makes
     * itself (Triton, CuPy, JAX) are recorded from them, and the launch
     * cbids also give launches made through another cudart (cuBLAS's static
     * one, a static program's stubs) their kernel parameters.  Each costs a
     * callback when cudart makes it inside a runtime call (ignored there:
     * docs/performance.md); every other driver call stays callback-free. */
    n = ss_api_wanted_driver_cbids(&ids);
    for (size_t i = 0; i < n; i++)
        p_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
    p_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    p_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED);
    /* Device code of each module (SS_REC_CUBIN), also under
     * SYNCSIGHT_CUBIN_MB=0: the loads are then counted, to say in a note that
     * the images are missing. */
    p_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
    /* Graph nodes: which call each replayed node's parameters come from. */
    ss_graphs_start(cupti_lib);
    n = ss_graphs_wanted_cbids(&ids);
    for (size_t i = 0; i < n; i++)
        p_cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, ids[i]);
    p_cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX);
    enable_activity();
    /* Which CUPTI serves the process (the first libcupti.so.13 loaded, ours
     * or the program's: cuda-facts.md) and what sampling switches: the
     * first things to know when a program dies inside CUPTI. */
    uint32_t api = 0;   /* 0: unknown */
    if (p_cuptiGetVersion && p_cuptiGetVersion(&api) != CUPTI_SUCCESS)
        api = 0;
    Dl_info where;
    const char *path = dladdr((void *)p_cuptiSubscribe, &where) && where.dli_fname ? where.dli_fname : "?";
    char switched[96];
    ss_activity_names(switched_kinds(), switched, sizeof switched);
    snprintf(status, sizeof status, "ok%s; CUPTI API %u at %.200s; switched with the windows: %s",
             activity_on ? "" : " (callbacks only: no activity kind enabled)", api, path, switched);
}

/* ------------------------------------------------------------ sampling */

/* Measured (H100, CUDA 13): with these kinds and callbacks off the
 * launch-bound loop costs what it costs without CUPTI; a switch takes less
 * than 0.1 ms.  Only what start-up enabled comes back on. */
void ss_cupti_set_hot(int on)
{
    if (!subscribed)
        return;
    for (int driver = 0; driver <= 1; driver++) {
        const uint32_t *ids = NULL;
        size_t n = ss_api_hot_cbids_of(driver, &ids);
        for (size_t i = 0; i < n; i++)
            p_cuptiEnableCallback(on ? 1 : 0, subscriber,
                                  driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, ids[i]);
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        int sampled = kind_sampling(kinds[i].sampled);
        if (sampled == KIND_ALWAYS || !(kinds_enabled & (1u << i)))
            continue;
        if (on) {
            p_cuptiActivityEnable(kinds[i].kind);
        } else {
            p_cuptiActivityDisable(kinds[i].kind);
            if (sampled == KIND_HEAD_ONLY)
                kinds_enabled &= ~(1u << i);      /* off for good */
        }
    }
}
