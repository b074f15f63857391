// graph_exec_streams: one "model step" captured into a CUDA graph and
// instantiated ONCE, then launched round-robin on a pool of streams, the way
// a server hands each request to whichever stream is free.  The step updates
// a persistent state buffer in place (read, spin, write back: two launches
// running at once would lose updates).  Nothing orders the streams, and
// nothing needs to: CUDA runs one instance of an executable graph at a time,
// "each launch is ordered behind both any previous work in stream and any
// previous launches of graphExec" (cudaGraphLaunch).  The program checks the
// final state, which only an ordered run gets right.
// Variants built from this file:
//   graph_exec_streams.cu        one exec for all streams: correct, silent
//   graph_exec_streams_racy.cu   an exec per stream (what the docs say to do
//                                to run a graph concurrently): the launches
//                                on different streams are no longer ordered,
//                                and every one of them updates the same state
#include "ss_test.cuh"

#ifndef GRAPH_EXEC_PER_STREAM
#define GRAPH_EXEC_PER_STREAM 0
#define PROGRAM_NAME "graph_exec_streams"
#endif

#define N 4096
#define STREAMS 4
#define LAUNCHES 16

// state[i] = state[i] * 3 + 1, with the read and the write 1 ms apart
__global__ void advance(int *state, int n, unsigned long long spin_ns)
{
    int mine[16];
    int k = 0;
    for (int i = threadIdx.x; i < n && k < 16; i += blockDim.x) mine[k++] = state[i];
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    k = 0;
    for (int i = threadIdx.x; i < n && k < 16; i += blockDim.x, k++) state[i] = mine[k] * 3 + 1;
}

// out[i] = state[i] & 0xff: a second node reading what the first wrote
__global__ void publish(const int *state, int *out, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[i] = state[i] & 0xff;
}

int main(void)
{
    ss_init_device();
    cudaStream_t pool[STREAMS], capture;
    for (int s = 0; s < STREAMS; s++)
        CK(cudaStreamCreateWithFlags(&pool[s], cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
    int *state, *out;
    CK(cudaMalloc(&state, N * sizeof(int)));
    CK(cudaMalloc(&out, N * sizeof(int)));
    CK(cudaMemsetAsync(state, 0, N * sizeof(int), capture));
    CK(cudaMemsetAsync(out, 0, N * sizeof(int), capture));
    CK(cudaStreamSynchronize(capture));

    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal));
    advance<<<1, 256, 0, capture>>>(state, N, ss_ms_to_ns(1));
    publish<<<1, 256, 0, capture>>>(state, out, N);
    CK(cudaStreamEndCapture(capture, &graph));

    cudaGraphExec_t exec[STREAMS];
#if GRAPH_EXEC_PER_STREAM
    for (int s = 0; s < STREAMS; s++)
        CK(cudaGraphInstantiate(&exec[s], graph, 0));
#else
    CK(cudaGraphInstantiate(&exec[0], graph, 0));
    for (int s = 1; s < STREAMS; s++)
        exec[s] = exec[0];
#endif

    for (int i = 0; i < LAUNCHES; i++) {
        int s = i % STREAMS;
        CK(cudaGraphLaunch(exec[s], pool[s])); // EXPECT-SITE missing-fence
    }
    for (int s = 0; s < STREAMS; s++)
        CK(cudaStreamSynchronize(pool[s]));

    int *host_state;
    CK(cudaMallocHost(&host_state, N * sizeof(int)));
    CK(cudaMemcpy(host_state, state, N * sizeof(int), cudaMemcpyDeviceToHost));
    int want = 0;
    for (int i = 0; i < LAUNCHES; i++)
        want = want * 3 + 1;
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += host_state[i] != want;
    printf("%s: %d launches on %d streams, %s, state[0]=%d (ordered: %d), %s\n", PROGRAM_NAME, LAUNCHES, STREAMS,
           GRAPH_EXEC_PER_STREAM ? "an exec per stream" : "one exec", host_state[0], want,
           wrong ? "raced" : "ok");
    CK(cudaFreeHost(host_state));
#if GRAPH_EXEC_PER_STREAM
    for (int s = 0; s < STREAMS; s++)
        CK(cudaGraphExecDestroy(exec[s]));
#else
    CK(cudaGraphExecDestroy(exec[0]));
#endif
    CK(cudaGraphDestroy(graph));
    CK(cudaFree(state));
    CK(cudaFree(out));
    for (int s = 0; s < STREAMS; s++)
        CK(cudaStreamDestroy(pool[s]));
    CK(cudaStreamDestroy(capture));
    // one exec: CUDA orders the launches, so the state must be exact
    return !GRAPH_EXEC_PER_STREAM && wrong != 0;
}
