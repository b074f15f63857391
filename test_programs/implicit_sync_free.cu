// implicit-sync: cudaFree() of a buffer while a kernel runs blocks the host
// until the whole device is idle (measured: a 50 ms kernel makes cudaFree take
// 50 ms), although neither the freed buffer nor the host needed that kernel.
// Fixed twin: implicit_sync_free_fixed.cu.
#include "ss_test.cuh"

int main(void)
{
    ss_init_device();
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    int *result, *scratch, *host_result;
    CK(cudaMalloc(&result, sizeof(int)));
    CK(cudaMalloc(&scratch, 1 << 20));
    // Pinned, so the read-back below is a real async copy and the only
    // pathology in this program is the cudaFree.
    CK(cudaMallocHost(&host_result, sizeof(int)));
    *host_result = 0;

    // 50 ms of work whose result the program wants later.
    spin_kernel<<<1, 1, 0, stream>>>(ss_ms_to_ns(50), result, 42);
    CK_LAUNCH();
    // The scratch buffer is done with, so the program frees it "early" --
    // and waits here for the kernel above.
    CK(cudaFree(scratch)); // EXPECT-SITE implicit-sync

    CK(cudaMemcpyAsync(host_result, result, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    int value = *host_result;
    printf("implicit_sync_free: result=%d\n", value);
    CK(cudaFreeHost(host_result));
    CK(cudaFree(result));
    CK(cudaStreamDestroy(stream));
    return value == 42 ? 0 : 1;
}
