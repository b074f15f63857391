// A triple-buffered upload pipeline, the way hand-written CUDA streams code
// overlaps copies with compute: 3 device slots; a copy stream waits for a
// slot's "free" event (cudaStreamWaitEvent(copy, slot_free[k])), uploads the
// next chunk from pinned memory into the slot, records slot_ready[k]; the
// compute stream waits for slot_ready[k], runs a kernel that reads the slot
// and accumulates into a result, records slot_free[k].  On the first lap the
// slots have never been used: the waits on slot_free[0..2] come before those
// events' first records, which CUDA treats as complete -- on purpose, there
// is nothing to wait for yet.  The host syncs the compute stream and checks
// the sum.  Both streams are non-blocking.
// Expected: no race; the first lap's three waits are info at most
// ("possibly harmless": nothing they were to order races).
// RING_RACY (sample_buffer_ring_racy.cu): slot_free[k] is recorded before the
// kernel that reads the slot, so it orders nothing of that read: the next
// lap's upload into the slot races the kernel still reading it.
#include "ss_test.cuh"

#define SLOTS 3
#define CHUNK (1 << 18)   // ints per chunk (1 MiB)
#define NCHUNKS 12
#ifndef PROGRAM_NAME
#define PROGRAM_NAME "sample_buffer_ring"
#endif

// Reads the slot after a spin, so that a racing upload overwrites it while it is read.
__global__ void accumulate(const int *slot, int n, unsigned long long *acc, unsigned long long spin_ns)
{
    if (threadIdx.x == 0) ss_spin_ns(spin_ns);
    __syncthreads();
    unsigned long long mine = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) mine += slot[i];
    atomicAdd(acc, mine);
}

int main(void)
{
    ss_init_device();
    cudaStream_t copy, compute;
    CK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    cudaEvent_t slot_free[SLOTS], slot_ready[SLOTS];
    int *d_slot[SLOTS];
    for (int k = 0; k < SLOTS; k++) {
        CK(cudaEventCreateWithFlags(&slot_free[k], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&slot_ready[k], cudaEventDisableTiming));
        CK(cudaMalloc(&d_slot[k], CHUNK * sizeof(int)));
    }
    int *h_data;
    CK(cudaMallocHost(&h_data, (size_t)NCHUNKS * CHUNK * sizeof(int)));
    unsigned long long expect = 0;
    for (size_t i = 0; i < (size_t)NCHUNKS * CHUNK; i++) { h_data[i] = (int)(i % 1000); expect += i % 1000; }
    unsigned long long *d_acc, *h_acc;
    CK(cudaMalloc(&d_acc, sizeof *d_acc));
    CK(cudaMallocHost(&h_acc, sizeof *h_acc));
    CK(cudaMemsetAsync(d_acc, 0, sizeof *d_acc, compute));
    for (int c = 0; c < NCHUNKS; c++) {
        int k = c % SLOTS;
        CK(cudaStreamWaitEvent(copy, slot_free[k], 0)); // EXPECT-SITE unrecorded-event-wait
        CK(cudaMemcpyAsync(d_slot[k], h_data + (size_t)c * CHUNK, CHUNK * sizeof(int), cudaMemcpyHostToDevice, copy));
        CK(cudaEventRecord(slot_ready[k], copy));
        CK(cudaStreamWaitEvent(compute, slot_ready[k], 0));
#ifdef RING_RACY
        CK(cudaEventRecord(slot_free[k], compute)); // too early: before the read
#endif
        accumulate<<<64, 256, 0, compute>>>(d_slot[k], CHUNK, d_acc, 300000);
        CK_LAUNCH();
#ifndef RING_RACY
        CK(cudaEventRecord(slot_free[k], compute));
#endif
    }
    CK(cudaMemcpyAsync(h_acc, d_acc, sizeof *h_acc, cudaMemcpyDeviceToHost, compute));
    CK(cudaStreamSynchronize(compute));
    int ok = *h_acc == expect;
    printf("%s: sum %llu, expected %llu: %s\n", PROGRAM_NAME, *h_acc, expect, ok ? "OK" : "WRONG (a slot was overwritten while read)");
    CK(cudaDeviceSynchronize());
    for (int k = 0; k < SLOTS; k++) {
        CK(cudaEventDestroy(slot_free[k]));
        CK(cudaEventDestroy(slot_ready[k]));
        CK(cudaFree(d_slot[k]));
    }
    CK(cudaFreeHost(h_data));
    return 0;
}
