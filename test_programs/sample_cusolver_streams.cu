// NVCC-FLAGS: -lcusolver
// cuSOLVER's dense LU as batched solvers use it over streams: a cuSOLVER
// handle per non-blocking stream (cusolverDnCreate, cusolverDnSetStream), the
// workspace sized once (cusolverDnDgetrf_bufferSize) and allocated once; each
// iteration builds a diagonally dominant system on the stream (a kernel: A
// and b = A * ones), factors it (cusolverDnDgetrf), solves (cusolverDnDgetrs),
// and copies the factorization's info and the solution to pinned memory on
// the same stream, then records an event.  The host synchronizes each
// stream's event before it checks info == 0 and x == 1.
// Expected: nothing of the program's own (every host read waits for its
// stream's event; each stream reuses only its own buffers, in stream order).
#include "ss_test.cuh"
#include <cusolverDn.h>
#include <math.h>

#define NSTREAMS 4
#define N 384
#define NITER 4

#define CKS(call) CK_STATUS(call, CUSOLVER_STATUS_SUCCESS, "cuSOLVER")

// column-major A (lda = n), b[i] = sum_j A[i][j] so that the solution is ones
__global__ void build_system(double *A, double *b, int n, double shift)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double row = 0;
        for (int j = 0; j < n; j++) {
            double a = i == j ? n + shift : 1.0 / (1.0 + fabs((double)(i - j)));
            A[(size_t)j * n + i] = a;
            row += a;
        }
        b[i] = row;
    }
}

int main(void)
{
    ss_init_device();
    cudaStream_t st[NSTREAMS];
    cudaEvent_t done[NSTREAMS];
    cusolverDnHandle_t h[NSTREAMS];
    double *A[NSTREAMS], *b[NSTREAMS], *work[NSTREAMS], *hx[NSTREAMS];
    int *ipiv[NSTREAMS], *info[NSTREAMS], *hinfo[NSTREAMS];
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming));
        CKS(cusolverDnCreate(&h[s]));
        CKS(cusolverDnSetStream(h[s], st[s]));
        CK(cudaMalloc(&A[s], (size_t)N * N * sizeof(double)));
        CK(cudaMalloc(&b[s], N * sizeof(double)));
        CK(cudaMalloc(&ipiv[s], N * sizeof(int)));
        CK(cudaMalloc(&info[s], sizeof(int)));
        int lwork = 0;
        CKS(cusolverDnDgetrf_bufferSize(h[s], N, N, A[s], N, &lwork));
        CK(cudaMalloc(&work[s], (size_t)lwork * sizeof(double)));
        CK(cudaMallocHost(&hx[s], N * sizeof(double)));
        CK(cudaMallocHost(&hinfo[s], sizeof(int)));
    }
    int ok = 1;
    for (int it = 0; it < NITER; it++) {
        for (int s = 0; s < NSTREAMS; s++) {
            build_system<<<4, 128, 0, st[s]>>>(A[s], b[s], N, 1.0 + it + s);
            CK_LAUNCH();
            CKS(cusolverDnDgetrf(h[s], N, N, A[s], N, work[s], ipiv[s], info[s]));
            CKS(cusolverDnDgetrs(h[s], CUBLAS_OP_N, N, 1, A[s], N, ipiv[s], b[s], N, info[s]));
            CK(cudaMemcpyAsync(hinfo[s], info[s], sizeof(int), cudaMemcpyDeviceToHost, st[s]));
            CK(cudaMemcpyAsync(hx[s], b[s], N * sizeof(double), cudaMemcpyDeviceToHost, st[s]));
            CK(cudaEventRecord(done[s], st[s]));
        }
        for (int s = 0; s < NSTREAMS; s++) {
            CK(cudaEventSynchronize(done[s]));
            if (*hinfo[s] != 0) ok = 0;
            for (int i = 0; i < N; i++)
                if (fabs(hx[s][i] - 1.0) > 1e-9) ok = 0;
        }
    }
    printf("sample_cusolver_streams: %s\n", ok ? "OK" : "FAILED");
    for (int s = 0; s < NSTREAMS; s++) {
        CKS(cusolverDnDestroy(h[s]));
        CK(cudaStreamDestroy(st[s]));
        CK(cudaEventDestroy(done[s]));
        CK(cudaFree(A[s])); CK(cudaFree(b[s])); CK(cudaFree(ipiv[s])); CK(cudaFree(info[s])); CK(cudaFree(work[s]));
        CK(cudaFreeHost(hx[s])); CK(cudaFreeHost(hinfo[s]));
    }
    return ok ? 0 : 1;
}
