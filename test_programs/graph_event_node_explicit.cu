// graph_event_node_explicit: a graph built node by node whose event nodes
// order other streams, as code that builds graphs explicitly (XLA's command
// buffers, Kokkos graphs) writes it.  The graph: a producer kernel that
// fills buf, then an event record node on `ready` (cudaGraphAddEventRecordNode
// with the kernel as its dependency), and a second graph whose first node
// waits for `consumed` (cudaGraphAddEventWaitNode) before a kernel that
// overwrites buf.  Per round, on stream A: launch the producer graph; on
// stream B: cudaStreamWaitEvent(B, ready), a consumer kernel that sums buf,
// cudaEventRecord(consumed, B); on stream A again: the overwrite graph.  The
// host checks every round's sum.
//
// Why it is correct: the record node runs after the producer kernel, so B's
// wait orders the consumer after it; the wait node orders the overwrite
// after the consumer.  A tool that did not see the event nodes would take
// the wait for one on an event never recorded, and report both pairs as
// races.
// Variants built from this file:
//   graph_event_node_explicit.cu        correct: no finding of any rule
//   graph_event_node_explicit_racy.cu   the record node has no dependency:
//                                       it may run before the producer (the
//                                       consumer may read buf being filled)
#include "ss_test.cuh"

#ifndef RECORD_AFTER_PRODUCER
#define RECORD_AFTER_PRODUCER 1
#define PROGRAM_NAME "graph_event_node_explicit"
#endif

#define N (1 << 16)
#define ROUNDS 8
#define BLOCK 256

__global__ void produce(int *buf, int n, int round, unsigned long long spin_ns)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        buf[i] = round + 1;
}

__global__ void overwrite(int *buf, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        buf[i] = -1;
}

__global__ void consume(const int *buf, int n, long long *sum)
{
    __shared__ long long part[BLOCK];
    long long s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += buf[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k)
            part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *sum = part[0];
}

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *dep, size_t ndep, void *func, void **args,
                                  unsigned blocks)
{
    cudaKernelNodeParams p = {};
    p.func = func;
    p.gridDim = dim3(blocks, 1, 1);
    p.blockDim = dim3(BLOCK, 1, 1);
    p.kernelParams = args;
    cudaGraphNode_t node;
    CK(cudaGraphAddKernelNode(&node, g, dep, ndep, &p));
    return node;
}

int main(void)
{
    ss_init_device();
    cudaStream_t a, b;
    CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t ready, consumed;
    CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
    int *buf;
    long long *sums, *host_sums;
    CK(cudaMalloc(&buf, N * sizeof(int)));
    CK(cudaMalloc(&sums, ROUNDS * sizeof(long long)));
    CK(cudaMallocHost(&host_sums, ROUNDS * sizeof(long long)));
    int n = N;

    // producer graphs, one per round (the round is a kernel argument)
    cudaGraphExec_t produce_exec[ROUNDS];
    cudaGraph_t produce_graph[ROUNDS];
    int rounds[ROUNDS];
    unsigned long long spin = ss_ms_to_ns(1.0);
    for (int r = 0; r < ROUNDS; r++) {
        rounds[r] = r;
        CK(cudaGraphCreate(&produce_graph[r], 0));
        void *args[] = { &buf, &n, &rounds[r], &spin };
        cudaGraphNode_t k = add_kernel(produce_graph[r], nullptr, 0, (void *)produce, args, N / BLOCK);
        cudaGraphNode_t rec;
        CK(cudaGraphAddEventRecordNode(&rec, produce_graph[r], RECORD_AFTER_PRODUCER ? &k : nullptr,
                                       RECORD_AFTER_PRODUCER ? 1 : 0, ready));
        CK(cudaGraphInstantiate(&produce_exec[r], produce_graph[r], 0));
    }
    // the overwrite graph: wait for `consumed`, then overwrite buf
    cudaGraph_t over_graph;
    CK(cudaGraphCreate(&over_graph, 0));
    cudaGraphNode_t wait;
    CK(cudaGraphAddEventWaitNode(&wait, over_graph, nullptr, 0, consumed));
    void *oargs[] = { &buf, &n };
    add_kernel(over_graph, &wait, 1, (void *)overwrite, oargs, N / BLOCK);
    cudaGraphExec_t over_exec;
    CK(cudaGraphInstantiate(&over_exec, over_graph, 0));

    for (int r = 0; r < ROUNDS; r++) {
        CK(cudaGraphLaunch(produce_exec[r], a)); // EXPECT-SITE missing-fence
        CK(cudaStreamWaitEvent(b, ready, 0));
        consume<<<1, BLOCK, 0, b>>>(buf, N, sums + r); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        CK(cudaEventRecord(consumed, b));
        CK(cudaGraphLaunch(over_exec, a)); // EXPECT-SITE missing-fence
    }
    CK(cudaMemcpyAsync(host_sums, sums, ROUNDS * sizeof(long long), cudaMemcpyDeviceToHost, b));
    CK(cudaStreamSynchronize(b));
    CK(cudaStreamSynchronize(a));
    int wrong = 0;
    for (int r = 0; r < ROUNDS; r++)
        wrong += host_sums[r] != (long long)N * (r + 1);
    printf("%s: %d rounds, %d sums wrong\n", PROGRAM_NAME, ROUNDS, wrong);

    for (int r = 0; r < ROUNDS; r++) {
        CK(cudaGraphExecDestroy(produce_exec[r]));
        CK(cudaGraphDestroy(produce_graph[r]));
    }
    CK(cudaGraphExecDestroy(over_exec));
    CK(cudaGraphDestroy(over_graph));
    CK(cudaFree(buf));
    CK(cudaFree(sums));
    CK(cudaFreeHost(host_sums));
    CK(cudaEventDestroy(ready));
    CK(cudaEventDestroy(consumed));
    CK(cudaStreamDestroy(a));
    CK(cudaStreamDestroy(b));
    return RECORD_AFTER_PRODUCER && wrong != 0;
}
