// missing-fence: a producer kernel on stream `producer` writes a buffer and a
// consumer kernel on stream `consumer` reads it, with nothing ordering the two
// (no event, non-blocking streams): the consumer starts at once and reads the
// buffer before the producer has written it.
// Variants built from this file (FENCE selects the variant):
//   missing_fence.cu              no fence at all
//   missing_fence_wrong_stream.cu the event is recorded on the consumer's stream
//   missing_fence_fixed.cu        event recorded on the producer, waited on by the consumer
//   unrecorded_event.cu           the consumer waits on an event nobody ever records
//   unrecorded_event_fixed.cu     the same event, recorded after the producer
#include "ss_test.cuh"

#define FENCE_NONE 0
#define FENCE_WRONG_STREAM 1
#define FENCE_EVENT 2
#define FENCE_UNRECORDED 3
#define FENCE_UNRECORDED_FIXED 4 /* same as FENCE_EVENT, built as the twin of unrecorded_event */

#ifndef FENCE
#define FENCE FENCE_NONE
#define PROGRAM_NAME "missing_fence"
#endif

#define N 4096

// Writes `value` into every element after spinning, so an unordered reader
// sees the old contents.
__global__ void produce(int *buffer, int n, int value, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        buffer[i] = value;
}

__global__ void consume(const int *buffer, int n, int *sum)
{ // EXPECT-NOSITE missing-fence
    int local = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        local += buffer[i];
    atomicAdd(sum, local);
}

int main(void)
{
    ss_init_device();
    cudaStream_t producer, consumer;
    CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    cudaEvent_t produced;
    CK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));

    int *buffer, *sum;
    CK(cudaMalloc(&buffer, N * sizeof(int)));
    CK(cudaMalloc(&sum, sizeof(int)));
    int *host_sum;
    CK(cudaMallocHost(&host_sum, sizeof(int)));
    // Each buffer is initialized on the stream that uses it first, so the
    // initialization itself is ordered.
    CK(cudaMemsetAsync(buffer, 0, N * sizeof(int), producer));
    CK(cudaMemsetAsync(sum, 0, sizeof(int), consumer));

    produce<<<1, 256, 0, producer>>>(buffer, N, 1, ss_ms_to_ns(20)); // EXPECT-SITE missing-fence
    CK_LAUNCH();
#if FENCE == FENCE_WRONG_STREAM
    CK(cudaEventRecord(produced, consumer)); // wrong stream: orders nothing
    CK(cudaStreamWaitEvent(consumer, produced, 0));
#elif FENCE == FENCE_EVENT || FENCE == FENCE_UNRECORDED_FIXED
    CK(cudaEventRecord(produced, producer));
    CK(cudaStreamWaitEvent(consumer, produced, 0));
#elif FENCE == FENCE_UNRECORDED
    // Never recorded: the wait completes immediately (CUDA treats a fresh event
    // as already complete), so it orders nothing.
    CK(cudaStreamWaitEvent(consumer, produced, 0)); // EXPECT-SITE unrecorded-event-wait
#endif
    consume<<<1, 256, 0, consumer>>>(buffer, N, sum); // EXPECT-SITE missing-fence
    CK_LAUNCH();
    CK(cudaMemcpyAsync(host_sum, sum, sizeof(int), cudaMemcpyDeviceToHost, consumer));
    CK(cudaStreamSynchronize(consumer));
    CK(cudaStreamSynchronize(producer));

    int expected = N;
    // Whether the race is visible depends on timing; say so on stderr and keep
    // stdout stable.
    fprintf(stderr, "%s: consumer summed %d, the producer's data sums to %d%s\n", PROGRAM_NAME, *host_sum,
            expected, *host_sum == expected ? "" : " (read before it was written)");
    printf("%s: done\n", PROGRAM_NAME);
    CK(cudaFreeHost(host_sum));
    CK(cudaFree(buffer));
    CK(cudaFree(sum));
    CK(cudaEventDestroy(produced));
    CK(cudaStreamDestroy(producer));
    CK(cudaStreamDestroy(consumer));
    return 0;
}
