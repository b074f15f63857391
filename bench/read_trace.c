/*
 * ss-read-trace: read a trace through the shared reader and report what it
 * holds and how fast the reader goes (the floor under any analyzer time).
 * With --check it also verifies the invariants a recorded or generated trace
 * must keep, which is how ss-gen-trace is tested:
 *
 *   - the reader reaches a clean end (no truncated or corrupt block);
 *   - every API cbid has an SS_REC_API_NAME, every kernel/NVTX name and every
 *     referenced stack a definition, string/stack ids are unique;
 *   - every GPU record has end >= start, and an API record with the same
 *     correlation id that entered no later than the GPU work started;
 *   - GPU work (kernels, copies, memsets) on one stream never overlaps;
 *   - every API record has t_exit >= t_enter, and the calls of one thread do
 *     not overlap;
 *   - NVTX ranges have end >= start.
 *
 *     ss-read-trace [--check] [--quiet] FILE
 *
 * Exit status: 0 when the trace reads (and checks) clean, 1 otherwise.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "syncsight/trace_io.h"

typedef struct span { uint64_t key, start, end; } span;   /* key: stream id or tid */
typedef struct api_info { uint64_t t_enter; uint8_t seen; } api_info;

typedef struct vec { void *p; size_t n, cap, elem; } vec;
static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 1024;
        v->p = realloc(v->p, v->cap * v->elem);
        if (!v->p) {
            fprintf(stderr, "ss-read-trace: out of memory\n");
            exit(1);
        }
    }
    return (char *)v->p + v->elem * v->n++;
}

/* Bit sets keyed by small ids (cbids, string ids, stack ids). */
typedef struct bits { uint8_t *b; size_t n; } bits;
static int bits_test_set(bits *s, uint64_t i)
{
    if (i >= (1ull << 32))
        return -1;
    if (i / 8 >= s->n) {
        size_t n = s->n ? s->n : 64;
        while (n <= i / 8)
            n *= 2;
        s->b = realloc(s->b, n);
        if (!s->b) {
            fprintf(stderr, "ss-read-trace: out of memory\n");
            exit(1);
        }
        memset(s->b + s->n, 0, n - s->n);
        s->n = n;
    }
    int was = (s->b[i / 8] >> (i % 8)) & 1;
    s->b[i / 8] |= (uint8_t)(1u << (i % 8));
    return was;
}
static int bits_test(const bits *s, uint64_t i) { return i / 8 < s->n && ((s->b[i / 8] >> (i % 8)) & 1); }

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return 0;
}

static uint64_t errors;
#define FAIL_CHECK(...) do { if (errors++ < 20) { fprintf(stderr, "check: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* Spans sorted by (key, start) must not overlap within a key. */
static void check_no_overlap(vec *v, const char *what)
{
    qsort(v->p, v->n, sizeof(span), cmp_span);
    const span *s = v->p;
    for (size_t i = 1; i < v->n; i++)
        if (s[i].key == s[i - 1].key && s[i].start < s[i - 1].end)
            FAIL_CHECK("%s %" PRIu64 ": [%" PRIu64 ",%" PRIu64 ") overlaps [%" PRIu64 ",%" PRIu64 ")", what,
                       s[i].key, s[i].start, s[i].end, s[i - 1].start, s[i - 1].end);
}

