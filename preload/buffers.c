/*
 * Per-thread record buffers of the shim (buffers.h).
 *
 * Each recording thread owns one buffer from a fixed pool (one mmap made at
 * the first record; SYNCSIGHT_BUFFER_MB, 64 MiB by default).  The owner
 * appends records without locks and publishes how far it got with a single
 * 64-bit release store (records << 32 | bytes), so the flush always sees a
 * consistent (bytes, record count) pair.  The flush (lifecycle.c's writer
 * thread, exit path and fatal-signal handler) copies [flushed, committed) of
 * every live buffer into the file as one block.
 *
 * A full buffer is marked RETIRED and the thread takes a FREE one (the only
 * moment it touches shared state); the writer returns retired buffers to the
 * pool once everything in them is on disk.  When no buffer is free, records
 * are dropped and counted: memory stays bounded whatever the program does.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "buffers.h"
#include "writer.h"

#define SS_BUF_BYTES (1u << 20)   /* one buffer; << SS_BLOCK_MAX_PAYLOAD */

enum buf_state { BUF_FREE = 0, BUF_LIVE = 1, BUF_RETIRED = 2 };

struct ss_buf {
    _Atomic uint64_t committed;   /* owner: (records << 32) | bytes, release  */
    _Atomic int      state;       /* enum buf_state                           */
    uint32_t used;                /* owner only: bytes reserved               */
    uint32_t nrec;                /* owner only: records reserved             */
    uint32_t flushed_bytes;       /* writer only (under the output lock)      */
    uint32_t flushed_recs;
    char    *data;
};

static struct ss_buf  *pool;
static uint32_t        pool_count;
static pthread_once_t  pool_once = PTHREAD_ONCE_INIT;
static pthread_key_t   thread_exit_key;
static _Atomic uint64_t dropped_records;
static _Atomic uint32_t next_scan;     /* spreads acquisitions over the pool */

static __thread struct ss_buf *tls_buf;
static __thread int tls_thread_announced;  /* SS_REC_THREAD written */

/* Thread exit: the buffer's committed records still have to reach the file,
 * so it is retired (not freed) and the writer recycles it after flushing. */
static void on_thread_exit(void *arg)
{
    struct ss_buf *b = arg;
    if (b && b == tls_buf) {
        atomic_store_explicit(&b->state, BUF_RETIRED, memory_order_release);
        tls_buf = NULL;
    }
}

static void pool_init(void)
{
    uint32_t count = ss_cfg.buffer_mb * (1u << 20) / SS_BUF_BYTES;
    size_t bytes = (size_t)count * SS_BUF_BYTES;
    /* Untouched pages of an anonymous mapping cost no memory: the pool only
     * costs what the threads actually fill. */
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct ss_buf *descs = calloc(count, sizeof *descs);
    if (mem == MAP_FAILED || !descs) {
        if (mem != MAP_FAILED)
            munmap(mem, bytes);
        free(descs);
        return;            /* pool_count stays 0: every record is dropped */
    }
    for (uint32_t i = 0; i < count; i++)
        descs[i].data = (char *)mem + (size_t)i * SS_BUF_BYTES;
    pthread_key_create(&thread_exit_key, on_thread_exit);
    pool = descs;
    pool_count = count;
}

static struct ss_buf *take_free_buffer(void)
{
    uint32_t start = atomic_fetch_add_explicit(&next_scan, 1, memory_order_relaxed);
    for (uint32_t k = 0; k < pool_count; k++) {
        struct ss_buf *b = &pool[(start + k) % pool_count];
        int expect = BUF_FREE;
        if (atomic_load_explicit(&b->state, memory_order_relaxed) == BUF_FREE &&
            atomic_compare_exchange_strong_explicit(&b->state, &expect, BUF_LIVE,
                                                    memory_order_acquire, memory_order_relaxed)) {
            b->used = 0;
            b->nrec = 0;
            return b;
        }
    }
    return NULL;
}

static void *reserve_in(struct ss_buf *b, uint16_t type, uint32_t size)
{
    ss_rec_hdr *h = (ss_rec_hdr *)(b->data + b->used);
    memset(h, 0, size);
    h->type = type;
    h->size = size;
    b->used += size;
    b->nrec++;
    return h;
}

static void publish(struct ss_buf *b)
{
    atomic_store_explicit(&b->committed, ((uint64_t)b->nrec << 32) | b->used,
                          memory_order_release);
}

/* The first record of a thread says who the thread is (its name as the
 * program set it, e.g. "pt_autograd_0"). */
