// The per-thread default stream named explicitly (cudaStreamPerThread) in a
// program built WITHOUT --default-stream per-thread, as libraries that want
// one stream per host thread do (RAPIDS' rmm::cuda_stream_per_thread,
// cuda::stream_ref{cudaStreamPerThread}).  Four std::threads each allocate
// pinned and device buffers, then per batch: copy in, two kernels, copy out
// on cudaStreamPerThread, cudaStreamSynchronize(cudaStreamPerThread), check
// on the host.  The main thread allocates and frees around them.
//
// Why it is correct: each thread uses its own per-thread stream (handle 0x2
// means a different stream on every thread) and its own buffers; every host
// read follows a synchronize of the stream that wrote.  A tool that took
// handle 0x2 for one stream shared by all threads, or for the legacy stream,
// would see four threads' kernels interleaved on it.  Expected: no finding
// of any rule.
#include <thread>
#include <vector>
#include "ss_test.cuh"

#define THREADS 4
#define BATCHES 12
#define N (1 << 18)

__global__ void scale(float *x, int n, float f)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] *= f;
}

__global__ void offset(float *x, int n, float a)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] += a;
}

static void worker(int index, float *dev, float *host, int *bad)
{
    CK(cudaSetDevice(0));
    for (int b = 0; b < BATCHES; b++) {
        for (int i = 0; i < N; i++)
            host[i] = (float)(i % 1000);
        CK(cudaMemcpyAsync(dev, host, N * sizeof(float), cudaMemcpyHostToDevice, cudaStreamPerThread));
        scale<<<256, 256, 0, cudaStreamPerThread>>>(dev, N, 2.0f);
        CK_LAUNCH();
        offset<<<256, 256, 0, cudaStreamPerThread>>>(dev, N, (float)(index + b));
        CK_LAUNCH();
        CK(cudaMemcpyAsync(host, dev, N * sizeof(float), cudaMemcpyDeviceToHost, cudaStreamPerThread));
        CK(cudaStreamSynchronize(cudaStreamPerThread));
        for (int i = 0; i < N; i += 997)
            if (host[i] != 2.0f * (float)(i % 1000) + (float)(index + b))
                (*bad)++;
    }
}

int main()
{
    ss_init_device();
    float *dev[THREADS], *host[THREADS];
    int bad[THREADS] = {};
    for (int t = 0; t < THREADS; t++) {
        CK(cudaMalloc(&dev[t], N * sizeof(float)));
        CK(cudaMallocHost(&host[t], N * sizeof(float)));
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < THREADS; t++)
        threads.emplace_back(worker, t, dev[t], host[t], &bad[t]);
    for (auto &th : threads)
        th.join();
    int wrong = 0;
    for (int t = 0; t < THREADS; t++) {
        wrong += bad[t];
        CK(cudaFreeHost(host[t]));
        CK(cudaFree(dev[t]));
    }
    printf("explicit per-thread streams: %s\n", wrong ? "WRONG" : "correct");
    return wrong ? 1 : 0;
}
