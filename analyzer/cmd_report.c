/* `syncsight report [--format text|json] [--fail-on SEV] [-o OUT] FILE|DIR...` */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "escape.h"
#include "export.h"
#include "report.h"
#include "rule.h"
#include "util.h"

static void usage(FILE *f)
{
    fputs("usage: syncsight report [--format text|json|sarif] [--fail-on info|warning|error] [--setup] [-o OUT]\n"
          "                        FILE|DIR...\n"
          "\n"
          "Analyze syncsight traces and print the findings, ranked by the time they cost.\n"
          "A DIR reports every *.sstrace inside it (the processes of one job), then a total.\n"
          "\n"
          "  --format text|json|sarif   output format (default text; JSON schema: docs/report-format.md;\n"
          "                       SARIF 2.1.0 for code scanning: docs/viewing.md)\n"
          "  --fail-on SEVERITY   exit 1 when a finding at or above SEVERITY exists (default: never;\n"
          "                       setup findings count as info unless setup dominates the run)\n"
          "  --setup              show the findings of the setup (before the first steady iteration and\n"
          "                       after the last) in full instead of one line\n"
          "  -o OUT               write the report to OUT instead of stdout\n"
          "\n"
          "exit status: 0 ok, 1 findings at/above --fail-on, 2 usage or input error\n", f);
}

int ss_report_parse_opt(ss_report_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *val = NULL;
    int takes = 0;
    if (!strcmp(a, "--format") || !strcmp(a, "--fail-on") || !strcmp(a, "-o") || !strcmp(a, "--output")) takes = 1;
    else if (!strncmp(a, "--format=", 9)) val = a + 9;
    else if (!strncmp(a, "--fail-on=", 10)) val = a + 10;
    else if (!strncmp(a, "--output=", 9)) val = a + 9;
    else if (!strcmp(a, "--setup")) { o->show_setup = 1; return 1; }
    else return 0;
    if (takes) {
        if (*i + 1 >= argc) { fprintf(stderr, "syncsight: option %s needs a value\n", a); return -1; }
        val = argv[++*i];
    }
    if (!strncmp(a, "--format", 8)) {
        if (!strcmp(val, "json")) o->format = SS_FORMAT_JSON;
        else if (!strcmp(val, "text")) o->format = SS_FORMAT_TEXT;
        else if (!strcmp(val, "sarif")) o->format = SS_FORMAT_SARIF;
        else { fputs("syncsight: --format must be text, json or sarif\n", stderr); return -1; }
    } else if (!strncmp(a, "--fail-on", 9)) {
        ss_severity s;
        if (ss_severity_parse(val, &s)) { fputs("syncsight: --fail-on must be info, warning or error\n", stderr); return -1; }
        o->fail_on = (int)s;
    } else {
        o->output = val;
    }
    return 1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

void ss_err_path(const char *path, const char *what)
{
    fputs("syncsight: ", stderr);
    ss_escape_term(stderr, path, strlen(path));
    fprintf(stderr, ": %s\n", what);
}

char **ss_expand_inputs(char **args, int n, int *out_n)
{
    char **v = NULL;
    uint32_t nv = 0, cap = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(args[i], &st) != 0) {
            ss_err_path(args[i], strerror(errno));
            ss_free_paths(v, (int)nv);
            return NULL;
        }
        if (!S_ISDIR(st.st_mode)) {
            char *p = strdup(args[i]);
            SS_PUSH(v, nv, cap, p);
            continue;
        }
        DIR *d = opendir(args[i]);
        if (!d) { ss_err_path(args[i], strerror(errno)); ss_free_paths(v, (int)nv); return NULL; }
        uint32_t first = nv;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!ends_with(e->d_name, ".sstrace")) continue;
            size_t dl = strlen(args[i]);
            while (dl > 1 && args[i][dl - 1] == '/') dl--;   /* "dir/" -> "dir/x", not "dir//x" */
            char *p = ss_xrealloc(NULL, dl + strlen(e->d_name) + 2);
            sprintf(p, "%.*s/%s", (int)dl, args[i], e->d_name);
            SS_PUSH(v, nv, cap, p);
        }
        closedir(d);
        if (nv == first) { ss_err_path(args[i], "no *.sstrace files in this directory"); ss_free_paths(v, (int)nv); return NULL; }
        ss_qsort(v + first, nv - first, sizeof(char *), cmp_str);
    }
    *out_n = (int)nv;
    return v;
}

