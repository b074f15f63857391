// Follows NVIDIA's CUDA sample simpleCudaGraphs (Samples/3_CUDA_Features/
// simpleCudaGraphs): a two-stage reduction of a float vector into a double,
// built as a CUDA graph in the sample's two ways.
//  (a) cudaGraphsManual: a graph built node by node -- a memcpy node copying
//      the input H2D (cudaGraphAddMemcpyNode, 3D parameters), a memset node
//      clearing the partial sums, kernel node `reduce` (depends on both), a
//      memset node clearing the result, kernel node `reduceFinal` (depends on
//      `reduce` and that memset), a memcpy node copying the result D2H
//      (cudaGraphAddMemcpyNode1D), and a host node that records the result.
//      Instantiated, also cloned (cudaGraphClone) and instantiated, each
//      launched 3 times on a stream, then cudaStreamSynchronize.
//  (b) cudaGraphsUsingStreamCapture: the same work captured from two streams
//      -- cudaStreamBeginCapture(stream1), event recorded on stream1 and waited
//      on by stream2 (fork), the H2D copy on stream1 while stream2 clears the
//      partial sums and the result, an event recorded on stream2 and waited on
//      by stream1 (join), both kernels and the D2H copy on stream1, then
//      cudaLaunchHostFunc -- instantiated, launched 5 times in a loop on a
//      third stream, cudaStreamSynchronize.
// The host node / host function only copies the result from the pinned result
// buffer into a log and clears the buffer (as the sample's callback prints and
// resets it); it makes no CUDA call.  The host checks every logged result.
//
// Why it is correct: inside a graph, every node that reads what another
// writes depends on it (memset/copy -> reduce -> reduceFinal -> D2H -> host
// node); in the captured graph, the fork and join events become those edges.
// Launches of graphs on one stream run one after the other, each completely
// (host node included).  The host reads the log only after
// cudaStreamSynchronize of the launch stream, which waits for the launched
// graphs' host nodes, and rewrites the pinned input only after that wait.
// Difference from the sample: the D2H copy lands in pinned memory
// (cudaMallocHost) -- the sample copies into `double result_h` on the stack,
// pageable memory, which makes every cudaGraphLaunch block until the graph has
// run (a true pageable-async-copy: see test_programs/graph_pageable.cu).
// Also: exact inputs (k/256) so the sums can be checked exactly, 4M elements.
// Expected: nothing to report.
#include "ss_test.cuh"
#include <string.h>

#define THREADS_PER_BLOCK 512
#define NUM_BLOCKS 512
#define INPUT_SIZE ((size_t)1 << 22)
#define MANUAL_LAUNCHES 3
#define CAPTURE_LAUNCHES 5
#define MAX_LOG 32

// Each block sums its grid-stride share of `in` into out[blockIdx.x].
__global__ void reduce(const float *in, double *out, size_t input_size, size_t output_size)
{
    __shared__ double tmp[THREADS_PER_BLOCK];
    double s = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < input_size;
         i += (size_t)gridDim.x * blockDim.x)
        s += (double)in[i];
    tmp[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride)
            tmp[threadIdx.x] += tmp[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0 && blockIdx.x < output_size)
        out[blockIdx.x] = tmp[0];
}

// One block: result[0] = sum of in[0..input_size).
__global__ void reduceFinal(const double *in, double *result, size_t input_size)
{
    __shared__ double tmp[THREADS_PER_BLOCK];
    double s = 0.0;
    for (size_t i = threadIdx.x; i < input_size; i += blockDim.x)
        s += in[i];
    tmp[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride)
            tmp[threadIdx.x] += tmp[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        result[0] = tmp[0];
}

// What the host node / host function sees.
struct result_log {
    double *result_h; // pinned, written by the graph's D2H node
    double values[MAX_LOG];
    int count;
};

// Runs on a CUDA driver thread after the D2H copy of its launch: no CUDA call.
static void CUDART_CB record_result(void *data)
{
    result_log *log = (result_log *)data;
    if (log->count < MAX_LOG)
        log->values[log->count] = *log->result_h;
    log->count++;
    *log->result_h = 0.0; // reset, as the sample's callback does
}

static void init_input(float *a, size_t n, int divisor)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (float)(i % 256) / (float)divisor; // exact in float, sums exact in double
}

static double expected_sum(size_t n, int divisor)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)(i % 256) / divisor;
    return s;
}

static int check_log(const char *what, const result_log *log, int launches, double want)
{
    int bad = 0;
    if (log->count != launches) {
        fprintf(stderr, "sample_cuda_graphs: %s: %d host-node runs, expected %d\n", what, log->count, launches);
        bad++;
    }
    for (int i = 0; i < log->count && i < MAX_LOG; i++)
        if (log->values[i] != want) {
            fprintf(stderr, "sample_cuda_graphs: %s: launch %d reduced to %.3f, expected %.3f\n", what, i,
                    log->values[i], want);
            bad++;
        }
    return bad;
}

