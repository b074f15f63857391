// coop_handoff: a cooperative kernel (cudaLaunchCooperativeKernel, a
// grid-wide cooperative_groups sync between its two phases, as the CUDA
// samples' reductionMultiBlockCG launches it) produces x on `compute`; a
// kernel on `side` reads it after cudaStreamWaitEvent on an event recorded
// after the producer.  The launch passes its arguments as an array of
// pointers (void **args), not as a kernel call: a tool that reads only
// <<<>>> launches sees no pointer it writes.
// Variants built from this file:
//   coop_handoff.cu        event recorded after the producer and waited for: ordered
//   coop_handoff_racy.cu   no event: the reader on `side` races with the producer
#include <cooperative_groups.h>
#include "ss_test.cuh"

namespace cg = cooperative_groups;

#ifndef COOP_RACY
#define COOP_RACY 0
#define PROGRAM_NAME "coop_handoff"
#endif

#define N (1 << 20)
#define STEPS 10

// phase 1: x[i] = i; grid sync; phase 2: x[i] += x[n-1-i] - (n-1) + step
// (= step + i + ... a value a reader can check: x[i] = i + step after both)
__global__ void produce(float *x, int n, int step, unsigned long long spin_ns)
{
    cg::grid_group grid = cg::this_grid();
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        x[i] = (float)i;
    grid.sync();
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        x[i] = x[i] + (float)step;
}

// z[i] = x[i] - i: the step, read on the other stream
__global__ void consume(const float *x, float *z, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        z[i] = x[i] - (float)i;
}

int main(void)
{
    ss_init_device();
    int dev = 0, coop = 0, sms = 0, per_sm = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (!coop) {
        printf("%s: no cooperative launch on this device\n", PROGRAM_NAME);
        return 0;
    }
    const int threads = 256;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, produce, threads, 0));
    const int blocks = sms * (per_sm < 1 ? 1 : per_sm);   // every block resident: grid.sync needs it
    cudaStream_t compute, side;
    CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t produced, consumed;
    CK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
    float *x, *z, *host_z;
    CK(cudaMalloc(&x, N * sizeof(float)));
    CK(cudaMalloc(&z, N * sizeof(float)));
    CK(cudaMallocHost(&host_z, 4 * sizeof(float)));
    CK(cudaMemsetAsync(x, 0, N * sizeof(float), compute));
    CK(cudaStreamSynchronize(compute));
    int wrong_steps = 0;
    for (int step = 1; step <= STEPS; step++) {
        int n = N;
        unsigned long long spin = ss_ms_to_ns(0.5);
        void *args[] = { &x, &n, &step, &spin };
        CK(cudaLaunchCooperativeKernel((const void *)produce, blocks, threads, args, 0, compute));
#if !COOP_RACY
        CK(cudaEventRecord(produced, compute));
        CK(cudaStreamWaitEvent(side, produced, 0));
#endif
        consume<<<132, threads, 0, side>>>(x, z, N); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        CK(cudaMemcpyAsync(host_z, z + 1000, 4 * sizeof(float), cudaMemcpyDeviceToHost, side));
        // the next step's producer rewrites x only once it has been read
        CK(cudaEventRecord(consumed, side));
        CK(cudaStreamWaitEvent(compute, consumed, 0));
        CK(cudaStreamSynchronize(side));
        for (int k = 0; k < 4; k++)
            if (host_z[k] != (float)step) {
                wrong_steps++;
                break;
            }
    }
    CK(cudaStreamSynchronize(compute));
    printf("%s: %d steps of %d blocks, %d read a stale step, %s\n", PROGRAM_NAME, STEPS, blocks, wrong_steps,
           wrong_steps ? "raced" : "ok");
    CK(cudaFreeHost(host_z));
    CK(cudaFree(x));
    CK(cudaFree(z));
    CK(cudaEventDestroy(produced));
    CK(cudaEventDestroy(consumed));
    CK(cudaStreamDestroy(compute));
    CK(cudaStreamDestroy(side));
    return !COOP_RACY && wrong_steps != 0;
}
