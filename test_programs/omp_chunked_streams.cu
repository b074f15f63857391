// NVCC-FLAGS: -Xcompiler -fopenmp
// The CUDA training exercise "OpenMP threads feeding streams": the main thread
// allocates pinned host and device buffers, copies a small setup array with a
// synchronous cudaMemcpy from pinned memory (it returns when the copy is done)
// and clears a bias buffer with cudaMemset (on device memory it returns while
// the memset is still queued: asynchronous); then `#pragma omp parallel for`
// over 16 chunks, each OpenMP thread doing H2D copy -> kernel -> D2H copy of
// its chunk on stream chunk % 8 (8 streams made with cudaStreamCreate); the
// kernel reads the setup array and the bias.  cudaDeviceSynchronize, check.
//   - legacy build: the memset is on the legacy default stream, which every
//     blocking stream waits for: correct, though only because of that barrier
//     (relies-on-legacy-sync, info);
//   - per-thread build (omp_chunked_streams_ptds): the memset is on the main
//     thread's per-thread default stream, which the blocking streams do not
//     wait for: the chunks' kernels may read the bias before it is cleared
//     (missing-fence).  The setup cudaMemcpy is no race in either build: the
//     main thread waited for it before the parallel region started.
// The memset comes after the setup copy on purpose: the other way round the
// synchronous copy (same stream) would wait for the memset too.
// Fixed twin: omp_chunked_streams_fixed.cu (cudaMemsetAsync + a stream
// synchronize before the parallel region), correct in both builds.
#include "ss_test.cuh"

// Without -fopenmp the pragma below is ignored and the chunks run on the main
// thread only: not the program this is.
#if !defined(_OPENMP) && !defined(__CUDA_ARCH__)
#error "build with -Xcompiler -fopenmp (the NVCC-FLAGS line above)"
#endif

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "omp_chunked_streams"
#endif
#ifndef SYNC_MEMSET
#define SYNC_MEMSET 0
#endif

#define NSTREAMS 8
#define NCHUNKS 16
#define NTHREADS 8
#define CHUNK (128 * 1024) // floats: 512 KiB per copy
#define N (NCHUNKS * CHUNK)
#define NBIAS 256
#define NSETUP 4

// out = in * setup[0] + setup[1] + bias[i % NBIAS]; the bias is all zeros
// once the memset has run.
__global__ void chunk_kernel(const float *__restrict__ in, float *__restrict__ out, int n,
                             const float *__restrict__ setup, const float *__restrict__ bias)
{ // EXPECT-NOSITE missing-fence EXPECT-NOSITE relies-on-legacy-sync
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[i] * setup[0] + setup[1] + bias[i % NBIAS];
}

int main(void)
{
    ss_init_device();
    cudaStream_t s[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamCreate(&s[i])); // blocking streams
    float *h_in, *h_out, *h_setup, *d_in, *d_out, *d_setup, *d_bias;
    CK(cudaMallocHost(&h_in, N * sizeof(float)));
    CK(cudaMallocHost(&h_out, N * sizeof(float)));
    CK(cudaMallocHost(&h_setup, NSETUP * sizeof(float)));
    CK(cudaMalloc(&d_in, N * sizeof(float)));
    CK(cudaMalloc(&d_out, N * sizeof(float)));
    CK(cudaMalloc(&d_setup, NSETUP * sizeof(float)));
    CK(cudaMalloc(&d_bias, NBIAS * sizeof(float)));
    for (int i = 0; i < N; i++) {
        h_in[i] = (float)(i % 1000);
        h_out[i] = -1.0f;
    }
    h_setup[0] = 2.0f;
    h_setup[1] = 1.0f;
    h_setup[2] = h_setup[3] = 0.0f;

    // Synchronous: from pinned memory, cudaMemcpy returns once the copy is done.
    CK(cudaMemcpy(d_setup, h_setup, NSETUP * sizeof(float), cudaMemcpyHostToDevice));
#if SYNC_MEMSET
    CK(cudaMemsetAsync(d_bias, 0, NBIAS * sizeof(float), 0));
    CK(cudaStreamSynchronize(0)); // the clear is done before any thread starts
#else
    // Asynchronous on device memory: queued on stream 0, not done on return.
    CK(cudaMemset(d_bias, 0, NBIAS * sizeof(float))); // EXPECT-SITE missing-fence EXPECT-SITE relies-on-legacy-sync
#endif

#pragma omp parallel for num_threads(NTHREADS) schedule(static)
    for (int c = 0; c < NCHUNKS; c++) {
        cudaStream_t st = s[c % NSTREAMS];
        size_t off = (size_t)c * CHUNK;
        CK(cudaMemcpyAsync(d_in + off, h_in + off, CHUNK * sizeof(float), cudaMemcpyHostToDevice, st));
        chunk_kernel<<<64, 256, 0, st>>>(d_in + off, d_out + off, CHUNK, d_setup, d_bias); // EXPECT-SITE missing-fence EXPECT-SITE relies-on-legacy-sync
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h_out + off, d_out + off, CHUNK * sizeof(float), cudaMemcpyDeviceToHost, st));
    }
    CK(cudaDeviceSynchronize());

    int bad = 0;
    for (int i = 0; i < N; i++)
        if (h_out[i] != h_in[i] * 2.0f + 1.0f)
            bad++;
    // Whether the race shows depends on the build and on timing: stderr only.
    if (bad)
        fprintf(stderr, "%s: %d of %d results wrong (a kernel read the bias before the memset cleared it)\n",
                PROGRAM_NAME, bad, N);
    else
        fprintf(stderr, "%s: all %d results correct\n", PROGRAM_NAME, N);
    printf("%s: done\n", PROGRAM_NAME);
    CK(cudaFreeHost(h_in));
    CK(cudaFreeHost(h_out));
    CK(cudaFreeHost(h_setup));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaFree(d_setup));
    CK(cudaFree(d_bias));
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamDestroy(s[i]));
    return 0;
}
