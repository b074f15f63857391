/*
 * Reads the trace that tests/api_cupti_prog.c left under the shim with the
 * fake libcupti and checks, against what the program did:
 *   - the SS_REC_CUBIN records: exactly the images listed, each once, with
 *     its bytes, size, XXH64 hash and module id (image A was loaded by
 *     modules 1 and 2: either id, once);
 *   - the SS_NOTE_CUBIN_SKIPPED note: none when nothing was skipped, else
 *     exactly one whose value is the number given;
 *   - both struct-kernel launches (runtime-level layout, driver callback):
 *     candidate pointers and their parameter-buffer offsets.
 *
 *   api_cupti_check TRACE EXPECTED_FILE WRITTEN SKIPPED
 * WRITTEN: comma-separated module ids of the images that must be in the
 * trace ("-" for none); SKIPPED: the note's expected value (0: no note).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syncsight/hash64.h"
#include "syncsight/trace_io.h"
#include "api_fake_images.h"
#include "api_expected.h"

#define CB_LAUNCH_KERNEL 211
#define CB_GRAPH_KERNEL_NODE_SET_PARAMS 288
#define CB_GRAPH_ADD_KERNEL_NODE 289
#define MAX_CUBINS 16

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

/* The image a module id loads (2 loads image A, as 1 does). */
static uint32_t image_of(uint32_t module_id) { return module_id == 2 ? 1 : module_id; }

/* One launch record: 4 candidate pointers (a = 0x1111000, b = 0x2222000, and
 * s.p = buf + 16, s.q = buf + 64 from inside the struct) in the kernel's
 * parameter order, at the offsets its layout gives them. */
