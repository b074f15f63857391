/*
 * What-if replay: how much sooner would the run end if a finding's cause
 * were gone?
 *
 * The run is rebuilt as a schedule: every GPU operation with its measured
 * duration and what it had to wait for (its submitting call, the previous
 * operation of its stream, the events its stream waited on, the legacy
 * default stream's barriers), and every host thread as its calls with the
 * host time between them, a synchronizing call returning when the GPU work
 * it waited for ends (ss_call_host_wait).  Two hardware effects are part of
 * the schedule where the trace shows them (never assumed):
 *   - hardware queues: more streams than CUDA_DEVICE_MAX_CONNECTIONS share
 *     work queues, and a queue starts its operations in submission order;
 *   - lazy-loading barriers: the first launch of a kernel under lazy module
 *     loading makes later work wait until the device has drained.
 * Each operation keeps the small delay it had after its last modelled
 * dependency (launch latency, or contention the model does not know), so the
 * replay with nothing removed reproduces the measured run exactly; removing
 * a cause (a relaxation) only ever moves things earlier.
 *
 * Built once per model (ss_replay_of); ss_replay_run() is O(calls + ops x
 * streams-per-device) per what-if at most.  With the replay that removes
 * nothing recorded at build, a what-if replays only from the first item its
 * causes change, and skips the stretches where the run is that replay
 * shifted by a constant; ss_replay_saving() also answers a what-if it has
 * replayed before from a memo.  SYNCSIGHT_REPLAY_FULL=1 turns both off (the
 * same savings: tests/test_replay_invariance.sh).  What-ifs are independent:
 * ss_replay_savings() runs a batch of them on several threads
 * (SYNCSIGHT_THREADS), with the same results as one by one.
 */
#ifndef SYNCSIGHT_ANALYZER_REPLAY_H
#define SYNCSIGHT_ANALYZER_REPLAY_H

#include <stdint.h>
#include "model.h"

/* One cause removed. */
typedef enum ss_relax_kind {
    SS_RELAX_NONE = 0,
    SS_RELAX_HOST_WAIT,       /* `call` returns without waiting for GPU work (made asynchronous, or removed) */
    SS_RELAX_NARROW_WAIT,     /* `call` waits only for the work of `stream` submitted up to it (one
                                 relaxation per stream the host needed); a call that waits for nothing
                                 is not made to wait: removing a cause never adds one */
    SS_RELAX_LEGACY_BARRIERS, /* op `index` is not held by the legacy-default-stream barrier; index < 0:
                                 no legacy barriers on `device` at all (non-blocking streams) */
    SS_RELAX_HW_QUEUES,       /* no hardware-queue sharing on `device` (enough connections) */
    SS_RELAX_LOAD_BARRIER,    /* lazy-loading barrier number `index` gone (eager loading or warm-up) */
    SS_RELAX_HOST_TIME,       /* host thread `tid` spends no time in [t0, t1) (a JIT compilation) */
    SS_RELAX_ASYNC_LAUNCHES,  /* launches, async copies and memsets do not wait (CUDA_LAUNCH_BLOCKING unset) */
} ss_relax_kind;

typedef struct ss_relax {
    uint8_t  kind;            /* ss_relax_kind */
    int32_t  call;
    int32_t  stream;
    int32_t  device;
    int32_t  index;
    uint32_t tid;
    uint64_t t0, t1;
} ss_relax;

typedef struct ss_replay ss_replay;

/* Streams sharing hardware queues on one device, as the trace shows it. */
typedef struct ss_hwq_device {
    int32_t  device;
    uint32_t connections;     /* CUDA_DEVICE_MAX_CONNECTIONS in effect */
    int      connections_from_env;
    uint32_t streams;         /* streams mapped to queues (creation order) */
    uint32_t delayed_ops;     /* operations that started only when an unrelated one in their queue started */
    uint64_t delay_ns;        /* their summed delay */
    int32_t  example_op;      /* one of them, and the operation it queued behind */
    int32_t  example_blocker;
} ss_hwq_device;

/* A first launch under lazy loading that made later work wait for the device to drain. */
typedef struct ss_load_barrier {
    int32_t  device;
    int32_t  call;            /* the first launch of the kernel */
    int32_t  op;              /* its kernel */
    uint64_t drain;           /* when the work in flight at the launch had ended */
    uint32_t delayed_ops;     /* later operations that were ready before `drain` and started at it */
    uint64_t delay_ns;
    int32_t  example_op;
} ss_load_barrier;

/* The model's replay, built on first use (NULL only when out of memory is
 * impossible: it aborts like every analyzer allocation). */
const ss_replay *ss_replay_of(const ss_model *m);
/* Starts building it on another thread, when ss_thread_count() > 1, so that
 * it is ready (or nearly) when first used: ss_replay_of waits for its
 * structure, the what-ifs for its recorded baseline where they read it (the
 * thread goes on to record it; ss_model_free joins it).  The same replay as
 * one built on first use; the model must not change meanwhile except for
 * the rules' own caches. */
void ss_replay_prefetch(const ss_model *m);
void ss_replay_free(ss_replay *r);

/* The replayed end of the run (trace clock ns) with these causes removed;
 * with none, the measured end. */
uint64_t ss_replay_run(const ss_replay *r, const ss_relax *rx, uint32_t n);
/* The measured end: last call exit or GPU operation end. */
uint64_t ss_replay_end(const ss_replay *r);
/* ns the run would end sooner without these causes (>= 0). */
uint64_t ss_replay_saving(const ss_replay *r, const ss_relax *rx, uint32_t n);

/* Several what-ifs at once: w[i].saving = ss_replay_saving(w[i].r, w[i].rx,
 * w[i].n).  The distinct ones not answered before are replayed in parallel
 * (ss_thread_count() threads, each with its own scratch times); the savings
 * are the same for any number of threads.  The replays must have been built
 * (ss_replay_of) before; w may mix the replays of several models. */
typedef struct ss_whatif {
    const ss_replay *r;
    const ss_relax *rx;
    uint32_t n;
    uint64_t saving;          /* out */
} ss_whatif;
/* Returns how many it replayed (not answered by the memo or the batch's
 * repeats). */
uint32_t ss_replay_savings(ss_whatif *w, uint32_t n);
/* The same what-ifs replayed ahead of the batch that will ask them, whose
 * answers the replay keeps (its memo): nothing with SYNCSIGHT_REPLAY_FULL=1,
 * which keeps none. */
void ss_replay_savings_ahead(ss_whatif *w, uint32_t n);

/* When an operation could have started from what the model orders it after
 * (submission, stream order, events, legacy barriers), before hardware queues
 * and loading barriers: its measured start minus this is a delay the model
 * alone does not explain. */
uint64_t ss_replay_ready(const ss_replay *r, int32_t op);

const ss_hwq_device *ss_replay_hw_queues(const ss_replay *r, uint32_t *n);
const ss_load_barrier *ss_replay_load_barriers(const ss_replay *r, uint32_t *n);

#endif
