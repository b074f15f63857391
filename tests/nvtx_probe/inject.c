/*
 * An NVTX injection library of the test's own (NVTX_INJECTION64_PATH): it
 * receives every NVTX call the process makes — here, the ranges, marks and
 * stream names that the syncsight shim emits — and logs them one per line
 * to $NVTX_PROBE_LOG, so that tests/gpu_nvtx_emit.sh can assert their names
 * and nesting on a real GPU run.  (Under Nsight Systems the same calls land
 * on its timeline; nsys cannot finish a report on the test machines.)
 *
 *   domain <name>                     nvtxDomainCreateA
 *   push <domain> <depth> <text>      nvtxDomainRangePushEx (depth before the push)
 *   pop <domain> <depth>              nvtxDomainRangePop (depth after the pop)
 *   mark <domain> <text>              nvtxDomainMarkEx
 *   category <domain> <id> <name>     nvtxDomainNameCategoryA
 *   stream <name>                     nvtxNameCudaStreamA
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct probe_domain { char name[128]; } probe_domain;
typedef struct probe_string { char text[512]; } probe_string;

static FILE *log_file;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int depth;

static void logf_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_line(const char *fmt, ...)
{
    if (!log_file)
        return;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&log_lock);
    vfprintf(log_file, fmt, ap);
    fputc('\n', log_file);
    fflush(log_file);
    pthread_mutex_unlock(&log_lock);
    va_end(ap);
}

static const char *domain_name(nvtxDomainHandle_t d)
{
    return d ? ((probe_domain *)(void *)d)->name : "(default)";
}

static const char *message_text(const nvtxEventAttributes_t *a)
{
    if (!a)
        return "";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return a->message.registered ? ((probe_string *)(void *)a->message.registered)->text : "";
    default: return "(non-ascii)";
    }
}

static nvtxDomainHandle_t NVTX_API p_domain_create(const char *name)
{
    probe_domain *d = calloc(1, sizeof *d);
    if (d)
        snprintf(d->name, sizeof d->name, "%s", name ? name : "");
    logf_line("domain %s", name ? name : "");
    return (nvtxDomainHandle_t)(void *)d;
}

static nvtxStringHandle_t NVTX_API p_register_string(nvtxDomainHandle_t d, const char *text)
{
    (void)d;
    probe_string *s = calloc(1, sizeof *s);
    if (s)
        snprintf(s->text, sizeof s->text, "%s", text ? text : "");
    return (nvtxStringHandle_t)(void *)s;
}

static int NVTX_API p_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    logf_line("push %s %d %s", domain_name(d), depth, message_text(a));
    return depth++;
}

static int NVTX_API p_pop(nvtxDomainHandle_t d)
{
    if (depth > 0)
        depth--;
    logf_line("pop %s %d", domain_name(d), depth);
    return depth;
}

static void NVTX_API p_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    logf_line("mark %s %s", domain_name(d), message_text(a));
}

static void NVTX_API p_category(nvtxDomainHandle_t d, uint32_t id, const char *name)
{
    logf_line("category %s %u %s", domain_name(d), id, name ? name : "");
}

static void NVTX_API p_stream(cudaStream_t s, const char *name)
{
    (void)s;
    logf_line("stream %s", name ? name : "");
}

static int install(NvtxGetExportTableFunc_t get, NvtxCallbackModule module, int id, NvtxFunctionPointer fn)
{
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(module, &table, &size) || !table || (unsigned)id >= size)
        return 0;
    *table[id] = fn;
    return 1;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const char *path = getenv("NVTX_PROBE_LOG");
    log_file = path ? fopen(path, "a") : NULL;
    int ok = 1;
    ok &= install(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)p_domain_create);
    ok &= install(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringA,
                  (NvtxFunctionPointer)p_register_string);
    ok &= install(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)p_push);
    ok &= install(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)p_pop);
    ok &= install(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)p_mark);
    ok &= install(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainNameCategoryA, (NvtxFunctionPointer)p_category);
    install(get, NVTX_CB_MODULE_CUDART, NVTX_CBID_CUDART_NameCudaStreamA, (NvtxFunctionPointer)p_stream);
    logf_line("init %s", ok ? "ok" : "partial");
    return 1;
}
