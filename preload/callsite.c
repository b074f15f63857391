/*
 * Native call stacks and the module map (see docs/call-sites.md).
 *
 * At the calls that ss_callsite_capture's policy selects (producers.h), the shim
 * records the return addresses of the calling thread (glibc backtrace(): libgcc's DWARF unwinder, which works
 * on code built without frame pointers, i.e. most of what runs in a CUDA or
 * PyTorch process).  Each distinct stack is written once per trace as an
 * SS_REC_STACK and referenced by id; the dedup table is looked up without a
 * lock so that threads hitting the same call site do not contend.
 *
 * Addresses mean nothing offline without the map of loaded objects, so every
 * module (path, load base, extent, GNU build id) is written as SS_REC_MODULE
 * at start, and again whenever a captured address falls outside every known
 * module and the loader reports that something was dlopen'ed since the last
 * scan (dl_phdr_info.dlpi_adds).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unwind.h>

#include "producers.h"
#include "callsite_internal.h"

/* ------------------------------------------------------------ settings */

/* Frames kept per stack, innermost first.  glibc's backtrace() (the only
 * unwinder on a machine without libunwind, e.g. the GPU machines we run on)
 * costs ~200 ns per frame, so the default is only as deep as a call site
 * needs: the interposer's wrapper is called by the program itself, whose
 * frames start right after ours (16 = the user frame + 15 callers); a
 * CUPTI-path capture has the static cudart, libcuda and libcupti frames on
 * top of the program's (about 10-16), so it gets 24.  SYNCSIGHT_STACK_DEPTH
 * sets both. */
#define STACK_DEPTH_INTERPOSER 16
#define STACK_DEPTH_CUPTI      24
#define STACK_DEPTH_MAX     64
#define OWN_FRAMES_MAX      8

static int g_depth_interposer = STACK_DEPTH_INTERPOSER;
static int g_depth_cupti = STACK_DEPTH_CUPTI;

/* Address range of the shim itself: leading frames inside it (the CUPTI
 * callback's dispatch) are dropped from captured stacks. */
static uint64_t g_self_lo, g_self_hi;

/* The unwinder.  libunwind's unw_backtrace caches what it learns about each
 * frame and took ~160 ns for 24 frames where glibc's backtrace() (libgcc,
 * which interprets the DWARF CFI again at every frame) took ~4.8 us
 * (bench/bench_callsite.c).  libunwind is used when the machine has it
 * (dlopen'ed, so the shim does not depend on it); SYNCSIGHT_UNWINDER=
 * backtrace forces glibc's. */
typedef int (*unwinder_fn)(void **buf, int max);
static unwinder_fn g_unwind = backtrace;
static const char *g_unwinder_name = "backtrace";
/* Frames of our own at the top of a captured stack: the unwinder's (if it
 * reports itself), capture_native_stack() and ss_callsite_capture().
 * Measured at init by calibrate_own_frames(). */
static int g_own_frames = 2;

/* ------------------------------------------------------------ stack table */

/* Open addressing over a fixed array: bounded memory whatever the program
 * does.  A slot's key is 0 while empty, SLOT_BUSY while its owner fills it,
 * then the stack's hash with the low bit set (so it is never 0 or BUSY).
 * Readers compare the key, then the addresses: a published slot is never
 * changed again, so a reader that saw the key with acquire order sees the
 * addresses.  A reader that meets a BUSY slot moves on; in the rare race two
 * threads inserting the same new stack at once may both write it, under two
 * ids, which costs a few bytes and nothing else. */
#define STACK_SLOTS   8192u         /* power of two */
#define STACK_PROBES  64u
#define SLOT_BUSY     2u

typedef struct stack_slot {
    _Atomic uint64_t key;
    uint32_t id;
    uint32_t depth;
    uint64_t addrs[STACK_DEPTH_MAX];
    /* Where each return address lay on the stack when this stack was
     * captured, as a distance above the capturing entry point's frame
     * (verified capture, below); has_slots 0 when the unwinder did not say. */
    uint32_t has_slots;
    uint32_t slot_off[STACK_DEPTH_MAX];
} stack_slot;

