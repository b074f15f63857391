// Fixed twin of implicit_sync_free.cu: the scratch buffer comes from the
// stream-ordered allocator and goes back with cudaFreeAsync, which returns at
// once (measured < 1.2 ms with a 50 ms kernel in flight).
#include "ss_test.cuh"

int main(void)
{
    ss_init_device();
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    int *result, *scratch;
    CK(cudaMalloc(&result, sizeof(int)));
    // The first cudaMallocAsync sets up the pool (~10 ms); do it before any
    // GPU work is in flight so it cannot be mistaken for a wait.
    CK(cudaMallocAsync((void **)&scratch, 1 << 20, stream));
    CK(cudaStreamSynchronize(stream));

    spin_kernel<<<1, 1, 0, stream>>>(ss_ms_to_ns(50), result, 42);
    CK_LAUNCH();
    CK(cudaFreeAsync(scratch, stream));

    int *host_result;
    CK(cudaMallocHost(&host_result, sizeof(int)));
    *host_result = 0;
    CK(cudaMemcpyAsync(host_result, result, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    int value = *host_result;
    printf("implicit_sync_free_fixed: result=%d\n", value);
    CK(cudaFreeHost(host_result));
    CK(cudaFree(result));
    CK(cudaStreamDestroy(stream));
    return value == 42 ? 0 : 1;
}
