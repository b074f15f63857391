// robust_faults: one CUDA program, several ways to end or misbehave, for the
// fault matrix of the shim (tests/gpu_robust.sh; docs/robustness.md).  Every
// mode prints the same stdout with and without syncsight; the script compares
// the two runs and reads the trace back.  Without arguments (how `make
// gpu-test` runs it) it does a short clean run with no pathology.
//
//   robust_faults                    short clean run, exit 0
//   robust_faults loop N             N iterations of kernel + copy + stream sync,
//                                    one stdout line each (SIGKILL and
//                                    RLIMIT_FSIZE rows; N=0: until killed)
//   robust_faults segv | abort       CUDA work, then a real fault / abort()
//   robust_faults thread-exit        CUDA work, then exit(7) from a worker thread
//                                    that also made CUDA calls
//   robust_faults fork-noexec        CUDA work, then a fork() child that only does
//                                    CPU work and exit(0)s; parent goes on with CUDA
//   robust_faults errors             calls that fail: every cudaError_t is printed
//                                    and must be identical under the shim
//   robust_faults many-calls N       N cudaStreamQuery on an idle stream; prints
//                                    VmHWM growth (kB) to stderr as "rss-growth-kb <n>"
//   robust_faults strings            64 KiB NVTX strings with control characters,
//                                    a kernel with a very long (template) name
#include "ss_test.cuh"
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void fill(int *data, int n, int value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = value + i;
}

// One round of ordinary work: kernel, copy back, check.  Returns the checksum
// so the output shows the GPU really did the work.
static long long one_round(cudaStream_t stream, int *device_data, int *host_data, int n, int value)
{
    fill<<<(n + 255) / 256, 256, 0, stream>>>(device_data, n, value);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(host_data, device_data, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    long long sum = 0;
    for (int i = 0; i < n; i++)
        sum += host_data[i];
    return sum;
}

struct work {
    cudaStream_t stream;
    int *device_data;
    int *host_data; // pinned
    int n;
};

static work setup(void)
{
    work w;
    w.n = 1 << 16;
    ss_init_device();
    CK(cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking));
    CK(cudaMalloc(&w.device_data, w.n * sizeof(int)));
    CK(cudaMallocHost(&w.host_data, w.n * sizeof(int)));
    return w;
}

static void teardown(work &w)
{
    CK(cudaFreeHost(w.host_data));
    CK(cudaFree(w.device_data));
    CK(cudaStreamDestroy(w.stream));
}

static long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static void *thread_exit_worker(void *arg)
{
    work *w = (work *)arg;
    printf("worker: round sum %lld\n", one_round(w->stream, w->device_data, w->host_data, w->n, 3));
    fflush(stdout);
    exit(7); // the whole process ends here, from a thread that is not main
}

// A kernel whose mangled name is about 64 KiB: integer template arguments
// are spelled out one by one in the name (the mangling cannot abbreviate
// them the way it abbreviates repeated types).
#include <utility>
#define LONG_NAME_ARGS 9600
template <typename T> __global__ void long_named_kernel(int *out, int value)
{
    *out = value;
}
typedef std::make_integer_sequence<int, LONG_NAME_ARGS> long_name_sequence;

static int run_errors(void)
{
    // Each result is printed as a number: the shim must hand the program the
    // very error code the runtime returned, and must not clear or set the
    // sticky "last error" behind the program's back.
    ss_init_device();
    void *p = NULL;
    printf("cudaMalloc(1 PiB) = %d\n", (int)cudaMalloc(&p, (size_t)1 << 50));
    printf("cudaGetLastError after it = %d\n", (int)cudaGetLastError());
    printf("cudaGetLastError again = %d\n", (int)cudaGetLastError());
    printf("cudaSetDevice(9999) = %d\n", (int)cudaSetDevice(9999));
    printf("cudaGetLastError = %d\n", (int)cudaGetLastError());
    int *d = NULL;
    CK(cudaMalloc(&d, 64));
    fill<<<1, 4096>>>(d, 16, 0); // 4096 threads per block: invalid configuration
    printf("launch with 4096 threads: peek = %d\n", (int)cudaPeekAtLastError());
    printf("cudaStreamQuery(0) between = %d\n", (int)cudaStreamQuery(0));
    printf("launch with 4096 threads: get = %d\n", (int)cudaGetLastError());
    printf("cudaGetLastError cleared = %d\n", (int)cudaGetLastError());
    int host[4];
    printf("cudaMemcpy from a bogus device pointer = %d\n",
           (int)cudaMemcpy(host, (void *)0x10, sizeof host, cudaMemcpyDeviceToHost));
    printf("cudaGetLastError = %d\n", (int)cudaGetLastError());
    cudaEvent_t never_created_event = (cudaEvent_t)0;
    printf("cudaEventQuery(NULL) = %d\n", (int)cudaEventQuery(never_created_event));
    printf("cudaFree(bogus) = %d\n", (int)cudaFree((void *)0x1234));
    printf("cudaGetLastError = %d\n", (int)cudaGetLastError());
    printf("cudaStreamDestroy(NULL stream) = %d\n", (int)cudaStreamDestroy((cudaStream_t)0));
    printf("cudaGetLastError = %d\n", (int)cudaGetLastError());
    // Not CK(): after the calls above the context may be unusable, and that
    // too must look the same with and without the shim.
    printf("cudaFree(valid) = %d\n", (int)cudaFree(d));
    printf("errors: done\n");
    return 0;
}

