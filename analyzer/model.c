/*
 * Loading a trace into the model (see model.h for what each table holds).
 * Everything is arrays + sorting + hash maps: linear-ish in the trace size.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "callsite.h"
#include "capture_windows.h"
#include "symbolize.h"
#include "util.h"

struct ss_strmap {
    ss_u64map map; ss_string_ref *v; uint32_t n, cap;
    char **owned; uint32_t nowned, capowned;   /* demangled kernel names */
    ss_string_ref *raw;     /* strings as recorded (v[] holds demangled kernel
                               names), parallel to v; NULL when none was demangled */
};

static void demangle_kernel_names(ss_model *m);

/* Per device: ops sorted by submit time, with the running max of their end,
 * and the sorted op starts. */
struct ss_timeline {
    int32_t device;
    uint64_t *submit, *maxend, *starts;
    uint32_t n;
};

/* ------------------------------------------------------------ API classes */

static const char *const class_names[SS_API_CLASS_COUNT] = {
    "other", "launch", "copy", "copy-async", "memset", "memset-async", "alloc", "free",
    "device-sync", "stream-sync", "event-sync", "stream-query", "event-query",
    "event-record", "stream-wait", "stream-create", "stream-destroy", "event-create",
    "event-destroy", "host-func", "set-limit", "capture", "event-elapsed", "device-reset",
    "graph-node", "stream-wait-value", "stream-write-value", "stream-batch-memop",
    "managed-memory", "context-event",
};

const char *ss_api_class_name(ss_api_class c)
{
    return (unsigned)c < SS_API_CLASS_COUNT ? class_names[c] : "other";
}

static const char *const host_names[SS_API_HOST_COUNT] = {
    "none", "stream", "event", "device", "query", "copy", "copy-async", "memset", "memset-async", "graph", "peer",
};

const char *ss_api_host_name(ss_api_host h)
{
    return (unsigned)h < SS_API_HOST_COUNT ? host_names[h] : "none";
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

void ss_api_base_name(const char *name, char *out, size_t outlen)
{
    if (!outlen) return;
    snprintf(out, outlen, "%s", name ? name : "");
    size_t n = strlen(out);
    /* "_v7000"-style version suffixes (CUPTI enum spelling) */
    size_t i = n;
    while (i > 0 && out[i - 1] >= '0' && out[i - 1] <= '9') i--;
    if (i < n && i >= 2 && out[i - 1] == 'v' && out[i - 2] == '_') { out[i - 2] = 0; n = i - 2; }
    if (n >= 5 && (ends_with(out, "_ptsz") || ends_with(out, "_ptds"))) out[n - 5] = 0;
}

/* The table itself is generated from preload/cuda_api.tab (tools/gen_api.py):
 * the shim's wrappers and the analyzer's classes come from the same rows. */
static int cmp_api_info(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const ss_api_info *)elem)->name);
}

const ss_api_info *ss_api_lookup(const char *base)
{
    if (!base) return NULL;
    return bsearch(base, ss_api_table, ss_api_table_count, sizeof ss_api_table[0], cmp_api_info);
}

ss_api_class ss_api_classify(const char *base)
{
    const ss_api_info *info = ss_api_lookup(base);
    return info ? (ss_api_class)info->cls : SS_API_OTHER;
}

/* ------------------------------------------- what a call did to the host */

static const char *const wait_names[] = { "none", "stream-prior", "stream", "event", "device", "query" };

int ss_call_device_serialized(const ss_model *m, const ss_call *c)
{
    const ss_api_info *info = c->name_idx < m->napi_names && m->api_info ? m->api_info[c->name_idx] : NULL;
    return info && info->host == SS_API_HOST_PEER && c->rec->ret == 0 && !c->captured;
}

const char *ss_host_wait_name(ss_host_wait w)
{
    return (unsigned)w < sizeof wait_names / sizeof wait_names[0] ? wait_names[w] : "none";
}

/* One end of a copy (or a memset's target), coarsened to what CUDA's rules
 * tell apart. */
enum mem_side {
    SIDE_UNKNOWN = 0,
    SIDE_PAGEABLE,
    SIDE_PINNED,
    SIDE_HOST,      /* host memory, pinned or not unknown (from a cudaMemcpyKind) */
    SIDE_DEVICE,    /* device memory, CUDA arrays, managed memory */
};

/* enum ss_mem_kind / CUpti_ActivityMemoryKind (6 DEVICE_STATIC, 7
 * MANAGED_STATIC: __device__ / __managed__ variables). */
static enum mem_side side_of_kind(uint32_t kind)
{
    switch (kind) {
    case SS_MEM_PAGEABLE: return SIDE_PAGEABLE;
    case SS_MEM_PINNED: return SIDE_PINNED;
    case SS_MEM_DEVICE: case SS_MEM_ARRAY: case SS_MEM_MANAGED: case 6: case 7: return SIDE_DEVICE;
    default: return SIDE_UNKNOWN;
    }
}

static int side_is_host(enum mem_side s)
{
    return s == SIDE_PAGEABLE || s == SIDE_PINNED || s == SIDE_HOST;
}

/* First GPU op of kind `kind` the call submitted (ops joined by correlation). */
static const ss_gpu_op *call_op(const ss_model *m, const ss_call *c, uint8_t kind)
{
    for (int32_t o = c->first_op; o >= 0 && (uint32_t)o < m->nops; o = m->ops[o].next_of_call)
        if (m->ops[o].kind == kind) return &m->ops[o];
    return NULL;
}

/* Where a pointer of the call lives, when the record does not say: an
 * allocation the trace saw.  A pointer outside every known allocation stays
 * unknown (it may predate the trace, or be a symbol). */
static enum mem_side side_of_alloc(const ss_model *m, const ss_call *c, uint64_t ptr)
{
    if (!ptr) return SIDE_UNKNOWN;
    int32_t a = ss_model_alloc_at(m, ptr, c->rec->t_enter);
    return a >= 0 ? side_of_kind(m->allocs[a].kind) : SIDE_UNKNOWN;
}

/* The two ends of a copy: the record's kinds (the shim asked the driver),
 * else the kinds the table fixes, else the CUPTI memcpy record's, else the
 * allocations the pointers fall in, else the cudaMemcpyKind argument. */
static void copy_sides(const ss_model *m, const ss_call *c, const ss_api_info *info,
                       enum mem_side *dst, enum mem_side *src)
{
    const ss_api_rec *r = c->rec;
    *dst = side_of_kind(r->mem_dst);
    *src = side_of_kind(r->mem_src);
    if (!*dst) *dst = side_of_kind(info->fixed_dst);
    if (!*src) *src = side_of_kind(info->fixed_src);
    if (!*dst || !*src) {
        const ss_gpu_op *op = call_op(m, c, SS_OP_MEMCPY);
        if (op) {
            const ss_memcpy_rec *mc = (const ss_memcpy_rec *)op->rec;
            if (!*dst) *dst = side_of_kind(mc->dst_kind);
            if (!*src) *src = side_of_kind(mc->src_kind);
        }
    }
    if (!*dst) *dst = side_of_alloc(m, c, r->ptr);
    if (!*src) *src = side_of_alloc(m, c, r->ptr2);
    if (info->arg_is_memcpy_kind) {
        /* cudaMemcpyDefault says nothing */
        static const enum mem_side kd[SS_CUDA_MEMCPY_DEFAULT] = {
            [SS_CUDA_MEMCPY_HOST_TO_HOST] = SIDE_HOST, [SS_CUDA_MEMCPY_HOST_TO_DEVICE] = SIDE_DEVICE,
            [SS_CUDA_MEMCPY_DEVICE_TO_HOST] = SIDE_HOST, [SS_CUDA_MEMCPY_DEVICE_TO_DEVICE] = SIDE_DEVICE,
        };
        static const enum mem_side ks[SS_CUDA_MEMCPY_DEFAULT] = {
            [SS_CUDA_MEMCPY_HOST_TO_HOST] = SIDE_HOST, [SS_CUDA_MEMCPY_HOST_TO_DEVICE] = SIDE_HOST,
            [SS_CUDA_MEMCPY_DEVICE_TO_HOST] = SIDE_DEVICE, [SS_CUDA_MEMCPY_DEVICE_TO_DEVICE] = SIDE_DEVICE,
        };
        if (r->arg < SS_CUDA_MEMCPY_DEFAULT) {
            if (!*dst) *dst = kd[r->arg];
            if (!*src) *src = ks[r->arg];
        }
    }
}

/* Synchronous cudaMemcpy* (CUDA's "API synchronization behavior"):
 * pageable->device syncs the stream, then stages the copy, which may land
 * after the call returns; pinned->device, device->host and host->host return
 * when the copy is done; device->device does not wait. */
static ss_host_wait copy_sync_wait(enum mem_side dst, enum mem_side src)
{
    /* Unknown ends: the row's worst case, waiting for the stream and the copy
     * (device->host, host->host, pinned->device all do). */
    if (!dst || !src) return SS_WAIT_STREAM;
    if (src == SIDE_DEVICE && dst == SIDE_DEVICE) return SS_WAIT_NONE;
    if (src == SIDE_DEVICE || side_is_host(dst)) return SS_WAIT_STREAM;   /* to host memory */
    /* host -> device */
    if (src == SIDE_PAGEABLE) return SS_WAIT_STREAM_PRIOR;
    /* pinned; or host memory of unknown kind: the worst case of the row */
    return SS_WAIT_STREAM;
}

/* cudaMemcpy*Async: device->pageable host and host->host are synchronous;
 * pageable->device is staged (the host may wait for the stream before
 * staging, but the copy lands later: it orders nothing); the rest is fully
 * asynchronous. */
static ss_host_wait copy_async_wait(enum mem_side dst, enum mem_side src)
{
    if (dst == SIDE_DEVICE) return SS_WAIT_NONE;          /* whatever the source */
    if (src == SIDE_DEVICE && dst == SIDE_PINNED) return SS_WAIT_NONE;
    /* device -> pageable: synchronous.  Device -> host of unknown kind, or
     * unknown ends: the worst case of the row (pageable or host->host). */
    return SS_WAIT_STREAM;
}

ss_host_wait ss_call_host_wait(const ss_model *m, const ss_call *c)
{
    if (!m || !c || !c->rec) return SS_WAIT_NONE;
    if (c->rec->ret != 0 || c->captured) return SS_WAIT_NONE;
    const ss_api_info *info = c->name_idx < m->napi_names && m->api_info ? m->api_info[c->name_idx] : NULL;
    /* A call the table does not list is not known to wait (an invented join
     * would hide real races). */
    if (!info) return SS_WAIT_NONE;
    switch ((ss_api_host)info->host) {
    case SS_API_HOST_NONE: case SS_API_HOST_MEMSET_ASYNC: case SS_API_HOST_PEER: case SS_API_HOST_COUNT:
        return SS_WAIT_NONE;
    case SS_API_HOST_STREAM: return SS_WAIT_STREAM;
    case SS_API_HOST_EVENT: return SS_WAIT_EVENT;
    case SS_API_HOST_DEVICE: return SS_WAIT_DEVICE;
    case SS_API_HOST_QUERY: return SS_WAIT_QUERY;
    case SS_API_HOST_COPY: case SS_API_HOST_COPY_ASYNC: {
        enum mem_side dst, src;
        copy_sides(m, c, info, &dst, &src);
        return info->host == SS_API_HOST_COPY ? copy_sync_wait(dst, src) : copy_async_wait(dst, src);
    }
    case SS_API_HOST_MEMSET: {
        /* Asynchronous unless the target is host memory (measured: on device
         * memory cudaMemset returned before its GPU memset ended).  Unknown
         * target: the worst case of the row, waiting like a pinned target. */
        enum mem_side t = side_of_kind(c->rec->mem_dst);
        if (!t) {
            const ss_gpu_op *op = call_op(m, c, SS_OP_MEMSET);
            if (op) t = side_of_kind(((const ss_memset_rec *)op->rec)->mem_kind);
        }
        if (!t) t = side_of_alloc(m, c, c->rec->ptr);
        return t == SIDE_DEVICE ? SS_WAIT_NONE : SS_WAIT_STREAM;
    }
    case SS_API_HOST_GRAPH:
        /* Measured: a memcpy node into pageable host memory makes the launch
         * wait until the graph finished. */
        for (int32_t o = c->first_op; o >= 0 && (uint32_t)o < m->nops; o = m->ops[o].next_of_call)
            if (m->ops[o].kind == SS_OP_MEMCPY &&
                ((const ss_memcpy_rec *)m->ops[o].rec)->dst_kind == SS_MEM_PAGEABLE)
                return SS_WAIT_STREAM;
        return SS_WAIT_NONE;
    }
    return SS_WAIT_NONE;
}

const char *ss_stream_kind_name(uint32_t kind)
{
    switch (kind) {
    case SS_STREAM_BLOCKING: return "blocking";
    case SS_STREAM_NON_BLOCKING: return "non-blocking";
    case SS_STREAM_LEGACY_NULL: return "legacy default";
    case SS_STREAM_PER_THREAD: return "per-thread default";
    default: return "unknown";
    }
}

static uint32_t legacy_streams_of_device(const ss_model *m, int32_t device)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nstreams; i++)
        n += m->streams[i].kind == SS_STREAM_LEGACY_NULL && m->streams[i].device == device;
    return n;
}

const char *ss_stream_describe(const ss_model *m, int32_t stream, char *buf, size_t len)
{
    if (stream < 0 || (uint32_t)stream >= m->nstreams) { snprintf(buf, len, "no stream"); return buf; }
    const ss_stream *s = &m->streams[stream];
    const char *kind = ss_stream_kind_name(s->kind);
    ss_string_ref name = ss_model_string(m, s->name_id);
    if (name.s && name.len) {   /* the program's own name for it (NVTX) */
        snprintf(buf, len, "stream \"%.*s%s\" (%s)", (int)(name.len > 40 ? 40 : name.len), name.s,
                 name.len > 40 ? "..." : "", kind);
        return buf;
    }
    /* The default streams are known by their handle 0.  A created stream is
     * known by the number CUPTI (and so Nsight Systems) gives it and where it
     * was created, not by its pointer. */
    if (s->kind == SS_STREAM_LEGACY_NULL || s->kind == SS_STREAM_PER_THREAD) {
        /* Every thread's own default stream is "0x0" to the program: where
         * there are several, the thread tells them apart. */
        if (s->kind == SS_STREAM_PER_THREAD && s->owner_tid && m->nper_thread_streams > 1) snprintf(buf, len, "stream 0x0 of thread %u (%s)", s->owner_tid, kind);
        else if (s->kind == SS_STREAM_LEGACY_NULL && m->split_contexts && s->context_id &&
                 legacy_streams_of_device(m, s->device) > 1)
            /* each context's own legacy stream: the context tells them apart */
            snprintf(buf, len, "stream 0x0 of CUDA context %u (%s%s)", s->context_id, kind,
                     s->family && s->family != s->context_id ? ", a green context" : "");
        else snprintf(buf, len, "stream 0x0 (%s)", kind);
        return buf;
    }
    char id[32], at[80] = "";
    if (s->stream_id) snprintf(id, sizeof id, "%u", s->stream_id);
    else snprintf(id, sizeof id, "0x%llx", (unsigned long long)s->handle);
    const char *file;
    size_t flen;
    uint32_t line;
    ss_site site;
    if (s->create_call >= 0) {
        ss_call_site(m, s->create_call, &site);
        if (ss_site_source(&site, &file, &flen, &line)) {
            size_t b = flen;   /* the file's base name: the stack has the rest */
            while (b > 0 && file[b - 1] != '/') b--;
            snprintf(at, sizeof at, ", created at %.*s:%u", (int)(flen - b > 40 ? 40 : flen - b), file + b, line);
        }
    }
    snprintf(buf, len, "stream %s (%s%s)", id, kind, at);
    return buf;
}

/* ----------------------------------------------------------------- lookups */

ss_string_ref ss_model_string(const ss_model *m, uint32_t id)
{
    ss_string_ref none = { NULL, 0 };
    if (!id || !m->strings) return none;
    int64_t i = ss_u64map_get(&m->strings->map, id, -1);
    return i < 0 ? none : m->strings->v[i];
}

ss_string_ref ss_model_string_raw(const ss_model *m, uint32_t id)
{
    ss_string_ref none = { NULL, 0 };
    if (!id || !m->strings) return none;
    int64_t i = ss_u64map_get(&m->strings->map, id, -1);
    if (i < 0) return none;
    return m->strings->raw ? m->strings->raw[i] : m->strings->v[i];
}

const char *ss_model_call_name(const ss_model *m, const ss_call *c)
{
    return c->name_idx < m->napi_names ? m->api_names[c->name_idx] : "?";
}

int ss_call_is_strided(const ss_model *m, const ss_call *c)
{
    const ss_api_info *info = c->name_idx < m->napi_names && m->api_info ? m->api_info[c->name_idx] : NULL;
    return info && info->strided;
}

const ss_thread *ss_model_thread_of_cupti(const ss_model *m, uint32_t cupti_tid)
{
    for (uint32_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].pthread && (uint32_t)m->threads[i].pthread == cupti_tid) return &m->threads[i];
    return ss_model_thread(m, cupti_tid);
}

const ss_thread *ss_model_thread(const ss_model *m, uint32_t tid)
{
    uint32_t lo = 0, hi = m->nthreads;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (m->threads[mid].tid < tid) lo = mid + 1; else hi = mid;
    }
    return lo < m->nthreads && m->threads[lo].tid == tid ? &m->threads[lo] : NULL;
}

static const void *find_by_id(const void *const *v, uint32_t n, uint32_t id, size_t id_off)
{
    /* stacks are few and ids ascend in file order: binary search on id */
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        uint32_t mid_id; memcpy(&mid_id, (const char *)v[mid] + id_off, 4);
        if (mid_id < id) lo = mid + 1; else hi = mid;
    }
    if (lo < n) {
        uint32_t got; memcpy(&got, (const char *)v[lo] + id_off, 4);
        if (got == id) return v[lo];
    }
    return NULL;
}

const ss_stack_rec *ss_model_stack(const ss_model *m, uint32_t id)
{
    if (!id) return NULL;
    const ss_stack_rec *s = find_by_id((const void *const *)m->stacks, m->nstacks, id,
                                       offsetof(ss_stack_rec, id));
    if (s && sizeof(*s) + 8ull * s->depth > s->h.size) return NULL;
    return s;
}

const ss_pystack_rec *ss_model_pystack(const ss_model *m, uint32_t id)
{
    if (!id) return NULL;
    const ss_pystack_rec *s = find_by_id((const void *const *)m->pystacks, m->npystacks, id,
                                         offsetof(ss_pystack_rec, id));
    if (s && sizeof(*s) + sizeof(ss_pyframe) * (uint64_t)s->depth > s->h.size) return NULL;
    return s;
}

ss_string_ref ss_model_op_name(const ss_model *m, const ss_gpu_op *op)
{
    ss_string_ref r = { NULL, 0 };
    if (op->kind == SS_OP_KERNEL) {
        r = ss_model_string(m, ((const ss_kernel_rec *)op->rec)->name_id);
        if (!r.s) { r.s = "kernel"; r.len = 6; }
        return r;
    }
    if (op->kind == SS_OP_MEMSET) { r.s = "memset"; r.len = 6; return r; }
    static const char *const kinds[] = {
        [SS_COPY_HTOD] = "memcpy HtoD", [SS_COPY_DTOH] = "memcpy DtoH", [SS_COPY_DTOD] = "memcpy DtoD",
        [SS_COPY_HTOH] = "memcpy HtoH", [SS_COPY_PTOP] = "memcpy PtoP",
    };
    uint8_t k = ((const ss_memcpy_rec *)op->rec)->copy_kind;
    r.s = k < sizeof kinds / sizeof kinds[0] && kinds[k] ? kinds[k] : "memcpy";
    r.len = (uint32_t)strlen(r.s);
    return r;
}

/* The Python stack of thread tid's first call at or after time t (0: none,
 * or no Python stack). */
static uint32_t first_pystack_from(const ss_model *m, uint32_t tid, uint64_t t)
{
    const ss_thread *th = ss_model_thread(m, tid);
    if (!th) return 0;
    uint32_t lo = 0, hi = th->ncalls;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->calls[th->calls[mid]].rec->t_enter < t) lo = mid + 1; else hi = mid;
    }
    return lo < th->ncalls ? m->calls[th->calls[lo]].rec->pystack_id : 0;
}

