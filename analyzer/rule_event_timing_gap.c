/*
 * event-timing-gap: cudaEventElapsedTime(&ms, start, stop) where work that
 * the timing thread submitted between the two records, on other streams of
 * the device, is not ordered before stop's record.  The events then time
 * stop's own stream only: under --default-stream per-thread,
 * cudaEventRecord(stop, 0) lands on the calling thread's stream and waits
 * for no worker stream (measured: a program printed 127 GB/s while its copies
 * really ran 3.705 ms = 90.6 GB/s).  A stop recorded on the legacy stream is
 * ordered after the blocking streams' work: the happens-before engine (hb.h)
 * knows that barrier, so such a stop is no finding.
 *
 * Judged from happens-before, evaluated with the clock of stop's latest
 * record before the elapsed-time call; the GPU timeline (event timestamps or
 * op times) only sizes the gap.  Cost 0 ms: the program's numbers are wrong,
 * its run time is not.
 *
 * Whose measurement: a Python library may time with CUDA events on its own
 * account (DDP's runtime statistics read cudaEventElapsedTime inside
 * forward()).  When the elapsed-time call's innermost Python frames belong
 * to library code that is more than the framework's own wrapper of the call
 * (torch.cuda.Event.elapsed_time), the numbers are that library's, not the
 * program's: the finding says so, as info.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rule.h"
#include "hb.h"
#include "symbolize.h"   /* ss_pyfile_is_user */
#include "util.h"

#define GAP_STREAMS_MAX 64

typedef struct gap {
    uint32_t nops, nstreams;       /* uncovered operations and their streams */
    uint64_t last_end;             /* end of the last uncovered op, 0 unknown */
    int32_t last_op, first_call;   /* an uncovered op (the last to end) / call */
    uint64_t span_lo, span_hi;     /* all ops submitted between the records */
    int32_t streams[GAP_STREAMS_MAX];
} gap;

static int64_t device_ts(const ss_u64map *ts, const ss_call *rec)
{
    return rec->rec->corr ? ss_u64map_get(ts, rec->rec->corr, -1) : -1;
}

static void add_stream(gap *g, int32_t s)
{
    for (uint32_t k = 0; k < g->nstreams && k < GAP_STREAMS_MAX; k++) if (g->streams[k] == s) return;
    if (g->nstreams < GAP_STREAMS_MAX) g->streams[g->nstreams] = s;
    g->nstreams++;
}

/* Work of the recording threads submitted between calls rs and rt (model
 * order) on the device of stop's stream, split by whether it is ordered
 * before clock vc (stop's record). */
static void measure_gap(const ss_model *m, const ss_hb *h, int32_t rs, int32_t rt, const uint32_t *vc, gap *g)
{
    memset(g, 0, sizeof *g);
    g->last_op = g->first_call = -1;
    g->span_lo = UINT64_MAX;
    int32_t ss = m->calls[rt].stream;
    int32_t dev = m->streams[ss].device;
    uint32_t t1 = m->calls[rs].rec->tid, t2 = m->calls[rt].rec->tid;
    for (int32_t j = rs + 1; j < rt; j++) {
        const ss_call *c = &m->calls[j];
        if (c->rec->tid != t1 && c->rec->tid != t2) continue;
        if (!ss_hb_call_epoch(h, j) || c->stream < 0) continue;
        int32_t sdev = m->streams[c->stream].device;
        if (dev >= 0 && sdev >= 0 && sdev != dev) continue;
        /* each op judged at its own place (a graph's node before an event
         * record node of the graph is ordered by that node's event) */
        uint32_t nops = 0, uncovered = 0;
        for (int32_t o = c->first_op; o >= 0; o = m->ops[o].next_of_call) {
            const ss_gpu_op *op = &m->ops[o];
            nops++;
            if (op->start < g->span_lo) g->span_lo = op->start;
            if (op->end > g->span_hi) g->span_hi = op->end;
            if (c->stream == ss || ss_hb_op_before(h, o, vc)) continue;
            uncovered++;
            if (op->end > g->last_end) { g->last_end = op->end; g->last_op = o; }
        }
        /* without a GPU timeline the call counts as one */
        if (nops ? !uncovered : (c->stream == ss || ss_hb_call_before(h, j, vc))) continue;
        g->nops += nops ? uncovered : 1;
        if (g->first_call < 0) g->first_call = j;
        add_stream(g, c->stream);
    }
}

/* Did Python library code make this measurement on its own account?  Its
 * innermost frame (past frames of a function named elapsed_time, the
 * framework's wrapper that the program calls to read its own events) is a
 * library's, not the program's: "file (function)" into where, 1. */
