/*
 * incomplete-sync: a host synchronization (stream sync, event sync, a
 * successful stream/event query — not a device-wide sync) returned while GPU
 * work submitted before it was still unfinished and not ordered before the
 * thread's clock after it: that work was "left in flight".  The typical cause
 * is a port to per-thread default streams, where cudaEventRecord(stop, 0) +
 * cudaEventSynchronize(stop) waits for the calling thread's own stream only
 * (measured: the host read and freed the output while 760 copies and kernels
 * were still queued, and printed a wrong result).
 *
 * Leaving work in flight is how pipelines overlap, so that alone is no
 * finding.  It becomes one when the same thread afterwards
 *   - frees / unregisters, or synchronously copies, memory that a left-in-
 *     flight operation touches while it is still unordered and unfinished
 *     (error), or
 *   - never explicitly waits for a left-in-flight copy into host memory
 *     (warning: the host may read that buffer before the copy lands).
 *
 * Happens-before comes from the shared engine (hb.h), replayed call by call.
 * Cost 0 ms: a correctness finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rule.h"
#include "hb.h"
#include "kernel_access.h"
#include "util.h"

#define SET_STREAMS_MAX 64

/* What one synchronization left in flight. */
typedef struct left_set {
    int32_t call;              /* the synchronization S */
    int32_t waited_stream;     /* the stream S waited for (event: its record's), -1 */
    uint32_t nops, nstreams;
    uint64_t last_end;         /* end of the last left-in-flight op */
} left_set;

/* One left-in-flight op that the thread of S has not been ordered after yet. */
typedef struct pending {
    int32_t op;
    int32_t set;
    uint32_t tid;              /* thread of S */
} pending;

/* A left-in-flight copy into host memory, waiting for an explicit wait. */
typedef struct host_write {
    int32_t op;
    int32_t set;
    uint32_t tid;              /* thread of S */
    uint32_t submit_tid;       /* thread that submitted the copy */
    int32_t implicit_call;     /* first non-explicit wait that covered it, -1 */
    uint8_t dead;              /* resolved or reported */
} host_write;

/* Occurrences are added at the end, most severe first, so that the one
 * finding per synchronization site shows its worst case. */
typedef struct deferred { ss_occurrence o; char *msg; uint32_t seq; } deferred;

typedef struct state {
    const ss_model *m;
    ss_hb *h;
    struct deferred *occ; uint32_t nocc, capocc;
    left_set *sets; uint32_t nsets, capsets;
    pending *pend; uint32_t npend, cappend;
    host_write *hw; uint32_t nhw, caphw;
    uint8_t *left;             /* per op: already left in flight by some S */
    int32_t *last_record;      /* per event: latest successful record call, -1 */
    int32_t *last_wait;        /* per thread (m->threads' index): latest explicit wait, -1 */
    /* scratch while collecting one S */
    int32_t cur_set;
    int32_t cur_call;
    uint32_t cur_tid;
    const uint32_t *cur_vc;
    int32_t streams[SET_STREAMS_MAX];
} state;

static int is_sync(const ss_call *c)
{
    if (c->rec->ret != 0 || c->captured) return 0;
    switch (c->cls) {
    case SS_API_STREAM_SYNC: case SS_API_EVENT_SYNC: case SS_API_STREAM_QUERY: case SS_API_EVENT_QUERY:
        return 1;
    default:
        return 0;
    }
}

/* An explicit wait: what a program writes to wait for GPU work. */
static int is_explicit_wait(const ss_call *c)
{
    return is_sync(c) || (c->cls == SS_API_DEVICE_SYNC && c->rec->ret == 0 && !c->captured);
}

/* Calls after which the host owns the memory again: frees and unregisters
 * (not stream-ordered frees), and synchronous copies. */
static int is_release(const ss_call *c)
{
    if (c->rec->ret != 0 || c->captured) return 0;
    return (c->cls == SS_API_FREE && !c->is_async) || c->cls == SS_API_COPY_SYNC;
}

static int is_host_write(const ss_gpu_op *op)
{
    if (op->kind != SS_OP_MEMCPY) return 0;
    const ss_memcpy_rec *r = (const ss_memcpy_rec *)op->rec;
    return r->copy_kind == SS_COPY_DTOH || r->dst_kind == SS_MEM_PINNED || r->dst_kind == SS_MEM_PAGEABLE;
}

