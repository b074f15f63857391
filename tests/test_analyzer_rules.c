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

#include "trace_builder.h"
#include "model.h"
#include "findings.h"
#include "rule.h"
#include "report.h"
#include "iterations.h"
#include "replay.h"

/* CUPTI runtime cbids (cupti_runtime_cbid.h, CUDA 13.0) */
enum {
    CB_cudaMalloc = 20, CB_cudaFree = 22, CB_cudaMallocHost = 25, CB_cudaFreeHost = 26, CB_cudaMemcpy = 31,
    CB_cudaMemcpyAsync = 41, CB_cudaMemsetAsync = 51, CB_cudaStreamCreate = 129, CB_cudaStreamSynchronize = 131,
    CB_cudaEventCreate = 133, CB_cudaEventCreateWithFlags = 134, CB_cudaEventRecord = 135, CB_cudaEventSynchronize = 137,
    CB_cudaStreamWaitEvent = 147, CB_cudaDeviceSynchronize = 165, CB_cudaStreamCreateWithFlags = 198,
    CB_cudaLaunchKernel = 211, CB_cudaFreeAsync = 375, CB_cudaGraphLaunch = 311, CB_cudaStreamBeginCapture = 315,
    CB_cudaStreamEndCapture = 319, CB_cudaStreamCreateWithPriority = 200,
    CB_cudaStreamQuery = 132, CB_cudaEventQuery = 138, CB_cudaEventElapsedTime = 139, CB_cudaHostRegister = 152,
    CB_cudaHostUnregister = 153, CB_cudaLaunchKernel_ptsz = 214, CB_cudaMemcpyAsync_ptsz = 225,
    CB_cudaStreamSynchronize_ptsz = 239, CB_cudaEventRecord_ptsz = 242, CB_cudaStreamWaitEvent_ptsz = 247,
    CB_cudaMemset = 49, CB_cudaGraphAddKernelNode = 289, CB_cudaGraphAddMemcpyNode1D = 352,
    CB_cudaLaunchHostFunc = 284, CB_cudaIpcOpenEventHandle = 177, CB_cudaMemPrefetchAsync = 449,
    CB_cudaEventRecordWithFlags = 370, CB_cudaGraphAddEventRecordNode = 362, CB_cudaGraphAddEventWaitNode = 365,
    CB_cudaGraphEventRecordNodeSetEvent = 364,
    /* driver calls: SS_API_CBID_DRIVER + cupti_driver_cbid.h's id */
    CB_cuMemMap = 0x10000 + 551, CB_cuMemUnmap = 0x10000 + 552,
    CB_cuStreamWaitValue32 = 0x10000 + 659, CB_cuStreamWaitValue64 = 0x10000 + 661,
    CB_cuStreamWriteValue32 = 0x10000 + 663, CB_cuStreamWriteValue64 = 0x10000 + 665,
    CB_cuStreamBatchMemOp = 0x10000 + 667,
    CB_cuGreenCtxRecordEvent = 0x10000 + 749, CB_cuGreenCtxWaitEvent = 0x10000 + 750,
};
static const tb_api_name api_names[] = {
    { CB_cudaMalloc, "cudaMalloc" }, { CB_cudaFree, "cudaFree" }, { CB_cudaMallocHost, "cudaMallocHost" },
    { CB_cudaFreeHost, "cudaFreeHost" }, { CB_cudaMemcpy, "cudaMemcpy" }, { CB_cudaMemcpyAsync, "cudaMemcpyAsync" },
    { CB_cudaMemsetAsync, "cudaMemsetAsync" }, { CB_cudaMemset, "cudaMemset" }, { CB_cudaStreamCreate, "cudaStreamCreate" },
    { CB_cudaStreamSynchronize, "cudaStreamSynchronize" }, { CB_cudaEventCreate, "cudaEventCreate" },
    { CB_cudaEventCreateWithFlags, "cudaEventCreateWithFlags" },
    { CB_cudaEventRecord, "cudaEventRecord" }, { CB_cudaEventSynchronize, "cudaEventSynchronize" },
    { CB_cudaStreamWaitEvent, "cudaStreamWaitEvent" }, { CB_cudaDeviceSynchronize, "cudaDeviceSynchronize" },
    { CB_cudaStreamCreateWithFlags, "cudaStreamCreateWithFlags" }, { CB_cudaLaunchKernel, "cudaLaunchKernel" },
    { CB_cudaFreeAsync, "cudaFreeAsync" }, { CB_cudaGraphLaunch, "cudaGraphLaunch" },
    { CB_cudaStreamBeginCapture, "cudaStreamBeginCapture" }, { CB_cudaStreamEndCapture, "cudaStreamEndCapture" },
    { CB_cudaStreamCreateWithPriority, "cudaStreamCreateWithPriority" },
    { CB_cudaGraphAddKernelNode, "cudaGraphAddKernelNode" }, { CB_cudaGraphAddMemcpyNode1D, "cudaGraphAddMemcpyNode1D" },
    { CB_cudaGraphAddEventRecordNode, "cudaGraphAddEventRecordNode" },
    { CB_cudaGraphAddEventWaitNode, "cudaGraphAddEventWaitNode" },
    { CB_cudaGraphEventRecordNodeSetEvent, "cudaGraphEventRecordNodeSetEvent" },
    { CB_cudaStreamQuery, "cudaStreamQuery" }, { CB_cudaEventQuery, "cudaEventQuery" },
    { CB_cudaEventElapsedTime, "cudaEventElapsedTime" }, { CB_cudaHostRegister, "cudaHostRegister" },
    { CB_cudaHostUnregister, "cudaHostUnregister" }, { CB_cudaLaunchKernel_ptsz, "cudaLaunchKernel_ptsz" },
    { CB_cudaMemcpyAsync_ptsz, "cudaMemcpyAsync_ptsz" }, { CB_cuMemMap, "cuMemMap" }, { CB_cuMemUnmap, "cuMemUnmap" }, { CB_cudaStreamSynchronize_ptsz, "cudaStreamSynchronize_ptsz" },
    { CB_cudaEventRecord_ptsz, "cudaEventRecord_ptsz" }, { CB_cudaStreamWaitEvent_ptsz, "cudaStreamWaitEvent_ptsz" },
    { CB_cudaLaunchHostFunc, "cudaLaunchHostFunc" }, { CB_cudaIpcOpenEventHandle, "cudaIpcOpenEventHandle" },
    { CB_cuStreamWaitValue32, "cuStreamWaitValue32" }, { CB_cuStreamWaitValue64, "cuStreamWaitValue64" },
    { CB_cuStreamWriteValue32, "cuStreamWriteValue32" }, { CB_cuStreamWriteValue64, "cuStreamWriteValue64" },
    { CB_cuStreamBatchMemOp, "cuStreamBatchMemOp" },
    { CB_cuGreenCtxRecordEvent, "cuGreenCtxRecordEvent" }, { CB_cuGreenCtxWaitEvent, "cuGreenCtxWaitEvent" }, { CB_cudaMemPrefetchAsync, "cudaMemPrefetchAsync" },
    { CB_cudaEventRecordWithFlags, "cudaEventRecordWithFlags" },
};

/* ------------------------------------------------------------ trace builder */

#define US(x) (T0 + (uint64_t)((x) * 1000.0))
#define TID 4242
#define LEGACY_SID 7

static const char *out_dir;

static void tb_open(tb *b, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
    tb_begin(b, path, api_names, sizeof api_names / sizeof api_names[0], LEGACY_SID);
    const char *kname = "_Z6kernelPi";
    ss_string_rec *s = tb_rec(b, SS_REC_STRING, sizeof *s, (uint32_t)strlen(kname));
    s->id = 1; s->len = (uint32_t)strlen(kname);
    memcpy((char *)s + sizeof *s, kname, s->len);
}

/* One host call.  Returns its correlation id. */
typedef struct call_args {
    uint32_t cbid; uint64_t t0, t1; uint64_t stream, event, ptr, ptr2, bytes; uint32_t arg; int32_t arg2;
    uint8_t mem_dst, mem_src; int ret; const uint64_t *params; uint8_t nparams; uint32_t pystack;
    uint32_t flags;   /* added to SS_API_F_CUPTI_CB (SS_API_F_PTSZ: a _ptsz/_ptds entry point) */
    uint32_t tid;     /* 0: TID */
    uint64_t func;    /* the kernel, or a graph launch's exec */
} call_args;

static uint32_t tb_call(tb *b, call_args a)
{
    ss_api_rec *r = tb_rec(b, SS_REC_API, sizeof *r, 8u * a.nparams);
    r->cbid = a.cbid; r->tid = a.tid ? a.tid : TID; r->t_enter = a.t0; r->t_exit = a.t1; r->ret = a.ret;
    r->corr = b->next_corr++;
    r->stream = a.stream; r->event = a.event; r->ptr = a.ptr; r->ptr2 = a.ptr2; r->bytes = a.bytes; r->arg = a.arg;
    r->arg2 = a.arg2;
    r->mem_dst = a.mem_dst; r->mem_src = a.mem_src; r->nparams = a.nparams; r->device = 0;
    r->flags = SS_API_F_CUPTI_CB | a.flags;
    r->pystack_id = a.pystack;
    r->func = a.func;
    if (a.nparams) memcpy((char *)r + sizeof *r, a.params, 8u * a.nparams);
    return r->corr;
}
#define CALL(b, ...) tb_call(b, (call_args){ __VA_ARGS__ })

/* a STREAM record of CUDA context `context` */
static void tb_stream_of(tb *b, uint64_t handle, uint32_t sid, uint32_t kind, uint32_t flags, uint32_t corr,
                         uint32_t context)
{
    ss_stream_rec *r = tb_rec(b, SS_REC_STREAM, sizeof *r, 0);
    r->handle = handle; r->stream_id = sid; r->context_id = context; r->device = 0; r->kind = kind; r->flags = flags;
    r->corr = corr;
}

static void tb_stream(tb *b, uint64_t handle, uint32_t sid, uint32_t kind, uint32_t flags, uint32_t corr)
{
    tb_stream_of(b, handle, sid, kind, flags, corr, 1);
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

/* a copy's GPU record in CUDA context `context` on `device` */
static void tb_memcpy_rec_of(tb *b, uint32_t corr, uint32_t sid, uint64_t start, uint64_t end, uint8_t kind,
                             uint8_t src_kind, uint8_t dst_kind, uint64_t bytes, uint32_t context, uint32_t device)
{
    ss_memcpy_rec *r = tb_rec(b, SS_REC_MEMCPY, sizeof *r, 0);
    r->g.start = start; r->g.end = end; r->g.corr = corr; r->g.stream_id = sid; r->g.context_id = context;
    r->g.device = device;
    r->copy_kind = kind; r->src_kind = src_kind; r->dst_kind = dst_kind; r->bytes = bytes; r->async = 1;
}

static void tb_memcpy_rec(tb *b, uint32_t corr, uint32_t sid, uint64_t start, uint64_t end, uint8_t kind,
                          uint8_t src_kind, uint8_t dst_kind, uint64_t bytes)
{
    tb_memcpy_rec_of(b, corr, sid, start, end, kind, src_kind, dst_kind, bytes, 1, 0);
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
        /* Another thread's first launch loads its module lazily for 7.8 ms
         * (the kernel is handed to the GPU only at the end) while this
         * thread's cudaMalloc waits 5.8 ms for the driver's lock: it returns
         * when that tiny kernel ends, yet it never waited for GPU work
         * submitted before it (threads8 on the H100). */
        uint32_t corr = CALL(&b, .cbid = CB_cudaLaunchKernel, .t0 = MS(70), .t1 = MS(77.8), .stream = 0xA1,
                             .tid = TID + 1);
        tb_kernel(&b, corr, 13, MS(77.79), MS(77.805));
        CALL(&b, .cbid = CB_cudaMalloc, .t0 = MS(72), .t1 = MS(77.81), .ptr = DEV_BUF + 4096, .bytes = 64);
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

/* cudaEventCreate, which CUDA does not document as waiting for the device,
 * slow while a short kernel ended inside it (Inductor's autotuner on the
 * H200: 57 us, a Triton kernel ending within): a coincidence the release
 * test cannot tell from a wait, not a finding.  A 3 ms block that ends with
 * a 3 ms kernel still is (mode 1). */
static void write_event_create_block(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    for (int k = 0; k < 3; k++)   /* the idle reference: 2 us */
        CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(10 + 10 * k), .t1 = US(12 + 10 * k), .event = 0xE0 + k);
    double len = mode ? 3 : 0.05;
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(1.01 + len), NULL, 0);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = MS(1.005), .t1 = MS(1.005 + len + 0.012), .event = 0xE9);
    tb_launch(&b, MS(5), 0xA1, 13, MS(5.01), MS(5.02), NULL, 0);
    tb_close(&b);
}

static void test_event_create_block(void)
{
    static const char *const names[] = { "event_create_57us", "event_create_3ms" };
    for (int mode = 0; mode < 2; mode++) {
        write_event_create_block(names[mode], mode);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, names[mode]);
        result r = analyze(path, &ss_rule_implicit_sync);
        CHECK(r.f.n == (uint32_t)mode, "%s: %u findings (%s)", names[mode], r.f.n, r.f.n ? r.f.v[0].message : "");
        done(&r);
    }
}

/* PyTorch's loss.item(): cudaMemcpyAsync + cudaStreamSynchronize issued by
 * ATen for a user line; torch.cuda.synchronize() is the explicit twin. */
static void tb_string(tb *b, uint32_t id, const char *text)
{
    ss_string_rec *s = tb_rec(b, SS_REC_STRING, sizeof *s, (uint32_t)strlen(text));
    s->id = id; s->len = (uint32_t)strlen(text);
    memcpy((char *)s + sizeof *s, text, s->len);
}

/* Python stack `id`: its frames, innermost first ({ file string id,
 * function string id, line, 0 }) */
static void tb_pystack(tb *b, uint32_t id, const ss_pyframe *frames, uint32_t depth)
{
    ss_pystack_rec *p = tb_rec(b, SS_REC_PYSTACK, sizeof *p, depth * sizeof(ss_pyframe));
    p->id = id; p->depth = depth;
    memcpy((char *)p + sizeof *p, frames, depth * sizeof(ss_pyframe));
}

/* positive 2: the user's file exists and line 24 reads `src_line` (a
 * binding without a Python frame of its own: CuPy's stream.synchronize()) */
static void write_item_src(const char *name, int positive, const char *src_line)
{
    tb b;
    tb_open(&b, name);
    char src[700];
    snprintf(src, sizeof src, "%s/%s.py", out_dir, name);
    if (positive == 2) {
        FILE *sf = fopen(src, "w");
        if (!sf) { perror(src); exit(1); }
        for (int l = 1; l < 24; l++) fprintf(sf, "# line %d\n", l);
        fprintf(sf, "%s\n", src_line);
        fclose(sf);
        tb_string(&b, 10, src);
    } else {
        tb_string(&b, 10, "/home/u/item_in_loop.py");
    }
    tb_string(&b, 11, "<module>");
    tb_string(&b, 12, "/usr/lib/python3/site-packages/torch/cuda/__init__.py");
    tb_string(&b, 13, "synchronize");
    if (positive) tb_pystack(&b, 1, (const ss_pyframe[]){ { 10, 11, 24, 0 }, { 10, 11, 24, 0 } }, 2);
    else tb_pystack(&b, 1, (const ss_pyframe[]){ { 12, 13, 801, 0 }, { 10, 11, 24, 0 } }, 2);
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

static void write_item(const char *name, int positive) { write_item_src(name, positive, NULL); }

/* A host wait made by a Python framework's own machinery: idle
 * cudaDeviceSynchronize calls (device-sync-overuse's info) whose Python stack
 * is torch.cuda.synchronize called by another framework file (Inductor's
 * autotuner), under the user's line.  Modes: 0 that stack: "inside torch
 * (torch/_inductor/runtime/benchmarking.py:376 ...)"; 1 the user's line calls
 * torch.cuda.synchronize itself: the user's; 2 the user called an API
 * through a decorator in another framework file that is not a synchronize
 * (dist.all_gather_object's c10d_logger wrapper): the user's call. */
static void write_py_framework_sync(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_string(&b, 10, "/home/u/train.py");
    tb_string(&b, 11, "main");
    tb_string(&b, 12, "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py");
    tb_string(&b, 13, "synchronize");
    tb_string(&b, 14, "/venv/lib/python3.12/site-packages/torch/_inductor/runtime/benchmarking.py");
    tb_string(&b, 15, "InductorBenchmarker.benchmark_gpu");
    tb_string(&b, 16, "/venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py");
    tb_string(&b, 17, "all_gather_object");
    tb_string(&b, 18, "/venv/lib/python3.12/site-packages/torch/distributed/c10d_logger.py");
    tb_string(&b, 19, "_exception_logger.<locals>.wrapper");
    if (mode == 0) tb_pystack(&b, 1, (const ss_pyframe[]){ { 12, 13, 1162, 0 }, { 14, 15, 376, 0 }, { 10, 11, 32, 0 } }, 3);
    else if (mode == 1) tb_pystack(&b, 1, (const ss_pyframe[]){ { 12, 13, 1162, 0 }, { 10, 11, 32, 0 } }, 2);
    else tb_pystack(&b, 1, (const ss_pyframe[]){ { 16, 17, 3313, 0 }, { 18, 19, 83, 0 }, { 10, 11, 32, 0 } }, 3);
    tb_launch(&b, MS(0.5), 0, LEGACY_SID, MS(0.51), MS(0.6), NULL, 0);   /* a GPU timeline */
    for (int k = 0; k < 4; k++)
        CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(1 + k), .t1 = MS(1.05 + k), .pystack = 1);
    tb_close(&b);
}

static void test_py_framework_sync(void)
{
    static const char *const names[] = { "py_framework_sync", "py_user_sync", "py_decorated_api" };
    for (int mode = 0; mode < 3; mode++) {
        write_py_framework_sync(names[mode], mode);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, names[mode]);
        result r = analyze(path, &ss_rule_device_sync_overuse);
        CHECK(r.f.n == 1, "%s: %u findings", names[mode], r.f.n);
        if (r.f.n == 1) {
            const char *inside = strstr(r.f.v[0].message, "inside torch (torch/_inductor/runtime/benchmarking.py:376 "
                                                          "InductorBenchmarker.benchmark_gpu), which your code called");
            CHECK(mode == 0 ? inside != NULL : strstr(r.f.v[0].message, "inside ") == NULL, "%s: %s", names[mode],
                  r.f.v[0].message);
            if (mode == 0)
                CHECK(strstr(r.f.v[0].fix, "made by torch's own code") != NULL && r.f.v[0].library &&
                          !strcmp(r.f.v[0].library, "torch"), "%s: fix %s", names[mode], r.f.v[0].fix);
            char site[1024];
            ss_finding_site_text(&r.f.v[0], site, sizeof site);
            CHECK(strstr(site, "train.py:32") != NULL, "%s: site %s", names[mode], site);
        }
        done(&r);
    }
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
        char site[1024];
        ss_finding_site_text(&r.f.v[0], site, sizeof site);
        CHECK(strstr(site, "item_in_loop.py:24") != NULL, "site %s", site);
        /* each step: blocked 2.97 ms, then the GPU idled until the next launch
         * (4 of 5 steps have a next one): 0.49 + 0.01 ms */
        CHECK(NEAR(r.f.v[0].cost_ms, 5 * 2.97 + 4 * 0.5, 0.01), "cost %.4f", r.f.v[0].cost_ms);
        CHECK(strstr(r.f.v[0].fix, ".item()") != NULL, "fix");
        /* the fix reads the value once: the last read still waits, the
         * others do not -- the GPU's 0.49 ms idle gaps are what is saved */
        CHECK(r.f.v[0].saving_known && r.f.v[0].saving_ms > 1.5 && r.f.v[0].saving_ms < 2.5,
              "saving %.3f ms", r.f.v[0].saving_ms);
    }
    done(&r);
    /* the same line read from the user's file: `.item()` is implicit, a
     * binding's own synchronize() is what the user asked for */
    write_item_src("item_from_source", 2, "    losses.append(loss.item())");
    write_item_src("cupy_synchronize", 2, "    producer.synchronize()");
    snprintf(path, sizeof path, "%s/item_from_source.sstrace", out_dir);
    r = analyze(path, &ss_rule_implicit_sync);
    CHECK(r.f.n == 1, ".item() read from the source: %u findings", r.f.n);
    done(&r);
    snprintf(path, sizeof path, "%s/cupy_synchronize.sstrace", out_dir);
    r = analyze(path, &ss_rule_implicit_sync);
    CHECK(r.f.n == 0, "stream.synchronize() on the user's line is explicit: %u findings", r.f.n);
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
        /* mode 3: an event recorded on the first stream after the legacy
         * launch (held back by the legacy barrier: the event completes at
         * 61 ms), which the first stream's sync below did not wait for */
        if (mode == 3) CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.25), .t1 = MS(1.26), .stream = 0xA1, .event = 0xE1);
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

/* The H200 (driver 580) measured: cudaStreamSynchronize(first) returned
 * when first's own kernel ended, not when the cudaEventDisableTiming record
 * placed on first after the legacy launch completed (behind the barrier, 30
 * ms later).  The replay must follow the measured return: the sync waits for
 * first's kernel only, so removing the barriers saves the whole 59.8 ms (the
 * B kernel starts at 1.21 ms, not 61).  Reading the record's completion,
 * which comes after the sync's return in the measured order, left it at 61
 * ms in every what-if: 29.9 ms predicted where the fixed twin measured 60. */
static void test_legacy_sync_skips_marker(void)
{
    write_legacy("legacy_sync_skips_marker", 3);
    char path[600];
    snprintf(path, sizeof path, "%s/legacy_sync_skips_marker.sstrace", out_dir);
    result r = analyze(path, &ss_rule_legacy_stream_serialization);
    CHECK(r.f.n == 2, "legacy findings: %u", r.f.n);
    if (r.f.n == 2) {
        CHECK(r.f.v[0].saving_known && NEAR(r.f.v[0].saving_ms, 59.8, 0.1), "saving %.3f ms", r.f.v[0].saving_ms);
    }
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

/* A device sync, then (after `gap_ms` of host work) cudaFree of the buffer
 * only the fast stream used.  cudaFree waits for the whole device itself
 * (cuda-facts.md: blocked ~50 ms with a kernel in flight), so narrowing the
 * sync saves at most the host time in between: first_launch_jit_fixed on an
 * H100 was told it "waited 24.961 ms longer" than needed, although its
 * cudaFree came right after. */
static void write_device_sync_free(const char *name, double gap_ms)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xF1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 64);
    uint64_t p[1] = { DEV_BUF };
    tb_launch(&b, MS(1), 0xB1, 14, MS(1.01), MS(21), NULL, 0);      /* 20 ms on the other stream */
    tb_launch(&b, MS(1.02), 0xF1, 13, MS(1.03), MS(2), p, 1);      /* 1 ms on the buffer */
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(1.06), .t1 = MS(21.02));
    CALL(&b, .cbid = CB_cudaFree, .t0 = MS(21.02 + gap_ms), .t1 = MS(21.05 + gap_ms), .ptr = DEV_BUF);
    tb_close(&b);
}

