/*
 * NVTX, both directions.
 *
 * Emission: a "syncsight" NVTX domain with ranges around the program's
 * blocking/synchronizing CUDA calls and marks after long blocks, so a user
 * looking at Nsight Systems sees what syncsight saw.
 *
 * Capture: the program's own NVTX ranges, delivered by CUPTI's NVTX-domain
 * callbacks (NVTX_INJECTION64_PATH points at libcupti, see cupti.c), become
 * SS_REC_NVTX records.  Our own domain is filtered out twice: by handle and
 * by a thread-local flag set while we emit (the callback runs synchronously
 * inside our nvtx call on the same thread).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <generated_nvtx_meta.h>
#include <cupti.h>

#include "producers.h"

/* ------------------------------------------------------------ emission */

static nvtxDomainHandle_t own_domain;
static pthread_once_t     own_domain_once = PTHREAD_ONCE_INIT;
static __thread int       tls_emitting;

#define NAME_CACHE_SLOTS 4096           /* runtime cbids are < 1000 in CUDA 13 */
static _Atomic(nvtxStringHandle_t) name_cache[NAME_CACHE_SLOTS];

/* Range nesting of our own pushes on this thread, so end_call knows what
 * begin_call did (calls can nest: a cudaMemcpy inside a host callback). */
#define CALL_DEPTH_MAX 32
static __thread struct { int category; int pushed; } call_stack[CALL_DEPTH_MAX];
static __thread int call_depth;

static const struct { const char *label; uint32_t argb; } categories[] = {
    [SS_NVTX_CAT_DEVICE_SYNC] = { "device-wide sync",        0xFFD62728u },
    [SS_NVTX_CAT_STREAM_SYNC] = { "stream sync",             0xFFFF7F0Eu },
    [SS_NVTX_CAT_EVENT_SYNC]  = { "event sync",              0xFFBCBD22u },
    [SS_NVTX_CAT_MAY_BLOCK]   = { "may sync implicitly",     0xFF9467BDu },
    [SS_NVTX_CAT_COPY]        = { "copy",                    0xFF1F77B4u },
    [SS_NVTX_CAT_OTHER]       = { "cuda call",               0xFF7F7F7Fu },
};
#define CATEGORY_COUNT (int)(sizeof categories / sizeof categories[0])

static int valid_category(int c)
{
    return c >= 1 && c < CATEGORY_COUNT;
}

static void create_own_domain(void)
{
    tls_emitting = 1;
    own_domain = nvtxDomainCreateA("syncsight");
    for (int c = 1; c < CATEGORY_COUNT; c++)
        nvtxDomainNameCategoryA(own_domain, (uint32_t)c, categories[c].label);
    tls_emitting = 0;
}

static int emission_on(void)
{
    if (!ss_cfg.nvtx_emit || !ss_recording())
        return 0;
    pthread_once(&own_domain_once, create_own_domain);
    return own_domain != NULL;
}

void ss_nvtx_begin_call(uint32_t cbid, const char *api_name, int category)
{
    int depth = call_depth++;
    if (depth >= CALL_DEPTH_MAX)
        return;
    call_stack[depth].category = category;
    call_stack[depth].pushed = 0;
    if (!emission_on() || !api_name)
        return;
    if (!valid_category(category))
        category = SS_NVTX_CAT_OTHER;

    nvtxEventAttributes_t attr;
    memset(&attr, 0, sizeof attr);
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.category = (uint32_t)category;
    attr.colorType = NVTX_COLOR_ARGB;
    attr.color = categories[category].argb;

    tls_emitting = 1;
    char text[160];
    nvtxStringHandle_t name = cbid < NAME_CACHE_SLOTS ? atomic_load(&name_cache[cbid]) : NULL;
    if (!name) {
        /* e.g. "cudaDeviceSynchronize (device-wide sync)"; registered once
         * per cbid so later ranges cost no formatting. */
        snprintf(text, sizeof text, "%s (%s)", api_name, categories[category].label);
        if (cbid < NAME_CACHE_SLOTS) {
            name = nvtxDomainRegisterStringA(own_domain, text);
            atomic_store(&name_cache[cbid], name);
        }
    }
    if (name) {
        attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        attr.message.registered = name;
    } else {
        attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attr.message.ascii = text;
    }
    nvtxDomainRangePushEx(own_domain, &attr);
    tls_emitting = 0;
    call_stack[depth].pushed = 1;
}

