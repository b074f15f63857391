/*
 * The analyzer's unit tests build small traces through the real writer
 * (common/trace_io.c): a block buffer, records reserved in it, a file header,
 * the API names the test uses and one context.  Each test adds the records
 * its cases need (calls, streams, kernels, ...) on top of this core.
 * Included by one test file each (static functions).
 */
#ifndef SS_TESTS_TRACE_BUILDER_H
#define SS_TESTS_TRACE_BUILDER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncsight/trace_io.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
                              fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define T0 1000000000ull                 /* header start: 1 s on the trace clock */
#define MS(x) (T0 + (uint64_t)((x) * 1000000.0))

typedef struct tb_api_name { uint32_t cbid; const char *name; } tb_api_name;

typedef struct tb {
    ss_writer w;
    uint8_t *buf;
    uint32_t used, count, cap;
    uint32_t next_corr;
    char path[512];
} tb;

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

/* Create the trace at `path` (pid 777, start T0) with the API names and one
 * context (id 1, device 0) whose legacy stream is `null_sid`. */
static void tb_begin(tb *b, const char *path, const tb_api_name *names, size_t nnames, uint32_t null_sid)
{
    memset(b, 0, sizeof *b);
    b->cap = 1 << 16;
    b->buf = calloc(1, b->cap);
    b->next_corr = 100;
    snprintf(b->path, sizeof b->path, "%s", path);
    unlink(b->path);
    ss_file_header h;
    ss_file_header_init(&h, T0, 0);
    h.pid = 777;
    int rc = ss_writer_open(&b->w, b->path, &h);
    CHECK(rc == 0, "open %s: %d", b->path, rc);
    for (size_t i = 0; i < nnames; i++) {
        uint32_t len = (uint32_t)strlen(names[i].name);
        ss_api_name_rec *r = tb_rec(b, SS_REC_API_NAME, sizeof *r, len);
        r->cbid = names[i].cbid;
        r->len = len;
        memcpy((char *)r + sizeof *r, names[i].name, len);
    }
    ss_context_rec *c = tb_rec(b, SS_REC_CONTEXT, sizeof *c, 0);
    c->context_id = 1; c->device = 0; c->null_stream_id = null_sid;
}

static void tb_close(tb *b)
{
    tb_flush(b);
    ss_writer_close(&b->w);
    free(b->buf);
}

#endif