void ss_free_paths(char **paths, int n)
{
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

int ss_analyze_files(char **paths, int n, const char *verb, ss_process_result *procs, int *loaded)
{
    *loaded = 0;
    for (int i = 0; i < n; i++) {
        char err[256] = "";
        ss_model *m = ss_model_load(paths[i], err, sizeof err);
        if (!m) { ss_err_path(paths[i], err[0] ? err : "cannot read"); return SS_EXIT_USAGE; }
        if (m->truncated) {
            char msg[400];
            snprintf(msg, sizeof msg, "warning: truncated trace (%s); %s up to its last complete block",
                     m->truncated_why, verb);
            ss_err_path(paths[i], msg);
        }
        ss_process_result *p = &procs[(*loaded)++];
        p->path = paths[i];
        p->model = m;
        ss_findings_init(&p->findings);
        ss_rules_run_all(m, &p->findings);
        ss_findings_finish(&p->findings, m->t_last - m->t_first);
    }
    return SS_EXIT_OK;
}

int ss_report_files(char **paths, int n, const ss_report_opts *o, FILE *fallback_out)
{
    ss_process_result *procs = ss_xcalloc((size_t)n, sizeof(ss_process_result));
    int loaded = 0;
    int rc = ss_analyze_files(paths, n, "analyzing", procs, &loaded);
    if (rc == SS_EXIT_OK) {
        FILE *out = fallback_out;
        if (o->output) {
            out = fopen(o->output, "w");
            if (!out) { ss_err_path(o->output, strerror(errno)); rc = SS_EXIT_USAGE; }
        }
        if (out) {
            switch (o->format) {
            case SS_FORMAT_SARIF: ss_export_sarif(out, procs, (uint32_t)loaded); break;
            case SS_FORMAT_JSON: ss_report_json(out, procs, (uint32_t)loaded); break;
            default: {
                int color = !o->output && isatty(fileno(out)) && !getenv("NO_COLOR");
                ss_report_text(out, procs, (uint32_t)loaded, color, o->show_setup);
                break;
            }
            }
            if (fflush(out) != 0 || ferror(out)) { fputs("syncsight: error writing the report\n", stderr); rc = SS_EXIT_USAGE; }
            if (out != fallback_out) fclose(out);
        }
        if (rc == SS_EXIT_OK && o->fail_on >= 0)
            for (int i = 0; i < loaded; i++)
                for (uint32_t k = 0; k < procs[i].findings.n; k++)
                    if ((int)procs[i].findings.v[k].severity >= o->fail_on) rc = SS_EXIT_FINDINGS;
    }
    for (int i = 0; i < loaded; i++) { ss_findings_free(&procs[i].findings); ss_model_free(procs[i].model); }
    free(procs);
    return rc;
}

int ss_cmd_report(int argc, char **argv)
{
    ss_report_opts o = { SS_FORMAT_TEXT, -1, NULL, 0 };
    char **inputs = ss_xcalloc((size_t)argc, sizeof(char *));
    int ninputs = 0, only_files = 0;
    for (int i = 1; i < argc; i++) {
        if (!only_files && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) { usage(stdout); free(inputs); return 0; }
        if (!only_files && !strcmp(argv[i], "--")) { only_files = 1; continue; }
        if (!only_files) {
            int r = ss_report_parse_opt(&o, argc, argv, &i);
            if (r < 0) { free(inputs); return SS_EXIT_USAGE; }
            if (r > 0) continue;
            if (argv[i][0] == '-' && argv[i][1]) {
                fprintf(stderr, "syncsight: report: unknown option %s (see syncsight report --help)\n", argv[i]);
                free(inputs);
                return SS_EXIT_USAGE;
            }
        }
        inputs[ninputs++] = argv[i];
    }
    if (!ninputs) { fputs("syncsight: report: no trace given (see syncsight report --help)\n", stderr); free(inputs); return SS_EXIT_USAGE; }
    int n = 0;
    char **paths = ss_expand_inputs(inputs, ninputs, &n);
    free(inputs);
    if (!paths) return SS_EXIT_USAGE;
    int rc = ss_report_files(paths, n, &o, stdout);
    ss_free_paths(paths, n);
    return rc;
}
