/*
 * Shared by the analyzer's fuzz targets and tests/test_analyzer_export.c: one
 * file loaded and judged as `syncsight report` does it (ss_analyze_files):
 * the model, every rule, the findings finished.  A failed load must say why,
 * and what it says (and a truncated trace's reason), which the CLI prints to
 * a terminal, must be safe there whatever bytes the file held.
 */
#ifndef SYNCSIGHT_FUZZ_JUDGE_H
#define SYNCSIGHT_FUZZ_JUDGE_H

#include "output_checks.h"

#include "findings.h"
#include "model.h"
#include "render.h"
#include "rule.h"

/* NULL when text s (a reason the CLI prints) is terminal-safe, else why */
static inline const char *judge_reason_safe(const char *what, const char *s)
{
    const char *why = oc_terminal(s, strlen(s));
    if (!why) return NULL;
    char where[80];
    snprintf(where, sizeof where, "%.50s is not terminal-safe: ", what);
    return oc_prefixed(where, why);
}

/* proc->model set (free with fuzz_unjudge) when the file is a trace, NULL
 * when not; returns what broke a promise, or NULL */
static inline const char *fuzz_judge(const char *path, ss_process_result *proc)
{
    char err[256];
    err[0] = '\0';
    memset(proc, 0, sizeof *proc);
    ss_model *m = ss_model_load(path, err, sizeof err);
    if (!m) return err[0] ? judge_reason_safe("ss_model_load's reason", err) : "ss_model_load failed without a reason";
    proc->path = path;
    proc->model = m;
    ss_findings_init(&proc->findings);
    ss_rules_run_all(m, &proc->findings);
    ss_findings_finish(&proc->findings, m->t_last > m->t_first ? m->t_last - m->t_first : 0);
    return m->truncated ? judge_reason_safe("the truncation's reason", m->truncated_why) : NULL;
}

static inline void fuzz_unjudge(ss_process_result *proc)
{
    if (!proc->model) return;
    ss_findings_free(&proc->findings);
    ss_model_free(proc->model);
    proc->model = NULL;
}

#endif
