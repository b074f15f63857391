/* The human-readable report.  Every program-provided string goes through
 * ss_escape_term(). */
#include <inttypes.h>
#include <string.h>
#include "report.h"
#include "escape.h"
#include "rule.h"
#include "callsite_view.h"   /* ss_pyfile_is_user */

double ss_rel_ms(const ss_model *m, uint64_t t)
{
    return ((double)t - (double)m->hdr.start_ns) / 1e6;
}

ss_string_ref ss_call_nvtx(const ss_model *m, const ss_call *c)
{
    ss_string_ref none = { NULL, 0 };
    const ss_nvtx_rec *r = ss_model_nvtx_at(m, c->rec->tid, c->rec->t_enter, c->rec->t_exit);
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

static void esc(FILE *out, const char *s) { ss_escape_term(out, s, strlen(s)); }

static void sev_label(FILE *out, ss_severity s, int color)
{
    const char *c = s == SS_SEV_ERROR ? "\033[1;31m" : s == SS_SEV_WARNING ? "\033[1;33m" : "\033[36m";
    fprintf(out, "%s[%s]%s", color ? c : "", ss_severity_name(s), color ? "\033[0m" : "");
}

static void print_summary(FILE *out, const ss_process_result *p)
{
    const ss_model *m = p->model;
    fputs("process ", out);
    fprintf(out, "%u (", m->hdr.pid);
    esc(out, p->path);
    fputs(")", out);
    char host[65];
    memcpy(host, m->hdr.hostname, 64); host[64] = 0;
    if (host[0]) { fputs(" on ", out); esc(out, host); }
    fputs("\n", out);
    double wall = (double)(m->t_last - m->t_first) / 1e6;
    fprintf(out, "  wall time %.3f ms, %" PRIu64 " records, %u CUDA calls, %u GPU ops\n", wall, m->nrecords,
            m->ncalls, m->nops);
    if (m->truncated) { fputs("  warning: trace is truncated (", out); esc(out, m->truncated_why); fputs("); analyzed up to its last complete block\n", out); }
    else if (m->incomplete_why && !m->incomplete_sig) fprintf(out, "  warning: incomplete trace: %s\n", m->incomplete_why);
    if (m->span_cut) {
        fprintf(out, "  note: analyzed up to %.3f ms only, where host and GPU records are both complete (GPU records end at ",
                ss_rel_ms(m, m->span_end));
        if (m->gpu_records_end) fprintf(out, "%.3f ms", ss_rel_ms(m, m->gpu_records_end)); else fputs("none", out);
        fprintf(out, ", host records at %.3f ms): %u CUDA calls and %u GPU ops after it are not judged\n",
                ss_rel_ms(m, m->host_records_end), m->calls_cut, m->ops_cut);
    }
    const char *why = ss_no_gpu_reason(m);
    if (why) fprintf(out, "  note: %s\n", why);
    for (uint32_t i = 0; i < m->nnotes; i++) {
        const ss_note_rec *n = m->notes[i];
        if (n->code == SS_NOTE_DROPPED_API || n->code == SS_NOTE_DROPPED_ACTIVITY)
            fprintf(out, "  note: %" PRIu64 " %s records were dropped by the recorder; numbers are lower bounds\n",
                    n->value, n->code == SS_NOTE_DROPPED_API ? "API" : "GPU activity");
        else if (n->code == SS_NOTE_TRACE_INCOMPLETE) fputs("  note: recording stopped early (write error)\n", out);
        else if (n->code == SS_NOTE_SIGNAL) fprintf(out, "  note: the program died of signal %" PRIu64 "\n", n->value);
    }
    for (uint32_t d = 0; d < m->ndevices; d++) {
        const ss_device_summary *ds = &m->devices[d];
        fprintf(out, "  device %d: GPU busy %.3f ms (%.1f%% of wall)", ds->device, ds->busy_ns / 1e6,
                wall > 0 ? 100.0 * ds->busy_ns / 1e6 / wall : 0.0);
        if (ds->copy_ns)
            fprintf(out, ", copy/compute overlap %.1f%% of %.3f ms copy time", 100.0 * ds->copy_overlap_ns / ds->copy_ns,
                    ds->copy_ns / 1e6);
        else
            fputs(", no copies", out);
        fprintf(out, ", kernels on >=2 streams at once %.3f ms\n", ds->multi_stream_kernel_ns / 1e6);
        for (uint32_t s = 0; s < m->nstreams; s++) {
            const ss_stream *st = &m->streams[s];
            if (st->device != ds->device || !st->nops) continue;
            char sd[96];
            fprintf(out, "    %s: busy %.3f ms, %u ops\n", ss_stream_describe(m, (int32_t)s, sd, sizeof sd),
                    st->busy_ns / 1e6, st->nops);
        }
    }
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const ss_thread *th = &m->threads[t];
        if (!th->ncalls) continue;   /* it only passed host synchronization on */
        fprintf(out, "  thread %u", th->tid);
        if (th->name) { fputs(" (", out); ss_escape_term(out, th->name, th->name_len); fputs(")", out); }
        fprintf(out, ": %u CUDA calls, blocked in synchronizing calls %.3f ms\n", th->ncalls, th->blocked_ns / 1e6);
    }
}

