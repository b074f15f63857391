/*
 * unrecorded-event-wait: cudaStreamWaitEvent / cudaEventSynchronize on an
 * event that had not been recorded (in its current lifetime) by the time of
 * the wait.  CUDA treats such an event as complete, so the wait orders
 * nothing: a fence that is not there.
 *
 * Unless there was nothing to order.  A ring of events (NVIDIA's
 * simpleMultiCopy: cudaEventSynchronize(cycleDone[next]) before each cycle;
 * a triple-buffered pipeline's cudaStreamWaitEvent(copy, slot_free[k]))
 * waits on each slot's event before its first record on the first lap,
 * when the slot has not been used yet.  CUDA documents such a wait as
 * complete, and there was nothing for it to order:
 *   - a host sync, when the stream that records the event later had no
 *     work yet (a host wait can only wait for work already submitted);
 *   - a stream's wait, when none of the work the event's first record
 *     covers (its stream's, before it) touches memory that the waiting
 *     stream's next work touches without being ordered with it otherwise
 *     (happens-before, hb.h): no race went through the missing order.
 *     A wait placed before its producer's record, the bug that looks the
 *     same, lets the producer race the consumer: that stays the error.
 * Such a wait is an info, "possibly harmless", saying why.  Not when the
 * record is on the legacy default stream, whose record also covers every
 * blocking stream's work; an event never recorded at all stays the finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rule.h"
#include "util.h"
#include "hb.h"

/* Calls that give a stream work an event recorded on it later covers: what
 * it runs (ss_class_submits_work, as happens-before counts it), and what it
 * waits for. */
static int gives_stream_work(const ss_call *c)
{
    return c->rec->ret == 0 && !c->captured && (ss_class_submits_work(c->cls) || c->cls == SS_API_STREAM_WAIT);
}

/* per stream, the first call that gave it work (m->ncalls: none) */
static uint32_t *first_work_calls(const ss_model *m)
{
    uint32_t *first = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t));
    for (uint32_t s = 0; s < m->nstreams; s++) first[s] = m->ncalls;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (c->stream >= 0 && first[c->stream] == m->ncalls && gives_stream_work(c)) first[c->stream] = i;
    }
    return first;
}

/* A stream's wait before its event's first record: the work on each side
 * looked at (bounded: a ring's slot is recorded right after its use). */
#define RING_WINDOW 16     /* work calls each side */
#define RING_SCAN 4096     /* calls scanned to find them */
#define RING_MAX 256       /* waits judged so; the rest stay findings */
#define RING_CLOCK_WORDS (16u << 20)   /* the clocks kept for them, at most (64 MiB) */

typedef struct ring_wait {
    uint32_t wait;
    uint32_t x[RING_WINDOW], nx;   /* the record's stream's work before the record (the record too, a graph's) */
    uint32_t y[RING_WINDOW], ny;   /* the waiting stream's work after the wait, up to its next wait */
    int harmless;
} ring_wait;

/* The unrecorded stream waits on events recorded later (not on the legacy
 * stream), with the work on each side. */
static uint32_t ring_waits(const ss_model *m, ring_wait **out)
{
    ring_wait *v = NULL;
    uint32_t n = 0, cap = 0;
    for (uint32_t i = 0; i < m->ncalls && n < RING_MAX; i++) {
        const ss_call *c = &m->calls[i];
        if (c->cls != SS_API_STREAM_WAIT || c->event < 0 || c->rec->ret != 0 || c->stream < 0) continue;
        const ss_event *e = &m->events[c->event];
        int32_t first = c->captured ? e->first_record : e->first_run_record;
        if (first < 0 || (uint32_t)first < i || e->from_ipc || e->by_context) continue;
        int32_t rs = m->calls[first].stream;
        if (rs < 0 || rs == c->stream || m->streams[rs].kind == SS_STREAM_LEGACY_NULL) continue;
        ring_wait w = { .wait = i };
        /* what the wait was for: the stream's work up to its next wait */
        for (uint32_t j = i + 1; j < m->ncalls && j <= i + RING_SCAN && w.ny < RING_WINDOW; j++) {
            const ss_call *d = &m->calls[j];
            if (d->stream != c->stream) continue;
            if (d->cls == SS_API_STREAM_WAIT) break;
            if (gives_stream_work(d)) w.y[w.ny++] = j;
        }
        for (int64_t j = first; j >= 0 && j + RING_SCAN >= first && w.nx < RING_WINDOW; j--)
            if (m->calls[j].stream == rs && gives_stream_work(&m->calls[j])) w.x[w.nx++] = (uint32_t)j;
        SS_PUSH(v, n, cap, w);
    }
    *out = v;
    return n;
}

/* Which of them let no race through: happens-before replayed up to the last
 * call looked at, each such call's stream clock kept as it submitted. */
