/*
 * device-sync-overuse: cudaDeviceSynchronize (or a sync of the legacy
 * stream, which waits for every blocking stream too) where a stream or event
 * sync would have served.
 *
 * What the host needed from the sync is read from its next calls (up to and
 * including its next synchronizing call): the default stream for synchronous
 * copies/memsets (for the legacy stream, with it every blocking stream), streams whose in-flight work shares a buffer with a
 * call made next (the device sync acted as a cross-stream fence), and streams
 * whose finished work the host can read directly (copies to host memory,
 * kernels or memsets on pinned or managed memory).  Submitting more work to a
 * stream does not need that stream's earlier work to be finished.  The
 * cost is how much longer the sync took than the completion of that work:
 * sync exit - max(end of the last op before the sync on the streams used).
 * A sync after which the thread makes no more calls is assumed to be needed
 * for everything (the program reads its results).  When a later call waits
 * for the whole device by itself (cudaFree, cudaFreeHost, cudaHostUnregister),
 * a narrower sync saves nothing beyond the host time between the two: the
 * cost is at most that.
 *
 * Severity: a sync whose call site runs once (a benchmark's
 * torch.cuda.synchronize() before reading a host timer, a one-time
 * hand-over) is `info` unless its waste is large (LARGE_ONE_OFF_*); a site
 * that syncs repeatedly (a loop) is ranked by cost like every finding.
 *
 * Info findings: syncs with nothing in flight, reported only when the same
 * call site does it repeatedly (a loop), cost = their duration.
 *
 * The sync of a blocking copy (a copy and its stream's sync issued back to
 * back by one caller, model.h) is part of a synchronous copy, not a sync the
 * program chose: never judged here.
 *
 * Nor is a sync while stream work that CUPTI does not record may be in flight
 * on its device (cudaMemPrefetchAsync and the other managed-memory calls,
 * stream memory operations, host functions): what it waited for, and until
 * when, is not in the trace, so neither "nothing in flight" nor "longer than
 * needed" can be shown.  Such work counts as ended once something proves it: a later
 * operation of its stream that ended, or a host wait on its stream or device
 * entered after it that returned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rule.h"
#include "util.h"

/* Less than this is the host's and the GPU's own jitter, not a saving: on
 * the H200 first_launch_jit_fixed's sync came 20-30 us before a cudaFree
 * that waits for the device anyway, run to run, and a torch.cuda.synchronize
 * of 2.9 ms waited 21 us for an add kernel the next call would have waited
 * for on its own stream. */
#define MIN_EXCESS_NS 50000ull   /* 50 us */
#define WINDOW_CALLS 64
#define FENCE_CHECK_LIMIT 256
/* A one-off sync is worth a warning only when it wasted this much: at least
 * 10% of the traced wall time and at least 10 ms. */
#define LARGE_ONE_OFF_WALL_FRACTION 0.10
#define LARGE_ONE_OFF_MIN_MS 10.0

typedef struct scan {
    const ss_model *m;
    uint8_t *inflight;        /* per stream: had work in flight at the sync */
    uint64_t *inflight_end;   /* per stream: max end of that work */
    int32_t *inflight_last;   /* per stream: op that ended last */
    uint8_t *host_reads;      /* per stream: in-flight work writes host-visible memory */
    int32_t *list; uint32_t nlist, caplist;   /* in-flight ops */
    int32_t ldomain;          /* a legacy-stream sync where each context has its own legacy
                                 stream: only that domain's streams (-2: the whole context) */
} scan;

static int host_visible_write(const ss_model *m, int32_t oi)
{
    const ss_gpu_op *op = &m->ops[oi];
    if (op->kind == SS_OP_MEMCPY) {
        const ss_memcpy_rec *mc = (const ss_memcpy_rec *)op->rec;
        return mc->copy_kind == SS_COPY_DTOH || mc->copy_kind == SS_COPY_HTOH || mc->dst_kind == SS_MEM_PINNED ||
               mc->dst_kind == SS_MEM_PAGEABLE || mc->dst_kind == SS_MEM_MANAGED;
    }
    if (op->call < 0) return 0;
    const ss_call *c = &m->calls[op->call];
    if (op->kind == SS_OP_MEMSET) {
        int32_t a = ss_model_alloc_at(m, c->rec->ptr, c->rec->t_enter);
        return a >= 0 && m->allocs[a].kind != SS_MEM_DEVICE;
    }
    uint32_t n;
    const uint64_t *p = ss_call_params(c, &n);
    for (uint32_t i = 0; i < n; i++) {
        int32_t a = ss_model_alloc_at(m, p[i], c->rec->t_enter);
        if (a >= 0 && m->allocs[a].kind != SS_MEM_DEVICE) return 1;
    }
    return 0;
}