/* Two CUDA contexts on device 0 (a context per host thread, cuCtxCreate):
 * thread 1 runs 1 ms on stream F (context 1) and copies the result out,
 * thread 2 a 20 ms kernel on stream B of context 2, and thread 1 then calls
 * cudaDeviceSynchronize, which waits for its own context only: it returns
 * after the copy (t + 1.5: time-sliced with the other context).  Modes: 0 the sync records its context (arg 1):
 * it waited for nothing it did not need, no finding; 1 a trace without the
 * context (arg 0): which work it waited for is not known, no finding; 2 one
 * context for both streams, the sync returning after B's kernel: the
 * over-synchronization the rule is for (one finding). */
static void write_device_sync_contexts(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    uint32_t corr = CALL(&b, .cbid = CB_cudaStreamCreateWithFlags, .t0 = US(1), .t1 = US(6), .stream = 0xF1, .arg = 1);
    tb_stream(&b, 0xF1, 13, SS_STREAM_NON_BLOCKING, 1, corr);
    corr = CALL(&b, .cbid = CB_cudaStreamCreateWithFlags, .t0 = US(2), .t1 = US(7), .stream = 0xB1, .arg = 1,
                .tid = TID + 1);
    tb_stream_of(&b, 0xB1, 14, SS_STREAM_NON_BLOCKING, 1, corr, mode == 2 ? 1 : 2);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 64);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 64);
    uint64_t p[1] = { DEV_BUF };
    double t = 1;
    for (int it = 0; it < 3; it++) {
        uint32_t c = CALL(&b, .cbid = CB_cudaLaunchKernel, .t0 = MS(t), .t1 = MS(t + 0.005), .stream = 0xB1,
                          .tid = TID + 1);
        tb_kernel(&b, c, 14, MS(t + 0.01), MS(t + 20));
        tb_launch(&b, MS(t + 0.02), 0xF1, 13, MS(t + 0.03), MS(t + 1), p, 1);
        c = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t + 0.04), .t1 = MS(t + 0.05), .stream = 0xF1,
                 .ptr = PINNED_BUF, .ptr2 = DEV_BUF, .bytes = 4, .arg = 2, .mem_dst = SS_MEM_PINNED,
                 .mem_src = SS_MEM_DEVICE);
        tb_memcpy_rec(&b, c, 13, MS(t + 1), MS(t + 1.01), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4);
        CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(t + 0.06), .t1 = MS(mode == 2 ? t + 20.02 : t + 1.5),
             .arg = mode == 1 ? 0 : 1);
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 0.06), .t1 = MS(t + 20.03), .stream = 0xB1,
             .tid = TID + 1);
        t += 20.1;
    }
    tb_close(&b);
}

static void test_device_sync_contexts(void)
{
    static const char *names[] = { "device_sync_own_context", "device_sync_context_unknown",
                                   "device_sync_one_context" };
    for (int mode = 0; mode < 3; mode++) {
        write_device_sync_contexts(names[mode], mode);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, names[mode]);
        result r = analyze(path, &ss_rule_device_sync_overuse);
        uint32_t want = mode == 2 ? 1 : 0;
        CHECK(r.f.n == want, "%s: %u device-sync-overuse findings, want %u (%s)", names[mode], r.f.n, want,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
    }
}

static void test_device_sync(void)
{
    /* the later cudaFree waits for the device anyway: nothing to gain right
     * after it, at most the host time in between later */
    write_device_sync_free("device_sync_then_free", 0.005);
    write_device_sync_free("device_sync_host_work_then_free", 5);
    char fpath[600];
    snprintf(fpath, sizeof fpath, "%s/device_sync_then_free.sstrace", out_dir);
    result fr = analyze(fpath, &ss_rule_device_sync_overuse);
    CHECK(fr.f.n == 0, "device sync right before a cudaFree: %u findings (%s)", fr.f.n,
          fr.f.n ? fr.f.v[0].message : "");
    done(&fr);
    snprintf(fpath, sizeof fpath, "%s/device_sync_host_work_then_free.sstrace", out_dir);
    fr = analyze(fpath, &ss_rule_device_sync_overuse);
    CHECK(fr.f.n == 1 && NEAR(fr.f.v[0].cost_ms, 5.0, 0.01), "device sync, 5 ms of host work, cudaFree: %u findings, "
          "cost %.3f (want 5: the host time, not the 19.02 ms waited)", fr.f.n, fr.f.n ? fr.f.v[0].cost_ms : 0.0);
    if (fr.f.n == 1)
        CHECK(strstr(fr.f.v[0].message, "waited 19.020 ms longer") &&
              strstr(fr.f.v[0].message, "cudaFree 5.000 ms later waits for the whole device too"),
              "message says what was waited and why the saving is smaller: %s", fr.f.v[0].message);
    done(&fr);

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

/* Managed memory prefetched in stream order (cudaMemPrefetchAsync: no GPU
 * record from CUPTI), then a cudaDeviceSynchronize, three times, as
 * sample_um_prefetch_devsync.cu does.  mode 0: the device sync waits for the
 * prefetch only (4 ms of it): no "synchronized nothing", it is not known to
 * have waited for nothing; 1: a cudaStreamSynchronize of the prefetch's
 * stream came first and proves it ended: the device sync then did wait for
 * nothing; 2: a kernel after the prefetch on its stream ended before the
 * device sync: the same proof. */
static void write_prefetch_sync(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 20);
    uint64_t p[1] = { DEV_BUF };
    tb_launch(&b, US(30), 0xA1, 13, US(40), US(50), p, 1);   /* a GPU timeline, ended before the loop */
    double t = 1;
    for (int it = 0; it < 3; it++) {
        if (mode == 3)   /* a host function instead: no GPU record either */
            CALL(&b, .cbid = CB_cudaLaunchHostFunc, .t0 = MS(t), .t1 = MS(t + 0.01), .stream = 0xA1, .func = 0x4000);
        else
            CALL(&b, .cbid = CB_cudaMemPrefetchAsync, .t0 = MS(t), .t1 = MS(t + 0.01), .stream = 0xA1,
                 .ptr = DEV_BUF, .bytes = 1 << 20, .arg = 1);
        if (mode == 1) {
            CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 0.02), .t1 = MS(t + 4), .stream = 0xA1);
            t += 4;
        } else if (mode == 2) {
            tb_launch(&b, MS(t + 0.02), 0xA1, 13, MS(t + 4), MS(t + 4.5), p, 1);
            t += 5;
        }
        CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(t + 0.03), .t1 = MS(t + (mode == 1 || mode == 2 ? 0.05 : 4)));
        t += 5;
    }
    tb_close(&b);
}

/* A managed-memory prefetch on a blocking stream behind a legacy-stream
 * kernel, then a kernel on that stream: it started when the prefetch ended,
 * which CUPTI does not record, so its delay is not shown to be the legacy
 * barrier's (the replay keeps it too). */
static void write_prefetch_legacy(const char *name, int prefetch)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 0);
    tb_launch(&b, MS(1), 0, LEGACY_SID, MS(1.01), MS(5), NULL, 0);
    if (prefetch)
        CALL(&b, .cbid = CB_cudaMemPrefetchAsync, .t0 = MS(1.02), .t1 = MS(1.03), .stream = 0xA1,
             .ptr = DEV_BUF, .bytes = 1 << 26, .arg = 1);
    tb_launch(&b, MS(1.1), 0xA1, 13, MS(15), MS(16), NULL, 0);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.2), .t1 = MS(16.01), .stream = 0xA1);
    tb_close(&b);
}

static void test_managed_prefetch(void)
{
    static const struct { const char *name; int mode; uint32_t want; } cases[] = {
        { "prefetch_device_sync", 0, 0 }, { "prefetch_stream_sync_device_sync", 1, 1 },
        { "prefetch_kernel_device_sync", 2, 1 }, { "host_func_device_sync", 3, 0 },
    };
    char path[600];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        write_prefetch_sync(cases[k].name, cases[k].mode);
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[k].name);
        result r = analyze(path, &ss_rule_device_sync_overuse);
        CHECK(r.f.n == cases[k].want, "%s: %u device-sync-overuse findings, want %u (%s)", cases[k].name, r.f.n,
              cases[k].want, r.f.n ? r.f.v[0].message : "");
        if (r.f.n == 1)
            CHECK(strstr(r.f.v[0].message, "synchronized nothing") && r.f.v[0].count == 3,
                  "%s: %s (count %u)", cases[k].name, r.f.v[0].message, r.f.v[0].count);
        if (k == 0) {
            /* the call is in the model, on its stream, as managed-memory work */
            uint32_t seen = 0;
            for (uint32_t i = 0; i < r.m->ncalls; i++)
                if (r.m->calls[i].cls == SS_API_MANAGED_MEMORY && r.m->calls[i].stream >= 0 &&
                    ss_call_is_unrecorded_stream_work(&r.m->calls[i]))
                    seen++;
            CHECK(seen == 3, "prefetches in the model: %u of 3", seen);
        }
        done(&r);
    }
    /* without the prefetch the kernel's 10 ms delay has no cause but the
     * barrier (a finding); with it, none is claimed */
    for (int pf = 0; pf <= 1; pf++) {
        const char *name = pf ? "prefetch_legacy" : "prefetch_legacy_none";
        write_prefetch_legacy(name, pf);
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
        result r = analyze(path, &ss_rule_legacy_stream_serialization);
        CHECK(r.f.n == (pf ? 0u : 1u), "%s: %u legacy-stream-serialization findings (%s)", name, r.f.n,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
    }
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
        /* kernel arguments whose reads/writes the trace cannot tell (no cubin,
         * no parameter offsets): a possible race, one severity down */
        CHECK(x->severity == SS_SEV_WARNING && x->cost_ms == 0, "severity %d cost %.3f", x->severity, x->cost_ms);
        CHECK(strstr(x->message, "possible data race") == x->message, "message: %s", x->message);
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

/* The memory model: exact copy ranges prove a race (error); a cudaMemset to
 * device memory is not a host join; two kernels handed different offsets of
 * one buffer are slices; two reads never race. */
static void write_memory_model(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);   /* non-blocking */
    tb_create_stream(&b, US(2), 0xC1, 14, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 16384);
    switch (mode) {
    case 0: {   /* H2D into buf on A1, D2H out of buf on C1, nothing between: proven race */
        uint32_t c1 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = 0xA1,
                           .ptr = DEV_BUF, .ptr2 = PINNED_BUF, .bytes = 16384, .arg = 1,
                           .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PINNED);
        tb_memcpy_rec(&b, c1, 13, MS(1.02), MS(3), 1, SS_MEM_PINNED, SS_MEM_DEVICE, 16384);
        uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.1), .t1 = MS(1.11), .stream = 0xC1,
                           .ptr = PINNED_BUF, .ptr2 = DEV_BUF + 4096, .bytes = 4096, .arg = 2,
                           .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
        tb_memcpy_rec(&b, c2, 14, MS(1.12), MS(1.5), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
        break;
    }
    case 1: {   /* cudaMemset on device memory (legacy stream) returns before its memset runs: the
                   copy on C1 issued after it is NOT ordered after it */
        CALL(&b, .cbid = CB_cudaMemset, .t0 = MS(1), .t1 = MS(1.01), .ptr = DEV_BUF, .bytes = 16384,
             .mem_dst = SS_MEM_DEVICE);
        uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.1), .t1 = MS(1.11), .stream = 0xC1,
                           .ptr = PINNED_BUF, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 2,
                           .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
        tb_memcpy_rec(&b, c2, 14, MS(1.12), MS(1.5), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
        break;
    }
    case 2: {   /* the same memset on PINNED memory is synchronous: ordered */
        CALL(&b, .cbid = CB_cudaMemset, .t0 = MS(1), .t1 = MS(1.5), .ptr = PINNED_BUF, .bytes = 16384,
             .mem_dst = SS_MEM_PINNED);
        uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.6), .t1 = MS(1.61), .stream = 0xC1,
                           .ptr = DEV_BUF, .ptr2 = PINNED_BUF, .bytes = 4096, .arg = 1,
                           .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PINNED);
        tb_memcpy_rec(&b, c2, 14, MS(1.62), MS(1.9), 1, SS_MEM_PINNED, SS_MEM_DEVICE, 4096);
        break;
    }
    case 3: {   /* chunked streams: kernels on A1 and C1 write buf and buf + 8192: slices */
        uint64_t p0[1] = { DEV_BUF }, p1[1] = { DEV_BUF + 8192 };
        tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(3), p0, 1);
        tb_launch(&b, MS(1.1), 0xC1, 14, MS(1.11), MS(3), p1, 1);
        break;
    }
    case 4: {   /* two D2H copies read the same bytes on two streams: reads never race */
        for (int i = 0; i < 2; i++) {
            uint32_t c = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1 + i), .t1 = MS(1.01 + i),
                              .stream = i ? 0xC1 : 0xA1, .ptr = PINNED_BUF + 8192u * i, .ptr2 = DEV_BUF,
                              .bytes = 4096, .arg = 2, .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
            tb_memcpy_rec(&b, c, i ? 14 : 13, MS(1.02 + i), MS(5), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
        }
        break;
    }
    }
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(10), .t1 = MS(10.1));
    tb_close(&b);
}

static void test_memory_model(void)
{
    static const struct { const char *name; uint32_t findings; ss_severity sev; } cases[] = {
        { "fence_exact_race", 1, SS_SEV_ERROR },
        { "fence_memset_device", 1, SS_SEV_ERROR },
        { "fence_memset_pinned", 0, 0 },
        { "fence_kernel_slices", 0, 0 },
        { "fence_two_reads", 0, 0 },
    };
    for (int i = 0; i < 5; i++) {
        write_memory_model(cases[i].name, i);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[i].name);
        result r = analyze(path, &ss_rule_missing_fence);
        CHECK(r.f.n == cases[i].findings, "%s: %u missing-fence findings (%s)", cases[i].name, r.f.n,
              r.f.n ? r.f.v[0].message : "");
        if (r.f.n && cases[i].findings)
            CHECK(r.f.v[0].severity == cases[i].sev && strstr(r.f.v[0].message, "data race") == r.f.v[0].message,
                  "%s: severity %d: %s", cases[i].name, r.f.v[0].severity, r.f.v[0].message);
        done(&r);
    }
}

/* Memory mapped with cuMemMap, as PyTorch's expandable segments grow: two
 * chunks mapped next to each other are one buffer (a tensor may span them).
 * mode 0: a memset on `A` writes a buffer that spans both chunks, a kernel on
 * `C` is handed a pointer into the second chunk (a view of the buffer's second
 * half), nothing orders them: a race only if the chunks are one allocation;
 * 1: the same ordered by an event.
 * Unmaps (cuMemUnmap does not wait for the GPU: measured): kernels on the
 * first chunk (`A`, short) and the second (`C`, long), the host synchronizes
 * `A` only, then 2: unmaps the second chunk, which `C`'s kernel still uses;
 * 3: unmaps the first chunk (its own range only: nothing in flight there);
 * 4: synchronizes `C` too before unmapping the second chunk;
 * 5: no synchronization at all before unmapping the second chunk (missing-fence:
 * a use after release; incomplete-sync has no synchronization to blame);
 * 6: the same with a memset (a known write) on the second chunk instead of `C`'s kernel. */
#define VMM_BASE 0x7e0000000000ull
#define VMM_CHUNK (2ull << 20)
static void write_vmm(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xC1, 14, 1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cuMemMap, .t0 = US(10), .t1 = US(20), .ptr = VMM_BASE, .bytes = VMM_CHUNK);
    CALL(&b, .cbid = CB_cuMemMap, .t0 = US(30), .t1 = US(40), .ptr = VMM_BASE + VMM_CHUNK, .bytes = VMM_CHUNK);
    if (mode <= 1) {
        uint32_t c = CALL(&b, .cbid = CB_cudaMemsetAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = 0xA1,
                          .ptr = VMM_BASE + VMM_CHUNK / 2, .bytes = VMM_CHUNK);
        ss_memset_rec *ms = tb_rec(&b, SS_REC_MEMSET, sizeof *ms, 0);
        ms->g.start = MS(5); ms->g.end = MS(6); ms->g.corr = c; ms->g.stream_id = 13; ms->g.context_id = 1;
        ms->bytes = VMM_CHUNK; ms->mem_kind = SS_MEM_DEVICE; ms->async = 1;
        if (mode == 1) {
            CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.02), .t1 = MS(1.03), .stream = 0xA1, .event = 0xE1);
            CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.04), .t1 = MS(1.05), .stream = 0xC1, .event = 0xE1);
        }
        uint64_t r[1] = { VMM_BASE + VMM_CHUNK };
        tb_launch(&b, MS(1.1), 0xC1, 14, mode ? MS(6.01) : MS(1.11), mode ? MS(6.5) : MS(1.6), r, 1);
    } else {
        uint64_t k1[1] = { VMM_BASE }, k2[1] = { VMM_BASE + VMM_CHUNK };
        tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(3), k1, 1);
        if (mode == 6) {
            uint32_t c = CALL(&b, .cbid = CB_cudaMemsetAsync, .t0 = MS(1.1), .t1 = MS(1.11), .stream = 0xC1,
                              .ptr = VMM_BASE + VMM_CHUNK, .bytes = VMM_CHUNK);
            ss_memset_rec *ms = tb_rec(&b, SS_REC_MEMSET, sizeof *ms, 0);
            ms->g.start = MS(1.2); ms->g.end = MS(21); ms->g.corr = c; ms->g.stream_id = 14; ms->g.context_id = 1;
            ms->bytes = VMM_CHUNK; ms->mem_kind = SS_MEM_DEVICE; ms->async = 1;
        } else {
            tb_launch(&b, MS(1.1), 0xC1, 14, MS(1.11), MS(21), k2, 1);
        }
        if (mode < 5) CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.2), .t1 = MS(3.01), .stream = 0xA1);
        if (mode == 4) CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(3.1), .t1 = MS(21.01), .stream = 0xC1);
        uint64_t cut = mode == 3 ? VMM_BASE : VMM_BASE + VMM_CHUNK;
        double t = mode == 4 ? 22 : 4;   /* 2, 3: while `C`'s kernel runs */
        CALL(&b, .cbid = CB_cuMemUnmap, .t0 = MS(t), .t1 = MS(t + 0.1), .ptr = cut, .bytes = VMM_CHUNK);
    }
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(30), .t1 = MS(30.1));
    tb_close(&b);
}

static void test_vmm(void)
{
    static const struct { const char *name; const ss_rule *rule; uint32_t findings; } cases[] = {
        { "vmm_join_race", &ss_rule_missing_fence, 1 }, { "vmm_join_fixed", &ss_rule_missing_fence, 0 },
        { "vmm_unmap_inflight", &ss_rule_incomplete_sync, 1 }, { "vmm_unmap_other_chunk", &ss_rule_incomplete_sync, 0 },
        { "vmm_unmap_synced", &ss_rule_incomplete_sync, 0 }, { "vmm_unmap_unsynced", &ss_rule_missing_fence, 1 },
        /* the same traces through the other rule: one finding per problem */
        { "vmm_unmap_inflight", &ss_rule_missing_fence, 0 }, { "vmm_unmap_other_chunk", &ss_rule_missing_fence, 0 },
        { "vmm_unmap_synced", &ss_rule_missing_fence, 0 }, { "vmm_unmap_unsynced", &ss_rule_incomplete_sync, 0 },
        { "vmm_unmap_memset", &ss_rule_missing_fence, 1 },
    };
    for (int i = 0; i < 11; i++) {
        if (i < 6 || i == 10) write_vmm(cases[i].name, i < 6 ? i : 6);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[i].name);
        result r = analyze(path, cases[i].rule);
        CHECK(r.f.n == cases[i].findings, "%s: %u %s findings (%s)", cases[i].name, r.f.n, cases[i].rule->id,
              r.f.n ? r.f.v[0].message : "");
        if (i == 0 && r.f.n == 1)   /* the race is on the joined mapping */
            CHECK(r.f.v[0].alloc >= 0 && r.m->allocs[r.f.v[0].alloc].ptr == VMM_BASE &&
                  r.m->allocs[r.f.v[0].alloc].size == 2 * VMM_CHUNK && strstr(r.f.v[0].message, "cuMemMap"),
                  "joined mapping: %s", r.f.v[0].message);
        if (i == 5 && r.f.n == 1)
            /* the kernel's code is not in the trace: whether it dereferences its pointer is not known */
            CHECK(r.f.v[0].severity == SS_SEV_WARNING &&
                  strstr(r.f.v[0].message, "possible use after release (whether the kernel dereferences") ==
                  r.f.v[0].message && strstr(r.f.v[0].message, "cuMemUnmap released 0x7e0000200000..0x7e0000400000"),
                  "unsynced unmap: severity %d: %s", r.f.v[0].severity, r.f.v[0].message);
        if (i == 10 && r.f.n == 1)   /* a memset's write is known: proven */
            CHECK(r.f.v[0].severity == SS_SEV_ERROR && strstr(r.f.v[0].message, "use after release: cuMemUnmap") ==
                  r.f.v[0].message && strstr(r.f.v[0].message, "which writes it"),
                  "unsynced unmap of a memset's range: severity %d: %s", r.f.v[0].severity, r.f.v[0].message);
        if (i == 2 && r.f.n == 1)   /* unmapping does not wait: the GPU may still use the range */
            CHECK(r.f.v[0].severity == SS_SEV_ERROR, "unmap in flight: severity %d: %s", r.f.v[0].severity,
                  r.f.v[0].message);
        if (i == 3) {   /* unmapping the first chunk leaves the second as an allocation of its own from then on */
            uint32_t found = 0;
            for (uint32_t a = 0; a < r.m->nallocs; a++) {
                const ss_alloc *x = &r.m->allocs[a];
                if (x->ptr == VMM_BASE && x->size == 2 * VMM_CHUNK && x->t_free == MS(4)) found |= 1;
                if (x->ptr == VMM_BASE + VMM_CHUNK && x->size == VMM_CHUNK && x->t_alloc == MS(4) &&
                    x->t_free == UINT64_MAX) found |= 2;
            }
            CHECK(found == 3 && r.m->nallocs == 2, "unmap split: %u allocations, found %u", r.m->nallocs, found);
        }
        done(&r);
    }
}

