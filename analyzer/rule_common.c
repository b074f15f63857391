/* What the rules share (declared in rule.h): GPU work in flight at a time,
 * the memory a call touches, labels of calls and ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_access.h"
#include "rule.h"
#include "util.h"

#define INFLIGHT_SCAN_LIMIT 4096

void ss_inflight_ops(const ss_model *m, int32_t device, uint64_t t, ss_op_visit visit, void *ctx)
{
    ss_inflight_ops_of_context(m, device, 0, t, visit, ctx);
}

void ss_inflight_ops_of_context(const ss_model *m, int32_t device, uint32_t context, uint64_t t, ss_op_visit visit,
                                void *ctx)
{
    /* first op starting at or after t */
    uint32_t lo = 0, hi = m->nops;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (m->ops[mid].start < t) lo = mid + 1; else hi = mid;
    }
    /* queued: submitted before t, starting later */
    for (uint32_t i = lo, n = 0; i < m->nops && n < INFLIGHT_SCAN_LIMIT; i++, n++) {
        if (m->op_min_submit[i] >= t) break;   /* nothing from here on was submitted before t */
        const ss_gpu_op *op = &m->ops[i];
        if (ss_op_device(op) == device && op->submit < t && ss_stream_in_context(m, op->stream, context))
            visit(ctx, (int32_t)i);
    }
    /* running: started before t, ending after */
    for (uint32_t i = lo, n = 0; i > 0 && n < INFLIGHT_SCAN_LIMIT; n++) {
        if (m->op_max_end[i - 1] <= t) break;   /* everything started earlier has ended by t */
        const ss_gpu_op *op = &m->ops[--i];
        if (ss_op_device(op) == device && op->end > t && ss_stream_in_context(m, op->stream, context))
            visit(ctx, (int32_t)i);
    }
}

static int in_alloc(const ss_alloc *a, uint64_t lo, uint64_t bytes)
{
    uint64_t size = a->size ? a->size : 1;
    uint64_t hi = lo + (bytes ? bytes : 1);
    return lo < a->ptr + size && hi > a->ptr;
}

int ss_call_touches_alloc(const ss_model *m, const ss_call *c, int32_t alloc)
{
    if (alloc < 0) return 0;
    const ss_alloc *a = &m->allocs[alloc];
    const ss_api_rec *r = c->rec;
    switch (c->cls) {
    case SS_API_COPY_SYNC: case SS_API_COPY_ASYNC:
        return (r->ptr && in_alloc(a, r->ptr, r->bytes)) || (r->ptr2 && in_alloc(a, r->ptr2, r->bytes));
    case SS_API_MEMSET_SYNC: case SS_API_MEMSET_ASYNC:
        return r->ptr && in_alloc(a, r->ptr, r->bytes);
    case SS_API_LAUNCH: {
        uint32_t n;
        const uint64_t *p = ss_call_params(c, &n);
        for (uint32_t i = 0; i < n; i++)
            if (p[i] >= a->ptr && p[i] - a->ptr < (a->size ? a->size : 1)) return 1;
        return 0;
    }
    default:
        return 0;
    }
}

int ss_op_touches_alloc(const ss_model *m, int32_t op, int32_t alloc)
{
    if (op < 0 || m->ops[op].call < 0) return 0;
    return ss_call_touches_alloc(m, &m->calls[m->ops[op].call], alloc);
}

void ss_op_label(const ss_model *m, int32_t op, char *buf, size_t len)
{
    if (op < 0) { snprintf(buf, len, "?"); return; }
    ss_string_ref nm = ss_model_op_name(m, &m->ops[op]);
    /* mangled kernel names can be long: the first 120 bytes identify them */
    int n = nm.len > 120 ? 120 : (int)nm.len;
    snprintf(buf, len, "%s%.*s%s", m->ops[op].kind == SS_OP_KERNEL ? "kernel " : "", n, nm.s,
             nm.len > 120 ? "..." : "");
    for (char *p = buf; *p; p++) if (*p == '\n' || *p == '\r') *p = ' ';
}

void ss_call_label(const ss_model *m, int32_t call, char *buf, size_t len)
{
    if (call < 0) { snprintf(buf, len, "?"); return; }
    const ss_call *c = &m->calls[call];
    if (c->cls == SS_API_LAUNCH && c->first_op >= 0) { ss_op_label(m, c->first_op, buf, len); return; }
    snprintf(buf, len, "%s", ss_model_call_name(m, c));
}

/* The memory a call may touch, for "may b depend on a?": copies and memsets
 * exactly; a kernel pointer argument certainly touches the byte it points at
 * and may reach to the end of the allocation it points into (the trace has no
 * sizes), reading and/or writing as its code shows (unknown: both); frees the
 * whole freed allocation.  Generous on purpose where a missed dependency would
 * blame a barrier the program needs, but two kernels that only write (or only
 * read) different offsets of one buffer are taken as slices, not as one
 * depending on the other. */