static void visit(void *ctx, int32_t oi)
{
    scan *s = ctx;
    const ss_gpu_op *op = &s->m->ops[oi];
    /* by the stream the program used: a graph's nodes count on its launch's */
    int32_t st = ss_op_program_stream(s->m, op);
    if (s->ldomain != -2 && s->m->streams[op->stream].ldomain != s->ldomain) return;
    s->inflight[st] = 1;
    if (op->end > s->inflight_end[st]) { s->inflight_end[st] = op->end; s->inflight_last[st] = oi; }
    if (host_visible_write(s->m, oi)) s->host_reads[st] = 1;
    SS_PUSH(s->list, s->nlist, s->caplist, oi);
}

static int is_device_wide(const ss_model *m, const ss_call *c)
{
    if (c->cls == SS_API_DEVICE_SYNC) return 1;
    return c->cls == SS_API_STREAM_SYNC && c->stream >= 0 && m->streams[c->stream].kind == SS_STREAM_LEGACY_NULL;
}

static int is_sync_point(ss_api_class cls)
{
    return cls == SS_API_DEVICE_SYNC || cls == SS_API_STREAM_SYNC || cls == SS_API_EVENT_SYNC ||
           cls == SS_API_COPY_SYNC || cls == SS_API_MEMSET_SYNC;
}

