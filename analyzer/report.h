/*
 * Rendering of analysis results: the text report (report_text.c) and the
 * JSON report (report_json.c, schema in docs/report-format.md).
 */
#ifndef SYNCSIGHT_ANALYZER_REPORT_H
#define SYNCSIGHT_ANALYZER_REPORT_H

#include <stdio.h>
#include "model.h"
#include "findings.h"

/* One analyzed process (trace file). */
typedef struct ss_process_result {
    const char *path;
    ss_model *model;
    ss_findings findings;
} ss_process_result;

void ss_report_text(FILE *out, ss_process_result *procs, uint32_t n, int color);
void ss_report_json(FILE *out, ss_process_result *procs, uint32_t n);

/* Helpers shared by the renderers. */
double ss_rel_ms(const ss_model *m, uint64_t t);   /* ms since the header's start */
/* Text of the NVTX range enclosing a call, or NULL (ref into the trace). */
ss_string_ref ss_call_nvtx(const ss_model *m, const ss_call *c);
/* Why the trace has no GPU timeline, or NULL when it has one. */
const char *ss_no_gpu_reason(const ss_model *m);

#endif
