/* The subcommands of build/syncsight (one file each) and what they share. */
#ifndef SYNCSIGHT_ANALYZER_COMMANDS_H
#define SYNCSIGHT_ANALYZER_COMMANDS_H

#include <stdio.h>

/* exit codes (docs/cli.md) */
enum { SS_EXIT_OK = 0, SS_EXIT_FINDINGS = 1, SS_EXIT_USAGE = 2 };

int ss_cmd_run(int argc, char **argv);
int ss_cmd_report(int argc, char **argv);
int ss_cmd_dump(int argc, char **argv);
/* analyzer/cmd_export.c (written on top of the model by another engineer);
 * weak so that the CLI builds and says so while it does not exist. */
int ss_cmd_export(int argc, char **argv) __attribute__((weak));

/* Report options, shared by `report` and `run`. */
typedef struct ss_report_opts {
    int json;            /* --format json */
    int fail_on;         /* -1 never, else an ss_severity */
    const char *output;  /* -o OUT, NULL = stdout */
} ss_report_opts;

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
