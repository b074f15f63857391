// Streams named as people think of them: a stream the program named with
// nvtxNameCudaStreamA is called by that name in every finding; an unnamed
// one by CUPTI's stream number and the line that created it -- never by its
// cudaStream_t pointer.  Each stream gets a pageable-async-copy finding
// (cudaMemcpyAsync device-to-host into malloc()ed memory) whose message
// names the stream.
// NVCC-FLAGS: -ldl
#include <nvtx3/nvToolsExtCudaRt.h>
#include "ss_test.cuh"

#define INTS (256 * 1024)

__global__ void fill(int *p, int n, int v)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = v + (i & 7);
}

int main(void)
{
    ss_init_device();
    cudaStream_t named, unnamed;
    CK(cudaStreamCreateWithFlags(&named, cudaStreamNonBlocking));
    nvtxNameCudaStreamA(named, "uploads");
    CK(cudaStreamCreateWithFlags(&unnamed, cudaStreamNonBlocking)); // the line the report names
    int *dev;
    CK(cudaMalloc(&dev, sizeof(int) * INTS * 2));
    int *host = (int *)malloc(sizeof(int) * INTS * 2); // pageable
    if (host == NULL)
        return 1;
    for (int it = 0; it < 4; it++) {
        fill<<<64, 256, 0, named>>>(dev, INTS, it);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(host, dev, sizeof(int) * INTS, cudaMemcpyDeviceToHost, named)); // EXPECT-SITE pageable-async-copy
        fill<<<64, 256, 0, unnamed>>>(dev + INTS, INTS, it);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(host + INTS, dev + INTS, sizeof(int) * INTS, cudaMemcpyDeviceToHost, unnamed)); // EXPECT-SITE pageable-async-copy
    }
    CK(cudaStreamSynchronize(named));
    CK(cudaStreamSynchronize(unnamed));
    long long sum = 0;
    for (int i = 0; i < INTS * 2; i++)
        sum += host[i];
    printf("stream_names: checksum=%lld\n", sum);
    free(host);
    CK(cudaFree(dev));
    CK(cudaStreamDestroy(named));
    CK(cudaStreamDestroy(unnamed));
    return 0;
}
