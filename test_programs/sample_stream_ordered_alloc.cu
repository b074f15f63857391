// Written the way NVIDIA's streamOrderedAllocation sample writes it: the
// device's default memory pool with cudaMemPoolAttrReleaseThreshold set to
// its maximum (the pool keeps its memory across synchronizations), and per
// iteration, on each of 4 non-blocking streams: cudaMallocAsync of the
// buffers, H2D cudaMemcpyAsync from pinned memory, a vector kernel, D2H
// cudaMemcpyAsync into pinned memory, cudaFreeAsync on the same stream.
// Every iteration also hands a buffer from one stream to the next: allocated,
// filled and transformed on stream A, an event recorded on A, B waits on it,
// B reads the buffer, then B frees it with cudaFreeAsync (the stream-ordered
// free after the consumer).  The pool gives the same addresses to different
// streams from iteration to iteration; CUDA orders each reuse after the free
// (the event the allocating stream waited on, or the pool's own dependencies),
// so none of it is a race.  The host waits for every stream before it reads.
// Expected: nothing to report.
#include "ss_test.cuh"
#include <math.h>
#include <stdint.h>

#define NSTREAMS 4
#define NITER 8
#define N (64 * 1024) // floats per buffer (256 KiB)
#define BLOCK 256
#define GRID ((N + BLOCK - 1) / BLOCK)

__global__ void vector_add_scaled(const float *a, const float *b, float *c, float scale, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + scale * b[i];
}

// Producer (stream A): x = x * x + offset, in place.
__global__ void square_plus(float *x, float offset, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * x[i] + offset;
}

// Consumer (stream B): y = 2 * x + 1.
__global__ void twice_plus_one(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 2.0f * x[i] + 1.0f;
}

static float in_a(int s, int j) { return (float)(j % 100) * 0.5f + (float)s; }
static float in_b(int s, int j) { return (float)((j + s) % 7); }
static float in_x(int j) { return (float)(j % 50); }