/* Exact memory mode: what each kernel really read and wrote (one entry per
 * recorded pointer word), as hulls: per allocation the lowest to the highest
 * byte touched.  Of a hull only those two bytes are known: hulls that
 * overlap prove a race only where one's end byte is the other's. */
static void tb_exact(tb *b, uint64_t t_enter, uint64_t ptr, uint64_t rlo, uint64_t rhi, uint64_t wlo, uint64_t whi)
{
    ss_kernel_access_rec *k = tb_rec(b, SS_REC_KERNEL_ACCESS, sizeof *k, sizeof(ss_kernel_access_entry));
    k->tid = TID; k->t_enter = t_enter; k->nentries = 1; k->nallocs = 1;
    ss_kernel_access_entry *e = (ss_kernel_access_entry *)((char *)k + sizeof *k);
    e->word = 0; e->value = ptr; e->alloc_lo = DEV_BUF; e->alloc_hi = DEV_BUF + 16384;
    if (rhi > rlo) { e->flags |= SS_KACCESS_E_READ; e->read_lo = rlo; e->read_hi = rhi; }
    if (whi > wlo) { e->flags |= SS_KACCESS_E_WRITE; e->write_lo = wlo; e->write_hi = whi; }
}

static void write_exact(const char *name, uint64_t a_end)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xC1, 14, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    /* slice kernels: A1 writes from buf up to a_end, C1 from buf + 8192 (the
     * inference would call them slices; the recorded ranges tell) */
    uint64_t p0[1] = { DEV_BUF }, p1[1] = { DEV_BUF + 8192 };
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(3), p0, 1);
    tb_exact(&b, MS(1), DEV_BUF, 0, 0, DEV_BUF, a_end);
    tb_launch(&b, MS(1.1), 0xC1, 14, MS(1.11), MS(3), p1, 1);
    tb_exact(&b, MS(1.1), DEV_BUF + 8192, DEV_BUF + 8192, DEV_BUF + 16384, DEV_BUF + 8192, DEV_BUF + 16384);
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(10), .t1 = MS(10.1));
    tb_close(&b);
}

static void test_exact_memory(void)
{
    write_exact("fence_exact_slices", DEV_BUF + 8192);
    write_exact("fence_exact_overlap", DEV_BUF + 8193);   /* A's last byte is C's first */
    write_exact("fence_exact_hulls", DEV_BUF + 12288);    /* the hulls overlap, no end byte is shared */
    char path[600];
    snprintf(path, sizeof path, "%s/fence_exact_slices.sstrace", out_dir);
    result r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 0, "exact, disjoint slices: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    done(&r);
    snprintf(path, sizeof path, "%s/fence_exact_overlap.sstrace", out_dir);
    r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 1, "exact, overlapping slices: %u", r.f.n);
    if (r.f.n)
        CHECK(r.f.v[0].severity == SS_SEV_ERROR && strstr(r.f.v[0].message, "data race") == r.f.v[0].message &&
              strstr(r.f.v[0].message, "possible") == NULL, "exact verdict: %d %s", r.f.v[0].severity,
              r.f.v[0].message);
    done(&r);
    /* pitched tiles interleave row by row: their hulls overlap, their bytes need not */
    snprintf(path, sizeof path, "%s/fence_exact_hulls.sstrace", out_dir);
    r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 1, "exact, overlapping hulls: %u", r.f.n);
    if (r.f.n)
        CHECK(r.f.v[0].severity == SS_SEV_WARNING && strstr(r.f.v[0].message, "possible data race") &&
              strstr(r.f.v[0].message, "not every byte between"), "hull verdict: %d %s", r.f.v[0].severity,
              r.f.v[0].message);
    done(&r);
}

/* Host threads: thread 1 fills buf on its stream and waits for it, then
 * hands it to thread 2 through a mutex; thread 2 copies buf out on its own
 * stream.  mode 0: the handoff is recorded (clean); 1: the same without the
 * mutex records (the ordering exists but is not seen: only a possible race,
 * since thread 1 had waited for the write before thread 2 submitted); 2:
 * thread 1 hands over without waiting (a race, error). */
static void tb_hsync(tb *b, uint64_t t, uint32_t tid, uint16_t kind, uint64_t obj, uint64_t seq)
{
    ss_host_sync_rec *r = tb_rec(b, SS_REC_HOST_SYNC, sizeof *r, 0);
    r->h.flags = kind; r->time = t; r->object = obj; r->seq = seq; r->tid = tid; r->what = SS_HSYNC_MUTEX;
}

/* Modes: 0 the host threads hand the buffer over through a mutex after a
 * stream sync; 1 the same, the mutex not seen; 2 no stream sync (a race).
 * A host function instead of the stream sync (simpleCallback): 3 enqueued
 * behind the copy, the second copy submitted after the first ended (what
 * the host function did is not seen: possible); 4 enqueued on an idle third
 * stream (runs at once: a race); 5 behind the copy, but the second copy
 * submitted while the first still ran (the host function had not run yet:
 * a race). */
static void write_handoff(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xC1, 14, 1);
    tb_create_stream(&b, US(3), 0xB1, 15, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 16384);
    uint32_t c1 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = 0xA1, .ptr = DEV_BUF,
                       .ptr2 = PINNED_BUF, .bytes = 16384, .arg = 1, .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PINNED);
    tb_memcpy_rec(&b, c1, 13, MS(1.02), MS(3), 1, SS_MEM_PINNED, SS_MEM_DEVICE, 16384);
    if (mode < 2) CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.1), .t1 = MS(3.01), .stream = 0xA1);
    if (mode >= 3)
        CALL(&b, .cbid = CB_cudaLaunchHostFunc, .t0 = MS(1.1), .t1 = MS(1.11), .stream = mode == 4 ? 0xB1 : 0xA1);
    if (mode == 0) {
        tb_hsync(&b, MS(3.1), TID, SS_HSYNC_RELEASE, 0x4000, 1);
        tb_hsync(&b, MS(3.2), TID + 1, SS_HSYNC_ACQUIRE, 0x4000, 1);
    }
    double t2 = mode == 5 ? 2.0 : 3.3;
    uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t2), .t1 = MS(t2 + 0.01), .stream = 0xC1, .tid = TID + 1,
                       .ptr = PINNED_BUF + 8192, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 2, .mem_dst = SS_MEM_PINNED,
                       .mem_src = SS_MEM_DEVICE);
    tb_memcpy_rec(&b, c2, 14, MS(t2 + 0.02), MS(t2 + 0.2), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(10), .t1 = MS(10.1));
    tb_close(&b);
}

/* missing-fence cases: each trace written by write(name, its index), then
 * how many findings, and the first one's severity and words. */
typedef struct fence_case { const char *name; uint32_t n; ss_severity sev; const char *text; } fence_case;

static void check_fence_cases(const fence_case *cases, int ncases, void (*write)(const char *name, int mode))
{
    for (int i = 0; i < ncases; i++) {
        write(cases[i].name, i);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[i].name);
        result r = analyze(path, &ss_rule_missing_fence);
        CHECK(r.f.n == cases[i].n, "%s: %u findings (%s)", cases[i].name, r.f.n, r.f.n ? r.f.v[0].message : "");
        if (r.f.n && cases[i].n) {
            CHECK(r.f.v[0].severity == cases[i].sev, "%s: severity %d (%s)", cases[i].name, r.f.v[0].severity,
                  r.f.v[0].message);
            if (cases[i].text)
                CHECK(strstr(r.f.v[0].message, cases[i].text) != NULL, "%s: %s", cases[i].name, r.f.v[0].message);
        }
        done(&r);
    }
}

static void test_host_threads(void)
{
    static const fence_case cases[] = {
        { "handoff_mutex", 0, 0, NULL },
        { "handoff_unseen", 1, SS_SEV_WARNING, "had already waited for the first access" },
        { "handoff_racy", 1, SS_SEV_ERROR, NULL },
        { "handoff_host_func", 1, SS_SEV_WARNING, "enqueued a host function that runs only after the first access" },
        { "handoff_host_func_other_stream", 1, SS_SEV_ERROR, NULL },
        { "handoff_host_func_too_early", 1, SS_SEV_ERROR, NULL },
    };
    check_fence_cases(cases, (int)(sizeof cases / sizeof cases[0]), write_handoff);
}

/* A synchronous cudaMemcpy from pageable memory into buf on the legacy
 * stream (NVIDIA's StreamPriorities sample), then a copy out of buf on a
 * non-blocking stream with no event.  CUDA lets such a copy return once
 * staged, before it lands.  Modes: 0 the copy landed before the call
 * returned, and the same thread submits the second copy after the return:
 * possible (warning); 1 the copy landed after the call returned: error; 2
 * the second copy comes from another thread: error; 3 the same copy from
 * pinned memory (it returns when the copy is done): ordered, nothing; 4 as 0
 * with cudaMemcpyAsync (asynchronous: nothing orders it): error; 5 as 2, but
 * thread 1 releases a mutex after the copy returned and thread 2 takes it
 * before its copy (a worker handed the buffer): possible, as 0; 6 as 5 with
 * the release before the copy returned: the handoff does not cover the
 * return, error. */
static void write_pageable_sync(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(2), 0xC1, 14, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 32768);
    uint8_t src = mode == 3 ? SS_MEM_PINNED : SS_MEM_PAGEABLE;
    uint64_t from = mode == 3 ? PINNED_BUF + 16384 : PAGEABLE_BUF;
    uint32_t c1 = CALL(&b, .cbid = mode == 4 ? CB_cudaMemcpyAsync : CB_cudaMemcpy, .t0 = MS(1),
                       .t1 = MS(mode == 4 ? 1.01 : 3.05), .ptr = DEV_BUF, .ptr2 = from, .bytes = 16384, .arg = 1,
                       .mem_dst = SS_MEM_DEVICE, .mem_src = src);
    tb_memcpy_rec(&b, c1, LEGACY_SID, MS(1.02), MS(mode == 1 ? 3.1 : 3), 1, src, SS_MEM_DEVICE, 16384);
    double t2 = 3.2;
    if (mode >= 5) {
        tb_hsync(&b, MS(mode == 5 ? 3.1 : 0.5), TID, SS_HSYNC_RELEASE, 0xABC, 1);
        tb_hsync(&b, MS(3.15), TID + 1, SS_HSYNC_ACQUIRE, 0xABC, 1);
    }
    uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t2), .t1 = MS(t2 + 0.01), .stream = 0xC1,
                       .tid = mode == 2 || mode >= 5 ? TID + 1 : TID, .ptr = PINNED_BUF, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 2,
                       .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
    tb_memcpy_rec(&b, c2, 14, MS(t2 + 0.02), MS(t2 + 0.2), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(4), .t1 = MS(4.01), .stream = 0xC1);
    tb_close(&b);
}

static void test_pageable_sync_copy(void)
{
    static const fence_case cases[] = {
        { "pageable_sync_landed", 1, SS_SEV_WARNING, "may return once its data is staged" },
        { "pageable_sync_landed_late", 1, SS_SEV_ERROR, "returns once its data is staged, and the copy may land after that" },
        { "pageable_sync_other_thread", 1, SS_SEV_ERROR, "returns once its data is staged" },
        { "pageable_sync_pinned", 0, 0, NULL },
        { "pageable_async_landed", 1, SS_SEV_ERROR, NULL },
        { "pageable_sync_handed_over", 1, SS_SEV_WARNING, "which host synchronization orders after that return" },
        { "pageable_sync_handed_early", 1, SS_SEV_ERROR, "returns once its data is staged" },
    };
    check_fence_cases(cases, (int)(sizeof cases / sizeof cases[0]), write_pageable_sync);
}

/* Each CUDA context has a legacy default stream of its own: a green
 * context's (PyTorch's torch.cuda.green_contexts runs work on it) is not
 * ordered with the primary context's blocking streams (measured on the H200:
 * a kernel on it ran beside a blocking stream's kernel it read from).  A
 * copy into buf on blocking stream A (context 1, GPU 1.02-3 ms), then the
 * thread makes green context 3 (of parent 1) current and copies buf out on
 * stream 0, then goes back to context 1.  Modes: 0 no event (the copy out
 * ran at 1.1 ms): a race, error (before the model kept a legacy stream a
 * context it was "ordered by the legacy barrier"); 1 an event recorded on A
 * and waited by the green context's legacy stream, as PyTorch's
 * GreenContext.set_context does: ordered, nothing; 2 as 0 in a trace
 * without the threads' contexts (before trace format 1.9): one legacy
 * stream a device, ordered by its barrier as far as the trace can tell. */
#define GREEN_NULL_SID 17
/* The buffers and event of the two tests below, and the first access: a copy
 * into DEV_BUF on stream `on` (CUPTI id `sid`), GPU 1.02-3 ms. */
static void copy_into_buf(tb *b, uint64_t on, uint32_t sid)
{
    CALL(b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 32768);
    CALL(b, .cbid = CB_cudaEventCreate, .t0 = US(50), .t1 = US(55), .event = 0xE1);
    uint32_t c1 = CALL(b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = on, .ptr = DEV_BUF,
                       .ptr2 = PINNED_BUF, .bytes = 16384, .arg = 1, .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PINNED);
    tb_memcpy_rec(b, c1, sid, MS(1.02), MS(3), 1, SS_MEM_PINNED, SS_MEM_DEVICE, 16384);
}

static void write_green_legacy(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    ss_context_rec *cx = tb_rec(&b, SS_REC_CONTEXT, sizeof *cx, 0);
    cx->context_id = 3; cx->device = 0; cx->null_stream_id = GREEN_NULL_SID; cx->parent_id = 1;
    if (mode != 2) {
        ss_thread_context_rec *tc = tb_rec(&b, SS_REC_THREAD_CONTEXT, sizeof *tc, 0);
        tc->tid = TID; tc->context_id = 1; tc->t = US(1);
    }
    uint32_t corr = CALL(&b, .cbid = CB_cudaStreamCreate, .t0 = US(1), .t1 = US(6), .stream = 0xA1);
    tb_stream(&b, 0xA1, 13, SS_STREAM_BLOCKING, 0, corr);
    copy_into_buf(&b, 0xA1, 13);
    if (mode == 1) CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.03), .t1 = MS(1.035), .stream = 0xA1, .event = 0xE1);
    if (mode != 2) {
        ss_thread_context_rec *tc = tb_rec(&b, SS_REC_THREAD_CONTEXT, sizeof *tc, 0);
        tc->tid = TID; tc->context_id = 3; tc->t = MS(1.05);
    }
    if (mode == 1) CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.05), .t1 = MS(1.055), .stream = 0, .event = 0xE1);
    uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.06), .t1 = MS(1.07), .stream = 0,
                       .ptr = PINNED_BUF + 16384, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 2,
                       .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
    double s2 = mode == 1 ? 3.05 : 1.1;
    tb_memcpy_rec_of(&b, c2, GREEN_NULL_SID, MS(s2), MS(s2 + 0.1), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096, 3, 0);
    if (mode != 2) {
        ss_thread_context_rec *tc = tb_rec(&b, SS_REC_THREAD_CONTEXT, sizeof *tc, 0);
        tc->tid = TID; tc->context_id = 1; tc->t = MS(4);
    }
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(4), .t1 = MS(4.01), .arg = 1);
    tb_close(&b);
}

/* A thread that never called cudaSetDevice through the interposer (as
 * PyTorch: its records' device is -1) works in device 1's primary context
 * (context 4, legacy stream id 27): a copy into buf on stream 0 there, an
 * event recorded on stream 0, a non-blocking stream of device 1 waits for it
 * and copies buf out.  Ordered: the event's stream 0 is context 4's, on device 1
 * (mode 0).  Mode 1: the wait is left out: a race, error.  The records say
 * device 0 (a stale device): stream 0 is the context's, on its device. */
static void write_context_device(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    ss_context_rec *cx = tb_rec(&b, SS_REC_CONTEXT, sizeof *cx, 0);
    cx->context_id = 4; cx->device = 1; cx->null_stream_id = 27;
    ss_thread_context_rec *tc = tb_rec(&b, SS_REC_THREAD_CONTEXT, sizeof *tc, 0);
    tc->tid = TID; tc->context_id = 4; tc->t = US(1);
    uint32_t corr = CALL(&b, .cbid = CB_cudaStreamCreateWithFlags, .t0 = US(1), .t1 = US(6), .stream = 0xB1,
                         .arg = 1);
    ss_stream_rec *sr = tb_rec(&b, SS_REC_STREAM, sizeof *sr, 0);
    sr->handle = 0xB1; sr->stream_id = 28; sr->context_id = 4; sr->device = 1; sr->kind = SS_STREAM_NON_BLOCKING;
    sr->flags = 1; sr->corr = corr;
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 32768);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(50), .t1 = US(55), .event = 0xE1);
    uint32_t c1 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = 0, .ptr = DEV_BUF,
                       .ptr2 = PINNED_BUF, .bytes = 16384, .arg = 1, .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PINNED);
    tb_memcpy_rec_of(&b, c1, 27, MS(1.02), MS(3), 1, SS_MEM_PINNED, SS_MEM_DEVICE, 16384, 4, 1);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.03), .t1 = MS(1.035), .stream = 0, .event = 0xE1);
    if (mode == 0)
        CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.05), .t1 = MS(1.055), .stream = 0xB1, .event = 0xE1);
    uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.06), .t1 = MS(1.07), .stream = 0xB1,
                       .ptr = PINNED_BUF + 16384, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 2,
                       .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
    double s2 = mode == 0 ? 3.05 : 1.1;
    tb_memcpy_rec_of(&b, c2, 28, MS(s2), MS(s2 + 0.1), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096, 4, 1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(4), .t1 = MS(4.01), .stream = 0xB1);
    tb_close(&b);
}

/* A device number from the trace is data, not a size: a stream on device
 * 0x7ffffff0 (a corrupt record, as the fuzzer made one) once had
 * legacy-stream-serialization allocate a table of 2^31 entries and die. */
static void test_huge_device_number(void)
{
    tb b;
    tb_open(&b, "huge_device_number");
    uint32_t corr = CALL(&b, .cbid = CB_cudaStreamCreate, .t0 = US(1), .t1 = US(6), .stream = 0xA1);
    ss_stream_rec *sr = tb_rec(&b, SS_REC_STREAM, sizeof *sr, 0);
    sr->handle = 0xA1; sr->stream_id = 13; sr->context_id = 9; sr->device = 0x7ffffff0u;
    sr->kind = SS_STREAM_BLOCKING; sr->corr = corr;
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(2), NULL, 0);
    tb_launch(&b, MS(1.1), 0, LEGACY_SID, MS(2.01), MS(3), NULL, 0);
    tb_close(&b);
    char path[600];
    snprintf(path, sizeof path, "%s/huge_device_number.sstrace", out_dir);
    result r = analyze(path, &ss_rule_legacy_stream_serialization);
    CHECK(r.f.n == 0, "a stream on device 0x7ffffff0: %u findings", r.f.n);
    done(&r);
}

static void test_green_context_legacy(void)
{
    static const fence_case device_cases[] = {
        { "context_device_ordered", 0, 0, NULL },
        { "context_device_racy", 1, SS_SEV_ERROR, NULL },
    };
    check_fence_cases(device_cases, 2, write_context_device);
    static const fence_case cases[] = {
        { "green_legacy_racy", 1, SS_SEV_ERROR, "legacy default" },
        { "green_legacy_ordered", 0, 0, NULL },
        { "green_legacy_no_contexts", 0, 0, NULL },
    };
    check_fence_cases(cases, (int)(sizeof cases / sizeof cases[0]), write_green_legacy);
    /* and no "correct only because of the legacy barrier" where none orders */
    for (int mode = 0; mode < 3; mode++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[mode].name);
        result r = analyze(path, &ss_rule_relies_on_legacy_sync);
        uint32_t want = mode == 2 ? 1 : 0;
        CHECK(r.f.n == want, "%s: %u relies-on-legacy-sync findings, want %u (%s)", cases[mode].name, r.f.n, want,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
    }
}

/* Context-wide events (cuGreenCtxRecordEvent records all of a green
 * context's work in an event, cuGreenCtxWaitEvent makes all its future work
 * wait for one; cuCtxRecordEvent / cuCtxWaitEvent the same for any context):
 * orders the model does not follow.  A copy into buf on stream A (GPU
 * 1.02-3 ms), then a copy out of it on stream C (GPU 3.05 ms).  Modes: 0 the
 * event recorded context-wide, waited for by C: possible (warning), and no
 * unrecorded-event-wait (it was recorded); 1 recorded on A, the green
 * context made to wait for it: possible; 2 nothing between the copies: an
 * error.  (Measured on the H200 before these calls were recorded: six false
 * missing-fence errors on a program ordered by them.) */
static void write_context_event(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xC1, 14, 1);
    copy_into_buf(&b, 0xA1, 13);
    if (mode == 0) {
        CALL(&b, .cbid = CB_cuGreenCtxRecordEvent, .t0 = MS(1.03), .t1 = MS(1.035), .event = 0xE1, .ptr = 0x6A6A000,
             .arg = 1, .flags = SS_API_F_DRIVER);
        CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.05), .t1 = MS(1.055), .stream = 0xC1, .event = 0xE1);
    } else if (mode == 1) {
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.03), .t1 = MS(1.035), .stream = 0xA1, .event = 0xE1);
        CALL(&b, .cbid = CB_cuGreenCtxWaitEvent, .t0 = MS(1.05), .t1 = MS(1.055), .event = 0xE1, .ptr = 0x6A6A000,
             .arg = 2, .flags = SS_API_F_DRIVER);
    }
    uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.1), .t1 = MS(1.11), .stream = 0xC1,
                       .ptr = PINNED_BUF + 16384, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 2,
                       .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
    tb_memcpy_rec(&b, c2, 14, MS(3.05), MS(3.2), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(4), .t1 = MS(4.01), .stream = 0xC1);
    tb_close(&b);
}

static void test_context_events(void)
{
    static const fence_case cases[] = {
        { "context_event_record", 1, SS_SEV_WARNING, "context-wide" },
        { "context_event_wait", 1, SS_SEV_WARNING, "context-wide" },
        { "context_event_none", 1, SS_SEV_ERROR, NULL },
    };
    check_fence_cases(cases, (int)(sizeof cases / sizeof cases[0]), write_context_event);
    char path[600];
    snprintf(path, sizeof path, "%s/context_event_record.sstrace", out_dir);
    result r = analyze(path, &ss_rule_unrecorded_event_wait);
    CHECK(r.f.n == 0, "an event recorded context-wide is recorded: %u unrecorded-event-wait findings (%s)", r.f.n,
          r.f.n ? r.f.v[0].message : "");
    done(&r);
}