static void announce_thread(struct ss_buf *b)
{
    char name[64] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    uint32_t len = (uint32_t)strnlen(name, sizeof name);
    uint32_t size = SS_REC_ALIGN((uint32_t)sizeof(ss_thread_rec) + len);
    if (b->used + size > SS_BUF_BYTES)
        return;
    ss_thread_rec *t = reserve_in(b, SS_REC_THREAD, size);
    t->tid = ss_tid();
    t->len = len;
    t->pthread_self = (uint64_t)pthread_self();
    memcpy(t + 1, name, len);
    publish(b);
    tls_thread_announced = 1;
}

/* Slow path: no buffer yet, or the current one is full. */
static struct ss_buf *switch_buffer(uint32_t size)
{
    if (size > SS_BUF_BYTES) {
        atomic_fetch_add_explicit(&dropped_records, 1, memory_order_relaxed);
        return NULL;
    }
    pthread_once(&pool_once, pool_init);
    ss_t_slow_work++;   /* may wait for a free buffer */

    struct ss_buf *old = tls_buf;
    if (old) {
        tls_buf = NULL;
        atomic_store_explicit(&old->state, BUF_RETIRED, memory_order_release);
    }
    struct ss_buf *b = take_free_buffer();
    if (!b) {
        atomic_fetch_add_explicit(&dropped_records, 1, memory_order_relaxed);
        return NULL;
    }
    tls_buf = b;
    pthread_setspecific(thread_exit_key, b);
    if (!tls_thread_announced)
        announce_thread(b);
    if (b->used + size > SS_BUF_BYTES)
        return NULL;
    return b;
}

void *ss_rec_begin(uint16_t type, uint32_t fixed_size, uint32_t tail_size)
{
    if (!__atomic_load_n(&ss_rec_enabled, __ATOMIC_RELAXED))
        return NULL;
    uint64_t size64 = ((uint64_t)fixed_size + tail_size + 7u) & ~(uint64_t)7u;
    if (size64 > SS_BUF_BYTES) {
        atomic_fetch_add_explicit(&dropped_records, 1, memory_order_relaxed);
        return NULL;
    }
    uint32_t size = (uint32_t)size64;
    /* The first record that shows CUDA use creates the trace file. */
    if (__builtin_expect(!__atomic_load_n(&ss_output_opened, __ATOMIC_RELAXED), 0) &&
        ss_rec_creates_file(type) && ss_output_start() != 0)
        return NULL;
    struct ss_buf *b = tls_buf;
    if (__builtin_expect(!b || b->used + size > SS_BUF_BYTES, 0)) {
        b = switch_buffer(size);
        if (!b)
            return NULL;
    }
    return reserve_in(b, type, size);
}

void ss_rec_commit(void *rec)
{
    struct ss_buf *b = tls_buf;
    if (!rec || !b)
        return;
    publish(b);
}

/* Write what each buffer has committed since the last flush.  The writer
 * thread, the exit path and the fatal-signal handler call this with the
 * output lock held; only the non-signal callers recycle retired buffers (the
 * signal path must not race an owner that is still appending). */
void ss_buffers_flush(int from_signal)
{
    for (uint32_t i = 0; i < pool_count; i++) {
        struct ss_buf *b = &pool[i];
        int st = atomic_load_explicit(&b->state, memory_order_acquire);
        if (st == BUF_FREE)
            continue;
        uint64_t c = atomic_load_explicit(&b->committed, memory_order_acquire);
        uint32_t bytes = (uint32_t)c, recs = (uint32_t)(c >> 32);
        if (bytes > b->flushed_bytes) {
            /* A failed write loses the block either way: the output layer has
             * stopped recording, so move on instead of retrying forever. */
            ss_output_write_block(b->data + b->flushed_bytes, bytes - b->flushed_bytes,
                                  recs - b->flushed_recs);
            b->flushed_bytes = bytes;
            b->flushed_recs = recs;
        }
        if (st == BUF_RETIRED && !from_signal) {
            b->flushed_bytes = 0;
            b->flushed_recs = 0;
            atomic_store_explicit(&b->committed, 0, memory_order_relaxed);
            atomic_store_explicit(&b->state, BUF_FREE, memory_order_release);
        }
    }
}

uint64_t ss_buffers_dropped(void)
{
    return atomic_load_explicit(&dropped_records, memory_order_relaxed);
}

/* fork() child: the parent's records are the parent's.  Only the forking
 * thread exists here, so every buffer can be reset without racing anyone. */
void ss_buffers_atfork_child(void)
{
    for (uint32_t i = 0; i < pool_count; i++) {
        struct ss_buf *b = &pool[i];
        b->used = b->nrec = b->flushed_bytes = b->flushed_recs = 0;
        atomic_store_explicit(&b->committed, 0, memory_order_relaxed);
        atomic_store_explicit(&b->state, BUF_FREE, memory_order_relaxed);
    }
    tls_buf = NULL;
    tls_thread_announced = 0;
    atomic_store_explicit(&dropped_records, 0, memory_order_relaxed);
}
