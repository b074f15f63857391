// event-timing-gap: the usual way to time GPU work,
//     cudaEventRecord(start, 0); ...work on 8 streams...; cudaEventRecord(stop, 0);
//     cudaEventSynchronize(stop); cudaEventElapsedTime(&ms, start, stop);
// with streams made by cudaStreamCreate.
//   - legacy build: start and stop are recorded on the legacy default stream,
//     which is ordered with every blocking stream: the interval covers the
//     work (~20 ms) and the bandwidth printed is right.
//   - per-thread build (event_timing_gap_ptds): both events are recorded on
//     the per-thread default stream, which waits for no other stream: the
//     interval covers nothing and the bandwidth printed is nonsense.
// Fixed twin: event_timing_gap_fixed.cu (stop's stream first waits on an event
// recorded on every worker stream).
#include "ss_test.cuh"

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "event_timing_gap"
#endif
#ifndef JOIN_WORKERS
#define JOIN_WORKERS 0
#endif

#define NSTREAMS 8
#define ROUNDS 2
#define CHUNK (256 * 1024) // floats: 1 MiB per copy
#define TOTAL (NSTREAMS * ROUNDS * CHUNK)

__global__ void compute(const float *in, float *out, int n, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[i] * in[i];
}

int main(void)
{
    ss_init_device();
    cudaStream_t s[NSTREAMS];
    cudaEvent_t worker_done[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++) {
        CK(cudaStreamCreate(&s[i]));
        CK(cudaEventCreateWithFlags(&worker_done[i], cudaEventDisableTiming));
    }
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    float *h_in, *h_out, *d_in, *d_out;
    CK(cudaMallocHost(&h_in, TOTAL * sizeof(float)));
    CK(cudaMallocHost(&h_out, TOTAL * sizeof(float)));
    CK(cudaMalloc(&d_in, TOTAL * sizeof(float)));
    CK(cudaMalloc(&d_out, TOTAL * sizeof(float)));
    for (int k = 0; k < TOTAL; k++)
        h_in[k] = (float)(k % 100);

    CK(cudaEventRecord(start, 0)); // EXPECT-SITE event-timing-gap
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < NSTREAMS; i++) {
            size_t off = ((size_t)r * NSTREAMS + i) * CHUNK;
            CK(cudaMemcpyAsync(d_in + off, h_in + off, CHUNK * sizeof(float), cudaMemcpyHostToDevice, s[i]));
            compute<<<16, 256, 0, s[i]>>>(d_in + off, d_out + off, CHUNK, ss_ms_to_ns(9));
            CK_LAUNCH();
            CK(cudaMemcpyAsync(h_out + off, d_out + off, CHUNK * sizeof(float), cudaMemcpyDeviceToHost, s[i]));
        }
#if JOIN_WORKERS
    for (int i = 0; i < NSTREAMS; i++) {
        CK(cudaEventRecord(worker_done[i], s[i]));
        CK(cudaStreamWaitEvent(0, worker_done[i], 0));
    }
#endif
    CK(cudaEventRecord(stop, 0)); // EXPECT-SITE event-timing-gap
    CK(cudaEventSynchronize(stop));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, start, stop)); // EXPECT-SITE event-timing-gap
    const double bytes = 2.0 * TOTAL * sizeof(float);
    // Timing goes to stderr: stdout stays identical from run to run.
    fprintf(stderr, "%s: %.3f ms, %.1f GB/s copied\n", PROGRAM_NAME, ms, ms > 0 ? bytes / (ms * 1e6) : 0.0);

    CK(cudaDeviceSynchronize()); // whatever the events covered, the results are needed now
    int bad = 0;
    for (int k = 0; k < TOTAL; k++)
        bad += h_out[k] != h_in[k] * h_in[k];
    printf("%s: %d wrong results\n", PROGRAM_NAME, bad);
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaFreeHost(h_in));
    CK(cudaFreeHost(h_out));
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    for (int i = 0; i < NSTREAMS; i++) {
        CK(cudaEventDestroy(worker_done[i]));
        CK(cudaStreamDestroy(s[i]));
    }
    return 0;
}
