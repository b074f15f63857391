// Follows NVIDIA's CUDA sample jacobiCudaGraphs (Samples/3_CUDA_Features/
// jacobiCudaGraphs): Jacobi iterations for A x = b (A: N+1 on the diagonal, 1
// elsewhere; b = 2N; the solution is all ones), one iteration per graph
// launch, run with both of the sample's graph-update methods:
//  1. JacobiMethodGpuCudaGraphExecUpdate: every iteration is captured from the
//     stream -- cudaMemsetAsync of the device sum, the Jacobi kernel (x -> x_new
//     on even iterations, x_new -> x on odd ones: the two kernel launches of the
//     sample), cudaMemcpyAsync of the sum D2H -- and the first capture is
//     instantiated, the later ones applied with cudaGraphExecUpdate;
//  2. JacobiMethodGpuCudaGraphExecKernelSetParams: one iteration captured and
//     instantiated once; before each launch cudaGraphExecKernelNodeSetParams
//     swaps the x / x_new arguments of its kernel node.
// After each cudaGraphLaunch the host calls cudaStreamSynchronize and only then
// reads the sum (convergence check).  Once converged, finalError runs eagerly
// on the same stream (memset, kernel, copy, sync), as in the sample.  The host
// checks iterations and error against a CPU Jacobi run.
//
// Why it is correct: one non-blocking stream (as the sample's main creates
// it) carries everything -- setup copies and memsets, every graph launch, the
// eager final kernels -- so stream order orders every access; the host reads
// the pinned sum only after cudaStreamSynchronize; the graph exec is updated
// (cudaGraphExecUpdate / cudaGraphExecKernelNodeSetParams) only after the
// previous launch was waited for, which the API allows at any time anyway
// (a launch uses the parameters it was launched with).
// Differences from the sample: the sum is copied into pinned memory
// (cudaMallocHost) -- the sample copies into `double sum` on the stack,
// pageable memory, a true pageable-async-copy every iteration (and each
// launch then blocks); N = 256 instead of 512 (about 1400 iterations per
// method, not 2900); a simpler Jacobi kernel (one warp per row); the graph
// captured for each cudaGraphExecUpdate is destroyed after the update (the
// sample leaks it).
// Expected: nothing to report.
#include "ss_test.cuh"
#include <math.h>

#define N_ROWS 256
#define CONV_THRESHOLD 1.0e-2
#define MAX_ITER (4 * N_ROWS * N_ROWS)
#define JACOBI_THREADS 256 // 8 warps, one row each

// One warp per row i: dx = (b[i] - sum_j A[i][j] x[j]) / A[i][i];
// x_new[i] = x[i] + dx; *sum += |dx|.
__global__ void jacobi_method(const float *A, const double *b, const double *x, double *x_new, double *sum)
{
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= N_ROWS)
        return; // the whole warp
    double s = 0.0;
    for (int j = lane; j < N_ROWS; j += 32)
        s += (double)A[row * N_ROWS + j] * x[j];
    for (int offset = 16; offset > 0; offset /= 2)
        s += __shfl_down_sync(0xffffffffu, s, offset);
    if (lane == 0) {
        double dx = (b[row] - s) / (double)A[row * N_ROWS + row];
        x_new[row] = x[row] + dx;
        atomicAdd(sum, fabs(dx));
    }
}

// *g_sum += sum_i |x[i] - 1|.
__global__ void final_error(const double *x, double *g_sum)
{
    __shared__ double partial[256];
    double s = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N_ROWS; i += blockDim.x * gridDim.x)
        s += fabs(x[i] - 1.0);
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride)
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(g_sum, partial[0]);
}

static const dim3 kJacobiGrid((N_ROWS * 32 + JACOBI_THREADS - 1) / JACOBI_THREADS);
static const dim3 kJacobiBlock(JACOBI_THREADS);

struct gpu_result {
    int iterations;
    double error;
};

