/* The human-readable report.  Every program-provided string goes through
 * ss_escape_term(). */
#include <inttypes.h>
#include <string.h>
#include "report.h"
#include "capture_windows.h"
#include "escape.h"
#include "iterations.h"
#include "kernel_access.h"

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
    /* the settings that decide queues, loading and blocking launches */
    fputs("  environment:", out);
    int any = 0;
    for (const char *const *e = ss_decisive_env; *e; e++) {
        char v[256];
        if (!ss_model_env(m, *e, v, sizeof v)) continue;
        fprintf(out, " %s=", *e);
        esc(out, v);
        any = 1;
    }
    if (!any) fputs(" none of CUDA_DEVICE_MAX_CONNECTIONS, CUDA_MODULE_LOADING, CUDA_LAUNCH_BLOCKING set", out);
    fputs("\n", out);
    double wall = (double)(m->t_last - m->t_first) / 1e6;
    fprintf(out, "  wall time %.3f ms, %" PRIu64 " records, %u CUDA call%s, %u GPU op%s\n", wall, m->nrecords,
            m->ncalls, m->ncalls == 1 ? "" : "s", m->nops, m->nops == 1 ? "" : "s");
    if (m->truncated) { fputs("  warning: trace is truncated (", out); esc(out, m->truncated_why); fputs("); analyzed up to its last complete block\n", out); }
    else if (m->incomplete_why && !m->incomplete_sig) fprintf(out, "  warning: incomplete trace: %s\n", m->incomplete_why);
    if (m->span_cut) {
        fprintf(out, "  note: analyzed up to %.3f ms only, where host and GPU records are both complete (GPU records end at ",
                ss_rel_ms(m, m->span_end));
        if (m->gpu_records_end) fprintf(out, "%.3f ms", ss_rel_ms(m, m->gpu_records_end)); else fputs("none", out);
        fprintf(out, ", host records at %.3f ms): %u CUDA calls and %u GPU ops after it are not judged\n",
                ss_rel_ms(m, m->host_records_end), m->calls_cut, m->ops_cut);
    }
    char sampled[256];
    if (ss_capture_line(m, sampled, sizeof sampled)) fprintf(out, "  %s\n", sampled);
    const char *why = ss_no_gpu_reason(m);
    if (why) fprintf(out, "  note: %s\n", why);
    for (uint32_t i = 0; i < m->nnotes; i++) {
        const ss_note_rec *n = m->notes[i];
        if (n->code == SS_NOTE_DROPPED_API || n->code == SS_NOTE_DROPPED_ACTIVITY)
            fprintf(out, "  note: %" PRIu64 " %s records were dropped by the recorder; numbers are lower bounds\n",
                    n->value, n->code == SS_NOTE_DROPPED_API ? "API" : "GPU activity");
        else if (n->code == SS_NOTE_TRACE_INCOMPLETE) fputs("  note: recording stopped early (write error)\n", out);
        else if (n->code == SS_NOTE_SIGNAL) fprintf(out, "  note: the program died of signal %" PRIu64 "\n", n->value);
        else if (n->code == SS_NOTE_CUBIN_COST) {
            /* what recording cost the program there (docs/performance.md) */
            uint32_t len = sizeof *n + (uint64_t)n->len <= n->h.size ? n->len : 0;
            fprintf(out, "  recording cost: %.3f ms on ", (double)n->value / 1e6);
            ss_escape_term(out, (const char *)ss_rec_tail(&n->h, sizeof *n), len);
            fputc('\n', out);
        }
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
    const ss_iterations *it = ss_iterations_of(m);
    if (it->found) {
        fprintf(out, "  steady state: %u iterations (", it->count);
        esc(out, it->what);
        fprintf(out, ") from t=%.3f to %.3f ms, %.3f ms per iteration; setup %.3f ms (GPU busy %.3f ms), "
                "steady %.3f ms (GPU busy %.3f ms)%s\n",
                ss_rel_ms(m, it->t_start), ss_rel_ms(m, it->t_end), it->steady_ns / 1e6 / it->count,
                it->setup_ns / 1e6, it->setup_busy_ns / 1e6, it->steady_ns / 1e6, it->steady_busy_ns / 1e6,
                it->setup_dominates ? ": setup dominates the run, its findings are shown and counted" : "");
    } else {
        /* What a user can do about it: a step range needs no search at all;
         * in a sampled trace the recorded part is what was searched (a short
         * run may end inside its head: one DDP rank of a 64-step run held
         * about 6 steps there), and recording more of the run helps too. */
        int sampled = ss_capture_sampled(m);
        fputs("  steady state: no repeated iteration found", out);
        if (sampled) fprintf(out, " in the %" PRIu64 " recorded hot calls", ss_capture_of(m)->recorded_hot_calls);
        fprintf(out, " (no NVTX range or pattern of calls repeats %d times%s): the whole run is judged as one; ",
                SS_MIN_ITERATIONS, sampled ? " there" : "");
        if (sampled) fputs("recording more of it (SYNCSIGHT_SAMPLE=off, or a run long enough to reach recording "
                           "windows) or ", out);
        fputs("an NVTX range around each step (torch.cuda.nvtx.range, nvtxRangePush) lets syncsight find its "
              "iterations\n", out);
    }
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const ss_thread *th = &m->threads[t];
        if (!th->ncalls) continue;   /* it only passed host synchronization on */
        fprintf(out, "  thread %u", th->tid);
        if (th->name) { fputs(" (", out); ss_escape_term(out, th->name, th->name_len); fputs(")", out); }
        fprintf(out, ": %u CUDA call%s, blocked in synchronizing calls %.3f ms\n", th->ncalls, th->ncalls == 1 ? "" : "s",
                th->blocked_ns / 1e6);
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

static void print_frame(void *ctx, uint32_t i, const ss_frame *shown, int is_user)
{
    (void)i;
    frame_ctx *f = ctx;
    f->total++;
    if (!is_user || f->user_shown >= MAX_USER_FRAMES) { f->folded++; f->total_folded++; return; }
    flush_folded(f);
    char text[1024];
    ss_frame_format(shown, text, sizeof text);
    fputs("      * ", f->out);
    esc(f->out, text);
    fputs("\n", f->out);
    f->user_shown++;
}

static void print_pyframe(void *ctx, uint32_t i, ss_string_ref file, uint32_t line, ss_string_ref function, int is_user)
{
    FILE *out = ctx;
    if (i >= MAX_PY_FRAMES) return;
    fprintf(out, "      %s ", is_user ? "*" : " ");
    if (file.s) ss_escape_term(out, file.s, file.len); else fputs("?", out);
    fprintf(out, ":%u ", line);
    if (function.s) ss_escape_term(out, function.s, function.len); else fputs("?", out);
    fputs("\n", out);
}

static void print_python_stack(FILE *out, const ss_model *m, uint32_t pystack_id)
{
    const ss_pystack_rec *p = ss_model_pystack(m, pystack_id);
    if (!p || !p->depth) return;
    fputs("  python stack (* = your code, innermost first):\n", out);
    ss_model_pystack_walk(m, pystack_id, print_pyframe, out);
    if (p->depth > MAX_PY_FRAMES) fprintf(out, "        ... %u outer frames\n", p->depth - MAX_PY_FRAMES);
}

static void print_stacks(FILE *out, const ss_model *m, const ss_finding *x)
{
    if (x->pystack_id) print_python_stack(out, m, (uint32_t)x->pystack_id);
    if (!x->stack_id) return;
    fputs(x->pystack_id ? "  native stack (* = your code):\n" : "  stack (* = your code):\n", out);
    frame_ctx fc = { out, 0, 0, 0, 0 };
    ss_model_stack_walk(m, (uint32_t)x->stack_id, print_frame, &fc);
    if (!fc.user_shown) {   /* nothing of the user's: one line instead of a list of library frames */
        fprintf(out, "        %u frame%s, none in your code\n", fc.total, fc.total == 1 ? "" : "s");
        return;
    }
    flush_folded(&fc);
}

static void print_finding(FILE *out, const ss_finding *x, int color)
{
    const ss_model *m = x->model;
    fputs("\n", out);
    sev_label(out, x->severity, color);
    fprintf(out, " %s  cost %.3f ms", x->rule, x->cost_ms);
    if (x->saving_known) fprintf(out, ", saves %.3f ms", x->saving_ms);
    if (x->count > 1) fprintf(out, " (%u occurrences)", x->count);
    double per = ss_finding_cost_per_iteration(x);
    if (per >= 0) {
        fprintf(out, ", %.3f ms per iteration over %u iterations", per, ss_iterations_of(m)->count);
        if (x->steady_count < x->count)   /* of the count above, not more */
            fprintf(out, " (%u of the %u occurrences were in setup)", x->count - x->steady_count, x->count);
    } else if (x->phase == SS_PHASE_SETUP && ss_iterations_of(m)->found) {
        fputs(", setup", out);
    }
    fputs("  at ", out);
    char site[1024];
    ss_finding_site_text(x, site, sizeof site);
    esc(out, site);
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
    print_stacks(out, m, x);
    fputs("  fix: ", out);
    esc(out, x->fix);
    fputs("\n", out);
}

/* The folded setup findings of a process in one line (all of them: they
 * sort last). */
static void print_setup_line(FILE *out, const ss_process_result *p, int show_setup)
{
    uint32_t n = 0;
    double cost = 0;
    for (uint32_t k = 0; k < p->findings.n; k++)
        if (p->findings.v[k].folded) { n++; cost += p->findings.v[k].cost_ms; }
    if (!n) return;
    const ss_iterations *it = ss_iterations_of(p->model);
    fprintf(out, "\nsetup: %u finding%s, %.3f ms, before the first steady iteration at t=%.3f ms or after the "
            "last at t=%.3f ms; paid once, counted as info%s\n", n, n == 1 ? "" : "s", cost,
            ss_rel_ms(p->model, it->t_start), ss_rel_ms(p->model, it->t_end),
            show_setup ? "" : "; `--setup` shows them");
}

void ss_report_text(FILE *out, ss_process_result *procs, uint32_t n, int color, int show_setup)
{
    uint32_t total[3] = { 0, 0, 0 };
    double total_cost = 0;
    for (uint32_t i = 0; i < n; i++) {
        ss_process_result *p = &procs[i];
        if (i) fputs("\n", out);
        print_summary(out, p);
        /* Findings inside NCCL's own calls are not the user's to fix: one
         * line per process says how many (the JSON report has each). */
        uint32_t sev[3] = { 0, 0, 0 }, nccl = 0, nccl_occ = 0;
        for (uint32_t k = 0; k < p->findings.n; k++) {
            const ss_finding *x = &p->findings.v[k];
            if (x->in_nccl) { nccl++; nccl_occ += x->count; }
            else sev[x->severity]++;
        }
        uint32_t mine = p->findings.n - nccl;
        if (!p->findings.n) {
            if (p->not_shown)
                fprintf(out, "no findings shown (%u left out by --rule, --min-severity or --top)\n", p->not_shown);
            else
                fputs("no findings\n", out);
            continue;
        }
        uint32_t folded = 0;
        for (uint32_t k = 0; k < p->findings.n; k++)
            folded += p->findings.v[k].folded != 0 && !p->findings.v[k].in_nccl;
        if (mine) {
            fprintf(out, "\nfindings: %u (%u error, %u warning, %u info", mine, sev[SS_SEV_ERROR],
                    sev[SS_SEV_WARNING], sev[SS_SEV_INFO]);
            if (folded) fprintf(out, "; %u of the info in setup", folded);
            fputs("), ranked by severity, then saving", out);
            fputs(ss_iterations_of(p->model)->found ? "; steady state first" : "", out);
            if (p->not_shown) fprintf(out, "; %u more left out by --rule, --min-severity or --top", p->not_shown);
            fputs("\n", out);
            if (p->findings.saving_total_known && p->findings.saving_total_ms < 0.0005)
                /* said as such: "0.000 ms sooner" read as noise */
                fprintf(out, "fixing all of them%s would not end this run sooner (what-if replay: what they name does "
                        "not hold back the end of the run)\n", p->not_shown ? ", those left out included," : "");
            else if (p->findings.saving_total_known)
                fprintf(out, "fixing all of them%s would end this run %.3f ms sooner (what-if replay; the findings "
                        "overlap, so this is not the sum of their savings)\n",
                        p->not_shown ? ", those left out included," : "", p->findings.saving_total_ms);
        } else {
            fputs("\nno findings in your code\n", out);
        }
        int setup_said = 0;
        for (uint32_t k = 0; k < p->findings.n; k++) {
            const ss_finding *x = &p->findings.v[k];
            if (x->in_nccl) continue;
            total_cost += x->cost_ms;
            if (x->folded && !setup_said) { print_setup_line(out, p, show_setup); setup_said = 1; }
            if (!x->folded || show_setup) print_finding(out, x, color);
        }
        if (nccl)
            fprintf(out, "\n%u finding%s inside NCCL, not your code (%u occurrence%s in NCCL's own CUDA calls; "
                    "--format json lists them)\n", nccl, nccl == 1 ? "" : "s", nccl_occ, nccl_occ == 1 ? "" : "s");
        for (int s = 0; s < 3; s++) total[s] += sev[s];
    }
    if (n > 1)
        fprintf(out, "\ntotal over %u processes: %u error, %u warning, %u info findings, %.3f ms attributed\n", n,
                total[SS_SEV_ERROR], total[SS_SEV_WARNING], total[SS_SEV_INFO], total_cost);
    /* Said once for the whole report: what keeps sites at module+offset and how to fix it. */
    char why[1024];
    uint32_t unresolved = ss_unresolved_sites(procs, n, why, sizeof why);
    if (unresolved) {
        fprintf(out, "\nnote: call sites could not be resolved to file:line for %u finding%s (", unresolved,
                unresolved == 1 ? "" : "s");
        esc(out, why);
        fprintf(out, "); to fix: %s\n", SS_UNRESOLVED_FIX);
    }
    /* Said once too: kernels whose parameter accesses are unknown make the
     * verdicts that depend on them "possible" (a missing .kaccess file and
     * no nvdisasm where the report is made: a trace copied to a laptop). */
    uint32_t kunknown = 0, kof = 0;
    const char *kwhy = NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t of = 0, nodis = 0;
        const char *w = NULL, *dw = NULL;
        ss_kernel_access_unknown(procs[i].model, &of, &w, &nodis, &dw);
        kunknown += nodis;   /* what can be fixed here; kernels whose code was not recorded are said per finding */
        kof += of;
        if (nodis && !kwhy) kwhy = dw;
    }
    if (kunknown) {
        fprintf(out, "\nnote: for %u of %u kernels, which pointer arguments they read or write is unknown (first: ",
                kunknown, kof);
        esc(out, kwhy ? kwhy : "?");
        fprintf(out, "); to fix: %s\n", SS_KERNEL_ACCESS_FIX);
    }
}