/* Stream memory operations (cuStreamWriteValue*, cuStreamWaitValue*) order
 * a copy into DEV_BUF on stream A (GPU 1.02-3 ms) before a copy out of it on
 * stream C (submitted at 1.1 ms, GPU from 3.05 ms), with no event.  Modes:
 * 0 write-value (A, flag, 1) behind the first copy, wait-value (C, flag,
 * GEQ 1) before the second: ordered, nothing to say; 1 the wait alone (the
 * word's writer is not recorded: a kernel may have set it): possible; 2 the
 * write-value on an idle third stream B (fires at once): a race, error; 3
 * the write (1) does not satisfy the wait (GEQ 2): as 1; 4 as 1, but the
 * second copy ran while the first still ran (no wait allowed that): error;
 * 5 64-bit, the value above 32 bits (written 1 << 32 | 1, waited GEQ
 * 1 << 32): ordered; 6 a cuStreamBatchMemOp on C (its ops are not
 * recorded): possible; 7 the wait after
 * the second copy on C: orders nothing, error; 8 a wait EQ 1 against a
 * write of 3 then of 1 on an idle stream then 3 again on A: the latest
 * satisfying write (B's) is linked, error. */
#define FLAG_BUF (DEV_BUF + 0x100000)
static void write_memop(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xC1, 14, 1);
    tb_create_stream(&b, US(3), 0xB1, 15, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(22), .t1 = US(25), .ptr = FLAG_BUF, .bytes = 8);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 16384);
    uint32_t c1 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = 0xA1, .ptr = DEV_BUF,
                       .ptr2 = PINNED_BUF, .bytes = 16384, .arg = 1, .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PINNED);
    tb_memcpy_rec(&b, c1, 13, MS(1.02), MS(3), 1, SS_MEM_PINNED, SS_MEM_DEVICE, 16384);
    int w64 = mode == 5;
    uint32_t wcb = w64 ? CB_cuStreamWriteValue64 : CB_cuStreamWriteValue32;
    uint32_t vcb = w64 ? CB_cuStreamWaitValue64 : CB_cuStreamWaitValue32;
    uint64_t wbytes = w64 ? 8 : 4;
    /* the write-value (value: arg, high half in ptr2) */
#define WRITE_VALUE(t, on, v) \
    CALL(&b, .cbid = wcb, .t0 = MS(t), .t1 = MS((t) + 0.005), .stream = (on), .ptr = FLAG_BUF, .bytes = wbytes, \
         .arg = (uint32_t)(v), .ptr2 = (uint64_t)(v) >> 32, .flags = SS_API_F_DRIVER)
#define WAIT_VALUE(t, v, cond) \
    CALL(&b, .cbid = vcb, .t0 = MS(t), .t1 = MS((t) + 0.005), .stream = 0xC1, .ptr = FLAG_BUF, .bytes = wbytes, \
         .arg = (uint32_t)(v), .ptr2 = (uint64_t)(v) >> 32, .arg2 = (cond), .flags = SS_API_F_DRIVER)
    switch (mode) {
    case 0: WRITE_VALUE(1.05, 0xA1, 1); WAIT_VALUE(1.06, 1, 0 /* GEQ */); break;
    case 1: case 4: WAIT_VALUE(1.06, 1, 0); break;
    case 2: WRITE_VALUE(1.05, 0xB1, 1); WAIT_VALUE(1.06, 1, 0); break;
    case 3: WRITE_VALUE(1.05, 0xA1, 1); WAIT_VALUE(1.06, 2, 0); break;
    case 5: WRITE_VALUE(1.05, 0xA1, (1ull << 32) | 1); WAIT_VALUE(1.06, 1ull << 32, 0); break;
    case 6:
        CALL(&b, .cbid = CB_cuStreamBatchMemOp, .t0 = MS(1.06), .t1 = MS(1.065), .stream = 0xC1, .arg = 2,
             .flags = SS_API_F_DRIVER);
        break;
    case 8:
        WRITE_VALUE(1.03, 0xA1, 3); WRITE_VALUE(1.04, 0xB1, 1); WRITE_VALUE(1.05, 0xA1, 3);
        WAIT_VALUE(1.06, 1, 1 /* EQ */);
        break;
    default: break;
    }
    double s2 = mode == 4 ? 1.12 : 3.05;
    uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.1), .t1 = MS(1.11), .stream = 0xC1,
                       .ptr = PINNED_BUF + 8192, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 2, .mem_dst = SS_MEM_PINNED,
                       .mem_src = SS_MEM_DEVICE);
    tb_memcpy_rec(&b, c2, 14, MS(s2), MS(s2 + 0.2), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
    if (mode == 7) { WRITE_VALUE(1.05, 0xA1, 1); WAIT_VALUE(1.15, 1, 0); }
#undef WRITE_VALUE
#undef WAIT_VALUE
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(10), .t1 = MS(10.1));
    tb_close(&b);
}

static void test_stream_memops(void)
{
    static const char UNLINKED[] = "waited on a memory value (cuStreamWaitValue32 on ";
    static const fence_case cases[] = {
        { "memop_handoff", 0, 0, NULL },
        { "memop_unknown_writer", 1, SS_SEV_WARNING, UNLINKED },
        { "memop_idle_writer", 1, SS_SEV_ERROR, NULL },
        { "memop_unsatisfied", 1, SS_SEV_WARNING, UNLINKED },
        { "memop_unknown_writer_overlap", 1, SS_SEV_ERROR, NULL },
        { "memop_handoff64", 0, 0, NULL },
        { "memop_batch", 1, SS_SEV_WARNING, "(cuStreamBatchMemOp on " },
        { "memop_wait_too_late", 1, SS_SEV_ERROR, NULL },
        { "memop_eq_idle_writer", 1, SS_SEV_ERROR, NULL },
    };
    check_fence_cases(cases, (int)(sizeof cases / sizeof cases[0]), write_memop);
}

/* relies-on-legacy-sync: a copy on a blocking stream fills buf, a kernel on
 * the legacy stream uses it; only the legacy barrier orders them.  The twin
 * orders them with an event: nothing to say. */
static void write_relies(const char *name, int with_event, int copy_consumer)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 0);   /* blocking */
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 16384);
    uint32_t c1 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = 0xA1,
                       .ptr = DEV_BUF, .ptr2 = PINNED_BUF, .bytes = 16384, .arg = 1,
                       .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PINNED);
    tb_memcpy_rec(&b, c1, 13, MS(1.02), MS(5), 1, SS_MEM_PINNED, SS_MEM_DEVICE, 16384);
    if (with_event) {
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.02), .t1 = MS(1.03), .stream = 0xA1, .event = 0xE1);
        CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.04), .t1 = MS(1.05), .stream = 0, .event = 0xE1);
    }
    if (copy_consumer) {
        /* a copy reads what the first one wrote: certain */
        uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.1), .t1 = MS(1.11), .stream = 0,
                           .ptr = PINNED_BUF, .ptr2 = DEV_BUF, .bytes = 16384, .arg = 2,
                           .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
        tb_memcpy_rec(&b, c2, LEGACY_SID, MS(5.01), MS(6), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 16384);
    } else {
        /* a kernel whose code was not recorded: it may read or write DEV_BUF */
        uint64_t p[1] = { DEV_BUF };
        tb_launch(&b, MS(1.1), 0, LEGACY_SID, MS(5.01), MS(6), p, 1);
    }
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(7), .t1 = MS(7.1));
    tb_close(&b);
}

static void test_relies_on_legacy(void)
{
    write_relies("relies_on_legacy", 0, 0);
    write_relies("relies_on_legacy_fixed", 1, 0);
    write_relies("relies_on_legacy_copy", 0, 1);
    char path[600];
    snprintf(path, sizeof path, "%s/relies_on_legacy.sstrace", out_dir);
    result r = analyze(path, &ss_rule_relies_on_legacy_sync);
    CHECK(r.f.n == 1 && r.f.v[0].severity == SS_SEV_INFO && r.f.v[0].cost_ms == 0,
          "relies-on-legacy-sync: %u findings", r.f.n);
    /* the kernel's accesses are not known: possible, and said so */
    if (r.f.n) CHECK(strstr(r.f.v[0].message, "legacy default") != NULL &&
                     strstr(r.f.v[0].message, "possibly depends on") != NULL &&
                     strstr(r.f.v[0].message, "not classified") != NULL, "message: %s", r.f.v[0].message);
    done(&r);
    /* a copy reads the bytes the other copy wrote: beyond doubt */
    snprintf(path, sizeof path, "%s/relies_on_legacy_copy.sstrace", out_dir);
    r = analyze(path, &ss_rule_relies_on_legacy_sync);
    CHECK(r.f.n == 1, "relies-on-legacy-sync, copy consumer: %u findings", r.f.n);
    if (r.f.n) CHECK(strstr(r.f.v[0].message, " depends on ") != NULL &&
                     strstr(r.f.v[0].message, "possibl") == NULL, "message: %s", r.f.v[0].message);
    done(&r);
    snprintf(path, sizeof path, "%s/relies_on_legacy.sstrace", out_dir);
    /* the barrier delayed the kernel 4 ms, but the kernel needs what it waited for: no serialization warning,
     * and no race */
    r = analyze(path, &ss_rule_legacy_stream_serialization);
    CHECK(r.f.n == 0, "legacy-stream-serialization on a needed barrier: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    done(&r);
    r = analyze(path, &ss_rule_missing_fence);
    CHECK(r.f.n == 0, "missing-fence where the legacy barrier orders: %u", r.f.n);
    done(&r);
    snprintf(path, sizeof path, "%s/relies_on_legacy_fixed.sstrace", out_dir);
    r = analyze(path, &ss_rule_relies_on_legacy_sync);
    CHECK(r.f.n == 0, "relies-on-legacy-sync with an explicit event: %u", r.f.n);
    done(&r);
}

/* A host wait for an event record that the legacy barrier holds back.  A
 * copy on the legacy stream writes DEV_BUF (GPU 1.02..5 ms); an event is
 * recorded on a blocking stream after it; the host then waits, and a copy
 * on a non-blocking stream reads DEV_BUF.
 *   mode 0: cudaStreamSynchronize(blocking) returns at once (an H200: it
 *           does not wait for the held-back record): a race;
 *   mode 1: cudaStreamSynchronize(blocking) returns after the writer ended
 *           (an H100 waited for the record): possible, and said why;
 *   mode 2: cudaEventSynchronize(event): the event completes after the
 *           writer: ordered (test_programs/legacy_record_handoff*.cu);
 *   mode 3: a timing event and cudaStreamSynchronize(blocking) returning
 *           after the writer: ordered (an H200 waits for such a record). */
static void write_held_record(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 0);   /* blocking */
    tb_create_stream(&b, US(2), 0xB1, 14, 1);   /* non-blocking */
    /* cudaEventDisableTiming (mode 3: a timing event, whose record a host
     * wait on its stream waited for on both GPUs measured) */
    CALL(&b, .cbid = mode == 3 ? CB_cudaEventCreate : CB_cudaEventCreateWithFlags, .t0 = US(3), .t1 = US(4),
         .event = 0xE1, .arg = mode == 3 ? 0 : 2);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 16384);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 16384);
    uint32_t c1 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = 0,
                       .ptr = DEV_BUF, .ptr2 = PINNED_BUF, .bytes = 16384, .arg = 1,
                       .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PINNED);
    tb_memcpy_rec(&b, c1, LEGACY_SID, MS(1.02), MS(5), 1, SS_MEM_PINNED, SS_MEM_DEVICE, 16384);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.03), .t1 = MS(1.04), .stream = 0xA1, .event = 0xE1);
    double back = mode == 0 ? 1.06 : 5.01;   /* when the host wait returned */
    if (mode == 2) CALL(&b, .cbid = CB_cudaEventSynchronize, .t0 = MS(1.05), .t1 = MS(back), .event = 0xE1);
    else CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.05), .t1 = MS(back), .stream = 0xA1);
    uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(back + 0.01), .t1 = MS(back + 0.02), .stream = 0xB1,
                       .ptr = PINNED_BUF, .ptr2 = DEV_BUF, .bytes = 16384, .arg = 2,
                       .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
    tb_memcpy_rec(&b, c2, 14, MS(back + 0.03), MS(back + 0.5), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 16384);
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(7), .t1 = MS(7.1));
    tb_close(&b);
}

static void test_held_record(void)
{
    static const char *names[] = { "held_record_race", "held_record_waited", "held_record_event", "held_record_timing" };
    for (int mode = 0; mode < 4; mode++) {
        write_held_record(names[mode], mode);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, names[mode]);
        result r = analyze(path, &ss_rule_missing_fence);
        if (mode >= 2) {
            CHECK(r.f.n == 0, "%s: the event completes after the writer, and the stream waits for a timing "
                  "event's record: %u findings (%s)", names[mode], r.f.n, r.f.n ? r.f.v[0].message : "");
        } else {
            CHECK(r.f.n == 1, "%s: %u missing-fence findings", names[mode], r.f.n);
            if (r.f.n) {
                const ss_finding *x = &r.f.v[0];
                CHECK(strstr(x->message, "held back behind the first access") != NULL, "%s: says why: %s",
                      names[mode], x->message);
                if (mode == 0)
                    CHECK(x->severity == SS_SEV_ERROR && strstr(x->message, "possible") == NULL &&
                              strstr(x->message, "submitted 3.9") != NULL,
                          "%s: a race in this run (the reader submitted 3.93 ms before the writer ended): %s",
                          names[mode], x->message);
                else
                    CHECK(x->severity == SS_SEV_WARNING && strstr(x->message, "possible data race (possible: ") &&
                              strstr(x->message, "had ended 0.0") != NULL,
                          "%s: possible (the host wait returned after the writer ended): %s", names[mode],
                          x->message);
            }
        }
        done(&r);
    }
}

/* A --default-stream per-thread build: CUPTI reports the per-thread stream as
 * a plain blocking stream; the _ptsz calls know better.  And a stream record
 * written with the thread's current device (0) belongs to its context's (1). */
static void test_stream_identity(void)
{
    tb b;
    tb_open(&b, "stream_identity");
    ss_context_rec *cx = tb_rec(&b, SS_REC_CONTEXT, sizeof *cx, 0);
    cx->context_id = 2; cx->device = 1; cx->null_stream_id = 30;
    tb_stream(&b, 0, 21, SS_STREAM_BLOCKING, 0, 0);            /* CUPTI's view of the per-thread stream */
    ss_stream_rec *sr = tb_rec(&b, SS_REC_STREAM, sizeof *sr, 0);  /* a device-1 stream written as device 0 */
    sr->handle = 0xD1; sr->stream_id = 31; sr->context_id = 2; sr->device = 0; sr->kind = SS_STREAM_NON_BLOCKING;
    uint32_t corr = CALL(&b, .cbid = CB_cudaLaunchKernel_ptsz, .t0 = MS(1), .t1 = MS(1.01), .stream = 0,
                         .flags = SS_API_F_PTSZ);
    tb_kernel(&b, corr, 21, MS(1.02), MS(2));
    /* a second thread's per-thread stream: both are "0x0" to the program */
    tb_stream(&b, 0, 22, SS_STREAM_BLOCKING, 0, 0);
    corr = CALL(&b, .cbid = CB_cudaLaunchKernel_ptsz, .t0 = MS(1.5), .t1 = MS(1.51), .stream = 0,
                .flags = SS_API_F_PTSZ, .tid = TID + 1);
    tb_kernel(&b, corr, 22, MS(2), MS(2.5));
    ss_kernel_rec *k = tb_rec(&b, SS_REC_KERNEL, sizeof *k, 0);
    k->g.start = MS(3); k->g.end = MS(4); k->g.stream_id = 31; k->g.context_id = 2; k->g.device = 1; k->name_id = 1;
    tb_close(&b);
    char path[600], desc[96];
    snprintf(path, sizeof path, "%s/stream_identity.sstrace", out_dir);
    char err[256] = "";
    ss_model *m = ss_model_load(path, err, sizeof err);
    CHECK(m != NULL, "load: %s", err);
    if (!m) return;
    int per_thread = 0, dev1 = 0;
    for (uint32_t i = 0; i < m->nstreams; i++) {
        uint32_t sid = m->streams[i].stream_id;
        if (sid == 21 || sid == 22) {
            per_thread += m->streams[i].kind == SS_STREAM_PER_THREAD;
            ss_stream_describe(m, (int32_t)i, desc, sizeof desc);
            char want[64];
            snprintf(want, sizeof want, "stream 0x0 of thread %u (per-thread default)", sid == 21 ? TID : TID + 1);
            CHECK(strstr(desc, want) != NULL, "per-thread stream %u described as %s", sid, desc);
        }
        if (m->streams[i].stream_id == 31) dev1 = m->streams[i].device == 1;
    }
    CHECK(per_thread == 2, "a per-thread default stream kept CUPTI's 'blocking'");
    CHECK(dev1, "a stream of context 2 (device 1) was put on device 0");
    ss_model_free(m);
}

/* The process's first call that needs a context is a cudaStreamCreate (as
 * CuPy's first call is): the driver makes the context's own streams in it,
 * the legacy stream among them, and CUPTI gives every one of their STREAM
 * records that call's correlation id.  The created stream must stay the
 * created one (non-blocking, its handle), whatever order the records come
 * in; joining by correlation id made it the legacy default stream. */
static void write_context_streams(const char *name, int cupti_first)
{
    tb b;
    tb_open(&b, name);
    uint32_t corr = CALL(&b, .cbid = CB_cudaStreamCreateWithFlags, .t0 = US(1), .t1 = MS(150), .stream = 0xA1,
                         .arg = 1);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == (cupti_first ? 0 : 1)) {   /* CUPTI's STREAM activity records, delivered later */
            tb_stream(&b, 0, 6, SS_STREAM_BLOCKING, 0, corr);
            tb_stream(&b, 0, LEGACY_SID, SS_STREAM_LEGACY_NULL, 0, corr);
            tb_stream(&b, 0, 8, SS_STREAM_NON_BLOCKING, 0, corr);
            tb_stream(&b, 0, 13, SS_STREAM_NON_BLOCKING, 0, corr);
        } else {   /* the shim's: the resource callback (handle, CUPTI id), the call's (handle, kind) */
            tb_stream(&b, 0xA1, 13, SS_STREAM_UNKNOWN, 0, 0);
            tb_stream(&b, 0xA1, 0, SS_STREAM_NON_BLOCKING, 1, corr);
        }
    }
    tb_create_stream(&b, MS(151), 0xA2, 14, 1);
    for (int i = 0; i < 4; i++) {
        tb_launch(&b, MS(160 + 2 * i), 0xA1, 13, MS(160.1 + 2 * i), MS(161 + 2 * i), NULL, 0);
        tb_launch(&b, MS(160.5 + 2 * i), 0xA2, 14, MS(160.6 + 2 * i), MS(161.5 + 2 * i), NULL, 0);
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(161.6 + 2 * i), .t1 = MS(161.7 + 2 * i), .stream = 0xA1);
    }
    tb_close(&b);
}

static void test_context_streams(void)
{
    for (int cupti_first = 0; cupti_first < 2; cupti_first++) {
        char name[64], path[600], err[256] = "";
        snprintf(name, sizeof name, "context_streams_%d", cupti_first);
        write_context_streams(name, cupti_first);
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
        ss_model *m = ss_model_load(path, err, sizeof err);
        CHECK(m != NULL, "load: %s", err);
        if (!m) continue;
        int created_ok = 0, legacy_ok = 0, launches_ok = 1, driver_streams = 0;
        for (uint32_t i = 0; i < m->nstreams; i++) {
            const ss_stream *st = &m->streams[i];
            driver_streams += st->stream_id == 6 || st->stream_id == 8;
            if (st->stream_id == 13)
                created_ok = st->handle == 0xA1 && st->kind == SS_STREAM_NON_BLOCKING;
            if (st->stream_id == LEGACY_SID) legacy_ok = st->kind == SS_STREAM_LEGACY_NULL && st->handle != 0xA1;
        }
        for (uint32_t c = 0; c < m->ncalls; c++) {
            const ss_call *call = &m->calls[c];
            if (call->rec->stream != 0xA1 || call->cls == SS_API_STREAM_CREATE) continue;
            if (call->stream < 0 || m->streams[call->stream].kind != SS_STREAM_NON_BLOCKING ||
                m->streams[call->stream].stream_id != 13)
                launches_ok = 0;
        }
        CHECK(created_ok, "%s: the stream created with the context lost its handle or kind", name);
        CHECK(legacy_ok, "%s: the legacy stream took the created stream's handle (or lost its kind)", name);
        CHECK(launches_ok, "%s: calls on the created stream were put on another stream", name);
        CHECK(driver_streams == 0, "%s: the driver's idle context streams are streams of the model (%d)", name,
              driver_streams);
        ss_model_free(m);
        /* and no rule calls the created stream's syncs device-wide */
        result r = analyze(path, &ss_rule_device_sync_overuse);
        CHECK(r.f.n == 0, "%s: device-sync-overuse reported %u findings", name, r.f.n);
        done(&r);
        r = analyze(path, &ss_rule_legacy_stream_serialization);
        CHECK(r.f.n == 0, "%s: legacy-stream-serialization reported %u findings", name, r.f.n);
        done(&r);
    }
}

/* A graph whose memcpy node writes pageable memory: every launch blocks until
 * the graph finishes.  Judged at the launch, not at the captured copy (which
 * ran nothing). */
static void write_graph_pageable(const char *name, uint8_t dst_kind)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 20);
    CALL(&b, .cbid = CB_cudaStreamBeginCapture, .t0 = US(30), .t1 = US(31), .stream = 0xA1);
    CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = US(32), .t1 = US(33), .stream = 0xA1, .ptr = PAGEABLE_BUF,
         .ptr2 = DEV_BUF, .bytes = 1 << 20, .arg = 2, .mem_dst = dst_kind, .mem_src = SS_MEM_DEVICE);
    CALL(&b, .cbid = CB_cudaStreamEndCapture, .t0 = US(34), .t1 = US(35), .stream = 0xA1);
    for (int i = 0; i < 5; i++) {
        double t = 1 + 2 * i, blocked = dst_kind == SS_MEM_PAGEABLE ? 1.24 : 0.007;
        uint32_t corr = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = MS(t), .t1 = MS(t + blocked), .stream = 0xA1);
        tb_memcpy_rec(&b, corr, 13, MS(t + 0.02), MS(t + 1.2), 2, SS_MEM_DEVICE, dst_kind, 1 << 20);
    }
    tb_close(&b);
}

