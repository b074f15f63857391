// sample_graph_conditional_while: conditional graph nodes written as NVIDIA's
// graphConditionalNodes sample writes them (simpleWhileGraph, simpleIfGraph,
// capturedWhileGraph, simpleSwitchGraph):
// the graph is built node by node with cudaGraphAddNode, launched on the
// legacy default stream, and followed by cudaDeviceSynchronize.
//   while: a memset node sets a counter to 10, then a WHILE node whose body
//          kernel decrements it (spinning 0.3 ms) and ends the loop at 0;
//   if:    a kernel node reads a flag and sets the condition, then an IF node
//          whose body kernel doubles a value (spinning 0.3 ms).
//   captured while: the same loop, the WHILE node added inside a stream
//          capture, launched on a non-blocking stream;
//   switch: a kernel node picks one of three bodies.
// Each graph runs several times; the host checks the counter and the value.
//
// Why it is correct: the host reads nothing until cudaDeviceSynchronize has
// waited for the whole graph, and each of those syncs waits for real GPU
// work: the loop's ten body kernels run after cudaGraphLaunch returned.  CUPTI
// gives a conditional body's kernels no correlation id and runs them on a
// stream of the graph's own: a tool that saw no work of the launch in flight
// would call each sync useless.
// Expected: no finding of any rule.
#include "ss_test.cuh"

#define LAUNCHES 4
#define LOOP_COUNT 10
#define SPIN_MS 0.3

__global__ void loop_kernel(char *counter, cudaGraphConditionalHandle loop, unsigned long long spin_ns)
{
    ss_spin_ns(spin_ns);
    if (--(*counter) == 0)
        cudaGraphSetConditional(loop, 0);
}

__global__ void if_condition(const char *flag, cudaGraphConditionalHandle cond)
{
    cudaGraphSetConditional(cond, *flag ? 1 : 0);
}

__global__ void if_body(int *value, unsigned long long spin_ns)
{
    ss_spin_ns(spin_ns);
    *value *= 2;
}

static cudaGraphNode_t add_conditional(cudaGraph_t graph, const cudaGraphNode_t *dep, size_t ndep,
                                       cudaGraphConditionalHandle handle, cudaGraphConditionalNodeType type,
                                       cudaGraph_t *body)
{
    cudaGraphNodeParams params = {};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type = type;
    params.conditional.size = 1;
    cudaGraphNode_t node;
    CK(cudaGraphAddNode(&node, graph, dep, nullptr, ndep, &params));
    *body = params.conditional.phGraph_out[0];
    return node;
}

static cudaGraphNode_t add_kernel(cudaGraph_t graph, const cudaGraphNode_t *dep, size_t ndep, void *func,
                                  void **args)
{
    cudaGraphNodeParams params = {};
    params.type = cudaGraphNodeTypeKernel;
    params.kernel.func = func;
    params.kernel.gridDim = dim3(1, 1, 1);
    params.kernel.blockDim = dim3(1, 1, 1);
    params.kernel.kernelParams = args;
    cudaGraphNode_t node;
    CK(cudaGraphAddNode(&node, graph, dep, nullptr, ndep, &params));
    return node;
}

static int simple_while_graph(void)
{
    char *counter;
    CK(cudaMalloc(&counter, 1));
    cudaGraph_t graph;
    CK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle loop;
    CK(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
    cudaMemsetParams ms = {};
    ms.dst = counter;
    ms.value = LOOP_COUNT;
    ms.elementSize = 1;
    ms.width = 1;
    ms.height = 1;
    cudaGraphNode_t memset_node;
    CK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &ms));
    cudaGraph_t body;
    add_conditional(graph, &memset_node, 1, loop, cudaGraphCondTypeWhile, &body);
    unsigned long long spin = ss_ms_to_ns(SPIN_MS);
    void *args[] = { &counter, &loop, &spin };
    add_kernel(body, nullptr, 0, (void *)loop_kernel, args);
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    int bad = 0;
    for (int i = 0; i < LAUNCHES; i++) {
        CK(cudaGraphLaunch(exec, 0));
        CK(cudaDeviceSynchronize());
        char left = -1;
        CK(cudaMemcpy(&left, counter, 1, cudaMemcpyDeviceToHost));
        bad += left != 0;
    }
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaFree(counter));
    return bad;
}

static int simple_if_graph(void)
{
    char *flag;
    int *value;
    CK(cudaMalloc(&flag, 1));
    CK(cudaMalloc(&value, sizeof(int)));
    cudaGraph_t graph;
    CK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle cond;
    CK(cudaGraphConditionalHandleCreate(&cond, graph, 0, 0));
    void *cargs[] = { &flag, &cond };
    cudaGraphNode_t kernel_node = add_kernel(graph, nullptr, 0, (void *)if_condition, cargs);
    cudaGraph_t body;
    add_conditional(graph, &kernel_node, 1, cond, cudaGraphCondTypeIf, &body);
    unsigned long long spin = ss_ms_to_ns(SPIN_MS);
    void *bargs[] = { &value, &spin };
    add_kernel(body, nullptr, 0, (void *)if_body, bargs);
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    int bad = 0;
    for (int i = 0; i < LAUNCHES; i++) {
        char f = (char)(i % 2);
        int one = 1, got = 0;
        CK(cudaMemcpy(flag, &f, 1, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(value, &one, sizeof(int), cudaMemcpyHostToDevice));
        CK(cudaGraphLaunch(exec, 0));
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(&got, value, sizeof(int), cudaMemcpyDeviceToHost));
        bad += got != (f ? 2 : 1);
    }
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaFree(flag));
    CK(cudaFree(value));
    return bad;
}

