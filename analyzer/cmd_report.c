/* `syncsight report [OPTIONS] [FILE|DIR...]` (ss_report_opts_help) */
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

const char ss_report_opts_help[] =
    "  --format text|json|sarif   output format (default text; JSON schema: docs/report-format.md;\n"
    "                       SARIF 2.1.0 for code scanning: docs/viewing.md)\n"
    "  --fail-on SEVERITY   exit 1 when a reported finding is at or above SEVERITY (default: never;\n"
    "                       setup findings count as info unless setup dominates the run)\n"
    "  --setup              show the findings of the setup (before the first steady iteration and\n"
    "                       after the last) in full instead of one line\n"
    "  --rule ID[,ID...]    report only these rules' findings (ids: docs/rules/)\n"
    "  --min-severity SEV   report only findings at or above SEV (info, warning, error)\n"
    "  --top N              report only the first N findings of each process, in the report's order\n"
    "  --pid PID[,PID...]   report only these processes of a job\n"
    "  --color WHEN         auto (default: on a terminal, unless NO_COLOR is set or TERM=dumb),\n"
    "                       always or never: colour the text report's severities\n";

static void usage(FILE *f)
{
    fputs("usage: syncsight report [OPTIONS] [FILE|DIR...]\n"
          "\n"
          "Analyze syncsight traces and print the findings, ranked by the time they cost.\n"
          "A DIR reports every *.sstrace inside it (the processes of one job), then a total.\n"
          "Without FILE|DIR: ./" SS_DEFAULT_DATA " (what `syncsight run` writes by default).\n"
          "\n", f);
    fputs(ss_report_opts_help, f);
    fputs("  -o OUT               write the report to OUT instead of stdout (- is stdout)\n"
          "\n"
          "exit status: 0 ok, 1 findings at/above --fail-on, 2 usage or input error (a trace of\n"
          "a DIR or list that cannot be read is named on stderr and the others reported: 2)\n"
          "\n"
          "SYNCSIGHT_SYMBOL_PATH=DIR:... finds moved binaries or their NAME.debug files for call\n"
          "sites (more in syncsight --help and docs/cli.md)\n", f);
}

