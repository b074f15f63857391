/*
 * `syncsight export --format perfetto|nvtxt|html|sarif [-o FILE] TRACE...`
 *
 * Loads the trace(s), runs the rules exactly as `report` does, and hands the
 * model and findings to one exporter (export.h).  nvtxt annotates one
 * process's Nsight Systems report, so it takes exactly one trace; perfetto,
 * html and sarif take several (a DIR of traces, like `report`): one timeline
 * (one page, one SARIF run) with a process group per pid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "escape.h"
#include "export.h"
#include "rule.h"
#include "util.h"

static void usage(FILE *f)
{
    fputs("usage: syncsight export --format perfetto|nvtxt|html|sarif [-o FILE] [options] TRACE|DIR...\n"
          "\n"
          "Write a trace and its findings in a format other viewers read (docs/viewing.md).\n"
          "\n"
          "  --format perfetto    Chrome trace-event JSON for ui.perfetto.dev and chrome://tracing\n"
          "  --format nvtxt       the findings as NVTXT for Nsight Systems: ImportNvtxt --cmd merge (one trace)\n"
          "  --format html        one self-contained HTML page with the timeline and the findings\n"
          "  --format sarif       SARIF 2.1.0 (code scanning)\n"
          "  A DIR (or several traces) of a multi-process job gives one timeline, a process\n"
          "  group per pid (html: with a process selector).\n"
          "  -o FILE              output file (default: stdout)\n"
          "\n"
          "nvtxt only:\n"
          "  --time-base raw      TimeBase = ClockMonotonicRaw (default): times converted to\n"
          "                       CLOCK_MONOTONIC_RAW, see docs/viewing.md for how and when it is exact\n"
          "  --time-base manual   TimeBase = Manual: trace-clock ns as recorded (merge with --mode lerp)\n"
          "  --raw-offset-ns N    CLOCK_MONOTONIC_RAW minus the trace clock at the time of the run,\n"
          "                       when exporting on another machine or after a reboot\n"
          "\n"
          "exit status: 0 ok, 2 usage or input error (traces that cannot be read are named\n"
          "on stderr and left out; the others are still exported)\n", f);
}


/* ---- shared helpers ------------------------------------------------------ */

ss_string_ref ss_export_call_label(const ss_model *m, const ss_call *c)
{
    if (c->cls == SS_API_LAUNCH && c->first_op >= 0) return ss_model_op_name(m, &m->ops[c->first_op]);
    const char *n = ss_model_call_name(m, c);
    ss_string_ref r = { n ? n : "?", (uint32_t)strlen(n ? n : "?") };
    return r;
}

void ss_export_time_shifts(ss_process_result *procs, uint32_t n, int64_t *shift)
{
    int one_host = 1;
    for (uint32_t i = 1; i < n; i++)
        if (strncmp(procs[i].model->hdr.hostname, procs[0].model->hdr.hostname, sizeof procs[0].model->hdr.hostname))
            one_host = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ss_file_header *h = &procs[i].model->hdr;
        shift[i] = one_host ? 0 : (int64_t)(h->start_realtime_ns - h->start_ns);
    }
}