/* Native frames: the user's frames are shown, runs of other frames (the
 * recorder, CUDA, PyTorch, the interpreter) fold into one line with their
 * count, and at most MAX_USER_FRAMES user frames are printed. */
#define MAX_USER_FRAMES 8
#define MAX_PY_FRAMES 12
typedef struct frame_ctx { FILE *out; uint32_t user_shown, folded, total_folded, total; } frame_ctx;

static void flush_folded(frame_ctx *f)
{
    if (!f->folded) return;
    fprintf(f->out, "        ... %u frame%s not in your code\n", f->folded, f->folded == 1 ? "" : "s");
    f->folded = 0;
}

static void print_frame(void *ctx, const char *text, int is_user)
{
    frame_ctx *f = ctx;
    f->total++;
    if (!is_user || f->user_shown >= MAX_USER_FRAMES) { f->folded++; f->total_folded++; return; }
    flush_folded(f);
    fprintf(f->out, "      * %s\n", text);   /* text is escaped by findings.c */
    f->user_shown++;
}

static void print_python_stack(FILE *out, const ss_model *m, uint32_t pystack_id)
{
    const ss_pystack_rec *p = ss_model_pystack(m, pystack_id);
    if (!p || !p->depth) return;
    if (sizeof(*p) + (uint64_t)p->depth * sizeof(ss_pyframe) > p->h.size) return;
    const ss_pyframe *fr = ss_rec_tail(&p->h, sizeof(*p));
    fputs("  python stack (* = your code, innermost first):\n", out);
    for (uint32_t i = 0; i < p->depth && i < MAX_PY_FRAMES; i++) {
        ss_string_ref file = ss_model_string(m, fr[i].file_id), func = ss_model_string(m, fr[i].func_id);
        char path[512];
        size_t n = file.s ? (file.len < sizeof path - 1 ? file.len : sizeof path - 1) : 0;
        if (n) memcpy(path, file.s, n);
        path[n] = 0;
        fprintf(out, "      %s ", ss_pyfile_is_user(path) ? "*" : " ");
        if (file.s) ss_escape_term(out, file.s, file.len); else fputs("?", out);
        fprintf(out, ":%u ", fr[i].line);
        if (func.s) ss_escape_term(out, func.s, func.len); else fputs("?", out);
        fputs("\n", out);
    }
    if (p->depth > MAX_PY_FRAMES) fprintf(out, "        ... %u outer frames\n", p->depth - MAX_PY_FRAMES);
}

static void print_stacks(FILE *out, ss_process_result *p, const ss_model *m, const ss_finding *x)
{
    if (x->pystack_id) print_python_stack(out, m, (uint32_t)x->pystack_id);
    if (!x->stack_id) return;
    fputs(x->pystack_id ? "  native stack (* = your code):\n" : "  stack (* = your code):\n", out);
    frame_ctx fc = { out, 0, 0, 0, 0 };
    ss_findings_stack_frames(&p->findings, m, (uint32_t)x->stack_id, print_frame, &fc);
    if (!fc.user_shown) {   /* nothing of the user's: one line instead of a list of library frames */
        fprintf(out, "        %u frame%s, none in your code\n", fc.total, fc.total == 1 ? "" : "s");
        return;
    }
    flush_folded(&fc);
}

