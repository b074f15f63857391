/* The functions of util.h that are not inline. */
#include <pthread.h>
#include <malloc.h>
#include <sys/mman.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

char *ss_strdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    char *s = ss_xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

int ss_timings_on(void)
{
    static int on = -1;   /* every thread that finds it unset computes the same */
    int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
    if (v < 0) {
        const char *env = getenv("SYNCSIGHT_TIMINGS");
        v = env && env[0] == '1';
        __atomic_store_n(&on, v, __ATOMIC_RELAXED);
    }
    return v;
}

double ss_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* When the analyzer started: each timing line also says when its step
 * ended, so that the steps that run side by side show which one ended last
 * (the critical path), not only how long each took. */
static double started;
__attribute__((constructor)) static void note_start(void) { started = ss_seconds(); }

double ss_seconds_since_start(void)
{
    return ss_seconds() - started;
}

void ss_timing(const char *step, double since)
{
    if (!ss_timings_on()) return;
    double now = ss_seconds();
    fprintf(stderr, "syncsight: timing: %-32s %8.3f s  (ended at %.3f s)\n", step, now - since, now - started);
}

unsigned ss_thread_count(void)
{
    const char *env = getenv("SYNCSIGHT_THREADS");
    long n = 0;
    if (env && *env) {
        char *end;
        n = strtol(env, &end, 10);
        if (*end || n < 1) n = 0;   /* not a count: as if unset */
    }
    if (n == 0) n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    return n > SS_MAX_THREADS ? SS_MAX_THREADS : (unsigned)n;
}

typedef struct pfor {
    void (*fn)(void *ctx, uint32_t i, unsigned worker);
    void *ctx;
    uint32_t n;
    uint32_t next;   /* the next job to hand out (atomic) */
} pfor;

typedef struct pfor_worker { pfor *job; unsigned id; } pfor_worker;

static void pfor_run(pfor *p, unsigned worker)
{
    for (;;) {
        uint32_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n) return;
        p->fn(p->ctx, i, worker);
    }
}

static void *pfor_thread(void *arg)
{
    pfor_worker *w = arg;
    pfor_run(w->job, w->id);
    return NULL;
}

void ss_parallel_for(uint32_t n, unsigned threads, void (*fn)(void *ctx, uint32_t i, unsigned worker), void *ctx)
{
    if (threads > SS_MAX_THREADS) threads = SS_MAX_THREADS;
    if (threads > n) threads = n;
    pfor p = { fn, ctx, n, 0 };
    pthread_t tid[SS_MAX_THREADS];
    pfor_worker w[SS_MAX_THREADS];
    unsigned started = 1;
    for (unsigned k = 1; k < threads; k++) {
        w[started] = (pfor_worker){ &p, started };
        /* a thread that cannot start leaves its jobs to the others */
        if (pthread_create(&tid[started], NULL, pfor_thread, &w[started]) == 0) started++;
    }
    pfor_run(&p, 0);
    for (unsigned k = 1; k < started; k++) pthread_join(tid[k], NULL);
}

unsigned ss_side_pool_threads(void)
{
    return (ss_thread_count() + 1) / 2;
}

static void *beside_main(void *arg)
{
    ss_beside *j = arg;
    j->fn(j->ctx);
    return NULL;
}

void ss_beside_start(ss_beside *j, void (*fn)(void *ctx), void *ctx)
{
    j->fn = fn;
    j->ctx = ctx;
    j->running = ss_thread_count() > 1 && pthread_create(&j->tid, NULL, beside_main, j) == 0;
    if (!j->running) fn(ctx);
}

void ss_beside_join(ss_beside *j)
{
    if (j->running) {
        double t0 = ss_timings_on() ? ss_seconds() : 0;
        pthread_join(j->tid, NULL);
        if (t0 > 0) j->waited += ss_seconds() - t0;
    }
    j->running = 0;
}

/* Records are moved and their keys read with memcpy: the caller's record
 * type is not known here (no aliasing of it through another struct). */
static inline uint64_t key16(const unsigned char *v, size_t i)
{
    uint64_t k;
    memcpy(&k, v + 16 * i, sizeof k);
    return k;
}

unsigned ss_slice_count(size_t n, size_t min_slice, unsigned threads)
{
    size_t most = min_slice ? n / min_slice : n;
    unsigned k = threads < 1 ? 1 : threads > SS_MAX_THREADS ? SS_MAX_THREADS : threads;
    if (k > most) k = most ? (unsigned)most : 1;
    return k;
}

typedef struct slices_job {
    size_t n;
    unsigned slices;
    void (*fn)(void *ctx, uint32_t s, size_t from, size_t to);
    void *ctx;
} slices_job;

static void run_slice(void *ctx, uint32_t s, unsigned worker)
{
    (void)worker;
    const slices_job *j = ctx;
    j->fn(j->ctx, s, j->n * s / j->slices, j->n * (s + 1) / j->slices);
}

void ss_parallel_slices(size_t n, unsigned slices, void (*fn)(void *ctx, uint32_t s, size_t from, size_t to), void *ctx)
{
    if (slices < 1) slices = 1;
    slices_job j = { n, slices, fn, ctx };
    ss_parallel_for(slices, slices, run_slice, &j);
}

