/*
 * Stand-in for the layers below the shim's producers (base.c settings and
 * clock, buffers.c records, record.c strings and notes: preload/LAYERS) so
 * that preload/callsite.c and preload/pystack.c can be tested and
 * benchmarked without CUDA.  Records go into one in-memory payload that
 * fake_runtime_write_trace() writes as a real trace with the real writer
 * (common/trace_io.c).  Only our own plumbing is faked: unwinding, the
 * Python C API and the symbolizer are the real ones.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "producers.h"
#include "syncsight/trace_io.h"
#include "callsite_fake_runtime.h"

ss_settings ss_cfg = { .cupti = 0, .nvtx_emit = 0, .stacks = 1, .flush_ms = 200, .activity_mask = 0 };

#define PAYLOAD_CAP (8u << 20)
static uint8_t *g_payload;
static uint32_t g_used, g_count;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;   /* held from begin to commit */
static int g_discard;                                        /* benchmark: drop records */

uint64_t ss_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t ss_tid(void) { return (uint32_t)syscall(SYS_gettid); }
__thread unsigned ss_t_slow_work;   /* base.c's: bumped by callsite.c's unwinds */
int ss_recording(void) { return 1; }

void *ss_rec_begin(uint16_t type, uint32_t fixed_size, uint32_t tail_size)
{
    pthread_mutex_lock(&g_lock);
    if (!g_payload)
        g_payload = malloc(PAYLOAD_CAP);
    if (g_discard)
        g_used = 0;
    void *rec = g_payload ? ss_rec_reserve(g_payload, PAYLOAD_CAP, &g_used, type, fixed_size, tail_size)
                          : NULL;
    if (!rec)
        pthread_mutex_unlock(&g_lock);
    return rec;
}

void ss_rec_commit(void *rec)
{
    (void)rec;
    g_count++;
    pthread_mutex_unlock(&g_lock);
}

/* Linear table: tests intern a handful of strings. */
#define MAX_STRINGS 4096
static char *g_strings[MAX_STRINGS];
static size_t g_string_lens[MAX_STRINGS];
static uint32_t g_nstrings;
static pthread_mutex_t g_str_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t ss_string_id(const char *text, size_t len)
{
    pthread_mutex_lock(&g_str_lock);
    for (uint32_t i = 0; i < g_nstrings; i++)
        if (g_string_lens[i] == len && memcmp(g_strings[i], text, len) == 0) {
            pthread_mutex_unlock(&g_str_lock);
            return i + 1;
        }
    uint32_t id = 0;
    if (g_nstrings < MAX_STRINGS) {
        char *copy = malloc(len + 1);
        if (copy) {
            memcpy(copy, text, len);
            copy[len] = '\0';
            g_strings[g_nstrings] = copy;
            g_string_lens[g_nstrings] = len;
            id = ++g_nstrings;
        }
    }
    pthread_mutex_unlock(&g_str_lock);
    if (!id)
        return 0;
    ss_string_rec *rec = ss_rec_begin(SS_REC_STRING, sizeof *rec, (uint32_t)len);
    if (rec) {
        rec->id = id;
        rec->len = (uint32_t)len;
        memcpy((char *)rec + sizeof *rec, text, len);
        ss_rec_commit(rec);
    }
    return id;
}

const char *fake_runtime_string(uint32_t id)
{
    return id >= 1 && id <= g_nstrings ? g_strings[id - 1] : NULL;
}

void ss_note(uint32_t code, uint64_t value, const char *msg, int stderr_once)
{
    size_t len = strlen(msg);
    ss_note_rec *rec = ss_rec_begin(SS_REC_NOTE, sizeof *rec, (uint32_t)len);
    if (rec) {
        rec->code = code;
        rec->len = (uint32_t)len;
        rec->value = value;
        rec->time = ss_now();
        memcpy((char *)rec + sizeof *rec, msg, len);
        ss_rec_commit(rec);
    }
    if (stderr_once)
        fprintf(stderr, "syncsight: %s\n", msg);
}

void fake_runtime_discard_records(int on) { g_discard = on; }

uint32_t fake_runtime_record_count(void) { return g_count; }

int fake_runtime_write_trace(const char *path)
{
    ss_file_header hdr;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    ss_file_header_init(&hdr, ss_now(), (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
    ss_writer w;
    unlink(path);
    int rc = ss_writer_open(&w, path, &hdr);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&g_lock);
    if (g_used)
        rc = ss_writer_write_block(&w, g_payload, g_used, g_count);
    pthread_mutex_unlock(&g_lock);
    int rc2 = ss_writer_close(&w);
    return rc ? rc : rc2;
}
