// GPU check of call sites: known lines (LINE-*) that block the host.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

namespace solver {
struct Solver {
    cudaStream_t stream;
    __attribute__((noinline)) void run()
    {
        spin<<<1, 1, 0, stream>>>(10000000);
        cudaStreamSynchronize(stream); // LINE-GPU-SYNC
    }
};
}

int main()
{
    solver::Solver s;
    cudaStreamCreate(&s.stream);
    s.run();
    void *d = nullptr;
    cudaMalloc(&d, 1 << 20);
    cudaFree(d); // LINE-GPU-FREE
    cudaStreamDestroy(s.stream);
    std::printf("done\n");
    return 0;
}
