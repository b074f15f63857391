// NVCC-FLAGS: -lcuda
// Stream memory operations instead of events, as NCCL, NVSHMEM, TensorRT-LLM
// and PyTorch's symmetric memory order streams: the producer's kernel on
// non-blocking stream A is followed by cuStreamWriteValue32(A, flag, i), and
// the consumer's non-blocking stream B waits with
// cuStreamWaitValue32(B, flag, i, CU_STREAM_WAIT_VALUE_GEQ) before its
// kernel.  The write lands only once the producer's kernel is done, and the
// consumer's kernel starts only once the flag holds i: the two kernels are
// ordered without an event.  Correct.
// Racy twin: stream_memop_handoff_racy.cu (the write-value is enqueued on an
// idle third stream: it lands at once, while the producer still spins).
#include "ss_test.cuh"
#include <cuda.h>

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "stream_memop_handoff"
#endif
#ifndef WRITE_ON_PRODUCER_STREAM
#define WRITE_ON_PRODUCER_STREAM 1
#endif

#define ITERS 6
#define NELEMS (64 * 1024)

#define CU_CK(call)                                                                 \
    do {                                                                            \
        CUresult cu_err_ = (call);                                                  \
        if (cu_err_ != CUDA_SUCCESS) {                                              \
            const char *cu_msg_ = "?";                                              \
            cuGetErrorString(cu_err_, &cu_msg_);                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,    \
                    cu_msg_);                                                       \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

// Spins, then writes: a reader not ordered after it sees the old contents.
__global__ void produce(int *buf, int n, int value, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        buf[i] = value;
}

// Counts the elements that are not `value`.
__global__ void consume(const int *buf, int n, int value, int *wrong)
{ // EXPECT-NOSITE missing-fence
    int local = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        local += buf[i] != value;
    if (local)
        atomicAdd(wrong, local);
}

int main(void)
{
    ss_init_device();
    cudaStream_t producer, consumer, signal;
    CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&signal, cudaStreamNonBlocking));
    int *bufs[ITERS], *wrong;
    unsigned int *flag;   // the word the streams hand over through, in device memory
    for (int it = 0; it < ITERS; it++) CK(cudaMalloc(&bufs[it], NELEMS * sizeof(int)));
    CK(cudaMalloc(&wrong, ITERS * sizeof(int)));
    CK(cudaMalloc(&flag, sizeof *flag));
    // Load both kernels now (a first launch under lazy loading waits for the
    // device), then the old contents: 0, and the flag: 0.
    produce<<<1, 32>>>(nullptr, 0, 0, 0);
    consume<<<1, 32>>>(nullptr, 0, 0, nullptr);
    CK_LAUNCH();
    for (int it = 0; it < ITERS; it++) CK(cudaMemset(bufs[it], 0, NELEMS * sizeof(int)));
    CK(cudaMemset(wrong, 0, ITERS * sizeof(int)));
    CK(cudaMemset(flag, 0, sizeof *flag));
    CK(cudaDeviceSynchronize()); // setup done

    for (int it = 0; it < ITERS; it++) {
        produce<<<16, 256, 0, producer>>>(bufs[it], NELEMS, it + 1, ss_ms_to_ns(2)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        cudaStream_t s = WRITE_ON_PRODUCER_STREAM ? producer : signal;
        CU_CK(cuStreamWriteValue32((CUstream)s, (CUdeviceptr)flag, (cuuint32_t)(it + 1), CU_STREAM_WRITE_VALUE_DEFAULT));
        CU_CK(cuStreamWaitValue32((CUstream)consumer, (CUdeviceptr)flag, (cuuint32_t)(it + 1),
                                  CU_STREAM_WAIT_VALUE_GEQ));
        consume<<<16, 256, 0, consumer>>>(bufs[it], NELEMS, it + 1, wrong + it); // EXPECT-SITE missing-fence
        CK_LAUNCH();
    }
    CK(cudaStreamSynchronize(consumer));
    CK(cudaStreamSynchronize(producer));
    CK(cudaStreamSynchronize(signal));
    int w[ITERS], total = 0;
    CK(cudaMemcpy(w, wrong, sizeof w, cudaMemcpyDeviceToHost));
    for (int it = 0; it < ITERS; it++) total += w[it];
    // Whether the race shows depends on timing: stderr only.
    fprintf(stderr, "%s: %d of %d elements read before the producer wrote them\n", PROGRAM_NAME, total,
            ITERS * NELEMS);
    printf("%s: done\n", PROGRAM_NAME);
    for (int it = 0; it < ITERS; it++) CK(cudaFree(bufs[it]));
    CK(cudaFree(wrong));
    CK(cudaFree(flag));
    CK(cudaStreamDestroy(producer));
    CK(cudaStreamDestroy(consumer));
    CK(cudaStreamDestroy(signal));
    return 0;
}
