/*
 * Copy-bound benchmark (b): small pinned host<->device copies on two streams
 * ordered by events: H2D on the upload stream, an event, the compute stream
 * waits for it, a D2H back on the compute stream, and every 100 iterations
 * the host synchronizes on an event (as a pipeline reading results would).
 *
 *   copy_bound [--iters=N] [--bytes=B]   (env BENCH_COPY_ITERS, default 50000;
 *                                         BENCH_COPY_BYTES, default 4096)
 */
#include "bench_util.h"

int main(int argc, char **argv)
{
    long iters = bench_option(argc, argv, "iters", "BENCH_COPY_ITERS", 50000);
    long bytes = bench_option(argc, argv, "bytes", "BENCH_COPY_BYTES", 4096);
    char *host_in, *host_out, *dev;
    cudaStream_t up, compute;
    cudaEvent_t uploaded, done;
    BENCH_CHECK(cudaMallocHost(&host_in, (size_t)bytes));
    BENCH_CHECK(cudaMallocHost(&host_out, (size_t)bytes));
    BENCH_CHECK(cudaMalloc(&dev, (size_t)bytes));
    memset(host_in, 1, (size_t)bytes);
    BENCH_CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    BENCH_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    BENCH_CHECK(cudaEventCreateWithFlags(&uploaded, cudaEventDisableTiming));
    BENCH_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    for (int i = 0; i < 100; i++)   /* warm-up */
        BENCH_CHECK(cudaMemcpyAsync(dev, host_in, (size_t)bytes, cudaMemcpyHostToDevice, up));
    BENCH_CHECK(cudaDeviceSynchronize());

    long calls = 0;
    double t0 = bench_now_s();
    for (long i = 0; i < iters; i++) {
        BENCH_CHECK(cudaMemcpyAsync(dev, host_in, (size_t)bytes, cudaMemcpyHostToDevice, up));
        BENCH_CHECK(cudaEventRecord(uploaded, up));
        BENCH_CHECK(cudaStreamWaitEvent(compute, uploaded, 0));
        BENCH_CHECK(cudaMemcpyAsync(host_out, dev, (size_t)bytes, cudaMemcpyDeviceToHost, compute));
        /* the next upload overwrites dev: wait until the download read it */
        BENCH_CHECK(cudaEventRecord(done, compute));
        BENCH_CHECK(cudaStreamWaitEvent(up, done, 0));
        calls += 6;
        if (i % 100 == 99) {
            BENCH_CHECK(cudaEventSynchronize(done));
            calls++;
        }
    }
    BENCH_CHECK(cudaStreamSynchronize(compute));
    calls++;
    double wall = bench_now_s() - t0;
    if (host_out[0] != 1 || host_out[bytes - 1] != 1) {
        fprintf(stderr, "copy_bound: data did not round-trip\n");
        return 1;
    }
    bench_report("copy_bound", wall, calls);

    BENCH_CHECK(cudaEventDestroy(uploaded));
    BENCH_CHECK(cudaEventDestroy(done));
    BENCH_CHECK(cudaStreamDestroy(up));
    BENCH_CHECK(cudaStreamDestroy(compute));
    BENCH_CHECK(cudaFree(dev));
    BENCH_CHECK(cudaFreeHost(host_in));
    BENCH_CHECK(cudaFreeHost(host_out));
    return 0;
}