static void test_graph_pageable(void)
{
    write_graph_pageable("graph_pageable", SS_MEM_PAGEABLE);
    write_graph_pageable("graph_pageable_fixed", SS_MEM_PINNED);
    char path[600];
    snprintf(path, sizeof path, "%s/graph_pageable.sstrace", out_dir);
    result r = analyze(path, &ss_rule_pageable_async_copy);
    CHECK(r.f.n == 1 && total_count(&r) == 5, "graph launches: %u findings, %u occurrences", r.f.n, total_count(&r));
    if (r.f.n) {
        const ss_finding *x = &r.f.v[0];
        CHECK(x->nrefs && x->refs[0].call >= 0 && ss_call_is_graph_launch(r.m, &r.m->calls[x->refs[0].call]),
              "not reported at the graph launch");
        CHECK(NEAR(x->cost_ms, 5 * 1.24, 0.01), "cost %.3f", x->cost_ms);
    }
    done(&r);
    snprintf(path, sizeof path, "%s/graph_pageable_fixed.sstrace", out_dir);
    r = analyze(path, &ss_rule_pageable_async_copy);
    CHECK(r.f.n == 0, "pinned graph destination: %u findings", r.f.n);
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

/* The first lap over a ring of events (NVIDIA's simpleMultiCopy syncs on
 * cycleDone[next] before each cycle): a host sync before an event's first
 * record, where the stream that records it later had no work yet, waits for
 * nothing but had nothing to wait for -- info, "possibly harmless" (E1).
 * Where that stream had work (E3), or the record is on the legacy stream,
 * whose record also covers the blocking streams (E4), it stays a warning; a
 * stream's wait stays an error even on a stream with no work yet (E2: how a
 * wait placed before its producer's record looks too). */
static void write_unrecorded_ring(const char *name)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    tb_create_stream(&b, US(3), 0xD1, 15, 1);
    for (int k = 1; k <= 4; k++)
        CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(4 + 2 * k), .t1 = US(5 + 2 * k), .event = 0xE0 + k);
    CALL(&b, .cbid = CB_cudaEventSynchronize, .t0 = MS(1.00), .t1 = MS(1.001), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.01), .t1 = MS(1.011), .stream = 0xB1, .event = 0xE2);
    tb_launch(&b, MS(1.02), 0xA1, 13, MS(1.05), MS(2), NULL, 0);
    CALL(&b, .cbid = CB_cudaEventSynchronize, .t0 = MS(1.03), .t1 = MS(1.031), .event = 0xE3);
    CALL(&b, .cbid = CB_cudaEventSynchronize, .t0 = MS(1.04), .t1 = MS(1.041), .event = 0xE4);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.10), .t1 = MS(1.101), .stream = 0xA1, .event = 0xE1);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.11), .t1 = MS(1.111), .stream = 0xD1, .event = 0xE2);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.12), .t1 = MS(1.121), .stream = 0xA1, .event = 0xE3);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.13), .t1 = MS(1.131), .stream = 0, .event = 0xE4);
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(1.2), .t1 = MS(2.01));
    tb_close(&b);
}

static void test_unrecorded_ring(void)
{
    write_unrecorded_ring("unrecorded_ring");
    char path[600];
    snprintf(path, sizeof path, "%s/unrecorded_ring.sstrace", out_dir);
    result r = analyze(path, &ss_rule_unrecorded_event_wait);
    uint32_t info = 0, warnings = 0, errors = 0, other = 0;
    for (uint32_t k = 0; k < r.f.n; k++) {
        const ss_finding *f = &r.f.v[k];
        int harmless = strstr(f->message, "possibly harmless") != NULL;
        int sync = strstr(f->message, "cudaEventSynchronize") != NULL;
        if (f->severity == SS_SEV_INFO && harmless && sync) info += f->count;
        else if (f->severity == SS_SEV_WARNING && !harmless && sync) warnings += f->count;
        else if (f->severity == SS_SEV_ERROR && !harmless && !sync) errors += f->count;
        else other++;
    }
    CHECK(info == 1 && warnings == 2 && errors == 1 && other == 0,
          "ring: %u info, %u warning, %u error occurrences, %u other findings (%s)", info, warnings, errors, other,
          r.f.n ? r.f.v[0].message : "");
    done(&r);
}

/* A stream's wait on the first lap over a ring (a triple-buffered pipeline's
 * cudaStreamWaitEvent(copy, slot_free[k]) before slot k was ever used): its
 * event is first recorded later, after the slot's consumer, which the waiting
 * stream's fill is ordered before (another event): no race went through the
 * missing order -- info, "possibly harmless".  The same calls with the wait
 * placed before its producer's record let the consumer race the producer:
 * the error.  Both first records are on a stream with work before them. */
static void write_ring_stream_waits(const char *name)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);   /* compute */
    tb_create_stream(&b, US(2), 0xB1, 14, 1);   /* copy */
    for (int k = 1; k <= 3; k++)
        CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(4 + 2 * k), .t1 = US(5 + 2 * k), .event = 0xF0 + k);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(20), .t1 = US(30), .ptr = DEV_BUF, .bytes = 4096);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(40), .t1 = US(50), .ptr = DEV_BUF + 0x100000, .bytes = 4096);
    uint64_t q[1] = { DEV_BUF }, pbuf[1] = { DEV_BUF + 0x100000 };
    tb_launch(&b, MS(0.5), 0xA1, 13, MS(0.51), MS(0.6), pbuf, 1);   /* earlier work on compute */
    /* first lap: wait for slot Q's "free" event, fill Q, hand it over */
    CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.00), .t1 = MS(1.001), .stream = 0xB1, .event = 0xF1);
    CALL(&b, .cbid = CB_cudaMemsetAsync, .t0 = MS(1.01), .t1 = MS(1.011), .stream = 0xB1, .ptr = DEV_BUF, .bytes = 4096);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.02), .t1 = MS(1.021), .stream = 0xB1, .event = 0xF2);
    CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.03), .t1 = MS(1.031), .stream = 0xA1, .event = 0xF2);
    tb_launch(&b, MS(1.04), 0xA1, 13, MS(1.1), MS(1.5), q, 1);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.05), .t1 = MS(1.051), .stream = 0xA1, .event = 0xF1);
    /* the wait before its producer's record */
    CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(2.00), .t1 = MS(2.001), .stream = 0xB1, .event = 0xF3);
    tb_launch(&b, MS(2.01), 0xA1, 13, MS(2.05), MS(3.0), pbuf, 1);
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(2.02), .t1 = MS(2.021), .stream = 0xA1, .event = 0xF3);
    tb_launch(&b, MS(2.03), 0xB1, 14, MS(2.06), MS(2.5), pbuf, 1);
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(3.1), .t1 = MS(3.2));
    tb_close(&b);
}

static void test_ring_stream_waits(void)
{
    write_ring_stream_waits("ring_stream_waits");
    char path[600];
    snprintf(path, sizeof path, "%s/ring_stream_waits.sstrace", out_dir);
    result r = analyze(path, &ss_rule_unrecorded_event_wait);
    uint32_t info = 0, errors = 0, other = 0;
    for (uint32_t k = 0; k < r.f.n; k++) {
        const ss_finding *f = &r.f.v[k];
        int harmless = strstr(f->message, "possibly harmless") != NULL;
        if (f->severity == SS_SEV_INFO && harmless && strstr(f->message, "event 0xf1")) info += f->count;
        else if (f->severity == SS_SEV_ERROR && !harmless && strstr(f->message, "event 0xf3")) errors += f->count;
        else other++;
    }
    CHECK(info == 1 && errors == 1 && other == 0, "ring stream waits: %u info, %u error, %u other (%s)", info, errors,
          other, r.f.n ? r.f.v[0].message : "");
    done(&r);
}

/* An event opened from another process's handle (cudaIpcOpenEventHandle, as
 * PyTorch does for a CUDA tensor received through torch.multiprocessing) and
 * waited on at once: the sender recorded it, not this process.  The same
 * wait on an event created here and never recorded is the finding. */
static void write_ipc_event_wait(const char *name, int opened)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xB1, 14, 1);
    CALL(&b, .cbid = opened ? CB_cudaIpcOpenEventHandle : CB_cudaEventCreate, .t0 = US(3), .t1 = US(40), .event = 0xE9);
    CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1), .t1 = MS(1.01), .stream = 0xB1, .event = 0xE9);
    tb_launch(&b, MS(1.02), 0xB1, 14, MS(1.05), MS(2), NULL, 0);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.1), .t1 = MS(2.01), .stream = 0xB1);
    tb_close(&b);
}

static void test_ipc_event_wait(void)
{
    for (int opened = 0; opened < 2; opened++) {
        const char *name = opened ? "ipc_event_wait" : "created_event_wait";
        write_ipc_event_wait(name, opened);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
        result r = analyze(path, &ss_rule_unrecorded_event_wait);
        CHECK(r.f.n == (opened ? 0u : 1u), "%s: %u unrecorded-event-wait findings", name, r.f.n);
        done(&r);
    }
}

/* --------------------------------------------------------- incomplete-sync */

/* a copy (call + GPU record), returning the correlation id */
static uint32_t tb_copy(tb *b, uint32_t cbid, uint64_t t, uint64_t stream, uint32_t sid, uint64_t dst, uint64_t src,
                        uint64_t bytes, uint8_t kind, uint8_t dst_kind, uint8_t src_kind, uint64_t start, uint64_t end)
{
    uint32_t corr = CALL(b, .cbid = cbid, .t0 = t, .t1 = t + 5000, .stream = stream, .ptr = dst, .ptr2 = src,
                         .bytes = bytes, .arg = kind, .mem_dst = dst_kind, .mem_src = src_kind,
                         .flags = cbid == CB_cudaMemcpyAsync_ptsz ? SS_API_F_PTSZ : 0);
    tb_memcpy_rec(b, corr, sid, start, end, kind, src_kind, dst_kind, bytes);
    return corr;
}

/* Two workers on blocking streams A and B: copy in, kernel, copy out, into
 * halves of a cudaHostRegister'ed buffer; then cudaEventRecord(stop, 0) +
 * cudaEventSynchronize(stop) and cudaHostUnregister.  per_thread: built with
 * --default-stream per-thread (the _ptsz entry points: stream 0 is the
 * thread's own, empty stream, and the event sync returns at once while the
 * workers run until 8.5 ms).  The legacy twin keeps the very same timeline:
 * only the legacy stream's barrier with the blocking streams (hb) makes it
 * clean, the timeline alone would not. */
static void write_incomplete(const char *name, int per_thread)
{
    tb b;
    tb_open(&b, name);
    uint32_t f = per_thread ? SS_API_F_PTSZ : 0;
    uint32_t cpy = per_thread ? CB_cudaMemcpyAsync_ptsz : CB_cudaMemcpyAsync;
    uint32_t launch = per_thread ? CB_cudaLaunchKernel_ptsz : CB_cudaLaunchKernel;
    tb_create_stream(&b, US(1), 0xA1, 13, 0);
    tb_create_stream(&b, US(2), 0xB1, 14, 0);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE2);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 20);
    CALL(&b, .cbid = CB_cudaHostRegister, .t0 = US(30), .t1 = US(40), .ptr = PAGEABLE_BUF, .bytes = 1 << 20);
    const uint64_t half = 1 << 19;
    for (int k = 0; k < 2; k++) {
        uint64_t s = k ? 0xB1 : 0xA1, dev = DEV_BUF + k * half, host = PAGEABLE_BUF + k * half;
        uint32_t sid = k ? 14 : 13;
        double t = 1 + 0.05 * k, g = k ? 1.5 : 1.01, run = k ? 6 : 4.5;
        tb_copy(&b, cpy, MS(t), s, sid, dev, host, half, 1, SS_MEM_DEVICE, SS_MEM_PINNED, MS(g), MS(g + 0.5));
        uint64_t p[1] = { dev };
        uint32_t corr = CALL(&b, .cbid = launch, .t0 = MS(t + 0.01), .t1 = MS(t + 0.015), .stream = s, .params = p,
                             .nparams = 1, .flags = f);
        tb_kernel(&b, corr, sid, MS(g + 0.5), MS(g + 0.5 + run));
        tb_copy(&b, cpy, MS(t + 0.02), s, sid, host, dev, half, 2, SS_MEM_PINNED, SS_MEM_DEVICE,
                MS(g + 0.5 + run), MS(g + 1 + run));
    }
    /* B's copy out ends at 1.5 + 1 + 6 = 8.5 ms */
    CALL(&b, .cbid = per_thread ? CB_cudaEventRecord_ptsz : CB_cudaEventRecord, .t0 = MS(1.2), .t1 = MS(1.21),
         .stream = 0, .event = 0xE2, .flags = f);
    CALL(&b, .cbid = CB_cudaEventSynchronize, .t0 = MS(1.22), .t1 = MS(1.23), .event = 0xE2);
    /* the host reads the output (not traced), then unregisters it when A's
     * work has finished (6.01 ms) and B's has not: the call waits for the
     * device */
    CALL(&b, .cbid = CB_cudaHostUnregister, .t0 = MS(7), .t1 = MS(8.51), .ptr = PAGEABLE_BUF);
    CALL(&b, .cbid = CB_cudaFree, .t0 = MS(8.6), .t1 = MS(8.7), .ptr = DEV_BUF);
    tb_close(&b);
}

/* Streams A and B, each a kernel and a copy into its own pinned buffer.  The
 * host syncs A (B still runs), then
 *   mode 0: frees A's pinned buffer (an implicit device-wide wait that happens
 *           to cover B too) and syncs B before using B's output: a correct
 *           pipeline;
 *   mode 1: the same, but never waits for B (its copy into pinned memory may
 *           be read early);
 *   mode 2: re-uploads B's input with cudaMemcpy (legacy stream) while B's
 *           copy out reads it: B is a blocking stream, so the legacy copy runs
 *           after it (clean);
 *   mode 3: the same with a non-blocking B: the copy races B (error). */
#define PINNED_BUF2 (PINNED_BUF + 0x100000)
static void write_pipeline(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, mode == 2 ? 0 : 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 20);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(30), .t1 = US(40), .ptr = DEV_BUF + (1 << 20), .bytes = 1 << 20);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(50), .t1 = US(60), .ptr = PINNED_BUF, .bytes = 65536);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(70), .t1 = US(80), .ptr = PINNED_BUF2, .bytes = 65536);
    uint64_t pa[1] = { DEV_BUF }, pb[1] = { DEV_BUF + (1 << 20) };
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(3), pa, 1);
    tb_copy(&b, CB_cudaMemcpyAsync, MS(1.02), 0xA1, 13, PINNED_BUF, DEV_BUF, 65536, 2, SS_MEM_PINNED, SS_MEM_DEVICE,
            MS(3), MS(3.1));
    tb_launch(&b, MS(1.03), 0xB1, 14, MS(1.04), MS(10), pb, 1);
    tb_copy(&b, CB_cudaMemcpyAsync, MS(1.04), 0xB1, 14, PINNED_BUF2, DEV_BUF + (1 << 20), 65536, 2, SS_MEM_PINNED,
            SS_MEM_DEVICE, MS(10), MS(10.1));
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.2), .t1 = MS(3.11), .stream = 0xA1);
    if (mode <= 1) {
        CALL(&b, .cbid = CB_cudaFreeHost, .t0 = MS(3.2), .t1 = MS(10.12), .ptr = PINNED_BUF);
    } else {
        uint32_t corr = CALL(&b, .cbid = CB_cudaMemcpy, .t0 = MS(3.2), .t1 = MS(mode == 2 ? 10.21 : 3.3),
                             .ptr = DEV_BUF + (1 << 20), .ptr2 = PAGEABLE_BUF, .bytes = 65536, .arg = 1,
                             .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PAGEABLE);
        tb_memcpy_rec(&b, corr, LEGACY_SID, MS(mode == 2 ? 10.1 : 3.21), MS(mode == 2 ? 10.2 : 3.29), 1,
                      SS_MEM_PAGEABLE, SS_MEM_DEVICE, 65536);
    }
    if (mode != 1)
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(10.25), .t1 = MS(10.26), .stream = 0xB1);
    else   /* a device-wide sync at the end is no sign the program waited before reading */
        CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(12), .t1 = MS(12.01));
    CALL(&b, .cbid = CB_cudaFreeHost, .t0 = MS(12.2), .t1 = MS(12.3), .ptr = PINNED_BUF2);
    tb_close(&b);
}

/* Two host threads, each with its own non-blocking stream and pinned
 * buffer, as cudaStreamPerThread workers are: copy out, then sync their own
 * stream.  Thread 2's sync begins first (1.10 ms) and returns last (5.01
 * ms); thread 1's begins at 1.20 ms and returns at 3.01 ms, while thread 2's
 * copy still runs.  Calls are replayed in the order they began: thread 2's
 * sync, already applied, waited for its copy.  waited: 0 drops thread 2's
 * sync (it never waits: the warning stays). */
static void write_threads_own_streams(const char *name, int waited)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 20);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(50), .t1 = US(60), .ptr = PINNED_BUF, .bytes = 65536);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(70), .t1 = US(80), .ptr = PINNED_BUF2, .bytes = 65536);
    uint32_t c1 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1), .t1 = MS(1.01), .stream = 0xA1, .ptr = PINNED_BUF,
                       .ptr2 = DEV_BUF, .bytes = 65536, .arg = 2, .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
    tb_memcpy_rec(&b, c1, 13, MS(1.02), MS(3), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 65536);
    uint32_t c2 = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.05), .t1 = MS(1.06), .stream = 0xB1,
                       .ptr = PINNED_BUF2, .ptr2 = DEV_BUF + 65536, .bytes = 65536, .arg = 2, .mem_dst = SS_MEM_PINNED,
                       .mem_src = SS_MEM_DEVICE, .tid = TID + 1);
    tb_memcpy_rec(&b, c2, 14, MS(1.07), MS(5), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 65536);
    if (waited)
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.1), .t1 = MS(5.01), .stream = 0xB1, .tid = TID + 1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.2), .t1 = MS(3.01), .stream = 0xA1);
    tb_close(&b);
}

