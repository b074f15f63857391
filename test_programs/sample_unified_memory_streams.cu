// NVCC-FLAGS: -Xcompiler -fopenmp
// Follows NVIDIA's CUDA sample UnifiedMemoryStreams (Samples/0_Introduction/
// UnifiedMemoryStreams), its default OpenMP build: a list of tasks, each a
// GEMV y = A x whose matrix, vector and result live in managed memory
// (cudaMallocManaged), consumed by 4 OpenMP threads over 5 streams made with
// cudaStreamCreate.  A small task (size < 100) runs on the host: its three
// buffers are attached to stream 0 of the list (the sample's "dummy" stream)
// with cudaStreamAttachMemAsync(..., cudaMemAttachHost), the thread calls
// cudaStreamSynchronize on that stream (the attach is asynchronous) and
// computes on the CPU.  A big task runs on the device: its buffers are
// attached to the thread's own stream (tid + 1) with
// cudaStreamAttachMemAsync(..., 0, cudaMemAttachSingle) and a GEMV kernel is
// launched there, without waiting.  After the parallel region,
// cudaDeviceSynchronize; then the host checks every result against a CPU
// reference and frees.
// Build: nvcc -Xcompiler -fopenmp (the NVCC-FLAGS line above).
//
// Why it is correct: each task has its own three allocations and is handled
// by one thread; a device task's buffers are attached to the only stream that
// uses them, so the host may touch other managed memory while that stream's
// kernels run (what cudaMemAttachSingle is for, on GPUs without concurrent
// managed access); a host task's buffers are attached to the host and the
// attach is waited for before the CPU reads them; the kernels' results are read
// only after cudaDeviceSynchronize, and freed after it.
// Differences from the sample: a GEMV kernel instead of cublasDgemv (the brief
// is the synchronization, not cuBLAS; the sample also feeds a row-major matrix
// to a column-major GEMV); task sizes from a fixed formula (the sample seeds
// drand48 with the time), with every fifth task small so that both paths
// run on every thread; schedule(static, 1) instead of dynamic so each run assigns tasks to
// threads the same way; no cudaDeviceSynchronize after every allocation (the
// sample's per-task syncs have nothing to wait for); a warm-up launch on one
// stream loads the kernel before the streams overlap; results are checked
// (the sample checks nothing).
// Expected: nothing to report.
#include "ss_test.cuh"
#include <math.h>
#include <omp.h>

#if !defined(_OPENMP) && !defined(__CUDA_ARCH__)
#error "build with -Xcompiler -fopenmp (the NVCC-FLAGS line above)"
#endif

#define NTHREADS 4
#define NTASKS 40
#define HOST_LIMIT 100 // tasks smaller than this run on the host (the sample's rule)

struct Task {
    int size, id;
    double *data;   // size x size, row-major
    double *result; // size
    double *vector; // size
};

// y[i] = alpha * sum_j A[i][j] * x[j] + beta * y[i], one thread per row.
__global__ void gemv_kernel(int n, double alpha, const double *A, const double *x, double beta, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double s = 0.0;
        for (int j = 0; j < n; j++)
            s += A[(size_t)i * n + j] * x[j];
        y[i] = alpha * s + beta * y[i];
    }
}

// The same on the host.
static void gemv_host(int n, double alpha, const double *A, const double *x, double beta, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++)
            s += A[(size_t)i * n + j] * x[j];
        y[i] = alpha * s + beta * y[i];
    }
}

static int task_size(int t) { return (t % 5 == 0) ? 64 + t : 128 + (t * 97) % 640; }
static double a_value(int t, int i, int j) { return (double)((i * 31 + j * 17 + t) % 23) / 23.0 - 0.5; }
static double x_value(int t, int j) { return (double)((j * 13 + t) % 11) / 11.0; }