/* Does range r, whose end was never seen (UNCLOSED: open at exit), hold
 * call c?  Its end is unknown, so it holds only what is certainly inside
 * it: a library API pushed it and called from Python returns before Python
 * runs again, while every CUDA call it makes carries the same Python stack.
 * So c must have the Python stack of the thread's first call inside r.
 * (NCCL 2.24+ ends ncclCommInitRankConfig's and ncclCommFinalize's ranges
 * with the NVTX payload extension's nvtxRangePopPayload, which CUPTI does not
 * report: without this bound they held every later call of the thread --
 * a DDP script's forward pass was "inside NCCL".)  A call without a Python
 * stack is not held: its native stack says where it came from. */
static int unclosed_holds(const ss_model *m, const ss_nvtx_rec *r, const ss_call *c)
{
    return c->rec->pystack_id && c->rec->pystack_id == first_pystack_from(m, c->rec->tid, r->start);
}

const ss_nvtx_rec *ss_model_call_nvtx(const ss_model *m, const ss_call *c)
{
    uint32_t tid = c->rec->tid;
    uint64_t t0 = c->rec->t_enter, t1 = c->rec->t_exit;
    /* last range of tid starting at or before t0, then walk back to the
     * innermost one that encloses [t0,t1]; bounded so a thread with many
     * closed sibling ranges costs little */
    uint32_t lo = 0, hi = m->nnvtx;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        const ss_nvtx_rec *r = m->nvtx[mid].rec;
        if (r->tid < tid || (r->tid == tid && r->start <= t0)) lo = mid + 1; else hi = mid;
    }
    const ss_nvtx_rec *best = NULL;
    for (uint32_t steps = 0; lo > 0 && steps < 512; steps++) {
        const ss_nvtx_rec *r = m->nvtx[--lo].rec;
        if (r->tid != tid) break;
        if (r->h.flags & SS_NVTX_F_MARK) continue;
        int open = (r->h.flags & SS_NVTX_F_UNCLOSED) != 0;
        if (r->start <= t0 && (open ? unclosed_holds(m, r, c) : r->end >= t1)) {
            if (!best || r->depth > best->depth) best = r;
            if (r->depth == 0) break;
        }
    }
    return best;
}

int ss_library_range_name(ss_string_ref name)
{
    return name.s && name.len >= 4 && strncmp(name.s, "nccl", 4) == 0;
}

ss_string_ref ss_model_call_library_range(const ss_model *m, const ss_call *c)
{
    ss_string_ref none = { NULL, 0 };
    const ss_nvtx_rec *r = ss_model_call_nvtx(m, c);
    if (!r)
        return none;
    ss_string_ref s = ss_model_string(m, r->name_id);
    return ss_library_range_name(s) ? s : none;
}

void ss_call_released_range(const ss_model *m, const ss_call *c, uint64_t *lo, uint64_t *hi)
{
    const ss_alloc *al = &m->allocs[c->alloc];
    const ss_api_rec *r = c->rec;
    *lo = al->ptr;
    *hi = al->ptr + (al->size ? al->size : 1);
    if (r->bytes && r->ptr >= *lo && r->ptr < *hi) {
        *lo = r->ptr;
        if (r->bytes < *hi - *lo) *hi = *lo + r->bytes;
    }
}

int32_t ss_model_alloc_at(const ss_model *m, uint64_t addr, uint64_t t)
{
    uint32_t lo = 0, hi = m->nallocs;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if ((m->alloc_ptr ? m->alloc_ptr[mid] : m->allocs[mid].ptr) <= addr) lo = mid + 1; else hi = mid;
    }
    /* allocations sorted by ptr: look back over those starting at or below
     * addr, the latest first (bounded: address reuse creates many entries at
     * one ptr; the 256 nearest are the candidates) */
    uint32_t lim = lo > 256 ? lo - 256 : 0;
    while (lo > lim) {
        /* no allocation at or below this one reaches addr: most addresses
         * that are not pointers (scalar kernel arguments) stop here (the
         * bound only falls going down, so skipping entries misses no stop) */
        if (m->alloc_max_end && m->alloc_max_end[lo - 1] <= addr) break;
        /* the entries at one ptr are in allocation order: those allocated
         * after t, and a run of them all freed by t, hold nothing at t */
        if (m->alloc_group) {
            uint32_t g = m->alloc_group[lo - 1] > lim ? m->alloc_group[lo - 1] : lim;
            if (m->allocs[lo - 1].t_alloc > t) {
                uint32_t x = g, y = lo - 1;   /* first entry of [g, lo) allocated after t */
                while (x < y) {
                    uint32_t mid = x + (y - x) / 2;
                    if (m->allocs[mid].t_alloc > t) y = mid; else x = mid + 1;
                }
                lo = x;
                continue;
            }
            if (m->alloc_group_free[lo - 1] <= t) { lo = g; continue; }
        }
        const ss_alloc *a = &m->allocs[--lo];
        if (addr - a->ptr < (a->size ? a->size : 1) && a->t_alloc <= t && t < a->t_free)
            return (int32_t)lo;
    }
    return -1;
}

static const struct ss_timeline *timeline_of(const ss_model *m, int32_t device)
{
    for (uint32_t i = 0; i < m->ntimelines; i++)
        if (m->timelines[i].device == device) return &m->timelines[i];
    return NULL;
}

int ss_model_busy_at(const ss_model *m, int32_t device, uint64_t t)
{
    const struct ss_timeline *tl = timeline_of(m, device);
    if (!tl) return 0;
    uint32_t lo = 0, hi = tl->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (tl->submit[mid] < t) lo = mid + 1; else hi = mid;
    }
    return lo > 0 && tl->maxend[lo - 1] > t;
}

uint64_t ss_model_next_start(const ss_model *m, int32_t device, uint64_t t)
{
    const struct ss_timeline *tl = timeline_of(m, device);
    if (!tl) return UINT64_MAX;
    uint32_t lo = 0, hi = tl->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (tl->starts[mid] < t) lo = mid + 1; else hi = mid;
    }
    return lo < tl->n ? tl->starts[lo] : UINT64_MAX;
}

int32_t ss_model_call_device(const ss_model *m, const ss_call *c)
{
    if (c->rec->device >= 0) return c->rec->device;
    if (c->stream >= 0 && m->streams[c->stream].device >= 0) return m->streams[c->stream].device;
    if (c->first_op >= 0) return ss_op_device(&m->ops[c->first_op]);
    return 0;
}