static stack_slot *g_stacks;        /* mmap'ed: untouched slots cost no memory */
static _Atomic uint32_t g_next_stack_id = 1;
static _Atomic int g_table_full_noted;

static uint64_t hash_addrs(const uint64_t *a, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= a[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h | 1u;
}

/* Write the SS_REC_STACK record; returns 0 when it could not be written. */
static int write_stack_record(uint32_t id, const uint64_t *addrs, uint32_t depth)
{
    ss_stack_rec *rec = ss_rec_begin(SS_REC_STACK, sizeof *rec, depth * 8u);
    if (!rec)
        return 0;
    rec->id = id;
    rec->depth = depth;
    memcpy((char *)rec + sizeof *rec, addrs, depth * 8u);
    ss_rec_commit(rec);
    return 1;
}

/* A table entry matches a capture with the same addresses; a capture that
 * knows where they lay (offs != NULL) matches only an entry that knows the
 * same, so that a verified cache (below) can check a later call against it.
 * *slot_out: the entry, or NULL when the stack has none (table full). */
static uint32_t stack_id_for(const uint64_t *addrs, uint32_t depth, const uint32_t *offs,
                             const stack_slot **slot_out)
{
    *slot_out = NULL;
    uint64_t h = hash_addrs(addrs, depth);
    /* The same frames seen before with other return-address slots (or none,
     * from an unverified capture): a new entry for the cache, but the same
     * stack for the trace -- one id, one STACK record. */
    uint32_t same_frames_id = 0;
    if (g_stacks) {
        for (uint32_t p = 0; p < STACK_PROBES; p++) {
            stack_slot *s = &g_stacks[(h + p) & (STACK_SLOTS - 1)];
            uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
            if (k == 0) {
                uint64_t expected = 0;
                if (!atomic_compare_exchange_strong_explicit(&s->key, &expected, SLOT_BUSY,
                                                             memory_order_acq_rel,
                                                             memory_order_acquire)) {
                    k = expected;           /* lost the slot: look at what is there */
                    goto occupied;
                }
                uint32_t id = same_frames_id ? same_frames_id
                                             : atomic_fetch_add_explicit(&g_next_stack_id, 1, memory_order_relaxed);
                s->id = id;
                s->depth = depth;
                memcpy(s->addrs, addrs, depth * 8u);
                s->has_slots = offs != NULL;
                if (offs)
                    memcpy(s->slot_off, offs, depth * sizeof *offs);
                if (!same_frames_id && !write_stack_record(id, addrs, depth)) {
                    /* Nothing to point at: give the slot back rather than
                     * publish an id whose record does not exist. */
                    atomic_store_explicit(&s->key, 0, memory_order_release);
                    return 0;
                }
                atomic_store_explicit(&s->key, h, memory_order_release);
                *slot_out = s;
                return id;
            }
occupied:
            if (k == h && s->depth == depth && memcmp(s->addrs, addrs, depth * 8u) == 0) {
                if (!offs || (s->has_slots && memcmp(s->slot_off, offs, depth * sizeof *offs) == 0)) {
                    *slot_out = s;
                    return s->id;
                }
                same_frames_id = s->id;
            }
        }
    }
    /* Table full (or never mapped): still give this call its stack, written
     * for this call alone, so the cap bounds memory and never loses data. */
    if (!atomic_exchange(&g_table_full_noted, 1))
        ss_note(SS_NOTE_DROPPED_API, 0,
                "call-stack table full: stacks first seen from now on are written once per call",
                0);
    uint32_t id = atomic_fetch_add_explicit(&g_next_stack_id, 1, memory_order_relaxed);
    return write_stack_record(id, addrs, depth) ? id : 0;
}

/* ------------------------------------------------------------ module map */

typedef struct mod_range {
    uint64_t start, end;            /* [start, end) of the PT_LOAD segments */
} mod_range;

typedef struct mod_set {
    uint32_t n;
    mod_range r[];                  /* sorted by start */
} mod_set;

/* Readers take the current set without a lock; a replaced set is never freed
 * (a reader may still be searching it).  Sets are replaced only after a
 * dlopen, so what is kept is bounded by the number of dlopen batches. */
static _Atomic(mod_set *) g_mods;
static pthread_mutex_t g_mod_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long g_adds_seen;      /* dlpi_adds at the last scan */
static _Atomic uint32_t g_mod_generation;

uint32_t ss_callsite_module_generation(void)
{
    return atomic_load_explicit(&g_mod_generation, memory_order_acquire);
}

static int addr_in_known_module(const mod_set *set, uint64_t a)
{
    if (!set)
        return 0;
    uint32_t lo = 0, hi = set->n;
    while (lo < hi) {                       /* first range with start > a */
        uint32_t mid = lo + (hi - lo) / 2;
        if (set->r[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && a < set->r[lo - 1].end;
}

#define BUILD_ID_MAX 64

/* GNU build id from the object's PT_NOTE segments, as mapped in memory. */
static size_t find_build_id(const struct dl_phdr_info *info, uint8_t *out)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const void *)p;
            size_t name_sz = (nh->n_namesz + 3u) & ~3u;
            size_t desc_sz = (nh->n_descsz + 3u) & ~3u;
            const char *name = p + sizeof *nh;
            const char *desc = name + name_sz;
            if (desc + desc_sz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                size_t n = nh->n_descsz < BUILD_ID_MAX ? nh->n_descsz : BUILD_ID_MAX;
                memcpy(out, desc, n);
                return n;
            }
            p = desc + desc_sz;
        }
    }
    return 0;
}