static int32_t sync_waited_stream(const state *st, const ss_call *c)
{
    if (c->cls == SS_API_EVENT_SYNC || c->cls == SS_API_EVENT_QUERY) {
        int32_t r = c->event >= 0 ? st->last_record[c->event] : -1;
        return r >= 0 ? st->m->calls[r].stream : -1;
    }
    return c->stream;
}

static int32_t sync_device(const state *st, const ss_call *c)
{
    int32_t s = sync_waited_stream(st, c);
    if (s >= 0 && st->m->streams[s].device >= 0) return st->m->streams[s].device;
    return ss_model_call_device(st->m, c);
}

static int wait_covers(const state *st, const ss_call *x, int32_t o);

/* Did the thread that submitted op o (another thread than S's) already wait
 * for it explicitly?  Calls are replayed in the order they began, so a wait
 * of that thread that began before S and returned after it — the writer's
 * own cudaStreamSynchronize, running beside S — is already applied when S
 * collects what it left in flight.  That thread, the one that reads the
 * buffer, waited for the copy: nothing for S to answer for. */
static int submitter_waited(const state *st, int32_t o)
{
    const ss_model *m = st->m;
    const ss_call *c = &m->calls[m->ops[o].call];
    const ss_thread *t = ss_model_thread(m, c->rec->tid);
    if (!t) return 0;
    int32_t x = st->last_wait[t - m->threads];
    if (x <= m->ops[o].call) return 0;
    const uint32_t *tv = ss_hb_thread_clock(st->h, c->rec->tid);
    return tv && ss_hb_op_before(st->h, o, tv) && wait_covers(st, &m->calls[x], o);
}

static void collect(void *ctx, int32_t o)
{
    state *st = ctx;
    const ss_model *m = st->m;
    const ss_gpu_op *op = &m->ops[o];
    const ss_call *s = &m->calls[st->cur_call];
    if (op->call < 0 || op->call >= st->cur_call || op->end <= s->rec->t_exit) return;
    if (!ss_hb_call_epoch(st->h, op->call)) return;              /* not a submission hb knows */
    if (ss_hb_op_before(st->h, o, st->cur_vc)) return;  /* S (or earlier waits) covered it */
    if (st->cur_set < 0) {
        left_set ls = { st->cur_call, sync_waited_stream(st, s), 0, 0, 0 };
        SS_PUSH(st->sets, st->nsets, st->capsets, ls);
        st->cur_set = (int32_t)st->nsets - 1;
    }
    left_set *ls = &st->sets[st->cur_set];
    ls->nops++;
    if (op->end > ls->last_end) ls->last_end = op->end;
    int seen = 0;
    for (uint32_t k = 0; k < ls->nstreams && k < SET_STREAMS_MAX; k++) seen |= st->streams[k] == op->stream;
    if (!seen) {
        if (ls->nstreams < SET_STREAMS_MAX) st->streams[ls->nstreams] = op->stream;
        ls->nstreams++;
    }
    if (st->left[o]) return;    /* already tracked for an earlier synchronization */
    st->left[o] = 1;
    pending p = { o, st->cur_set, st->cur_tid };
    SS_PUSH(st->pend, st->npend, st->cappend, p);
    if (is_host_write(op) && !(m->calls[op->call].rec->tid != st->cur_tid && submitter_waited(st, o))) {
        host_write w = { o, st->cur_set, st->cur_tid, m->calls[op->call].rec->tid, -1, 0 };
        SS_PUSH(st->hw, st->nhw, st->caphw, w);
    }
}

/* Drop pending ops of `tid` that finished by t or that tid is ordered after. */
static void prune(state *st, uint32_t tid, uint64_t t)
{
    const uint32_t *vc = ss_hb_thread_clock(st->h, tid);
    uint32_t w = 0;
    for (uint32_t i = 0; i < st->npend; i++) {
        const pending *p = &st->pend[i];
        int drop = p->tid == tid && (st->m->ops[p->op].end <= t ||
                                     (vc && ss_hb_op_before(st->h, p->op, vc)));
        if (!drop) st->pend[w++] = *p;
    }
    st->npend = w;
}

