/*
 * implicit-sync: the host blocked inside a call that is not an explicit
 * synchronization (cudaFree, a synchronous cudaMemcpy, cudaMemset on pinned
 * memory, cudaDeviceSetLimit ...), or inside a sync that a framework issued
 * for the user's code (PyTorch's .item(): see framework_sync()).  CUPTI writes no SYNCHRONIZATION record
 * for these: the evidence is the call's own duration compared with how long
 * the same API takes when nothing is in flight, plus GPU work in flight at
 * its start.
 *
 * To be sure the call waited for the GPU (and was not merely slow), its
 * release must coincide with the end of the work it waits for that was in
 * flight at its entry.
 *
 * A blocking copy (an async copy its caller synchronizes at once, model.h:
 * PyTorch's .cpu(), .to('cuda'), model.cuda()) is judged as the synchronous
 * copy it is: its copy half like a cudaMemcpy.
 *
 * Cost = host time blocked + GPU idle time after the call when nothing else
 * was queued (the device waited for the host to catch up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rule.h"
#include "util.h"
#include "symbolize.h"   /* ss_pyfile_is_user, ss_header_library_syncs_by_itself */
#include "callsite.h"
#include "syncsight/hash64.h"

#define MIN_BLOCK_NS 50000ull   /* 50 us: below this a call is not worth a finding */
#define RELEASE_AFTER_NS 20000ull   /* timestamps of the host and GPU clocks may differ a little */
#define RELEASE_SLACK_NS 200000ull  /* the call may return up to 200 us (or 10%) after the work ended */
/* A call CUDA does not document as waiting for the device, and that no run
 * has shown waiting (creating or destroying an event, destroying a stream,
 * the calls of no class), is a candidate only for a long block: for a block
 * shorter than the release slack the test that its return follows the end
 * of the work in flight says nothing (any kernel ending while it ran
 * passes), and a call slowed by anything else (the driver's lock, the
 * scheduler) while a kernel ended looked like a wait (Inductor's
 * cudaEventCreateWithFlags, 57 us, on the H200, 2026-11-29).  Stream
 * creation was measured waiting for queued work (seed003): not here. */
#define UNDOCUMENTED_MIN_BLOCK_NS 1000000ull   /* 1 ms */

static uint64_t min_block_ns(const ss_call *c)
{
    switch (c->cls) {
    case SS_API_EVENT_CREATE: case SS_API_EVENT_DESTROY: case SS_API_STREAM_DESTROY: case SS_API_OTHER:
        return UNDOCUMENTED_MIN_BLOCK_NS;
    default:
        return MIN_BLOCK_NS;
    }
}

/* framework_sync_at's C++ counterpart (below): a sync made inside a
 * header-only library whose algorithms synchronize by themselves
 * (ss_header_library_syncs_by_itself: Thrust), called straight from the user's line -- thrust::reduce returns its sum to
 * the host, so it synchronizes its stream, as .item() does.  Syncs inside
 * CUB or libcu++ are calls the program made by name (cub::SyncStream,
 * cuda::stream_ref::wait()): not implicit.  Thrust's own sync functions
 * (thrust::cuda_cub::synchronize(policy)) are asked for by name on the
 * user's line, which says so (see the words below). */
static int header_library_sync(const ss_model *m, const ss_call *c, const char **file, size_t *flen, uint32_t *line)
{
    char lib[96];
    int32_t idx = (int32_t)(c - m->calls);
    if (!ss_call_library(m, idx, lib, sizeof lib, NULL, 0) || !ss_header_library_syncs_by_itself(lib)) return 0;
    ss_site site;
    ss_call_site(m, idx, &site);
    return ss_site_source(&site, file, flen, line);
}

/* An explicit CUDA sync issued by a framework operation called straight
 * from the user's Python code: loss.item(), .cpu(), .tolist(), bool(t),
 * print(t), nonzero, boolean masks... (at::cuda::memcpy_and_sync and the
 * like).  The user did not ask to synchronize: for them it is implicit.  A sync
 * the user asked for (torch.cuda.synchronize(), stream/event.synchronize())
 * has torch's own Python wrapper as its innermost Python frame, or, where
 * the binding has none, a user line that says "synchronize" (or SyncStream,
 * wait(): the words below).  For C++, header_library_sync. */
