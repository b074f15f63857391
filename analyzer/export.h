/*
 * Exporters: the same model and findings the report uses, rendered for other
 * viewers (docs/viewing.md):
 *
 *   export_perfetto.c  Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing)
 *   export_nvtxt.c     NVTXT text for Nsight Systems' `ImportNvtxt --cmd merge`
 *   export_html.c      one self-contained HTML timeline page
 *   export_sarif.c     SARIF 2.1.0 (also `syncsight report --format sarif`)
 *
 * Every exporter streams to `out` and never holds its output in memory; the
 * tables they build are per model entity (a few bytes per call or op).  What
 * they share with the reports is in render.h.
 */
#ifndef SYNCSIGHT_ANALYZER_EXPORT_H
#define SYNCSIGHT_ANALYZER_EXPORT_H

#include <stdint.h>
#include <stdio.h>
#include "render.h"

/* Perfetto / Chrome trace-event JSON of one process.  Returns 0. */
int ss_export_perfetto(FILE *out, ss_process_result *p);
/* ... of the n processes of a job: one timeline, a process group per pid. */
int ss_export_perfetto_job(FILE *out, ss_process_result *procs, uint32_t n);

/* How NVTXT times are mapped onto the Nsight Systems timeline. */
typedef enum ss_nvtxt_time {
    SS_NVTXT_TIME_RAW = 0,     /* TimeBase = ClockMonotonicRaw (default) */
    SS_NVTXT_TIME_MANUAL,      /* TimeBase = Manual: trace-clock ns as recorded */
} ss_nvtxt_time;

typedef struct ss_nvtxt_opts {
    ss_nvtxt_time time;
    int have_raw_offset;       /* raw_offset_ns given by the user (--raw-offset-ns) */
    int64_t raw_offset_ns;     /* CLOCK_MONOTONIC_RAW - trace clock */
} ss_nvtxt_opts;

/* NVTXT of one process's findings.  Returns 0, or -1 with a one-line reason
 * in err when the time mapping cannot be established. */
int ss_export_nvtxt(FILE *out, ss_process_result *p, const ss_nvtxt_opts *o, char *err, size_t errlen);

/* The HTML timeline page of one process.  Returns 0. */
int ss_export_html(FILE *out, ss_process_result *p);
/* ... of the n processes of a job, with a process selector.  Returns 0. */
int ss_export_html_job(FILE *out, ss_process_result *procs, uint32_t n);

/* SARIF 2.1.0 log with one run covering all processes. */
void ss_export_sarif(FILE *out, ss_process_result *procs, uint32_t n);

#endif
