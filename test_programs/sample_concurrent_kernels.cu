// Written the way NVIDIA's concurrentKernels sample writes it: N kernels on N
// streams (cudaStreamCreate), kernel i writing its own element d_a[i] of one
// array; an event recorded on each stream after its kernel; the last stream
// waits on every event, then a `sum` kernel on that stream reads all of d_a
// and the result is copied to pinned memory on the same stream; the host
// waits on an event recorded after that copy, then checks.  Every
// cross-stream read is ordered by an event: correct in the legacy and the
// per-thread build.  Expected: nothing to report.
#include "ss_test.cuh"

#define NKERNELS 8

// Stands in for the sample's clock_block: busy for `ns`, then writes its result.
__global__ void clock_block(int *d_o, int value, unsigned long long ns)
{
    ss_spin_ns(ns);
    *d_o = value;
}

// Single warp: d_a[0] = sum of d_a[0..n).
__global__ void sum(int *d_a, int n)
{
    __shared__ int s_a[32];
    int local = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        local += d_a[i];
    s_a[threadIdx.x] = local;
    __syncthreads();
    for (int stride = 16; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride)
            s_a[threadIdx.x] += s_a[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        d_a[0] = s_a[0];
}

int main(void)
{
    ss_init_device();
    int *a, *d_a;
    CK(cudaMallocHost(&a, sizeof(int)));
    CK(cudaMalloc(&d_a, NKERNELS * sizeof(int)));

    cudaStream_t streams[NKERNELS];
    cudaEvent_t kernel_event[NKERNELS];
    for (int i = 0; i < NKERNELS; i++) {
        CK(cudaStreamCreate(&streams[i]));
        CK(cudaEventCreateWithFlags(&kernel_event[i], cudaEventDisableTiming));
    }
    cudaEvent_t stop_event;
    CK(cudaEventCreateWithFlags(&stop_event, cudaEventDisableTiming));

    cudaStream_t last = streams[NKERNELS - 1];
    for (int i = 0; i < NKERNELS; i++) {
        clock_block<<<1, 1, 0, streams[i]>>>(&d_a[i], i + 1, ss_ms_to_ns(10));
        CK_LAUNCH();
        CK(cudaEventRecord(kernel_event[i], streams[i]));
        CK(cudaStreamWaitEvent(last, kernel_event[i], 0));
    }
    sum<<<1, 32, 0, last>>>(d_a, NKERNELS);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(a, d_a, sizeof(int), cudaMemcpyDeviceToHost, last));
    CK(cudaEventRecord(stop_event, last));
    CK(cudaEventSynchronize(stop_event));

    const int expected = NKERNELS * (NKERNELS + 1) / 2;
    printf("sample_concurrent_kernels: %s\n", *a == expected ? "PASSED" : "FAILED");
    if (*a != expected)
        fprintf(stderr, "sample_concurrent_kernels: sum %d, expected %d\n", *a, expected);
    int ok = *a == expected;

    for (int i = 0; i < NKERNELS; i++) {
        CK(cudaStreamDestroy(streams[i]));
        CK(cudaEventDestroy(kernel_event[i]));
    }
    CK(cudaEventDestroy(stop_event));
    CK(cudaFreeHost(a));
    CK(cudaFree(d_a));
    return ok ? 0 : 1;
}
