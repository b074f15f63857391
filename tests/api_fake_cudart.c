/*
 * A fake libcudart.so.13 for the CPU test of the interposer
 * (tests/test_api_interposer.sh): a few entry points with cudart's names and
 * prototypes that sleep, fill out-parameters and return chosen error codes,
 * so that the test can check what the shim recorded against what happened.
 * It is built with soname libcudart.so.13 and cudart's symbol version, so
 * the test program binds to it exactly as it would to the real one.
 *
 * Launches also go "down to the driver" when the fake libcupti
 * (api_fake_cupti.c) is loaded: its fake_cupti_driver_launch fires the
 * cuLaunchKernel driver callback with the kernel parameters, as the real
 * cudart's cuLaunchKernel would.  Likewise cudaGraphAddKernelNode and
 * cudaGraphKernelNodeSetParams make the driver calls a static cudart makes
 * inside them (cuGraphAddKernelNode_v2, cuGraphNodeSetParams): the only
 * place a stub of another cudart shows the shim its kernel's parameters.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* The count that makes cudaMemcpyAsync fail, and the errno it leaves. */
#define FAKE_FAILING_COUNT 13
#define FAKE_ERRNO EDOM

static void fake_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static uintptr_t fake_next_stream = 0x5000;

FAKE_EXPORT cudaError_t cudaSetDevice(int device)
{
    return device >= 0 && device < 4 ? cudaSuccess : cudaErrorInvalidDevice;
}

FAKE_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    (void)flags;
    fake_next_stream += 0x10;
    *pStream = (cudaStream_t)fake_next_stream;
    return cudaSuccess;
}

/* Events and stream capture, for the sampling test (tests/test_api_sampling.sh):
 * handles only, no work. */
static uintptr_t fake_next_event = 0x9000;

FAKE_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    fake_next_event += 0x10;
    *event = (cudaEvent_t)fake_next_event;
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    (void)stream;
    return event != NULL ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

static cudaStream_t fake_capturing;

FAKE_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    (void)mode;
    if (stream == NULL || fake_capturing != NULL)
        return cudaErrorIllegalState;
    fake_capturing = stream;
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    if (stream != fake_capturing)
        return cudaErrorIllegalState;
    fake_capturing = NULL;
    *pGraph = (cudaGraph_t)(uintptr_t)0x6a6a000;
    return cudaSuccess;
}

/* The count that makes cudaMemcpyAsync block 1 ms (a pageable copy behind
 * running work): one call site is then sometimes slow, sometimes quick. */
#define FAKE_SLOW_COUNT 4097

static cudaError_t fake_memcpy_async(size_t count)
{
    if (count == FAKE_FAILING_COUNT) {
        errno = FAKE_ERRNO;   /* the interposer must leave this as it is */
        return cudaErrorInvalidValue;
    }
    if (count == FAKE_SLOW_COUNT)
        fake_sleep_ms(1);
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                        cudaStream_t stream)
{
    (void)dst; (void)src; (void)kind; (void)stream;
    return fake_memcpy_async(count);
}

FAKE_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                             cudaStream_t stream)
{
    (void)dst; (void)src; (void)kind; (void)stream;
    return fake_memcpy_async(count);
}

/* A synchronous copy that blocks 20 ms, like one behind a running kernel. */
FAKE_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    (void)dst; (void)src; (void)count; (void)kind;
    fake_sleep_ms(20);
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    (void)stream;
    return cudaErrorNotReady;
}

FAKE_EXPORT cudaError_t cudaFree(void *devPtr)
{
    (void)devPtr;
    fake_sleep_ms(10);
    return cudaSuccess;
}

/* Device memory handed out by cudaMalloc: bump allocation in one region. */
static unsigned char fake_heap[1 << 16] __attribute__((aligned(256)));
static size_t fake_heap_used;

FAKE_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    size_t rounded = (size + 255) & ~(size_t)255;
    if (devPtr == NULL || rounded > sizeof fake_heap - fake_heap_used)
        return cudaErrorMemoryAllocation;
    *devPtr = fake_heap + fake_heap_used;
    fake_heap_used += rounded;
    return cudaSuccess;
}

/* Which CUfunction a host stub stands for (api_fake_cuda.c knows the
 * layouts): 0xF00D unless the program registered the stub.  A "foreign" stub
 * belongs to another (static) cudart, so cudaGetFuncBySymbol does not know
 * it, but its launches still reach the driver with their CUfunction. */
#define FAKE_MAX_STUBS 8
static struct { const void *stub; uintptr_t func; int foreign; } fake_stubs[FAKE_MAX_STUBS];
static int fake_nstubs;

FAKE_EXPORT void fake_cudart_register_stub(const void *stub, uintptr_t func, int foreign)
{
    if (fake_nstubs < FAKE_MAX_STUBS)
        fake_stubs[fake_nstubs++] = (__typeof__(fake_stubs[0])){ stub, func, foreign };
}

