/*
 * The program tests/test_api_driver_fake.sh runs under the shim with the
 * fake libcupti (api_fake_cupti.c), linked against the fake libcudart.so.13
 * and libcuda.so.1.  It plays the CUDA driver: for each driver call a
 * program like Triton or CuPy would make it fires CUPTI's driver-API
 * callbacks (ENTER, then EXIT with the result and any out-parameter
 * written), through fake_cupti_api.  It also makes driver calls *inside*
 * runtime calls, as cudart does: inside a runtime call seen by the CUPTI
 * runtime callback, and inside an interposed cudaLaunchKernel (whose fake
 * cudart fires cuLaunchKernel).  Those must not be recorded as driver calls.
 *
 * Prints "key value" lines (addresses, correlation ids) for the checker.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

extern unsigned char fake_device_mem[4096];
extern unsigned char fake_pinned_mem[4096];
extern void fake_cudart_register_stub(const void *stub, uintptr_t func, int foreign);

typedef void (*fake_api_fn)(CUpti_CallbackDomain, CUpti_CallbackId, const char *, const void *, const void *, int,
                            uint32_t);
static fake_api_fn fake_api;
static uint32_t next_corr = 5000;

struct fake_s { void *p; uint64_t n; void *q; uint64_t m; };
void foreign_stub(int n, void *a, struct fake_s s, void *b);
void foreign_stub(int n, void *a, struct fake_s s, void *b) { (void)a; (void)n; (void)b; (void)s; }

/* ENTER and EXIT of one call; `out`/`value`: an out-parameter the call
 * writes between the two (what the driver does). Returns its corr. */
static uint32_t api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char *name, const void *params,
                         int ret, void *out, uint64_t value)
{
    uint32_t corr = ++next_corr;
    fake_api(domain, cbid, name, params, &ret, CUPTI_API_ENTER, corr);
    if (out != NULL)
        memcpy(out, &value, sizeof value);
    fake_api(domain, cbid, name, params, &ret, CUPTI_API_EXIT, corr);
    return corr;
}
#define DRV(cbid, params, ret) \
    api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##cbid, #cbid, (params), (ret), NULL, 0)

