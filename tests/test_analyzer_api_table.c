/*
 * The analyzer's API table (generated from preload/cuda_api.tab by
 * tools/gen_api.py) and ss_call_host_wait().
 *
 *   1. Every row of preload/cuda_api.tab, under every name the analyzer can
 *      meet it by (the symbol, its _ptsz/_ptds twin, CUPTI's spelling of
 *      their callback ids, each through ss_api_base_name()), classifies to
 *      the ss_api_class this file expects for the row's class, and carries
 *      the row's host column.  The table is read here, not the generated
 *      code, so a generator that drops or mislabels rows fails.
 *   2. What each call did to the host, on a trace written with the real
 *      writer the way the shim records calls (an SS_REC_API_NAME per cbid,
 *      CUPTI's cbids, GPU records joined by correlation id): every copy
 *      direction and memory kind of CUDA's "API synchronization behavior",
 *      cudaMemset on device and pinned memory, kinds learned from the CUPTI
 *      records, from allocations and from the cudaMemcpyKind, unknown kinds,
 *      failed calls, cudaFreeAsync against cudaFree.
 *
 * Run from the repository root (tests/run_tests.sh does); argv[1] may name
 * another cuda_api.tab.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncsight/trace_io.h"
#include "model.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
                              fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* ------------------------------------------------ 1. the table's rows */

/* The analyzer's class for each class of cuda_api.tab (what the rules
 * expect; cudaFreeAsync stays a free: it ends an allocation; an event opened
 * from another process begins a lifetime of its handle, as a creation does). */
static const struct { const char *tab; ss_api_class cls; } expected_class[] = {
    { "stream-create", SS_API_STREAM_CREATE }, { "stream-destroy", SS_API_STREAM_DESTROY },
    { "stream-sync", SS_API_STREAM_SYNC }, { "stream-query", SS_API_STREAM_QUERY },
    { "stream-wait", SS_API_STREAM_WAIT }, { "host-func", SS_API_HOST_FUNC }, { "capture", SS_API_CAPTURE },
    { "event-create", SS_API_EVENT_CREATE }, { "event-open", SS_API_EVENT_CREATE },
    { "event-record", SS_API_EVENT_RECORD },
    { "event-sync", SS_API_EVENT_SYNC }, { "event-query", SS_API_EVENT_QUERY },
    { "event-elapsed", SS_API_EVENT_ELAPSED }, { "event-destroy", SS_API_EVENT_DESTROY },
    { "copy-sync", SS_API_COPY_SYNC }, { "copy-async", SS_API_COPY_ASYNC },
    { "memset-sync", SS_API_MEMSET_SYNC }, { "memset-async", SS_API_MEMSET_ASYNC },
    { "alloc", SS_API_ALLOC }, { "free", SS_API_FREE }, { "free-async", SS_API_FREE },
    { "launch", SS_API_LAUNCH }, { "graph-launch", SS_API_LAUNCH }, { "device-sync", SS_API_DEVICE_SYNC },
    { "set-device", SS_API_OTHER }, { "device-limit", SS_API_SET_LIMIT }, { "device-reset", SS_API_DEVICE_RESET },
    { "graph-node", SS_API_GRAPH_NODE }, { "stream-wait-value", SS_API_STREAM_WAIT_VALUE },
    { "stream-write-value", SS_API_STREAM_WRITE_VALUE }, { "stream-batch-memop", SS_API_STREAM_BATCH_MEMOP },
    { "managed-memory", SS_API_MANAGED_MEMORY }, { "context-event", SS_API_CONTEXT_EVENT },
};

static int class_of_tab(const char *tab, ss_api_class *out)
{
    for (size_t i = 0; i < sizeof expected_class / sizeof expected_class[0]; i++)
        if (!strcmp(expected_class[i].tab, tab)) { *out = expected_class[i].cls; return 1; }
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = 0;
    return s;
}

