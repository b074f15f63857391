/*
 * OpenMP (GCC's libgomp; LLVM's libomp through OMPT when built with clang) under the shim (tests/test_hostsync.sh): regions
 * whose workers make (fake) CUDA calls must give fork/join records for each
 * such worker; a region whose workers make none gives no worker record.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cuda_runtime_api.h>

static unsigned tid(void) { return (unsigned)syscall(SYS_gettid); }

int main(void)
{
    printf("main %u\n", tid());
    (void)cudaStreamQuery(NULL);
    /* 1: every thread calls CUDA, with a barrier in between */
#pragma omp parallel num_threads(4)
    {
#pragma omp critical
        printf("region1 %u\n", tid());
        (void)cudaStreamQuery(NULL);
#pragma omp barrier
        (void)cudaStreamQuery(NULL);
    }
    (void)cudaStreamQuery(NULL);
    /* 2: the workers only compute */
    long sum = 0;
#pragma omp parallel for num_threads(4) reduction(+ : sum)
    for (long i = 0; i < 100000; i++)
        sum += i;
    (void)cudaStreamQuery(NULL);
    /* 3: a dynamic loop (GOMP_parallel_loop_dynamic) whose iterations call CUDA */
#pragma omp parallel for num_threads(4) schedule(dynamic, 1)
    for (int i = 0; i < 64; i++) {
        (void)cudaStreamQuery(NULL);
        usleep(500); /* so that the workers get iterations too, however slow they wake */
#pragma omp critical
        printf("region3 %u\n", tid());
    }
    (void)cudaStreamQuery(NULL);
    printf("sum %ld\n", sum);
    return sum == 4999950000L ? 0 : 1;
}
