/*
 * Small containers for the analyzer: a growable array macro, an
 * open-addressing hash map from uint64 keys to int64 values, and a printf
 * into allocated memory (util.c).  Allocation failure aborts with a message:
 * the analyzer cannot produce a correct report without its tables, and a
 * partial one would mislead.
 */
#ifndef SYNCSIGHT_ANALYZER_UTIL_H
#define SYNCSIGHT_ANALYZER_UTIL_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Large tables on transparent huge pages (util.c says why):
 * ss_memory_init once at start, before the first allocation; the two
 * allocators below advise their tables of SS_HUGE_TABLE bytes and more. */
#define SS_HUGE_TABLE (2u << 20)
void ss_memory_init(void);
void ss_advise_huge(void *p, size_t n);

static inline void *ss_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fputs("syncsight: out of memory\n", stderr);
        exit(2);
    }
    if (n >= SS_HUGE_TABLE) ss_advise_huge(q, n);
    return q;
}

static inline void *ss_xcalloc(size_t n, size_t sz)
{
    void *q = calloc(n ? n : 1, sz ? sz : 1);
    if (!q) {
        fputs("syncsight: out of memory\n", stderr);
        exit(2);
    }
    if (sz && n >= SS_HUGE_TABLE / sz) ss_advise_huge(q, n * sz);
    return q;
}

/* Worker threads for independent jobs (the what-if replays): the
 * SYNCSIGHT_THREADS environment variable when it is a number >= 1, else the
 * online CPUs; at most SS_MAX_THREADS.  1 runs every job on the calling
 * thread. */
#ifndef SS_MAX_THREADS   /* settable at build time to measure others.  16 threads on a 16-core
                            machine end as soon as 8 (docs/performance.md, 2026-11-25), and
                            sooner than 8 on a 32-core one (2026-11-30) */
#define SS_MAX_THREADS 16
#endif
unsigned ss_thread_count(void);

/* fn(ctx, i, worker) for every i in [0, n), on up to `threads` threads:
 * the calling thread is worker 0, the others 1..threads-1.  Jobs are handed
 * out in index order, one at a time; which worker runs which job depends on
 * timing, so fn may keep state per worker (scratch memory) but its result
 * must not depend on the worker.  Returns when every job has run. */
void ss_parallel_for(uint32_t n, unsigned threads, void (*fn)(void *ctx, uint32_t i, unsigned worker), void *ctx);

/* fn(ctx, s, from, to) for each of `slices` consecutive slices [from, to)
 * of [0, n), on a thread each (the calling thread one of them; all of them
 * with 1 slice).  ss_slice_count: the slices for `threads` threads, each
 * of at least min_slice elements (1 when n is smaller), at most
 * SS_MAX_THREADS. */
unsigned ss_slice_count(size_t n, size_t min_slice, unsigned threads);
/* Loops over records: slices of fewer cost more in thread starts than they
 * save. */
#define SS_MIN_SLICE 65536
void ss_parallel_slices(size_t n, unsigned slices, void (*fn)(void *ctx, uint32_t s, size_t from, size_t to), void *ctx);

/* A pool a rule starts of its own (its comparisons, its look-ahead) runs
 * while the other rules and the replay's build run too: such a pool takes
 * half the threads.  With all of them the build slowed more than the rule
 * sped up while the build was the longer path (10 M records on 16 cores:
 * the build 1.68-2.25 s against 1.68-1.80 s); with the build shorter, all
 * of them still ended no sooner and took 1-2 s more CPU (docs/performance.md,
 * 2026-11-25). */
unsigned ss_side_pool_threads(void);

/* fn(ctx) beside the caller: on a thread of its own when there are several
 * (ss_thread_count() > 1 and the thread starts), else at once, on the
 * calling thread.  ss_beside_join returns once it has run.  A rule's walk
 * in call order uses it to have the next batch prepared meanwhile. */
typedef struct ss_beside {
    pthread_t tid;
    int running;
    void (*fn)(void *ctx);
    void *ctx;
    double waited;   /* seconds ss_beside_join has waited, summed (measured under SYNCSIGHT_TIMINGS=1 only) */
} ss_beside;
void ss_beside_start(ss_beside *j, void (*fn)(void *ctx), void *ctx);
void ss_beside_join(ss_beside *j);

