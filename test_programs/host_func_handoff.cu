// In the style of the CUDA sample simpleCallback: a host function enqueued
// behind the producer's kernel (cudaLaunchHostFunc, every other iteration the
// older cudaStreamAddCallback) posts a semaphore; the main thread waits for it
// and only then launches the consumer on ANOTHER non-blocking stream.  No
// event links the two streams: the host function runs only once everything
// before it on its stream is done, and the consumer is launched after its
// semaphore.  Correct.
// Racy twin: host_func_handoff_racy.cu (the host function is enqueued on an
// idle third stream: it runs at once, while the producer still spins).
#include "ss_test.cuh"
#include <semaphore.h>

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "host_func_handoff"
#endif
#ifndef SIGNAL_ON_PRODUCER_STREAM
#define SIGNAL_ON_PRODUCER_STREAM 1
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

// Runs on a thread of the CUDA driver: no CUDA call allowed here.
static void CUDART_CB data_ready(void *sem) { sem_post((sem_t *)sem); }
static void CUDART_CB data_ready_cb(cudaStream_t, cudaError_t, void *sem) { sem_post((sem_t *)sem); }

int main(void)
{
    ss_init_device();
    cudaStream_t producer, consumer, signal;
    CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&signal, cudaStreamNonBlocking));
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

    sem_t ready;
    sem_init(&ready, 0, 0);
    for (int it = 0; it < ITERS; it++) {
        produce<<<16, 256, 0, producer>>>(bufs[it], NELEMS, it + 1, ss_ms_to_ns(2)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        cudaStream_t s = SIGNAL_ON_PRODUCER_STREAM ? producer : signal;
        if (it % 2) CK(cudaStreamAddCallback(s, data_ready_cb, &ready, 0));
        else CK(cudaLaunchHostFunc(s, data_ready, &ready));
        sem_wait(&ready); // the data is ready (when the host function sits behind the producer)
        consume<<<16, 256, 0, consumer>>>(bufs[it], NELEMS, it + 1, wrong + it); // EXPECT-SITE missing-fence
        CK_LAUNCH();
    }
    CK(cudaStreamSynchronize(consumer));
    CK(cudaStreamSynchronize(producer));
    int w[ITERS], total = 0;
    CK(cudaMemcpy(w, wrong, sizeof w, cudaMemcpyDeviceToHost));
    for (int it = 0; it < ITERS; it++) total += w[it];
    // Whether the race shows depends on timing: stderr only.
    fprintf(stderr, "%s: %d of %d elements read before the producer wrote them\n", PROGRAM_NAME, total,
            ITERS * NELEMS);
    printf("%s: done\n", PROGRAM_NAME);
    sem_destroy(&ready);
    for (int it = 0; it < ITERS; it++) CK(cudaFree(bufs[it]));
    CK(cudaFree(wrong));
    CK(cudaStreamDestroy(producer));
    CK(cudaStreamDestroy(consumer));
    CK(cudaStreamDestroy(signal));
    return 0;
}
