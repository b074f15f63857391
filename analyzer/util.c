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