/* thread contexts by thread, then time (then file order: the later one wins) */
static int cmp_tctx(const void *a, const void *b)
{
    const ss_thread_context_rec *x = *(const ss_thread_context_rec *const *)a;
    const ss_thread_context_rec *y = *(const ss_thread_context_rec *const *)b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The context thread tid's call entered at t ran in: the thread's last
 * SS_REC_THREAD_CONTEXT at or before t; 0 unknown. */
static uint32_t thread_context_at(const ss_model *m, uint32_t tid, uint64_t t)
{
    uint32_t lo = 0, hi = m->ntctx;   /* first record after (tid, t) */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const ss_thread_context_rec *r = m->tctx[mid];
        if (r->tid < tid || (r->tid == tid && r->t <= t)) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && m->tctx[lo - 1]->tid == tid ? m->tctx[lo - 1]->context_id : 0;
}

/* The context a device-wide wait in `context` covers: its parent for a green
 * context (trace format 1.9), else itself. */
static uint32_t context_family(const ss_model *m, uint32_t context)
{
    if (!context || m->hdr.version_major != SS_TRACE_VERSION_MAJOR || m->hdr.version_minor < 9) return context;
    for (uint32_t i = 0; i < m->ncontexts; i++)
        if (m->contexts[i]->context_id == context && m->contexts[i]->parent_id) return m->contexts[i]->parent_id;
    return context;
}

/* the context the call ran in, 0 unknown */
static uint32_t call_context(const ss_model *m, const ss_call *c)
{
    if (c->cls == SS_API_DEVICE_SYNC && c->rec->arg) return c->rec->arg;
    /* the context current to the calling thread, which the shim says */
    if (m->ntctx) {
        uint32_t x = thread_context_at(m, c->rec->tid, c->rec->t_enter);
        if (x) return x;
    }
    /* A created stream belongs to one context.  Without the thread's, the
     * model keeps one legacy stream a device and one per-thread stream a
     * thread and device (handle 0 names them in every context): theirs is
     * not known. */
    if (c->stream >= 0 && m->streams[c->stream].kind != SS_STREAM_PER_THREAD &&
        (m->split_contexts || m->streams[c->stream].kind != SS_STREAM_LEGACY_NULL))
        return m->streams[c->stream].context_id;
    return 0;
}

uint32_t ss_model_call_context(const ss_model *m, const ss_call *c)
{
    return context_family(m, call_context(m, c));
}

int ss_stream_in_context(const ss_model *m, int32_t s, uint32_t family)
{
    if (!family || s < 0 || !m->streams[s].context_id) return 1;
    /* the model's per-thread streams serve every context, and so do its
     * legacy streams unless it keeps one a context */
    if (m->streams[s].kind == SS_STREAM_PER_THREAD ||
        (m->streams[s].kind == SS_STREAM_LEGACY_NULL && !m->split_contexts))
        return 1;
    return m->streams[s].family == family;
}

int ss_device_wait_covers(const ss_model *m, const ss_call *c, int32_t s)
{
    int32_t dev = ss_model_call_device(m, c);
    return (m->streams[s].device == dev || m->streams[s].device < 0) &&
           ss_stream_in_context(m, s, ss_model_call_context(m, c));
}

uint32_t ss_model_device_contexts(const ss_model *m, int32_t device)
{
    /* by family: a green context's work is its parent's for a device-wide wait */
    uint32_t n = 0, first = 0;
    for (uint32_t s = 0; s < m->nstreams && n < 2; s++) {
        uint32_t x = m->streams[s].family;
        if (!x || (m->streams[s].device != device && m->streams[s].device >= 0)) continue;
        if (!n) { first = x; n = 1; }
        else if (x != first) n = 2;
    }
    return n;
}

/* ------------------------------------------------------------------ loading */

typedef struct loader {
    ss_model *m;
    unsigned threads;          /* SYNCSIGHT_THREADS: steps side by side, sorts over slices */
    /* raw record pointers collected in file order */
    const ss_api_rec **api; uint32_t napi, capi;
    const ss_gpu_common **gpu; uint32_t ngpu, cgpu;
    const ss_capture_rec **capt; uint32_t ncapt, ccapt;   /* SS_REC_CAPTURE, in file order */
    const ss_stream_rec **srec; uint32_t nsrec, csrec;
    const ss_stream_name_rec **sname; uint32_t nsname, csname;   /* NVTX stream names */
    const ss_nvtx_rec **nvtx; uint32_t nnvtx, cnvtx;
    const ss_thread_rec **thr; uint32_t nthr, cthr;
    uint32_t cap_sync, cap_cev, cap_note, cap_meta, cap_ctx, cap_stack, cap_py, cap_mod;
    ss_u64map cbid_name;       /* cbid -> api_names index */
    uint32_t cap_names;
    uint8_t *name_async;       /* per api_names index: its base name ends in Async (once per name, not per call) */
    /* stream union-find */
    int32_t *parent; uint32_t cap_streams;
    ss_u64map sid_map;         /* CUPTI stream id -> stream */
    ss_u64map handle_map;      /* handle -> stream */
    ss_u64map corr_stream;     /* creating corr -> stream (from SS_REC_STREAM) */
    ss_u64map legacy_map;      /* legacy_key(device, context) -> legacy stream */
    ss_u64map default_ctx;     /* device -> its first context that is not green (split contexts) */
    ss_u64map ctx_device;      /* CUPTI context id -> its device (CONTEXT records) */
    ss_u64map ptds_map;        /* (tid << 8 | device) -> per-thread stream */
} loader;

static uint64_t rec_time(const ss_rec_hdr *h)
{
    switch (h->type) {
    case SS_REC_API: return ((const ss_api_rec *)h)->t_enter;
    case SS_REC_KERNEL: case SS_REC_MEMCPY: case SS_REC_MEMSET:
        return ((const ss_gpu_common *)h)->start;
    case SS_REC_NVTX: return ((const ss_nvtx_rec *)h)->start;
    default: return 0;
    }
}

static uint64_t rec_end_time(const ss_rec_hdr *h)
{
    switch (h->type) {
    case SS_REC_API: return ((const ss_api_rec *)h)->t_exit;
    case SS_REC_KERNEL: case SS_REC_MEMCPY: case SS_REC_MEMSET:
        return ((const ss_gpu_common *)h)->end;
    default: return 0;
    }
}

static uint32_t add_api_name(ss_model *m, loader *L, const char *text, uint32_t len)
{
    char *s = ss_xcalloc(len + 1, 1);
    memcpy(s, text, len);
    for (uint32_t i = 0; i < len; i++) if (!s[i]) s[i] = '?';   /* keep it one C string */
    char base[128];
    ss_api_base_name(s, base, sizeof base);
    if (m->napi_names == L->cap_names) {
        L->cap_names = L->cap_names ? L->cap_names * 2 : 64;
        m->api_names = ss_xrealloc(m->api_names, L->cap_names * sizeof(char *));
        m->api_class = ss_xrealloc(m->api_class, L->cap_names);
        m->api_info = ss_xrealloc(m->api_info, L->cap_names * sizeof(*m->api_info));
        m->api_graph_launch = ss_xrealloc(m->api_graph_launch, L->cap_names);
        L->name_async = ss_xrealloc(L->name_async, L->cap_names);
    }
    L->name_async[m->napi_names] = (uint8_t)ends_with(base, "Async");
    const ss_api_info *info = ss_api_lookup(base);
    m->api_names[m->napi_names] = s;
    m->api_info[m->napi_names] = info;
    m->api_class[m->napi_names] = (uint8_t)(info ? info->cls : SS_API_OTHER);
    /* the table's class, asked once per name rather than per call */
    m->api_graph_launch[m->napi_names] = (uint8_t)(info && info->cls == SS_API_LAUNCH && !strcmp(info->tab_class, "graph-launch"));
    m->has_graph_launch |= m->api_graph_launch[m->napi_names];
    return m->napi_names++;
}

static int32_t new_stream(ss_model *m, loader *L)
{
    if (m->nstreams == L->cap_streams) {
        L->cap_streams = L->cap_streams ? L->cap_streams * 2 : 32;
        m->streams = ss_xrealloc(m->streams, L->cap_streams * sizeof(ss_stream));
        L->parent = ss_xrealloc(L->parent, L->cap_streams * sizeof(int32_t));
    }
    ss_stream *s = &m->streams[m->nstreams];
    memset(s, 0, sizeof *s);
    s->device = -1;
    s->create_call = -1;
    L->parent[m->nstreams] = (int32_t)m->nstreams;
    return (int32_t)m->nstreams++;
}

static int32_t sfind(loader *L, int32_t i)
{
    while (L->parent[i] != i) { L->parent[i] = L->parent[L->parent[i]]; i = L->parent[i]; }
    return i;
}

/* Merge b into a (fields known in b fill unknowns of a). */
static int32_t sunion(ss_model *m, loader *L, int32_t a, int32_t b)
{
    a = sfind(L, a); b = sfind(L, b);
    if (a == b) return a;
    ss_stream *x = &m->streams[a], *y = &m->streams[b];
    if (!x->handle) x->handle = y->handle;
    if (!x->stream_id) x->stream_id = y->stream_id;
    if (!x->context_id) x->context_id = y->context_id;
    if (x->device < 0) x->device = y->device;
    /* CUPTI reports a per-thread default stream as a plain blocking stream
     * (STREAM flag DEFAULT); the calls that used it know better. */
    if (!x->kind || (y->kind == SS_STREAM_PER_THREAD && x->kind == SS_STREAM_BLOCKING)) {
        x->kind = y->kind;
        x->flags = y->flags;
    }
    if (!x->priority) x->priority = y->priority;
    if (!x->owner_tid) x->owner_tid = y->owner_tid;
    if (x->create_call < 0) x->create_call = y->create_call;
    L->parent[b] = a;
    return a;
}

/* Each context has its own legacy stream.  Where the trace says which
 * context each call ran in (split_contexts) the model keeps one a device and
 * context; in older traces one a device.  A context unknown (0) is the
 * device's first one that is not green, usually its primary context. */
static uint32_t known_context(const ss_model *m, const loader *L, int32_t device, uint32_t context)
{
    if (!m->split_contexts) return 0;
    if (context) return context;
    return (uint32_t)ss_u64map_get(&L->default_ctx, (uint64_t)(uint32_t)device, 0);
}

static uint64_t legacy_key(const ss_model *m, const loader *L, int32_t device, uint32_t context)
{
    return (uint64_t)known_context(m, L, device, context) << 32 | (uint32_t)device;
}

static int32_t legacy_stream(ss_model *m, loader *L, int32_t device, uint32_t context)
{
    uint64_t key = legacy_key(m, L, device, context);
    int64_t s = ss_u64map_get(&L->legacy_map, key, -1);
    if (s >= 0) return sfind(L, (int32_t)s);
    int32_t n = new_stream(m, L);
    m->streams[n].kind = SS_STREAM_LEGACY_NULL;
    m->streams[n].device = device;
    m->streams[n].context_id = known_context(m, L, device, context);
    ss_u64map_put(&L->legacy_map, key, n);
    return n;
}

static int32_t per_thread_stream(ss_model *m, loader *L, uint32_t tid, int32_t device)
{
    uint64_t key = ((uint64_t)tid << 8) | (uint8_t)device;
    int64_t s = ss_u64map_get(&L->ptds_map, key, -1);
    if (s >= 0) return sfind(L, (int32_t)s);
    int32_t n = new_stream(m, L);
    m->streams[n].kind = SS_STREAM_PER_THREAD;
    m->streams[n].device = device;
    m->streams[n].owner_tid = tid;
    ss_u64map_put(&L->ptds_map, key, n);
    return n;
}

/* Which calls take a stream argument (table in trace_format.h). */
static int class_uses_stream(ss_api_class c, int is_async)
{
    switch (c) {
    case SS_API_LAUNCH: case SS_API_COPY_ASYNC: case SS_API_MEMSET_ASYNC:
    case SS_API_STREAM_SYNC: case SS_API_STREAM_QUERY: case SS_API_EVENT_RECORD:
    case SS_API_STREAM_WAIT: case SS_API_STREAM_DESTROY: case SS_API_HOST_FUNC:
    case SS_API_CAPTURE: case SS_API_STREAM_WAIT_VALUE: case SS_API_STREAM_WRITE_VALUE:
    case SS_API_STREAM_BATCH_MEMOP: case SS_API_MANAGED_MEMORY:
        return 1;
    case SS_API_COPY_SYNC: case SS_API_MEMSET_SYNC:
        return 1;   /* synchronous copies run on the (legacy or per-thread) default stream */
    case SS_API_ALLOC: case SS_API_FREE:
        return is_async;
    default:
        return 0;
    }
}

static int32_t resolve_handle(ss_model *m, loader *L, const ss_call *c, int32_t device)
{
    const ss_api_rec *r = c->rec;
    uint64_t h = r->stream;
    if (c->cls == SS_API_COPY_SYNC || c->cls == SS_API_MEMSET_SYNC) h = 0;
    if ((h == 0 && !(r->flags & SS_API_F_PTSZ)) || h == 1) {
        if (!m->split_contexts) return legacy_stream(m, L, device, 0);
        /* the thread's context says which legacy stream, and its device (a
         * record's own device is the thread's last cudaSetDevice, -1 when the
         * program never called it through the interposer, as PyTorch) */
        uint32_t ctx = thread_context_at(m, r->tid, r->t_enter);
        int64_t cd = ctx ? ss_u64map_get(&L->ctx_device, ctx, -1) : -1;
        return legacy_stream(m, L, cd >= 0 ? (int32_t)cd : device, ctx);
    }
    if (h == 0 || h == 2)
        return per_thread_stream(m, L, r->tid, device);
    int64_t s = ss_u64map_get(&L->handle_map, h, -1);
    if (s >= 0) return sfind(L, (int32_t)s);
    /* a stream created before tracing started (or by a path not recorded) */
    int32_t n = new_stream(m, L);
    m->streams[n].handle = h;
    m->streams[n].device = device;
    ss_u64map_put(&L->handle_map, h, n);
    return n;
}

/* calls by entry, then thread, then file order (a total order) */
static int cmp_api_ptr(const void *a, const void *b)
{
    const ss_api_rec *x = *(const ss_api_rec *const *)a, *y = *(const ss_api_rec *const *)b;
    if (x->t_enter != y->t_enter) return x->t_enter < y->t_enter ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    /* file order keeps a thread's own calls in program order */
    return x < y ? -1 : x > y;
}

static int cmp_gpu_ptr(const void *a, const void *b)
{
    const ss_gpu_common *x = *(const ss_gpu_common *const *)a, *y = *(const ss_gpu_common *const *)b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Sorting tens of millions of calls and ops through comparators that read
 * their records (in the mapped trace, 32-byte elements moved) took ~0.85 s
 * of 10 M records: they are sorted as (time, index) pairs by a radix sort
 * instead, and only runs of equal times through the comparator.  The
 * comparators are total orders: the same result. */
typedef struct time_idx { uint64_t t; uint64_t i; } time_idx;

typedef struct by_time {
    const char *base;
    char *sorted;
    time_idx *k;
    size_t n, size;
    uint64_t (*time_of)(const void *);
    int (*cmp)(const void *, const void *);
} by_time;

static void by_time_keys(void *ctx, uint32_t s, size_t from, size_t to)
{
    (void)s;
    by_time *j = ctx;
    for (size_t i = from; i < to; i++) j->k[i] = (time_idx){ j->time_of(j->base + i * j->size), i };
}

static void by_time_gather(void *ctx, uint32_t s, size_t from, size_t to)
{
    (void)s;
    by_time *j = ctx;
    for (size_t i = from; i < to; i++) memcpy(j->sorted + i * j->size, j->base + j->k[i].i * j->size, j->size);
}

/* The runs of equal times that start in [from, to), each sorted by cmp (a
 * run is sorted whole by the slice it starts in). */
static void by_time_ties(void *ctx, uint32_t s, size_t from, size_t to)
{
    (void)s;
    by_time *j = ctx;
    size_t a = from;
    while (a > 0 && a < to && j->k[a].t == j->k[a - 1].t) a++;
    for (size_t b; a < to; a = b) {
        for (b = a + 1; b < j->n && j->k[b].t == j->k[a].t; b++) {}
        if (b - a > 1) qsort(j->sorted + a * j->size, b - a, j->size, j->cmp);
    }
}

/* The n (>= 2) elements of `size` bytes in v, in a new array sorted by
 * time_of(element), ties by cmp; each pass over slices of the elements on up
 * to `threads` threads. */
static void *sorted_by_time(const void *v, size_t n, size_t size, uint64_t (*time_of)(const void *),
                            int (*cmp)(const void *, const void *), unsigned threads)
{
    by_time j = { v, ss_xcalloc(n, size), ss_xcalloc(n, sizeof(time_idx)), n, size, time_of, cmp };
    unsigned slices = ss_slice_count(n, SS_MIN_SLICE, threads);
    ss_parallel_slices(n, slices, by_time_keys, &j);
    ss_radix_sort16_threads(j.k, n, threads);
    ss_parallel_slices(n, slices, by_time_gather, &j);
    ss_parallel_slices(n, slices, by_time_ties, &j);
    free(j.k);
    return j.sorted;
}

static uint64_t api_time(const void *r) { return (*(const ss_api_rec *const *)r)->t_enter; }
static uint64_t gpu_time(const void *g) { return (*(const ss_gpu_common *const *)g)->start; }

static int cmp_nvtx(const void *a, const void *b)
{
    const ss_nvtx_rec *x = ((const ss_nvtx *)a)->rec, *y = ((const ss_nvtx *)b)->rec;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int cmp_idrec(const void *a, const void *b)
{
    /* stack and pystack records both start with hdr then id */
    uint32_t x, y;
    memcpy(&x, (const char *)*(const void *const *)a + sizeof(ss_rec_hdr), 4);
    memcpy(&y, (const char *)*(const void *const *)b + sizeof(ss_rec_hdr), 4);
    return x < y ? -1 : x > y;
}

/* SS_REC_KERNEL_ACCESS by (tid, t_enter), the key ss_call_exact_access()
 * looks launches up by. */
static int cmp_xaccess(const void *a, const void *b)
{
    const ss_kernel_access_rec *x = *(const ss_kernel_access_rec *const *)a;
    const ss_kernel_access_rec *y = *(const ss_kernel_access_rec *const *)b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->t_enter != y->t_enter) return x->t_enter < y->t_enter ? -1 : 1;
    return 0;
}

static int cmp_hsync(const void *a, const void *b)
{
    const ss_host_sync_rec *x = *(const ss_host_sync_rec *const *)a, *y = *(const ss_host_sync_rec *const *)b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x < y ? -1 : x > y;   /* file order: a thread's own records stay in order */
}

static int cmp_jit(const void *a, const void *b)
{
    const ss_jit_rec *x = *(const ss_jit_rec *const *)a, *y = *(const ss_jit_rec *const *)b;
    if (x->g.start != y->g.start) return x->g.start < y->g.start ? -1 : 1;
    return x < y ? -1 : x > y;
}

ss_string_ref ss_model_meta(const ss_model *m, const char *key)
{
    ss_string_ref r = { NULL, 0 };
    size_t klen = strlen(key);
    for (uint32_t i = 0; i < m->nmetas; i++) {
        const ss_meta_rec *mr = m->metas[i];
        /* tail: key, NUL, value, NUL */
        if ((uint64_t)sizeof(*mr) + mr->key_len + mr->value_len + 2 > mr->h.size) continue;
        const char *k = (const char *)ss_rec_tail(&mr->h, sizeof(*mr));
        if (mr->key_len == klen && memcmp(k, key, klen) == 0) {
            r.s = k + mr->key_len + 1;
            r.len = mr->value_len;
            return r;
        }
    }
    return r;
}

const char *const ss_decisive_env[] = {
    "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MODULE_LOADING", "CUDA_LAUNCH_BLOCKING", "CUDA_VISIBLE_DEVICES",
    "PYTORCH_CUDA_ALLOC_CONF", NULL,
};

const char *ss_model_env(const ss_model *m, const char *name, char *buf, size_t len)
{
    char key[160];
    snprintf(key, sizeof key, "env.%s", name);
    ss_string_ref v = ss_model_meta(m, key);
    if (!v.s || len == 0)
        return NULL;
    size_t n = v.len < len - 1 ? v.len : len - 1;
    memcpy(buf, v.s, n);
    buf[n] = '\0';
    return buf;
}

typedef struct alloc_sort { ss_alloc a; int32_t old; } alloc_sort;
static int cmp_alloc(const void *a, const void *b)
{
    const ss_alloc *x = &((const alloc_sort *)a)->a, *y = &((const alloc_sort *)b)->a;
    if (x->ptr != y->ptr) return x->ptr < y->ptr ? -1 : 1;
    return x->t_alloc < y->t_alloc ? -1 : x->t_alloc > y->t_alloc;
}

typedef struct sweep_pt { uint64_t t; int32_t stream; int8_t delta; uint8_t kind; } sweep_pt;
static int cmp_sweep(const void *a, const void *b)
{
    const sweep_pt *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->delta - y->delta;   /* ends before starts at the same time */
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t alloc_kind_of(const char *base)
{
    /* runtime names and their driver twins (cuda_api.tab) */
    if (!strcmp(base, "cudaMallocHost") || !strcmp(base, "cudaHostAlloc") ||
        !strcmp(base, "cudaHostRegister") || !strcmp(base, "cuMemAllocHost") ||
        !strcmp(base, "cuMemHostAlloc") || !strcmp(base, "cuMemHostRegister"))
        return SS_MEM_PINNED;
    if (!strcmp(base, "cudaMallocManaged") || !strcmp(base, "cuMemAllocManaged")) return SS_MEM_MANAGED;
    return SS_MEM_DEVICE;
}

/* Each op's call by correlation id (-1: none) and that call's entry. */
typedef struct join_job {
    const ss_model *m;
    const int32_t *corr_dense; uint32_t max_corr;   /* by id, when dense */
    const ss_u64map *corr_call;                     /* else by map */
    int32_t *call;
    uint64_t *enter;
    uint32_t *sid;                                  /* per op: its CUPTI stream id */
    uint32_t max_sid[SS_MAX_THREADS];               /* per slice: the largest */
} join_job;

static void join_slice(void *ctx, uint32_t s, size_t from, size_t to)
{
    join_job *j = ctx;
    uint32_t max_sid = 0;
    for (size_t i = from; i < to; i++) {
        const ss_gpu_common *g = j->m->ops[i].rec;
        uint32_t corr = g->corr;
        int64_t ci = !corr ? -1
                   : j->corr_call ? ss_u64map_get(j->corr_call, corr, -1)
                   : corr <= j->max_corr ? j->corr_dense[corr] : -1;
        j->call[i] = (int32_t)ci;
        j->enter[i] = ci >= 0 ? j->m->calls[ci].rec->t_enter : 0;
        j->sid[i] = g->stream_id;
        if (g->stream_id > max_sid) max_sid = g->stream_id;
    }
    j->max_sid[s] = max_sid;
}

/* CUPTI stream id -> stream while the ops are joined: the loader's map,
 * read through a table by id where the ids are small (they are CUPTI's
 * running count), so that each op's lookup and update is an array access;
 * an id's entry is taken from the map the first time it is asked for.  The
 * map is not read after the join, so the table's updates are not copied
 * back into it. */
typedef struct sid_table { ss_u64map *map; int64_t *v; uint32_t n; } sid_table;
#define SID_UNREAD INT64_MIN

static int64_t sid_get(sid_table *t, uint32_t sid)
{
    if (sid >= t->n) return ss_u64map_get(t->map, sid, -1);
    if (t->v[sid] == SID_UNREAD) t->v[sid] = ss_u64map_get(t->map, sid, -1);
    return t->v[sid];
}

static void sid_put(sid_table *t, uint32_t sid, int64_t s)
{
    if (sid < t->n) t->v[sid] = s;
    else ss_u64map_put(t->map, sid, s);
}

/* ---- conditional graph nodes: ops CUPTI gives no correlation id -------
 *
 * The body of a conditional node (while / if / switch) runs on a stream of
 * the executable graph's own, and CUPTI reports its ops with correlation id
 * 0, the executable graph's id and a node id (measured, CUDA 13.0, H200).
 * Unjoined, they would be GPU work of nobody: a device-wide sync waiting for
 * a while-loop would look like it waited for nothing the program used.  A
 * graph launch records the executable graph's id (trace-format.md); launches
 * of one executable graph run one at a time, in launch order (cudaGraphLaunch),
 * so an op of its body belongs to the earliest launch of that graph that the
 * trace does not prove finished when the op started.  A launch is proven
 * finished once an op ordered after it has started (an op of a later launch
 * of the same graph, or of a later call on the launch's stream) or a host
 * wait for its stream or device, begun after it, has returned.  Where the
 * proof is missing (launches queued back to back) the op goes to the earlier
 * launch: it then counts as submitted sooner, which can hide an ordering
 * problem but never invent one. */
static uint32_t op_graph_id(const ss_gpu_op *op)
{
    switch (op->kind) {
    case SS_OP_KERNEL: return ((const ss_kernel_rec *)op->rec)->graph_id;
    case SS_OP_MEMCPY: return ((const ss_memcpy_rec *)op->rec)->graph_id;
    case SS_OP_MEMSET: return ((const ss_memset_rec *)op->rec)->graph_id;
    default: return 0;
    }
}

/* The executable graph a launch ran, as CUPTI numbers it: recorded with the
 * launch (trace-format.md), or in older traces carried by its joined
 * operations; 0 unknown. */
static uint32_t launch_graph_id(const ss_model *m, const ss_call *l)
{
    uint32_t g = l->rec->arg;
    for (int32_t o = l->first_op; !g && o >= 0; o = m->ops[o].next_of_call) g = op_graph_id(&m->ops[o]);
    return g;
}

typedef struct graph_launch { uint32_t graph; int32_t call; uint64_t done_by; } graph_launch;

static int cmp_graph_launch(const void *a, const void *b)
{
    const graph_launch *x = a, *y = b;
    if (x->graph != y->graph) return x->graph < y->graph ? -1 : 1;
    return (x->call > y->call) - (x->call < y->call);
}

static int cmp_graph_orphan(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;   /* (graph id << 32 | 0), op index: by graph, then op (start order) */
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static void join_graph_bodies(ss_model *m)
{
    if (!m->has_graph_launch) return;
    uint32_t norphans = 0;
    for (uint32_t i = 0; i < m->nops; i++)
        norphans += m->ops[i].call < 0 && op_graph_id(&m->ops[i]) && ss_op_graph_node(&m->ops[i]);
    if (!norphans) return;
    /* the launches, each with the executable graph's id: recorded, or (older
     * traces) the id its own joined ops carry */
    graph_launch *gl = NULL;
    uint32_t ngl = 0, capgl = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (!ss_call_is_graph_launch(m, c) || c->rec->ret != 0) continue;
        uint32_t g = launch_graph_id(m, c);
        if (!g) continue;
        graph_launch x = { g, (int32_t)i, UINT64_MAX };
        SS_PUSH(gl, ngl, capgl, x);
    }
    if (!ngl) { free(gl); return; }
    /* A launch is done by the start of the first op of a later call on its
     * stream: per stream, its launches by call index; the ops in start order
     * settle them as a prefix (an op of call c settles every launch before c). */
    int32_t *by_stream = ss_xcalloc(ngl, sizeof(int32_t));   /* launch indices, by (stream, call) */
    uint32_t *first = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t));
    for (uint32_t k = 0; k < ngl; k++) {
        int32_t s = m->calls[gl[k].call].stream;
        if (s >= 0) first[s + 1]++;
    }
    for (uint32_t s = 0; s < m->nstreams; s++) first[s + 1] += first[s];
    uint32_t *fill = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t));
    for (uint32_t k = 0; k < ngl; k++) {   /* gl is in call order here */
        int32_t s = m->calls[gl[k].call].stream;
        if (s >= 0) by_stream[first[s] + fill[s]++] = (int32_t)k;
    }
    memset(fill, 0, (m->nstreams + 1) * sizeof(uint32_t));   /* now: how many of a stream's are settled */
    for (uint32_t i = 0; i < m->nops; i++) {
        const ss_gpu_op *op = &m->ops[i];
        if (op->call < 0) continue;
        int32_t s = m->calls[op->call].stream;
        if (s < 0) continue;
        uint32_t n = first[s + 1] - first[s];
        while (fill[s] < n && gl[by_stream[first[s] + fill[s]]].call < op->call) {
            gl[by_stream[first[s] + fill[s]]].done_by = op->start;
            fill[s]++;
        }
    }
    free(by_stream); free(first); free(fill);
    /* ... and by the return of a host wait for its stream or its device that
     * began after it was submitted (the nearest 64 such waits) */
    int32_t *waits = NULL;
    uint32_t nw = 0, capw = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (c->rec->ret == 0 && (c->cls == SS_API_DEVICE_SYNC || (c->cls == SS_API_STREAM_SYNC && c->stream >= 0)))
            SS_PUSH(waits, nw, capw, (int32_t)i);
    }
    for (uint32_t k = 0; k < ngl && nw; k++) {
        const ss_call *l = &m->calls[gl[k].call];
        int32_t dev = ss_model_call_device(m, l);
        uint32_t lo = 0, hi = nw;   /* the first wait that began after the launch returned */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (m->calls[waits[mid]].rec->t_enter < l->rec->t_exit) lo = mid + 1;
            else hi = mid;
        }
        for (uint32_t w = lo; w < nw && w < lo + 64; w++) {
            const ss_call *x = &m->calls[waits[w]];
            int covers = x->cls == SS_API_DEVICE_SYNC
                             ? ss_model_call_device(m, x) == dev && ss_stream_in_context(m, l->stream, ss_model_call_context(m, x))
                             : x->stream == l->stream;
            if (covers && x->rec->t_exit < gl[k].done_by) gl[k].done_by = x->rec->t_exit;
        }
    }
    free(waits);
    qsort(gl, ngl, sizeof *gl, cmp_graph_launch);
    /* ... and by the start of the first op of a later launch of its graph */
    for (uint32_t k = ngl; k-- > 1; ) {
        if (gl[k - 1].graph != gl[k].graph) continue;
        const ss_call *next = &m->calls[gl[k].call];
        uint64_t t = next->first_op >= 0 ? m->ops[next->first_op].start : UINT64_MAX;
        if (gl[k].done_by < t) t = gl[k].done_by;   /* what proves the later one done proves this one */
        if (t < gl[k - 1].done_by) gl[k - 1].done_by = t;
    }
    /* the orphans by graph, in start order; each graph's launches walked once */
    uint64_t *orph = ss_xcalloc(norphans, 2 * sizeof(uint64_t));
    uint32_t no = 0;
    for (uint32_t i = 0; i < m->nops; i++) {
        uint32_t g = m->ops[i].call < 0 && ss_op_graph_node(&m->ops[i]) ? op_graph_id(&m->ops[i]) : 0;
        if (g) { orph[2 * no] = g; orph[2 * no + 1] = i; no++; }
    }
    qsort(orph, no, 2 * sizeof(uint64_t), cmp_graph_orphan);
    uint8_t *touched = ss_xcalloc(m->ncalls ? m->ncalls : 1, 1);
    uint32_t k = 0, joined = 0;
    for (uint32_t j = 0; j < no; j++) {
        uint32_t g = (uint32_t)orph[2 * j];
        ss_gpu_op *op = &m->ops[orph[2 * j + 1]];
        if (j == 0 || (uint32_t)orph[2 * j - 2] != g) {
            while (k < ngl && gl[k].graph < g) k++;   /* the graph's first launch */
        }
        if (k >= ngl || gl[k].graph != g) continue;   /* no launch of it recorded */
        while (k + 1 < ngl && gl[k + 1].graph == g && op->start >= gl[k].done_by) k++;
        const ss_call *c = &m->calls[gl[k].call];
        /* begun before the launch was made: a launch the trace lacks (before
         * it started, or while the shim was sampling off) ran it */
        if (op->start < c->rec->t_enter) continue;
        op->call = gl[k].call;
        op->submit = c->rec->t_enter;
        touched[gl[k].call] = 1;
        joined++;
    }
    /* the launches' op chains again, in start order (op index order) */
    if (joined) {
        int32_t *last = ss_xcalloc(m->ncalls ? m->ncalls : 1, sizeof(int32_t));
        for (uint32_t i = 0; i < m->ncalls; i++) if (touched[i]) m->calls[i].first_op = -1;
        for (uint32_t i = 0; i < m->nops; i++) {
            ss_gpu_op *op = &m->ops[i];
            if (op->call < 0 || !touched[op->call]) continue;
            ss_call *c = &m->calls[op->call];
            op->next_of_call = -1;
            if (c->first_op < 0) c->first_op = (int32_t)i;
            else m->ops[last[op->call]].next_of_call = (int32_t)i;
            last[op->call] = (int32_t)i;
        }
        free(last);
    }
    free(touched); free(orph); free(gl);
}

/* the largest correlation id of a slice of the calls */
typedef struct corr_job { const ss_model *m; uint32_t max[SS_MAX_THREADS]; } corr_job;
static void max_corr_slice(void *ctx, uint32_t s, size_t from, size_t to)
{
    corr_job *j = ctx;
    uint32_t mx = 0;
    for (size_t i = from; i < to; i++)
        if (j->m->calls[i].rec->corr > mx) mx = j->m->calls[i].rec->corr;
    j->max[s] = mx;
}

/* Each stream's legacy-barrier domain and context family (ss_stream).  With
 * split contexts a created stream's context is its operations' (CUPTI's
 * records of a stream's creation can name the context current to the
 * creating thread rather than the stream's: a green context's streams). */
