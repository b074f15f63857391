/*
 * ss-gen-trace: write a synthetic but causally consistent syncsight trace of
 * any size, through the real writer (common/trace_io.c), so that the analyzer
 * can be benchmarked and fuzzed without a GPU.
 *
 *     ss-gen-trace -n RECORDS -o FILE [--seed S] [--threads T]
 *
 * The trace models a small training program: 4 host threads (one of them
 * built with --default-stream per-thread, so it calls the *_ptsz entry
 * points), 8 streams (the legacy default stream, 3 blocking, 3 non-blocking,
 * one per-thread default stream), kernels with pointer parameters, pinned and
 * pageable copies, memsets, events, stream/event/device syncs, allocations,
 * NVTX ranges and native call stacks on blocking calls.  GPU work is
 * scheduled by a small simulator that follows CUDA's ordering rules (stream
 * order, legacy-stream serialization against blocking streams, event waits,
 * host blocking in syncs and in implicitly synchronizing calls), so that
 * every GPU record starts after its submission and streams run in order.
 *
 * Besides a background rate of each problem, a fixed schedule of "incidents"
 * makes sure that every trace of a few thousand records or more contains at
 * least one of each diagnosable problem: a missing cross-stream fence, a wait
 * on a never-recorded event, a pageable "async" copy, legacy-stream
 * serialization, a burst of device-wide syncs and an implicit sync in
 * cudaFree.
 *
 * Output is deterministic for a given seed except for the file header
 * (pid, host name, wall-clock start).  Memory use is constant in -n.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti_runtime_cbid.h>

#include "syncsight/trace_io.h"

/* ------------------------------------------------------------ API table */

/* The runtime calls the model makes; the cbid is CUPTI's so that the trace
 * looks exactly like one the shim writes.  The name is CUPTI's without the
 * CUPTI_RUNTIME_TRACE_CBID_ prefix and the _vNNNN suffix (trace_format.h). */
#define CB(fn, ver) { CUPTI_RUNTIME_TRACE_CBID_##fn##_##ver, #fn }
enum api_call {
    A_SET_DEVICE, A_MALLOC, A_FREE, A_MALLOC_HOST, A_MALLOC_ASYNC, A_FREE_ASYNC,
    A_MEMCPY, A_MEMCPY_ASYNC, A_MEMSET_ASYNC,
    A_STREAM_CREATE_FLAGS, A_STREAM_CREATE_PRIO, A_STREAM_SYNC, A_STREAM_QUERY, A_STREAM_WAIT_EVENT,
    A_EVENT_CREATE_FLAGS, A_EVENT_RECORD, A_EVENT_SYNC, A_EVENT_QUERY, A_DEVICE_SYNC, A_LAUNCH,
    /* per-thread-default-stream builds call these instead */
    A_MEMCPY_PTDS, A_MEMCPY_ASYNC_PTSZ, A_MEMSET_ASYNC_PTSZ, A_STREAM_SYNC_PTSZ, A_STREAM_QUERY_PTSZ,
    A_STREAM_WAIT_EVENT_PTSZ, A_EVENT_RECORD_PTSZ, A_LAUNCH_PTSZ, A_MALLOC_ASYNC_PTSZ, A_FREE_ASYNC_PTSZ,
    A_COUNT
};
static const struct { uint32_t cbid; const char *name; } api_table[A_COUNT] = {
    [A_SET_DEVICE]             = CB(cudaSetDevice, v3020),
    [A_MALLOC]                 = CB(cudaMalloc, v3020),
    [A_FREE]                   = CB(cudaFree, v3020),
    [A_MALLOC_HOST]            = CB(cudaMallocHost, v3020),
    [A_MALLOC_ASYNC]           = CB(cudaMallocAsync, v11020),
    [A_FREE_ASYNC]             = CB(cudaFreeAsync, v11020),
    [A_MEMCPY]                 = CB(cudaMemcpy, v3020),
    [A_MEMCPY_ASYNC]           = CB(cudaMemcpyAsync, v3020),
    [A_MEMSET_ASYNC]           = CB(cudaMemsetAsync, v3020),
    [A_STREAM_CREATE_FLAGS]    = CB(cudaStreamCreateWithFlags, v5000),
    [A_STREAM_CREATE_PRIO]     = CB(cudaStreamCreateWithPriority, v5050),
    [A_STREAM_SYNC]            = CB(cudaStreamSynchronize, v3020),
    [A_STREAM_QUERY]           = CB(cudaStreamQuery, v3020),
    [A_STREAM_WAIT_EVENT]      = CB(cudaStreamWaitEvent, v3020),
    [A_EVENT_CREATE_FLAGS]     = CB(cudaEventCreateWithFlags, v3020),
    [A_EVENT_RECORD]           = CB(cudaEventRecord, v3020),
    [A_EVENT_SYNC]             = CB(cudaEventSynchronize, v3020),
    [A_EVENT_QUERY]            = CB(cudaEventQuery, v3020),
    [A_DEVICE_SYNC]            = CB(cudaDeviceSynchronize, v3020),
    [A_LAUNCH]                 = CB(cudaLaunchKernel, v7000),
    [A_MEMCPY_PTDS]            = CB(cudaMemcpy_ptds, v7000),
    [A_MEMCPY_ASYNC_PTSZ]      = CB(cudaMemcpyAsync_ptsz, v7000),
    [A_MEMSET_ASYNC_PTSZ]      = CB(cudaMemsetAsync_ptsz, v7000),
    [A_STREAM_SYNC_PTSZ]       = CB(cudaStreamSynchronize_ptsz, v7000),
    [A_STREAM_QUERY_PTSZ]      = CB(cudaStreamQuery_ptsz, v7000),
    [A_STREAM_WAIT_EVENT_PTSZ] = CB(cudaStreamWaitEvent_ptsz, v7000),
    [A_EVENT_RECORD_PTSZ]      = CB(cudaEventRecord_ptsz, v7000),
    [A_LAUNCH_PTSZ]            = CB(cudaLaunchKernel_ptsz, v7000),
    [A_MALLOC_ASYNC_PTSZ]      = CB(cudaMallocAsync_ptsz, v11020),
    [A_FREE_ASYNC_PTSZ]        = CB(cudaFreeAsync_ptsz, v11020),
};
#undef CB

/* The per-thread-default-stream variant of a stream-taking call, or the call
 * itself when there is none. */
