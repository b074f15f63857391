// NVCC-FLAGS: -lcurand
// cuRAND's host API as Monte Carlo codes use it over streams: one generator
// per non-blocking stream (curandCreateGenerator, curandSetStream, its own
// seed), each iteration generating 2*N uniforms into the stream's buffer and
// counting on the same stream the points that fall inside the unit circle
// (a kernel with a block reduction and one atomicAdd per block) into the
// stream's counter; each stream then records an event; a reduction stream
// waits on all four events (cudaStreamWaitEvent) and sums the counters into
// a total that it copies to pinned memory.  The host syncs the reduction
// stream, then checks that the estimate of pi is close.  The counters are
// cleared with cudaMemsetAsync on their own stream each iteration, after the
// reduction stream read them (the streams wait for the reduction stream's
// event of the previous iteration).
// Expected: nothing of the program's own; cuRAND's own idle
// cudaDeviceSynchronize when a generator starts is info, said to be cuRAND's.
#include "ss_test.cuh"
#include <curand.h>
#include <math.h>

#define NSTREAMS 4
#define NPTS (1 << 20)
#define NITER 8

#define CKR(call) CK_STATUS(call, CURAND_STATUS_SUCCESS, "cuRAND")

__global__ void count_inside(const float *xy, int n, unsigned long long *count)
{
    __shared__ unsigned int block_count;
    if (threadIdx.x == 0) block_count = 0;
    __syncthreads();
    unsigned int mine = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float x = xy[2 * i], y = xy[2 * i + 1];
        mine += x * x + y * y <= 1.0f;
    }
    atomicAdd(&block_count, mine);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(count, (unsigned long long)block_count);
}

__global__ void sum_counts(unsigned long long *const *counts, int k, unsigned long long *total)
{
    unsigned long long t = 0;
    for (int i = 0; i < k; i++) t += *counts[i];
    *total += t;
}

int main(void)
{
    ss_init_device();
    cudaStream_t st[NSTREAMS], red;
    cudaEvent_t done[NSTREAMS], reduced;
    curandGenerator_t gen[NSTREAMS];
    float *xy[NSTREAMS];
    unsigned long long *count[NSTREAMS], **d_counts, *d_total, *h_total;
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming));
        CKR(curandCreateGenerator(&gen[s], CURAND_RNG_PSEUDO_PHILOX4_32_10));
        CKR(curandSetStream(gen[s], st[s]));
        CKR(curandSetPseudoRandomGeneratorSeed(gen[s], 1234ull + 77ull * s));
        CK(cudaMalloc(&xy[s], 2 * NPTS * sizeof(float)));
        CK(cudaMalloc(&count[s], sizeof(unsigned long long)));
    }
    CK(cudaStreamCreateWithFlags(&red, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&reduced, cudaEventDisableTiming));
    CK(cudaMalloc(&d_counts, NSTREAMS * sizeof(unsigned long long *)));
    CK(cudaMemcpy(d_counts, count, sizeof count, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&d_total, sizeof(unsigned long long)));
    CK(cudaMemset(d_total, 0, sizeof(unsigned long long)));
    CK(cudaMallocHost(&h_total, sizeof(unsigned long long)));
    CK(cudaEventRecord(reduced, red));
    for (int it = 0; it < NITER; it++) {
        for (int s = 0; s < NSTREAMS; s++) {
            CK(cudaStreamWaitEvent(st[s], reduced, 0));   // the reduction read last iteration's counter
            CK(cudaMemsetAsync(count[s], 0, sizeof(unsigned long long), st[s]));
            CKR(curandGenerateUniform(gen[s], xy[s], 2 * NPTS));
            count_inside<<<128, 256, 0, st[s]>>>(xy[s], NPTS, count[s]);
            CK_LAUNCH();
            CK(cudaEventRecord(done[s], st[s]));
        }
        for (int s = 0; s < NSTREAMS; s++) CK(cudaStreamWaitEvent(red, done[s], 0));
        sum_counts<<<1, 1, 0, red>>>(d_counts, NSTREAMS, d_total);
        CK_LAUNCH();
        CK(cudaEventRecord(reduced, red));
    }
    CK(cudaMemcpyAsync(h_total, d_total, sizeof(unsigned long long), cudaMemcpyDeviceToHost, red));
    CK(cudaStreamSynchronize(red));
    double pi = 4.0 * (double)*h_total / ((double)NPTS * NSTREAMS * NITER);
    int ok = fabs(pi - M_PI) < 0.01;
    printf("sample_curand_streams: pi ~ %.5f, %s\n", pi, ok ? "OK" : "FAILED");
    CK(cudaDeviceSynchronize());
    for (int s = 0; s < NSTREAMS; s++) {
        CKR(curandDestroyGenerator(gen[s]));
        CK(cudaStreamDestroy(st[s]));
        CK(cudaFree(xy[s]));
        CK(cudaFree(count[s]));
    }
    return ok ? 0 : 1;
}
