/* The functions of util.h that are not inline. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
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

/* Records are moved and their keys read with memcpy: the caller's record
 * type is not known here (no aliasing of it through another struct). */
static inline uint64_t key16(const unsigned char *v, size_t i)
{
    uint64_t k;
    memcpy(&k, v + 16 * i, sizeof k);
    return k;
}

void ss_radix_sort16(void *base, size_t n)
{
    enum { BITS = 11, NB = 1 << BITS };
    unsigned char *v = base;
    if (n < 2) return;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key16(v, i);
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    uint64_t span = hi - lo;
    unsigned digits = 0;
    while (digits * BITS < 64 && (span >> (digits * BITS))) digits++;
    if (!digits) return;                 /* one key: already in order */
    size_t (*cnt)[NB] = ss_xcalloc(digits, sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key16(v, i) - lo;
        for (unsigned d = 0; d < digits; d++) cnt[d][(k >> (d * BITS)) & (NB - 1)]++;
    }
    unsigned char *tmp = ss_xcalloc(n, 16), *src = v, *dst = tmp;
    for (unsigned d = 0; d < digits; d++) {
        size_t sum = 0;
        for (uint32_t b = 0; b < NB; b++) { size_t c = cnt[d][b]; cnt[d][b] = sum; sum += c; }
        unsigned sh = d * BITS;
        for (size_t i = 0; i < n; i++)
            memcpy(dst + 16 * cnt[d][((key16(src, i) - lo) >> sh) & (NB - 1)]++, src + 16 * i, 16);
        unsigned char *t = src; src = dst; dst = t;
    }
    if (src != v) memcpy(v, src, n * 16);
    free(tmp);
    free(cnt);
}
