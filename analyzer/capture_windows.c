/* Sampled recording: the recorded spans of a trace and what can be judged
 * inside them (capture_windows.h). */
#include <stdlib.h>
#include <string.h>
#include "capture_windows.h"
#include "util.h"

int ss_capture_hot_class(uint8_t cls)
{
    switch (cls) {
    case SS_API_LAUNCH: case SS_API_COPY_SYNC: case SS_API_COPY_ASYNC: case SS_API_MEMSET_SYNC:
    case SS_API_MEMSET_ASYNC: case SS_API_DEVICE_SYNC: case SS_API_STREAM_SYNC: case SS_API_EVENT_SYNC:
    case SS_API_STREAM_QUERY: case SS_API_EVENT_QUERY: case SS_API_EVENT_RECORD: case SS_API_STREAM_WAIT:
    case SS_API_HOST_FUNC: case SS_API_EVENT_ELAPSED: case SS_API_STREAM_WAIT_VALUE: case SS_API_STREAM_WRITE_VALUE:
    case SS_API_STREAM_BATCH_MEMOP: case SS_API_MANAGED_MEMORY:
        return 1;
    default:
        return 0;
    }
}

static int submits_work(uint8_t cls)
{
    return cls == SS_API_LAUNCH || cls == SS_API_COPY_SYNC || cls == SS_API_COPY_ASYNC ||
           cls == SS_API_MEMSET_SYNC || cls == SS_API_MEMSET_ASYNC;
}

static int cmp_cap(const void *a, const void *b)
{
    const ss_capture_rec *x = *(const ss_capture_rec *const *)a, *y = *(const ss_capture_rec *const *)b;
    return x->time < y->time ? -1 : x->time > y->time;
}

int32_t ss_capture_span_at(const ss_model *m, uint64_t t)
{
    const ss_capture *c = m->capture;
    if (!c || !c->nspans) return 0;
    uint32_t lo = 0, hi = c->nspans;   /* last span with t_on <= t */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->spans[mid].t_on <= t) lo = mid + 1; else hi = mid;
    }
    if (!lo) return -1;
    return t < c->spans[lo - 1].t_off ? (int32_t)(lo - 1) : -1;
}

int32_t ss_capture_call_span(const ss_model *m, int32_t call)
{
    if (call < 0 || (uint32_t)call >= m->ncalls) return -1;
    return m->capture && m->capture->call_span ? m->capture->call_span[call] : 0;
}

int32_t ss_capture_op_span(const ss_model *m, int32_t op)
{
    if (op < 0 || (uint32_t)op >= m->nops) return -1;
    const ss_gpu_op *o = &m->ops[op];
    if (o->call >= 0) return ss_capture_call_span(m, o->call);
    int32_t a = ss_capture_span_at(m, o->start), b = ss_capture_span_at(m, o->end);
    return a == b ? a : -1;
}

static uint64_t *KF(const ss_model *m, int32_t span, int32_t stream)
{
    return m->capture->known_from + (size_t)span * m->nstreams + (size_t)stream;
}

uint64_t ss_capture_stream_known(const ss_model *m, int32_t span, int32_t stream)
{
    const ss_capture *c = m->capture;
    if (!c || !c->sampled) return 0;
    if (span < 0 || (uint32_t)span >= c->nspans || stream < 0 || (uint32_t)stream >= m->nstreams) return UINT64_MAX;
    return *KF(m, span, stream);
}

static void known_at(const ss_model *m, int32_t span, int32_t stream, uint64_t t)
{
    if (stream < 0 || (uint32_t)stream >= m->nstreams) return;
    uint64_t *k = KF(m, span, stream);
    if (t < *k) *k = t;
}

