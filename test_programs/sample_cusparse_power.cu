// NVCC-FLAGS: -lcusparse -lcublas
// Power iteration with cuSPARSE and cuBLAS on streams, as iterative solvers
// are written: two independent problems (a 1-D Laplacian of different
// sizes), each on its own non-blocking stream with its own cuSPARSE and cuBLAS
// handles bound to that stream.  The SpMV buffer is sized
// (cusparseSpMV_bufferSize) and allocated once.  Each step: y = A x
// (cusparseSpMV), ||y|| into device memory (cublasDnrm2 in
// CUBLAS_POINTER_MODE_DEVICE: no host round trip), x = y / ||y|| (a kernel).
// After the last step each stream copies its norm (the largest eigenvalue's
// estimate) to pinned memory and the host synchronizes that stream.
// Expected: nothing of the program's own (each stream touches only its own
// vectors; the host reads after a stream sync).
#include "ss_test.cuh"
#include <cublas_v2.h>
#include <cusparse.h>
#include <math.h>

#define NPROB 2
#define NSTEPS 200

#define CKSP(call) CK_STATUS(call, CUSPARSE_STATUS_SUCCESS, "cuSPARSE")
#define CKB(call) CK_STATUS(call, CUBLAS_STATUS_SUCCESS, "cuBLAS")

// the 1-D Laplacian (2 on the diagonal, -1 beside it) in CSR
__global__ void build_laplacian(int n, int *rowptr, int *col, double *val)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int at = i == 0 ? 0 : 3 * i - 1;
        rowptr[i] = at;
        if (i > 0) { col[at] = i - 1; val[at] = -1.0; at++; }
        col[at] = i; val[at] = 2.0; at++;
        if (i < n - 1) { col[at] = i + 1; val[at] = -1.0; at++; }
        if (i == n - 1) rowptr[n] = at;
    }
}

__global__ void init_vector(double *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + 0.001 * i);
}

__global__ void scale_by_inverse(const double *y, const double *norm, double *x, int n)
{
    double inv = 1.0 / *norm;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = y[i] * inv;
}

int main(void)
{
    ss_init_device();
    const int sizes[NPROB] = { 1 << 14, 1 << 16 };
    cudaStream_t st[NPROB];
    cusparseHandle_t sp[NPROB];
    cublasHandle_t bl[NPROB];
    cusparseSpMatDescr_t A[NPROB];
    cusparseDnVecDescr_t vx[NPROB], vy[NPROB];
    int *rowptr[NPROB], *col[NPROB];
    double *val[NPROB], *x[NPROB], *y[NPROB], *norm[NPROB], *hnorm[NPROB];
    void *buf[NPROB];
    const double one = 1.0, zero = 0.0;
    for (int p = 0; p < NPROB; p++) {
        int n = sizes[p], nnz = 3 * n - 2;
        CK(cudaStreamCreateWithFlags(&st[p], cudaStreamNonBlocking));
        CKSP(cusparseCreate(&sp[p]));
        CKSP(cusparseSetStream(sp[p], st[p]));
        CKB(cublasCreate(&bl[p]));
        CKB(cublasSetStream(bl[p], st[p]));
        CKB(cublasSetPointerMode(bl[p], CUBLAS_POINTER_MODE_DEVICE));
        CK(cudaMalloc(&rowptr[p], (n + 1) * sizeof(int)));
        CK(cudaMalloc(&col[p], nnz * sizeof(int)));
        CK(cudaMalloc(&val[p], nnz * sizeof(double)));
        CK(cudaMalloc(&x[p], n * sizeof(double)));
        CK(cudaMalloc(&y[p], n * sizeof(double)));
        CK(cudaMalloc(&norm[p], sizeof(double)));
        CK(cudaMallocHost(&hnorm[p], sizeof(double)));
        build_laplacian<<<64, 256, 0, st[p]>>>(n, rowptr[p], col[p], val[p]);
        CK_LAUNCH();
        init_vector<<<64, 256, 0, st[p]>>>(x[p], n);
        CK_LAUNCH();
        CKSP(cusparseCreateCsr(&A[p], n, n, nnz, rowptr[p], col[p], val[p], CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        CKSP(cusparseCreateDnVec(&vx[p], n, x[p], CUDA_R_64F));
        CKSP(cusparseCreateDnVec(&vy[p], n, y[p], CUDA_R_64F));
        size_t bytes = 0;
        CKSP(cusparseSpMV_bufferSize(sp[p], CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A[p], vx[p], &zero, vy[p],
                                     CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
        CK(cudaMalloc(&buf[p], bytes ? bytes : 1));
    }
    for (int step = 0; step < NSTEPS; step++)
        for (int p = 0; p < NPROB; p++) {
            int n = sizes[p];
            CKSP(cusparseSpMV(sp[p], CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A[p], vx[p], &zero, vy[p], CUDA_R_64F,
                              CUSPARSE_SPMV_ALG_DEFAULT, buf[p]));
            CKB(cublasDnrm2(bl[p], n, y[p], 1, norm[p]));
            scale_by_inverse<<<64, 256, 0, st[p]>>>(y[p], norm[p], x[p], n);
            CK_LAUNCH();
        }
    int ok = 1;
    for (int p = 0; p < NPROB; p++) {
        CK(cudaMemcpyAsync(hnorm[p], norm[p], sizeof(double), cudaMemcpyDeviceToHost, st[p]));
        CK(cudaStreamSynchronize(st[p]));
        // ||A x|| for a unit x tends to the largest eigenvalue, just under 4
        if (!(*hnorm[p] > 3.5 && *hnorm[p] < 4.0)) ok = 0;
        printf("problem %d: n=%d, largest eigenvalue ~ %.6f\n", p, sizes[p], *hnorm[p]);
    }
    printf("sample_cusparse_power: %s\n", ok ? "OK" : "FAILED");
    for (int p = 0; p < NPROB; p++) {
        CKSP(cusparseDestroySpMat(A[p]));
        CKSP(cusparseDestroyDnVec(vx[p]));
        CKSP(cusparseDestroyDnVec(vy[p]));
        CKSP(cusparseDestroy(sp[p]));
        CKB(cublasDestroy(bl[p]));
        CK(cudaFree(rowptr[p])); CK(cudaFree(col[p])); CK(cudaFree(val[p])); CK(cudaFree(x[p])); CK(cudaFree(y[p]));
        CK(cudaFree(norm[p])); CK(cudaFree(buf[p])); CK(cudaFreeHost(hnorm[p]));
        CK(cudaStreamDestroy(st[p]));
    }
    return ok ? 0 : 1;
}
