/* What the renderers share (see render.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "capture_windows.h"
#include "util.h"

double ss_rel_ms(const ss_model *m, uint64_t t)
{
    return ((double)t - (double)m->hdr.start_ns) / 1e6;
}

ss_string_ref ss_call_nvtx(const ss_model *m, const ss_call *c)
{
    ss_string_ref none = { NULL, 0 };
    const ss_nvtx_rec *r = ss_model_call_nvtx(m, c);
    return r ? ss_model_string(m, r->name_id) : none;
}

const char *ss_no_gpu_reason(const ss_model *m)
{
    if (m->has_gpu) return NULL;
    if (m->cupti_state == 1)
        return "another tool held CUPTI (Nsight, a profiler or a sanitizer): no GPU timeline; only host-side "
               "rules were applied";
    if (m->cupti_state == 2)
        return "CUPTI was unavailable: no GPU timeline; only host-side rules were applied";
    if (!m->ncalls) return "no CUDA activity was recorded";
    return "no GPU activity records: only host-side rules were applied";
}

int ss_finding_span(const ss_finding *x, uint64_t *t0, uint64_t *t1, uint32_t *tid, int32_t *stream)
{
    const ss_model *m = x->model;
    for (uint32_t r = 0; r < x->nrefs; r++) {
        const ss_finding_ref *ref = &x->refs[r];
        if (ref->call >= 0) {
            const ss_call *c = &m->calls[ref->call];
            *t0 = c->rec->t_enter;
            *t1 = c->rec->t_exit > c->rec->t_enter ? c->rec->t_exit : c->rec->t_enter;
            *tid = c->rec->tid;
            *stream = c->stream;
            return 1;
        }
        if (ref->op >= 0) {
            const ss_gpu_op *op = &m->ops[ref->op];
            *t0 = op->start;
            *t1 = op->end > op->start ? op->end : op->start;
            /* an op's host side is the thread that submitted it, when known */
            *tid = op->call >= 0 ? m->calls[op->call].rec->tid : m->hdr.pid;
            *stream = op->stream;
            return 1;
        }
    }
    return 0;
}

ss_flow_pair *ss_event_flows(const ss_model *m, uint32_t *n)
{
    ss_flow_pair *v = NULL;
    uint32_t nv = 0, cap = 0;
    ss_u64map last_record = { 0 };   /* event handle -> call index of its latest record */
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        uint64_t ev = c->rec->event;
        if (!ev) continue;
        switch (c->cls) {
        case SS_API_LAUNCH:   /* recording its event through a launch attribute */
            if (!ss_call_records_event(c)) break;
            __attribute__((fallthrough));
        case SS_API_EVENT_RECORD:
            if (c->rec->ret == 0) ss_u64map_put(&last_record, ev, (int64_t)i);
            break;
        case SS_API_EVENT_CREATE:
        case SS_API_EVENT_DESTROY:
            /* a new lifetime of the handle: earlier records do not count */
            ss_u64map_del(&last_record, ev);
            break;
        case SS_API_EVENT_QUERY:
            /* a query that found the event still pending waited for nothing */
            if (c->rec->ret != 0) break;
            /* fall through */
        case SS_API_STREAM_WAIT:
        case SS_API_EVENT_SYNC: {
            int64_t rec = ss_u64map_get(&last_record, ev, -1);
            if (rec >= 0) {
                ss_flow_pair p = { (int32_t)rec, (int32_t)i };
                SS_PUSH(v, nv, cap, p);
            }
            break;
        }
        default:
            break;
        }
    }
    ss_u64map_free(&last_record);
    *n = nv;
    return v;
}

void ss_finding_site_text(const ss_finding *x, char *buf, size_t len)
{
    ss_site site;
    ss_finding_site(x, &site);
    ss_site_text(x->model, &site, buf, len);
}

uint32_t ss_unresolved_sites(const ss_process_result *procs, uint32_t n, char *why, size_t len)
{
    uint32_t count = 0;
    if (len) why[0] = '\0';
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < procs[i].findings.n; k++) {
            const ss_finding *x = &procs[i].findings.v[k];
            ss_site site;
            ss_finding_site(x, &site);
            char w[1024];
            if (!ss_site_unresolved(x->model, &site, w, sizeof w)) continue;
            if (!count && len) snprintf(why, len, "%s", w);
            count++;
        }
    return count;
}