/* Per span: when each stream is known, the judged end, the settled time. */
static void build_knowledge(ss_model *m, ss_capture *c)
{
    uint32_t S = m->nstreams;
    c->known_from = ss_xcalloc((size_t)c->nspans * (S ? S : 1), sizeof(uint64_t));
    for (uint32_t k = 0; k < c->nspans; k++) {
        /* a head that starts the trace knows every stream from the start:
         * nothing was submitted unseen before it */
        uint64_t init = k == 0 ? 0 : UINT64_MAX;
        for (uint32_t s = 0; s < S; s++) c->known_from[(size_t)k * S + s] = init;
    }
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *call = &m->calls[i];
        int32_t k = c->call_span[i];
        if (k <= 0 || call->rec->ret != 0 || call->captured) continue;
        if (submits_work(call->cls) && !ss_call_is_graph_launch(m, call)) {
            /* the first op submitted in the span on a stream: when it ends,
             * everything queued before it (unseen work included) is done */
            for (int32_t o = call->first_op; o >= 0; o = m->ops[o].next_of_call)
                if (m->ops[o].stream == call->stream) known_at(m, k, call->stream, m->ops[o].end);
        }
        switch (ss_call_host_wait(m, call)) {
        case SS_WAIT_STREAM: case SS_WAIT_STREAM_PRIOR:
            known_at(m, k, call->stream, call->rec->t_exit);
            break;
        case SS_WAIT_QUERY:
            if (call->cls == SS_API_STREAM_QUERY) known_at(m, k, call->stream, call->rec->t_exit);
            break;
        case SS_WAIT_DEVICE:
            for (uint32_t s = 0; s < S; s++)
                if (ss_device_wait_covers(m, call, (int32_t)s)) known_at(m, k, (int32_t)s, call->rec->t_exit);
            break;
        default:
            break;
        }
    }
    /* The judged end: a call of the span that submitted GPU work without a
     * GPU record of it means CUPTI's kinds went off before its records came;
     * the GPU may have been busy from there on unseen. */
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *call = &m->calls[i];
        int32_t k = c->call_span[i];
        if (k < 0 || c->spans[k].t_off == UINT64_MAX) continue;
        if (!submits_work(call->cls) || call->rec->ret != 0 || call->captured || call->first_op >= 0) continue;
        if (call->rec->t_enter < c->spans[k].judged_end) c->spans[k].judged_end = call->rec->t_enter;
    }
    /* Settled: every stream that had work anywhere in the trace and existed
     * when the span began is known. */
    for (uint32_t k = 0; k < c->nspans; k++) {
        ss_capture_span *sp = &c->spans[k];
        uint64_t settled = k == 0 ? 0 : sp->t_on;
        for (uint32_t s = 0; s < S && k > 0; s++) {
            const ss_stream *st = &m->streams[s];
            if (!st->nops) continue;
            if (st->create_call >= 0 && m->calls[st->create_call].rec->t_enter >= sp->t_on) continue;
            uint64_t kf = c->known_from[(size_t)k * S + s];
            if (kf > settled) settled = kf;
        }
        sp->settled = settled;
    }
}

void ss_capture_spans(ss_model *m, const ss_capture_rec *const *recs, uint32_t n)
{
    ss_capture *c = ss_xcalloc(1, sizeof *c);
    m->capture = c;
    c->sampled = n > 0;
    const ss_capture_rec **v = ss_xcalloc(n ? n : 1, sizeof *v);
    if (n) memcpy(v, recs, n * sizeof *v);
    ss_qsort(v, n, sizeof *v, cmp_cap);
    uint32_t cap = 0;
    ss_capture_span head = { 0, UINT64_MAX, 0, 0, 0, 0, UINT64_MAX, 0 };
    SS_PUSH(c->spans, c->nspans, cap, head);
    c->ends_on = 1;
    for (uint32_t i = 0; i < n; i++) {
        const ss_capture_rec *r = v[i];
        if (r->hot_calls > c->last_switch_hot) c->last_switch_hot = r->hot_calls;
        unsigned state = r->h.flags & SS_CAPTURE_STATE_MASK;
        if (r->h.flags & SS_CAPTURE_F_COUNT_PARTIAL) c->count_partial = 1;
        if (state == SS_CAPTURE_OFF && c->ends_on) {
            ss_capture_span *sp = &c->spans[c->nspans - 1];
            sp->t_off = sp->judged_end = r->time > sp->t_on ? r->time : sp->t_on;
            sp->hot_off = r->hot_calls;
            c->ends_on = 0;
        } else if (state == SS_CAPTURE_ON && !c->ends_on) {
            ss_capture_span sp = { r->time, UINT64_MAX, r->hot_calls, 0, r->window, r->reason, UINT64_MAX, 0 };
            SS_PUSH(c->spans, c->nspans, cap, sp);
            c->windows++;
            c->ends_on = 1;
        }
    }
    free(v);
}