static void judge_ring_waits(const ss_model *m, ring_wait *w, uint32_t n)
{
    ss_u64map slot = { 0 };
    uint32_t nslots = 0, last = 0;
    for (uint32_t k = 0; k < n; k++) {
        for (uint32_t a = 0; a < w[k].nx + w[k].ny; a++) {
            uint32_t j = a < w[k].nx ? w[k].x[a] : w[k].y[a - w[k].nx];
            if (ss_u64map_get(&slot, j, -1) < 0) ss_u64map_put(&slot, j, nslots++);
            if (j > last) last = j;
        }
    }
    ss_hb *h = ss_hb_new(m);
    uint32_t width = ss_hb_width(h);
    if ((uint64_t)nslots * width > RING_CLOCK_WORDS) {   /* judged not: they stay findings */
        ss_hb_free(h);
        ss_u64map_free(&slot);
        return;
    }
    uint32_t *clocks = ss_xcalloc((size_t)nslots * width + 1, sizeof(uint32_t));
    for (uint32_t j = 0; j <= last && nslots; j++) {
        ss_hb_apply(h, (int32_t)j);
        int64_t sl = ss_u64map_get(&slot, j, -1);
        if (sl < 0) continue;
        const uint32_t *vc = ss_hb_stream_clock(h, m->calls[j].stream);
        if (vc) memcpy(clocks + (size_t)sl * width, vc, width * sizeof(uint32_t));
    }
    for (uint32_t k = 0; k < n; k++) {
        int race = 0;
        for (uint32_t a = 0; a < w[k].nx && !race; a++)
            for (uint32_t b = 0; b < w[k].ny && !race; b++) {
                int32_t x = (int32_t)w[k].x[a], y = (int32_t)w[k].y[b];
                if (x == y || !ss_calls_share_memory(m, x, y)) continue;
                const uint32_t *cx = clocks + (size_t)ss_u64map_get(&slot, (uint64_t)x, 0) * width;
                const uint32_t *cy = clocks + (size_t)ss_u64map_get(&slot, (uint64_t)y, 0) * width;
                race = !ss_hb_call_before(h, x, cy) && !ss_hb_call_before(h, y, cx);
            }
        w[k].harmless = !race;
    }
    free(clocks);
    ss_hb_free(h);
    ss_u64map_free(&slot);
}

/* A sampled trace (docs/sampling.md) may have lost the event's first record
 * to recording being off after the wait: whether the wait was the first lap
 * over a ring is then unknown (the full trace may say info). */
static int first_record_unseen(const ss_model *m, uint32_t wait, int32_t first)
{
    if (!ss_capture_sampled(m)) return 0;
    int32_t sp = ss_capture_call_span(m, (int32_t)wait);
    if (sp < 0) return 1;
    if (first >= 0 && ss_capture_call_span(m, first) == sp) return 0;
    return m->capture->spans[sp].t_off != UINT64_MAX;   /* recording went off after it */
}

static const ring_wait *ring_wait_of(const ring_wait *w, uint32_t n, uint32_t call)
{
    uint32_t lo = 0, hi = n;   /* w is in call order */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (w[mid].wait < call) lo = mid + 1; else hi = mid;
    }
    return lo < n && w[lo].wait == call ? &w[lo] : NULL;
}

/* One occurrence at wait call i; first >= 0 adds the event's first record. */
static void add_wait(ss_findings *out, const ss_model *m, uint32_t i, ss_severity sev, const char *msg,
                     const char *basis, const char *fix, int32_t first, const char *kind)
{
    const ss_call *c = &m->calls[i];
    ss_occurrence o = {
        .rule = "unrecorded-event-wait",
        .severity = sev,
        .fixed_severity = 1,
        .cost_ms = 0,
        .cost_basis = basis,
        .message = msg,
        .fix = fix,
        .refs = { { (int32_t)i, c->first_op, c->cls == SS_API_STREAM_WAIT ? "wait" : "sync" } },
        .nrefs = 1,
        .alloc = -1,
        .site_extra = kind,   /* each kind of verdict folds apart */
    };
    if (first >= 0) {
        o.refs[1] = (ss_finding_ref){ first, m->calls[first].first_op, "first record" };
        o.nrefs = 2;
    }
    ss_findings_add(out, m, &o);
}

static const char *const NO_TIME = "0 ms: a wait that orders nothing costs no time";

