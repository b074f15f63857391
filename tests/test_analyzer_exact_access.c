/*
 * SS_REC_KERNEL_ACCESS (exact memory mode) through the real writer, reader
 * and model: a trace with three launch calls, two of them with an access
 * record (one joined by (tid, t_enter), one only by correlation id), checked
 * through ss_call_exact_access / ss_exact_access_entries /
 * ss_exact_access_word; a record whose entry count overruns its size makes
 * its block corrupt; `syncsight dump` output is checked by the shell tests.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "syncsight/trace_io.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define CBID_LAUNCH 211u   /* CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 */
#define BUF 0x7f0000000000ull
#define CTR 0x7f0000100000ull

static void put_name(uint8_t *buf, uint32_t cap, uint32_t *used)
{
    const char *name = "cudaLaunchKernel";
    ss_api_name_rec *n = ss_rec_reserve(buf, cap, used, SS_REC_API_NAME, sizeof *n, (uint32_t)strlen(name));
    n->cbid = CBID_LAUNCH;
    n->len = (uint32_t)strlen(name);
    memcpy(n + 1, name, n->len);
}

/* A launch with params {p0, 4096, p2} at offsets {0, 8, 16}. */
static void put_launch(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t tid, uint64_t t, uint32_t corr,
                       uint64_t p0, uint64_t p2)
{
    ss_api_rec *a = ss_rec_reserve(buf, cap, used, SS_REC_API, sizeof *a, 3 * 10);
    a->cbid = CBID_LAUNCH;
    a->tid = tid;
    a->t_enter = t;
    a->t_exit = t + 100;
    a->corr = corr;
    a->func = 0x1234;
    a->nparams = 3;
    a->flags = SS_API_F_INTERPOSER | SS_API_F_PARAM_OFFSETS;
    a->device = 0;
    uint64_t p[3] = { p0, 4096, p2 };
    uint16_t off[3] = { 0, 8, 16 };
    memcpy(a + 1, p, sizeof p);
    memcpy((char *)(a + 1) + sizeof p, off, sizeof off);
}

static ss_kernel_access_rec *put_access(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t tid, uint64_t t,
                                        uint32_t corr, uint32_t n)
{
    ss_kernel_access_rec *k = ss_rec_reserve(buf, cap, used, SS_REC_KERNEL_ACCESS, sizeof *k,
                                             n * (uint32_t)sizeof(ss_kernel_access_entry));
    k->tid = tid;
    k->t_enter = t;
    k->corr = corr;
    k->func = 0xf00;
    k->nentries = n;
    k->nallocs = n;
    k->outside_accesses = 3;
    return k;
}