static int is_version(const char *s)
{
    if (s[0] != 'v' || !s[1]) return 0;
    for (s++; *s; s++) if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* One name under which the analyzer may meet a row: as recorded, through
 * ss_api_base_name(), must give the row's class and host. */
static void check_name(const char *recorded, const char *want_base, const char *tab_class, const char *host,
                       int lineno)
{
    char base[160];
    ss_api_base_name(recorded, base, sizeof base);
    if (want_base) CHECK(!strcmp(base, want_base), "line %d: %s -> base %s, want %s", lineno, recorded, base, want_base);
    ss_api_class want;
    if (!class_of_tab(tab_class, &want)) {
        CHECK(0, "line %d: class %s unknown to this test", lineno, tab_class);
        return;
    }
    ss_api_class got = ss_api_classify(base);
    CHECK(got == want, "line %d: %s classifies as %s, want %s", lineno, recorded, ss_api_class_name(got),
          ss_api_class_name(want));
    const ss_api_info *info = ss_api_lookup(base);
    CHECK(info != NULL, "line %d: %s (%s) not in the generated table", lineno, recorded, base);
    if (!info) return;
    CHECK(!strcmp(ss_api_host_name((ss_api_host)info->host), host), "line %d: %s host %s, table says %s",
          lineno, recorded, ss_api_host_name((ss_api_host)info->host), host);
    CHECK(!strcmp(info->tab_class, tab_class), "line %d: %s tab class %s, table says %s", lineno, recorded,
          info->tab_class, tab_class);
}

static void test_table_rows(const char *tab_path)
{
    FILE *f = fopen(tab_path, "r");
    CHECK(f != NULL, "cannot open %s", tab_path);
    if (!f) return;
    char line[4096];
    int lineno = 0, rows = 0, twins = 0, drivers = 0, drivers_twins = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = trim(line);
        if (!*p || *p == '#') continue;
        char *field[8] = { 0 };
        int n = 0;
        for (char *tok = p; n < 8; ) {
            char *bar = strchr(tok, '|');
            if (bar) *bar = 0;
            field[n++] = trim(tok);
            if (!bar) break;
            tok = bar + 1;
        }
        CHECK(n >= 7, "line %d: %d fields", lineno, n);
        if (n < 7) continue;
        const char *name = field[0], *cbid = field[1], *twin = field[2], *cls = field[3], *host = field[4];
        rows++;
        char buf[256];
        if (n == 8 && strstr(field[7], "domain=driver")) {
            /* A driver row is recorded under its CUPTI cbid's name without
             * the "_v2"-style version (cuMemcpyHtoDAsync_v2_ptsz ->
             * cuMemcpyHtoDAsync_ptsz); the analyzer strips the twin suffix. */
            char base[128];
            ss_api_base_name(is_version(cbid) ? name : cbid, base, sizeof base);
            check_name(base, NULL, cls, host, lineno);
            if (strcmp(twin, "-")) {
                CHECK(!strcmp(twin, "ptsz") || !strcmp(twin, "ptds"), "line %d: driver twin '%s'", lineno, twin);
                snprintf(buf, sizeof buf, "%s_%s", base, twin);
                check_name(buf, base, cls, host, lineno);
                drivers_twins++;
            }
            drivers++;
            continue;
        }
        /* the exported symbol; __cudaLaunchKernel stays itself */
        check_name(name, name, cls, host, lineno);
        /* CUPTI's spelling of its cbid: "v3020" means <name>_v3020 */
        if (is_version(cbid)) {
            snprintf(buf, sizeof buf, "%s_%s", name, cbid);
            check_name(buf, name, cls, host, lineno);
        } else {
            check_name(cbid, NULL, cls, host, lineno);
        }
        if (strcmp(twin, "-")) {
            char suffix[16], ver[128];
            CHECK(sscanf(twin, "%15s %127s", suffix, ver) == 2, "line %d: twin '%s'", lineno, twin);
            twins++;
            snprintf(buf, sizeof buf, "%s_%s", name, suffix);
            check_name(buf, name, cls, host, lineno);
            if (is_version(ver)) {
                snprintf(buf, sizeof buf, "%s_%s_%s", name, suffix, ver);
                check_name(buf, name, cls, host, lineno);
            } else {
                check_name(ver, NULL, cls, host, lineno);
            }
        }
    }
    fclose(f);
    /* the table lists ~67 entry points and ~48 twins: a parse that found
     * almost none would pass the loop above vacuously */
    CHECK(rows >= 60 && twins >= 40, "%d rows, %d twins read from %s", rows, twins, tab_path);
    CHECK(drivers >= 40 && drivers_twins >= 25, "%d driver rows, %d driver twins", drivers, drivers_twins);
    printf("table: %d rows (%d driver), %d twins (%d driver) checked; %zu names in the generated table\n", rows,
           drivers, twins + drivers_twins, drivers_twins, ss_api_table_count);

    /* the generated table is sorted (bisection) and names each base once */
    for (size_t i = 1; i < ss_api_table_count; i++)
        CHECK(strcmp(ss_api_table[i - 1].name, ss_api_table[i].name) < 0, "table order at %s", ss_api_table[i].name);
}

