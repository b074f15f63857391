/*
 * The analyzer's side of trace minor version 1: ss_model_load collects the
 * SS_REC_CUBIN records (m->cubins), ss_cubin_image returns an image's bytes
 * (none when the record is shorter than its size field says), and
 * ss_call_param_offsets returns a launch's parameter-buffer offsets only when
 * the record carries them (SS_API_F_PARAM_OFFSETS).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncsight/trace_io.h"
#include "model.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
                              fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define T0 1000000000ull

static uint8_t buf[1 << 16] __attribute__((aligned(8)));
static uint32_t used, count;

static void *rec(uint16_t type, uint32_t fixed, uint32_t tail)
{
    void *r = ss_rec_reserve(buf, sizeof buf, &used, type, fixed, tail);
    if (!r) { fprintf(stderr, "test trace does not fit one block\n"); exit(1); }
    count++;
    return r;
}

/* A cudaLaunchKernel record with `n` values; offsets too when `offs`. */
static void put_launch(uint64_t t, const uint64_t *vals, const uint16_t *offs, uint8_t n)
{
    ss_api_rec *a = rec(SS_REC_API, sizeof *a, n * (offs ? 10u : 8u));
    a->cbid = 211;
    a->tid = 7;
    a->t_enter = t;
    a->t_exit = t + 100;
    a->func = 0x401000;
    a->nparams = n;
    a->device = 0;
    a->flags = SS_API_F_INTERPOSER | (offs ? SS_API_F_PARAM_OFFSETS : 0);
    memcpy(a + 1, vals, 8u * n);
    if (offs)
        memcpy((char *)(a + 1) + 8u * n, offs, 2u * n);
}

static void put_cubin(uint32_t module_id, const uint8_t *image, uint32_t size)
{
    ss_cubin_rec *c = rec(SS_REC_CUBIN, sizeof *c, size);
    c->hash = 0x1000 + module_id;
    c->time = T0 + module_id;
    c->size = size;
    c->module_id = module_id;
    memcpy(c + 1, image, size);
}

int main(void)
{
    char dir[] = "/tmp/ss_test_cubin.XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    char path[256];
    snprintf(path, sizeof path, "%s/t.sstrace", dir);

    ss_api_name_rec *nm = rec(SS_REC_API_NAME, sizeof *nm, 16);
    nm->cbid = 211;
    nm->len = 16;
    memcpy(nm + 1, "cudaLaunchKernel", 16);
    const uint64_t vals[3] = { 0x7f0000001000ull, 0x7f0000002000ull, 0x7f0000002040ull };
    const uint16_t offs[3] = { 0, 16, 32 };
    put_launch(T0 + 1000, vals, offs, 3);      /* with offsets */
    put_launch(T0 + 2000, vals, NULL, 3);      /* minor-0 style: values only */
    uint8_t img1[100], img2[13];
    for (unsigned i = 0; i < sizeof img1; i++) img1[i] = (uint8_t)(i * 7);
    for (unsigned i = 0; i < sizeof img2; i++) img2[i] = (uint8_t)(0xA0 + i);
    put_cubin(1, img1, sizeof img1);
    put_cubin(2, img2, sizeof img2);

    ss_file_header hdr;
    ss_file_header_init(&hdr, T0, 0);
    ss_writer w;
    if (ss_writer_open(&w, path, &hdr) != 0 || ss_writer_write_block(&w, buf, used, count) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        return 2;
    }
    ss_writer_close(&w);

    char err[256];
    ss_model *m = ss_model_load(path, err, sizeof err);
    CHECK(m != NULL, "load: %s", err);
    if (m) {
        CHECK(m->ncubins == 2, "%u cubins", m->ncubins);
        for (uint32_t i = 0; i < m->ncubins; i++) {
            uint32_t len = 0;
            const uint8_t *img = ss_cubin_image(m->cubins[i], &len);
            const uint8_t *want = m->cubins[i]->module_id == 1 ? img1 : img2;
            uint32_t want_len = m->cubins[i]->module_id == 1 ? sizeof img1 : sizeof img2;
            CHECK(len == want_len && memcmp(img, want, len) == 0, "cubin %u: %u bytes", i, len);
        }
        CHECK(m->ncalls == 2, "%u calls", m->ncalls);
        int with = 0, without = 0;
        for (uint32_t i = 0; i < m->ncalls; i++) {
            uint32_t n = 0;
            const uint64_t *p = ss_call_params(&m->calls[i], &n);
            const uint16_t *o = ss_call_param_offsets(&m->calls[i]);
            CHECK(n == 3 && memcmp(p, vals, sizeof vals) == 0, "call %u params", i);
            if (m->calls[i].rec->flags & SS_API_F_PARAM_OFFSETS) {
                with++;
                CHECK(o != NULL && o[0] == 0 && o[1] == 16 && o[2] == 32, "call %u offsets", i);
            } else {
                without++;
                CHECK(o == NULL, "call %u: offsets without the flag", i);
            }
        }
        CHECK(with == 1 && without == 1, "%d calls with offsets, %d without", with, without);
        ss_model_free(m);
    }

    /* A record shorter than its size field: no image, whatever it claims. */
    ss_cubin_rec short_rec;
    memset(&short_rec, 0, sizeof short_rec);
    short_rec.h.type = SS_REC_CUBIN;
    short_rec.h.size = sizeof short_rec;
    short_rec.size = 1;
    uint32_t len = 99;
    (void)ss_cubin_image(&short_rec, &len);
    CHECK(len == 0, "short record gives %u bytes", len);

    unlink(path);
    rmdir(dir);
    if (failures) {
        fprintf(stderr, "test_analyzer_cubin: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_analyzer_cubin: ok\n");
    return 0;
}