int main(void)
{
    ss_init_device();
    int dev = 0;
    int pools_supported = 0;
    CK(cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, dev));
    if (!pools_supported) {
        printf("sample_stream_ordered_alloc: waived, the device does not support memory pools\n");
        return 2;
    }

    // The default pool keeps freed memory instead of releasing it to the OS at
    // every synchronization: the sample's setting for allocation-heavy loops.
    cudaMemPool_t mem_pool;
    CK(cudaDeviceGetDefaultMemPool(&mem_pool, dev));
    uint64_t threshold = UINT64_MAX;
    CK(cudaMemPoolSetAttribute(mem_pool, cudaMemPoolAttrReleaseThreshold, &threshold));

    // Pinned host memory, allocated before any GPU work: inputs per stream,
    // one output slot per (iteration, stream) and per iteration for the hand-off.
    const size_t bytes = N * sizeof(float);
    float *h_a[NSTREAMS], *h_b[NSTREAMS], *h_c[NITER][NSTREAMS], *h_x, *h_y[NITER];
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaMallocHost(&h_a[s], bytes));
        CK(cudaMallocHost(&h_b[s], bytes));
        for (int j = 0; j < N; j++) {
            h_a[s][j] = in_a(s, j);
            h_b[s][j] = in_b(s, j);
        }
    }
    for (int it = 0; it < NITER; it++) {
        for (int s = 0; s < NSTREAMS; s++)
            CK(cudaMallocHost(&h_c[it][s], bytes));
        CK(cudaMallocHost(&h_y[it], bytes));
    }
    CK(cudaMallocHost(&h_x, bytes));
    for (int j = 0; j < N; j++)
        h_x[j] = in_x(j);

    cudaStream_t streams[NSTREAMS];
    for (int s = 0; s < NSTREAMS; s++)
        CK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
    cudaEvent_t handoff_ready;
    CK(cudaEventCreateWithFlags(&handoff_ready, cudaEventDisableTiming));

    // Warm-up on one stream before the streams overlap: the first
    // cudaMallocAsync sets up the pool, and the first launch of each kernel
    // loads it (lazy module loading).  The pool keeps the memory it maps here
    // (release threshold above), so the loop's allocations are served from it.
    {
        const size_t working_set = (3 * NSTREAMS + 2) * bytes;
        float *d_w;
        CK(cudaMallocAsync((void **)&d_w, working_set, streams[0]));
        CK(cudaMemsetAsync(d_w, 0, working_set, streams[0]));
        vector_add_scaled<<<GRID, BLOCK, 0, streams[0]>>>(d_w, d_w + N, d_w + 2 * N, 1.0f, N);
        CK_LAUNCH();
        square_plus<<<GRID, BLOCK, 0, streams[0]>>>(d_w, 0.0f, N);
        CK_LAUNCH();
        twice_plus_one<<<GRID, BLOCK, 0, streams[0]>>>(d_w, d_w + N, N);
        CK_LAUNCH();
        CK(cudaFreeAsync(d_w, streams[0]));
        CK(cudaStreamSynchronize(streams[0]));
    }

    for (int it = 0; it < NITER; it++) {
        const float scale = (float)(it + 1);
        // Independent work per stream: allocate, copy in, compute, copy out, free.
        for (int s = 0; s < NSTREAMS; s++) {
            float *d_a, *d_b, *d_c;
            CK(cudaMallocAsync((void **)&d_a, bytes, streams[s]));
            CK(cudaMallocAsync((void **)&d_b, bytes, streams[s]));
            CK(cudaMallocAsync((void **)&d_c, bytes, streams[s]));
            CK(cudaMemcpyAsync(d_a, h_a[s], bytes, cudaMemcpyHostToDevice, streams[s]));
            CK(cudaMemcpyAsync(d_b, h_b[s], bytes, cudaMemcpyHostToDevice, streams[s]));
            vector_add_scaled<<<GRID, BLOCK, 0, streams[s]>>>(d_a, d_b, d_c, scale, N);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(h_c[it][s], d_c, bytes, cudaMemcpyDeviceToHost, streams[s]));
            CK(cudaFreeAsync(d_a, streams[s]));
            CK(cudaFreeAsync(d_b, streams[s]));
            CK(cudaFreeAsync(d_c, streams[s]));
        }

        // The hand-off: produced on A, consumed and freed on B.
        cudaStream_t A = streams[it % NSTREAMS], B = streams[(it + 1) % NSTREAMS];
        float *d_x, *d_y;
        CK(cudaMallocAsync((void **)&d_x, bytes, A));
        CK(cudaMemcpyAsync(d_x, h_x, bytes, cudaMemcpyHostToDevice, A));
        square_plus<<<GRID, BLOCK, 0, A>>>(d_x, (float)it, N);
        CK_LAUNCH();
        CK(cudaEventRecord(handoff_ready, A));
        CK(cudaStreamWaitEvent(B, handoff_ready, 0));
        CK(cudaMallocAsync((void **)&d_y, bytes, B));
        twice_plus_one<<<GRID, BLOCK, 0, B>>>(d_x, d_y, N);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h_y[it], d_y, bytes, cudaMemcpyDeviceToHost, B));
        CK(cudaFreeAsync(d_x, B)); // after its last use, on the consumer's stream
        CK(cudaFreeAsync(d_y, B));
    }

    for (int s = 0; s < NSTREAMS; s++)
        CK(cudaStreamSynchronize(streams[s]));

    long bad = 0;
    for (int it = 0; it < NITER; it++) {
        for (int s = 0; s < NSTREAMS; s++)
            for (int j = 0; j < N; j++) {
                float want = in_a(s, j) + (float)(it + 1) * in_b(s, j);
                if (fabsf(h_c[it][s][j] - want) > 1e-3f)
                    bad++;
            }
        for (int j = 0; j < N; j++) {
            float x = in_x(j);
            float want = 2.0f * (x * x + (float)it) + 1.0f;
            if (fabsf(h_y[it][j] - want) > 1e-3f)
                bad++;
        }
    }
    printf("sample_stream_ordered_alloc: %s\n", bad ? "FAILED" : "PASSED");
    if (bad)
        fprintf(stderr, "sample_stream_ordered_alloc: %ld results wrong\n", bad);

    CK(cudaEventDestroy(handoff_ready));
    for (int s = 0; s < NSTREAMS; s++) {
        CK(cudaStreamDestroy(streams[s]));
        CK(cudaFreeHost(h_a[s]));
        CK(cudaFreeHost(h_b[s]));
    }
    for (int it = 0; it < NITER; it++) {
        for (int s = 0; s < NSTREAMS; s++)
            CK(cudaFreeHost(h_c[it][s]));
        CK(cudaFreeHost(h_y[it]));
    }
    CK(cudaFreeHost(h_x));
    return bad ? 1 : 0;
}