static void stream_domains(ss_model *m, const loader *L)
{
    if (m->split_contexts) {
        uint8_t *seen = ss_xcalloc(m->nstreams ? m->nstreams : 1, 1);
        for (uint32_t i = 0; i < m->nops; i++) {
            int32_t s = m->ops[i].stream;
            if (s < 0 || seen[s]) continue;
            seen[s] = 1;
            uint32_t x = m->ops[i].rec->context_id;
            if (x && m->streams[s].kind != SS_STREAM_LEGACY_NULL) m->streams[s].context_id = x;
        }
        free(seen);
    }
    ss_u64map dom = { 0 };
    int32_t next = 0;
    for (uint32_t i = 0; i < m->nstreams; i++) {
        ss_stream *st = &m->streams[i];
        st->family = context_family(m, st->context_id);
        if (st->device < 0) { st->ldomain = -1; continue; }
        /* dense indexes (rules size tables by them; a device number comes
         * from the trace): a device and, with split contexts, a context */
        uint64_t key = legacy_key(m, L, st->device, st->context_id);
        int64_t d = ss_u64map_get(&dom, key, -1);
        if (d < 0) { d = next++; ss_u64map_put(&dom, key, d); }
        st->ldomain = (int32_t)d;
    }
    ss_u64map_free(&dom);
}

/* Compacting the streams (build_streams_and_joins, step 4) on slices of the
 * calls and ops: which streams are used (a table per slice, or'ed after:
 * slices never write one byte), then every index renumbered. */
typedef struct compact_job {
    ss_model *m;
    int32_t *root;             /* per stream: its union-find root */
    const int32_t *final;      /* per stream: its final index, -1 gone */
    uint32_t nstreams;
    uint8_t *used[2 * SS_MAX_THREADS];   /* per slice */
} compact_job;

static void used_by_calls_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    compact_job *j = ctx;
    for (size_t i = from; i < to; i++)
        if (j->m->calls[i].stream >= 0) j->used[sl][j->root[j->m->calls[i].stream]] = 1;
}

static void used_by_ops_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    compact_job *j = ctx;
    for (size_t i = from; i < to; i++) j->used[sl][j->root[j->m->ops[i].stream]] = 1;
}

static void final_calls_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    compact_job *j = ctx;
    for (size_t i = from; i < to; i++)
        if (j->m->calls[i].stream >= 0) j->m->calls[i].stream = j->final[j->m->calls[i].stream];
}

static void final_ops_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    compact_job *j = ctx;
    for (size_t i = from; i < to; i++) j->m->ops[i].stream = j->final[j->m->ops[i].stream];
}

static void build_streams_and_joins(ss_model *m, loader *L)
{
    /* A stream's device is its context's: the shim's stream records can carry
     * the device that was current on the thread when the record was written,
     * which is not the stream's in a multi-GPU process. */
    double t_step = ss_seconds();
    ss_u64map *ctx_device = &L->ctx_device;
    for (uint32_t i = 0; i < m->ncontexts; i++)
        if (m->contexts[i]->context_id)
            ss_u64map_put(ctx_device, m->contexts[i]->context_id, m->contexts[i]->device);
    /* the context a call of unknown context is taken to run in: its device's
     * first that is not green (split contexts) */
    for (uint32_t i = 0; i < m->ncontexts && m->split_contexts; i++) {
        const ss_context_rec *c = m->contexts[i];
        if (c->context_id && context_family(m, c->context_id) == c->context_id &&
            ss_u64map_get(&L->default_ctx, c->device, 0) == 0)
            ss_u64map_put(&L->default_ctx, c->device, c->context_id);
    }

    /* 1. what the shim told us about streams.  A record is joined to the
     * stream made by the same call (its correlation id) when nothing else
     * names it, but one call can make several streams: the process's first
     * call that needs a context (a cudaStreamCreate, as CuPy's first call
     * is) also makes the context's own streams, the legacy stream among
     * them, and CUPTI gives each of their STREAM records that call's
     * correlation id.  Such a correlation id says nothing of which stream
     * is which: records carrying it join by stream id and handle only, and
     * only a record with a handle (the created stream's) speaks for it. */
    ss_u64map corr_sids = { 0 };   /* corr -> CUPTI's stream records (a stream id, no handle) with it */
    for (uint32_t i = 0; i < L->nsrec; i++) {
        const ss_stream_rec *r = L->srec[i];
        if (r->corr && r->stream_id && !r->handle)
            ss_u64map_put(&corr_sids, r->corr, ss_u64map_get(&corr_sids, r->corr, 0) + 1);
    }
    for (uint32_t i = 0; i < L->nsrec; i++) {
        const ss_stream_rec *r = L->srec[i];
        int32_t s = -1;
        int corr_ambiguous = r->corr && ss_u64map_get(&corr_sids, r->corr, 0) > 1;
        if (r->stream_id) {
            int64_t v = ss_u64map_get(&L->sid_map, r->stream_id, -1);
            if (v >= 0) s = sfind(L, (int32_t)v);
        }
        if (s < 0 && r->corr && !corr_ambiguous) {
            int64_t v = ss_u64map_get(&L->corr_stream, r->corr, -1);
            if (v >= 0) {
                int32_t t = sfind(L, (int32_t)v);
                const ss_stream *ts = &m->streams[t];
                /* never two stream ids, or the legacy stream and a created one */
                if (!(r->stream_id && ts->stream_id && ts->stream_id != r->stream_id) &&
                    !(r->kind == SS_STREAM_LEGACY_NULL && ts->handle))
                    s = t;
            }
        }
        if (s < 0 && !r->stream_id && r->handle) {
            int64_t v = ss_u64map_get(&L->handle_map, r->handle, -1);
            if (v >= 0) s = sfind(L, (int32_t)v);
        }
        if (s < 0) s = new_stream(m, L);
        ss_stream *st = &m->streams[s];
        if (r->handle && !st->handle) st->handle = r->handle;
        if (r->stream_id && !st->stream_id) st->stream_id = r->stream_id;
        if (r->context_id) st->context_id = r->context_id;
        int64_t cd = r->context_id ? ss_u64map_get(ctx_device, r->context_id, -1) : -1;
        if (cd >= 0) st->device = (int32_t)cd;
        else if (st->device < 0) st->device = (int32_t)r->device;
        if (r->kind && !(st->kind == SS_STREAM_PER_THREAD && r->kind == SS_STREAM_BLOCKING)) {
            st->kind = r->kind;
            st->flags = r->flags;
        }
        if (r->priority) st->priority = r->priority;
        if (r->stream_id) ss_u64map_put(&L->sid_map, r->stream_id, s);
        if (r->handle) ss_u64map_put(&L->handle_map, r->handle, s);
        if (r->corr && (!corr_ambiguous || r->handle)) ss_u64map_put(&L->corr_stream, r->corr, s);
        if (r->kind == SS_STREAM_LEGACY_NULL)
            ss_u64map_put(&L->legacy_map, legacy_key(m, L, st->device, r->context_id), s);
    }
    ss_u64map_free(&corr_sids);
    for (uint32_t i = 0; i < m->ncontexts; i++) {
        const ss_context_rec *c = m->contexts[i];
        if (!c->null_stream_id) continue;
        int32_t s;
        int64_t v = ss_u64map_get(&L->sid_map, c->null_stream_id, -1);
        if (v >= 0) s = sfind(L, (int32_t)v);
        else { s = new_stream(m, L); m->streams[s].stream_id = c->null_stream_id; }
        m->streams[s].kind = SS_STREAM_LEGACY_NULL;
        m->streams[s].device = (int32_t)c->device;
        m->streams[s].context_id = c->context_id;
        ss_u64map_put(&L->sid_map, c->null_stream_id, s);
        uint64_t key = legacy_key(m, L, (int32_t)c->device, c->context_id);
        int64_t old = ss_u64map_get(&L->legacy_map, key, -1);
        if (old >= 0) s = sunion(m, L, (int32_t)old, s);
        ss_u64map_put(&L->legacy_map, key, s);
    }

    ss_timing("load.streams_and_joins.shim", t_step); t_step = ss_seconds();
    /* 2. calls in time order: creation (handles can be reused after a
     * destroy, so the mapping at the time of each call is what counts) */
    /* correlation ids are CUPTI's running counter: dense, so a plain array
     * indexed by id is used when it is small enough (else a hash map) */
    corr_job cj = { m, { 0 } };
    unsigned corr_slices = ss_slice_count(m->ncalls, SS_MIN_SLICE, L->threads);
    ss_parallel_slices(m->ncalls, corr_slices, max_corr_slice, &cj);
    uint32_t max_corr = 0;
    for (unsigned sl = 0; sl < corr_slices; sl++) if (cj.max[sl] > max_corr) max_corr = cj.max[sl];
    int dense = (uint64_t)max_corr <= 4ull * m->ncalls + 4096;
    int32_t *corr_dense = dense ? ss_xcalloc((size_t)max_corr + 1, sizeof(int32_t)) : NULL;
    if (dense) for (uint32_t k = 0; k <= max_corr; k++) corr_dense[k] = -1;
    ss_u64map corr_call = { 0 };
    for (uint32_t i = 0; i < m->ncalls; i++) {
        ss_call *c = &m->calls[i];
        const ss_api_rec *r = c->rec;
        if (r->corr) {
            if (dense) corr_dense[r->corr] = (int32_t)i;
            else ss_u64map_put(&corr_call, r->corr, i);
        }
        int32_t dev = r->device >= 0 ? r->device : 0;
        if (c->cls == SS_API_STREAM_CREATE) {
            if (r->ret != 0 || r->stream == 0) continue;
            int64_t v = r->corr ? ss_u64map_get(&L->corr_stream, r->corr, -1) : -1;
            int32_t s = v >= 0 ? sfind(L, (int32_t)v) : new_stream(m, L);
            ss_stream *st = &m->streams[s];
            st->handle = r->stream;
            st->create_call = (int32_t)i;
            if (st->device < 0) st->device = dev;
            /* cudaStreamCreate takes no flags; WithFlags/WithPriority: arg */
            st->flags = r->arg;
            st->priority = r->arg2;
            if (!st->kind || st->kind == SS_STREAM_UNKNOWN)
                st->kind = (r->arg & 1u) ? SS_STREAM_NON_BLOCKING : SS_STREAM_BLOCKING;
            ss_u64map_put(&L->handle_map, r->stream, s);
            c->stream = s;
            continue;
        }
        if (class_uses_stream((ss_api_class)c->cls, c->is_async))
            c->stream = resolve_handle(m, L, c, dev);
    }

    ss_timing("load.streams_and_joins.calls", t_step); t_step = ss_seconds();
    /* 3. join GPU ops with their calls; learn handle <-> CUPTI stream id.
     * Each op's call and its entry first, on threads (reading them is a
     * cache miss an op in the mapped trace; the maps are only read here) */
    int32_t *last_op = ss_xcalloc(m->ncalls ? m->ncalls : 1, sizeof(int32_t));
    join_job jj = { m, corr_dense, max_corr, dense ? NULL : &corr_call,
                    ss_xcalloc(m->nops + 1, sizeof(int32_t)), ss_xcalloc(m->nops + 1, sizeof(uint64_t)),
                    ss_xcalloc(m->nops + 1, sizeof(uint32_t)), { 0 } };
    unsigned join_slices = ss_slice_count(m->nops, SS_MIN_SLICE, L->threads);
    ss_parallel_slices(m->nops, join_slices, join_slice, &jj);
    uint32_t max_sid = 0;
    for (unsigned sl = 0; sl < join_slices; sl++) if (jj.max_sid[sl] > max_sid) max_sid = jj.max_sid[sl];
    sid_table sids = { &L->sid_map, NULL, 0 };
    if ((uint64_t)max_sid <= 4ull * m->nops + 4096) {
        sids.n = max_sid + 1;
        sids.v = ss_xcalloc(sids.n, sizeof(int64_t));
        for (uint32_t k = 0; k < sids.n; k++) sids.v[k] = SID_UNREAD;
    }
    for (uint32_t i = 0; i < m->nops; i++) {
        ss_gpu_op *op = &m->ops[i];
        const ss_gpu_common *g = op->rec;   /* read only where a stream lacks a field (rare) */
        uint32_t sid = jj.sid[i];
        int64_t ci = jj.call[i];
        int32_t s_by_id = -1;
        if (sid) {
            int64_t v = sid_get(&sids, sid);
            if (v >= 0) s_by_id = sfind(L, (int32_t)v);
        }
        int32_t s = s_by_id;
        if (ci >= 0) {
            ss_call *c = &m->calls[ci];
            op->call = (int32_t)ci;
            op->submit = jj.enter[i];
            /* chain in start order: ops are already sorted by start */
            if (c->first_op < 0) c->first_op = (int32_t)i;
            else m->ops[last_op[ci]].next_of_call = (int32_t)i;
            last_op[ci] = (int32_t)i;
            if (c->stream >= 0) {
                int32_t cs = sfind(L, c->stream);
                uint32_t cs_id = m->streams[cs].stream_id;
                if (s_by_id < 0 && (!cs_id || cs_id == sid)) {
                    s = cs;
                } else if (s_by_id >= 0 && s_by_id != cs && (!cs_id || cs_id == sid)) {
                    s = sunion(m, L, s_by_id, cs);
                } else if (s_by_id >= 0 && s_by_id != cs && m->split_contexts &&
                           m->streams[cs].kind == SS_STREAM_LEGACY_NULL &&
                           m->streams[s_by_id].kind == SS_STREAM_LEGACY_NULL) {
                    /* the call's work ran on another context's legacy stream
                     * than the thread's context said (CUPTI's driver-API
                     * callbacks name a green context's parent): its op knows */
                    c->stream = s_by_id;
                }
            }
        }
        if (s < 0) {
            s = new_stream(m, L);
            m->streams[s].device = (int32_t)g->device;
        }
        s = sfind(L, s);
        if (!m->streams[s].stream_id && sid) m->streams[s].stream_id = sid;
        if (m->streams[s].device < 0) m->streams[s].device = (int32_t)g->device;
        if (!m->streams[s].context_id) m->streams[s].context_id = g->context_id;
        if (sid) sid_put(&sids, sid, s);
        op->stream = s;
    }
    free(sids.v);
    free(jj.sid);
    ss_u64map_free(&corr_call);
    free(corr_dense);
    free(last_op);
    free(jj.call);
    free(jj.enter);

    ss_timing("load.streams_and_joins.ops", t_step); t_step = ss_seconds();
    /* 4. compact the union-find into final indices, without the driver's
     * own streams: those it makes with a context are known only from
     * CUPTI's records (no handle, no creating call) and, with no call or
     * operation on them, are no streams of the program (they would count
     * as streams sharing hardware queues, or among a device's blocking
     * streams).  The legacy and per-thread default streams stay. */
    uint32_t nst = m->nstreams ? m->nstreams : 1;
    compact_job cj2 = { m, ss_xcalloc(nst, sizeof(int32_t)), NULL, nst, { NULL } };
    for (uint32_t i = 0; i < m->nstreams; i++) cj2.root[i] = sfind(L, (int32_t)i);   /* the union-find settled */
    unsigned call_slices = ss_slice_count(m->ncalls, SS_MIN_SLICE, L->threads);
    unsigned op_slices = ss_slice_count(m->nops, SS_MIN_SLICE, L->threads);
    for (unsigned sl = 0; sl < call_slices + op_slices; sl++) cj2.used[sl] = ss_xcalloc(nst, 1);
    ss_parallel_slices(m->ncalls, call_slices, used_by_calls_slice, &cj2);
    compact_job oj = cj2;
    for (unsigned sl = 0; sl < op_slices; sl++) oj.used[sl] = cj2.used[call_slices + sl];
    ss_parallel_slices(m->nops, op_slices, used_by_ops_slice, &oj);
    uint8_t *used = ss_xcalloc(nst, 1);
    for (unsigned sl = 0; sl < call_slices + op_slices; sl++) {
        for (uint32_t i = 0; i < m->nstreams; i++) used[i] |= cj2.used[sl][i];
        free(cj2.used[sl]);
    }
    int32_t *final = ss_xcalloc(nst, sizeof(int32_t));
    uint32_t nfinal = 0;
    for (uint32_t i = 0; i < m->nstreams; i++) {
        const ss_stream *st = &m->streams[i];
        int keep = used[i] || st->handle || st->create_call >= 0 || st->kind == SS_STREAM_LEGACY_NULL ||
                   st->kind == SS_STREAM_PER_THREAD;
        final[i] = cj2.root[i] == (int32_t)i && keep ? (int32_t)nfinal++ : -1;
    }
    free(used);
    for (uint32_t i = 0; i < m->nstreams; i++) final[i] = final[cj2.root[i]];
    ss_stream *streams = ss_xcalloc(nfinal ? nfinal : 1, sizeof(ss_stream));
    for (uint32_t i = 0; i < m->nstreams; i++)
        if (cj2.root[i] == (int32_t)i && final[i] >= 0) streams[final[i]] = m->streams[i];
    cj2.final = final;
    ss_parallel_slices(m->ncalls, call_slices, final_calls_slice, &cj2);
    ss_parallel_slices(m->nops, op_slices, final_ops_slice, &cj2);
    free(cj2.root);
    free(final);
    free(m->streams);
    m->streams = streams;
    m->nstreams = nfinal;

    ss_timing("load.streams_and_joins.compact", t_step);
    /* 5. names the program gave streams (NVTX), in the order given: a name
     * goes to the stream that had the handle then -- the latest created
     * before it (handles are reused after cudaStreamDestroy); handle 0 names
     * the legacy default stream. */
    for (uint32_t k = 0; k < L->nsname; k++) {
        const ss_stream_name_rec *r = L->sname[k];
        int32_t best = -1;
        uint64_t best_t = 0;
        for (uint32_t i = 0; i < m->nstreams; i++) {
            const ss_stream *st = &m->streams[i];
            int match = r->handle ? st->handle == r->handle : st->kind == SS_STREAM_LEGACY_NULL;
            if (!match) continue;
            uint64_t t = st->create_call >= 0 ? m->calls[st->create_call].rec->t_enter : 0;
            if (t > r->time || (best >= 0 && t < best_t)) continue;
            best = (int32_t)i;
            best_t = t;
        }
        if (best >= 0) m->streams[best].name_id = r->name_id;
    }
    for (uint32_t i = 0; i < m->nstreams; i++) m->nper_thread_streams += m->streams[i].kind == SS_STREAM_PER_THREAD;
    stream_domains(m, L);
    /* 6. ops of conditional graph nodes' bodies: to their launches */
    join_graph_bodies(m);
}

/* Memory mapped through CUDA's virtual memory management (cuMemMap /
 * cuMemUnmap).  PyTorch's expandable segments (and other allocators built on
 * these calls) reserve an address range and map physical chunks into it one
 * after another as a segment grows; a tensor placed in the segment may span
 * chunks, and to the program the segment is one buffer.  So adjacent live
 * mappings are one allocation: a mapping that starts where a live one ends
 * extends it (one that ends where a live one starts extends that one
 * downwards: no address in the new range was usable before, so nothing
 * earlier resolves differently).  An unmap ends the joined allocation and
 * starts new ones, from the unmap on, for what stays mapped on either side:
 * accesses after it are to a different allocation, as after a free. */
typedef struct live_maps { int32_t *v; uint32_t n, cap; } live_maps;

static int32_t map_join(ss_model *m, const live_maps *maps, uint64_t ptr, uint64_t bytes)
{
    for (uint32_t k = 0; k < maps->n; k++) {
        ss_alloc *x = &m->allocs[maps->v[k]];
        if (x->ptr + x->size == ptr) { x->size += bytes; return maps->v[k]; }
        if (ptr + bytes == x->ptr) { x->ptr = ptr; x->size += bytes; return maps->v[k]; }
    }
    return -1;
}

static int32_t map_unmap(ss_model *m, live_maps *maps, uint32_t *cap_al, uint64_t ptr, uint64_t bytes, int32_t call)
{
    for (uint32_t k = 0; k < maps->n; k++) {
        int32_t ai = maps->v[k];
        ss_alloc x = m->allocs[ai];
        if (ptr < x.ptr || ptr - x.ptr >= x.size) continue;
        uint64_t t = m->calls[call].rec->t_enter, end = x.ptr + x.size;
        uint64_t cut_end = bytes < end - ptr ? ptr + bytes : end;
        m->allocs[ai].t_free = t;
        m->allocs[ai].free_call = call;
        maps->v[k] = maps->v[--maps->n];
        /* what stays mapped below and above the unmapped range */
        uint64_t lo[2] = { x.ptr, cut_end }, hi[2] = { ptr, end };
        for (int side = 0; side < 2; side++) {
            if (hi[side] <= lo[side]) continue;
            ss_alloc rest = { lo[side], hi[side] - lo[side], t, UINT64_MAX, x.kind, x.alloc_call, -1 };
            SS_PUSH(m->allocs, m->nallocs, *cap_al, rest);
            SS_PUSH(maps->v, maps->n, maps->cap, (int32_t)m->nallocs - 1);
        }
        return ai;
    }
    return -1;
}

