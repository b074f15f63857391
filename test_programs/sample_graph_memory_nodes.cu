// sample_graph_memory_nodes: graph memory nodes as NVIDIA's graphMemoryNodes
// sample makes them: a step captured into a CUDA graph allocates its scratch
// buffer with cudaMallocAsync, forks to a second stream through events, joins
// back, and frees the scratch with cudaFreeAsync, all inside the capture.
// The instantiated graph is launched once per batch on one stream, between an
// upload and a download; the host checks both reductions of every batch.
//
// Why it is correct: the scratch buffer lives only inside the graph (the
// allocation and free are graph nodes, and every launch gets the same
// address back from the graph's pool); the fork and join events order the
// second stream's kernel after the producer and before the free; each batch's
// results are downloaded on the launch stream and read after synchronizing it.
// A tool that saw the same scratch address written by every launch, or the
// captured free as a release while later launches still use the address,
// would report races or uses after free that are not there.
// Expected: no finding of any rule.
#include "ss_test.cuh"

#define N (1 << 18)
#define BATCHES 16
#define BLOCK 256

__global__ void square(const float *in, float *scratch, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        scratch[i] = in[i] * in[i];
}

// One block: the sum of the first or second half of scratch.
__global__ void half_sum(const float *scratch, int n, int half, float *out)
{
    __shared__ float part[BLOCK];
    float s = 0.0f;
    int lo = half ? n / 2 : 0, hi = half ? n : n / 2;
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x)
        s += scratch[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k)
            part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = part[0];
}

int main(void)
{
    ss_init_device();
    cudaStream_t stream, side;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    float *in, *sums, *host_in, *host_sums;
    CK(cudaMalloc(&in, N * sizeof(float)));
    CK(cudaMalloc(&sums, 2 * sizeof(float)));
    CK(cudaMallocHost(&host_in, N * sizeof(float)));
    CK(cudaMallocHost(&host_sums, 2 * sizeof(float)));

    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    float *scratch;
    CK(cudaMallocAsync(&scratch, N * sizeof(float), stream));
    square<<<N / BLOCK, BLOCK, 0, stream>>>(in, scratch, N);
    CK(cudaEventRecord(fork, stream));
    CK(cudaStreamWaitEvent(side, fork, 0));
    half_sum<<<1, BLOCK, 0, stream>>>(scratch, N, 0, sums);
    half_sum<<<1, BLOCK, 0, side>>>(scratch, N, 1, sums + 1);
    CK(cudaEventRecord(join, side));
    CK(cudaStreamWaitEvent(stream, join, 0));
    CK(cudaFreeAsync(scratch, stream));
    CK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, 0));

    int bad = 0;
    for (int b = 0; b < BATCHES; b++) {
        double want[2] = { 0, 0 };
        for (int i = 0; i < N; i++) {
            host_in[i] = (float)((i + b) % 8) * 0.5f;
            want[i >= N / 2] += (double)host_in[i] * host_in[i];
        }
        CK(cudaMemcpyAsync(in, host_in, N * sizeof(float), cudaMemcpyHostToDevice, stream));
        CK(cudaGraphLaunch(exec, stream));
        CK(cudaMemcpyAsync(host_sums, sums, 2 * sizeof(float), cudaMemcpyDeviceToHost, stream));
        CK(cudaStreamSynchronize(stream));
        for (int h = 0; h < 2; h++)
            if (fabs(host_sums[h] - want[h]) > 1e-3 * want[h])
                bad++;
    }
    printf("sample_graph_memory_nodes: %d batches, %s\n", BATCHES, bad ? "WRONG" : "correct");

    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaFree(in));
    CK(cudaFree(sums));
    CK(cudaFreeHost(host_in));
    CK(cudaFreeHost(host_sums));
    CK(cudaEventDestroy(fork));
    CK(cudaEventDestroy(join));
    CK(cudaStreamDestroy(stream));
    CK(cudaStreamDestroy(side));
    return bad != 0;
}