static uintptr_t fake_stub_function(const void *stub, int *foreign)
{
    *foreign = 0;
    for (int i = 0; i < fake_nstubs; i++)
        if (fake_stubs[i].stub == stub) {
            *foreign = fake_stubs[i].foreign;
            return fake_stubs[i].func;
        }
    return 0xF00D;
}

FAKE_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                         size_t sharedMem, cudaStream_t stream)
{
    (void)gridDim; (void)blockDim; (void)sharedMem; (void)stream;
    int foreign;
    uintptr_t f = fake_stub_function(func, &foreign);
    void (*driver_launch)(CUfunction, void **) =
        (void (*)(CUfunction, void **))dlsym(RTLD_DEFAULT, "fake_cupti_driver_launch");
    if (driver_launch != NULL)
        driver_launch((CUfunction)f, args);
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                           size_t sharedMem, cudaStream_t stream)
{
    (void)kernel; (void)gridDim; (void)blockDim; (void)args; (void)sharedMem; (void)stream;
    return cudaSuccess;
}

/* Graphs built node by node: a node handle out, nothing runs; NULL
 * parameters are cudart's cudaErrorInvalidValue. */
static uintptr_t fake_next_node = 0x9000;

static cudaError_t fake_add_node(cudaGraphNode_t *pGraphNode, const void *params)
{
    if (pGraphNode == NULL || params == NULL)
        return cudaErrorInvalidValue;
    *pGraphNode = (cudaGraphNode_t)(fake_next_node += 0x10);
    return cudaSuccess;
}

/* A driver call's CUPTI callbacks (enter, exit) through the fake libcupti,
 * when it is loaded: the call cudart makes inside a runtime one. */
static void fake_driver_call(CUpti_CallbackId cbid, const char *name, const void *params)
{
    static uint32_t corr = 5000;
    void (*api)(CUpti_CallbackDomain, CUpti_CallbackId, const char *, const void *, const void *, int, uint32_t) =
        (__typeof__(api))dlsym(RTLD_DEFAULT, "fake_cupti_api");
    if (api == NULL)
        return;
    CUresult ret = CUDA_SUCCESS;
    uint32_t c = __atomic_add_fetch(&corr, 1, __ATOMIC_RELAXED);
    api(CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, params, &ret, CUPTI_API_ENTER, c);
    api(CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, params, &ret, CUPTI_API_EXIT, c);
}

FAKE_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                               const struct cudaKernelNodeParams *pNodeParams)
{
    (void)graph; (void)pDependencies; (void)numDependencies;
    cudaError_t err = fake_add_node(pGraphNode, pNodeParams);
    if (err != cudaSuccess)
        return err;
    int foreign;
    CUDA_KERNEL_NODE_PARAMS kp = { 0 };
    kp.func = (CUfunction)fake_stub_function(pNodeParams->func, &foreign);
    kp.kernelParams = pNodeParams->kernelParams;
    cuGraphAddKernelNode_v2_params p = { (CUgraphNode *)pGraphNode, (CUgraph)graph, NULL, 0, &kp };
    fake_driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode_v2, "cuGraphAddKernelNode_v2", &p);
    return cudaSuccess;
}

/* The generic node call (CUDA 12.2+): any node type, one parameter struct. */
FAKE_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                         const cudaGraphNode_t *pDependencies, const cudaGraphEdgeData *dependencyData,
                                         size_t numDependencies, struct cudaGraphNodeParams *nodeParams)
{
    (void)graph; (void)pDependencies; (void)dependencyData; (void)numDependencies;
    return fake_add_node(pGraphNode, nodeParams);
}

/* Through the generic node call (CUDA 12.2's cuGraphNodeSetParams). */
FAKE_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams)
{
    if (node == NULL || pNodeParams == NULL)
        return cudaErrorInvalidValue;
    int foreign;
    CUgraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = CU_GRAPH_NODE_TYPE_KERNEL;
    np.kernel.kern = (CUkernel)fake_stub_function(pNodeParams->func, &foreign);   /* by CUkernel: func NULL */
    np.kernel.kernelParams = pNodeParams->kernelParams;
    cuGraphNodeSetParams_params p = { (CUgraphNode)node, &np };
    fake_driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetParams, "cuGraphNodeSetParams", &p);
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                 void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    (void)graph; (void)pDependencies; (void)numDependencies; (void)dst; (void)src; (void)count; (void)kind;
    return fake_add_node(pGraphNode, &kind);
}

FAKE_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                               const struct cudaMemsetParams *pMemsetParams)
{
    (void)graph; (void)pDependencies; (void)numDependencies;
    return fake_add_node(pGraphNode, pMemsetParams);
}

/* The stub -> CUfunction mapping the shim asks for once per stub. */
FAKE_EXPORT cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    int foreign;
    uintptr_t f = symbolPtr != NULL ? fake_stub_function(symbolPtr, &foreign) : 0;
    if (symbolPtr == NULL || foreign)
        return cudaErrorInvalidDeviceFunction;
    *functionPtr = (cudaFunction_t)f;
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t cudaPeekAtLastError(void) { return cudaSuccess; }
FAKE_EXPORT cudaError_t cudaGetLastError(void) { return cudaSuccess; }