static int framework_sync_at(const ss_model *m, const ss_call *c, ss_u64map *asked, uint64_t *line_key)
{
    const ss_pystack_rec *p = ss_model_pystack(m, c->rec->pystack_id);
    const char *fs = NULL;
    size_t flen = 0;
    uint32_t fline = 0;
    uint64_t key;
    if (!p || !p->depth) {
        if (!header_library_sync(m, c, &fs, &flen, &fline)) return 0;
        key = ss_xxh64(fs, flen, fline) | 1ull << 63;   /* apart from Python's keys (file id << 32) */
    } else {
        const ss_pyframe *fr = ss_rec_tail(&p->h, sizeof(*p));
        ss_string_ref file = ss_model_string(m, fr[0].file_id);
        if (!file.s || !ss_pyfile_is_user(file.s, file.len)) return 0;
        fs = file.s;
        flen = file.len;
        fline = fr[0].line;
        key = ((uint64_t)fr[0].file_id << 32) | fr[0].line;
    }
    /* A binding with no Python frame of its own (CuPy's Stream.synchronize,
     * a Cython or C extension) looks the same as .item(): the user's line
     * says which it was.  Read where the source is at hand, once per line. */
    if (line_key) *line_key = key;
    int64_t known = ss_u64map_get(asked, key, -1);
    if (known < 0) {
        char text[512];
        known = 0;
        if (ss_model_source_line(m, fs, flen, fline, text, sizeof text)) {
            for (char *t = text; *t; t++) *t = (char)(*t >= 'A' && *t <= 'Z' ? *t - 'A' + 'a' : *t);
            /* the program asked by name: synchronize(), cub::SyncStream,
             * a future's or a stream's wait() */
            known = strstr(text, "synchronize") || strstr(text, "syncstream") || strstr(text, "wait(");
        }
        ss_u64map_put(asked, key, known);
    }
    return !known;
}

static int framework_sync(const ss_model *m, const ss_call *c, ss_u64map *asked)
{
    return framework_sync_at(m, c, asked, NULL);
}

/* A host read of a GPU value issued by a framework for a user line (a sync
 * or a blocking copy, .item() / .cpu()): *key names the line. */
static int framework_read_key(const ss_model *m, const ss_call *c, ss_u64map *asked, uint64_t *key)
{
    if (c->blocking_copy != SS_BLOCKING_COPY_COPY && c->cls != SS_API_STREAM_SYNC && c->cls != SS_API_EVENT_SYNC &&
        c->cls != SS_API_DEVICE_SYNC)
        return 0;
    return framework_sync_at(m, c, asked, key);
}

/* A synchronous copy: cudaMemcpy & co., or the copy half of a blocking copy
 * (an async copy its caller synchronizes at once, model.h), whose host wait
 * is the copy's own and is judged the same way. */
static int sync_copy(const ss_call *c)
{
    return c->cls == SS_API_COPY_SYNC || c->blocking_copy == SS_BLOCKING_COPY_COPY;
}

static int candidate(const ss_model *m, const ss_call *c, ss_u64map *asked)
{
    if (c->blocking_copy == SS_BLOCKING_COPY_COPY) return 1;
    switch (c->cls) {
    case SS_API_STREAM_SYNC: case SS_API_EVENT_SYNC: case SS_API_DEVICE_SYNC:
        return framework_sync(m, c, asked);
    case SS_API_COPY_SYNC: case SS_API_MEMSET_SYNC: case SS_API_SET_LIMIT:
    case SS_API_OTHER: case SS_API_STREAM_CREATE: case SS_API_STREAM_DESTROY:
    case SS_API_EVENT_CREATE: case SS_API_EVENT_DESTROY:
        return 1;
    case SS_API_FREE: case SS_API_ALLOC:
        return !c->is_async;      /* the Async variants are stream-ordered */
    default:
        return 0;                 /* explicit syncs, queries, launches, async copies (own rule) */
    }
}

/* How long the call waited: for synchronous copies/memsets the time before
 * their own GPU operation started (the copy itself is the call's job). */
