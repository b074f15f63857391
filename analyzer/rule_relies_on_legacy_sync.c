/*
 * relies-on-legacy-sync: an operation depends on earlier work of another
 * stream (they touch common memory, one of them writes) and the ONLY thing
 * that orders the two is the legacy default stream's implicit barrier.
 *
 * Such a program is correct, and the barrier it waits at is not waste (so
 * legacy-stream-serialization stays silent about it), but the dependency is
 * invisible: moving to non-blocking streams or to per-thread default streams
 * (nvcc --default-stream per-thread) turns it into a data race.  Info, cost 0.
 *
 * Judged by replaying happens-before twice in lockstep (hb.h): as CUDA runs
 * it, and without the legacy barrier (on a thread of its own: ss_hb_feed).
 * Where a submission's stream clock differs between the two, the barrier
 * ordered something: the submissions of another stream k with epochs
 * between the two replays' k components are ordered before it by the
 * barrier only; those that may share memory with it (the generous "may
 * depend" of ss_calls_share_memory) are what it relies on.
 * Each earlier submission is compared with a bounded number of consumers
 * per stream, so the cost stays linear in the trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hb.h"
#include "rule.h"
#include "util.h"

#define MEMORY_CHECKS 64u    /* earlier submissions compared by memory per operation (the costly part) */
#define PASSES 4u            /* consumers on one stream each earlier submission is compared with */

static int is_work(uint8_t cls)
{
    return cls == SS_API_LAUNCH || cls == SS_API_COPY_SYNC || cls == SS_API_COPY_ASYNC ||
           cls == SS_API_MEMSET_SYNC || cls == SS_API_MEMSET_ASYNC;
}

/* `certain`: the dependency is beyond doubt (bytes both touch, one writes,
 * both accesses known); otherwise it is possible only, and the message says
 * so and why (principle: partial evidence is said to be partial). */
static void report(const ss_model *m, ss_findings *out, int32_t ci, int32_t dep, uint32_t ndeps,
                   uint32_t nstreams, int certain)
{
    char lx[192], ld[192], sx[96], sd[96], more[96] = "", msg[1600];
    const ss_call *c = &m->calls[ci];
    ss_call_label(m, ci, lx, sizeof lx);
    ss_call_label(m, dep, ld, sizeof ld);
    if (ndeps > 1)
        snprintf(more, sizeof more, " (and %u more operations on %u streams)", ndeps - 1, nstreams);
    snprintf(msg, sizeof msg,
             "%s on %s %s %s on %s%s (%s), and the only thing that orders "
             "them is the legacy default stream's implicit barrier: no event, stream wait or host "
             "synchronization between them that does not itself wait behind it. %s",
             lx, ss_stream_describe(m, c->stream, sx, sizeof sx), certain ? "depends on" : "possibly depends on", ld,
             ss_stream_describe(m, m->calls[dep].stream, sd, sizeof sd), more,
             certain ? "common memory, one of them writes"
                     : "possible: they may share memory, but which bytes a kernel touches from its pointer is not "
                       "recorded (or whether it reads or writes, where its code was not classified; or a pointer "
                       "may reach into the other's bytes)",
             certain ? "The program is correct only because of the legacy default stream"
                     : "If they do share memory, the program is correct only because of the legacy default stream");
    ss_occurrence o = {
        .rule = "relies-on-legacy-sync",
        .severity = SS_SEV_INFO,
        .fixed_severity = 1,
        .cost_ms = 0,
        .cost_basis = "0 ms: the barrier carries a real dependency; waiting at it is not waste",
        .message = msg,
        .fix = "Make the dependency explicit before moving to non-blocking streams or to per-thread default "
               "streams (nvcc --default-stream per-thread): cudaEventRecord(ev, producer_stream) after the "
               "producer and cudaStreamWaitEvent(consumer_stream, ev) before the consumer. Then the legacy "
               "barrier can go without creating a data race.",
        .refs = { { ci, c->first_op, "dependent operation" }, { dep, m->calls[dep].first_op, "producer" } },
        .nrefs = 2,
        .alloc = -1,
    };
    ss_findings_add(out, m, &o);
}

typedef struct epoch_calls { int32_t *v; uint32_t n, cap; } epoch_calls;   /* per stream: call of each epoch */