static void on_sync(state *st, int32_t ci)
{
    const ss_model *m = st->m;
    const ss_call *c = &m->calls[ci];
    st->cur_call = ci;
    st->cur_tid = c->rec->tid;
    st->cur_set = -1;
    st->cur_vc = ss_hb_thread_clock(st->h, c->rec->tid);
    if (!st->cur_vc) return;
    prune(st, c->rec->tid, c->rec->t_exit);
    ss_inflight_ops_of_context(m, sync_device(st, c), c->cls == SS_API_DEVICE_SYNC ? ss_model_call_context(m, c) : 0,
                               c->rec->t_exit, collect, st);
}

/* ---- memory a release call and a left-in-flight op share ---------------- */

typedef struct range { uint64_t lo, hi; uint8_t write; } range;   /* write: 0 read, 1 write, 2 may */

/* The release call's memory: a freed allocation (written: it goes away), or a
 * copy's dst (written) and src (read). */
static uint32_t release_ranges(const ss_model *m, const ss_call *f, range *r)
{
    uint32_t n = 0;
    const ss_api_rec *x = f->rec;
    if (f->cls == SS_API_FREE) {
        if (f->alloc >= 0) {
            uint64_t lo, hi;
            ss_call_released_range(m, f, &lo, &hi);
            r[n++] = (range){ lo, hi, 1 };
        } else if (x->ptr) {
            r[n++] = (range){ x->ptr, x->ptr + 1, 1 };
        }
    } else {
        uint64_t b = x->bytes ? x->bytes : 1;
        if (x->ptr) r[n++] = (range){ x->ptr, x->ptr + b, 1 };
        if (x->ptr2) r[n++] = (range){ x->ptr2, x->ptr2 + b, 0 };
    }
    return n;
}

/* Does op (a left-in-flight operation) touch memory of the release call in a
 * conflicting way (one of the two writes)?  Copies and memsets by their exact
 * ranges; kernels through each pointer argument, from it to the end of its
 * allocation (the trace has no sizes), read or written as the kernel's code
 * shows (kernel_access.h), else "may read or write".  *maybe: only a kernel's
 * possible write makes it a conflict. */
#define OP_RANGES_MAX 260
static int op_conflicts(const ss_model *m, int32_t o, const ss_call *f, int *maybe)
{
    const ss_gpu_op *op = &m->ops[o];
    *maybe = 0;
    if (op->call < 0) return 0;
    const ss_call *c = &m->calls[op->call];
    range fr[2];
    uint32_t nf = release_ranges(m, f, fr);
    if (!nf) return 0;
    range orr[OP_RANGES_MAX];
    uint32_t no = 0;
    switch (c->cls) {
    case SS_API_COPY_SYNC: case SS_API_COPY_ASYNC: {
        uint64_t b = c->rec->bytes ? c->rec->bytes : 1;
        if (c->rec->ptr) orr[no++] = (range){ c->rec->ptr, c->rec->ptr + b, 1 };
        if (c->rec->ptr2) orr[no++] = (range){ c->rec->ptr2, c->rec->ptr2 + b, 0 };
        break;
    }
    case SS_API_MEMSET_SYNC: case SS_API_MEMSET_ASYNC:
        if (c->rec->ptr) orr[no++] = (range){ c->rec->ptr, c->rec->ptr + (c->rec->bytes ? c->rec->bytes : 1), 1 };
        break;
    case SS_API_LAUNCH: {
        uint32_t np;
        const uint64_t *p = ss_call_params(c, &np);
        for (uint32_t i = 0; i < np && no < OP_RANGES_MAX; i++) {
            int32_t a = p[i] ? ss_model_alloc_at(m, p[i], c->rec->t_enter) : -1;
            if (a < 0) continue;
            /* what the kernel's code does with the argument, when known */
            ss_param_access acc = ss_kernel_param_access(m, c, i);
            if (acc == SS_ACCESS_NONE) continue;
            uint8_t w = acc == SS_ACCESS_READ ? 0 : acc == SS_ACCESS_UNKNOWN ? 2 : 1;
            /* from the pointer to the end of its allocation: what the kernel
             * may reach (rule_common.c's model); nothing below the pointer */
            const ss_alloc *al = &m->allocs[a];
            orr[no++] = (range){ p[i], al->ptr + (al->size ? al->size : 1), w };
        }
        break;
    }
    default:
        return 0;
    }
    int any = 0, sure = 0;
    for (uint32_t i = 0; i < no; i++)
        for (uint32_t j = 0; j < nf; j++) {
            if (orr[i].lo >= fr[j].hi || fr[j].lo >= orr[i].hi || (!orr[i].write && !fr[j].write)) continue;
            any = 1;
            sure |= fr[j].write || orr[i].write == 1;
        }
    *maybe = any && !sure;
    return any;
}

