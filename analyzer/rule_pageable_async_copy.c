/*
 * pageable-async-copy: cudaMemcpyAsync & co. whose host side is pageable
 * memory.  The driver cannot DMA from pageable memory: D2H blocks the host
 * until the copy is done, H2D is staged through a pinned bounce buffer.
 * Either way the "async" copy does not overlap the host.  Cost: the host time
 * spent inside the call.  A copy its caller synchronizes at once (a blocking
 * copy, model.h) is not an asynchronous copy and is left to implicit-sync.  Graph launches are judged by their memcpy nodes.
 */
#include <stdio.h>
#include "rule.h"

/* 1 pageable, 0 not, -1 unknown.  *dir: SS_COPY_HTOD, SS_COPY_DTOH,
 * SS_COPY_HTOH, or SS_COPY_UNKNOWN. */
static int host_side_pageable(const ss_model *m, const ss_call *c, int *dir)
{
    const ss_api_rec *r = c->rec;
    *dir = SS_COPY_UNKNOWN;
    if (c->first_op >= 0 && m->ops[c->first_op].kind == SS_OP_MEMCPY) {
        const ss_memcpy_rec *mc = (const ss_memcpy_rec *)m->ops[c->first_op].rec;
        *dir = mc->copy_kind;
        if (mc->copy_kind == SS_COPY_HTOD && mc->src_kind) return mc->src_kind == SS_MEM_PAGEABLE;
        if (mc->copy_kind == SS_COPY_DTOH && mc->dst_kind) return mc->dst_kind == SS_MEM_PAGEABLE;
        if (mc->copy_kind == SS_COPY_HTOH) return mc->src_kind == SS_MEM_PAGEABLE || mc->dst_kind == SS_MEM_PAGEABLE;
        if (mc->copy_kind != SS_COPY_HTOD && mc->copy_kind != SS_COPY_DTOH) return 0;   /* device-only copies */
    }
    if (*dir == SS_COPY_UNKNOWN)
        *dir = r->arg == SS_CUDA_MEMCPY_HOST_TO_DEVICE ? SS_COPY_HTOD
             : r->arg == SS_CUDA_MEMCPY_DEVICE_TO_HOST ? SS_COPY_DTOH
             : r->arg == SS_CUDA_MEMCPY_HOST_TO_HOST ? SS_COPY_HTOH : SS_COPY_UNKNOWN;
    if (*dir == SS_COPY_HTOD && r->mem_src) return r->mem_src == SS_MEM_PAGEABLE;
    if (*dir == SS_COPY_DTOH && r->mem_dst) return r->mem_dst == SS_MEM_PAGEABLE;
    if (*dir == SS_COPY_UNKNOWN) {
        if (r->mem_src == SS_MEM_PAGEABLE) { *dir = r->mem_dst == SS_MEM_PAGEABLE ? SS_COPY_HTOH : SS_COPY_HTOD; return 1; }
        if (r->mem_dst == SS_MEM_PAGEABLE) { *dir = SS_COPY_DTOH; return 1; }
        return -1;
    }
    if (*dir == SS_COPY_HTOH) return r->mem_src == SS_MEM_PAGEABLE || r->mem_dst == SS_MEM_PAGEABLE ? 1 : -1;
    /* no kinds recorded: a host pointer outside every pinned/managed
     * allocation seen in the trace is pageable */
    uint64_t host = *dir == SS_COPY_HTOD ? r->ptr2 : r->ptr;
    if (!host) return -1;
    int32_t a = ss_model_alloc_at(m, host, r->t_enter);
    if (a >= 0 && (m->allocs[a].kind == SS_MEM_PINNED || m->allocs[a].kind == SS_MEM_MANAGED)) return 0;
    if (a >= 0) return -1;   /* a device allocation: the kind argument was wrong, not our business */
    return 1;
}

/* A graph whose memcpy nodes have a pageable host end: the whole launch
 * becomes synchronous (measured on an H100: cudaGraphLaunch held the host
 * 1.24 ms, until the graph finished, against 0.007 ms with a pinned
 * destination).  The nodes are the graph's own GPU copies, whether the graph
 * was captured from cudaMemcpyAsync or built with cudaGraphAddMemcpyNode. */
