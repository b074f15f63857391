/*
 * What each CUPTI mechanism costs a launch-bound loop, measured before the
 * shim's capture design is chosen (docs/performance.md, "CUPTI mechanisms").
 *
 *   cupti_cost MODE [--launches=N]
 *
 * The loop is bench/launch_bound.cu's: tiny kernels alternating over two
 * non-blocking streams, an event record + cross-stream wait every 10
 * launches, a stream sync every 1000.  MODE picks what CUPTI does while it
 * runs (one process per mode, so nothing carries over):
 *
 *   none              no CUPTI at all
 *   subscribed        a subscriber, no callback or activity enabled
 *   cb_rt_launch      runtime callback on cudaLaunchKernel only
 *   cb_rt_all         every runtime callback (the shim's correlation source)
 *   cb_drv_launch     driver callback on cuLaunchKernel only
 *   act_kernel        CONCURRENT_KERNEL activity
 *   act_kernel_cb     + runtime callbacks on every API (what the shim does)
 *   act_kernel_rtact  + RUNTIME activity (records instead of callbacks)
 *   act_kernel_rtsel  + runtime activity for launch/record/wait/sync only
 *   act_kernel_ext    + external correlation id pushed/popped per call
 *   act_off           kernel activity + runtime callbacks on for the warm-up,
 *                     then both turned off before the timed loop (the cost of
 *                     an unrecorded window)
 *   act_window        kernel activity + runtime callbacks toggled every 10 000
 *                     launches, on for 1 in 10 (a recording window's duty cycle)
 *   act_window_k      the same toggling kernel activity only
 *   cb_drv_all        every driver callback (prints which ones cudart's calls fire)
 *   act_kernel_pt     kernel activity, CUPTI's per-thread activity buffers
 *   act_kernel_nozero kernel activity, buffers not zeroed by CUPTI
 *   act_kernel_bigbuf kernel activity, 64 MiB device buffers, 4 preallocated
 *
 * Prints one line: CUPTI_COST mode=... wall_s=... calls=... records=...
 */
#include <cuda_runtime.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { const char *s_ = ""; \
    cuptiGetResultString(r_, &s_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

__global__ void tiny(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = out[i] * 0.5f + 1.0f;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile unsigned long long g_corr_sum;
static volatile long g_records;
static long g_cb_rt, g_cb_drv;
static unsigned g_drv_hist[1024];
static int g_in_loop;

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data)
{
    (void)ud; (void)id;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API || dom == CUPTI_CB_DOMAIN_DRIVER_API) {
        const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
        if (cd->callbackSite == CUPTI_API_EXIT) {
            g_corr_sum += cd->correlationId;
            if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
                g_cb_rt++;
            else {
                g_cb_drv++;
                if (g_in_loop && id < 1024)
                    g_drv_hist[id]++;
            }
        }
    }
}

static void CUPTIAPI buf_req(uint8_t **buf, size_t *size, size_t *maxrec)
{
    *size = 8 << 20;
    *buf = (uint8_t *)aligned_alloc(8, *size);
    *maxrec = 0;
}

static void CUPTIAPI buf_done(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
    (void)c; (void)s; (void)size;
    CUpti_Activity *rec = NULL;
    long n = 0;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
        n++;
    g_records += n;
    free(buf);
}

