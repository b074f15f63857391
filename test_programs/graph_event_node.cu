// A CUDA graph that signals another stream through an event record node: the
// graph is captured on `main_stream` (a producer kernel that writes a buffer,
// then cudaEventRecordWithFlags(ready, main_stream, cudaEventRecordExternal),
// which captures an event record node instead of a capture-internal
// dependency, then more work); each replay is followed by
// cudaStreamWaitEvent(side, ready) and a consumer kernel on `side` that reads
// the buffer.  The event is recorded by every replay when it reaches the node:
// the consumer is ordered after the producer.  Correct.  The way PyTorch's
// torch.cuda.Event(external=True) and Warp's record_event(external=True) work.
// Racy twin: graph_event_node_racy.cu (the side stream waits on the event
// before the graph is launched: the wait takes the previous replay's record,
// and the consumer reads while this replay's producer writes).
#include "ss_test.cuh"

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "graph_event_node"
#endif
#ifndef WAIT_BEFORE_LAUNCH
#define WAIT_BEFORE_LAUNCH 0
#endif

#define N (64 * 1024)
#define REPLAYS 6

// Spins, then writes `value`: a reader not ordered after it sees old contents.
__global__ void produce(int *buf, int n, int value, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        buf[i] = value;
}

// The graph's own later work: it touches only `scratch`.
__global__ void tail(int *scratch, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        scratch[i] += 1;
}

// Counts the elements that are not `value`.
__global__ void consume(const int *buf, int n, int value, int *wrong)
{ // EXPECT-NOSITE missing-fence
    int local = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        local += buf[i] != value;
    if (local)
        atomicAdd(wrong, local);
}


int main(void)
{
    ss_init_device();
    cudaStream_t main_stream, side;
    CK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t ready;
    CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    int *buf, *scratch, *wrong;
    CK(cudaMalloc(&buf, N * sizeof(int)));
    CK(cudaMalloc(&scratch, N * sizeof(int)));
    CK(cudaMalloc(&wrong, REPLAYS * sizeof(int)));
    CK(cudaMemset(buf, 0, N * sizeof(int)));
    CK(cudaMemset(scratch, 0, N * sizeof(int)));
    CK(cudaMemset(wrong, 0, REPLAYS * sizeof(int)));
    // load the kernels before the graph (a first launch under lazy loading
    // waits for the device)
    produce<<<1, 32, 0, main_stream>>>(nullptr, 0, 0, 0);
    tail<<<1, 32, 0, main_stream>>>(nullptr, 0);
    consume<<<1, 32, 0, side>>>(nullptr, 0, 0, nullptr);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());

    // The graph: produce (value 7, after 2 ms), the event record node, then tail.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(main_stream, cudaStreamCaptureModeGlobal));
    produce<<<16, 256, 0, main_stream>>>(buf, N, 7, ss_ms_to_ns(2)); // EXPECT-SITE missing-fence
    CK(cudaEventRecordWithFlags(ready, main_stream, cudaEventRecordExternal));
    tail<<<16, 256, 0, main_stream>>>(scratch, N);
    CK(cudaStreamEndCapture(main_stream, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    // one replay to start with: the event has a record from then on
    CK(cudaGraphLaunch(exec, main_stream));
    CK(cudaStreamSynchronize(main_stream));
    CK(cudaMemsetAsync(buf, 0, N * sizeof(int), main_stream));

    for (int r = 0; r < REPLAYS; r++) {
        if (WAIT_BEFORE_LAUNCH) CK(cudaStreamWaitEvent(side, ready, 0)); // the previous replay's record
        CK(cudaGraphLaunch(exec, main_stream));
        if (!WAIT_BEFORE_LAUNCH) CK(cudaStreamWaitEvent(side, ready, 0)); // this replay's record
        consume<<<16, 256, 0, side>>>(buf, N, 7, wrong + r); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        // the next replay rewrites buf: wait for this consumer first
        CK(cudaStreamSynchronize(side));
        // reset buf for the next replay, on the graph's stream
        CK(cudaMemsetAsync(buf, 0, N * sizeof(int), main_stream));
    }
    CK(cudaStreamSynchronize(main_stream));
    int w[REPLAYS], total = 0;
    CK(cudaMemcpy(w, wrong, sizeof w, cudaMemcpyDeviceToHost));
    for (int r = 0; r < REPLAYS; r++) total += w[r];
    fprintf(stderr, "%s: %d of %d elements read before the graph wrote them\n", PROGRAM_NAME, total, REPLAYS * N);
    printf("%s: done\n", PROGRAM_NAME);
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaFree(buf));
    CK(cudaFree(scratch));
    CK(cudaFree(wrong));
    CK(cudaEventDestroy(ready));
    CK(cudaStreamDestroy(main_stream));
    CK(cudaStreamDestroy(side));
    return 0;
}