ss_string_ref ss_timeline_label(const ss_model *m, const ss_call *c)
{
    if (c->cls == SS_API_LAUNCH && c->first_op >= 0) return ss_model_op_name(m, &m->ops[c->first_op]);
    const char *n = ss_model_call_name(m, c);
    ss_string_ref r = { n ? n : "?", (uint32_t)strlen(n ? n : "?") };
    return r;
}

int64_t ss_job_time_shifts(const ss_process_result *procs, uint32_t n, int64_t *shift)
{
    int one_host = 1;
    for (uint32_t i = 1; i < n; i++)
        if (strncmp(procs[i].model->hdr.hostname, procs[0].model->hdr.hostname, sizeof procs[0].model->hdr.hostname))
            one_host = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ss_file_header *h = &procs[i].model->hdr;
        shift[i] = one_host ? 0 : (int64_t)(h->start_realtime_ns - h->start_ns);
    }
    int64_t base = INT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const ss_model *m = procs[i].model;
        uint64_t b = m->hdr.start_ns;
        if (m->t_first && m->t_first < b) b = m->t_first;
        if ((int64_t)b + shift[i] < base) base = (int64_t)b + shift[i];
    }
    return base;
}

const char *ss_capture_line(const ss_model *m, char *buf, size_t len)
{
    const ss_capture *c = ss_capture_of(m);
    if (!c || !c->sampled) return NULL;
    double tpct = c->run_ns ? 100.0 * (double)c->recorded_ns / (double)c->run_ns : 100.0;
    const ss_capture_span *head = &c->spans[0];
    char calls[200];
    if (c->count_partial)
        /* The calls made while OFF reached the shim through CUPTI callbacks
         * only, which were off: their number is not known. */
        snprintf(calls, sizeof calls, " (%" PRIu64 " hot calls recorded; those made between windows reach syncsight "
                 "only through CUPTI callbacks and were not counted)", c->recorded_hot_calls);
    else
        snprintf(calls, sizeof calls, " and %.0f%% of its hot calls (%" PRIu64 " of %s%" PRIu64 ")",
                 c->total_hot_calls ? 100.0 * (double)c->recorded_hot_calls / (double)c->total_hot_calls : 100.0,
                 c->recorded_hot_calls, c->total_is_lower_bound ? "at least " : "", c->total_hot_calls);
    snprintf(buf, len,
             "sampled: recorded %.0f%% of the run's time%s: a head of %" PRIu64 " hot calls, then %u window%s; "
             "counts and savings cover the recorded part",
             tpct, calls, head->hot_off - head->hot_on, c->windows, c->windows == 1 ? "" : "s");
    return buf ? buf : "";   /* asked only whether the trace is sampled */
}

void ss_capture_json(ss_json *j, const ss_model *m)
{
    const ss_capture *c = ss_capture_of(m);
    ss_json_obj_begin(j);
    ss_json_key(j, "sampled"); ss_json_bool(j, c && c->sampled);
    if (c && c->sampled) {
        ss_json_kuint(j, "recorded_hot_calls", c->recorded_hot_calls);
        ss_json_kuint(j, "total_hot_calls", c->total_hot_calls);
        ss_json_key(j, "total_is_lower_bound"); ss_json_bool(j, c->total_is_lower_bound);
        ss_json_key(j, "hot_call_count_partial"); ss_json_bool(j, c->count_partial);
        ss_json_kdouble(j, "recorded_time_fraction", c->run_ns ? (double)c->recorded_ns / (double)c->run_ns : 1.0);
        ss_json_kuint(j, "windows", c->windows);
        ss_json_key(j, "spans"); ss_json_arr_begin(j);
        for (uint32_t i = 0; i < c->nspans; i++) {
            const ss_capture_span *sp = &c->spans[i];
            ss_json_obj_begin(j);
            ss_json_kuint(j, "window", sp->window);
            ss_json_kdouble(j, "start_ms", ss_rel_ms(m, sp->t_on > m->t_first ? sp->t_on : m->t_first));
            ss_json_key(j, "end_ms");
            if (sp->t_off != UINT64_MAX) ss_json_double(j, ss_rel_ms(m, sp->t_off)); else ss_json_null(j);
            ss_json_kuint(j, "hot_calls", sp->hot_off > sp->hot_on ? sp->hot_off - sp->hot_on : 0);
            ss_json_obj_end(j);
        }
        ss_json_arr_end(j);
    }
    ss_json_obj_end(j);
}