int main(void)
{
    fake_api = (fake_api_fn)dlsym(RTLD_DEFAULT, "fake_cupti_api");
    void (*set_context)(uint32_t) = (void (*)(uint32_t))dlsym(RTLD_DEFAULT, "fake_cupti_set_context");
    if (set_context == NULL) return 1;
    set_context(1);   /* the primary context, until the green one below */
    void *buf = NULL;
    /* an allocation through cudart (interposed): the address range that
     * struct words are filtered against */
    if (cudaMalloc(&buf, 256) != cudaSuccess || fake_api == NULL) {
        fprintf(stderr, "api_driver_prog: cudaMalloc failed or the fake libcupti is not loaded\n");
        return 1;
    }
    uint8_t *dev = fake_device_mem, *pinned = fake_pinned_mem;
    static uint8_t pageable[4096];
    CUstream s1 = (CUstream)(uintptr_t)0x5151000;
    CUevent ev = (CUevent)(uintptr_t)0x6161000;
    printf("buf %llu\ndev %llu\npinned %llu\npageable %llu\n", (unsigned long long)(uintptr_t)buf,
           (unsigned long long)(uintptr_t)dev, (unsigned long long)(uintptr_t)pinned,
           (unsigned long long)(uintptr_t)pageable);

    /* cuLaunchKernel of CUfunction 0xF00F, laid out (int n, void *a, S s,
     * void *b) by the fake driver: a at 8, s.p at 16, s.q at 32, b at 48 */
    int n = 7;
    void *a = (void *)(uintptr_t)0x1111000, *b = (void *)(uintptr_t)0x2222000;
    struct fake_s s = { (char *)buf + 16, 5, (char *)buf + 64, 0xFFFFFFFFFFFFFFF0ull };
    void *kp[4] = { &n, &a, &s, &b };
    cuLaunchKernel_params lk = { .f = (CUfunction)(uintptr_t)0xF00F, .gridDimX = 4, .gridDimY = 2, .gridDimZ = 1,
                                 .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1, .hStream = s1,
                                 .kernelParams = kp };
    printf("launch %u\n", DRV(cuLaunchKernel, &lk, CUDA_SUCCESS));

    /* cuLaunchKernelEx_ptsz with the packed `extra` buffer, stream in the config */
    char packed[56];
    memset(packed, 0, sizeof packed);
    memcpy(packed + 0, &n, sizeof n);
    memcpy(packed + 8, &a, sizeof a);
    memcpy(packed + 16, &s, sizeof s);
    memcpy(packed + 48, &b, sizeof b);
    size_t packed_size = sizeof packed;
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                      CU_LAUNCH_PARAM_END };
    /* with a programmatic event (PDL across streams): the launch records it */
    CUlaunchAttribute attrs[2];
    memset(attrs, 0, sizeof attrs);
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attrs[0].value.priority = 1;
    attrs[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
    attrs[1].value.programmaticEvent.event = (CUevent)(uintptr_t)0x7E7E000;
    CUlaunchConfig cfg = { .gridDimX = 3, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64, .blockDimY = 2,
                           .blockDimZ = 1, .hStream = s1, .attrs = attrs, .numAttrs = 2 };
    cuLaunchKernelEx_params lx = { .config = &cfg, .f = (CUfunction)(uintptr_t)0xF00F, .extra = extra };
    printf("launch_ex %u\n", DRV(cuLaunchKernelEx_ptsz, &lx, CUDA_SUCCESS));

    /* graphs built node by node (XLA's command buffers): a kernel node's
     * parameters read as cuLaunchKernel's, a memset node's 2D range */
    CUgraphNode node = NULL;
    CUDA_KERNEL_NODE_PARAMS knp = { .func = (CUfunction)(uintptr_t)0xF00F, .gridDimX = 1, .gridDimY = 1,
                                    .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1,
                                    .kernelParams = kp };
    cuGraphAddKernelNode_v2_params gk = { .phGraphNode = &node, .nodeParams = &knp };
    printf("kernel_node %u\n", DRV(cuGraphAddKernelNode_v2, &gk, CUDA_SUCCESS));
    CUDA_MEMSET_NODE_PARAMS msp = { .dst = (CUdeviceptr)(uintptr_t)dev, .pitch = 256, .elementSize = 2,
                                    .width = 10, .height = 4 };
    cuGraphAddMemsetNode_params gm = { .phGraphNode = &node, .memsetParams = &msp };
    printf("memset_node %u\n", DRV(cuGraphAddMemsetNode, &gm, CUDA_SUCCESS));

    /* copies: the direction from the name, the host end asked */
    cuMemcpyHtoDAsync_v2_params h2d = { .dstDevice = (CUdeviceptr)(uintptr_t)dev, .srcHost = pinned,
                                        .ByteCount = 1024, .hStream = s1 };
    printf("h2d_async %u\n", DRV(cuMemcpyHtoDAsync_v2, &h2d, CUDA_SUCCESS));
    cuMemcpyDtoH_v2_params d2h = { .dstHost = pageable, .srcDevice = (CUdeviceptr)(uintptr_t)dev, .ByteCount = 512 };
    printf("d2h %u\n", DRV(cuMemcpyDtoH_v2, &d2h, CUDA_SUCCESS));
    CUDA_MEMCPY2D c2 = { .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = (CUdeviceptr)(uintptr_t)dev,
                         .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = pinned, .WidthInBytes = 64, .Height = 8 };
    cuMemcpy2DAsync_v2_params m2 = { .pCopy = &c2, .hStream = s1 };
    printf("copy2d %u\n", DRV(cuMemcpy2DAsync_v2_ptsz, &m2, CUDA_SUCCESS));
    cuMemsetD32Async_params ms = { .dstDevice = (CUdeviceptr)(uintptr_t)dev, .ui = 0xABCD, .N = 100, .hStream = s1 };
    printf("memset %u\n", DRV(cuMemsetD32Async, &ms, CUDA_SUCCESS));

    /* events and streams */
    cuEventRecord_params er = { .hEvent = ev, .hStream = s1 };
    printf("record %u\n", DRV(cuEventRecord, &er, CUDA_SUCCESS));
    CUstream s2 = NULL;
    cuStreamCreate_params sc = { .phStream = &s2, .Flags = CU_STREAM_NON_BLOCKING };
    printf("create %u\n", api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, "cuStreamCreate",
                                   &sc, CUDA_SUCCESS, &s2, 0x7171000));
    printf("s2 %llu\n", (unsigned long long)(uintptr_t)s2);
    /* a green context made current (its calls run in context 3), a stream of
     * it (CU_STREAM_NON_BLOCKING is required), the primary context again */
    set_context(3);
    CUstream gs = NULL;
    cuGreenCtxStreamCreate_params gsc = { .phStream = &gs, .greenCtx = (CUgreenCtx)(uintptr_t)0x6A6A000,
                                          .flags = CU_STREAM_NON_BLOCKING, .priority = -2 };
    printf("green_create %u\n", api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGreenCtxStreamCreate,
                                         "cuGreenCtxStreamCreate", &gsc, CUDA_SUCCESS, &gs, 0x7272000));
    /* context-wide: all of the green context's work recorded in ev, then all its future work made to wait */
    cuGreenCtxRecordEvent_params gre = { .hCtx = (CUgreenCtx)(uintptr_t)0x6A6A000, .hEvent = ev };
    printf("green_record %u\n", DRV(cuGreenCtxRecordEvent, &gre, CUDA_SUCCESS));
    cuGreenCtxWaitEvent_params gwe = { .hCtx = (CUgreenCtx)(uintptr_t)0x6A6A000, .hEvent = ev };
    printf("green_wait %u\n", DRV(cuGreenCtxWaitEvent, &gwe, CUDA_SUCCESS));
    set_context(1);
    cuStreamWaitEvent_params we = { .hStream = s2, .hEvent = ev, .Flags = 0 };
    printf("wait %u\n", DRV(cuStreamWaitEvent_ptsz, &we, CUDA_SUCCESS));
    /* an event another process made (CUDA IPC, as torch.multiprocessing's
     * CUDA tensors): opened here, the handle written by the driver */
    CUevent ipc_ev = NULL;
    CUipcEventHandle ipc_handle;
    memset(&ipc_handle, 0x5a, sizeof ipc_handle);
    cuIpcOpenEventHandle_params io = { .phEvent = &ipc_ev, .handle = ipc_handle };
    printf("ipc_open %u\n", api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuIpcOpenEventHandle,
                                     "cuIpcOpenEventHandle", &io, CUDA_SUCCESS, &ipc_ev, 0x7E9E000));
    CUdeviceptr dp = 0;
    cuMemAlloc_v2_params al = { .dptr = &dp, .bytesize = 4096 };
    printf("alloc %u\n", api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2",
                                  &al, CUDA_SUCCESS, &dp, 0x8181000));
    /* a failed call: its result is recorded, its out-parameter not read */
    CUdeviceptr dp2 = 0x9999;
    cuMemAlloc_v2_params al2 = { .dptr = &dp2, .bytesize = 1ull << 50 };
    printf("alloc_failed %u\n", DRV(cuMemAlloc_v2, &al2, CUDA_ERROR_OUT_OF_MEMORY));
    /* virtual memory management: a mapping is an allocation, an unmap its free */
    cuMemMap_params mp = { .ptr = 0xA0000000ull, .size = 2u << 20, .offset = 0, .handle = 7, .flags = 0 };
    printf("map %u\n", DRV(cuMemMap, &mp, CUDA_SUCCESS));
    cuMemUnmap_params ump = { .ptr = 0xA0000000ull, .size = 2u << 20 };
    printf("unmap %u\n", DRV(cuMemUnmap, &ump, CUDA_SUCCESS));
    cuStreamSynchronize_params ss = { .hStream = s2 };
    printf("sync %u\n", DRV(cuStreamSynchronize_ptsz, &ss, CUDA_SUCCESS));
    printf("ctxsync %u\n", DRV(cuCtxSynchronize, NULL, CUDA_SUCCESS));

    /* A driver call made inside a runtime call seen by the CUPTI runtime
     * callback (static cudart): only the runtime call is recorded. */
    cudaMemcpyAsync_v3020_params rt = { .dst = dev, .src = pinned, .count = 256, .kind = cudaMemcpyHostToDevice,
                                        .stream = (cudaStream_t)s1 };
    cudaError_t rt_ret = cudaSuccess;
    CUresult drv_ret = CUDA_SUCCESS;
    uint32_t rcorr = ++next_corr, dcorr = ++next_corr;
    fake_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync", &rt,
             &rt_ret, CUPTI_API_ENTER, rcorr);
    cuMemcpyHtoDAsync_v2_params nested = { .dstDevice = (CUdeviceptr)(uintptr_t)dev, .srcHost = pinned,
                                           .ByteCount = 256, .hStream = s1 };
    fake_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", &nested,
             &drv_ret, CUPTI_API_ENTER, dcorr);
    fake_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", &nested,
             &drv_ret, CUPTI_API_EXIT, dcorr);
    fake_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync", &rt,
             &rt_ret, CUPTI_API_EXIT, rcorr);
    printf("runtime_copy %u\nnested_copy %u\n", rcorr, dcorr);

    /* ... and inside an interposed runtime launch: the fake cudart fires
     * cuLaunchKernel inside cudaLaunchKernel (it lends the parameters of a
     * stub the runtime level cannot map, and is not recorded itself). */
    fake_cudart_register_stub((const void *)foreign_stub, 0xF00F, 1);
    void *rargs[4] = { &n, &a, &s, &b };
    if (cudaLaunchKernel((const void *)foreign_stub, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, rargs, 0, 0) !=
        cudaSuccess)
        return 1;
    return 0;
}
