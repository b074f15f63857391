/*
 * legacy-stream-serialization: work on the legacy NULL stream and work on
 * blocking streams (created without cudaStreamNonBlocking) are implicitly
 * ordered: a legacy op waits for all earlier work on the device's blocking
 * streams, and a blocking-stream op waits for earlier legacy ops.
 *
 * Replaying the GPU timeline in submission order, for each op we compute the
 * earliest start its explicit dependencies allow (previous op on its stream,
 * cudaStreamWaitEvent on recorded events, the host's submission time; after
 * a wait on a memory value, whose release is not recorded, the op's own
 * start) and the
 * implicit legacy barrier.  An op that started later than its explicit
 * dependencies allowed, at the time the barrier released it, lost
 * (barrier - explicit_ready).  Non-blocking streams are not serialized and
 * never reported; per-thread default streams are ordered with the legacy
 * stream like blocking ones (they only meet it when a program names
 * cudaStreamLegacy).  When the op and the work it waited for may touch the
 * same memory, the barrier was a real dependency the program relies on: not
 * waste, reported by relies-on-legacy-sync instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include "rule.h"
#include "util.h"

#define SLACK_NS 5000ull       /* launch latency / timestamp noise */
#define MIN_LOSS_NS 10000ull   /* 10 us */

/* per legacy domain (ss_stream.ldomain: a device, or a device's context) */
typedef struct dev_state { uint64_t blocking_end, legacy_end; int32_t blocking_op, legacy_op; } dev_state;

static dev_state *dev_of(dev_state *v, uint32_t n, int32_t ldomain)
{
    uint32_t i = ldomain < 0 ? 0 : (uint32_t)ldomain + 1;
    return &v[i < n ? i : 0];
}

/* Blocking streams and per-thread default streams both synchronize with the
 * legacy default stream (CUDA: "the per-thread default stream is not a
 * non-blocking stream"). */
static int legacy_ordered(uint32_t kind)
{
    return kind == SS_STREAM_BLOCKING || kind == SS_STREAM_PER_THREAD;
}

static uint32_t op_graph_id(const ss_gpu_op *op)
{
    if (op->kind == SS_OP_KERNEL) return ((const ss_kernel_rec *)op->rec)->graph_id;
    if (op->kind == SS_OP_MEMCPY) return ((const ss_memcpy_rec *)op->rec)->graph_id;
    return ((const ss_memset_rec *)op->rec)->graph_id;
}

typedef struct state {
    const ss_model *m;
    uint64_t *last_end; int32_t *last_op;   /* per stream */
    uint64_t *wait_floor;
    /* per stream: a wait on a memory value (cuStreamWaitValue*,
     * cuStreamBatchMemOp) sits before its next op.  When it released is not
     * recorded, so that op's start is taken as what its explicit
     * dependencies allowed: its delay is never blamed on the barrier. */
    uint8_t *value_wait;
    dev_state *devs; uint32_t ndevs;
    ss_findings *out;
} state;

