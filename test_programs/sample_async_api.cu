// Written the way NVIDIA's asyncAPI sample writes it: pinned host memory, a
// cudaMemset of the device buffer, cudaDeviceSynchronize, then on stream 0:
// timing event, cudaMemcpyAsync H2D, an increment kernel, cudaMemcpyAsync D2H,
// timing event; the host counts while it polls cudaEventQuery(stop), then
// checks the result.  One stream, pinned copies, a wait before reading: correct.
#include "ss_test.cuh"
#include <string.h>

__global__ void increment_kernel(int *g_data, int inc_value)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    g_data[idx] = g_data[idx] + inc_value;
}

static int correct_output(const int *data, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (data[i] != x)
            return 0;
    return 1;
}

int main(void)
{
    ss_init_device();
    const int n = 4 * 1024 * 1024;
    const size_t nbytes = n * sizeof(int);
    const int value = 26;

    int *a, *d_a;
    CK(cudaMallocHost(&a, nbytes));
    memset(a, 0, nbytes);
    CK(cudaMalloc(&d_a, nbytes));
    CK(cudaMemset(d_a, 255, nbytes));

    dim3 threads = dim3(512, 1);
    dim3 blocks = dim3(n / threads.x, 1);
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    CK(cudaDeviceSynchronize());

    CK(cudaEventRecord(start, 0));
    CK(cudaMemcpyAsync(d_a, a, nbytes, cudaMemcpyHostToDevice, 0));
    increment_kernel<<<blocks, threads, 0, 0>>>(d_a, value);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(a, d_a, nbytes, cudaMemcpyDeviceToHost, 0));
    CK(cudaEventRecord(stop, 0));

    // The CPU does other work while the GPU runs (here: it counts).
    unsigned long counter = 0;
    while (cudaEventQuery(stop) == cudaErrorNotReady)
        counter++;
    float gpu_time = 0;
    CK(cudaEventElapsedTime(&gpu_time, start, stop));
    fprintf(stderr, "sample_async_api: GPU time %.2f ms, CPU counted to %lu while waiting\n", gpu_time, counter);

    int ok = correct_output(a, n, value);
    printf("sample_async_api: %s\n", ok ? "PASSED" : "FAILED");
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    CK(cudaFreeHost(a));
    CK(cudaFree(d_a));
    return ok ? 0 : 1;
}