void ss_capture_build(ss_model *m)
{
    ss_capture *c = m->capture;
    int on = c->ends_on;
    for (uint32_t i = 0; i < m->nops && !c->kernels_recorded; i++) c->kernels_recorded = m->ops[i].kind == SS_OP_KERNEL;
    c->call_span = ss_xcalloc(m->ncalls ? m->ncalls : 1, sizeof(int32_t));
    uint64_t tail_hot = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        int32_t k = c->sampled ? ss_capture_span_at(m, m->calls[i].rec->t_enter) : 0;
        c->call_span[i] = k;
        if (k >= 0 && (uint32_t)k == c->nspans - 1 && on && ss_capture_hot_class(m->calls[i].cls)) tail_hot++;
    }
    if (on) {
        ss_capture_span *sp = &c->spans[c->nspans - 1];
        sp->hot_off = sp->hot_on + tail_hot;
    }
    for (uint32_t k = 0; k < c->nspans; k++)
        c->recorded_hot_calls += c->spans[k].hot_off > c->spans[k].hot_on ? c->spans[k].hot_off - c->spans[k].hot_on : 0;
    c->total_hot_calls = on ? c->spans[c->nspans - 1].hot_off : c->last_switch_hot;
    if (c->total_hot_calls < c->recorded_hot_calls) c->total_hot_calls = c->recorded_hot_calls;
    c->total_is_lower_bound = !on || c->count_partial;
    /* The share of the run's time recorded: it needs no count of the calls
     * made while OFF, which a static-cudart process cannot give. */
    c->run_ns = (m->t_last > m->t_first ? m->t_last : m->t_first) - m->t_first;
    ss_capture_stretch *st;
    uint32_t nst = ss_capture_stretches(m, &st);
    for (uint32_t i = 0; i < nst; i++)
        if (st[i].span >= 0) c->recorded_ns += st[i].t1 - st[i].t0;
    free(st);
    if (c->sampled) build_knowledge(m, c);
}

/* Appends [a, b) clipped to [lo, hi) when something of it is left. */
static void push_stretch(ss_capture_stretch **v, uint32_t *n, uint32_t *cap, uint64_t a, uint64_t b,
                         uint64_t lo, uint64_t hi, int32_t span)
{
    if (a < lo) a = lo;
    if (b > hi) b = hi;
    if (b <= a) return;
    ss_capture_stretch s = { a, b, span };
    SS_PUSH(*v, *n, *cap, s);
}

uint32_t ss_capture_stretches(const ss_model *m, ss_capture_stretch **out)
{
    const ss_capture *c = m->capture;
    uint64_t lo = m->t_first, hi = m->t_last > m->t_first ? m->t_last : m->t_first;
    ss_capture_stretch *v = NULL;
    uint32_t n = 0, cap = 0;
    if (!c || !c->nspans) {
        push_stretch(&v, &n, &cap, lo, hi, lo, hi, 0);
    } else {
        for (uint32_t k = 0; k < c->nspans; k++) {
            const ss_capture_span *sp = &c->spans[k];
            push_stretch(&v, &n, &cap, sp->t_on, sp->t_off, lo, hi, (int32_t)k);
            /* OFF from this span's end to the next one's start, or to the
             * run's end when the trace ends OFF */
            if (sp->t_off != UINT64_MAX)
                push_stretch(&v, &n, &cap, sp->t_off, k + 1 < c->nspans ? c->spans[k + 1].t_on : hi, lo, hi, -1);
        }
    }
    *out = v;
    return n;
}

void ss_capture_free(ss_capture *c)
{
    if (!c) return;
    free(c->spans); free(c->known_from); free(c->call_span);
    free(c);
}

/* Was `stream` known at t in span k (the legacy stream: every stream)? */
static int known_before(const ss_model *m, int32_t k, int32_t stream, uint64_t t)
{
    const ss_capture_span *sp = &m->capture->spans[k];
    if (sp->settled <= t) return 1;
    if (stream < 0 || m->streams[stream].kind == SS_STREAM_LEGACY_NULL) return 0;   /* the legacy stream
                                                      waits for every blocking stream too */
    return ss_capture_stream_known(m, k, stream) <= t;
}

