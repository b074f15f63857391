// A hand-off through an event that the legacy default stream's barrier holds
// back: the producer kernel runs on the legacy default stream (stream 0, as
// code that never names a stream does) and writes a buffer; the program then
// records an event (cudaEventDisableTiming, as most code makes them) on a
// blocking stream `first`, made with cudaStreamCreate.  The legacy barrier
// holds the record back until the producer is done, so the event completes
// after it.  The host waits for the EVENT (cudaEventSynchronize) and launches
// the consumer on a non-blocking stream: ordered, correct.  It leans on the
// legacy barrier (relies-on-legacy-sync says so); recording the event on
// stream 0 itself would say the same without it.
// Racy twin: legacy_record_handoff_racy.cu waits with cudaStreamSynchronize(first)
// instead.  Measured on an H200 (driver 580, tools/legacy_marker_probe.cu):
// that returns without waiting for the held-back record, and the consumer
// reads while the producer still spins.
#include "ss_test.cuh"

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "legacy_record_handoff"
#endif
#ifndef WAIT_EVENT
#define WAIT_EVENT 1
#endif

#define ITERS 6
#define NELEMS (64 * 1024)

// Spins, then writes: a reader not ordered after it sees the old contents.
__global__ void produce(int *buf, int n, int value, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        buf[i] = value;
}

// Counts the elements that are not `value`.
__global__ void consume(const int *buf, int n, int value, int *wrong)
{ // EXPECT-NOSITE missing-fence
    int local = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        local += buf[i] != value;
    if (local)
        atomicAdd(wrong, local);
}

int main(void)
{
    ss_init_device();
    cudaStream_t first, consumer;
    CK(cudaStreamCreate(&first)); // blocking: the legacy barrier orders it with stream 0
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    cudaEvent_t produced;
    CK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
    int *bufs[ITERS], *wrong;
    for (int it = 0; it < ITERS; it++) CK(cudaMalloc(&bufs[it], NELEMS * sizeof(int)));
    CK(cudaMalloc(&wrong, ITERS * sizeof(int)));
    // Load both kernels now (a first launch under lazy loading waits for the
    // device), then the old contents: 0.
    produce<<<1, 32>>>(nullptr, 0, 0, 0);
    consume<<<1, 32>>>(nullptr, 0, 0, nullptr);
    CK_LAUNCH();
    for (int it = 0; it < ITERS; it++) CK(cudaMemset(bufs[it], 0, NELEMS * sizeof(int)));
    CK(cudaMemset(wrong, 0, ITERS * sizeof(int)));
    CK(cudaDeviceSynchronize()); // setup done

    for (int it = 0; it < ITERS; it++) {
        produce<<<16, 256>>>(bufs[it], NELEMS, it + 1, ss_ms_to_ns(2)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        CK(cudaEventRecord(produced, first)); // held back by the legacy barrier until produce is done
        if (WAIT_EVENT)
            CK(cudaEventSynchronize(produced));
        else
            CK(cudaStreamSynchronize(first));
        consume<<<16, 256, 0, consumer>>>(bufs[it], NELEMS, it + 1, wrong + it); // EXPECT-SITE missing-fence
        CK_LAUNCH();
    }
    CK(cudaStreamSynchronize(consumer));
    CK(cudaDeviceSynchronize());
    int w[ITERS], total = 0;
    CK(cudaMemcpy(w, wrong, sizeof w, cudaMemcpyDeviceToHost));
    for (int it = 0; it < ITERS; it++) total += w[it];
    // Whether the race shows depends on the GPU and its driver: stderr only.
    fprintf(stderr, "%s: %d of %d elements read before the producer wrote them\n", PROGRAM_NAME, total,
            ITERS * NELEMS);
    printf("%s: done\n", PROGRAM_NAME);
    for (int it = 0; it < ITERS; it++) CK(cudaFree(bufs[it]));
    CK(cudaFree(wrong));
    CK(cudaEventDestroy(produced));
    CK(cudaStreamDestroy(first));
    CK(cudaStreamDestroy(consumer));
    return 0;
}