typedef struct scan_state {
    mod_set *set;                   /* being built */
    uint32_t cap;
    const mod_set *old;             /* modules already written to the trace */
    unsigned long long adds;
} scan_state;

static void write_module_record(const char *path, uint64_t base, uint64_t size,
                                const uint8_t *build_id, size_t build_id_len)
{
    size_t path_len = strlen(path);
    ss_module_rec *rec = ss_rec_begin(SS_REC_MODULE, sizeof *rec,
                                      (uint32_t)(path_len + build_id_len));
    if (!rec)
        return;
    rec->base = base;
    rec->size = size;
    rec->time = ss_now();
    rec->path_len = (uint32_t)path_len;
    rec->build_id_len = (uint32_t)build_id_len;
    memcpy((char *)rec + sizeof *rec, path, path_len);
    memcpy((char *)rec + sizeof *rec + path_len, build_id, build_id_len);
    ss_rec_commit(rec);
}

/* Lowest and highest address of an object's PT_LOAD segments, relative to
 * its load address (hi == 0: no loadable segment). */
static void load_extent(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (ph->p_vaddr < *lo)
            *lo = ph->p_vaddr;
        if (ph->p_vaddr + ph->p_memsz > *hi)
            *hi = ph->p_vaddr + ph->p_memsz;
    }
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    scan_state *st = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        st->adds = info->dlpi_adds;

    uint64_t lo, hi;
    load_extent(info, &lo, &hi);
    if (hi == 0 || st->set->n >= st->cap)
        return 0;
    mod_range range = { info->dlpi_addr + lo, info->dlpi_addr + hi };
    st->set->r[st->set->n++] = range;

    if (addr_in_known_module(st->old, range.start))
        return 0;                   /* written by an earlier scan */

    /* The main program has an empty name in the loader's list. */
    char exe[4096];
    const char *path = info->dlpi_name;
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = '\0';
        path = exe;
    }
    uint8_t build_id[BUILD_ID_MAX];
    size_t build_id_len = find_build_id(info, build_id);
    write_module_record(path, info->dlpi_addr, hi, build_id, build_id_len);
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const mod_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info; (void)size;
    ++*(uint32_t *)arg;
    return 0;
}

