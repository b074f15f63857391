/* The JSON report (schema: docs/report-format.md); each finding through
 * the one serializer, finding_json.c. */
#include <string.h>
#include "report.h"
#include "json.h"
#include "kernel_access.h"

static void summary(ss_json *j, const ss_process_result *p)
{
    const ss_model *m = p->model;
    ss_json_obj_begin(j);
    ss_json_kdouble(j, "wall_ms", (double)(m->t_last - m->t_first) / 1e6);
    ss_json_key(j, "gpu_timeline"); ss_json_bool(j, m->has_gpu);
    const char *why = ss_no_gpu_reason(m);
    ss_json_kstr(j, "note", why);
    ss_json_key(j, "unresolved_sites");
    char uwhy[1024];
    uint32_t unresolved = ss_unresolved_sites(p, 1, uwhy, sizeof uwhy);
    if (unresolved) {
        ss_json_obj_begin(j);
        ss_json_kuint(j, "findings", unresolved);
        ss_json_kstr(j, "reason", uwhy);
        ss_json_kstr(j, "fix", SS_UNRESOLVED_FIX);
        ss_json_obj_end(j);
    } else {
        ss_json_null(j);
    }
    ss_json_key(j, "unknown_kernel_accesses");
    uint32_t kof = 0, knodis = 0;
    const char *kwhy = NULL, *kdwhy = NULL;
    uint32_t kunknown = ss_kernel_access_unknown(m, &kof, &kwhy, &knodis, &kdwhy);
    if (kunknown) {
        ss_json_obj_begin(j);
        ss_json_kuint(j, "kernels", kunknown);
        ss_json_kuint(j, "of", kof);
        ss_json_kstr(j, "reason", kwhy);
        ss_json_kuint(j, "without_disassembler", knodis);
        ss_json_kstr(j, "fix", knodis ? SS_KERNEL_ACCESS_FIX : NULL);
        ss_json_obj_end(j);
    } else {
        ss_json_null(j);
    }
    ss_json_key(j, "devices"); ss_json_arr_begin(j);
    for (uint32_t d = 0; d < m->ndevices; d++) {
        const ss_device_summary *ds = &m->devices[d];
        ss_json_obj_begin(j);
        ss_json_kint(j, "device", ds->device);
        ss_json_kdouble(j, "gpu_busy_ms", ds->busy_ns / 1e6);
        ss_json_kdouble(j, "copy_ms", ds->copy_ns / 1e6);
        ss_json_kdouble(j, "copy_compute_overlap_ms", ds->copy_overlap_ns / 1e6);
        ss_json_key(j, "copy_compute_overlap");
        if (ds->copy_ns) ss_json_double(j, (double)ds->copy_overlap_ns / ds->copy_ns); else ss_json_null(j);
        ss_json_kdouble(j, "kernel_kernel_overlap_ms", ds->multi_stream_kernel_ns / 1e6);
        ss_json_key(j, "streams"); ss_json_arr_begin(j);
        for (uint32_t s = 0; s < m->nstreams; s++) {
            const ss_stream *st = &m->streams[s];
            if (st->device != ds->device || !st->nops) continue;
            ss_json_obj_begin(j);
            ss_stream_json_members(j, m, (int32_t)s);
            ss_json_kuint(j, "stream_id", st->stream_id);
            ss_json_kdouble(j, "gpu_busy_ms", st->busy_ns / 1e6);
            ss_json_kuint(j, "ops", st->nops);
            ss_json_obj_end(j);
        }
        ss_json_arr_end(j);
        ss_json_obj_end(j);
    }
    ss_json_arr_end(j);
    ss_json_key(j, "threads"); ss_json_arr_begin(j);
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const ss_thread *th = &m->threads[t];
        ss_json_obj_begin(j);
        ss_json_kuint(j, "tid", th->tid);
        ss_json_key(j, "name");
        if (th->name) ss_json_strn(j, th->name, th->name_len); else ss_json_null(j);
        ss_json_kuint(j, "calls", th->ncalls);
        ss_json_kdouble(j, "blocked_ms", th->blocked_ns / 1e6);
        ss_json_obj_end(j);
    }
    ss_json_arr_end(j);
    ss_json_obj_end(j);
}