/* The radix sort's passes, each over slices of the records: a bucket gets
 * slice 0's records first, then slice 1's, and so on, each in its order: the
 * stable order, whatever the number of slices.  A slice's counts of a digit
 * are of the records it holds when that digit is scattered: one count of
 * every digit at the start serves one slice (the totals do not depend on
 * the order), several slices count again before each digit after the
 * first. */
enum { RADIX_BITS = 11, RADIX_NB = 1 << RADIX_BITS };

typedef struct radix_job {
    unsigned char *src, *dst;
    unsigned digits;
    unsigned digit, ndigits;          /* the digits counted, or the one scattered */
    uint64_t lo;
    uint64_t slice_lo[SS_MAX_THREADS], slice_hi[SS_MAX_THREADS];
    size_t (*cnt)[RADIX_NB];          /* [slice * digits + digit]: counts, then where the slice's next record goes */
} radix_job;

static void radix_bounds(void *ctx, uint32_t s, size_t from, size_t to)
{
    radix_job *j = ctx;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = from; i < to; i++) {
        uint64_t k = key16(j->src, i);
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    j->slice_lo[s] = lo;
    j->slice_hi[s] = hi;
}

static void radix_count(void *ctx, uint32_t s, size_t from, size_t to)
{
    radix_job *j = ctx;
    size_t (*cnt)[RADIX_NB] = j->cnt + (size_t)s * j->digits;
    memset(cnt + j->digit, 0, j->ndigits * sizeof *cnt);
    for (size_t i = from; i < to; i++) {
        uint64_t k = key16(j->src, i) - j->lo;
        for (unsigned d = j->digit; d < j->digit + j->ndigits; d++)
            cnt[d][(k >> (d * RADIX_BITS)) & (RADIX_NB - 1)]++;
    }
}

static void radix_scatter(void *ctx, uint32_t s, size_t from, size_t to)
{
    radix_job *j = ctx;
    size_t *next = j->cnt[(size_t)s * j->digits + j->digit];
    unsigned sh = j->digit * RADIX_BITS;
    for (size_t i = from; i < to; i++)
        memcpy(j->dst + 16 * next[((key16(j->src, i) - j->lo) >> sh) & (RADIX_NB - 1)]++, j->src + 16 * i, 16);
}

void ss_radix_sort16_threads(void *base, size_t n, unsigned threads)
{
    if (n < 2) return;
    unsigned slices = ss_slice_count(n, SS_MIN_SLICE, threads);
    radix_job j = { .src = base };
    ss_parallel_slices(n, slices, radix_bounds, &j);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (unsigned s = 0; s < slices; s++) {
        if (j.slice_lo[s] < lo) lo = j.slice_lo[s];
        if (j.slice_hi[s] > hi) hi = j.slice_hi[s];
    }
    uint64_t span = hi - lo;
    unsigned digits = 0;
    while (digits * RADIX_BITS < 64 && (span >> (digits * RADIX_BITS))) digits++;
    if (!digits) return;                 /* one key: already in order */
    j.lo = lo;
    j.digits = digits;
    j.cnt = ss_xcalloc((size_t)slices * digits, sizeof *j.cnt);
    unsigned char *tmp = ss_xcalloc(n, 16);
    j.dst = tmp;
    for (unsigned d = 0; d < digits; d++) {
        if (d == 0 || slices > 1) {
            j.digit = d;
            j.ndigits = slices > 1 ? 1 : digits;
            ss_parallel_slices(n, slices, radix_count, &j);
        }
        size_t sum = 0;
        for (uint32_t b = 0; b < RADIX_NB; b++)
            for (unsigned s = 0; s < slices; s++) {
                size_t *x = &j.cnt[(size_t)s * digits + d][b];
                size_t k = *x;
                *x = sum;
                sum += k;
            }
        j.digit = d;
        ss_parallel_slices(n, slices, radix_scatter, &j);
        unsigned char *t = j.src; j.src = j.dst; j.dst = t;
    }
    if (j.src != (unsigned char *)base) memcpy(base, j.src, n * 16);
    free(tmp);
    free(j.cnt);
}

/* The analyzer's tables are large (10 M records: ~2.8 GB, most of it in
 * arrays of tens to hundreds of MiB), and first touching them was a third of
 * the analyzer's CPU time: ~750 k page faults, 6-9 s of system time over 8
 * threads, on the 16-core machine that hosts the H100 (docs/performance.md,
 * "Analysis throughput").  Tables of 2 MiB and more ask for transparent huge
 * pages (one fault per 2 MiB; the kernel's THP setting decides, "never"
 * ignores it), and allocations of 1 MiB and more always get fresh mappings
 * (M_MMAP_THRESHOLD: without it glibc raises the threshold after the first
 * large free and serves later tables from its heap, which calloc must zero
 * by touching, before the advice can act).  Measured there: 750 k -> 195 k
 * faults, 5.9-6.0 s -> 4.6-5.0 s for a 10 M-record report on 8 threads. */
void ss_memory_init(void)
{
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

void ss_advise_huge(void *p, size_t n)
{
    uintptr_t a = ((uintptr_t)p + SS_HUGE_TABLE - 1) & ~(uintptr_t)(SS_HUGE_TABLE - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(SS_HUGE_TABLE - 1);
    if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
}
