// NVCC-FLAGS: -lcuda
// Pathology: work handed to a green context's legacy default stream with no
// event, trusting the legacy barrier.  In the style of PyTorch's
// torch.cuda.green_contexts.GreenContext (2.9+), which partitions the SMs
// (cuDevSmResourceSplitByCount, cuGreenCtxCreate with CU_GREEN_CTX_DEFAULT_STREAM),
// makes the green context current (cuCtxFromGreenCtx + cuCtxPushCurrent) and
// runs work on its default stream, stream 0.
// Each round: a producer kernel on a blocking stream of the primary context
// fills `data` (spinning 5 ms first); the green context is pushed; the
// consumer, on stream 0 there, copies `data` into `out` (a tensor's copy_());
// an event recorded on stream 0 orders the copy of `out` back on the
// producer's stream after the pop.
// The bug: within one context a kernel on the legacy stream waits for the
// blocking streams' earlier work, but each context, a green one too, has a
// legacy stream of its own, which orders only that context's streams.
// Measured on the H200 (2026-11-29): the consumer ran while the producer still
// spun, and read the previous round's values.
// Expected: missing-fence, error, on the consumer's copy (the legacy stream
// of the green context against the producer's blocking stream); never
// relies-on-legacy-sync (no legacy barrier orders them).  The fixed twin
// (FENCE_WITH_EVENT) waits for an event recorded after the producer, as
// GreenContext.set_context does.
#include "ss_test.cuh"
#include <cuda.h>

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "green_context_legacy"
#endif
#define N (1 << 20)
#define ROUNDS 4

__global__ void produce(int *data, int n, int value, unsigned long long spin_ns)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        data[i] = value + (i & 7);
}

int main(void)
{
    CK(cudaSetDevice(0));
    CK(cudaFree(0));   // the primary context, current
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));
    // a green context of a quarter of the SMs (a multiple of 8, as the split needs)
    CUdevResource sms, part, rest;
    CKD(cuDeviceGetDevResource(dev, &sms, CU_DEV_RESOURCE_TYPE_SM));
    unsigned int groups = 1, want = (sms.sm.smCount / 4) & ~7u;
    CKD(cuDevSmResourceSplitByCount(&part, &groups, &sms, &rest, 0, want ? want : 8));
    CUdevResourceDesc desc;
    CKD(cuDevResourceGenerateDesc(&desc, &part, 1));
    CUgreenCtx green;
    CKD(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CUcontext green_ctx;
    CKD(cuCtxFromGreenCtx(&green_ctx, green));
    printf(PROGRAM_NAME ": green context of %u of %u SMs\n", part.sm.smCount, sms.sm.smCount);

    cudaStream_t producer;
    CK(cudaStreamCreate(&producer));
    int *data, *out, *host;
    CK(cudaMalloc(&data, N * sizeof(int)));
    CK(cudaMalloc(&out, N * sizeof(int)));
    CK(cudaMallocHost(&host, N * sizeof(int)));
    cudaEvent_t produced, consumed;
    CK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
    // load the kernel before the rounds (lazy loading)
    produce<<<1, 32, 0, producer>>>(data, 0, 0, 0);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(producer));
    CUcontext popped;

    int wrong = 0;
    for (int round = 0; round < ROUNDS; round++) {
        produce<<<64, 256, 0, producer>>>(data, N, 100 * (round + 1), ss_ms_to_ns(5.0));
        CK_LAUNCH();
#ifdef FENCE_WITH_EVENT
        CK(cudaEventRecord(produced, producer));
#endif
        CKD(cuCtxPushCurrent(green_ctx));
#ifdef FENCE_WITH_EVENT
        CK(cudaStreamWaitEvent(0, produced, 0));   // what GreenContext.set_context does
#endif
        // the green context's legacy stream
        CK(cudaMemcpyAsync(out, data, N * sizeof(int), cudaMemcpyDeviceToDevice, 0)); // EXPECT-SITE missing-fence
        CK(cudaEventRecord(consumed, 0));
        CKD(cuCtxPopCurrent(&popped));
        CK(cudaStreamWaitEvent(producer, consumed, 0));
        CK(cudaMemcpyAsync(host, out, N * sizeof(int), cudaMemcpyDeviceToHost, producer));
        CK(cudaStreamSynchronize(producer));
        for (int i = 0; i < N; i++)
            if (host[i] != 100 * (round + 1) + (i & 7)) {
                wrong++;
                break;
            }
    }
    printf(PROGRAM_NAME ": %d of %d rounds read stale data\n", wrong, ROUNDS);
    CK(cudaFreeHost(host));
    CK(cudaFree(out));
    CK(cudaFree(data));
    CK(cudaStreamDestroy(producer));
    CKD(cuGreenCtxDestroy(green));
#ifdef FENCE_WITH_EVENT
    return wrong ? 1 : 0;
#else
    return 0;   // the race is the point: it shows as stale rounds above
#endif
}