int main(int argc, char **argv)
{
    int check = 0, quiet = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check"))
            check = 1;
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "usage: ss-read-trace [--check] [--quiet] FILE\n");
            return 2;
        } else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: ss-read-trace [--check] [--quiet] FILE\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char err[256];
    ss_reader *r = ss_reader_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "ss-read-trace: %s: %s\n", path, err);
        return 1;
    }
    uint64_t by_type[SS_REC_TYPE_MAX + 1] = { 0 }, total = 0;
    /* check state */
    bits names = { 0 }, strings = { 0 }, stacks = { 0 }, used_cbids = { 0 }, used_strings = { 0 },
         used_stacks = { 0 };
    vec apis = { .elem = sizeof(api_info) };     /* indexed by corr */
    vec gpu_spans = { .elem = sizeof(span) }, host_spans = { .elem = sizeof(span) };
    vec gpu_corr = { .elem = sizeof(span) };     /* key = corr, start = gpu start */

    const ss_rec_hdr *h;
    int rc;
    while ((rc = ss_reader_next(r, &h)) == SS_READ_OK) {
        total++;
        by_type[h->type < SS_REC_TYPE_MAX ? h->type : SS_REC_TYPE_MAX]++;
        if (!check)
            continue;
        switch (h->type) {
        case SS_REC_API_NAME:
            bits_test_set(&names, ((const ss_api_name_rec *)(const void *)h)->cbid);
            break;
        case SS_REC_STRING:
            if (bits_test_set(&strings, ((const ss_string_rec *)(const void *)h)->id))
                FAIL_CHECK("string id %u defined twice", ((const ss_string_rec *)(const void *)h)->id);
            break;
        case SS_REC_STACK:
            if (bits_test_set(&stacks, ((const ss_stack_rec *)(const void *)h)->id))
                FAIL_CHECK("stack id %u defined twice", ((const ss_stack_rec *)(const void *)h)->id);
            break;
        case SS_REC_API: {
            const ss_api_rec *a = (const void *)h;
            bits_test_set(&used_cbids, a->cbid);
            if (a->stack_id)
                bits_test_set(&used_stacks, a->stack_id);
            if (a->t_exit < a->t_enter)
                FAIL_CHECK("API corr %u exits before it enters", a->corr);
            span *s = vec_push(&host_spans);
            *s = (span){ a->tid, a->t_enter, a->t_exit };
            if (a->corr) {
                if (a->corr > (1u << 28)) {
                    FAIL_CHECK("correlation id %u too large to check", a->corr);
                    break;
                }
                while (apis.n <= a->corr)
                    memset(vec_push(&apis), 0, sizeof(api_info));
                api_info *ai = (api_info *)apis.p + a->corr;
                if (ai->seen)
                    FAIL_CHECK("correlation id %u used by two API records", a->corr);
                ai->seen = 1;
                ai->t_enter = a->t_enter;
            }
            break;
        }
        case SS_REC_KERNEL: case SS_REC_MEMCPY: case SS_REC_MEMSET:
        case SS_REC_SYNC: case SS_REC_CUDA_EVENT: {
            const ss_gpu_common *g = (const void *)h;
            if (g->end < g->start)
                FAIL_CHECK("GPU record type %u corr %u ends before it starts", h->type, g->corr);
            span *c = vec_push(&gpu_corr);
            *c = (span){ g->corr, g->start, g->end };
            if (h->type == SS_REC_KERNEL) {
                bits_test_set(&used_strings, ((const ss_kernel_rec *)(const void *)h)->name_id);
            }
            if (h->type == SS_REC_KERNEL || h->type == SS_REC_MEMCPY || h->type == SS_REC_MEMSET) {
                span *s = vec_push(&gpu_spans);
                *s = (span){ g->stream_id, g->start, g->end };
            }
            break;
        }
        case SS_REC_NVTX: {
            const ss_nvtx_rec *n = (const void *)h;
            if (n->end < n->start)
                FAIL_CHECK("NVTX range ends before it starts");
            bits_test_set(&used_strings, n->name_id);
            if (n->domain_id)
                bits_test_set(&used_strings, n->domain_id);
            break;
        }
        default:
            break;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    int status = 0;
    if (rc == SS_READ_TRUNCATED) {
        fprintf(stderr, "ss-read-trace: %s: %s\n", path, ss_reader_error(r));
        status = 1;
    }
    if (check) {
        for (size_t i = 0; i < used_cbids.n * 8; i++)
            if (bits_test(&used_cbids, i) && !bits_test(&names, i))
                FAIL_CHECK("cbid %zu used without an API_NAME record", i);
        for (size_t i = 1; i < used_strings.n * 8; i++)
            if (bits_test(&used_strings, i) && !bits_test(&strings, i))
                FAIL_CHECK("string id %zu used but never defined", i);
        for (size_t i = 1; i < used_stacks.n * 8; i++)
            if (bits_test(&used_stacks, i) && !bits_test(&stacks, i))
                FAIL_CHECK("stack id %zu used but never defined", i);
        const span *c = gpu_corr.p;
        for (size_t i = 0; i < gpu_corr.n; i++) {
            if (c[i].key >= apis.n || !((api_info *)apis.p)[c[i].key].seen) {
                FAIL_CHECK("GPU record with corr %" PRIu64 " has no API record", c[i].key);
                continue;
            }
            if (c[i].start < ((api_info *)apis.p)[c[i].key].t_enter)
                FAIL_CHECK("GPU work of corr %" PRIu64 " starts before its call", c[i].key);
        }
        check_no_overlap(&gpu_spans, "stream");
        check_no_overlap(&host_spans, "thread");
        if (errors) {
            fprintf(stderr, "ss-read-trace: %s: %" PRIu64 " check failures\n", path, errors);
            status = 1;
        }
    }
    uint64_t size = ss_reader_file_size(r);
    if (!quiet) {
        printf("%s: %" PRIu64 " records, %" PRIu64 " bytes (%.1f bytes/record), read in %.3f s: "
               "%.2f M records/s, %.0f MB/s, crc32: %s%s\n",
               path, total, size, total ? (double)size / (double)total : 0.0, secs,
               secs > 0 ? (double)total / secs / 1e6 : 0.0, secs > 0 ? (double)size / secs / 1e6 : 0.0,
               ss_crc32_impl(),
               check ? (status ? ", CHECK FAILED" : ", checks passed") : "");
        static const char *const type_names[SS_REC_TYPE_MAX + 1] = {
            "?", "meta", "string", "api_name", "api", "kernel", "memcpy", "memset", "sync", "cuda_event",
            "stream", "context", "nvtx", "note", "clock", "thread", "stack", "module", "pystack", "unknown" };
        for (int i = 1; i <= SS_REC_TYPE_MAX; i++)
            if (by_type[i])
                printf("  %-10s %" PRIu64 "\n", type_names[i], by_type[i]);
    }
    ss_reader_close(r);
    free(names.b); free(strings.b); free(stacks.b); free(used_cbids.b); free(used_strings.b);
    free(used_stacks.b); free(apis.p); free(gpu_spans.p); free(host_spans.p); free(gpu_corr.p);
    return status;
}
