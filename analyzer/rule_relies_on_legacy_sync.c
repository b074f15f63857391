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
 * differs between the two, the barrier ordered something; the earlier
 * submissions of other streams that the full replay orders before it, the
 * barrier-free replay does not, and that share memory with it (the generous
 * "may depend" of ss_calls_share_memory) are what it relies on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hb.h"
#include "rule.h"
#include "util.h"

#define WINDOW 1024u   /* earlier submissions examined per dependent operation */
#define MEMORY_CHECKS 256u   /* of them, at most this many compared by memory (the costly part) */

static int is_work(uint8_t cls)
{
    return cls == SS_API_LAUNCH || cls == SS_API_COPY_SYNC || cls == SS_API_COPY_ASYNC ||
           cls == SS_API_MEMSET_SYNC || cls == SS_API_MEMSET_ASYNC;
}

static void report(const ss_model *m, ss_findings *out, int32_t ci, int32_t dep, uint32_t ndeps,
                   uint32_t nstreams)
{
    char lx[192], ld[192], sx[96], sd[96], more[96] = "", msg[1400];
    const ss_call *c = &m->calls[ci];
    ss_call_label(m, ci, lx, sizeof lx);
    ss_call_label(m, dep, ld, sizeof ld);
    if (ndeps > 1)
        snprintf(more, sizeof more, " (and %u more operations on %u streams)", ndeps - 1, nstreams);
    snprintf(msg, sizeof msg,
             "%s on %s depends on %s on %s%s (common memory, one of them writes), and the only thing that orders "
             "them is the legacy default stream's implicit barrier: no event, no stream wait, no host "
             "synchronization in between. The program is correct only because of the legacy default stream",
             lx, ss_stream_describe(m, c->stream, sx, sizeof sx), ld,
             ss_stream_describe(m, m->calls[dep].stream, sd, sizeof sd), more);
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

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->nstreams || !m->nthreads) return;
    int has_legacy = 0;
    for (uint32_t i = 0; i < m->nstreams; i++) has_legacy |= m->streams[i].kind == SS_STREAM_LEGACY_NULL;
    if (!has_legacy) return;
    ss_hb *full = ss_hb_new(m), *bare = ss_hb_new_ex(m, SS_HB_NO_LEGACY_BARRIER);
    uint32_t A = ss_hb_width(full);
    int32_t *recent = ss_xcalloc(WINDOW, sizeof(int32_t));   /* ring of earlier submissions */
    uint32_t nrecent = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        uint32_t epoch = ss_hb_apply(full, (int32_t)i);
        ss_hb_apply(bare, (int32_t)i);
        const ss_call *c = &m->calls[i];
        if (!epoch || !is_work(c->cls)) continue;
        const uint32_t *vf = ss_hb_stream_clock(full, c->stream), *vb = ss_hb_stream_clock(bare, c->stream);
        if (memcmp(vf, vb, A * sizeof(uint32_t)) != 0) {
            int32_t first = -1;
            uint32_t ndeps = 0, nstreams = 0;
            int32_t streams_seen[16];
            uint32_t n = nrecent < WINDOW ? nrecent : WINDOW, checks = 0;
            for (uint32_t k = 0; k < n && checks < MEMORY_CHECKS; k++) {
                int32_t y = recent[(nrecent - 1 - k) % WINDOW];
                const ss_call *cy = &m->calls[y];
                if (cy->stream == c->stream || ss_model_call_device(m, cy) != ss_model_call_device(m, c)) continue;
                if (!ss_hb_call_before(full, y, vf) || ss_hb_call_before(bare, y, vb)) continue;
                checks++;
                if (!ss_calls_share_memory(m, y, (int32_t)i)) continue;
                if (first < 0) first = y;
                ndeps++;
                int dup = 0;
                for (uint32_t s = 0; s < nstreams && s < 16; s++) dup |= streams_seen[s] == cy->stream;
                if (!dup) { if (nstreams < 16) streams_seen[nstreams] = cy->stream; nstreams++; }
            }
            if (first >= 0) report(m, out, (int32_t)i, first, ndeps, nstreams);
        }
        recent[nrecent % WINDOW] = (int32_t)i;
        nrecent++;
    }
    free(recent);
    ss_hb_free(full);
    ss_hb_free(bare);
}

const ss_rule ss_rule_relies_on_legacy_sync = {
    "relies-on-legacy-sync", "a dependency between streams that only the legacy default stream orders", run,
};
