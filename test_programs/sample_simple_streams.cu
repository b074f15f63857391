// Written the way NVIDIA's simpleStreams sample and the "How to overlap data
// transfers in CUDA C/C++" guide write it: pinned host arrays, N streams made
// with cudaStreamCreate, and per stream i an H2D copy of chunk i, a kernel on
// chunk i and a D2H copy of chunk i; then cudaDeviceSynchronize and a check.
// Each stream touches only its own chunks and the host waits for the whole
// device before reading: correct in the legacy and the per-thread build.
// Expected: nothing to report.
#include "ss_test.cuh"
#include <math.h>

#define NSTREAMS 4
#define N (4 * 1024 * 1024)
#define CHUNK (N / NSTREAMS)
#define BLOCK 256

__global__ void kernel(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        float s = sinf(x), c = cosf(x);
        out[i] = sqrtf(s * s + c * c) + x; // == x + 1 (up to rounding)
    }
}

int main(void)
{
    ss_init_device();
    float *h_in, *h_out, *d_in, *d_out;
    CK(cudaMallocHost(&h_in, N * sizeof(float)));  // pinned: the copies can overlap
    CK(cudaMallocHost(&h_out, N * sizeof(float)));
    CK(cudaMalloc(&d_in, N * sizeof(float)));
    CK(cudaMalloc(&d_out, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        h_in[i] = (float)(i % 1024) * 0.01f;

    cudaStream_t stream[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamCreate(&stream[i]));

    for (int i = 0; i < NSTREAMS; i++) {
        int offset = i * CHUNK;
        CK(cudaMemcpyAsync(d_in + offset, h_in + offset, CHUNK * sizeof(float), cudaMemcpyHostToDevice,
                           stream[i]));
        kernel<<<CHUNK / BLOCK, BLOCK, 0, stream[i]>>>(d_in + offset, d_out + offset, CHUNK);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h_out + offset, d_out + offset, CHUNK * sizeof(float), cudaMemcpyDeviceToHost,
                           stream[i]));
    }
    CK(cudaDeviceSynchronize());

    int bad = 0;
    for (int i = 0; i < N; i++)
        if (fabsf(h_out[i] - (h_in[i] + 1.0f)) > 1e-4f)
            bad++;
    printf("sample_simple_streams: %s\n", bad ? "FAILED" : "PASSED");
    if (bad)
        fprintf(stderr, "sample_simple_streams: %d of %d results wrong\n", bad, N);

    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamDestroy(stream[i]));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaFreeHost(h_in));
    CK(cudaFreeHost(h_out));
    return bad ? 1 : 0;
}
