// An inference server's worker pool, as C++ serving code is written: the
// model's weights are uploaded once by the main thread (cudaMemcpy from a
// std::vector, pageable memory, on the legacy default stream, then a
// cudaStreamSynchronize of that stream) before the workers start; each worker thread owns a
// non-blocking stream, pinned staging buffers and device activations, takes
// requests from a queue under a std::mutex, copies the input in, runs two
// layers that read the shared weights, copies the output back, and
// synchronizes its stream before it reads the result and answers.  Each
// request's GPU latency is measured with a pair of timing events
// (cudaEventElapsedTime after the stream sync).  The main thread joins the
// workers and checks every answer.
// Expected: nothing of the program's own: the weights have landed before
// the threads exist (the stream sync waits for the copies; thread creation
// orders the workers after it), every worker touches only its own buffers
// besides reading the weights, and every host read follows its stream's
// sync.  Workers free their pinned buffers when the queue is empty:
// cudaFreeHost waits for the device, other workers' requests included
// (implicit-sync, info: true).
// sample_inference_workers_racy.cu leaves the sync out: a cudaMemcpy from
// pageable memory may return before its copy lands (CUDA's API
// synchronization rules), so nothing orders the workers' kernels after the
// upload: missing-fence, which says why.
#include "ss_test.cuh"
#include <mutex>
#include <thread>
#include <vector>

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "sample_inference_workers"
#endif
#define WORKERS 4
#define REQUESTS 64
#define DIM 512

__global__ void dense_relu(const float *w, const float *in, float *out, int dim)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= dim) return;
    float acc = 0;
    for (int k = 0; k < dim; k++) acc += w[(size_t)row * dim + k] * in[k];
    out[row] = acc > 0 ? acc : 0;
}

struct request_queue {
    std::mutex lock;
    int next = 0;
    int take()
    {
        std::lock_guard<std::mutex> g(lock);
        return next < REQUESTS ? next++ : -1;
    }
};

static float expected_output(int req)
{
    // weights are 1/dim everywhere: layer 1 gives mean(input) per row, layer 2 the same again
    return (float)(req + 1);
}

static void worker(const float *w1, const float *w2, request_queue *q, float *answers, double *gpu_ms)
{
    cudaStream_t st;
    cudaEvent_t t0, t1;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    float *h_in, *h_out, *d_in, *d_hidden, *d_out;
    CK(cudaMallocHost(&h_in, DIM * sizeof(float)));
    CK(cudaMallocHost(&h_out, DIM * sizeof(float)));
    CK(cudaMalloc(&d_in, DIM * sizeof(float)));
    CK(cudaMalloc(&d_hidden, DIM * sizeof(float)));
    CK(cudaMalloc(&d_out, DIM * sizeof(float)));
    for (int req; (req = q->take()) >= 0;) {
        for (int i = 0; i < DIM; i++) h_in[i] = (float)(req + 1);
        CK(cudaEventRecord(t0, st));
        CK(cudaMemcpyAsync(d_in, h_in, DIM * sizeof(float), cudaMemcpyHostToDevice, st));
        dense_relu<<<(DIM + 127) / 128, 128, 0, st>>>(w1, d_in, d_hidden, DIM);
        CK_LAUNCH();
        dense_relu<<<(DIM + 127) / 128, 128, 0, st>>>(w2, d_hidden, d_out, DIM);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h_out, d_out, DIM * sizeof(float), cudaMemcpyDeviceToHost, st));
        CK(cudaEventRecord(t1, st));
        CK(cudaStreamSynchronize(st));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, t0, t1));
        answers[req] = h_out[DIM / 2];
        gpu_ms[req] = ms;
    }
    CK(cudaFreeHost(h_in));
    CK(cudaFreeHost(h_out));
    CK(cudaEventDestroy(t0));
    CK(cudaEventDestroy(t1));
    CK(cudaStreamDestroy(st));
    // device buffers are freed by the main thread after the join: cudaFree
    // waits for the whole device (other workers' kernels)
    (void)d_in; (void)d_hidden; (void)d_out;
}

int main(void)
{
    ss_init_device();
    std::vector<float> hw((size_t)DIM * DIM, 1.0f / DIM);
    float *w1, *w2;
    CK(cudaMalloc(&w1, hw.size() * sizeof(float)));
    CK(cudaMalloc(&w2, hw.size() * sizeof(float)));
    CK(cudaMemcpy(w1, hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w2, hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));
#ifndef WORKERS_RACY
    CK(cudaStreamSynchronize(0));   // the copies have landed: from pageable memory, cudaMemcpy may return before
#endif
    request_queue q;
    std::vector<float> answers(REQUESTS, -1);
    std::vector<double> gpu_ms(REQUESTS, 0);
    std::vector<std::thread> pool;
    for (int k = 0; k < WORKERS; k++) pool.emplace_back(worker, w1, w2, &q, answers.data(), gpu_ms.data());
    for (auto &t : pool) t.join();
    int ok = 1;
    double total = 0;
    for (int r = 0; r < REQUESTS; r++) {
        if (answers[r] < expected_output(r) * 0.999f || answers[r] > expected_output(r) * 1.001f) ok = 0;
        total += gpu_ms[r];
    }
    printf("%s: %d requests, %s\n", PROGRAM_NAME, REQUESTS, ok ? "OK" : "FAILED");
    (void)total;
    CK(cudaFree(w1));
    CK(cudaFree(w2));
    return ok ? 0 : 1;
}
