// NVCC-FLAGS: -lcuda
// Unified memory written the way NVIDIA's "Unified Memory for CUDA
// Beginners" post and many benchmarks write it: managed arrays, the default
// stream, cudaDeviceSynchronize after each step.  Each repetition prefetches
// the arrays to the GPU and waits, so that page migration is not timed;
// times the kernel with a host clock around its launch and a
// cudaDeviceSynchronize; then prefetches the result back to the host and
// waits before the host reads it.  The prefetch back uses the driver API
// (cuMemPrefetchAsync), as libraries built on it do.  Five repetitions.
//
// Why it is correct: every wait is needed.  Two of the three device
// synchronizes of each repetition wait for a prefetch only: GPU work that
// CUPTI gives no activity record for.  They must not be reported as syncs
// that "synchronized nothing" (they blocked for the migration), nor as
// waits longer than needed.  Expected: no finding of any rule.
#include <chrono>
#include <cstdio>
#include <cuda.h>
#include "ss_test.cuh"

__global__ void add(size_t n, const float *x, float *y)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = x[i] + y[i];
}

int main()
{
    const size_t N = 1 << 25;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    int concurrent = 0;
    CK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev));
    float *x, *y;
    CK(cudaMallocManaged(&x, N * sizeof(float)));
    CK(cudaMallocManaged(&y, N * sizeof(float)));
    for (size_t i = 0; i < N; i++) {
        x[i] = 1.0f;
        y[i] = 2.0f;
    }
    cudaMemLocation gpu = { cudaMemLocationTypeDevice, dev };
    CUmemLocation host = {};
    host.type = CU_MEM_LOCATION_TYPE_HOST;
    float want = 2.0f;
    int bad = 0;
    for (int rep = 0; rep < 5; rep++) {
        if (concurrent) {
            CK(cudaMemPrefetchAsync(x, N * sizeof(float), gpu, 0, 0));
            CK(cudaMemPrefetchAsync(y, N * sizeof(float), gpu, 0, 0));
        }
        CK(cudaDeviceSynchronize());   // on the GPU before the clock starts
        auto t0 = std::chrono::steady_clock::now();
        add<<<1024, 256>>>(N, x, y);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (concurrent && cuMemPrefetchAsync((CUdeviceptr)y, N * sizeof(float), host, 0, (CUstream)0) != CUDA_SUCCESS) {
            fprintf(stderr, "cuMemPrefetchAsync failed\n");
            return 1;
        }
        CK(cudaDeviceSynchronize());   // home before the host reads
        want += 1.0f;
        for (size_t i = 0; i < N; i += 65537)
            if (y[i] != want) bad++;
        printf("rep %d: kernel %.3f ms\n", rep, ms);
    }
    CK(cudaFree(x));
    CK(cudaFree(y));
    printf("um prefetch devsync: %s\n", bad ? "WRONG" : "correct");
    return bad ? 1 : 0;
}
