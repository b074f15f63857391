/*
 * The analyzer's rules on synthetic traces written with the real writer, the
 * way the shim records them (CUPTI cbids from cupti_runtime_cbid.h, an
 * SS_REC_API_NAME per cbid, SS_REC_CONTEXT/STREAM, GPU records joined by
 * correlation id).  For each rule: a positive trace (the finding and its
 * cost are asserted) and a negative twin (no finding).
 *
 *   test_analyzer_rules                    run the checks
 *   test_analyzer_rules --write-traces DIR also leave the traces in DIR (for
 *                                          tests/test_analyzer_cli.sh)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "syncsight/trace_io.h"
#include "model.h"
#include "findings.h"
#include "rule.h"
#include "report.h"

/* CUPTI runtime cbids (cupti_runtime_cbid.h, CUDA 13.0) */
enum {
    CB_cudaMalloc = 20, CB_cudaFree = 22, CB_cudaMallocHost = 25, CB_cudaFreeHost = 26, CB_cudaMemcpy = 31,
    CB_cudaMemcpyAsync = 41, CB_cudaMemsetAsync = 51, CB_cudaStreamCreate = 129, CB_cudaStreamSynchronize = 131,
    CB_cudaEventCreate = 133, CB_cudaEventRecord = 135, CB_cudaEventSynchronize = 137,
    CB_cudaStreamWaitEvent = 147, CB_cudaDeviceSynchronize = 165, CB_cudaStreamCreateWithFlags = 198,
    CB_cudaLaunchKernel = 211, CB_cudaFreeAsync = 375, CB_cudaGraphLaunch = 311, CB_cudaStreamBeginCapture = 315,
    CB_cudaStreamEndCapture = 319, CB_cudaStreamCreateWithPriority = 200,
};
static const struct { uint32_t cbid; const char *name; } api_names[] = {
    { CB_cudaMalloc, "cudaMalloc" }, { CB_cudaFree, "cudaFree" }, { CB_cudaMallocHost, "cudaMallocHost" },
    { CB_cudaFreeHost, "cudaFreeHost" }, { CB_cudaMemcpy, "cudaMemcpy" }, { CB_cudaMemcpyAsync, "cudaMemcpyAsync" },
    { CB_cudaMemsetAsync, "cudaMemsetAsync" }, { CB_cudaStreamCreate, "cudaStreamCreate" },
    { CB_cudaStreamSynchronize, "cudaStreamSynchronize" }, { CB_cudaEventCreate, "cudaEventCreate" },
    { CB_cudaEventRecord, "cudaEventRecord" }, { CB_cudaEventSynchronize, "cudaEventSynchronize" },
    { CB_cudaStreamWaitEvent, "cudaStreamWaitEvent" }, { CB_cudaDeviceSynchronize, "cudaDeviceSynchronize" },
    { CB_cudaStreamCreateWithFlags, "cudaStreamCreateWithFlags" }, { CB_cudaLaunchKernel, "cudaLaunchKernel" },
    { CB_cudaFreeAsync, "cudaFreeAsync" }, { CB_cudaGraphLaunch, "cudaGraphLaunch" },
    { CB_cudaStreamBeginCapture, "cudaStreamBeginCapture" }, { CB_cudaStreamEndCapture, "cudaStreamEndCapture" },
    { CB_cudaStreamCreateWithPriority, "cudaStreamCreateWithPriority" },
};

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
                              fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* ------------------------------------------------------------ trace builder */

#define T0 1000000000ull                 /* header start: 1 s on the trace clock */
#define US(x) (T0 + (uint64_t)((x) * 1000.0))
#define MS(x) (T0 + (uint64_t)((x) * 1000000.0))
#define TID 4242
#define LEGACY_SID 7

typedef struct tb {
    ss_writer w;
    uint8_t *buf;
    uint32_t used, count, cap;
    uint32_t next_corr;
    char path[512];
} tb;

static const char *out_dir;

static void tb_flush(tb *b)
{
    if (!b->used) return;
    int rc = ss_writer_write_block(&b->w, b->buf, b->used, b->count);
    CHECK(rc == 0, "write block: %d", rc);
    b->used = b->count = 0;
}

static void *tb_rec(tb *b, uint16_t type, uint32_t fixed, uint32_t tail)
{
    void *r = ss_rec_reserve(b->buf, b->cap, &b->used, type, fixed, tail);
    if (!r) { tb_flush(b); r = ss_rec_reserve(b->buf, b->cap, &b->used, type, fixed, tail); }
    b->count++;
    return r;
}

static void tb_open(tb *b, const char *name)
{
    memset(b, 0, sizeof *b);
    b->cap = 1 << 16;
    b->buf = calloc(1, b->cap);
    b->next_corr = 100;
    snprintf(b->path, sizeof b->path, "%s/%s.sstrace", out_dir, name);
    unlink(b->path);
    ss_file_header h;
    ss_file_header_init(&h, T0, 0);
    h.pid = 777;
    int rc = ss_writer_open(&b->w, b->path, &h);
    CHECK(rc == 0, "open %s: %d", b->path, rc);
    for (size_t i = 0; i < sizeof api_names / sizeof api_names[0]; i++) {
        uint32_t len = (uint32_t)strlen(api_names[i].name);
        ss_api_name_rec *r = tb_rec(b, SS_REC_API_NAME, sizeof *r, len);
        r->cbid = api_names[i].cbid;
        r->len = len;
        memcpy((char *)r + sizeof *r, api_names[i].name, len);
    }
    ss_context_rec *c = tb_rec(b, SS_REC_CONTEXT, sizeof *c, 0);
    c->context_id = 1; c->device = 0; c->null_stream_id = LEGACY_SID;
    const char *kname = "_Z6kernelPi";
    ss_string_rec *s = tb_rec(b, SS_REC_STRING, sizeof *s, (uint32_t)strlen(kname));
    s->id = 1; s->len = (uint32_t)strlen(kname);
    memcpy((char *)s + sizeof *s, kname, s->len);
}

static void tb_close(tb *b)
{
    tb_flush(b);
    ss_writer_close(&b->w);
    free(b->buf);
}

/* One host call.  Returns its correlation id. */
typedef struct call_args {
    uint32_t cbid; uint64_t t0, t1; uint64_t stream, event, ptr, ptr2, bytes; uint32_t arg;
    uint8_t mem_dst, mem_src; int ret; const uint64_t *params; uint8_t nparams; uint32_t pystack;
} call_args;

