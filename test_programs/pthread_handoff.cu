// Happens-before through host threads: a producer thread fills a device
// buffer with a kernel on its own non-blocking stream, waits for that stream
// (cudaStreamSynchronize), then hands the buffer to a consumer thread through
// a queue guarded by a pthread mutex + condition variable; the consumer reads
// it with a kernel on ITS OWN non-blocking stream.  No event links the two
// streams: the host orders them (producer's stream sync -> unlock -> the
// consumer's lock).  The main thread reads the results after pthread_join
// (the consumer synchronized its stream before returning).  Correct.
// Racy twin: pthread_handoff_racy.cu (the producer hands the buffer over
// without synchronizing its stream: the consumer's kernel may read it while
// the producer's kernel still spins before writing).
#include "ss_test.cuh"
#include <pthread.h>

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "pthread_handoff"
#endif
#ifndef SYNC_BEFORE_HANDOFF
#define SYNC_BEFORE_HANDOFF 1
#endif

#define ITERS 4
#define NELEMS (64 * 1024)

// Spins, then writes: a reader not ordered after it sees the old contents (0).
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

// One buffer per iteration (never reused: reuse would need the consumer to
// hand the buffer back), and one counter each.
static int *bufs[ITERS], *wrong[ITERS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int queue[ITERS];
static int queued = 0, taken = 0;

static void *producer(void *)
{
    CK(cudaSetDevice(0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int it = 0; it < ITERS; it++) {
        produce<<<16, 256, 0, s>>>(bufs[it], NELEMS, it + 1, ss_ms_to_ns(2)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
#if SYNC_BEFORE_HANDOFF
        CK(cudaStreamSynchronize(s)); // the buffer is filled before anyone else sees it
#endif
        pthread_mutex_lock(&lock);
        queue[queued++] = it;
        pthread_cond_signal(&ready);
        pthread_mutex_unlock(&lock);
    }
    CK(cudaStreamSynchronize(s)); // (the racy twin's only wait: after every hand-over)
    CK(cudaStreamDestroy(s));
    return nullptr;
}

static void *consumer(void *)
{
    CK(cudaSetDevice(0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int n = 0; n < ITERS; n++) {
        pthread_mutex_lock(&lock);
        while (taken == queued)
            pthread_cond_wait(&ready, &lock);
        int it = queue[taken++];
        pthread_mutex_unlock(&lock);
        consume<<<16, 256, 0, s>>>(bufs[it], NELEMS, it + 1, wrong[it]); // EXPECT-SITE missing-fence
        CK_LAUNCH();
    }
    CK(cudaStreamSynchronize(s)); // the counters are final before the thread ends
    CK(cudaStreamDestroy(s));
    return nullptr;
}

int main(void)
{
    ss_init_device();
    for (int it = 0; it < ITERS; it++) {
        CK(cudaMalloc(&bufs[it], NELEMS * sizeof(int)));
        CK(cudaMalloc(&wrong[it], sizeof(int)));
    }
    // Load both kernels now (lazy module loading at a first launch waits for
    // the kernels already running, which would hide the race): one empty
    // launch each.  Then the buffers' old contents: 0, no wrong elements yet.
    produce<<<1, 32>>>(nullptr, 0, 0, 0);
    consume<<<1, 32>>>(nullptr, 0, 0, nullptr);
    CK_LAUNCH();
    for (int it = 0; it < ITERS; it++) {
        CK(cudaMemset(bufs[it], 0, NELEMS * sizeof(int)));
        CK(cudaMemset(wrong[it], 0, sizeof(int)));
    }
    CK(cudaDeviceSynchronize()); // setup done before the threads start

    pthread_t tp, tc;
    if (pthread_create(&tc, nullptr, consumer, nullptr) != 0 || pthread_create(&tp, nullptr, producer, nullptr) != 0) {
        fprintf(stderr, "%s: pthread_create failed\n", PROGRAM_NAME);
        return 1;
    }
    pthread_join(tp, nullptr);
    pthread_join(tc, nullptr);

    // Ordered by the consumer's cudaStreamSynchronize and pthread_join.
    int total = 0;
    for (int it = 0; it < ITERS; it++) {
        int w = 0;
        CK(cudaMemcpy(&w, wrong[it], sizeof(int), cudaMemcpyDeviceToHost));
        total += w;
    }
    // Whether the race shows depends on timing: stderr only.
    fprintf(stderr, "%s: %d of %d elements read before the producer wrote them\n", PROGRAM_NAME, total,
            ITERS * NELEMS);
    printf("%s: done\n", PROGRAM_NAME);
    for (int it = 0; it < ITERS; it++) {
        CK(cudaFree(bufs[it]));
        CK(cudaFree(wrong[it]));
    }
    return 0;
}
