/*
 * The program tests/test_api_sampling.sh runs under the shim with the fake
 * libcudart, libcuda and libcupti: hot calls for about 0.7 s, 1 ms apart,
 * each tagged with its ordinal among the program's hot calls (from 1) so the
 * checker knows which were recorded:
 *   - cudaLaunchKernel (interposed): grid = ordinal (the record's arg);
 *   - every 5th ordinal, in turn, cudaEventRecord (interposed; event handle
 *     = ordinal) or a cudaStreamSynchronize seen only through CUPTI's
 *     runtime callback, as a static cudart's would be (stream = ordinal):
 *     the fake CUPTI delivers it only while its callback is enabled;
 * structural calls every 10th iteration (cudaEventCreate, cudaMalloc,
 * cudaFree); a mutex lock/unlock after every hot call; and, once sampling has switched OFF and CUPTI followed (the
 * fake's kernel kind disabled), a stream capture of 150 launches that spans
 * a whole sampling period.  Argument "full": no waiting for OFF (sampling
 * off or not reached).
 *
 * Prints "key value..." lines for the checker: the capture's first and last
 * ordinal, the counts made, the fake CUPTI's activity kinds and callbacks
 * (enabled now, times switched on and off).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

typedef void (*fake_api_fn)(CUpti_CallbackDomain, CUpti_CallbackId, const char *, const void *, const void *, int,
                            uint32_t);
typedef int (*fake_kind_fn)(CUpti_ActivityKind, unsigned *, unsigned *);
typedef int (*fake_cb_fn)(CUpti_CallbackDomain, CUpti_CallbackId, unsigned *, unsigned *);

static fake_api_fn fake_api;
static fake_kind_fn kind_state;
static fake_cb_fn cb_state;
static cudaStream_t stream;
static unsigned ordinal, launches, structural, failures;

static void kernel_stub(void) {}

static void launch(void)
{
    unsigned o = ++ordinal;
    /* (void *a, int n, void *b): the fake driver's layout of every stub */
    void *a = NULL, *b = NULL;
    int n = 0;
    void *args[3] = { &a, &n, &b };
    if (cudaLaunchKernel((const void *)kernel_stub, (dim3){ o, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, stream) !=
        cudaSuccess)
        failures++;
    launches++;
}

static void hot_call(void)
{
    unsigned o = ordinal + 1;
    if (o % 5 != 0) {
        launch();
        return;
    }
    ordinal++;
    if ((o / 5) % 2) {
        if (cudaEventRecord((cudaEvent_t)(uintptr_t)o, stream) != cudaSuccess)
            failures++;
    } else {
        cudaStreamSynchronize_v3020_params p = { .stream = (cudaStream_t)(uintptr_t)o };
        cudaError_t ret = cudaSuccess;
        fake_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                 "cudaStreamSynchronize", &p, &ret, CUPTI_API_ENTER, 9000 + o);
        fake_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                 "cudaStreamSynchronize", &p, &ret, CUPTI_API_EXIT, 9000 + o);
    }
}

static void structural_calls(void)
{
    cudaEvent_t ev;
    void *p = NULL;
    if (cudaEventCreate(&ev) != cudaSuccess || cudaMalloc(&p, 64) != cudaSuccess || cudaFree(p) != cudaSuccess)
        failures++;
    structural += 3;
}

/* A lock taken after every hot call: once the thread made a recorded CUDA
 * call, its unlock publishes news (a HOST_SYNC release) -- but not while
 * sampling is OFF (hostsync.c). */
static pthread_mutex_t handoff = PTHREAD_MUTEX_INITIALIZER;

static void iterations(int n)
{
    for (int i = 0; i < n; i++) {
        hot_call();
        pthread_mutex_lock(&handoff);
        pthread_mutex_unlock(&handoff);
        if (i % 10 == 9)
            structural_calls();
        usleep(1000);
    }
}

int main(int argc, char **argv)
{
    int full = argc > 1 && strcmp(argv[1], "full") == 0;
    fake_api = (fake_api_fn)dlsym(RTLD_DEFAULT, "fake_cupti_api");
    kind_state = (fake_kind_fn)dlsym(RTLD_DEFAULT, "fake_cupti_kind_state");
    cb_state = (fake_cb_fn)dlsym(RTLD_DEFAULT, "fake_cupti_callback_state");
    if (!fake_api || !kind_state || !cb_state) {
        fprintf(stderr, "api_sampling_prog: the fake libcupti is not loaded\n");
        return 1;
    }
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        return 1;
    structural++;

    iterations(400);

    if (!full) {
        /* Wait until recording is OFF and CUPTI followed, then capture for
         * longer than a period: recording must stay on throughout. */
        unsigned en, dis;
        for (int waited = 0; kind_state(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, &en, &dis) != 0; waited++) {
            if (waited > 3000) {
                fprintf(stderr, "api_sampling_prog: recording never switched OFF\n");
                return 1;
            }
            usleep(1000);
        }
        printf("capture_first %u\n", ordinal + 1);
        if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess)
            failures++;
        for (int i = 0; i < 150; i++) {
            launch();
            usleep(1000);
        }
        cudaGraph_t graph;
        if (cudaStreamEndCapture(stream, &graph) != cudaSuccess)
            failures++;
        printf("capture_last %u\n", ordinal);
    }

    iterations(100);

    printf("launches %u\nstructural %u\nhot %u\n", launches, structural, ordinal);
    static const struct { const char *name; CUpti_ActivityKind kind; } kinds[] = {
        { "CONCURRENT_KERNEL", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL }, { "MEMCPY", CUPTI_ACTIVITY_KIND_MEMCPY },
        { "MEMCPY2", CUPTI_ACTIVITY_KIND_MEMCPY2 }, { "MEMSET", CUPTI_ACTIVITY_KIND_MEMSET },
        { "SYNCHRONIZATION", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION }, { "CUDA_EVENT", CUPTI_ACTIVITY_KIND_CUDA_EVENT },
        { "STREAM", CUPTI_ACTIVITY_KIND_STREAM }, { "CONTEXT", CUPTI_ACTIVITY_KIND_CONTEXT },
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        unsigned en = 0, dis = 0;
        int on = kind_state(kinds[k].kind, &en, &dis);
        printf("kind_%s %d %u %u\n", kinds[k].name, on, en, dis);
    }
    int (*event_ts)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "fake_cupti_event_timestamps");
    printf("event_timestamps %d\n", event_ts ? event_ts() : -2);
    unsigned ons = 0, offs = 0;
    int on = cb_state(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &ons, &offs);
    printf("cb_runtime_hot %d %u %u\n", on, ons, offs);
    on = cb_state(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &ons, &offs);
    printf("cb_runtime_structural %d\n", on);
    on = cb_state(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &ons, &offs);
    printf("cb_driver_hot %d %u %u\n", on, ons, offs);
    on = cb_state(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &ons, &offs);
    printf("cb_driver_structural %d\n", on);
    if (failures) {
        fprintf(stderr, "api_sampling_prog: %u calls returned errors\n", failures);
        return 1;
    }
    return 0;
}