static uint32_t tb_call(tb *b, call_args a)
{
    ss_api_rec *r = tb_rec(b, SS_REC_API, sizeof *r, 8u * a.nparams);
    r->cbid = a.cbid; r->tid = TID; r->t_enter = a.t0; r->t_exit = a.t1; r->ret = a.ret;
    r->corr = b->next_corr++;
    r->stream = a.stream; r->event = a.event; r->ptr = a.ptr; r->ptr2 = a.ptr2; r->bytes = a.bytes; r->arg = a.arg;
    r->mem_dst = a.mem_dst; r->mem_src = a.mem_src; r->nparams = a.nparams; r->device = 0;
    r->flags = SS_API_F_CUPTI_CB;
    r->pystack_id = a.pystack;
    if (a.nparams) memcpy((char *)r + sizeof *r, a.params, 8u * a.nparams);
    return r->corr;
}
#define CALL(b, ...) tb_call(b, (call_args){ __VA_ARGS__ })

static void tb_stream(tb *b, uint64_t handle, uint32_t sid, uint32_t kind, uint32_t flags, uint32_t corr)
{
    ss_stream_rec *r = tb_rec(b, SS_REC_STREAM, sizeof *r, 0);
    r->handle = handle; r->stream_id = sid; r->context_id = 1; r->device = 0; r->kind = kind; r->flags = flags; r->corr = corr;
}

/* cudaStreamCreateWithFlags + the STREAM record the shim writes for it */
static void tb_create_stream(tb *b, uint64_t t, uint64_t handle, uint32_t sid, uint32_t flags)
{
    uint32_t corr = CALL(b, .cbid = CB_cudaStreamCreateWithFlags, .t0 = t, .t1 = t + 5000, .stream = handle, .arg = flags);
    tb_stream(b, handle, sid, flags ? SS_STREAM_NON_BLOCKING : SS_STREAM_BLOCKING, flags, corr);
}

static void tb_kernel(tb *b, uint32_t corr, uint32_t sid, uint64_t start, uint64_t end)
{
    ss_kernel_rec *k = tb_rec(b, SS_REC_KERNEL, sizeof *k, 0);
    k->g.start = start; k->g.end = end; k->g.corr = corr; k->g.stream_id = sid; k->g.context_id = 1; k->g.device = 0;
    k->name_id = 1; k->grid[0] = k->block[0] = 1;
}

/* a launch (call + kernel record) */
static uint32_t tb_launch(tb *b, uint64_t t, uint64_t stream, uint32_t sid, uint64_t start, uint64_t end,
                          const uint64_t *params, uint8_t nparams)
{
    uint32_t corr = CALL(b, .cbid = CB_cudaLaunchKernel, .t0 = t, .t1 = t + 5000, .stream = stream,
                         .params = params, .nparams = nparams);
    tb_kernel(b, corr, sid, start, end);
    return corr;
}

static void tb_memcpy_rec(tb *b, uint32_t corr, uint32_t sid, uint64_t start, uint64_t end, uint8_t kind,
                          uint8_t src_kind, uint8_t dst_kind, uint64_t bytes)
{
    ss_memcpy_rec *r = tb_rec(b, SS_REC_MEMCPY, sizeof *r, 0);
    r->g.start = start; r->g.end = end; r->g.corr = corr; r->g.stream_id = sid; r->g.context_id = 1;
    r->copy_kind = kind; r->src_kind = src_kind; r->dst_kind = dst_kind; r->bytes = bytes; r->async = 1;
}

/* ------------------------------------------------------------ analysis */

typedef struct result { ss_model *m; ss_findings f; } result;

static result analyze(const char *path, const ss_rule *rule)
{
    result r;
    char err[256] = "";
    r.m = ss_model_load(path, err, sizeof err);
    if (!r.m) { fprintf(stderr, "cannot load %s: %s\n", path, err); exit(1); }
    ss_findings_init(&r.f);
    rule->run(r.m, &r.f);
    ss_findings_finish(&r.f, r.m->t_last - r.m->t_first);
    return r;
}

static void done(result *r)
{
    ss_findings_free(&r->f);
    ss_model_free(r->m);
}

static double total_cost(const result *r)
{
    double c = 0;
    for (uint32_t i = 0; i < r->f.n; i++) c += r->f.v[i].cost_ms;
    return c;
}

static uint32_t total_count(const result *r)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < r->f.n; i++) c += r->f.v[i].count;
    return c;
}

#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

#define DEV_BUF 0x7f0000000000ull
#define PINNED_BUF 0x200000000ull
#define PAGEABLE_BUF 0x5555000000ull

/* ------------------------------------------------------------ implicit-sync */

static void write_implicit_sync(const char *name, int positive)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 20);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(30), .t1 = US(40), .ptr = DEV_BUF + (1 << 20), .bytes = 1 << 20);
    /* a cudaFree on an idle device: 20 us, the unblocked reference */
    CALL(&b, .cbid = CB_cudaFree, .t0 = US(50), .t1 = US(70), .ptr = DEV_BUF + (1 << 20));
    /* a 50 ms kernel, then cudaFree while it runs */
    uint64_t p[1] = { DEV_BUF };
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(51), p, 1);
    if (positive) {
        CALL(&b, .cbid = CB_cudaFree, .t0 = MS(2), .t1 = MS(51.02), .ptr = DEV_BUF);
        /* the next work is queued 10 ms after cudaFree returned */
        tb_launch(&b, MS(61), 0xA1, 13, MS(61.01), MS(62), NULL, 0);
    } else {
        /* the fixed twin: cudaFreeAsync returns at once */
        CALL(&b, .cbid = CB_cudaFreeAsync, .t0 = MS(2), .t1 = MS(2.01), .ptr = DEV_BUF, .stream = 0xA1);
        tb_launch(&b, MS(2.1), 0xA1, 13, MS(51), MS(52), NULL, 0);
        /* slow while the kernel runs, but not waiting for it (pinning a big
         * buffer): its return follows no GPU op's end */
        CALL(&b, .cbid = CB_cudaMallocHost, .t0 = MS(3), .t1 = MS(9), .ptr = PINNED_BUF, .bytes = 1 << 30);
        /* and a slow cudaFree on an idle device is not an implicit sync */
        CALL(&b, .cbid = CB_cudaMalloc, .t0 = MS(60), .t1 = MS(60.01), .ptr = DEV_BUF, .bytes = 64);
        CALL(&b, .cbid = CB_cudaFree, .t0 = MS(61), .t1 = MS(63), .ptr = DEV_BUF);
    }
    tb_close(&b);
}

