// A hand-off ordered by polling: the producer's kernel on one non-blocking
// stream writes a buffer; the host polls cudaStreamQuery(producer) until it
// returns cudaSuccess (doing host work meanwhile, as a render or I/O loop
// does), then launches the consumer on ANOTHER non-blocking stream.  No event
// links the two streams: cudaSuccess from cudaStreamQuery means everything
// submitted to the producer stream has completed, and the consumer is
// launched after it.  Correct.  As CUDA's asyncAPI sample polls, with a
// stream instead of an event.
// Racy twin: query_poll_handoff_racy.cu (the loop polls the consumer stream,
// which is idle: it succeeds at once while the producer still spins).
#include "ss_test.cuh"
#include <unistd.h>

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "query_poll_handoff"
#endif
#ifndef POLL_PRODUCER
#define POLL_PRODUCER 1
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
    cudaStream_t producer, consumer;
    CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
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

    long polls = 0;
    for (int it = 0; it < ITERS; it++) {
        produce<<<16, 256, 0, producer>>>(bufs[it], NELEMS, it + 1, ss_ms_to_ns(2)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        cudaStream_t polled = POLL_PRODUCER ? producer : consumer;
        cudaError_t q;
        while ((q = cudaStreamQuery(polled)) == cudaErrorNotReady) {
            polls++;
            usleep(100); // the host's own work between polls
        }
        CK(q);
        consume<<<16, 256, 0, consumer>>>(bufs[it], NELEMS, it + 1, wrong + it); // EXPECT-SITE missing-fence
        CK_LAUNCH();
    }
    CK(cudaStreamSynchronize(consumer));
    CK(cudaStreamSynchronize(producer));
    int w[ITERS], total = 0;
    CK(cudaMemcpy(w, wrong, sizeof w, cudaMemcpyDeviceToHost));
    for (int it = 0; it < ITERS; it++) total += w[it];
    // Whether the race shows depends on timing: stderr only.
    fprintf(stderr, "%s: %d of %d elements read before the producer wrote them (%ld polls)\n", PROGRAM_NAME, total,
            ITERS * NELEMS, polls);
    printf("%s: done\n", PROGRAM_NAME);
    for (int it = 0; it < ITERS; it++) CK(cudaFree(bufs[it]));
    CK(cudaFree(wrong));
    CK(cudaStreamDestroy(producer));
    CK(cudaStreamDestroy(consumer));
    return 0;
}
