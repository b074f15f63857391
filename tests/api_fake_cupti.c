/*
 * A fake libcupti.so.13 for the CPU tests of the shim's CUPTI callbacks
 * (tests/test_api_cupti_fake.sh): the entry points cupti.c requires, one
 * subscriber, and the callbacks a real CUPTI would make, driven by the test
 * program instead of by a GPU:
 *   fake_cupti_module_loaded   CUPTI_CBID_RESOURCE_MODULE_LOADED with an image
 *   fake_cupti_driver_launch   CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel (enter
 *                              and exit), called by the fake cudart's launch
 * A callback fires only when the subscriber enabled its (domain, cbid), as
 * with the real library.  No activity records are ever produced, but which
 * activity kinds and callbacks are enabled, and how often each was switched,
 * is kept for the test program to ask (fake_cupti_kind_state,
 * fake_cupti_callback_state: sampled recording switches them).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cupti.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;
static CUpti_CallbackFunc fake_callback;
static void *fake_userdata;
static int fake_subscribed;
static struct CUpti_Subscriber_st { int unused; } fake_subscriber;

/* Enabled (domain, cbid) pairs; a domain enabled whole has its bit set.
 * The real CUPTI has no limit: running out here is the fake's failure, said
 * aloud (a pair dropped silently once made later callbacks vanish). */
#define FAKE_MAX_ENABLED 2048
static struct { CUpti_CallbackDomain domain; CUpti_CallbackId cbid; } fake_enabled[FAKE_MAX_ENABLED];
static int fake_nenabled;
static uint32_t fake_domains;

FAKE_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                                void *userdata)
{
    pthread_mutex_lock(&fake_mu);
    if (fake_subscribed) {
        pthread_mutex_unlock(&fake_mu);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    fake_subscribed = 1;
    fake_callback = callback;
    fake_userdata = userdata;
    *subscriber = &fake_subscriber;
    pthread_mutex_unlock(&fake_mu);
    return CUPTI_SUCCESS;
}

/* Callback switches per domain: enables of a pair that was off, disables of
 * one that was on. */
static unsigned fake_cb_on[8], fake_cb_off[8];

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                     CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (subscriber != &fake_subscriber)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fake_mu);
    int at = -1;
    for (int i = 0; i < fake_nenabled && at < 0; i++)
        if (fake_enabled[i].domain == domain && fake_enabled[i].cbid == cbid)
            at = i;
    if (enable && at < 0 && fake_nenabled >= FAKE_MAX_ENABLED) {
        fprintf(stderr, "fake libcupti: more than %d callbacks enabled (raise FAKE_MAX_ENABLED)\n", FAKE_MAX_ENABLED);
        abort();
    }
    if (enable && at < 0) {
        fake_enabled[fake_nenabled].domain = domain;
        fake_enabled[fake_nenabled].cbid = cbid;
        fake_nenabled++;
        if (domain < 8)
            fake_cb_on[domain]++;
    } else if (!enable && at >= 0) {
        fake_enabled[at] = fake_enabled[--fake_nenabled];
        if (domain < 8)
            fake_cb_off[domain]++;
    }
    pthread_mutex_unlock(&fake_mu);
    return CUPTI_SUCCESS;
}

/* For the test: is (domain, cbid) enabled now, and how many times were
 * callbacks of `domain` switched on and off. */
FAKE_EXPORT int fake_cupti_callback_state(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, unsigned *ons,
                                          unsigned *offs)
{
    pthread_mutex_lock(&fake_mu);
    int on = 0;
    for (int i = 0; i < fake_nenabled && !on; i++)
        on = fake_enabled[i].domain == domain && fake_enabled[i].cbid == cbid;
    *ons = domain < 8 ? fake_cb_on[domain] : 0;
    *offs = domain < 8 ? fake_cb_off[domain] : 0;
    pthread_mutex_unlock(&fake_mu);
    return on;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                   CUpti_CallbackDomain domain)
{
    if (subscriber != &fake_subscriber || domain >= 32)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fake_mu);
    if (enable)
        fake_domains |= 1u << domain;
    pthread_mutex_unlock(&fake_mu);
    return CUPTI_SUCCESS;
}

static int fake_is_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    int on = 0;
    pthread_mutex_lock(&fake_mu);
    on = fake_callback != NULL && domain < 32 && (fake_domains & (1u << domain)) != 0;
    for (int i = 0; i < fake_nenabled && !on; i++)
        on = fake_enabled[i].domain == domain && fake_enabled[i].cbid == cbid;
    pthread_mutex_unlock(&fake_mu);
    return on;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "fake CUPTI error";
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                                CUpti_BuffersCallbackCompleteFunc completed)
{
    return requested != NULL && completed != NULL ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

#define FAKE_KINDS 64
static int fake_kind_on[FAKE_KINDS];
static unsigned fake_kind_enables[FAKE_KINDS], fake_kind_disables[FAKE_KINDS];

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= FAKE_KINDS)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&fake_mu);
    fake_kind_on[kind] = 1;
    fake_kind_enables[kind]++;
    pthread_mutex_unlock(&fake_mu);
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= FAKE_KINDS)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&fake_mu);
    fake_kind_on[kind] = 0;
    fake_kind_disables[kind]++;
    pthread_mutex_unlock(&fake_mu);
    return CUPTI_SUCCESS;
}

