/*
 * One diagnosis = one ss_rule (analyzer/rule_<id>.c), registered in rules.c;
 * what several rules need is in rule_common.c.
 * A rule reads the model and adds occurrences to the findings; it never
 * prints.  Rules judge from measured times, never from API names alone.
 */
#ifndef SYNCSIGHT_ANALYZER_RULE_H
#define SYNCSIGHT_ANALYZER_RULE_H

#include "model.h"
#include "findings.h"
#include "capture_windows.h"

typedef struct ss_rule {
    const char *id;          /* rule id, part of the interface */
    const char *title;
    void (*run)(const ss_model *m, ss_findings *out);
    /* What its judgement needs of a sampled trace (enum ss_sampled_need,
     * capture_windows.h): occurrences that the recorded part cannot support
     * are not added (ss_findings_add). */
    unsigned sampled;
    /* 1: it asks what memory calls touch (ss_calls_share_memory & co.).
     * On one thread, their cached answers are freed once the last such rule
     * has run, before the rules that build the what-if replay (the
     * analysis's peak); on several, once every rule has run.  A rule that
     * asks without saying so gets the same answers, resolved again. */
    unsigned asks_memory;
    /* 1: it asks for the what-if replay (ss_replay_of), which is built on
     * its own thread meanwhile: such rules are handed out last. */
    unsigned asks_replay;
    /* 1: its findings carry causes for the what-if replay (ss_relax).  Once
     * every such rule has run, the findings' what-ifs are replayed while the
     * other rules still run (ss_findings_replay_ahead); a rule that gives
     * causes without saying so gets the same savings, replayed after. */
    unsigned removes_causes;
} ss_rule;

extern const ss_rule ss_rule_implicit_sync;
extern const ss_rule ss_rule_pageable_async_copy;
extern const ss_rule ss_rule_legacy_stream_serialization;
extern const ss_rule ss_rule_device_sync_overuse;
extern const ss_rule ss_rule_missing_fence;
extern const ss_rule ss_rule_unrecorded_event_wait;
extern const ss_rule ss_rule_incomplete_sync;
extern const ss_rule ss_rule_event_timing_gap;
extern const ss_rule ss_rule_relies_on_legacy_sync;
extern const ss_rule ss_rule_hw_queue_aliasing;
extern const ss_rule ss_rule_first_launch_stall;
extern const ss_rule ss_rule_launch_blocking;

/* NULL-terminated registry (rules.c). */
extern const ss_rule *const ss_rules[];

/* Run every rule on m: on SYNCSIGHT_THREADS threads, each rule into its own
 * findings, joined in the registry's order (the same report as on one). */
void ss_rules_run_all(const ss_model *m, ss_findings *out);

/* ---- shared by the rules (rule_common.c) ---------------------------------- */

/* Visit the GPU ops of `device` that were submitted before t and still
 * unfinished at t (running or queued).  Bounded scan around t: very long
 * traces with thousands of ops in flight at once are sampled, never slow. */
typedef void (*ss_op_visit)(void *ctx, int32_t op);
void ss_inflight_ops(const ss_model *m, int32_t device, uint64_t t, ss_op_visit visit, void *ctx);
/* The same, only the work of one CUDA context (0: every context): what a
 * device-wide wait of that context waits for (ss_model_call_context). */
void ss_inflight_ops_of_context(const ss_model *m, int32_t device, uint32_t context, uint64_t t, ss_op_visit visit,
                                void *ctx);

/* Did call c come after a context-wide event record or wait (cuCtxRecordEvent,
 * cuCtxWaitEvent and their green-context twins: m->context_event_t)?  Such
 * an event orders every stream of a context, which the model does not
 * follow: an ordering it cannot see may cover c's work.  SS_CONTEXT_EVENT_WHY
 * says so in a finding. */
static inline int ss_after_context_event(const ss_model *m, const ss_call *c)
{
    return m->context_event_t && c->rec->t_enter >= m->context_event_t;
}
#define SS_CONTEXT_EVENT_WHY                                                                                      \
    "before it the program recorded or waited for an event context-wide (cuCtxRecordEvent / cuCtxWaitEvent or "   \
    "their green-context twins), which orders every stream of a context and which syncsight does not follow"

/* Does a call's memory (copy dst/src, memset dst, kernel pointer params)
 * fall inside allocation `alloc`? */
int ss_call_touches_alloc(const ss_model *m, const ss_call *c, int32_t alloc);
int ss_op_touches_alloc(const ss_model *m, int32_t op, int32_t alloc);

/* Do two calls (or the calls of two ops) touch a common allocation?  Copies:
 * dst/src, memsets: dst, kernels: pointer params, frees: the freed block. */
int ss_calls_share_memory(const ss_model *m, int32_t a, int32_t b);
/* Does call a touch any memory that those questions know of?  When not, it
 * shares memory with no call: a loop asking about one call against many
 * others asks this once first. */
int ss_call_has_memory(const ss_model *m, int32_t a);
/* The same, saying how sure: CERTAIN when bytes both calls certainly touch
 * are written by one of them and both accesses are known; POSSIBLE when the
 * relation rests on a kernel taken as reading and writing (its code not
 * classified) or on how far a pointer may reach. */
enum { SS_SHARE_NONE, SS_SHARE_POSSIBLE, SS_SHARE_CERTAIN };
/* What is known of the bytes an access touches (docs/rules/missing-fence.md,
 * "Memory model"): all of [lo, hi) (a copy, a memset); of a hull, its lowest
 * and highest byte (exact memory mode's kernel ranges); of an inferred range,
 * none for certain, anything up to reach (a kernel's pointer argument, a 2D
 * or 3D copy's first row). */
enum ss_range_known { SS_RANGE_EXACT, SS_RANGE_HULL, SS_RANGE_INFERRED };
typedef struct ss_byte_range { uint64_t lo, hi, reach; uint8_t known; } ss_byte_range;
/* a and b certainly touch a common byte: overlapping exact ranges, an exact
 * range covering all an inferred one may reach, or a byte known to be
 * touched (a hull's end) inside the other's known bytes */
int ss_ranges_share_a_byte(const ss_byte_range *a, const ss_byte_range *b);


int ss_calls_share_memory_how(const ss_model *m, int32_t a, int32_t b);
int ss_ops_share_memory(const ss_model *m, int32_t a, int32_t b);
/* Create the cache the questions above fill, before the rules run on
 * several threads (they then fill it concurrently). */
void ss_calls_memory_prepare(const ss_model *m);
/* Give back the memory the questions above keep for the analysis (each
 * call's ranges): once the rules have run, before the what-ifs, whose
 * replay needs memory of its own.  Asked again, they are resolved again. */
void ss_calls_memory_forget(const ss_model *m);

/* "kernel name" / "memcpy HtoD" / API name of a call or op, cut to fit. */
void ss_op_label(const ss_model *m, int32_t op, char *buf, size_t len);
void ss_call_label(const ss_model *m, int32_t call, char *buf, size_t len);

/* Millisecond value of a ns interval. */
static inline double ss_ms(uint64_t ns) { return (double)ns / 1e6; }
/* A trace time as the reports show it: ms since the trace header's start. */
static inline double ss_trace_ms(const ss_model *m, uint64_t t) { return ((double)t - (double)m->hdr.start_ns) / 1e6; }

#endif
