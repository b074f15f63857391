// NVCC-FLAGS: -lcuda
// missing-fence on memory mapped through CUDA's virtual memory management, the
// way PyTorch's caching allocator grows an expandable segment
// (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): an address range is
// reserved (cuMemAddressReserve) and physical chunks are created (cuMemCreate)
// and mapped into it one after another (cuMemMap), so that the segment grows
// without moving.  A buffer placed across the boundary of two chunks is one
// buffer to the program: after 20 ms of other work on `producer`, a memset
// there fills the whole buffer (from the first chunk into the second), and a
// reader kernel on `consumer` is handed its second half (a pointer into the
// second chunk, like a view x[n/2:]), with nothing ordering the two: the
// reader runs first.  The analyzer must see the two chunks as one contiguous
// mapping to relate the memset to the reader.
// vmm_race_fixed.cu: the same with an event recorded after the writer on
// `producer` and waited for on `consumer`; then the chunks are unmapped and
// released, as a segment shrinks.
#include "ss_test.cuh"
#include <cuda.h>

#ifndef VMM_FENCE
#define VMM_FENCE 0
#define PROGRAM_NAME "vmm_race"
#endif

__global__ void sum_of(const int *buffer, size_t n, unsigned long long *sum)
{ // EXPECT-NOSITE missing-fence
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        local += buffer[i];
    atomicAdd(sum, local);
}

int main(void)
{
    ss_init_device();
    CUdevice dev;
    CKD(cuCtxGetDevice(&dev));
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (int)dev;
    size_t chunk = 0;
    CKD(cuMemGetAllocationGranularity(&chunk, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));

    // The segment: room for 4 chunks, 2 of them mapped (the segment grew twice).
    CUdeviceptr base;
    CKD(cuMemAddressReserve(&base, 4 * chunk, 0, 0, 0));
    CUmemGenericAllocationHandle handles[2];
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (int i = 0; i < 2; i++) {
        CKD(cuMemCreate(&handles[i], chunk, &prop, 0));
        CKD(cuMemMap(base + i * chunk, chunk, 0, handles[i], 0));
        CKD(cuMemSetAccess(base + i * chunk, chunk, &access, 1));
    }

    cudaStream_t producer, consumer;
    CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    cudaEvent_t filled;
    CK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
    unsigned long long *sum, *host_sum;
    CK(cudaMalloc(&sum, sizeof *sum));
    CK(cudaMallocHost(&host_sum, sizeof *host_sum));

    // One buffer of one chunk's size, starting in the middle of the first chunk.
    int *buffer = (int *)(base + chunk / 2);
    size_t n = chunk / sizeof(int);
    CK(cudaMemset(buffer, 0, chunk));
    CK(cudaMemset(sum, 0, sizeof *sum));
    CK(cudaDeviceSynchronize());

    ss_spin(producer, 20);
    CK(cudaMemsetAsync(buffer, 1, chunk, producer)); // EXPECT-SITE missing-fence
#if VMM_FENCE
    CK(cudaEventRecord(filled, producer));
    CK(cudaStreamWaitEvent(consumer, filled, 0));
#endif
    // The buffer's second half: a pointer into the second chunk.
    sum_of<<<8, 256, 0, consumer>>>(buffer + n / 2, n / 2, sum); // EXPECT-SITE missing-fence
    CK_LAUNCH();
    CK(cudaMemcpyAsync(host_sum, sum, sizeof *host_sum, cudaMemcpyDeviceToHost, consumer));
    CK(cudaStreamSynchronize(consumer));
    CK(cudaDeviceSynchronize());
    printf("%s: sum of the second half %llu (%llu if ordered)\n", PROGRAM_NAME, *host_sum,
           (unsigned long long)(n / 2) * 0x01010101ull);

    // The segment shrinks: unmap and release, then give the range back.
    for (int i = 1; i >= 0; i--) {
        CKD(cuMemUnmap(base + i * chunk, chunk));
        CKD(cuMemRelease(handles[i]));
    }
    CKD(cuMemAddressFree(base, 4 * chunk));
    CK(cudaFree(sum));
    CK(cudaFreeHost(host_sum));
    CK(cudaEventDestroy(filled));
    CK(cudaStreamDestroy(producer));
    CK(cudaStreamDestroy(consumer));
    return 0;
}