/* Rebuild the module set and write records for modules not seen before. */
static void rescan_modules(void)
{
    pthread_mutex_lock(&g_mod_lock);
    uint32_t count = 0;
    dl_iterate_phdr(count_one, &count);
    scan_state st = { .cap = count + 16, .old = atomic_load(&g_mods) };
    st.set = malloc(sizeof(mod_set) + st.cap * sizeof(mod_range));
    if (st.set) {
        st.set->n = 0;
        dl_iterate_phdr(scan_one, &st);
        qsort(st.set->r, st.set->n, sizeof(mod_range), cmp_range);
        __atomic_store_n(&g_adds_seen, st.adds, __ATOMIC_RELAXED);
        atomic_store_explicit(&g_mods, st.set, memory_order_release);
        atomic_fetch_add_explicit(&g_mod_generation, 1, memory_order_acq_rel);
    }
    pthread_mutex_unlock(&g_mod_lock);
}

static int peek_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        *(unsigned long long *)arg = info->dlpi_adds;
    return 1;                       /* the counter is the same in every entry */
}

/* An address outside every known module: rescan only if the loader added
 * something since the last scan, so JIT code or a stray address costs one
 * cheap peek and not a scan per call. */
static void maybe_rescan_modules(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(peek_adds, &adds);
    if (adds != __atomic_load_n(&g_adds_seen, __ATOMIC_RELAXED))
        rescan_modules();
}

/* ------------------------------------------------------------ capture */

static __thread int t_in_capture;
/* The calling thread's stack extent (hi 1: unknown), for the verified cache. */
static __thread uintptr_t t_stack_lo, t_stack_hi;

/* libgcc's unwinder called directly rather than through backtrace(): with
 * each frame's pc it gives the frame's CFA, i.e. where the frame's return
 * address lies on the stack (x86-64: CFA - 8), which the verified cache below
 * checks later calls against.  Resolved from libgcc_s.so.1 at init, as glibc's
 * backtrace() itself does, so the shim gains no link dependency. */
static _Unwind_Reason_Code (*g_ub)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*g_ub_ip)(struct _Unwind_Context *);
static _Unwind_Word (*g_ub_cfa)(struct _Unwind_Context *);
static int g_own_frames_cfa = 2;

typedef struct ub_state {
    void **ips;
    uint64_t *cfas;
    int n, max;
} ub_state;

static _Unwind_Reason_Code ub_step(struct _Unwind_Context *ctx, void *arg)
{
    ub_state *st = arg;
    if (st->n >= st->max)
        return _URC_END_OF_STACK;
    st->ips[st->n] = (void *)g_ub_ip(ctx);
    st->cfas[st->n] = (uint64_t)g_ub_cfa(ctx);
    st->n++;
    return _URC_NO_REASON;
}

__attribute__((noinline))
static int unwind_with_cfa(void **ips, uint64_t *cfas, int max)
{
    ub_state st = { ips, cfas, 0, max };
    g_ub(ub_step, &st);
    /* The outermost frame's return address is 0: dropped, as backtrace() does. */
    if (st.n > 1 && ips[st.n - 1] == NULL)
        st.n--;
    return st.n;
}

/* Unwind the calling thread and return the id of its stack (0: none).
 * anchor != 0 (a verified capture, see verified_stack): unwind with CFAs and
 * store with the stack where each of its return addresses lay, as a distance
 * above `anchor`; *slot_out is then the table entry (NULL when none). */