static void apply_op(state *s, int32_t oi, int evaluate)
{
    const ss_model *m = s->m;
    const ss_gpu_op *op = &m->ops[oi];
    int32_t st = op->stream;
    uint32_t kind = m->streams[st].kind;
    dev_state *d = dev_of(s->devs, s->ndevs, m->streams[st].ldomain);
    if (s->value_wait[st]) {
        if (op->start > s->wait_floor[st]) s->wait_floor[st] = op->start;
        s->value_wait[st] = 0;
    }
    if (evaluate && !op_graph_id(op)) {
        uint64_t explicit_ready = s->last_end[st];
        if (s->wait_floor[st] > explicit_ready) explicit_ready = s->wait_floor[st];
        if (op->submit > explicit_ready) explicit_ready = op->submit;
        uint64_t barrier = 0;
        int32_t barrier_op = -1;
        if (kind == SS_STREAM_LEGACY_NULL) { barrier = d->blocking_end; barrier_op = d->blocking_op; }
        else if (legacy_ordered(kind)) { barrier = d->legacy_end; barrier_op = d->legacy_op; }
        if (barrier_op >= 0 && barrier > explicit_ready + MIN_LOSS_NS && op->start + SLACK_NS >= barrier &&
            !ss_ops_share_memory(m, oi, barrier_op)) {
            uint64_t until = op->start < barrier ? op->start : barrier;
            uint64_t loss = until > explicit_ready ? until - explicit_ready : 0;
            if (loss >= MIN_LOSS_NS) {
                ss_occurrence o = {
                    .rule = "legacy-stream-serialization",
                    .cost_ms = ss_ms(loss),
                    .fix = "Create your streams with cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) (or "
                           "compile with nvcc --default-stream per-thread) and do not launch work on stream 0; "
                           "where one stream really needs another's result, say so with cudaEventRecord + "
                           "cudaStreamWaitEvent. In PyTorch the default stream is the legacy stream unless "
                           "per-thread default streams are enabled, but torch.cuda.Stream() side streams are "
                           "non-blocking, so PyTorch code rarely hits this.",
                    .refs = { { op->call, oi, "delayed op" },
                              { m->ops[barrier_op].call, barrier_op, "implicit barrier" } },
                    .nrefs = 2,
                    /* the fix (non-blocking streams) removes the device's legacy barriers */
                    .relax = { { .kind = SS_RELAX_LEGACY_BARRIERS, .index = -1, .device = ss_op_device(op) } },
                    .nrelax = 1,
                    .alloc = -1,
                };
                /* a barrier holds back many ops at few sites: the words are
                 * written for the first occurrence of a site only */
                if (!ss_findings_fold(s->out, m, &o)) {
                    char a[192], b[192], sa[96], sb[96], msg[1024], basis[512];
                    ss_op_label(m, oi, a, sizeof a);
                    ss_op_label(m, barrier_op, b, sizeof b);
                    snprintf(msg, sizeof msg,
                             "%s on %s could have started %.3f ms earlier: it was held back by the implicit "
                             "legacy-default-stream barrier until %s on %s finished, although it does not depend "
                             "on it (no event, no shared buffer)",
                             a, ss_stream_describe(m, st, sa, sizeof sa), ss_ms(loss), b,
                             ss_stream_describe(m, m->ops[barrier_op].stream, sb, sizeof sb));
                    snprintf(basis, sizeof basis,
                             "GPU start delay: barrier release (%s end) - earliest start allowed by its own stream, "
                             "stream waits and submission time", b);
                    o.message = msg;
                    o.cost_basis = basis;
                    ss_findings_add(s->out, m, &o);
                }
            }
        }
    }
    if (op->end > s->last_end[st]) { s->last_end[st] = op->end; s->last_op[st] = oi; }
    if (kind == SS_STREAM_LEGACY_NULL && op->end > d->legacy_end) { d->legacy_end = op->end; d->legacy_op = oi; }
    if (legacy_ordered(kind) && op->end > d->blocking_end) { d->blocking_end = op->end; d->blocking_op = oi; }
    /* cudaMemcpyPeer is serialized with all work of its devices whatever the
     * stream: the wait behind it is not the legacy barrier's doing */
    if (op->call >= 0 && ss_call_device_serialized(m, &m->calls[op->call])) {
        if (d->legacy_op == oi) { d->legacy_end = 0; d->legacy_op = -1; }
        if (d->blocking_op == oi) { d->blocking_end = 0; d->blocking_op = -1; }
    }
}

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->has_gpu) return;
    state s = { m, NULL, NULL, NULL, NULL, NULL, 0, out };
    uint32_t ns = m->nstreams ? m->nstreams : 1;
    s.last_end = ss_xcalloc(ns, sizeof(uint64_t));
    s.last_op = ss_xcalloc(ns, sizeof(int32_t));
    s.wait_floor = ss_xcalloc(ns, sizeof(uint64_t));
    s.value_wait = ss_xcalloc(ns, 1);
    s.ndevs = 1;
    for (uint32_t i = 0; i < m->nstreams; i++)
        if (m->streams[i].ldomain >= 0 && (uint32_t)m->streams[i].ldomain + 2 > s.ndevs)
            s.ndevs = (uint32_t)m->streams[i].ldomain + 2;
    s.devs = ss_xcalloc(s.ndevs, sizeof(dev_state));
    for (uint32_t i = 0; i < s.ndevs; i++) s.devs[i].blocking_op = s.devs[i].legacy_op = -1;
    for (uint32_t i = 0; i < ns; i++) s.last_op[i] = -1;
    /* event readiness: when all work on the recording stream submitted
     * before the record had finished */
    uint64_t *event_ready = ss_xcalloc(m->nevents ? m->nevents : 1, sizeof(uint64_t));
    uint8_t *event_set = ss_xcalloc(m->nevents ? m->nevents : 1, 1);

    /* orphan ops (no joined call) enter the replay at their start time */
    uint32_t next_orphan = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        for (; next_orphan < m->nops && m->ops[next_orphan].start < c->rec->t_enter; next_orphan++)
            if (m->ops[next_orphan].call < 0) apply_op(&s, (int32_t)next_orphan, 0);
        if (c->rec->ret != 0) continue;
        /* an event record: when its stream's work so far ends; a launch
         * recording one through a launch attribute, before its kernel or
         * (a programmatic event) after it, below */
        int records = c->event >= 0 && c->stream >= 0 && ss_call_records_event(c);
        int record_after = records && c->cls == SS_API_LAUNCH && !ss_launch_records_event_before(c);
        if (records && !record_after) {
            event_ready[c->event] = s.last_end[c->stream];
            event_set[c->event] = 1;
        } else if (c->cls == SS_API_STREAM_WAIT && c->event >= 0 && c->stream >= 0 && event_set[c->event]) {
            if (event_ready[c->event] > s.wait_floor[c->stream]) s.wait_floor[c->stream] = event_ready[c->event];
        } else if (ss_call_is_unrecorded_stream_work(c) && c->cls != SS_API_STREAM_WRITE_VALUE) {
            /* a wait on a memory word, a managed-memory prefetch, a host
             * function: what follows on its stream waited for something CUPTI
             * did not record, not for the barrier (a write-value holds
             * nothing back) */
            s.value_wait[c->stream] = 1;
        }
        for (int32_t oi = c->first_op; oi >= 0; oi = m->ops[oi].next_of_call) apply_op(&s, oi, 1);
        if (record_after) {
            event_ready[c->event] = s.last_end[c->stream];
            event_set[c->event] = 1;
        }
    }
    for (; next_orphan < m->nops; next_orphan++)
        if (m->ops[next_orphan].call < 0) apply_op(&s, (int32_t)next_orphan, 0);
    free(s.last_end); free(s.last_op); free(s.wait_floor); free(s.value_wait); free(s.devs); free(event_ready); free(event_set);
}

const ss_rule ss_rule_legacy_stream_serialization = {
    "legacy-stream-serialization", "implicit serialization through the legacy default stream", run,
    SS_SAMPLED_SETTLED,
    1,   /* asks_memory */
    0,   /* asks_replay */
    1,   /* removes_causes */
};
