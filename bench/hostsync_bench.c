/*
 * CPU micro-benchmark of the shim's host-synchronization wrappers
 * (preload/hostsync.c): ns per uncontended pthread_mutex_lock/unlock pair
 * (and sem_post/sem_wait pair) on
 *   clean   a thread that never made a CUDA call and learnt of none;
 *   quiet   a thread that made one (fake) CUDA call before the loop: it has
 *           something to say, but says it once per lock;
 *   active  a thread that makes a fake CUDA call before every pair: every
 *           unlock publishes new work (a release record).  Reported as the
 *           cost of (call + pair) minus the cost of the call alone.
 * Linked against the fake libcudart.so.13 of the tests; `make bench-hostsync`
 * runs it without the shim, with it, and with SYNCSIGHT_HOST_SYNC=0.
 * Prints one line per case: "case ns_per_pair".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda_runtime_api.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sem_t sem;
static long iters = 20000000;

static double best_of(double (*fn)(long), long n)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double v = fn(n);
        if (v < best)
            best = v;
    }
    return best;
}

static double mutex_pairs(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&mu);
        pthread_mutex_unlock(&mu);
    }
    return (now_ns() - t0) / (double)n;
}

static double sem_pairs(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        sem_post(&sem);
        sem_wait(&sem);
    }
    return (now_ns() - t0) / (double)n;
}

static double calls_only(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        (void)cudaStreamQuery(NULL);
    return (now_ns() - t0) / (double)n;
}

static double calls_and_pairs(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        (void)cudaStreamQuery(NULL);
        pthread_mutex_lock(&mu);
        pthread_mutex_unlock(&mu);
    }
    return (now_ns() - t0) / (double)n;
}

static void *clean_thread(void *arg)
{
    (void)arg;
    printf("clean_mutex_pair %.2f\n", best_of(mutex_pairs, iters));
    printf("clean_sem_pair %.2f\n", best_of(sem_pairs, iters));
    return NULL;
}

static void *cuda_thread(void *arg)
{
    (void)arg;
    (void)cudaStreamQuery(NULL);
    printf("quiet_mutex_pair %.2f\n", best_of(mutex_pairs, iters));
    /* fewer: every iteration writes an API record (and, under the shim, a release) */
    long n = iters / 50;
    double call = best_of(calls_only, n), both = best_of(calls_and_pairs, n);
    printf("active_call %.2f\n", call);
    printf("active_mutex_pair %.2f\n", both - call);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iters = atol(argv[1]);
    sem_init(&sem, 0, 0);
    /* Threads created before any CUDA call, so that the clean one learns
     * nothing through its creation. */
    pthread_t a, b;
    pthread_create(&a, NULL, clean_thread, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, cuda_thread, NULL);
    pthread_join(b, NULL);
    return 0;
}