void ss_nvtx_end_call(uint32_t cbid, const char *api_name, uint64_t blocked_ns, int gpu_busy_known)
{
    (void)cbid;
    if (call_depth == 0)
        return;
    int depth = --call_depth;
    if (depth >= CALL_DEPTH_MAX || !call_stack[depth].pushed)
        return;
    int category = call_stack[depth].category;
    tls_emitting = 1;
    nvtxDomainRangePop(own_domain);
    if (blocked_ns > 50000 && api_name) {
        /* Marks make long blocks findable on the timeline without reading
         * range lengths: "implicit sync: cudaFree blocked 48.2 ms". */
        char text[200];
        double ms = (double)blocked_ns / 1e6;
        if (category == SS_NVTX_CAT_DEVICE_SYNC || category == SS_NVTX_CAT_STREAM_SYNC ||
            category == SS_NVTX_CAT_EVENT_SYNC)
            snprintf(text, sizeof text, "%s waited %.1f ms", api_name, ms);
        else if (gpu_busy_known)
            snprintf(text, sizeof text, "implicit sync: %s blocked %.1f ms", api_name, ms);
        else
            /* blocked in a call that is not a synchronization: the analyzer
             * decides whether the GPU work in flight was the reason */
            snprintf(text, sizeof text, "possible implicit sync: %s blocked %.1f ms", api_name, ms);
        nvtxEventAttributes_t attr;
        memset(&attr, 0, sizeof attr);
        attr.version = NVTX_VERSION;
        attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        attr.category = valid_category(category) ? (uint32_t)category : SS_NVTX_CAT_OTHER;
        attr.colorType = NVTX_COLOR_ARGB;
        attr.color = 0xFFD62728u;
        attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attr.message.ascii = text;
        nvtxDomainMarkEx(own_domain, &attr);
    }
    tls_emitting = 0;
}

void ss_nvtx_name_stream(void *stream, const char *name)
{
    if (!emission_on() || !name)
        return;
    tls_emitting = 1;
    nvtxNameCudaStreamA((CUstream)stream, name);
    tls_emitting = 0;
}

/* ------------------------------------------------------------- capture */

/* Program's ranges pushed on this thread and not yet popped. */
#define PUSH_DEPTH_MAX 64
struct open_range { uint64_t start; uint32_t name_id, domain_id, color; };
static __thread struct open_range push_stack[PUSH_DEPTH_MAX];
static __thread uint32_t push_depth;

/* Start/end ranges can end on another thread: a small shared table. */
#define STARTED_MAX 1024
struct started_range { uint64_t id; struct open_range r; uint32_t tid; };
static pthread_mutex_t        started_mu = PTHREAD_MUTEX_INITIALIZER;
static struct started_range   started[STARTED_MAX];

/* Domains and registered strings the program created: handle -> text id. */
#define HANDLE_MAX 512
struct handle_name { const void *handle; uint32_t id; };
static pthread_mutex_t    handles_mu = PTHREAD_MUTEX_INITIALIZER;
static struct handle_name domains[HANDLE_MAX];
static struct handle_name reg_strings[HANDLE_MAX];
static const void        *own_domain_seen;    /* our domain as CUPTI reported it */

static uint32_t handle_lookup(struct handle_name *table, const void *h)
{
    uint32_t id = 0;
    pthread_mutex_lock(&handles_mu);
    for (int i = 0; i < HANDLE_MAX && table[i].handle; i++)
        if (table[i].handle == h) {
            id = table[i].id;
            break;
        }
    pthread_mutex_unlock(&handles_mu);
    return id;
}

static void handle_add(struct handle_name *table, const void *h, uint32_t id)
{
    pthread_mutex_lock(&handles_mu);
    for (int i = 0; i < HANDLE_MAX; i++)
        if (!table[i].handle || table[i].handle == h) {
            table[i].handle = h;
            table[i].id = id;
            break;
        }
    pthread_mutex_unlock(&handles_mu);
}

