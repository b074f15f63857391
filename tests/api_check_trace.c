/*
 * Reads the trace that tests/api_prog.c left under the shim (through
 * include/syncsight/trace_io.h's reader) and checks it against what the
 * program really did, given as "key value" lines (api_prog's stdout):
 * which records exist, their enter/exit times, return codes, stream/bytes/
 * memory-kind slots, the _ptsz flag, kernel parameters and their offsets in
 * the parameter buffer, API names once per cbid, and the stream record.
 * Prints each failed check; exit 1 if any.
 *
 *   api_check_trace TRACE EXPECTED_FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syncsight/trace_io.h"
#include "api_expected.h"

/* CUPTI runtime cbids (cupti_runtime_cbid.h), spelled out so that this test
 * does not depend on the CUPTI headers. */
enum {
    CB_SET_DEVICE = 16, CB_FREE = 22, CB_MEMCPY = 31, CB_MEMCPY_ASYNC = 41, CB_STREAM_QUERY = 132,
    CB_STREAM_CREATE_WITH_FLAGS = 198, CB_LAUNCH_KERNEL = 211, CB_MEMCPY_ASYNC_PTSZ = 225,
    CB_GRAPH_ADD_KERNEL_NODE = 289, CB_GRAPH_ADD_MEMSET_NODE = 293, CB_GRAPH_ADD_MEMCPY_NODE_1D = 352,
    CB_GRAPH_ADD_NODE = 460,
};

#define MAX_API 64
static ss_api_rec api[MAX_API];
static uint64_t api_params[MAX_API][32];
static uint16_t api_offsets[MAX_API][32];
static int napi;
static int name_count[1024];
static char names[1024][64];
static ss_stream_rec streams[8];
static int nstreams;
static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

