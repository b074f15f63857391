// graph_side_race: a CUDA graph captured on `main_stream` whose kernel reads a
// buffer, replayed REPLAYS times; before each replay an eager kernel on
// `side` rewrites that buffer, and nothing orders the two streams: the
// replay reads the buffer while (or before) it is written, and the next
// rewrite overwrites it while the previous replay may still read it.
// The analyzer links each replayed kernel to the launch captured into the
// graph (its arguments) and checks it against the eager work of `side`.
// Variants built from this file:
//   graph_side_race.cu          no event between the streams
//   graph_side_race_fixed.cu    event record/wait both ways: side -> replay,
//                               replay -> next rewrite
//   graph_added_race.cu         the graph built node by node
//   graph_added_race_fixed.cu   (cudaGraphAddKernelNode, as the CUDA samples'
//                               simpleCudaGraphs does), without and with events
//   graph_generic_race.cu       the same with the generic cudaGraphAddNode
//   graph_generic_race_fixed.cu (CUDA 12.2+), without and with events
#include "ss_test.cuh"

#ifndef GRAPH_SIDE_FIXED
#define GRAPH_SIDE_FIXED 0
#define PROGRAM_NAME "graph_side_race"
#endif
#ifndef GRAPH_SIDE_ADDED
#define GRAPH_SIDE_ADDED 0
#endif

#define N 4096
#define REPLAYS 5

// Writes `value` into every element after spinning, so an unordered reader
// sees the old contents.
__global__ void rewrite(int *buffer, int n, int value, unsigned long long spin_ns)
{ // EXPECT-NOSITE missing-fence
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        buffer[i] = value;
}

// out += buffer
__global__ void accumulate(const int *buffer, int *out, int n)
{ // EXPECT-NOSITE missing-fence
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[i] += buffer[i];
}

int main(void)
{
    ss_init_device();
    cudaStream_t main_stream, side;
    CK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t rewritten, consumed;
    CK(cudaEventCreateWithFlags(&rewritten, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
    int *buffer, *out;
    CK(cudaMalloc(&buffer, N * sizeof(int)));
    CK(cudaMalloc(&out, N * sizeof(int)));
    CK(cudaMemsetAsync(buffer, 0, N * sizeof(int), main_stream));
    CK(cudaMemsetAsync(out, 0, N * sizeof(int), main_stream));
    CK(cudaStreamSynchronize(main_stream));

    cudaGraph_t graph;
#if GRAPH_SIDE_ADDED
    // the node's kernel and arguments are those given to cudaGraphAddKernelNode
    // (or, GRAPH_SIDE_ADDED 2, to the generic cudaGraphAddNode of CUDA 12.2+)
    CK(cudaGraphCreate(&graph, 0));
    int n = N;
    void *args[] = { &buffer, &out, &n };
    cudaGraphNode_t node;
#if GRAPH_SIDE_ADDED == 2
    cudaGraphNodeParams node_params = {};
    node_params.type = cudaGraphNodeTypeKernel;
    node_params.kernel.func = (void *)accumulate;
    node_params.kernel.gridDim = dim3(1);
    node_params.kernel.blockDim = dim3(256);
    node_params.kernel.kernelParams = args;
    CK(cudaGraphAddNode(&node, graph, NULL, NULL, 0, &node_params));
#else
    cudaKernelNodeParams node_params = {};
    node_params.func = (void *)accumulate;
    node_params.gridDim = dim3(1);
    node_params.blockDim = dim3(256);
    node_params.kernelParams = args;
    CK(cudaGraphAddKernelNode(&node, graph, NULL, 0, &node_params));
#endif
#else
    CK(cudaStreamBeginCapture(main_stream, cudaStreamCaptureModeGlobal));
    accumulate<<<1, 256, 0, main_stream>>>(buffer, out, N);
    CK(cudaStreamEndCapture(main_stream, &graph));
#endif
    cudaGraphExec_t graph_exec;
    CK(cudaGraphInstantiate(&graph_exec, graph, 0));

    for (int replay = 0; replay < REPLAYS; replay++) {
#if GRAPH_SIDE_FIXED
        if (replay > 0)   // the previous replay has read the buffer
            CK(cudaStreamWaitEvent(side, consumed, 0));
#endif
        rewrite<<<1, 256, 0, side>>>(buffer, N, replay + 1, ss_ms_to_ns(5)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
#if GRAPH_SIDE_FIXED
        CK(cudaEventRecord(rewritten, side));
        CK(cudaStreamWaitEvent(main_stream, rewritten, 0));
#endif
        CK(cudaGraphLaunch(graph_exec, main_stream)); // EXPECT-SITE missing-fence
#if GRAPH_SIDE_FIXED
        CK(cudaEventRecord(consumed, main_stream));
#endif
    }
    CK(cudaStreamSynchronize(side));
    int *host_out;
    CK(cudaMallocHost(&host_out, N * sizeof(int)));
    CK(cudaMemcpyAsync(host_out, out, N * sizeof(int), cudaMemcpyDeviceToHost, main_stream));
    CK(cudaStreamSynchronize(main_stream));

    // 1 + 2 + ... + REPLAYS when every replay read its own rewrite
    const int want = REPLAYS * (REPLAYS + 1) / 2;
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += host_out[i] != want;
    printf("%s: %d replays, out[0]=%d (ordered: %d), %s\n", PROGRAM_NAME, REPLAYS, host_out[0], want,
           wrong ? "raced" : "ok");
    CK(cudaFreeHost(host_out));
    CK(cudaGraphExecDestroy(graph_exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaEventDestroy(rewritten));
    CK(cudaEventDestroy(consumed));
    CK(cudaFree(buffer));
    CK(cudaFree(out));
    CK(cudaStreamDestroy(main_stream));
    CK(cudaStreamDestroy(side));
    // the racy variant is expected to read stale data: only the fixed one must be exact
    return GRAPH_SIDE_FIXED && wrong != 0;
}
