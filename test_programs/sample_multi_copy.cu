// Written the way NVIDIA's simpleMultiCopy sample writes it: 4 streams made
// with cudaStreamCreate (blocking), per stream a pinned input and output
// buffer (cudaHostAlloc) and a device input and output; a prologue uploads
// frame 0 and runs its kernel, then each cycle waits on the host for the
// next stream's previous cycle (cudaEventSynchronize(cycleDone[next])),
// processes the current frame (incKernel), uploads the next frame on the next
// stream and downloads the current frame on the current stream, and records
// cycleDone[current] on the current stream.  Timing events on stream 0 around
// the loop (cudaEventRecord(start, 0) / (stop, 0)), cudaDeviceSynchronize at
// the end, results checked.  Every buffer is used on one stream only.
// Expected: nothing of consequence.  The first lap's syncs on cycleDone[1..3]
// come before those events' first records, on streams with no work yet: the
// host waits for nothing, and there is nothing to wait for (info at most).
#include "ss_test.cuh"
#include <string.h>

#define STREAM_COUNT 4
#define N (1 << 20)
#define INNER_REPS 40
#define NREPS 24

__global__ void incKernel(int *g_out, const int *g_in, int n, int inner_reps)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        int v = g_in[idx];
        for (int i = 0; i < inner_reps; ++i) v += 1;
        g_out[idx] = v;
    }
}

int main(void)
{
    ss_init_device();
    size_t memsize = N * sizeof(int);
    int *h_data_in[STREAM_COUNT], *h_data_out[STREAM_COUNT];
    int *d_data_in[STREAM_COUNT], *d_data_out[STREAM_COUNT];
    cudaStream_t stream[STREAM_COUNT];
    cudaEvent_t cycleDone[STREAM_COUNT], start, stop;
    for (int i = 0; i < STREAM_COUNT; ++i) {
        CK(cudaHostAlloc(&h_data_in[i], memsize, cudaHostAllocDefault));
        CK(cudaHostAlloc(&h_data_out[i], memsize, cudaHostAllocDefault));
        CK(cudaMalloc(&d_data_in[i], memsize));
        CK(cudaMalloc(&d_data_out[i], memsize));
        CK(cudaStreamCreate(&stream[i]));
        CK(cudaEventCreate(&cycleDone[i]));
        for (int j = 0; j < N; ++j) h_data_in[i][j] = j + i;
        memset(h_data_out[i], 0, memsize);
    }
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    dim3 block(512), grid((N + 511) / 512);

    int current_stream = 0;
    CK(cudaMemcpyAsync(d_data_in[0], h_data_in[0], memsize, cudaMemcpyHostToDevice, stream[0]));
    CK(cudaEventRecord(start, 0));
    incKernel<<<grid, block, 0, stream[0]>>>(d_data_out[0], d_data_in[0], N, INNER_REPS);
    CK_LAUNCH();
    for (int i = 0; i < NREPS; ++i) {
        int next_stream = (current_stream + 1) % STREAM_COUNT;
        // ensure that the previous cycle of the next stream is done
        CK(cudaEventSynchronize(cycleDone[next_stream])); // EXPECT-SITE unrecorded-event-wait
        incKernel<<<grid, block, 0, stream[current_stream]>>>(d_data_out[current_stream], d_data_in[current_stream],
                                                              N, INNER_REPS);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(d_data_in[next_stream], h_data_in[next_stream], memsize, cudaMemcpyHostToDevice,
                           stream[next_stream]));
        CK(cudaMemcpyAsync(h_data_out[current_stream], d_data_out[current_stream], memsize, cudaMemcpyDeviceToHost,
                           stream[current_stream]));
        CK(cudaEventRecord(cycleDone[current_stream], stream[current_stream]));
        current_stream = next_stream;
    }
    CK(cudaEventRecord(stop, 0));
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, start, stop));
    int bad = 0;
    for (int i = 0; i < STREAM_COUNT; ++i)
        for (int j = 0; j < N; ++j)
            if (h_data_out[i][j] != j + i + INNER_REPS) { bad++; break; }
    printf("sample_multi_copy: %.3f ms for %d cycles, %s\n", ms, NREPS, bad ? "FAILED" : "OK");
    for (int i = 0; i < STREAM_COUNT; ++i) {
        CK(cudaStreamDestroy(stream[i]));
        CK(cudaEventDestroy(cycleDone[i]));
        CK(cudaFreeHost(h_data_in[i]));
        CK(cudaFreeHost(h_data_out[i]));
        CK(cudaFree(d_data_in[i]));
        CK(cudaFree(d_data_out[i]));
    }
    return bad ? 1 : 0;
}
