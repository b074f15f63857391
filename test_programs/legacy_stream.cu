// legacy-stream-serialization: two streams made with cudaStreamCreate are
// *blocking* streams, and a kernel on stream 0 (the legacy default stream)
// between them waits for all work on blocking streams and makes all later
// work on them wait for it.  The three 30 ms kernels below could all run at
// once (30 ms) but take 90 ms.  Fixed twin: legacy_stream_fixed.cu.
#include "ss_test.cuh"

#ifndef STREAM_FLAGS
#define STREAM_FLAGS cudaStreamDefault
#endif

int main(void)
{
    ss_init_device();
    cudaStream_t first, second;
    CK(cudaStreamCreateWithFlags(&first, STREAM_FLAGS)); // EXPECT-SITE legacy-stream-serialization
    CK(cudaStreamCreateWithFlags(&second, STREAM_FLAGS)); // EXPECT-SITE legacy-stream-serialization
    int *done;
    CK(cudaMallocManaged(&done, 3 * sizeof(int)));
    done[0] = done[1] = done[2] = 0;

    cudaEvent_t begin, end;
    CK(cudaEventCreate(&begin));
    CK(cudaEventCreate(&end));
    CK(cudaEventRecord(begin, first));
    spin_kernel<<<1, 1, 0, first>>>(ss_ms_to_ns(30), &done[0], 1);
    CK_LAUNCH();
    spin_kernel<<<1, 1, 0, 0>>>(ss_ms_to_ns(30), &done[1], 1); // EXPECT-SITE legacy-stream-serialization
    CK_LAUNCH();
    spin_kernel<<<1, 1, 0, second>>>(ss_ms_to_ns(30), &done[2], 1); // EXPECT-SITE legacy-stream-serialization
    CK_LAUNCH();
    // `end` must follow all three kernels to time them: with non-blocking
    // streams (the fixed twin) nothing else would order it after the first
    // two (syncsight's event-timing-gap).
    cudaEvent_t first_done, legacy_done;
    CK(cudaEventCreateWithFlags(&first_done, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&legacy_done, cudaEventDisableTiming));
    CK(cudaEventRecord(first_done, first));
    CK(cudaEventRecord(legacy_done, 0));
    CK(cudaStreamWaitEvent(second, first_done, 0));
    CK(cudaStreamWaitEvent(second, legacy_done, 0));
    CK(cudaEventRecord(end, second));

    CK(cudaStreamSynchronize(first));
    CK(cudaStreamSynchronize(0));
    CK(cudaStreamSynchronize(second));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, begin, end));
    // Timing goes to stderr: stdout stays identical from run to run.
    fprintf(stderr, "three 30 ms kernels on three streams: %.1f ms from first start to last end\n", ms);
    printf("%s: kernels done %d %d %d\n", STREAM_FLAGS == cudaStreamDefault ? "legacy_stream" : "legacy_stream_fixed",
           done[0], done[1], done[2]);
    CK(cudaEventDestroy(begin));
    CK(cudaEventDestroy(end));
    CK(cudaEventDestroy(first_done));
    CK(cudaEventDestroy(legacy_done));
    CK(cudaFree(done));
    CK(cudaStreamDestroy(first));
    CK(cudaStreamDestroy(second));
    return 0;
}