static void build_events_allocs(ss_model *m)
{
    ss_u64map ev = { 0 }, live = { 0 };
    live_maps maps = { 0 };
    uint32_t cap_ev = 0, cap_al = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        ss_call *c = &m->calls[i];
        const ss_api_rec *r = c->rec;
        switch (c->cls) {
        case SS_API_CONTEXT_EVENT: {
            /* a whole context's work recorded, or made to wait: the event is
             * recorded (never "unrecorded"), and what it orders is unknown */
            if (r->ret != 0) break;
            if (!m->context_event_t || r->t_enter < m->context_event_t) m->context_event_t = r->t_enter;
            if (!r->event || r->arg != 1) break;
            int64_t e = ss_u64map_get(&ev, r->event, -1);
            if (e < 0) {
                ss_event ne = { .handle = r->event, .create_call = -1, .first_record = -1, .first_run_record = -1 };
                SS_PUSH(m->events, m->nevents, cap_ev, ne);
                e = m->nevents - 1;
                ss_u64map_put(&ev, r->event, e);
            }
            m->events[e].by_context = 1;
            c->event = (int32_t)e;
            break;
        }
        case SS_API_EVENT_CREATE: {
            if (r->ret != 0 || !r->event) break;
            const ss_api_info *info = c->name_idx < m->napi_names && m->api_info ? m->api_info[c->name_idx] : NULL;
            ss_event e = { .handle = r->event, .create_call = (int32_t)i, .first_record = -1, .first_run_record = -1,
                           .flags = r->arg, .from_ipc = (uint8_t)(info && !strcmp(info->tab_class, "event-open")) };
            SS_PUSH(m->events, m->nevents, cap_ev, e);
            ss_u64map_put(&ev, r->event, m->nevents - 1);
            c->event = (int32_t)m->nevents - 1;
            break;
        }
        case SS_API_LAUNCH: case SS_API_GRAPH_NODE:
            /* a launch that records an event through a launch attribute
             * (SS_API_F_EVENT_AT_END / _AT_START): a record of that event;
             * an event record or wait node: names the event (a record node
             * counts in first_record, which every record made so far does;
             * it records only when its graph runs: graph_first_records) */
            if (!r->event) break;
            if (c->cls == SS_API_LAUNCH && !(r->flags & (SS_API_F_EVENT_AT_END | SS_API_F_EVENT_AT_START))) break;
            if (c->cls == SS_API_GRAPH_NODE && r->arg2 != SS_GRAPH_NODE_EVENT_RECORD &&
                r->arg2 != SS_GRAPH_NODE_EVENT_WAIT)
                break;
            __attribute__((fallthrough));
        case SS_API_EVENT_RECORD: case SS_API_STREAM_WAIT: case SS_API_EVENT_SYNC:
        case SS_API_EVENT_QUERY: case SS_API_EVENT_DESTROY: {
            if (!r->event) break;
            int64_t e = ss_u64map_get(&ev, r->event, -1);
            if (e < 0) {   /* created before the trace started, or creation not seen */
                ss_event ne = { .handle = r->event, .create_call = -1, .first_record = -1, .first_run_record = -1 };
                SS_PUSH(m->events, m->nevents, cap_ev, ne);
                e = m->nevents - 1;
                ss_u64map_put(&ev, r->event, e);
            }
            c->event = (int32_t)e;
            int records = ss_call_records_event(c) ||
                          (c->cls == SS_API_GRAPH_NODE && r->arg2 == SS_GRAPH_NODE_EVENT_RECORD);
            if (records && r->ret == 0 && m->events[e].first_record < 0)
                m->events[e].first_record = (int32_t)i;
            if (c->cls == SS_API_EVENT_DESTROY && r->ret == 0) ss_u64map_del(&ev, r->event);
            break;
        }
        case SS_API_ALLOC: {
            if (r->ret != 0 || !r->ptr) break;
            char base[128];
            ss_api_base_name(ss_model_call_name(m, c), base, sizeof base);
            int mapping = !strcmp(base, "cuMemMap");
            if (mapping && r->bytes && (c->alloc = map_join(m, &maps, r->ptr, r->bytes)) >= 0) break;
            ss_alloc a = { r->ptr, r->bytes, r->t_exit, UINT64_MAX, alloc_kind_of(base), (int32_t)i, -1 };
            /* pinned memory is usable from the moment the call started
             * returning; use t_enter so copies issued right after match */
            a.t_alloc = r->t_enter;
            SS_PUSH(m->allocs, m->nallocs, cap_al, a);
            if (mapping) SS_PUSH(maps.v, maps.n, maps.cap, (int32_t)m->nallocs - 1);
            else ss_u64map_put(&live, r->ptr, m->nallocs - 1);
            c->alloc = (int32_t)m->nallocs - 1;
            break;
        }
        case SS_API_FREE: {
            if (r->ret != 0 || !r->ptr) break;
            if (maps.n && r->bytes) {
                char base[128];
                ss_api_base_name(ss_model_call_name(m, c), base, sizeof base);
                if (!strcmp(base, "cuMemUnmap")) {
                    c->alloc = map_unmap(m, &maps, &cap_al, r->ptr, r->bytes, (int32_t)i);
                    break;
                }
            }
            int64_t a = ss_u64map_get(&live, r->ptr, -1);
            if (a < 0) break;
            m->allocs[a].t_free = r->t_enter;
            m->allocs[a].free_call = (int32_t)i;
            c->alloc = (int32_t)a;
            ss_u64map_del(&live, r->ptr);
            break;
        }
        default: break;
        }
    }
    ss_u64map_free(&ev);
    ss_u64map_free(&live);
    free(maps.v);
    /* sort allocations by address; remap the call indices */
    alloc_sort *tmp = ss_xcalloc(m->nallocs ? m->nallocs : 1, sizeof(alloc_sort));
    for (uint32_t i = 0; i < m->nallocs; i++) { tmp[i].a = m->allocs[i]; tmp[i].old = (int32_t)i; }
    ss_qsort(tmp, m->nallocs, sizeof(alloc_sort), cmp_alloc);
    int32_t *newidx = ss_xcalloc(m->nallocs ? m->nallocs : 1, sizeof(int32_t));
    for (uint32_t i = 0; i < m->nallocs; i++) { m->allocs[i] = tmp[i].a; newidx[tmp[i].old] = (int32_t)i; }
    for (uint32_t i = 0; i < m->ncalls; i++)
        if (m->calls[i].alloc >= 0) m->calls[i].alloc = newidx[m->calls[i].alloc];
    free(tmp);
    free(newidx);
}

uint32_t ss_graph_launch_capture(const ss_model *m, const ss_call *c)
{
    if (!m->call_capture || !ss_call_is_graph_launch(m, c)) return 0;
    for (int32_t o = c->first_op; o >= 0; o = m->ops[o].next_of_call) {
        int32_t n = m->ops[o].node_call;
        if (n >= 0 && m->call_capture[n]) return m->call_capture[n];
    }
    return 0;
}

int32_t ss_graph_ext_event(const ss_model *m, uint32_t k, uint32_t capture, uint8_t cls)
{
    const ss_call *x = &m->calls[m->ext_event_calls[k]];
    return m->call_capture[m->ext_event_calls[k]] == capture && x->cls == cls ? x->event : -1;
}

int ss_class_submits_work(uint8_t cls)
{
    switch (cls) {
    case SS_API_LAUNCH: case SS_API_COPY_ASYNC: case SS_API_MEMSET_ASYNC: case SS_API_HOST_FUNC:
    case SS_API_COPY_SYNC: case SS_API_MEMSET_SYNC:
    case SS_API_STREAM_WAIT_VALUE: case SS_API_STREAM_WRITE_VALUE: case SS_API_STREAM_BATCH_MEMOP:
    case SS_API_MANAGED_MEMORY:
        return 1;
    default:
        return 0;
    }
}

int ss_class_is_unrecorded_stream_work(uint8_t cls)
{
    switch (cls) {
    case SS_API_STREAM_WAIT_VALUE: case SS_API_STREAM_WRITE_VALUE: case SS_API_STREAM_BATCH_MEMOP:
    case SS_API_MANAGED_MEMORY: case SS_API_HOST_FUNC:
        return 1;
    default:
        return 0;
    }
}

int ss_call_is_unrecorded_stream_work(const ss_call *c)
{
    return ss_class_is_unrecorded_stream_work(c->cls) && c->stream >= 0 && !c->captured && c->rec->ret == 0;
}

uint64_t ss_call_memop_value(const ss_call *c)
{
    const ss_api_rec *r = c->rec;
    return r->bytes == 8 ? (r->ptr2 << 32) | r->arg : r->arg;
}

int32_t ss_op_program_stream(const ss_model *m, const ss_gpu_op *op)
{
    if (op->call >= 0 && m->calls[op->call].stream >= 0 && ss_call_is_graph_launch(m, &m->calls[op->call]))
        return m->calls[op->call].stream;
    return op->stream;
}

int ss_call_is_graph_launch(const ss_model *m, const ss_call *c)
{
    /* cudaGraphLaunch and cuGraphLaunch (and their _ptsz twins): the table's class */
    return c->cls == SS_API_LAUNCH && c->name_idx < m->napi_names && m->api_graph_launch &&
           m->api_graph_launch[c->name_idx];
}

typedef struct capture_job { ss_model *m; uint8_t begins[SS_MAX_THREADS]; } capture_job;

/* the classes a capture records into a graph instead of running */
static int capturable(uint8_t cls)
{
    switch (cls) {
    case SS_API_LAUNCH: case SS_API_COPY_ASYNC: case SS_API_MEMSET_ASYNC: case SS_API_HOST_FUNC:
    case SS_API_STREAM_WAIT_VALUE: case SS_API_STREAM_WRITE_VALUE: case SS_API_STREAM_BATCH_MEMOP:
    case SS_API_MANAGED_MEMORY:
    case SS_API_ALLOC: case SS_API_FREE:   /* stream-ordered cudaMallocAsync/cudaFreeAsync */
    case SS_API_EVENT_RECORD: case SS_API_STREAM_WAIT:
        return 1;
    default: return 0;
    }
}

/* The calls the shim flagged as captured, on slices (their flags are in
 * the mapped trace: a cache miss a call); and whether a slice holds a
 * call that begins or ends a capture. */
static void capture_flag_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    capture_job *j = ctx;
    for (size_t i = from; i < to; i++) {
        ss_call *c = &j->m->calls[i];
        if (c->cls == SS_API_CAPTURE) j->begins[sl] = 1;
        else if (capturable(c->cls) && (c->rec->flags & SS_API_F_CAPTURING)) c->captured = 1;
    }
}

/* Stream capture: calls on a stream between cudaStreamBeginCapture and
 * cudaStreamEndCapture build graph nodes and execute nothing.  A capture
 * spreads to other streams through events: cudaStreamWaitEvent on an event
 * recorded in a capturing stream makes the waiting stream join that capture
 * (the fork/join pattern), until the origin stream ends the capture.  The
 * shim's SS_API_F_CAPTURING flag is honoured too, but it is not always set
 * (a CUPTI-only recording cannot ask the runtime), so the state is rebuilt
 * here from the calls themselves. */
static void build_capture(ss_model *m, unsigned threads)
{
    /* Without a call that begins or ends a capture, no stream is ever
     * capturing (below, a stream joins a capture only from a stream that
     * began one), so the flags are all: the walk is left out. */
    unsigned slices = ss_slice_count(m->ncalls, SS_MIN_SLICE, threads);
    capture_job cj = { m, { 0 } };
    ss_parallel_slices(m->ncalls, slices, capture_flag_slice, &cj);
    int any = 0;
    for (unsigned sl = 0; sl < slices; sl++) any |= cj.begins[sl];
    if (!any) return;
    uint32_t *stream_capture = ss_xcalloc(m->nstreams ? m->nstreams : 1, sizeof(uint32_t));
    uint32_t *event_capture = ss_xcalloc(m->nevents ? m->nevents : 1, sizeof(uint32_t));
    uint32_t next_capture = 0, cext = 0;
    m->call_capture = ss_xcalloc(m->ncalls ? m->ncalls : 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < m->ncalls; i++) {
        ss_call *c = &m->calls[i];
        const ss_api_rec *r = c->rec;
        int32_t s = c->stream;
        uint32_t cap = s >= 0 ? stream_capture[s] : 0;
        if (c->cls == SS_API_CAPTURE) {
            if (s < 0) continue;
            const char *cname = ss_model_call_name(m, c);
            if (!strncmp(cname, "cudaStreamBeginCapture", 22) || !strncmp(cname, "cuStreamBeginCapture", 20)) {
                if (r->ret == 0) stream_capture[s] = ++next_capture;
            } else if (cap) {   /* EndCapture ends it for every joined stream, even when it failed */
                for (uint32_t k = 0; k < m->nstreams; k++)
                    if (stream_capture[k] == cap) stream_capture[k] = 0;
                /* and for its events: a wait on one after the capture joins
                 * nothing (CUDA refuses it, or, for an event record node, the
                 * graph's launches record it) */
                for (uint32_t e = 0; e < m->nevents; e++)
                    if (event_capture[e] == cap) event_capture[e] = 0;
            }
            continue;
        }
        switch (c->cls) {
        case SS_API_LAUNCH: case SS_API_COPY_ASYNC: case SS_API_MEMSET_ASYNC: case SS_API_HOST_FUNC:
        case SS_API_STREAM_WAIT_VALUE: case SS_API_STREAM_WRITE_VALUE: case SS_API_STREAM_BATCH_MEMOP:
        case SS_API_MANAGED_MEMORY: case SS_API_ALLOC: case SS_API_FREE:
            if (cap) c->captured = 1;   /* flagged ones: above */
            break;
        case SS_API_EVENT_RECORD:
            if (cap) c->captured = 1;
            if (c->event >= 0 && r->ret == 0) event_capture[c->event] = cap;
            /* cudaEventRecordExternal (CU_EVENT_RECORD_EXTERNAL): an event
             * record node that each launch of the graph runs */
            if (cap && c->event >= 0 && r->ret == 0 && (r->arg & 1u))
                SS_PUSH(m->ext_event_calls, m->next_event_calls, cext, (int32_t)i);
            break;
        case SS_API_STREAM_WAIT:
            if (s >= 0 && c->event >= 0 && r->ret == 0 && event_capture[c->event]) {
                stream_capture[s] = event_capture[c->event];
                cap = stream_capture[s];
            }
            if (cap) c->captured = 1;
            /* cudaEventWaitExternal (CU_EVENT_WAIT_EXTERNAL): an event wait
             * node, on an event recorded outside the graph */
            if (cap && c->event >= 0 && r->ret == 0 && (r->arg & 1u) && !event_capture[c->event])
                SS_PUSH(m->ext_event_calls, m->next_event_calls, cext, (int32_t)i);
            break;
        default: break;
        }
        if (c->captured) m->call_capture[i] = cap;
    }
    free(stream_capture);
    free(event_capture);
}

/* Graph nodes: each op of a graph launch (SS_GPU_F_GRAPH_NODE) gets the call
 * whose parameters its node runs (ss_gpu_op.node_call).  An executable graph
 * runs clones of the nodes that were captured or added (SS_GNODE_CLONED:
 * clone -> original, possibly over several clonings: instantiation,
 * cudaGraphClone, a child graph).  A node runs the parameters of the call
 * that created it, unless a later call set new ones: on the graph's node
 * before the clone was made (SS_GNODE_UPDATED: an executable graph keeps the
 * parameters it was instantiated with), or on the executable graph's node
 * before the op's launch (SS_GNODE_SET_PARAMS).  CUPTI fires the callbacks
 * inside the call that acts on the node, on its thread: a node event's call
 * is the innermost call of that thread running at the event's time. */
static int32_t call_running_at(const ss_model *m, uint32_t tid, uint64_t t)
{
    const ss_thread *th = ss_model_thread(m, tid);
    if (!th || !th->ncalls) return -1;
    uint32_t lo = 0, hi = th->ncalls;   /* the first call entered after t */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->calls[th->calls[mid]].rec->t_enter <= t) lo = mid + 1;
        else hi = mid;
    }
    for (uint32_t k = lo, tries = 0; k-- > 0 && tries < 16; tries++)
        if (m->calls[th->calls[k]].rec->t_exit >= t) return th->calls[k];
    return -1;
}

static int cmp_gnode(const void *a, const void *b)
{
    const ss_graph_node_rec *x = *(const ss_graph_node_rec *const *)a, *y = *(const ss_graph_node_rec *const *)b;
    return x->time < y->time ? -1 : x->time > y->time;
}

/* What resolves a node id to the call whose parameters it runs: per node its
 * CLONED record, and its latest parameter event with the chain of earlier
 * ones and each event's call. */
typedef struct gnode_index {
    ss_u64map clone_rec, last_event;   /* node -> its CLONED record; node -> its latest parameter event */
    int32_t *prev;                     /* per record: the node's previous parameter event */
    int32_t *ev_call;                  /* per record: the call it fired in */
} gnode_index;

static void gnode_index_build(const ss_model *m, gnode_index *gi)
{
    uint32_t n = m->ngnodes;
    memset(gi, 0, sizeof *gi);
    gi->prev = ss_xcalloc(n ? n : 1, sizeof(int32_t));
    gi->ev_call = ss_xcalloc(n ? n : 1, sizeof(int32_t));
    for (uint32_t i = 0; i < n; i++) {
        const ss_graph_node_rec *r = m->gnodes[i];
        gi->prev[i] = gi->ev_call[i] = -1;
        if (!r->node_id) continue;
        if (r->h.flags == SS_GNODE_CLONED) {
            if (r->orig_node_id && r->orig_node_id != r->node_id) ss_u64map_put(&gi->clone_rec, r->node_id, i);
        } else if (r->h.flags == SS_GNODE_CREATED || r->h.flags == SS_GNODE_UPDATED ||
                   r->h.flags == SS_GNODE_SET_PARAMS) {
            gi->ev_call[i] = call_running_at(m, r->tid, r->time);
            gi->prev[i] = (int32_t)ss_u64map_get(&gi->last_event, r->node_id, -1);
            ss_u64map_put(&gi->last_event, r->node_id, i);
        }
    }
}

static void gnode_index_free(gnode_index *gi)
{
    ss_u64map_free(&gi->clone_rec);
    ss_u64map_free(&gi->last_event);
    free(gi->prev);
    free(gi->ev_call);
}

/* The call whose parameters node `id` of an executable graph runs in a
 * launch at time `launch`, or -1. */
static int32_t gnode_call(const ss_model *m, const gnode_index *gi, uint64_t id, uint64_t launch)
{
    uint64_t bound = launch;   /* graph-level events count up to the cloning */
    for (int depth = 0; id && depth < 64; depth++) {
        int64_t e = ss_u64map_get(&gi->last_event, id, -1);
        while (e >= 0) {
            const ss_graph_node_rec *r = m->gnodes[e];
            if (r->time <= (r->h.flags == SS_GNODE_SET_PARAMS ? launch : bound)) break;
            e = gi->prev[e];
        }
        /* Instantiation reports each clone as created too, inside no call
         * the trace holds: that creation names no parameters of its own, the
         * clone's origin does. */
        if (e >= 0 && (gi->ev_call[e] >= 0 || m->gnodes[e]->h.flags != SS_GNODE_CREATED)) return gi->ev_call[e];
        int64_t c = ss_u64map_get(&gi->clone_rec, id, -1);
        if (c < 0) break;
        if (m->gnodes[c]->time < bound) bound = m->gnodes[c]->time;
        id = m->gnodes[c]->orig_node_id;
    }
    return -1;
}

/* The call that created node `id` (through its clones to the original), or
 * -1: where a node sits in its graph is said there, not by the calls that
 * set its parameters later. */
static int32_t gnode_creating_call(const ss_model *m, const gnode_index *gi, uint64_t id)
{
    for (int depth = 0; id && depth < 64; depth++) {
        for (int64_t e = ss_u64map_get(&gi->last_event, id, -1); e >= 0; e = gi->prev[e])
            if (m->gnodes[e]->h.flags == SS_GNODE_CREATED && gi->ev_call[e] >= 0) return gi->ev_call[e];
        int64_t c = ss_u64map_get(&gi->clone_rec, id, -1);
        if (c < 0) break;
        id = m->gnodes[c]->orig_node_id;
    }
    return -1;
}