__attribute__((noinline, no_sanitize_address))
static uint32_t capture_native_stack(int max_depth, uintptr_t anchor, const stack_slot **slot_out)
{
    void *raw[STACK_DEPTH_MAX + OWN_FRAMES_MAX];
    uint64_t cfas[STACK_DEPTH_MAX + OWN_FRAMES_MAX];
    int with_cfa = anchor != 0 && g_ub != NULL;
    int own = with_cfa ? g_own_frames_cfa : g_own_frames;
    ss_t_slow_work++;   /* an unwind: milliseconds the first time into a library */
    int n = with_cfa ? unwind_with_cfa(raw, cfas, max_depth + own) : g_unwind(raw, max_depth + own);
    *slot_out = NULL;
    /* Our own frames below the capture (the CUPTI callback's dispatch):
     * never the call site, so not worth a slot. */
    while (own < n && (uint64_t)(uintptr_t)raw[own] - g_self_lo < g_self_hi - g_self_lo)
        own++;
    if (n <= own)
        return 0;
    uint32_t depth = (uint32_t)(n - own);
    uint64_t addrs[STACK_DEPTH_MAX + OWN_FRAMES_MAX];
    uint32_t offs[STACK_DEPTH_MAX + OWN_FRAMES_MAX];
    const mod_set *set = atomic_load_explicit(&g_mods, memory_order_acquire);
    int unknown = 0;
    for (uint32_t i = 0; i < depth; i++) {
        addrs[i] = (uint64_t)(uintptr_t)raw[i + own];
        if (!unknown && !addr_in_known_module(set, addrs[i]))
            unknown = 1;
        if (with_cfa) {
            /* libgcc reports with each return address the CFA of the frame
             * it returns from (the callee's), just above which the call
             * pushed it.  Checked here, on the live stack: a slot that does
             * not hold the address leaves this stack unverifiable. */
            uint64_t slot = cfas[i + own] - 8u;
            if (slot < anchor || slot - anchor >= (1u << 30) || slot + 8u > t_stack_hi ||
                *(const volatile uint64_t *)(uintptr_t)slot != addrs[i])
                with_cfa = 0;
            else
                offs[i] = (uint32_t)(slot - anchor);
        }
    }
    if (unknown)
        maybe_rescan_modules();
    return stack_id_for(addrs, depth, with_cfa ? offs : NULL, slot_out);
}

/* Calls too frequent to unwind each time (kernel launches off the legacy
 * stream, tens of thousands per second in a training loop, and blameable
 * calls that returned quickly) go through a per-thread cache of the stacks
 * recently captured from the same place; a cached stack is given to a call
 * only after checking, word by word, that every one of its return addresses
 * is on the calling thread's stack right now where it lay when the stack was
 * unwound.  Each frame's layout is fixed by its pc (no alloca, no dynamic
 * realignment), so equal return addresses in the same places mean the same
 * chain of frames: the call gets its own stack, never another call's.  A
 * frame whose layout does vary fails the check and is unwound again (slower,
 * still right).  ~16 loads against ~5 us for libgcc's unwinder.
 *
 * The check reads the thread's own stack above the capture's frame, bounded
 * by the thread's stack extent.  It needs the return-address slot of each
 * frame (CFA - 8 on x86-64); elsewhere every such call is unwound. */
#if defined(__x86_64__)
#define SS_VERIFY_SLOTS 1
#else
#define SS_VERIFY_SLOTS 0
#endif

#define SITE_SETS 64u           /* power of two */
#define SITE_WAYS 4u
/* Calls that took at least this long always get a stack of their own. */
#define SLOW_CALL_NS 20000u

typedef struct site_entry {
    uint64_t key;
    const stack_slot *s;        /* a published table entry with slot offsets */
} site_entry;

static __thread site_entry t_sites[SITE_SETS][SITE_WAYS];
static __thread uint8_t t_site_victim[SITE_SETS];

static int thread_stack_known(void)
{
    if (t_stack_hi == 0) {
        t_stack_hi = 1;
        pthread_attr_t a;
        void *addr;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &addr, &size) == 0 && size > 0) {
                t_stack_lo = (uintptr_t)addr;
                t_stack_hi = (uintptr_t)addr + size;
            }
            pthread_attr_destroy(&a);
        }
    }
    return t_stack_hi > 1;
}

/* Reads other frames of this thread's stack: not instrumented (their
 * redzones are not ours to judge). */
__attribute__((no_sanitize_address))
static int stack_is_here(const stack_slot *s, uintptr_t anchor)
{
    if (anchor < t_stack_lo)
        return 0;                   /* running on another stack (a coroutine's) */
    for (uint32_t i = 0; i < s->depth; i++) {
        uintptr_t at = anchor + s->slot_off[i];
        if (at + 8u > t_stack_hi || *(const volatile uint64_t *)at != s->addrs[i])
            return 0;
    }
    return 1;
}

/* Always inlined: capture_native_stack() must be called from the entry
 * point's own frame for the own-frame counts to hold. */