void ss_report_json(FILE *out, ss_process_result *procs, uint32_t n)
{
    ss_json j;
    ss_json_init(&j, out, 1);
    ss_json_obj_begin(&j);
    ss_json_kint(&j, "syncsight_report", 1);
    ss_json_kstr(&j, "version", SS_VERSION);
    ss_json_key(&j, "traces"); ss_json_arr_begin(&j);
    uint32_t sev[3] = { 0, 0, 0 };
    double cost = 0, wall = 0, saving_total = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ss_model *m = procs[i].model;
        ss_json_obj_begin(&j);
        ss_json_kstr(&j, "path", procs[i].path);
        ss_json_kuint(&j, "pid", m->hdr.pid);
        ss_json_kuint(&j, "ppid", m->hdr.ppid);
        char host[65]; memcpy(host, m->hdr.hostname, 64); host[64] = 0;
        ss_json_kstr(&j, "host", host);
        ss_json_key(&j, "truncated"); ss_json_bool(&j, m->truncated);
        if (ss_capture_line(m, NULL, 0)) {   /* sampled traces only: docs/report-format.md */
            ss_json_key(&j, "capture");
            ss_capture_json(&j, m);
        }
        ss_json_key(&j, "analyzed_span");   /* incomplete traces: docs/report-format.md */
        if (m->incomplete_why) {
            ss_json_obj_begin(&j);
            ss_json_kstr(&j, "reason", m->incomplete_why);
            ss_json_kdouble(&j, "start_ms", ss_rel_ms(m, m->t_first));
            ss_json_kdouble(&j, "end_ms", ss_rel_ms(m, m->t_last));
            ss_json_kdouble(&j, "recorded_end_ms", ss_rel_ms(m, m->recorded_end));
            ss_json_key(&j, "gpu_records_end_ms");
            if (m->gpu_records_end) ss_json_double(&j, ss_rel_ms(m, m->gpu_records_end)); else ss_json_null(&j);
            ss_json_key(&j, "host_records_end_ms");
            if (m->host_records_end) ss_json_double(&j, ss_rel_ms(m, m->host_records_end)); else ss_json_null(&j);
            ss_json_kuint(&j, "calls_not_judged", m->calls_cut);
            ss_json_kuint(&j, "ops_not_judged", m->ops_cut);
            ss_json_obj_end(&j);
        } else {
            ss_json_null(&j);
        }
        ss_json_kuint(&j, "records", m->nrecords);
        ss_json_key(&j, "summary"); summary(&j, &procs[i]);
        const ss_iterations *it = ss_iterations_of(m);
        ss_json_key(&j, "iterations");
        if (!it->found) ss_json_null(&j);
        else {
            ss_json_obj_begin(&j);
            ss_json_kstr(&j, "found_by", it->from_nvtx ? "nvtx" : "call-pattern");
            ss_json_kstr(&j, "what", it->what);
            ss_json_kuint(&j, "count", it->count);
            ss_json_kdouble(&j, "steady_start_ms", ss_rel_ms(m, it->t_start));
            ss_json_kdouble(&j, "steady_end_ms", ss_rel_ms(m, it->t_end));
            ss_json_kdouble(&j, "iteration_ms", it->steady_ns / 1e6 / it->count);
            ss_json_kdouble(&j, "setup_ms", it->setup_ns / 1e6);
            ss_json_kdouble(&j, "steady_ms", it->steady_ns / 1e6);
            ss_json_kdouble(&j, "setup_gpu_busy_ms", it->setup_busy_ns / 1e6);
            ss_json_kdouble(&j, "steady_gpu_busy_ms", it->steady_busy_ns / 1e6);
            ss_json_key(&j, "setup_dominates"); ss_json_bool(&j, it->setup_dominates);
            ss_json_obj_end(&j);
        }
        ss_json_key(&j, "environment"); ss_json_obj_begin(&j);
        for (const char *const *e = ss_decisive_env; *e; e++) {
            char v[256];
            if (ss_model_env(m, *e, v, sizeof v)) ss_json_kstr(&j, *e, v);
            else { ss_json_key(&j, *e); ss_json_null(&j); }
        }
        ss_json_obj_end(&j);
        ss_json_key(&j, "saving_total_ms");
        if (procs[i].findings.saving_total_known) ss_json_double(&j, procs[i].findings.saving_total_ms);
        else ss_json_null(&j);
        ss_json_kuint(&j, "findings_not_shown", procs[i].not_shown);
        if (procs[i].findings.saving_total_known && procs[i].findings.saving_total_ms > saving_total)
            saving_total = procs[i].findings.saving_total_ms;
        ss_json_obj_end(&j);
        double w = (double)(m->t_last - m->t_first) / 1e6;
        if (w > wall) wall = w;
        for (uint32_t k = 0; k < procs[i].findings.n; k++) {
            sev[procs[i].findings.v[k].severity]++;
            cost += procs[i].findings.v[k].cost_ms;
        }
    }
    ss_json_arr_end(&j);
    ss_json_key(&j, "summary"); ss_json_obj_begin(&j);
    ss_json_kuint(&j, "processes", n);
    ss_json_kdouble(&j, "max_wall_ms", wall);
    ss_json_kuint(&j, "errors", sev[SS_SEV_ERROR]);
    ss_json_kuint(&j, "warnings", sev[SS_SEV_WARNING]);
    ss_json_kuint(&j, "infos", sev[SS_SEV_INFO]);
    ss_json_kdouble(&j, "attributed_cost_ms", cost);
    ss_json_kdouble(&j, "saving_total_ms", saving_total);
    ss_json_obj_end(&j);
    ss_json_key(&j, "findings"); ss_json_arr_begin(&j);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < procs[i].findings.n; k++) {
            ss_json_obj_begin(&j);
            ss_finding_json_members(&j, &procs[i].findings.v[k], SS_FM_ALL);
            ss_json_obj_end(&j);
        }
    ss_json_arr_end(&j);
    ss_json_obj_end(&j);
    fputc('\n', out);
}