static void test_incomplete_sync(void)
{
    write_threads_own_streams("incomplete_sync_threads", 1);
    write_threads_own_streams("incomplete_sync_threads_unwaited", 0);
    {
        char tp[600];
        snprintf(tp, sizeof tp, "%s/incomplete_sync_threads.sstrace", out_dir);
        result r = analyze(tp, &ss_rule_incomplete_sync);
        CHECK(r.f.n == 0, "incomplete-sync, each thread waits for its own stream: %u (%s)", r.f.n,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
        snprintf(tp, sizeof tp, "%s/incomplete_sync_threads_unwaited.sstrace", out_dir);
        r = analyze(tp, &ss_rule_incomplete_sync);
        CHECK(r.f.n == 1 && strstr(r.f.v[0].message, "possible early read"),
              "incomplete-sync, thread 2 never waits: %u", r.f.n);
        done(&r);
    }
    write_incomplete("incomplete_sync", 1);
    write_incomplete("incomplete_sync_legacy", 0);
    write_pipeline("incomplete_sync_pipeline", 0);
    write_pipeline("incomplete_sync_unwaited", 1);
    write_pipeline("incomplete_sync_copy_legacy", 2);
    write_pipeline("incomplete_sync_copy_race", 3);
    char path[600];
    snprintf(path, sizeof path, "%s/incomplete_sync.sstrace", out_dir);
    result r = analyze(path, &ss_rule_incomplete_sync);
    CHECK(r.f.n == 1, "incomplete-sync findings: %u", r.f.n);
    if (r.f.n == 1) {
        const ss_finding *x = &r.f.v[0];
        CHECK(x->severity == SS_SEV_ERROR && x->cost_ms == 0, "severity %d cost %.3f", x->severity, x->cost_ms);
        /* the error (B's copy out and kernel still running at the unregister)
         * and a host-read warning (A's copy out finished before it, but only
         * the unregister's implicit wait covered it) fold into one finding at
         * the sync's site, shown as the error */
        CHECK(x->count == 2, "count %u", x->count);
        /* 6 ops on 2 streams, the last ended 8.5 - 1.23 ms after the sync returned */
        CHECK(strstr(x->message, "cudaEventSynchronize") && strstr(x->message, "per-thread default"),
              "message %s", x->message);
        CHECK(strstr(x->message, "6 GPU operations on 2 streams") && strstr(x->message, "7.270 ms"),
              "message %s", x->message);
        CHECK(strstr(x->message, "cudaHostUnregister") && strstr(x->message, "pinned host buffer 0x5555000000") &&
              strstr(x->message, "memcpy DtoH") && strstr(x->message, "1 left-in-flight operation touches"),
              "message %s", x->message);
        CHECK(x->nrefs == 3 && r.m->calls[x->refs[0].call].cls == SS_API_EVENT_SYNC &&
              r.m->calls[x->refs[2].call].cls == SS_API_FREE, "refs");
        /* the exact conflict (a copy) is the one named */
        CHECK(x->refs[1].op >= 0 && r.m->ops[x->refs[1].op].kind == SS_OP_MEMCPY, "left-in-flight op");
        CHECK(strstr(x->fix, "cudaStreamWaitEvent") && strstr(x->fix, "per-thread"), "fix %s", x->fix);
    }
    done(&r);
    snprintf(path, sizeof path, "%s/incomplete_sync_legacy.sstrace", out_dir);
    r = analyze(path, &ss_rule_incomplete_sync);
    CHECK(r.f.n == 0, "incomplete-sync on the legacy stream: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    done(&r);
    snprintf(path, sizeof path, "%s/incomplete_sync_pipeline.sstrace", out_dir);
    r = analyze(path, &ss_rule_incomplete_sync);
    CHECK(r.f.n == 0, "incomplete-sync on a pipeline: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    done(&r);
    snprintf(path, sizeof path, "%s/incomplete_sync_unwaited.sstrace", out_dir);
    r = analyze(path, &ss_rule_incomplete_sync);
    CHECK(r.f.n == 1, "incomplete-sync, copy never waited for: %u", r.f.n);
    if (r.f.n == 1) {
        const ss_finding *x = &r.f.v[0];
        CHECK(x->severity == SS_SEV_WARNING && x->cost_ms == 0, "severity %d", x->severity);
        CHECK(strstr(x->message, "possible early read") && strstr(x->message, "cudaFreeHost") &&
              strstr(x->message, "0x200100000"), "message %s", x->message);
        CHECK(x->nrefs == 3 && r.m->calls[x->refs[0].call].cls == SS_API_STREAM_SYNC, "refs");
    }
    done(&r);
    snprintf(path, sizeof path, "%s/incomplete_sync_copy_legacy.sstrace", out_dir);
    r = analyze(path, &ss_rule_incomplete_sync);
    CHECK(r.f.n == 0, "incomplete-sync, legacy copy after a blocking stream: %u (%s)", r.f.n,
          r.f.n ? r.f.v[0].message : "");
    done(&r);
    snprintf(path, sizeof path, "%s/incomplete_sync_copy_race.sstrace", out_dir);
    r = analyze(path, &ss_rule_incomplete_sync);
    CHECK(r.f.n == 1, "incomplete-sync, copy racing a non-blocking stream: %u", r.f.n);
    if (r.f.n == 1) {
        const ss_finding *x = &r.f.v[0];
        CHECK(x->severity == SS_SEV_ERROR, "severity %d", x->severity);
        /* B's kernel (its argument) and B's copy out both use the buffer */
        CHECK(strstr(x->message, "cudaMemcpy copied 0x7f0000100000") && strstr(x->message, "memcpy DtoH") &&
              strstr(x->message, "2 left-in-flight operations"), "message %s", x->message);
        CHECK(x->nrefs == 3 && r.m->calls[x->refs[2].call].cls == SS_API_COPY_SYNC, "refs");
    }
    done(&r);
}

/* -------------------------------------------------------- event-timing-gap */

static void tb_cuda_event(tb *b, uint32_t corr, uint32_t sid, uint64_t ts)
{
    ss_cuda_event_rec *e = tb_rec(b, SS_REC_CUDA_EVENT, sizeof *e, 0);
    e->g.start = e->g.end = ts; e->g.corr = corr; e->g.stream_id = sid; e->g.context_id = 1; e->g.device = 0;
    e->event_id = corr;
}

/* start/stop recorded on stream 0 around copies + kernels on two blocking
 * worker streams; the copies really run 1.01 -> 4.715 ms.
 *   mode 0: --default-stream per-thread, event timestamps recorded (finding)
 *   mode 1: legacy stream 0 (ordered after the blocking workers: clean)
 *   mode 2: per-thread, but stop's stream waits for each worker's event (clean)
 *   mode 3: as 0 without event timestamps (finding, estimated) */
static void write_timing(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    int pt = mode != 1;
    uint32_t f = pt ? SS_API_F_PTSZ : 0;
    uint32_t rec = pt ? CB_cudaEventRecord_ptsz : CB_cudaEventRecord;
    uint32_t cpy = pt ? CB_cudaMemcpyAsync_ptsz : CB_cudaMemcpyAsync;
    uint32_t launch = pt ? CB_cudaLaunchKernel_ptsz : CB_cudaLaunchKernel;
    if (mode >= 4) {
        /* the elapsed time read from Python: mode 4 by the program
         * (torch.cuda.Event.elapsed_time, then its line), mode 5 by DDP's
         * runtime statistics inside forward() */
        tb_string(&b, 20, "/home/u/train.py");
        tb_string(&b, 21, "main");
        tb_string(&b, 22, "/usr/lib/python3/site-packages/torch/cuda/streams.py");
        tb_string(&b, 23, "elapsed_time");
        tb_string(&b, 24, "/usr/lib/python3/site-packages/torch/nn/parallel/distributed.py");
        tb_string(&b, 25, "_pre_forward");
        tb_string(&b, 26, "/usr/lib/python3/site-packages/torch/nn/modules/module.py");
        tb_string(&b, 27, "_call_impl");
        if (mode == 4) tb_pystack(&b, 1, (const ss_pyframe[]){ { 22, 23, 202, 0 }, { 20, 21, 40, 0 } }, 2);
        else tb_pystack(&b, 1, (const ss_pyframe[]){ { 24, 25, 1566, 0 }, { 26, 27, 1790, 0 }, { 20, 21, 100, 0 } }, 3);
    }
    tb_create_stream(&b, US(1), 0xA1, 13, 0);
    tb_create_stream(&b, US(2), 0xB1, 14, 0);
    for (uint64_t e = 0xE1; e <= 0xE4; e++) CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3 + e), .t1 = US(4 + e), .event = e);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(300), .t1 = US(310), .ptr = DEV_BUF, .bytes = 1 << 20);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(320), .t1 = US(330), .ptr = PINNED_BUF, .bytes = 1 << 20);
    uint32_t c_start = CALL(&b, .cbid = rec, .t0 = MS(1), .t1 = MS(1.005), .stream = 0, .event = 0xE1, .flags = f);
    const uint64_t half = 1 << 19;
    /* A: copy 1.01-2.0, kernel 2.0-2.5; B: copy 2.0-3.0 (behind A's on the copy engine), kernel 3.0-4.715 */
    tb_copy(&b, cpy, MS(1.01), 0xA1, 13, DEV_BUF, PINNED_BUF, half, 1, SS_MEM_DEVICE, SS_MEM_PINNED, MS(1.01), MS(2));
    uint32_t corr = CALL(&b, .cbid = launch, .t0 = MS(1.02), .t1 = MS(1.025), .stream = 0xA1, .flags = f);
    tb_kernel(&b, corr, 13, MS(2), MS(2.5));
    tb_copy(&b, cpy, MS(1.03), 0xB1, 14, DEV_BUF + half, PINNED_BUF + half, half, 1, SS_MEM_DEVICE, SS_MEM_PINNED,
            MS(2), MS(3));
    corr = CALL(&b, .cbid = launch, .t0 = MS(1.04), .t1 = MS(1.045), .stream = 0xB1, .flags = f);
    tb_kernel(&b, corr, 14, MS(3), MS(4.715));
    if (mode == 2) {
        CALL(&b, .cbid = rec, .t0 = MS(1.1), .t1 = MS(1.105), .stream = 0xA1, .event = 0xE3, .flags = f);
        CALL(&b, .cbid = rec, .t0 = MS(1.11), .t1 = MS(1.115), .stream = 0xB1, .event = 0xE4, .flags = f);
        CALL(&b, .cbid = CB_cudaStreamWaitEvent_ptsz, .t0 = MS(1.12), .t1 = MS(1.125), .stream = 0, .event = 0xE3,
             .flags = f);
        CALL(&b, .cbid = CB_cudaStreamWaitEvent_ptsz, .t0 = MS(1.13), .t1 = MS(1.135), .stream = 0, .event = 0xE4,
             .flags = f);
    }
    uint32_t c_stop = CALL(&b, .cbid = rec, .t0 = MS(1.2), .t1 = MS(1.205), .stream = 0, .event = 0xE2, .flags = f);
    int early = mode == 0 || mode >= 3;
    double stop_at = early ? 1.205 : 4.716;
    if (mode != 3) {
        tb_cuda_event(&b, c_start, 0, MS(1.005));
        tb_cuda_event(&b, c_stop, 0, MS(stop_at));
    }
    CALL(&b, .cbid = CB_cudaEventSynchronize, .t0 = MS(1.21), .t1 = MS(early ? 1.215 : 4.72), .event = 0xE2);
    double t = early ? 1.22 : 4.73;
    CALL(&b, .cbid = CB_cudaEventElapsedTime, .t0 = MS(t), .t1 = MS(t + 0.002), .event = 0xE1, .ptr = 0xE2,
         .pystack = mode >= 4 ? 1 : 0);
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(5), .t1 = MS(5.01));
    tb_close(&b);
}

static void test_event_timing_gap(void)
{
    write_timing("event_timing_gap", 0);
    write_timing("event_timing_legacy", 1);
    write_timing("event_timing_waits", 2);
    write_timing("event_timing_gap_estimated", 3);
    char path[600];
    snprintf(path, sizeof path, "%s/event_timing_gap.sstrace", out_dir);
    result r = analyze(path, &ss_rule_event_timing_gap);
    CHECK(r.f.n == 1, "event-timing-gap findings: %u", r.f.n);
    if (r.f.n == 1) {
        const ss_finding *x = &r.f.v[0];
        CHECK(x->severity == SS_SEV_WARNING && x->cost_ms == 0, "severity %d cost %.3f", x->severity, x->cost_ms);
        /* 1.205 - 1.005 ms from the timestamps; 4 ops on 2 streams; B's kernel
         * ended 4.715 - 1.205 ms after stop; the work took 4.715 - 1.01 ms */
        CHECK(strstr(x->message, "measured 0.200 ms (the events' GPU timestamps)"), "message %s", x->message);
        CHECK(strstr(x->message, "4 operations") && strstr(x->message, "2 other streams"), "message %s", x->message);
        CHECK(strstr(x->message, "3.510 ms after stop") && strstr(x->message, "really took 3.705 ms"),
              "message %s", x->message);
        CHECK(strstr(x->message, "per-thread default"), "message %s", x->message);
        CHECK(x->nrefs == 4 && r.m->calls[x->refs[0].call].cls == SS_API_EVENT_ELAPSED &&
              r.m->calls[x->refs[1].call].rec->event == 0xE2 && x->refs[2].op >= 0 &&
              r.m->ops[x->refs[2].op].end == MS(4.715), "refs");
        CHECK(strstr(x->fix, "cudaStreamWaitEvent") && strstr(x->fix, "cudaDeviceSynchronize"), "fix %s", x->fix);
    }
    done(&r);
    snprintf(path, sizeof path, "%s/event_timing_gap_estimated.sstrace", out_dir);
    r = analyze(path, &ss_rule_event_timing_gap);
    CHECK(r.f.n == 1, "event-timing-gap without timestamps: %u", r.f.n);
    if (r.f.n == 1)   /* records at 1.0 and 1.2 ms on an empty stream */
        CHECK(strstr(r.f.v[0].message, "about 0.200 ms (estimated"), "message %s", r.f.v[0].message);
    done(&r);
    /* whose measurement: the program's through torch's wrapper (a warning),
     * or DDP's own inside forward() (info, saying so) */
    write_timing("event_timing_python_user", 4);
    write_timing("event_timing_python_ddp", 5);
    for (int lib = 0; lib <= 1; lib++) {
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, lib ? "event_timing_python_ddp" : "event_timing_python_user");
        r = analyze(path, &ss_rule_event_timing_gap);
        CHECK(r.f.n == 1, "event-timing-gap from Python (%s): %u", lib ? "DDP" : "the program", r.f.n);
        if (r.f.n == 1) {
            const ss_finding *x = &r.f.v[0];
            if (lib)
                CHECK(x->severity == SS_SEV_INFO &&
                      strstr(x->message, "inside torch/nn/parallel/distributed.py (_pre_forward), which your code "
                                         "called") && strstr(x->fix, "Nothing to change"),
                      "DDP's measurement: severity %d, %s / %s", x->severity, x->message, x->fix);
            else
                CHECK(x->severity == SS_SEV_WARNING && !strstr(x->message, "inside") &&
                      strstr(x->fix, "cudaStreamWaitEvent"), "the program's: severity %d, %s", x->severity,
                      x->message);
        }
        done(&r);
    }
    snprintf(path, sizeof path, "%s/event_timing_legacy.sstrace", out_dir);
    r = analyze(path, &ss_rule_event_timing_gap);
    CHECK(r.f.n == 0, "event-timing-gap, legacy stop: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
    done(&r);
    snprintf(path, sizeof path, "%s/event_timing_waits.sstrace", out_dir);
    r = analyze(path, &ss_rule_event_timing_gap);
    CHECK(r.f.n == 0, "event-timing-gap with event waits: %u (%s)", r.f.n, r.f.n ? r.f.v[0].message : "");
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
        if (json) ss_report_json(f, &p, 1); else ss_report_text(f, &p, 1, 0, 0);
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
        if (null) { ss_report_text(null, &p, 1, 0, 1); ss_report_json(null, &p, 1); fclose(null); }
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

/* Graph nodes (format 1.5): a graph captured on A whose node reads buf (a
 * kernel node, or a D2D copy node reading buf), instantiated (the node is
 * cloned), replayed 3 times on A while an eager op on B writes buf.
 *   mode 0: nothing orders B's write before the replays: a race at the replay;
 *   mode 1: event recorded on B after the write, A waits for it: ordered;
 *   mode 2: the copy node instead of the kernel node: a proven race (exact ranges);
 *   mode 3: the replays write buf and B reads it after waiting for an event recorded
 *           on A after the last launch: ordered after every replayed node;
 *   mode 4: as 0, but the trace has no node records (format 1.4): nothing to check;
 *   mode 5: as 0, the kernel node added by cudaGraphAddKernelNode, not captured;
 *   mode 6: as 2, the copy node added by cudaGraphAddMemcpyNode1D. */
#define GNODE_CAPTURED 5
#define GNODE_CLONE 105
static ss_graph_node_rec *tb_gnode(tb *b, uint16_t what, uint64_t id, uint64_t orig, uint64_t t, uint32_t type)
{
    ss_graph_node_rec *r = tb_rec(b, SS_REC_GRAPH_NODE, sizeof *r, 0);
    r->h.flags = what; r->node_id = id; r->orig_node_id = orig; r->time = t; r->tid = TID; r->node_type = type;
    return r;
}

/* An operation a graph launch (correlation id corr) ran: a kernel, or a
 * device-to-device copy of 4096 bytes; with node_id, the CUPTI node it ran as
 * (SS_GPU_F_GRAPH_NODE, the id in the record's tail), else none (format 1.4). */
static ss_gpu_common *tb_graph_op(tb *b, uint16_t type, uint32_t corr, uint32_t sid, uint64_t start, uint64_t end,
                                  uint64_t node_id)
{
    uint32_t fixed = type == SS_REC_MEMCPY ? sizeof(ss_memcpy_rec) : sizeof(ss_kernel_rec);
    ss_gpu_common *g = tb_rec(b, type, fixed, node_id ? 8 : 0);
    g->start = start; g->end = end; g->corr = corr; g->stream_id = sid; g->context_id = 1; g->device = 0;
    if (type == SS_REC_MEMCPY) { ss_memcpy_rec *r = (ss_memcpy_rec *)g; r->copy_kind = SS_COPY_DTOD; r->bytes = 4096; }
    else { ss_kernel_rec *r = (ss_kernel_rec *)g; r->name_id = 1; r->grid[0] = r->block[0] = 1; r->graph_id = 9; }
    if (node_id) {
        g->h.flags = SS_GPU_F_GRAPH_NODE;
        memcpy((char *)g + fixed, &node_id, 8);
    }
    return g;
}

static void write_graph_nodes(const char *name, int mode)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 4096);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(30), .t1 = US(40), .ptr = DEV_BUF + 0x100000, .bytes = 4096);
    int copy_node = mode == 2 || mode == 6, records = mode != 4, added = mode >= 5;
    if (!added) CALL(&b, .cbid = CB_cudaStreamBeginCapture, .t0 = MS(1), .t1 = MS(1.001), .stream = 0xA1);
    uint64_t p[2] = { DEV_BUF, DEV_BUF + 0x100000 };
    if (copy_node)
        CALL(&b, .cbid = added ? CB_cudaGraphAddMemcpyNode1D : CB_cudaMemcpyAsync, .t0 = MS(1.01), .t1 = MS(1.02),
             .stream = added ? 0 : 0xA1, .ptr = DEV_BUF + 0x100000, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 3,
             .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_DEVICE);
    else
        CALL(&b, .cbid = added ? CB_cudaGraphAddKernelNode : CB_cudaLaunchKernel, .t0 = MS(1.01), .t1 = MS(1.02),
             .stream = added ? 0 : 0xA1, .params = p, .nparams = 2);
    if (records) tb_gnode(&b, SS_GNODE_CREATED, GNODE_CAPTURED, 0, MS(1.015), copy_node ? SS_GNODE_MEMCPY : SS_GNODE_KERNEL);
    if (!added) CALL(&b, .cbid = CB_cudaStreamEndCapture, .t0 = MS(1.03), .t1 = MS(1.031), .stream = 0xA1);
    /* cudaGraphInstantiate (not recorded as a call) clones the node; CUPTI
     * also reports the clone as created, just before (seen on the H100) */
    if (records) tb_gnode(&b, SS_GNODE_CREATED, GNODE_CLONE, 0, MS(1.049), copy_node ? SS_GNODE_MEMCPY : SS_GNODE_KERNEL);
    if (records) tb_gnode(&b, SS_GNODE_CLONED, GNODE_CLONE, GNODE_CAPTURED, MS(1.05), 0);
    uint64_t w[1] = { DEV_BUF };
    if (copy_node)
        CALL(&b, .cbid = CB_cudaMemsetAsync, .t0 = MS(1.1), .t1 = MS(1.11), .stream = 0xB1, .ptr = DEV_BUF, .bytes = 4096);
    else if (mode != 3)
        tb_launch(&b, MS(1.1), 0xB1, 14, MS(1.2), MS(6), w, 1);
    if (mode == 1) {
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.12), .t1 = MS(1.13), .stream = 0xB1, .event = 0xE1);
        CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.14), .t1 = MS(1.15), .stream = 0xA1, .event = 0xE1);
    }
    for (int k = 0; k < 3; k++) {
        uint32_t corr = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = MS(1.2 + 0.1 * k), .t1 = MS(1.21 + 0.1 * k),
                             .stream = 0xA1);
        uint64_t t0 = mode == 1 ? MS(6.1 + k) : MS(1.3 + k);
        tb_graph_op(&b, copy_node ? SS_REC_MEMCPY : SS_REC_KERNEL, corr, 30, t0, t0 + 500000, records ? GNODE_CLONE : 0);
    }
    if (mode == 3) {   /* the reader on B waits for an event recorded on A after the launches */
        CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(1.6), .t1 = MS(1.61), .stream = 0xA1, .event = 0xE1);
        CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.62), .t1 = MS(1.63), .stream = 0xB1, .event = 0xE1);
        tb_launch(&b, MS(1.7), 0xB1, 14, MS(4.4), MS(5), w, 1);
    }
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(2), .t1 = MS(9.6), .stream = 0xA1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(9.7), .t1 = MS(9.8), .stream = 0xB1);
    tb_close(&b);
}

/* A graph captured on A: kernel K1 writes buf1, an event record node
 * (cudaEventRecordWithFlags(E, A, cudaEventRecordExternal)), kernel K2
 * writes buf2; launched once; a kernel on B reads after waiting on E.
 *   mode 0: B waits after the launch and reads buf1: ordered (E covers K1);
 *   mode 1: the same wait, B reads buf2: K2 runs after the record node, a race;
 *   mode 2: B waits before the launch and reads buf1: a race;
 *   mode 3: as 0, but a capture-internal record (no External flag), so the
 *           wait after the capture joins nothing: B's kernel runs (not captured)
 *           and races with K1;
 *   mode 4: no reader on B: the host waits for E (cudaEventSynchronize) and
 *           copies buf1 back with cudaMemcpy: E covers K1, nothing left over;
 *   mode 5: the same copying buf2 back: K2 may still be writing it. */
static void write_graph_event_nodes(const char *name, int mode)
{
    /* mode 6: as 0, but no GPU record of the launch's nodes came (the trace
     * cannot tell which graph the launch ran) */
    int no_ops = mode == 6;
    if (no_ops) mode = 0;
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 4096);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(30), .t1 = US(40), .ptr = DEV_BUF + 0x100000, .bytes = 4096);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(50), .t1 = US(60), .ptr = PINNED_BUF, .bytes = 4096);
    uint64_t p1[1] = { DEV_BUF }, p2[1] = { DEV_BUF + 0x100000 };
    CALL(&b, .cbid = CB_cudaStreamBeginCapture, .t0 = MS(1), .t1 = MS(1.001), .stream = 0xA1);
    CALL(&b, .cbid = CB_cudaLaunchKernel, .t0 = MS(1.01), .t1 = MS(1.02), .stream = 0xA1, .params = p1, .nparams = 1);
    tb_gnode(&b, SS_GNODE_CREATED, 5, 0, MS(1.015), SS_GNODE_KERNEL);
    CALL(&b, .cbid = CB_cudaEventRecordWithFlags, .t0 = MS(1.021), .t1 = MS(1.022), .stream = 0xA1, .event = 0xE1,
         .arg = mode == 3 ? 0 : 1);
    CALL(&b, .cbid = CB_cudaLaunchKernel, .t0 = MS(1.023), .t1 = MS(1.024), .stream = 0xA1, .params = p2, .nparams = 1);
    tb_gnode(&b, SS_GNODE_CREATED, 6, 0, MS(1.0235), SS_GNODE_KERNEL);
    CALL(&b, .cbid = CB_cudaStreamEndCapture, .t0 = MS(1.03), .t1 = MS(1.031), .stream = 0xA1);
    tb_gnode(&b, SS_GNODE_CREATED, 105, 0, MS(1.048), SS_GNODE_KERNEL);
    tb_gnode(&b, SS_GNODE_CLONED, 105, 5, MS(1.049), 0);
    tb_gnode(&b, SS_GNODE_CREATED, 106, 0, MS(1.0495), SS_GNODE_KERNEL);
    tb_gnode(&b, SS_GNODE_CLONED, 106, 6, MS(1.05), 0);
    if (mode == 2) CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.1), .t1 = MS(1.11), .stream = 0xB1, .event = 0xE1);
    uint32_t corr = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = MS(1.2), .t1 = MS(1.21), .stream = 0xA1);
    for (int k = 0; k < 2 && !no_ops; k++)
        tb_graph_op(&b, SS_REC_KERNEL, corr, 30, MS(1.3 + k), MS(2.2 + k), 105 + (uint64_t)k);
    if (mode >= 4) {
        CALL(&b, .cbid = CB_cudaEventSynchronize, .t0 = MS(1.22), .t1 = MS(2.21), .event = 0xE1);
        uint32_t c = CALL(&b, .cbid = CB_cudaMemcpy, .t0 = MS(2.25), .t1 = MS(2.3), .ptr = PINNED_BUF,
                          .ptr2 = mode == 4 ? DEV_BUF : DEV_BUF + 0x100000, .bytes = 4096, .arg = 2,
                          .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
        tb_memcpy_rec(&b, c, LEGACY_SID, MS(2.26), MS(2.27), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
    } else {
        if (mode != 2)
            CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.22), .t1 = MS(1.23), .stream = 0xB1, .event = 0xE1);
        tb_launch(&b, MS(1.25), 0xB1, 14, MS(2.3), MS(2.4), mode == 1 ? p2 : p1, 1);
    }
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(3), .t1 = MS(3.3), .stream = 0xA1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(3.4), .t1 = MS(3.5), .stream = 0xB1);
    tb_close(&b);
}