static int cmp_launch_event(const void *a, const void *b)
{
    const ss_launch_event *x = a, *y = b;
    return (x->call > y->call) - (x->call < y->call);
}

/* A graph-node call that makes an event record or wait node: its kind
 * (SS_GRAPH_NODE_EVENT_*), else 0. */
static int event_node_kind(const ss_call *c)
{
    if (c->cls != SS_API_GRAPH_NODE || c->rec->ret != 0 || c->event < 0) return 0;
    return c->rec->arg2 == SS_GRAPH_NODE_EVENT_RECORD || c->rec->arg2 == SS_GRAPH_NODE_EVENT_WAIT ? c->rec->arg2 : 0;
}

/* The event nodes each graph launch runs (ss_model.launch_events): the
 * executable graph's clones (SS_GNODE_CLONED records of its graph id) whose
 * node an event-node call made or last set. */
static void build_launch_events(ss_model *m, const gnode_index *gi)
{
    typedef struct { uint32_t graph; uint64_t node; } exec_node;
    exec_node *en = NULL;
    uint32_t nen = 0, capen = 0;
    for (uint32_t i = 0; i < m->ngnodes; i++) {
        const ss_graph_node_rec *r = m->gnodes[i];
        if (r->h.flags != SS_GNODE_CLONED || !r->graph_id || !r->node_id) continue;
        int32_t c = gnode_call(m, gi, r->node_id, UINT64_MAX);
        if (c < 0 || !event_node_kind(&m->calls[c])) continue;
        exec_node x = { r->graph_id, r->node_id };
        SS_PUSH(en, nen, capen, x);
    }
    if (!nen) return;
    uint32_t cap = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *l = &m->calls[i];
        if (!ss_call_is_graph_launch(m, l) || l->rec->ret != 0) continue;
        uint32_t g = launch_graph_id(m, l);
        for (uint32_t k = 0; g && k < nen; k++) {
            if (en[k].graph != g) continue;
            int32_t c = gnode_call(m, gi, en[k].node, l->rec->t_enter);
            int kind = c >= 0 ? event_node_kind(&m->calls[c]) : 0;
            if (!kind) continue;
            /* no dependency: said by the call that made the node (arg), not
             * by a later one that set its event */
            int32_t made = gnode_creating_call(m, gi, en[k].node);
            int first = kind == SS_GRAPH_NODE_EVENT_RECORD && made >= 0 && event_node_kind(&m->calls[made]) &&
                        m->calls[made].rec->arg == 0;
            ss_launch_event x = { (int32_t)i, m->calls[c].event, (uint8_t)kind, (uint8_t)first, 0 };
            SS_PUSH(m->launch_events, m->nlaunch_events, cap, x);
        }
    }
    free(en);
    ss_qsort(m->launch_events, m->nlaunch_events, sizeof *m->launch_events, cmp_launch_event);
}

const ss_launch_event *ss_graph_launch_events(const ss_model *m, int32_t call, uint32_t *n)
{
    *n = 0;
    uint32_t lo = 0, hi = m->nlaunch_events;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->launch_events[mid].call < call) lo = mid + 1; else hi = mid;
    }
    uint32_t e = lo;
    while (e < m->nlaunch_events && m->launch_events[e].call == call) e++;
    *n = e - lo;
    return *n ? &m->launch_events[lo] : NULL;
}

static void build_graph_nodes(ss_model *m)
{
    uint32_t n = m->ngnodes;
    if (!n) return;
    ss_qsort(m->gnodes, n, sizeof(*m->gnodes), cmp_gnode);
    gnode_index gi;
    gnode_index_build(m, &gi);
    for (uint32_t i = 0; i < m->nops; i++) {
        ss_gpu_op *op = &m->ops[i];
        uint64_t id = ss_op_graph_node(op);
        if (!id) continue;
        uint64_t launch = op->call >= 0 ? m->calls[op->call].rec->t_enter : op->start;
        op->node_call = gnode_call(m, &gi, id, launch);
    }
    build_launch_events(m, &gi);
    gnode_index_free(&gi);
}

/* Each call's thread id, read from its record (in the mapped trace: a cache
 * miss a call, so once, in slices on threads). */
typedef struct tid_job { const ss_model *m; uint32_t *tid; } tid_job;
static void call_tid_slice(void *ctx, uint32_t s, size_t from, size_t to)
{
    (void)s;
    tid_job *j = ctx;
    for (size_t i = from; i < to; i++) j->tid[i] = j->m->calls[i].rec->tid;
}

/* The index in m->threads (sorted by tid) of `tid`, or -1; `last` caches the
 * previous answer (calls come in runs of one thread). */
static int32_t thread_index(const ss_model *m, uint32_t tid, int32_t *last)
{
    if (*last >= 0 && m->threads[*last].tid == tid) return *last;
    const ss_thread *t = ss_model_thread(m, tid);
    *last = t ? (int32_t)(t - m->threads) : -1;
    return *last;
}

/* Each call's thread index and each thread's calls, on slices: a slice
 * counts its calls per thread and sums their blocked time, then writes its
 * calls where the counts before it end (the order one loop gives). */
typedef struct threads_job {
    ss_model *m;
    uint32_t *tid;             /* per call: its thread id, then its index in m->threads */
    uint32_t *count;           /* [slice * nthreads + thread] */
    uint64_t *blocked;         /* [slice * nthreads + thread]: time inside its blocking calls */
} threads_job;

static void thread_count_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    threads_job *j = ctx;
    const ss_model *m = j->m;
    uint32_t *count = j->count + (size_t)sl * m->nthreads;
    uint64_t *blocked = j->blocked + (size_t)sl * m->nthreads;
    int32_t last = -1;
    for (size_t i = from; i < to; i++) {
        uint32_t t = (uint32_t)thread_index(m, j->tid[i], &last);   /* every call's thread was listed */
        j->tid[i] = t;
        count[t]++;
        const ss_call *c = &m->calls[i];
        switch (c->cls) {
        case SS_API_DEVICE_SYNC: case SS_API_STREAM_SYNC: case SS_API_EVENT_SYNC:
        case SS_API_COPY_SYNC: case SS_API_MEMSET_SYNC:
            if (c->rec->t_exit > c->rec->t_enter) blocked[t] += c->rec->t_exit - c->rec->t_enter;
            break;
        default: break;
        }
    }
}

static void thread_place_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    threads_job *j = ctx;
    uint32_t *at = j->count + (size_t)sl * j->m->nthreads;
    for (size_t i = from; i < to; i++) {
        ss_thread *t = &j->m->threads[j->tid[i]];
        t->calls[at[j->tid[i]]++] = (int32_t)i;
    }
}

static void build_threads(ss_model *m, loader *L)
{
    uint32_t *tid = ss_xcalloc(m->ncalls ? m->ncalls : 1, sizeof(uint32_t));
    tid_job tj = { m, tid };
    ss_parallel_slices(m->ncalls, ss_slice_count(m->ncalls, SS_MIN_SLICE, L->threads), call_tid_slice, &tj);
    ss_u64map idx = { 0 };
    uint32_t cap = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        if (i && tid[i] == tid[i - 1]) continue;
        if (ss_u64map_get(&idx, tid[i], -1) < 0) {
            ss_thread t = { .tid = tid[i] };
            SS_PUSH(m->threads, m->nthreads, cap, t);
            ss_u64map_put(&idx, tid[i], 0);
        }
    }
    /* threads that made no CUDA call but passed host synchronization on
     * (a chain of locks through a thread that never touches CUDA) */
    for (uint32_t i = 0; i < m->nhsyncs; i++) {
        uint32_t t_id = m->hsyncs[i]->tid;
        if (ss_u64map_get(&idx, t_id, -1) < 0) {
            ss_thread t = { .tid = t_id };
            SS_PUSH(m->threads, m->nthreads, cap, t);
            ss_u64map_put(&idx, t_id, 0);
        }
    }
    ss_u64map_free(&idx);
    /* sort threads by tid, then fill call lists */
    for (uint32_t i = 1; i < m->nthreads; i++) {     /* few threads: insertion sort */
        ss_thread t = m->threads[i];
        uint32_t j = i;
        while (j > 0 && m->threads[j - 1].tid > t.tid) { m->threads[j] = m->threads[j - 1]; j--; }
        m->threads[j] = t;
    }
    /* from here, tid[i] is the call's index in m->threads; each thread's
     * calls are counted per slice, placed, and its blocked time summed */
    unsigned slices = ss_slice_count(m->ncalls, SS_MIN_SLICE, L->threads);
    threads_job per_thread = { m, tid, ss_xcalloc((size_t)slices * m->nthreads + 1, sizeof(uint32_t)),
                               ss_xcalloc((size_t)slices * m->nthreads + 1, sizeof(uint64_t)) };
    ss_parallel_slices(m->ncalls, slices, thread_count_slice, &per_thread);
    for (uint32_t t = 0; t < m->nthreads; t++) {
        uint32_t at = 0;
        for (unsigned sl = 0; sl < slices; sl++) {
            size_t k = (size_t)sl * m->nthreads + t;
            uint32_t c = per_thread.count[k];
            per_thread.count[k] = at;   /* from here: where the slice's next call of thread t goes */
            at += c;
            m->threads[t].blocked_ns += per_thread.blocked[k];
        }
        m->threads[t].ncalls = at;
        m->threads[t].calls = ss_xcalloc(at ? at : 1, sizeof(int32_t));
    }
    ss_parallel_slices(m->ncalls, slices, thread_place_slice, &per_thread);
    free(per_thread.count);
    free(per_thread.blocked);
    free(tid);
    for (uint32_t i = 0; i < L->nthr; i++) {
        const ss_thread_rec *r = L->thr[i];
        ss_thread *t = (ss_thread *)ss_model_thread(m, r->tid);
        if (t && sizeof(*r) + (uint64_t)r->len <= r->h.size) {
            t->name = (const char *)ss_rec_tail(&r->h, sizeof(*r));
            t->name_len = r->len;
        }
        if (t) t->pthread = r->pthread_self;
    }
}

/* ---- blocking copies (model.h, enum ss_blocking_copy) ------------------ */

/* The two calls come from one caller: their native stacks are the same past
 * the innermost frame (the return addresses in the function that made both
 * calls), else their Python stacks are the same (same line). */
static int same_caller(const ss_model *m, const ss_call *a, const ss_call *b)
{
    const ss_stack_rec *sa = ss_model_stack(m, a->rec->stack_id), *sb = ss_model_stack(m, b->rec->stack_id);
    if (sa && sb && (sa->depth >= 2 || sb->depth >= 2)) {
        if (sa->depth != sb->depth ||
            (uint64_t)sizeof(*sa) + 8ull * sa->depth > sa->h.size ||
            (uint64_t)sizeof(*sb) + 8ull * sb->depth > sb->h.size)
            return 0;
        const uint64_t *fa = ss_rec_tail(&sa->h, sizeof(*sa)), *fb = ss_rec_tail(&sb->h, sizeof(*sb));
        return !memcmp(fa + 1, fb + 1, 8ull * (sa->depth - 1));
    }
    /* no stacks: adjacency alone does not say one caller made both */
    return a->rec->pystack_id && a->rec->pystack_id == b->rec->pystack_id;
}

static int cmp_pause(const void *a, const void *b)
{
    const ss_shim_pause_rec *x = *(const ss_shim_pause_rec *const *)a, *y = *(const ss_shim_pause_rec *const *)b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* How long the shim itself held thread `tid` inside [a, b] (trace format
 * 1.7, SS_REC_SHIM_PAUSE): host time between two calls that was not the
 * program's. */
static uint64_t shim_time_between(const ss_model *m, uint32_t tid, uint64_t a, uint64_t b)
{
    uint32_t lo = 0, hi = m->npauses;
    while (lo < hi) {   /* the first pause of tid ending after a */
        uint32_t mid = lo + (hi - lo) / 2;
        const ss_shim_pause_rec *p = m->pauses[mid];
        if (p->tid < tid || (p->tid == tid && p->t1 <= a)) lo = mid + 1; else hi = mid;
    }
    uint64_t held = 0, until = a;
    for (uint32_t i = lo; i < m->npauses && m->pauses[i]->tid == tid && m->pauses[i]->t0 < b; i++) {
        uint64_t s = m->pauses[i]->t0 > until ? m->pauses[i]->t0 : until;
        uint64_t e = m->pauses[i]->t1 < b ? m->pauses[i]->t1 : b;
        if (e > s) { held += e - s; until = e; }
    }
    return held;
}

static void mark_blocking_copies(ss_model *m)
{
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const ss_thread *th = &m->threads[t];
        for (uint32_t k = 0; k + 1 < th->ncalls; k++) {
            int32_t ci = th->calls[k], si = th->calls[k + 1];
            ss_call *c = &m->calls[ci], *s = &m->calls[si];
            if (c->cls != SS_API_COPY_ASYNC || s->cls != SS_API_STREAM_SYNC) continue;
            if (c->rec->ret != 0 || c->captured || c->stream < 0 || s->stream != c->stream) continue;
            if (s->rec->t_enter < c->rec->t_exit) continue;
            /* the program's time between them: the shim's own work after
             * the copy (a first stack unwound into a library) is not it */
            uint64_t gap = s->rec->t_enter - c->rec->t_exit;
            if (gap > SS_BLOCKING_COPY_GAP_NS)
                gap -= shim_time_between(m, c->rec->tid, c->rec->t_exit, s->rec->t_enter);
            if (gap > SS_BLOCKING_COPY_GAP_NS) continue;
            if (!same_caller(m, c, s)) continue;
            /* nothing else on the stream in between, from any thread: calls
             * are sorted by entry, and the two are at most the gap apart */
            int other = 0;
            for (int32_t j = ci + 1; j < si && !other; j++)
                if (m->calls[j].stream == c->stream && m->calls[j].rec->tid != c->rec->tid) other = 1;
            if (other) continue;
            c->blocking_copy = SS_BLOCKING_COPY_COPY;
            s->blocking_copy = SS_BLOCKING_COPY_SYNC;
            k++;
        }
    }
}

int32_t ss_blocking_copy_partner(const ss_model *m, int32_t call)
{
    if (call < 0 || (uint32_t)call >= m->ncalls || !m->calls[call].blocking_copy) return -1;
    const ss_thread *th = ss_model_thread(m, m->calls[call].rec->tid);
    if (!th) return -1;
    uint32_t lo = 0, hi = th->ncalls;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (th->calls[mid] < call) lo = mid + 1; else hi = mid;
    }
    if (m->calls[call].blocking_copy == SS_BLOCKING_COPY_COPY)
        return lo + 1 < th->ncalls ? th->calls[lo + 1] : -1;
    return lo > 0 ? th->calls[lo - 1] : -1;
}

static void build_timelines(ss_model *m, unsigned threads)
{
    /* devices seen in ops, and each op's among them: an op's device is in its
     * record, somewhere in the mapped trace, read once here and not once per
     * device (on 10 M records the reads were most of the timelines' time) */
    uint32_t *op_dev = ss_xcalloc(m->nops ? m->nops : 1, sizeof(uint32_t));
    uint32_t *dev_nops = NULL;
    for (uint32_t i = 0; i < m->nops; i++) {
        int32_t d = ss_op_device(&m->ops[i]);
        uint32_t k = i && m->devices[op_dev[i - 1]].device == d ? op_dev[i - 1] : 0;
        while (k < m->ndevices && m->devices[k].device != d) k++;
        if (k == m->ndevices) {
            m->devices = ss_xrealloc(m->devices, (m->ndevices + 1) * sizeof(ss_device_summary));
            dev_nops = ss_xrealloc(dev_nops, (m->ndevices + 1) * sizeof(uint32_t));
            memset(&m->devices[k], 0, sizeof(ss_device_summary));
            m->devices[k].device = d;
            dev_nops[k] = 0;
            m->ndevices++;
        }
        op_dev[i] = k;
        dev_nops[k]++;
    }
    m->timelines = ss_xcalloc(m->ndevices, sizeof(struct ss_timeline));
    m->ntimelines = m->ndevices;
    int32_t *stream_kernels = ss_xcalloc(m->nstreams ? m->nstreams : 1, sizeof(int32_t));
    uint64_t *stream_end = ss_xcalloc(m->nstreams ? m->nstreams : 1, sizeof(uint64_t));
    for (uint32_t d = 0; d < m->ndevices; d++) {
        ss_device_summary *ds = &m->devices[d];
        struct ss_timeline *tl = &m->timelines[d];
        tl->device = ds->device;
        uint32_t n = dev_nops[d];
        /* The device's ops in the model's order, by start (ties by
         * index).  Submits and ends are sorted as (time, k) pairs by
         * ss_radix_sort16, stable like the merge sort through comparators
         * it replaces (a third of the load on 10 M records); the sweep's
         * points are the starts, in order already, merged with the sorted
         * ends, ends first at one time. */
        uint32_t *opi = ss_xcalloc(n ? n : 1, sizeof(uint32_t));
        time_idx *sp = ss_xcalloc(n ? n : 1, sizeof(time_idx));   /* (submit, k), then (end, k) */
        sweep_pt *pts = ss_xcalloc(2 * (size_t)n + 1, sizeof(sweep_pt));
        tl->submit = ss_xcalloc(n, 8); tl->maxend = ss_xcalloc(n, 8); tl->starts = ss_xcalloc(n, 8);
        tl->n = n;
        uint32_t k = 0;
        for (uint32_t i = 0; i < m->nops; i++) {
            if (op_dev[i] != d) continue;
            const ss_gpu_op *op = &m->ops[i];
            opi[k] = i;
            sp[k] = (time_idx){ op->submit < op->start ? op->submit : op->start, k };
            tl->starts[k] = op->start;
            k++;
        }
        int starts_sorted = 1;
        for (uint32_t i = 1; i < n && starts_sorted; i++) starts_sorted = tl->starts[i - 1] <= tl->starts[i];
        if (!starts_sorted) ss_qsort(tl->starts, n, 8, cmp_u64);
        ss_radix_sort16_threads(sp, n, threads);
        uint64_t mx = 0;
        for (uint32_t i = 0; i < n; i++) {
            const ss_gpu_op *op = &m->ops[opi[sp[i].i]];
            uint64_t end = op->end > op->start ? op->end : op->start;
            tl->submit[i] = sp[i].t;
            if (end > mx) mx = end;
            tl->maxend[i] = mx;
        }
        for (uint32_t i = 0; i < n; i++) {
            const ss_gpu_op *op = &m->ops[opi[i]];
            sp[i] = (time_idx){ op->end > op->start ? op->end : op->start, i };
        }
        ss_radix_sort16_threads(sp, n, threads);
        size_t np = 0;
        for (uint32_t a = 0, b = 0; a < n || b < n;) {
            /* at one time, ends (delta -1) before starts, as cmp_sweep orders them */
            if (b < n && (a >= n || sp[b].t <= m->ops[opi[a]].start)) {
                const ss_gpu_op *op = &m->ops[opi[sp[b].i]];
                pts[np++] = (sweep_pt){ sp[b].t, op->stream, -1, op->kind };
                b++;
            } else {
                const ss_gpu_op *op = &m->ops[opi[a]];
                pts[np++] = (sweep_pt){ op->start, op->stream, +1, op->kind };
                a++;
            }
        }
        if (!starts_sorted) ss_qsort(pts, 2 * (size_t)n, sizeof(sweep_pt), cmp_sweep);
        free(opi);
        int32_t active = 0, copies = 0, kernels = 0, kstreams = 0;
        for (size_t i = 0; i < 2 * (size_t)n; i++) {
            if (i > 0) {
                uint64_t dt = pts[i].t - pts[i - 1].t;
                if (active > 0) ds->busy_ns += dt;
                if (copies > 0) ds->copy_ns += dt;
                if (copies > 0 && kernels > 0) ds->copy_overlap_ns += dt;
                if (kstreams >= 2) ds->multi_stream_kernel_ns += dt;
            }
            int8_t dl = pts[i].delta;
            active += dl;
            if (pts[i].kind == SS_OP_KERNEL) {
                kernels += dl;
                int32_t s = pts[i].stream;
                if (dl > 0 && stream_kernels[s]++ == 0) kstreams++;
                if (dl < 0 && --stream_kernels[s] == 0) kstreams--;
            } else if (pts[i].kind == SS_OP_MEMCPY) {
                copies += dl;
            }
        }
        free(sp);
        free(pts);
    }
    free(op_dev);
    free(dev_nops);
    /* per-stream busy time: union of its ops (ops are sorted by start) */
    for (uint32_t i = 0; i < m->nops; i++) {
        const ss_gpu_op *op = &m->ops[i];
        ss_stream *s = &m->streams[op->stream];
        uint64_t from = op->start > stream_end[op->stream] ? op->start : stream_end[op->stream];
        if (op->end > from) { s->busy_ns += op->end - from; stream_end[op->stream] = op->end; }
        s->nops++;
    }
    free(stream_kernels);
    free(stream_end);
}