static enum api_call ptsz_variant(enum api_call a)
{
    switch (a) {
    case A_MEMCPY:            return A_MEMCPY_PTDS;
    case A_MEMCPY_ASYNC:      return A_MEMCPY_ASYNC_PTSZ;
    case A_MEMSET_ASYNC:      return A_MEMSET_ASYNC_PTSZ;
    case A_STREAM_SYNC:       return A_STREAM_SYNC_PTSZ;
    case A_STREAM_QUERY:      return A_STREAM_QUERY_PTSZ;
    case A_STREAM_WAIT_EVENT: return A_STREAM_WAIT_EVENT_PTSZ;
    case A_EVENT_RECORD:      return A_EVENT_RECORD_PTSZ;
    case A_LAUNCH:            return A_LAUNCH_PTSZ;
    case A_MALLOC_ASYNC:      return A_MALLOC_ASYNC_PTSZ;
    case A_FREE_ASYNC:        return A_FREE_ASYNC_PTSZ;
    default:                  return a;
    }
}

/* cudaMemcpyKind values stored in ss_api_rec.arg for copies. */
enum { MEMCPY_H2D = 1, MEMCPY_D2H = 2 };
/* CUpti_ActivityMemcpyKind values for ss_memcpy_rec.copy_kind. */
enum { COPY_HTOD = 1, COPY_DTOH = 2 };
/* CUpti_ActivitySynchronizationType values for ss_sync_rec.sync_type. */
enum { SYNC_EVENT = 1, SYNC_STREAM_WAIT_EVENT = 2, SYNC_STREAM = 3, SYNC_CONTEXT = 4 };
enum { CUDA_ERROR_NOT_READY = 600, CUDA_STREAM_NON_BLOCKING = 1, CUDA_EVENT_DISABLE_TIMING = 2 };

/* ------------------------------------------------------------ model */

#define NTHREADS_MAX    8
#define NSTREAMS        8
#define NEVENTS         16      /* events each thread cycles through, created at first use */
#define NUNRECORDED     2       /* events created but never recorded */
#define BUFS_PER_THREAD 8
#define NKERNELS        24
#define NSTACKS         32
#define THREAD_BUF_CAP  (256u << 10)  /* like the shim's per-thread buffers */
#define ACT_BUF_CAP     (1u << 20)    /* like a CUPTI activity buffer */
#define CONTEXT_ID      1
#define DEVICE          0
#define LEGACY_STREAM_ID 7      /* cuda-facts.md: the legacy stream was id 7 */
#define TRACE_START_NS  1000000000000ull
#define APP_BASE        0x555555554000ull
#define CUDART_BASE     0x7f3a10000000ull

enum stream_slot { S_LEGACY = 0, S_BLOCK1, S_BLOCK2, S_BLOCK3, S_NB1, S_NB2, S_NB3, S_PER_THREAD };

typedef struct stream_state {
    uint64_t handle;            /* 0 for the legacy and the per-thread stream */
    uint32_t stream_id;         /* CUPTI's id */
    uint32_t kind;              /* enum ss_stream_kind */
    uint64_t free_at;           /* GPU time its last submitted op ends */
} stream_state;

typedef struct event_state {
    uint64_t handle;
    uint32_t cupti_id;
    int      created;
    int      recorded;
    uint64_t completes_at;      /* GPU time of the work it was recorded after */
} event_state;

typedef struct buffer_state {
    uint64_t ptr;
    uint64_t bytes;
    int      last_stream;       /* stream slot that last used it, -1 none */
} buffer_state;

typedef struct nvtx_open {
    uint64_t start;
    uint32_t name_id;
    uint32_t ops_left;          /* ops until this range is popped */
} nvtx_open;

typedef struct gen_thread {
    uint32_t tid;
    uint64_t now;               /* host clock of this thread */
    int      ptsz;              /* built with --default-stream per-thread */
    int      primary, secondary; /* stream slots it mostly submits to */
    uint8_t *buf;
    uint32_t used, count;
    buffer_state bufs[BUFS_PER_THREAD];
    uint64_t pinned_host, pageable_host;
    event_state events[NEVENTS];
    uint32_t next_event;
    nvtx_open nvtx[2];
    uint32_t nvtx_depth;
} gen_thread;

typedef struct gen {
    ss_writer w;
    uint64_t target, records;
    uint64_t rng;
    int      nthreads;
    gen_thread th[NTHREADS_MAX];
    stream_state streams[NSTREAMS];
    event_state unrecorded[NUNRECORDED];
    uint8_t *act;               /* GPU activity buffer */
    uint32_t act_used, act_count;
    uint32_t corr;
    uint32_t next_string_id, next_event_id;
    uint64_t next_dev_ptr;
    uint8_t  api_named[A_COUNT];
    uint32_t kernel_name_id[NKERNELS];
    uint32_t nvtx_name_id[8];
    uint32_t nvtx_domain_id;
    uint8_t  stack_written[NSTACKS];
    uint64_t next_incident_at, incident_every;
    uint32_t incident_no;
    int      first_malloc_async_done;
    uint64_t kernels, copies, syncs;
} gen;

static const char *const kernel_names[NKERNELS] = {
    "_Z10gemm_tiledPKfS0_Pfiii", "_Z11relu_kernelPfS_m", "_Z12softmax_fwdPKfPfii",
    "_Z12softmax_bwdPKfS0_Pfii", "_Z13layernorm_fwdPKfS0_S0_Pfii", "_Z13layernorm_bwdPKfS0_S0_Pfii",
    "_Z10add_kernelPKfS0_Pfm", "_Z10mul_kernelPKfS0_Pfm", "_Z13adam_step_fp32PfS_S_PKfffffm",
    "_Z14reduce_sum_fp32PKfPfm", "_Z12embed_gatherPKiPKfPfii", "_Z13embed_scatterPKiPKfPfii",
    "_Z14cross_entropy_fPKfPKiPfi", "_Z10dropout_fPKfPfPhfm", "_Z11gelu_kernelPKfPfm",
    "_Z13transpose_32x8PKfPfii", "_Z9fill_zeroPfm", "_Z12cast_f32_f16PKfP6__halfm",
    "_Z12cast_f16_f32PK6__halfPfm", "_Z16attention_scoresPKfS0_Pfiii",
    "_Z14attention_applyPKfS0_Pfiii", "_Z13grad_norm_sqrPKfPfm", "_Z12clip_by_normPfPKffm",
    /* a name with characters an analyzer must escape before printing */
    "kernel<\"quoted\"&\\escaped\x1b[31m>",
};
static const char *const nvtx_names[] = {
    "train_step", "forward", "backward", "optimizer", "data_load", "eval<batch \"7\">", "checkpoint", "mark",
};

