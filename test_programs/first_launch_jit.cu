// first-launch-stall (PTX JIT): built with PTX only for an old architecture
// (no machine code for this GPU), so the driver JIT-compiles the kernel at
// its first launch, inside the timed loop: the host thread stalls there and the
// second stream's work is submitted that much later.  Run with CUDA_CACHE_DISABLE=1 so the
// JIT cache never hides it.  Fixed twin: first_launch_jit_fixed.cu (the same
// source built with machine code for the GPU).
// NVCC-ARCH: -gencode arch=compute_75,code=compute_75
// RUN-ENV: CUDA_CACHE_DISABLE=1
#include <chrono>
#include "ss_test.cuh"

// Enough code that compiling it takes a visible time.
__global__ void heavy_math(float *out, int n, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = (float)i * 1e-3f, y = 1.0f;
#pragma unroll 32
    for (int k = 0; k < iters; k++) {
        x = sinf(x) * cosf(y) + expf(-x * x) + logf(1.0f + fabsf(y));
        y = tanhf(x) + sqrtf(fabsf(x * y) + 1.0f) + powf(fabsf(x) + 1.0f, 0.37f);
    }
    out[i] = x + y;
}

int main(void)
{
    ss_init_device();
    cudaStream_t a, b;
    CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    const int n = 1 << 16;
    float *out;
    CK(cudaMalloc(&out, n * sizeof(float)));
    CK(cudaDeviceSynchronize());

    auto t0 = std::chrono::steady_clock::now();
    for (int step = 0; step < 5; step++) {
        heavy_math<<<n / 256, 256, 0, a>>>(out, n, 8); // EXPECT-SITE first-launch-stall
        CK_LAUNCH();
        ss_spin(b, 5); // independent work on b
    }
    CK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    printf("first_launch_jit: 5 steps: %.1f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count());
    CK(cudaFree(out));
    return 0;
}