static uint32_t wide_string_id(const wchar_t *w)
{
    /* UTF-8 encode by hand: wcstombs depends on the program's locale. */
    char out[1024];
    size_t n = 0;
    for (; *w && n + 4 < sizeof out; w++) {
        uint32_t c = (uint32_t)*w;
        if (c < 0x80) {
            out[n++] = (char)c;
        } else if (c < 0x800) {
            out[n++] = (char)(0xC0 | (c >> 6));
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[n++] = (char)(0xE0 | (c >> 12));
            out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[n++] = (char)(0xF0 | ((c >> 18) & 0x07));
            out[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
            out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        }
    }
    return ss_string_id(out, n);
}

static void attr_text(const nvtxEventAttributes_t *a, uint32_t *name_id, uint32_t *color)
{
    *name_id = 0;
    *color = 0;
    if (!a)
        return;
    if (a->colorType == NVTX_COLOR_ARGB)
        *color = a->color;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        if (a->message.ascii)
            *name_id = ss_string_id(a->message.ascii, strlen(a->message.ascii));
        break;
    case NVTX_MESSAGE_TYPE_UNICODE:
        if (a->message.unicode)
            *name_id = wide_string_id(a->message.unicode);
        break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        *name_id = handle_lookup(reg_strings, a->message.registered);
        break;
    default:
        break;
    }
}

static void write_range(const struct open_range *r, uint64_t end, uint32_t tid, uint32_t depth,
                        uint16_t flags)
{
    ss_nvtx_rec *v = ss_rec_begin(SS_REC_NVTX, sizeof *v, 0);
    if (!v)
        return;
    v->h.flags = flags;
    v->start = r->start;
    v->end = end;
    v->tid = tid;
    v->name_id = r->name_id;
    v->domain_id = r->domain_id;
    v->depth = depth;
    v->color = r->color;
    ss_rec_commit(v);
}

static void stream_name(const void *stream, uint32_t name_id)
{
    if (!name_id)
        return;
    ss_stream_name_rec *v = ss_rec_begin(SS_REC_STREAM_NAME, sizeof *v, 0);
    if (!v)
        return;
    v->time = ss_now();
    v->handle = (uint64_t)(uintptr_t)stream;
    v->name_id = name_id;
    v->tid = ss_tid();
    ss_rec_commit(v);
}

static void push(uint32_t domain_id, uint32_t name_id, uint32_t color)
{
    uint32_t d = push_depth++;
    if (d < PUSH_DEPTH_MAX)
        push_stack[d] = (struct open_range){ ss_now(), name_id, domain_id, color };
}

static void pop(void)
{
    if (push_depth == 0)
        return;          /* a pop without push (or pushed before we loaded) */
    uint32_t d = --push_depth;
    if (d < PUSH_DEPTH_MAX)
        write_range(&push_stack[d], ss_now(), ss_tid(), d, 0);
}

static void mark(uint32_t domain_id, uint32_t name_id, uint32_t color)
{
    struct open_range r = { ss_now(), name_id, domain_id, color };
    write_range(&r, r.start, ss_tid(), push_depth, SS_NVTX_F_MARK);
}

static void range_start(const void *ret, uint32_t domain_id, uint32_t name_id, uint32_t color)
{
    if (!ret)
        return;          /* no range id to match the end with */
    uint64_t id = *(const nvtxRangeId_t *)ret;
    pthread_mutex_lock(&started_mu);
    for (int i = 0; i < STARTED_MAX; i++)
        if (started[i].id == 0) {
            started[i] = (struct started_range){ id, { ss_now(), name_id, domain_id, color }, ss_tid() };
            break;
        }
    pthread_mutex_unlock(&started_mu);
}

static void range_end(nvtxRangeId_t id)
{
    struct started_range found = { 0 };
    pthread_mutex_lock(&started_mu);
    for (int i = 0; i < STARTED_MAX; i++)
        if (started[i].id == id && id != 0) {
            found = started[i];
            started[i].id = 0;
            break;
        }
    pthread_mutex_unlock(&started_mu);
    if (found.id)
        write_range(&found.r, ss_now(), found.tid, 0, SS_NVTX_F_START_END);
}