#define MAX_RANGES 260
enum { MR_READ = 1, MR_WRITE = 2 };
/* known: what it reads and writes is known (copies, memsets, frees, a kernel
 * whose code was classified); 0: a kernel taken as reading and writing. */
typedef struct mem_range { uint64_t lo, hi, reach; uint8_t acc; uint8_t exact; uint8_t known; uint8_t hull; } mem_range;

/* A 2D/3D copy's or memset's range: ss_copy_range's (kernel_access.h); in
 * no allocation, width x height bytes from the pointer as recorded. */
static mem_range strided_range(const ss_model *m, const ss_call *c, uint64_t p, uint64_t bytes, uint8_t acc)
{
    ss_kernel_mem k;
    uint64_t hi = p + (bytes ? bytes : 1);
    if (!ss_copy_range(m, c, p, bytes, c->rec->t_enter, acc == MR_WRITE, &k, 1))
        return (mem_range){ p, hi, hi, acc, 1, 1, 0 };
    return (mem_range){ k.lo, k.hi, k.reach, acc, k.exact, 1, 0 };
}

static uint32_t call_ranges(const ss_model *m, const ss_call *c, mem_range *out)
{
    const ss_api_rec *r = c->rec;
    uint32_t n = 0;
    switch (c->cls) {
    case SS_API_COPY_SYNC: case SS_API_COPY_ASYNC:
        if (r->ptr2) {
            uint64_t hi = r->ptr2 + (r->bytes ? r->bytes : 1);
            out[n++] = ss_call_is_strided(m, c) && r->bytes > 1 ? strided_range(m, c, r->ptr2, r->bytes, MR_READ)
                                                                  : (mem_range){ r->ptr2, hi, hi, MR_READ, 1, 1, 0 };
        }
        /* fall through */
    case SS_API_MEMSET_SYNC: case SS_API_MEMSET_ASYNC:
        if (r->ptr) {
            uint64_t hi = r->ptr + (r->bytes ? r->bytes : 1);
            out[n++] = ss_call_is_strided(m, c) && r->bytes > 1 ? strided_range(m, c, r->ptr, r->bytes, MR_WRITE)
                                                                  : (mem_range){ r->ptr, hi, hi, MR_WRITE, 1, 1, 0 };
        }
        break;
    case SS_API_LAUNCH: {
        ss_kernel_mem k[MAX_RANGES];
        uint32_t nk = ss_kernel_mem_accesses(m, c, k, MAX_RANGES);
        for (uint32_t i = 0; i < nk; i++)
            out[n++] = (mem_range){ k[i].lo, k[i].hi, k[i].reach,
                                    (uint8_t)((k[i].read ? MR_READ : 0) | (k[i].write ? MR_WRITE : 0)), k[i].exact,
                                    (uint8_t)(k[i].known || k[i].exact), k[i].exact };
        break;
    }
    case SS_API_FREE:
        if (c->alloc >= 0) {
            uint64_t lo, hi;
            ss_call_released_range(m, c, &lo, &hi);
            out[n++] = (mem_range){ lo, hi, hi, MR_WRITE, 1, 1, 0 };
        }
        break;
    default: break;
    }
    return n;
}

/* The end of the bytes a range touches or may reach. */
static inline uint64_t range_end(const mem_range *r) { return r->reach > r->hi ? r->reach : r->hi; }

/* One reads what the other writes (or overwrites what it reads). */
static int read_write_pair(uint8_t a, uint8_t b)
{
    return ((a & MR_READ) && (b & MR_WRITE)) || ((a & MR_WRITE) && (b & MR_READ));
}

static int ranges_related(const mem_range *x, const mem_range *y)
{
    if (!((x->acc | y->acc) & MR_WRITE)) return 0;
    /* bytes both certainly touch */
    if (x->lo < y->hi && y->lo < x->hi) return 1;
    /* one may reach into the other: the lower one's reach covers the higher
     * one's start (a consumer handed a buffer's base, a copy into a buffer a
     * kernel was handed the base of) */
    const mem_range *lo = x->lo <= y->lo ? x : y, *hi = lo == x ? y : x;
    return hi->lo < lo->reach && read_write_pair(lo->acc, hi->acc);
}

/* b is a byte r certainly touches */
static int certainly_touches(const ss_byte_range *r, uint64_t b)
{
    return r->known == SS_RANGE_HULL ? (b == r->lo || b == r->hi - 1)
         : r->known == SS_RANGE_EXACT && r->lo <= b && b < r->hi;
}