static void test_implicit_sync(void)
{
    write_implicit_sync("implicit_sync", 1);
    write_implicit_sync("implicit_sync_fixed", 0);
    char path[600];
    snprintf(path, sizeof path, "%s/implicit_sync.sstrace", out_dir);
    result r = analyze(path, &ss_rule_implicit_sync);
    CHECK(r.f.n == 1, "implicit-sync findings: %u", r.f.n);
    if (r.f.n == 1) {
        /* blocked 49.02 ms + GPU idle 51.02 -> 61.01 ms = 9.99 ms */
        CHECK(NEAR(r.f.v[0].cost_ms, 59.01, 0.01), "cost %.4f", r.f.v[0].cost_ms);
        CHECK(r.f.v[0].severity == SS_SEV_WARNING, "severity %d", r.f.v[0].severity);
        CHECK(strstr(r.f.v[0].message, "cudaFree") != NULL, "message %s", r.f.v[0].message);
        CHECK(strstr(r.f.v[0].fix, "cudaFreeAsync") != NULL, "fix %s", r.f.v[0].fix);
    }
    done(&r);
    snprintf(path, sizeof path, "%s/implicit_sync_fixed.sstrace", out_dir);
    r = analyze(path, &ss_rule_implicit_sync);
    CHECK(r.f.n == 0, "implicit-sync on the fixed twin: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    done(&r);
}

/* PyTorch's loss.item(): cudaMemcpyAsync + cudaStreamSynchronize issued by
 * ATen for a user line; torch.cuda.synchronize() is the explicit twin. */
static void tb_string(tb *b, uint32_t id, const char *text)
{
    ss_string_rec *s = tb_rec(b, SS_REC_STRING, sizeof *s, (uint32_t)strlen(text));
    s->id = id; s->len = (uint32_t)strlen(text);
    memcpy((char *)s + sizeof *s, text, s->len);
}

static void write_item(const char *name, int positive)
{
    tb b;
    tb_open(&b, name);
    tb_string(&b, 10, "/home/u/item_in_loop.py");
    tb_string(&b, 11, "<module>");
    tb_string(&b, 12, "/usr/lib/python3/site-packages/torch/cuda/__init__.py");
    tb_string(&b, 13, "synchronize");
    ss_pystack_rec *p = tb_rec(&b, SS_REC_PYSTACK, sizeof *p, 2 * sizeof(ss_pyframe));
    p->id = 1; p->depth = 2;
    ss_pyframe *f = (ss_pyframe *)((char *)p + sizeof *p);
    if (positive) { f[0] = (ss_pyframe){ 10, 11, 24, 0 }; f[1] = f[0]; }
    else { f[0] = (ss_pyframe){ 12, 13, 801, 0 }; f[1] = (ss_pyframe){ 10, 11, 24, 0 }; }
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(10), .t1 = US(20), .ptr = PINNED_BUF, .bytes = 4);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(30), .t1 = US(40), .ptr = DEV_BUF, .bytes = 4);
    double t = 1;
    for (int step = 0; step < 5; step++) {
        tb_launch(&b, MS(t), 0, LEGACY_SID, MS(t + 0.01), MS(t + 3), NULL, 0);      /* the step: 3 ms */
        uint32_t corr = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t + 0.02), .t1 = MS(t + 0.03), .stream = 0,
                             .ptr = PINNED_BUF, .ptr2 = DEV_BUF, .bytes = 4, .arg = 2,
                             .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE, .pystack = 1);
        tb_memcpy_rec(&b, corr, LEGACY_SID, MS(t + 3), MS(t + 3.001), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4);
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 0.04), .t1 = MS(t + 3.01), .stream = 0, .pystack = 1);
        t += 3.5;   /* the GPU idles 0.49 ms while Python launches the next step */
    }
    /* an idle sync: the unblocked reference duration */
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t), .t1 = MS(t + 0.005), .stream = 0, .pystack = 1);
    tb_close(&b);
}

static void test_item(void)
{
    write_item("item_in_loop", 1);
    write_item("explicit_synchronize", 0);
    char path[600];
    snprintf(path, sizeof path, "%s/item_in_loop.sstrace", out_dir);
    result r = analyze(path, &ss_rule_implicit_sync);
    CHECK(r.f.n == 1, "item findings: %u", r.f.n);
    if (r.f.n == 1) {
        CHECK(r.f.v[0].count == 5, "count %u", r.f.v[0].count);
        CHECK(strstr(r.f.v[0].site, "item_in_loop.py:24") != NULL, "site %s", r.f.v[0].site);
        /* each step: blocked 2.97 ms, then the GPU idled until the next launch
         * (4 of 5 steps have a next one): 0.49 + 0.01 ms */
        CHECK(NEAR(r.f.v[0].cost_ms, 5 * 2.97 + 4 * 0.5, 0.01), "cost %.4f", r.f.v[0].cost_ms);
        CHECK(strstr(r.f.v[0].fix, ".item()") != NULL, "fix");
    }
    done(&r);
    snprintf(path, sizeof path, "%s/explicit_synchronize.sstrace", out_dir);
    r = analyze(path, &ss_rule_implicit_sync);
    CHECK(r.f.n == 0, "torch.cuda.synchronize() is not implicit: %u", r.f.n);
    done(&r);
}

/* ------------------------------------------------------- pageable-async-copy */

static void write_pageable(const char *name, int positive)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 20);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 1 << 20);
    for (int i = 0; i < 3; i++) {
        double t = 1 + 10 * i;
        tb_launch(&b, MS(t), 0xA1, 13, MS(t + 0.01), MS(t + 4), NULL, 0);
        if (positive) {
            /* D2H into pageable memory: blocks until the copy is done (4 ms) */
            uint32_t corr = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t + 0.02), .t1 = MS(t + 4.02),
                                 .stream = 0xA1, .ptr = PAGEABLE_BUF, .ptr2 = DEV_BUF, .bytes = 1 << 20, .arg = 2,
                                 .mem_dst = SS_MEM_PAGEABLE, .mem_src = SS_MEM_DEVICE);
            tb_memcpy_rec(&b, corr, 13, MS(t + 4), MS(t + 4.01), 2, SS_MEM_DEVICE, SS_MEM_PAGEABLE, 1 << 20);
        } else {
            /* pinned: returns at once (no kinds recorded: known from cudaMallocHost) */
            uint32_t corr = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t + 0.02), .t1 = MS(t + 0.03),
                                 .stream = 0xA1, .ptr = PINNED_BUF, .ptr2 = DEV_BUF, .bytes = 1 << 20, .arg = 2);
            tb_memcpy_rec(&b, corr, 13, MS(t + 4), MS(t + 4.01), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 1 << 20);
        }
    }
    if (positive) {
        /* H2D with no kinds recorded anywhere: the host pointer is in no
         * pinned allocation, so pageable */
        CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(40), .t1 = MS(40.5), .stream = 0xA1, .ptr = DEV_BUF,
             .ptr2 = PAGEABLE_BUF, .bytes = 4096, .arg = 1);
    }
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(41), .t1 = MS(41.01), .stream = 0xA1);
    tb_close(&b);
}