/* Index of call `ci` in its thread's call list. */
static uint32_t thread_pos(const ss_thread *t, int32_t ci)
{
    uint32_t lo = 0, hi = t->ncalls;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (t->calls[mid] < ci) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Per stream: the latest unrecorded stream work (its submission, 0 none)
 * and the earliest proof after it that it had ended (UINT64_MAX none). */
typedef struct unseen { uint64_t submitted, ended_by; } unseen;

static void unseen_proof(unseen *u, uint64_t after, uint64_t ended)
{
    if (u->submitted && after >= u->submitted && ended < u->ended_by) u->ended_by = ended;
}

/* What call c tells of the unrecorded work (calls in model order). */
static void unseen_note(const ss_model *m, unseen *u, uint32_t ns, const ss_call *c)
{
    if (c->rec->ret != 0 || c->captured) return;
    if (ss_call_is_unrecorded_stream_work(c)) {
        u[c->stream].submitted = c->rec->t_enter ? c->rec->t_enter : 1;
        u[c->stream].ended_by = UINT64_MAX;
        return;
    }
    for (int32_t oi = c->first_op; oi >= 0; oi = m->ops[oi].next_of_call)
        if (m->ops[oi].stream >= 0) unseen_proof(&u[m->ops[oi].stream], m->ops[oi].submit, m->ops[oi].end);
    switch (ss_call_host_wait(m, c)) {
    case SS_WAIT_STREAM: case SS_WAIT_STREAM_PRIOR: case SS_WAIT_QUERY:
        if (c->stream >= 0 && c->cls != SS_API_EVENT_QUERY && c->cls != SS_API_EVENT_ELAPSED)
            unseen_proof(&u[c->stream], c->rec->t_enter, c->rec->t_exit);
        break;
    case SS_WAIT_DEVICE:
        for (uint32_t k = 0; k < ns; k++)
            if (ss_device_wait_covers(m, c, (int32_t)k)) unseen_proof(&u[k], c->rec->t_enter, c->rec->t_exit);
        break;
    default: break;
    }
}

/* May unrecorded stream work of device dev have been in flight at t? */
static int unseen_pending(const ss_model *m, const unseen *u, uint32_t ns, int32_t dev, uint64_t t)
{
    for (uint32_t k = 0; k < ns; k++)
        if (u[k].submitted && u[k].submitted < t && u[k].ended_by > t &&
            (dev < 0 || m->streams[k].device < 0 || m->streams[k].device == dev))
            return 1;
    return 0;
}

/* Does the trace name any call that is unrecorded stream work? */
static int has_unrecorded_work(const ss_model *m)
{
    for (uint32_t k = 0; k < m->napi_names; k++)
        if (ss_class_is_unrecorded_stream_work(m->api_class[k])) return 1;
    return 0;
}

enum { TAG_BUSY = 0, TAG_IDLE = 1 };

typedef struct review { double wall_ms; } review;

/* A site that synchronized once is info unless its waste was large; idle
 * syncs count only when repeated at one site (info, they wasted little). */
static int review_site(ss_finding *x, void *ctx)
{
    const review *r = ctx;
    if (x->tag == TAG_IDLE) {
        if (x->count < 2) return 0;
        x->fixed_severity = 1;
        x->severity = SS_SEV_INFO;
        return 1;
    }
    int large = x->cost_ms >= LARGE_ONE_OFF_MIN_MS && x->cost_ms >= LARGE_ONE_OFF_WALL_FRACTION * r->wall_ms;
    if (x->count == 1 && !large) {
        x->fixed_severity = 1;
        x->severity = SS_SEV_INFO;
        ss_finding_append_message(x, " (this call site synchronized once, e.g. before reading a host timer: "
                                     "cheap unless it sits on a hot path)");
    }
    return 1;
}

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->has_gpu) return;
    uint32_t ns = m->nstreams ? m->nstreams : 1;
    scan s = { m, ss_xcalloc(ns, 1), ss_xcalloc(ns, 8), ss_xcalloc(ns, 4), ss_xcalloc(ns, 1), NULL, 0, 0, -2 };
    uint8_t *touched = ss_xcalloc(ns, 1);
    unseen *unrec = has_unrecorded_work(m) ? ss_xcalloc(ns, sizeof(unseen)) : NULL;
    /* severities depend on how often a call site synchronized: judged once
     * every occurrence is in (review_site below) */
    uint32_t first = out->n;

    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        int device_wide = is_device_wide(m, c) && c->rec->ret == 0;
        int unseen_work = unrec && device_wide &&
                          unseen_pending(m, unrec, ns, ss_model_call_device(m, c), c->rec->t_enter);
        if (unrec) unseen_note(m, unrec, ns, c);
        if (!device_wide || unseen_work) continue;
        /* the sync half of a blocking copy (model.h) completes that copy, as
         * a synchronous cudaMemcpy would: not this rule's business */
        if (c->blocking_copy == SS_BLOCKING_COPY_SYNC) continue;
        int32_t dev = ss_model_call_device(m, c);
        /* What it waited for is its context's work: several contexts on the
         * device (a context per thread) and no record of which one it was
         * (traces before 2026-11-29), nothing can be said of it. */
        uint32_t cx = ss_model_call_context(m, c);
        if (!cx && ss_model_device_contexts(m, dev) > 1) continue;
        uint64_t t0 = c->rec->t_enter, t1 = c->rec->t_exit > t0 ? c->rec->t_exit : t0;
        memset(s.inflight, 0, ns); memset(s.inflight_end, 0, ns * 8); memset(s.host_reads, 0, ns);
        for (uint32_t k = 0; k < ns; k++) s.inflight_last[k] = -1;
        s.nlist = 0;
        s.ldomain = m->split_contexts && c->cls == SS_API_STREAM_SYNC ? m->streams[c->stream].ldomain : -2;
        ss_inflight_ops_of_context(m, dev, cx, t0, visit, &s);
        uint32_t ninflight = 0;
        for (uint32_t k = 0; k < ns; k++) ninflight += s.inflight[k];
        char msg[1024], basis[256], sd[96], lbl[192];
        if (ninflight == 0) {
            snprintf(msg, sizeof msg, "%s with no GPU work in flight: it synchronized nothing (%.3f ms)",
                     ss_model_call_name(m, c), ss_ms(t1 - t0));
            ss_occurrence o = {
                .rule = "device-sync-overuse", .cost_ms = ss_ms(t1 - t0),
                .cost_basis = "duration of syncs that had nothing to wait for",
                .message = msg,
                .fix = "Remove the synchronization where nothing is pending, or move it to where the host "
                       "actually needs a result; synchronize a stream or an event rather than the device.",
                .refs = { { (int32_t)i, -1, "sync" } }, .nrefs = 1, .alloc = -1, .site_extra = "idle",
                .relax = { { .kind = SS_RELAX_HOST_WAIT, .call = (int32_t)i } }, .nrelax = 1,
                .tag = TAG_IDLE,
            };
            ss_findings_add(out, m, &o);
            continue;
        }
        /* what the host needs next: see the comment at the top */
        const ss_thread *t = ss_model_thread(m, c->rec->tid);
        uint32_t pos = thread_pos(t, (int32_t)i) + 1, used = 0;
        memset(touched, 0, ns);
        uint64_t device_wait_gap = UINT64_MAX;   /* host time from the sync's exit to a later device-wide wait */
        int32_t device_waiter = -1;              /* that later call */
        for (; pos < t->ncalls && used < WINDOW_CALLS; pos++, used++) {
            int32_t ni = t->calls[pos];
            const ss_call *n = &m->calls[ni];
            if (n->rec->ret != 0) continue;
            /* a synchronous copy/memset runs on the default stream and needs
             * what that stream (and, for the legacy one, every blocking
             * stream) has queued */
            if ((n->cls == SS_API_COPY_SYNC || n->cls == SS_API_MEMSET_SYNC) && n->stream >= 0)
                touched[n->stream] = 1;
            /* work on another stream that produced or uses this call's memory:
             * the device sync served as a cross-stream fence for it */
            /* bounded: the ops closest to the sync (queued, then running);
             * none when the call touches no memory (asked once, not per op) */
            uint32_t nfence = ss_call_has_memory(m, ni) ? s.nlist : 0;
            for (uint32_t k = 0; k < nfence && k < FENCE_CHECK_LIMIT; k++) {
                const ss_gpu_op *op = &m->ops[s.list[k]];
                int32_t st = ss_op_program_stream(m, op);
                if (st != n->stream && !touched[st] && op->call >= 0 && ss_calls_share_memory(m, op->call, ni))
                    touched[st] = 1;
            }
            /* A later call that waits for the whole device by itself
             * (cudaFree, cudaFreeHost, cudaHostUnregister: not a sync the fix
             * would narrow too) would have waited for the unneeded work
             * anyway: a narrower sync saves at most the host time between. */
            if (!is_device_wide(m, n) && ss_call_host_wait(m, n) == SS_WAIT_DEVICE &&
                ss_model_call_device(m, n) == dev &&
                (!cx || !ss_model_call_context(m, n) || ss_model_call_context(m, n) == cx)) {
                device_wait_gap = n->rec->t_enter > t1 ? n->rec->t_enter - t1 : 0;
                device_waiter = ni;
                used++;
                break;
            }
            if (is_sync_point((ss_api_class)n->cls)) { used++; break; }
        }
        if (used == 0) continue;   /* nothing follows: the program uses everything */
        /* the legacy stream waits for the blocking streams: using it uses them */
        for (uint32_t k = 0; k < ns; k++)
            if (touched[k] && m->streams[k].kind == SS_STREAM_LEGACY_NULL)
                for (uint32_t j = 0; j < ns; j++)
                    if (m->streams[j].kind == SS_STREAM_BLOCKING && ss_same_legacy_domain(m, (int32_t)j, (int32_t)k))
                        touched[j] = 1;
        /* a legacy-stream sync needs its own stream: only what it waited for
         * beyond that is overuse */
        if (c->cls == SS_API_STREAM_SYNC && c->stream >= 0) touched[c->stream] = 1;
        /* The next calls must tell what the host needed from THIS device:
         * when they only use other devices (cudaSetDevice to the next GPU),
         * the sync may have been for anything on this one — no judgement. */
        int uses_this_device = 0;
        for (uint32_t k = 0; k < ns && !uses_this_device; k++)
            if ((touched[k] || s.host_reads[k]) && (dev < 0 || m->streams[k].device < 0 ||
                                                     m->streams[k].device == dev))
                uses_this_device = 1;
        if (!uses_this_device) continue;
        uint64_t needed = t0;
        int32_t worst = -1;
        for (uint32_t k = 0; k < ns; k++) {
            if (!s.inflight[k]) continue;
            if (touched[k] || s.host_reads[k]) { if (s.inflight_end[k] > needed) needed = s.inflight_end[k]; }
            else if (worst < 0 || s.inflight_end[k] > s.inflight_end[worst]) worst = (int32_t)k;
        }
        if (worst < 0 || t1 <= needed) continue;
        uint64_t waited = t1 - needed, excess = waited < device_wait_gap ? waited : device_wait_gap;
        if (excess < MIN_EXCESS_NS) continue;
        ss_op_label(m, s.inflight_last[worst], lbl, sizeof lbl);
        char used_desc[256] = "";
        size_t ul = 0;
        for (uint32_t k = 0; k < ns && ul + 100 < sizeof used_desc; k++)
            if ((touched[k] || s.host_reads[k]) && s.inflight[k])
                ul += (size_t)snprintf(used_desc + ul, sizeof used_desc - ul, "%s%s", ul ? ", " : "",
                                       ss_stream_describe(m, (int32_t)k, sd, sizeof sd));
        int n_msg = snprintf(msg, sizeof msg,
                 "%s waited for the whole device, but the host went on to use only %s: it waited %.3f ms "
                 "longer than that work for %s on %s, which it did not need yet",
                 ss_model_call_name(m, c), ul ? used_desc : "streams that had already finished", ss_ms(waited),
                 lbl, ss_stream_describe(m, worst, sd, sizeof sd));
        if (excess < waited && n_msg > 0 && (size_t)n_msg < sizeof msg)
            snprintf(msg + n_msg, sizeof msg - (size_t)n_msg,
                     "; %s %.3f ms later waits for the whole device too, so a narrower sync saves at most those "
                     "%.3f ms", ss_model_call_name(m, &m->calls[device_waiter]), ss_ms(device_wait_gap),
                     ss_ms(device_wait_gap));
        snprintf(basis, sizeof basis, "%s",
                 excess < waited ? "host time from the sync's exit to the next call that waits for the whole device"
                                 : "sync exit - end of the last op submitted before the sync on the streams used "
                                   "afterwards");
        ss_occurrence o = {
            .rule = "device-sync-overuse", .cost_ms = ss_ms(excess), .cost_basis = basis, .message = msg,
            .fix = "Synchronize only what the host needs next: cudaStreamSynchronize(stream) on the stream "
                   "that produced it, or cudaEventRecord(ev, stream) after the needed work and "
                   "cudaEventSynchronize(ev). In PyTorch: torch.cuda.current_stream().synchronize() or "
                   "event.synchronize() instead of torch.cuda.synchronize().",
            .refs = { { (int32_t)i, -1, "sync" },
                      { m->ops[s.inflight_last[worst]].call, s.inflight_last[worst], "unneeded work waited for" } },
            .nrefs = 2, .alloc = -1,
        };
        /* the fix: wait only for the streams the host used next */
        uint32_t nneed = 0;
        for (uint32_t k = 0; k < ns; k++)
            if ((touched[k] || s.host_reads[k]) && s.inflight[k]) nneed++;
        if (nneed == 0) {
            o.relax[0] = (ss_relax){ .kind = SS_RELAX_HOST_WAIT, .call = (int32_t)i };
            o.nrelax = 1;
        } else if (nneed <= 4) {
            for (uint32_t k = 0; k < ns; k++)
                if ((touched[k] || s.host_reads[k]) && s.inflight[k])
                    o.relax[o.nrelax++] = (ss_relax){ .kind = SS_RELAX_NARROW_WAIT, .call = (int32_t)i,
                                                      .stream = (int32_t)k };
        }
        ss_findings_add(out, m, &o);
    }
    review ctx = { ss_ms(m->t_last > m->t_first ? m->t_last - m->t_first : 0) };
    ss_findings_keep_if(out, first, review_site, &ctx);
    free(s.inflight); free(s.inflight_end); free(s.inflight_last); free(s.host_reads); free(s.list); free(touched); free(unrec);
}

const ss_rule ss_rule_device_sync_overuse = {
    "device-sync-overuse", "device-wide synchronization where a stream or event sync would do", run,
    SS_SAMPLED_SETTLED | SS_SAMPLED_OWN_WAIT | SS_SAMPLED_NEXT,
    1,   /* asks_memory */
    0,   /* asks_replay */
    1,   /* removes_causes */
};
