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


/* ---- the command --------------------------------------------------------- */

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
    ss_format fmt = SS_FORMAT_NONE;
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
            /* "json" is Chrome's trace-event JSON here, not the report */
            if (!strcmp(v, "perfetto") || !strcmp(v, "chrome") || !strcmp(v, "json")) fmt = SS_FORMAT_PERFETTO;
            else if (!strcmp(v, "nvtxt")) fmt = SS_FORMAT_NVTXT;
            else if (!strcmp(v, "html")) fmt = SS_FORMAT_HTML;
            else if (!strcmp(v, "sarif")) fmt = SS_FORMAT_SARIF;
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
    if (fmt == SS_FORMAT_NONE) { fputs("syncsight: export: --format is required (see syncsight export --help)\n", stderr); free(inputs); return SS_EXIT_USAGE; }
    if (!ninputs) { fputs("syncsight: export: no trace given (see syncsight export --help)\n", stderr); free(inputs); return SS_EXIT_USAGE; }
    int n = 0;
    char **paths = ss_expand_inputs(inputs, ninputs, &n);
    free(inputs);
    if (!paths) return SS_EXIT_USAGE;
    if (fmt == SS_FORMAT_NVTXT && n != 1) {
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
            case SS_FORMAT_PERFETTO: r = ss_export_perfetto_job(out, procs, (uint32_t)loaded); break;
            case SS_FORMAT_NVTXT: r = ss_export_nvtxt(out, &procs[0], &nv, err, sizeof err); break;
            case SS_FORMAT_HTML: r = ss_export_html_job(out, procs, (uint32_t)loaded); break;
            case SS_FORMAT_SARIF: ss_export_sarif(out, procs, (uint32_t)loaded); break;
            case SS_FORMAT_NONE: case SS_FORMAT_TEXT: case SS_FORMAT_JSON: break;   /* not export formats */
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
