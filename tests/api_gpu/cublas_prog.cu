// GPU check of kernel parameters for launches made inside cuBLAS (its own
// static cudart: the shim's runtime level cannot map its stubs, the
// driver-level callback must supply the parameters).  Prints the device
// pointers of A, B, C; tests/api_gpu/run.sh checks that a launch record of
// the gemm carries them among its params.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

int main()
{
    const int n = 256;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    if (cudaMalloc(&a, n * n * sizeof(float)) || cudaMalloc(&b, n * n * sizeof(float)) ||
        cudaMalloc(&c, n * n * sizeof(float)))
        return 1;
    cudaMemset(a, 0, n * n * sizeof(float));
    cudaMemset(b, 0, n * n * sizeof(float));
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return 2;
    cublasSetStream(h, s);
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < 3; i++)
        if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n) != CUBLAS_STATUS_SUCCESS)
            return 3;
    if (cudaStreamSynchronize(s) != cudaSuccess)
        return 4;
    std::printf("A=%p B=%p C=%p\n", (void *)a, (void *)b, (void *)c);
    cublasDestroy(h);
    return 0;
}