static uint64_t rnd(gen *g)
{
    /* splitmix64: fast, good enough, and reproducible across platforms. */
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t rnd_range(gen *g, uint64_t lo, uint64_t hi) { return lo + rnd(g) % (hi - lo + 1); }
/* True with probability per_million / 1e6. */
static int chance(gen *g, uint32_t per_million) { return rnd(g) % 1000000u < per_million; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static void die(const char *what, int err)
{
    fprintf(stderr, "ss-gen-trace: %s: %s\n", what, strerror(err));
    exit(1);
}

/* ------------------------------------------------------------ emitting */

static void flush_buf(gen *g, uint8_t *buf, uint32_t *used, uint32_t *count)
{
    if (*used == 0)
        return;
    int rc = ss_writer_write_block(&g->w, buf, *used, *count);
    if (rc < 0)
        die("write", -rc);
    *used = 0;
    *count = 0;
}

/* Reserve a record in a per-thread buffer (t != NULL) or in the GPU activity
 * buffer, flushing the buffer as a block when it is full. */
static void *emit(gen *g, gen_thread *t, uint16_t type, uint32_t fixed, uint32_t tail)
{
    uint8_t *buf = t ? t->buf : g->act;
    uint32_t cap = t ? THREAD_BUF_CAP : ACT_BUF_CAP;
    uint32_t *used = t ? &t->used : &g->act_used;
    uint32_t *count = t ? &t->count : &g->act_count;
    void *rec = ss_rec_reserve(buf, cap, used, type, fixed, tail);
    if (!rec) {
        flush_buf(g, buf, used, count);
        rec = ss_rec_reserve(buf, cap, used, type, fixed, tail);
        if (!rec) {
            fprintf(stderr, "ss-gen-trace: record of %u bytes does not fit a buffer\n", fixed + tail);
            exit(1);
        }
    }
    (*count)++;
    g->records++;
    return rec;
}

static uint32_t emit_string(gen *g, gen_thread *t, const char *s)
{
    uint32_t len = (uint32_t)strlen(s);
    ss_string_rec *r = emit(g, t, SS_REC_STRING, sizeof *r, len);
    r->id = ++g->next_string_id;
    r->len = len;
    memcpy((char *)r + sizeof *r, s, len);
    return r->id;
}

static void emit_meta(gen *g, gen_thread *t, const char *key, const char *value)
{
    uint32_t kl = (uint32_t)strlen(key), vl = (uint32_t)strlen(value);
    ss_meta_rec *r = emit(g, t, SS_REC_META, sizeof *r, kl + 1 + vl + 1);
    r->key_len = kl;
    r->value_len = vl;
    char *tail = (char *)r + sizeof *r;
    memcpy(tail, key, kl + 1);
    memcpy(tail + kl + 1, value, vl + 1);
}

/* An API record for call `a` by thread t, entered now and lasting `dur` ns
 * (the thread's clock moves past it).  The name record goes out before the
 * first use of each cbid, as the shim does. */
static ss_api_rec *emit_api(gen *g, gen_thread *t, enum api_call a, uint64_t stream_handle,
                            uint64_t t_exit, uint8_t nparams)
{
    if (t->ptsz)
        a = ptsz_variant(a);
    if (!g->api_named[a]) {
        uint32_t len = (uint32_t)strlen(api_table[a].name);
        ss_api_name_rec *n = emit(g, t, SS_REC_API_NAME, sizeof *n, len);
        n->cbid = api_table[a].cbid;
        n->len = len;
        memcpy((char *)n + sizeof *n, api_table[a].name, len);
        g->api_named[a] = 1;
    }
    ss_api_rec *r = emit(g, t, SS_REC_API, sizeof *r, nparams * 8u);
    r->cbid = api_table[a].cbid;
    r->tid = t->tid;
    r->t_enter = t->now;
    r->t_exit = t_exit;
    r->corr = ++g->corr;
    r->stream = stream_handle;
    r->flags = SS_API_F_INTERPOSER | SS_API_F_CUPTI_CB | (t->ptsz ? SS_API_F_PTSZ : 0);
    r->nparams = nparams;
    r->device = DEVICE;
    /* host time between this call and the next: mostly short, at times the
     * long gaps of a Python interpreter or a data loader */
    t->now = t_exit + (chance(g, 20000) ? rnd_range(g, 50000, 500000) : rnd_range(g, 300, 8000));
    return r;
}

/* A native stack for a blocking call site; each distinct stack once. */
static uint32_t use_stack(gen *g, gen_thread *t, uint32_t site)
{
    uint32_t id = site % NSTACKS + 1;
    if (!g->stack_written[id - 1]) {
        enum { DEPTH = 8 };
        ss_stack_rec *s = emit(g, t, SS_REC_STACK, sizeof *s, DEPTH * 8u);
        s->id = id;
        s->depth = DEPTH;
        uint64_t *pc = (uint64_t *)((char *)s + sizeof *s);
        pc[0] = CUDART_BASE + 0x4a120 + 0x40 * (id % 5);   /* inside libcudart */
        for (int i = 1; i < DEPTH; i++)
            pc[i] = APP_BASE + 0x1000 + 0x130 * id + 0x2b0 * (uint64_t)i;
        g->stack_written[id - 1] = 1;
    }
    return id;
}

static ss_gpu_common *emit_gpu(gen *g, uint16_t type, uint32_t fixed, uint32_t corr, int slot,
                               uint64_t start, uint64_t end)
{
    ss_gpu_common *c = emit(g, NULL, type, fixed, 0);
    c->start = start;
    c->end = end;
    c->corr = corr;
    c->stream_id = slot >= 0 ? g->streams[slot].stream_id : 0;
    c->context_id = CONTEXT_ID;
    c->device = DEVICE;
    return c;
}

/* ------------------------------------------------------------ GPU simulator */

/* Place `dur` ns of work submitted at `submit` on a stream: after the stream's
 * previous work, and after the ordering the legacy default stream imposes
 * (legacy work waits for every blocking stream, blocking-stream work waits for
 * the legacy stream). */
static uint64_t gpu_place(gen *g, int slot, uint64_t submit, uint64_t dur)
{
    stream_state *s = &g->streams[slot];
    uint64_t start = max_u64(submit + 2500, s->free_at);
    if (s->kind == SS_STREAM_LEGACY_NULL) {
        for (int i = 0; i < NSTREAMS; i++)
            if (g->streams[i].kind == SS_STREAM_BLOCKING || g->streams[i].kind == SS_STREAM_PER_THREAD)
                start = max_u64(start, g->streams[i].free_at);
    } else if (s->kind == SS_STREAM_BLOCKING || s->kind == SS_STREAM_PER_THREAD) {
        start = max_u64(start, g->streams[S_LEGACY].free_at);
    }
    s->free_at = start + dur;
    return start;
}

static uint64_t device_idle_at(const gen *g)
{
    uint64_t t = 0;
    for (int i = 0; i < NSTREAMS; i++)
        t = max_u64(t, g->streams[i].free_at);
    return t;
}

/* The stream handle a thread passes for a slot.  A per-thread-default-stream
 * build passes 0 for its own default stream. */
static uint64_t handle_of(const gen *g, int slot) { return g->streams[slot].handle; }

/* ------------------------------------------------------------ operations */

/* The thread's next event of its ring, created (cudaEventCreateWithFlags)
 * the first time it is used, as programs create them lazily. */
static event_state *next_event(gen *g, gen_thread *t)
{
    event_state *e = &t->events[t->next_event];
    t->next_event = (t->next_event + 1) % NEVENTS;
    if (!e->created) {
        ss_api_rec *ec = emit_api(g, t, A_EVENT_CREATE_FLAGS, 0, t->now + rnd_range(g, 1000, 2000), 0);
        ec->event = e->handle;
        ec->arg = CUDA_EVENT_DISABLE_TIMING;
        e->created = 1;
    }
    return e;
}

static void op_event_record(gen *g, gen_thread *t, int slot, event_state *e)
{
    uint64_t t0 = t->now;
    ss_api_rec *r = emit_api(g, t, A_EVENT_RECORD, handle_of(g, slot), t0 + rnd_range(g, 800, 2500), 0);
    r->event = e->handle;
    e->recorded = 1;
    e->completes_at = max_u64(g->streams[slot].free_at, t0 + 2500);
    ss_cuda_event_rec *ce = (ss_cuda_event_rec *)emit_gpu(g, SS_REC_CUDA_EVENT, sizeof *ce, r->corr, slot,
                                                           e->completes_at, e->completes_at);
    ce->event_id = e->cupti_id;
}

static void op_stream_wait(gen *g, gen_thread *t, int slot, event_state *e)
{
    uint64_t t0 = t->now;
    ss_api_rec *r = emit_api(g, t, A_STREAM_WAIT_EVENT, handle_of(g, slot), t0 + rnd_range(g, 900, 2200), 0);
    r->event = e->handle;
    if (e->recorded)
        g->streams[slot].free_at = max_u64(g->streams[slot].free_at, e->completes_at);
    ss_sync_rec *s = (ss_sync_rec *)emit_gpu(g, SS_REC_SYNC, sizeof *s, r->corr, slot, r->t_enter, r->t_exit);
    s->sync_type = SYNC_STREAM_WAIT_EVENT;
    s->event_id = e->cupti_id;
    g->syncs++;
}

/* Make `slot` safe to use buffer b: if another stream used it last, record an
 * event there and wait on it here -- unless this is a race the trace should
 * contain. */
static void fence_buffer(gen *g, gen_thread *t, buffer_state *b, int slot, int skip_fence)
{
    if (b->last_stream >= 0 && b->last_stream != slot && !skip_fence) {
        event_state *e = next_event(g, t);
        op_event_record(g, t, b->last_stream, e);
        op_stream_wait(g, t, slot, e);
    }
    b->last_stream = slot;
}

/* A kernel launch on `slot` touching 1-3 of the thread's buffers (`first`
 * as the first one when given).  `race`: skip the fences it would need. */
static void op_kernel_on(gen *g, gen_thread *t, int slot, int race, buffer_state *first)
{
    uint32_t k = (uint32_t)rnd_range(g, 0, NKERNELS - 1);
    uint32_t nbufs = (uint32_t)rnd_range(g, 1, 3);
    buffer_state *used[3];
    for (uint32_t i = 0; i < nbufs; i++) {
        used[i] = i == 0 && first ? first : &t->bufs[rnd_range(g, 0, BUFS_PER_THREAD - 1)];
        fence_buffer(g, t, used[i], slot, race);
    }
    uint32_t grid = (uint32_t)rnd_range(g, 1, 4096), block = 32u << rnd_range(g, 0, 5);
    /* the pointers, then an element count: an 8-byte scalar the analyzer must
     * not mistake for a device pointer */
    uint8_t nparams = (uint8_t)(nbufs + 1);
    uint64_t t0 = t->now;
    ss_api_rec *r = emit_api(g, t, A_LAUNCH, handle_of(g, slot), t0 + rnd_range(g, 2200, 6000), nparams);
    r->func = APP_BASE + 0x20000 + 0x100 * k;
    r->arg = grid;
    r->arg2 = (int32_t)block;
    uint64_t *params = (uint64_t *)((char *)r + sizeof *r);
    /* mostly a tensor's base pointer, at times a view into it; a forced
     * buffer (the race incident) always by its base, like the producer */
    for (uint32_t i = 0; i < nbufs; i++)
        params[i] = used[i]->ptr + (i == 0 && first ? 0 : chance(g, 250000) ? 256 * rnd_range(g, 1, 15) : 0);
    params[nbufs] = (uint64_t)grid * block;
    if (chance(g, 400000))
        r->stack_id = use_stack(g, t, 100 + k);

    uint64_t dur = chance(g, 10000) ? rnd_range(g, 1000000, 5000000) : rnd_range(g, 3000, 400000);
    uint64_t start = gpu_place(g, slot, t0, dur);
    if (!g->kernel_name_id[k])
        g->kernel_name_id[k] = emit_string(g, NULL, kernel_names[k]);
    ss_kernel_rec *kr = (ss_kernel_rec *)emit_gpu(g, SS_REC_KERNEL, sizeof *kr, r->corr, slot, start, start + dur);
    kr->name_id = g->kernel_name_id[k];
    kr->grid[0] = grid;
    kr->grid[1] = kr->grid[2] = 1;
    kr->block[0] = block;
    kr->block[1] = kr->block[2] = 1;
    kr->shared_bytes = (uint32_t)(rnd(g) % 4) * 16384;
    g->kernels++;
}

static void op_kernel(gen *g, gen_thread *t, int slot, int race) { op_kernel_on(g, t, slot, race, NULL); }

/* A host<->device copy.  Pinned copies are truly asynchronous; a pageable
 * "async" H2D is staged (the host waits for the staging), a pageable D2H
 * blocks until the copy is done; synchronous cudaMemcpy always blocks. */
static void op_copy(gen *g, gen_thread *t, int slot, int to_device, int pageable, int sync_call)
{
    buffer_state *b = &t->bufs[rnd_range(g, 0, BUFS_PER_THREAD - 1)];
    fence_buffer(g, t, b, slot, 0);
    uint64_t bytes = sync_call ? 4 * rnd_range(g, 1, 16) : rnd_range(g, 1, 256) * 4096;
    uint64_t host = pageable ? t->pageable_host : t->pinned_host;
    uint64_t t0 = t->now;
    uint64_t dur = 1500 + bytes / 20;                 /* ~20 GB/s */
    uint64_t start = gpu_place(g, slot, t0, dur), end = start + dur;
    uint64_t t_exit = t0 + rnd_range(g, 3000, 8000);
    if (sync_call || (pageable && !to_device))
        t_exit = max_u64(t_exit, end + 1500);
    else if (pageable)
        t_exit += bytes / 8;                           /* staging through a bounce buffer */
    ss_api_rec *r = emit_api(g, t, sync_call ? A_MEMCPY : A_MEMCPY_ASYNC, handle_of(g, slot), t_exit, 0);
    r->ptr = to_device ? b->ptr : host;
    r->ptr2 = to_device ? host : b->ptr;
    r->bytes = bytes;
    r->arg = to_device ? MEMCPY_H2D : MEMCPY_D2H;
    uint8_t host_kind = pageable ? SS_MEM_PAGEABLE : SS_MEM_PINNED;
    r->mem_dst = to_device ? SS_MEM_DEVICE : host_kind;
    r->mem_src = to_device ? host_kind : SS_MEM_DEVICE;
    if (sync_call || pageable)
        r->stack_id = use_stack(g, t, sync_call ? 1 + to_device : 3 + to_device);
    ss_memcpy_rec *m = (ss_memcpy_rec *)emit_gpu(g, SS_REC_MEMCPY, sizeof *m, r->corr, slot, start, end);
    m->bytes = bytes;
    m->copy_kind = to_device ? COPY_HTOD : COPY_DTOH;
    m->src_kind = r->mem_src;
    m->dst_kind = r->mem_dst;
    m->async = !sync_call && !pageable;
    m->src_device = m->dst_device = DEVICE;
    g->copies++;
}

static void op_memset(gen *g, gen_thread *t, int slot)
{
    buffer_state *b = &t->bufs[rnd_range(g, 0, BUFS_PER_THREAD - 1)];
    fence_buffer(g, t, b, slot, 0);
    uint64_t t0 = t->now, dur = 1500 + b->bytes / 400;
    uint64_t start = gpu_place(g, slot, t0, dur);
    ss_api_rec *r = emit_api(g, t, A_MEMSET_ASYNC, handle_of(g, slot), t0 + rnd_range(g, 2000, 5000), 0);
    r->ptr = b->ptr;
    r->bytes = b->bytes;
    r->arg = 0;
    r->mem_dst = SS_MEM_DEVICE;
    ss_memset_rec *m = (ss_memset_rec *)emit_gpu(g, SS_REC_MEMSET, sizeof *m, r->corr, slot, start, start + dur);
    m->bytes = b->bytes;
    m->mem_kind = SS_MEM_DEVICE;
    m->async = 1;
}

static void op_stream_sync(gen *g, gen_thread *t, int slot)
{
    uint64_t t0 = t->now;
    uint64_t t_exit = max_u64(t0 + rnd_range(g, 800, 2000), g->streams[slot].free_at + 1200);
    ss_api_rec *r = emit_api(g, t, A_STREAM_SYNC, handle_of(g, slot), t_exit, 0);
    r->stack_id = use_stack(g, t, 5 + (uint32_t)slot);
    ss_sync_rec *s = (ss_sync_rec *)emit_gpu(g, SS_REC_SYNC, sizeof *s, r->corr, slot, r->t_enter, r->t_exit);
    s->sync_type = SYNC_STREAM;
    g->syncs++;
}

static void op_stream_query(gen *g, gen_thread *t, int slot)
{
    uint64_t t0 = t->now;
    int ready = g->streams[slot].free_at <= t0;
    ss_api_rec *r = emit_api(g, t, A_STREAM_QUERY, handle_of(g, slot), t0 + rnd_range(g, 300, 900), 0);
    r->ret = ready ? 0 : CUDA_ERROR_NOT_READY;
    /* not-ready query records are dropped (cuptiActivityEnableAllSyncRecords(0)) */
    if (ready) {
        ss_sync_rec *s = (ss_sync_rec *)emit_gpu(g, SS_REC_SYNC, sizeof *s, r->corr, slot, r->t_enter, r->t_exit);
        s->sync_type = SYNC_STREAM;
    }
}

static void op_event_sync(gen *g, gen_thread *t, int slot, int query)
{
    event_state *e = next_event(g, t);
    op_event_record(g, t, slot, e);
    uint64_t t0 = t->now;
    int ready = e->completes_at <= t0;
    uint64_t t_exit = query ? t0 + rnd_range(g, 300, 900)
                            : max_u64(t0 + rnd_range(g, 600, 1500), e->completes_at + 1000);
    ss_api_rec *r = emit_api(g, t, query ? A_EVENT_QUERY : A_EVENT_SYNC, 0, t_exit, 0);
    r->event = e->handle;
    r->ret = query && !ready ? CUDA_ERROR_NOT_READY : 0;
    if (!query)
        r->stack_id = use_stack(g, t, 14);
    if (!query || ready) {
        ss_sync_rec *s = (ss_sync_rec *)emit_gpu(g, SS_REC_SYNC, sizeof *s, r->corr, slot, r->t_enter, r->t_exit);
        s->g.stream_id = 0;
        s->sync_type = SYNC_EVENT;
        s->event_id = e->cupti_id;
        g->syncs++;
    }
}

static void op_device_sync(gen *g, gen_thread *t)
{
    uint64_t t0 = t->now;
    uint64_t t_exit = max_u64(t0 + rnd_range(g, 1000, 3000), device_idle_at(g) + 1500);
    ss_api_rec *r = emit_api(g, t, A_DEVICE_SYNC, 0, t_exit, 0);
    r->stack_id = use_stack(g, t, 15 + (uint32_t)(rnd(g) % 3));
    ss_sync_rec *s = (ss_sync_rec *)emit_gpu(g, SS_REC_SYNC, sizeof *s, r->corr, -1, r->t_enter, r->t_exit);
    s->sync_type = SYNC_CONTEXT;
    g->syncs++;
}

/* Replace one of the thread's buffers.  cudaFree waits for the whole device
 * (cuda-facts.md) and leaves no SYNCHRONIZATION record; the stream-ordered
 * allocator does not block (its first call is slow: the pool is created). */
static void op_realloc(gen *g, gen_thread *t, int slot, int stream_ordered)
{
    buffer_state *b = &t->bufs[rnd_range(g, 0, BUFS_PER_THREAD - 1)];
    uint64_t t0 = t->now;
    if (stream_ordered) {
        ss_api_rec *f = emit_api(g, t, A_FREE_ASYNC, handle_of(g, slot), t0 + rnd_range(g, 1000, 3000), 0);
        f->ptr = b->ptr;
        t0 = t->now;
        uint64_t dur = g->first_malloc_async_done ? rnd_range(g, 1500, 4000) : 10000000;
        g->first_malloc_async_done = 1;
        b->ptr = g->next_dev_ptr;
        g->next_dev_ptr += b->bytes + 0x200000;
        ss_api_rec *m = emit_api(g, t, A_MALLOC_ASYNC, handle_of(g, slot), t0 + dur, 0);
        m->ptr = b->ptr;
        m->bytes = b->bytes;
    } else {
        uint64_t t_exit = max_u64(t0 + rnd_range(g, 3000, 9000), device_idle_at(g) + 2000);
        ss_api_rec *f = emit_api(g, t, A_FREE, 0, t_exit, 0);
        f->ptr = b->ptr;
        f->stack_id = use_stack(g, t, 18);
        t0 = t->now;
        b->ptr = g->next_dev_ptr;
        g->next_dev_ptr += b->bytes + 0x200000;
        ss_api_rec *m = emit_api(g, t, A_MALLOC, 0, t0 + rnd_range(g, 5000, 30000), 0);
        m->ptr = b->ptr;
        m->bytes = b->bytes;
    }
    b->last_stream = -1;
}

static void op_unrecorded_wait(gen *g, gen_thread *t, int slot)
{
    op_stream_wait(g, t, slot, &g->unrecorded[rnd(g) % NUNRECORDED]);
}

/* NVTX: a train_step range with nested phases, each written when popped.
 * Every open range counts down one op per step; when one reaches zero it is
 * popped together with any range nested inside it. */
static void pop_nvtx(gen *g, gen_thread *t)
{
    uint32_t d = --t->nvtx_depth;
    ss_nvtx_rec *n = emit(g, t, SS_REC_NVTX, sizeof *n, 0);
    n->start = t->nvtx[d].start;
    n->end = t->now;
    n->tid = t->tid;
    n->name_id = t->nvtx[d].name_id;
    n->depth = d;
    n->domain_id = d == 0 && t->ptsz ? g->nvtx_domain_id : 0;
    n->color = 0xff00a0c0u + d;
    t->now += 400;
}

static void nvtx_tick(gen *g, gen_thread *t)
{
    uint32_t close_from = t->nvtx_depth;
    for (uint32_t d = 0; d < t->nvtx_depth; d++) {
        if (t->nvtx[d].ops_left > 0)
            t->nvtx[d].ops_left--;
        if (t->nvtx[d].ops_left == 0 && close_from == t->nvtx_depth)
            close_from = d;
    }
    while (t->nvtx_depth > close_from)
        pop_nvtx(g, t);
    while (t->nvtx_depth < 2) {
        nvtx_open *o = &t->nvtx[t->nvtx_depth];
        o->start = t->now;
        o->name_id = g->nvtx_name_id[t->nvtx_depth == 0 ? 0 : rnd_range(g, 1, 6)];
        o->ops_left = t->nvtx_depth == 0 ? (uint32_t)rnd_range(g, 100, 300) : (uint32_t)rnd_range(g, 5, 40);
        t->nvtx_depth++;
        t->now += 400;
    }
    if (chance(g, 2000)) {
        ss_nvtx_rec *n = emit(g, t, SS_REC_NVTX, sizeof *n, 0);
        n->h.flags = SS_NVTX_F_MARK;
        n->start = n->end = t->now;
        n->tid = t->tid;
        n->name_id = g->nvtx_name_id[7];
        n->depth = t->nvtx_depth;
    }
}

static void close_nvtx(gen *g, gen_thread *t)
{
    while (t->nvtx_depth > 0)
        pop_nvtx(g, t);
}

/* One scheduled incident: the problems the analyzer exists to find, each
 * guaranteed to appear in a trace of a few thousand records or more. */
static void op_incident(gen *g, gen_thread *t)
{
    int slot = t->primary;
    switch (g->incident_no++ % 6) {
    case 0: {                                                           /* missing fence */
        buffer_state *b = &t->bufs[rnd_range(g, 0, BUFS_PER_THREAD - 1)];
        op_kernel_on(g, t, t->primary, 0, b);      /* producer */
        op_kernel_on(g, t, t->secondary, 1, b);    /* consumer on another stream, no wait */
        break;
    }
    case 1: op_unrecorded_wait(g, t, slot); op_kernel(g, t, slot, 0); break;
    case 2: op_copy(g, t, slot, 1, 1, 0); break;                        /* pageable "async" */
    case 3:                                                             /* legacy serialization */
        if (!t->ptsz) {
            op_kernel(g, t, S_LEGACY, 0);
            op_kernel(g, t, S_BLOCK1, 0);
            op_kernel(g, t, S_LEGACY, 0);
        }
        break;
    case 4:                                                             /* device-sync overuse */
        for (int i = 0; i < 4; i++) {
            op_kernel(g, t, slot, 0);
            op_device_sync(g, t);
        }
        break;
    case 5: op_realloc(g, t, slot, 0); break;                           /* implicit sync in cudaFree */
    }
}

/* One step of the thread's program, drawn from a fixed mix. */
static void op_step(gen *g, gen_thread *t)
{
    nvtx_tick(g, t);
    if (g->records >= g->next_incident_at) {
        g->next_incident_at += g->incident_every;
        op_incident(g, t);
        return;
    }
    int slot = chance(g, 800000) ? t->primary : t->secondary;
    uint32_t x = (uint32_t)(rnd(g) % 1000000u);
    if (x < 560000)       op_kernel(g, t, slot, chance(g, 50));
    else if (x < 720000)  op_copy(g, t, t->secondary, chance(g, 600000), 0, 0);
    else if (x < 770000)  op_memset(g, t, slot);
    else if (x < 820000)  op_event_sync(g, t, slot, 1);
    else if (x < 850000)  op_stream_sync(g, t, slot);
    else if (x < 870000)  op_stream_query(g, t, slot);
    else if (x < 880000)  op_event_sync(g, t, slot, 0);
    else if (x < 884000)  op_device_sync(g, t);
    else if (x < 894000)  op_copy(g, t, t->ptsz ? t->primary : S_LEGACY, 0, 1, 1);  /* .item() */
    else if (x < 897000)  op_realloc(g, t, slot, 0);
    else if (x < 903000)  op_realloc(g, t, slot, 1);
    else if (x < 933000)  op_kernel(g, t, t->ptsz ? t->primary : S_LEGACY, 0);
    else if (x < 934000)  op_copy(g, t, slot, 1, 1, 0);
    else if (x < 934020)  op_unrecorded_wait(g, t, slot);
    else                  op_kernel(g, t, slot, 0);
}

/* ------------------------------------------------------------ setup */

static void setup(gen *g, const char *cmdline)
{
    g->act = malloc(ACT_BUF_CAP);
    if (!g->act)
        die("malloc", ENOMEM);
    g->next_dev_ptr = 0x7f2a00000000ull;

    static const struct { uint64_t handle; uint32_t id; uint32_t kind; } layout[NSTREAMS] = {
        [S_LEGACY]     = { 0, LEGACY_STREAM_ID, SS_STREAM_LEGACY_NULL },
        [S_BLOCK1]     = { 0x55aa00010000ull, 13, SS_STREAM_BLOCKING },
        [S_BLOCK2]     = { 0x55aa00020000ull, 14, SS_STREAM_BLOCKING },
        [S_BLOCK3]     = { 0x55aa00030000ull, 15, SS_STREAM_BLOCKING },
        [S_NB1]        = { 0x55aa00040000ull, 16, SS_STREAM_NON_BLOCKING },
        [S_NB2]        = { 0x55aa00050000ull, 17, SS_STREAM_NON_BLOCKING },
        [S_NB3]        = { 0x55aa00060000ull, 18, SS_STREAM_NON_BLOCKING },
        [S_PER_THREAD] = { 0, 19, SS_STREAM_PER_THREAD },
    };
    for (int i = 0; i < NSTREAMS; i++) {
        g->streams[i].handle = layout[i].handle;
        g->streams[i].stream_id = layout[i].id;
        g->streams[i].kind = layout[i].kind;
    }
    /* thread -> (primary, secondary) streams: the main thread computes on a
     * blocking stream next to a non-blocking copy stream, the workers do the
     * same, the last one is a per-thread-default-stream build */
    static const int plan[NTHREADS_MAX][2] = {
        { S_BLOCK1, S_NB1 }, { S_BLOCK2, S_NB2 }, { S_BLOCK3, S_NB3 }, { S_PER_THREAD, S_NB3 },
        { S_NB1, S_BLOCK1 }, { S_NB2, S_BLOCK2 }, { S_NB3, S_BLOCK3 }, { S_NB2, S_BLOCK1 },
    };
    uint32_t event_no = 0;
    for (int i = 0; i < g->nthreads; i++) {
        gen_thread *t = &g->th[i];
        t->tid = 41000 + (uint32_t)i;
        t->now = TRACE_START_NS + 1000000 + (uint64_t)i * 137000;
        t->ptsz = i == 3;
        t->primary = plan[i][0];
        t->secondary = plan[i][1];
        t->buf = malloc(THREAD_BUF_CAP);
        if (!t->buf)
            die("malloc", ENOMEM);
        t->pinned_host = 0x7f1b00000000ull + ((uint64_t)i << 28);
        t->pageable_host = 0x5600c0000000ull + ((uint64_t)i << 28);
        for (int e = 0; e < NEVENTS; e++) {
            t->events[e].handle = 0x55bb00000000ull + 0x40ull * event_no;
            t->events[e].cupti_id = ++event_no;
        }
    }
    for (int e = 0; e < NUNRECORDED; e++) {
        g->unrecorded[e].handle = 0x55bb00000000ull + 0x40ull * event_no;
        g->unrecorded[e].cupti_id = ++event_no;
    }

    gen_thread *m = &g->th[0];
    emit_meta(g, m, "cmdline", cmdline);
    emit_meta(g, m, "exe", "/opt/syncsight-bench/train_app");
    emit_meta(g, m, "cupti", "ok");
    emit_meta(g, m, "interposer", "ok");
    emit_meta(g, m, "generator", "ss-gen-trace (synthetic trace, not a recording)");
    ss_clock_rec *c = emit(g, m, SS_REC_CLOCK, sizeof *c, 0);
    c->trace_ns = c->cupti_ns = TRACE_START_NS;
    static const char app[] = "/opt/syncsight-bench/train_app", rt[] = "/usr/local/cuda/lib64/libcudart.so.13";
    static const uint8_t build_id[20] = { 0x5e, 0x1f, 0x7a, 0x22, 0x90, 0x01, 0x33, 0xab, 0xcd, 0x42,
                                          0x17, 0x08, 0xfe, 0x61, 0x3c, 0x99, 0x10, 0x2d, 0x7b, 0x04 };
    const struct { const char *path; uint64_t base, size; } mods[2] = {
        { app, APP_BASE, 0x200000 }, { rt, CUDART_BASE, 0x800000 } };
    for (int i = 0; i < 2; i++) {
        uint32_t pl = (uint32_t)strlen(mods[i].path);
        ss_module_rec *mr = emit(g, m, SS_REC_MODULE, sizeof *mr, pl + sizeof build_id);
        mr->base = mods[i].base;
        mr->size = mods[i].size;
        mr->time = TRACE_START_NS;
        mr->path_len = pl;
        mr->build_id_len = sizeof build_id;
        memcpy((char *)mr + sizeof *mr, mods[i].path, pl);
        memcpy((char *)mr + sizeof *mr + pl, build_id, sizeof build_id);
    }
    ss_context_rec *ctx = emit(g, NULL, SS_REC_CONTEXT, sizeof *ctx, 0);
    ctx->context_id = CONTEXT_ID;
    ctx->device = DEVICE;
    ctx->null_stream_id = LEGACY_STREAM_ID;
    g->nvtx_domain_id = emit_string(g, NULL, "syncsight-bench");
    for (size_t i = 0; i < sizeof nvtx_names / sizeof nvtx_names[0]; i++)
        g->nvtx_name_id[i] = emit_string(g, NULL, nvtx_names[i]);

    for (int i = 0; i < g->nthreads; i++) {
        gen_thread *t = &g->th[i];
        char name[32];
        if (i == 0)
            snprintf(name, sizeof name, "python3");
        else
            snprintf(name, sizeof name, "pt_worker_%d", i);
        uint32_t len = (uint32_t)strlen(name);
        ss_thread_rec *tr = emit(g, t, SS_REC_THREAD, sizeof *tr, len);
        tr->tid = t->tid;
        tr->len = len;
        tr->pthread_self = 0x7f3b20000700ull + ((uint64_t)i << 23);
        memcpy((char *)tr + sizeof *tr, name, len);

        ss_api_rec *sd = emit_api(g, t, A_SET_DEVICE, 0, t->now + 1200, 0);
        sd->arg = DEVICE;
        ss_api_rec *mh = emit_api(g, t, A_MALLOC_HOST, 0, t->now + 250000, 0);
        mh->ptr = t->pinned_host;
        mh->bytes = 64u << 20;
        for (int b = 0; b < BUFS_PER_THREAD; b++) {
            buffer_state *bs = &t->bufs[b];
            bs->bytes = (uint64_t)rnd_range(g, 1, 64) << 20;
            bs->ptr = g->next_dev_ptr;
            bs->last_stream = -1;
            g->next_dev_ptr += bs->bytes + 0x200000;
            ss_api_rec *ma = emit_api(g, t, A_MALLOC, 0, t->now + rnd_range(g, 5000, 40000), 0);
            ma->ptr = bs->ptr;
            ma->bytes = bs->bytes;
        }
    }
    for (int e = 0; e < NUNRECORDED; e++) {
        ss_api_rec *ec = emit_api(g, m, A_EVENT_CREATE_FLAGS, 0, m->now + 1500, 0);
        ec->event = g->unrecorded[e].handle;
    }
    /* The created streams: an API record and the STREAM record that links
     * the handle to CUPTI's id.  The legacy and per-thread streams exist
     * without being created. */
    for (int i = 0; i < NSTREAMS; i++) {
        stream_state *s = &g->streams[i];
        uint32_t corr = 0;
        if (s->handle) {
            int nb = s->kind == SS_STREAM_NON_BLOCKING;
            int prio = i == S_NB3;
            ss_api_rec *r = emit_api(g, m, prio ? A_STREAM_CREATE_PRIO : A_STREAM_CREATE_FLAGS, s->handle,
                                     m->now + 4000, 0);
            r->arg = nb ? CUDA_STREAM_NON_BLOCKING : 0;
            r->arg2 = prio ? -1 : 0;
            corr = r->corr;
        }
        ss_stream_rec *sr = emit(g, i == S_PER_THREAD ? &g->th[3 % g->nthreads] : m, SS_REC_STREAM, sizeof *sr, 0);
        sr->handle = s->handle;
        sr->stream_id = s->stream_id;
        sr->context_id = CONTEXT_ID;
        sr->device = DEVICE;
        sr->kind = s->kind;
        sr->flags = s->kind == SS_STREAM_NON_BLOCKING ? CUDA_STREAM_NON_BLOCKING : 0;
        sr->priority = i == S_NB3 ? -1 : 0;
        sr->corr = corr;
    }
}

static void finish(gen *g)
{
    uint64_t end = 0;
    for (int i = 0; i < g->nthreads; i++) {
        gen_thread *t = &g->th[i];
        close_nvtx(g, t);
        end = max_u64(end, t->now);
    }
    end = max_u64(end, device_idle_at(g)) + 10000;
    gen_thread *m = &g->th[0];
    static const char msg[] = "process exited normally";
    ss_note_rec *n = emit(g, m, SS_REC_NOTE, sizeof *n, sizeof msg - 1);
    n->code = SS_NOTE_EXIT;
    n->len = sizeof msg - 1;
    n->value = 0;
    n->time = end;
    memcpy((char *)n + sizeof *n, msg, sizeof msg - 1);
    flush_buf(g, g->act, &g->act_used, &g->act_count);
    for (int i = 0; i < g->nthreads; i++)
        flush_buf(g, g->th[i].buf, &g->th[i].used, &g->th[i].count);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ss-gen-trace -n RECORDS -o FILE [--seed S] [--threads T]\n"
               "Write a synthetic syncsight trace of about RECORDS records (an existing FILE\n"
               "is replaced).  T host threads, 1..%d (default 4; thread 4 uses the per-thread\n"
               "default stream).\n", NTHREADS_MAX);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "records", required_argument, 0, 'n' }, { "output", required_argument, 0, 'o' },
        { "seed", required_argument, 0, 's' },    { "threads", required_argument, 0, 't' },
        { "help", no_argument, 0, 'h' },          { 0, 0, 0, 0 },
    };
    static gen g;   /* large: keep it off the stack */
    const char *out = NULL;
    uint64_t seed = 1;
    long threads = 4;
    int c;
    char *endp;
    while ((c = getopt_long(argc, argv, "n:o:s:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            errno = 0;
            g.target = strtoull(optarg, &endp, 10);
            if (errno || *endp || g.target == 0 || optarg[0] == '-') {
                fprintf(stderr, "ss-gen-trace: -n wants a positive record count, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'o': out = optarg; break;
        case 's':
            errno = 0;
            seed = strtoull(optarg, &endp, 0);
            if (errno || *endp) {
                fprintf(stderr, "ss-gen-trace: bad --seed '%s'\n", optarg);
                return 2;
            }
            break;
        case 't':
            threads = strtol(optarg, &endp, 10);
            if (*endp || threads < 1 || threads > NTHREADS_MAX) {
                fprintf(stderr, "ss-gen-trace: --threads wants 1..%d\n", NTHREADS_MAX);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!g.target || !out || optind != argc) {
        usage(stderr);
        return 2;
    }
    g.nthreads = (int)threads;
    g.rng = seed;
    g.incident_every = max_u64(g.target / 16, 150);
    g.next_incident_at = g.incident_every / 2;

    char cmdline[256];
    snprintf(cmdline, sizeof cmdline, "train_app --synthetic --seed %" PRIu64 " --records %" PRIu64, seed,
             g.target);
    /* The writer refuses to replace a file (O_EXCL, as the shim must); a
     * generator's output is meant to be regenerated. */
    if (unlink(out) != 0 && errno != ENOENT)
        die(out, errno);
    ss_file_header hdr;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    ss_file_header_init(&hdr, TRACE_START_NS, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
    hdr.flags = SS_FILE_F_INTERPOSER | SS_FILE_F_CUPTI;
    int rc = ss_writer_open(&g.w, out, &hdr);
    if (rc < 0)
        die(out, -rc);

    setup(&g, cmdline);
    while (g.records < g.target) {
        /* the thread whose clock is earliest acts next, so that calls are
         * simulated in host-time order across threads */
        gen_thread *t = &g.th[0];
        for (int i = 1; i < g.nthreads; i++)
            if (g.th[i].now < t->now)
                t = &g.th[i];
        op_step(&g, t);
    }
    finish(&g);
    rc = ss_writer_close(&g.w);
    if (rc < 0)
        die(out, -rc);
    fprintf(stderr, "ss-gen-trace: %s: %" PRIu64 " records (%" PRIu64 " kernels, %" PRIu64 " copies, %" PRIu64
            " syncs), %" PRIu64 " bytes, %.1f bytes/record\n",
            out, g.records, g.kernels, g.copies, g.syncs, g.w.bytes_written,
            (double)g.w.bytes_written / (double)g.records);
    free(g.act);
    for (int i = 0; i < g.nthreads; i++)
        free(g.th[i].buf);
    return 0;
}
