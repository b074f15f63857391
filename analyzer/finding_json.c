/* The one JSON form of a finding (render.h; members: docs/report-format.md). */
#include <string.h>

#include "escape.h"
#include "render.h"

static void hex_member(ss_json *j, const char *key, uint64_t v, int present)
{
    ss_json_key(j, key);
    if (!present) { ss_json_null(j); return; }
    char b[32];
    snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
    ss_json_str(j, b);
}

/* Display text written terminal-safe (the report promises it for `site`). */
static void term_safe_str(ss_json *j, const char *text)
{
    char safe[4096];
    ss_escape_term_buf(safe, sizeof safe, text, strlen(text));
    ss_json_str(j, safe);
}

void ss_stream_json_members(ss_json *j, const ss_model *m, int32_t s)
{
    if (s < 0) {
        ss_json_key(j, "stream"); ss_json_null(j); ss_json_key(j, "stream_kind"); ss_json_null(j);
        ss_json_key(j, "stream_name"); ss_json_null(j);
        return;
    }
    const ss_stream *st = &m->streams[s];
    hex_member(j, "stream", st->kind == SS_STREAM_LEGACY_NULL ? 0 : st->handle, 1);
    ss_json_kstr(j, "stream_kind", ss_stream_kind_name(st->kind));
    char name[160];
    ss_stream_describe(m, s, name, sizeof name);
    ss_json_key(j, "stream_name");
    term_safe_str(j, name);
}


static void native_frame(void *ctx, uint32_t i, const ss_frame *shown, int is_user)
{
    (void)i;
    ss_json *j = ctx;
    char text[1024];
    ss_frame_format(shown, text, sizeof text);
    ss_json_obj_begin(j);
    ss_json_key(j, "frame"); term_safe_str(j, text);
    ss_json_key(j, "user"); ss_json_bool(j, is_user);
    ss_json_obj_end(j);
}

static void python_frame(void *ctx, uint32_t i, ss_string_ref file, uint32_t line, ss_string_ref function, int is_user)
{
    (void)i; (void)is_user;
    ss_json *j = ctx;
    ss_json_obj_begin(j);
    ss_json_key(j, "file"); ss_json_strn(j, file.s ? file.s : "?", file.s ? file.len : 1);
    ss_json_kuint(j, "line", line);
    ss_json_key(j, "function"); ss_json_strn(j, function.s ? function.s : "?", function.s ? function.len : 1);
    ss_json_key(j, "python"); ss_json_bool(j, 1);
    ss_json_obj_end(j);
}

static void calls_member(ss_json *j, const ss_finding *x)
{
    const ss_model *m = x->model;
    ss_json_key(j, "calls"); ss_json_arr_begin(j);
    for (uint32_t r = 0; r < x->nrefs; r++) {
        const ss_finding_ref *ref = &x->refs[r];
        if (ref->call < 0 && ref->op < 0) continue;
        ss_json_obj_begin(j);
        ss_json_kstr(j, "role", ref->role);
        if (ref->call >= 0) {
            const ss_call *c = &m->calls[ref->call];
            ss_json_kstr(j, "api", ss_model_call_name(m, c));
            ss_stream_json_members(j, m, c->stream);
            hex_member(j, "event", c->rec->event, c->rec->event != 0);
            ss_json_kuint(j, "tid", c->rec->tid);
            ss_json_kdouble(j, "t_ms", ss_rel_ms(m, c->rec->t_enter));
            ss_json_kdouble(j, "dur_ms", (c->rec->t_exit > c->rec->t_enter ? c->rec->t_exit - c->rec->t_enter : 0) / 1e6);
            ss_string_ref nv = ss_call_nvtx(m, c);
            ss_json_key(j, "nvtx");
            if (nv.s) ss_json_strn(j, nv.s, nv.len); else ss_json_null(j);
        } else {
            ss_stream_json_members(j, m, m->ops[ref->op].stream);
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
}

static void buffer_member(ss_json *j, const ss_finding *x)
{
    const ss_model *m = x->model;
    const ss_alloc *a = &m->allocs[x->alloc];
    ss_json_key(j, "buffer"); ss_json_obj_begin(j);
    hex_member(j, "ptr", a->ptr, 1);
    ss_json_kuint(j, "size", a->size);
    ss_json_kstr(j, "kind", a->kind == SS_MEM_PINNED ? "pinned" : a->kind == SS_MEM_MANAGED ? "managed" : "device");
    ss_json_kstr(j, "allocated_by", a->alloc_call >= 0 ? ss_model_call_name(m, &m->calls[a->alloc_call]) : NULL);
    ss_json_key(j, "allocated_t_ms"); ss_json_double(j, ss_rel_ms(m, a->t_alloc));
    ss_json_obj_end(j);
}

void ss_finding_json_members(ss_json *j, const ss_finding *x, unsigned members)
{
    if (members & SS_FM_RULE) ss_json_kstr(j, "rule", x->rule);
    if (members & SS_FM_SEVERITY) ss_json_kstr(j, "severity", ss_severity_name(x->severity));
    if (members & SS_FM_COST) {
        ss_json_kdouble(j, "cost_ms", x->cost_ms);
        /* the what-if replay's saving; null where the finding names no
         * cause the replay can remove (a correctness finding) */
        ss_json_key(j, "saving_ms");
        if (x->saving_known) ss_json_double(j, x->saving_ms); else ss_json_null(j);
    }
    if (members & SS_FM_COST_BASIS) ss_json_kstr(j, "cost_basis", x->cost_basis);
    if (members & SS_FM_MESSAGE) ss_json_kstr(j, "message", x->message);
    if (members & SS_FM_FIX) ss_json_kstr(j, "fix", x->fix);
    if (members & SS_FM_COUNT) {
        ss_json_kuint(j, "count", x->count);
        /* made inside NCCL's own calls: the text report folds these into one line */
        ss_json_key(j, "inside_nccl"); ss_json_bool(j, x->in_nccl);
        /* made by a library the user's code called (cuBLAS, cuDNN, ...) */
        if (x->library) { ss_json_key(j, "inside_library"); term_safe_str(j, x->library); }
    }
    if (members & SS_FM_SITE) {
        char site[1024];
        ss_finding_site_text(x, site, sizeof site);
        ss_json_key(j, "site"); term_safe_str(j, site);
    }
    if (members & SS_FM_STACK) {
        ss_json_key(j, "stack"); ss_json_arr_begin(j);
        if (x->stack_id) ss_model_stack_walk(x->model, (uint32_t)x->stack_id, native_frame, j);
        if (x->pystack_id) ss_model_pystack_walk(x->model, (uint32_t)x->pystack_id, python_frame, j);
        ss_json_arr_end(j);
    }
    if (members & SS_FM_CALLS) calls_member(j, x);
    if ((members & SS_FM_BUFFER) && x->alloc >= 0) buffer_member(j, x);
    if (members & SS_FM_PHASE) {
        ss_json_kstr(j, "phase", ss_phase_name(x->phase));
        ss_json_key(j, "folded"); ss_json_bool(j, x->folded);
        ss_json_kstr(j, "cost_severity", ss_severity_name(x->cost_severity));
        ss_json_kdouble(j, "steady_cost_ms", x->steady_cost_ms);
        ss_json_kuint(j, "steady_count", x->steady_count);
        double per = ss_finding_cost_per_iteration(x);
        ss_json_key(j, "cost_per_iteration_ms");
        if (per >= 0) ss_json_double(j, per); else ss_json_null(j);
    }
    if (members & SS_FM_PROCESS) ss_json_kuint(j, "process", x->pid);
}