/* The memory comparisons (ss_calls_share_memory, a cache miss or two each:
 * most of the rule's time) do not depend on one another; the two
 * happens-before replays and the bookkeeping that choose what to compare
 * are a walk in call order.  So the walk gathers, for each work submission,
 * the earlier submissions to compare it with (in the walk's order), a batch
 * at a time; a batch is compared on threads while the walk gathers the next,
 * and is reported in submission order: the findings one thread makes. */
#define BATCH 16384u         /* work submissions per batch */
#define SLICE 256u           /* submissions per job of a batch's comparisons */

typedef struct batch {
    const ss_model *m;
    uint32_t n;              /* submissions */
    int32_t *call;           /* [BATCH]: the submission */
    uint32_t *off;           /* [BATCH + 1]: its candidates are cand[off[j] .. off[j + 1]) */
    int32_t *cand;           /* [BATCH * MEMORY_CHECKS]: earlier submissions, grouped by stream */
    int32_t *first;          /* results: the producer named (-1: none) */
    uint32_t *ndeps, *nstreams;
    uint8_t *certain;
    ss_beside job;           /* the comparisons, beside the walk */
} batch;

static void batch_init(batch *b, const ss_model *m)
{
    b->m = m;
    b->call = ss_xcalloc(BATCH, sizeof(int32_t));
    b->off = ss_xcalloc(BATCH + 1, sizeof(uint32_t));
    b->cand = ss_xcalloc((size_t)BATCH * MEMORY_CHECKS, sizeof(int32_t));
    b->first = ss_xcalloc(BATCH, sizeof(int32_t));
    b->ndeps = ss_xcalloc(BATCH, sizeof(uint32_t));
    b->nstreams = ss_xcalloc(BATCH, sizeof(uint32_t));
    b->certain = ss_xcalloc(BATCH, 1);
}

static void batch_free(batch *b)
{
    free(b->call); free(b->off); free(b->cand); free(b->first); free(b->ndeps); free(b->nstreams); free(b->certain);
}

/* Submission j of the batch against its candidates, in their order: until a
 * certain producer is found, how sure each is (the certain one is named). */
static void compare_one(batch *b, uint32_t j)
{
    const ss_model *m = b->m;
    int32_t ci = b->call[j], first = -1, counted = -1;
    uint32_t ndeps = 0, nstreams = 0;
    int certain = 0;
    for (uint32_t q = b->off[j]; q < b->off[j + 1]; q++) {
        int32_t y = b->cand[q];
        int how = certain ? ss_calls_share_memory(m, y, ci) : ss_calls_share_memory_how(m, y, ci);
        if (!how) continue;
        if (how == SS_SHARE_CERTAIN) {
            certain = 1;
            first = y;
        }
        if (first < 0) first = y;
        ndeps++;
        if (m->calls[y].stream != counted) { counted = m->calls[y].stream; nstreams++; }
    }
    b->first[j] = first;
    b->ndeps[j] = ndeps;
    b->nstreams[j] = nstreams;
    b->certain[j] = (uint8_t)certain;
}

static void compare_slice(void *ctx, uint32_t k, unsigned worker)
{
    (void)worker;
    batch *b = ctx;
    for (uint32_t j = k * SLICE; j < b->n && j < (k + 1) * SLICE; j++) compare_one(b, j);
}

static void compare_batch(void *ctx)
{
    batch *b = ctx;
    ss_parallel_for((b->n + SLICE - 1) / SLICE, ss_side_pool_threads(), compare_slice, b);
}

/* Start comparing a gathered batch: beside the walk, which goes on meanwhile. */
static void batch_start(batch *b) { ss_beside_start(&b->job, compare_batch, b); }

