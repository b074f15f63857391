/*
 * Sampled recording (trace format 1.6, SS_REC_CAPTURE; docs/sampling.md):
 * the recorded spans of a trace and what can be judged inside them.
 *
 * A long run is recorded as a fully recorded head, then recording windows.
 * Between an OFF and the next ON switch the shim records no hot call and no
 * GPU record, so the model sees the run through its ON spans only.  What the
 * analyzer may still say:
 *
 *   - a span's recorded part is judged only up to its "judged end": the OFF
 *     switch, or earlier, the entry of the first call of the span that
 *     submitted GPU work without any GPU record of it (CUPTI's kinds were
 *     switched off before its records arrived: the GPU may have been busy
 *     from there on without the trace showing it);
 *   - in a window (every span but a head that starts the trace), work
 *     submitted while OFF may still be queued or running: a stream's state
 *     is unknown until the first GPU op submitted in the span on it has
 *     ended (stream order: everything before it is done by then), or until a
 *     host wait that covered the stream returned.  The span is "settled"
 *     once every stream that had work anywhere in the trace is known;
 *   - nothing before an OFF span is paired with anything after it (hb.c
 *     treats each OFF span as a barrier; findings.c keeps an occurrence
 *     only when all of its calls and ops are in one span).
 *
 * A trace without CAPTURE records (every trace before 1.6) is one span,
 * known from its first record: nothing here changes what is judged.
 */
#ifndef SYNCSIGHT_ANALYZER_CAPTURE_WINDOWS_H
#define SYNCSIGHT_ANALYZER_CAPTURE_WINDOWS_H

#include <stdint.h>
#include "model.h"

typedef struct ss_capture_span {
    uint64_t t_on, t_off;       /* [t_on, t_off): recorded; t_off = UINT64_MAX when the trace ends ON */
    uint64_t hot_on, hot_off;   /* the process's hot-call count at both switches (hot_off: at the end
                                   when the trace ends ON, counted from the recorded calls) */
    uint32_t window;            /* 0 the head, then the window number of the ON record */
    uint32_t reason_on;         /* enum ss_capture_reason of the ON switch, 0 for the trace's start */
    uint64_t judged_end;        /* see above; <= t_off */
    uint64_t settled;           /* every stream known from here on; UINT64_MAX never */
} ss_capture_span;

typedef struct ss_capture {
    int sampled;                /* the trace has CAPTURE records */
    ss_capture_span *spans; uint32_t nspans;
    uint64_t recorded_hot_calls;
    uint64_t total_hot_calls;   /* of the run (the last switch's count, plus the recorded calls after it) */
    int total_is_lower_bound;   /* the trace ends OFF, or count_partial: the run made at least total_hot_calls */
    int count_partial;          /* SS_CAPTURE_F_COUNT_PARTIAL: hot calls seen only through CUPTI callbacks
                                   were not counted while OFF (statically linked cudart, driver API) */
    uint64_t run_ns, recorded_ns; /* the run (first to last record) and the part of it recorded (ON) */
    uint32_t windows;           /* recording windows after the head */
    uint64_t *known_from;       /* nspans x nstreams: when the stream's state is known in the span */
    int32_t *call_span;         /* per call: its span, -1 when recorded while OFF (structural calls) */
    int kernels_recorded;       /* the trace holds kernel records: a recorded launch without one ran
                                   after recording stopped (not SYNCSIGHT_ACTIVITY without kernels) */
    int ends_on;                /* the last switch was ON (or there was none) */
    uint64_t last_switch_hot;   /* the highest hot-call count of any switch */
} ss_capture;

/* One stretch of the run's time: a recorded span's part of it, or the time
 * between two spans (or after the last one) when nothing hot was recorded. */
typedef struct ss_capture_stretch {
    uint64_t t0, t1;            /* [t0, t1), within the run [t_first, t_last] */
    int32_t span;               /* its span; -1: not recorded (OFF) */
} ss_capture_stretch;

/* Built at load (model.c), freed with the model: the spans from the CAPTURE
 * records first (ss_capture_span_at works from then on, before the calls and
 * ops exist), the rest once the model is built. */
void ss_capture_spans(ss_model *m, const ss_capture_rec *const *recs, uint32_t n);
void ss_capture_build(ss_model *m);
void ss_capture_free(ss_capture *c);

/* The model's capture (never NULL after load). */
static inline const ss_capture *ss_capture_of(const ss_model *m) { return m->capture; }
static inline int ss_capture_sampled(const ss_model *m) { return m->capture && m->capture->sampled; }

/* The run [t_first, t_last] cut into its recorded spans and the unrecorded
 * stretches between and after them, in time order, empty ones left out
 * (what recorded_ns adds up and the exports draw).  A trace recorded in full
 * is one recorded stretch.  Returns the count; *out is to be freed. */
uint32_t ss_capture_stretches(const ss_model *m, ss_capture_stretch **out);

/* Is an API class one the shim records only while ON ("hot")? */
int ss_capture_hot_class(uint8_t cls);
/* The span holding trace time t, -1 when t is in an OFF span. */
int32_t ss_capture_span_at(const ss_model *m, uint64_t t);
/* The span of a call (-1: recorded while OFF) / of an op (its call's span,
 * else the span holding its start and end; -1 when none holds both). */
int32_t ss_capture_call_span(const ss_model *m, int32_t call);
int32_t ss_capture_op_span(const ss_model *m, int32_t op);
/* When `stream`'s state is known in span (UINT64_MAX: not in this span). */
uint64_t ss_capture_stream_known(const ss_model *m, int32_t span, int32_t stream);

/* What an occurrence's judgement needs of a sampled trace (ss_rule.sampled). */
enum ss_sampled_need {
    SS_SAMPLED_SPAN = 0,          /* its calls and ops in one span, before its judged end (always) */
    SS_SAMPLED_OWN_WAIT = 1u << 0,/* the first call's host wait covered only known work */
    SS_SAMPLED_SETTLED = 1u << 1, /* every stream known (judges what the whole GPU was doing) */
    SS_SAMPLED_HEAD = 1u << 2,    /* needs the run's whole history up to it: the head only */
    SS_SAMPLED_NEXT = 1u << 3,    /* reads what the first call's thread did next: its next call
                                     recorded in the same span (or the trace ends recording) */
};
/* May an occurrence with these calls and ops (-1 entries skipped) be
 * judged?  Always 1 for a trace recorded in full. */
int ss_capture_judgeable(const ss_model *m, unsigned need, const int32_t *calls, const int32_t *ops, uint32_t n);

/* Did the host wait of `call` cover only work whose state is known? */
int ss_capture_wait_known(const ss_model *m, int32_t call);

#endif
