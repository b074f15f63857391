/*
 * missing-fence: two GPU operations on different streams touch the same
 * memory, at least one writes, and nothing orders them.
 *
 * Happens-before is tracked with vector clocks over streams (FastTrack
 * style: an access is remembered as (stream, epoch)):
 *   - program order on a stream: each submission ticks the stream's clock;
 *   - a submission carries the submitting host thread's clock;
 *   - cudaEventRecord snapshots the stream's clock, cudaStreamWaitEvent joins
 *     the snapshot of the latest record before the wait;
 *   - host syncs (stream, event, device, successful queries, and the implicit
 *     ones: synchronous copies/memsets, cudaFree/FreeHost/HostUnregister)
 *     join the waited clocks into the host thread's clock;
 *   - the legacy default stream is ordered with the device's blocking streams.
 * Memory: copies and memsets access exact ranges (dst written, src read);
 * kernels access their pointer-sized parameters that fall inside a known
 * allocation, treated as "may read or write" (the trace has no types), so
 * such pairs are reported as "may race".  Per allocation the accesses since
 * the last ordered write are kept (bounded), like CSAN's per-tensor state.
 *
 * Calls recorded during stream capture are skipped (they do not execute;
 * the graph's kernels run in order on the launch stream).
 *
 * Cost 0 ms: a race costs correctness, not time.  Severity error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rule.h"
#include "util.h"

enum { ACC_READ = 0, ACC_WRITE = 1, ACC_MAY = 2 };
#define SHADOW_MAX 64

typedef struct access { uint64_t lo, hi; int32_t stream; uint32_t epoch; int32_t call; uint8_t kind; } access;
typedef struct shadow { access *v; uint32_t n, cap; } shadow;

typedef struct fence_state {
    const ss_model *m;
    uint32_t A;                /* clock width = number of streams */
    uint32_t *svc;             /* A x A: stream clocks */
    uint32_t *tvc;             /* nthreads x A */
    uint32_t **evc;            /* per event: snapshot or NULL */
    shadow *sh;                /* per allocation */
    ss_findings *out;
} fence_state;

static void join(uint32_t *dst, const uint32_t *src, uint32_t A)
{
    for (uint32_t k = 0; k < A; k++) if (src[k] > dst[k]) dst[k] = src[k];
}

static uint32_t *SV(fence_state *f, int32_t s) { return f->svc + (size_t)s * f->A; }

static uint32_t *TV(fence_state *f, uint32_t tid)
{
    const ss_thread *t = ss_model_thread(f->m, tid);
    return f->tvc + (size_t)(t - f->m->threads) * f->A;
}

static int32_t stream_device(const ss_model *m, int32_t s) { return m->streams[s].device; }

/* The legacy stream's implicit ordering with blocking streams. */
static void legacy_joins(fence_state *f, int32_t s)
{
    const ss_model *m = f->m;
    uint32_t kind = m->streams[s].kind;
    if (kind != SS_STREAM_LEGACY_NULL && kind != SS_STREAM_BLOCKING) return;
    uint32_t want = kind == SS_STREAM_LEGACY_NULL ? SS_STREAM_BLOCKING : SS_STREAM_LEGACY_NULL;
    for (uint32_t k = 0; k < m->nstreams; k++)
        if ((int32_t)k != s && m->streams[k].kind == want && stream_device(m, (int32_t)k) == stream_device(m, s))
            join(SV(f, s), SV(f, (int32_t)k), f->A);
}

static void host_joins_stream(fence_state *f, uint32_t *tv, int32_t s)
{
    join(tv, SV(f, s), f->A);
    if (f->m->streams[s].kind == SS_STREAM_LEGACY_NULL)   /* it waited for the blocking streams too */
        for (uint32_t k = 0; k < f->m->nstreams; k++)
            if (f->m->streams[k].kind == SS_STREAM_BLOCKING &&
                stream_device(f->m, (int32_t)k) == stream_device(f->m, s))
                join(tv, SV(f, (int32_t)k), f->A);
}

static void host_joins_all(fence_state *f, uint32_t *tv)
{
    for (uint32_t k = 0; k < f->m->nstreams; k++) join(tv, SV(f, (int32_t)k), f->A);
}

static const char *verb(uint8_t kind, int past)
{
    if (kind == ACC_READ) return past ? "read" : "reads";
    if (kind == ACC_WRITE) return past ? "wrote" : "writes";
    return past ? "may have read or written" : "may read or write";
}

