// device-sync-overuse: each iteration needs only the small result computed on
// `fast`, but waits with cudaDeviceSynchronize(), which also waits for the
// 20 ms of unrelated work queued on `background` -- so the loop runs at the
// background stream's pace (~200 ms) instead of ~10 ms.
// Fixed twin: device_sync_loop_fixed.cu (cudaStreamSynchronize(fast)).
#include "ss_test.cuh"

#define ITERATIONS 10

#ifndef WAIT_FOR_RESULT
#define WAIT_FOR_RESULT(fast_stream) CK(cudaDeviceSynchronize())
#define PROGRAM_NAME "device_sync_loop"
#endif

int main(void)
{
    ss_init_device();
    cudaStream_t fast, background;
    CK(cudaStreamCreateWithFlags(&fast, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&background, cudaStreamNonBlocking));
    int *device_result;
    CK(cudaMalloc(&device_result, sizeof(int)));
    int *host_result;
    CK(cudaMallocHost(&host_result, sizeof(int)));

    long long total = 0;
    for (int it = 0; it < ITERATIONS; it++) {
        ss_spin(background, 20); // long work nobody waits for inside the loop
        spin_kernel<<<1, 1, 0, fast>>>(ss_ms_to_ns(1), device_result, it + 1);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(host_result, device_result, sizeof(int), cudaMemcpyDeviceToHost, fast));
        WAIT_FOR_RESULT(fast); // EXPECT-SITE device-sync-overuse
        total += *host_result;
    }
    CK(cudaStreamSynchronize(background));
    printf("%s: total=%lld\n", PROGRAM_NAME, total);
    CK(cudaFreeHost(host_result));
    CK(cudaFree(device_result));
    CK(cudaStreamDestroy(fast));
    CK(cudaStreamDestroy(background));
    return total == ITERATIONS * (ITERATIONS + 1) / 2 ? 0 : 1;
}