static void run(const ss_model *m, ss_findings *out)
{
    uint32_t *first_work = NULL;   /* made at the first unrecorded host sync */
    ring_wait *rings = NULL;
    uint32_t nrings = ring_waits(m, &rings);
    if (nrings) judge_ring_waits(m, rings, nrings);
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if ((c->cls != SS_API_STREAM_WAIT && c->cls != SS_API_EVENT_SYNC) || c->event < 0) continue;
        if (c->rec->ret != 0) continue;   /* a failed call is an error the program sees */
        const ss_event *e = &m->events[c->event];
        /* a wait captured into a graph joins records captured before it; any
         * other waits for a record that happens when work runs (model.h) */
        int32_t first = c->captured ? e->first_record : e->first_run_record;
        if (first >= 0 && (uint32_t)first < i) continue;
        if (e->from_ipc) continue;   /* another process records it (CUDA IPC) */
        if (e->by_context) continue; /* cuCtxRecordEvent & co. record it: all of a context's work */
        char sd[96], rd[96], msg[768];
        int is_wait = c->cls == SS_API_STREAM_WAIT;
        const char *name = ss_model_call_name(m, c);
        unsigned long long ev = (unsigned long long)c->rec->event;
        int n = is_wait ? snprintf(msg, sizeof msg, "%s makes %s wait for event 0x%llx, which had not been recorded "
                                   "yet", name, ss_stream_describe(m, c->stream, sd, sizeof sd), ev)
                        : snprintf(msg, sizeof msg, "%s on event 0x%llx, which had not been recorded yet", name, ev);
        size_t left = n > 0 && (size_t)n < sizeof msg ? sizeof msg - (size_t)n : 0;   /* 0: no room for the rest */
        char *tail = left ? msg + n : msg;
        if (first_record_unseen(m, i, first)) {
            if (left)
                snprintf(tail, left, " as far as the trace shows; possibly harmless: recording was off after this "
                         "wait (a sampled trace), so when the event was first recorded, and whether this was the "
                         "first lap over a ring of events with nothing to wait for yet, is not known");
            add_wait(out, m, i, SS_SEV_INFO, msg, NO_TIME,
                     "Record the event after the work the wait is for, before the wait; or record the run in full "
                     "(SYNCSIGHT_SAMPLE=off, docs/sampling.md) to see whether it was.", -1, "unseen record");
            continue;
        }
        /* the first lap over a ring: a host sync when the stream of the
         * event's next record had no work yet; a stream's wait when no race
         * went through it */
        int32_t rs = first >= 0 ? m->calls[first].stream : -1;
        const ring_wait *rw = is_wait ? ring_wait_of(rings, nrings, i) : NULL;
        if (!is_wait && rs >= 0 && m->streams[rs].kind != SS_STREAM_LEGACY_NULL) {
            if (!first_work) first_work = first_work_calls(m);
            if (first_work[rs] > i) {
                if (left)
                    snprintf(tail, left, ": it returns at once; possibly harmless: the event is first recorded "
                             "later, on %s, which had no work yet at this wait, so a recorded event would have "
                             "covered nothing either (the first lap over a ring of events)",
                             ss_stream_describe(m, rs, rd, sizeof rd));
                add_wait(out, m, i, SS_SEV_INFO, msg, NO_TIME,
                         "Nothing, if this is the first lap over a ring of events (or skip the sync on the first "
                         "lap). If the sync was meant for work already submitted on another stream, record the "
                         "event on that stream after that work, before the sync.", first, "first lap");
                continue;
            }
        }
        if (rw && rw->harmless && rw->ny > 0) {   /* work that waited, none of it racing */
            if (left)
                snprintf(tail, left, ", so the wait orders nothing; possibly harmless: the event is first recorded "
                         "later, on %s, and none of that stream's work before the record touches memory that this "
                         "stream's %u operations up to its next wait touch without being ordered with them "
                         "otherwise (the first lap over a ring of events: nothing to wait for yet)",
                         ss_stream_describe(m, rs, rd, sizeof rd), rw->ny);
            add_wait(out, m, i, SS_SEV_INFO, msg, NO_TIME,
                     "Nothing, if this is the first lap over a ring of events (or record each slot's event once "
                     "before the loop). If the wait was meant for work submitted after it, record the event after "
                     "that work and wait after the record: a wait takes the record made before it.", first,
                     "first lap");
            continue;
        }
        if (left)
            snprintf(tail, left, is_wait ? ": CUDA treats an unrecorded event as complete, so this wait orders "
                                           "nothing"
                                         : ": it returns at once and the host waits for nothing");
        add_wait(out, m, i, is_wait ? SS_SEV_ERROR : SS_SEV_WARNING, msg,
                 "0 ms: a missing fence costs correctness, not time",
                 is_wait ? "Record the event on the producer stream after the work the consumer needs "
                           "(cudaEventRecord(ev, producer)) before calling cudaStreamWaitEvent(consumer, ev); if the "
                           "record happens on another thread, make sure it happens first. In PyTorch: "
                           "ev.record(producer_stream) before consumer_stream.wait_event(ev)."
                         : "Record the event after the work you want to wait for (cudaEventRecord) before "
                           "cudaEventSynchronize, or synchronize the stream that runs that work.",
                 -1, NULL);
    }
    free(first_work);
    free(rings);
}

const ss_rule ss_rule_unrecorded_event_wait = {
    "unrecorded-event-wait", "wait on an event that was never recorded", run,
    SS_SAMPLED_HEAD,
    1,   /* asks_memory: a stream's wait on the first lap (ss_calls_share_memory) */
    0,   /* asks_replay */
    0,   /* removes_causes */
};
