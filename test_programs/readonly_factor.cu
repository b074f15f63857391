// No race: 4 blocking streams each run init_array on their own slice of buf;
// every kernel reads the same scalar *factor and none writes it.  Concurrent
// reads of one buffer are not a race, so the analyzer must not report the
// shared `factor` argument (it has to know the kernel only reads it).
// Racy twin: readonly_factor_racy.cu (the kernel on stream 0 also writes
// *factor while the others read it).
#include "ss_test.cuh"

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "readonly_factor"
#endif
#ifndef WRITE_FACTOR
#define WRITE_FACTOR 0
#endif

#define NSTREAMS 4
#define CHUNK (64 * 1024)

// slice[i] = i * *factor, after a spin so that the four kernels overlap.
__global__ void init_array(float *slice, const float *factor, int n, unsigned long long spin_ns)
{ // EXPECT-NOSITE missing-fence
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    const float f = *factor;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        slice[i] = f * (float)i;
}

#if WRITE_FACTOR
// The same, but the first thread of the first stream's kernel also updates
// *factor, which the kernels on the other streams read at the same time.
__global__ void init_array_update(float *slice, float *factor, int n, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    const float f = *factor;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        slice[i] = f * (float)i;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *factor = 2.0f * f;
}
#endif

int main(void)
{
    ss_init_device();
    cudaStream_t s[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamCreate(&s[i]));
    float *buf, *factor;
    CK(cudaMalloc(&buf, NSTREAMS * CHUNK * sizeof(float)));
    CK(cudaMalloc(&factor, sizeof(float)));
    const float one_and_half = 1.5f;
    CK(cudaMemcpy(factor, &one_and_half, sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize()); // setup done before the streams start

    const unsigned long long spin = ss_ms_to_ns(2);
    for (int i = 0; i < NSTREAMS; i++) {
#if WRITE_FACTOR
        if (i == 0) {
            init_array_update<<<4, 256, 0, s[i]>>>(buf + i * CHUNK, factor, CHUNK, spin); // EXPECT-SITE missing-fence
            CK_LAUNCH();
            continue;
        }
#endif
        init_array<<<4, 256, 0, s[i]>>>(buf + i * CHUNK, factor, CHUNK, spin); // EXPECT-SITE missing-fence
        CK_LAUNCH();
    }
    CK(cudaDeviceSynchronize());

    float *host = (float *)malloc(NSTREAMS * CHUNK * sizeof(float));
    if (host == NULL)
        return 1;
    CK(cudaMemcpy(host, buf, NSTREAMS * CHUNK * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int k = 0; k < NSTREAMS * CHUNK; k++)
        if (host[k] != one_and_half * (float)(k % CHUNK))
            bad++;
    // With the racy twin some slices may use the updated factor: stderr only.
    fprintf(stderr, "%s: %d of %d elements differ from factor %.1f\n", PROGRAM_NAME, bad, NSTREAMS * CHUNK,
            one_and_half);
    printf("%s: done\n", PROGRAM_NAME);
    free(host);
    CK(cudaFree(buf));
    CK(cudaFree(factor));
    for (int i = 0; i < NSTREAMS; i++)
        CK(cudaStreamDestroy(s[i]));
    return 0;
}
