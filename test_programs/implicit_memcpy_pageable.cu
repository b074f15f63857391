// A plain cudaMemcpy into pageable memory runs on the legacy default stream,
// so besides copying it waits for every *blocking* stream: here a 50 ms kernel
// on an unrelated stream made with cudaStreamCreate.  The host blocks ~50 ms
// for work the copy never needed.  This is legacy-stream serialization showing
// up as a host wait (the analyzer may also call the wait an implicit sync).
// Fixed twin: implicit_memcpy_pageable_fixed.cu (non-blocking stream).
#include "ss_test.cuh"

#ifndef BUSY_STREAM_FLAGS
#define BUSY_STREAM_FLAGS cudaStreamDefault
#define PROGRAM_NAME "implicit_memcpy_pageable"
#endif

__global__ void fill(int *data, int n, int value)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        data[i] = value + i;
}

int main(void)
{
    ss_init_device();
    cudaStream_t busy, work;
    CK(cudaStreamCreateWithFlags(&busy, BUSY_STREAM_FLAGS)); // EXPECT-SITE legacy-stream-serialization
    CK(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
    const int n = 1024;
    int *device_data, *busy_flag;
    CK(cudaMalloc(&device_data, n * sizeof(int)));
    CK(cudaMalloc(&busy_flag, sizeof(int)));
    int *host_data = (int *)malloc(n * sizeof(int)); // pageable
    if (host_data == NULL)
        return 1;

    spin_kernel<<<1, 1, 0, busy>>>(ss_ms_to_ns(50), busy_flag, 1); // unrelated long work
    CK_LAUNCH();
    fill<<<1, 256, 0, work>>>(device_data, n, 7);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(work)); // the data is ready here
    CK(cudaMemcpy(host_data, device_data, n * sizeof(int), cudaMemcpyDeviceToHost)); // EXPECT-SITE legacy-stream-serialization
    long long sum = 0;
    for (int i = 0; i < n; i++)
        sum += host_data[i];
    CK(cudaStreamSynchronize(busy));
    printf("%s: sum=%lld\n", PROGRAM_NAME, sum);
    free(host_data);
    CK(cudaFree(device_data));
    CK(cudaFree(busy_flag));
    CK(cudaStreamDestroy(busy));
    CK(cudaStreamDestroy(work));
    return 0;
}