static uint64_t blocked_ns(const ss_model *m, const ss_call *c)
{
    uint64_t t0 = c->rec->t_enter, t1 = c->rec->t_exit;
    if (t1 <= t0) return 0;
    if ((sync_copy(c) || c->cls == SS_API_MEMSET_SYNC) && c->first_op >= 0) {
        uint64_t s = m->ops[c->first_op].start;
        if (s <= t0) return 0;
        return (s < t1 ? s : t1) - t0;
    }
    return t1 - t0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct dep_ctx {
    const ss_model *m;
    const ss_call *c;
    int32_t a_dst, a_src;
    int depends;             /* an in-flight op touches the call's memory */
    int32_t last;            /* the relevant in-flight op that ends last, -1 */
    uint32_t nwaited;        /* relevant ops in flight (running or queued) at entry */
} dep_ctx;

/* Which in-flight work a call waits for, if it waits: its own stream for
 * syncs and copies on a stream (plus, for the legacy stream, every blocking
 * stream), else the whole device (cudaFree & co. synchronize the device). */
static int waits_for(const ss_model *m, const ss_call *c, const ss_gpu_op *op)
{
    int32_t s = c->stream;
    int stream_scoped = sync_copy(c) || c->cls == SS_API_MEMSET_SYNC || c->cls == SS_API_STREAM_SYNC;
    if (!stream_scoped || s < 0) return 1;
    if (op->stream == s) return 1;
    /* a graph launch runs its nodes on internal streams, ordered as one unit
     * on the stream it was launched on */
    if (op->call >= 0 && m->calls[op->call].stream == s) return 1;
    return m->streams[s].kind == SS_STREAM_LEGACY_NULL && m->streams[op->stream].kind == SS_STREAM_BLOCKING &&
           ss_same_legacy_domain(m, s, op->stream);
}

static void visit(void *ctx, int32_t op)
{
    dep_ctx *d = ctx;
    const ss_gpu_op *o = &d->m->ops[op];
    if (!waits_for(d->m, d->c, o)) return;
    /* Work whose submitting call, on another thread, was still inside the
     * driver when this call began, and that had not started yet: when it was
     * handed to the GPU is unknown (a first launch loads its module for
     * milliseconds first, holding the driver's locks), so it may have been
     * submitted after this call began -- and this call may have waited for
     * that other call's lock rather than for the GPU.  Not evidence. */
    if (o->call >= 0 && o->start > d->c->rec->t_enter) {
        const ss_call *sub = &d->m->calls[o->call];
        if (sub->rec->tid != d->c->rec->tid && sub->rec->t_exit > d->c->rec->t_enter) return;
    }
    d->nwaited++;
    if (d->last < 0 || o->end > d->m->ops[d->last].end) d->last = op;
    if (ss_op_touches_alloc(d->m, op, d->a_dst) || ss_op_touches_alloc(d->m, op, d->a_src)) d->depends = 1;
}

/* cupy: a Python line's sync made by CuPy's compiled code (ss_call_framework) */
static const char *fix_for(const char *base, ss_api_class cls, int native, int cupy)
{
    int sync = cls == SS_API_STREAM_SYNC || cls == SS_API_EVENT_SYNC || cls == SS_API_DEVICE_SYNC;
    if (sync && native)
        return "This synchronization was made inside a header-only CUDA library's algorithm that this line calls: "
               "an algorithm that returns its result to the host (thrust::reduce, thrust::count, "
               "thrust::inner_product...) waits for its stream, and Thrust's thrust::cuda::par synchronizes after "
               "each algorithm. Keep results on the device (cub::DeviceReduce and the like write them to device "
               "memory; copy them with cudaMemcpyAsync into pinned memory and synchronize once, where the host "
               "needs them), and pass thrust::cuda::par_nosync.on(stream) where no synchronization is needed.";
    if (sync && cupy)
        return "This synchronization was issued by a CuPy operation called from this line: ndarray.get() and "
               "cupy.asnumpy() wait for their stream unless given blocking=False (copy into a pinned out= buffer, "
               "e.g. cupyx.empty_pinned, then synchronize the stream where the host reads it); float(x), int(x), "
               "bool(x), x.item() and print(x) of a device array read it back and wait. Keep values on the GPU and "
               "read them once, or less often.";
    if (sync)
        return "This synchronization was issued by a PyTorch operation called from this line (.item(), .cpu(), "
               ".tolist(), .numpy(), bool(tensor), print(tensor), nonzero(), boolean-mask indexing...): keep the "
               "value on the GPU (e.g. accumulate the loss in a tensor) and read it once, or less often; "
               "torch.cuda.set_sync_debug_mode('warn') lists every such call.";
    if (!strcmp(base, "cudaFreeHost") || !strcmp(base, "cudaHostUnregister") || !strcmp(base, "cuMemFreeHost") ||
        !strcmp(base, "cuMemHostUnregister"))
        return "Keep pinned buffers alive and reuse them (a pinned-buffer pool); free or unregister them "
               "once, at the end, after the work that uses them has finished.";
    if (cls == SS_API_FREE)
        return "Free with cudaFreeAsync(ptr, stream), which is stream-ordered and returns at once, or keep "
               "the buffer and reuse it (cudaMallocAsync + a memory pool; PyTorch's caching allocator does "
               "this for you). Do not free inside the loop while kernels run.";
    if (cls == SS_API_COPY_SYNC)
        return "Use cudaMemcpyAsync on a stream created with cudaStreamNonBlocking, with pinned host memory "
               "(cudaMallocHost), and synchronize only the stream or event whose result you need.";
    if (cls == SS_API_MEMSET_SYNC)
        return "Use cudaMemsetAsync on a stream; fill pinned host memory from the host (memset) instead of "
               "cudaMemset.";
    if (cls == SS_API_STREAM_CREATE)
        return "Create streams up front, before queuing GPU work (PyTorch: make every torch.cuda.Stream() at "
               "start-up and reuse it), not between launches: here stream creation waited for the work "
               "already queued on the device.";
    if (cls == SS_API_SET_LIMIT)
        return "Call cudaDeviceSetLimit once at start-up, before launching work, not in the loop: "
               "changing a limit waits for the whole device.";
    if (cls == SS_API_ALLOC)
        return "Allocate once up front and reuse the memory, or use cudaMallocAsync with a memory pool "
               "(stream-ordered allocation does not wait for the device).";
    return "Move this call out of the hot path (do it once at start-up or after a point where the host "
           "waits anyway): it waited for work already queued on the device.";
}

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->has_gpu) return;   /* the evidence is GPU work in flight */
    ss_u64map asked = { 0 };   /* (file id, line) -> 1: the user's line asks to synchronize */
    /* median duration per API name when nothing was in flight */
    uint64_t **unblocked = ss_xcalloc(m->napi_names, sizeof(uint64_t *));
    uint32_t *nun = ss_xcalloc(m->napi_names, sizeof(uint32_t)), *cap = ss_xcalloc(m->napi_names, sizeof(uint32_t));
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (!candidate(m, c, &asked)) continue;
        int32_t dev = ss_model_call_device(m, c);
        if (ss_model_busy_at(m, dev, c->rec->t_enter)) continue;
        uint64_t d = c->rec->t_exit > c->rec->t_enter ? c->rec->t_exit - c->rec->t_enter : 0;
        SS_PUSH(unblocked[c->name_idx], nun[c->name_idx], cap[c->name_idx], d);
    }
    uint64_t *median = ss_xcalloc(m->napi_names, sizeof(uint64_t));
    uint8_t *has_median = ss_xcalloc(m->napi_names, 1);
    for (uint32_t k = 0; k < m->napi_names; k++) {
        if (!nun[k]) continue;
        has_median[k] = 1;
        ss_qsort(unblocked[k], nun[k], sizeof(uint64_t), cmp_u64);
        median[k] = unblocked[k][nun[k] / 2];
        free(unblocked[k]);
    }
    free(unblocked); free(nun); free(cap);

    /* A value read on the host from a user line in a loop (.item() every
     * step): the fix reads it once, or less often -- the host still waits
     * for it the last time.  Per user line, its reads and the last one. */
    ss_u64map last_read = { 0 }, nreads = { 0 };
    for (uint32_t i = 0; i < m->ncalls; i++) {
        uint64_t key;
        if (framework_read_key(m, &m->calls[i], &asked, &key)) {
            ss_u64map_put(&last_read, key, (int64_t)i);
            ss_u64map_put(&nreads, key, ss_u64map_get(&nreads, key, 0) + 1);
        }
    }

    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (!candidate(m, c, &asked)) continue;
        uint64_t dur = c->rec->t_exit > c->rec->t_enter ? c->rec->t_exit - c->rec->t_enter : 0;
        uint64_t threshold = 3 * median[c->name_idx], min_block = min_block_ns(c);
        if (threshold < min_block) threshold = min_block;
        if (dur <= threshold) continue;
        int32_t dev = ss_model_call_device(m, c);
        if (!ss_model_busy_at(m, dev, c->rec->t_enter)) continue;
        uint64_t blocked = blocked_ns(m, c);
        if (blocked < min_block) continue;

        dep_ctx d = { m, c, -1, -1, 0, -1, 0 };
        /* a blocking copy a framework made for the user's line (.cpu(),
         * .to('cuda')) did not ask to wait, whatever the in-flight work
         * touches: like the framework syncs of .item() */
        int framework_copy = c->blocking_copy == SS_BLOCKING_COPY_COPY && framework_sync(m, c, &asked);
        if ((sync_copy(c) || c->cls == SS_API_MEMSET_SYNC) && !framework_copy) {
            /* a synchronous copy of a buffer that in-flight work produces or
             * uses had to wait: that wait is the program's intent */
            d.a_dst = c->rec->ptr ? ss_model_alloc_at(m, c->rec->ptr, c->rec->t_enter) : -1;
            d.a_src = c->rec->ptr2 ? ss_model_alloc_at(m, c->rec->ptr2, c->rec->t_enter) : -1;
        }
        ss_inflight_ops(m, dev, c->rec->t_enter, visit, &d);
        if (d.depends || d.last < 0) continue;
        /* A call that waited for the GPU is released when the work it waits
         * for ends: its return (for a synchronous copy, the start of its own
         * copy) follows the end of the last such op in flight at its entry.
         * A call that is merely slow (pinning a large buffer, creating a
         * context) shows no such edge. */
        uint64_t release = c->rec->t_enter + blocked;
        uint64_t expected = m->ops[d.last].end;
        uint64_t slack = RELEASE_SLACK_NS > blocked / 10 ? RELEASE_SLACK_NS : blocked / 10;
        if (expected > release + RELEASE_AFTER_NS || expected + slack < release) continue;

        /* made by a header library for a C++ line (no Python stack), not by a
         * framework for a Python one */
        int native = !ss_model_pystack(m, c->rec->pystack_id);
        /* which framework's operation it was, from the native stack: the
         * examples and the fix are that framework's */
        char fw[32] = "";
        int cupy = !native && ss_call_framework(m, (int32_t)i, fw, sizeof fw) && !strcmp(fw, "CuPy");
        uint64_t idle = 0;
        if (!ss_model_busy_at(m, dev, c->rec->t_exit)) {
            uint64_t next = ss_model_next_start(m, dev, c->rec->t_exit);
            if (next != UINT64_MAX) idle = next - c->rec->t_exit;
        }
        char base[128], msg[1024], basis[256], lbl[192], sd[96], idle_ref[96], what[320], waited[320];
        ss_api_base_name(ss_model_call_name(m, c), base, sizeof base);
        ss_op_label(m, d.last, lbl, sizeof lbl);
        if (has_median[c->name_idx])
            snprintf(idle_ref, sizeof idle_ref, "it takes %.3f ms when the device is idle", ss_ms(median[c->name_idx]));
        else
            snprintf(idle_ref, sizeof idle_ref, "no call of it on an idle device to compare with");
        /* what the call is, in the user's terms */
        if (c->blocking_copy == SS_BLOCKING_COPY_COPY)
            snprintf(what, sizeof what, "%s on %s, synchronized at once by its caller (a blocking copy%s)",
                     ss_model_call_name(m, c), ss_stream_describe(m, c->stream, sd, sizeof sd),
                     !framework_copy ? ""
                     : native        ? ", made by the library for your line, not asked for by your code"
                     : cupy          ? ", issued by a CuPy operation on your line: ndarray.get(), cupy.asnumpy()..."
                                     : ", issued by a framework operation on your line: .cpu(), .to(), .item()...");
        else if (c->cls == SS_API_STREAM_CREATE)
            snprintf(what, sizeof what, "%s (creating %s)", ss_model_call_name(m, c),
                     c->stream >= 0 ? ss_stream_describe(m, c->stream, sd, sizeof sd) : "a stream");
        else if (c->cls == SS_API_STREAM_SYNC || c->cls == SS_API_EVENT_SYNC || c->cls == SS_API_DEVICE_SYNC)
            snprintf(what, sizeof what, "%s%s%s%s", ss_model_call_name(m, c), c->stream >= 0 ? " on " : "",
                     c->stream >= 0 ? ss_stream_describe(m, c->stream, sd, sizeof sd) : "",
                     native ? " (made by the library for your line, not asked for by your code)"
                     : cupy ? ", issued by a CuPy operation on your line (ndarray.get(), cupy.asnumpy(), float(x)...)"
                            : ", issued by a framework operation on your line (.item(), .cpu(), print(tensor)...)");
        else
            snprintf(what, sizeof what, "%s%s%s", ss_model_call_name(m, c), c->stream >= 0 ? " on " : "",
                     c->stream >= 0 ? ss_stream_describe(m, c->stream, sd, sizeof sd) : "");
        snprintf(waited, sizeof waited, "%u GPU operation%s queued or running; the last to finish: %s on %s",
                 d.nwaited, d.nwaited == 1 ? "" : "s", lbl, ss_stream_describe(m, m->ops[d.last].stream, sd, sizeof sd));
        if (c->cls == SS_API_STREAM_CREATE)
            snprintf(msg, sizeof msg,
                     "stream creation waited for queued work: %s blocked the host for %.3f ms (%s) until the GPU "
                     "work already queued had finished (%s)%s",
                     what, ss_ms(blocked), idle_ref, waited,
                     idle ? "; afterwards the GPU sat idle until the host queued more work" : "");
        else
            snprintf(msg, sizeof msg,
                     "%s blocked the host for %.3f ms (%s) because it waited for GPU work in flight (%s)%s",
                     what, ss_ms(blocked), idle_ref, waited,
                     idle ? "; afterwards the GPU sat idle until the host queued more work" : "");
        snprintf(basis, sizeof basis,
                 "host time blocked in the call (%.3f ms) + GPU idle time after it while nothing was queued "
                 "(%.3f ms)", ss_ms(blocked), ss_ms(idle));
        ss_occurrence o = {
            .rule = "implicit-sync",
            .cost_ms = ss_ms(blocked + idle),
            .cost_basis = basis,
            .message = msg,
            .fix = fix_for(base,
                           framework_copy ? SS_API_STREAM_SYNC
                           : c->blocking_copy == SS_BLOCKING_COPY_COPY ? SS_API_COPY_SYNC
                                                                      : (ss_api_class)c->cls,
                           native, cupy),
            .refs = { { (int32_t)i, c->first_op, "blocking call" }, { d.last >= 0 ? m->ops[d.last].call : -1, d.last, "work it waited for" } },
            .nrefs = d.last >= 0 ? 2 : 1,
            .alloc = c->alloc,
            .relax = { { .kind = SS_RELAX_HOST_WAIT, .call = (int32_t)i } },
            .nrelax = 1,
        };
        uint64_t key;
        if (framework_read_key(m, c, &asked, &key) && ss_u64map_get(&nreads, key, 0) >= 2 &&
            ss_u64map_get(&last_read, key, -1) == (int64_t)i)
            o.nrelax = 0;   /* the one read the fix keeps */
        ss_findings_add(out, m, &o);
    }
    free(median);
    free(has_median);
    ss_u64map_free(&asked);
    ss_u64map_free(&last_read);
    ss_u64map_free(&nreads);
}

const ss_rule ss_rule_implicit_sync = {
    "implicit-sync", "host blocked in a call that is not an explicit synchronization", run,
    SS_SAMPLED_OWN_WAIT,
    0,   /* asks_memory */
    0,   /* asks_replay */
    1,   /* removes_causes */
};
