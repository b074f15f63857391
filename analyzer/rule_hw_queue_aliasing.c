/*
 * hw-queue-aliasing: an operation waited for an unrelated operation on
 * another stream because both streams share a hardware work queue.
 *
 * A GPU has CUDA_DEVICE_MAX_CONNECTIONS work queues (8 by default, at most
 * 32); streams are assigned to them round-robin in creation order, and a
 * queue starts its operations in the order they were submitted.  With more
 * streams than queues, a kernel whose stream is free can sit behind another
 * stream's kernel that is itself waiting (for its own stream's previous
 * kernel): the work runs in waves although nothing orders it.  The replay
 * (replay.c) finds the devices where the measured starts follow that mapping
 * everywhere and operations were seen starting only when the unrelated
 * operation ahead of them in their queue started; the cost is the what-if
 * saving with the queues unshared.
 */
#include <stdio.h>

#include "rule.h"
#include "replay.h"

static void run(const ss_model *m, ss_findings *out)
{
    const ss_replay *r = ss_replay_of(m);
    uint32_t n;
    const ss_hwq_device *q = ss_replay_hw_queues(r, &n);
    for (uint32_t i = 0; i < n; i++) {
        ss_relax rx = { .kind = SS_RELAX_HW_QUEUES, .device = q[i].device };
        uint64_t saving = ss_replay_saving(r, &rx, 1);
        char a[192], b[192], sa[96], sb[96], msg[1200];
        const ss_gpu_op *x = &m->ops[q[i].example_op], *y = &m->ops[q[i].example_blocker];
        ss_op_label(m, q[i].example_op, a, sizeof a);
        ss_op_label(m, q[i].example_blocker, b, sizeof b);
        snprintf(msg, sizeof msg,
                 "%u streams share %u hardware work queues on device %d (CUDA_DEVICE_MAX_CONNECTIONS %s %u): "
                 "%u operations whose stream was free waited for an unrelated operation queued ahead of them, "
                 "%.3f ms in all; e.g. %s on %s was ready at %.3f ms but started only when %s on %s "
                 "(same queue, itself waiting) started at %.3f ms",
                 q[i].streams, q[i].connections, q[i].device, q[i].connections_from_env ? "=" : "unset: default",
                 q[i].connections, q[i].delayed_ops, ss_ms(q[i].delay_ns), a,
                 ss_stream_describe(m, x->stream, sa, sizeof sa), ss_trace_ms(m, ss_replay_ready(r, q[i].example_op)),
                 b, ss_stream_describe(m, y->stream, sb, sizeof sb), ss_trace_ms(m, y->start));
        ss_occurrence o = {
            .rule = "hw-queue-aliasing",
            .cost_ms = ss_ms(saving),
            .cost_basis = "what-if replay: how much sooner the run ends with every stream in a queue of its own",
            .message = msg,
            .fix = "Give each stream a hardware queue: set CUDA_DEVICE_MAX_CONNECTIONS=32 (the maximum) in the "
                   "environment before the process starts CUDA; or use no more streams than connections; or "
                   "submit breadth-first (the first kernel on every stream, then the second on every stream) so "
                   "that no ready kernel is queued behind one that waits.",
            .refs = { { x->call, q[i].example_op, "delayed op" }, { y->call, q[i].example_blocker, "queued ahead" } },
            .nrefs = 2,
            .alloc = -1,
            .relax = { rx },
            .nrelax = 1,
        };
        ss_findings_add(out, m, &o);
    }
}

const ss_rule ss_rule_hw_queue_aliasing = {
    "hw-queue-aliasing", "streams waited for each other because they share a hardware queue", run,
    SS_SAMPLED_SETTLED,
    0,   /* asks_memory */
    1,   /* asks_replay */
    1,   /* removes_causes */
};
