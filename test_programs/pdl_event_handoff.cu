// pdl_event_handoff: programmatic dependent launch as the CUDA programming
// guide shows it, on Hopper.  Each step, a producer kernel on `compute`
// writes x, then triggers (cudaTriggerProgrammaticLaunchCompletion); it is
// launched with cudaLaunchKernelEx and a cudaLaunchAttributeProgrammaticEvent,
// so the event fires once every block has triggered.  `consume` waits on that
// event (cudaStreamWaitEvent) and a kernel there reads x; a same-stream
// consumer is launched with programmatic stream serialization
// (cudaGridDependencySynchronize in the kernel).  The event is recorded by
// the launch, not by cudaEventRecord: a tool that does not read the launch
// attributes sees a wait on an unrecorded event and an unordered reader.
// Variants built from this file:
//   pdl_event_handoff.cu        programmatic event: ordered, the program checks
//   pdl_event_handoff_racy.cu   a launch-completion event
//                               (cudaLaunchAttributeLaunchCompletionEvent), as
//                               if "launch completion" meant the kernel's end:
//                               it fires once the producer's blocks have
//                               started, and the reader races with its writes
// NVCC-ARCH: -arch=sm_90
#include "ss_test.cuh"

#ifndef PDL_LAUNCH_COMPLETION
#define PDL_LAUNCH_COMPLETION 0
#define PROGRAM_NAME "pdl_event_handoff"
#endif

#define N (1 << 20)
#define STEPS 20

// x[i] = i + step, after a spin: a reader that does not wait sees the old step
__global__ void produce(float *x, int n, int step, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = (float)(i + step);
    __threadfence();
    __syncthreads();
    cudaTriggerProgrammaticLaunchCompletion();
}

// out[i] = x[i] * 2 (same-stream dependent: waits for the primary's trigger)
__global__ void dependent(const float *x, float *out, int n)
{
    cudaGridDependencySynchronize();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = x[i] * 2.0f;
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
    cudaStream_t compute, side;
    CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t produced, consumed;
    CK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));   // required for launch-attribute events
    CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
    float *x, *y, *z;
    CK(cudaMalloc(&x, N * sizeof(float)));
    CK(cudaMalloc(&y, N * sizeof(float)));
    CK(cudaMalloc(&z, N * sizeof(float)));
    CK(cudaMemsetAsync(x, 0, N * sizeof(float), compute));
    CK(cudaStreamSynchronize(compute));
    const int blocks = 132, threads = 256;
    int wrong_steps = 0;
    float *host_z;
    CK(cudaMallocHost(&host_z, 4 * sizeof(float)));

    for (int step = 1; step <= STEPS; step++) {
        // the producer, recording `produced` through its launch attribute
        cudaLaunchAttribute pattr[1];
#if PDL_LAUNCH_COMPLETION
        pattr[0].id = cudaLaunchAttributeLaunchCompletionEvent;
        pattr[0].val.launchCompletionEvent.event = produced;
        pattr[0].val.launchCompletionEvent.flags = 0;
#else
        pattr[0].id = cudaLaunchAttributeProgrammaticEvent;
        pattr[0].val.programmaticEvent.event = produced;
        pattr[0].val.programmaticEvent.flags = 0;
        pattr[0].val.programmaticEvent.triggerAtBlockStart = 0;
#endif
        cudaLaunchConfig_t pcfg = {};
        pcfg.gridDim = blocks;
        pcfg.blockDim = threads;
        pcfg.stream = compute;
        pcfg.attrs = pattr;
        pcfg.numAttrs = 1;
        CK(cudaLaunchKernelEx(&pcfg, produce, x, (int)N, step, ss_ms_to_ns(0.5)));

        // a same-stream dependent, overlapping the producer's tail
        cudaLaunchAttribute dattr[1];
        dattr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        dattr[0].val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t dcfg = {};
        dcfg.gridDim = blocks;
        dcfg.blockDim = threads;
        dcfg.stream = compute;
        dcfg.attrs = dattr;
        dcfg.numAttrs = 1;
        CK(cudaLaunchKernelEx(&dcfg, dependent, (const float *)x, y, (int)N));

        // the other stream waits for the producer's event, then reads x
        CK(cudaStreamWaitEvent(side, produced, 0));
        consume<<<blocks, threads, 0, side>>>(x, z, N); // EXPECT-SITE missing-fence
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
    printf("%s: %d steps, %s, %d read a stale step, %s\n", PROGRAM_NAME, STEPS,
           PDL_LAUNCH_COMPLETION ? "launch-completion event" : "programmatic event", wrong_steps,
           wrong_steps ? "raced" : "ok");
    CK(cudaFreeHost(host_z));
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(z));
    CK(cudaEventDestroy(produced));
    CK(cudaEventDestroy(consumed));
    CK(cudaStreamDestroy(compute));
    CK(cudaStreamDestroy(side));
    // the programmatic event orders the reader: its reads must be exact
    return !PDL_LAUNCH_COMPLETION && wrong_steps != 0;
}
