// streams_first_call: a program whose first CUDA call creates its streams
// (no cudaSetDevice, no cudaFree(0) first), as many small programs and
// CuPy start.  That call also creates the context, and with it the driver's
// own streams, the legacy default stream among them; CUPTI gives all of
// their STREAM records the creating call's correlation id.  Then two
// independent pipelines, one per non-blocking stream: copy in, a kernel,
// copy out, each stream synchronized before its results are checked.
// Correct, and no stream of it is the legacy default stream: expected, no
// finding.  On the H200 (2026-11-29) the trace held that record pattern (the
// driver's streams 6-12 and the created stream 13 under the first call's
// correlation id); the analyzer before 0e538a3 showed stream 13 as "stream
// 0x0 (legacy default)", with no finding here (in cupy_stream_pipeline.py
// its synchronizes became two device-sync-overuse findings).
#include <cstdio>
#include "ss_test.cuh"

__global__ void axpb(float *x, int n, float a, float b)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = a * x[i] + b;
}

int main(void)
{
    const int N = 1 << 20, STEPS = 8;
    cudaStream_t s[2];
    CK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));   // the process's first CUDA call
    CK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
    float *d[2], *h[2];
    for (int k = 0; k < 2; k++) {
        CK(cudaMalloc(&d[k], N * sizeof(float)));
        CK(cudaMallocHost(&h[k], N * sizeof(float)));
    }
    int bad = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < N; i += 4096) h[k][i] = (float)(step + k);
            CK(cudaMemcpyAsync(d[k], h[k], N * sizeof(float), cudaMemcpyHostToDevice, s[k]));
            axpb<<<264, 256, 0, s[k]>>>(d[k], N, 2.0f, 1.0f);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(h[k], d[k], N * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
        }
        for (int k = 0; k < 2; k++) {
            CK(cudaStreamSynchronize(s[k]));
            if (h[k][4096] != 2.0f * (step + k) + 1.0f) bad++;
        }
    }
    for (int k = 0; k < 2; k++) {
        CK(cudaFreeHost(h[k]));
        CK(cudaFree(d[k]));
        CK(cudaStreamDestroy(s[k]));
    }
    printf("streams_first_call: %d steps on 2 streams, %s\n", STEPS, bad ? "WRONG" : "correct");
    return bad ? 1 : 0;
}
