// NVIDIA's "How to Overlap Data Transfers in CUDA C/C++" (async.cu), its
// first loop: the array is cut into nStreams chunks; stream i copies chunk i in
// (cudaMemcpyAsync of &d_a[offset]), runs kernel(d_a, offset) -- the BASE
// pointer and the chunk's offset as an int -- and copies chunk i out; then
// the host waits and checks.  Each stream touches only its own chunk: correct
// without cross-stream ordering.  A kernel's pointer argument is the array's
// base on every stream, and what it touches starts at base + offset.
// Expected: nothing to report.
#include "ss_test.cuh"
#include <math.h>

__global__ void kernel(float *a, int offset)
{
    int i = offset + threadIdx.x + blockIdx.x * blockDim.x;
    float x = (float)i;
    float s = sinf(x);
    float c = cosf(x);
    a[i] = a[i] + sqrtf(s * s + c * c);
}

int main(void)
{
    ss_init_device();
    const int blockSize = 256, nStreams = 4;
    const int n = 4 * 1024 * blockSize * nStreams;
    const int streamSize = n / nStreams;
    const int streamBytes = streamSize * sizeof(float);
    const int bytes = n * sizeof(float);
    float *a, *d_a;
    CK(cudaMallocHost((void **)&a, bytes));
    CK(cudaMalloc((void **)&d_a, bytes));
    cudaStream_t stream[nStreams];
    for (int i = 0; i < nStreams; ++i) CK(cudaStreamCreate(&stream[i]));
    memset(a, 0, bytes);
    // warm-up, one stream: module loading before the streams overlap
    kernel<<<1, blockSize, 0, stream[0]>>>(d_a, 0);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(stream[0]));

    for (int i = 0; i < nStreams; ++i) {
        int offset = i * streamSize;
        CK(cudaMemcpyAsync(&d_a[offset], &a[offset], streamBytes, cudaMemcpyHostToDevice, stream[i]));
        kernel<<<streamSize / blockSize, blockSize, 0, stream[i]>>>(d_a, offset);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(&a[offset], &d_a[offset], streamBytes, cudaMemcpyDeviceToHost, stream[i]));
    }
    CK(cudaDeviceSynchronize());

    float maxError = 0.0f;
    for (int i = 0; i < n; i++) maxError = fmaxf(maxError, fabsf(a[i] - 1.0f));
    printf("sample_overlap_offsets: max error %g: %s\n", maxError, maxError < 1e-5f ? "PASSED" : "FAILED");
    for (int i = 0; i < nStreams; ++i) CK(cudaStreamDestroy(stream[i]));
    CK(cudaFreeHost(a));
    CK(cudaFree(d_a));
    return maxError < 1e-5f ? 0 : 1;
}
