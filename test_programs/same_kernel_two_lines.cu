// Call sites of one kernel launched from two source lines.  Each `<<<>>>`
// calls the host stub nvcc generates for the kernel, and the stub calls
// cudaLaunchKernel, so both lines reach the shim from the same return address
// (inside the stub, unless the host compiler inlined it).  A stack cache keyed
// by (kernel, return address) once gave every launch the stack of a recent
// launch from the other line: the report said "~300 occurrences at line A"
// where 200 came from there.  Here each line's launch races with a producer
// kernel on another stream (missing-fence, no event between them), 200 times
// per line, alternating: each finding must sit at its own line with exactly
// 200 occurrences.
#include "ss_test.cuh"

#define ROUNDS 200
#define N 1024

__global__ void init_array(int *a, int n, int value)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        a[i] = value;
}

int main(void)
{
    ss_init_device();
    cudaStream_t producer, consumer;
    CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    int *first, *second;
    CK(cudaMalloc(&first, N * sizeof(int)));
    CK(cudaMalloc(&second, N * sizeof(int)));

    for (int round = 0; round < ROUNDS; round++) {
        // The producer writes first[0]; nothing orders the consumer's write after it.
        spin_kernel<<<1, 1, 0, producer>>>(2000, first, round);
        CK_LAUNCH();
        init_array<<<4, 256, 0, consumer>>>(first, N, round); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        CK(cudaStreamSynchronize(producer));
        CK(cudaStreamSynchronize(consumer));

        spin_kernel<<<1, 1, 0, producer>>>(2000, second, round);
        CK_LAUNCH();
        init_array<<<4, 256, 0, consumer>>>(second, N, round + 1); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        CK(cudaStreamSynchronize(producer));
        CK(cudaStreamSynchronize(consumer));
    }

    int last[2];
    CK(cudaMemcpy(&last[0], first + N - 1, sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&last[1], second + N - 1, sizeof(int), cudaMemcpyDeviceToHost));
    printf("same_kernel_two_lines: last=%d,%d\n", last[0], last[1]);
    CK(cudaFree(first));
    CK(cudaFree(second));
    CK(cudaStreamDestroy(producer));
    CK(cudaStreamDestroy(consumer));
    return 0;
}
