// NVCC-FLAGS: -lcublas
// Written the way people run independent GEMMs concurrently with cuBLAS: one
// cublasHandle_t per stream (cublasCreate + cublasSetStream), 4 non-blocking
// streams, each uploading its own A and B from pinned memory with
// cudaMemcpyAsync on its stream and running cublasSgemm on them; each stream
// then records an event and copies its C back to pinned memory.  A final
// stream (its own handle) waits on every event (cudaStreamWaitEvent), then
// sums the four results with cublasSaxpy and copies the sum back; the host
// reads a result only after cudaStreamSynchronize of the stream that copied
// it, and checks everything against a CPU reference.  Every cross-stream read
// is ordered by an event; the D2H copies on the workers and the final
// stream's saxpys only read the same C.  A warm-up, one stream at a time,
// comes first (as GEMM benchmarks do): the first call on a handle loads the
// cuBLAS kernels (lazy module loading) and sets up the handle.
// Expected: nothing to report.
#include "ss_test.cuh"
#include <cublas_v2.h>
#include <math.h>

#define NSTREAMS 4
#define DIM 256 // square DIM x DIM matrices, column-major as cuBLAS wants them

#define CKB(call) CK_STATUS(call, CUBLAS_STATUS_SUCCESS, "cuBLAS")

// Small integers: every product and sum is exact in float (and in TF32).
static float in_a(int s, int r, int c) { return (float)((r * 7 + c * 3 + s) % 5 - 2); }
static float in_b(int s, int r, int c) { return (float)((r * 5 + c * 11 + 2 * s) % 7 - 3); }

