// hw-queue-aliasing and first-launch-stall: the canonical "why don't my
// streams overlap?" program.  32 blocking streams each run kernel A then
// kernel B (10 ms each), submitted depth-first (A0 B0 A1 B1 ...).  Nothing
// orders one stream with another, so the ideal is 20 ms, but:
//   - the streams share CUDA_DEVICE_MAX_CONNECTIONS hardware queues (8 by
//     default): A(i+8) sits in the same queue behind B(i), which waits for
//     A(i), so the work runs in waves (~50 ms);
//   - with lazy module loading (the default), the first launch of wave_b
//     waits until the device is idle to load it (~10 ms of stall inside the
//     timed region).
// Fixed twins: the same binary run with CUDA_DEVICE_MAX_CONNECTIONS=32 and/or
// CUDA_MODULE_LOADING=EAGER (stream_waves.env-*.expect), and
// stream_waves_fixed.cu (this source with STREAM_WAVES_FIXED: warm-up
// outside the timed region, breadth-first submission).
#include <chrono>
#include "ss_test.cuh"

#define NSTREAMS 32
#ifndef STREAM_WAVES_FIXED
#define STREAM_WAVES_FIXED 0
#endif
#define PROGRAM (STREAM_WAVES_FIXED ? "stream_waves_fixed" : "stream_waves")

__global__ void wave_a(unsigned long long ns) { ss_spin_ns(ns); }
__global__ void wave_b(unsigned long long ns) { ss_spin_ns(ns); }

int main(void)
{
    ss_init_device();
    cudaStream_t s[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamCreate(&s[i]));
    const unsigned long long ns = ss_ms_to_ns(10);
#if STREAM_WAVES_FIXED
    // Warm-up: loads both kernels outside the measured region.
    wave_a<<<1, 1, 0, s[0]>>>(0);
    CK_LAUNCH();
    wave_b<<<1, 1, 0, s[0]>>>(0);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
#endif

    auto t0 = std::chrono::steady_clock::now();
#if STREAM_WAVES_FIXED
    // Breadth-first: no A queued behind a B that waits for its own A.
    for (int i = 0; i < NSTREAMS; i++) {
        wave_a<<<1, 1, 0, s[i]>>>(ns);
        CK_LAUNCH();
    }
    for (int i = 0; i < NSTREAMS; i++) {
        wave_b<<<1, 1, 0, s[i]>>>(ns);
        CK_LAUNCH();
    }
#else
    for (int i = 0; i < NSTREAMS; i++) {
        wave_a<<<1, 1, 0, s[i]>>>(ns); // EXPECT-SITE hw-queue-aliasing
        CK_LAUNCH();
        wave_b<<<1, 1, 0, s[i]>>>(ns); // EXPECT-SITE first-launch-stall
        CK_LAUNCH();
    }
#endif
    CK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    printf("%s: %d streams x (A, B) of 10 ms: %.1f ms (ideal 20 ms)\n", PROGRAM, NSTREAMS,
           std::chrono::duration<double, std::milli>(t1 - t0).count());
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamDestroy(s[i]));
    return 0;
}