static void check_launch(const ss_rec_hdr *h, const uint64_t *want_val, const uint16_t *want_off, const char *what)
{
    const ss_api_rec *a = (const ss_api_rec *)h;
    CHECK(a->nparams == 4 && (a->flags & SS_API_F_PARAM_OFFSETS),
          "%s: nparams %u flags %#x (want 4 values with offsets)", what, a->nparams, a->flags);
    if (a->nparams != 4 || !(a->flags & SS_API_F_PARAM_OFFSETS))
        return;
    CHECK(h->size == SS_REC_ALIGN(sizeof(ss_api_rec) + 10u * 4), "%s: record size %u", what, h->size);
    const uint8_t *tail = ss_rec_tail(h, sizeof(ss_api_rec));
    for (int i = 0; i < 4; i++) {
        uint64_t v;
        uint16_t off;
        memcpy(&v, tail + 8 * i, 8);
        memcpy(&off, tail + 32 + 2 * i, 2);
        CHECK(v == want_val[i] && off == want_off[i], "%s: value %d = %#llx at offset %u, want %#llx at %u",
              what, i, (unsigned long long)v, off, (unsigned long long)want_val[i], want_off[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: api_cupti_check TRACE EXPECTED_FILE WRITTEN SKIPPED\n");
        return 2;
    }
    uint64_t buf = expected(argv[2], "buf"), struct_stub = expected(argv[2], "struct_stub");
    uint64_t foreign_stub = expected(argv[2], "foreign_stub");
    CHECK(expected(argv[2], "modules_loaded") == 1, "the program did not find the fake libcupti's driver");

    int want[FAKE_MODULES + 1] = { 0 }, seen[FAKE_MODULES + 1] = { 0 }, nwant = 0;
    if (strcmp(argv[3], "-") != 0) {
        for (char *p = argv[3]; *p; ) {
            long id = strtol(p, &p, 10);
            if (id < 1 || id > FAKE_MODULES || id == 2) {
                fprintf(stderr, "api_cupti_check: bad module list %s\n", argv[3]);
                return 2;
            }
            want[id] = 1;
            nwant++;
            if (*p == ',')
                p++;
        }
    }
    uint64_t want_skipped = strtoull(argv[4], NULL, 10);

    char err[256];
    ss_reader *r = ss_reader_open(argv[1], err, sizeof err);
    if (r == NULL) {
        fprintf(stderr, "api_cupti_check: %s: %s\n", argv[1], err);
        return 2;
    }
    CHECK(ss_reader_header(r)->version_minor >= 1, "header minor version %u < 1",
          ss_reader_header(r)->version_minor);
    const ss_rec_hdr *h;
    int st, ncubins = 0, nnotes = 0, nstruct = 0, nforeign = 0, nnode = 0, ncost = 0;
    char cost_msg[256] = "";
    uint64_t cost_ns = 0;
    uint64_t note_value = 0;
    while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
        if (h->type == SS_REC_CUBIN) {
            const ss_cubin_rec *c = (const ss_cubin_rec *)h;
            ncubins++;
            uint32_t img = image_of(c->module_id);
            CHECK(c->module_id >= 1 && c->module_id <= FAKE_MODULES, "cubin with module id %u", c->module_id);
            if (c->module_id < 1 || c->module_id > FAKE_MODULES)
                continue;
            seen[img]++;
            size_t n = fake_image_size(c->module_id);
            CHECK(c->size == n && h->size == SS_REC_ALIGN(sizeof *c + n) && c->time != 0,
                  "cubin of module %u: size %u (want %zu), record %u bytes", c->module_id, c->size, n, h->size);
            if (c->size != n)
                continue;
            uint8_t *image = malloc(n);
            fake_image_fill(c->module_id, image);
            CHECK(memcmp(ss_rec_tail(h, sizeof *c), image, n) == 0, "cubin of module %u: bytes differ", c->module_id);
            CHECK(c->hash == ss_xxh64(image, n, 0), "cubin of module %u: hash %#llx is not XXH64 of the image",
                  c->module_id, (unsigned long long)c->hash);
            free(image);
        } else if (h->type == SS_REC_NOTE && ((const ss_note_rec *)h)->code == SS_NOTE_CUBIN_COST) {
            const ss_note_rec *nr = (const ss_note_rec *)h;
            ncost++;
            snprintf(cost_msg, sizeof cost_msg, "%.*s", (int)(nr->len < 200 ? nr->len : 200),
                     (const char *)ss_rec_tail(h, sizeof *nr));
            cost_ns = nr->value;
        } else if (h->type == SS_REC_NOTE && ((const ss_note_rec *)h)->code == SS_NOTE_CUBIN_SKIPPED) {
            nnotes++;
            note_value = ((const ss_note_rec *)h)->value;
        } else if (h->type == SS_REC_API && (((const ss_api_rec *)h)->cbid == CB_GRAPH_ADD_KERNEL_NODE ||
                                             ((const ss_api_rec *)h)->cbid == CB_GRAPH_KERNEL_NODE_SET_PARAMS)) {
            /* the foreign kernel's node: its values from the driver call inside */
            static const uint16_t off[4] = { 8, 16, 32, 48 };
            const uint64_t val[4] = { 0x1111000, buf + 16, buf + 64, 0x2222000 };
            const ss_api_rec *a = (const ss_api_rec *)h;
            CHECK(a->func == foreign_stub, "graph-node record (cbid %u) of func %#llx, want foreign_stub", a->cbid,
                  (unsigned long long)a->func);
            nnode += a->cbid == CB_GRAPH_ADD_KERNEL_NODE ? 1 : 10;
            check_launch(h, val, off, a->cbid == CB_GRAPH_ADD_KERNEL_NODE
                                          ? "cudaGraphAddKernelNode through cuGraphAddKernelNode_v2"
                                          : "cudaGraphKernelNodeSetParams through cuGraphNodeSetParams");
        } else if (h->type == SS_REC_API && ((const ss_api_rec *)h)->cbid == CB_LAUNCH_KERNEL) {
            const ss_api_rec *a = (const ss_api_rec *)h;
            if (a->func == struct_stub) {
                /* (void *a, int n, void *b, S s), s at 24 */
                static const uint16_t off[4] = { 0, 16, 24, 40 };
                const uint64_t val[4] = { 0x1111000, 0x2222000, buf + 16, buf + 64 };
                nstruct++;
                check_launch(h, val, off, "launch through the runtime-level layout");
            } else if (a->func == foreign_stub) {
                /* (int n, void *a, S s, void *b): a at 8, s at 16, b at 48 */
                static const uint16_t off[4] = { 8, 16, 32, 48 };
                const uint64_t val[4] = { 0x1111000, buf + 16, buf + 64, 0x2222000 };
                nforeign++;
                check_launch(h, val, off, "launch through the driver callback");
            }
        }
    }
    CHECK(st == SS_READ_END, "trace did not end cleanly: %s", ss_reader_error(r));
    ss_reader_close(r);

    CHECK(ncubins == nwant, "%d cubin records, want %d", ncubins, nwant);
    for (int id = 1; id <= FAKE_MODULES; id++)
        if (id != 2)
            CHECK(seen[id] == want[id], "image of module %d: %d records, want %d", id, seen[id], want[id]);
    if (want_skipped == 0)
        CHECK(nnotes == 0, "%d SS_NOTE_CUBIN_SKIPPED notes, want none", nnotes);
    else
        CHECK(nnotes == 1 && note_value == want_skipped, "%d SS_NOTE_CUBIN_SKIPPED notes (value %llu), want one of %llu",
              nnotes, (unsigned long long)note_value, (unsigned long long)want_skipped);
    CHECK(nstruct == 1 && nforeign == 1, "launch records: %d of struct_stub, %d of foreign_stub (want 1 each)",
          nstruct, nforeign);
    /* what the images cost the loading threads: every load counted (module
     * 2 repeats image A), the images written and their bytes; none with
     * capture off (SYNCSIGHT_CUBIN_MB=0: nothing is hashed or written) */
    uint64_t want_bytes = 0;
    for (int id = 1; id <= FAKE_MODULES; id++)
        if (want[id]) want_bytes += fake_image_size((uint32_t)id);
    char want_msg[200];
    snprintf(want_msg, sizeof want_msg, "module images, on the threads that loaded them: %d load%s, %d image%s written "
             "(%llu bytes)", FAKE_MODULES, FAKE_MODULES == 1 ? "" : "s", nwant, nwant == 1 ? "" : "s",
             (unsigned long long)want_bytes);
    if (nwant == 0 && want_skipped == FAKE_MODULES)
        CHECK(ncost == 0, "capture off: %d SS_NOTE_CUBIN_COST notes (%s)", ncost, cost_msg);
    else
        CHECK(ncost == 1 && strcmp(cost_msg, want_msg) == 0 && cost_ns > 0,
              "%d SS_NOTE_CUBIN_COST notes: \"%s\" (%llu ns), want one: \"%s\"", ncost, cost_msg,
              (unsigned long long)cost_ns, want_msg);
    CHECK(nnode == 11, "graph kernel-node records: %d AddKernelNode, %d KernelNodeSetParams (want 1 each)",
          nnode % 10, nnode / 10);
    if (failures == 0)
        printf("api_cupti_check: %d cubin records, skipped note %llu, launch offsets verified\n", ncubins,
               (unsigned long long)note_value);
    return failures == 0 ? 0 : 1;
}