int main(void)
{
    ss_init_device();
    const int n = DIM;
    const size_t elems = (size_t)n * n;
    const size_t bytes = elems * sizeof(float);

    // Handles, streams, events, device and pinned memory: all before any GPU work.
    cudaStream_t streams[NSTREAMS], final_stream;
    cublasHandle_t handles[NSTREAMS], final_handle;
    cudaEvent_t gemm_done[NSTREAMS];
    float *h_A[NSTREAMS], *h_B[NSTREAMS], *h_C[NSTREAMS], *h_sum;
    float *d_A[NSTREAMS], *d_B[NSTREAMS], *d_C[NSTREAMS], *d_sum;
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
        CKB(cublasCreate(&handles[s]));
        CKB(cublasSetStream(handles[s], streams[s]));
        CK(cudaEventCreateWithFlags(&gemm_done[s], cudaEventDisableTiming));
        CK(cudaMallocHost(&h_A[s], bytes));
        CK(cudaMallocHost(&h_B[s], bytes));
        CK(cudaMallocHost(&h_C[s], bytes));
        CK(cudaMalloc(&d_A[s], bytes));
        CK(cudaMalloc(&d_B[s], bytes));
        CK(cudaMalloc(&d_C[s], bytes));
        for (int c = 0; c < n; c++)
            for (int r = 0; r < n; r++) {
                h_A[s][r + (size_t)c * n] = in_a(s, r, c);
                h_B[s][r + (size_t)c * n] = in_b(s, r, c);
            }
    }
    CK(cudaStreamCreateWithFlags(&final_stream, cudaStreamNonBlocking));
    CKB(cublasCreate(&final_handle));
    CKB(cublasSetStream(final_handle, final_stream));
    CK(cudaMallocHost(&h_sum, bytes));
    CK(cudaMalloc(&d_sum, bytes));

    const float one = 1.0f, zero = 0.0f;

    // Warm-up, one stream at a time, on zeroed inputs.
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaMemsetAsync(d_A[s], 0, bytes, streams[s]));
        CK(cudaMemsetAsync(d_B[s], 0, bytes, streams[s]));
        CKB(cublasSgemm(handles[s], CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, d_A[s], n, d_B[s], n, &zero,
                        d_C[s], n));
        CK(cudaStreamSynchronize(streams[s]));
    }
    CK(cudaMemsetAsync(d_sum, 0, bytes, final_stream));
    CKB(cublasSaxpy(final_handle, (int)elems, &one, d_C[0], 1, d_sum, 1));
    CK(cudaStreamSynchronize(final_stream));

    // The concurrent part: per stream, upload, GEMM, event, download.
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaMemcpyAsync(d_A[s], h_A[s], bytes, cudaMemcpyHostToDevice, streams[s]));
        CK(cudaMemcpyAsync(d_B[s], h_B[s], bytes, cudaMemcpyHostToDevice, streams[s]));
        CKB(cublasSgemm(handles[s], CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, d_A[s], n, d_B[s], n, &zero,
                        d_C[s], n));
        CK(cudaEventRecord(gemm_done[s], streams[s]));
        CK(cudaMemcpyAsync(h_C[s], d_C[s], bytes, cudaMemcpyDeviceToHost, streams[s]));
    }

    // The join: sum = sum over s of (s + 1) * C[s], on the final stream.
    for (int s = 0; s < NSTREAMS; s++)
        CK(cudaStreamWaitEvent(final_stream, gemm_done[s], 0));
    CK(cudaMemsetAsync(d_sum, 0, bytes, final_stream));
    for (int s = 0; s < NSTREAMS; s++) {
        const float alpha = (float)(s + 1);
        CKB(cublasSaxpy(final_handle, (int)elems, &alpha, d_C[s], 1, d_sum, 1));
    }
    CK(cudaMemcpyAsync(h_sum, d_sum, bytes, cudaMemcpyDeviceToHost, final_stream));

    CK(cudaStreamSynchronize(final_stream));
    for (int s = 0; s < NSTREAMS; s++)
        CK(cudaStreamSynchronize(streams[s]));

    // CPU reference.
    long bad = 0;
    float *ref = (float *)calloc(elems, sizeof(float));
    float *ref_sum = (float *)calloc(elems, sizeof(float));
    if (!ref || !ref_sum) {
        fprintf(stderr, "sample_cublas_streams: out of host memory\n");
        return 1;
    }
    for (int s = 0; s < NSTREAMS; s++) {
        for (int c = 0; c < n; c++)
            for (int r = 0; r < n; r++) {
                float acc = 0.0f;
                for (int k = 0; k < n; k++)
                    acc += h_A[s][r + (size_t)k * n] * h_B[s][k + (size_t)c * n];
                ref[r + (size_t)c * n] = acc;
            }
        for (size_t i = 0; i < elems; i++) {
            if (fabsf(h_C[s][i] - ref[i]) > 1e-3f)
                bad++;
            ref_sum[i] += (float)(s + 1) * ref[i];
        }
    }
    for (size_t i = 0; i < elems; i++)
        if (fabsf(h_sum[i] - ref_sum[i]) > 1e-3f)
            bad++;
    printf("sample_cublas_streams: %s\n", bad ? "FAILED" : "PASSED");
    if (bad)
        fprintf(stderr, "sample_cublas_streams: %ld results wrong\n", bad);
    free(ref);
    free(ref_sum);

    CKB(cublasDestroy(final_handle)); // EXPECT-SITE device-sync-overuse
    CK(cudaStreamDestroy(final_stream));
    for (int s = 0; s < NSTREAMS; s++) {
        CKB(cublasDestroy(handles[s])); // EXPECT-SITE device-sync-overuse
        CK(cudaStreamDestroy(streams[s]));
        CK(cudaEventDestroy(gemm_done[s]));
        CK(cudaFreeHost(h_A[s]));
        CK(cudaFreeHost(h_B[s]));
        CK(cudaFreeHost(h_C[s]));
        CK(cudaFree(d_A[s]));
        CK(cudaFree(d_B[s]));
        CK(cudaFree(d_C[s]));
    }
    CK(cudaFreeHost(h_sum));
    CK(cudaFree(d_sum));
    return bad ? 1 : 0;
}
