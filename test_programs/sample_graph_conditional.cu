// sample_graph_conditional: an iterative solver whose loop runs on the GPU,
// as NVIDIA's graphConditionalNodes sample and its "device-side while loop"
// blog post write it.  A CUDA graph holds one WHILE conditional node; its body
// (filled by cudaStreamBeginCaptureToGraph) relaxes x into xn, measures the
// change, sets the loop's condition with cudaGraphSetConditional, and copies
// xn back into x.  The host never asks how many iterations ran: the graph
// loops until the change is below a tolerance.
//
// Two solver streams, each with its own graph, buffers and pinned result; per
// round: upload the right-hand side, reset, launch the graph, copy the result
// back.  A third stream sums stream 0's solution (a "consumer", as a logging
// or metrics stream is), after an event recorded behind stream 0's graph.
// The host checks every solution against the fixed point and the sums.
//
// Why it is correct: each solver stream touches only its own buffers; the
// consumer waits for the event behind the graph that wrote what it reads, and
// stream 0 waits for an event behind the consumer's kernel before the next
// round resets x (syncsight's first run of this program found that missing
// write-after-read fence: the reset raced the previous round's sum); the host
// reads results only after synchronizing the stream that copied them.
// A body kernel runs once per iteration inside one cudaGraphLaunch: a tool
// that expects one record per graph node would see several.
// Variants built from this file:
//   sample_graph_conditional.cu        correct: no finding of any rule
//   sample_graph_conditional_racy.cu   the consumer without the event: it reads
//                                      x while the loop still rewrites it
#include <math.h>
#include "ss_test.cuh"

#ifndef CONSUMER_WAITS
#define CONSUMER_WAITS 1
#define PROGRAM_NAME "sample_graph_conditional"
#endif

#define N (1 << 16)
#define SOLVERS 2
#define ROUNDS 6
#define MAX_ITERS 200
#define TOL 1e-5f
#define BLOCK 256

// xn[i] = (x[i-1] + x[i+1]) / 4 + b[i]: a contraction (factor 1/2), so the
// loop converges to its fixed point from any start.
__global__ void relax(const float *x, float *xn, const float *b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float l = i > 0 ? x[i - 1] : 0.0f, r = i + 1 < n ? x[i + 1] : 0.0f;
        xn[i] = 0.25f * (l + r) + b[i];
    }
}

