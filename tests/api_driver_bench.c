/*
 * What CUPTI driver-API callbacks cost the shim, on the CPU (`make
 * api-driver-bench`): the subscriber's callback is called directly, as the
 * real CUPTI dispatches it (the fake libcupti hands it over), so the numbers
 * are the shim's own work per callback pair, not CUPTI's dispatch.
 *   1. a runtime call recorded from the CUPTI runtime callbacks (ENTER/EXIT),
 *   2. the same with a driver call inside it (cudart's cuMemcpyHtoDAsync):
 *      2 - 1 is what enabling that driver cbid adds to every runtime call
 *      that makes it (the callback only checks the thread's runtime depth);
 *   3. a driver launch made by the program (Triton, CuPy): recorded, 3 params;
 *   4. a driver copy made by the program: recorded, one memory-kind lookup;
 *   5. driver callback pairs inside one runtime call: the ignored callback
 *      alone, which is what each nested driver call costs.
 * Each is timed REPS times and the fastest is printed (the machine is shared).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

extern unsigned char fake_device_mem[4096];
extern unsigned char fake_pinned_mem[4096];

#define CALLS 200000
#define REPS 5

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(void)
{
    typedef CUpti_CallbackFunc (*get_fn)(void **);
    get_fn get = (get_fn)dlsym(RTLD_DEFAULT, "fake_cupti_subscriber");
    void *ud = NULL;
    CUpti_CallbackFunc cb = get != NULL ? get(&ud) : NULL;
    if (cb == NULL) {
        fprintf(stderr, "api_driver_bench: run it under the shim with the fake libcupti (make api-driver-bench)\n");
        return 1;
    }
    CUstream s = (CUstream)(uintptr_t)0x5151000;
    cudaError_t rt_ret = cudaSuccess;
    CUresult drv_ret = CUDA_SUCCESS;
    cudaMemcpyAsync_v3020_params rt = { .dst = fake_device_mem, .src = fake_pinned_mem, .count = 64,
                                        .kind = cudaMemcpyHostToDevice, .stream = (cudaStream_t)s };
    cuMemcpyHtoDAsync_v2_params h2d = { .dstDevice = (CUdeviceptr)(uintptr_t)fake_device_mem,
                                        .srcHost = fake_pinned_mem, .ByteCount = 64, .hStream = s };
    void *a = fake_device_mem, *b = fake_device_mem + 64;
    int n = 3;
    void *kp[3] = { &a, &n, &b };
    cuLaunchKernel_params lk = { .f = (CUfunction)(uintptr_t)0xF00D, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
                                 .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1, .hStream = s, .kernelParams = kp };
    CUpti_CallbackData rd, dd;
    memset(&rd, 0, sizeof rd);
    memset(&dd, 0, sizeof dd);
    rd.functionParams = &rt;
    rd.functionReturnValue = &rt_ret;
    dd.functionParams = &h2d;
    dd.functionReturnValue = &drv_ret;
    const CUpti_CallbackId RT = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    const CUpti_CallbackId DH = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;
    uint32_t corr = 1;

    double best[5] = { 1e30, 1e30, 1e30, 1e30, 1e30 };
    for (int rep = 0; rep < REPS; rep++) {
    dd.functionParams = &h2d;
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++) {
        rd.correlationId = corr++;
        rd.callbackSite = CUPTI_API_ENTER;
        cb(ud, CUPTI_CB_DOMAIN_RUNTIME_API, RT, &rd);
        rd.callbackSite = CUPTI_API_EXIT;
        cb(ud, CUPTI_CB_DOMAIN_RUNTIME_API, RT, &rd);
    }
    double t1 = now_ns();
    for (int i = 0; i < CALLS; i++) {
        rd.correlationId = corr++;
        rd.callbackSite = CUPTI_API_ENTER;
        cb(ud, CUPTI_CB_DOMAIN_RUNTIME_API, RT, &rd);
        dd.correlationId = corr++;
        dd.callbackSite = CUPTI_API_ENTER;
        cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, DH, &dd);
        dd.callbackSite = CUPTI_API_EXIT;
        cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, DH, &dd);
        rd.callbackSite = CUPTI_API_EXIT;
        cb(ud, CUPTI_CB_DOMAIN_RUNTIME_API, RT, &rd);
    }
    double t2 = now_ns();
    dd.functionParams = &lk;
    for (int i = 0; i < CALLS; i++) {
        dd.correlationId = corr++;
        dd.callbackSite = CUPTI_API_ENTER;
        cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &dd);
        dd.callbackSite = CUPTI_API_EXIT;
        cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &dd);
    }
    double t3 = now_ns();
    dd.functionParams = &h2d;
    for (int i = 0; i < CALLS; i++) {
        dd.correlationId = corr++;
        dd.callbackSite = CUPTI_API_ENTER;
        cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, DH, &dd);
        dd.callbackSite = CUPTI_API_EXIT;
        cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, DH, &dd);
    }
    double t4 = now_ns();
    rd.callbackSite = CUPTI_API_ENTER;
    cb(ud, CUPTI_CB_DOMAIN_RUNTIME_API, RT, &rd);
    for (int i = 0; i < CALLS; i++) {
        dd.correlationId = corr++;
        dd.callbackSite = CUPTI_API_ENTER;
        cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, DH, &dd);
        dd.callbackSite = CUPTI_API_EXIT;
        cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, DH, &dd);
    }
    double t5 = now_ns();
    rd.callbackSite = CUPTI_API_EXIT;
    cb(ud, CUPTI_CB_DOMAIN_RUNTIME_API, RT, &rd);
    double t[6] = { t0, t1, t2, t3, t4, t5 };
    for (int k = 0; k < 5; k++)
        if ((t[k + 1] - t[k]) / CALLS < best[k])
            best[k] = (t[k + 1] - t[k]) / CALLS;
    }
    printf("runtime call, CUPTI path (recorded)          %7.1f ns/call\n", best[0]);
    printf("  ... with a nested driver call (ignored)     %7.1f ns/call\n", best[1]);
    printf("driver cuLaunchKernel (recorded, 3 params)   %7.1f ns/call\n", best[2]);
    printf("driver cuMemcpyHtoDAsync (recorded)          %7.1f ns/call\n", best[3]);
    printf("nested driver callback pair alone (ignored)  %7.1f ns/pair\n", best[4]);
    return 0;
}
