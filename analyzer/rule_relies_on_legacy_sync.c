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
 * it, and without the legacy barrier.  Where a submission's stream clock
 * differs between the two, the barrier ordered something: the submissions
 * of another stream k with epochs between the two replays' k components are
 * ordered before it by the barrier only; those that may share memory with it
 * (the generous "may depend" of ss_calls_share_memory) are what it relies on.
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
             "them is the legacy default stream's implicit barrier: no event, no stream wait, no host "
             "synchronization in between. %s",
             lx, ss_stream_describe(m, c->stream, sx, sizeof sx), certain ? "depends on" : "possibly depends on", ld,
             ss_stream_describe(m, m->calls[dep].stream, sd, sizeof sd), more,
             certain ? "common memory, one of them writes"
                     : "possible: they may share memory, but a kernel's reads and writes are not known (its code "
                       "was not classified) or a pointer may reach into the other's bytes",
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

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->nstreams || !m->nthreads) return;
    int has_legacy = 0;
    for (uint32_t i = 0; i < m->nstreams; i++) has_legacy |= m->streams[i].kind == SS_STREAM_LEGACY_NULL;
    if (!has_legacy) return;
    ss_hb *full = ss_hb_new(m), *bare = ss_hb_new_ex(m, SS_HB_NO_LEGACY_BARRIER);
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
    uint8_t *seen = ss_xcalloc(A, 1);
    for (uint32_t i = 0; i < m->ncalls; i++) {
        uint32_t epoch = ss_hb_apply(full, (int32_t)i);
        ss_hb_apply(bare, (int32_t)i);
        const ss_call *c = &m->calls[i];
        if (!epoch) continue;
        int32_t s = c->stream;
        epoch_calls *ec = &by_epoch[s];
        while (ec->n + 1 < epoch) SS_PUSH(ec->v, ec->n, ec->cap, -1);   /* epochs of uncounted work */
        SS_PUSH(ec->v, ec->n, ec->cap, (int32_t)i);
        if (!is_work(c->cls)) continue;
        const uint32_t *vf = ss_hb_stream_clock(full, s), *vb = ss_hb_stream_clock(bare, s);
        int32_t first = -1, dev = ss_model_call_device(m, c);
        uint32_t ndeps = 0, nstreams = 0, checks = 0;
        int certain = 0;
        memset(seen, 0, A);
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
                /* how sure, until a certain producer is found: it is the one named */
                int how = certain ? ss_calls_share_memory(m, y, (int32_t)i) : ss_calls_share_memory_how(m, y, (int32_t)i);
                if (!how) continue;
                if (how == SS_SHARE_CERTAIN) {
                    certain = 1;
                    first = y;
                }
                if (first < 0) first = y;
                ndeps++;
                if (!seen[k]) { seen[k] = 1; nstreams++; }
            }
            if (++passes[sk] >= PASSES) {
                retired[sk] = frontier[sk];
                frontier[sk] = vf[k];
                passes[sk] = 0;
            }
        }
        if (first >= 0) report(m, out, (int32_t)i, first, ndeps, nstreams, certain);
    }
    for (uint32_t k = 0; k < A; k++) free(by_epoch[k].v);
    free(by_epoch); free(retired); free(frontier); free(passes); free(seen);
    ss_hb_free(full);
    ss_hb_free(bare);
}

const ss_rule ss_rule_relies_on_legacy_sync = {
    "relies-on-legacy-sync", "a dependency between streams that only the legacy default stream orders", run,
    SS_SAMPLED_SPAN,
    1,   /* asks_memory */
    0,   /* asks_replay */
};