static void test_classes(void)
{
    /* where the hand-written table and cuda_api.tab used to disagree */
    CHECK(ss_api_classify("cudaFreeAsync") == SS_API_FREE, "cudaFreeAsync ends an allocation");
    const ss_api_info *fa = ss_api_lookup("cudaFreeAsync"), *fr = ss_api_lookup("cudaFree");
    CHECK(fa && fa->host == SS_API_HOST_NONE && !strcmp(fa->tab_class, "free-async"), "cudaFreeAsync does not wait");
    CHECK(fr && fr->host == SS_API_HOST_DEVICE, "cudaFree waits for the device");
    CHECK(ss_api_classify("cudaDeviceReset") == SS_API_DEVICE_RESET, "reset");
    const ss_api_info *dr = ss_api_lookup("cudaDeviceReset");
    CHECK(dr && dr->host == SS_API_HOST_DEVICE, "cudaDeviceReset waits for the device");
    CHECK(ss_api_classify("cudaEventElapsedTime") == SS_API_EVENT_ELAPSED, "elapsed");
    CHECK(ss_api_classify("cudaEventDestroy") == SS_API_EVENT_DESTROY, "destroy");
    CHECK(ss_api_classify("cudaLaunchHostFunc") == SS_API_HOST_FUNC, "host func");
    CHECK(ss_api_classify("cudaGraphLaunch") == SS_API_LAUNCH, "graph launch");
    /* driver twins (domain=driver rows) */
    CHECK(ss_api_classify("cuLaunchKernelEx") == SS_API_LAUNCH, "driver launch");
    CHECK(ss_api_classify("cuMemcpyHtoDAsync") == SS_API_COPY_ASYNC, "driver async copy");
    const ss_api_info *h2d = ss_api_lookup("cuMemcpyHtoDAsync"), *cpy = ss_api_lookup("cuMemcpy");
    CHECK(h2d && h2d->arg_is_memcpy_kind && h2d->fixed_dst == SS_MEM_DEVICE && h2d->fixed_src == SS_MEM_UNKNOWN,
          "cuMemcpyHtoDAsync: device destination, direction in arg");
    CHECK(cpy && cpy->arg_is_memcpy_kind && cpy->fixed_dst == SS_MEM_UNKNOWN, "cuMemcpy: kinds asked per call");
    /* 2D/3D copies and memsets: rows a pitch apart (the memory model knows only their pointer's byte) */
    static const char *const strided[] = { "cudaMemcpy2DAsync", "cudaMemcpy2D", "cudaMemset2DAsync", "cudaMemset3D",
                                           "cudaMemcpy3DAsync", "cuMemcpy2DAsync", "cuMemsetD2D8", "cudaMemcpy2DToArray" };
    for (size_t i = 0; i < sizeof strided / sizeof strided[0]; i++) {
        const ss_api_info *x = ss_api_lookup(strided[i]);
        CHECK(x && x->strided, "%s: strided", strided[i]);
    }
    static const char *const flat[] = { "cudaMemcpyAsync", "cudaMemcpy", "cudaMemsetAsync", "cuMemcpyHtoDAsync",
                                        "cuMemsetD8", "cudaMemcpyPeerAsync" };
    for (size_t i = 0; i < sizeof flat / sizeof flat[0]; i++) {
        const ss_api_info *x = ss_api_lookup(flat[i]);
        CHECK(x && !x->strided, "%s: contiguous", flat[i]);
    }
    CHECK(ss_api_classify("cuCtxSynchronize") == SS_API_DEVICE_SYNC, "driver device sync");
    CHECK(ss_api_classify("cuStreamWaitEvent") == SS_API_STREAM_WAIT, "driver wait");
    /* stream memory operations, CUDA 12+'s _v2 entry points and CUDA 11's under one name */
    CHECK(ss_api_classify("cuStreamWaitValue32") == SS_API_STREAM_WAIT_VALUE, "wait-value");
    CHECK(ss_api_classify("cuStreamWriteValue64") == SS_API_STREAM_WRITE_VALUE, "write-value");
    CHECK(ss_api_classify("cuStreamBatchMemOp") == SS_API_STREAM_BATCH_MEMOP, "batch memop");
    CHECK(ss_api_classify("cuModuleLoadData") == SS_API_OTHER, "driver call not in the table");
    /* exact names only: no prefix matching, unknown names are "other" */
    CHECK(ss_api_classify("cudaGetLastError") == SS_API_OTHER, "other");
    CHECK(ss_api_classify("cudaMemcpyNotACall") == SS_API_OTHER, "no prefix match");
    CHECK(ss_api_classify("cudaMallocArray") == SS_API_OTHER, "not recorded: other");
    CHECK(ss_api_classify("") == SS_API_OTHER && ss_api_lookup(NULL) == NULL, "empty");
    CHECK(!strcmp(ss_api_class_name(SS_API_EVENT_ELAPSED), "event-elapsed") &&
          !strcmp(ss_api_class_name(SS_API_DEVICE_RESET), "device-reset"), "class names");
    CHECK(!strcmp(ss_host_wait_name(SS_WAIT_STREAM_PRIOR), "stream-prior") &&
          !strcmp(ss_host_wait_name(SS_WAIT_QUERY), "query"), "wait names");
}

/* ------------------------------------------------ 2. host waits on a trace */

/* CUPTI runtime cbids (cupti_runtime_cbid.h, CUDA 13.0) and the names the
 * shim writes for them (CUPTI's spelling without prefix and version). */