static void report(fence_state *f, int32_t alloc, const access *x, const access *e)
{
    const ss_model *m = f->m;
    const ss_alloc *a = &m->allocs[alloc];
    char lx[192], le[192], sx[96], se[96], msg[1400];
    ss_call_label(m, x->call, lx, sizeof lx);
    ss_call_label(m, e->call, le, sizeof le);
    const char *akind = a->kind == SS_MEM_PINNED ? "pinned host" : a->kind == SS_MEM_MANAGED ? "managed" : "device";
    int maybe = x->kind == ACC_MAY || e->kind == ACC_MAY;
    snprintf(msg, sizeof msg,
             "%s%s: %s on %s %s buffer 0x%llx (+%llu, %s allocation of %llu bytes made by %s) that %s on %s %s, "
             "and nothing orders the two (no cudaEventRecord + cudaStreamWaitEvent between the streams, no host "
             "synchronization in between)",
             maybe ? "possible data race" : "data race",
             maybe ? " (kernel arguments: the trace cannot tell reads from writes)" : "",
             lx, ss_stream_describe(m, m->calls[x->call].stream, sx, sizeof sx), verb(x->kind, 0),
             (unsigned long long)a->ptr, (unsigned long long)(x->lo - a->ptr), akind,
             (unsigned long long)a->size, a->alloc_call >= 0 ? ss_model_call_name(m, &m->calls[a->alloc_call]) : "?",
             le, ss_stream_describe(m, m->calls[e->call].stream, se, sizeof se), verb(e->kind, 1));
    ss_occurrence o = {
        .rule = "missing-fence",
        .severity = SS_SEV_ERROR,
        .fixed_severity = 1,
        .cost_ms = 0,
        .cost_basis = "0 ms: a correctness finding (results depend on timing), not a time cost",
        .message = msg,
        .fix = "Order the two streams: cudaEventRecord(ev, producer_stream) after the producer and "
               "cudaStreamWaitEvent(consumer_stream, ev) before the consumer (or synchronize the producer "
               "stream on the host first). In PyTorch: consumer.wait_stream(producer) before using the tensor "
               "on the consumer stream, and tensor.record_stream(consumer) when a tensor allocated on one "
               "stream is used on another.",
        .refs = { { x->call, m->calls[x->call].first_op, "second access" },
                  { e->call, m->calls[e->call].first_op, "first access" },
                  { a->alloc_call, -1, "allocation" } },
        .nrefs = a->alloc_call >= 0 ? 3 : 2,
        .alloc = alloc,
    };
    ss_findings_add(f->out, m, &o);
}

static void on_access(fence_state *f, int32_t alloc, access x)
{
    shadow *sh = &f->sh[alloc];
    const uint32_t *vc = SV(f, x.stream);
    for (uint32_t i = sh->n; i-- > 0; ) {   /* latest first: the most direct conflict */
        const access *e = &sh->v[i];
        if (e->stream == x.stream || e->lo >= x.hi || x.lo >= e->hi) continue;
        if (e->kind == ACC_READ && x.kind == ACC_READ) continue;
        if (vc[e->stream] >= e->epoch) continue;
        report(f, alloc, &x, e);
        break;   /* one report per access */
    }
    /* drop what this access supersedes */
    uint32_t w = 0;
    for (uint32_t i = 0; i < sh->n; i++) {
        const access *e = &sh->v[i];
        int ordered = e->stream == x.stream || vc[e->stream] >= e->epoch;
        int drop = x.kind != ACC_READ ? (ordered && e->lo >= x.lo && e->hi <= x.hi)
                                      : (e->stream == x.stream && e->kind == ACC_READ && e->lo == x.lo && e->hi == x.hi);
        if (!drop) sh->v[w++] = *e;
    }
    sh->n = w;
    if (sh->n == SHADOW_MAX) { memmove(sh->v, sh->v + 1, (SHADOW_MAX - 1) * sizeof(access)); sh->n--; }
    SS_PUSH(sh->v, sh->n, sh->cap, x);
}

static void range_access(fence_state *f, int32_t ci, uint64_t p, uint64_t bytes, uint8_t kind, uint32_t epoch)
{
    const ss_call *c = &f->m->calls[ci];
    if (!p) return;
    int32_t a = ss_model_alloc_at(f->m, p, c->rec->t_enter);
    if (a < 0) return;
    access x = { p, p + (bytes ? bytes : 1), c->stream, epoch, ci, kind };
    on_access(f, a, x);
}