static void print_finding(FILE *out, ss_process_result *p, const ss_finding *x, int color)
{
    const ss_model *m = x->model;
    fputs("\n", out);
    sev_label(out, x->severity, color);
    fprintf(out, " %s  cost %.3f ms", x->rule, x->cost_ms);
    if (x->count > 1) fprintf(out, " (%u occurrences)", x->count);
    fputs("  at ", out);
    fputs(x->site, out);   /* built from escaped parts */
    fputs("\n  ", out);
    esc(out, x->message);
    fputs("\n  cost: ", out);
    esc(out, x->cost_basis);
    fputs("\n", out);
    for (uint32_t r = 0; r < x->nrefs; r++) {
        const ss_finding_ref *ref = &x->refs[r];
        if (ref->call < 0 && ref->op < 0) continue;
        fprintf(out, "  %s: ", ref->role);
        if (ref->call >= 0) {
            const ss_call *c = &m->calls[ref->call];
            char sd[96];
            esc(out, ss_model_call_name(m, c));
            if (c->stream >= 0) fprintf(out, " on %s", ss_stream_describe(m, c->stream, sd, sizeof sd));
            if (c->rec->event) fprintf(out, " event 0x%llx", (unsigned long long)c->rec->event);
            fprintf(out, ", thread %u, t=%.3f ms, %.3f ms", c->rec->tid, ss_rel_ms(m, c->rec->t_enter),
                    (c->rec->t_exit > c->rec->t_enter ? c->rec->t_exit - c->rec->t_enter : 0) / 1e6);
            ss_string_ref nv = ss_call_nvtx(m, c);
            if (nv.s) { fputs(", in NVTX range \"", out); ss_escape_term(out, nv.s, nv.len); fputs("\"", out); }
        }
        if (ref->op >= 0) {
            const ss_gpu_op *op = &m->ops[ref->op];
            ss_string_ref nm = ss_model_op_name(m, op);
            fputs(ref->call >= 0 ? "; GPU: " : "GPU: ", out);
            ss_escape_term(out, nm.s, nm.len > 160 ? 160 : nm.len);
            fprintf(out, " %.3f..%.3f ms", ss_rel_ms(m, op->start), ss_rel_ms(m, op->end));
        }
        fputs("\n", out);
    }
    print_stacks(out, p, m, x);
    fputs("  fix: ", out);
    esc(out, x->fix);
    fputs("\n", out);
}

void ss_report_text(FILE *out, ss_process_result *procs, uint32_t n, int color)
{
    uint32_t total[3] = { 0, 0, 0 };
    double total_cost = 0;
    for (uint32_t i = 0; i < n; i++) {
        ss_process_result *p = &procs[i];
        if (i) fputs("\n", out);
        print_summary(out, p);
        uint32_t sev[3] = { 0, 0, 0 };
        for (uint32_t k = 0; k < p->findings.n; k++) sev[p->findings.v[k].severity]++;
        if (!p->findings.n) {
            fputs("no findings\n", out);
            continue;
        }
        fprintf(out, "\nfindings: %u (%u error, %u warning, %u info), ranked by cost\n", p->findings.n,
                sev[SS_SEV_ERROR], sev[SS_SEV_WARNING], sev[SS_SEV_INFO]);
        for (uint32_t k = 0; k < p->findings.n; k++) {
            print_finding(out, p, &p->findings.v[k], color);
            total_cost += p->findings.v[k].cost_ms;
        }
        for (int s = 0; s < 3; s++) total[s] += sev[s];
    }
    if (n > 1)
        fprintf(out, "\ntotal over %u processes: %u error, %u warning, %u info findings, %.3f ms attributed\n", n,
                total[SS_SEV_ERROR], total[SS_SEV_WARNING], total[SS_SEV_INFO], total_cost);
    /* Said once for the whole report: what keeps sites at module+offset and how to fix it. */
    uint32_t unresolved = 0;
    const char *why = NULL;
    for (uint32_t i = 0; i < n; i++) {
        unresolved += procs[i].findings.unresolved_sites;
        if (!why) why = procs[i].findings.unresolved_why;
    }
    if (unresolved)
        fprintf(out, "\nnote: call sites could not be resolved to file:line for %u finding%s (%s); to fix: %s\n",
                unresolved, unresolved == 1 ? "" : "s", why, SS_UNRESOLVED_FIX);   /* why is escaped */
}
