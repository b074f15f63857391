/*
 * A fake libcudart.so.13 for the CPU test of the interposer
 * (tests/test_api_interposer.sh): a few entry points with cudart's names and
 * prototypes that sleep, fill out-parameters and return chosen error codes,
 * so that the test can check what the shim recorded against what happened.
 * It is built with soname libcudart.so.13 and cudart's symbol version, so
 * the test program binds to it exactly as it would to the real one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <cuda_runtime_api.h>

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

static cudaError_t fake_memcpy_async(size_t count)
{
    if (count == FAKE_FAILING_COUNT) {
        errno = FAKE_ERRNO;   /* the interposer must leave this as it is */
        return cudaErrorInvalidValue;
    }
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

FAKE_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                         size_t sharedMem, cudaStream_t stream)
{
    (void)func; (void)gridDim; (void)blockDim; (void)args; (void)sharedMem; (void)stream;
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                           size_t sharedMem, cudaStream_t stream)
{
    (void)kernel; (void)gridDim; (void)blockDim; (void)args; (void)sharedMem; (void)stream;
    return cudaSuccess;
}

/* The stub -> CUfunction mapping the shim asks for once per stub: every stub
 * maps to the one fake function whose layout api_fake_cuda.c knows. */
FAKE_EXPORT cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    if (symbolPtr == NULL)
        return cudaErrorInvalidDeviceFunction;
    *functionPtr = (cudaFunction_t)(uintptr_t)0xF00D;
    return cudaSuccess;
}

FAKE_EXPORT cudaError_t cudaPeekAtLastError(void) { return cudaSuccess; }
FAKE_EXPORT cudaError_t cudaGetLastError(void) { return cudaSuccess; }