static void submit(fence_state *f, int32_t ci, uint32_t *tv)
{
    const ss_model *m = f->m;
    const ss_call *c = &m->calls[ci];
    int32_t s = c->stream;
    uint32_t *sv = SV(f, s);
    join(sv, tv, f->A);
    legacy_joins(f, s);
    uint32_t epoch = ++sv[s];
    switch (c->cls) {
    case SS_API_COPY_SYNC: case SS_API_COPY_ASYNC:
        range_access(f, ci, c->rec->ptr2, c->rec->bytes, ACC_READ, epoch);
        range_access(f, ci, c->rec->ptr, c->rec->bytes, ACC_WRITE, epoch);
        break;
    case SS_API_MEMSET_SYNC: case SS_API_MEMSET_ASYNC:
        range_access(f, ci, c->rec->ptr, c->rec->bytes, ACC_WRITE, epoch);
        break;
    case SS_API_LAUNCH: {
        uint32_t n;
        const uint64_t *p = ss_call_params(c, &n);
        for (uint32_t i = 0; i < n; i++) {
            int dup = 0;
            for (uint32_t j = 0; j < i; j++) dup |= p[j] == p[i];
            if (!dup) range_access(f, ci, p[i], 1, ACC_MAY, epoch);
        }
        break;
    }
    default: break;
    }
}

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->nstreams || !m->nthreads) return;
    fence_state f = { m, m->nstreams, NULL, NULL, NULL, NULL, out };
    f.svc = ss_xcalloc((size_t)f.A * f.A, sizeof(uint32_t));
    f.tvc = ss_xcalloc((size_t)m->nthreads * f.A, sizeof(uint32_t));
    f.evc = ss_xcalloc(m->nevents ? m->nevents : 1, sizeof(uint32_t *));
    f.sh = ss_xcalloc(m->nallocs ? m->nallocs : 1, sizeof(shadow));
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (c->rec->ret != 0) continue;
        /* calls made while their stream is being captured do not run: they
         * become graph nodes, ordered by the graph and its launch stream */
        if (c->captured) continue;
        uint32_t *tv = TV(&f, c->rec->tid);
        int32_t s = c->stream;
        switch (c->cls) {
        case SS_API_LAUNCH: case SS_API_COPY_ASYNC: case SS_API_MEMSET_ASYNC: case SS_API_HOST_FUNC:
            if (s >= 0) submit(&f, (int32_t)i, tv);
            break;
        case SS_API_COPY_SYNC: case SS_API_MEMSET_SYNC:
            if (s >= 0) { submit(&f, (int32_t)i, tv); host_joins_stream(&f, tv, s); }
            break;
        case SS_API_EVENT_RECORD:
            if (s >= 0 && c->event >= 0) {
                join(SV(&f, s), tv, f.A);
                legacy_joins(&f, s);
                if (!f.evc[c->event]) f.evc[c->event] = ss_xcalloc(f.A, sizeof(uint32_t));
                memcpy(f.evc[c->event], SV(&f, s), f.A * sizeof(uint32_t));
            }
            break;
        case SS_API_STREAM_WAIT:
            if (s >= 0) {
                join(SV(&f, s), tv, f.A);
                if (c->event >= 0 && f.evc[c->event]) join(SV(&f, s), f.evc[c->event], f.A);
            }
            break;
        case SS_API_STREAM_SYNC: case SS_API_STREAM_QUERY:   /* a query returning success means done */
            if (s >= 0) host_joins_stream(&f, tv, s);
            break;
        case SS_API_EVENT_SYNC: case SS_API_EVENT_QUERY:
            if (c->event >= 0 && f.evc[c->event]) join(tv, f.evc[c->event], f.A);
            break;
        case SS_API_DEVICE_SYNC:
            host_joins_all(&f, tv);
            break;
        case SS_API_FREE:
            if (!c->is_async) host_joins_all(&f, tv);   /* cudaFree & co. synchronize the device */
            if (c->alloc >= 0) f.sh[c->alloc].n = 0;
            break;
        default: break;
        }
    }
    for (uint32_t i = 0; i < m->nevents; i++) free(f.evc[i]);
    for (uint32_t i = 0; i < m->nallocs; i++) free(f.sh[i].v);
    free(f.evc); free(f.sh); free(f.svc); free(f.tvc);
}

const ss_rule ss_rule_missing_fence = {
    "missing-fence", "unordered accesses to the same memory from different streams", run,
};