static int graphs_manual(float *input_h, float *input_d, double *partial_d, double *result_d, double *result_h)
{
    cudaStream_t stream_for_graph;
    CK(cudaStreamCreate(&stream_for_graph));
    cudaGraph_t graph;
    CK(cudaGraphCreate(&graph, 0));

    // H2D copy of the input (3D parameters, as the sample builds it).
    cudaMemcpy3DParms copy_in = {};
    copy_in.srcPos = make_cudaPos(0, 0, 0);
    copy_in.srcPtr = make_cudaPitchedPtr(input_h, sizeof(float) * INPUT_SIZE, INPUT_SIZE, 1);
    copy_in.dstPos = make_cudaPos(0, 0, 0);
    copy_in.dstPtr = make_cudaPitchedPtr(input_d, sizeof(float) * INPUT_SIZE, INPUT_SIZE, 1);
    copy_in.extent = make_cudaExtent(sizeof(float) * INPUT_SIZE, 1, 1);
    copy_in.kind = cudaMemcpyHostToDevice;
    cudaGraphNode_t copy_in_node;
    CK(cudaGraphAddMemcpyNode(&copy_in_node, graph, NULL, 0, &copy_in));

    // Clear the partial sums (4-byte elements: a memset node's widest).
    cudaMemsetParams clear_partial = {};
    clear_partial.dst = (void *)partial_d;
    clear_partial.value = 0;
    clear_partial.pitch = 0;
    clear_partial.elementSize = sizeof(float);
    clear_partial.width = NUM_BLOCKS * 2;
    clear_partial.height = 1;
    cudaGraphNode_t clear_partial_node;
    CK(cudaGraphAddMemsetNode(&clear_partial_node, graph, NULL, 0, &clear_partial));

    // reduce, after both.
    const float *in_arg = input_d;
    double *partial_arg = partial_d;
    size_t input_size = INPUT_SIZE, num_blocks = NUM_BLOCKS;
    void *reduce_args[4] = {(void *)&in_arg, (void *)&partial_arg, (void *)&input_size, (void *)&num_blocks};
    cudaKernelNodeParams reduce_params = {};
    reduce_params.func = (void *)reduce;
    reduce_params.gridDim = dim3(NUM_BLOCKS, 1, 1);
    reduce_params.blockDim = dim3(THREADS_PER_BLOCK, 1, 1);
    reduce_params.sharedMemBytes = 0;
    reduce_params.kernelParams = reduce_args;
    reduce_params.extra = NULL;
    cudaGraphNode_t reduce_deps[2] = {clear_partial_node, copy_in_node};
    cudaGraphNode_t reduce_node;
    CK(cudaGraphAddKernelNode(&reduce_node, graph, reduce_deps, 2, &reduce_params));

    // Clear the result (a root of its own, as in the sample).
    cudaMemsetParams clear_result = {};
    clear_result.dst = (void *)result_d;
    clear_result.value = 0;
    clear_result.elementSize = sizeof(float);
    clear_result.width = 2;
    clear_result.height = 1;
    cudaGraphNode_t clear_result_node;
    CK(cudaGraphAddMemsetNode(&clear_result_node, graph, NULL, 0, &clear_result));

    // reduceFinal, after reduce and the result's memset.
    const double *partial_in = partial_d;
    double *result_arg = result_d;
    void *final_args[3] = {(void *)&partial_in, (void *)&result_arg, (void *)&num_blocks};
    cudaKernelNodeParams final_params = {};
    final_params.func = (void *)reduceFinal;
    final_params.gridDim = dim3(1, 1, 1);
    final_params.blockDim = dim3(THREADS_PER_BLOCK, 1, 1);
    final_params.kernelParams = final_args;
    cudaGraphNode_t final_deps[2] = {reduce_node, clear_result_node};
    cudaGraphNode_t final_node;
    CK(cudaGraphAddKernelNode(&final_node, graph, final_deps, 2, &final_params));

    // D2H copy of the result into pinned memory.
    cudaGraphNode_t copy_out_node;
    CK(cudaGraphAddMemcpyNode1D(&copy_out_node, graph, &final_node, 1, result_h, result_d, sizeof(double),
                                cudaMemcpyDeviceToHost));

    // Host node: log the result.
    result_log log;
    memset(&log, 0, sizeof log);
    log.result_h = result_h;
    cudaHostNodeParams host_params = {};
    host_params.fn = record_result;
    host_params.userData = &log;
    cudaGraphNode_t host_node;
    CK(cudaGraphAddHostNode(&host_node, graph, &copy_out_node, 1, &host_params));

    size_t num_nodes = 0;
    CK(cudaGraphGetNodes(graph, NULL, &num_nodes));
    fprintf(stderr, "sample_cuda_graphs: %zu nodes in the graph created manually\n", num_nodes);

    cudaGraphExec_t graph_exec;
    CK(cudaGraphInstantiate(&graph_exec, graph, 0));
    cudaGraph_t cloned_graph;
    cudaGraphExec_t cloned_exec;
    CK(cudaGraphClone(&cloned_graph, graph));
    CK(cudaGraphInstantiate(&cloned_exec, cloned_graph, 0));

    for (int i = 0; i < MANUAL_LAUNCHES; i++)
        CK(cudaGraphLaunch(graph_exec, stream_for_graph));
    CK(cudaStreamSynchronize(stream_for_graph));
    int bad = check_log("manual graph", &log, MANUAL_LAUNCHES, expected_sum(INPUT_SIZE, 256));

    memset(&log.values, 0, sizeof log.values);
    log.count = 0;
    for (int i = 0; i < MANUAL_LAUNCHES; i++)
        CK(cudaGraphLaunch(cloned_exec, stream_for_graph));
    CK(cudaStreamSynchronize(stream_for_graph));
    bad += check_log("cloned manual graph", &log, MANUAL_LAUNCHES, expected_sum(INPUT_SIZE, 256));

    CK(cudaGraphExecDestroy(graph_exec));
    CK(cudaGraphExecDestroy(cloned_exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaGraphDestroy(cloned_graph));
    CK(cudaStreamDestroy(stream_for_graph));
    return bad;
}

static int graphs_stream_capture(float *input_h, float *input_d, double *partial_d, double *result_d,
                                 double *result_h)
{
    cudaStream_t stream1, stream2, stream_for_graph;
    CK(cudaStreamCreate(&stream1));
    CK(cudaStreamCreate(&stream2));
    CK(cudaStreamCreate(&stream_for_graph));
    cudaEvent_t fork_event, memset_event;
    CK(cudaEventCreate(&fork_event));
    CK(cudaEventCreate(&memset_event));

    result_log log;
    memset(&log, 0, sizeof log);
    log.result_h = result_h;

    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(stream1, cudaStreamCaptureModeGlobal));
    CK(cudaEventRecord(fork_event, stream1));
    CK(cudaStreamWaitEvent(stream2, fork_event, 0));

    CK(cudaMemcpyAsync(input_d, input_h, sizeof(float) * INPUT_SIZE, cudaMemcpyDefault, stream1));
    CK(cudaMemsetAsync(partial_d, 0, sizeof(double) * NUM_BLOCKS, stream2));
    CK(cudaMemsetAsync(result_d, 0, sizeof(double), stream2));
    CK(cudaEventRecord(memset_event, stream2));
    CK(cudaStreamWaitEvent(stream1, memset_event, 0));

    reduce<<<NUM_BLOCKS, THREADS_PER_BLOCK, 0, stream1>>>(input_d, partial_d, INPUT_SIZE, NUM_BLOCKS);
    CK_LAUNCH();
    reduceFinal<<<1, THREADS_PER_BLOCK, 0, stream1>>>(partial_d, result_d, NUM_BLOCKS);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(result_h, result_d, sizeof(double), cudaMemcpyDefault, stream1));
    CK(cudaLaunchHostFunc(stream1, record_result, &log));
    CK(cudaStreamEndCapture(stream1, &graph));

    size_t num_nodes = 0;
    CK(cudaGraphGetNodes(graph, NULL, &num_nodes));
    fprintf(stderr, "sample_cuda_graphs: %zu nodes in the graph created by stream capture\n", num_nodes);

    cudaGraphExec_t graph_exec;
    CK(cudaGraphInstantiate(&graph_exec, graph, 0));
    for (int i = 0; i < CAPTURE_LAUNCHES; i++)
        CK(cudaGraphLaunch(graph_exec, stream_for_graph));
    CK(cudaStreamSynchronize(stream_for_graph));
    int bad = check_log("captured graph", &log, CAPTURE_LAUNCHES, expected_sum(INPUT_SIZE, 128));

    CK(cudaGraphExecDestroy(graph_exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaEventDestroy(fork_event));
    CK(cudaEventDestroy(memset_event));
    CK(cudaStreamDestroy(stream1));
    CK(cudaStreamDestroy(stream2));
    CK(cudaStreamDestroy(stream_for_graph));
    return bad;
}