int ss_ranges_share_a_byte(const ss_byte_range *a, const ss_byte_range *b)
{
    if (!(a->lo < b->hi && b->lo < a->hi)) return 0;
    if (a->known == SS_RANGE_INFERRED || b->known == SS_RANGE_INFERRED) {
        const ss_byte_range *k = a->known == SS_RANGE_INFERRED ? a : b, *o = k == a ? b : a;
        uint64_t end = k->reach > k->hi ? k->reach : k->hi;
        return o->known == SS_RANGE_EXACT && o->lo <= k->lo && o->hi >= end;
    }
    return certainly_touches(b, a->lo) || certainly_touches(b, a->hi - 1) || certainly_touches(a, b->lo) ||
           certainly_touches(a, b->hi - 1);
}

static ss_byte_range byte_range_of(const mem_range *r)
{
    return (ss_byte_range){ r->lo, r->hi, r->reach,
                            !r->exact ? SS_RANGE_INFERRED : r->hull ? SS_RANGE_HULL : SS_RANGE_EXACT };
}

/* Related beyond doubt: bytes both certainly touch, one of them certainly
 * writes, both accesses known (not a kernel taken as reading and writing). */
static int ranges_certainly_related(const mem_range *x, const mem_range *y)
{
    if (!x->known || !y->known || !((x->acc | y->acc) & MR_WRITE)) return 0;
    ss_byte_range a = byte_range_of(x), b = byte_range_of(y);
    return ss_ranges_share_a_byte(&a, &b);
}

/* The rules ask about one call against many others nearby (every earlier op
 * a barrier orders, every op in flight at a sync), and about each call
 * several times from several rules: a call's ranges are resolved against
 * the allocations once, when first asked for, and kept for the rest of the
 * analysis (a 64-slot cache of the calls asked about last missed on a
 * quarter of the questions and resolved each call about 4 times).  A pure
 * function of the model, cached in it.
 *
 * The rules run on several threads at once (rules.c), and some compare on
 * threads of their own, so the cache is filled concurrently, without a
 * lock (a mutex here made tens of thousands of futex waits a second at
 * 10 M records: the questions are mostly first questions).  A resolver
 * reserves room for a call's ranges with one atomic add, creates the block
 * it lands in if nobody has (compare-and-swap), writes the ranges and
 * publishes the call's slot with release order; ranges once written never
 * move (blocks of fixed size, never reallocated), so a reader needs no
 * lock.  Two threads that ask for one unresolved call both resolve it and
 * the first to publish wins (the other's room is left unused): the same
 * answer either way. */
#define RANGE_BLOCK_SHIFT 16u
#define RANGE_BLOCK (1u << RANGE_BLOCK_SHIFT)          /* ranges per block */
#define RANGE_BLOCKS 65536u                             /* at most 2^32 ranges */
struct ss_ranges_cache {
    /* per call: 0 not resolved yet, else 1 << 63 | n << 32 | index of its
     * first range (its ranges are block[index >> 16][index & 0xffff...]).
     * One word per call: the rules ask about calls far apart, and the
     * lookup's miss is most of its cost. */
    uint64_t *slot;
    mem_range **block;          /* RANGE_BLOCKS pointers, each created by its first user */
    uint64_t next;              /* index of the next free range (atomic; 64 bits: never wraps) */
};

static void ranges_cache_free(struct ss_ranges_cache *c)
{
    if (!c) return;
    /* a block may be missing below one that exists (its reservations all
     * left unused): every pointer is looked at */
    for (uint32_t b = 0; b < RANGE_BLOCKS; b++) free(c->block[b]);
    free(c->block);
    free(c->slot);
    free(c);
}

/* The cache is created before the rules run (ss_calls_memory_prepare), or
 * here by a rule that runs alone. */
static struct ss_ranges_cache *ranges_cache(const ss_model *m)
{
    ss_model *mm = (ss_model *)m;   /* a cache the model owns and frees, like the replay */
    if (!mm->ranges) {
        struct ss_ranges_cache *c = ss_xcalloc(1, sizeof *c);
        c->slot = ss_xcalloc(m->ncalls + 1, sizeof *c->slot);
        c->block = ss_xcalloc(RANGE_BLOCKS, sizeof *c->block);
        mm->ranges = c;
        mm->ranges_free = ranges_cache_free;
    }
    return mm->ranges;
}

static inline const mem_range *slot_ranges(const struct ss_ranges_cache *c, uint64_t v, uint32_t *n)
{
    *n = (uint32_t)(v >> 32) & 0xffffu;
    uint32_t at = (uint32_t)v;
    return *n ? __atomic_load_n(&c->block[at >> RANGE_BLOCK_SHIFT], __ATOMIC_RELAXED) + (at & (RANGE_BLOCK - 1))
              : NULL;
}

/* Room for k ranges in one block: reserved, its block created if needed;
 * a reservation that would straddle two blocks is left unused. */