// The eager tail of both methods: error of the latest iterate, on the stream.
static double final_error_on(cudaStream_t stream, const double *x_latest, double *d_sum, double *h_sum)
{
    CK(cudaMemsetAsync(d_sum, 0, sizeof(double), stream));
    final_error<<<1, 256, 0, stream>>>(x_latest, d_sum);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(h_sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    return *h_sum;
}

static gpu_result jacobi_exec_update(const float *A, const double *b, double *x, double *x_new, double *d_sum,
                                     double *h_sum, cudaStream_t stream)
{
    cudaGraphExec_t graph_exec = NULL;
    int k;
    for (k = 0; k < MAX_ITER; k++) {
        cudaGraph_t graph;
        CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        CK(cudaMemsetAsync(d_sum, 0, sizeof(double), stream));
        if ((k & 1) == 0)
            jacobi_method<<<kJacobiGrid, kJacobiBlock, 0, stream>>>(A, b, x, x_new, d_sum);
        else
            jacobi_method<<<kJacobiGrid, kJacobiBlock, 0, stream>>>(A, b, x_new, x, d_sum);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h_sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost, stream));
        CK(cudaStreamEndCapture(stream, &graph));

        if (graph_exec == NULL) {
            CK(cudaGraphInstantiate(&graph_exec, graph, 0));
        } else {
            cudaGraphExecUpdateResultInfo info;
            cudaError_t err = cudaGraphExecUpdate(graph_exec, graph, &info);
            if (err != cudaSuccess || info.result != cudaGraphExecUpdateSuccess) {
                (void)cudaGetLastError(); // the failed update's error: instantiate anew
                fprintf(stderr, "sample_jacobi_graph_update: k = %d: graph update failed (%d), re-instantiating\n",
                        k, (int)info.result);
                CK(cudaGraphExecDestroy(graph_exec));
                CK(cudaGraphInstantiate(&graph_exec, graph, 0));
            }
        }
        CK(cudaGraphDestroy(graph));

        CK(cudaGraphLaunch(graph_exec, stream));
        CK(cudaStreamSynchronize(stream)); // the sum is in h_sum now
        if (*h_sum <= CONV_THRESHOLD)
            break;
    }
    CK(cudaGraphExecDestroy(graph_exec));
    gpu_result r;
    r.iterations = k + 1;
    r.error = final_error_on(stream, (k & 1) == 0 ? x_new : x, d_sum, h_sum);
    return r;
}

static gpu_result jacobi_kernel_set_params(const float *A, const double *b, double *x, double *x_new,
                                           double *d_sum, double *h_sum, cudaStream_t stream)
{
    // Capture one iteration (x -> x_new) and find its kernel node.
    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    CK(cudaMemsetAsync(d_sum, 0, sizeof(double), stream));
    jacobi_method<<<kJacobiGrid, kJacobiBlock, 0, stream>>>(A, b, x, x_new, d_sum);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(h_sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamEndCapture(stream, &graph));

    size_t num_nodes = 0;
    CK(cudaGraphGetNodes(graph, NULL, &num_nodes));
    cudaGraphNode_t nodes[8];
    if (num_nodes > 8) {
        fprintf(stderr, "sample_jacobi_graph_update: %zu nodes captured, expected 3\n", num_nodes);
        exit(1);
    }
    CK(cudaGraphGetNodes(graph, nodes, &num_nodes));
    cudaGraphNode_t kernel_node = NULL;
    for (size_t i = 0; i < num_nodes; i++) {
        cudaGraphNodeType type;
        CK(cudaGraphNodeGetType(nodes[i], &type));
        if (type == cudaGraphNodeTypeKernel)
            kernel_node = nodes[i];
    }
    if (kernel_node == NULL) {
        fprintf(stderr, "sample_jacobi_graph_update: no kernel node captured\n");
        exit(1);
    }
    cudaGraphExec_t graph_exec;
    CK(cudaGraphInstantiate(&graph_exec, graph, 0));

    // The two orientations of the kernel's arguments.
    void *args0[5] = {(void *)&A, (void *)&b, (void *)&x, (void *)&x_new, (void *)&d_sum};
    void *args1[5] = {(void *)&A, (void *)&b, (void *)&x_new, (void *)&x, (void *)&d_sum};
    cudaKernelNodeParams params0 = {}, params1 = {};
    params0.func = (void *)jacobi_method;
    params0.gridDim = kJacobiGrid;
    params0.blockDim = kJacobiBlock;
    params0.sharedMemBytes = 0;
    params0.kernelParams = args0;
    params0.extra = NULL;
    params1 = params0;
    params1.kernelParams = args1;

    int k;
    for (k = 0; k < MAX_ITER; k++) {
        CK(cudaGraphExecKernelNodeSetParams(graph_exec, kernel_node, (k & 1) == 0 ? &params0 : &params1));
        CK(cudaGraphLaunch(graph_exec, stream));
        CK(cudaStreamSynchronize(stream)); // the sum is in h_sum now
        if (*h_sum <= CONV_THRESHOLD)
            break;
    }
    CK(cudaGraphExecDestroy(graph_exec));
    CK(cudaGraphDestroy(graph));
    gpu_result r;
    r.iterations = k + 1;
    r.error = final_error_on(stream, (k & 1) == 0 ? x_new : x, d_sum, h_sum);
    return r;
}

