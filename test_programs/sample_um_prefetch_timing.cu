// Timing a kernel over managed memory the way benchmarks and NVIDIA's
// "Maximizing Unified Memory Performance in CUDA" post do it: prefetch the
// array to the GPU (cudaMemPrefetchAsync) and wait for it, so that page
// migration is not timed; record an event, run the kernel, record an event,
// cudaEventSynchronize and cudaEventElapsedTime; then prefetch the array back
// to the host and wait for that before the host reads it.  Five repetitions.
//
// Why it is correct: each wait is needed (the first keeps migration out of
// the timed interval, the event sync gives the time, the last lets the host
// read data that is already home); everything is on one stream.  The two
// stream synchronizes wait for prefetches only, which syncsight does not
// record (no interposed entry point, no CUPTI record): they blocked for
// milliseconds, so they must not be reported as waits that synchronized
// nothing.  Expected: no finding of any rule.
#include <cstdio>
#include "ss_test.cuh"

__global__ void scale(size_t n, float *y)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = 2.0f * y[i] + 1.0f;
}

int main()
{
    const size_t N = 1 << 26;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    int concurrent = 0;
    CK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev));
    float *y;
    CK(cudaMallocManaged(&y, N * sizeof(float)));
    for (size_t i = 0; i < N; i++) y[i] = 1.0f;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaMemLocation gpu = { cudaMemLocationTypeDevice, dev }, cpu = { cudaMemLocationTypeHost, 0 };
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    float want = 1.0f;
    int bad = 0;
    for (int rep = 0; rep < 5; rep++) {
        if (concurrent) CK(cudaMemPrefetchAsync(y, N * sizeof(float), gpu, 0, s));
        CK(cudaStreamSynchronize(s));   // the data is on the GPU before the timed interval
        CK(cudaEventRecord(start, s));
        scale<<<1024, 256, 0, s>>>(N, y);
        CK_LAUNCH();
        CK(cudaEventRecord(stop, s));
        CK(cudaEventSynchronize(stop));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, start, stop));
        if (concurrent) CK(cudaMemPrefetchAsync(y, N * sizeof(float), cpu, 0, s));
        CK(cudaStreamSynchronize(s));   // home before the host reads
        want = 2.0f * want + 1.0f;
        for (size_t i = 0; i < N; i += 65537)
            if (y[i] != want) bad++;
        printf("rep %d: kernel %.3f ms\n", rep, ms > 0 ? ms : 0.0f);
    }
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(y));
    printf("um prefetch timing: %s\n", bad ? "WRONG" : "correct");
    return bad ? 1 : 0;
}