static void test_pageable(void)
{
    write_pageable("pageable", 1);
    write_pageable("pageable_fixed", 0);
    char path[600];
    snprintf(path, sizeof path, "%s/pageable.sstrace", out_dir);
    result r = analyze(path, &ss_rule_pageable_async_copy);
    /* without call stacks the site is "API on stream": all four copies (three
     * D2H, one H2D) fold into one finding */
    CHECK(r.f.n == 1, "pageable findings: %u", r.f.n);
    CHECK(total_count(&r) == 4, "occurrences %u", total_count(&r));
    CHECK(NEAR(total_cost(&r), 3 * 4.0 + 0.5, 0.001), "cost %.4f", total_cost(&r));
    if (r.f.n >= 1) {
        CHECK(r.f.v[0].severity == SS_SEV_WARNING, "severity");
        CHECK(strstr(r.f.v[0].message, "pageable") != NULL, "message %s", r.f.v[0].message);
        CHECK(strstr(r.f.v[0].fix, "cudaHostRegister") != NULL, "fix");
    }
    done(&r);
    snprintf(path, sizeof path, "%s/pageable_fixed.sstrace", out_dir);
    r = analyze(path, &ss_rule_pageable_async_copy);
    CHECK(r.f.n == 0, "pageable on the fixed twin: %u", r.f.n);
    done(&r);
}

/* ---------------------------------------------- legacy-stream-serialization */

/* three 30 ms kernels: stream A, legacy stream, stream B.  mode 0: blocking
 * streams (serialized), 1: non-blocking streams (overlapping), 2: blocking
 * streams but each kernel waits for the previous one through an event (the
 * serialization is the program's own) */
static void write_legacy(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    uint32_t flags = mode == 1 ? 1 : 0;
    tb_create_stream(&b, US(1), 0xA1, 13, flags);
    tb_create_stream(&b, US(2), 0xB1, 14, flags);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(5), .t1 = US(6), .event = 0xE2);
    if (mode == 1) {
        tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(31), NULL, 0);
        tb_launch(&b, MS(1.1), 0, LEGACY_SID, MS(1.11), MS(31.1), NULL, 0);
        tb_launch(&b, MS(1.2), 0xB1, 14, MS(1.21), MS(31.2), NULL, 0);
    } else {
        tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(31), NULL, 0);
        if (mode == 2) {
            CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.02), .t1 = MS(1.03), .stream = 0xA1, .event = 0xE1);
            CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.04), .t1 = MS(1.05), .stream = 0, .event = 0xE1);
        }
        tb_launch(&b, MS(1.1), 0, LEGACY_SID, MS(31.005), MS(61), NULL, 0);
        if (mode == 2) {
            CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.12), .t1 = MS(1.13), .stream = 0, .event = 0xE2);
            CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.14), .t1 = MS(1.15), .stream = 0xB1, .event = 0xE2);
        }
        tb_launch(&b, MS(1.2), 0xB1, 14, MS(61.005), MS(91), NULL, 0);
    }
    /* as test_programs/legacy_stream.cu ends: sync first, stream 0, second */
    double end_a = 31, end_legacy = mode == 1 ? 31.1 : 61, end_b = mode == 1 ? 31.2 : 91;
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.3), .t1 = MS(end_a + 0.01), .stream = 0xA1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(end_a + 0.02), .t1 = MS(end_legacy + 0.01), .stream = 0);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(end_legacy + 0.02), .t1 = MS(end_b + 0.01), .stream = 0xB1);
    tb_close(&b);
}

static void test_legacy(void)
{
    write_legacy("legacy", 0);
    write_legacy("legacy_nonblocking", 1);
    write_legacy("legacy_with_events", 2);
    char path[600];
    snprintf(path, sizeof path, "%s/legacy.sstrace", out_dir);
    result r = analyze(path, &ss_rule_legacy_stream_serialization);
    CHECK(r.f.n == 2, "legacy findings: %u", r.f.n);
    /* legacy kernel: could start at 1.1 ms, started when A ended (31 ms):
     * 29.9 ms; B kernel: could start at 1.2, released at 61 ms: 59.8 ms */
    CHECK(NEAR(total_cost(&r), 29.9 + 59.8, 0.01), "cost %.4f", total_cost(&r));
    if (r.f.n == 2) {
        CHECK(NEAR(r.f.v[0].cost_ms, 59.8, 0.01), "largest %.4f", r.f.v[0].cost_ms);
        CHECK(strstr(r.f.v[0].message, "legacy") != NULL, "message %s", r.f.v[0].message);
        CHECK(strstr(r.f.v[0].fix, "cudaStreamNonBlocking") != NULL, "fix");
    }
    done(&r);
    snprintf(path, sizeof path, "%s/legacy_nonblocking.sstrace", out_dir);
    r = analyze(path, &ss_rule_legacy_stream_serialization);
    CHECK(r.f.n == 0, "legacy on non-blocking streams: %u", r.f.n);
    done(&r);
    snprintf(path, sizeof path, "%s/legacy_with_events.sstrace", out_dir);
    r = analyze(path, &ss_rule_legacy_stream_serialization);
    CHECK(r.f.n == 0, "legacy with explicit events: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    done(&r);
}

/* ------------------------------------------------------ device-sync-overuse */

static void write_device_sync_n(const char *name, int positive, int iterations);
static void write_device_sync(const char *name, int positive) { write_device_sync_n(name, positive, 3); }

static void write_device_sync_n(const char *name, int positive, int iterations)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xF1, 13, 1);   /* fast */
    tb_create_stream(&b, US(2), 0xB1, 14, 1);   /* background */
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 64);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 64);
    double t = 1;
    uint64_t p[1] = { DEV_BUF };
    for (int it = 0; it < iterations; it++) {
        tb_launch(&b, MS(t), 0xB1, 14, MS(t + 0.01), MS(t + 20), NULL, 0);      /* 20 ms background */
        tb_launch(&b, MS(t + 0.02), 0xF1, 13, MS(t + 0.03), MS(t + 1), p, 1);  /* 1 ms result */
        uint32_t corr = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t + 0.04), .t1 = MS(t + 0.05), .stream = 0xF1,
                             .ptr = PINNED_BUF, .ptr2 = DEV_BUF, .bytes = 4, .arg = 2,
                             .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
        tb_memcpy_rec(&b, corr, 13, MS(t + 1), MS(t + 1.01), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4);
        if (positive) {
            CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(t + 0.06), .t1 = MS(t + 20.02));
            t += 20.1;
        } else {
            CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 0.06), .t1 = MS(t + 1.02), .stream = 0xF1);
            t += 1.1;
        }
    }
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t), .t1 = MS(t + 60), .stream = 0xB1);
    /* positive == 2: the program runs on for 400 ms more (19 ms is then under
     * 10% of its wall time) */
    if (positive == 2) CALL(&b, .cbid = CB_cudaMalloc, .t0 = MS(t + 460), .t1 = MS(t + 460.01), .ptr = DEV_BUF + 4096, .bytes = 64);
    tb_close(&b);
}

