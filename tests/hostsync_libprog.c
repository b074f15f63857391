/*
 * A mutex handoff between two threads that make (fake) CUDA calls, with the
 * lock taken inside a library (tests/hostsync_lib.c) rather than by the
 * program: recorded when the library is the application's, not when it is
 * a CUDA library.  Prints "handoff_mu ADDRESS" for tests/test_hostsync.sh.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <cuda_runtime_api.h>

int hs_lib_set(pthread_mutex_t *mu, int *flag);
int hs_lib_get(pthread_mutex_t *mu, const int *flag);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int flag;

static void *setter(void *arg)
{
    (void)arg;
    (void)cudaStreamQuery(NULL);
    return (void *)(intptr_t)hs_lib_set(&mu, &flag);
}

static void *getter(void *arg)
{
    (void)arg;
    (void)cudaStreamQuery(NULL);
    while (hs_lib_get(&mu, &flag) == 0)
        ;
    (void)cudaStreamQuery(NULL);
    return NULL;
}

int main(void)
{
    printf("handoff_mu %llu\n", (unsigned long long)(uintptr_t)&mu);
    pthread_t a, b;
    void *rc = NULL;
    if (pthread_create(&b, NULL, getter, NULL) || pthread_create(&a, NULL, setter, NULL))
        return 1;
    pthread_join(a, &rc);
    pthread_join(b, NULL);
    return rc != NULL;
}
