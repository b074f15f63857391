/*
 * The repeated iteration of a run, and what comes before it.
 *
 * Training loops and servers repeat one iteration (a step, a request); what
 * happens once -- moving the model, the first iterations, compilation,
 * warm-up, the final evaluation -- is "setup".  Findings in the steady state
 * are what the user pays for on every iteration; setup costs are paid once.
 *
 * How the iteration is found (ss_iterations_of, cached with the model):
 *   1. NVTX: the range name that repeats (at least SS_MIN_ITERATIONS times,
 *      not a library's "nccl..." range), spans at least a fifth of the time
 *      between its first start and last end (a library's short ranges, such
 *      as CUB's, do not) and covers the most time; each range is one
 *      iteration;
 *   2. else the repeating pattern of the calls of the busiest thread: the
 *      sequence of (API name, native stack, Python stack) keys, whose period
 *      is found by ss_find_period() (candidate lags from the gaps between
 *      repeats of each key, each verified by comparing the sequence with
 *      itself shifted by the lag).  An iteration submits GPU work: a run of
 *      calls that submit none (a framework creating its pool of streams) is
 *      not one.
 * Leading iterations that take much longer than the median one (warm-up,
 * lazy loading, the allocator growing) are setup.  Without a repeated
 * iteration the whole run is steady.
 */
#ifndef SYNCSIGHT_ANALYZER_ITERATIONS_H
#define SYNCSIGHT_ANALYZER_ITERATIONS_H

#include <stdint.h>
#include "model.h"

#define SS_MIN_ITERATIONS 3

typedef enum ss_phase { SS_PHASE_STEADY = 0, SS_PHASE_SETUP = 1 } ss_phase;
const char *ss_phase_name(ss_phase p);   /* "steady", "setup" */

typedef struct ss_iterations {
    int found;                 /* 0: no repeated iteration; everything is steady */
    int from_nvtx;             /* 1: NVTX ranges, 0: the repeating call pattern */
    char what[160];            /* "NVTX range \"step\"", "a repeating pattern of 57 calls on thread 12" */
    uint32_t count;            /* steady iterations */
    uint64_t t_start, t_end;   /* the steady state: [t_start, t_end) */
    uint64_t setup_ns;         /* wall time outside it */
    uint64_t steady_ns;
    uint64_t setup_busy_ns;    /* GPU busy time (union of ops, all devices) outside it */
    uint64_t steady_busy_ns;
    int setup_dominates;       /* the GPU worked longer in setup than in the steady state
                                  (wall time would not do: initializing CUDA and loading
                                  libraries take seconds that no iteration count outweighs
                                  in a short run) */
} ss_iterations;

/* The iterations of a model, found on first use and freed with it. */
const ss_iterations *ss_iterations_of(const ss_model *m);
/* The phase of a trace time. */
ss_phase ss_phase_at(const ss_iterations *it, uint64_t t);
/* Which of the steady state's `count` equal parts a trace time falls in
 * (about which steady iteration), -1 outside it or without iterations. */
int32_t ss_iteration_index(const ss_iterations *it, uint64_t t);

/* The period of a key sequence: the lag p such that keys[i] == keys[i+p]
 * over the longest stretch covering at least SS_MIN_ITERATIONS periods
 * (lags that match about as well: the shortest).  work (NULL: every key
 * counts) marks the keys that submit GPU work: a period must hold one.
 * Returns 1 with *period, *start (first key of the stretch) and *count
 * (whole periods in it), else 0.  Tolerates a few keys that break the
 * pattern (an occasional extra call). */
int ss_find_period(const uint64_t *keys, const uint8_t *work, uint32_t n, uint32_t *period, uint32_t *start,
                   uint32_t *count);

#endif