/* "a,b,c" holds `item` (len bytes) as one of its elements. */
static int list_has(const char *list, const char *item, size_t len)
{
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == len && !memcmp(p, item, len)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static int check_rules(const char *list)
{
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int known = 0;
        for (int i = 0; ss_rules[i]; i++)
            if (strlen(ss_rules[i]->id) == n && !memcmp(ss_rules[i]->id, p, n)) known = 1;
        if (!known) {
            fprintf(stderr, "syncsight: --rule: unknown rule '%.*s' (the rules:", (int)(n > 80 ? 80 : n), p);
            for (int i = 0; ss_rules[i]; i++) fprintf(stderr, " %s", ss_rules[i]->id);
            fputs(")\n", stderr);
            return -1;
        }
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static int check_pids(const char *list)
{
    const char *p = list;
    for (;;) {
        char *end = NULL;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v == 0 || v > UINT32_MAX || (*end && *end != ',')) {
            fputs("syncsight: --pid must be a process id or a comma-separated list of them\n", stderr);
            return -1;
        }
        if (!*end) return 0;
        p = end + 1;
    }
}

int ss_report_parse_opt(ss_report_opts *o, int argc, char **argv, int *i)
{
    static const char *const names[] = { "--format", "--fail-on", "-o", "--output", "--rule", "--min-severity",
                                         "--top", "--pid", "--color" };
    const char *a = argv[*i];
    if (!strcmp(a, "--setup")) { o->show_setup = 1; return 1; }
    const char *val = NULL, *name = NULL;
    for (size_t k = 0; k < sizeof names / sizeof names[0] && !name; k++) {
        size_t n = strlen(names[k]);
        if (!strcmp(a, names[k])) {
            if (*i + 1 >= argc) { fprintf(stderr, "syncsight: option %s needs a value\n", a); return -1; }
            name = names[k];
            val = argv[++*i];
        } else if (names[k][1] == '-' && !strncmp(a, names[k], n) && a[n] == '=') {
            name = names[k];
            val = a + n + 1;
        }
    }
    if (!name) return 0;
    if (!strcmp(name, "--format")) {
        if (!strcmp(val, "json")) o->format = SS_FORMAT_JSON;
        else if (!strcmp(val, "text")) o->format = SS_FORMAT_TEXT;
        else if (!strcmp(val, "sarif")) o->format = SS_FORMAT_SARIF;
        else { fprintf(stderr, "syncsight: --format must be text, json or sarif, not '%s'\n", val); return -1; }
    } else if (!strcmp(name, "--fail-on") || !strcmp(name, "--min-severity")) {
        ss_severity s;
        if (ss_severity_parse(val, &s)) { fprintf(stderr, "syncsight: %s must be info, warning or error, not '%s'\n", name, val); return -1; }
        if (name[2] == 'f') o->fail_on = (int)s; else o->min_severity = (int)s;
    } else if (!strcmp(name, "--rule")) {
        if (check_rules(val)) return -1;
        o->rules = val;
    } else if (!strcmp(name, "--top")) {
        char *end = NULL;
        unsigned long v = strtoul(val, &end, 10);
        if (!*val || *end || v == 0 || v > UINT32_MAX) { fprintf(stderr, "syncsight: --top must be a positive number, not '%s'\n", val); return -1; }
        o->top = (uint32_t)v;
    } else if (!strcmp(name, "--pid")) {
        if (check_pids(val)) return -1;
        o->pids = val;
    } else if (!strcmp(name, "--color")) {
        if (!strcmp(val, "auto")) o->color = SS_COLOR_AUTO;
        else if (!strcmp(val, "always")) o->color = SS_COLOR_ALWAYS;
        else if (!strcmp(val, "never")) o->color = SS_COLOR_NEVER;
        else { fprintf(stderr, "syncsight: --color must be auto, always or never, not '%s'\n", val); return -1; }
    } else {
        o->output = val;
    }
    return 1;
}

/* Whether the text report colours: --color, else (auto) a terminal that is
 * not TERM=dumb, with NO_COLOR unset or empty (no-color.org). */
static int use_color(const ss_report_opts *o, FILE *out)
{
    if (o->color != SS_COLOR_AUTO) return o->color == SS_COLOR_ALWAYS;
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
    if (no && *no) return 0;
    if (term && !strcmp(term, "dumb")) return 0;
    return (!o->output || !strcmp(o->output, "-")) && isatty(fileno(out));
}

typedef struct filter_ctx { const ss_report_opts *o; uint32_t kept; } filter_ctx;

static int keep_finding(ss_finding *x, void *ctx)
{
    filter_ctx *f = ctx;
    if (f->o->rules && !list_has(f->o->rules, x->rule, strlen(x->rule))) return 0;
    if ((int)x->severity < f->o->min_severity) return 0;
    if (f->o->top && f->kept >= f->o->top) return 0;
    f->kept++;
    return 1;
}

/* The report's filters, on the analyzed processes (in place; *loaded shrinks
 * when --pid leaves some out). */
static void apply_filters(const ss_report_opts *o, ss_process_result *procs, int *loaded)
{
    int n = 0;
    for (int i = 0; i < *loaded; i++) {
        char pid[16];
        int len = snprintf(pid, sizeof pid, "%u", procs[i].model->hdr.pid);
        if (o->pids && !list_has(o->pids, pid, (size_t)len)) {
            ss_findings_free(&procs[i].findings);
            ss_model_free(procs[i].model);
            continue;
        }
        procs[n++] = procs[i];
    }
    *loaded = n;
    for (int i = 0; i < n; i++) {
        filter_ctx f = { o, 0 };
        uint32_t before = procs[i].findings.n;
        if (o->rules || o->min_severity || o->top) ss_findings_keep_if(&procs[i].findings, 0, keep_finding, &f);
        procs[i].not_shown = before - procs[i].findings.n;
    }
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
        /* A file that cannot be read is one bad trace among the others: its
         * load names it (ss_analyze_files) and the rest is still reported. */
        if (stat(args[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
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
    int rc = SS_EXIT_OK;
    for (int i = 0; i < n; i++) {
        char err[256] = "";
        ss_model *m = ss_model_load(paths[i], err, sizeof err);
        if (!m) { ss_err_path(paths[i], err[0] ? err : "cannot read"); rc = SS_EXIT_USAGE; continue; }
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
        double t = ss_seconds();
        ss_findings_finish(&p->findings, m->t_last - m->t_first);
        ss_timing("findings.finish", t);
    }
    return rc;
}

int ss_report_files(char **paths, int n, const ss_report_opts *o, FILE *fallback_out)
{
    ss_process_result *procs = ss_xcalloc((size_t)n, sizeof(ss_process_result));
    int loaded = 0;
    /* Bad traces were named on stderr: the readable ones are reported, and
     * the exit status says that some input was bad (2, over --fail-on's 1). */
    int bad = ss_analyze_files(paths, n, "analyzing", procs, &loaded) != SS_EXIT_OK;
    int had = loaded;
    apply_filters(o, procs, &loaded);
    if (had && !loaded) {
        fprintf(stderr, "syncsight: --pid %s: no such process among the traces given\n", o->pids);
        bad = 1;
    }
    int rc = loaded ? SS_EXIT_OK : SS_EXIT_USAGE;
    if (loaded) {
        FILE *out = fallback_out;
        if (o->output && strcmp(o->output, "-") != 0) {   /* -o -: standard output, as export's */
            out = fopen(o->output, "w");
            if (!out) {
                char why[300];
                snprintf(why, sizeof why, "cannot create the report: %s", strerror(errno));
                ss_err_path(o->output, why);
                rc = SS_EXIT_USAGE;
            }
        }
        if (out) {
            double t = ss_seconds();
            switch (o->format) {
            case SS_FORMAT_SARIF: ss_export_sarif(out, procs, (uint32_t)loaded); break;
            case SS_FORMAT_JSON: ss_report_json(out, procs, (uint32_t)loaded); break;
            default: {
                ss_report_text(out, procs, (uint32_t)loaded, use_color(o, out), o->show_setup);
                break;
            }
            }
            if (fflush(out) != 0 || ferror(out)) { fputs("syncsight: error writing the report\n", stderr); rc = SS_EXIT_USAGE; }
            ss_timing("report.write", t);
            if (out != fallback_out) fclose(out);
        }
        if (rc == SS_EXIT_OK && o->fail_on >= 0)
            for (int i = 0; i < loaded; i++)
                for (uint32_t k = 0; k < procs[i].findings.n; k++)
                    if ((int)procs[i].findings.v[k].severity >= o->fail_on) rc = SS_EXIT_FINDINGS;
    }
    if (bad) rc = SS_EXIT_USAGE;
    double t = ss_seconds();
    for (int i = 0; i < loaded; i++) { ss_findings_free(&procs[i].findings); ss_model_free(procs[i].model); }
    free(procs);
    ss_timing("free", t);
    return rc;
}

int ss_cmd_report(int argc, char **argv)
{
    ss_report_opts o = { .format = SS_FORMAT_TEXT, .fail_on = -1 };
    char **inputs = ss_xcalloc((size_t)argc + 1, sizeof(char *));
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
    if (!ninputs) {
        /* like perf report: what `syncsight run` recorded here last */
        struct stat st;
        if (stat(SS_DEFAULT_DATA, &st) != 0) {
            fputs("syncsight: report: no trace given and no ./" SS_DEFAULT_DATA " here (record one with "
                  "`syncsight run -- PROG`; see syncsight report --help)\n", stderr);
            free(inputs);
            return SS_EXIT_USAGE;
        }
        inputs[ninputs++] = SS_DEFAULT_DATA;
    }
    int n = 0;
    char **paths = ss_expand_inputs(inputs, ninputs, &n);
    free(inputs);
    if (!paths) return SS_EXIT_USAGE;
    int rc = ss_report_files(paths, n, &o, stdout);
    ss_free_paths(paths, n);
    return rc;
}