static inline __attribute__((always_inline))
uint32_t verified_stack(uint64_t key, int max_depth, uintptr_t anchor)
{
    const stack_slot *s;
    if (!SS_VERIFY_SLOTS || g_ub == NULL || !thread_stack_known())
        return capture_native_stack(max_depth, 0, &s);
    /* murmur3's finalizer: every bit of the key reaches the set index (a
     * plain multiply carries only upwards, so keys differing in their top
     * bits -- the API, for calls whose wrapper address is not known -- all
     * fell into one set of 4 ways and thrashed: ~1.9 us a call, unwound,
     * on the H100's copy-bound benchmark) */
    uint64_t h = key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    uint32_t set = (uint32_t)h & (SITE_SETS - 1u);
    site_entry *e = t_sites[set];
    for (uint32_t w = 0; w < SITE_WAYS; w++)
        if (e[w].s != NULL && e[w].key == key && stack_is_here(e[w].s, anchor))
            return e[w].s->id;
    uint32_t id = capture_native_stack(max_depth, anchor, &s);
    if (s != NULL && s->has_slots) {
        uint32_t w = t_site_victim[set]++ % SITE_WAYS;
        e[w].key = key;
        e[w].s = s;
    }
    return id;
}

/* Always inlined into the two entry points below, so that capture_native_stack()
 * is called from their frame (the own-frame counts are measured for that
 * shape); `anchor` is that frame's address. */
static inline __attribute__((always_inline))
void callsite_capture_body(ss_api_rec *r, int want, uintptr_t caller, uintptr_t anchor)
{
    int mode = ss_cfg.stacks;
    if (mode <= 0 || t_in_capture)
        return;
    t_in_capture = 1;
    int depth = (r->flags & SS_API_F_CUPTI_CB) ? g_depth_cupti : g_depth_interposer;
    const stack_slot *s;
    if (mode >= 2 || (want == SS_STACK_FULL && r->t_exit - r->t_enter >= SLOW_CALL_NS))
        r->stack_id = capture_native_stack(depth, 0, &s);
    else if (want == SS_STACK_FULL || want == SS_STACK_SAMPLED)
        /* Keyed by what most often has one stack (the wrapper's return
         * address, the API and the launched function): only a hint of where
         * to look, the check decides. */
        r->stack_id = verified_stack((uint64_t)caller ^ ((uint64_t)r->cbid << 48) ^ (r->func * 0x9e3779b97f4a7c15ull),
                                     depth, anchor);
    /* The Python stack of every call: the direct reader costs ~100-500 ns
     * and returns at once on a thread that runs no Python. */
    r->pystack_id = ss_pystack_capture();
    t_in_capture = 0;
}

__attribute__((noinline))
void ss_callsite_capture_launch(ss_api_rec *r, int want, uintptr_t caller)
{
    callsite_capture_body(r, want, caller, (uintptr_t)__builtin_frame_address(0));
    /* Keep this frame a real frame for the own-frame counts (no tail call). */
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline))
void ss_callsite_capture(ss_api_rec *r, int want)
{
    callsite_capture_body(r, want, 0, (uintptr_t)__builtin_frame_address(0));
    __asm__ volatile("" ::: "memory");
}

/* The extent of the object that holds the shim (for capture_native_stack). */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uint64_t self = (uint64_t)(uintptr_t)arg;
    uint64_t lo, hi;
    load_extent(info, &lo, &hi);
    if (hi == 0 || self < info->dlpi_addr + lo || self >= info->dlpi_addr + hi)
        return 0;
    g_self_lo = info->dlpi_addr + lo;
    g_self_hi = info->dlpi_addr + hi;
    return 1;
}