/* A conditional node's body: CUPTI reports its ops with correlation id 0,
 * the executable graph's id (9) and a node id, on a stream of the graph's
 * own (sid 30).  Launches of exec 9 on stream A (arg = 9, as the shim
 * records it; or, `recorded_id` 0, an older trace: a joined node of the
 * launch carries the id):
 *   L1 at 1 ms: body ops at 1.10 and 1.35 ms; a copy on A after L1 starts
 *               at 1.60 ms (L1 is proven done by then);
 *   L2 at 2 ms: a body op at 2.10 ms, then cudaStreamSynchronize(A) returns
 *               at 2.31 ms (L2 is proven done by then);
 *   L3, L4 at 3.00 / 3.01 ms, back to back: body ops at 3.10, 3.30 and
 *               3.55 ms.  In the older trace each launch has a joined node
 *               (L3's at 3.05, L4's at 3.50 ms: L3 is done by 3.50, so the
 *               op at 3.55 is L4's); in the recorded one L3 and L4 have
 *               none, nothing proves L3 done, and all three go to L3.
 * A body op at 0.50 ms, before any launch of exec 9, stays unjoined (a
 * launch the trace lacks ran it).
 * Then a legacy-stream launch L5 at 4 ms (a joined kernel node on the legacy
 * stream, then a body op on sid 31 until 4.6 ms), cudaDeviceSynchronize,
 * and a cudaMemcpy on the legacy stream that reads what the body wrote: the
 * sync waited for the launch the copy needed (no device-sync-overuse). */
static void write_graph_bodies(const char *name, int recorded_id)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 4096);
    CALL(&b, .cbid = CB_cudaMallocHost, .t0 = US(30), .t1 = US(40), .ptr = PINNED_BUF, .bytes = 4096);
    const double launch_at[4] = { 1, 2, 3, 3.01 };
    uint32_t corr[5];
    for (int k = 0; k < 4; k++) {
        corr[k] = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = MS(launch_at[k]), .t1 = MS(launch_at[k] + 0.005),
                       .stream = 0xA1, .func = 0x9000, .arg = recorded_id ? 9 : 0);
        /* older traces: the launch's own (joined) node tells the graph */
        double node_at = k == 3 ? 3.5 : launch_at[k] + 0.05;
        if (!recorded_id || k < 2)
            tb_graph_op(&b, SS_REC_KERNEL, corr[k], 13, MS(node_at), MS(node_at + 0.01), (9ull << 32) | 1);
        if (k == 0)
            tb_copy(&b, CB_cudaMemcpyAsync, MS(1.01), 0xA1, 13, PINNED_BUF, DEV_BUF, 4096, 2, SS_MEM_PINNED,
                    SS_MEM_DEVICE, MS(1.6), MS(1.65));
        if (k == 1)
            CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(2.2), .t1 = MS(2.31), .stream = 0xA1);
    }
    const double body[7][2] = { { 1.10, 1.30 }, { 1.35, 1.50 }, { 2.10, 2.30 }, { 3.10, 3.25 }, { 3.30, 3.45 },
                                { 3.55, 3.70 }, { 0.50, 0.60 } };
    for (int k = 0; k < 7; k++)
        tb_graph_op(&b, SS_REC_KERNEL, 0, 30, MS(body[k][0]), MS(body[k][1]), (9ull << 32) | 2);
    corr[4] = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = MS(4), .t1 = MS(4.005), .stream = 0, .func = 0xA000,
                   .arg = recorded_id ? 12 : 0);
    ((ss_kernel_rec *)tb_graph_op(&b, SS_REC_KERNEL, corr[4], LEGACY_SID, MS(4.01), MS(4.02),
                                  (12ull << 32) | 1))->graph_id = 12;
    ((ss_kernel_rec *)tb_graph_op(&b, SS_REC_KERNEL, 0, 31, MS(4.03), MS(4.6), (12ull << 32) | 2))->graph_id = 12;
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(4.01), .t1 = MS(4.61));
    uint32_t c = CALL(&b, .cbid = CB_cudaMemcpy, .t0 = MS(4.62), .t1 = MS(4.64), .ptr = PINNED_BUF, .ptr2 = DEV_BUF,
                      .bytes = 4096, .arg = 2, .mem_dst = SS_MEM_PINNED, .mem_src = SS_MEM_DEVICE);
    tb_memcpy_rec(&b, c, LEGACY_SID, MS(4.625), MS(4.63), 2, SS_MEM_DEVICE, SS_MEM_PINNED, 4096);
    tb_close(&b);
}

static void test_graph_bodies(void)
{
    for (int recorded = 0; recorded <= 1; recorded++) {
        const char *name = recorded ? "graph_bodies" : "graph_bodies_old_trace";
        write_graph_bodies(name, recorded);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
        result r = analyze(path, &ss_rule_device_sync_overuse);
        CHECK(r.f.n == 0, "%s: %u device-sync-overuse findings (%s)", name, r.f.n, r.f.n ? r.f.v[0].message : "");
        /* the launches, in call order, and where each body op went */
        int32_t launch[5];
        uint32_t nl = 0;
        for (uint32_t i = 0; i < r.m->ncalls && nl < 5; i++)
            if (ss_call_is_graph_launch(r.m, &r.m->calls[i])) launch[nl++] = (int32_t)i;
        CHECK(nl == 5, "%s: %u graph launches", name, nl);
        static const double body_start[8] = { 1.10, 1.35, 2.10, 3.10, 3.30, 3.55, 4.03, 0.50 };
        const int want[8] = { 0, 0, 1, 2, 2, recorded ? 2 : 3, 4, -1 };   /* -1: begun before any launch */
        for (int k = 0; k < 8 && nl == 5; k++) {
            int32_t got = -2;
            for (uint32_t i = 0; i < r.m->nops; i++)
                if (r.m->ops[i].start == MS(body_start[k]) && r.m->ops[i].rec->corr == 0) got = r.m->ops[i].call;
            int32_t w = want[k] >= 0 ? launch[want[k]] : -1;
            CHECK(got == w, "%s: the body op at %.2f ms joined call %d, want %d", name, body_start[k], got, w);
        }
        /* a launch's ops chained in start order, the body among them */
        if (nl == 5) {
            uint32_t n = 0;
            uint64_t prev = 0;
            int ordered = 1;
            for (int32_t o = r.m->calls[launch[0]].first_op; o >= 0; o = r.m->ops[o].next_of_call, n++) {
                ordered &= r.m->ops[o].start >= prev;
                prev = r.m->ops[o].start;
            }
            CHECK(n == 3 && ordered, "%s: L1 has %u ops (want its node and 2 body ops), in order %d", name, n, ordered);
        }
        done(&r);
    }
}

/* Graphs built node by node with event nodes (graph_event_node_explicit.cu):
 * graph 1 = a producer kernel node writing buf, then an event record node
 * on `ready` (1 dependency; racy: none, so it may run first), instantiated
 * as exec 2; graph 3 = a wait node on `consumed`, then a kernel node
 * overwriting buf, exec 4.  Stream A launches exec 2; stream B waits for
 * `ready`, runs a consumer kernel reading buf, records `consumed`; stream A
 * launches exec 4.  `recorded`: the launches carry their exec's id (else
 * their ops' graph ids tell it).  `set_event`: the record node is first
 * made on another event, then given `ready` by
 * cudaGraphEventRecordNodeSetEvent (which says nothing of dependencies: the
 * node still follows the producer). */
/* wait_first: stream B's wait on `ready` comes before the first launch of
 * the graph whose record node records it (the event was never recorded:
 * the wait orders nothing, although the node existed) */
static void write_explicit_event_nodes(const char *name, int racy, int recorded, int set_event, int wait_first)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(5), .t1 = US(6), .event = 0xE2);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 4096);
    uint64_t p[1] = { DEV_BUF };
    const uint64_t K0 = 1ull << 32, R0 = (1ull << 32) | 1, W = 3ull << 32, K1 = (3ull << 32) | 1;
    struct { uint64_t t; uint64_t id, orig; uint32_t graph; uint16_t what; } g[8] = {
        { MS(1.001), K0, 0, 1, SS_GNODE_CREATED }, { MS(1.011), R0, 0, 1, SS_GNODE_CREATED },
        { MS(1.05), 2ull << 32, K0, 2, SS_GNODE_CLONED }, { MS(1.051), (2ull << 32) | 1, R0, 2, SS_GNODE_CLONED },
        { MS(1.101), W, 0, 3, SS_GNODE_CREATED }, { MS(1.111), K1, 0, 3, SS_GNODE_CREATED },
        { MS(1.15), 4ull << 32, W, 4, SS_GNODE_CLONED }, { MS(1.151), (4ull << 32) | 1, K1, 4, SS_GNODE_CLONED },
    };
    CALL(&b, .cbid = CB_cudaGraphAddKernelNode, .t0 = MS(1.0), .t1 = MS(1.005), .params = p, .nparams = 1,
         .func = 0xF00);
    CALL(&b, .cbid = CB_cudaGraphAddEventRecordNode, .t0 = MS(1.01), .t1 = MS(1.015),
         .event = set_event ? 0xE2 : 0xE1, .arg = racy ? 0 : 1, .arg2 = SS_GRAPH_NODE_EVENT_RECORD);
    if (set_event) {
        CALL(&b, .cbid = CB_cudaGraphEventRecordNodeSetEvent, .t0 = MS(1.02), .t1 = MS(1.025), .event = 0xE1,
             .arg2 = SS_GRAPH_NODE_EVENT_RECORD);
        tb_gnode(&b, SS_GNODE_UPDATED, (1ull << 32) | 1, 0, MS(1.021), 0)->graph_id = 1;
    }
    CALL(&b, .cbid = CB_cudaGraphAddEventWaitNode, .t0 = MS(1.1), .t1 = MS(1.105), .event = 0xE2, .arg = 0,
         .arg2 = SS_GRAPH_NODE_EVENT_WAIT);
    CALL(&b, .cbid = CB_cudaGraphAddKernelNode, .t0 = MS(1.11), .t1 = MS(1.115), .params = p, .nparams = 1,
         .func = 0xF01);
    for (int k = 0; k < 8; k++) {
        ss_graph_node_rec *r = tb_gnode(&b, g[k].what, g[k].id, g[k].orig, g[k].t, 0);
        r->graph_id = g[k].graph;
        r->orig_graph_id = g[k].what == SS_GNODE_CLONED ? g[k].graph - 1 : 0;
    }
    if (wait_first) CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.9), .t1 = MS(1.901), .stream = 0xB1, .event = 0xE1);
    uint32_t l1 = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = MS(2.0), .t1 = MS(2.005), .stream = 0xA1, .func = 0x2000,
                       .arg = recorded ? 2 : 0);
    ((ss_kernel_rec *)tb_graph_op(&b, SS_REC_KERNEL, l1, 13, MS(2.05), MS(3.0), 2ull << 32))->graph_id = 2;
    if (!wait_first)
        CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(2.01), .t1 = MS(2.011), .stream = 0xB1, .event = 0xE1);
    uint32_t c = CALL(&b, .cbid = CB_cudaLaunchKernel, .t0 = MS(2.02), .t1 = MS(2.025), .stream = 0xB1, .params = p,
                      .nparams = 1);
    tb_kernel(&b, c, 14, racy ? MS(2.1) : MS(3.0), racy ? MS(2.2) : MS(3.1));
    CALL(&b, .cbid = CB_cudaEventRecord, .t0 = MS(2.03), .t1 = MS(2.031), .stream = 0xB1, .event = 0xE2);
    uint32_t l2 = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = MS(2.04), .t1 = MS(2.045), .stream = 0xA1, .func = 0x4000,
                       .arg = recorded ? 4 : 0);
    ((ss_kernel_rec *)tb_graph_op(&b, SS_REC_KERNEL, l2, 13, MS(3.1), MS(3.2), (4ull << 32) | 1))->graph_id = 4;
    CALL(&b, .cbid = CB_cudaDeviceSynchronize, .t0 = MS(2.05), .t1 = MS(3.21));
    tb_close(&b);
}

static void test_explicit_event_nodes(void)
{
    static const char *const names[5] = { "explicit_event_nodes", "explicit_event_nodes_old_trace",
                                          "explicit_event_nodes_racy", "explicit_event_nodes_set_event",
                                          "explicit_event_nodes_wait_first" };
    for (int mode = 0; mode < 5; mode++) {
        int racy = mode == 2 || mode == 4, recorded = mode != 1;
        const char *name = names[mode];
        write_explicit_event_nodes(name, mode == 2, recorded, mode == 3, mode == 4);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
        result r = analyze(path, &ss_rule_unrecorded_event_wait);
        /* a record node records when its graph runs: a wait before the
         * graph's first launch waits on an event never recorded */
        uint32_t want = mode == 4 ? 1 : 0;
        CHECK(r.f.n == want, "%s: %u unrecorded-event-wait findings, want %u (%s)", name, r.f.n, want,
              r.f.n ? r.f.v[0].message : "");
        if (r.f.n && want) CHECK(r.f.v[0].severity == SS_SEV_ERROR, "%s: severity %d", name, r.f.v[0].severity);
        done(&r);
        r = analyze(path, &ss_rule_missing_fence);
        /* ordered: the consumer after the record node, the overwrite after
         * the wait node; racy: the record node without a dependency orders
         * nothing of the producer */
        CHECK(racy ? r.f.n >= 1 : r.f.n == 0, "%s: %u missing-fence findings (%s)", name, r.f.n,
              r.f.n ? r.f.v[0].message : "");
        uint32_t nle = 0;
        for (uint32_t i = 0; i < r.m->ncalls; i++)
            if (ss_call_is_graph_launch(r.m, &r.m->calls[i])) {
                uint32_t n;
                ss_graph_launch_events(r.m, (int32_t)i, &n);
                nle += n;
            }
        CHECK(nle == 2, "%s: %u event nodes over the launches, want 2", name, nle);
        done(&r);
    }
}

static void test_graph_event_nodes(void)
{
    static const struct { const char *name; uint32_t findings; } cases[] = {
        { "graph_event_node_ordered", 0 }, { "graph_event_node_after_record", 1 },
        { "graph_event_node_wait_first", 1 }, { "graph_event_node_internal", 1 },
    };
    for (int mode = 0; mode < 4; mode++) {
        write_graph_event_nodes(cases[mode].name, mode);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[mode].name);
        result r = analyze(path, &ss_rule_missing_fence);
        CHECK(r.f.n == cases[mode].findings, "%s: %u missing-fence findings, want %u (%s)", cases[mode].name, r.f.n,
              cases[mode].findings, r.f.n ? r.f.v[0].message : "");
        /* B's kernel ran: it is never taken as captured */
        uint32_t captured = 0;
        for (uint32_t i = 0; i < r.m->ncalls; i++)
            if (r.m->calls[i].stream >= 0 && r.m->streams[r.m->calls[i].stream].device >= 0 &&
                r.m->calls[i].rec->stream == 0xB1 && r.m->calls[i].captured)
                captured++;
        CHECK(captured == 0, "%s: %u calls on B taken as captured", cases[mode].name, captured);
        done(&r);
        /* the event is recorded when a launch reaches the record node: a
         * wait before the first launch, or on a capture-internal record,
         * waits on an event never recorded */
        r = analyze(path, &ss_rule_unrecorded_event_wait);
        uint32_t want = mode == 2 || mode == 3 ? 1 : 0;
        CHECK(r.f.n == want, "%s: %u unrecorded-event-wait findings, want %u (%s)", cases[mode].name, r.f.n, want,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
    }
    /* a launch of a graph the trace cannot name may be the one that records
     * E: a wait after it is not called unrecorded */
    {
        write_graph_event_nodes("graph_event_node_launch_unknown", 6);
        char path[600];
        snprintf(path, sizeof path, "%s/graph_event_node_launch_unknown.sstrace", out_dir);
        result r = analyze(path, &ss_rule_unrecorded_event_wait);
        CHECK(r.f.n == 0, "graph_event_node_launch_unknown: %u unrecorded-event-wait findings (%s)", r.f.n,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
    }
    /* what a host wait on E covers: K1, not K2 (the copy back reads buf1 /
     * buf2 on the legacy stream, which orders nothing with stream A) */
    for (int mode = 4; mode <= 5; mode++) {
        const char *name = mode == 4 ? "graph_event_node_sync_copy" : "graph_event_node_sync_copy_after";
        write_graph_event_nodes(name, mode);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
        result r = analyze(path, &ss_rule_missing_fence);
        CHECK(r.f.n == (mode == 5 ? 1u : 0u), "%s: %u missing-fence findings (%s)", name, r.f.n,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
        r = analyze(path, &ss_rule_incomplete_sync);
        CHECK(mode == 5 || r.f.n == 0, "%s: %u incomplete-sync findings (%s)", name, r.f.n,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
    }
}

static void test_graph_nodes(void)
{
    static const struct { const char *name; uint32_t findings; ss_severity sev; } cases[] = {
        { "graph_node_race", 1, SS_SEV_WARNING }, { "graph_node_race_fixed", 0, 0 },
        { "graph_copy_node_race", 1, SS_SEV_ERROR }, { "graph_node_event_after_launch", 0, 0 },
        { "graph_node_race_v14", 0, 0 }, { "graph_added_node_race", 1, SS_SEV_WARNING },
        { "graph_added_copy_node_race", 1, SS_SEV_ERROR },
    };
    for (int i = 0; i < 7; i++) {
        write_graph_nodes(cases[i].name, i);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[i].name);
        result r = analyze(path, &ss_rule_missing_fence);
        CHECK(r.f.n == cases[i].findings, "%s: %u missing-fence findings (%s)", cases[i].name, r.f.n,
              r.f.n ? r.f.v[0].message : "");
        /* every replayed op knows its node's call: the captured launch or
         * copy, or the cudaGraphAdd*Node call */
        uint32_t linked = 0;
        for (uint32_t o = 0; o < r.m->nops; o++) {
            int32_t nc = r.m->ops[o].node_call;
            if (nc >= 0 && (i >= 5 ? r.m->calls[nc].cls == SS_API_GRAPH_NODE : r.m->calls[nc].captured) &&
                r.m->calls[nc].rec->t_enter == MS(1.01))
                linked++;
        }
        CHECK(linked == (i == 4 ? 0u : 3u), "%s: %u replayed ops linked to the node's call", cases[i].name, linked);
        if (r.f.n && cases[i].findings) {
            const ss_finding *x = &r.f.v[0];
            CHECK(x->severity == cases[i].sev, "%s: severity %d", cases[i].name, x->severity);
            CHECK(strstr(x->message, "a node of the CUDA graph replayed by cudaGraphLaunch") != NULL,
                  "%s: message %s", cases[i].name, x->message);
            CHECK(x->refs[0].call >= 0 && ss_call_is_graph_launch(r.m, &r.m->calls[x->refs[0].call]) &&
                  x->refs[0].op >= 0 && r.m->ops[x->refs[0].op].call == x->refs[0].call,
                  "%s: reported at the replay, naming its node's op", cases[i].name);
            CHECK(x->alloc >= 0 && r.m->allocs[x->alloc].ptr == DEV_BUF, "%s: buffer", cases[i].name);
            int capture_ref = 0;
            for (uint32_t k = 0; k < x->nrefs; k++)
                capture_ref |= x->refs[k].call >= 0 && (r.m->calls[x->refs[k].call].captured ||
                                                        r.m->calls[x->refs[k].call].cls == SS_API_GRAPH_NODE);
            CHECK(capture_ref, "%s: the node's call (captured or cudaGraphAdd*Node) is referenced", cases[i].name);
        }
        done(&r);
    }
}

/* One executable graph launched on two streams: CUDA orders each launch
 * after the exec's previous one (cudaGraphLaunch), on any stream.  A graph
 * captured on A with one D2D copy node writing DEV_BUF + 1 MiB (exact
 * ranges), launched on A, then on B with the same exec (same_exec) or
 * another one, nothing between the streams.
 *   host_sync 0: the launch on B is submitted while A's replay runs (its
 *     copy starts when A's ends with one exec, at once with two);
 *   host_sync 1: the host waits for A (cudaStreamSynchronize) before
 *     launching on B: ordered either way, and a what-if removing that wait
 *     can move B's replay only as early as the exec lets it. */
#define EXEC_X 0x6E1
#define EXEC_Y 0x6E2
static void write_graph_exec_streams(const char *name, int same_exec, int host_sync)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 21);
    CALL(&b, .cbid = CB_cudaStreamBeginCapture, .t0 = MS(1), .t1 = MS(1.001), .stream = 0xA1);
    CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(1.01), .t1 = MS(1.02), .stream = 0xA1, .ptr = DEV_BUF + (1 << 20),
         .ptr2 = DEV_BUF, .bytes = 4096, .arg = 3, .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_DEVICE);
    tb_gnode(&b, SS_GNODE_CREATED, GNODE_CAPTURED, 0, MS(1.015), SS_GNODE_MEMCPY);
    CALL(&b, .cbid = CB_cudaStreamEndCapture, .t0 = MS(1.03), .t1 = MS(1.031), .stream = 0xA1);
    tb_gnode(&b, SS_GNODE_CREATED, GNODE_CLONE, 0, MS(1.049), SS_GNODE_MEMCPY);
    tb_gnode(&b, SS_GNODE_CLONED, GNODE_CLONE, GNODE_CAPTURED, MS(1.05), 0);
    if (!same_exec) {   /* a second instantiation: another clone of the node */
        tb_gnode(&b, SS_GNODE_CREATED, GNODE_CLONE + 1, 0, MS(1.059), SS_GNODE_MEMCPY);
        tb_gnode(&b, SS_GNODE_CLONED, GNODE_CLONE + 1, GNODE_CAPTURED, MS(1.06), 0);
    }
    uint64_t at[2] = { MS(1.2), host_sync ? MS(3.4) : MS(1.25) };
    uint64_t start[2] = { MS(1.3), host_sync || same_exec ? MS(3.5) : MS(1.35) };
    for (int k = 0; k < 2; k++) {
        uint32_t corr = CALL(&b, .cbid = CB_cudaGraphLaunch, .t0 = at[k], .t1 = at[k] + 10000,
                             .stream = k ? 0xB1 : 0xA1, .func = k && !same_exec ? EXEC_Y : EXEC_X);
        tb_graph_op(&b, SS_REC_MEMCPY, corr, k ? 14 : 13, start[k], start[k] + (k ? 500000u : 2000000u),
                    k && !same_exec ? GNODE_CLONE + 1 : GNODE_CLONE);
        if (!k && host_sync) CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.25), .t1 = MS(3.35), .stream = 0xA1);
    }
    /* right after the launches: the host waits for A, then for B */
    uint64_t b_end = start[1] + 500000u;
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(3.42), .t1 = MS(3.43), .stream = 0xA1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(3.44), .t1 = b_end > MS(3.44) ? b_end + 10000 : MS(3.45),
         .stream = 0xB1);
    tb_close(&b);
}