static void describe_sync(const state *st, const left_set *ls, char *buf, size_t len)
{
    const ss_model *m = st->m;
    const ss_call *s = &m->calls[ls->call];
    char sd[96];
    const char *name = ss_model_call_name(m, s);
    const char *q = s->cls == SS_API_STREAM_QUERY || s->cls == SS_API_EVENT_QUERY ? " (returning cudaSuccess)" : "";
    if (s->cls == SS_API_EVENT_SYNC || s->cls == SS_API_EVENT_QUERY) {
        if (ls->waited_stream >= 0)
            snprintf(buf, len, "%s%s on event 0x%llx waited only for %s up to the event's record", name, q,
                     (unsigned long long)s->rec->event, ss_stream_describe(m, ls->waited_stream, sd, sizeof sd));
        else
            snprintf(buf, len, "%s%s on event 0x%llx (not recorded yet: it waited for nothing)", name, q,
                     (unsigned long long)s->rec->event);
    } else {
        snprintf(buf, len, "%s%s waited only for %s", name, q, ss_stream_describe(m, s->stream, sd, sizeof sd));
    }
}

static void describe_left(const state *st, const left_set *ls, char *buf, size_t len)
{
    const ss_model *m = st->m;
    const ss_call *s = &m->calls[ls->call];
    snprintf(buf, len,
             "it returned with %u GPU operation%s on %u stream%s still in flight, submitted before it and not "
             "ordered before it (the last finished %.3f ms after it returned)",
             ls->nops, ls->nops == 1 ? "" : "s", ls->nstreams, ls->nstreams == 1 ? "" : "s",
             ss_ms(ls->last_end - s->rec->t_exit));
}

static const char *mem_kind_name(uint32_t k)
{
    return k == SS_MEM_PINNED ? "pinned host" : k == SS_MEM_MANAGED ? "managed" : "device";
}

static void describe_memory(const ss_model *m, const ss_call *f, char *buf, size_t len)
{
    if (f->cls == SS_API_FREE && f->alloc >= 0) {
        const ss_alloc *a = &m->allocs[f->alloc];
        snprintf(buf, len, "%s buffer 0x%llx (%llu bytes)", mem_kind_name(a->kind), (unsigned long long)a->ptr,
                 (unsigned long long)a->size);
    } else if (f->cls == SS_API_FREE) {
        snprintf(buf, len, "buffer 0x%llx", (unsigned long long)f->rec->ptr);
    } else {
        snprintf(buf, len, "0x%llx <- 0x%llx (%llu bytes)", (unsigned long long)f->rec->ptr,
                 (unsigned long long)f->rec->ptr2, (unsigned long long)f->rec->bytes);
    }
}

static void defer(state *st, const ss_occurrence *o)
{
    deferred d = { *o, ss_strdup_printf("%s", o->message), st->nocc };
    d.o.message = d.msg;
    SS_PUSH(st->occ, st->nocc, st->capocc, d);
}

