// The calls whose NVTX ranges tests/gpu_nvtx_emit.sh asserts: a named stream,
// a cudaFree that blocks while a kernel runs, a stream sync and a device sync.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void spin(unsigned long long ns)
{
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns)
            break;
    }
}

int main()
{
    cudaStream_t s;
    float *buf = nullptr;
    if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&buf, 1 << 20) != cudaSuccess)
        return 1;
    spin<<<1, 1, 0, s>>>(30ull * 1000 * 1000);
    cudaFree(buf);                  // blocks until the kernel is done
    spin<<<1, 1, 0, s>>>(5ull * 1000 * 1000);
    cudaStreamSynchronize(s);
    spin<<<1, 1, 0, s>>>(5ull * 1000 * 1000);
    cudaDeviceSynchronize();
    cudaStreamDestroy(s);
    printf("nvtx_probe: done\n");
    return 0;
}