static void graph_launch(const ss_model *m, ss_findings *out, int32_t ci)
{
    const ss_call *c = &m->calls[ci];
    uint32_t n = 0;
    uint64_t bytes = 0;
    int32_t first = -1;
    uint8_t dir = SS_COPY_UNKNOWN;
    for (int32_t oi = c->first_op; oi >= 0; oi = m->ops[oi].next_of_call) {
        if (m->ops[oi].kind != SS_OP_MEMCPY) continue;
        const ss_memcpy_rec *mc = (const ss_memcpy_rec *)m->ops[oi].rec;
        int pageable = (mc->copy_kind == SS_COPY_HTOD && mc->src_kind == SS_MEM_PAGEABLE) ||
                       (mc->copy_kind == SS_COPY_DTOH && mc->dst_kind == SS_MEM_PAGEABLE) ||
                       (mc->copy_kind == SS_COPY_HTOH &&
                        (mc->src_kind == SS_MEM_PAGEABLE || mc->dst_kind == SS_MEM_PAGEABLE));
        if (!pageable) continue;
        if (first < 0) { first = oi; dir = mc->copy_kind; }
        n++;
        bytes += mc->bytes;
    }
    if (first < 0) return;
    uint64_t dur = c->rec->t_exit > c->rec->t_enter ? c->rec->t_exit - c->rec->t_enter : 0;
    char sd[96], msg[640];
    snprintf(msg, sizeof msg,
             "%s of a graph with %u memcpy node%s (%llu bytes) %s on %s: a graph memcpy node with a pageable host "
             "end makes the launch synchronous, so the host waited for the graph; the call held the host for "
             "%.3f ms",
             ss_model_call_name(m, c), n, n == 1 ? "" : "s", (unsigned long long)bytes,
             dir == SS_COPY_DTOH ? "device-to-host into pageable host memory"
             : dir == SS_COPY_HTOD ? "host-to-device from pageable host memory" : "host-to-host with pageable memory",
             ss_stream_describe(m, c->stream, sd, sizeof sd), ss_ms(dur));
    ss_occurrence o = {
        .rule = "pageable-async-copy",
        .cost_ms = ss_ms(dur),
        .cost_basis = "host time inside the graph launch (t_exit - t_enter)",
        .message = msg,
        .fix = "Give the graph's memcpy nodes pinned host memory: allocate the host buffer with "
               "cudaMallocHost/cudaHostAlloc or register it once with cudaHostRegister before capturing or "
               "building the graph (PyTorch: pin the tensor). Then cudaGraphLaunch returns at once.",
        .refs = { { ci, first, "graph launch" } },
        .nrefs = 1,
        .relax = { { .kind = SS_RELAX_HOST_WAIT, .call = ci } },
        .nrelax = 1,
        .alloc = -1,
    };
    ss_findings_add(out, m, &o);
}

static void run(const ss_model *m, ss_findings *out)
{
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (c->rec->ret != 0) continue;
        if (ss_call_is_graph_launch(m, c)) { graph_launch(m, out, (int32_t)i); continue; }
        /* a copy recorded during stream capture ran nothing: its graph's
         * launches are judged instead */
        if (c->cls != SS_API_COPY_ASYNC || c->captured) continue;
        /* the copy half of a blocking copy (model.h) was meant to block:
         * implicit-sync judges it as the synchronous copy it is */
        if (c->blocking_copy == SS_BLOCKING_COPY_COPY) continue;
        int dir;
        if (host_side_pageable(m, c, &dir) != 1) continue;
        uint64_t dur = c->rec->t_exit > c->rec->t_enter ? c->rec->t_exit - c->rec->t_enter : 0;
        char sd[96], msg[512], basis[160];
        const char *what = dir == SS_COPY_DTOH ? "device-to-host into pageable host memory"
                         : dir == SS_COPY_HTOD ? "host-to-device from pageable host memory"
                                               : "host-to-host with pageable memory";
        snprintf(msg, sizeof msg,
                 "%s of %llu bytes %s on %s: %s; the call held the host for %.3f ms",
                 ss_model_call_name(m, c), (unsigned long long)c->rec->bytes, what,
                 ss_stream_describe(m, c->stream, sd, sizeof sd),
                 dir == SS_COPY_DTOH ? "the driver blocks until the copy has finished, so it is not asynchronous"
                          : "the driver stages it through a pinned buffer, so it does not overlap the host",
                 ss_ms(dur));
        snprintf(basis, sizeof basis, "host time inside the call (t_exit - t_enter)");
        ss_occurrence o = {
            .rule = "pageable-async-copy",
            .cost_ms = ss_ms(dur),
            .cost_basis = basis,
            .message = msg,
            .fix = "Use pinned host memory for buffers copied asynchronously: allocate them with "
                   "cudaMallocHost/cudaHostAlloc or register them once with cudaHostRegister (PyTorch: "
                   "tensor.pin_memory(), DataLoader(pin_memory=True)); then cudaMemcpyAsync returns at once "
                   "and the copy overlaps host work and kernels.",
            .refs = { { (int32_t)i, c->first_op, "copy" } },
            .nrefs = 1,
            .relax = { { .kind = SS_RELAX_HOST_WAIT, .call = (int32_t)i } },
            .nrelax = 1,
            .alloc = -1,
        };
        ss_findings_add(out, m, &o);
    }
}

const ss_rule ss_rule_pageable_async_copy = {
    "pageable-async-copy", "asynchronous copy with pageable host memory", run,
    SS_SAMPLED_NEXT,
    0,   /* asks_memory */
    0,   /* asks_replay */
    1,   /* removes_causes */
};
