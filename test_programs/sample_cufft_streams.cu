// NVCC-FLAGS: -lcufft
// cuFFT as people batch it over streams: one plan per stream (cufftPlan1d,
// cufftSetStream), 4 streams made with cudaStreamCreate, per stream a pinned
// input and output and a device buffer; each iteration uploads a signal,
// runs a forward C2C FFT in place, scales it with a kernel (1/NX), runs the
// inverse FFT and downloads the result, all on the stream; the host waits
// for every stream (cudaStreamSynchronize) and checks that the round trip
// gives the input back.  Every buffer and plan is used on one stream only.
// Expected: nothing of the program's own.  cuFFT's plans may load kernels the
// driver compiles from PTX at the first plan (first-launch-stall, in setup).
#include "ss_test.cuh"
#include <cufft.h>
#include <math.h>

#define NSTREAMS 4
#define NX 4096
#define BATCH 64
#define NITER 6

#define CKF(call) CK_STATUS(call, CUFFT_SUCCESS, "cuFFT")

__global__ void scale(cufftComplex *x, float f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { x[i].x *= f; x[i].y *= f; }
}

int main(void)
{
    ss_init_device();
    const int n = NX * BATCH;
    size_t bytes = n * sizeof(cufftComplex);
    cudaStream_t st[NSTREAMS];
    cufftHandle plan[NSTREAMS];
    cufftComplex *h_in[NSTREAMS], *h_out[NSTREAMS], *d[NSTREAMS];
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaStreamCreate(&st[s]));
        CKF(cufftPlan1d(&plan[s], NX, CUFFT_C2C, BATCH));
        CKF(cufftSetStream(plan[s], st[s]));
        CK(cudaMallocHost(&h_in[s], bytes));
        CK(cudaMallocHost(&h_out[s], bytes));
        CK(cudaMalloc(&d[s], bytes));
    }
    double worst = 0;
    for (int it = 0; it < NITER; it++) {
        for (int s = 0; s < NSTREAMS; s++)
            for (int i = 0; i < n; i++) {
                h_in[s][i].x = sinf(0.001f * (float)(i % NX) * (float)(s + it + 1));
                h_in[s][i].y = 0.25f * (float)((i + s) % 5);
            }
        for (int s = 0; s < NSTREAMS; s++) {
            CK(cudaMemcpyAsync(d[s], h_in[s], bytes, cudaMemcpyHostToDevice, st[s]));
            CKF(cufftExecC2C(plan[s], d[s], d[s], CUFFT_FORWARD));
            scale<<<(n + 255) / 256, 256, 0, st[s]>>>(d[s], 1.0f / NX, n);
            CK_LAUNCH();
            CKF(cufftExecC2C(plan[s], d[s], d[s], CUFFT_INVERSE));
            CK(cudaMemcpyAsync(h_out[s], d[s], bytes, cudaMemcpyDeviceToHost, st[s]));
        }
        for (int s = 0; s < NSTREAMS; s++) {
            CK(cudaStreamSynchronize(st[s]));
            for (int i = 0; i < n; i++) {
                double e = fabs(h_out[s][i].x - h_in[s][i].x) + fabs(h_out[s][i].y - h_in[s][i].y);
                if (e > worst) worst = e;
            }
        }
    }
    printf("sample_cufft_streams: worst round-trip error %.2e, %s\n", worst, worst < 1e-3 ? "OK" : "FAILED");
    for (int s = 0; s < NSTREAMS; s++) {
        CKF(cufftDestroy(plan[s]));
        CK(cudaStreamDestroy(st[s]));
        CK(cudaFreeHost(h_in[s]));
        CK(cudaFreeHost(h_out[s]));
        CK(cudaFree(d[s]));
    }
    return worst < 1e-3 ? 0 : 1;
}
