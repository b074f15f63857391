// NVCC-FLAGS: -lcuda -lnvrtc
// missing-fence through the CUDA driver API, the way CuPy, Triton and JAX
// launch: kernels compiled at run time (NVRTC, to machine code for this GPU),
// loaded with cuModuleLoadData and launched with cuLaunchKernel on two
// non-blocking streams.  A writer kernel on `producer` fills a buffer after
// spinning 20 ms; a reader kernel on `consumer` sums it, with nothing
// ordering the two: the reader runs first and reads the old contents.
// The program never calls the CUDA runtime, so syncsight sees these calls
// only through CUPTI's driver-API callbacks.
// driver_launch_race_fixed.cu: the same with an event recorded after the
// writer on `producer` and waited for on `consumer` (cuEventRecord +
// cuStreamWaitEvent).
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef DRIVER_FENCE
#define DRIVER_FENCE 0
#define PROGRAM_NAME "driver_launch_race"
#endif

#define N 4096

#define CKD(call)                                                                        \
    do {                                                                                 \
        CUresult ck_r_ = (call);                                                         \
        if (ck_r_ != CUDA_SUCCESS) {                                                     \
            const char *ck_s_ = NULL;                                                    \
            cuGetErrorString(ck_r_, &ck_s_);                                             \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,         \
                    ck_s_ ? ck_s_ : "?");                                                \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)
#define CKN(call)                                                                        \
    do {                                                                                 \
        nvrtcResult ck_n_ = (call);                                                      \
        if (ck_n_ != NVRTC_SUCCESS) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,         \
                    nvrtcGetErrorString(ck_n_));                                         \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

// The kernels, compiled at run time as a library would compile them.
static const char *kernel_source =
    "extern \"C\" __global__ void writer(int *buffer, int n, int value, unsigned long long spin_ns)\n"
    "{\n"
    "    if (threadIdx.x == 0) {\n"
    "        unsigned long long start, now;\n"
    "        asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(start));\n"
    "        do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(now)); } while (now - start < spin_ns);\n"
    "    }\n"
    "    __syncthreads();\n"
    "    for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
    "        buffer[i] = value;\n"
    "}\n"
    "extern \"C\" __global__ void reader(const int *buffer, int n, int *sum)\n"
    "{\n"
    "    int local = 0;\n"
    "    for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
    "        local += buffer[i];\n"
    "    atomicAdd(sum, local);\n"
    "}\n";

// NVRTC to a cubin for this device (no PTX JIT at load time).
static char *compile_cubin(CUdevice dev, size_t *size)
{
    int major = 0, minor = 0;
    CKD(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CKD(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    nvrtcProgram prog;
    CKN(nvrtcCreateProgram(&prog, kernel_source, "driver_kernels.cu", 0, NULL, NULL));
    const char *opts[] = { arch };
    if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = (char *)malloc(n + 1);
        nvrtcGetProgramLog(prog, log);
        fprintf(stderr, "%s: NVRTC failed:\n%s\n", PROGRAM_NAME, log);
        exit(1);
    }
    CKN(nvrtcGetCUBINSize(prog, size));
    char *cubin = (char *)malloc(*size);
    CKN(nvrtcGetCUBIN(prog, cubin));
    CKN(nvrtcDestroyProgram(&prog));
    return cubin;
}

int main(void)
{
    CKD(cuInit(0));
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));

    size_t cubin_size = 0;
    char *cubin = compile_cubin(dev, &cubin_size);
    CUmodule module;
    CKD(cuModuleLoadData(&module, cubin));
    CUfunction writer, reader;
    CKD(cuModuleGetFunction(&writer, module, "writer"));
    CKD(cuModuleGetFunction(&reader, module, "reader"));

    CUstream producer, consumer;
    CKD(cuStreamCreate(&producer, CU_STREAM_NON_BLOCKING));
    CKD(cuStreamCreate(&consumer, CU_STREAM_NON_BLOCKING));
    CUevent produced;
    CKD(cuEventCreate(&produced, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr buffer, sum;
    CKD(cuMemAlloc(&buffer, N * sizeof(int)));
    CKD(cuMemAlloc(&sum, sizeof(int)));
    int *host_sum;
    CKD(cuMemAllocHost((void **)&host_sum, sizeof(int)));

    int n = N, zero_value = 0, value = 1;
    unsigned long long no_spin = 0, spin = 20ull * 1000 * 1000;
    // Warm-up on one stream, waited for: both kernels are loaded before the
    // race (a first launch that loads a kernel would drain the device).
    CKD(cuMemsetD32Async(sum, 0, 1, producer));
    void *warm_writer[] = { &buffer, &n, &zero_value, &no_spin };
    CKD(cuLaunchKernel(writer, 1, 1, 1, 256, 1, 1, 0, producer, warm_writer, NULL));
    void *warm_reader[] = { &buffer, &n, &sum };
    CKD(cuLaunchKernel(reader, 1, 1, 1, 256, 1, 1, 0, producer, warm_reader, NULL));
    CKD(cuMemsetD32Async(sum, 0, 1, producer));
    CKD(cuStreamSynchronize(producer));

    void *writer_args[] = { &buffer, &n, &value, &spin };
    CKD(cuLaunchKernel(writer, 1, 1, 1, 256, 1, 1, 0, producer, writer_args, NULL)); // EXPECT-SITE missing-fence
#if DRIVER_FENCE
    CKD(cuEventRecord(produced, producer));
    CKD(cuStreamWaitEvent(consumer, produced, 0));
#endif
    void *reader_args[] = { &buffer, &n, &sum };
    CKD(cuLaunchKernel(reader, 1, 1, 1, 256, 1, 1, 0, consumer, reader_args, NULL)); // EXPECT-SITE missing-fence
    CKD(cuMemcpyDtoHAsync(host_sum, sum, sizeof(int), consumer));
    CKD(cuStreamSynchronize(consumer));
    CKD(cuStreamSynchronize(producer));

    // Whether the race is visible depends on timing: stderr, stdout stable.
    fprintf(stderr, "%s: reader summed %d, the writer's data sums to %d%s\n", PROGRAM_NAME, *host_sum, N,
            *host_sum == N ? "" : " (read before it was written)");
    printf("%s: done\n", PROGRAM_NAME);
    CKD(cuMemFreeHost(host_sum));
    CKD(cuMemFree(buffer));
    CKD(cuMemFree(sum));
    CKD(cuEventDestroy(produced));
    CKD(cuStreamDestroy(producer));
    CKD(cuStreamDestroy(consumer));
    CKD(cuModuleUnload(module));
    free(cubin);
    CKD(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
