// Managed memory with prefetches on streams, as NVIDIA's unified memory blog
// posts write it ("Unified Memory for CUDA Beginners", "Maximizing Unified
// Memory Performance in CUDA"): cudaMallocManaged, the host initializes, a
// cudaMemAdvise hint (x read-mostly), then per chunk on its own stream:
// cudaMemPrefetchAsync of the chunk to the GPU, a kernel over it, and
// cudaMemPrefetchAsync of the result back to the CPU (cudaMemLocationTypeHost);
// each stream synchronized before the host reads its chunk.
//
// Why it is correct: a chunk's prefetches and kernel are on one stream, in
// order; prefetches move pages, they do not change data; the host reads a
// chunk only after its stream's cudaStreamSynchronize, and frees after all of
// them.  Expected: no finding of any rule (a stranger's correct program).
#include <cstdio>
#include "ss_test.cuh"

__global__ void saxpy(size_t n, float a, const float *x, float *y)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

int main()
{
    const size_t N = 1 << 24;
    const int CHUNKS = 4, ROUNDS = 3;
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
    cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 };
    if (concurrent) CK(cudaMemAdvise(x, N * sizeof(float), cudaMemAdviseSetReadMostly, gpu));

    cudaStream_t streams[CHUNKS];
    for (int c = 0; c < CHUNKS; c++) CK(cudaStreamCreate(&streams[c]));
    const size_t per = N / CHUNKS;
    int bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int c = 0; c < CHUNKS; c++) {
            float *xc = x + c * per, *yc = y + c * per;
            if (concurrent) {
                CK(cudaMemPrefetchAsync(xc, per * sizeof(float), gpu, 0, streams[c]));
                CK(cudaMemPrefetchAsync(yc, per * sizeof(float), gpu, 0, streams[c]));
            }
            saxpy<<<264, 256, 0, streams[c]>>>(per, 2.0f, xc, yc);
            CK_LAUNCH();
            if (concurrent) CK(cudaMemPrefetchAsync(yc, per * sizeof(float), cpu, 0, streams[c]));
        }
        for (int c = 0; c < CHUNKS; c++) {
            CK(cudaStreamSynchronize(streams[c]));
            // y = 2 + 2 * (round + 1) after this round
            const float want = 2.0f + 2.0f * (round + 1);
            for (size_t i = c * per; i < (c + 1) * per; i += 4097)
                if (y[i] != want) bad++;
        }
    }
    for (int c = 0; c < CHUNKS; c++) CK(cudaStreamDestroy(streams[c]));
    CK(cudaFree(x));
    CK(cudaFree(y));
    printf("um prefetch streams: %d chunks x %d rounds, concurrent managed access %d, %s\n", CHUNKS, ROUNDS,
           concurrent, bad ? "WRONG" : "correct");
    return bad ? 1 : 0;
}