static const struct { uint32_t cbid; const char *name; } api_names[] = {
    { 20, "cudaMalloc" }, { 22, "cudaFree" }, { 25, "cudaMallocHost" }, { 31, "cudaMemcpy" },
    { 39, "cudaMemcpyToSymbol" }, { 41, "cudaMemcpyAsync" }, { 49, "cudaMemset" }, { 51, "cudaMemsetAsync" },
    { 131, "cudaStreamSynchronize" }, { 132, "cudaStreamQuery" }, { 137, "cudaEventSynchronize" },
    { 138, "cudaEventQuery" }, { 160, "cudaMemcpyPeer" }, { 164, "cudaDeviceReset" },
    { 165, "cudaDeviceSynchronize" }, { 211, "cudaLaunchKernel" }, { 215, "cudaMemcpy_ptds" },
    { 225, "cudaMemcpyAsync_ptsz" }, { 233, "cudaMemset_ptds" }, { 311, "cudaGraphLaunch" },
    { 375, "cudaFreeAsync" }, { 486, "cudaEventElapsedTime" }, { 136, "cudaEventDestroy" },
    { 9999, "cudaSomethingNew" },
    /* driver-API calls (trace 1.5): CUPTI's driver cbid + SS_API_CBID_DRIVER,
     * named without the "_v2" version.  Driver and runtime numbers overlap:
     * driver 41 is runtime 41 (cudaMemcpyAsync) without the offset. */
    { SS_API_CBID_DRIVER + 276, "cuMemcpyHtoD" }, { SS_API_CBID_DRIVER + 278, "cuMemcpyDtoH" },
    { SS_API_CBID_DRIVER + 279, "cuMemcpyDtoHAsync" }, { SS_API_CBID_DRIVER + 422, "cuMemcpyDtoHAsync_ptsz" },
    { SS_API_CBID_DRIVER + 277, "cuMemcpyHtoDAsync" }, { SS_API_CBID_DRIVER + 126, "cuStreamSynchronize" },
    { SS_API_CBID_DRIVER + 121, "cuEventSynchronize" }, { SS_API_CBID_DRIVER + 17, "cuCtxSynchronize" },
    { SS_API_CBID_DRIVER + 294, "cuMemAllocHost" }, { SS_API_CBID_DRIVER + 245, "cuMemFree" },
    { SS_API_CBID_DRIVER + 251, "cuMemsetD32" }, { SS_API_CBID_DRIVER + 307, "cuLaunchKernel" },
    { SS_API_CBID_DRIVER + 514, "cuGraphLaunch" }, { SS_API_CBID_DRIVER + 600, "cuMemFreeAsync" },
    { SS_API_CBID_DRIVER + 41, "cuSomethingUnlisted" },
};
enum {
    CB_Malloc = 20, CB_Free = 22, CB_MallocHost = 25, CB_Memcpy = 31, CB_MemcpyToSymbol = 39, CB_MemcpyAsync = 41,
    CB_Memset = 49, CB_MemsetAsync = 51, CB_StreamSynchronize = 131, CB_StreamQuery = 132,
    CB_EventSynchronize = 137, CB_EventQuery = 138, CB_MemcpyPeer = 160, CB_DeviceReset = 164,
    CB_DeviceSynchronize = 165, CB_LaunchKernel = 211, CB_Memcpy_ptds = 215, CB_MemcpyAsync_ptsz = 225,
    CB_Memset_ptds = 233, CB_GraphLaunch = 311, CB_FreeAsync = 375, CB_EventElapsedTime = 486,
    CB_EventDestroy = 136, CB_Unknown = 9999,
    DB_MemcpyHtoD = SS_API_CBID_DRIVER + 276, DB_MemcpyDtoH = SS_API_CBID_DRIVER + 278,
    DB_MemcpyDtoHAsync = SS_API_CBID_DRIVER + 279, DB_MemcpyDtoHAsync_ptsz = SS_API_CBID_DRIVER + 422,
    DB_MemcpyHtoDAsync = SS_API_CBID_DRIVER + 277, DB_StreamSynchronize = SS_API_CBID_DRIVER + 126,
    DB_EventSynchronize = SS_API_CBID_DRIVER + 121, DB_CtxSynchronize = SS_API_CBID_DRIVER + 17,
    DB_MemAllocHost = SS_API_CBID_DRIVER + 294, DB_MemFree = SS_API_CBID_DRIVER + 245,
    DB_MemsetD32 = SS_API_CBID_DRIVER + 251, DB_LaunchKernel = SS_API_CBID_DRIVER + 307,
    DB_GraphLaunch = SS_API_CBID_DRIVER + 514, DB_MemFreeAsync = SS_API_CBID_DRIVER + 600,
    DB_Unlisted = SS_API_CBID_DRIVER + 41,
};

/* cudaMemcpyKind */
enum { H2H = 0, H2D = 1, D2H = 2, D2D = 3, DEFAULT = 4 };

#define T0 1000000000ull
#define TID 4242
#define LEGACY_SID 7
#define DEV_A 0x7f0000000000ull     /* cudaMalloc'ed */
#define DEV_B 0x7f0000100000ull     /* cudaMalloc'ed */
#define PIN_A 0x7e0000000000ull     /* cudaMallocHost'ed */
#define PIN_B 0x7d0000000000ull     /* cuMemAllocHost'ed */

typedef struct tb {
    ss_writer w;
    uint8_t buf[1 << 16];
    uint32_t used, count, corr;
} tb;

static void *tb_rec(tb *b, uint16_t type, uint32_t fixed, uint32_t tail)
{
    void *r = ss_rec_reserve(b->buf, sizeof b->buf, &b->used, type, fixed, tail);
    if (!r) {
        CHECK(ss_writer_write_block(&b->w, b->buf, b->used, b->count) == 0, "write block");
        b->used = b->count = 0;
        r = ss_rec_reserve(b->buf, sizeof b->buf, &b->used, type, fixed, tail);
    }
    b->count++;
    return r;
}

