/*
 * Host thread ordering under the shim (tests/test_hostsync.sh): pthread and
 * semaphore handoffs between threads that make (fake) CUDA calls, a thread
 * that never calls CUDA and takes a lock a million times, create/join, a
 * barrier; and the return values and errno the program must still see.
 * Prints "name value" lines (tids, object addresses) for the checker and
 * exits non-zero when a return value or errno differs from what glibc gives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>

#include "hostsync.h"                   /* the shim's per-thread cache sets */

static int failures;
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "hostsync_prog: " __VA_ARGS__); \
            fputc('\n', stderr);                           \
            failures++;                                    \
        }                                                  \
    } while (0)

static unsigned tid(void) { return (unsigned)syscall(SYS_gettid); }
static void cuda_call(void) { (void)cudaStreamQuery(NULL); }
static void say(const char *name, uint64_t v) { printf("%s %llu\n", name, (unsigned long long)v); fflush(stdout); }

/* ---- 1. mutex handoff: A (CUDA) -> B (CUDA) */
static pthread_mutex_t handoff_mu = PTHREAD_MUTEX_INITIALIZER;
static int handoff_flag;

static void *handoff_a(void *arg)
{
    (void)arg;
    say("handoff_a", tid());
    cuda_call();
    pthread_mutex_lock(&handoff_mu);
    handoff_flag = 1;
    errno = 4321;
    pthread_mutex_unlock(&handoff_mu);    /* records the release */
    CHECK(errno == 4321, "errno changed by a recorded unlock: %d", errno);
    return NULL;
}

static void *handoff_b(void *arg)
{
    (void)arg;
    say("handoff_b", tid());
    for (;;) {
        pthread_mutex_lock(&handoff_mu);
        int f = handoff_flag;
        pthread_mutex_unlock(&handoff_mu);
        if (f)
            break;
        usleep(100);
    }
    cuda_call();                           /* the acquire is written before this */
    return NULL;
}

/* ---- 2. a thread that never calls CUDA and learns nothing of CUDA work
 * (created before any, started through a plain atomic flag) takes a lock a
 * million times: no record.  A second one, created after CUDA work, takes a
 * lock a CUDA thread keeps releasing: its records stay bounded by what it
 * learns, not by how often it locks. */