static int fake_event_ts = -1;   /* cuptiActivityEnableCudaEventDeviceTimestamps: never called */

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t enable)
{
    pthread_mutex_lock(&fake_mu);
    fake_event_ts = enable ? 1 : 0;
    pthread_mutex_unlock(&fake_mu);
    return CUPTI_SUCCESS;
}

/* For the test: the last cuptiActivityEnableCudaEventDeviceTimestamps (-1: none). */
FAKE_EXPORT int fake_cupti_event_timestamps(void)
{
    pthread_mutex_lock(&fake_mu);
    int v = fake_event_ts;
    pthread_mutex_unlock(&fake_mu);
    return v;
}

/* For the test: is `kind` enabled now, and how many times was it enabled
 * and disabled. */
FAKE_EXPORT int fake_cupti_kind_state(CUpti_ActivityKind kind, unsigned *enables, unsigned *disables)
{
    if ((unsigned)kind >= FAKE_KINDS)
        return -1;
    pthread_mutex_lock(&fake_mu);
    int on = fake_kind_on[kind];
    *enables = fake_kind_enables[kind];
    *disables = fake_kind_disables[kind];
    pthread_mutex_unlock(&fake_mu);
    return on;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    (void)buffer; (void)valid; (void)record;
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                                   size_t *dropped)
{
    (void)context; (void)stream_id;
    *dropped = 0;
    return CUPTI_SUCCESS;
}

/* ------------------------------------------------ driven by the test */

/* The driver loaded a module whose device code is `image`. */
FAKE_EXPORT void fake_cupti_module_loaded(const void *image, size_t size, uint32_t module_id)
{
    if (!fake_is_enabled(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED))
        return;
    CUpti_ModuleResourceData mod = { .moduleId = module_id, .cubinSize = size, .pCubin = image };
    CUpti_ResourceData rd;
    memset(&rd, 0, sizeof rd);
    rd.resourceDescriptor = &mod;
    fake_callback(fake_userdata, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED, &rd);
}

/* cuLaunchKernel(f, ..., kernelParams, NULL) as cudart makes it. */
FAKE_EXPORT void fake_cupti_driver_launch(CUfunction f, void **kernel_params)
{
    static uint32_t corr = 1000;
    if (!fake_is_enabled(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel))
        return;
    cuLaunchKernel_params p;
    memset(&p, 0, sizeof p);
    p.f = f;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 32;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = kernel_params;
    CUresult ret = CUDA_SUCCESS;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.functionName = "cuLaunchKernel";
    d.functionParams = &p;
    d.functionReturnValue = &ret;
    d.correlationId = __atomic_add_fetch(&corr, 1, __ATOMIC_RELAXED);
    d.callbackSite = CUPTI_API_ENTER;
    fake_callback(fake_userdata, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &d);
    d.callbackSite = CUPTI_API_EXIT;
    fake_callback(fake_userdata, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &d);
}

/* The context CUPTI says the calls below run in (contextUid), as
 * cuCtxPushCurrent / cuCtxPopCurrent change it: set by the test. */
static uint32_t fake_context;
FAKE_EXPORT void fake_cupti_set_context(uint32_t context) { fake_context = context; }

/* Any API callback pair a real CUPTI makes around a call, driven by the test
 * (tests/api_driver_prog.c): `domain` RUNTIME_API or DRIVER_API, `params`
 * CUPTI's <cbid>_params struct, `ret` the returned value (cudaError_t or
 * CUresult), `site` CUPTI_API_ENTER or CUPTI_API_EXIT. */
FAKE_EXPORT void fake_cupti_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char *name,
                                const void *params, const void *ret, int site, uint32_t corr)
{
    if (!fake_is_enabled(domain, cbid))
        return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.functionName = name;
    d.functionParams = params;
    d.functionReturnValue = (void *)(uintptr_t)ret;
    d.correlationId = corr;
    d.callbackSite = (CUpti_ApiCallbackSite)site;
    d.contextUid = fake_context;
    fake_callback(fake_userdata, domain, cbid, &d);
}

/* The subscriber's callback itself, for the benchmark (tests/api_driver_bench.c)
 * to call the way the real CUPTI dispatches: without this fake's bookkeeping. */
FAKE_EXPORT CUpti_CallbackFunc fake_cupti_subscriber(void **userdata)
{
    *userdata = fake_userdata;
    return fake_callback;
}
