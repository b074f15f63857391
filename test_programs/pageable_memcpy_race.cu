// A synchronous cudaMemcpy from pageable memory is not a fence for other
// streams.  Each round the host fills a malloc'd buffer, copies it to the
// device with cudaMemcpy on the legacy stream, and at once launches a kernel
// on a non-blocking stream that checks every element of the device buffer.
// CUDA's synchronization rules let a pageable-to-device cudaMemcpy return
// once its data is staged, before the copy lands, and a non-blocking stream
// does not wait for the legacy stream: the check may run before the copy has
// landed and count stale elements (printed; measured copies of 64 KB land
// 7 us after the call returns, bench/pageable_landing.cu).
// Fixed twin: pageable_memcpy_race_fixed.cu (an event recorded on the legacy
// stream after the copy, waited for by the checking stream).
// Expected: missing-fence, error ("data race": the copy landed after the call
// returned), at the kernel launch.
#include "ss_test.cuh"

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "pageable_memcpy_race"
#endif
#ifndef FIXED
#define FIXED 0
#endif

#define N (16 * 1024) // 64 KB of ints
#define ROUNDS 200

__global__ void check_round(const int *d, int n, int round, unsigned int *stale)
{
    unsigned int bad = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (d[i] != round)
            bad++;
    if (bad)
        atomicAdd(stale, bad);
}

int main(void)
{
    ss_init_device();
    int *h = (int *)malloc(N * sizeof(int));
    int *d = NULL;
    unsigned int *d_stale = NULL, stale = 0;
    CK(cudaMalloc(&d, N * sizeof(int)));
    CK(cudaMalloc(&d_stale, sizeof(unsigned int)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMemsetAsync(d_stale, 0, sizeof(unsigned int), s)); // on the checking stream: ordered before it
    cudaEvent_t copied;
    CK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    // load the kernel before the rounds (lazy loading)
    check_round<<<1, 32, 0, s>>>(d, 0, 0, d_stale);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    for (int round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < N; i++)
            h[i] = round;
        CK(cudaMemcpy(d, h, N * sizeof(int), cudaMemcpyHostToDevice));
#if FIXED
        CK(cudaEventRecord(copied, 0));
        CK(cudaStreamWaitEvent(s, copied, 0));
#endif
        check_round<<<16, 256, 0, s>>>(d, N, round, d_stale); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        CK(cudaStreamSynchronize(s));
    }
    CK(cudaMemcpy(&stale, d_stale, sizeof stale, cudaMemcpyDeviceToHost));
    printf("%s: %u stale elements read in %d rounds\n", PROGRAM_NAME, stale, ROUNDS);
    CK(cudaEventDestroy(copied));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d_stale));
    CK(cudaFree(d));
    free(h);
    return 0;
}