static mem_range *reserve_ranges(struct ss_ranges_cache *c, uint32_t k, uint32_t *at)
{
    uint64_t i;
    do {
        i = __atomic_fetch_add(&c->next, k, __ATOMIC_RELAXED);
        if ((i >> RANGE_BLOCK_SHIFT) >= RANGE_BLOCKS) {
            fputs("syncsight: out of memory (memory ranges)\n", stderr);
            exit(2);
        }
    } while ((i & (RANGE_BLOCK - 1)) + k > RANGE_BLOCK);
    mem_range **slot = &c->block[i >> RANGE_BLOCK_SHIFT];
    mem_range *b = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!b) {
        mem_range *mine = ss_xcalloc(RANGE_BLOCK, sizeof(mem_range)), *none = NULL;
        if (__atomic_compare_exchange_n(slot, &none, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            b = mine;
        } else {
            free(mine);   /* another thread created it first */
            b = none;
        }
    }
    *at = (uint32_t)i;
    return b + (i & (RANGE_BLOCK - 1));
}

/* The first question about a call: its ranges resolved and kept (out of
 * line: its buffers take 16 KiB of stack, the lookup below none). */
static __attribute__((noinline)) const mem_range *resolve_ranges(const ss_model *m, int32_t call, uint32_t *n)
{
    struct ss_ranges_cache *c = ranges_cache(m);
    mem_range r[MAX_RANGES];
    uint32_t k = call_ranges(m, &m->calls[call], r), at = 0;
    if (k) memcpy(reserve_ranges(c, k, &at), r, k * sizeof(mem_range));
    uint64_t v = 1ull << 63 | (uint64_t)k << 32 | at, was = 0;
    /* the ranges are written before the slot says where (release) */
    if (!__atomic_compare_exchange_n(&c->slot[call], &was, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        v = was;   /* published first by another thread */
    return slot_ranges(c, v, n);
}

static inline const mem_range *cached_ranges(const ss_model *m, int32_t call, uint32_t *n)
{
    const struct ss_ranges_cache *c = m->ranges;
    uint64_t v = c ? __atomic_load_n(&c->slot[call], __ATOMIC_ACQUIRE) : 0;
    if (!v) return resolve_ranges(m, call, n);
    return slot_ranges(c, v, n);
}

void ss_calls_memory_prepare(const ss_model *m)
{
    ranges_cache(m);
}

void ss_calls_memory_forget(const ss_model *m)
{
    ss_model *mm = (ss_model *)m;
    ranges_cache_free(mm->ranges);
    mm->ranges = NULL;
}

/* How two calls' memory relates; `want_certain` 0 stops at the first
 * related pair (SS_SHARE_POSSIBLE then stands for "related"), 1 looks on
 * for a pair related beyond doubt. */
static int share_memory(const ss_model *m, int32_t a, int32_t b, int want_certain)
{
    if (a < 0 || b < 0) return SS_SHARE_NONE;
    uint32_t na, nb;
    const mem_range *ra = cached_ranges(m, a, &na);
    if (!na) return SS_SHARE_NONE;
    const mem_range *rb = cached_ranges(m, b, &nb);   /* ranges never move: ra stays valid */
    int how = SS_SHARE_NONE;
    for (uint32_t i = 0; i < na; i++)
        for (uint32_t j = 0; j < nb; j++) {
            /* Both tests below need a write, and bytes of one between the
             * other's start and its end or reach: a pair without is passed
             * over at once (in the generated traces, every pair of about
             * half the questions). */
            if (!((ra[i].acc | rb[j].acc) & MR_WRITE) || !(ra[i].lo < range_end(&rb[j]) && rb[j].lo < range_end(&ra[i])))
                continue;
            if (want_certain && ranges_certainly_related(&ra[i], &rb[j])) return SS_SHARE_CERTAIN;
            if (how == SS_SHARE_NONE && ranges_related(&ra[i], &rb[j])) {
                if (!want_certain) return SS_SHARE_POSSIBLE;
                how = SS_SHARE_POSSIBLE;
            }
        }
    return how;
}

int ss_call_has_memory(const ss_model *m, int32_t a)
{
    uint32_t n = 0;
    if (a >= 0) cached_ranges(m, a, &n);
    return n > 0;
}

int ss_calls_share_memory(const ss_model *m, int32_t a, int32_t b)
{
    return share_memory(m, a, b, 0) != SS_SHARE_NONE;
}

int ss_calls_share_memory_how(const ss_model *m, int32_t a, int32_t b)
{
    return share_memory(m, a, b, 1);
}

int ss_ops_share_memory(const ss_model *m, int32_t a, int32_t b)
{
    if (a < 0 || b < 0) return 0;
    return ss_calls_share_memory(m, m->ops[a].call, m->ops[b].call);
}