/* One expectation: the call entered at t and what it should have waited for. */
typedef struct expect { uint64_t t; ss_host_wait want; const char *what; } expect;
static expect expects[128];
static int nexpects;
static uint64_t tnext = T0 + 1000000;

typedef struct call_args {
    uint32_t cbid; uint64_t ptr, ptr2, bytes, stream; uint32_t arg; uint8_t mem_dst, mem_src; int ret;
} call_args;

/* A call 10 us long, 100 us after the previous one; returns its corr. */
static uint32_t tb_call(tb *b, call_args a, ss_host_wait want, const char *what)
{
    ss_api_rec *r = tb_rec(b, SS_REC_API, sizeof *r, 0);
    r->cbid = a.cbid; r->tid = TID; r->t_enter = tnext; r->t_exit = tnext + 10000; r->ret = a.ret;
    r->corr = ++b->corr;
    r->ptr = a.ptr; r->ptr2 = a.ptr2; r->bytes = a.bytes; r->stream = a.stream; r->arg = a.arg;
    r->mem_dst = a.mem_dst; r->mem_src = a.mem_src; r->device = 0; r->flags = SS_API_F_CUPTI_CB;
    if (what) {
        if (nexpects < (int)(sizeof expects / sizeof expects[0]))
            expects[nexpects++] = (expect){ tnext, want, what };
    }
    tnext += 100000;
    return r->corr;
}
#define CALL(b, want, what, ...) tb_call(b, (call_args){ __VA_ARGS__ }, want, what)

static void tb_memcpy(tb *b, uint32_t corr, uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind)
{
    ss_memcpy_rec *r = tb_rec(b, SS_REC_MEMCPY, sizeof *r, 0);
    r->g.start = tnext - 95000; r->g.end = tnext - 90000;    /* during the call just written */
    r->g.corr = corr; r->g.stream_id = LEGACY_SID; r->g.context_id = 1;
    r->copy_kind = copy_kind; r->src_kind = src_kind; r->dst_kind = dst_kind; r->bytes = 4096;
}

static void tb_memset(tb *b, uint32_t corr, uint8_t mem_kind)
{
    ss_memset_rec *r = tb_rec(b, SS_REC_MEMSET, sizeof *r, 0);
    r->g.start = tnext - 95000; r->g.end = tnext - 90000;
    r->g.corr = corr; r->g.stream_id = LEGACY_SID; r->g.context_id = 1;
    r->mem_kind = mem_kind; r->bytes = 4096;
}