static void execute(Task &t, cudaStream_t *streams, int tid)
{
    if (t.size < HOST_LIMIT) {
        // Attach to the dummy stream for host access while the device runs.
        CK(cudaStreamAttachMemAsync(streams[0], t.data, 0, cudaMemAttachHost));
        CK(cudaStreamAttachMemAsync(streams[0], t.vector, 0, cudaMemAttachHost));
        CK(cudaStreamAttachMemAsync(streams[0], t.result, 0, cudaMemAttachHost));
        // The attaches are asynchronous: wait for them before touching the data.
        CK(cudaStreamSynchronize(streams[0]));
        gemv_host(t.size, 1.0, t.data, t.vector, 0.0, t.result);
    } else {
        cudaStream_t s = streams[tid + 1];
        CK(cudaStreamAttachMemAsync(s, t.data, 0, cudaMemAttachSingle));
        CK(cudaStreamAttachMemAsync(s, t.vector, 0, cudaMemAttachSingle));
        CK(cudaStreamAttachMemAsync(s, t.result, 0, cudaMemAttachSingle));
        gemv_kernel<<<(t.size + 127) / 128, 128, 0, s>>>(t.size, 1.0, t.data, t.vector, 0.0, t.result);
        CK_LAUNCH();
    }
}

int main(void)
{
    ss_init_device();
    int managed = 0;
    CK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
    if (!managed) {
        printf("sample_unified_memory_streams: waived, no managed memory on this device\n");
        return 2;
    }

    cudaStream_t streams[NTHREADS + 1];
    for (int i = 0; i < NTHREADS + 1; i++)
        CK(cudaStreamCreate(&streams[i]));

    static Task tasks[NTASKS];
    for (int t = 0; t < NTASKS; t++) {
        Task &k = tasks[t];
        k.id = t;
        k.size = task_size(t);
        CK(cudaMallocManaged(&k.data, sizeof(double) * k.size * k.size));
        CK(cudaMallocManaged(&k.result, sizeof(double) * k.size));
        CK(cudaMallocManaged(&k.vector, sizeof(double) * k.size));
    }
    // No GPU work has been submitted yet: the host fills the managed buffers.
    for (int t = 0; t < NTASKS; t++) {
        Task &k = tasks[t];
        for (int i = 0; i < k.size; i++)
            for (int j = 0; j < k.size; j++)
                k.data[(size_t)i * k.size + j] = a_value(t, i, j);
        for (int j = 0; j < k.size; j++) {
            k.vector[j] = x_value(t, j);
            k.result[j] = 0.0;
        }
    }

    // Load the kernel on one stream before the streams overlap (lazy loading).
    gemv_kernel<<<1, 32, 0, streams[1]>>>(0, 1.0, nullptr, nullptr, 0.0, nullptr);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(streams[1]));

    int host_tasks = 0, device_tasks = 0;
#pragma omp parallel for num_threads(NTHREADS) schedule(static, 1) reduction(+ : host_tasks, device_tasks)
    for (int i = 0; i < NTASKS; i++) {
        int tid = omp_get_thread_num();
        execute(tasks[i], streams, tid);
        if (tasks[i].size < HOST_LIMIT)
            host_tasks++;
        else
            device_tasks++;
    }

    CK(cudaDeviceSynchronize());

    long bad = 0;
    for (int t = 0; t < NTASKS; t++) {
        Task &k = tasks[t];
        double *ref = (double *)calloc(k.size, sizeof(double));
        if (!ref) {
            fprintf(stderr, "sample_unified_memory_streams: out of host memory\n");
            return 1;
        }
        gemv_host(k.size, 1.0, k.data, k.vector, 0.0, ref);
        for (int i = 0; i < k.size; i++)
            if (fabs(k.result[i] - ref[i]) > 1e-9 * (1.0 + fabs(ref[i])))
                bad++;
        free(ref);
    }

    for (int t = 0; t < NTASKS; t++) {
        CK(cudaFree(tasks[t].data));
        CK(cudaFree(tasks[t].result));
        CK(cudaFree(tasks[t].vector));
    }
    for (int i = 0; i < NTHREADS + 1; i++)
        CK(cudaStreamDestroy(streams[i]));

    fprintf(stderr, "sample_unified_memory_streams: %d tasks on the host, %d on the device\n", host_tasks,
            device_tasks);
    if (bad || host_tasks == 0 || device_tasks == 0) {
        fprintf(stderr, "sample_unified_memory_streams: %ld results wrong\n", bad);
        printf("sample_unified_memory_streams: FAILED\n");
        return 1;
    }
    printf("sample_unified_memory_streams: OK\n");
    return 0;
}
