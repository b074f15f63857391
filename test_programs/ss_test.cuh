// Shared helpers for the syncsight test programs.
//
// Every pathology program needs GPU work whose duration does not depend on the
// GPU model, so that "the host blocked for 50 ms" or "these two kernels should
// have overlapped" is measurable on any card: spin_kernel() busy-waits on the
// GPU's global nanosecond timer (%globaltimer) instead of doing arithmetic
// whose speed varies from GPU to GPU.  It runs one thread, so kernels on
// different streams are free to run concurrently.
#ifndef SS_TEST_CUH
#define SS_TEST_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                    \
    do {                                                                            \
        cudaError_t ck_err_ = (call);                                               \
        if (ck_err_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,    \
                    cudaGetErrorString(ck_err_));                                   \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

// Launch errors surface at the next call; check them right away so a failing
// program says which launch was wrong.
#define CK_LAUNCH() CK(cudaGetLastError())

// A library's own status checked like CK: `ok` is its success value, `lib`
// its name (cuBLAS, cuFFT, cuRAND).
#define CK_STATUS(call, ok, lib)                                                     \
    do {                                                                             \
        long long ck_st_ = (long long)(call);                                        \
        if (ck_st_ != (long long)(ok)) {                                             \
            fprintf(stderr, "%s:%d: %s failed: %s status %lld\n", __FILE__, __LINE__, \
                    #call, lib, ck_st_);                                             \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

// The driver API's calls (programs that include <cuda.h> and link -lcuda).
#define CKD(call)                                                                    \
    do {                                                                             \
        CUresult ckd_ = (call);                                                      \
        if (ckd_ != CUDA_SUCCESS) {                                                  \
            const char *ckd_s_ = NULL;                                               \
            cuGetErrorString(ckd_, &ckd_s_);                                         \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,     \
                    ckd_s_ ? ckd_s_ : "unknown error");                              \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

__device__ __forceinline__ unsigned long long ss_globaltimer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void ss_spin_ns(unsigned long long ns)
{
    unsigned long long start = ss_globaltimer_ns();
    while (ss_globaltimer_ns() - start < ns) {
    }
}

// Spin for `ns`, then (optionally) store `value` in *out: the store comes last
// so that a consumer racing with this kernel reads the old value.
__global__ void spin_kernel(unsigned long long ns, int *out, int value)
{ // EXPECT-NOSITE legacy-stream-serialization
    ss_spin_ns(ns);
    if (out != nullptr)
        *out = value;
}

static inline unsigned long long ss_ms_to_ns(double ms) { return (unsigned long long)(ms * 1e6); }

// Enqueue `ms` milliseconds of GPU busy time on `stream`.
static inline void ss_spin(cudaStream_t stream, double ms)
{
    spin_kernel<<<1, 1, 0, stream>>>(ss_ms_to_ns(ms), nullptr, 0);
    CK_LAUNCH();
}

// Create the context before anything is measured, so that the one-time
// initialization cost (hundreds of ms) never lands on a call under test.
static inline void ss_init_device(void)
{
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
}

#endif
