// Follows NVIDIA's CUDA sample simpleHyperQ (Samples/0_Introduction/
// simpleHyperQ): 32 streams made with cudaStreamCreate (blocking streams);
// each runs kernel_A then kernel_B, single-thread kernels that spin on the SM
// clock (the sample's clock_block, here 1 ms each instead of 10) and store the
// clocks they spun in their own element of d_a.  The whole batch is timed the
// way the sample times it: cudaEventRecord(start_event, 0) before the loop,
// cudaEventRecord(stop_event, 0) after it -- stream 0 is the legacy default
// stream, which waits for every blocking stream, so stop completes only after
// all 64 kernels ("Stop the clock in stream 0 (i.e. all previous kernels will
// be complete)").  Then, as in the sample, sum<<<1, 32>>> on stream 0 reduces
// d_a into d_a[0], a blocking cudaMemcpy copies the results back (the sample:
// "we just want to wait until all work is done so we use a blocking
// cudaMemcpy"), cudaEventSynchronize(stop_event), cudaEventElapsedTime.
//
// Why it is correct (in the normal build, which is the sample's): the legacy
// default stream orders `sum` after every kernel of the 32 blocking streams
// and the stop event after all of them; the cudaMemcpy on stream 0 runs after
// `sum` and returns when the copy is done; the host reads a[] after it.
// Both orderings rest on the legacy stream's implicit barrier -- true, and
// worth saying as information (relies-on-legacy-sync), but not a bug.  (Built
// with --default-stream per-thread this program would be wrong: no .ptds
// expect is given on purpose.)
// Differences from the sample: clock64() instead of clock() (no wrap-around);
// the kernels' clock target comes from cudaDevAttrClockRate as in the sample;
// all 64 results are copied back and checked (the sample copies d_a[0]);
// a warm-up launches each kernel once on stream 0 and synchronizes, so that
// lazy module loading of kernel_B does not stall the timed batch (the sample
// has none: there, a first-launch-stall would be a true finding).
// Expected: relies-on-legacy-sync (info) and hw-queue-aliasing (32 streams on
// 8 hardware queues, depth-first: the kernels run in waves); nothing else.
#include "ss_test.cuh"

#define NSTREAMS 32
#define KERNEL_TIME_MS 1.0f

// Spins for at least clock_count SM clocks, then stores how many it spun.
__device__ void clock_block(long long *d_o, long long clock_count)
{
    long long start_clock = clock64();
    long long clock_offset = 0;
    while (clock_offset < clock_count)
        clock_offset = clock64() - start_clock;
    d_o[0] = clock_offset;
}

// Two identical kernels so that the dependency kernel_A -> kernel_B of one
// stream can be told apart in a timeline.
// (nvcc's launch stub carries a kernel's definition line: never a finding's site.)
__global__ void kernel_A(long long *d_o, long long clock_count)
{ // EXPECT-NOSITE relies-on-legacy-sync
    clock_block(d_o, clock_count);
}

__global__ void kernel_B(long long *d_o, long long clock_count)
{ // EXPECT-NOSITE relies-on-legacy-sync
    clock_block(d_o, clock_count);
}

// Single-warp reduction: d_clocks[0] = sum of d_clocks[0..n).
__global__ void sum(long long *d_clocks, int n)
{ // EXPECT-NOSITE relies-on-legacy-sync
    __shared__ long long s_clocks[32];
    long long my_sum = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        my_sum += d_clocks[i];
    s_clocks[threadIdx.x] = my_sum;
    __syncthreads();
    for (int i = 16; i > 0; i /= 2) {
        if ((int)threadIdx.x < i)
            s_clocks[threadIdx.x] += s_clocks[threadIdx.x + i];
        __syncthreads();
    }
    if (threadIdx.x == 0 && n > 0)
        d_clocks[0] = s_clocks[0];
}