void ss_nvtx_on_callback(uint32_t cbid, const void *cbdata)
{
    if (tls_emitting)
        return;
    const CUpti_NvtxData *d = cbdata;
    const void *p = d->functionParams;
    uint32_t name_id = 0, color = 0;
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
        const nvtxDomainCreateA_params *a = p;
        if (!a->name || !d->functionReturnValue)
            break;
        const void *h = *(const nvtxDomainHandle_t *)d->functionReturnValue;
        if (strcmp(a->name, "syncsight") == 0)
            own_domain_seen = h;
        else
            handle_add(domains, h, ss_string_id(a->name, strlen(a->name)));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
        const nvtxDomainRegisterStringA_params *a = p;
        if (a->string && d->functionReturnValue)
            handle_add(reg_strings, *(const nvtxStringHandle_t *)d->functionReturnValue,
                       ss_string_id(a->string, strlen(a->string)));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
        const nvtxRangePushA_params *a = p;
        push(0, a->message ? ss_string_id(a->message, strlen(a->message)) : 0, 0);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushW: {
        const nvtxRangePushW_params *a = p;
        push(0, a->message ? wide_string_id(a->message) : 0, 0);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx: {
        const nvtxRangePushEx_params *a = p;
        attr_text(a->eventAttrib, &name_id, &color);
        push(0, name_id, color);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop:
        pop();
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
        const nvtxDomainRangePushEx_params *a = p;
        if (a->domain == own_domain || (own_domain_seen && a->domain == own_domain_seen))
            break;
        attr_text(a->core.eventAttrib, &name_id, &color);
        push(handle_lookup(domains, a->domain), name_id, color);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
        const nvtxDomainRangePop_params *a = p;
        if (a->domain == own_domain || (own_domain_seen && a->domain == own_domain_seen))
            break;
        pop();
        break;
    }
    case CUPTI_CBID_NVTX_nvtxMarkA: {
        const nvtxMarkA_params *a = p;
        mark(0, a->message ? ss_string_id(a->message, strlen(a->message)) : 0, 0);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxMarkEx: {
        const nvtxMarkEx_params *a = p;
        attr_text(a->eventAttrib, &name_id, &color);
        mark(0, name_id, color);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
        const nvtxDomainMarkEx_params *a = p;
        if (a->domain == own_domain || (own_domain_seen && a->domain == own_domain_seen))
            break;
        attr_text(a->core.eventAttrib, &name_id, &color);
        mark(handle_lookup(domains, a->domain), name_id, color);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartA: {
        const nvtxRangeStartA_params *a = p;
        range_start(d->functionReturnValue, 0,
                    a->message ? ss_string_id(a->message, strlen(a->message)) : 0, 0);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartEx: {
        const nvtxRangeStartEx_params *a = p;
        attr_text(a->eventAttrib, &name_id, &color);
        range_start(d->functionReturnValue, 0, name_id, color);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
        const nvtxDomainRangeStartEx_params *a = p;
        if (a->domain == own_domain || (own_domain_seen && a->domain == own_domain_seen))
            break;
        attr_text(a->core.eventAttrib, &name_id, &color);
        range_start(d->functionReturnValue, handle_lookup(domains, a->domain), name_id, color);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd: {
        const nvtxRangeEnd_params *a = p;
        range_end(a->id);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
        const nvtxDomainRangeEnd_params *a = p;
        range_end(a->core.id);
        break;
    }
    /* The runtime's and the driver's stream handles are one pointer. */
    case CUPTI_CBID_NVTX_nvtxNameCudaStreamA: {
        const nvtxNameCudaStreamA_params *a = p;
        if (a->name)
            stream_name(a->stream, ss_string_id(a->name, strlen(a->name)));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxNameCudaStreamW: {
        const nvtxNameCudaStreamW_params *a = p;
        if (a->name)
            stream_name(a->stream, wide_string_id(a->name));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxNameCuStreamA: {
        const nvtxNameCuStreamA_params *a = p;
        if (a->name)
            stream_name(a->stream, ss_string_id(a->name, strlen(a->name)));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxNameCuStreamW: {
        const nvtxNameCuStreamW_params *a = p;
        if (a->name)
            stream_name(a->stream, wide_string_id(a->name));
        break;
    }
    default:
        break;
    }
}

/* At exit: ranges still open (the exiting thread's pushes and every
 * start/end range) are written with SS_NVTX_F_UNCLOSED, ending now. */
void ss_nvtx_close_open_ranges(void)
{
    uint64_t now = ss_now();
    while (push_depth > 0) {
        uint32_t d = --push_depth;
        if (d < PUSH_DEPTH_MAX)
            write_range(&push_stack[d], now, ss_tid(), d, SS_NVTX_F_UNCLOSED);
    }
    pthread_mutex_lock(&started_mu);
    for (int i = 0; i < STARTED_MAX; i++)
        if (started[i].id) {
            struct started_range s = started[i];
            started[i].id = 0;
            pthread_mutex_unlock(&started_mu);
            write_range(&s.r, now, s.tid, 0, SS_NVTX_F_START_END | SS_NVTX_F_UNCLOSED);
            pthread_mutex_lock(&started_mu);
        }
    pthread_mutex_unlock(&started_mu);
}