ss_string_ref ss_export_meta(const ss_model *m, const char *key)
{
    ss_string_ref none = { NULL, 0 };
    size_t klen = strlen(key);
    for (uint32_t i = 0; i < m->nmetas; i++) {
        const ss_meta_rec *r = m->metas[i];
        /* the record's own sizes are checked against its length: a damaged
         * record must not make us read past it */
        if ((uint64_t)sizeof(*r) + r->key_len + 1 + r->value_len > r->h.size) continue;
        const char *k = ss_rec_tail(&r->h, sizeof(*r));
        if (r->key_len == klen && !memcmp(k, key, klen)) {
            ss_string_ref v = { k + r->key_len + 1, r->value_len };
            return v;
        }
    }
    return none;
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

ss_flow_pair *ss_export_event_flows(const ss_model *m, uint32_t *n)
{
    ss_flow_pair *v = NULL;
    uint32_t nv = 0, cap = 0;
    ss_u64map last_record = { 0 };   /* event handle -> call index of its latest record */
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        uint64_t ev = c->rec->event;
        if (!ev) continue;
        switch (c->cls) {
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

/* ---- the command --------------------------------------------------------- */

enum fmt { FMT_NONE, FMT_PERFETTO, FMT_NVTXT, FMT_HTML, FMT_SARIF };

/* Value of an option given as "--opt V" or "--opt=V"; advances *i. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *bad)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (!strncmp(a, name, n) && a[n] == '=') return a + n + 1;
    if (strcmp(a, name)) return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "syncsight: export: option %s needs a value\n", name);
        *bad = 1;
        return NULL;
    }
    return argv[++*i];
}

int ss_cmd_export(int argc, char **argv)
{
    enum fmt fmt = FMT_NONE;
    const char *output = NULL;
    ss_nvtxt_opts nv = { SS_NVTXT_TIME_RAW, 0, 0 };
    char **inputs = ss_xcalloc((size_t)argc, sizeof(char *));
    int ninputs = 0, only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int bad = 0;
        if (only_files) { inputs[ninputs++] = argv[i]; continue; }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); free(inputs); return SS_EXIT_OK; }
        if (!strcmp(argv[i], "--")) { only_files = 1; continue; }
        if ((v = opt_value(argc, argv, &i, "--format", &bad))) {
            if (!strcmp(v, "perfetto") || !strcmp(v, "chrome") || !strcmp(v, "json")) fmt = FMT_PERFETTO;
            else if (!strcmp(v, "nvtxt")) fmt = FMT_NVTXT;
            else if (!strcmp(v, "html")) fmt = FMT_HTML;
            else if (!strcmp(v, "sarif")) fmt = FMT_SARIF;
            else { fputs("syncsight: export: --format must be perfetto, nvtxt, html or sarif\n", stderr); bad = 1; }
        } else if (!bad && ((v = opt_value(argc, argv, &i, "-o", &bad)) || (v = opt_value(argc, argv, &i, "--output", &bad)))) {
            output = v;
        } else if (!bad && (v = opt_value(argc, argv, &i, "--time-base", &bad))) {
            if (!strcmp(v, "raw")) nv.time = SS_NVTXT_TIME_RAW;
            else if (!strcmp(v, "manual")) nv.time = SS_NVTXT_TIME_MANUAL;
            else { fputs("syncsight: export: --time-base must be raw or manual\n", stderr); bad = 1; }
        } else if (!bad && (v = opt_value(argc, argv, &i, "--raw-offset-ns", &bad))) {
            char *end;
            errno = 0;
            long long off = strtoll(v, &end, 10);
            if (errno || end == v || *end) { fputs("syncsight: export: --raw-offset-ns needs an integer\n", stderr); bad = 1; }
            nv.have_raw_offset = 1;
            nv.raw_offset_ns = off;
        } else if (!bad && argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "syncsight: export: unknown option %s (see syncsight export --help)\n", argv[i]);
            bad = 1;
        } else if (!bad) {
            inputs[ninputs++] = argv[i];
        }
        if (bad) { free(inputs); return SS_EXIT_USAGE; }
    }
    if (fmt == FMT_NONE) { fputs("syncsight: export: --format is required (see syncsight export --help)\n", stderr); free(inputs); return SS_EXIT_USAGE; }
    if (!ninputs) { fputs("syncsight: export: no trace given (see syncsight export --help)\n", stderr); free(inputs); return SS_EXIT_USAGE; }
    int n = 0;
    char **paths = ss_expand_inputs(inputs, ninputs, &n);
    free(inputs);
    if (!paths) return SS_EXIT_USAGE;
    if (fmt == FMT_NVTXT && n != 1) {
        fprintf(stderr, "syncsight: export: nvtxt annotates one process's Nsight Systems report; %d traces given "
                "(export them one by one)\n", n);
        ss_free_paths(paths, n);
        return SS_EXIT_USAGE;
    }

    ss_process_result *procs = ss_xcalloc((size_t)n, sizeof(ss_process_result));
    int loaded = 0;
    /* Bad traces of a job are named on stderr (one line each) and left out:
     * the others are exported, and the exit status is 2. */
    int bad_inputs = ss_analyze_files(paths, n, "exporting", procs, &loaded) != SS_EXIT_OK;
    int rc = loaded ? SS_EXIT_OK : SS_EXIT_USAGE;
    if (loaded) {
        FILE *out = stdout;
        if (output && strcmp(output, "-")) {
            out = fopen(output, "w");
            if (!out) { ss_err_path(output, strerror(errno)); rc = SS_EXIT_USAGE; }
        }
        if (out) {
            char err[256] = "";
            int r = 0;
            switch (fmt) {
            case FMT_PERFETTO: r = ss_export_perfetto_job(out, procs, (uint32_t)loaded); break;
            case FMT_NVTXT: r = ss_export_nvtxt(out, &procs[0], &nv, err, sizeof err); break;
            case FMT_HTML: r = ss_export_html_job(out, procs, (uint32_t)loaded); break;
            case FMT_SARIF: ss_export_sarif(out, procs, (uint32_t)loaded); break;
            default: break;
            }
            if (r) { fprintf(stderr, "syncsight: export: %s\n", err[0] ? err : "failed"); rc = SS_EXIT_USAGE; }
            if (fflush(out) != 0 || ferror(out)) { fputs("syncsight: export: error writing the output\n", stderr); rc = SS_EXIT_USAGE; }
            if (out != stdout) {
                if (fclose(out) != 0 && rc == SS_EXIT_OK) { fputs("syncsight: export: error writing the output\n", stderr); rc = SS_EXIT_USAGE; }
                /* a failed export leaves no half-written file behind */
                if (rc != SS_EXIT_OK) remove(output);
            }
        }
    }
    for (int i = 0; i < loaded; i++) { ss_findings_free(&procs[i].findings); ss_model_free(procs[i].model); }
    free(procs);
    ss_free_paths(paths, n);
    return bad_inputs ? SS_EXIT_USAGE : rc;
}
