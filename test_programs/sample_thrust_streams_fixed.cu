// The fixed twin of sample_thrust_streams.cu, as the CUB documentation writes
// a reduction: the same four streams, vectors and costly functor, but each
// stream's sum is reduced with cub::DeviceReduce::Sum into device memory,
// with the temporary storage it asks for allocated once per stream before the
// loop; thrust::sequence and thrust::transform take thrust::cuda::par_nosync
// (they need no synchronization of their own).  Each iteration submits every
// stream's work, then copies the four sums to pinned memory on their streams
// and synchronizes each stream once: the four streams overlap, and the host
// waits once per stream per iteration for results it reads.
// Expected: nothing to report.
#include "ss_test.cuh"
#include <cub/device/device_reduce.cuh>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>

#define NSTREAMS 4
#define N (1 << 22)
#define ITERS 20

struct costly {
    __host__ __device__ float operator()(float x) const
    {
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
    float *d_sum, *h_sum;
    void *temp[NSTREAMS];
    size_t temp_bytes = 0;
    CK(cudaMalloc(&d_sum, NSTREAMS * sizeof(float)));
    CK(cudaMallocHost(&h_sum, NSTREAMS * sizeof(float)));
    for (int s = 0; s < NSTREAMS; s++) {
        in[s].resize(N);
        out[s].resize(N);
    }
    // the size CUB needs, asked once (a null temporary pointer only sizes)
    CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, thrust::raw_pointer_cast(out[0].data()), d_sum, N));
    for (int s = 0; s < NSTREAMS; s++) CK(cudaMalloc(&temp[s], temp_bytes));
    double total = 0, expect = 0;
    for (int it = 0; it < ITERS; it++) {
        for (int s = 0; s < NSTREAMS; s++) {
            thrust::sequence(thrust::cuda::par_nosync.on(streams[s]), in[s].begin(), in[s].end(), (float)(s + it));
            thrust::transform(thrust::cuda::par_nosync.on(streams[s]), in[s].begin(), in[s].end(), out[s].begin(),
                              costly());
            size_t bytes = temp_bytes;
            CK(cub::DeviceReduce::Sum(temp[s], bytes, thrust::raw_pointer_cast(out[s].data()), d_sum + s, N,
                                      streams[s]));
            CK(cudaMemcpyAsync(h_sum + s, d_sum + s, sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
        }
        for (int s = 0; s < NSTREAMS; s++) {
            CK(cudaStreamSynchronize(streams[s]));
            total += h_sum[s];
            for (int r = 0; r < 3; r++) expect += (double)((s + it + r) % 3) * (double)((N - r + 2) / 3);
        }
    }
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaFree(temp[s]));
        CK(cudaStreamDestroy(streams[s]));
    }
    CK(cudaFree(d_sum));
    CK(cudaFreeHost(h_sum));
    if (total != expect) {
        fprintf(stderr, "sample_thrust_streams_fixed: sum %.0f, expected %.0f\n", total, expect);
        return 1;
    }
    printf("sample_thrust_streams_fixed: %d iterations on %d streams, sum %.0f: ok\n", ITERS, NSTREAMS, total);
    return 0;
}