int ss_capture_wait_known(const ss_model *m, int32_t call)
{
    if (!ss_capture_sampled(m)) return 1;
    int32_t k = ss_capture_call_span(m, call);
    if (k < 0) return 0;
    const ss_call *c = &m->calls[call];
    uint64_t t = c->rec->t_enter;
    switch (ss_call_host_wait(m, c)) {
    case SS_WAIT_NONE:
        return 1;
    case SS_WAIT_STREAM: case SS_WAIT_STREAM_PRIOR:
        return known_before(m, k, c->stream, t);
    case SS_WAIT_QUERY:
        return c->cls == SS_API_STREAM_QUERY ? known_before(m, k, c->stream, t) : m->capture->spans[k].settled <= t;
    default:   /* an event (its record may have been made unseen) or the whole device */
        return m->capture->spans[k].settled <= t;
    }
}

/* Is the thread's next call after `call` recorded in the same span, or did
 * the trace end while recording with nothing after it? */
static int next_call_seen(const ss_model *m, int32_t call, int32_t span)
{
    const ss_thread *t = ss_model_thread(m, m->calls[call].rec->tid);
    if (!t) return 0;
    uint32_t lo = 0, hi = t->ncalls;   /* calls of a thread ascend with the model's order */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->calls[mid] <= call) lo = mid + 1; else hi = mid;
    }
    if (lo < t->ncalls) return ss_capture_call_span(m, t->calls[lo]) == span;
    return m->capture->spans[span].t_off == UINT64_MAX;
}

int ss_capture_judgeable(const ss_model *m, unsigned need, const int32_t *calls, const int32_t *ops, uint32_t n)
{
    if (!ss_capture_sampled(m)) return 1;
    const ss_capture *c = m->capture;
    int32_t span = -2;
    uint64_t t_min = UINT64_MAX;
    /* the occurrence's place: its first call, else its first op */
    for (uint32_t i = 0; i < n && span == -2; i++) {
        if (calls[i] >= 0) span = ss_capture_call_span(m, calls[i]);
        else if (ops[i] >= 0) span = ss_capture_op_span(m, ops[i]);
    }
    if (span < 0) return 0;
    const ss_capture_span *sp = &c->spans[span];
    if ((need & SS_SAMPLED_HEAD) && span != 0) return 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t ci = calls[i];
        if (ci >= 0) {
            const ss_call *call = &m->calls[ci];
            /* what was made before the span (an allocation, a graph node)
             * is history the structural records keep whole */
            int history = i > 0 && !ss_capture_hot_class(call->cls) && call->rec->t_enter < sp->t_on;
            if (!history) {
                if (ss_capture_call_span(m, ci) != span || call->rec->t_exit > sp->judged_end) return 0;
                /* A launch whose kernel record never came: which kernel ran,
                 * and so what it touched, is not known.  Unobserved, not
                 * "possible".  (A closed span's judged end already stops at
                 * such a call; this also covers the span the trace ends in.) */
                if (c->kernels_recorded && call->cls == SS_API_LAUNCH && call->rec->ret == 0 && call->first_op < 0)
                    return 0;
                if (call->rec->t_enter < t_min) t_min = call->rec->t_enter;
            }
        }
        int32_t oi = ops[i];
        if (oi >= 0) {
            if (ss_capture_op_span(m, oi) != span || m->ops[oi].start > sp->judged_end) return 0;
            if (m->ops[oi].submit < t_min) t_min = m->ops[oi].submit;
        }
    }
    if ((need & SS_SAMPLED_SETTLED) && (t_min == UINT64_MAX || sp->settled > t_min)) return 0;
    if ((need & SS_SAMPLED_OWN_WAIT) && n && calls[0] >= 0 && !ss_capture_wait_known(m, calls[0])) return 0;
    if ((need & SS_SAMPLED_NEXT) && n && calls[0] >= 0 && !next_call_seen(m, calls[0], span)) return 0;
    return 1;
}