static void batch_report(batch *b, ss_findings *out)
{
    ss_beside_join(&b->job);
    for (uint32_t j = 0; j < b->n; j++)
        if (b->first[j] >= 0)
            report(b->m, out, b->call[j], b->first[j], b->ndeps[j], b->nstreams[j], b->certain[j]);
    b->n = 0;
    b->off[0] = 0;
}

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->nstreams || !m->nthreads) return;
    int has_legacy = 0;
    for (uint32_t i = 0; i < m->nstreams; i++) has_legacy |= m->streams[i].kind == SS_STREAM_LEGACY_NULL;
    if (!has_legacy) return;
    ss_hb *full = ss_hb_new(m);
    ss_hb_feed *bare = ss_hb_feed_start(m, SS_HB_NO_LEGACY_BARRIER, 0);   /* beside the walk */
    uint32_t A = ss_hb_width(full);
    epoch_calls *by_epoch = ss_xcalloc(A, sizeof(epoch_calls));
    /* Per (consumer stream s, producer stream k): submissions of k up to
     * retired[] have been compared with PASSES consumers on s already and
     * are not compared again (a later consumer that depends on them only
     * through an earlier one is missed: bounded cost, an info rule);
     * frontier[] is where the current batch of PASSES began. */
    uint32_t *retired = ss_xcalloc((size_t)A * A, sizeof(uint32_t));
    uint32_t *frontier = ss_xcalloc((size_t)A * A, sizeof(uint32_t));
    uint8_t *passes = ss_xcalloc((size_t)A * A, 1);
    batch bt[2];
    memset(bt, 0, sizeof bt);
    batch_init(&bt[0], m);
    batch_init(&bt[1], m);
    batch *b = &bt[0];   /* being gathered; the other one may be being compared */
    for (uint32_t i = 0; i < m->ncalls; i++) {
        uint32_t epoch = ss_hb_apply(full, (int32_t)i);
        const ss_call *c = &m->calls[i];
        if (!epoch) continue;
        const uint32_t *vb = ss_hb_feed_next(bare);   /* stream s's clock after it, without the barrier */
        int32_t s = c->stream;
        epoch_calls *ec = &by_epoch[s];
        while (ec->n + 1 < epoch) SS_PUSH(ec->v, ec->n, ec->cap, -1);   /* epochs of uncounted work */
        SS_PUSH(ec->v, ec->n, ec->cap, (int32_t)i);
        if (!is_work(c->cls)) continue;
        const uint32_t *vf = ss_hb_stream_clock(full, s);
        int32_t dev = ss_model_call_device(m, c);
        uint32_t checks = 0, q = b->off[b->n];
        for (uint32_t k = 0; k < A; k++) {
            if ((int32_t)k == s) continue;
            size_t sk = (size_t)s * A + k;
            uint32_t lo = vb[k] > retired[sk] ? vb[k] : retired[sk];
            if (vf[k] <= lo) continue;
            /* epochs (lo, vf[k]] of stream k: ordered before this op by the
             * legacy barrier only */
            for (uint32_t e = vf[k]; e > lo && checks < MEMORY_CHECKS; e--) {
                if (e > by_epoch[k].n) continue;
                int32_t y = by_epoch[k].v[e - 1];
                if (y < 0 || !is_work(m->calls[y].cls) || ss_model_call_device(m, &m->calls[y]) != dev) continue;
                checks++;
                b->cand[q++] = y;
            }
            if (++passes[sk] >= PASSES) {
                retired[sk] = frontier[sk];
                frontier[sk] = vf[k];
                passes[sk] = 0;
            }
        }
        if (!checks) continue;   /* nothing to compare: nothing to report */
        b->call[b->n++] = (int32_t)i;
        b->off[b->n] = q;
        if (b->n == BATCH) {
            batch *other = b == &bt[0] ? &bt[1] : &bt[0];
            batch_report(other, out);   /* the batch before: its findings come first */
            batch_start(b);
            b = other;
        }
    }
    batch *other = b == &bt[0] ? &bt[1] : &bt[0];
    batch_report(other, out);
    batch_start(b);
    batch_report(b, out);
    if (ss_timings_on())   /* a walk that waits is bound by what it waits for, not by its own work */
        fprintf(stderr, "syncsight: waits: relies-on-legacy-sync waited %.3f s for its memory questions, "
                "%.3f s for the bare replay\n", bt[0].job.waited + bt[1].job.waited, ss_hb_feed_waited(bare));
    batch_free(&bt[0]);
    batch_free(&bt[1]);
    for (uint32_t k = 0; k < A; k++) free(by_epoch[k].v);
    free(by_epoch); free(retired); free(frontier); free(passes);
    ss_hb_free(full);
    ss_hb_feed_free(bare);
}

const ss_rule ss_rule_relies_on_legacy_sync = {
    "relies-on-legacy-sync", "a dependency between streams that only the legacy default stream orders", run,
    SS_SAMPLED_SPAN,
    1,   /* asks_memory */
    0,   /* asks_replay */
    0,   /* removes_causes */
};
