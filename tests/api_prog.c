/*
 * The program tests/test_api_interposer.sh runs under the shim, linked
 * against the fake libcudart.so.13 / libcuda.so.1 (api_fake_cudart.c,
 * api_fake_cuda.c).  It makes a known sequence of calls, checks that return
 * values and errno come back exactly as the fake library produced them, and
 * prints the addresses involved ("key value" lines) so that api_check_trace
 * can compare the trace with what really happened.  Exit status != 0 when a
 * call's result was altered by the shim.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>

extern unsigned char fake_device_mem[4096];
extern unsigned char fake_pinned_mem[4096];
extern unsigned char fake_managed_mem[4096];

/* Declared by cuda_runtime_api.h only under CUDA_API_PER_THREAD_DEFAULT_STREAM
 * and by crt/device_functions.h only for C++. */
extern cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                        cudaStream_t stream);
extern cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                      size_t sharedMem, cudaStream_t stream);

/* Stands for a kernel's host stub: any code address in the program. */
void fake_kernel_stub(void *a, int n, void *b);
void fake_kernel_stub(void *a, int n, void *b) { (void)a; (void)n; (void)b; }

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "api_prog: %s\n", what);
        failures++;
    }
}

int main(void)
{
    unsigned char pageable[256];
    cudaStream_t s = NULL;

    expect(cudaSetDevice(1) == cudaSuccess, "cudaSetDevice(1) failed");
    expect(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "stream create failed");
    printf("stream %llu\n", (unsigned long long)(uintptr_t)s);

    /* H2D from pageable memory: ok; then the failing one (count 13). */
    expect(cudaMemcpyAsync(fake_device_mem, pageable, 1024, cudaMemcpyHostToDevice, s) == cudaSuccess,
           "cudaMemcpyAsync did not return cudaSuccess");
    errno = 0;
    cudaError_t bad = cudaMemcpyAsync(fake_device_mem, pageable, 13, cudaMemcpyHostToDevice, s);
    int bad_errno = errno;
    expect(bad == cudaErrorInvalidValue, "cudaMemcpyAsync's error code was altered");
    expect(bad_errno == EDOM, "errno after cudaMemcpyAsync was altered");
    printf("pageable %llu\n", (unsigned long long)(uintptr_t)pageable);
    printf("device %llu\n", (unsigned long long)(uintptr_t)fake_device_mem);
    printf("pinned %llu\n", (unsigned long long)(uintptr_t)fake_pinned_mem);
    printf("managed %llu\n", (unsigned long long)(uintptr_t)fake_managed_mem);

    /* The per-thread-default-stream twin, D2H into pinned memory. */
    expect(cudaMemcpyAsync_ptsz(fake_pinned_mem, fake_device_mem, 64, cudaMemcpyDeviceToHost, 0) == cudaSuccess,
           "cudaMemcpyAsync_ptsz failed");

    /* A synchronous copy that blocks 20 ms (managed -> device). */
    expect(cudaMemcpy(fake_device_mem, fake_managed_mem, 100, cudaMemcpyDefault) == cudaSuccess,
           "cudaMemcpy failed");

    /* Not-ready is a status, passed through as it is. */
    expect(cudaStreamQuery(s) == cudaErrorNotReady, "cudaStreamQuery's cudaErrorNotReady was altered");

    /* Launch through a host stub: parameters (void *a, int n, void *b). */
    void *a = (void *)(uintptr_t)0x1111000;
    int n = 7;
    void *b = (void *)(uintptr_t)0x2222000;
    void *args[3] = { &a, &n, &b };
    expect(cudaLaunchKernel((const void *)fake_kernel_stub, (dim3){ 2, 3, 1 }, (dim3){ 32, 1, 1 }, args, 0, 0)
               == cudaSuccess, "cudaLaunchKernel failed");
    printf("stub %llu\n", (unsigned long long)(uintptr_t)fake_kernel_stub);

    /* A graph built node by node: the kernel node's parameters are recorded
     * as a launch's, the copy's and the 2D memset's ranges as slots; a NULL
     * parameter struct is cudart's error, passed through. */
    cudaGraphNode_t kn = NULL, cn = NULL, mn = NULL, no_node = NULL;
    struct cudaKernelNodeParams kp = { .func = (void *)fake_kernel_stub, .gridDim = { 1, 1, 1 },
                                       .blockDim = { 32, 1, 1 }, .kernelParams = args };
    expect(cudaGraphAddKernelNode(&kn, NULL, NULL, 0, &kp) == cudaSuccess && kn != NULL,
           "cudaGraphAddKernelNode failed");
    expect(cudaGraphAddMemcpyNode1D(&cn, NULL, &kn, 1, fake_device_mem, fake_pinned_mem, 256,
                                    cudaMemcpyHostToDevice) == cudaSuccess, "cudaGraphAddMemcpyNode1D failed");
    struct cudaMemsetParams mp = { .dst = fake_device_mem, .pitch = 512, .value = 0, .elementSize = 4,
                                   .width = 16, .height = 3 };
    expect(cudaGraphAddMemsetNode(&mn, NULL, &cn, 1, &mp) == cudaSuccess, "cudaGraphAddMemsetNode failed");
    expect(cudaGraphAddKernelNode(&no_node, NULL, NULL, 0, NULL) == cudaErrorInvalidValue,
           "cudaGraphAddKernelNode(NULL params): the error was altered");
    /* The same three through the generic cudaGraphAddNode (CUDA 12.2+): the
     * record reads each by its node type. */
    struct cudaGraphNodeParams gk = { .type = cudaGraphNodeTypeKernel };
    gk.kernel.func = (void *)fake_kernel_stub;
    gk.kernel.gridDim = (dim3){ 1, 1, 1 };
    gk.kernel.blockDim = (dim3){ 32, 1, 1 };
    gk.kernel.kernelParams = args;
    struct cudaGraphNodeParams gc = { .type = cudaGraphNodeTypeMemcpy };
    gc.memcpy.copyParams.srcPtr = (struct cudaPitchedPtr){ fake_pinned_mem, 256, 256, 1 };
    gc.memcpy.copyParams.dstPtr = (struct cudaPitchedPtr){ fake_device_mem, 256, 256, 1 };
    gc.memcpy.copyParams.extent = (struct cudaExtent){ 256, 1, 1 };
    gc.memcpy.copyParams.kind = cudaMemcpyHostToDevice;
    struct cudaGraphNodeParams gm = { .type = cudaGraphNodeTypeMemset };
    gm.memset.dst = fake_device_mem;
    gm.memset.pitch = 512;
    gm.memset.elementSize = 4;
    gm.memset.width = 16;
    gm.memset.height = 3;
    cudaGraphNode_t gn = NULL;
    expect(cudaGraphAddNode(&gn, NULL, NULL, NULL, 0, &gk) == cudaSuccess &&
           cudaGraphAddNode(&gn, NULL, NULL, NULL, 0, &gc) == cudaSuccess &&
           cudaGraphAddNode(&gn, NULL, NULL, NULL, 0, &gm) == cudaSuccess, "cudaGraphAddNode failed");

    /* The <<<>>> path with a cudaKernel_t of 40 pointer parameters. */
    uint64_t values[40];
    void *kargs[40];
    for (int i = 0; i < 40; i++) {
        values[i] = 0xA000 + (uint64_t)i;
        kargs[i] = &values[i];
    }
    void *kernel_handle = malloc(64);   /* a heap address, as a driver handle is */
    expect(__cudaLaunchKernel((cudaKernel_t)kernel_handle, (dim3){ 4, 1, 1 }, (dim3){ 128, 1, 1 }, kargs, 0, s)
               == cudaSuccess, "__cudaLaunchKernel failed");
    printf("kernel %llu\n", (unsigned long long)(uintptr_t)kernel_handle);

    /* A free that blocks 10 ms. */
    expect(cudaFree(fake_device_mem) == cudaSuccess, "cudaFree failed");

    free(kernel_handle);
    return failures == 0 ? 0 : 1;
}
