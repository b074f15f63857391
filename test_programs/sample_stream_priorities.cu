// Follows NVIDIA's CUDA sample StreamPriorities (Samples/0_Introduction/
// StreamPriorities): two non-blocking streams made with
// cudaStreamCreateWithPriority at the lowest and the highest priority of
// cudaDeviceGetStreamPriorityRange; pageable source buffers copied in with
// cudaMemcpy; on each stream an event pair (cudaEventRecord before and after)
// around a loop of memcpy kernels, each copying one slice of the buffer; the
// low-priority work is enqueued first, the high-priority work right after,
// so the scheduler starts the high-priority blocks as soon as it can;
// cudaEventSynchronize on both end events; cudaEventElapsedTime gives each
// stream's time; cudaMemcpy brings the results back and the host checks them.
// Why it is otherwise correct: each stream copies only its own buffers; the host reads
// results with cudaMemcpy after both end events were waited for; the events
// time work of their own stream, recorded before and after it on that stream.
// Expected: one race.  The sample copies its inputs with
// cudaMemcpy from pageable memory on the legacy stream, and kernels on
// non-blocking streams read them with no event between: CUDA's
// synchronization rules let a pageable-to-device cudaMemcpy return once its
// data is staged, before it lands, and a non-blocking stream does not wait
// for the legacy stream.  Measured, copies of up to 16 MB nearly always land
// after the call returned (bench/pageable_landing.cu), and these 64 MB ones
// did in some runs: then it is a data race (error); in runs where they had
// landed by the return (the trace shows which), a possible one (warning).
// Nothing else: the events time work of their own stream.
#include "ss_test.cuh"
#include <string.h>

#define TOTAL_SIZE (64 * 1024 * 1024)
#define EACH_SIZE (4 * 1024 * 1024)

__global__ void memcpy_kernel(int *dst, const int *src, size_t n)
{
    size_t num = (size_t)gridDim.x * blockDim.x;
    size_t id = (size_t)blockDim.x * blockIdx.x + threadIdx.x;
    for (size_t i = id; i < n / sizeof(int); i += num)
        dst[i] = src[i];
}

int main(void)
{
    ss_init_device();
    int priority_low, priority_hi;
    CK(cudaDeviceGetStreamPriorityRange(&priority_low, &priority_hi));
    printf("stream priority range: low %d, high %d\n", priority_low, priority_hi);
    cudaStream_t st_low, st_hi;
    CK(cudaStreamCreateWithPriority(&st_low, cudaStreamNonBlocking, priority_low));
    CK(cudaStreamCreateWithPriority(&st_hi, cudaStreamNonBlocking, priority_hi));

    size_t size = TOTAL_SIZE;
    int *h_src_low = (int *)malloc(size), *h_src_hi = (int *)malloc(size);
    int *h_dst_low = (int *)malloc(size), *h_dst_hi = (int *)malloc(size);
    for (size_t i = 0; i < size / sizeof(int); i++) {
        h_src_low[i] = (int)i;
        h_src_hi[i] = (int)(size / sizeof(int) - i);
    }
    int *d_src_low, *d_src_hi, *d_dst_low, *d_dst_hi;
    CK(cudaMalloc(&d_src_low, size));
    CK(cudaMalloc(&d_src_hi, size));
    CK(cudaMalloc(&d_dst_low, size));
    CK(cudaMalloc(&d_dst_hi, size));
    CK(cudaMemcpy(d_src_low, h_src_low, size, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_src_hi, h_src_hi, size, cudaMemcpyHostToDevice));

    cudaEvent_t start_low, start_hi, end_low, end_hi;
    CK(cudaEventCreate(&start_low));
    CK(cudaEventCreate(&start_hi));
    CK(cudaEventCreate(&end_low));
    CK(cudaEventCreate(&end_hi));

    dim3 block(1024), grid(132);
    CK(cudaEventRecord(start_low, st_low));
    for (size_t i = 0; i < TOTAL_SIZE; i += EACH_SIZE) {
        size_t j = i / sizeof(int);
        memcpy_kernel<<<grid, block, 0, st_low>>>(d_dst_low + j, d_src_low + j, EACH_SIZE);
        CK_LAUNCH();
    }
    CK(cudaEventRecord(end_low, st_low));
    CK(cudaEventRecord(start_hi, st_hi));
    for (size_t i = 0; i < TOTAL_SIZE; i += EACH_SIZE) {
        size_t j = i / sizeof(int);
        memcpy_kernel<<<grid, block, 0, st_hi>>>(d_dst_hi + j, d_src_hi + j, EACH_SIZE);
        CK_LAUNCH();
    }
    CK(cudaEventRecord(end_hi, st_hi));
    CK(cudaEventSynchronize(end_hi));
    CK(cudaEventSynchronize(end_low));
    float ms_low = 0, ms_hi = 0;
    CK(cudaEventElapsedTime(&ms_low, start_low, end_low));
    CK(cudaEventElapsedTime(&ms_hi, start_hi, end_hi));
    printf("elapsed time of kernels launched to LOW priority stream: %.3f ms\n", ms_low);
    printf("elapsed time of kernels launched to HI  priority stream: %.3f ms\n", ms_hi);

    CK(cudaMemcpy(h_dst_low, d_dst_low, size, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h_dst_hi, d_dst_hi, size, cudaMemcpyDeviceToHost));
    int bad = memcmp(h_dst_low, h_src_low, size) != 0 || memcmp(h_dst_hi, h_src_hi, size) != 0;
    printf("sample_stream_priorities: %s\n", bad ? "results differ" : "results match");

    CK(cudaEventDestroy(start_low));
    CK(cudaEventDestroy(start_hi));
    CK(cudaEventDestroy(end_low));
    CK(cudaEventDestroy(end_hi));
    CK(cudaStreamDestroy(st_low));
    CK(cudaStreamDestroy(st_hi));
    CK(cudaFree(d_src_low));
    CK(cudaFree(d_src_hi));
    CK(cudaFree(d_dst_low));
    CK(cudaFree(d_dst_hi));
    free(h_src_low);
    free(h_src_hi);
    free(h_dst_low);
    free(h_dst_hi);
    return bad;
}
