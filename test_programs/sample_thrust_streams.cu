// Written the way people first put Thrust on streams, following Thrust's
// documentation of execution policies (thrust::cuda::par.on(stream)): four
// streams from cudaStreamCreate, each with its own thrust::device_vector;
// every iteration each stream fills its vector (thrust::sequence), applies a
// costly functor to it (thrust::transform, ~1 ms on an H100) and reduces it
// (thrust::reduce), and the host adds the four sums up.  Correct results --
// checked against the closed form -- but the streams never overlap:
// thrust::reduce returns its value to the host, so it waits for its stream
// (a copy of the result and a stream synchronization inside Thrust) before
// the next stream's work is even submitted, and its temporary storage comes
// from cudaMalloc and goes back through cudaFree, which waits for the whole
// device.  The fixed twin (sample_thrust_streams_fixed.cu) keeps the sums on
// the device (cub::DeviceReduce with temporary storage allocated once) and
// synchronizes once per iteration.
#include "ss_test.cuh"
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>

#define NSTREAMS 4
#define N (1 << 22)
#define ITERS 20

struct costly {
    __host__ __device__ float operator()(float x) const
    {
        // thousands of dependent operations per element: compute-bound, so
        // that overlapping the four streams would matter; exact in float
        // because the result is folded back to a small integer
        float y = x;
        for (int k = 0; k < 8000; k++) y = y * 0.5f + 1.0f;
        return y - (y - (float)((int)x % 3));
    }
};

int main(void)
{
    ss_init_device();
    cudaStream_t streams[NSTREAMS];
    for (int s = 0; s < NSTREAMS; s++) CK(cudaStreamCreate(&streams[s]));
    thrust::device_vector<float> in[NSTREAMS], out[NSTREAMS];
    for (int s = 0; s < NSTREAMS; s++) {
        in[s].resize(N);
        out[s].resize(N);
    }
    double total = 0, expect = 0;
    for (int it = 0; it < ITERS; it++) {
        for (int s = 0; s < NSTREAMS; s++) {
            thrust::sequence(thrust::cuda::par.on(streams[s]), in[s].begin(), in[s].end(), (float)(s + it));
            thrust::transform(thrust::cuda::par.on(streams[s]), in[s].begin(), in[s].end(), out[s].begin(), costly()); // EXPECT-SITE implicit-sync
            total += thrust::reduce(thrust::cuda::par.on(streams[s]), out[s].begin(), out[s].end(), 0.0f); // EXPECT-SITE pageable-async-copy
        }
        // sum over i of ((s + it + i) mod 3), for each stream
        for (int s = 0; s < NSTREAMS; s++)
            for (int r = 0; r < 3; r++) expect += (double)((s + it + r) % 3) * (double)((N - r + 2) / 3);
    }
    for (int s = 0; s < NSTREAMS; s++) CK(cudaStreamDestroy(streams[s]));
    if (total != expect) {
        fprintf(stderr, "sample_thrust_streams: sum %.0f, expected %.0f\n", total, expect);
        return 1;
    }
    printf("sample_thrust_streams: %d iterations on %d streams, sum %.0f: ok\n", ITERS, NSTREAMS, total);
    return 0;
}
