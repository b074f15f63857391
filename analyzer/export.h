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
 * tables they build are per model entity (a few bytes per call or op).
 */
#ifndef SYNCSIGHT_ANALYZER_EXPORT_H
#define SYNCSIGHT_ANALYZER_EXPORT_H

#include <stdint.h>
#include <stdio.h>
#include "model.h"
#include "findings.h"
#include "report.h"

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

/* ---- shared by the exporters (cmd_export.c) ------------------------------ */

/* One "this event record satisfied that wait" pair: the latest successful
 * cudaEventRecord of the event handle before a cudaStreamWaitEvent,
 * cudaEventSynchronize or cudaEventQuery on it (within one lifetime of the
 * handle: create/destroy reset it).  Calls are model call indexes. */
typedef struct ss_flow_pair { int32_t record_call, wait_call; } ss_flow_pair;

/* All pairs, sorted by wait_call (the order they are found in). Caller frees. */
ss_flow_pair *ss_export_event_flows(const ss_model *m, uint32_t *n);

/* Start and end (trace clock) of a finding's first involved call or op:
 * the place to draw it.  Returns 0 when the finding references nothing. */
int ss_finding_span(const ss_finding *x, uint64_t *t0, uint64_t *t1, uint32_t *tid, int32_t *stream);

/* Short label of a call for timelines: API name, or the kernel name for a
 * launch.  Points into the model or a static string. */
ss_string_ref ss_export_call_label(const ss_model *m, const ss_call *c);

/* Per trace of a job, the ns to add to its times to put every trace on one
 * axis: 0 for all when they were recorded on one host (one CLOCK_MONOTONIC);
 * otherwise each trace's clock is mapped to wall-clock time through its
 * header's (start_ns, start_realtime_ns) pair. */
void ss_export_time_shifts(ss_process_result *procs, uint32_t n, int64_t *shift);

/* Value of a META record (key as in trace_format.h: "exe", "cmdline", ...);
 * {NULL,0} when absent.  Points into the trace. */
ss_string_ref ss_export_meta(const ss_model *m, const char *key);

#endif
