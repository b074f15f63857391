// NVCC-FLAGS: -lcuda
// In the style of flashinfer's green_ctx.split_device_green_ctx and SGLang's
// green-context streams (prefill and decode kernels on disjoint SMs): the
// device's SMs split into two green contexts (cuDevSmResourceSplitByCount,
// cuGreenCtxCreate with CU_GREEN_CTX_DEFAULT_STREAM), a stream of each
// (cuGreenCtxStreamCreate, which must be non-blocking), and the program's
// kernels launched on them through the runtime from the primary context.
// Four rounds:
//   1. pinned H2D of the input on the main stream (a blocking stream of the
//      primary context), an event; both green streams wait for it, run their
//      kernel, record an event; the main stream waits for both and combines;
//      D2H on the main stream, cudaStreamSynchronize(main), a host check;
//   2. each green stream runs a kernel and copies its own result D2H into
//      pinned memory; then cudaDeviceSynchronize() from the primary context,
//      and the host reads both results.  cudaDeviceSynchronize in the
//      primary context waits for its green contexts' work too (measured on
//      the H200, 2026-11-29: 30 ms kernels on a green context's stream and on
//      its legacy stream were both waited for).
// Why it is correct: every cross-stream use is ordered by an event, and the
// host reads after a synchronization that waited for the work it reads.
// Expected: nothing to report.
#include "ss_test.cuh"
#include <cuda.h>

#define N (1 << 20)
#define ROUNDS 4

__global__ void scale(const int *in, int *out, int n, int factor, unsigned long long spin_ns)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[i] * factor;
}

__global__ void combine(const int *a, const int *b, int *out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = a[i] + b[i];
}

int main(void)
{
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));
    CUdevResource sms, parts[2], rest;
    CKD(cuDeviceGetDevResource(dev, &sms, CU_DEV_RESOURCE_TYPE_SM));
    unsigned int groups = 2, each = (sms.sm.smCount / 3) & ~7u;
    CKD(cuDevSmResourceSplitByCount(parts, &groups, &sms, &rest, 0, each ? each : 8));
    if (groups < 2) {
        fprintf(stderr, "sample_green_contexts: could not split the SMs in two\n");
        return 1;
    }
    CUgreenCtx green[2];
    cudaStream_t gs[2];
    for (int g = 0; g < 2; g++) {
        CUdevResourceDesc desc;
        CKD(cuDevResourceGenerateDesc(&desc, &parts[g], 1));
        CKD(cuGreenCtxCreate(&green[g], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CUstream s;
        CKD(cuGreenCtxStreamCreate(&s, green[g], CU_STREAM_NON_BLOCKING, 0));
        gs[g] = (cudaStream_t)s;
    }
    printf("sample_green_contexts: two green contexts of %u SMs (of %u)\n", parts[0].sm.smCount, sms.sm.smCount);

    cudaStream_t main_s;
    CK(cudaStreamCreate(&main_s));
    int *in, *part_out[2], *sum, *h_in, *h_out, *h_part[2];
    CK(cudaMalloc(&in, N * sizeof(int)));
    CK(cudaMalloc(&sum, N * sizeof(int)));
    CK(cudaMallocHost(&h_in, N * sizeof(int)));
    CK(cudaMallocHost(&h_out, N * sizeof(int)));
    for (int g = 0; g < 2; g++) {
        CK(cudaMalloc(&part_out[g], N * sizeof(int)));
        CK(cudaMallocHost(&h_part[g], N * sizeof(int)));
    }
    cudaEvent_t input_ready, done[2];
    CK(cudaEventCreateWithFlags(&input_ready, cudaEventDisableTiming));
    for (int g = 0; g < 2; g++) CK(cudaEventCreateWithFlags(&done[g], cudaEventDisableTiming));

    int wrong = 0;
    for (int round = 0; round < ROUNDS; round++) {
        // 1. fork to the green streams and join back, with events
        for (int i = 0; i < N; i++) h_in[i] = round + (i & 15);
        CK(cudaMemcpyAsync(in, h_in, N * sizeof(int), cudaMemcpyHostToDevice, main_s));
        CK(cudaEventRecord(input_ready, main_s));
        for (int g = 0; g < 2; g++) {
            CK(cudaStreamWaitEvent(gs[g], input_ready, 0));
            scale<<<64, 256, 0, gs[g]>>>(in, part_out[g], N, g + 2, ss_ms_to_ns(2.0));
            CK_LAUNCH();
            CK(cudaEventRecord(done[g], gs[g]));
            CK(cudaStreamWaitEvent(main_s, done[g], 0));
        }
        combine<<<64, 256, 0, main_s>>>(part_out[0], part_out[1], sum, N);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h_out, sum, N * sizeof(int), cudaMemcpyDeviceToHost, main_s));
        CK(cudaStreamSynchronize(main_s));
        for (int i = 0; i < N; i++)
            if (h_out[i] != 5 * (round + (i & 15))) { wrong++; break; }
        // 2. each green stream copies its own result out; the device sync waits for both
        for (int g = 0; g < 2; g++) {
            scale<<<64, 256, 0, gs[g]>>>(in, part_out[g], N, 10 * (g + 1), ss_ms_to_ns(2.0));
            CK_LAUNCH();
            CK(cudaMemcpyAsync(h_part[g], part_out[g], N * sizeof(int), cudaMemcpyDeviceToHost, gs[g]));
        }
        CK(cudaDeviceSynchronize());
        for (int g = 0; g < 2; g++)
            for (int i = 0; i < N; i++)
                if (h_part[g][i] != 10 * (g + 1) * (round + (i & 15))) { wrong++; break; }
    }
    printf("sample_green_contexts: %d wrong checks\n", wrong);
    for (int g = 0; g < 2; g++) {
        CK(cudaStreamDestroy(gs[g]));
        CK(cudaFree(part_out[g]));
        CK(cudaFreeHost(h_part[g]));
        CKD(cuGreenCtxDestroy(green[g]));
    }
    CK(cudaFree(in));
    CK(cudaFree(sum));
    CK(cudaFreeHost(h_in));
    CK(cudaFreeHost(h_out));
    CK(cudaStreamDestroy(main_s));
    return wrong ? 1 : 0;
}
