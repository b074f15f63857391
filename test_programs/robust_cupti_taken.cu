// robust_cupti_taken: CUPTI is already held by another subscriber when the
// shim starts (as under Nsight Systems, a PyTorch profiler, compute-sanitizer).
// The shim must degrade -- one stderr line, SS_NOTE_CUPTI_TAKEN in the trace,
// the symbol interposer still recording -- and the other tool must keep
// working: its callback still sees the program's runtime calls.
//
// Two builds from this file (tests/gpu_robust.sh does both):
//   -DROBUST_CUPTI_HOLDER_LIB -shared -Xcompiler -fPIC -lcupti
//       librobust_cupti_holder.so: subscribes to CUPTI from its constructor.
//       Linked into the program (DT_NEEDED), its constructor runs before the
//       constructor of an LD_PRELOADed libsyncsight.so, so it wins the race
//       the way a tool injected first does.
//   -cudart shared ... -L<dir> -lrobust_cupti_holder
//       the program: CUDA work, then what the holder saw.
// Built alone (as `make gpu-test` does), the holder symbols are absent (weak)
// and the program is a plain, clean CUDA program.
#ifdef ROBUST_CUPTI_HOLDER_LIB
#include <cupti.h>

static CUpti_SubscriberHandle holder_subscriber;
static int holder_status = -1;
static volatile long holder_runtime_calls;

static void CUPTIAPI holder_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                     const void *cbdata)
{
    (void)userdata;
    (void)cbid;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
        ((const CUpti_CallbackData *)cbdata)->callbackSite == CUPTI_API_ENTER)
        __atomic_add_fetch(&holder_runtime_calls, 1, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void holder_subscribe(void)
{
    holder_status = (int)cuptiSubscribe(&holder_subscriber, holder_callback, NULL);
    if (holder_status == CUPTI_SUCCESS)
        cuptiEnableDomain(1, holder_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
}

extern "C" int robust_cupti_holder_status(void) { return holder_status; }
extern "C" long robust_cupti_holder_calls(void) { return __atomic_load_n(&holder_runtime_calls, __ATOMIC_RELAXED); }

#else
#include "ss_test.cuh"

extern "C" __attribute__((weak)) int robust_cupti_holder_status(void);
extern "C" __attribute__((weak)) long robust_cupti_holder_calls(void);

__global__ void scale(float *data, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}

int main(void)
{
    const bool have_holder = robust_cupti_holder_status != nullptr;
    if (have_holder)
        printf("holder cuptiSubscribe = %d\n", robust_cupti_holder_status());
    ss_init_device();
    const int n = 1 << 16;
    float *device_data, *host_data;
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CK(cudaMalloc(&device_data, n * sizeof(float)));
    CK(cudaMallocHost(&host_data, n * sizeof(float)));
    for (int i = 0; i < n; i++)
        host_data[i] = 1.0f;
    CK(cudaMemcpyAsync(device_data, host_data, n * sizeof(float), cudaMemcpyHostToDevice, stream));
    scale<<<(n + 255) / 256, 256, 0, stream>>>(device_data, n, 3.0f);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(host_data, device_data, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += host_data[i];
    printf("cupti_taken: sum %.0f\n", sum);
    CK(cudaFreeHost(host_data));
    CK(cudaFree(device_data));
    CK(cudaStreamDestroy(stream));
    if (have_holder)
        printf("holder saw runtime calls: %s\n", robust_cupti_holder_calls() > 0 ? "yes" : "no");
    return 0;
}
#endif