static int run_strings(void)
{
    ss_init_device();
    // 64 KiB of text holding every control character, ESC sequences that
    // would recolour or clear a terminal, quote/backslash/HTML specials, and
    // bytes that are not valid UTF-8.
    const size_t len = 64 * 1024;
    char *text = (char *)malloc(len + 1);
    if (!text)
        return 1;
    static const char hostile[] = "\x1b[31mRED\x1b[2J\x1b]0;title\x07\r\n\t\"quote\\ </script><b>&amp;\xff\xfe\x80";
    for (size_t i = 0; i < len; i++)
        text[i] = (i % 97 < sizeof hostile - 1) ? hostile[i % 97] : (char)(1 + i % 31);
    text[len] = '\0';
    nvtxDomainHandle_t domain = nvtxDomainCreateA("robust\x1b[1mdomain\n");
    nvtxRangePushA(text);
    int *d = NULL;
    CK(cudaMalloc(&d, sizeof(int)));
    nvtxMarkA(text + 1);
    nvtxEventAttributes_t attr;
    memset(&attr, 0, sizeof attr);
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = text + 2;
    nvtxDomainRangePushEx(domain, &attr);
    long_named_kernel<long_name_sequence><<<1, 1>>>(d, LONG_NAME_ARGS);
    CK_LAUNCH();
    int host = 0;
    CK(cudaMemcpy(&host, d, sizeof host, cudaMemcpyDeviceToHost));
    nvtxDomainRangePop(domain);
    nvtxRangePop();
    CK(cudaFree(d));
    free(text);
    printf("strings: long kernel wrote %d\n", host);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";

    if (!strcmp(mode, "errors"))
        return run_errors();
    if (!strcmp(mode, "strings"))
        return run_strings();

    work w = setup();
    if (!strcmp(mode, "many-calls")) {
        long calls = argc > 2 ? atol(argv[2]) : 1000000;
        long before = vm_hwm_kb();
        long not_ready = 0;
        for (long i = 0; i < calls; i++)
            if (cudaStreamQuery(w.stream) != cudaSuccess)
                not_ready++;
        long after = vm_hwm_kb();
        fprintf(stderr, "rss-growth-kb %ld\n", after - before);
        printf("many-calls: %ld calls, %ld not ready\n", calls, not_ready);
        teardown(w);
        return 0;
    }
    if (!strcmp(mode, "loop")) {
        long iterations = argc > 2 ? atol(argv[2]) : 0;
        for (long i = 0; iterations == 0 || i < iterations; i++) {
            printf("iteration %ld sum %lld\n", i, one_round(w.stream, w.device_data, w.host_data, w.n, (int)i));
            fflush(stdout);
        }
        teardown(w);
        return 0;
    }

    printf("round sum %lld\n", one_round(w.stream, w.device_data, w.host_data, w.n, 1));
    fflush(stdout);
    if (!strcmp(mode, "segv")) {
        volatile int *null_pointer = (int *)(long)(argc - argc);
        *null_pointer = 1;
    } else if (!strcmp(mode, "abort")) {
        abort();
    } else if (!strcmp(mode, "thread-exit")) {
        pthread_t t;
        pthread_create(&t, NULL, thread_exit_worker, &w);
        pthread_join(t, NULL);
        printf("not reached\n");
        return 1;
    } else if (!strcmp(mode, "fork-noexec")) {
        pid_t child = fork();
        if (child < 0) {
            perror("fork");
            return 1;
        }
        if (child == 0) {
            long long sum = 0;
            for (int i = 0; i < 1000; i++)
                sum += i;
            printf("cpu child: sum %lld\n", sum);
            exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        printf("parent after fork: round sum %lld\n", one_round(w.stream, w.device_data, w.host_data, w.n, 2));
    } else if (strcmp(mode, "clean") != 0) {
        fprintf(stderr, "robust_faults: unknown mode %s\n", mode);
        return 2;
    }
    teardown(w);
    printf("%s: done\n", mode);
    return 0;
}