static void write_trace(const char *path)
{
    static tb b;
    memset(&b, 0, sizeof b);
    ss_file_header h;
    ss_file_header_init(&h, T0, 0);
    h.pid = 777;
    unlink(path);
    CHECK(ss_writer_open(&b.w, path, &h) == 0, "open %s", path);
    for (size_t i = 0; i < sizeof api_names / sizeof api_names[0]; i++) {
        uint32_t len = (uint32_t)strlen(api_names[i].name);
        ss_api_name_rec *r = tb_rec(&b, SS_REC_API_NAME, sizeof *r, len);
        r->cbid = api_names[i].cbid;
        r->len = len;
        memcpy((char *)r + sizeof *r, api_names[i].name, len);
    }
    ss_context_rec *ctx = tb_rec(&b, SS_REC_CONTEXT, sizeof *ctx, 0);
    ctx->context_id = 1; ctx->device = 0; ctx->null_stream_id = LEGACY_SID;

    const uint8_t P = SS_MEM_PAGEABLE, N = SS_MEM_PINNED, D = SS_MEM_DEVICE, M = SS_MEM_MANAGED, A = SS_MEM_ARRAY;

    /* allocations the kind fallback can find */
    CALL(&b, SS_WAIT_NONE, "cudaMalloc", .cbid = CB_Malloc, .ptr = DEV_A, .bytes = 1 << 20);
    CALL(&b, SS_WAIT_NONE, "cudaMalloc", .cbid = CB_Malloc, .ptr = DEV_B, .bytes = 1 << 20);
    CALL(&b, SS_WAIT_NONE, "cudaMallocHost", .cbid = CB_MallocHost, .ptr = PIN_A, .bytes = 1 << 20);

    /* synchronous cudaMemcpy, kinds recorded by the shim */
    CALL(&b, SS_WAIT_STREAM_PRIOR, "cudaMemcpy pageable->device", .cbid = CB_Memcpy, .arg = H2D, .mem_dst = D, .mem_src = P);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy pinned->device", .cbid = CB_Memcpy, .arg = H2D, .mem_dst = D, .mem_src = N);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy device->pageable", .cbid = CB_Memcpy, .arg = D2H, .mem_dst = P, .mem_src = D);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy device->pinned", .cbid = CB_Memcpy, .arg = D2H, .mem_dst = N, .mem_src = D);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpy device->device", .cbid = CB_Memcpy, .arg = D2D, .mem_dst = D, .mem_src = D);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpy managed->device", .cbid = CB_Memcpy, .arg = DEFAULT, .mem_dst = D, .mem_src = M);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpy device->array", .cbid = CB_Memcpy, .arg = D2D, .mem_dst = A, .mem_src = D);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy pageable->pageable", .cbid = CB_Memcpy, .arg = H2H, .mem_dst = P, .mem_src = P);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy pinned->pageable", .cbid = CB_Memcpy, .arg = H2H, .mem_dst = P, .mem_src = N);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy managed->pageable", .cbid = CB_Memcpy, .arg = DEFAULT, .mem_dst = P, .mem_src = M);
    CALL(&b, SS_WAIT_STREAM_PRIOR, "cudaMemcpy_ptds pageable->device", .cbid = CB_Memcpy_ptds, .arg = H2D, .mem_dst = D, .mem_src = P);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpy_ptds device->device", .cbid = CB_Memcpy_ptds, .arg = D2D, .mem_dst = D, .mem_src = D);

    /* cudaMemcpyAsync */
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpyAsync device->pageable", .cbid = CB_MemcpyAsync, .arg = D2H, .mem_dst = P, .mem_src = D);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyAsync device->pinned", .cbid = CB_MemcpyAsync, .arg = D2H, .mem_dst = N, .mem_src = D);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyAsync pageable->device (staged)", .cbid = CB_MemcpyAsync, .arg = H2D, .mem_dst = D, .mem_src = P);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyAsync pinned->device", .cbid = CB_MemcpyAsync, .arg = H2D, .mem_dst = D, .mem_src = N);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyAsync device->device", .cbid = CB_MemcpyAsync, .arg = D2D, .mem_dst = D, .mem_src = D);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpyAsync pinned->pinned", .cbid = CB_MemcpyAsync, .arg = H2H, .mem_dst = N, .mem_src = N);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpyAsync_ptsz device->pageable", .cbid = CB_MemcpyAsync_ptsz, .arg = D2H, .mem_dst = P, .mem_src = D);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyAsync_ptsz device->pinned", .cbid = CB_MemcpyAsync_ptsz, .arg = D2H, .mem_dst = N, .mem_src = D);

    /* kinds missing from the record: from the CUPTI memcpy record */
    uint32_t c;
    c = CALL(&b, SS_WAIT_STREAM_PRIOR, "cudaMemcpy, CUPTI says pageable->device", .cbid = CB_Memcpy, .arg = H2D);
    tb_memcpy(&b, c, 1, P, D);
    c = CALL(&b, SS_WAIT_NONE, "cudaMemcpy, CUPTI says device->device", .cbid = CB_Memcpy, .arg = DEFAULT);
    tb_memcpy(&b, c, 8, D, D);
    c = CALL(&b, SS_WAIT_STREAM, "cudaMemcpyAsync, CUPTI says device->pageable", .cbid = CB_MemcpyAsync, .arg = DEFAULT);
    tb_memcpy(&b, c, 2, D, P);
    c = CALL(&b, SS_WAIT_NONE, "cudaMemcpyAsync, CUPTI says device->pinned", .cbid = CB_MemcpyAsync, .arg = D2H);
    tb_memcpy(&b, c, 2, D, N);
    /* ... the record's kinds win over the CUPTI record's */
    c = CALL(&b, SS_WAIT_STREAM, "cudaMemcpy pinned->device recorded, CUPTI disagrees", .cbid = CB_Memcpy, .arg = H2D,
             .mem_dst = D, .mem_src = N);
    tb_memcpy(&b, c, 1, P, D);
    /* ... from allocations the trace saw */
    CALL(&b, SS_WAIT_NONE, "cudaMemcpy between two cudaMalloc buffers", .cbid = CB_Memcpy, .arg = DEFAULT,
         .ptr = DEV_A + 64, .ptr2 = DEV_B);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy cudaMallocHost buffer -> cudaMalloc buffer", .cbid = CB_Memcpy, .arg = DEFAULT,
         .ptr = DEV_A, .ptr2 = PIN_A);
    CALL(&b, SS_WAIT_STREAM_PRIOR, "cudaMemcpy pageable (recorded) -> cudaMalloc buffer", .cbid = CB_Memcpy, .arg = DEFAULT,
         .ptr = DEV_B, .ptr2 = 0x1000, .mem_src = P);
    /* ... from the cudaMemcpyKind */
    CALL(&b, SS_WAIT_NONE, "cudaMemcpy DeviceToDevice, no kinds", .cbid = CB_Memcpy, .arg = D2D);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy DeviceToHost, no kinds", .cbid = CB_Memcpy, .arg = D2H);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy HostToHost, no kinds", .cbid = CB_Memcpy, .arg = H2H);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyAsync HostToDevice, no kinds", .cbid = CB_MemcpyAsync, .arg = H2D);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpyAsync DeviceToHost, no kinds (pageable is the worst case)", .cbid = CB_MemcpyAsync, .arg = D2H);
    /* ... from the table: a symbol is device memory; a peer copy is device to
     * device whatever its arg (there the destination device) says */
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyToSymbol DeviceToDevice, no kinds", .cbid = CB_MemcpyToSymbol, .arg = D2D);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyPeer, no kinds, arg = device 2", .cbid = CB_MemcpyPeer, .arg = 2);
    /* truly unknown: the row's documented worst case */
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy cudaMemcpyDefault, no kinds", .cbid = CB_Memcpy, .arg = DEFAULT, .ptr = 0x1000, .ptr2 = 0x2000);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpy host (kind unknown pinnedness)->device", .cbid = CB_Memcpy, .arg = H2D, .mem_dst = D);
    CALL(&b, SS_WAIT_STREAM, "cudaMemcpyAsync cudaMemcpyDefault, no kinds", .cbid = CB_MemcpyAsync, .arg = DEFAULT);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpyAsync unknown->device", .cbid = CB_MemcpyAsync, .arg = DEFAULT, .mem_dst = D);

    /* memsets */
    CALL(&b, SS_WAIT_NONE, "cudaMemset device", .cbid = CB_Memset, .mem_dst = D, .ptr = DEV_A, .bytes = 4096);
    CALL(&b, SS_WAIT_STREAM, "cudaMemset pinned", .cbid = CB_Memset, .mem_dst = N, .ptr = PIN_A, .bytes = 4096);
    CALL(&b, SS_WAIT_STREAM, "cudaMemset pageable", .cbid = CB_Memset, .mem_dst = P, .bytes = 4096);
    CALL(&b, SS_WAIT_NONE, "cudaMemset managed", .cbid = CB_Memset, .mem_dst = M, .bytes = 4096);
    CALL(&b, SS_WAIT_NONE, "cudaMemset_ptds device", .cbid = CB_Memset_ptds, .mem_dst = D, .bytes = 4096);
    CALL(&b, SS_WAIT_STREAM, "cudaMemset_ptds pinned", .cbid = CB_Memset_ptds, .mem_dst = N, .bytes = 4096);
    c = CALL(&b, SS_WAIT_NONE, "cudaMemset, CUPTI says device", .cbid = CB_Memset, .bytes = 4096);
    tb_memset(&b, c, D);
    c = CALL(&b, SS_WAIT_STREAM, "cudaMemset, CUPTI says pinned", .cbid = CB_Memset, .bytes = 4096);
    tb_memset(&b, c, N);
    CALL(&b, SS_WAIT_NONE, "cudaMemset into a cudaMalloc buffer, no kinds", .cbid = CB_Memset, .ptr = DEV_B, .bytes = 4096);
    CALL(&b, SS_WAIT_STREAM, "cudaMemset into a cudaMallocHost buffer, no kinds", .cbid = CB_Memset, .ptr = PIN_A + 8, .bytes = 4096);
    CALL(&b, SS_WAIT_STREAM, "cudaMemset, nothing known (worst case)", .cbid = CB_Memset, .ptr = 0x3000, .bytes = 4096);
    CALL(&b, SS_WAIT_NONE, "cudaMemsetAsync pinned", .cbid = CB_MemsetAsync, .mem_dst = N, .bytes = 4096);

    /* the rest of the host column */
    CALL(&b, SS_WAIT_STREAM, "cudaStreamSynchronize", .cbid = CB_StreamSynchronize);
    CALL(&b, SS_WAIT_EVENT, "cudaEventSynchronize", .cbid = CB_EventSynchronize);
    CALL(&b, SS_WAIT_QUERY, "cudaStreamQuery success", .cbid = CB_StreamQuery);
    CALL(&b, SS_WAIT_NONE, "cudaStreamQuery not ready", .cbid = CB_StreamQuery, .ret = 600);
    CALL(&b, SS_WAIT_QUERY, "cudaEventQuery success", .cbid = CB_EventQuery);
    CALL(&b, SS_WAIT_QUERY, "cudaEventElapsedTime success", .cbid = CB_EventElapsedTime);
    CALL(&b, SS_WAIT_NONE, "cudaEventDestroy", .cbid = CB_EventDestroy);
    CALL(&b, SS_WAIT_DEVICE, "cudaDeviceSynchronize", .cbid = CB_DeviceSynchronize);
    CALL(&b, SS_WAIT_NONE, "cudaLaunchKernel", .cbid = CB_LaunchKernel);
    c = CALL(&b, SS_WAIT_STREAM, "cudaGraphLaunch, a memcpy node into pageable memory", .cbid = CB_GraphLaunch, .stream = 0);
    tb_memcpy(&b, c, 2, D, P);
    c = CALL(&b, SS_WAIT_NONE, "cudaGraphLaunch, memcpy node into pinned memory", .cbid = CB_GraphLaunch, .stream = 0);
    tb_memcpy(&b, c, 2, D, N);
    CALL(&b, SS_WAIT_NONE, "cudaMemcpy device->pageable that failed", .cbid = CB_Memcpy, .arg = D2H, .mem_dst = P,
         .mem_src = D, .ret = 1);
    CALL(&b, SS_WAIT_NONE, "a call the table does not list", .cbid = CB_Unknown);
    CALL(&b, SS_WAIT_NONE, "cudaFreeAsync", .cbid = CB_FreeAsync, .ptr = DEV_B);
    CALL(&b, SS_WAIT_DEVICE, "cudaFree", .cbid = CB_Free, .ptr = DEV_A);
    CALL(&b, SS_WAIT_DEVICE, "cudaDeviceReset", .cbid = CB_DeviceReset);

    /* driver-API twins: direction from the name (arg = the cudaMemcpyKind the
     * shim writes for it), kinds as the shim asks them, the same host waits */
    CALL(&b, SS_WAIT_NONE, "cuMemAllocHost", .cbid = DB_MemAllocHost, .ptr = PIN_B, .bytes = 1 << 20);
    CALL(&b, SS_WAIT_STREAM_PRIOR, "cuMemcpyHtoD pageable", .cbid = DB_MemcpyHtoD, .arg = H2D, .mem_dst = D, .mem_src = P);
    CALL(&b, SS_WAIT_STREAM, "cuMemcpyHtoD from a cuMemAllocHost buffer (allocation kind)", .cbid = DB_MemcpyHtoD,
         .arg = H2D, .mem_dst = D, .ptr2 = PIN_B + 64);
    CALL(&b, SS_WAIT_STREAM, "cuMemcpyDtoH, host kind unknown", .cbid = DB_MemcpyDtoH, .arg = D2H, .mem_src = D);
    CALL(&b, SS_WAIT_STREAM, "cuMemcpyDtoHAsync pageable", .cbid = DB_MemcpyDtoHAsync, .arg = D2H, .mem_dst = P, .mem_src = D);
    CALL(&b, SS_WAIT_NONE, "cuMemcpyDtoHAsync_ptsz pinned", .cbid = DB_MemcpyDtoHAsync_ptsz, .arg = D2H, .mem_dst = N, .mem_src = D);
    CALL(&b, SS_WAIT_NONE, "cuMemcpyHtoDAsync pageable (staged)", .cbid = DB_MemcpyHtoDAsync, .arg = H2D, .mem_dst = D, .mem_src = P);
    CALL(&b, SS_WAIT_NONE, "cuMemsetD32 device", .cbid = DB_MemsetD32, .mem_dst = D, .ptr = DEV_A, .bytes = 4096);
    CALL(&b, SS_WAIT_STREAM, "cuStreamSynchronize", .cbid = DB_StreamSynchronize);
    CALL(&b, SS_WAIT_EVENT, "cuEventSynchronize", .cbid = DB_EventSynchronize);
    CALL(&b, SS_WAIT_DEVICE, "cuCtxSynchronize", .cbid = DB_CtxSynchronize);
    CALL(&b, SS_WAIT_NONE, "cuLaunchKernel", .cbid = DB_LaunchKernel);
    c = CALL(&b, SS_WAIT_STREAM, "cuGraphLaunch, a memcpy node into pageable memory", .cbid = DB_GraphLaunch, .stream = 0);
    tb_memcpy(&b, c, 2, D, P);
    CALL(&b, SS_WAIT_NONE, "cuMemFreeAsync", .cbid = DB_MemFreeAsync, .ptr = DEV_B);
    CALL(&b, SS_WAIT_DEVICE, "cuMemFree", .cbid = DB_MemFree, .ptr = DEV_A);
    CALL(&b, SS_WAIT_NONE, "a driver call the table does not list", .cbid = DB_Unlisted);

    if (b.used) CHECK(ss_writer_write_block(&b.w, b.buf, b.used, b.count) == 0, "write block");
    ss_writer_close(&b.w);
}

