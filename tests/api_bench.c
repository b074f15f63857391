/*
 * Wrapper overhead on the CPU: times cudaLaunchKernel (host stub, 3 params),
 * on the legacy stream and on a stream of its own, __cudaLaunchKernel
 * (cudaKernel_t, 40 params: 32 stored) and
 * cudaMemcpyAsync (device <- pageable: two memory-kind lookups) against the
 * fake libcudart.so.13 / libcuda.so.1 of the interposer test, whose
 * functions return at once.  Run it with and without
 * LD_PRELOAD=build/libsyncsight.so (`make api-bench` does both): the
 * difference is what the shim adds per call, buffer and writer included.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda_runtime_api.h>

extern unsigned char fake_device_mem[4096];
extern cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                      size_t sharedMem, cudaStream_t stream);
void bench_stub(void *a, int n, void *b);
void bench_stub(void *a, int n, void *b) { (void)a; (void)n; (void)b; }

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define CALLS 200000

int main(void)
{
    void *a = fake_device_mem, *b = fake_device_mem + 64;
    int n = 3;
    void *args[3] = { &a, &n, &b };
    uint64_t values[40];
    void *kargs[40];
    for (int i = 0; i < 40; i++) {
        values[i] = (uint64_t)i;
        kargs[i] = &values[i];
    }
    void *kernel = malloc(64);
    static unsigned char pageable[4096];
    int errors = 0;

    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
        errors += cudaLaunchKernel((const void *)bench_stub, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, 0) != 0;
    double t1 = now_ns();
    for (int i = 0; i < CALLS; i++)
        errors += __cudaLaunchKernel((cudaKernel_t)kernel, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, kargs, 0, 0) != 0;
    double t2 = now_ns();
    for (int i = 0; i < CALLS; i++)
        errors += cudaMemcpyAsync(fake_device_mem, pageable, 64, cudaMemcpyHostToDevice, 0) != 0;
    double t3 = now_ns();
    /* The common case in real programs: a launch on a stream of its own
     * (not blamed: its native stack is sampled, see preload/callsite.c). */
    cudaStream_t stream = (cudaStream_t)(uintptr_t)0x5010;
    for (int i = 0; i < CALLS; i++)
        errors += cudaLaunchKernel((const void *)bench_stub, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0,
                                   stream) != 0;
    double t4 = now_ns();

    printf("cudaLaunchKernel (stub, 3 params)      %7.1f ns/call\n", (t1 - t0) / CALLS);
    printf("__cudaLaunchKernel (40 params, 32 kept) %7.1f ns/call\n", (t2 - t1) / CALLS);
    printf("cudaMemcpyAsync (2 memory kinds)        %7.1f ns/call\n", (t3 - t2) / CALLS);
    printf("cudaLaunchKernel (non-default stream)   %7.1f ns/call\n", (t4 - t3) / CALLS);
    free(kernel);
    return errors != 0;
}