/* Why the trace may lack its last GPU records, or NULL.  The shim writes an
 * EXIT note at a clean end, after the last CUPTI flush; a fatal-signal
 * handler flushes the host buffers only; SIGKILL leaves neither note.  A
 * trace made without CUPTI (or without its flag: synthetic traces) has no
 * GPU records to lack, only a cut file. */
static const char *incomplete_reason(ss_model *m)
{
    int exit_note = 0;
    for (uint32_t i = 0; i < m->nnotes; i++) {
        if (m->notes[i]->code == SS_NOTE_SIGNAL) {
            m->incomplete_sig = m->notes[i]->value;
            return "the program died of a signal";
        }
        if (m->notes[i]->code == SS_NOTE_TRACE_INCOMPLETE) return "recording stopped early (write error)";
        if (m->notes[i]->code == SS_NOTE_EXIT) exit_note = 1;
    }
    if (m->truncated) return "truncated";
    if ((m->hdr.flags & SS_FILE_F_CUPTI) && !exit_note)
        return "no end-of-trace record (the program was killed, or is still running)";
    return NULL;
}

/* SYNCSIGHT_FLUSH_MS as the shim saw it (META env.*), else its default. */
static uint64_t flush_interval_ns(const ss_model *m)
{
    uint64_t ms = 200;
    static const char key[] = "env.SYNCSIGHT_FLUSH_MS";
    for (uint32_t i = 0; i < m->nmetas; i++) {
        const ss_meta_rec *r = m->metas[i];
        if ((uint64_t)sizeof(*r) + r->key_len + 1 + r->value_len > r->h.size) continue;
        const char *k = ss_rec_tail(&r->h, sizeof(*r));
        if (r->key_len != sizeof key - 1 || memcmp(k, key, sizeof key - 1) != 0) continue;
        char num[16];
        size_t n = r->value_len < sizeof num - 1 ? r->value_len : sizeof num - 1;
        memcpy(num, k + r->key_len + 1, n);
        num[n] = 0;
        long v = strtol(num, NULL, 10);
        ms = v < 10 ? 10 : v > 60000 ? 60000 : (uint64_t)v;
    }
    return ms * 1000000u;
}

/* Until when the host calls of every thread are known.  Each thread fills
 * its own buffer, which the shim's writer flushes as one block per thread
 * every SYNCSIGHT_FLUSH_MS: a file cut inside one round of flushes lacks the
 * later blocks of that round, so a thread's calls are known up to its last
 * recorded call, and every thread's up to the round before (at least one
 * flush period, with as much again of slack for the flush itself, before the
 * last recorded call of any thread).  A fatal-signal handler flushes every
 * buffer: then all of them are known to the end. */
static uint64_t host_complete_until(const ss_model *m, const loader *L)
{
    if (!L->napi) return 0;
    ss_u64map last;
    memset(&last, 0, sizeof last);
    uint64_t latest = 0;
    for (uint32_t i = 0; i < L->napi; i++) {
        const ss_api_rec *r = L->api[i];
        int64_t *t = ss_u64map_find(&last, r->tid);
        if (!t) ss_u64map_put(&last, r->tid, (int64_t)r->t_exit);
        else if ((uint64_t)*t < r->t_exit) *t = (int64_t)r->t_exit;
        if (r->t_exit > latest) latest = r->t_exit;
    }
    uint64_t until = latest;
    if (!m->incomplete_sig) {
        for (uint32_t i = 0; i < L->napi; i++) {
            int64_t *t = ss_u64map_find(&last, L->api[i]->tid);
            if (t && (uint64_t)*t < until) until = (uint64_t)*t;
        }
        uint64_t window = 2 * flush_interval_ns(m);
        if (latest > window && until < latest - window) until = latest - window;
    }
    ss_u64map_free(&last);
    return until;
}

/* Leave out what an incomplete trace cannot judge (see ss_model.span_end):
 * the GPU records end at the last recorded op end, the host records where
 * host_complete_until() says; a call that ended after the earlier of the two may
 * have waited for GPU work whose records never came (it would look like a
 * sync with nothing in flight), so calls ending and ops starting after it,
 * and the NVTX, sync, event and host-sync records of that time, are dropped
 * before anything is derived. */
static void cut_to_complete_span(ss_model *m, loader *L)
{
    m->recorded_end = m->t_last;
    m->incomplete_why = incomplete_reason(m);
    if (!m->incomplete_why) return;
    for (uint32_t i = 0; i < L->ngpu; i++)
        if (L->gpu[i]->end > m->gpu_records_end) m->gpu_records_end = L->gpu[i]->end;
    m->host_records_end = host_complete_until(m, L);
    int cupti_off = 0;   /* another tool held CUPTI, or it failed: no GPU records were ever coming */
    for (uint32_t i = 0; i < m->nnotes; i++)
        cupti_off |= m->notes[i]->code == SS_NOTE_CUPTI_TAKEN || m->notes[i]->code == SS_NOTE_CUPTI_UNAVAILABLE;
    uint64_t end = m->host_records_end ? m->host_records_end : m->t_last;
    if ((m->hdr.flags & SS_FILE_F_CUPTI) && !cupti_off) {
        /* no GPU record at all: none of the calls can be judged */
        uint64_t gpu_end = L->ngpu ? m->gpu_records_end : m->t_first;
        if (gpu_end < end) end = gpu_end;
    }
    m->span_end = end;
    uint32_t k = 0;
    for (uint32_t i = 0; i < L->napi; i++)
        if (L->api[i]->t_exit <= end) L->api[k++] = L->api[i];
    m->calls_cut = L->napi - k;
    L->napi = k;
    k = 0;
    for (uint32_t i = 0; i < L->ngpu; i++)
        if (L->gpu[i]->start <= end) L->gpu[k++] = L->gpu[i];
    m->ops_cut = L->ngpu - k;
    L->ngpu = k;
    k = 0;
    for (uint32_t i = 0; i < L->nnvtx; i++)
        if (L->nvtx[i]->start <= end) L->nvtx[k++] = L->nvtx[i];
    L->nnvtx = k;
    k = 0;
    for (uint32_t i = 0; i < m->nsyncs; i++)
        if (m->syncs[i]->g.start <= end) m->syncs[k++] = m->syncs[i];
    m->nsyncs = k;
    k = 0;
    for (uint32_t i = 0; i < m->ncuda_events; i++)
        if (m->cuda_events[i]->g.start <= end) m->cuda_events[k++] = m->cuda_events[i];
    m->ncuda_events = k;
    k = 0;
    for (uint32_t i = 0; i < m->nhsyncs; i++)
        if (m->hsyncs[i]->time <= end) m->hsyncs[k++] = m->hsyncs[i];
    m->nhsyncs = k;
    k = 0;
    for (uint32_t i = 0; i < m->nxaccess; i++)
        if (m->xaccess[i]->t_enter <= end) m->xaccess[k++] = m->xaccess[i];
    m->nxaccess = k;
    m->span_cut = m->calls_cut || m->ops_cut;
    if (end < m->t_last) m->t_last = end > m->t_first ? end : m->t_first;
}

/* The calls [from, to) of the sorted records. */
static void make_call_slice(void *ctx, uint32_t s, size_t from, size_t to)
{
    (void)s;
    loader *L = ctx;
    for (size_t i = from; i < to; i++) {
        ss_call *c = &L->m->calls[i];
        const ss_api_rec *r = L->api[i];
        c->rec = r;
        int64_t ni = ss_u64map_get(&L->cbid_name, r->cbid, -1);
        c->name_idx = (uint32_t)ni;
        c->cls = L->m->api_class[ni];
        c->is_async = L->name_async[ni];
        c->stream = c->first_op = c->event = c->alloc = -1;
    }
}

typedef struct unnamed_job {
    loader *L;
    uint32_t *v[SS_MAX_THREADS], n[SS_MAX_THREADS];   /* per slice: its unnamed callback ids, first seen first */
} unnamed_job;

/* The callback ids of a slice of the records (file order) that have no
 * name record, each once, in the order they first appear: each record's id
 * is in the mapped trace (a cache miss a call), so they are read on slices,
 * the names map only read. */
static void unnamed_slice(void *ctx, uint32_t s, size_t from, size_t to)
{
    unnamed_job *j = ctx;
    const loader *L = j->L;
    ss_u64map seen = { 0 };
    uint32_t cap = 0;
    for (size_t i = from; i < to; i++) {
        uint32_t cbid = L->api[i]->cbid;
        if (ss_u64map_get(&L->cbid_name, cbid, -1) >= 0 || ss_u64map_get(&seen, cbid, -1) >= 0) continue;
        ss_u64map_put(&seen, cbid, 1);
        SS_PUSH(j->v[s], j->n[s], cap, cbid);
    }
    ss_u64map_free(&seen);
}

/* The calls, sorted by time: their records' pointers are sorted (8 bytes
 * moved, not a 32-byte call) and the calls made in that order, after the
 * names of unnamed callbacks were added in file order (their indices do not
 * depend on the sort). */
static void make_calls(ss_model *m, loader *L)
{
    /* a name for each unnamed callback id, in the order the ids first
     * appear in the file: the slices' lists in slice order */
    unnamed_job uj = { L, { 0 }, { 0 } };
    unsigned slices = ss_slice_count(L->napi, SS_MIN_SLICE, L->threads);
    ss_parallel_slices(L->napi, slices, unnamed_slice, &uj);
    for (unsigned sl = 0; sl < slices; sl++) {
        for (uint32_t k = 0; k < uj.n[sl]; k++) {
            uint32_t cbid = uj.v[sl][k];
            if (ss_u64map_get(&L->cbid_name, cbid, -1) >= 0) continue;
            char name[32];
            snprintf(name, sizeof name, "cbid_%u", cbid);
            ss_u64map_put(&L->cbid_name, cbid, add_api_name(m, L, name, (uint32_t)strlen(name)));
        }
        free(uj.v[sl]);
    }
    if (L->napi > 1) {
        const ss_api_rec **api = sorted_by_time(L->api, L->napi, sizeof *L->api, api_time, cmp_api_ptr, L->threads);
        memcpy(L->api, api, L->napi * sizeof *L->api);
        free(api);
    }
    m->ncalls = L->napi;
    m->calls = ss_xcalloc(L->napi, sizeof(ss_call));
    ss_parallel_slices(L->napi, ss_slice_count(L->napi, SS_MIN_SLICE, L->threads), make_call_slice, L);
}

/* The ops [from, to) of the sorted records. */
static void make_op_slice(void *ctx, uint32_t s, size_t from, size_t to)
{
    (void)s;
    loader *L = ctx;
    for (size_t i = from; i < to; i++) {
        ss_gpu_op *op = &L->m->ops[i];
        const ss_gpu_common *g = L->gpu[i];
        op->rec = g;
        op->start = g->start;
        op->end = g->end < g->start ? g->start : g->end;
        op->submit = op->start;
        op->kind = g->h.type == SS_REC_KERNEL ? SS_OP_KERNEL : g->h.type == SS_REC_MEMCPY ? SS_OP_MEMCPY : SS_OP_MEMSET;
        op->call = op->next_of_call = op->node_call = -1;
    }
}

/* The GPU ops, sorted by start. */
static void make_ops(ss_model *m, loader *L)
{
    if (L->ngpu > 1) {
        const ss_gpu_common **gpu = sorted_by_time(L->gpu, L->ngpu, sizeof *L->gpu, gpu_time, cmp_gpu_ptr,
                                                   L->threads);
        memcpy(L->gpu, gpu, L->ngpu * sizeof *L->gpu);
        free(gpu);
    }
    m->nops = L->ngpu;
    m->ops = ss_xcalloc(L->ngpu, sizeof(ss_gpu_op));
    ss_parallel_slices(L->ngpu, ss_slice_count(L->ngpu, SS_MIN_SLICE, L->threads), make_op_slice, L);
    m->has_gpu = m->nops > 0;
}

/* An event recorded only inside a graph -- by a record node made with
 * cudaGraphAddEventRecordNode (or set to it later), or by a
 * cudaEventRecordWithFlags(..., cudaEventRecordExternal) captured into it --
 * is recorded when a launch of the graph reaches the node, not when the node
 * is made: a wait before the graph's first launch waits on an event never
 * recorded; a record captured without cudaEventRecordExternal records
 * nothing outside its capture.  first_run_record is that: the first
 * successful record call that is neither captured nor a node, or the first
 * successful launch of a graph that records the event, whichever came
 * first.  (first_record, taken while the calls were read, counts every
 * record: a wait captured into the same graph joins the captured record.) */
static void note_first_run_record(ss_model *m, int32_t e, uint32_t call)
{
    if (e >= 0 && (uint32_t)e < m->nevents && m->events[e].first_run_record < 0)
        m->events[e].first_run_record = (int32_t)call;
}

static void graph_first_records(ss_model *m)
{
    /* no graph records an event, and no record was captured: as read */
    int graphs = m->nlaunch_events || m->next_event_calls || m->call_capture;
    for (uint32_t e = 0; e < m->nevents; e++) m->events[e].first_run_record = graphs ? -1 : m->events[e].first_record;
    if (!graphs) return;
    /* launches whose graph the trace cannot name (no graph id, no op of a
     * captured node): they may be the ones that record */
    int32_t *unknown = NULL;
    uint32_t nunknown = 0, cunknown = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (c->rec->ret != 0 || c->captured || c->cls == SS_API_GRAPH_NODE) continue;
        if (ss_call_records_event(c)) note_first_run_record(m, c->event, i);
        if (!ss_call_is_graph_launch(m, c)) continue;
        uint32_t n = 0;
        const ss_launch_event *le = ss_graph_launch_events(m, (int32_t)i, &n);
        for (uint32_t k = 0; k < n; k++)
            if (le[k].kind == SS_GRAPH_NODE_EVENT_RECORD) note_first_run_record(m, le[k].event, i);
        uint32_t gcap = ss_graph_launch_capture(m, c);
        for (uint32_t k = 0; gcap && k < m->next_event_calls; k++)
            note_first_run_record(m, ss_graph_ext_event(m, k, gcap, SS_API_EVENT_RECORD), i);
        if (!gcap && !launch_graph_id(m, c)) SS_PUSH(unknown, nunknown, cunknown, (int32_t)i);
    }
    /* Right before complete: an event that only a graph records, whose
     * graph's launches the trace cannot tell apart from others, counts as
     * recorded from the first such launch after the record was made (the
     * old reading, a launch later), never as unrecorded. */
    for (uint32_t e = 0; e < m->nevents && nunknown; e++) {
        int32_t made = m->events[e].first_record;
        if (m->events[e].first_run_record >= 0 || made < 0) continue;
        uint32_t lo = 0, hi = nunknown;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (unknown[mid] <= made) lo = mid + 1; else hi = mid;
        }
        if (lo < nunknown) m->events[e].first_run_record = unknown[lo];
    }
    free(unknown);
}

/* What derives from the calls (and the ops' joins): events, allocations,
 * capture, threads, graph nodes, blocking copies; the record arrays sorted
 * for lookups.  Runs beside derive_from_ops: of the ops it writes only
 * node_call, and it reads nothing derive_from_ops writes (the streams'
 * busy time and op counts, the devices, the strings). */
static void derive_from_calls(ss_model *m, loader *L)
{
    double t = ss_seconds();
    build_events_allocs(m);
    ss_timing("load.derive.events_allocs", t); t = ss_seconds();
    build_capture(m, L->threads);
    build_threads(m, L);
    ss_timing("load.derive.capture_threads", t); t = ss_seconds();
    build_graph_nodes(m);
    graph_first_records(m);

    m->nnvtx = L->nnvtx;
    m->nvtx = ss_xcalloc(L->nnvtx, sizeof(ss_nvtx));
    for (uint32_t i = 0; i < L->nnvtx; i++) m->nvtx[i].rec = L->nvtx[i];
    ss_qsort(m->nvtx, m->nnvtx, sizeof(ss_nvtx), cmp_nvtx);
    ss_qsort(m->hsyncs, m->nhsyncs, sizeof(*m->hsyncs), cmp_hsync);
    ss_qsort(m->jits, m->njits, sizeof(*m->jits), cmp_jit);
    ss_qsort(m->pauses, m->npauses, sizeof(*m->pauses), cmp_pause);
    ss_qsort(m->stacks, m->nstacks, sizeof(*m->stacks), cmp_idrec);
    ss_qsort(m->pystacks, m->npystacks, sizeof(*m->pystacks), cmp_idrec);
    ss_qsort(m->xaccess, m->nxaccess, sizeof(*m->xaccess), cmp_xaccess);
    ss_timing("load.derive.sorts", t); t = ss_seconds();
    mark_blocking_copies(m);   /* needs the threads' call lists and the stacks */
    ss_timing("load.derive.blocking", t); t = ss_seconds();

    m->alloc_max_end = ss_xcalloc(m->nallocs ? m->nallocs : 1, sizeof(uint64_t));
    for (uint32_t i = 0; i < m->nallocs; i++) {
        uint64_t end = m->allocs[i].ptr + (m->allocs[i].size ? m->allocs[i].size : 1);
        m->alloc_max_end[i] = i && m->alloc_max_end[i - 1] > end ? m->alloc_max_end[i - 1] : end;
    }
    m->alloc_ptr = ss_xcalloc(m->nallocs ? m->nallocs : 1, sizeof(uint64_t));
    for (uint32_t i = 0; i < m->nallocs; i++) m->alloc_ptr[i] = m->allocs[i].ptr;
    m->alloc_group = ss_xcalloc(m->nallocs ? m->nallocs : 1, sizeof(uint32_t));
    m->alloc_group_free = ss_xcalloc(m->nallocs ? m->nallocs : 1, sizeof(uint64_t));
    for (uint32_t i = 0; i < m->nallocs; i++) {
        int same = i && m->allocs[i - 1].ptr == m->allocs[i].ptr;
        m->alloc_group[i] = same ? m->alloc_group[i - 1] : i;
        uint64_t f = m->allocs[i].t_free;
        m->alloc_group_free[i] = same && m->alloc_group_free[i - 1] > f ? m->alloc_group_free[i - 1] : f;
    }

    for (uint32_t i = 0; i < m->nnotes; i++) {
        if (m->notes[i]->code == SS_NOTE_CUPTI_TAKEN) m->cupti_state = 1;
        else if (m->notes[i]->code == SS_NOTE_CUPTI_UNAVAILABLE && !m->cupti_state) m->cupti_state = 2;
    }
}

/* What derives from the ops alone: the devices' timelines and the streams'
 * busy time, the ops' running bounds, the kernels' demangled names.  Runs
 * beside derive_from_calls: it reads of the ops no field that one writes,
 * and nothing that one makes. */
static void derive_from_ops(ss_model *m, loader *L)
{
    double t = ss_seconds();
    build_timelines(m, L->threads);
    ss_timing("load.derive.timelines", t); t = ss_seconds();
    m->op_max_end = ss_xcalloc(m->nops ? m->nops : 1, sizeof(uint64_t));
    m->op_min_submit = ss_xcalloc(m->nops ? m->nops : 1, sizeof(uint64_t));
    for (uint32_t i = 0; i < m->nops; i++)
        m->op_max_end[i] = i && m->op_max_end[i - 1] > m->ops[i].end ? m->op_max_end[i - 1] : m->ops[i].end;
    for (uint32_t i = m->nops; i-- > 0; )
        m->op_min_submit[i] = i + 1 < m->nops && m->op_min_submit[i + 1] < m->ops[i].submit
                            ? m->op_min_submit[i + 1] : m->ops[i].submit;
    ss_timing("load.derive.op_bounds", t); t = ss_seconds();
    demangle_kernel_names(m);
    ss_timing("load.derive.demangle", t);
}

