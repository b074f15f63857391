// Fixed twin of pageable_d2h_loop.cu: the host buffer is pinned (cudaMallocHost),
// so every cudaMemcpyAsync returns at once and the loop only enqueues work;
// the host waits once, at the end, for what it needs.
#include "ss_test.cuh"

#define ITERATIONS 10
#define CHUNK_INTS (256 * 1024) // 1 MiB per chunk

__global__ void produce_chunk(int *chunk, int n, int iteration, unsigned long long spin_ns)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        chunk[i] = iteration * 1000 + (i & 7);
}

int main(void)
{
    ss_init_device();
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int *device_chunks;
    CK(cudaMalloc(&device_chunks, sizeof(int) * CHUNK_INTS * ITERATIONS));
    int *host_chunks = NULL;
    CK(cudaMallocHost(&host_chunks, sizeof(int) * CHUNK_INTS * ITERATIONS)); // pinned
    if (host_chunks == NULL)
        return 1;

    for (int it = 0; it < ITERATIONS; it++) {
        int *chunk = device_chunks + (size_t)it * CHUNK_INTS;
        produce_chunk<<<1, 256, 0, stream>>>(chunk, CHUNK_INTS, it, ss_ms_to_ns(5));
        CK_LAUNCH();
        int *host_chunk = host_chunks + (size_t)it * CHUNK_INTS;
        CK(cudaMemcpyAsync(host_chunk, chunk, sizeof(int) * CHUNK_INTS, cudaMemcpyDeviceToHost, stream));
    }
    CK(cudaStreamSynchronize(stream));

    long long checksum = 0;
    for (int i = 0; i < CHUNK_INTS * ITERATIONS; i++)
        checksum += host_chunks[i];
    printf("pageable_d2h_loop_fixed: checksum=%lld\n", checksum);
    CK(cudaFreeHost(host_chunks));
    CK(cudaFree(device_chunks));
    CK(cudaStreamDestroy(stream));
    return 0;
}