int main(void)
{
    ss_init_device();
    int clock_rate_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_rate_khz, cudaDevAttrClockRate, 0));

    const int nvalues = 2 * NSTREAMS;
    long long *a = 0, *d_a = 0;
    CK(cudaMallocHost((void **)&a, nvalues * sizeof(long long)));
    CK(cudaMalloc((void **)&d_a, nvalues * sizeof(long long)));

    cudaStream_t streams[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamCreate(&streams[i]));
    cudaEvent_t start_event, stop_event;
    CK(cudaEventCreate(&start_event));
    CK(cudaEventCreate(&stop_event));

    // Warm-up: every kernel loaded before the timed batch.
    kernel_A<<<1, 1>>>(d_a, 0);
    CK_LAUNCH();
    kernel_B<<<1, 1>>>(d_a + 1, 0);
    CK_LAUNCH();
    sum<<<1, 32>>>(d_a, 0);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());

    // Target clocks per kernel = time * clock rate (kHz = clocks per ms).
    const long long time_clocks = (long long)(KERNEL_TIME_MS * clock_rate_khz);
    long long total_clocks = 0;

    CK(cudaEventRecord(start_event, 0));
    // Queue pairs of {kernel_A, kernel_B} in separate streams.
    for (int i = 0; i < NSTREAMS; ++i) {
        kernel_A<<<1, 1, 0, streams[i]>>>(&d_a[2 * i], time_clocks);
        CK_LAUNCH();
        total_clocks += time_clocks;
        kernel_B<<<1, 1, 0, streams[i]>>>(&d_a[2 * i + 1], time_clocks);
        CK_LAUNCH();
        total_clocks += time_clocks;
    }
    // Stop the clock in stream 0 (i.e. all previous kernels will be complete).
    CK(cudaEventRecord(stop_event, 0));

    // Sum on stream 0, and a blocking copy back.
    sum<<<1, 32>>>(d_a, nvalues); // EXPECT-SITE relies-on-legacy-sync
    CK_LAUNCH();
    CK(cudaMemcpy(a, d_a, nvalues * sizeof(long long), cudaMemcpyDeviceToHost)); // EXPECT-SITE relies-on-legacy-sync

    // stop_event has completed by now; synchronize anyway, as the sample does.
    CK(cudaEventSynchronize(stop_event));
    float elapsed_ms = 0.0f;
    CK(cudaEventElapsedTime(&elapsed_ms, start_event, stop_event));
    fprintf(stderr,
            "sample_hyperq: %d streams x 2 kernels of %.1f ms: serial %.1f-%.1f ms, fully concurrent %.1f ms, "
            "measured %.2f ms\n",
            NSTREAMS, KERNEL_TIME_MS, (NSTREAMS + 1) * KERNEL_TIME_MS, 2 * NSTREAMS * KERNEL_TIME_MS,
            2 * KERNEL_TIME_MS, elapsed_ms);

    // a[0] is the sum of all 64 values (a[0] itself as kernel_A of stream 0
    // wrote it); every other element is one kernel's clocks.
    long bad = 0;
    long long rest = 0;
    for (int i = 1; i < nvalues; i++) {
        if (a[i] < time_clocks)
            bad++;
        rest += a[i];
    }
    if (a[0] < total_clocks || a[0] - rest < time_clocks)
        bad++;
    if (elapsed_ms < 2 * KERNEL_TIME_MS * 0.5f) // the events must bracket the work
        bad++;

    if (bad)
        fprintf(stderr, "sample_hyperq: %ld checks failed (a[0] %lld, total clocks %lld)\n", bad, a[0],
                total_clocks);

    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamDestroy(streams[i]));
    CK(cudaEventDestroy(start_event));
    CK(cudaEventDestroy(stop_event));
    CK(cudaFreeHost(a));
    CK(cudaFree(d_a));

    printf("sample_hyperq: %s\n", bad ? "FAILED" : "OK");
    return bad ? 1 : 0;
}