static void test_host_waits(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/host_wait.sstrace", dir);
    write_trace(path);
    char err[256] = "";
    ss_model *m = ss_model_load(path, err, sizeof err);
    CHECK(m != NULL, "load %s: %s", path, err);
    if (!m) return;
    CHECK(m->ncalls == (uint32_t)nexpects, "%u calls, %d written", m->ncalls, nexpects);
    int checked = 0;
    for (int i = 0; i < nexpects; i++) {
        const ss_call *c = NULL;
        for (uint32_t k = 0; k < m->ncalls; k++)
            if (m->calls[k].rec->t_enter == expects[i].t) { c = &m->calls[k]; break; }
        CHECK(c != NULL, "%s: call not in the model", expects[i].what);
        if (!c) continue;
        ss_host_wait got = ss_call_host_wait(m, c);
        CHECK(got == expects[i].want, "%s (%s): waits %s, want %s", expects[i].what, ss_model_call_name(m, c),
              ss_host_wait_name(got), ss_host_wait_name(expects[i].want));
        checked++;
    }
    /* the free of a cudaMallocAsync-style buffer is stream-ordered, yet still
     * ends the allocation like cudaFree does */
    int32_t a = ss_model_alloc_at(m, DEV_B, tnext);
    CHECK(a < 0, "cudaFreeAsync ended the allocation");
    printf("host waits: %d calls checked\n", checked);
    ss_model_free(m);
}

int main(int argc, char **argv)
{
    const char *tab = argc > 1 ? argv[1] : "preload/cuda_api.tab";
    char dir[] = "/tmp/ss_api_table_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    test_table_rows(tab);
    test_classes();
    test_host_waits(dir);
    char path[600];
    snprintf(path, sizeof path, "%s/host_wait.sstrace", dir);
    unlink(path);
    rmdir(dir);
    if (failures) { fprintf(stderr, "%d check(s) failed\n", failures); return 1; }
    printf("ok\n");
    return 0;
}
