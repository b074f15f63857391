/* The JSON report (schema: docs/report-format.md). */
#include <string.h>
#include "report.h"
#include "json.h"
#include "rule.h"

static void hex_or_null(ss_json *j, const char *key, uint64_t v, int present)
{
    ss_json_key(j, key);
    if (!present) { ss_json_null(j); return; }
    char b[32];
    snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
    ss_json_str(j, b);
}

static void stream_fields(ss_json *j, const ss_model *m, int32_t s)
{
    if (s < 0) { ss_json_key(j, "stream"); ss_json_null(j); ss_json_key(j, "stream_kind"); ss_json_null(j); return; }
    const ss_stream *st = &m->streams[s];
    hex_or_null(j, "stream", st->kind == SS_STREAM_LEGACY_NULL ? 0 : st->handle, 1);
    ss_json_kstr(j, "stream_kind", ss_stream_kind_name(st->kind));
}

static void summary(ss_json *j, const ss_process_result *p)
{
    const ss_model *m = p->model;
    ss_json_obj_begin(j);
    ss_json_kdouble(j, "wall_ms", (double)(m->t_last - m->t_first) / 1e6);
    ss_json_key(j, "gpu_timeline"); ss_json_bool(j, m->has_gpu);
    const char *why = ss_no_gpu_reason(m);
    ss_json_kstr(j, "note", why);
    ss_json_key(j, "unresolved_sites");
    if (p->findings.unresolved_sites) {
        ss_json_obj_begin(j);
        ss_json_kuint(j, "findings", p->findings.unresolved_sites);
        ss_json_kstr(j, "reason", p->findings.unresolved_why);
        ss_json_kstr(j, "fix", SS_UNRESOLVED_FIX);
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
            stream_fields(j, m, (int32_t)s);
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

typedef struct frame_ctx { ss_json *j; } frame_ctx;
static void json_frame(void *ctx, const char *text, int is_user)
{
    frame_ctx *f = ctx;
    ss_json_obj_begin(f->j);
    ss_json_kstr(f->j, "frame", text);
    ss_json_key(f->j, "user"); ss_json_bool(f->j, is_user);
    ss_json_obj_end(f->j);
}

static void finding(ss_json *j, ss_process_result *p, const ss_finding *x)
{
    const ss_model *m = x->model;
    ss_json_obj_begin(j);
    ss_json_kstr(j, "rule", x->rule);
    ss_json_kstr(j, "severity", ss_severity_name(x->severity));
    ss_json_kdouble(j, "cost_ms", x->cost_ms);
    ss_json_kstr(j, "cost_basis", x->cost_basis);
    ss_json_kstr(j, "message", x->message);
    ss_json_kstr(j, "fix", x->fix);
    ss_json_kuint(j, "count", x->count);
    ss_json_kstr(j, "site", x->site);
    ss_json_key(j, "stack"); ss_json_arr_begin(j);
    if (x->stack_id) {
        frame_ctx fc = { j };
        ss_findings_stack_frames(&p->findings, m, (uint32_t)x->stack_id, json_frame, &fc);
    }
    const ss_pystack_rec *py = ss_model_pystack(m, (uint32_t)x->pystack_id);
    if (py) {
        const ss_pyframe *fr = ss_rec_tail(&py->h, sizeof(*py));
        for (uint32_t i = 0; i < py->depth; i++) {
            ss_string_ref file = ss_model_string(m, fr[i].file_id), fn = ss_model_string(m, fr[i].func_id);
            ss_json_obj_begin(j);
            ss_json_key(j, "file"); ss_json_strn(j, file.s ? file.s : "?", file.s ? file.len : 1);
            ss_json_kuint(j, "line", fr[i].line);
            ss_json_key(j, "function"); ss_json_strn(j, fn.s ? fn.s : "?", fn.s ? fn.len : 1);
            ss_json_key(j, "python"); ss_json_bool(j, 1);
            ss_json_obj_end(j);
        }
    }
    ss_json_arr_end(j);
    ss_json_key(j, "calls"); ss_json_arr_begin(j);
    for (uint32_t r = 0; r < x->nrefs; r++) {
        const ss_finding_ref *ref = &x->refs[r];
        if (ref->call < 0 && ref->op < 0) continue;
        ss_json_obj_begin(j);
        ss_json_kstr(j, "role", ref->role);
        if (ref->call >= 0) {
            const ss_call *c = &m->calls[ref->call];
            ss_json_kstr(j, "api", ss_model_call_name(m, c));
            stream_fields(j, m, c->stream);
            hex_or_null(j, "event", c->rec->event, c->rec->event != 0);
            ss_json_kuint(j, "tid", c->rec->tid);
            ss_json_kdouble(j, "t_ms", ss_rel_ms(m, c->rec->t_enter));
            ss_json_kdouble(j, "dur_ms", (c->rec->t_exit > c->rec->t_enter ? c->rec->t_exit - c->rec->t_enter : 0) / 1e6);
            ss_string_ref nv = ss_call_nvtx(m, c);
            ss_json_key(j, "nvtx");
            if (nv.s) ss_json_strn(j, nv.s, nv.len); else ss_json_null(j);
        } else {
            stream_fields(j, m, m->ops[ref->op].stream);
        }
        if (ref->op >= 0) {
            const ss_gpu_op *op = &m->ops[ref->op];
            ss_string_ref nm = ss_model_op_name(m, op);
            ss_json_key(j, "gpu"); ss_json_obj_begin(j);
            ss_json_key(j, "name"); ss_json_strn(j, nm.s, nm.len);
            ss_json_kint(j, "device", ss_op_device(op));
            ss_json_kdouble(j, "start_ms", ss_rel_ms(m, op->start));
            ss_json_kdouble(j, "dur_ms", (op->end - op->start) / 1e6);
            ss_json_obj_end(j);
        }
        ss_json_obj_end(j);
    }
    ss_json_arr_end(j);
    if (x->alloc >= 0) {
        const ss_alloc *a = &m->allocs[x->alloc];
        ss_json_key(j, "buffer"); ss_json_obj_begin(j);
        hex_or_null(j, "ptr", a->ptr, 1);
        ss_json_kuint(j, "size", a->size);
        ss_json_kstr(j, "kind", a->kind == SS_MEM_PINNED ? "pinned" : a->kind == SS_MEM_MANAGED ? "managed" : "device");
        ss_json_kstr(j, "allocated_by", a->alloc_call >= 0 ? ss_model_call_name(m, &m->calls[a->alloc_call]) : NULL);
        ss_json_key(j, "allocated_t_ms"); ss_json_double(j, ss_rel_ms(m, a->t_alloc));
        ss_json_obj_end(j);
    }
    ss_json_kuint(j, "process", x->pid);
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
    double cost = 0, wall = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ss_model *m = procs[i].model;
        ss_json_obj_begin(&j);
        ss_json_kstr(&j, "path", procs[i].path);
        ss_json_kuint(&j, "pid", m->hdr.pid);
        ss_json_kuint(&j, "ppid", m->hdr.ppid);
        char host[65]; memcpy(host, m->hdr.hostname, 64); host[64] = 0;
        ss_json_kstr(&j, "host", host);
        ss_json_key(&j, "truncated"); ss_json_bool(&j, m->truncated);
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
    ss_json_obj_end(&j);
    ss_json_key(&j, "findings"); ss_json_arr_begin(&j);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < procs[i].findings.n; k++) finding(&j, &procs[i], &procs[i].findings.v[k]);
    ss_json_arr_end(&j);
    ss_json_obj_end(&j);
    fputc('\n', out);
}