int main(void)
{
    char dir[] = "/tmp/ss_test_exact_access.XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/t.sstrace", dir);
    snprintf(bad, sizeof bad, "%s/bad.sstrace", dir);

    static uint8_t buf[1 << 16];
    uint32_t used = 0;
    put_name(buf, sizeof buf, &used);
    put_launch(buf, sizeof buf, &used, 7, 1000, 11, BUF + 4096, CTR);        /* joined by (tid, t) */
    put_launch(buf, sizeof buf, &used, 7, 2000, 12, BUF, CTR + 32);          /* joined by corr only */
    put_launch(buf, sizeof buf, &used, 7, 3000, 13, BUF, CTR);               /* no record */
    ss_kernel_access_rec *k = put_access(buf, sizeof buf, &used, 7, 1000, 11, 2);
    ss_kernel_access_entry *e = (ss_kernel_access_entry *)(k + 1);
    e[0] = (ss_kernel_access_entry){ .word = 0, .offset = 0, .flags = SS_KACCESS_E_WRITE, .value = BUF + 4096,
                                     .alloc_lo = BUF, .alloc_hi = BUF + 16384,
                                     .write_lo = BUF + 4096, .write_hi = BUF + 8192 };
    e[1] = (ss_kernel_access_entry){ .word = 2, .offset = 16,
                                     .flags = SS_KACCESS_E_READ | SS_KACCESS_E_WRITE | SS_KACCESS_E_ATOMIC,
                                     .value = CTR, .alloc_lo = CTR, .alloc_hi = CTR + 256,
                                     .read_lo = CTR, .read_hi = CTR + 4, .write_lo = CTR, .write_hi = CTR + 4 };
    k = put_access(buf, sizeof buf, &used, 7, 1999, 12, 1);   /* t_enter differs: the corr joins it */
    e = (ss_kernel_access_entry *)(k + 1);
    /* word index stale (1): the offset and value find word 2 */
    e[0] = (ss_kernel_access_entry){ .word = 1, .offset = 16, .flags = SS_KACCESS_E_READ, .value = CTR + 32,
                                     .alloc_lo = CTR, .alloc_hi = CTR + 256, .read_lo = CTR + 32, .read_hi = CTR + 36 };

    ss_file_header hdr;
    ss_file_header_init(&hdr, 1, 1);
    ss_writer w;
    CHECK(ss_writer_open(&w, path, &hdr) == 0, "open");
    CHECK(ss_writer_write_block(&w, buf, used, 6) == 0, "write");
    ss_writer_close(&w);

    char err[256] = "";
    ss_model *m = ss_model_load(path, err, sizeof err);
    CHECK(m != NULL, "load: %s", err);
    if (m) {
        CHECK(m->ncalls == 3, "calls %u", m->ncalls);
        CHECK(m->nxaccess == 2, "records %u", m->nxaccess);
        const ss_call *c0 = NULL, *c1 = NULL, *c2 = NULL;
        for (uint32_t i = 0; i < m->ncalls; i++) {
            const ss_call *c = &m->calls[i];
            if (c->rec->t_enter == 1000) c0 = c;
            if (c->rec->t_enter == 2000) c1 = c;
            if (c->rec->t_enter == 3000) c2 = c;
        }
        CHECK(c0 && c1 && c2, "calls found");
        if (c0 && c1 && c2) {
            CHECK(c0->cls == SS_API_LAUNCH, "class %u", c0->cls);
            const ss_kernel_access_rec *r0 = ss_call_exact_access(m, c0);
            CHECK(r0 != NULL && r0->t_enter == 1000 && r0->outside_accesses == 3, "join by (tid, t_enter)");
            uint32_t n = 0;
            const ss_kernel_access_entry *x = r0 ? ss_exact_access_entries(r0, &n) : NULL;
            CHECK(n == 2, "entries %u", n);
            if (n == 2) {
                CHECK(x[0].write_lo == BUF + 4096 && x[0].write_hi == BUF + 8192 && !(x[0].flags & SS_KACCESS_E_READ),
                      "slice write");
                CHECK(x[1].flags & SS_KACCESS_E_ATOMIC, "atomic flag");
                CHECK(ss_exact_access_word(c0, &x[0]) == 0, "word 0 -> %d", ss_exact_access_word(c0, &x[0]));
                CHECK(ss_exact_access_word(c0, &x[1]) == 2, "word 2 -> %d", ss_exact_access_word(c0, &x[1]));
            }
            const ss_kernel_access_rec *r1 = ss_call_exact_access(m, c1);
            CHECK(r1 != NULL && r1->corr == 12, "join by corr");
            x = r1 ? ss_exact_access_entries(r1, &n) : NULL;
            CHECK(x && n == 1 && ss_exact_access_word(c1, &x[0]) == 2, "stale word index resolved by offset/value");
            CHECK(ss_call_exact_access(m, c2) == NULL, "no record for the third launch");
        }
        ss_model_free(m);
    }

    /* An entry count larger than the record: the reader rejects the block. */
    used = 0;
    put_name(buf, sizeof buf, &used);
    k = put_access(buf, sizeof buf, &used, 7, 1000, 11, 1);
    k->nentries = 1000;
    CHECK(ss_writer_open(&w, bad, &hdr) == 0, "open bad");
    CHECK(ss_writer_write_block(&w, buf, used, 2) == 0, "write bad");
    ss_writer_close(&w);
    ss_reader *rd = ss_reader_open(bad, err, sizeof err);
    CHECK(rd != NULL, "open bad: %s", err);
    if (rd) {
        const ss_rec_hdr *h;
        int st, seen = 0;
        while ((st = ss_reader_next(rd, &h)) == SS_READ_OK)
            seen += h->type == SS_REC_KERNEL_ACCESS;
        CHECK(st == SS_READ_TRUNCATED && seen == 0, "overrunning record: status %d, seen %d", st, seen);
        ss_reader_close(rd);
    }
    CHECK(ss_rec_fixed_size(SS_REC_KERNEL_ACCESS) == sizeof(ss_kernel_access_rec), "fixed size");

    unlink(path);
    unlink(bad);
    rmdir(dir);
    if (failures) { fprintf(stderr, "%d failure(s)\n", failures); return 1; }
    printf("PASS exact access records: written, read, joined\n");
    return 0;
}
