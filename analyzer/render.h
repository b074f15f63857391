/*
 * What the renderers of analysis results share: the reports (report.h) and
 * the exporters (export.h) draw the same model and findings, and take from
 * here (render.c, finding_json.c) the analyzed process, the derived values
 * they show alike, and the one JSON form of a finding.
 *
 * Program text (paths, kernel and function names, NVTX ranges) reaches a
 * renderer raw, from the model and the call sites: each renderer escapes it
 * for its own output (escape.h, json.h).
 */
#ifndef SYNCSIGHT_ANALYZER_RENDER_H
#define SYNCSIGHT_ANALYZER_RENDER_H

#include <stdint.h>
#include "findings.h"
#include "json.h"
#include "model.h"

/* Where the users' documentation is published (docs/ of the repository):
 * the one base of every absolute link an output makes to it (SARIF helpUri;
 * docs/syncsight.1 names it too, checked by tests/test_cli.sh). */
#define SS_DOCS_URL "https://github.com/syncsight/syncsight/blob/main/docs"

/* One analyzed process (trace file). */
typedef struct ss_process_result {
    const char *path;
    ss_model *model;
    ss_findings findings;
    uint32_t not_shown;        /* findings the report's filters (--rule, --min-severity, --top) left out */
} ss_process_result;

double ss_rel_ms(const ss_model *m, uint64_t t);   /* ms since the header's start */
/* Text of the NVTX range enclosing a call, or NULL (ref into the trace). */
ss_string_ref ss_call_nvtx(const ss_model *m, const ss_call *c);
/* A sampled trace (capture_windows.h): the one line every output gives
 * ("sampled: recorded 21% of the run's hot calls (head of 20000, then 12
 * windows); counts and savings cover the recorded part") into buf; NULL
 * for a trace recorded in full. */
const char *ss_capture_line(const ss_model *m, char *buf, size_t len);
/* Its JSON object (docs/report-format.md, "capture"): written for every
 * trace, {"sampled": false} for one recorded in full. */
void ss_capture_json(ss_json *j, const ss_model *m);
/* Why the trace has no GPU timeline, or NULL when it has one. */
const char *ss_no_gpu_reason(const ss_model *m);

/* Start and end (trace clock) of a finding's first involved call or op:
 * the place to draw it.  Returns 0 when the finding references nothing. */
int ss_finding_span(const ss_finding *x, uint64_t *t0, uint64_t *t1, uint32_t *tid, int32_t *stream);

/* One "this event record satisfied that wait" pair: the latest successful
 * cudaEventRecord of the event handle before a cudaStreamWaitEvent,
 * cudaEventSynchronize or cudaEventQuery on it (within one lifetime of the
 * handle: create/destroy reset it).  Calls are model call indexes. */
typedef struct ss_flow_pair { int32_t record_call, wait_call; } ss_flow_pair;
/* All pairs, sorted by wait_call (the order they are found in). Caller frees. */
ss_flow_pair *ss_event_flows(const ss_model *m, uint32_t *n);

/* Short label of a call for timelines: API name, or the kernel name for a
 * launch.  Points into the model or a static string. */
ss_string_ref ss_timeline_label(const ss_model *m, const ss_call *c);

/* Per trace of a job, the ns to add to its times to put every trace on one
 * axis: 0 for all when they were recorded on one host (one CLOCK_MONOTONIC);
 * otherwise each trace's clock is mapped to wall-clock time through its
 * header's (start_ns, start_realtime_ns) pair.  Returns the job's time 0 on
 * that axis: the earliest header start or first record of any trace. */
int64_t ss_job_time_shifts(const ss_process_result *procs, uint32_t n, int64_t *shift);

/* A finding's call site as display text (raw program text: escape it). */
void ss_finding_site_text(const ss_finding *x, char *buf, size_t len);

/* How many findings of procs[0..n) have a native site that stayed
 * module+offset, and why for the first of them (ss_site_unresolved(), raw
 * text into `why`, "" when none). */
uint32_t ss_unresolved_sites(const ss_process_result *procs, uint32_t n, char *why, size_t len);

/* ---- the JSON form of a finding (finding_json.c) ---------------------------
 * Members as docs/report-format.md names them, in its order; every JSON
 * output (the report, the Perfetto and HTML exports, SARIF's property bag)
 * writes a finding through this, choosing which members it carries. */
enum ss_finding_member {
    SS_FM_RULE       = 1u << 0,
    SS_FM_SEVERITY   = 1u << 1,
    SS_FM_COST       = 1u << 2,    /* cost_ms and saving_ms */
    SS_FM_COST_BASIS = 1u << 3,
    SS_FM_MESSAGE    = 1u << 4,
    SS_FM_FIX        = 1u << 5,
    SS_FM_COUNT      = 1u << 6,
    SS_FM_SITE       = 1u << 7,    /* terminal-safe, as the report promises */
    SS_FM_STACK      = 1u << 8,
    SS_FM_CALLS      = 1u << 9,
    SS_FM_BUFFER     = 1u << 10,   /* only when the finding has one */
    SS_FM_PROCESS    = 1u << 11,
    SS_FM_PHASE      = 1u << 12,   /* phase, folded, steady cost, cost per iteration */
    /* what a finding says: the timeline exports' slices and list */
    SS_FM_SUMMARY = SS_FM_RULE | SS_FM_SEVERITY | SS_FM_COST | SS_FM_COST_BASIS | SS_FM_MESSAGE | SS_FM_FIX |
                    SS_FM_COUNT | SS_FM_SITE | SS_FM_PHASE,
    SS_FM_ALL = SS_FM_SUMMARY | SS_FM_STACK | SS_FM_CALLS | SS_FM_BUFFER | SS_FM_PROCESS,
};
/* The chosen members, into the object being written (begun by the caller). */
void ss_finding_json_members(ss_json *j, const ss_finding *x, unsigned members);
/* "stream": handle ("0x0" for the legacy stream) and "stream_kind", both null
 * for -1: a call's or op's stream, as the report writes it. */
void ss_stream_json_members(ss_json *j, const ss_model *m, int32_t stream);

#endif
