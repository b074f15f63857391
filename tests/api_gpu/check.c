/*
 * Checks a trace of tests/api_gpu/prog.cu (see run.sh):
 *   check TRACE EXPECTED MODE PTSZ
 * MODE: "interposer" (shared cudart: records must come from the wrappers)
 * or "cupti" (static cudart: from the CUPTI callback path).  PTSZ: 1 for a
 * --default-stream per-thread build.  Checks: no call recorded twice
 * (distinct correlation ids), corr known for every record, the launch's
 * pointer parameters, the memory kinds of both async copies, the stream
 * record, the blocking cudaMemcpy, the names.  Exit 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syncsight/trace_io.h"

#define MAX 4096
static ss_api_rec api[MAX];
static uint64_t params[MAX][2];
static int napi, failures;
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static uint64_t expected(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char k[64];
    unsigned long long v;
    while (f && fscanf(f, "%63s %llu", k, &v) == 2)
        if (!strcmp(k, key)) { fclose(f); return v; }
    fprintf(stderr, "no %s in %s\n", key, path);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc != 5) { fprintf(stderr, "usage: check TRACE EXPECTED interposer|cupti PTSZ\n"); return 2; }
    int cupti_mode = !strcmp(argv[3], "cupti"), ptsz = atoi(argv[4]);
    char err[256];
    ss_reader *r = ss_reader_open(argv[1], err, sizeof err);
    if (!r) { fprintf(stderr, "%s: %s\n", argv[1], err); return 2; }
    const ss_rec_hdr *h;
    int nstream_ok = 0;
    uint64_t s = expected(argv[2], "stream");
    while (ss_reader_next(r, &h) == SS_READ_OK) {
        if (h->type == SS_REC_API && napi < MAX) {
            memcpy(&api[napi], h, sizeof(ss_api_rec));
            if (api[napi].nparams >= 2)
                memcpy(params[napi], ss_rec_tail(h, sizeof(ss_api_rec)), 16);
            napi++;
        } else if (h->type == SS_REC_STREAM) {
            const ss_stream_rec *sr = (const ss_stream_rec *)h;
            if (sr->handle == s && sr->kind == SS_STREAM_NON_BLOCKING)
                nstream_ok++;
        }
    }
    ss_reader_close(r);
    uint64_t d_dst = expected(argv[2], "d_dst"), d_src = expected(argv[2], "d_src");
    uint64_t pinned = expected(argv[2], "pinned"), pageable = expected(argv[2], "pageable");
    uint32_t cb_launch = ptsz ? 214 : 211, cb_async = ptsz ? 225 : 41, cb_memcpy = ptsz ? 215 : 31;
    int launch = 0, h2d = 0, d2h = 0, memcpy_sync = 0;
    for (int i = 0; i < napi; i++) {
        const ss_api_rec *a = &api[i];
        uint32_t want = cupti_mode ? SS_API_F_CUPTI_CB : SS_API_F_INTERPOSER;
        CHECK(a->flags & want, "record %d cbid %u: flags %#x lack %s", i, a->cbid, a->flags, argv[3]);
        CHECK(a->corr != 0, "record %d cbid %u: no correlation id", i, a->cbid);
        for (int j = 0; j < i; j++)
            CHECK(a->corr == 0 || api[j].corr != a->corr, "cbid %u corr %u recorded twice", a->cbid, a->corr);
        if (a->cbid == cb_launch && a->stream == s) {
            launch++;
            CHECK(a->nparams == 2 && params[i][0] == d_dst && params[i][1] == d_src,
                  "launch: nparams %u, params not (d_dst, d_src)", a->nparams);
            CHECK(!!(a->flags & SS_API_F_PTSZ) == ptsz, "launch: PTSZ flag wrong");
            if (!cupti_mode)
                CHECK(a->flags & SS_API_F_VIA_CUDA_LAUNCH_KERNEL, "launch: no VIA_CUDA_LAUNCH_KERNEL flag");
        }
        if (a->cbid == cb_async && a->ptr == d_src && a->ptr2 == pageable)
            h2d += a->mem_dst == SS_MEM_DEVICE && a->mem_src == SS_MEM_PAGEABLE;
        if (a->cbid == cb_async && a->ptr == pinned && a->ptr2 == d_dst)
            d2h += a->mem_dst == SS_MEM_PINNED && a->mem_src == SS_MEM_DEVICE;
        if (a->cbid == cb_memcpy)
            memcpy_sync += a->ptr == pageable && a->mem_dst == SS_MEM_PAGEABLE && a->t_exit > a->t_enter;
    }
    CHECK(launch == 1, "%d launch records on the stream (want 1)", launch);
    CHECK(h2d == 1, "H2D async copy: device <- pageable not recorded with its kinds");
    CHECK(d2h == 1, "D2H async copy: pinned <- device not recorded with its kinds");
    CHECK(memcpy_sync == 1, "cudaMemcpy (D2H into pageable) not recorded");
    CHECK(nstream_ok >= 1, "no SS_REC_STREAM for the non-blocking stream");
    if (!failures)
        printf("OK: %d API records (%s%s)\n", napi, argv[3], ptsz ? ", per-thread default stream" : "");
    return failures != 0;
}