typedef void load_step(ss_model *m, loader *L);
typedef struct load_pair { ss_model *m; loader *L; load_step *step[2]; } load_pair;

/* ------------------------------------------------------------ reading */

/* The tables the records are kept in: pointers into the mapped trace, one
 * table per kind, each in file order. */
enum {
    K_API, K_GPU, K_SYNC, K_CUDA_EVENT, K_STREAM, K_STREAM_NAME, K_CONTEXT, K_NVTX, K_NOTE, K_META,
    K_THREAD, K_STACK, K_PYSTACK, K_MODULE, K_CUBIN, K_KERNEL_ACCESS, K_HOST_SYNC, K_JIT, K_GRAPH_NODE,
    K_CAPTURE, K_SHIM_PAUSE, K_THREAD_CONTEXT, K_STRING, K_API_NAME, NKINDS,
    K_SKIP = NKINDS   /* unknown types: newer minor versions */
};

static unsigned kept_kind(uint16_t type)
{
    switch (type) {
    case SS_REC_API: return K_API;
    case SS_REC_KERNEL: case SS_REC_MEMCPY: case SS_REC_MEMSET: return K_GPU;
    case SS_REC_SYNC: return K_SYNC;
    case SS_REC_CUDA_EVENT: return K_CUDA_EVENT;
    case SS_REC_STREAM: return K_STREAM;
    case SS_REC_STREAM_NAME: return K_STREAM_NAME;
    case SS_REC_CONTEXT: return K_CONTEXT;
    case SS_REC_NVTX: return K_NVTX;
    case SS_REC_NOTE: return K_NOTE;
    case SS_REC_META: return K_META;
    case SS_REC_THREAD: return K_THREAD;
    case SS_REC_STACK: return K_STACK;
    case SS_REC_PYSTACK: return K_PYSTACK;
    case SS_REC_MODULE: return K_MODULE;
    case SS_REC_CUBIN: return K_CUBIN;
    case SS_REC_KERNEL_ACCESS: return K_KERNEL_ACCESS;
    case SS_REC_HOST_SYNC: return K_HOST_SYNC;
    case SS_REC_JIT: return K_JIT;
    case SS_REC_GRAPH_NODE: return K_GRAPH_NODE;
    case SS_REC_CAPTURE: return K_CAPTURE;
    case SS_REC_SHIM_PAUSE: return K_SHIM_PAUSE;
    case SS_REC_THREAD_CONTEXT: return K_THREAD_CONTEXT;
    case SS_REC_STRING: return K_STRING;
    case SS_REC_API_NAME: return K_API_NAME;
    default: return K_SKIP;
    }
}

/* A run of consecutive blocks, verified and then sorted into the tables by
 * one thread.  A trace is kept up to its first block that is not valid, as
 * ss_reader_next would: a run stops at its first bad block, and the runs
 * after the one holding the file's first bad block keep nothing. */
typedef struct block_run {
    uint32_t b0, b1;              /* blocks [b0, b1) */
    uint32_t bad;                 /* its first bad block, b1 when none */
    char err[256];                /* why `bad` is bad */
    uint64_t nrecords, t_first, t_last;
    uint32_t count[NKINDS];       /* records of each kind in [b0, bad) */
    uint32_t at[NKINDS];          /* where they go in the tables */
} block_run;

typedef struct read_job {
    const ss_reader *rd;
    const ss_block_ref *blk;
    block_run *run;
    void *table[NKINDS];          /* arrays of record pointers */
} read_job;

static void verify_run(void *ctx, uint32_t i, unsigned worker)
{
    (void)worker;
    read_job *j = ctx;
    block_run *u = &j->run[i];
    u->t_first = UINT64_MAX;
    u->bad = u->b1;
    for (uint32_t b = u->b0; b < u->b1; b++) {
        if (ss_reader_verify_block(j->rd, &j->blk[b], u->err, sizeof u->err) != 0) {
            u->bad = b;
            return;
        }
        const uint8_t *p = ss_reader_block_payload(j->rd, &j->blk[b]);
        for (uint32_t k = 0; k < j->blk[b].record_count; k++) {
            const ss_rec_hdr *h = (const ss_rec_hdr *)(const void *)p;
            uint64_t t0 = rec_time(h), t1 = rec_end_time(h);
            if (t0 && t0 < u->t_first) u->t_first = t0;
            if (t1 > u->t_last) u->t_last = t1;
            if (t0 > u->t_last) u->t_last = t0;
            unsigned kind = kept_kind(h->type);
            if (kind != K_SKIP) u->count[kind]++;
            u->nrecords++;
            p += h->size;
        }
    }
}

static void sort_run(void *ctx, uint32_t i, unsigned worker)
{
    (void)worker;
    read_job *j = ctx;
    block_run *u = &j->run[i];
    for (uint32_t b = u->b0; b < u->bad; b++) {
        const uint8_t *p = ss_reader_block_payload(j->rd, &j->blk[b]);
        for (uint32_t k = 0; k < j->blk[b].record_count; k++) {
            const ss_rec_hdr *h = (const ss_rec_hdr *)(const void *)p;
            unsigned kind = kept_kind(h->type);
            /* the tables' element types differ (const ss_api_rec *, ...):
             * the pointer is stored by its bytes */
            if (kind != K_SKIP) memcpy((char *)j->table[kind] + (size_t)u->at[kind]++ * sizeof h, &h, sizeof h);
            p += h->size;
        }
    }
}

/* Every record of the trace into its table, in file order.  The blocks are
 * verified (checksum, record tiling) and counted in runs on threads, then
 * sorted into tables allocated to size, again in runs: the same tables and
 * the same truncation as reading record after record with ss_reader_next,
 * which on 10 M records took 0.5-0.7 s on one thread. */
static void read_records(ss_model *m, loader *L, ss_reader *rd)
{
    ss_block_ref *blk = NULL;
    uint32_t nblk = ss_reader_blocks(rd, &blk);
    const char *why = ss_reader_error(rd);
    char head_err[256];
    snprintf(head_err, sizeof head_err, "%s", why);   /* the block list stopped there ("" at a clean end) */
    uint32_t per = nblk / (L->threads * 8) + 1, nrun = (nblk + per - 1) / per;
    block_run *run = ss_xcalloc(nrun + 1, sizeof *run);
    for (uint32_t i = 0; i < nrun; i++) {
        run[i].b0 = i * per;
        run[i].b1 = run[i].b0 + per < nblk ? run[i].b0 + per : nblk;
    }
    read_job j = { rd, blk, run, { 0 } };
    ss_parallel_for(nrun, L->threads, verify_run, &j);
    /* kept: the runs up to and including the first with a bad block */
    uint32_t kept = nrun;
    for (uint32_t i = 0; i < nrun; i++)
        if (run[i].bad < run[i].b1) { kept = i + 1; break; }
    uint32_t total[NKINDS] = { 0 };
    for (uint32_t i = 0; i < kept; i++) {
        block_run *u = &run[i];
        m->nrecords += u->nrecords;
        if (u->t_first < m->t_first) m->t_first = u->t_first;
        if (u->t_last > m->t_last) m->t_last = u->t_last;
        for (unsigned k = 0; k < NKINDS; k++) {
            u->at[k] = total[k];
            total[k] += u->count[k];
        }
    }
    for (unsigned k = 0; k < NKINDS; k++) j.table[k] = ss_xcalloc(total[k] + 1, sizeof(void *));
    ss_parallel_for(kept, L->threads, sort_run, &j);
    const char *bad = kept && run[kept - 1].bad < run[kept - 1].b1 ? run[kept - 1].err : head_err;
    if (bad[0]) {
        m->truncated = 1;
        snprintf(m->truncated_why, sizeof m->truncated_why, "%s", bad);
    }
#define TAKE(kind, dst, n) do { dst = j.table[kind]; n = total[kind]; } while (0)
    TAKE(K_API, L->api, L->napi);
    TAKE(K_GPU, L->gpu, L->ngpu);
    TAKE(K_SYNC, m->syncs, m->nsyncs);
    TAKE(K_CUDA_EVENT, m->cuda_events, m->ncuda_events);
    TAKE(K_STREAM, L->srec, L->nsrec);
    TAKE(K_STREAM_NAME, L->sname, L->nsname);
    TAKE(K_CONTEXT, m->contexts, m->ncontexts);
    TAKE(K_NVTX, L->nvtx, L->nnvtx);
    TAKE(K_NOTE, m->notes, m->nnotes);
    TAKE(K_META, m->metas, m->nmetas);
    TAKE(K_THREAD, L->thr, L->nthr);
    TAKE(K_STACK, m->stacks, m->nstacks);
    TAKE(K_PYSTACK, m->pystacks, m->npystacks);
    TAKE(K_MODULE, m->modules, m->nmodules);
    TAKE(K_CUBIN, m->cubins, m->ncubins);
    TAKE(K_KERNEL_ACCESS, m->xaccess, m->nxaccess);
    TAKE(K_HOST_SYNC, m->hsyncs, m->nhsyncs);
    TAKE(K_JIT, m->jits, m->njits);
    TAKE(K_GRAPH_NODE, m->gnodes, m->ngnodes);
    TAKE(K_CAPTURE, L->capt, L->ncapt);
    TAKE(K_SHIM_PAUSE, m->pauses, m->npauses);
    TAKE(K_THREAD_CONTEXT, m->tctx, m->ntctx);
#undef TAKE
    ss_qsort(m->tctx, m->ntctx, sizeof(*m->tctx), cmp_tctx);
    m->split_contexts = m->ntctx > 0;
    /* strings and API names go into maps, in file order (a repeated id:
     * the last string, the first name) */
    const ss_string_rec **str = j.table[K_STRING];
    for (uint32_t i = 0; i < total[K_STRING]; i++) {
        const ss_string_rec *r = str[i];
        const ss_rec_hdr *h = &r->h;
        if (sizeof(*r) + (uint64_t)r->len > h->size || !r->id) continue;
        ss_string_ref ref = { (const char *)ss_rec_tail(h, sizeof(*r)), r->len };
        struct ss_strmap *sm = m->strings;
        ss_u64map_put(&sm->map, r->id, sm->n);
        SS_PUSH(sm->v, sm->n, sm->cap, ref);
    }
    const ss_api_name_rec **names = j.table[K_API_NAME];
    for (uint32_t i = 0; i < total[K_API_NAME]; i++) {
        const ss_api_name_rec *r = names[i];
        const ss_rec_hdr *h = &r->h;
        if (sizeof(*r) + (uint64_t)r->len > h->size) continue;
        if (ss_u64map_get(&L->cbid_name, r->cbid, -1) >= 0) continue;
        uint32_t idx = add_api_name(m, L, (const char *)ss_rec_tail(h, sizeof(*r)), r->len);
        ss_u64map_put(&L->cbid_name, r->cbid, idx);
    }
    free(str);
    free(names);
    free(run);
    free(blk);
}

static void run_load_step(void *ctx, uint32_t i, unsigned worker)
{
    (void)worker;
    load_pair *p = ctx;
    p->step[i](p->m, p->L);
}

/* a(m, L) and b(m, L) on two threads, or one after the other on this one. */
static void load_steps_side_by_side(ss_model *m, loader *L, load_step *a, load_step *b)
{
    load_pair p = { m, L, { a, b } };
    ss_parallel_for(2, L->threads, run_load_step, &p);
}

/* A sampled trace's GPU records of work submitted while recording was OFF.
 * The shim keeps CUPTI's cheap activity kinds (memcpy, memset, CUDA event) on
 * all along: switching several kinds at each switch killed programs inside
 * CUPTI (preload/cupti.c).  So an OFF span may hold their records, of calls
 * that left no API record.  They are left out here: what the analyzer knows
 * of an OFF span is what trace format 1.6 says it holds, nothing of its hot
 * work.  A record is left out when it starts inside an OFF span and no
 * recorded call has its correlation id: work of a window's call that ran
 * after the window closed stays, as does a record without a call in a
 * recorded span (the fraction of a millisecond around a switch).  Needs the
 * spans (ss_capture_spans). */
static void leave_out_unrecorded_work(ss_model *m, loader *L)
{
    if (!ss_capture_sampled(m)) return;
#define OFF(g) (ss_capture_span_at(m, (g)->start) < 0)
    uint32_t candidates = 0;
    for (uint32_t i = 0; i < L->ngpu; i++) candidates += OFF(L->gpu[i]);
    for (uint32_t i = 0; i < m->ncuda_events; i++) candidates += OFF(&m->cuda_events[i]->g);
    if (!candidates) return;
    ss_u64map recorded = { 0 };
    for (uint32_t i = 0; i < L->napi; i++)
        if (L->api[i]->corr) ss_u64map_put(&recorded, L->api[i]->corr, 1);
#define KEEP(g) (!OFF(g) || ((g)->corr && ss_u64map_get(&recorded, (g)->corr, 0)))
    uint32_t k = 0;
    for (uint32_t i = 0; i < L->ngpu; i++)
        if (KEEP(L->gpu[i])) L->gpu[k++] = L->gpu[i];
    m->ops_unrecorded = L->ngpu - k;
    L->ngpu = k;
    k = 0;
    for (uint32_t i = 0; i < m->ncuda_events; i++)
        if (KEEP(&m->cuda_events[i]->g)) m->cuda_events[k++] = m->cuda_events[i];
    m->ncuda_events = k;
#undef KEEP
#undef OFF
    ss_u64map_free(&recorded);
}

ss_model *ss_model_load(const char *path, char *err, size_t errlen)
{
    double t_load = ss_seconds();
    ss_reader *rd = ss_reader_open(path, err, errlen);
    if (!rd) return NULL;
    ss_model *m = ss_xcalloc(1, sizeof(ss_model));
    loader L;
    memset(&L, 0, sizeof L);
    L.m = m;
    m->path = path;
    m->reader = rd;
    m->hdr = *ss_reader_header(rd);
    m->strings = ss_xcalloc(1, sizeof(struct ss_strmap));
    m->t_first = UINT64_MAX;

    L.threads = ss_thread_count();
    read_records(m, &L, rd);
    if (m->t_first == UINT64_MAX) m->t_first = m->t_last = m->hdr.start_ns;
    cut_to_complete_span(m, &L);
    ss_capture_spans(m, L.capt, L.ncapt);
    leave_out_unrecorded_work(m, &L);
    ss_timing("load.read", t_load);

    /* The calls and the GPU ops are made side by side, then what derives
     * from the calls beside what derives from the ops alone (with
     * SYNCSIGHT_THREADS=1, one after the other on this thread).  The steps
     * of a pair write disjoint tables (of one struct, only separate members:
     * ss_call, ss_gpu_op) and read nothing the other writes, so every table
     * is what one thread makes.  10 M records on a loaded 2-vCPU VM: 1.9 s
     * -> 1.4 s on two threads. */
    double t = ss_seconds();
    load_steps_side_by_side(m, &L, make_calls, make_ops);
    ss_timing("load.calls_and_ops", t);
    t = ss_seconds();
    build_streams_and_joins(m, &L);
    ss_timing("load.streams_and_joins", t);
    t = ss_seconds();
    load_steps_side_by_side(m, &L, derive_from_calls, derive_from_ops);
    ss_timing("load.derive", t);
    /* reads the streams' op counts (build_timelines) */
    ss_capture_build(m);

    free(L.name_async);
    free(L.capt); free(L.api); free(L.gpu); free(L.srec); free(L.sname); free(L.nvtx); free(L.thr); free(L.parent);
    ss_u64map_free(&L.cbid_name); ss_u64map_free(&L.sid_map); ss_u64map_free(&L.handle_map);
    ss_u64map_free(&L.corr_stream); ss_u64map_free(&L.legacy_map); ss_u64map_free(&L.ptds_map);
    ss_u64map_free(&L.default_ctx); ss_u64map_free(&L.ctx_device);
    ss_timing("load", t_load);
    return m;
}

/* Kernel names as users wrote them: CUPTI gives the mangled symbol
 * (_Z11spin_kernelyPii); show spin_kernel(unsigned long long, int*, int).
 * libstdc++'s demangler is looked up at run time so the analyzer stays C. */
typedef char *(*ss_demangle_fn)(const char *, char *, size_t *, int *);

static ss_demangle_fn demangler(void)
{
    static int tried;
    static ss_demangle_fn fn;
    if (!tried) {
        tried = 1;
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h)
            *(void **)&fn = dlsym(h, "__cxa_demangle");
    }
    return fn;
}

static void demangle_kernel_names(ss_model *m)
{
    ss_demangle_fn fn = demangler();
    struct ss_strmap *sm = m->strings;
    if (!fn || !sm->n)
        return;
    uint8_t *done = ss_xcalloc(sm->n, 1);
    for (uint32_t i = 0; i < m->nops; i++) {
        if (m->ops[i].kind != SS_OP_KERNEL)
            continue;
        int64_t *idx = ss_u64map_find(&sm->map, ((const ss_kernel_rec *)m->ops[i].rec)->name_id);
        if (!idx || *idx < 0 || (uint64_t)*idx >= sm->n || done[*idx])
            continue;
        done[*idx] = 1;
        ss_string_ref r = sm->v[*idx];
        /* bounded: names of several KiB are template soup nobody reads whole */
        if (r.len < 3 || r.len > 8192 || r.s[0] != '_' || r.s[1] != 'Z')
            continue;
        char *mangled = ss_xcalloc(r.len + 1, 1);
        memcpy(mangled, r.s, r.len);
        int status = -1;
        char *out = fn(mangled, NULL, NULL, &status);
        free(mangled);
        if (status != 0 || !out)
            continue;
        SS_PUSH(sm->owned, sm->nowned, sm->capowned, out);
        if (!sm->raw) {   /* the mangled name is what the cubin's symbols use */
            sm->raw = ss_xcalloc(sm->n, sizeof(ss_string_ref));
            memcpy(sm->raw, sm->v, sm->n * sizeof(ss_string_ref));
        }
        sm->v[*idx].s = out;
        sm->v[*idx].len = (uint32_t)strlen(out);
    }
    free(done);
}

void ss_model_free(ss_model *m)
{
    if (!m) return;
    /* the replay's build may still be recording its baseline from the
     * model's tables (replay.c): joined before they go */
    if (m->replay_job && m->replay_job_free) m->replay_job_free(m);
    free(m->calls); free(m->ops); free(m->syncs); free(m->cuda_events); free(m->streams);
    free(m->events); free(m->allocs); free(m->nvtx);
    for (uint32_t i = 0; i < m->nthreads; i++) free(m->threads[i].calls);
    free(m->threads); free(m->notes); free(m->metas); free(m->contexts); free(m->stacks);
    free(m->pystacks); free(m->modules); free(m->cubins); free(m->xaccess); free(m->hsyncs); free(m->jits); free(m->pauses);
    free(m->tctx);
    free(m->gnodes); free(m->call_capture); free(m->ext_event_calls); free(m->launch_events);
    for (uint32_t i = 0; i < m->napi_names; i++) free(m->api_names[i]);
    free(m->api_names); free(m->api_class); free(m->api_info); free(m->api_graph_launch);
    if (m->strings) {
        for (uint32_t i = 0; i < m->strings->nowned; i++) free(m->strings->owned[i]);
        free(m->strings->owned); free(m->strings->raw);
        ss_u64map_free(&m->strings->map); free(m->strings->v); free(m->strings);
    }
    for (uint32_t i = 0; i < m->ntimelines; i++) {
        free(m->timelines[i].submit); free(m->timelines[i].maxend); free(m->timelines[i].starts);
    }
    free(m->timelines); free(m->devices);
    free(m->alloc_max_end); free(m->alloc_group); free(m->alloc_ptr); free(m->alloc_group_free); free(m->op_max_end); free(m->op_min_submit);
    if (m->kaccess && m->kaccess_free) m->kaccess_free(m->kaccess);
    ss_symbolizer_free(m->symbolizer);
    if (m->library_cache_free) m->library_cache_free(m->library_cache);
    if (m->replay && m->replay_free) m->replay_free(m->replay);
    if (m->ranges && m->ranges_free) m->ranges_free(m->ranges);
    if (m->iterations && m->iterations_free) m->iterations_free(m->iterations);
    ss_capture_free(m->capture);
    if (m->reader) ss_reader_close(m->reader);
    free(m);
}