static int library_measurement(const ss_model *m, const ss_call *c, char *where, size_t len)
{
    const ss_pystack_rec *p = c ? ss_model_pystack(m, c->rec->pystack_id) : NULL;
    if (!p || !p->depth) return 0;
    const ss_pyframe *fr = ss_rec_tail(&p->h, sizeof(*p));
    for (uint32_t i = 0; i < p->depth; i++) {
        ss_string_ref file = ss_model_string(m, fr[i].file_id), fn = ss_model_string(m, fr[i].func_id);
        if (!file.s) return 0;
        if (ss_pyfile_is_user(file.s, file.len)) return 0;
        if (fn.s && fn.len == 12 && !memcmp(fn.s, "elapsed_time", 12)) continue;
        /* the path from the package's root: torch/nn/parallel/distributed.py */
        size_t n;
        const char *s = ss_pyfile_package_path(file.s, file.len, &n);
        snprintf(where, len, "%.*s (%.*s)", (int)(n < 160 ? n : 160), s, (int)(!fn.s ? 0 : fn.len < 80 ? fn.len : 80),
                 fn.s ? fn.s : "");
        return 1;
    }
    return 0;
}

static void report(const ss_model *m, ss_findings *out, int32_t ei, int32_t rs, int32_t rt, const gap *g,
                   const ss_u64map *ts, const uint64_t *est_done)
{
    const ss_call *e = &m->calls[ei];
    char sd[96], measured[200], when[200], span[160], msg[1400];
    int64_t ts0 = device_ts(ts, &m->calls[rs]), ts1 = device_ts(ts, &m->calls[rt]);
    uint64_t stop_done = 0;
    if (ts0 > 0 && ts1 >= ts0) {
        stop_done = (uint64_t)ts1;
        snprintf(measured, sizeof measured, "measured %.3f ms (the events' GPU timestamps)",
                 ss_ms((uint64_t)(ts1 - ts0)));
    } else if (m->nops && est_done[rt] >= est_done[rs]) {
        stop_done = est_done[rt];
        snprintf(measured, sizeof measured,
                 "measured about %.3f ms (estimated from the GPU timeline: the trace has no event timestamps)",
                 ss_ms(est_done[rt] - est_done[rs]));
    } else {
        snprintf(measured, sizeof measured, "measured an unknown time (no event timestamps or GPU timeline)");
    }
    if (!g->last_end)
        snprintf(when, sizeof when, "when they ended is unknown (no GPU timeline)");
    else if (!stop_done)
        snprintf(when, sizeof when, "the last of them ended at +%.3f ms into the trace",
                 ss_ms(g->last_end - m->t_first));
    else if (g->last_end > stop_done)
        snprintf(when, sizeof when, "the last of them ended %.3f ms after stop completed",
                 ss_ms(g->last_end - stop_done));
    else
        snprintf(when, sizeof when,
                 "this time the last of them happened to end %.3f ms before stop completed, which nothing "
                 "guarantees", ss_ms(stop_done - g->last_end));
    if (g->span_hi > g->span_lo)
        snprintf(span, sizeof span, "; the work submitted between the two records really took %.3f ms (first "
                 "start to last end)", ss_ms(g->span_hi - g->span_lo));
    else
        span[0] = 0;
    snprintf(msg, sizeof msg,
             "%s(start, stop) %s, but stop was recorded on %s, which is not ordered after %u operation%s "
             "submitted between the two records on %u other stream%s: %s%s. The elapsed time does not "
             "include that work",
             ss_model_call_name(m, e), measured, ss_stream_describe(m, m->calls[rt].stream, sd, sizeof sd),
             g->nops, g->nops == 1 ? "" : "s", g->nstreams, g->nstreams == 1 ? "" : "s", when, span);
    int32_t ucall = g->last_op >= 0 ? m->ops[g->last_op].call : g->first_call;
    /* the site is the elapsed-time call's; when only stop's record has a
     * call stack (a shim that does not unwind for cudaEventElapsedTime), the
     * record's: both name the same measurement */
    const ss_api_rec *er = e->rec, *sr = m->calls[rt].rec;
    int by_stop = !er->stack_id && !er->pystack_id && (sr->stack_id || sr->pystack_id);
    char where[300], lmsg[1800];
    int by_library = library_measurement(m, &m->calls[by_stop ? rt : ei], where, sizeof where);
    if (by_library)
        snprintf(lmsg, sizeof lmsg, "a measurement made inside %s, which your code called, not by your code: %s",
                 where, msg);
    ss_occurrence o = {
        .rule = "event-timing-gap",
        .severity = by_library ? SS_SEV_INFO : SS_SEV_WARNING,
        .fixed_severity = 1,
        .cost_ms = 0,
        .cost_basis = "0 ms: the measurement is wrong, the program is not slower",
        .message = by_library ? lmsg : msg,
        .fix = by_library
                   ? "Nothing to change in your code: the library times with these events for itself, and its "
                     "numbers (not your program's) leave that work out. If you read them (DDP's runtime "
                     "statistics, a benchmark helper's result), know that they time one stream."
                   : "Make stop's stream wait for every worker stream before recording stop: cudaEventRecord(ev_i, "
                     "worker_i) on each worker stream + cudaStreamWaitEvent(stop_stream, ev_i), then "
                     "cudaEventRecord(stop, stop_stream); or time with host timers around cudaDeviceSynchronize(). "
                     "Under --default-stream per-thread, stream 0 is the calling thread's own stream and orders no "
                     "other stream.",
        .refs = { { by_stop ? rt : ei, -1, by_stop ? "stop record" : "elapsed time" },
                  { by_stop ? ei : rt, -1, by_stop ? "elapsed time" : "stop record" },
                  { ucall, g->last_op, "not covered" }, { rs, -1, "start record" } },
        .nrefs = 4,
        .alloc = -1,
    };
    ss_findings_add(out, m, &o);
}

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->ncalls || !m->nstreams) return;
    ss_hb *h = ss_hb_new(m);
    ss_u64map rec_of = { 0 }, ts = { 0 };
    for (uint32_t i = 0; i < m->ncuda_events; i++) {
        const ss_cuda_event_rec *r = m->cuda_events[i];
        if (r->g.corr && r->g.start) ss_u64map_put(&ts, r->g.corr, (int64_t)r->g.start);
    }
    /* per stream: end of the last op of the submissions applied so far; per
     * record call: when its event completed, estimated from its stream */
    uint64_t *last_end = ss_xcalloc(m->nstreams, sizeof(uint64_t));
    uint64_t *est_done = ss_xcalloc(m->ncalls, sizeof(uint64_t));
    int32_t done_rs = -1, done_rt = -1;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        uint32_t epoch = ss_hb_apply(h, (int32_t)i);
        if (c->rec->ret != 0 || c->captured) continue;
        if (epoch && c->stream >= 0)
            for (int32_t o = c->first_op; o >= 0; o = m->ops[o].next_of_call)
                if (m->ops[o].end > last_end[c->stream]) last_end[c->stream] = m->ops[o].end;
        switch (c->cls) {
        case SS_API_EVENT_RECORD:
            if (!c->rec->event || c->stream < 0 || c->event < 0) break;
            ss_u64map_put(&rec_of, c->rec->event, i);
            est_done[i] = last_end[c->stream] > c->rec->t_enter ? last_end[c->stream] : c->rec->t_enter;
            break;
        case SS_API_EVENT_CREATE: case SS_API_EVENT_DESTROY:   /* a new lifetime starts unrecorded */
            if (c->rec->event) ss_u64map_del(&rec_of, c->rec->event);
            break;
        case SS_API_EVENT_ELAPSED: {
            int64_t rs = ss_u64map_get(&rec_of, c->rec->event, -1);
            int64_t rt = ss_u64map_get(&rec_of, c->rec->ptr, -1);
            if (rs < 0 || rt < 0 || rs >= rt) break;
            if (rs == done_rs && rt == done_rt) break;   /* the same measurement read again */
            done_rs = (int32_t)rs; done_rt = (int32_t)rt;
            const uint32_t *vc = ss_hb_event_clock(h, m->calls[rt].event);
            if (!vc) break;
            gap g;
            measure_gap(m, h, (int32_t)rs, (int32_t)rt, vc, &g);
            if (g.nops) report(m, out, (int32_t)i, (int32_t)rs, (int32_t)rt, &g, &ts, est_done);
            break;
        }
        default:
            break;
        }
    }
    ss_u64map_free(&rec_of);
    ss_u64map_free(&ts);
    free(last_end);
    free(est_done);
    ss_hb_free(h);
}

const ss_rule ss_rule_event_timing_gap = {
    "event-timing-gap", "event timing that does not cover the work of other streams", run,
    SS_SAMPLED_HEAD,
    0,   /* asks_memory */
    0,   /* asks_replay */
    0,   /* removes_causes */
};
