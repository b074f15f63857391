// capture_basic: calls every kind of CUDA runtime entry point the shim
// records, once or a few times each, with nothing pathological in between
// (every phase ends idle), so the analyzer must report nothing.  The GPU suite
// builds it three ways -- shared cudart, static cudart, per-thread default
// stream -- and compares the API calls recorded for each build: all three must
// be caught the same way (interposer or CUPTI callbacks).
#include "ss_test.cuh"
#include <string.h>

__device__ int device_symbol[16];

__global__ void add_one(int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += 1;
}

static void CUDART_CB stream_callback(cudaStream_t, cudaError_t status, void *user_data)
{
    if (status == cudaSuccess)
        ++*(int *)user_data;
}

static void CUDART_CB host_function(void *user_data) { ++*(int *)user_data; }

int main(void)
{
    ss_init_device();
    const int n = 256;
    const size_t bytes = n * sizeof(int);
    int host_counter = 0;

    // ---- streams of every creation variant
    int least_priority, greatest_priority;
    CK(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority));
    cudaStream_t plain, nonblocking, high_priority;
    CK(cudaStreamCreate(&plain));
    CK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithPriority(&high_priority, cudaStreamNonBlocking, greatest_priority));

    // ---- allocations of every kind
    int *device_a, *device_b, *managed, *pooled, *host_pinned, *host_alloc;
    CK(cudaMalloc(&device_a, bytes));
    CK(cudaMalloc(&device_b, bytes));
    CK(cudaMallocManaged(&managed, bytes));
    // The C entry point, not the C++ template in cuda_runtime.h (which calls
    // cudaHostAlloc): the test wants a cudaMallocHost record.
    CK(cudaMallocHost((void **)&host_pinned, bytes));
    CK(cudaHostAlloc(&host_alloc, bytes, cudaHostAllocDefault));
    int *host_registered = (int *)malloc(bytes);
    int *host_pageable = (int *)malloc(bytes);
    if (host_registered == NULL || host_pageable == NULL)
        return 1;
    CK(cudaHostRegister(host_registered, bytes, cudaHostRegisterDefault));
    void *pitched;
    size_t pitch;
    CK(cudaMallocPitch(&pitched, &pitch, 64, 4));
    cudaPitchedPtr volume;
    CK(cudaMalloc3D(&volume, make_cudaExtent(64, 4, 2)));
    CK(cudaMallocAsync((void **)&pooled, bytes, nonblocking));
    CK(cudaStreamSynchronize(nonblocking));

    // Each phase issues its legacy-stream (synchronous API) calls first, waits
    // for them, then its stream-ordered calls: mixing the two on one buffer
    // would itself be an unordered access (D2D and staged H2D "synchronous"
    // copies may return before the device has finished them).
    cudaExtent extent = make_cudaExtent(64, 4, 2);

    // ---- memsets
    CK(cudaMemset(device_a, 0, bytes));
    CK(cudaMemset2D(pitched, pitch, 0, 64, 4));
    CK(cudaMemset3D(volume, 0, extent));
    CK(cudaStreamSynchronize(0));
    CK(cudaMemsetAsync(device_b, 0, bytes, nonblocking));
    CK(cudaMemset2DAsync(pitched, pitch, 1, 64, 4, nonblocking));
    CK(cudaMemset3DAsync(volume, 2, extent, nonblocking));
    CK(cudaStreamSynchronize(nonblocking));

    // ---- copies
    for (int i = 0; i < n; i++)
        host_pageable[i] = i;
    cudaMemcpy3DParms copy3d = {};
    copy3d.srcPtr = volume;
    copy3d.dstPtr = volume;
    copy3d.extent = extent;
    copy3d.kind = cudaMemcpyDeviceToDevice;
    CK(cudaMemcpy(device_a, host_pageable, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy2D(pitched, pitch, host_pageable, 64, 64, 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy3D(&copy3d));
    CK(cudaMemcpyToSymbol(device_symbol, host_pageable, sizeof(int) * 16));
    CK(cudaMemcpyPeer(device_b, 0, device_a, 0, bytes));
    CK(cudaStreamSynchronize(0));
    memcpy(host_pinned, host_pageable, bytes);
    CK(cudaMemcpyAsync(device_b, host_pinned, bytes, cudaMemcpyHostToDevice, nonblocking));
    CK(cudaMemcpy2DAsync(host_pinned, 64, pitched, pitch, 64, 4, cudaMemcpyDeviceToHost, nonblocking));
    CK(cudaMemcpy3DAsync(&copy3d, nonblocking));
    CK(cudaMemcpyToSymbolAsync(device_symbol, host_pinned, sizeof(int) * 16, 0, cudaMemcpyHostToDevice, nonblocking));
    CK(cudaMemcpyFromSymbolAsync(host_pinned, device_symbol, sizeof(int) * 16, 0, cudaMemcpyDeviceToHost, nonblocking));
    CK(cudaMemcpyPeerAsync(managed, 0, device_a, 0, bytes, nonblocking));
    CK(cudaMemcpyAsync(host_registered, device_a, bytes, cudaMemcpyDeviceToHost, nonblocking));
    CK(cudaStreamSynchronize(nonblocking));
    CK(cudaMemcpyFromSymbol(host_pageable, device_symbol, sizeof(int) * 16));

    // ---- launches of every kind
    add_one<<<1, n, 0, nonblocking>>>(device_a, n);
    CK_LAUNCH();
    int count = n;
    void *args[] = {&device_a, &count};
    CK(cudaLaunchKernel((const void *)add_one, dim3(1), dim3(n), args, 0, nonblocking));
    CK(cudaLaunchCooperativeKernel((const void *)add_one, dim3(1), dim3(n), args, 0, nonblocking));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(1);
    config.blockDim = dim3(n);
    config.stream = nonblocking;
    CK(cudaLaunchKernelExC(&config, (const void *)add_one, args));
    add_one<<<1, n, 0, high_priority>>>(managed, n);
    CK_LAUNCH();
    // managed memory attached and prefetched in stream order (GPU work
    // CUPTI gives no activity record for: the calls are what is recorded)
    CK(cudaStreamAttachMemAsync(high_priority, managed, 0, cudaMemAttachGlobal));
    cudaMemLocation managed_home = { cudaMemLocationTypeDevice, 0 };
    CK(cudaGetDevice(&managed_home.id));
    CK(cudaMemPrefetchAsync(managed, bytes, managed_home, 0, high_priority));
    add_one<<<1, n, 0, plain>>>(device_b, n);
    CK_LAUNCH();

    // ---- events, cross-stream waits, host callbacks
    cudaEvent_t timing_start, timing_end, fence;
    CK(cudaEventCreate(&timing_start));
    CK(cudaEventCreateWithFlags(&timing_end, cudaEventDefault));
    CK(cudaEventCreateWithFlags(&fence, cudaEventDisableTiming));
    CK(cudaEventRecord(timing_start, nonblocking));
    ss_spin(nonblocking, 1);
    CK(cudaEventRecordWithFlags(timing_end, nonblocking, cudaEventRecordDefault));
    CK(cudaEventRecord(fence, nonblocking));
    CK(cudaStreamWaitEvent(high_priority, fence, 0));
    add_one<<<1, n, 0, high_priority>>>(device_a, n); // reads what `nonblocking` wrote: fenced
    CK_LAUNCH();
    CK(cudaStreamAddCallback(high_priority, stream_callback, &host_counter, 0));
    CK(cudaLaunchHostFunc(high_priority, host_function, &host_counter));
    CK(cudaEventSynchronize(timing_end));
    CK(cudaEventQuery(timing_end));
    float elapsed_ms;
    CK(cudaEventElapsedTime(&elapsed_ms, timing_start, timing_end));
    CK(cudaStreamSynchronize(high_priority));
    CK(cudaStreamSynchronize(plain));
    CK(cudaStreamQuery(high_priority));

    // ---- graph capture and launch (fork/join through events)
    cudaStream_t side;
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t fork_event, join_event;
    CK(cudaEventCreateWithFlags(&fork_event, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join_event, cudaEventDisableTiming));
    cudaGraph_t graph;
    cudaGraphExec_t graph_exec;
    CK(cudaStreamBeginCapture(nonblocking, cudaStreamCaptureModeGlobal));
    add_one<<<1, n, 0, nonblocking>>>(device_a, n);
    CK(cudaEventRecord(fork_event, nonblocking));
    CK(cudaStreamWaitEvent(side, fork_event, 0));
    add_one<<<1, n, 0, side>>>(device_b, n);
    CK(cudaEventRecord(join_event, side));
    CK(cudaStreamWaitEvent(nonblocking, join_event, 0));
    CK(cudaStreamEndCapture(nonblocking, &graph));
    CK(cudaGraphInstantiate(&graph_exec, graph, 0));
    CK(cudaGraphLaunch(graph_exec, nonblocking));
    CK(cudaGraphLaunch(graph_exec, nonblocking));
    CK(cudaStreamSynchronize(nonblocking));
    CK(cudaDeviceSynchronize());

    // ---- results (deterministic: printed identically with and without the shim)
    int result_a[n], result_b[n];
    CK(cudaMemcpy(result_a, device_a, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(result_b, device_b, bytes, cudaMemcpyDeviceToHost));
    printf("capture_basic: a[0]=%d a[%d]=%d b[0]=%d managed[0]=%d callbacks=%d symbol[15]=%d\n", result_a[0], n - 1,
           result_a[n - 1], result_b[0], managed[0], host_counter, host_pageable[15]);

    // ---- teardown of every kind
    CK(cudaGraphExecDestroy(graph_exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaEventDestroy(timing_start));
    CK(cudaEventDestroy(timing_end));
    CK(cudaEventDestroy(fence));
    CK(cudaEventDestroy(fork_event));
    CK(cudaEventDestroy(join_event));
    CK(cudaFreeAsync(pooled, nonblocking));
    CK(cudaStreamSynchronize(nonblocking));
    CK(cudaHostUnregister(host_registered));
    free(host_registered);
    free(host_pageable);
    CK(cudaFreeHost(host_pinned));
    CK(cudaFreeHost(host_alloc));
    CK(cudaFree(pitched));
    CK(cudaFree(volume.ptr));
    CK(cudaFree(managed));
    CK(cudaFree(device_a));
    CK(cudaFree(device_b));
    CK(cudaStreamDestroy(plain));
    CK(cudaStreamDestroy(nonblocking));
    CK(cudaStreamDestroy(high_priority));
    CK(cudaStreamDestroy(side));
    return 0;
}