/* The n-th (0-based) API record with this cbid, or NULL. */
static const ss_api_rec *find(uint32_t cbid, int nth, int *index)
{
    for (int i = 0; i < napi; i++) {
        if (api[i].cbid == cbid && nth-- == 0) {
            if (index)
                *index = i;
            return &api[i];
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: api_check_trace TRACE EXPECTED_FILE\n");
        return 2;
    }
    char err[256];
    ss_reader *r = ss_reader_open(argv[1], err, sizeof err);
    if (r == NULL) {
        fprintf(stderr, "api_check_trace: %s: %s\n", argv[1], err);
        return 2;
    }
    const ss_rec_hdr *h;
    int st;
    while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
        if (h->type == SS_REC_API && napi < MAX_API) {
            memcpy(&api[napi], h, sizeof(ss_api_rec));
            const ss_api_rec *a = (const ss_api_rec *)h;
            /* launches: the values, then their parameter-buffer offsets */
            uint32_t per = (a->flags & SS_API_F_PARAM_OFFSETS) ? 10u : 8u;
            CHECK(h->size == SS_REC_ALIGN(sizeof(ss_api_rec) + per * a->nparams),
                  "API record size %u does not match nparams %u", h->size, a->nparams);
            CHECK(!(a->flags & SS_API_F_PARAM_OFFSETS) == (a->nparams == 0),
                  "API record (cbid %u): %u params, offsets flag %d", a->cbid, a->nparams,
                  !!(a->flags & SS_API_F_PARAM_OFFSETS));
            if (a->nparams <= 32) {
                memcpy(api_params[napi], ss_rec_tail(h, sizeof(ss_api_rec)), 8u * a->nparams);
                if (a->flags & SS_API_F_PARAM_OFFSETS)
                    memcpy(api_offsets[napi], (const char *)ss_rec_tail(h, sizeof(ss_api_rec)) + 8u * a->nparams,
                           2u * a->nparams);
            }
            napi++;
        } else if (h->type == SS_REC_API_NAME) {
            const ss_api_name_rec *n = (const ss_api_name_rec *)h;
            if (n->cbid < 1024) {
                name_count[n->cbid]++;
                size_t len = n->len < 63 ? n->len : 63;
                memcpy(names[n->cbid], ss_rec_tail(h, sizeof *n), len);
                names[n->cbid][len] = 0;
            }
        } else if (h->type == SS_REC_STREAM && nstreams < 8) {
            memcpy(&streams[nstreams++], h, sizeof(ss_stream_rec));
        }
    }
    CHECK(st == SS_READ_END, "trace did not end cleanly: %s", ss_reader_error(r));
    ss_reader_close(r);

    const char *ex = argv[2];
    uint64_t stream = expected(ex, "stream"), pageable = expected(ex, "pageable");
    uint64_t device = expected(ex, "device"), pinned = expected(ex, "pinned");
    uint64_t managed = expected(ex, "managed"), stub = expected(ex, "stub"), kernel = expected(ex, "kernel");

    CHECK(napi == 17, "expected 17 API records, found %d", napi);
    for (int i = 0; i < napi; i++) {
        CHECK(api[i].flags & SS_API_F_INTERPOSER, "record %d (cbid %u) lacks SS_API_F_INTERPOSER", i, api[i].cbid);
        CHECK(api[i].t_exit >= api[i].t_enter && api[i].t_enter != 0, "record %d: bad enter/exit times", i);
        CHECK(api[i].tid != 0, "record %d: no tid", i);
        if (api[i].cbid != CB_SET_DEVICE)
            CHECK(api[i].device == 1, "record %d (cbid %u): device %d, expected 1 (set by cudaSetDevice)",
                  i, api[i].cbid, api[i].device);
    }

    const ss_api_rec *a;
    CHECK((a = find(CB_SET_DEVICE, 0, NULL)) && a->arg == 1 && a->ret == 0 && a->device == 1,
          "cudaSetDevice(1) record wrong or missing");

    CHECK((a = find(CB_STREAM_CREATE_WITH_FLAGS, 0, NULL)) && a->stream == stream && a->arg == 1 && a->ret == 0,
          "cudaStreamCreateWithFlags record: new stream handle or flags wrong");
    CHECK(nstreams == 1 && streams[0].handle == stream && streams[0].kind == SS_STREAM_NON_BLOCKING &&
          streams[0].flags == 1 && streams[0].device == 1,
          "SS_REC_STREAM for the created stream missing or wrong");

    a = find(CB_MEMCPY_ASYNC, 0, NULL);
    CHECK(a && a->ret == 0 && a->stream == stream && a->ptr == device && a->ptr2 == pageable &&
          a->bytes == 1024 && a->arg == 1 /* HostToDevice */ && a->mem_dst == SS_MEM_DEVICE &&
          a->mem_src == SS_MEM_PAGEABLE && !(a->flags & SS_API_F_PTSZ),
          "first cudaMemcpyAsync: slots wrong (ret %d bytes %llu dst kind %u src kind %u)",
          a ? a->ret : -1, a ? (unsigned long long)a->bytes : 0ull, a ? a->mem_dst : 0, a ? a->mem_src : 0);
    a = find(CB_MEMCPY_ASYNC, 1, NULL);
    CHECK(a && a->ret == 1 /* cudaErrorInvalidValue */ && a->bytes == 13, "failing cudaMemcpyAsync: ret not recorded");

    a = find(CB_MEMCPY_ASYNC_PTSZ, 0, NULL);
    CHECK(a && (a->flags & SS_API_F_PTSZ) && a->stream == 0 && a->ptr == pinned && a->ptr2 == device &&
          a->bytes == 64 && a->arg == 2 && a->mem_dst == SS_MEM_PINNED && a->mem_src == SS_MEM_DEVICE,
          "cudaMemcpyAsync_ptsz: PTSZ flag or slots wrong");

    a = find(CB_MEMCPY, 0, NULL);
    CHECK(a && a->t_exit - a->t_enter >= 20000000ull && a->t_exit - a->t_enter < 2000000000ull &&
          a->ptr == device && a->ptr2 == managed && a->mem_src == SS_MEM_MANAGED && a->mem_dst == SS_MEM_DEVICE && a->arg == 4,
          "cudaMemcpy: the 20 ms block is not in enter/exit (%llu ns) or kinds wrong",
          a ? (unsigned long long)(a->t_exit - a->t_enter) : 0ull);

    a = find(CB_STREAM_QUERY, 0, NULL);
    CHECK(a && a->ret == 600 && a->stream == stream, "cudaStreamQuery: cudaErrorNotReady not recorded");

    int i1 = -1, i2 = -1;
    a = find(CB_LAUNCH_KERNEL, 0, &i1);
    CHECK(a && a->func == stub && a->arg == 6 && a->arg2 == 32 && a->stream == 0 && a->nparams == 2 &&
          !(a->flags & SS_API_F_VIA_CUDA_LAUNCH_KERNEL) && !(a->flags & SS_API_F_PARAMS_TRUNCATED),
          "cudaLaunchKernel (stub): func/grid/block/params wrong (nparams %u)", a ? a->nparams : 0);
    if (a && a->nparams == 2) {
        CHECK(api_params[i1][0] == 0x1111000 && api_params[i1][1] == 0x2222000,
              "cudaLaunchKernel: pointer parameters not recorded in order");
        /* (void *a, int n, void *b): a at 0, b at 16 */
        CHECK(api_offsets[i1][0] == 0 && api_offsets[i1][1] == 16,
              "cudaLaunchKernel: parameter offsets %u,%u, want 0,16", api_offsets[i1][0], api_offsets[i1][1]);
    }
    a = find(CB_LAUNCH_KERNEL, 1, &i2);
    CHECK(a && a->func == kernel && (a->flags & SS_API_F_VIA_CUDA_LAUNCH_KERNEL) &&
          (a->flags & SS_API_F_PARAMS_TRUNCATED) && a->nparams == 32 && a->stream == stream &&
          a->arg == 4 && a->arg2 == 128,
          "__cudaLaunchKernel: via flag, truncation or params wrong (nparams %u flags %#x)",
          a ? a->nparams : 0, a ? a->flags : 0);
    if (a && a->nparams == 32) {
        CHECK(api_params[i2][0] == 0xA000 && api_params[i2][31] == 0xA000 + 31,
              "__cudaLaunchKernel: parameter values wrong");
        /* 40 pointers back to back: the 32 stored are at 0, 8, ..., 248 */
        for (int k = 0; k < 32; k++)
            CHECK(api_offsets[i2][k] == 8 * k, "__cudaLaunchKernel: parameter %d at offset %u, want %d", k,
                  api_offsets[i2][k], 8 * k);
    }

    /* graph nodes: what each will touch, nothing on a stream */
    int ik = -1;
    a = find(CB_GRAPH_ADD_KERNEL_NODE, 0, &ik);
    CHECK(a && a->ret == 0 && a->func == stub && a->stream == 0 && a->nparams == 2 &&
          (a->flags & SS_API_F_PARAM_OFFSETS),
          "cudaGraphAddKernelNode: func or parameters wrong (nparams %u)", a ? a->nparams : 0);
    if (a && a->nparams == 2)
        CHECK(api_params[ik][0] == 0x1111000 && api_params[ik][1] == 0x2222000 && api_offsets[ik][0] == 0 &&
              api_offsets[ik][1] == 16, "cudaGraphAddKernelNode: the kernel's pointer parameters or offsets wrong");
    a = find(CB_GRAPH_ADD_KERNEL_NODE, 1, NULL);
    CHECK(a && a->ret == 1 /* cudaErrorInvalidValue */ && a->func == 0 && a->nparams == 0,
          "cudaGraphAddKernelNode(NULL params): not recorded as the failed call it was");
    a = find(CB_GRAPH_ADD_MEMCPY_NODE_1D, 0, NULL);
    CHECK(a && a->ret == 0 && a->ptr == device && a->ptr2 == pinned && a->bytes == 256 && a->arg == 1 &&
          a->mem_dst == SS_MEM_DEVICE && a->mem_src == SS_MEM_PINNED && a->nparams == 0,
          "cudaGraphAddMemcpyNode1D: range, kind or memory kinds wrong");
    a = find(CB_GRAPH_ADD_MEMSET_NODE, 0, NULL);
    /* 3 rows of 16 4-byte elements, 512 bytes apart: 2 * 512 + 64 */
    CHECK(a && a->ret == 0 && a->ptr == device && a->bytes == 1088,
          "cudaGraphAddMemsetNode: range wrong (%llu bytes)", a ? (unsigned long long)a->bytes : 0ull);

    /* the generic cudaGraphAddNode, read by node type: the same kernel,
     * copy and memset as above */
    int ig = -1;
    a = find(CB_GRAPH_ADD_NODE, 0, &ig);
    CHECK(a && a->ret == 0 && a->func == stub && a->nparams == 2 && (a->flags & SS_API_F_PARAM_OFFSETS) &&
          api_params[ig][0] == 0x1111000 && api_params[ig][1] == 0x2222000 && api_offsets[ig][1] == 16,
          "cudaGraphAddNode (kernel): func or parameters wrong (nparams %u)", a ? a->nparams : 0);
    a = find(CB_GRAPH_ADD_NODE, 1, NULL);
    CHECK(a && a->ret == 0 && a->ptr == device && a->ptr2 == pinned && a->bytes == 256 && a->func == 0 &&
          a->nparams == 0, "cudaGraphAddNode (memcpy): range wrong (%llu bytes)", a ? (unsigned long long)a->bytes : 0ull);
    a = find(CB_GRAPH_ADD_NODE, 2, NULL);
    CHECK(a && a->ret == 0 && a->ptr == device && a->bytes == 1088 && a->nparams == 0,
          "cudaGraphAddNode (memset): range wrong (%llu bytes)", a ? (unsigned long long)a->bytes : 0ull);

    a = find(CB_FREE, 0, NULL);
    CHECK(a && a->ptr == device && a->t_exit - a->t_enter >= 10000000ull, "cudaFree: ptr or the 10 ms block wrong");

    /* One name per cbid used, spelled as CUPTI does. */
    static const struct { uint32_t cbid; const char *name; } want[] = {
        { CB_SET_DEVICE, "cudaSetDevice" }, { CB_FREE, "cudaFree" }, { CB_MEMCPY, "cudaMemcpy" },
        { CB_MEMCPY_ASYNC, "cudaMemcpyAsync" }, { CB_STREAM_QUERY, "cudaStreamQuery" },
        { CB_STREAM_CREATE_WITH_FLAGS, "cudaStreamCreateWithFlags" }, { CB_LAUNCH_KERNEL, "cudaLaunchKernel" },
        { CB_MEMCPY_ASYNC_PTSZ, "cudaMemcpyAsync_ptsz" }, { CB_GRAPH_ADD_KERNEL_NODE, "cudaGraphAddKernelNode" },
        { CB_GRAPH_ADD_MEMCPY_NODE_1D, "cudaGraphAddMemcpyNode1D" }, { CB_GRAPH_ADD_MEMSET_NODE, "cudaGraphAddMemsetNode" },
        { CB_GRAPH_ADD_NODE, "cudaGraphAddNode" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(name_count[want[i].cbid] == 1 && strcmp(names[want[i].cbid], want[i].name) == 0,
              "SS_REC_API_NAME for cbid %u: %d records, name '%s' (want one '%s')", want[i].cbid,
              name_count[want[i].cbid], names[want[i].cbid], want[i].name);

    if (failures == 0)
        printf("api_check_trace: %d API records verified\n", napi);
    return failures == 0 ? 0 : 1;
}
