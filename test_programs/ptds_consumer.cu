// A consumer on "stream 0" of work produced on streams made with
// cudaStreamCreate.  8 blocking streams each fill their slice of buf; then
// `consume` on stream 0 reduces all of buf.  No event orders them:
//   - legacy build: stream 0 is the legacy default stream, whose implicit
//     barrier waits for the blocking streams: correct, by that barrier alone
//     (relies-on-legacy-sync, info);
//   - per-thread build (ptds_consumer_ptds, --default-stream per-thread):
//     stream 0 is the per-thread default stream, which waits for no other
//     stream: `consume` reads slices still being produced (missing-fence).
// Fixed twin: ptds_consumer_fixed.cu (events), correct in both builds.
#include "ss_test.cuh"

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "ptds_consumer"
#endif
#ifndef FENCE_WITH_EVENTS
#define FENCE_WITH_EVENTS 0
#endif

#define NSTREAMS 8
#define CHUNK 4096

// Fills the slice with 1s after a 3 ms spin (the first thread spins, the
// block waits for it), so an unordered reader sees the old contents (0s).
__global__ void produce(int *slice, int n, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        slice[i] = 1;
}

// One block: sums buf into *out (no atomics, so *out needs no initialization).
__global__ void consume(const int *buf, int n, int *out)
{ // EXPECT-NOSITE missing-fence EXPECT-NOSITE relies-on-legacy-sync
    __shared__ int partial[256];
    int local = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        local += buf[i];
    partial[threadIdx.x] = local;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride)
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = partial[0];
}

int main(void)
{
    ss_init_device();
    cudaStream_t s[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamCreate(&s[i]));
#if FENCE_WITH_EVENTS
    cudaEvent_t produced[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaEventCreateWithFlags(&produced[i], cudaEventDisableTiming));
#endif
    int *buf, *out;
    CK(cudaMalloc(&buf, NSTREAMS * CHUNK * sizeof(int)));
    CK(cudaMalloc(&out, sizeof(int)));
    // Load every kernel now (lazy module loading would otherwise load `consume` at
    // its first launch, and loading waits for the kernels already running,
    // which would hide the race): one empty launch each, on the default stream.
    produce<<<1, 256>>>(buf, 0, 0);
    consume<<<1, 256>>>(buf, 0, out);
    CK_LAUNCH();
    CK(cudaMemset(buf, 0, NSTREAMS * CHUNK * sizeof(int)));
    CK(cudaDeviceSynchronize()); // setup done before the streams start

    for (int i = 0; i < NSTREAMS; i++) {
        produce<<<1, 256, 0, s[i]>>>(buf + i * CHUNK, CHUNK, ss_ms_to_ns(3)); // EXPECT-SITE missing-fence
        CK_LAUNCH();
#if FENCE_WITH_EVENTS
        CK(cudaEventRecord(produced[i], s[i]));
#endif
    }
#if FENCE_WITH_EVENTS
    // After all launches: a wait queued on the legacy stream between two
    // launches on blocking streams would hold back the later ones.
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamWaitEvent(0, produced[i], 0));
#endif
    consume<<<1, 256>>>(buf, NSTREAMS * CHUNK, out); // EXPECT-SITE missing-fence EXPECT-SITE relies-on-legacy-sync
    CK_LAUNCH();
    int total = -1;
    CK(cudaMemcpy(&total, out, sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaDeviceSynchronize()); // producers may still run (per-thread build) before buf is freed

    fprintf(stderr, "%s: consumed %d, produced %d%s\n", PROGRAM_NAME, total, NSTREAMS * CHUNK,
            total == NSTREAMS * CHUNK ? "" : " (consumed before produced)");
    printf("%s: done\n", PROGRAM_NAME);
    CK(cudaFree(buf));
    CK(cudaFree(out));
    for (int i = 0; i < NSTREAMS; i++) {
#if FENCE_WITH_EVENTS
        CK(cudaEventDestroy(produced[i]));
#endif
        CK(cudaStreamDestroy(s[i]));
    }
    return 0;
}
