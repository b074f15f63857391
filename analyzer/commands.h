/* The subcommands of build/syncsight (one file each) and what they share. */
#ifndef SYNCSIGHT_ANALYZER_COMMANDS_H
#define SYNCSIGHT_ANALYZER_COMMANDS_H

#include <stdint.h>
#include <stdio.h>

/* exit codes (docs/cli.md) */
enum { SS_EXIT_OK = 0, SS_EXIT_FINDINGS = 1, SS_EXIT_USAGE = 2 };

int ss_cmd_run(int argc, char **argv);
int ss_cmd_report(int argc, char **argv);
int ss_cmd_dump(int argc, char **argv);
/* dump's work: every record of the trace at `path` into out (text, or JSON
 * Lines with json), a truncation's warning into warn.  0, or SS_EXIT_USAGE
 * with a one-line reason in err (the caller names the file). */
int ss_dump_file(FILE *out, FILE *warn, const char *path, int json, char *err, size_t errlen);
int ss_cmd_export(int argc, char **argv);

/* What --format names: the reports (`report`, `run`) and the exports. */
typedef enum ss_format {
    SS_FORMAT_NONE = 0,     /* not given */
    SS_FORMAT_TEXT,         /* the text report (report_text.c) */
    SS_FORMAT_JSON,         /* the JSON report (report_json.c) */
    SS_FORMAT_SARIF,        /* SARIF 2.1.0 (export_sarif.c), a report and an export */
    SS_FORMAT_PERFETTO,     /* Chrome trace-event JSON (export_perfetto.c) */
    SS_FORMAT_NVTXT,        /* NVTXT for Nsight Systems (export_nvtxt.c) */
    SS_FORMAT_HTML,         /* the HTML timeline page (export_html.c) */
} ss_format;

/* --color */
enum { SS_COLOR_AUTO = 0, SS_COLOR_ALWAYS, SS_COLOR_NEVER };

/* The trace `report` reads, and `run` writes, when given none (like perf.data). */
#define SS_DEFAULT_DATA "syncsight.data"

/* Report options, shared by `report` and `run`.  The filters choose what is
 * reported (and what --fail-on judges): the findings of the rules named, at
 * or above a severity, the first N of each process, the processes named. */
typedef struct ss_report_opts {
    ss_format format;    /* --format: TEXT, JSON or SARIF */
    int fail_on;         /* -1 never, else an ss_severity */
    const char *output;  /* -o OUT, NULL = stdout */
    const char *rules;   /* --rule ID[,ID...], NULL = all */
    int min_severity;    /* --min-severity, an ss_severity (0 = all) */
    uint32_t top;        /* --top N, 0 = all */
    const char *pids;    /* --pid PID[,PID...], NULL = all */
    int color;           /* --color: SS_COLOR_* */
    int show_setup;      /* --setup: show setup findings in full in the text report */
} ss_report_opts;

/* The report option lines of `report --help` and `run --help`. */
extern const char ss_report_opts_help[];

/* Parse one report option at argv[*i] (advancing *i past its value).
 * Returns 1 when consumed, 0 when not a report option, -1 on a bad value
 * (message printed). */
int ss_report_parse_opt(ss_report_opts *o, int argc, char **argv, int *i);

/* Load, analyze and report the given trace files (already expanded), to
 * `o->output` or `fallback_out`.  Returns the exit code. */
int ss_report_files(char **paths, int n, const ss_report_opts *o, FILE *fallback_out);

/* Expand FILE|DIR arguments into trace paths (DIR: every *.sstrace inside,
 * sorted; anything else, even a path that does not exist, is kept for its
 * load to name what is wrong with it).  Returns a malloc'ed array (entries
 * malloc'ed) or NULL with a message printed (a directory that cannot be
 * listed or holds no trace). */
char **ss_expand_inputs(char **args, int n, int *out_n);
void ss_free_paths(char **paths, int n);

/* "syncsight: PATH: what" on stderr, PATH escaped for the terminal. */
void ss_err_path(const char *path, const char *what);

/* Load each trace and run every rule on it, into procs[0..*loaded).  A
 * truncated trace gets a one-line warning ("<verb> up to its last complete
 * block"); an unreadable one gets one line naming it and what is wrong, and
 * is left out.  Returns SS_EXIT_USAGE when any was left out (the others are
 * still in procs), else SS_EXIT_OK. */
struct ss_process_result;
int ss_analyze_files(char **paths, int n, const char *verb, struct ss_process_result *procs, int *loaded);

#endif
