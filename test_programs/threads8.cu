// threads8: 8 host threads issue CUDA calls at the same time, each on its own
// non-blocking stream with its own buffers; per-thread recording in the shim
// must neither lose calls nor change results.  Output is printed by the main
// thread in thread order, so it is the same on every run.
#include "ss_test.cuh"
#include <thread>
#include <vector>

#define THREADS 8
#define ROUNDS 20
#define N 4096

__global__ void scale_add(int *data, int n, int factor, int addend)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = data[i] * factor + addend;
}

// What a worker leaves for the main thread to free.  Freeing is done after
// every thread has finished: cudaFree/cudaFreeHost wait for the whole device,
// so a thread freeing early would wait for the other threads' kernels -- an
// implicit sync this program is not about.
struct worker_state {
    long long sum;
    cudaStream_t stream;
    int *device_data, *host_data;
};

static void worker(int index, worker_state *state)
{
    CK(cudaSetDevice(0)); // each thread says which device it uses
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int *device_data, *host_data;
    CK(cudaMalloc(&device_data, N * sizeof(int)));
    CK(cudaMallocHost(&host_data, N * sizeof(int)));
    for (int i = 0; i < N; i++)
        host_data[i] = i % 97;
    CK(cudaMemcpyAsync(device_data, host_data, N * sizeof(int), cudaMemcpyHostToDevice, stream));
    for (int round = 0; round < ROUNDS; round++) {
        scale_add<<<(N + 255) / 256, 256, 0, stream>>>(device_data, N, 1, index + 1);
        CK_LAUNCH();
    }
    CK(cudaMemcpyAsync(host_data, device_data, N * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    long long sum = 0;
    for (int i = 0; i < N; i++)
        sum += host_data[i];
    state->sum = sum;
    state->stream = stream;
    state->device_data = device_data;
    state->host_data = host_data;
}

int main(void)
{
    ss_init_device();
    worker_state states[THREADS] = {};
    std::vector<std::thread> threads;
    for (int t = 0; t < THREADS; t++)
        threads.emplace_back(worker, t, &states[t]);
    for (auto &thread : threads)
        thread.join();
    int failed = 0;
    long long base = 0;
    for (int i = 0; i < N; i++)
        base += i % 97;
    for (int t = 0; t < THREADS; t++) {
        long long expected = base + (long long)N * ROUNDS * (t + 1);
        printf("threads8: thread %d sum=%lld %s\n", t, states[t].sum, states[t].sum == expected ? "ok" : "WRONG");
        failed |= states[t].sum != expected;
        CK(cudaFreeHost(states[t].host_data));
        CK(cudaFree(states[t].device_data));
        CK(cudaStreamDestroy(states[t].stream));
    }
    return failed;
}
