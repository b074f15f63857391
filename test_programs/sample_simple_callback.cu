// Follows NVIDIA's CUDA sample simpleCallback (Samples/0_Introduction/
// simpleCallback): host worker threads (pthreads here, the sample's
// CUTThread wrapper is pthreads on Linux), one workload per thread, each with
// its own stream made with cudaStreamCreate, its own device buffer and its
// own pinned host buffer (cudaHostAlloc(cudaHostAllocPortable)).  Each worker
// fills its host buffer, enqueues H2D cudaMemcpyAsync -> incKernel ->
// D2H cudaMemcpyAsync on its stream and then a host function behind them
// (cudaLaunchHostFunc; workload 3 uses the older cudaStreamAddCallback, as the
// sample itself does) and returns without waiting: "CPU thread end of life,
// GPU continues to process data".  The host function makes no CUDA call: it
// only marks its workload done under a mutex and signals a condition
// variable.  main joins the worker threads, waits on the condition variable
// until every host function has run, then checks every element and frees.
//
// Why it is correct: a host function runs only after everything enqueued
// before it on its stream has completed, so when it marks a workload done the
// D2H copy into that workload's pinned buffer has landed; main reads a buffer
// only after its workload is marked done (mutex + condition variable).  Each
// stream touches only its own buffers, nothing runs on the legacy default
// stream while the workers' streams are busy, and everything is freed after
// all GPU work has finished (cudaFree/cudaFreeHost then have nothing to wait
// for).
// Differences from the sample, each to keep the program deterministic and free
// of incidental findings: the host function signals main instead of starting a
// post-processing thread that frees the buffers (main frees them once all
// work is done: a cudaFree made while other workers' kernels run would wait
// for the whole device); the workers allocate their stream and buffers, then
// meet at a pthread barrier before any of them enqueues GPU work (stream
// creation while other streams are busy can wait for them); a warm-up launch
// loads incKernel before the workers start (lazy module loading); all
// elements are checked (the sample checks the first 8).
// Expected: nothing to report.
#include "ss_test.cuh"
#include <pthread.h>

#define N_WORKLOADS 8
#define N_ELEMENTS (1 << 20)
#define OLD_API_WORKLOAD 3 // this one uses cudaStreamAddCallback

struct heterogeneous_workload {
    int id;
    int *h_data;
    int *d_data;
    cudaStream_t stream;
    int done;              // set by the host function (under done_mutex)
    cudaError_t cb_status; // what cudaStreamAddCallback reported
};

static pthread_mutex_t done_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int done_count = 0;
static pthread_barrier_t ready_barrier;

__global__ void incKernel(int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i]++;
}

// Runs on a thread of the CUDA driver once the workload's copies and kernel
// are done.  No CUDA call is allowed here: it only records completion.
static void mark_done(heterogeneous_workload *w, cudaError_t status)
{
    pthread_mutex_lock(&done_mutex);
    w->cb_status = status;
    w->done = 1;
    done_count++;
    pthread_cond_broadcast(&done_cond);
    pthread_mutex_unlock(&done_mutex);
}

static void CUDART_CB workload_done_hostfn(void *arg) { mark_done((heterogeneous_workload *)arg, cudaSuccess); }

static void CUDART_CB workload_done_callback(cudaStream_t, cudaError_t status, void *arg)
{
    mark_done((heterogeneous_workload *)arg, status);
}

static void *launch(void *arg)
{
    heterogeneous_workload *w = (heterogeneous_workload *)arg;
    const size_t bytes = N_ELEMENTS * sizeof(int);

    CK(cudaSetDevice(0));
    CK(cudaStreamCreate(&w->stream));
    CK(cudaMalloc(&w->d_data, bytes));
    CK(cudaHostAlloc(&w->h_data, bytes, cudaHostAllocPortable));

    // CPU thread generates data
    for (int i = 0; i < N_ELEMENTS; ++i)
        w->h_data[i] = w->id + i;

    // Every workload has its resources before any GPU work starts.
    pthread_barrier_wait(&ready_barrier);

    dim3 block(512);
    dim3 grid((N_ELEMENTS + block.x - 1) / block.x);
    CK(cudaMemcpyAsync(w->d_data, w->h_data, bytes, cudaMemcpyHostToDevice, w->stream));
    incKernel<<<grid, block, 0, w->stream>>>(w->d_data, N_ELEMENTS);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(w->h_data, w->d_data, bytes, cudaMemcpyDeviceToHost, w->stream));

    // A CPU function called once everything enqueued before it on the stream
    // has finished.
    if (w->id == OLD_API_WORKLOAD)
        CK(cudaStreamAddCallback(w->stream, workload_done_callback, w, 0));
    else
        CK(cudaLaunchHostFunc(w->stream, workload_done_hostfn, w));

    // CPU thread end of life, GPU continues to process data...
    return NULL;
}

int main(void)
{
    ss_init_device();
    // Load incKernel before the workers' streams overlap (lazy module loading).
    incKernel<<<1, 32>>>(nullptr, 0);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());

    heterogeneous_workload workloads[N_WORKLOADS];
    pthread_t threads[N_WORKLOADS];
    pthread_barrier_init(&ready_barrier, NULL, N_WORKLOADS);
    for (int i = 0; i < N_WORKLOADS; ++i) {
        workloads[i].id = i;
        workloads[i].h_data = NULL;
        workloads[i].d_data = NULL;
        workloads[i].done = 0;
        workloads[i].cb_status = cudaErrorUnknown;
        if (pthread_create(&threads[i], NULL, launch, &workloads[i]) != 0) {
            fprintf(stderr, "sample_simple_callback: pthread_create failed\n");
            return 1;
        }
    }
    for (int i = 0; i < N_WORKLOADS; ++i)
        pthread_join(threads[i], NULL);

    // Sleep until every host function has run.
    pthread_mutex_lock(&done_mutex);
    while (done_count < N_WORKLOADS)
        pthread_cond_wait(&done_cond, &done_mutex);
    pthread_mutex_unlock(&done_mutex);

    long bad = 0;
    for (int w = 0; w < N_WORKLOADS; ++w) {
        if (!workloads[w].done || workloads[w].cb_status != cudaSuccess) {
            fprintf(stderr, "sample_simple_callback: workload %d: done %d, status %s\n", w, workloads[w].done,
                    cudaGetErrorString(workloads[w].cb_status));
            bad++;
            continue;
        }
        for (int i = 0; i < N_ELEMENTS; ++i)
            if (workloads[w].h_data[i] != w + i + 1)
                bad++;
    }

    for (int w = 0; w < N_WORKLOADS; ++w) {
        CK(cudaFree(workloads[w].d_data));
        CK(cudaFreeHost(workloads[w].h_data));
        CK(cudaStreamDestroy(workloads[w].stream));
    }
    pthread_barrier_destroy(&ready_barrier);

    if (bad) {
        fprintf(stderr, "sample_simple_callback: %ld results wrong\n", bad);
        printf("sample_simple_callback: FAILED\n");
        return 1;
    }
    printf("sample_simple_callback: OK\n");
    return 0;
}