static void test_device_sync(void)
{
    write_device_sync("device_sync", 1);
    write_device_sync("device_sync_fixed", 0);
    char path[600];
    snprintf(path, sizeof path, "%s/device_sync.sstrace", out_dir);
    result r = analyze(path, &ss_rule_device_sync_overuse);
    CHECK(r.f.n == 1, "device-sync findings: %u", r.f.n);
    if (r.f.n == 1) {
        CHECK(r.f.v[0].count == 3, "count %u", r.f.v[0].count);
        /* each sync returned at t+20.02 while the needed copy ended at t+1.01 */
        CHECK(NEAR(r.f.v[0].cost_ms, 3 * 19.01, 0.01), "cost %.4f", r.f.v[0].cost_ms);
        CHECK(strstr(r.f.v[0].fix, "cudaStreamSynchronize") != NULL, "fix");
        /* repeated at one site (a loop): ranked by cost, a warning */
        CHECK(r.f.v[0].severity == SS_SEV_WARNING, "loop severity %d", r.f.v[0].severity);
    }
    done(&r);
    /* the same sync once: judged by the size of its waste */
    write_device_sync_n("device_sync_once", 1, 1);
    snprintf(path, sizeof path, "%s/device_sync_once.sstrace", out_dir);
    r = analyze(path, &ss_rule_device_sync_overuse);
    CHECK(r.f.n == 1, "one-off device-sync findings: %u", r.f.n);
    if (r.f.n == 1) {
        CHECK(r.f.v[0].count == 1, "count %u", r.f.v[0].count);
        /* 19.01 ms wasted of a ~80 ms trace: >= 10 ms and >= 10% of the wall:
         * a large one-off waste stays a warning */
        CHECK(r.f.v[0].severity == SS_SEV_WARNING, "large one-off severity %d", r.f.v[0].severity);
    }
    done(&r);
    write_device_sync_n("device_sync_once_small", 2, 1);
    snprintf(path, sizeof path, "%s/device_sync_once_small.sstrace", out_dir);
    r = analyze(path, &ss_rule_device_sync_overuse);
    CHECK(r.f.n == 1, "small one-off device-sync findings: %u", r.f.n);
    if (r.f.n == 1) {
        CHECK(r.f.v[0].count == 1, "count %u", r.f.v[0].count);
        CHECK(r.f.v[0].severity == SS_SEV_INFO, "small one-off severity %d", r.f.v[0].severity);
        CHECK(strstr(r.f.v[0].message, "synchronized once") != NULL, "message %s", r.f.v[0].message);
    }
    done(&r);
    snprintf(path, sizeof path, "%s/device_sync_fixed.sstrace", out_dir);
    r = analyze(path, &ss_rule_device_sync_overuse);
    CHECK(r.f.n == 0, "device-sync on the fixed twin: %u", r.f.n);
    done(&r);
}

/* ------------------------------------------------------------ missing-fence */

/* mode 0: no fence, 1: event recorded on the producer + wait (fixed),
 * 2: event recorded on the consumer's own stream (wrong stream) */
static void write_fence(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);   /* producer */
    tb_create_stream(&b, US(2), 0xC1, 14, 1);   /* consumer */
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(30), .t1 = US(40), .ptr = DEV_BUF + 0x100000, .bytes = 4);
    CALL(&b, .cbid = CB_cudaMemsetAsync, .t0 = US(50), .t1 = US(55), .stream = 0xA1, .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMemsetAsync, .t0 = US(60), .t1 = US(65), .stream = 0xC1, .ptr = DEV_BUF + 0x100000, .bytes = 4);
    uint64_t prod[2] = { DEV_BUF, 20000000 };          /* buffer, spin ns (not a pointer) */
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(21), prod, 2);
    if (mode == 1) {
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.02), .t1 = MS(1.03), .stream = 0xA1, .event = 0xE1);
        CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.04), .t1 = MS(1.05), .stream = 0xC1, .event = 0xE1);
    } else if (mode == 2) {
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.02), .t1 = MS(1.03), .stream = 0xC1, .event = 0xE1);
        CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.04), .t1 = MS(1.05), .stream = 0xC1, .event = 0xE1);
    }
    uint64_t cons[2] = { DEV_BUF, DEV_BUF + 0x100000 };
    tb_launch(&b, MS(1.1), 0xC1, 14, mode == 1 ? MS(21.01) : MS(1.11), mode == 1 ? MS(21.5) : MS(1.6), cons, 2);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(2), .t1 = MS(22), .stream = 0xC1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(22.1), .t1 = MS(22.2), .stream = 0xA1);
    /* after both syncs the host reuses the buffer on the consumer: ordered */
    CALL(&b, .cbid = CB_cudaMemsetAsync, .t0 = MS(23), .t1 = MS(23.01), .stream = 0xC1, .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaFree, .t0 = MS(24), .t1 = MS(24.1), .ptr = DEV_BUF);
    tb_close(&b);
}

static void test_missing_fence(void)
{
    write_fence("missing_fence", 0);
    write_fence("missing_fence_fixed", 1);
    write_fence("missing_fence_wrong_stream", 2);
    char path[600];
    snprintf(path, sizeof path, "%s/missing_fence.sstrace", out_dir);
    result r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 1, "missing-fence findings: %u", r.f.n);
    if (r.f.n == 1) {
        const ss_finding *x = &r.f.v[0];
        CHECK(x->severity == SS_SEV_ERROR && x->cost_ms == 0, "severity %d cost %.3f", x->severity, x->cost_ms);
        CHECK(x->alloc >= 0 && r.m->allocs[x->alloc].ptr == DEV_BUF, "buffer");
        CHECK(x->nrefs >= 2 && x->refs[1].call >= 0 &&
              r.m->calls[x->refs[1].call].rec->stream == 0xA1, "other access is the producer");
        CHECK(strstr(x->fix, "cudaStreamWaitEvent") != NULL, "fix");
    }
    done(&r);
    snprintf(path, sizeof path, "%s/missing_fence_wrong_stream.sstrace", out_dir);
    r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 1, "missing-fence with the event on the wrong stream: %u", r.f.n);
    done(&r);
    snprintf(path, sizeof path, "%s/missing_fence_fixed.sstrace", out_dir);
    r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 0, "missing-fence on the fixed twin: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    done(&r);
}

/* --------------------------------------------------- unrecorded-event-wait */

static void write_unrecorded(const char *name, int positive)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xC1, 14, 1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(5), .t1 = US(6), .event = 0xE2);
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(5), NULL, 0);
    if (!positive) {
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.02), .t1 = MS(1.03), .stream = 0xA1, .event = 0xE1);
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.035), .t1 = MS(1.037), .stream = 0xA1, .event = 0xE2);
    }
    CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.04), .t1 = MS(1.05), .stream = 0xC1, .event = 0xE1);
    CALL(&b, .cbid = CB_cudaEventSynchronize, .t0 = MS(1.06), .t1 = MS(positive ? 1.07 : 5.01), .event = 0xE2);
    if (positive) /* recorded only after the wait: still too late */
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(2), .t1 = MS(2.01), .stream = 0xA1, .event = 0xE1);
    tb_close(&b);
}

