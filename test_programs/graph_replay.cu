// graph_replay: capture a graph that forks onto a second stream and joins
// back through events, replay it 10 times, and check the numbers.  The
// dependencies inside the graph are real, so the analyzer must not report a
// missing fence between the two streams' kernels.
#include "ss_test.cuh"

#define N 1024
#define REPLAYS 10

__global__ void add_scalar(int *data, int n, int value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += value;
}

// out = in * factor
__global__ void scaled_copy(const int *in, int *out, int n, int factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * factor;
}

// out = a + b
__global__ void sum_into(const int *a, const int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] + b[i];
}

int main(void)
{
    ss_init_device();
    cudaStream_t main_stream, side_stream;
    CK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side_stream, cudaStreamNonBlocking));
    cudaEvent_t fork_event, join_event;
    CK(cudaEventCreateWithFlags(&fork_event, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join_event, cudaEventDisableTiming));
    int *a, *b, *c, *d;
    CK(cudaMalloc(&a, N * sizeof(int)));
    CK(cudaMalloc(&b, N * sizeof(int)));
    CK(cudaMalloc(&c, N * sizeof(int)));
    CK(cudaMalloc(&d, N * sizeof(int)));
    CK(cudaMemsetAsync(a, 0, N * sizeof(int), main_stream));
    CK(cudaStreamSynchronize(main_stream));

    const dim3 grid((N + 255) / 256), block(256);
    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(main_stream, cudaStreamCaptureModeGlobal));
    add_scalar<<<grid, block, 0, main_stream>>>(a, N, 1);       // a += 1
    CK(cudaEventRecord(fork_event, main_stream));
    CK(cudaStreamWaitEvent(side_stream, fork_event, 0));
    scaled_copy<<<grid, block, 0, side_stream>>>(a, b, N, 2);   // b = 2a   (side)
    scaled_copy<<<grid, block, 0, main_stream>>>(a, c, N, 3);   // c = 3a   (main)
    CK(cudaEventRecord(join_event, side_stream));
    CK(cudaStreamWaitEvent(main_stream, join_event, 0));
    sum_into<<<grid, block, 0, main_stream>>>(b, c, d, N);      // d = b + c = 5a
    CK(cudaStreamEndCapture(main_stream, &graph));
    cudaGraphExec_t graph_exec;
    CK(cudaGraphInstantiate(&graph_exec, graph, 0));

    for (int replay = 0; replay < REPLAYS; replay++)
        CK(cudaGraphLaunch(graph_exec, main_stream));
    int *host_d;
    CK(cudaMallocHost(&host_d, N * sizeof(int)));
    CK(cudaMemcpyAsync(host_d, d, N * sizeof(int), cudaMemcpyDeviceToHost, main_stream));
    CK(cudaStreamSynchronize(main_stream));

    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += host_d[i] != 5 * REPLAYS;
    printf("graph_replay: %d replays, d[0]=%d, %s\n", REPLAYS, host_d[0], wrong ? "WRONG" : "ok");
    CK(cudaFreeHost(host_d));
    CK(cudaGraphExecDestroy(graph_exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaEventDestroy(fork_event));
    CK(cudaEventDestroy(join_event));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
    CK(cudaFree(d));
    CK(cudaStreamDestroy(main_stream));
    CK(cudaStreamDestroy(side_stream));
    return wrong != 0;
}