// One block: the largest change of this iteration; the loop goes on while it
// is above the tolerance and the iteration limit is not reached.
__global__ void check(cudaGraphConditionalHandle loop, const float *x, const float *xn, int n, int *iters,
                      float *change)
{
    __shared__ float worst[BLOCK];
    float w = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        w = fmaxf(w, fabsf(xn[i] - x[i]));
    worst[threadIdx.x] = w;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            worst[threadIdx.x] = fmaxf(worst[threadIdx.x], worst[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int k = ++*iters;
        *change = worst[0];
        cudaGraphSetConditional(loop, worst[0] > TOL && k < MAX_ITERS);
    }
}

__global__ void copy_back(const float *xn, float *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = xn[i];
}

__global__ void sum_kernel(const float *x, int n, float *out)
{
    __shared__ float part[BLOCK];
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += x[i];
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

struct solver {
    cudaStream_t stream;
    float *x, *xn, *b, *change;
    int *iters;
    float *host_b, *host_x;
    int *host_iters;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

// The graph: one WHILE node, its body captured from `capture`.
static void build_graph(solver *s, cudaStream_t capture)
{
    CK(cudaGraphCreate(&s->graph, 0));
    cudaGraphConditionalHandle loop;
    CK(cudaGraphConditionalHandleCreate(&loop, s->graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams params = {};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = loop;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t node;
    CK(cudaGraphAddNode(&node, s->graph, nullptr, nullptr, 0, &params));
    cudaGraph_t body = params.conditional.phGraph_out[0];
    CK(cudaStreamBeginCaptureToGraph(capture, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
    relax<<<N / BLOCK, BLOCK, 0, capture>>>(s->x, s->xn, s->b, N);
    check<<<1, BLOCK, 0, capture>>>(loop, s->x, s->xn, N, s->iters, s->change);
    copy_back<<<N / BLOCK, BLOCK, 0, capture>>>(s->xn, s->x, N);
    CK(cudaStreamEndCapture(capture, nullptr));
    CK(cudaGraphInstantiate(&s->exec, s->graph, 0));
}

// Largest |x - f(x)| over the solution: small at the fixed point.
static float residual(const float *x, const float *b)
{
    float worst = 0.0f;
    for (int i = 0; i < N; i++) {
        float l = i > 0 ? x[i - 1] : 0.0f, r = i + 1 < N ? x[i + 1] : 0.0f;
        worst = fmaxf(worst, fabsf(0.25f * (l + r) + b[i] - x[i]));
    }
    return worst;
}

int main(void)
{
    ss_init_device();
    solver sv[SOLVERS];
    cudaStream_t capture, consumer;
    CK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    cudaEvent_t solved, consumed;
    CK(cudaEventCreateWithFlags(&solved, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
    float *sum_dev, *sum_host;
    CK(cudaMalloc(&sum_dev, ROUNDS * sizeof(float)));
    CK(cudaMallocHost(&sum_host, ROUNDS * sizeof(float)));
    for (int p = 0; p < SOLVERS; p++) {
        solver *s = &sv[p];
        CK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
        CK(cudaMalloc(&s->x, N * sizeof(float)));
        CK(cudaMalloc(&s->xn, N * sizeof(float)));
        CK(cudaMalloc(&s->b, N * sizeof(float)));
        CK(cudaMalloc(&s->change, sizeof(float)));
        CK(cudaMalloc(&s->iters, sizeof(int)));
        CK(cudaMallocHost(&s->host_b, N * sizeof(float)));
        CK(cudaMallocHost(&s->host_x, N * sizeof(float)));
        CK(cudaMallocHost(&s->host_iters, sizeof(int)));
        build_graph(s, capture);
    }

    int bad = 0;
    float expect_sum[ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
        for (int p = 0; p < SOLVERS; p++) {
            solver *s = &sv[p];
            for (int i = 0; i < N; i++)
                s->host_b[i] = 0.001f * (float)((i * (p + 3) + round * 17) % 1000);
            CK(cudaMemcpyAsync(s->b, s->host_b, N * sizeof(float), cudaMemcpyHostToDevice, s->stream));
            if (p == 0 && round > 0)   // the previous round's sum read x: reset it after that
                CK(cudaStreamWaitEvent(s->stream, consumed, 0));
            CK(cudaMemsetAsync(s->x, 0, N * sizeof(float), s->stream));
            CK(cudaMemsetAsync(s->iters, 0, sizeof(int), s->stream));
            CK(cudaGraphLaunch(s->exec, s->stream)); // EXPECT-SITE missing-fence
            if (p == 0) {
#if CONSUMER_WAITS
                CK(cudaEventRecord(solved, s->stream));
                CK(cudaStreamWaitEvent(consumer, solved, 0));
#endif
                sum_kernel<<<1, BLOCK, 0, consumer>>>(s->x, N, sum_dev + round); // EXPECT-SITE missing-fence
                CK_LAUNCH();
                CK(cudaEventRecord(consumed, consumer));
            }
            CK(cudaMemcpyAsync(s->host_x, s->x, N * sizeof(float), cudaMemcpyDeviceToHost, s->stream));
            CK(cudaMemcpyAsync(s->host_iters, s->iters, sizeof(int), cudaMemcpyDeviceToHost, s->stream));
        }
        for (int p = 0; p < SOLVERS; p++) {
            solver *s = &sv[p];
            CK(cudaStreamSynchronize(s->stream));
            float r = residual(s->host_x, s->host_b);
            if (r > 1e-4f || *s->host_iters >= MAX_ITERS || *s->host_iters < 2)
                bad++;
            if (p == 0) {
                double t = 0;
                for (int i = 0; i < N; i++)
                    t += s->host_x[i];
                expect_sum[round] = (float)t;
            }
            if (round == 0)
                printf("solver %d: %d iterations, residual %.2e\n", p, *s->host_iters, r);
        }
    }
    CK(cudaMemcpyAsync(sum_host, sum_dev, ROUNDS * sizeof(float), cudaMemcpyDeviceToHost, consumer));
    CK(cudaStreamSynchronize(consumer));
    int sums_off = 0;
    for (int round = 0; round < ROUNDS; round++)
        sums_off += fabsf(sum_host[round] - expect_sum[round]) > 1e-3f * fabsf(expect_sum[round]) + 1e-2f;
    printf("%s: %d solves, %s; consumer sums %s\n", PROGRAM_NAME, ROUNDS * SOLVERS, bad ? "WRONG" : "converged",
           sums_off ? "differ (read before the solve ended)" : "match");

    for (int p = 0; p < SOLVERS; p++) {
        solver *s = &sv[p];
        CK(cudaGraphExecDestroy(s->exec));
        CK(cudaGraphDestroy(s->graph));
        CK(cudaFree(s->x));
        CK(cudaFree(s->xn));
        CK(cudaFree(s->b));
        CK(cudaFree(s->change));
        CK(cudaFree(s->iters));
        CK(cudaFreeHost(s->host_b));
        CK(cudaFreeHost(s->host_x));
        CK(cudaFreeHost(s->host_iters));
        CK(cudaStreamDestroy(s->stream));
    }
    CK(cudaFree(sum_dev));
    CK(cudaFreeHost(sum_host));
    CK(cudaEventDestroy(solved));
    CK(cudaEventDestroy(consumed));
    CK(cudaStreamDestroy(capture));
    CK(cudaStreamDestroy(consumer));
    return bad != 0 || (CONSUMER_WAITS && sums_off != 0);
}