static void test_unrecorded(void)
{
    write_unrecorded("unrecorded_event", 1);
    write_unrecorded("unrecorded_event_fixed", 0);
    char path[600];
    snprintf(path, sizeof path, "%s/unrecorded_event.sstrace", out_dir);
    result r = analyze(path, &ss_rule_unrecorded_event_wait);
    CHECK(r.f.n == 2, "unrecorded findings: %u", r.f.n);
    if (r.f.n == 2) {
        CHECK(r.f.v[0].severity == SS_SEV_ERROR && strstr(r.f.v[0].message, "cudaStreamWaitEvent"),
              "first: %s", r.f.v[0].message);
        CHECK(r.f.v[1].severity == SS_SEV_WARNING && strstr(r.f.v[1].message, "cudaEventSynchronize"),
              "second: %s", r.f.v[1].message);
        CHECK(r.f.v[0].cost_ms == 0 && r.f.v[1].cost_ms == 0, "cost 0");
    }
    done(&r);
    snprintf(path, sizeof path, "%s/unrecorded_event_fixed.sstrace", out_dir);
    r = analyze(path, &ss_rule_unrecorded_event_wait);
    CHECK(r.f.n == 0, "unrecorded on the fixed twin: %u", r.f.n);
    done(&r);
}

/* ------------------------------------------------------------ the model */

static void test_model(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/legacy.sstrace", out_dir);
    char err[256];
    ss_model *m = ss_model_load(path, err, sizeof err);
    CHECK(m != NULL, "load: %s", err);
    if (!m) return;
    /* streams: the legacy one (from CONTEXT + handle 0) and two blocking ones */
    int legacy = 0, blocking = 0;
    for (uint32_t i = 0; i < m->nstreams; i++) {
        if (m->streams[i].kind == SS_STREAM_LEGACY_NULL) { legacy++; CHECK(m->streams[i].stream_id == LEGACY_SID, "legacy id"); }
        if (m->streams[i].kind == SS_STREAM_BLOCKING) blocking++;
    }
    CHECK(legacy == 1 && blocking == 2 && m->nstreams == 3, "streams: %u (legacy %d blocking %d)", m->nstreams, legacy, blocking);
    /* every kernel is joined to its launch */
    for (uint32_t i = 0; i < m->nops; i++) CHECK(m->ops[i].call >= 0, "op %u joined", i);
    CHECK(m->ndevices == 1, "devices %u", m->ndevices);
    if (m->ndevices == 1) {
        CHECK(NEAR(m->devices[0].busy_ns / 1e6, 89.99, 0.01), "busy %.3f", m->devices[0].busy_ns / 1e6);
        CHECK(m->devices[0].multi_stream_kernel_ns < 20000, "kernels serialized: %llu ns overlap",
              (unsigned long long)m->devices[0].multi_stream_kernel_ns);
    }
    char base[64];
    ss_api_base_name("cudaMemcpyAsync_ptsz", base, sizeof base);
    CHECK(!strcmp(base, "cudaMemcpyAsync"), "base %s", base);
    ss_api_base_name("cudaLaunchKernel_v7000", base, sizeof base);
    CHECK(!strcmp(base, "cudaLaunchKernel"), "base %s", base);
    CHECK(ss_api_classify("cudaMemcpyAsync") == SS_API_COPY_ASYNC, "class");
    CHECK(ss_api_classify("cudaMemcpy2D") == SS_API_COPY_SYNC, "class");
    CHECK(ss_api_classify("cudaFreeAsync") == SS_API_FREE, "class");
    CHECK(ss_api_classify("__cudaLaunchKernel") == SS_API_LAUNCH, "class");
    CHECK(ss_api_classify("cudaEventRecordWithFlags") == SS_API_EVENT_RECORD, "class");
    CHECK(ss_api_classify("cudaMallocHost") == SS_API_ALLOC, "class");
    CHECK(ss_api_classify("cudaGetLastError") == SS_API_OTHER, "class");
    ss_model_free(m);

    /* overlap: non-blocking streams run the three kernels at once */
    snprintf(path, sizeof path, "%s/legacy_nonblocking.sstrace", out_dir);
    m = ss_model_load(path, err, sizeof err);
    CHECK(m && m->ndevices == 1 && m->devices[0].multi_stream_kernel_ns > 29000000ull, "overlap measured");
    ss_model_free(m);
}

/* ------------------------------------------- hostile strings, mutations */

/* A trace whose program strings try to reach the terminal: ESC sequences,
 * newlines, invalid UTF-8, quotes. */
static void write_hostile(void)
{
    tb b;
    tb_open(&b, "hostile");
    const char *evil = "\x1b[31mred\x1b[0m\n\"quote\\\xff\xc3(\x07";
    ss_string_rec *s = tb_rec(&b, SS_REC_STRING, sizeof *s, (uint32_t)strlen(evil));
    s->id = 2; s->len = (uint32_t)strlen(evil);
    memcpy((char *)s + sizeof *s, evil, s->len);
    ss_nvtx_rec *n = tb_rec(&b, SS_REC_NVTX, sizeof *n, 0);
    n->start = MS(0.5); n->end = MS(100); n->tid = TID; n->name_id = 2;
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    uint32_t corr = CALL(&b, .cbid = CB_cudaLaunchKernel, .t0 = MS(1), .t1 = MS(1.01), .stream = 0xA1);
    ss_kernel_rec *k = tb_rec(&b, SS_REC_KERNEL, sizeof *k, 0);
    k->g.start = MS(1.02); k->g.end = MS(40); k->g.corr = corr; k->g.stream_id = 13; k->name_id = 2;
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = MS(2), .t1 = MS(2.01), .ptr = DEV_BUF, .bytes = 64);
    CALL(&b, .cbid = CB_cudaFree, .t0 = MS(3), .t1 = MS(40.01), .ptr = DEV_BUF);
    /* an API name that is not text, for a cbid never seen */
    const char *bad = "cuda\x1b]0;pwned\x07Evil";
    ss_api_name_rec *an = tb_rec(&b, SS_REC_API_NAME, sizeof *an, (uint32_t)strlen(bad));
    an->cbid = 999; an->len = (uint32_t)strlen(bad);
    memcpy((char *)an + sizeof *an, bad, an->len);
    CALL(&b, .cbid = 999, .t0 = MS(5), .t1 = MS(39.5));
    tb_close(&b);
}

static int contains_raw_control(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int c, bad = 0;
    while ((c = fgetc(f)) != EOF)
        if ((c < 0x20 && c != '\n') || c == 0x7f || c == 0xff) bad = 1;
    fclose(f);
    return bad;
}