// A = N+1 on the diagonal, 1 elsewhere; b = 2N: the solution is all ones.
static void create_linear_system(float *A, double *b)
{
    for (int i = 0; i < N_ROWS; i++) {
        b[i] = 2.0 * N_ROWS;
        for (int j = 0; j < N_ROWS; j++)
            A[i * N_ROWS + j] = 1.0f;
        A[i * N_ROWS + i] = N_ROWS + 1.0f;
    }
}

static void jacobi_cpu(const float *A, const double *b, int *num_iter, double *error)
{
    double *x = (double *)calloc(N_ROWS, sizeof(double));
    double *x_new = (double *)calloc(N_ROWS, sizeof(double));
    if (!x || !x_new) {
        fprintf(stderr, "sample_jacobi_graph_update: out of host memory\n");
        exit(1);
    }
    int k;
    for (k = 0; k < MAX_ITER; k++) {
        double sum = 0.0;
        for (int i = 0; i < N_ROWS; i++) {
            double dx = b[i];
            for (int j = 0; j < N_ROWS; j++)
                dx -= A[i * N_ROWS + j] * x[j];
            dx /= A[i * N_ROWS + i];
            x_new[i] = x[i] + dx;
            sum += fabs(dx);
        }
        for (int i = 0; i < N_ROWS; i++)
            x[i] = x_new[i];
        if (sum <= CONV_THRESHOLD)
            break;
    }
    *num_iter = k + 1;
    double e = 0.0;
    for (int i = 0; i < N_ROWS; i++)
        e += fabs(x[i] - 1.0);
    *error = e;
    free(x);
    free(x_new);
}

int main(void)
{
    ss_init_device();
    float *A = NULL;
    double *b = NULL, *h_sum = NULL;
    CK(cudaMallocHost(&A, sizeof(float) * N_ROWS * N_ROWS));
    CK(cudaMallocHost(&b, sizeof(double) * N_ROWS));
    CK(cudaMallocHost(&h_sum, sizeof(double)));
    create_linear_system(A, b);

    int cpu_iterations = 0;
    double cpu_error = 0.0;
    jacobi_cpu(A, b, &cpu_iterations, &cpu_error);

    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    float *d_A;
    double *d_b, *d_x, *d_x_new, *d_sum;
    CK(cudaMalloc(&d_A, sizeof(float) * N_ROWS * N_ROWS));
    CK(cudaMalloc(&d_b, sizeof(double) * N_ROWS));
    CK(cudaMalloc(&d_x, sizeof(double) * N_ROWS));
    CK(cudaMalloc(&d_x_new, sizeof(double) * N_ROWS));
    CK(cudaMalloc(&d_sum, sizeof(double)));
    CK(cudaMemcpyAsync(d_A, A, sizeof(float) * N_ROWS * N_ROWS, cudaMemcpyHostToDevice, stream));
    CK(cudaMemcpyAsync(d_b, b, sizeof(double) * N_ROWS, cudaMemcpyHostToDevice, stream));

    // Method 1: cudaGraphExecUpdate.
    CK(cudaMemsetAsync(d_x, 0, sizeof(double) * N_ROWS, stream));
    CK(cudaMemsetAsync(d_x_new, 0, sizeof(double) * N_ROWS, stream));
    gpu_result r1 = jacobi_exec_update(d_A, d_b, d_x, d_x_new, d_sum, h_sum, stream);

    // Method 2: cudaGraphExecKernelNodeSetParams, from x = 0 again.
    CK(cudaMemsetAsync(d_x, 0, sizeof(double) * N_ROWS, stream));
    CK(cudaMemsetAsync(d_x_new, 0, sizeof(double) * N_ROWS, stream));
    gpu_result r2 = jacobi_kernel_set_params(d_A, d_b, d_x, d_x_new, d_sum, h_sum, stream);

    fprintf(stderr, "sample_jacobi_graph_update: CPU %d iterations, error %.3e; exec update %d, %.3e; "
                    "kernel node set params %d, %.3e\n",
            cpu_iterations, cpu_error, r1.iterations, r1.error, r2.iterations, r2.error);

    int bad = 0;
    const gpu_result rs[2] = {r1, r2};
    for (int m = 0; m < 2; m++) {
        if (abs(rs[m].iterations - cpu_iterations) > 1)
            bad++;
        if (!(fabs(rs[m].error - cpu_error) < CONV_THRESHOLD))
            bad++;
    }

    CK(cudaFree(d_A));
    CK(cudaFree(d_b));
    CK(cudaFree(d_x));
    CK(cudaFree(d_x_new));
    CK(cudaFree(d_sum));
    CK(cudaStreamDestroy(stream));
    CK(cudaFreeHost(A));
    CK(cudaFreeHost(b));
    CK(cudaFreeHost(h_sum));
    printf("sample_jacobi_graph_update: %s\n", bad ? "FAILED" : "OK");
    return bad ? 1 : 0;
}
