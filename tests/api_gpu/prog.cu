// GPU check of the API recording (tests/api_gpu/run.sh builds it with the
// shared cudart, the static cudart and --default-stream per-thread).  Makes a
// known set of calls and prints the handles/pointers ("key value") that
// check.c compares with the trace.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void scale(float *dst, int n, const float *src)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = 2.0f * src[i];
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main()
{
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    CK(cudaSetDevice(0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *d_dst, *d_src, *pinned;
    CK(cudaMalloc(&d_dst, bytes));
    CK(cudaMalloc(&d_src, bytes));
    CK(cudaMallocHost(&pinned, bytes));
    float *pageable = (float *)malloc(bytes);
    for (int i = 0; i < n; i++)
        pageable[i] = (float)i;
    CK(cudaMemcpyAsync(d_src, pageable, bytes, cudaMemcpyHostToDevice, s));
    scale<<<(n + 255) / 256, 256, 0, s>>>(d_dst, n, d_src);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(pinned, d_dst, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (pinned[5] != 10.0f) { fprintf(stderr, "wrong result %f\n", pinned[5]); return 1; }
    CK(cudaMemcpy(pageable, d_dst, bytes, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_src));
    CK(cudaDeviceSynchronize());
    printf("stream %llu\n", (unsigned long long)(uintptr_t)s);
    printf("d_dst %llu\nd_src %llu\npinned %llu\npageable %llu\n", (unsigned long long)(uintptr_t)d_dst,
           (unsigned long long)(uintptr_t)d_src, (unsigned long long)(uintptr_t)pinned,
           (unsigned long long)(uintptr_t)pageable);
    CK(cudaFree(d_dst));
    CK(cudaFreeHost(pinned));
    CK(cudaStreamDestroy(s));
    free(pageable);
    return 0;
}
