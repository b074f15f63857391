// multigpu_fence: a producer on GPU 0 and a consumer on GPU 1 that reads the
// producer's buffer through peer access.
//   multigpu_fence.cu        no fence: the consumer's stream never waits for the
//                            producer -- a cross-device missing fence
//   multigpu_fence_fixed.cu  event recorded on GPU 0's stream, waited on by
//                            GPU 1's stream (cudaStreamWaitEvent across devices)
// Both also copy the buffer to GPU 1 with cudaMemcpyPeerAsync (after a host
// sync, so it is ordered) and, with two GPUs, run a kernel on each device's
// legacy default stream while the other device's blocking stream is busy:
// legacy streams of different devices do not serialize with each other, so
// there is nothing to report there.  With one GPU both "devices" are GPU 0
// (said on stderr) so that `make gpu-test` can still run it; the legacy-stream
// part is then left out because on one device it really would serialize.
// tests/gpu_multigpu.sh checks that the trace really spans two devices.
#include "ss_test.cuh"

#ifndef MULTIGPU_FENCED
#define MULTIGPU_FENCED 0
#define PROGRAM_NAME "multigpu_fence"
#endif

#define N 4096

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
    int count = 0;
    CK(cudaGetDeviceCount(&count));
    const int dev0 = 0, dev1 = count >= 2 ? 1 : 0;
    if (dev1 == dev0)
        fprintf(stderr, "%s: one GPU only: producer and consumer both on GPU 0\n", PROGRAM_NAME);

    // Contexts first, so their start-up cost lands on no measured call.
    CK(cudaSetDevice(dev1));
    CK(cudaFree(0));
    CK(cudaSetDevice(dev0));
    CK(cudaFree(0));
    if (dev1 != dev0) {
        int can = 0;
        CK(cudaDeviceCanAccessPeer(&can, dev1, dev0));
        if (!can) {
            fprintf(stderr, "%s: GPU %d cannot access GPU %d's memory (no peer access)\n", PROGRAM_NAME, dev1, dev0);
            return 1;
        }
        CK(cudaSetDevice(dev1));
        CK(cudaDeviceEnablePeerAccess(dev0, 0));
        CK(cudaSetDevice(dev0));
        CK(cudaDeviceEnablePeerAccess(dev1, 0));
    }

    // GPU 0: the producer's stream and buffer.
    CK(cudaSetDevice(dev0));
    cudaStream_t producer;
    CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    cudaEvent_t produced;
    CK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
    int *buffer;
    CK(cudaMalloc(&buffer, N * sizeof(int)));
    CK(cudaMemsetAsync(buffer, 0, N * sizeof(int), producer));
    CK(cudaStreamSynchronize(producer));

    // GPU 1: the consumer's stream, its sum and its copy of the buffer.
    CK(cudaSetDevice(dev1));
    cudaStream_t consumer;
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    int *sum, *copy, *host_sum;
    CK(cudaMalloc(&sum, sizeof(int)));
    CK(cudaMalloc(&copy, N * sizeof(int)));
    CK(cudaMallocHost(&host_sum, sizeof(int)));
    CK(cudaMemsetAsync(sum, 0, sizeof(int), consumer));

    CK(cudaSetDevice(dev0));
    produce<<<1, 256, 0, producer>>>(buffer, N, 1, ss_ms_to_ns(20)); // EXPECT-SITE missing-fence
    CK_LAUNCH();
#if MULTIGPU_FENCED
    CK(cudaEventRecord(produced, producer));
#endif
    CK(cudaSetDevice(dev1));
#if MULTIGPU_FENCED
    CK(cudaStreamWaitEvent(consumer, produced, 0)); // an event of GPU 0 waited on by GPU 1's stream
#endif
    consume<<<1, 256, 0, consumer>>>(buffer, N, sum); // EXPECT-SITE missing-fence
    CK_LAUNCH();
    CK(cudaMemcpyAsync(host_sum, sum, sizeof(int), cudaMemcpyDeviceToHost, consumer));
    CK(cudaStreamSynchronize(consumer));
    CK(cudaSetDevice(dev0));
    CK(cudaStreamSynchronize(producer));
    fprintf(stderr, "%s: consumer on GPU %d summed %d of %d%s\n", PROGRAM_NAME, dev1, *host_sum, N,
            *host_sum == N ? "" : " (read before it was written)");

    // A peer copy, ordered by the host sync above.
    CK(cudaSetDevice(dev1));
    CK(cudaMemcpyPeerAsync(copy, dev1, buffer, dev0, N * sizeof(int), consumer));
    CK(cudaStreamSynchronize(consumer));

    if (dev1 != dev0) {
        // Per-device legacy streams: GPU 0's blocking stream runs 30 ms while
        // GPU 1's legacy stream runs 30 ms: they overlap, as they should.
        CK(cudaSetDevice(dev0));
        cudaStream_t blocking0;
        CK(cudaStreamCreate(&blocking0));
        ss_spin(blocking0, 30);
        CK(cudaSetDevice(dev1));
        ss_spin(0, 30);
        CK(cudaDeviceSynchronize());
        CK(cudaSetDevice(dev0));
        CK(cudaStreamSynchronize(blocking0));
        CK(cudaStreamDestroy(blocking0));
    }

    printf("%s: done\n", PROGRAM_NAME);
    CK(cudaSetDevice(dev1));
    CK(cudaFreeHost(host_sum));
    CK(cudaFree(sum));
    CK(cudaFree(copy));
    CK(cudaStreamDestroy(consumer));
    CK(cudaSetDevice(dev0));
    CK(cudaFree(buffer));
    CK(cudaEventDestroy(produced));
    CK(cudaStreamDestroy(producer));
    return 0;
}