static int cmp_deferred(const void *a, const void *b)
{
    const deferred *x = a, *y = b;
    if (x->o.severity != y->o.severity) return x->o.severity > y->o.severity ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char FIX[] =
    "Synchronize what the host depends on: cudaDeviceSynchronize(), or cudaStreamSynchronize() on each worker "
    "stream, or cudaEventRecord(ev_i, worker_i) on each worker stream + cudaStreamWaitEvent(waited_stream, ev_i) "
    "before recording the event you wait for. Under --default-stream per-thread (or with cudaStreamPerThread), "
    "stream 0 is the calling thread's own stream and orders nothing else: cudaEventRecord(stop, 0) + "
    "cudaEventSynchronize(stop) no longer waits for the other streams.";

/* How sure a release finding is.  A synchronous copy racing an operation is
 * a race on the GPU.  Freeing or unregistering host-visible memory (pinned,
 * registered, managed) means the host was done with a buffer the GPU still
 * used: what it read or wrote there before is suspect, even though the call
 * itself waits for the device.  Freeing device memory is safe by itself
 * when the call waits for the device first (cudaFree) and the host cannot
 * touch it directly: only a sign that the program believed the work was
 * finished.  A release that does not wait (cuMemUnmap: measured) takes the
 * memory away from the GPU work still using it: an error. */
static ss_severity release_severity(const ss_model *m, const ss_call *f, int maybe)
{
    if (maybe) return SS_SEV_WARNING;
    if (f->cls == SS_API_FREE && ss_call_host_wait(m, f) == SS_WAIT_DEVICE &&
        (f->alloc < 0 || m->allocs[f->alloc].kind == SS_MEM_DEVICE))
        return SS_SEV_WARNING;
    return SS_SEV_ERROR;
}

static void report_release(state *st, int32_t fi, int32_t set, int32_t o, uint32_t nconf, int maybe)
{
    const ss_model *m = st->m;
    const left_set *ls = &st->sets[set];
    const ss_call *f = &m->calls[fi];
    const ss_gpu_op *op = &m->ops[o];
    int unseen = !maybe && ss_after_context_event(m, f);
    if (unseen) maybe = 1;
    ss_severity sev = release_severity(m, f, maybe);
    char ws[320], lf[256], mem[160], ol[192], sd[96], why[320], msg[1600];
    describe_sync(st, ls, ws, sizeof ws);
    describe_left(st, ls, lf, sizeof lf);
    describe_memory(m, f, mem, sizeof mem);
    ss_op_label(m, o, ol, sizeof ol);
    if (unseen)
        snprintf(why, sizeof why, "but " SS_CONTEXT_EVENT_WHY);
    else if (f->cls == SS_API_COPY_SYNC)
        snprintf(why, sizeof why, "nothing orders the copy after it: the copy races it");
    else if (sev == SS_SEV_ERROR)
        snprintf(why, sizeof why, "the host was done with a buffer the GPU still used (the call's own wait for "
                 "the device comes too late for what the host read or wrote there before it)");
    else
        snprintf(why, sizeof why, "%s waits for the device before freeing, so the free itself is safe, but the "
                 "program treated this work as finished", ss_model_call_name(m, f));
    snprintf(msg, sizeof msg,
             "%s%s; %s; then %s %s %s, which %s on %s %s (unordered, running or queued until %.3f ms after "
             "that call began; %u left-in-flight operation%s touch%s it): %s",
             maybe ? "possible use of memory the GPU may still use: " : "", ws, lf, ss_model_call_name(m, f),
             f->cls == SS_API_FREE ? "released" : "copied", mem, ol,
             ss_stream_describe(m, op->stream, sd, sizeof sd), maybe ? "may still read or write" : "still uses",
             ss_ms(op->end - f->rec->t_enter), nconf, nconf == 1 ? "" : "s", nconf == 1 ? "es" : "", why);
    ss_occurrence oc = {
        .rule = "incomplete-sync",
        .severity = sev,
        .fixed_severity = 1,
        .cost_ms = 0,
        .cost_basis = "0 ms: a correctness finding (the host relied on GPU work that was not finished), not a "
                      "time cost",
        .message = msg,
        .fix = FIX,
        .refs = { { ls->call, -1, "incomplete synchronization" }, { op->call, o, "left in flight" },
                  { fi, f->first_op, f->cls == SS_API_FREE ? "freeing call" : "synchronous copy" } },
        .nrefs = 3,
        .alloc = f->cls == SS_API_FREE ? f->alloc : -1,
    };
    defer(st, &oc);
}

/* Release call fi: left-in-flight ops of its thread that touch its memory,
 * unfinished at its start and not ordered before vc (a free: the thread's
 * clock before it; a synchronous copy: its own stream's clock after its
 * submission, since the copy runs after what its stream is ordered after —
 * the legacy stream's barrier included). */
static void check_release(state *st, int32_t fi, const uint32_t *vc)
{
    const ss_model *m = st->m;
    const ss_call *f = &m->calls[fi];
    uint32_t tid = f->rec->tid;
    prune(st, tid, f->rec->t_enter);
    for (;;) {
        int32_t first = -1, first_set = -1;
        int first_maybe = 1;
        uint32_t nconf = 0;
        for (uint32_t i = 0; i < st->npend; i++) {
            const pending *p = &st->pend[i];
            if (p->tid != tid || (first_set >= 0 && p->set != first_set)) continue;
            if (vc && ss_hb_op_before(st->h, p->op, vc)) continue;
            int maybe;
            if (!op_conflicts(m, p->op, f, &maybe)) continue;
            /* name an exact conflict (a copy) rather than a kernel argument */
            if (first < 0 || (first_maybe && !maybe)) { first = p->op; first_set = p->set; first_maybe = maybe; }
            nconf++;
        }
        if (first < 0) return;
        report_release(st, fi, first_set, first, nconf, first_maybe);
        /* reported: no later report (or host-read warning) for these ops */
        uint32_t w = 0;
        for (uint32_t i = 0; i < st->npend; i++) {
            const pending *p = &st->pend[i];
            int maybe;
            if (p->tid == tid && p->set == first_set && !(vc && ss_hb_op_before(st->h, p->op, vc)) &&
                op_conflicts(m, p->op, f, &maybe)) {
                for (uint32_t k = 0; k < st->nhw; k++) if (st->hw[k].op == p->op) st->hw[k].dead = 1;
                continue;
            }
            st->pend[w++] = *p;
        }
        st->npend = w;
    }
}

/* ---- copies into host memory nobody waited for -------------------------- */

/* Does explicit wait call x, by what it waits for itself (not by what its
 * thread learnt earlier), cover op o? */
static int wait_covers(const state *st, const ss_call *x, int32_t o)
{
    const ss_model *m = st->m;
    const ss_gpu_op *op = &m->ops[o];
    int32_t os = m->calls[op->call].stream;
    switch (x->cls) {
    case SS_API_DEVICE_SYNC:
        return ss_model_call_device(m, x) == ss_op_device(op) && ss_stream_in_context(m, op->stream, ss_model_call_context(m, x));
    case SS_API_EVENT_SYNC: case SS_API_EVENT_QUERY: {
        const uint32_t *vc = x->event >= 0 ? ss_hb_event_clock(st->h, x->event) : NULL;
        return vc && ss_hb_op_before(st->h, o, vc);
    }
    default: {   /* stream sync / successful stream query */
        if (x->stream < 0 || os < 0) return 0;
        if (ss_hb_op_before(st->h, o, ss_hb_stream_clock(st->h, x->stream))) return 1;
        /* a host wait for the legacy stream also waits for the device's
         * blocking and per-thread default streams */
        const ss_stream *ws = &m->streams[x->stream], *ps = &m->streams[os];
        return ws->kind == SS_STREAM_LEGACY_NULL && ws->ldomain == ps->ldomain &&
               (ps->kind == SS_STREAM_BLOCKING || ps->kind == SS_STREAM_PER_THREAD);
    }
    }
}

static void report_host_write(state *st, const host_write *w)
{
    const ss_model *m = st->m;
    const left_set *ls = &st->sets[w->set];
    const ss_gpu_op *op = &m->ops[w->op];
    const ss_call *s = &m->calls[ls->call];
    char ws[320], lf[256], ol[192], sd[96], tail[320], msg[1400];
    describe_sync(st, ls, ws, sizeof ws);
    describe_left(st, ls, lf, sizeof lf);
    ss_op_label(m, w->op, ol, sizeof ol);
    const ss_call *cc = &m->calls[op->call];
    if (w->implicit_call >= 0)
        snprintf(tail, sizeof tail, "only the implicit wait of %s, %.3f ms later, covered it",
                 ss_model_call_name(m, &m->calls[w->implicit_call]),
                 ss_ms(m->calls[w->implicit_call].rec->t_enter - s->rec->t_exit));
    else
        snprintf(tail, sizeof tail, "no later synchronization of this thread waits for it");
    snprintf(msg, sizeof msg,
             "possible early read of host memory: %s; %s; among them %s on %s writes host memory 0x%llx (%llu "
             "bytes, it ended %.3f ms after the synchronization returned), and %s: the host may have read that "
             "buffer before the copy landed",
             ws, lf, ol, ss_stream_describe(m, op->stream, sd, sizeof sd), (unsigned long long)cc->rec->ptr,
             (unsigned long long)cc->rec->bytes,
             ss_ms(op->end > s->rec->t_exit ? op->end - s->rec->t_exit : 0), tail);
    ss_occurrence oc = {
        .rule = "incomplete-sync",
        .severity = SS_SEV_WARNING,
        .fixed_severity = 1,
        .cost_ms = 0,
        .cost_basis = "0 ms: a correctness finding (the host may read data not yet copied), not a time cost",
        .message = msg,
        .fix = FIX,
        .refs = { { ls->call, -1, "incomplete synchronization" }, { op->call, w->op, "left in flight" },
                  { w->implicit_call, -1, "implicit wait" } },
        .nrefs = w->implicit_call >= 0 ? 3 : 2,
        .alloc = ss_model_alloc_at(m, cc->rec->ptr, cc->rec->t_enter),
    };
    defer(st, &oc);
}

/* After call xi ran: resolve host writes it waited for. */
static void check_host_writes(state *st, int32_t xi)
{
    const ss_model *m = st->m;
    const ss_call *x = &m->calls[xi];
    uint32_t tid = x->rec->tid;
    int explicit_wait = is_explicit_wait(x);
    if (!explicit_wait && ss_call_host_wait(m, x) == SS_WAIT_NONE) return;
    const uint32_t *tv = ss_hb_thread_clock(st->h, tid);
    for (uint32_t i = 0; i < st->nhw; i++) {
        host_write *w = &st->hw[i];
        if (w->dead || (w->tid != tid && w->submit_tid != tid)) continue;
        if (explicit_wait) {
            /* a targeted wait (stream/event) after an implicit one still shows
             * the program meant to wait for this copy; a device-wide sync
             * after it is no such sign */
            if (w->implicit_call >= 0 && x->cls == SS_API_DEVICE_SYNC) continue;
            if (wait_covers(st, x, w->op)) w->dead = 1;
        } else if (w->implicit_call < 0 && tv && ss_hb_op_before(st->h, w->op, tv)) {
            w->implicit_call = xi;
        }
    }
    /* compact */
    uint32_t n = 0;
    for (uint32_t i = 0; i < st->nhw; i++) if (!st->hw[i].dead) st->hw[n++] = st->hw[i];
    st->nhw = n;
}

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->ncalls || !m->nops || !m->nstreams) return;   /* needs the GPU timeline */
    state st;
    memset(&st, 0, sizeof st);
    st.m = m;
    st.h = ss_hb_new(m);
    st.left = ss_xcalloc(m->nops, 1);
    st.last_record = ss_xcalloc(m->nevents ? m->nevents : 1, sizeof(int32_t));
    for (uint32_t i = 0; i < m->nevents; i++) st.last_record[i] = -1;
    st.last_wait = ss_xcalloc(m->nthreads ? m->nthreads : 1, sizeof(int32_t));
    for (uint32_t i = 0; i < m->nthreads; i++) st.last_wait[i] = -1;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (is_release(c) && c->cls == SS_API_FREE && st.npend)
            check_release(&st, (int32_t)i, ss_hb_thread_clock(st.h, c->rec->tid));
        ss_hb_apply(st.h, (int32_t)i);
        if (is_release(c) && c->cls == SS_API_COPY_SYNC && st.npend)
            check_release(&st, (int32_t)i, c->stream >= 0 ? ss_hb_stream_clock(st.h, c->stream) : NULL);
        if (c->event >= 0 && ss_call_records_event(c) && c->rec->ret == 0 && !c->captured)
            st.last_record[c->event] = (int32_t)i;
        if (st.nhw) check_host_writes(&st, (int32_t)i);
        if (is_explicit_wait(c)) {
            const ss_thread *t = ss_model_thread(m, c->rec->tid);
            if (t) st.last_wait[t - m->threads] = (int32_t)i;
        }
        if (is_sync(c)) on_sync(&st, (int32_t)i);
    }
    /* "No later synchronization waits for it" needs the rest of the run: an
     * incomplete trace (model.h, span_end) may have lost that wait. */
    for (uint32_t i = 0; i < st.nhw; i++)
        if (!st.hw[i].dead && !(m->incomplete_why && st.hw[i].implicit_call < 0)) report_host_write(&st, &st.hw[i]);
    if (st.nocc > 1) qsort(st.occ, st.nocc, sizeof *st.occ, cmp_deferred);
    for (uint32_t i = 0; i < st.nocc; i++) {
        ss_findings_add(out, m, &st.occ[i].o);
        free(st.occ[i].msg);
    }
    free(st.occ);
    free(st.sets); free(st.pend); free(st.hw); free(st.left); free(st.last_record); free(st.last_wait);
    ss_hb_free(st.h);
}

const ss_rule ss_rule_incomplete_sync = {
    "incomplete-sync", "a synchronization that left GPU work the host then relied on in flight", run,
    SS_SAMPLED_OWN_WAIT,
    0,   /* asks_memory */
    0,   /* asks_replay */
    0,   /* removes_causes */
};