int main(void)
{
    ss_init_device();
    float *input_h = NULL, *input_d = NULL;
    double *partial_d = NULL, *result_d = NULL, *result_h = NULL;
    CK(cudaMallocHost(&input_h, sizeof(float) * INPUT_SIZE));
    CK(cudaMallocHost(&result_h, sizeof(double)));
    CK(cudaMalloc(&input_d, sizeof(float) * INPUT_SIZE));
    CK(cudaMalloc(&partial_d, sizeof(double) * NUM_BLOCKS));
    CK(cudaMalloc(&result_d, sizeof(double)));
    *result_h = 0.0;

    init_input(input_h, INPUT_SIZE, 256);
    int bad = graphs_manual(input_h, input_d, partial_d, result_d, result_h);
    // Every launch of part (a) has finished (its stream was synchronized): the
    // host may rewrite the pinned input for part (b).
    init_input(input_h, INPUT_SIZE, 128);
    bad += graphs_stream_capture(input_h, input_d, partial_d, result_d, result_h);

    CK(cudaFree(input_d));
    CK(cudaFree(partial_d));
    CK(cudaFree(result_d));
    CK(cudaFreeHost(input_h));
    CK(cudaFreeHost(result_h));
    printf("sample_cuda_graphs: %s\n", bad ? "FAILED" : "OK");
    return bad ? 1 : 0;
}
