// relies-on-legacy-sync: 32 streams made with cudaStreamCreate (blocking
// streams) each run kernel_A and kernel_B, which write one element of `buf`
// each; then `sum` on stream 0 reads all of buf.  Nothing but the legacy
// default stream's implicit barrier orders `sum` after the 64 writers:
//   - built normally, stream 0 is the legacy default stream, which waits for
//     every blocking stream: the result is right, but only because of that
//     barrier (relies-on-legacy-sync, info);
//   - built with --default-stream per-thread (legacy_barrier_needed_ptds),
//     stream 0 is the per-thread default stream, which waits for nothing:
//     `sum` reads buf while the writers still spin (missing-fence).
// Fixed twin: legacy_barrier_needed_fixed.cu (an event per stream, waited on
// by stream 0 before `sum`), correct in both builds.
#include "ss_test.cuh"

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "legacy_barrier_needed"
#endif
#ifndef FENCE_WITH_EVENTS
#define FENCE_WITH_EVENTS 0
#endif

#define NSTREAMS 32
#define NELEMS (2 * NSTREAMS)

// Each writer spins, then stores: a reader that is not ordered after it sees
// the old value (0).
__global__ void kernel_A(int *elem, unsigned long long spin_ns)
{
    ss_spin_ns(spin_ns);
    *elem = 1;
}

__global__ void kernel_B(int *elem, unsigned long long spin_ns)
{
    ss_spin_ns(spin_ns);
    *elem = 2;
}

__global__ void sum(const int *buf, int n, int *out)
{ // EXPECT-NOSITE missing-fence EXPECT-NOSITE relies-on-legacy-sync
    __shared__ int partial[32];
    int local = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        local += buf[i];
    partial[threadIdx.x] = local;
    __syncthreads();
    if (threadIdx.x == 0) {
        int total = 0;
        for (int i = 0; i < (int)blockDim.x; i++)
            total += partial[i];
        *out = total;
    }
}

int main(void)
{
    ss_init_device();
    cudaStream_t s[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamCreate(&s[i])); // blocking streams
#if FENCE_WITH_EVENTS
    cudaEvent_t done[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
#endif
    int *buf, *out;
    CK(cudaMalloc(&buf, NELEMS * sizeof(int)));
    CK(cudaMalloc(&out, sizeof(int)));
    // Load every kernel now (lazy module loading would otherwise load `sum` at
    // its first launch, and loading waits for the kernels already running,
    // which would hide the race): one empty launch each, on the default stream.
    kernel_A<<<1, 1>>>(buf, 0);
    kernel_B<<<1, 1>>>(buf, 0);
    sum<<<1, 32>>>(buf, 0, out);
    CK_LAUNCH();
    CK(cudaMemset(buf, 0, NELEMS * sizeof(int)));
    CK(cudaDeviceSynchronize()); // setup done before the streams start

    const unsigned long long spin = ss_ms_to_ns(2);
    for (int i = 0; i < NSTREAMS; i++) {
        kernel_A<<<1, 1, 0, s[i]>>>(buf + 2 * i, spin); // EXPECT-SITE missing-fence
        CK_LAUNCH();
        kernel_B<<<1, 1, 0, s[i]>>>(buf + 2 * i + 1, spin); // EXPECT-SITE missing-fence
        CK_LAUNCH();
#if FENCE_WITH_EVENTS
        CK(cudaEventRecord(done[i], s[i]));
#endif
    }
#if FENCE_WITH_EVENTS
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamWaitEvent(0, done[i], 0)); // stream 0: legacy or per-thread, either way ordered now
#endif
    sum<<<1, 32>>>(buf, NELEMS, out); // EXPECT-SITE missing-fence EXPECT-SITE relies-on-legacy-sync
    CK_LAUNCH();
    int host_out = -1;
    CK(cudaMemcpy(&host_out, out, sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaDeviceSynchronize()); // the writers may still run (per-thread build) before buf is freed

    const int expected = NSTREAMS * (1 + 2);
    // Whether the race shows depends on the build and on timing: stderr only.
    fprintf(stderr, "%s: sum %d, expected %d%s\n", PROGRAM_NAME, host_out, expected,
            host_out == expected ? "" : " (sum read buf before the writers had written it)");
    printf("%s: done\n", PROGRAM_NAME);
    CK(cudaFree(buf));
    CK(cudaFree(out));
    for (int i = 0; i < NSTREAMS; i++) {
#if FENCE_WITH_EVENTS
        CK(cudaEventDestroy(done[i]));
#endif
        CK(cudaStreamDestroy(s[i]));
    }
    return 0;
}
