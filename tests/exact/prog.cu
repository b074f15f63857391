// The GPU test program of exact memory mode (tests/gpu_exact_memory.sh).
//
// Launches kernels whose global memory accesses are known exactly, checks its
// own results (exit 1 when the GPU computed something wrong: exact mode must
// not change what a program does), and prints one JSON line per tracked
// launch on stdout saying what the shim must record for it:
//   {"seq":K,"kernel":"...","word":W,"value":"0x..","alloc":[lo,hi],
//    "read":[lo,hi]|null,"write":[lo,hi]|null,"atomic":true|false}
// seq K = the K-th kernel launch call of the main thread (graph launches and
// captured launches are not counted: the shim tracks neither).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "prog: %s failed: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)

static const size_t CHUNK = 4096;          // bytes per slice
static const int    NSLICES = 4;

__global__ void write_slice(unsigned *p, size_t words, unsigned v)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x)
        p[i] = v + (unsigned)i;
}

__global__ void read_all(const unsigned *in, size_t words, unsigned *counter)
{
    unsigned s = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x)
        s += in[i];
    atomicAdd(counter, s);
}

__global__ void copy_words(unsigned *dst, const unsigned *src, size_t words)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x)
        dst[i] = src[i];
}

__global__ void bump(unsigned *p)
{
    atomicAdd(p, 1u);
}

static int seq;

static void expect(const char *kernel, int word, const void *value, const void *alo, size_t abytes,
                   const void *rlo, size_t rbytes, const void *wlo, size_t wbytes, bool atomic)
{
    unsigned long long a = (unsigned long long)(uintptr_t)alo;
    printf("{\"seq\":%d,\"kernel\":\"%s\",\"word\":%d,\"value\":\"0x%llx\",\"alloc\":[%llu,%llu],", seq, kernel,
           word, (unsigned long long)(uintptr_t)value, a, a + abytes);
    if (rlo) {
        unsigned long long r = (unsigned long long)(uintptr_t)rlo;
        printf("\"read\":[%llu,%llu],", r, r + rbytes);
    } else {
        printf("\"read\":null,");
    }
    if (wlo) {
        unsigned long long w = (unsigned long long)(uintptr_t)wlo;
        printf("\"write\":[%llu,%llu],", w, w + wbytes);
    } else {
        printf("\"write\":null,");
    }
    printf("\"atomic\":%s}\n", atomic ? "true" : "false");
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 1;     // repeat the whole sequence (timing)
    if (reps < 1)
        reps = 1;
    const size_t total = CHUNK * NSLICES, words = total / 4, cwords = CHUNK / 4;
    unsigned *buf = nullptr, *buf2 = nullptr, *counter = nullptr;
    CHECK(cudaMalloc(&buf, total));
    CHECK(cudaMalloc(&buf2, total));
    CHECK(cudaMalloc(&counter, 256));
    CHECK(cudaMemset(buf, 0, total));
    CHECK(cudaMemset(buf2, 0, total));
    CHECK(cudaMemset(counter, 0, 256));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    for (int rep = 0; rep < reps; rep++) {
        int print = rep == 0;
        // 1. slices: write buf + i*CHUNK, CHUNK bytes each (word 0 = the slice pointer)
        for (int i = 0; i < NSLICES; i++) {
            unsigned *p = buf + i * cwords;
            write_slice<<<4, 128, 0, s>>>(p, cwords, 1000u * (i + 1));
            CHECK(cudaGetLastError());
            if (print) expect("write_slice", 0, p, buf, total, nullptr, 0, p, CHUNK, false);
            seq++;
        }
        // 2. read the whole buffer, sum into an atomic counter (word 2 = counter)
        CHECK(cudaMemsetAsync(counter, 0, 4, s));
        read_all<<<8, 128, 0, s>>>(buf, words, counter);
        CHECK(cudaGetLastError());
        if (print) {
            expect("read_all", 0, buf, buf, total, buf, total, nullptr, 0, false);
            expect("read_all", 2, counter, counter, 256, counter, 4, counter, 4, true);
        }
        seq++;
        // 3. copy slice 1 of buf into the start of buf2
        copy_words<<<2, 128, 0, s>>>(buf2, buf + cwords, cwords);
        CHECK(cudaGetLastError());
        if (print) {
            expect("copy_words", 0, buf2, buf2, total, nullptr, 0, buf2, CHUNK, false);
            expect("copy_words", 1, buf + cwords, buf, total, buf + cwords, CHUNK, nullptr, 0, false);
        }
        seq++;
        // 4. a pointer into the middle of an allocation, legacy default stream
        bump<<<1, 32>>>(counter + 8);
        CHECK(cudaGetLastError());
        if (print) expect("bump", 0, counter + 8, counter, 256, counter + 8, 4, counter + 8, 4, true);
        seq++;
    }
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaDeviceSynchronize());

    // 5. stream capture: the captured launch does not run and is not tracked;
    //    the graph's launch runs (untracked) and must still compute.
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    write_slice<<<1, 64, 0, s>>>(buf2 + cwords, cwords, 77u);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaStreamSynchronize(s));

    // The program's own checks: exact mode must not change results.
    unsigned *h = (unsigned *)malloc(total), *h2 = (unsigned *)malloc(total), c[256 / 4];
    CHECK(cudaMemcpy(h, buf, total, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h2, buf2, total, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(c, counter, 256, cudaMemcpyDeviceToHost));
    int bad = 0;
    unsigned long long sum = 0;
    for (size_t i = 0; i < words; i++) {
        unsigned want = 1000u * (unsigned)(i / cwords + 1) + (unsigned)(i % cwords);
        bad += h[i] != want;
        sum += h[i];
    }
    for (size_t i = 0; i < cwords; i++) {
        bad += h2[i] != h[cwords + i];
        bad += h2[cwords + i] != 77u + (unsigned)i;
    }
    bad += c[0] != (unsigned)sum;
    bad += c[8] != (unsigned)(32 * reps);
    if (bad) {
        fprintf(stderr, "prog: WRONG RESULTS (%d mismatches)\n", bad);
        return 1;
    }
    fprintf(stderr, "prog: results correct (%d launches tracked per run)\n", seq);
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(buf));
    CHECK(cudaFree(buf2));
    CHECK(cudaFree(counter));
    return 0;
}
