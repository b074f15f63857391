// pageable-async-copy through CUDA graphs: a graph whose last node copies
// device memory into PAGEABLE host memory (malloc) makes every cudaGraphLaunch
// block the host until the whole graph has run (the driver cannot DMA into
// pageable memory asynchronously), so launches never overlap the host.
// Two graphs: one recorded by stream capture (cudaMemcpyAsync inside
// cudaStreamBeginCapture/EndCapture; the captured call itself copies nothing),
// one built by hand (cudaGraphAddKernelNode + cudaGraphAddMemcpyNode1D); each
// is launched 20 times with a ~1 ms kernel node.
// Fixed twin: graph_pageable_fixed.cu (destinations from cudaMallocHost).
#include "ss_test.cuh"
#include <string.h>

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "graph_pageable"
#endif
#ifndef PINNED_DESTINATION
#define PINNED_DESTINATION 0
#endif

#define LAUNCHES 20
#define NINTS (64 * 1024) // 256 KiB per copy

__global__ void fill(int *data, int n, int value, unsigned long long spin_ns)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        data[i] = value;
}

static int *host_buffer(void)
{
    int *p;
#if PINNED_DESTINATION
    CK(cudaMallocHost(&p, NINTS * sizeof(int)));
#else
    p = (int *)malloc(NINTS * sizeof(int)); // pageable
    if (p == NULL)
        exit(1);
#endif
    memset(p, 0, NINTS * sizeof(int));
    return p;
}

static void free_host_buffer(int *p)
{
#if PINNED_DESTINATION
    CK(cudaFreeHost(p));
#else
    free(p);
#endif
}

static int count_value(const int *p, int value)
{
    int n = 0;
    for (int i = 0; i < NINTS; i++)
        n += p[i] == value;
    return n;
}

int main(void)
{
    ss_init_device();
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int *dev_captured, *dev_built;
    CK(cudaMalloc(&dev_captured, NINTS * sizeof(int)));
    CK(cudaMalloc(&dev_built, NINTS * sizeof(int)));
    int *host_captured = host_buffer();
    int *host_built = host_buffer();
    const unsigned long long spin = ss_ms_to_ns(1);

    // Graph 1: stream capture.
    cudaGraph_t captured;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    fill<<<4, 256, 0, stream>>>(dev_captured, NINTS, 7, spin);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(host_captured, dev_captured, NINTS * sizeof(int), cudaMemcpyDeviceToHost, stream)); // EXPECT-NOSITE pageable-async-copy
    CK(cudaStreamEndCapture(stream, &captured));

    // Graph 2: built node by node.
    cudaGraph_t built;
    CK(cudaGraphCreate(&built, 0));
    int n = NINTS, value = 9;
    unsigned long long spin_arg = spin;
    void *args[] = { &dev_built, &n, &value, &spin_arg };
    cudaKernelNodeParams kp = {};
    kp.func = (void *)fill;
    kp.gridDim = dim3(4);
    kp.blockDim = dim3(256);
    kp.sharedMemBytes = 0;
    kp.kernelParams = args;
    cudaGraphNode_t kernel_node, copy_node;
    CK(cudaGraphAddKernelNode(&kernel_node, built, NULL, 0, &kp));
    CK(cudaGraphAddMemcpyNode1D(&copy_node, built, &kernel_node, 1, host_built, dev_built, NINTS * sizeof(int),
                                cudaMemcpyDeviceToHost));

    cudaGraphExec_t captured_exec, built_exec;
    CK(cudaGraphInstantiate(&captured_exec, captured, 0));
    CK(cudaGraphInstantiate(&built_exec, built, 0));

    for (int i = 0; i < LAUNCHES; i++)
        CK(cudaGraphLaunch(captured_exec, stream)); // EXPECT-SITE pageable-async-copy
    for (int i = 0; i < LAUNCHES; i++)
        CK(cudaGraphLaunch(built_exec, stream)); // EXPECT-SITE pageable-async-copy
    CK(cudaStreamSynchronize(stream));

    printf("%s: captured graph copied %d of %d, built graph copied %d of %d\n", PROGRAM_NAME,
           count_value(host_captured, 7), NINTS, count_value(host_built, 9), NINTS);
    CK(cudaGraphExecDestroy(captured_exec));
    CK(cudaGraphExecDestroy(built_exec));
    CK(cudaGraphDestroy(captured));
    CK(cudaGraphDestroy(built));
    free_host_buffer(host_captured);
    free_host_buffer(host_built);
    CK(cudaFree(dev_captured));
    CK(cudaFree(dev_built));
    CK(cudaStreamDestroy(stream));
    return 0;
}
