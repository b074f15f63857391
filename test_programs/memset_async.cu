// missing-fence through a "synchronous" cudaMemset: on device memory cudaMemset
// returns before its memset has run (it is queued on the default stream, here
// behind a 5 ms kernel), so it orders nothing for the host.  A kernel then
// reads the buffer on a cudaStreamNonBlocking stream, which does not wait for
// the default stream: it reads the old contents.  The same in the legacy and
// the per-thread build (memset_async_ptds).
// Fixed twin: memset_async_fixed.cu (an event after the memset, waited on by
// the reader's stream).
#include "ss_test.cuh"

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "memset_async"
#endif
#ifndef FENCE_WITH_EVENT
#define FENCE_WITH_EVENT 0
#endif

#define NINTS (4 * 1024 * 1024) // 16 MiB

// Counts the elements that are not 0 (what the memset leaves).
__global__ void count_nonzero(const int *data, int n, int *count)
{ // EXPECT-NOSITE missing-fence
    int local = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        local += data[i] != 0;
    atomicAdd(count, local);
}

int main(void)
{
    ss_init_device();
    cudaStream_t reader;
    CK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
    cudaEvent_t cleared;
    CK(cudaEventCreateWithFlags(&cleared, cudaEventDisableTiming));
    int *data, *count, *host_count;
    CK(cudaMalloc(&data, NINTS * sizeof(int)));
    CK(cudaMalloc(&count, sizeof(int)));
    CK(cudaMallocHost(&host_count, sizeof(int)));
    // Load every kernel now (lazy module loading would otherwise load `count_nonzero` at
    // its first launch, and loading waits for the kernels already running,
    // which would hide the race): one empty launch each, on the default stream.
    count_nonzero<<<1, 32>>>(data, 0, count);
    ss_spin(0, 0);
    CK(cudaMemset(data, 0xff, NINTS * sizeof(int))); // old contents: all bits set
    CK(cudaMemset(count, 0, sizeof(int)));
    CK(cudaDeviceSynchronize()); // setup done

    ss_spin(0, 5);                                     // default stream busy for 5 ms
    CK(cudaMemset(data, 0, NINTS * sizeof(int)));      // EXPECT-SITE missing-fence
#if FENCE_WITH_EVENT
    CK(cudaEventRecord(cleared, 0));
    CK(cudaStreamWaitEvent(reader, cleared, 0));
#endif
    count_nonzero<<<64, 256, 0, reader>>>(data, NINTS, count); // EXPECT-SITE missing-fence
    CK_LAUNCH();
    CK(cudaMemcpyAsync(host_count, count, sizeof(int), cudaMemcpyDeviceToHost, reader));
    CK(cudaStreamSynchronize(reader));
    CK(cudaDeviceSynchronize()); // the memset may still be queued before data is freed

    fprintf(stderr, "%s: %d of %d elements were not cleared when the reader ran%s\n", PROGRAM_NAME, *host_count,
            NINTS, *host_count ? " (read before the memset)" : "");
    printf("%s: done\n", PROGRAM_NAME);
    CK(cudaFree(data));
    CK(cudaFree(count));
    CK(cudaFreeHost(host_count));
    CK(cudaEventDestroy(cleared));
    CK(cudaStreamDestroy(reader));
    return 0;
}
