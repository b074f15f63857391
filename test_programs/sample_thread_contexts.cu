// NVCC-FLAGS: -lcuda
// In the style of NVIDIA's threadMigration sample (Samples/0_Introduction/
// threadMigration) and of applications that give each worker thread a CUDA
// context of its own: two host threads each create a context on device 0
// with the driver API (cuCtxCreate, which makes it current), then use the
// runtime in it, as cudart does with a context already current to the thread.
// Each thread: a blocking stream (cudaStreamCreate), a device buffer and a
// pinned host buffer; both threads meet at a barrier, then, four rounds:
// pinned H2D cudaMemcpyAsync on its stream, a kernel that spins 10 ms and adds
// one to every element, pinned D2H cudaMemcpyAsync, cudaDeviceSynchronize, and
// a check of the host buffer.  cudaDeviceSynchronize waits for the work of the
// calling thread's context only: the other thread's context is another device
// as far as ordering goes (it has its own legacy stream, and its kernels
// time-slice with these rather than run beside them).
// Why it is correct: each thread touches only its own buffers, and reads its
// host buffer after cudaDeviceSynchronize, which returned after its stream's
// D2H copy (the only work of its context).
// Expected: nothing to report.  cudaDeviceSynchronize is no over-synchronization
// here: the only work it waits for is the stream the thread then reads from,
// and it does not wait for the other context's kernels.
#include "ss_test.cuh"
#include <cuda.h>
#include <pthread.h>

#define N_THREADS 2
#define N (1 << 20)
#define ROUNDS 4

__global__ void spin_add_one(int *data, int n, unsigned long long spin_ns)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    if (blockIdx.x == 0) {
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            data[i] += 1;
    }
}

static pthread_barrier_t start_barrier;

struct worker {
    int id;
    int errors;
};

static void *run_worker(void *arg)
{
    struct worker *w = (struct worker *)arg;
    CUdevice dev;
    CUcontext ctx;
    CKD(cuDeviceGet(&dev, 0));
#if CUDA_VERSION >= 13000
    CKD(cuCtxCreate(&ctx, NULL, 0, dev));
#else
    CKD(cuCtxCreate(&ctx, 0, dev));
#endif
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    int *d = NULL, *h = NULL;
    CK(cudaMalloc(&d, N * sizeof(int)));
    CK(cudaMallocHost(&h, N * sizeof(int)));
    // load the kernel in this context before the rounds (lazy loading)
    spin_add_one<<<1, 32, 0, s>>>(d, 0, 0);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(s));
    pthread_barrier_wait(&start_barrier);
    for (int round = 0; round < ROUNDS; round++) {
        int base = 1000 * w->id + 10 * round;
        for (int i = 0; i < N; i++)
            h[i] = base + (i & 7);
        CK(cudaMemcpyAsync(d, h, N * sizeof(int), cudaMemcpyHostToDevice, s));
        spin_add_one<<<1, 256, 0, s>>>(d, N, ss_ms_to_ns(10.0));
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s));
        CK(cudaDeviceSynchronize());
        for (int i = 0; i < N; i++)
            if (h[i] != base + (i & 7) + 1) {
                w->errors++;
                break;
            }
    }
    pthread_barrier_wait(&start_barrier);
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    CK(cudaStreamDestroy(s));
    CKD(cuCtxDestroy(ctx));
    return NULL;
}

int main(void)
{
    CKD(cuInit(0));
    pthread_barrier_init(&start_barrier, NULL, N_THREADS);
    pthread_t t[N_THREADS];
    struct worker w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i].id = i;
        w[i].errors = 0;
        pthread_create(&t[i], NULL, run_worker, &w[i]);
    }
    int errors = 0;
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(t[i], NULL);
        errors += w[i].errors;
    }
    printf("sample_thread_contexts: %d wrong rounds\n", errors);
    return errors ? 1 : 0;
}