static void test_graph_exec_streams(void)
{
    static const struct { const char *name; int same, sync; uint32_t findings; } cases[] = {
        { "graph_exec_one", 1, 0, 0 }, { "graph_exec_two", 0, 0, 1 },
        { "graph_exec_one_sync", 1, 1, 0 }, { "graph_exec_two_sync", 0, 1, 0 },
    };
    for (int i = 0; i < 4; i++) {
        write_graph_exec_streams(cases[i].name, cases[i].same, cases[i].sync);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[i].name);
        result r = analyze(path, &ss_rule_missing_fence);
        CHECK(r.f.n == cases[i].findings, "%s: %u missing-fence findings (%s)", cases[i].name, r.f.n,
              r.f.n ? r.f.v[0].message : "");
        if (r.f.n) CHECK(r.f.v[0].severity == SS_SEV_ERROR, "%s: a proven race", cases[i].name);
        /* the replay: B's copy is ready when A's ends with one exec, at its launch with two */
        const ss_replay *rp = ss_replay_of(r.m);
        int32_t oa = -1, ob = -1;
        for (uint32_t o = 0; o < r.m->nops; o++)
            if (r.m->ops[o].call >= 0) *(r.m->calls[r.m->ops[o].call].rec->stream == 0xB1 ? &ob : &oa) = (int32_t)o;
        CHECK(oa >= 0 && ob >= 0, "%s: both replays joined", cases[i].name);
        if (oa >= 0 && ob >= 0) {
            uint64_t ready = ss_replay_ready(rp, ob), a_end = r.m->ops[oa].end;
            if (cases[i].same) CHECK(ready >= a_end, "%s: B ready at %llu, A's replay ends at %llu", cases[i].name,
                                     (unsigned long long)ready, (unsigned long long)a_end);
            else if (!cases[i].sync) CHECK(ready < a_end, "%s: B ready at %llu before A's end", cases[i].name,
                                           (unsigned long long)ready);
        }
        if (cases[i].sync) {
            /* without the host's first wait for A, B's launch comes 2 ms
             * sooner; its replay follows only with two execs (then the run
             * still ends when A's replay does, 0.7 ms sooner); with one, it
             * starts when A's ends, as measured (0.1 ms sooner, its launch
             * latency) */
            int32_t sync_a = -1;
            for (uint32_t c = 0; c < r.m->ncalls && sync_a < 0; c++)
                if (r.m->calls[c].rec->cbid == CB_cudaStreamSynchronize) sync_a = (int32_t)c;
            ss_relax rx = { .kind = SS_RELAX_HOST_WAIT, .call = sync_a };
            double saving = ss_ms(ss_replay_saving(rp, &rx, 1));
            if (cases[i].same) CHECK(saving < 0.3, "%s: saving %.3f ms (the exec orders B after A)", cases[i].name, saving);
            else CHECK(saving > 0.5, "%s: saving %.3f ms", cases[i].name, saving);
        }
        done(&r);
    }
}

/* An event recorded by a launch attribute (cudaLaunchKernelEx): a producer
 * kernel on A records event E through it, B waits on E, a consumer kernel
 * on B reads the buffer the producer wrote.
 *   how 1: a programmatic event (fires when the producer's blocks trigger or
 *          end): the consumer is ordered after the producer;
 *   how 2: a launch-completion event (fires when its blocks have started):
 *          the consumer is ordered after the work before the producer, not
 *          the producer: a race;
 *   how 0: the attribute not recorded (a trace from before): the wait looks
 *          unrecorded, and the pair unordered. */
static void write_launch_attr_event(const char *name, int how)
{
    tb b;
    tb_open(&b, name);
    tb_create_stream(&b, US(1), 0xA1, 13, 1);
    tb_create_stream(&b, US(2), 0xB1, 14, 1);
    CALL(&b, .cbid = CB_cudaEventCreate, .t0 = US(3), .t1 = US(4), .event = 0xE1);
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 4096);
    uint64_t p[1] = { DEV_BUF };
    uint32_t flags = how == 1 ? SS_API_F_EVENT_AT_END : how == 2 ? SS_API_F_EVENT_AT_START : 0;
    uint32_t corr = CALL(&b, .cbid = CB_cudaLaunchKernel, .t0 = MS(1), .t1 = MS(1.005), .stream = 0xA1,
                         .event = how ? 0xE1 : 0, .flags = flags, .params = p, .nparams = 1);
    tb_kernel(&b, corr, 13, MS(1.1), MS(3));
    CALL(&b, .cbid = CB_cudaStreamWaitEvent, .t0 = MS(1.01), .t1 = MS(1.02), .stream = 0xB1, .event = 0xE1);
    /* the consumer starts when the producer's blocks have started (how 2) or when they have triggered */
    tb_launch(&b, MS(1.03), 0xB1, 14, how == 2 ? MS(1.2) : MS(2.9), how == 2 ? MS(1.5) : MS(3.2), p, 1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(1.1), .t1 = MS(3.25), .stream = 0xB1);
    CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(3.3), .t1 = MS(3.31), .stream = 0xA1);
    tb_close(&b);
}

static void test_launch_attr_event(void)
{
    static const struct { const char *name; int how; uint32_t fences, unrecorded; } cases[] = {
        { "launch_programmatic_event", 1, 0, 0 },
        { "launch_completion_event", 2, 1, 0 },
        { "launch_event_not_recorded", 0, 1, 1 },
    };
    for (int i = 0; i < 3; i++) {
        write_launch_attr_event(cases[i].name, cases[i].how);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, cases[i].name);
        result r = analyze(path, &ss_rule_missing_fence);
        CHECK(r.f.n == cases[i].fences, "%s: %u missing-fence findings (%s)", cases[i].name, r.f.n,
              r.f.n ? r.f.v[0].message : "");
        done(&r);
        r = analyze(path, &ss_rule_unrecorded_event_wait);
        CHECK(r.f.n == cases[i].unrecorded, "%s: %u unrecorded-event-wait findings", cases[i].name, r.f.n);
        done(&r);
        /* the replay: the consumer is ready when the event fires, as the analyzer places it */
        r = analyze(path, &ss_rule_unrecorded_event_wait);
        const ss_replay *rp = ss_replay_of(r.m);
        int32_t prod = -1, cons = -1;
        for (uint32_t o = 0; o < r.m->nops; o++)
            *(r.m->ops[o].stream >= 0 && r.m->calls[r.m->ops[o].call].rec->stream == 0xB1 ? &cons : &prod) = (int32_t)o;
        if (prod >= 0 && cons >= 0) {
            uint64_t ready = ss_replay_ready(rp, cons);
            if (cases[i].how == 1) CHECK(ready >= r.m->ops[prod].end, "%s: consumer ready %llu", cases[i].name,
                                         (unsigned long long)ready);
            else CHECK(ready < r.m->ops[prod].end, "%s: consumer ready %llu before the producer ends", cases[i].name,
                       (unsigned long long)ready);
        }
        done(&r);
    }
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

/* A one-time cost inside the steady state (ss_occurrence.once): a loop of
 * 12 steps, each an NVTX "step" range with a launch and a sync; the driver
 * JIT-compiles PTX at a launch (first-launch-stall) either once, at step 6
 * (a kernel first used there: the first evaluation's new shapes, the first
 * step down a new code path), or at every step (a recompilation each step).
 * Once is paid once: setup, though it fell among the steady iterations (the
 * recorded sample_thrust_streams_fixed has two such lazy loads among its 20
 * steady iterations, steady findings costed per iteration before).  Every
 * step is the steady state's own cost. */
static void write_jit_steps(const char *name, int every_step)
{
    tb b;
    tb_open(&b, name);
    ss_thread_rec *th = tb_rec(&b, SS_REC_THREAD, sizeof *th, 4);
    th->tid = TID; th->len = 4; th->pthread_self = 0;
    memcpy((char *)th + sizeof *th, "main", 4);
    tb_string(&b, 21, "step");
    double t = 1;
    for (int i = 0; i < 12; i++) {
        ss_nvtx_rec *n = tb_rec(&b, SS_REC_NVTX, sizeof *n, 0);
        n->start = MS(t); n->end = MS(t + 9.9); n->tid = TID; n->name_id = 21;
        uint32_t corr = tb_launch(&b, MS(t + 0.1), 0, LEGACY_SID, MS(t + 0.2), MS(t + 6), NULL, 0);
        if (every_step || i == 5) {
            ss_jit_rec *j = tb_rec(&b, SS_REC_JIT, sizeof *j, 0);
            j->g.start = MS(t + 0.1) + 1000; j->g.end = MS(t + 0.1) + 4000; j->g.corr = corr; j->g.context_id = 1;
            j->entry_type = SS_JIT_ENTRY_PTX_TO_CUBIN; j->op_type = SS_JIT_OP_COMPILE; j->tid = TID;
        }
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 0.4), .t1 = MS(t + 6.2), .stream = 0);
        t += 10;
    }
    tb_close(&b);
}

static void test_one_time_phase(void)
{
    for (int every = 0; every < 2; every++) {
        const char *name = every ? "jit_every_step" : "jit_once_in_steady";
        write_jit_steps(name, every);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
        result r = analyze(path, &ss_rule_first_launch_stall);
        const ss_iterations *it = ss_iterations_of(r.m);
        CHECK(it->found && it->from_nvtx && it->count >= 10, "%s: %s, %u iterations", name, it->what, it->count);
        uint32_t n = 0;
        for (uint32_t i = 0; i < r.f.n; i++) {
            const ss_finding *x = &r.f.v[i];
            if (strcmp(x->rule, "first-launch-stall")) continue;
            n++;
            CHECK(x->count == (every ? 12u : 1u), "%s: %u compilations", name, x->count);
            if (every)
                CHECK(x->phase == SS_PHASE_STEADY && x->steady_count >= 10 && ss_finding_cost_per_iteration(x) >= 0,
                      "%s: a compilation every step is the steady state's cost (phase %s, %u steady)", name,
                      ss_phase_name(x->phase), x->steady_count);
            else
                CHECK(x->phase == SS_PHASE_SETUP && x->steady_count == 0 && ss_finding_cost_per_iteration(x) < 0,
                      "%s: one compilation at step 6 is paid once: setup (phase %s, %u steady)", name,
                      ss_phase_name(x->phase), x->steady_count);
        }
        CHECK(n == 1, "%s: %u first-launch-stall findings", name, n);
        done(&r);
    }
}

/* Every rule on every trace: each positive trace has findings of its own
 * rule only, each fixed twin none at all. */
/* ------------------------------------------------ iterations and NVTX */

/* A training loop of 12 steps (a launch, a copy back, a sync each), no
 * range of the program's own; inside every step a library's short NVTX
 * range (CUB's "cub::DeviceRadixSort", as PyTorch's embedding backward
 * makes).  with_step: the program's own "step" range around each step. */
static void write_library_ranges(const char *name, int with_step)
{
    tb b;
    tb_open(&b, name);
    tb_string(&b, 20, "cub::DeviceRadixSort");
    tb_string(&b, 21, "step");
    double t = 1;
    for (int i = 0; i < 12; i++) {
        if (with_step) {
            ss_nvtx_rec *n = tb_rec(&b, SS_REC_NVTX, sizeof *n, 0);
            n->start = MS(t); n->end = MS(t + 9.9); n->tid = TID; n->name_id = 21;
        }
        tb_launch(&b, MS(t + 0.1), 0, LEGACY_SID, MS(t + 0.2), MS(t + 6), NULL, 0);
        ss_nvtx_rec *n = tb_rec(&b, SS_REC_NVTX, sizeof *n, 0);
        n->start = MS(t + 0.3); n->end = MS(t + 0.32); n->tid = TID; n->name_id = 20;
        tb_launch(&b, MS(t + 0.31), 0, LEGACY_SID, MS(t + 6), MS(t + 6.1), NULL, 0);
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 0.4), .t1 = MS(t + 6.2), .stream = 0);
        t += 10;
    }
    tb_close(&b);
}

static void test_library_ranges(void)
{
    for (int with_step = 0; with_step < 2; with_step++) {
        const char *name = with_step ? "ranges_step" : "ranges_library";
        write_library_ranges(name, with_step);
        char path[600], err[256];
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, name);
        ss_model *m = ss_model_load(path, err, sizeof err);
        CHECK(m != NULL, "load %s: %s", path, err);
        if (!m) continue;
        const ss_iterations *it = ss_iterations_of(m);
        /* a range that covers a sliver of the time between its repeats is no
         * iteration: the steps are found from the calls (or the step range) */
        CHECK(it->found && strstr(it->what, "cub::") == NULL && it->count >= 8, "%s: %s, %u iterations", name,
              it->what, it->count);
        if (with_step) CHECK(it->from_nvtx && strstr(it->what, "\"step\""), "%s: %s", name, it->what);
        ss_model_free(m);
    }
}

/* ------------------------------------------------------------ blocking copy */

/* PyTorch's blocking copies: model.cuda() (a pageable H2D cudaMemcpyAsync
 * from torch's module.py, then a sync of the legacy stream, the GPU idle)
 * and y.cpu() on a user line in a loop (a pageable D2H copy that waits for
 * the step's kernel, then the sync).  split 1: the same calls with a launch on
 * the stream between each copy and its sync, so no pair is a blocking copy.
 * split 2: the first copy's sync comes 15 ms late, 14.5 ms of it the shim's
 * own (SS_REC_SHIM_PAUSE: its first stack unwound into libtorch, as on the
 * H100 with model.to('cuda')), still a blocking copy; split 3: the same gap
 * without the shim's word for it, the program's time: not one. */
static void write_blocking_copy(const char *name, int split)
{
    tb b;
    tb_open(&b, name);
    tb_string(&b, 10, "/home/u/train.py");
    tb_string(&b, 11, "<module>");
    tb_string(&b, 12, "/usr/lib/python3/site-packages/torch/nn/modules/module.py");
    tb_string(&b, 13, "_apply");
    tb_pystack(&b, 1, (const ss_pyframe[]){ { 12, 13, 900, 0 }, { 10, 11, 5, 0 } }, 2);   /* model.cuda() */
    tb_pystack(&b, 2, (const ss_pyframe[]){ { 10, 11, 9, 0 } }, 1);                         /* y.cpu() */
    CALL(&b, .cbid = CB_cudaMalloc, .t0 = US(10), .t1 = US(20), .ptr = DEV_BUF, .bytes = 1 << 20);
    double t = 1;
    for (int i = 0; i < 5; i++) {   /* the parameters, one copy each */
        uint32_t corr = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t), .t1 = MS(t + 0.5), .stream = 0,
                             .ptr = DEV_BUF + 4096u * i, .ptr2 = PAGEABLE_BUF, .bytes = 4096, .arg = 1,
                             .mem_dst = SS_MEM_DEVICE, .mem_src = SS_MEM_PAGEABLE, .pystack = 1);
        tb_memcpy_rec(&b, corr, LEGACY_SID, MS(t + 0.1), MS(t + 0.4), 1, SS_MEM_PAGEABLE, SS_MEM_DEVICE, 4096);
        if (split == 1) tb_launch(&b, MS(t + 0.51), 0, LEGACY_SID, MS(t + 0.52), MS(t + 0.53), NULL, 0);
        double late = split >= 2 && i == 0 ? 15 : 0;
        if (split == 2 && i == 0) {
            ss_shim_pause_rec *sp = tb_rec(&b, SS_REC_SHIM_PAUSE, sizeof *sp, 0);
            sp->tid = TID; sp->t0 = MS(t + 0.5); sp->t1 = MS(t + 15);
        }
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 0.55 + late), .t1 = MS(t + 0.56 + late), .stream = 0,
             .pystack = 1);
        t += 3 + late;
    }
    for (int step = 0; step < 3; step++) {
        tb_launch(&b, MS(t), 0, LEGACY_SID, MS(t + 0.01), MS(t + 4), NULL, 0);   /* the step: 4 ms */
        uint32_t corr = CALL(&b, .cbid = CB_cudaMemcpyAsync, .t0 = MS(t + 0.02), .t1 = MS(t + 4.2), .stream = 0,
                             .ptr = PAGEABLE_BUF, .ptr2 = DEV_BUF, .bytes = 4096, .arg = 2,
                             .mem_dst = SS_MEM_PAGEABLE, .mem_src = SS_MEM_DEVICE, .pystack = 2);
        tb_memcpy_rec(&b, corr, LEGACY_SID, MS(t + 4.01), MS(t + 4.19), 2, SS_MEM_DEVICE, SS_MEM_PAGEABLE, 4096);
        if (split == 1) tb_launch(&b, MS(t + 4.21), 0, LEGACY_SID, MS(t + 4.22), MS(t + 4.23), NULL, 0);
        CALL(&b, .cbid = CB_cudaStreamSynchronize, .t0 = MS(t + 4.25), .t1 = MS(t + 4.26), .stream = 0, .pystack = 2);
        t += 5;
    }
    tb_close(&b);
}

static uint32_t count_rule(const ss_findings *f, const char *rule)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->n; i++) if (!strcmp(f->v[i].rule, rule)) n += f->v[i].count;
    return n;
}

static void test_blocking_copy(void)
{
    static const char *const names[] = { "blocking_copy", "blocking_copy_split", "blocking_copy_shim_pause",
                                         "blocking_copy_late" };
    for (int split = 0; split < 4; split++) write_blocking_copy(names[split], split);
    char path[600], err[256];
    for (int split = 0; split < 4; split++) {
        snprintf(path, sizeof path, "%s/%s.sstrace", out_dir, names[split]);
        ss_model *m = ss_model_load(path, err, sizeof err);
        CHECK(m != NULL, "load %s: %s", path, err);
        if (!m) continue;
        uint32_t copies = 0, syncs = 0;
        for (uint32_t i = 0; i < m->ncalls; i++) {
            const ss_call *c = &m->calls[i];
            if (c->blocking_copy == SS_BLOCKING_COPY_COPY) {
                copies++;
                int32_t s = ss_blocking_copy_partner(m, (int32_t)i);
                CHECK(s >= 0 && m->calls[s].blocking_copy == SS_BLOCKING_COPY_SYNC &&
                      ss_blocking_copy_partner(m, s) == (int32_t)i, "partner of call %u: %d", i, s);
            }
            if (c->blocking_copy == SS_BLOCKING_COPY_SYNC) syncs++;
            if (!c->blocking_copy) CHECK(ss_blocking_copy_partner(m, (int32_t)i) == -1, "call %u has a partner", i);
        }
        uint32_t want = split == 1 ? 0u : split == 3 ? 7u : 8u;
        CHECK(copies == want && syncs == copies, "split %d: %u copies, %u syncs", split, copies, syncs);
        ss_findings f;
        ss_findings_init(&f);
        ss_rules_run_all(m, &f);
        ss_findings_finish(&f, m->t_last - m->t_first);
        if (split == 0 || split == 2) {
            /* judged as the synchronous copies they are: model.cuda() on an
             * idle GPU is nothing; y.cpu() waited 4 ms for the step each time */
            CHECK(count_rule(&f, "pageable-async-copy") == 0, "pageable-async-copy %u",
                  count_rule(&f, "pageable-async-copy"));
            CHECK(count_rule(&f, "device-sync-overuse") == 0, "device-sync-overuse %u",
                  count_rule(&f, "device-sync-overuse"));
            CHECK(count_rule(&f, "implicit-sync") == 3, "implicit-sync %u", count_rule(&f, "implicit-sync"));
            for (uint32_t k = 0; k < f.n; k++) {
                if (strcmp(f.v[k].rule, "implicit-sync")) continue;
                char site[1024];
                ss_finding_site_text(&f.v[k], site, sizeof site);
                CHECK(strstr(site, "train.py:9") != NULL, "site %s", site);
                CHECK(strstr(f.v[k].message, "blocking copy") != NULL, "message %s", f.v[k].message);
                CHECK(strstr(f.v[k].fix, ".item()") != NULL, "fix %s", f.v[k].fix);
            }
        } else {
            /* not back to back: asynchronous copies that failed to be (split
             * 3: the one whose sync came 15 ms later, all of it the program's) */
            CHECK(count_rule(&f, "pageable-async-copy") == (split == 1 ? 8u : 1u), "split %d: pageable-async-copy %u",
                  split, count_rule(&f, "pageable-async-copy"));
        }
        ss_findings_free(&f);
        ss_model_free(m);
    }
}

static void test_all_rules(void)
{
    static const struct { const char *trace, *rule; } cases[] = {
        { "implicit_sync", "implicit-sync" }, { "implicit_sync_fixed", NULL },
        { "item_in_loop", "implicit-sync" }, { "explicit_synchronize", NULL },
        { "pageable", "pageable-async-copy" }, { "pageable_fixed", NULL },
        { "legacy", "legacy-stream-serialization" }, { "legacy_nonblocking", NULL }, { "legacy_with_events", NULL },
        { "device_sync", "device-sync-overuse" }, { "device_sync_fixed", NULL },
        { "graph_capture", NULL }, { "graph_capture_uncaptured", "missing-fence" },
        { "graph_node_race", "missing-fence" }, { "graph_node_race_fixed", NULL },
        { "graph_copy_node_race", "missing-fence" }, { "graph_node_event_after_launch", NULL },
        { "stream_create_blocked", "implicit-sync" }, { "stream_create_upfront", NULL },
        { "missing_fence", "missing-fence" }, { "missing_fence_wrong_stream", "missing-fence" },
        { "missing_fence_fixed", NULL },
        { "unrecorded_event", "unrecorded-event-wait" }, { "unrecorded_event_fixed", NULL },
        { "event_timing_gap", "event-timing-gap" }, { "event_timing_gap_estimated", "event-timing-gap" },
        { "event_timing_legacy", NULL }, { "event_timing_waits", NULL },
        /* stream memory operations: no other rule takes them for work or waits */
        { "memop_handoff", NULL }, { "memop_handoff64", NULL }, { "memop_unknown_writer", "missing-fence" },
        { "memop_idle_writer", "missing-fence" }, { "memop_batch", "missing-fence" },
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
    test_event_create_block();
    test_item();
    test_py_framework_sync();
    test_blocking_copy();
    test_library_ranges();
    test_one_time_phase();
    test_pageable();
    test_legacy();
    test_legacy_sync_skips_marker();
    test_device_sync();
    test_managed_prefetch();
    test_capture();
    test_stream_create();
    test_missing_fence();
    test_memory_model();
    test_vmm();
    test_exact_memory();
    test_host_threads();
    test_pageable_sync_copy();
    test_device_sync_contexts();
    test_green_context_legacy();
    test_context_events();
    test_huge_device_number();
    test_stream_memops();
    test_relies_on_legacy();
    test_held_record();
    test_stream_identity();
    test_context_streams();
    test_graph_pageable();
    test_graph_nodes();
    test_graph_event_nodes();
    test_graph_exec_streams();
    test_launch_attr_event();
    test_ipc_event_wait();
    test_unrecorded();
    test_unrecorded_ring();
    test_ring_stream_waits();
    test_incomplete_sync();
    test_graph_bodies();
    test_explicit_event_nodes();
    test_event_timing_gap();
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
