// Does a host wait on a blocking stream wait for an event record that the
// legacy default stream's barrier holds back?  (docs/performance.md, "A host
// wait follows its measured return": the answer differs between GPUs and
// drivers, which is why the what-if replay follows each wait's measured
// return instead of assuming one.)
//
//   nvcc -arch=sm_90 -o /tmp/legacy_marker_probe tools/legacy_marker_probe.cu && /tmp/legacy_marker_probe
//
// Each mode: a 30 ms kernel on a blocking stream `first`, a 30 ms kernel on
// the legacy stream after it, then the mode's calls.  Prints when the host
// wait ended and when the event completed (timing events only), in ms from
// the first launch.
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void spin(long long ns)
{
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
__global__ void tiny() {}

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main()
{
    static const char *what[] = {
        "record(e, first); cudaStreamSynchronize(first)",
        "record(e, first); cudaEventSynchronize(e)",
        "tiny<<<first>>>; record(e, first); cudaStreamSynchronize(first)",
        "nothing; cudaStreamSynchronize(first)",
    };
    cudaStream_t first;
    CK(cudaStreamCreate(&first));   // blocking: ordered with the legacy stream
    spin<<<1, 1, 0, first>>>(1000); // warm up: module loaded, both kernels resident
    tiny<<<1, 1, 0, first>>>();
    CK(cudaDeviceSynchronize());
    for (int timing = 1; timing >= 0; timing--)
        for (int mode = 0; mode < 4; mode++) {
            if (mode == 3 && !timing) continue;
            cudaEvent_t begin, e;
            CK(cudaEventCreate(&begin));
            CK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
            double t0 = now_ms();
            CK(cudaEventRecord(begin, first));
            spin<<<1, 1, 0, first>>>(30000000);
            spin<<<1, 1, 0, 0>>>(30000000);
            if (mode == 2) tiny<<<1, 1, 0, first>>>();
            if (mode != 3) CK(cudaEventRecord(e, first));
            if (mode == 1) CK(cudaEventSynchronize(e));
            else CK(cudaStreamSynchronize(first));
            double t1 = now_ms();
            CK(cudaDeviceSynchronize());
            float ms = -1;
            if (timing && mode != 3) CK(cudaEventElapsedTime(&ms, begin, e));
            printf("%-18s %-64s host wait ended %6.2f ms", timing ? "timing event" : "DisableTiming", what[mode], t1 - t0);
            if (ms >= 0) printf(", event done %6.2f ms", ms);
            printf("\n");
            CK(cudaEventDestroy(begin));
            CK(cudaEventDestroy(e));
        }
    CK(cudaStreamDestroy(first));
    return 0;
}