static void test_hostile(void)
{
    write_hostile();
    char path[600], out[700];
    snprintf(path, sizeof path, "%s/hostile.sstrace", out_dir);
    char err[256];
    ss_process_result p;
    memset(&p, 0, sizeof p);
    p.path = path;
    p.model = ss_model_load(path, err, sizeof err);
    CHECK(p.model != NULL, "load %s", err);
    if (!p.model) return;
    ss_findings_init(&p.findings);
    ss_rules_run_all(p.model, &p.findings);
    ss_findings_finish(&p.findings, p.model->t_last - p.model->t_first);
    CHECK(p.findings.n >= 1, "the slow calls are found");
    for (int json = 0; json < 2; json++) {
        snprintf(out, sizeof out, "%s/hostile.%s", out_dir, json ? "json" : "txt");
        FILE *f = fopen(out, "w");
        if (!f) { CHECK(0, "open %s", out); continue; }
        if (json) ss_report_json(f, &p, 1); else ss_report_text(f, &p, 1, 0);
        fclose(f);
        CHECK(contains_raw_control(out) == 0, "%s has raw control bytes", out);
    }
    ss_findings_free(&p.findings);
    ss_model_free(p.model);
}

/* Mutate records inside valid blocks (fixing the CRCs, so the reader hands
 * them out) and analyze: nothing may crash or trip the sanitizers. */
static void mutate_trace(const char *name, int rounds);

static void test_mutations(void)
{
    /* SS_MUTATIONS=N runs N rounds per trace instead of the default 100 */
    int rounds = getenv("SS_MUTATIONS") ? atoi(getenv("SS_MUTATIONS")) : 100;
    const char *names[] = { "missing_fence", "legacy", "device_sync", "item_in_loop", "hostile", "pageable" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) mutate_trace(names[i], rounds);
}

static void mutate_trace(const char *name, int rounds)
{
    char path[600], mpath[700];
    snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
    snprintf(mpath, sizeof mpath, "%s/mutant.sstrace", out_dir);
    FILE *f = fopen(path, "rb");
    if (!f) { CHECK(0, "open"); return; }
    static uint8_t orig[1 << 20], buf[1 << 20];
    size_t n = fread(orig, 1, sizeof orig, f);
    fclose(f);
    uint32_t seed = 12345;
    for (int iter = 0; iter < rounds; iter++) {
        memcpy(buf, orig, n);
        int flips = 1 + iter % 8;
        for (int k = 0; k < flips; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t pos = sizeof(ss_file_header) + (seed >> 8) % (n - sizeof(ss_file_header));
            seed = seed * 1103515245u + 12345u;
            buf[pos] = (iter & 1) ? (uint8_t)(seed >> 16) : (uint8_t)(buf[pos] ^ (1u << ((seed >> 16) & 7)));
        }
        /* fix block CRCs where the block header survived */
        size_t off = sizeof(ss_file_header);
        while (off + sizeof(ss_block_header) <= n) {
            ss_block_header bh;
            memcpy(&bh, buf + off, sizeof bh);
            if (bh.magic != SS_BLOCK_MAGIC || bh.payload_bytes > n - off - sizeof bh) break;
            bh.crc32 = ss_crc32(0, buf + off + sizeof bh, bh.payload_bytes);
            memcpy(buf + off, &bh, sizeof bh);
            off += sizeof bh + bh.payload_bytes;
        }
        unlink(mpath);
        FILE *o = fopen(mpath, "wb");
        if (!o) break;
        fwrite(buf, 1, n, o);
        fclose(o);
        char err[256];
        ss_process_result p;
        memset(&p, 0, sizeof p);
        p.path = mpath;
        p.model = ss_model_load(mpath, err, sizeof err);
        if (!p.model) continue;
        ss_findings_init(&p.findings);
        ss_rules_run_all(p.model, &p.findings);
        ss_findings_finish(&p.findings, p.model->t_last - p.model->t_first);
        FILE *null = fopen("/dev/null", "w");
        if (null) { ss_report_text(null, &p, 1, 0); ss_report_json(null, &p, 1); fclose(null); }
        ss_findings_free(&p.findings);
        ss_model_free(p.model);
    }
    unlink(mpath);
}

/* --------------------------------------------- capture and graph launches */

/* A captured fork/join (main A -> side B through events) whose side kernel
 * uses buf, then, after the capture, a kernel on A using buf and replays of
 * the graph on A.  Captured calls do not execute: nothing races.  The
 * uncaptured twin issues the same calls for real, where B's kernel and A's
 * later kernel are unordered (the join event is recorded before B's kernel
 * is waited for... by nobody: A never waits after the second kernel). */
static void write_capture(const char *name, int captured)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 4096);
    uint64_t p[1] = { DEV_BUF };
    double t = 1;
    if (captured) CALL(&b, .cbid = CB_cudaStreamBeginCapture, .t0 = MS(t), .t1 = MS(t + 0.001), .stream = 0xA1);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(t + 0.01), .t1 = MS(t + 0.011), .stream = 0xA1, .event = 0xE1);
    CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(t + 0.02), .t1 = MS(t + 0.021), .stream = 0xB1, .event = 0xE1);
    if (captured)
        CALL(&b, .cbid = CB_cudaLaunchKernel, .t0 = MS(t + 0.03), .t1 = MS(t + 0.031), .stream = 0xB1, .params = p, .nparams = 1);
    else
        tb_launch(&b, MS(t + 0.03), 0xB1, 14, MS(t + 0.04), MS(t + 5), p, 1);
    if (captured) CALL(&b, .cbid = CB_cudaStreamEndCapture, .t0 = MS(t + 0.05), .t1 = MS(t + 0.051), .stream = 0xA1);
    /* after the capture: a kernel on A using buf, then two replays on A
     * whose nodes run on internal streams */
    tb_launch(&b, MS(t + 0.1), 0xA1, 13, MS(t + 5.1), MS(t + 6), p, 1);
    for (int k = 0; k < 2 && captured; k++) {
        uint32_t corr = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = MS(t + 0.2 + k), .t1 = MS(t + 0.21 + k), .stream = 0xA1);
        tb_kernel(&b, corr, 30, MS(t + 6 + 2 * k), MS(t + 7 + 2 * k));   /* internal stream 30 */
    }
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 3), .t1 = MS(t + 10.01), .stream = 0xA1);
    tb_close(&b);
}