// capturedWhileGraph: the WHILE node added inside a stream capture
// (cudaStreamGetCaptureInfo, cudaGraphAddNode, then
// cudaStreamUpdateCaptureDependencies), its body captured from a second
// stream with cudaStreamBeginCaptureToGraph.  Launched on a non-blocking
// stream, then cudaStreamSynchronize.
static int captured_while_graph(void)
{
    char *counter;
    CK(cudaMalloc(&counter, 1));
    cudaStream_t stream, body_stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&body_stream, cudaStreamNonBlocking));
    cudaGraph_t graph;
    CK(cudaGraphCreate(&graph, 0));
    CK(cudaStreamBeginCaptureToGraph(stream, graph, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
    CK(cudaMemsetAsync(counter, LOOP_COUNT, 1, stream));
    cudaStreamCaptureStatus status;
    const cudaGraphNode_t *deps;
    size_t ndeps;
    cudaGraph_t captured;
    CK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &captured, &deps, nullptr, &ndeps));
    cudaGraphConditionalHandle loop;
    CK(cudaGraphConditionalHandleCreate(&loop, captured, 1, cudaGraphCondAssignDefault));
    cudaGraph_t body;
    cudaGraphNode_t cond = add_conditional(captured, deps, ndeps, loop, cudaGraphCondTypeWhile, &body);
    CK(cudaStreamUpdateCaptureDependencies(stream, &cond, nullptr, 1, cudaStreamSetCaptureDependencies));
    CK(cudaStreamBeginCaptureToGraph(body_stream, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
    loop_kernel<<<1, 1, 0, body_stream>>>(counter, loop, ss_ms_to_ns(SPIN_MS));
    CK_LAUNCH();
    CK(cudaStreamEndCapture(body_stream, nullptr));
    CK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    int bad = 0;
    for (int i = 0; i < LAUNCHES; i++) {
        char left = -1;
        CK(cudaGraphLaunch(exec, stream));
        CK(cudaStreamSynchronize(stream));
        CK(cudaMemcpy(&left, counter, 1, cudaMemcpyDeviceToHost));
        bad += left != 0;
    }
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaStreamDestroy(stream));
    CK(cudaStreamDestroy(body_stream));
    CK(cudaFree(counter));
    return bad;
}

// simpleSwitchGraph (CUDA 12.8): a kernel node picks one of three bodies,
// each a kernel that writes its index, spinning first.
__global__ void switch_condition(const int *which, cudaGraphConditionalHandle cond)
{
    cudaGraphSetConditional(cond, (unsigned)*which);
}

__global__ void switch_body(int *out, int index, unsigned long long spin_ns)
{
    ss_spin_ns(spin_ns);
    *out = index;
}

static int simple_switch_graph(void)
{
    int *which, *out;
    CK(cudaMalloc(&which, sizeof(int)));
    CK(cudaMalloc(&out, sizeof(int)));
    cudaGraph_t graph;
    CK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle cond;
    CK(cudaGraphConditionalHandleCreate(&cond, graph, 0, 0));
    void *cargs[] = { &which, &cond };
    cudaGraphNode_t kernel_node = add_kernel(graph, nullptr, 0, (void *)switch_condition, cargs);
    cudaGraphNodeParams params = {};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = cond;
    params.conditional.type = cudaGraphCondTypeSwitch;
    params.conditional.size = 3;
    cudaGraphNode_t node;
    CK(cudaGraphAddNode(&node, graph, &kernel_node, nullptr, 1, &params));
    int index[3] = { 0, 1, 2 };
    unsigned long long spin = ss_ms_to_ns(SPIN_MS);
    for (int k = 0; k < 3; k++) {
        void *bargs[] = { &out, &index[k], &spin };
        add_kernel(params.conditional.phGraph_out[k], nullptr, 0, (void *)switch_body, bargs);
    }
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    int bad = 0;
    for (int i = 0; i < LAUNCHES; i++) {
        int w = i % 3, minus = -1, got = -2;
        CK(cudaMemcpy(which, &w, sizeof(int), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(out, &minus, sizeof(int), cudaMemcpyHostToDevice));
        CK(cudaGraphLaunch(exec, 0));
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(&got, out, sizeof(int), cudaMemcpyDeviceToHost));
        bad += got != w;
    }
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaFree(which));
    CK(cudaFree(out));
    return bad;
}

int main(void)
{
    ss_init_device();
    int bad = simple_while_graph();
    bad += simple_if_graph();
    bad += captured_while_graph();
    bad += simple_switch_graph();
    printf("sample_graph_conditional_while: %s\n", bad ? "WRONG" : "correct");
    return bad != 0;
}
