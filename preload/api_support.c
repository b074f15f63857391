/*
 * Support for the generated API-recording code: per-thread state, resolution
 * of the real cudart and of the few driver functions used, memory kinds,
 * kernel parameter layouts, and the emission of records.  See api_support.h.
 *
 * Everything on the per-call path is lock-free, allocation-free and makes no
 * system call; first uses (resolving a symbol, learning a kernel's parameter
 * layout) may take a lock once.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>
#include <cupti.h>   /* also generated_cuda_meta.h: the driver params structs */
#include "api_support.h"

/* ------------------------------------------------------------ per thread */

static __thread ss_api_tls ss_api_tls_state = { .device = -1 };

ss_api_tls *ss_api_thread(void)
{
    return &ss_api_tls_state;
}

void ss_api_hot_count_slow(ss_api_tls *t)
{
    if (t->hot_count == NULL) {
        int shared = 0;
        t->hot_count = ss_hot_slot_claim(&shared);
        t->hot_shared = (uint8_t)shared;
    }
    if (t->hot_shared)
        __atomic_add_fetch(t->hot_count, 1, __ATOMIC_RELAXED);
    else
        __atomic_store_n(t->hot_count, __atomic_load_n(t->hot_count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------- resolving cudart */

void *ss_api_resolve(const char *name, void *volatile *slot)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (fn == NULL) {
        /* cudart loaded with dlopen(RTLD_LOCAL) (e.g. by a plugin) is not in
         * the global scope RTLD_NEXT searches: ask it directly. */
        void *h = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_LAZY);
        if (h != NULL) {
            fn = dlsym(h, name);
            dlclose(h);   /* NOLOAD took a reference: give it back */
        }
    }
    if (fn != NULL)
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    return fn;
}

/* ------------------------------------------------------ the driver side */

typedef CUresult (CUDAAPI *ss_cuPointerGetAttributes_fn)(unsigned int, CUpointer_attribute *, void **,
                                                         CUdeviceptr);
typedef CUresult (CUDAAPI *ss_cuFuncGetParamInfo_fn)(CUfunction, size_t, size_t *, size_t *);
typedef CUresult (CUDAAPI *ss_cuKernelGetParamInfo_fn)(CUkernel, size_t, size_t *, size_t *);

enum { SS_DRV_UNRESOLVED = 0, SS_DRV_READY = 1, SS_DRV_ABSENT = 2 };
/* libcuda is loaded by cudart at its first call; until then there is nothing
 * to ask.  Give up after this many tries so that a process without a driver
 * does not pay dlopen(RTLD_NOLOAD) (a lock) on every copy. */
#define SS_DRV_MAX_TRIES 64

static struct {
    int state;
    int tries;
    ss_cuPointerGetAttributes_fn pointer_get_attributes;
    ss_cuFuncGetParamInfo_fn func_get_param_info;
    ss_cuKernelGetParamInfo_fn kernel_get_param_info;
} ss_drv;

static int ss_driver_ready(void)
{
    int state = __atomic_load_n(&ss_drv.state, __ATOMIC_ACQUIRE);
    if (__builtin_expect(state == SS_DRV_READY, 1))
        return 1;
    if (state == SS_DRV_ABSENT)
        return 0;
    /* Never dlopen the driver ourselves: only use the one cudart loaded. */
    void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    if (h == NULL) {
        if (__atomic_add_fetch(&ss_drv.tries, 1, __ATOMIC_RELAXED) >= SS_DRV_MAX_TRIES)
            __atomic_store_n(&ss_drv.state, SS_DRV_ABSENT, __ATOMIC_RELEASE);
        return 0;
    }
    /* Racing threads store the same values: harmless. The handle keeps its
     * reference on purpose (the pointers must stay valid). */
    ss_drv.pointer_get_attributes = (ss_cuPointerGetAttributes_fn)dlsym(h, "cuPointerGetAttributes");
    ss_drv.func_get_param_info = (ss_cuFuncGetParamInfo_fn)dlsym(h, "cuFuncGetParamInfo");
    ss_drv.kernel_get_param_info = (ss_cuKernelGetParamInfo_fn)dlsym(h, "cuKernelGetParamInfo");
    __atomic_store_n(&ss_drv.state, SS_DRV_READY, __ATOMIC_RELEASE);
    return 1;
}

uint8_t ss_api_mem_kind(const void *p)
{
    if (p == NULL || !ss_driver_ready() || ss_drv.pointer_get_attributes == NULL)
        return SS_MEM_UNKNOWN;
    /* One driver call for both attributes; unlike cuPointerGetAttribute it
     * does not fail on a pointer the driver does not know, it leaves the
     * memory type 0: that is plain (pageable) host memory. */
    unsigned int memory_type = 0;
    unsigned int is_managed = 0;   /* the driver writes a bool into it */
    CUpointer_attribute attrs[2] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED };
    void *data[2] = { &memory_type, &is_managed };
    if (ss_drv.pointer_get_attributes(2, attrs, data, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return SS_MEM_UNKNOWN;
    if (is_managed & 0xff)
        return SS_MEM_MANAGED;
    switch (memory_type) {
    case CU_MEMORYTYPE_HOST:    return SS_MEM_PINNED;
    case CU_MEMORYTYPE_DEVICE:  return SS_MEM_DEVICE;
    case CU_MEMORYTYPE_ARRAY:   return SS_MEM_ARRAY;
    case CU_MEMORYTYPE_UNIFIED: return SS_MEM_MANAGED;
    case 0:                     return SS_MEM_PAGEABLE;
    default:                    return SS_MEM_UNKNOWN;
    }
}

/* ------------------------------------------------------- record helpers */

static uint8_t ss_api_pitched_kind(cudaArray_const_t array, const void *ptr)
{
    return array != NULL ? SS_MEM_ARRAY : ss_api_mem_kind(ptr);
}

void ss_api_fill_memcpy3d(ss_api_rec *r, const struct cudaMemcpy3DParms *p)
{
    if (p == NULL)
        return;
    r->ptr = p->dstArray ? (uint64_t)(uintptr_t)p->dstArray : (uint64_t)(uintptr_t)p->dstPtr.ptr;
    r->ptr2 = p->srcArray ? (uint64_t)(uintptr_t)p->srcArray : (uint64_t)(uintptr_t)p->srcPtr.ptr;
    /* Width is in bytes for linear memory and in elements for arrays (whose
     * element size would need a query): the record says what the call said. */
    r->bytes = (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
    r->arg = (uint32_t)p->kind;
    r->mem_dst = ss_api_pitched_kind(p->dstArray, p->dstPtr.ptr);
    r->mem_src = ss_api_pitched_kind(p->srcArray, p->srcPtr.ptr);
}

void ss_api_fill_memcpy3d_peer(ss_api_rec *r, const struct cudaMemcpy3DPeerParms *p)
{
    if (p == NULL)
        return;
    r->ptr = p->dstArray ? (uint64_t)(uintptr_t)p->dstArray : (uint64_t)(uintptr_t)p->dstPtr.ptr;
    r->ptr2 = p->srcArray ? (uint64_t)(uintptr_t)p->srcArray : (uint64_t)(uintptr_t)p->srcPtr.ptr;
    r->bytes = (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
    r->arg = (uint32_t)p->dstDevice;
    r->arg2 = (int32_t)p->srcDevice;
    r->mem_dst = p->dstArray ? SS_MEM_ARRAY : SS_MEM_DEVICE;
    r->mem_src = p->srcArray ? SS_MEM_ARRAY : SS_MEM_DEVICE;
}

void ss_api_fill_memcpy_batch(ss_api_rec *r, void *const *dsts, const void *const *srcs,
                              const size_t *sizes, size_t count)
{
    /* A batch has no single direction: cudaMemcpyDefault (inferred). */
    r->arg = (uint32_t)cudaMemcpyDefault;
    if (count == 0 || dsts == NULL || srcs == NULL)
        return;
    r->ptr = (uint64_t)(uintptr_t)dsts[0];
    r->ptr2 = (uint64_t)(uintptr_t)srcs[0];
    r->mem_dst = ss_api_mem_kind(dsts[0]);
    r->mem_src = ss_api_mem_kind(srcs[0]);
    if (sizes != NULL) {
        uint64_t total = 0;
        for (size_t i = 0; i < count; i++)
            total += sizes[i];
        r->bytes = total;
    }
}

_Static_assert(sizeof(void *) == 8 && sizeof(CUdeviceptr) == 8, "a batch's addresses are 8 bytes");

void ss_api_fill_range_batch(ss_api_rec *r, const void *ptrs, const size_t *sizes, size_t count)
{
    r->arg = (uint32_t)count;
    if (count == 0 || ptrs == NULL)
        return;
    uint64_t first;
    memcpy(&first, ptrs, sizeof first);   /* void *[] or CUdeviceptr[]: one reader for both */
    r->ptr = first;
    if (sizes != NULL) {
        uint64_t total = 0;
        for (size_t i = 0; i < count; i++)
            total += sizes[i];
        r->bytes = total;
    }
}

static void ss_api_operand(const struct cudaMemcpy3DOperand *o, uint64_t *ptr, uint8_t *kind)
{
    if (o->type == cudaMemcpyOperandTypeArray) {
        *ptr = (uint64_t)(uintptr_t)o->op.array.array;
        *kind = SS_MEM_ARRAY;
    } else {
        *ptr = (uint64_t)(uintptr_t)o->op.ptr.ptr;
        *kind = ss_api_mem_kind(o->op.ptr.ptr);
    }
}

void ss_api_fill_memcpy3d_batch(ss_api_rec *r, size_t num_ops, const struct cudaMemcpy3DBatchOp *ops)
{
    r->arg = (uint32_t)cudaMemcpyDefault;
    if (num_ops == 0 || ops == NULL)
        return;
    ss_api_operand(&ops[0].dst, &r->ptr, &r->mem_dst);
    ss_api_operand(&ops[0].src, &r->ptr2, &r->mem_src);
    uint64_t total = 0;
    for (size_t i = 0; i < num_ops; i++)
        total += (uint64_t)ops[i].extent.width * ops[i].extent.height * ops[i].extent.depth;
    r->bytes = total;
}

/* An event the launch records through a launch attribute: a programmatic
 * event (fired once every block has triggered it or ended, or, with
 * triggerAtBlockStart, once every block has started) or a launch-completion
 * event (every block started).  Another stream that waits on it is ordered
 * by it like by cudaEventRecord: the analyzer must see the record, or it
 * reports the wait as on an unrecorded event and the consumer as a race.
 * The callers read the runtime's and the driver's attribute lists, each with
 * its own types. */
static void launch_attr_event(ss_api_rec *r, uint64_t event, int at_start)
{
    if (!event)
        return;
    r->event = event;
    r->flags &= ~(uint32_t)(SS_API_F_EVENT_AT_END | SS_API_F_EVENT_AT_START);
    r->flags |= at_start ? SS_API_F_EVENT_AT_START : SS_API_F_EVENT_AT_END;
}

void ss_api_fill_launch_config(ss_api_rec *r, const cudaLaunchConfig_t *config)
{
    if (config == NULL)
        return;
    r->stream = (uint64_t)(uintptr_t)config->stream;
    r->arg = config->gridDim.x * config->gridDim.y * config->gridDim.z;
    r->arg2 = (int32_t)(config->blockDim.x * config->blockDim.y * config->blockDim.z);
    for (unsigned i = 0; config->attrs && i < config->numAttrs; i++) {
        const cudaLaunchAttribute *a = &config->attrs[i];
        if (a->id == cudaLaunchAttributeProgrammaticEvent)
            launch_attr_event(r, (uint64_t)(uintptr_t)a->val.programmaticEvent.event,
                              a->val.programmaticEvent.triggerAtBlockStart);
        else if (a->id == cudaLaunchAttributeLaunchCompletionEvent)
            launch_attr_event(r, (uint64_t)(uintptr_t)a->val.launchCompletionEvent.event, 1);
    }
}

void ss_api_fill_cu_launch_config(ss_api_rec *r, const struct CUlaunchConfig_st *config)
{
    if (config == NULL)
        return;
    r->stream = (uint64_t)(uintptr_t)config->hStream;
    r->arg = config->gridDimX * config->gridDimY * config->gridDimZ;
    r->arg2 = (int32_t)(config->blockDimX * config->blockDimY * config->blockDimZ);
    for (unsigned i = 0; config->attrs && i < config->numAttrs; i++) {
        const CUlaunchAttribute *a = &config->attrs[i];
        if (a->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT)
            launch_attr_event(r, (uint64_t)(uintptr_t)a->value.programmaticEvent.event,
                              a->value.programmaticEvent.triggerAtBlockStart);
        else if (a->id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
            launch_attr_event(r, (uint64_t)(uintptr_t)a->value.launchCompletionEvent.event, 1);
    }
}

/* One end of a driver 2D/3D copy: its pointer (array handle, device or host
 * address) and memory kind, as the CUDA_MEMCPY2D/3D memory type says; a host
 * end is asked (pageable or pinned), a unified one too. */
static void ss_cu_copy_end(CUmemorytype type, const void *host, CUdeviceptr dev, CUarray array, uint64_t *ptr,
                           uint8_t *kind)
{
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        *ptr = (uint64_t)(uintptr_t)host;
        *kind = ss_api_mem_kind(host);
        break;
    case CU_MEMORYTYPE_DEVICE:
        *ptr = (uint64_t)dev;
        *kind = SS_MEM_DEVICE;
        break;
    case CU_MEMORYTYPE_ARRAY:
        *ptr = (uint64_t)(uintptr_t)array;
        *kind = SS_MEM_ARRAY;
        break;
    case CU_MEMORYTYPE_UNIFIED:
        *ptr = (uint64_t)dev;
        *kind = ss_api_mem_kind((const void *)(uintptr_t)dev);
        break;
    default:
        break;
    }
}

/* The cudaMemcpyKind two ends imply (the analyzer reads `arg` as one). */
static uint32_t ss_cu_copy_kind(uint8_t dst, uint8_t src)
{
    int dst_host = dst == SS_MEM_PAGEABLE || dst == SS_MEM_PINNED;
    int src_host = src == SS_MEM_PAGEABLE || src == SS_MEM_PINNED;
    if (dst == SS_MEM_UNKNOWN || src == SS_MEM_UNKNOWN)
        return cudaMemcpyDefault;
    if (dst_host)
        return src_host ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost;
    return src_host ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice;
}

void ss_api_fill_cu_memcpy2d(ss_api_rec *r, const struct CUDA_MEMCPY2D_st *p)
{
    if (p == NULL)
        return;
    ss_cu_copy_end(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, &r->ptr, &r->mem_dst);
    ss_cu_copy_end(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, &r->ptr2, &r->mem_src);
    r->bytes = (uint64_t)p->WidthInBytes * p->Height;
    r->arg = ss_cu_copy_kind(r->mem_dst, r->mem_src);
}

void ss_api_fill_cu_memcpy3d(ss_api_rec *r, const struct CUDA_MEMCPY3D_st *p)
{
    if (p == NULL)
        return;
    ss_cu_copy_end(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, &r->ptr, &r->mem_dst);
    ss_cu_copy_end(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, &r->ptr2, &r->mem_src);
    r->bytes = (uint64_t)p->WidthInBytes * p->Height * p->Depth;
    r->arg = ss_cu_copy_kind(r->mem_dst, r->mem_src);
}

void ss_api_set_device(ss_api_tls *t, int device, cudaError_t ret)
{
    if (ret == cudaSuccess && device >= 0 && device <= INT8_MAX)
        t->device = (int8_t)device;
}

/* ------------------------------------------------ kernel parameter layouts */

/* Layout of one function's parameters: which of the first 64 are 8 bytes
 * wide.  Open addressing, keys published last with a release store, so a
 * lookup is a few loads and never takes the lock; only a miss does. */
#define SS_KCACHE_SLOTS  8192u        /* power of two */
#define SS_KCACHE_PROBES 64u
#define SS_KLAYOUT_BITS  64u
#define SS_KSTRUCT_MAX   8u           /* struct parameters scanned per kernel */
#define SS_KSTRUCT_SCAN  1024u        /* bytes scanned per struct parameter */

typedef struct ss_klayout {
    uintptr_t key;                    /* function pointer; 0 = empty */
    uint64_t  wide_mask;              /* bit i: parameter i is 8 bytes */
    uint64_t  struct_mask;            /* bit i: parameter i is wider than 8 bytes */
    uint32_t  struct_bytes[SS_KSTRUCT_MAX]; /* sizes of the first wide ones */
    uint16_t  offset[SS_KLAYOUT_BITS]; /* byte offsets in the packed parameter
                                          buffer (driver launches with `extra`) */
    uint16_t  nparams;                /* all parameters, any size */
    uint8_t   known;                  /* 0: the layout could not be learned */
} ss_klayout;

/* Lowest and highest address of any allocation seen (device, pinned,
 * managed): the filter for pointers found inside struct parameters. */
static uint64_t ss_alloc_lo = UINT64_MAX, ss_alloc_hi;

void ss_api_note_alloc(uint64_t ptr, uint64_t bytes)
{
    if (ptr == 0 || bytes == 0)
        return;
    uint64_t lo = __atomic_load_n(&ss_alloc_lo, __ATOMIC_RELAXED);
    while (ptr < lo && !__atomic_compare_exchange_n(&ss_alloc_lo, &lo, ptr, 1, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED))
        ;
    uint64_t end = ptr + bytes, hi = __atomic_load_n(&ss_alloc_hi, __ATOMIC_RELAXED);
    while (end > hi && !__atomic_compare_exchange_n(&ss_alloc_hi, &hi, end, 1, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED))
        ;
}

static ss_klayout ss_kcache[SS_KCACHE_SLOTS];
static pthread_mutex_t ss_kcache_lock = PTHREAD_MUTEX_INITIALIZER;
static int ss_kcache_full;

static inline uint32_t ss_khash(uintptr_t key)
{
    uint64_t x = (uint64_t)key;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x & (SS_KCACHE_SLOTS - 1u);
}

static const ss_klayout *ss_kcache_find(uintptr_t key)
{
    uint32_t h = ss_khash(key);
    for (uint32_t i = 0; i < SS_KCACHE_PROBES; i++) {
        const ss_klayout *e = &ss_kcache[(h + i) & (SS_KCACHE_SLOTS - 1u)];
        uintptr_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
        if (k == key)
            return e;
        if (k == 0)
            return NULL;
    }
    return NULL;
}

typedef cudaError_t (CUDARTAPI *ss_cudaGetFuncBySymbol_fn)(cudaFunction_t *, const void *);
typedef cudaError_t (CUDARTAPI *ss_cudaError_fn)(void);
static void *volatile ss_real_get_func_by_symbol;
static void *volatile ss_real_peek_at_last_error;
static void *volatile ss_real_get_last_error;

static void *ss_api_real(const char *name, void *volatile *slot)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    return fn != NULL ? fn : ss_api_resolve(name, slot);
}

/* Map a host stub to its CUfunction with cudart's cudaGetFuncBySymbol, called
 * through the real pointer (never our wrappers; its cbid is not among the
 * CUPTI callbacks we enable).  A failure would leave cudart's last error set,
 * which the program could see: clear ours when there was none before. */
static CUfunction ss_stub_function(const void *stub)
{
    ss_cudaGetFuncBySymbol_fn get = (ss_cudaGetFuncBySymbol_fn)ss_api_real("cudaGetFuncBySymbol",
                                                                           &ss_real_get_func_by_symbol);
    ss_cudaError_fn peek = (ss_cudaError_fn)ss_api_real("cudaPeekAtLastError", &ss_real_peek_at_last_error);
    ss_cudaError_fn clear = (ss_cudaError_fn)ss_api_real("cudaGetLastError", &ss_real_get_last_error);
    if (get == NULL || peek == NULL || clear == NULL)
        return NULL;
    cudaError_t before = peek();
    cudaFunction_t f = NULL;
    if (get(&f, stub) != cudaSuccess) {
        if (before == cudaSuccess)
            (void)clear();
        return NULL;
    }
    return (CUfunction)f;
}

/* Fill `out` by asking the driver about each parameter in turn; `is_kernel`
 * picks cuKernelGetParamInfo (a CUkernel / cudaKernel_t) over
 * cuFuncGetParamInfo (a CUfunction). */
static void ss_query_layout(ss_klayout *out, uintptr_t handle, int is_kernel)
{
    uint64_t mask = 0, smask = 0;
    uint32_t nstruct = 0;
    uint16_t n = 0;
    for (;;) {
        size_t offset = 0, size = 0;
        CUresult rc = is_kernel
            ? ss_drv.kernel_get_param_info((CUkernel)handle, n, &offset, &size)
            : ss_drv.func_get_param_info((CUfunction)handle, n, &offset, &size);
        if (rc != CUDA_SUCCESS)   /* CUDA_ERROR_INVALID_VALUE past the last one */
            break;
        if (n < SS_KLAYOUT_BITS)
            out->offset[n] = (uint16_t)(offset <= UINT16_MAX ? offset : UINT16_MAX);
        if (size == 8 && n < SS_KLAYOUT_BITS)
            mask |= 1ull << n;
        if (size > 8 && n < SS_KLAYOUT_BITS && nstruct < SS_KSTRUCT_MAX) {
            smask |= 1ull << n;
            out->struct_bytes[nstruct++] = (uint32_t)(size < SS_KSTRUCT_SCAN ? size : SS_KSTRUCT_SCAN);
        }
        if (++n == UINT16_MAX)
            break;
    }
    out->wide_mask = mask;
    out->struct_mask = smask;
    out->nparams = n;
    out->known = 1;
}

/* Driver-level cache keys carry this bit so that a CUfunction never meets a
 * runtime key (host stub address or cudaKernel_t) with the same value:
 * user-space addresses never have it set. */
#define SS_KEY_DRIVER (1ull << 63)

/* Learn a layout (called once per key, under the lock). */
static void ss_learn_layout(ss_klayout *out, uintptr_t key, int known_kernel)
{
    out->known = 0;
    if (!ss_driver_ready())
        return;
    if (key & SS_KEY_DRIVER) {
        /* cuLaunchKernel* accept a CUkernel cast to CUfunction as well:
         * cuFuncGetParamInfo says INVALID_HANDLE for one (and INVALID_VALUE
         * for index 0 of a function without parameters). */
        uintptr_t handle = key & ~(uintptr_t)SS_KEY_DRIVER;
        if (ss_drv.func_get_param_info == NULL)
            return;
        size_t offset = 0, size = 0;
        CUresult rc = ss_drv.func_get_param_info((CUfunction)handle, 0, &offset, &size);
        int is_kernel = rc != CUDA_SUCCESS && rc != CUDA_ERROR_INVALID_VALUE;
        if (is_kernel && ss_drv.kernel_get_param_info == NULL)
            return;
        ss_query_layout(out, handle, is_kernel);
        return;
    }
    const void *func = (const void *)key;
    int is_kernel = known_kernel;
    if (!is_kernel) {
        /* A host stub is code inside a loaded object; a cudaKernel_t is a
         * driver handle on the heap.  cudaLaunchKernel accepts both and the
         * CUPTI path cannot tell __cudaLaunchKernel from cudaLaunchKernel. */
        is_kernel = !ss_object_of(func, NULL, NULL);
    }
    if (is_kernel) {
        if (ss_drv.kernel_get_param_info == NULL)
            return;
        ss_query_layout(out, key, 1);
    } else {
        /* Fails for a stub registered with another cudart (a library's or
         * the program's static one): the driver-level callback covers it. */
        CUfunction cufunc;
        if (ss_drv.func_get_param_info == NULL || (cufunc = ss_stub_function(func)) == NULL)
            return;
        ss_query_layout(out, (uintptr_t)cufunc, 0);
    }
}

static const ss_klayout *ss_kernel_layout(uintptr_t key, int known_kernel)
{
    const ss_klayout *e = ss_kcache_find(key);
    if (__builtin_expect(e != NULL, 1))
        return e;
    if (__atomic_load_n(&ss_kcache_full, __ATOMIC_RELAXED))
        return NULL;
    pthread_mutex_lock(&ss_kcache_lock);
    e = ss_kcache_find(key);
    if (e == NULL) {
        uint32_t h = ss_khash(key);
        for (uint32_t i = 0; i < SS_KCACHE_PROBES; i++) {
            ss_klayout *slot = &ss_kcache[(h + i) & (SS_KCACHE_SLOTS - 1u)];
            if (__atomic_load_n(&slot->key, __ATOMIC_RELAXED) != 0)
                continue;
            ss_learn_layout(slot, key, known_kernel);
            __atomic_store_n(&slot->key, key, __ATOMIC_RELEASE);
            e = slot;
            break;
        }
        if (e == NULL)   /* this neighbourhood is full: stop learning new ones */
            __atomic_store_n(&ss_kcache_full, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&ss_kcache_lock);
    return e;
}

/* The candidate pointers of one launch: every 8-byte parameter, and the
 * 8-aligned words of struct parameters that fall in the allocated range.
 * Parameter i is at args[i] (kernelParams form) or, when args is NULL, at
 * buf + offset[i] within buf_bytes (the packed buffer of a driver launch's
 * `extra`).  offsets[n] receives where value n sits in the packed buffer
 * (the parameter's offset, plus the word's offset inside a struct
 * parameter): where the kernel's code reads it.  Sets *truncated when more
 * existed than fit. */
static uint32_t ss_collect_params(const ss_klayout *layout, void **args, const char *buf, size_t buf_bytes,
                                  uint64_t *params, uint16_t *offsets, int *truncated)
{
    uint32_t n = 0, nstruct = 0;
    uint32_t limit = layout->nparams < SS_KLAYOUT_BITS ? layout->nparams : SS_KLAYOUT_BITS;
    uint64_t lo = __atomic_load_n(&ss_alloc_lo, __ATOMIC_RELAXED);
    uint64_t hi = __atomic_load_n(&ss_alloc_hi, __ATOMIC_RELAXED);
    *truncated = layout->nparams > SS_KLAYOUT_BITS;
    for (uint32_t i = 0; i < limit; i++) {
        int is_struct = (layout->struct_mask & (1ull << i)) != 0;
        if (!is_struct && !(layout->wide_mask & (1ull << i)))
            continue;
        uint32_t bytes = is_struct ? layout->struct_bytes[nstruct++] : 8u;
        const char *arg;
        if (args != NULL) {
            arg = args[i];
        } else {
            arg = (size_t)layout->offset[i] + bytes <= buf_bytes ? buf + layout->offset[i] : NULL;
        }
        if (is_struct) {
            /* A struct parameter: keep the aligned words that point into the
             * allocated range (pointers inside structs are 8-aligned). */
            if (arg == NULL)
                continue;
            for (uint32_t off = 0; off + 8 <= bytes; off += 8) {
                uint64_t v;
                memcpy(&v, arg + off, sizeof v);
                if (v < lo || v >= hi)
                    continue;
                if (n == SS_API_MAX_PARAMS) {
                    *truncated = 1;
                    return n;
                }
                /* offset[] <= 32764 (CUDA's parameter limit) and off < 1024 */
                offsets[n] = (uint16_t)(layout->offset[i] + off);
                params[n++] = v;
            }
            continue;
        }
        if (n == SS_API_MAX_PARAMS) {
            *truncated = 1;
            break;
        }
        if (arg == NULL)
            continue;
        offsets[n] = layout->offset[i];
        memcpy(&params[n++], arg, sizeof(uint64_t));   /* need not be aligned */
    }
    return n;
}

/* Is the runtime-level layout of `func` already known (a cache hit that
 * needs no lock)?  Then the driver level has nothing to add. */
static int ss_runtime_layout_known(const void *func)
{
    const ss_klayout *e = func != NULL ? ss_kcache_find((uintptr_t)func) : NULL;
    return e != NULL && e->known;
}

uint32_t ss_api_launch_params(ss_api_rec *r, ss_api_tls *t, const void *func, void **args, int known_kernel,
                              uint64_t *params)
{
    uint32_t n = 0;
    if (r->ret == cudaSuccess && func != NULL && args != NULL) {
        const ss_klayout *layout = ss_kernel_layout((uintptr_t)func, known_kernel);
        if (layout != NULL && layout->known) {
            int truncated = 0;
            n = ss_collect_params(layout, args, NULL, 0, params, t->offsets, &truncated);
            if (truncated)
                r->flags |= SS_API_F_PARAMS_TRUNCATED;
        } else if (t->drv_have) {
            /* The runtime could not map the function (stub of another
             * cudart): what the driver-level callback read inside this call. */
            n = t->drv_nparams;
            memcpy(params, t->drv_params, n * sizeof(uint64_t));
            memcpy(t->offsets, t->drv_offsets, n * sizeof(uint16_t));
            if (t->drv_truncated)
                r->flags |= SS_API_F_PARAMS_TRUNCATED;
        }
    }
    t->offsets_of = n != 0 ? params : NULL;
    t->noffsets = (uint8_t)n;
    t->launch_pending = 0;
    t->drv_have = 0;
    t->launch_func = NULL;
    return n;
}

/* ------------------------------------------------- driver-level launches */

size_t ss_api_wanted_driver_cbids(const uint32_t **ids)
{
    /* The table's driver rows (generated): the three launches and their
     * _ptsz twins, which also serve the runtime launches' fallback, and
     * the copies, memsets, events, streams, allocations and graph nodes
     * recorded when a program calls the driver itself, and the graph
     * kernel-node calls read for the fallback alone (gen_api.py's
     * FALLBACK_DRIVER_CBIDS).  Every other driver call stays callback-free. */
    *ids = ss_api_driver_cbids;
    return ss_api_driver_cbid_count;
}

/* The packed parameter buffer of a launch given `extra` instead of
 * kernelParams: {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
 * &size, CU_LAUNCH_PARAM_END}.  Returns NULL when it is not there. */
static const char *ss_extra_buffer(void **extra, size_t *bytes)
{
    const char *buf = NULL;
    size_t size = 0;
    int have_size = 0;
    for (int i = 0; extra != NULL && i < 32 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
            buf = extra[i + 1];
        } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1] != NULL) {
            memcpy(&size, extra[i + 1], sizeof size);
            have_size = 1;
        }
    }
    if (buf == NULL || !have_size)
        return NULL;
    *bytes = size;
    return buf;
}

/* The kernel a driver graph call adds or sets a kernel node for, and its
 * parameters: the call cudart makes inside cudaGraphAddKernelNode and the
 * node SetParams calls (which of them is cudart's choice, so all are
 * read).  Returns 0 for any other call, or a node that is not a kernel. */
static int ss_kernel_node_target(uint32_t cbid, const void *fp, CUfunction *f, void ***kernel_params,
                                 void ***extra)
{
    const CUDA_KERNEL_NODE_PARAMS_v1 *v1 = NULL;
    const CUDA_KERNEL_NODE_PARAMS *v2 = NULL;
    const CUgraphNodeParams *any = NULL;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode:
        v1 = ((const cuGraphAddKernelNode_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphKernelNodeSetParams:
        v1 = ((const cuGraphKernelNodeSetParams_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams:
        v1 = ((const cuGraphExecKernelNodeSetParams_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode_v2:
        v2 = ((const cuGraphAddKernelNode_v2_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphKernelNodeSetParams_v2:
        v2 = ((const cuGraphKernelNodeSetParams_v2_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2:
        v2 = ((const cuGraphExecKernelNodeSetParams_v2_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode:
        any = ((const cuGraphAddNode_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode_v2:
        any = ((const cuGraphAddNode_v2_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetParams:
        any = ((const cuGraphNodeSetParams_params *)fp)->nodeParams; break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams:
        any = ((const cuGraphExecNodeSetParams_params *)fp)->nodeParams; break;
    default:
        return 0;
    }
    if (v1 != NULL) {
        *f = v1->func;
        *kernel_params = v1->kernelParams;
        *extra = v1->extra;
    } else if (v2 != NULL) {
        *f = v2->func != NULL ? v2->func : (CUfunction)v2->kern;
        *kernel_params = v2->kernelParams;
        *extra = v2->extra;
    } else if (any != NULL && any->type == CU_GRAPH_NODE_TYPE_KERNEL) {
        *f = any->kernel.func != NULL ? any->kernel.func : (CUfunction)any->kernel.kern;
        *kernel_params = any->kernel.kernelParams;
        *extra = any->kernel.extra;
    } else {
        return 0;
    }
    return 1;
}

void ss_api_on_driver_callback(uint32_t cbid, const void *cbdata)
{
    const CUpti_CallbackData *d = (const CUpti_CallbackData *)cbdata;
    ss_api_tls *t = ss_api_thread();
    if (!ss_api_in_runtime_call(t)) {
        /* The program (Triton, CuPy, JAX, a library) called the driver
         * itself: record the call like a runtime one. */
        (void)ss_api_cupti_driver_dispatch(cbid, d, t, (int)d->callbackSite);
        return;
    }
    /* Made by cudart while serving a runtime call: that call is the record. */
    if (d->callbackSite != CUPTI_API_ENTER)
        return;
    /* Only launches (and kernel nodes added or set) made inside a runtime
     * launch (or graph kernel-node call) this thread is recording: the
     * record is the runtime call's, written once at its exit.  The first
     * driver launch inside it is that launch. */
    if (!t->launch_pending)
        return;
    t->launch_pending = 0;
    /* Where the runtime level knows the layout it reads the same values more
     * cheaply at exit; only the first launch of a function gets here twice. */
    if (ss_runtime_layout_known(t->launch_func))
        return;
    CUfunction f = NULL;
    void **kernel_params = NULL, **extra = NULL;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
        const cuLaunchKernel_params *p = d->functionParams;
        f = p->f;
        kernel_params = p->kernelParams;
        extra = p->extra;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const cuLaunchKernelEx_params *p = d->functionParams;
        f = p->f;
        kernel_params = p->kernelParams;
        extra = p->extra;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
        const cuLaunchCooperativeKernel_params *p = d->functionParams;
        f = p->f;
        kernel_params = p->kernelParams;
        break;
    }
    default:
        /* cudaGraphAddKernelNode and its SetParams twins: the node's kernel
         * as the driver call inside names it (a CUfunction, or a CUkernel) */
        if (!ss_kernel_node_target(cbid, d->functionParams, &f, &kernel_params, &extra))
            return;
        break;
    }
    if (f == NULL)
        return;
    const char *buf = NULL;
    size_t buf_bytes = 0;
    if (kernel_params == NULL && (buf = ss_extra_buffer(extra, &buf_bytes)) == NULL)
        return;
    const ss_klayout *layout = ss_kernel_layout((uintptr_t)f | SS_KEY_DRIVER, 0);
    if (layout == NULL || !layout->known)
        return;
    int truncated = 0;
    t->drv_nparams = (uint8_t)ss_collect_params(layout, kernel_params, buf, buf_bytes, t->drv_params,
                                                 t->drv_offsets, &truncated);
    t->drv_truncated = (uint8_t)truncated;
    t->drv_have = 1;
}

uint32_t ss_api_driver_launch_params(ss_api_rec *r, ss_api_tls *t, const void *f, void **kernel_params,
                                     void **extra, uint64_t *params)
{
    int n = -1, truncated = 0;
    if (r->ret == CUDA_SUCCESS)
        n = ss_api_driver_launch_words(f, kernel_params, extra, params, t->offsets, &truncated);
    if (n < 0)
        n = 0;
    if (truncated)
        r->flags |= SS_API_F_PARAMS_TRUNCATED;
    t->offsets_of = n != 0 ? params : NULL;
    t->noffsets = (uint8_t)n;
    t->launch_func = NULL;
    return (uint32_t)n;
}

/* Exact memory mode (exact_memory.c): the words ss_collect_params reads
 * for a driver-level launch of `f` given `kernel_params` or `extra`, with
 * their offsets.  Returns the count, or -1 when the layout is unknown. */
int ss_api_driver_launch_words(const void *f, void **kernel_params, void **extra, uint64_t *params,
                               uint16_t *offsets, int *truncated)
{
    *truncated = 0;
    if (f == NULL)
        return -1;
    const char *buf = NULL;
    size_t buf_bytes = 0;
    if (kernel_params == NULL && (buf = ss_extra_buffer(extra, &buf_bytes)) == NULL)
        return -1;
    const ss_klayout *layout = ss_kernel_layout((uintptr_t)f | SS_KEY_DRIVER, 0);
    if (layout == NULL || !layout->known)
        return -1;
    return (int)ss_collect_params(layout, kernel_params, buf, buf_bytes, params, offsets, truncated);
}

/* Exact memory mode: the CUDA Sanitizer API holds the one callback slot
 * CUPTI would use, so its runtime-API and launch driver-API callbacks (same
 * cbid numbers as CUPTI's) come here, dressed as CUPTI's (no correlation
 * ids: correlationId 0). */
void ss_api_forward_callback(int driver, uint32_t cbid, int exit_site, const char *function_name,
                             const void *params, const void *ret, const char *symbol, void *context)
{
    if (!ss_recording())
        return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = exit_site ? CUPTI_API_EXIT : CUPTI_API_ENTER;
    d.functionName = function_name;
    d.functionParams = params;
    d.functionReturnValue = (void *)(uintptr_t)ret;   /* only read */
    d.symbolName = symbol;
    d.context = (CUcontext)context;
    if (driver)
        ss_api_on_driver_callback(cbid, &d);
    else
        ss_api_on_runtime_callback(cbid, &d);
}

/* ------------------------------------------------------------- emission */

/* Runtime cbids, then driver cbids (recorded as SS_API_CBID_DRIVER + id). */
static uint8_t ss_api_name_written[CUPTI_RUNTIME_TRACE_CBID_SIZE + CUPTI_DRIVER_TRACE_CBID_SIZE];

static uint8_t *ss_api_name_flag(uint32_t cbid)
{
    if (cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
        return &ss_api_name_written[cbid];
    if (cbid >= SS_API_CBID_DRIVER && cbid - SS_API_CBID_DRIVER < CUPTI_DRIVER_TRACE_CBID_SIZE)
        return &ss_api_name_written[CUPTI_RUNTIME_TRACE_CBID_SIZE + (cbid - SS_API_CBID_DRIVER)];
    return NULL;
}

static void ss_api_write_name(uint32_t cbid, const char *name)
{
    uint8_t *flag = ss_api_name_flag(cbid);
    if (flag != NULL) {
        /* A plain load first: after the first call of each API this is the
         * only cost on the hot path (a compare-exchange would be a locked
         * write to a line every recording thread shares). */
        if (__atomic_load_n(flag, __ATOMIC_RELAXED))
            return;
        uint8_t expected = 0;
        if (!__atomic_compare_exchange_n(flag, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return;
    }
    uint32_t len = (uint32_t)strlen(name);
    ss_api_name_rec *n = ss_rec_begin(SS_REC_API_NAME, sizeof *n, len);
    if (n == NULL) {
        /* Lost (buffer full, recording off): let a later call try again. */
        if (flag != NULL)
            __atomic_store_n(flag, 0, __ATOMIC_RELEASE);
        return;
    }
    n->cbid = cbid;
    n->len = len;
    memcpy(n + 1, name, len);
    ss_rec_commit(n);
}

/* The thread's calls run in another context from this call on: said once per
 * change (a compare per call), so that the analyzer gives each call its
 * context -- the legacy default stream and cudaDeviceSynchronize are the
 * context's -- without a field in every record. */
static void ss_api_note_context(ss_api_tls *t, const ss_api_rec *r, uint32_t context)
{
    ss_thread_context_rec *c = ss_rec_begin(SS_REC_THREAD_CONTEXT, sizeof *c, 0);
    if (c == NULL)
        return;   /* not written: said again at the next call */
    c->tid = r->tid;
    c->context_id = context;
    c->t = r->t_enter;
    ss_rec_commit(c);
    t->trace_ctx = context;
}

void ss_api_emit(ss_api_rec *r, const char *name, int stack_want, const uint64_t *params, uint32_t nparams,
                 uint32_t context)
{
    /* Stacks first: call-site capture may write records of its own, and
     * at most one record may be open per thread. */
    ss_api_tls *t = ss_api_thread();
    unsigned slow_before = ss_t_slow_work;
    ss_hostsync_api_begin();   /* pending acquires go before the call's record */
    ss_callsite_capture_launch(r, stack_want, t->launch_caller);
    t->launch_caller = 0;
    ss_api_write_name(r->cbid, name);
    if (context != 0 && context != t->trace_ctx)
        ss_api_note_context(t, r, context);
    /* The offsets ss_api_launch_params left for exactly these values. */
    const uint16_t *offsets = NULL;
    if (t->offsets_of != NULL) {
        if (params == t->offsets_of && nparams == t->noffsets)
            offsets = t->offsets;
        t->offsets_of = NULL;
    }
    r->nparams = (uint8_t)nparams;
    if (offsets != NULL)
        r->flags |= SS_API_F_PARAM_OFFSETS;
    uint32_t values = nparams * (uint32_t)sizeof(uint64_t);
    uint32_t tail = values + (offsets != NULL ? nparams * (uint32_t)sizeof(uint16_t) : 0);
    ss_api_rec *out = ss_rec_begin(SS_REC_API, sizeof *out, tail);
    if (out == NULL) {
        ss_hostsync_api_end();
        return;
    }
    ss_rec_hdr hdr = out->h;          /* type and size as the buffer laid them out */
    memcpy(out, r, sizeof *out);
    out->h = hdr;
    if (values != 0)
        memcpy(out + 1, params, values);
    if (offsets != NULL)
        memcpy((char *)(out + 1) + values, offsets, nparams * sizeof(uint16_t));
    ss_rec_commit(out);
    ss_hostsync_api_end();
    /* What the shim did after the call returned (above: a first unwind into
     * a library's unwind tables takes milliseconds) is time the program did
     * not run: said when it is long, so that the host time between two calls
     * is not the shim's (the blocking-copy idiom, analyzer/model.c).  The
     * clock is read only after a slow path ran (an unwind, a buffer swap):
     * 33-53 ns a read on the H100 machine, not paid by every call. */
    if (ss_t_slow_work == slow_before)
        return;
    uint64_t now = ss_now();
    if (r->t_exit && now > r->t_exit && now - r->t_exit >= SS_SHIM_PAUSE_MIN_NS) {
        ss_shim_pause_rec *p = ss_rec_begin(SS_REC_SHIM_PAUSE, sizeof *p, 0);
        if (p != NULL) {
            p->tid = r->tid;
            p->t0 = r->t_exit;
            p->t1 = now;
            ss_rec_commit(p);
        }
    }
}

static uint32_t ss_api_stream_count;

void ss_api_stream_created(const ss_api_rec *r)
{
    uint32_t flags = r->arg;
    int non_blocking = (flags & cudaStreamNonBlocking) != 0;
    ss_stream_rec *s = ss_rec_begin(SS_REC_STREAM, sizeof *s, 0);
    if (s != NULL) {
        s->handle = r->stream;
        s->stream_id = 0;   /* learnt by the analyzer through correlation ids */
        s->device = r->device >= 0 ? (uint32_t)r->device : 0;
        s->kind = non_blocking ? SS_STREAM_NON_BLOCKING : SS_STREAM_BLOCKING;
        s->flags = flags;
        s->priority = r->arg2;
        s->corr = r->corr;
        ss_rec_commit(s);
    }
    /* Stream creation is rare: formatting a name here costs nothing that matters. */
    char name[64];
    uint32_t n = __atomic_add_fetch(&ss_api_stream_count, 1, __ATOMIC_RELAXED);
    if (r->arg2 != 0)
        snprintf(name, sizeof name, "stream %u (%s, priority %d)", n,
                 non_blocking ? "non-blocking" : "blocking", (int)r->arg2);
    else
        snprintf(name, sizeof name, "stream %u (%s)", n, non_blocking ? "non-blocking" : "blocking");
    ss_nvtx_name_stream((void *)(uintptr_t)r->stream, name);
}

/* ------------------------------------------- start, CUPTI callbacks, fork */

void ss_api_init(void)
{
    /* Everything resolves lazily (cudart and the driver may be loaded after
     * the shim); try the driver now in case it already is. */
    (void)ss_driver_ready();
}

void ss_api_on_runtime_callback(uint32_t cbid, const void *cbdata)
{
    const CUpti_CallbackData *d = (const CUpti_CallbackData *)cbdata;
    ss_api_tls *t = ss_api_thread();
    if (t->active != NULL) {
        /* The interposer records this call: lend it the correlation id of
         * the first callback inside it (the call itself); later ones are
         * runtime calls cudart makes while serving it. */
        if (d->callbackSite == CUPTI_API_ENTER && t->active->corr == 0) {
            t->active->corr = d->correlationId;
            t->lent_ctx = d->contextUid;
        }
        return;
    }
    (void)ss_api_cupti_dispatch(cbid, d, t, (int)d->callbackSite);
}

size_t ss_api_hot_cbids_of(int driver, const uint32_t **ids)
{
    *ids = driver ? ss_api_hot_driver_cbids : ss_api_hot_cbids;
    return driver ? ss_api_hot_driver_cbid_count : ss_api_hot_cbid_count;
}

size_t ss_api_wanted_cbids(const uint32_t **ids)
{
    *ids = ss_api_cbids;
    return ss_api_cbid_count;
}

void ss_api_reset_name_flags(void)
{
    for (size_t i = 0; i < sizeof ss_api_name_written; i++)
        __atomic_store_n(&ss_api_name_written[i], 0, __ATOMIC_RELAXED);
}

void ss_api_atfork_child(void)
{
    /* The child writes its own trace: names must be written again there. */
    ss_api_reset_name_flags();
    ss_api_tls *t = ss_api_thread();
    t->active = NULL;
    t->cb_depth = 0;
    t->cb_nvtx = 0;
    t->cb_hot = 0;
    t->drv_hot = 0;
    t->drv_depth = 0;
    t->drv_nvtx = 0;
    t->launch_func = NULL;
    t->launch_pending = 0;
    t->drv_have = 0;
    t->launch_caller = 0;
    t->offsets_of = NULL;
    t->trace_ctx = 0;   /* the child's trace says the context again */
    /* Another thread may have held the lock at fork(); it does not exist here. */
    pthread_mutex_init(&ss_kcache_lock, NULL);
}