static int clean_go, clean_done;
static void *truly_clean(void *arg)
{
    (void)arg;
    say("truly_clean", tid());
    while (!__atomic_load_n(&clean_go, __ATOMIC_ACQUIRE))
        usleep(100);
    pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
    for (long i = 0; i < 1000000; i++) {
        pthread_mutex_lock(&own);
        pthread_mutex_unlock(&own);
    }
    __atomic_store_n(&clean_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static pthread_mutex_t busy_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile long busy_counter;
static volatile int busy_done;

/* The busy thread's own locks: the shim's per-thread cache must hold them
 * and busy_mu at once, so they are chosen to fall in busy_mu's cache set,
 * filling all its ways (a direct-mapped cache, as it was, wrote records on
 * every lock then; by address that happened in 1 run of 64). */
#define BUSY_OWN (HS_CACHE_WAYS - 1u)
static pthread_mutex_t own_pool[64 * HS_CACHE_SETS];

static void *busy_clean(void *arg)
{
    (void)arg;
    say("busy_clean", tid());
    pthread_mutex_t *own[BUSY_OWN];
    unsigned nown = 0;
    uint32_t set = hs_cache_set((uint64_t)(uintptr_t)&busy_mu);
    for (size_t k = 0; k < sizeof own_pool / sizeof own_pool[0] && nown < BUSY_OWN; k++)
        if (hs_cache_set((uint64_t)(uintptr_t)&own_pool[k]) == set) {
            pthread_mutex_init(&own_pool[k], NULL);
            own[nown++] = &own_pool[k];
        }
    CHECK(nown == BUSY_OWN, "found %u locks in busy_mu's cache set, wanted %u", nown, BUSY_OWN);
    for (long i = 0; i < 1000000; i++) {
        pthread_mutex_lock(&busy_mu);
        busy_counter++;
        pthread_mutex_unlock(&busy_mu);
        for (unsigned k = 0; k < nown; k++) {
            pthread_mutex_lock(own[k]);
            pthread_mutex_unlock(own[k]);
        }
    }
    busy_done = 1;
    return NULL;
}

/* ---- 3. create / join */
static void *created(void *arg)
{
    (void)arg;
    say("created", tid());
    cuda_call();
    return NULL;
}

static void *created_exit(void *arg)
{
    (void)arg;
    say("created_exit", tid());
    cuda_call();
    pthread_exit(NULL);
}

/* ---- 4. semaphore handoff: poster (CUDA) -> main */
static sem_t handoff_sem;

static void *poster(void *arg)
{
    (void)arg;
    say("poster", tid());
    cuda_call();
    CHECK(sem_post(&handoff_sem) == 0, "sem_post failed");
    return NULL;
}

/* ---- 5. pthread barrier */
static pthread_barrier_t barrier;

static void *barrier_thread(void *arg)
{
    say(arg, tid());
    cuda_call();
    int rc = pthread_barrier_wait(&barrier);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "barrier_wait returned %d", rc);
    cuda_call();
    return NULL;
}

/* ---- 6. return values and errno */
static void check_results(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    errno = 77;
    CHECK(pthread_mutex_trylock(&m) == EBUSY, "trylock of a locked mutex is not EBUSY");
    CHECK(errno == 77, "trylock changed errno");
    struct timespec past;
    clock_gettime(CLOCK_REALTIME, &past);
    past.tv_nsec = 0;
    CHECK(pthread_mutex_timedlock(&m, &past) == ETIMEDOUT, "timedlock of a locked mutex is not ETIMEDOUT");
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    struct timespec soon;
    clock_gettime(CLOCK_REALTIME, &soon);
    soon.tv_nsec += 2000000;
    if (soon.tv_nsec >= 1000000000) { soon.tv_sec++; soon.tv_nsec -= 1000000000; }
    errno = 78;
    CHECK(pthread_cond_timedwait(&cv, &m, &soon) == ETIMEDOUT, "cond_timedwait did not time out");
    CHECK(errno == 78, "cond_timedwait changed errno");
    CHECK(pthread_mutex_unlock(&m) == 0, "unlock after timedwait failed (mutex not reacquired?)");
    CHECK(pthread_mutex_destroy(&m) == 0, "mutex_destroy failed");

    sem_t s;
    sem_init(&s, 0, 0);
    errno = 0;
    CHECK(sem_trywait(&s) == -1 && errno == EAGAIN, "sem_trywait on 0 is not -1/EAGAIN");
    clock_gettime(CLOCK_REALTIME, &past);
    errno = 0;
    CHECK(sem_timedwait(&s, &past) == -1 && errno == ETIMEDOUT, "sem_timedwait is not -1/ETIMEDOUT");
    errno = 79;
    CHECK(sem_post(&s) == 0 && errno == 79, "sem_post changed errno");
    CHECK(sem_trywait(&s) == 0 && errno == 79, "sem_trywait after post failed or changed errno");
    sem_destroy(&s);

    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    CHECK(pthread_rwlock_wrlock(&rw) == 0, "wrlock failed");
    CHECK(pthread_rwlock_tryrdlock(&rw) == EBUSY, "tryrdlock of a write-locked rwlock is not EBUSY");
    CHECK(pthread_rwlock_unlock(&rw) == 0, "rwlock unlock failed");
    pthread_t th;
    CHECK(pthread_join(pthread_self(), NULL) == EDEADLK, "self-join is not EDEADLK");
    CHECK(pthread_create(&th, NULL, created, NULL) == 0, "pthread_create failed");
    void *ret = (void *)1;
    CHECK(pthread_join(th, &ret) == 0 && ret == NULL, "join of a thread returning NULL");
}

int main(void)
{
    pthread_t a, b, c, d, clean;
    say("main", tid());
    pthread_create(&clean, NULL, truly_clean, NULL);   /* before main learns of any CUDA work */
    check_results();
    cuda_call();                        /* main has CUDA work from here on */
    __atomic_store_n(&clean_go, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&clean_done, __ATOMIC_ACQUIRE)) {
        cuda_call();
        usleep(1000);
    }

    say("handoff_mu", (uint64_t)(uintptr_t)&handoff_mu);
    pthread_create(&b, NULL, handoff_b, NULL);
    pthread_create(&a, NULL, handoff_a, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);

    say("busy_mu", (uint64_t)(uintptr_t)&busy_mu);
    pthread_create(&c, NULL, busy_clean, NULL);
    while (!busy_done) {                /* main keeps publishing CUDA work to busy_mu */
        cuda_call();
        pthread_mutex_lock(&busy_mu);
        pthread_mutex_unlock(&busy_mu);
        usleep(1000);
    }
    pthread_join(c, NULL);
    CHECK(busy_counter == 1000000, "lost increments: %ld", busy_counter);

    cuda_call();
    pthread_create(&d, NULL, created, NULL);
    pthread_join(d, NULL);
    cuda_call();                        /* the join's acquire is written before this */
    pthread_create(&d, NULL, created_exit, NULL);
    pthread_join(d, NULL);
    cuda_call();

    sem_init(&handoff_sem, 0, 0);
    say("handoff_sem", (uint64_t)(uintptr_t)&handoff_sem);
    pthread_create(&a, NULL, poster, NULL);
    CHECK(sem_wait(&handoff_sem) == 0, "sem_wait failed");
    cuda_call();
    pthread_join(a, NULL);

    pthread_barrier_init(&barrier, NULL, 3);
    say("barrier", (uint64_t)(uintptr_t)&barrier);
    pthread_t bt[3];
    static char *names[3] = { "barrier_0", "barrier_1", "barrier_2" };
    for (int i = 0; i < 3; i++)
        pthread_create(&bt[i], NULL, barrier_thread, names[i]);
    for (int i = 0; i < 3; i++)
        pthread_join(bt[i], NULL);
    pthread_barrier_destroy(&barrier);
    pthread_join(clean, NULL);

    if (failures)
        fprintf(stderr, "hostsync_prog: %d failures\n", failures);
    return failures ? 1 : 0;
}
