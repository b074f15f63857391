/*
 * The reports of analysis results: the text report (report_text.c) and the
 * JSON report (report_json.c, schema in docs/report-format.md).  What they
 * share with the exporters is in render.h.
 */
#ifndef SYNCSIGHT_ANALYZER_REPORT_H
#define SYNCSIGHT_ANALYZER_REPORT_H

#include <stdio.h>
#include "render.h"

/* show_setup: setup findings in full, not folded into one line. */
void ss_report_text(FILE *out, ss_process_result *procs, uint32_t n, int color, int show_setup);
void ss_report_json(FILE *out, ss_process_result *procs, uint32_t n);

#endif
