/*
 * Launch-bound benchmark (a): many tiny kernels over two streams, an event
 * record + cross-stream wait every 10 launches, a stream sync every 1000.
 * The GPU work is negligible, so the loop's time is the host's cost per CUDA
 * call -- exactly what a tracing tool adds to.
 *
 *   launch_bound [--launches=N]   (env BENCH_LAUNCHES, default 200000)
 */
#include "bench_util.h"

/* launch_static is this program with cudart linked statically (bench.mk). */
#ifndef BENCH_NAME
#define BENCH_NAME "launch_bound"
#endif

__global__ void tiny(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = out[i] * 0.5f + 1.0f;
}

int main(int argc, char **argv)
{
    long launches = bench_option(argc, argv, "launches", "BENCH_LAUNCHES", 200000);
    const int n = 256;
    float *buf[2];
    cudaStream_t s[2];
    cudaEvent_t ev[2];
    for (int i = 0; i < 2; i++) {
        BENCH_CHECK(cudaMalloc(&buf[i], n * sizeof(float)));
        BENCH_CHECK(cudaMemset(buf[i], 0, n * sizeof(float)));
        BENCH_CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        BENCH_CHECK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
    }
    /* warm-up: module load, first-launch costs */
    for (int i = 0; i < 100; i++)
        tiny<<<1, n, 0, s[i & 1]>>>(buf[i & 1], n);
    BENCH_CHECK(cudaDeviceSynchronize());

    long calls = 0;
    double t0 = bench_now_s();
    for (long i = 0; i < launches; i++) {
        int k = (int)(i & 1);
        tiny<<<1, n, 0, s[k]>>>(buf[k], n);
        calls++;
        if (i % 10 == 9) {
            /* the other stream waits for this one's work so far */
            BENCH_CHECK(cudaEventRecord(ev[k], s[k]));
            BENCH_CHECK(cudaStreamWaitEvent(s[k ^ 1], ev[k], 0));
            calls += 2;
        }
        if (i % 1000 == 999) {
            BENCH_CHECK(cudaStreamSynchronize(s[k]));
            calls++;
        }
    }
    BENCH_CHECK(cudaStreamSynchronize(s[0]));
    BENCH_CHECK(cudaStreamSynchronize(s[1]));
    calls += 2;
    double wall = bench_now_s() - t0;
    BENCH_CHECK(cudaGetLastError());
    bench_report(BENCH_NAME, wall, calls);

    for (int i = 0; i < 2; i++) {
        BENCH_CHECK(cudaEventDestroy(ev[i]));
        BENCH_CHECK(cudaStreamDestroy(s[i]));
        BENCH_CHECK(cudaFree(buf[i]));
    }
    return 0;
}