/* SYNCSIGHT_TIMINGS=1: where the analyzer's time goes, one line on stderr
 * per step ("syncsight: timing: replay.build.record   1.234 s"), for
 * performance work and bug reports about a slow report.  Steps run on
 * several threads at once print as each ends.  ss_seconds: a monotonic
 * clock; ss_timing(step, since) prints now - since when timings are on. */
int ss_timings_on(void);
double ss_seconds(void);
void ss_timing(const char *step, double since);
/* seconds since the analyzer started (the "ended at" of the timing lines) */
double ss_seconds_since_start(void);

/* printf into a malloc'ed string (exits on OOM, as above). */
char *ss_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* qsort that accepts an empty (possibly NULL) array, and skips arrays that
 * are already sorted (records of one thread arrive in time order: the common
 * case costs one linear pass instead of n log n). */
static inline void ss_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n < 2) return;
    const char *p = base;
    size_t i = 1;
    while (i < n && cmp(p + (i - 1) * size, p + i * size) <= 0) i++;
    if (i < n) qsort(base, n, size, cmp);
}

/* Stable sort of n 16-byte records by the uint64_t key each starts with
 * (a radix sort: 11-bit digits of key - min, as many as the keys' span
 * needs; records of equal keys keep their order).  Tens of millions of
 * records in a fraction of qsort's time; the caller orders equal keys.
 * _threads: each pass over slices of the records (SS_MIN_SLICE at least)
 * on up to `threads` threads, the same result. */
void ss_radix_sort16_threads(void *v, size_t n, unsigned threads);
static inline void ss_radix_sort16(void *v, size_t n) { ss_radix_sort16_threads(v, n, 1); }

/* Append one element to a (ptr, n, cap) triple. */
#define SS_PUSH(ptr, n, cap, value) do {                                    \
        if ((n) == (cap)) {                                                 \
            (cap) = (cap) ? (cap) * 2 : 16;                                 \
            (ptr) = ss_xrealloc((ptr), (size_t)(cap) * sizeof(*(ptr)));     \
        }                                                                   \
        (ptr)[(n)++] = (value);                                             \
    } while (0)

typedef struct ss_u64map {
    uint64_t *keys;
    int64_t  *vals;
    uint8_t  *used;
    size_t    cap, n;
} ss_u64map;

static inline uint64_t ss_hash64(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static inline void ss_u64map_free(ss_u64map *m)
{
    free(m->keys); free(m->vals); free(m->used);
    memset(m, 0, sizeof(*m));
}

static inline void ss_u64map_put(ss_u64map *m, uint64_t key, int64_t val);

static inline void ss_u64map_grow(ss_u64map *m)
{
    ss_u64map old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->keys = ss_xcalloc(m->cap, sizeof(uint64_t));
    m->vals = ss_xcalloc(m->cap, sizeof(int64_t));
    m->used = ss_xcalloc(m->cap, 1);
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.used[i] == 1)
            ss_u64map_put(m, old.keys[i], old.vals[i]);
    free(old.keys); free(old.vals); free(old.used);
}

/* used[]: 0 empty, 1 full, 2 deleted (tombstone) */
static inline int64_t *ss_u64map_find(const ss_u64map *m, uint64_t key)
{
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1, i = (size_t)ss_hash64(key) & mask;
    for (;;) {
        if (m->used[i] == 0) return NULL;
        if (m->used[i] == 1 && m->keys[i] == key) return &m->vals[i];
        i = (i + 1) & mask;
    }
}

static inline int64_t ss_u64map_get(const ss_u64map *m, uint64_t key, int64_t dflt)
{
    int64_t *v = ss_u64map_find(m, key);
    return v ? *v : dflt;
}

static inline void ss_u64map_put(ss_u64map *m, uint64_t key, int64_t val)
{
    int64_t *v = ss_u64map_find(m, key);
    if (v) { *v = val; return; }
    if ((m->n + 1) * 2 > m->cap) ss_u64map_grow(m);
    size_t mask = m->cap - 1, i = (size_t)ss_hash64(key) & mask;
    while (m->used[i] == 1) i = (i + 1) & mask;
    m->used[i] = 1; m->keys[i] = key; m->vals[i] = val; m->n++;
}

static inline void ss_u64map_del(ss_u64map *m, uint64_t key)
{
    int64_t *v = ss_u64map_find(m, key);
    if (v) m->used[v - m->vals] = 2;   /* tombstones are dropped by the next grow */
}

#endif