static const CUpti_CallbackId k_sel[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
};

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "none";
    long launches = 200000;
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], "--launches=", 11) == 0)
            launches = atol(argv[i] + 11);
    int m_sub = strcmp(mode, "none") != 0;
    int m_act = strncmp(mode, "act_", 4) == 0;
    int m_ext = strcmp(mode, "act_kernel_ext") == 0;
    int m_window = strcmp(mode, "act_window") == 0;
    int m_off = strcmp(mode, "act_off") == 0;
    int m_window_k = strcmp(mode, "act_window_k") == 0;
    int m_rtcb = !strcmp(mode, "cb_rt_all") || !strcmp(mode, "act_kernel_cb") || m_off || m_window;
    if (m_window_k)
        m_window = 1;

    CUpti_SubscriberHandle sub = NULL;
    if (m_act) {
        CU(cuptiActivityRegisterCallbacks(buf_req, buf_done));
        CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        if (!strcmp(mode, "act_kernel_rtact"))
            CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
        if (!strcmp(mode, "act_kernel_rtsel"))
            for (size_t i = 0; i < sizeof k_sel / sizeof k_sel[0]; i++)
                CU(cuptiActivityEnableRuntimeApi(k_sel[i], 1));
        if (m_ext)
            CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
        if (!strcmp(mode, "act_kernel_pt")) {
            uint8_t one = 1;
            size_t sz = sizeof one;
            CU(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &one));
        }
        if (!strcmp(mode, "act_kernel_nozero")) {
            uint8_t zero = 0;
            size_t sz = sizeof zero;
            CU(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz, &zero));
        }
        if (!strcmp(mode, "act_kernel_bigbuf")) {
            size_t v = 64 << 20, sz = sizeof v;
            CU(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &v));
            size_t pre = 4;
            CU(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &sz, &pre));
        }
    }
    if (m_sub) {
        CU(cuptiSubscribe(&sub, on_cb, NULL));
        if (m_rtcb)
            CU(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
        if (!strcmp(mode, "cb_rt_launch"))
            CU(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
        if (!strcmp(mode, "cb_drv_all"))
            CU(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
        if (!strcmp(mode, "cb_drv_launch"))
            CU(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    }

    const int n = 256;
    float *buf[2];
    cudaStream_t s[2];
    cudaEvent_t ev[2];
    for (int i = 0; i < 2; i++) {
        CK(cudaMalloc(&buf[i], n * sizeof(float)));
        CK(cudaMemset(buf[i], 0, n * sizeof(float)));
        CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
    }
    for (int i = 0; i < 100; i++)
        tiny<<<1, n, 0, s[i & 1]>>>(buf[i & 1], n);
    CK(cudaDeviceSynchronize());
    double toggle_s = 0, toggle_max = 0;
    if (m_off || m_window) {
        CU(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        if (m_rtcb)
            CU(cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
    }
    g_in_loop = 1;

    long calls = 0, toggles = 0;
    int on = 0;
    double t0 = now_s();
    for (long i = 0; i < launches; i++) {
        int k = (int)(i & 1);
        if (m_window && i % 10000 == 0) {
            int want = (i / 10000) % 10 == 0;
            if (want != on) {
                double tt = now_s();
                if (want) {
                    CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
                    if (m_rtcb)
                        CU(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
                } else {
                    CU(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
                    if (m_rtcb)
                        CU(cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
                }
                tt = now_s() - tt;
                toggle_s += tt;
                if (tt > toggle_max)
                    toggle_max = tt;
                on = want;
                toggles++;
            }
        }
        if (m_ext)
            cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, (uint64_t)i);
        tiny<<<1, n, 0, s[k]>>>(buf[k], n);
        if (m_ext) {
            uint64_t id;
            cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
        }
        calls++;
        if (i % 10 == 9) {
            CK(cudaEventRecord(ev[k], s[k]));
            CK(cudaStreamWaitEvent(s[k ^ 1], ev[k], 0));
            calls += 2;
        }
        if (i % 1000 == 999) {
            CK(cudaStreamSynchronize(s[k]));
            calls++;
        }
    }
    CK(cudaStreamSynchronize(s[0]));
    CK(cudaStreamSynchronize(s[1]));
    calls += 2;
    double wall = now_s() - t0;
    g_in_loop = 0;
    if (m_act)
        cuptiActivityFlushAll(1);
    printf("CUPTI_COST mode=%s wall_s=%.4f calls=%ld records=%ld toggles=%ld toggle_s=%.4f toggle_max_s=%.4f "
           "cb_rt=%ld cb_drv=%ld\n", mode, wall, calls, (long)g_records, toggles, toggle_s, toggle_max, g_cb_rt, g_cb_drv);
    if (g_cb_drv) {
        printf("  driver cbids in the loop:");
        for (int i = 0; i < 1024; i++)
            if (g_drv_hist[i])
                printf(" %d:%u", i, g_drv_hist[i]);
        printf("\n");
    }
    return 0;
}