static void test_capture(void)
{
    write_capture("graph_capture", 1);
    write_capture("graph_capture_uncaptured", 0);
    char path[600];
    snprintf(path, sizeof path, "%s/graph_capture.sstrace", out_dir);
    result r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 0, "captured calls taken as executed: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    uint32_t ncaptured = 0;
    for (uint32_t i = 0; i < r.m->ncalls; i++) ncaptured += r.m->calls[i].captured;
    CHECK(ncaptured == 3, "captured calls: %u (record, wait, launch)", ncaptured);
    done(&r);
    /* the stream sync on A waits for the replays' nodes on the internal
     * stream: they are ordered on A as a unit */
    snprintf(path, sizeof path, "%s/graph_capture.sstrace", out_dir);
    char err[256];
    ss_model *m = ss_model_load(path, err, sizeof err);
    CHECK(m != NULL, "load");
    if (m) {
        int graph_ops_on_a = 0;
        for (uint32_t i = 0; i < m->nops; i++)
            if (m->ops[i].call >= 0 && ss_call_is_graph_launch(m, &m->calls[m->ops[i].call]) &&
                m->streams[m->calls[m->ops[i].call].stream].handle == 0xA1)
                graph_ops_on_a++;
        CHECK(graph_ops_on_a == 2, "graph nodes joined to their launch on A: %d", graph_ops_on_a);
        ss_model_free(m);
    }
    snprintf(path, sizeof path, "%s/graph_capture_uncaptured.sstrace", out_dir);
    r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 1, "the same calls executed race: %u", r.f.n);
    done(&r);
}

/* torch.cuda.Stream() (cudaStreamCreateWithPriority) made while matmuls are
 * queued waits for them (seed003). */
static void write_stream_create(const char *name, int blocked)
{
    tb b;
    tb_open(&b, name);
    /* the reference: a creation on an idle device takes 5 us */
    CALL(&b, .cbid = CB_cudaStreamCreateWithPriority, .t0 = US(10), .t1 = US(15), .stream = 0xC0, .arg = 1);
    tb_stream(&b, 0xC0, 12, SS_STREAM_NON_BLOCKING, 1, 100);
    for (int k = 0; k < 5; k++)
        tb_launch(&b, MS(1 + 0.01 * k), 0, LEGACY_SID, MS(1.1 + 20 * k), MS(1.1 + 20 * (k + 1)), NULL, 0);
    if (blocked)   /* returns when the last queued kernel ends */
        CALL(&b, .cbid = CB_cudaStreamCreateWithPriority, .t0 = MS(2), .t1 = MS(101.12), .stream = 0xC1, .arg = 1);
    else
        CALL(&b, .cbid = CB_cudaStreamCreateWithPriority, .t0 = MS(2), .t1 = MS(2.005), .stream = 0xC1, .arg = 1);
    tb_launch(&b, MS(110), 0, LEGACY_SID, MS(110.01), MS(111), NULL, 0);
    tb_close(&b);
}

static void test_stream_create(void)
{
    write_stream_create("stream_create_blocked", 1);
    write_stream_create("stream_create_upfront", 0);
    char path[600];
    snprintf(path, sizeof path, "%s/stream_create_blocked.sstrace", out_dir);
    result r = analyze(path, &ss_rule_implicit_sync);
    CHECK(r.f.n == 1, "stream creation findings: %u", r.f.n);
    if (r.f.n == 1) {
        CHECK(strstr(r.f.v[0].message, "stream creation waited for queued work") != NULL, "message %s", r.f.v[0].message);
        CHECK(strstr(r.f.v[0].message, "5 GPU operations") != NULL, "message %s", r.f.v[0].message);
        CHECK(strstr(r.f.v[0].fix, "up front") != NULL, "fix %s", r.f.v[0].fix);
        /* blocked 99.12 ms, then the GPU idled 101.1 -> 110.01 ms */
        CHECK(NEAR(r.f.v[0].cost_ms, 99.12 + 8.91, 0.02), "cost %.4f", r.f.v[0].cost_ms);
    }
    done(&r);
    snprintf(path, sizeof path, "%s/stream_create_upfront.sstrace", out_dir);
    r = analyze(path, &ss_rule_implicit_sync);
    CHECK(r.f.n == 0, "a stream creation that did not wait: %u", r.f.n);
    done(&r);
}

/* Every rule on every trace: each positive trace has findings of its own
 * rule only, each fixed twin none at all. */
static void test_all_rules(void)
{
    static const struct { const char *trace, *rule; } cases[] = {
        { "implicit_sync", "implicit-sync" }, { "implicit_sync_fixed", NULL },
        { "item_in_loop", "implicit-sync" }, { "explicit_synchronize", NULL },
        { "pageable", "pageable-async-copy" }, { "pageable_fixed", NULL },
        { "legacy", "legacy-stream-serialization" }, { "legacy_nonblocking", NULL }, { "legacy_with_events", NULL },
        { "device_sync", "device-sync-overuse" }, { "device_sync_fixed", NULL },
        { "graph_capture", NULL }, { "graph_capture_uncaptured", "missing-fence" },
        { "stream_create_blocked", "implicit-sync" }, { "stream_create_upfront", NULL },
        { "missing_fence", "missing-fence" }, { "missing_fence_wrong_stream", "missing-fence" },
        { "missing_fence_fixed", NULL },
        { "unrecorded_event", "unrecorded-event-wait" }, { "unrecorded_event_fixed", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[600], err[256];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[i].trace);
        ss_model *m = ss_model_load(path, err, sizeof err);
        CHECK(m != NULL, "load %s", path);
        if (!m) continue;
        ss_findings f;
        ss_findings_init(&f);
        ss_rules_run_all(m, &f);
        ss_findings_finish(&f, m->t_last - m->t_first);
        uint32_t own = 0;
        for (uint32_t k = 0; k < f.n; k++) {
            if (cases[i].rule && !strcmp(f.v[k].rule, cases[i].rule)) own++;
            else CHECK(0, "%s: unexpected %s finding: %s", cases[i].trace, f.v[k].rule, f.v[k].message);
        }
        CHECK(!cases[i].rule || own > 0, "%s: no %s finding", cases[i].trace, cases[i].rule);
        ss_findings_free(&f);
        ss_model_free(m);
    }
}

int main(int argc, char **argv)
{
    char tmpl[] = "/tmp/ss_analyzer_XXXXXX";
    if (argc == 3 && !strcmp(argv[1], "--write-traces")) {
        out_dir = argv[2];
        mkdir(out_dir, 0700);
    } else {
        out_dir = mkdtemp(tmpl);
        if (!out_dir) { perror("mkdtemp"); return 1; }
    }
    test_implicit_sync();
    test_item();
    test_pageable();
    test_legacy();
    test_device_sync();
    test_capture();
    test_stream_create();
    test_missing_fence();
    test_unrecorded();
    test_model();
    test_all_rules();
    test_hostile();
    test_mutations();
    if (out_dir == tmpl) {   /* leave nothing behind unless asked */
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpl);
    }
    if (failures) { fprintf(stderr, "%d check(s) failed\n", failures); return 1; }
    printf("all analyzer rule checks passed\n");
    return 0;
}
