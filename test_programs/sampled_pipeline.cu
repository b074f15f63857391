// sampled_pipeline: a long double-buffered pipeline recorded the way a long
// run is recorded -- a fully recorded head, then short recording windows
// (docs/sampling.md; the RUN-ENV line forces small ones so a one-second run
// has several).  A producer kernel on stream `copy` fills one of two buffers, a
// consumer kernel on stream `compute` reads it; 400 iterations, a checkpoint
// (copy of the result to the host + stream sync) every 50.
//   sampled_pipeline.cu        the consumer waits for nothing: a missing fence
//                              (read-after-write and write-after-read) that the
//                              windows must still catch
//   sampled_pipeline_fixed.cu  events order both directions; the host works
//                              between recording an event and waiting on it, so
//                              window switches fall between the two: the
//                              analyzer must stay silent across them
// RUN-ENV: SYNCSIGHT_SAMPLE=300,30,120
#include "ss_test.cuh"
#include <unistd.h>

#ifndef FIXED
#define FIXED 0
#endif

#define N 4096
#define ITERATIONS 800

__global__ void produce(int *buffer, int n, int value, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        buffer[i] = value;
}

__global__ void consume(const int *buffer, int n, int *sum, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    int local = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        local += buffer[i];
    atomicAdd(sum, local);
}

int main(void)
{
    ss_init_device();
    cudaStream_t copy, compute;
    CK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    cudaEvent_t ready[2], consumed[2];
    int *buffer[2], *sum;
    for (int b = 0; b < 2; b++) {
        CK(cudaEventCreateWithFlags(&ready[b], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&consumed[b], cudaEventDisableTiming));
        CK(cudaMalloc(&buffer[b], N * sizeof(int)));
    }
    CK(cudaMalloc(&sum, sizeof(int)));
    int *host_sum;
    CK(cudaMallocHost(&host_sum, sizeof(int)));
    CK(cudaMemsetAsync(sum, 0, sizeof(int), compute));
    // Both buffers start ordered before any producer: set on `copy`, and the
    // consumer stream waits once for that.
    for (int b = 0; b < 2; b++)
        CK(cudaMemsetAsync(buffer[b], 0, N * sizeof(int), copy));
    CK(cudaEventRecord(ready[0], copy));
    CK(cudaStreamWaitEvent(compute, ready[0], 0));
    CK(cudaStreamSynchronize(copy));

    for (int it = 0; it < ITERATIONS; it++) {
        int b = it & 1;
#if FIXED
        // Write-after-read: the buffer's previous reader must be done.
        if (it >= 2)
            CK(cudaStreamWaitEvent(copy, consumed[b], 0));
#endif
        produce<<<1, 256, 0, copy>>>(buffer[b], N, it, ss_ms_to_ns(0.3)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
#if FIXED
        CK(cudaEventRecord(ready[b], copy));
        // Host work between the record and the wait: a recording window may
        // close or open in between.
        if (it % 7 == 3)
            usleep(2000);
        CK(cudaStreamWaitEvent(compute, ready[b], 0));
#endif
        consume<<<1, 256, 0, compute>>>(buffer[b], N, sum, ss_ms_to_ns(0.2)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
#if FIXED
        CK(cudaEventRecord(consumed[b], compute));
#endif
        if (it % 50 == 49) {
            CK(cudaMemcpyAsync(host_sum, sum, sizeof(int), cudaMemcpyDeviceToHost, compute));
            CK(cudaStreamSynchronize(compute));
        }
        usleep(500); // the host prepares the next batch
    }
    CK(cudaDeviceSynchronize());
    printf("%s: sum %d\n", FIXED ? "sampled_pipeline_fixed" : "sampled_pipeline", *host_sum);
    for (int b = 0; b < 2; b++) {
        CK(cudaEventDestroy(ready[b]));
        CK(cudaEventDestroy(consumed[b]));
        CK(cudaFree(buffer[b]));
    }
    CK(cudaFree(sum));
    CK(cudaFreeHost(host_sum));
    CK(cudaStreamDestroy(copy));
    CK(cudaStreamDestroy(compute));
    return 0;
}