static void map_stack_table(void)
{
    void *p = mmap(NULL, STACK_SLOTS * sizeof(stack_slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    g_stacks = p == MAP_FAILED ? NULL : p;
}

/* Where does the caller of the function that calls the unwinder appear in
 * the result?  backtrace() puts it at index 1, unw_backtrace may report its
 * own frame first: measure instead of assuming. */
__attribute__((noinline))
static int calibrate_own_frames(void)
{
    void *buf[OWN_FRAMES_MAX];
    int n = g_unwind(buf, OWN_FRAMES_MAX);
    void *caller = __builtin_return_address(0);
    for (int i = 0; i < n; i++)
        if (buf[i] == caller)
            return i + 1;       /* + ss_callsite_capture's own frame */
    return -1;
}

__attribute__((noinline))
static int calibrate_own_frames_cfa(void)
{
    void *buf[OWN_FRAMES_MAX];
    uint64_t cfas[OWN_FRAMES_MAX];
    int n = unwind_with_cfa(buf, cfas, OWN_FRAMES_MAX);
    void *caller = __builtin_return_address(0);
    for (int i = 0; i < n; i++)
        if (buf[i] == caller)
            return i + 1;
    return -1;
}

/* libgcc's unwinder with CFAs, for the verified cache (not used, i.e. every
 * frequent call is unwound, when it cannot be found or measured). */
static void resolve_cfa_unwinder(void)
{
    void *lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
    *(void **)&g_ub_ip = dlsym(lib, "_Unwind_GetIP");
    *(void **)&g_ub_cfa = dlsym(lib, "_Unwind_GetCFA");
    *(void **)&g_ub = dlsym(lib, "_Unwind_Backtrace");
    if (!g_ub_ip || !g_ub_cfa || !g_ub) {
        g_ub = NULL;
        return;
    }
    int own = calibrate_own_frames_cfa();
    if (own >= 2 && own <= OWN_FRAMES_MAX)
        g_own_frames_cfa = own;
    else
        g_ub = NULL;
}

static void choose_unwinder(void)
{
    resolve_cfa_unwinder();
    const char *want = getenv("SYNCSIGHT_UNWINDER");
    if (!want || strcmp(want, "backtrace") != 0) {
        void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
        unwinder_fn unw = NULL;
        if (lib)
            *(void **)&unw = dlsym(lib, "unw_backtrace");
        if (unw) {
            g_unwind = unw;
            g_unwinder_name = "libunwind";
            int own = calibrate_own_frames();
            if (own >= 2 && own <= OWN_FRAMES_MAX) {
                g_own_frames = own;
                return;
            }
        }
    }
    /* backtrace() loads libgcc_s on its first call (dlopen + malloc): the
     * calibration does that here, not inside the first intercepted call. */
    g_unwind = backtrace;
    g_unwinder_name = "backtrace";
    int own = calibrate_own_frames();
    g_own_frames = own >= 2 && own <= OWN_FRAMES_MAX ? own : 2;
}

const char *ss_callsite_unwinder(void) { return g_unwinder_name; }

void ss_callsite_init(void)
{
    const char *d = getenv("SYNCSIGHT_STACK_DEPTH");
    if (d && *d) {
        long v = strtol(d, NULL, 10);
        g_depth_interposer = v < 1 ? 1 : v > STACK_DEPTH_MAX ? STACK_DEPTH_MAX : (int)v;
        g_depth_cupti = g_depth_interposer;
    }
    if (ss_cfg.stacks <= 0)
        return;
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&find_self);
    if (!g_stacks)
        map_stack_table();
    choose_unwinder();
    rescan_modules();
}

void ss_callsite_atfork_child(void)
{
    /* The child writes a new trace: the parent's stack ids and module records
     * are not in it.  Zero the table (fresh zero pages, no copying) and start
     * the map afresh; it is written again at the child's first capture. */
    if (g_stacks)
        madvise(g_stacks, STACK_SLOTS * sizeof(stack_slot), MADV_DONTNEED);
    atomic_store(&g_next_stack_id, 1);
    atomic_store(&g_table_full_noted, 0);
    pthread_mutex_init(&g_mod_lock, NULL);
    atomic_store(&g_mods, NULL);
    __atomic_store_n(&g_adds_seen, 0, __ATOMIC_RELAXED);
    t_in_capture = 0;
    /* The cached stacks point into the table just cleared. */
    memset(t_sites, 0, sizeof t_sites);
    ss_pystack_atfork_child();
}
