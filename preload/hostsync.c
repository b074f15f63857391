/*
 * Host thread ordering: the synchronization between host threads that can
 * order CUDA work (docs/shim.md, "Host thread ordering"), recorded as
 * SS_REC_HOST_SYNC releases and acquires.
 *
 * Interposed (LD_PRELOAD; the real ones through dlsym(RTLD_NEXT)): pthread
 * mutexes, condition waits, rwlocks, barriers, POSIX semaphores, thread
 * creation/exit/join, GCC's libgomp (GOMP_parallel*, the team barriers), and
 * LLVM's libomp through its OMPT tool interface (ompt_start_tool).
 *
 * Cost model.  A lock taken millions of times must stay cheap, so a thread
 * records only what can carry CUDA work to another thread:
 *   - each thread has an `epoch` that grows when it learns something new:
 *     its own recorded CUDA call (ss_hostsync_api_begin) or written acquires;
 *     a thread that never did either (epoch 0, nothing pending) is clean and
 *     its releases cost a TLS load;
 *   - a release of O is recorded only when the thread knows more than it last
 *     published to O (a small per-thread cache: O -> epoch published), and
 *     then takes the next global seq and stores it (atomic max) in O's slot of
 *     a fixed, lock-free open-addressing table;
 *   - an acquire of O looks up O's slot (one load when O was never released
 *     by a thread with something to say); a seq newer than what the thread
 *     already saw for O becomes a pending acquire in TLS, written before the
 *     thread's next CUDA call record or recorded release.
 * Locks taken by the shim itself, inside a CUDA call being recorded, or by
 * code of the CUDA libraries (libcuda, libcudart, libcupti, libcublas, ...)
 * are not program synchronization of interest and are never recorded: their
 * incidental ordering would hide every race between threads.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_support.h"
#include "hostsync.h"

#define HS_CALLER() ((uintptr_t)__builtin_return_address(0))
#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------- state */

static _Atomic int hs_on;               /* set once by ss_hostsync_init */
static _Atomic int hs_ompt_on;          /* our OMPT tool is libomp's (hs_ompt_init) */
static void *hs_self_base;              /* our lowest mapped address (ss_object_of) */
static _Atomic uint64_t hs_next_seq;
static _Atomic uint64_t hs_next_key;    /* thread-creation and team numbers */
static pthread_key_t hs_key;

/* Objects released by threads with something to say: key -> latest seq. */
#define HS_SLOTS  (1u << 17)            /* 2 MiB of BSS, touched only where used */
#define HS_PROBES 32u
typedef struct hs_slot { _Atomic uint64_t key; _Atomic uint64_t seq; } hs_slot;
static hs_slot hs_table[HS_SLOTS];
static hs_slot hs_bucket;               /* SS_HSYNC_BUCKET: objects without a slot */
static _Atomic int hs_full;
static _Atomic int hs_used;             /* the table holds something (fork reset) */

/* Per thread, per object: the epoch this thread last published to it and
 * the newest seq it acquired (or released) of it.  Set-associative
 * (hostsync.h), most recently used first in each set.  A lost entry costs
 * records, never a wrong one; when the cache was direct-mapped, a lock and
 * the thread's own lock whose addresses met in one slot (1 run in 64, by
 * ASLR) evicted each other on every lock: 3.2 million records for a million
 * lock pairs where ~700 were needed (CI, test_hostsync). */
#define HS_PENDING 16u
#define HS_OMPT_LEVELS 8u               /* OMPT nesting levels followed per thread */
typedef struct hs_centry { uint64_t key, pub, acq; } hs_centry;
typedef struct hs_pend { uint64_t object, seq, time; uint16_t what, team; uint32_t pad; } hs_pend;
struct hs_team;
typedef struct hs_team_ctx {            /* one per thread per OpenMP region */
    struct hs_team *team;
    uint64_t base;                      /* epoch the whole team is known to know */
    struct hs_team_ctx *prev;
} hs_team_ctx;
typedef struct hs_thread {
    uint64_t epoch;
    uint32_t npending;
    int busy;                           /* writing records: nested wrappers pass through */
    uint64_t last_team_pub;             /* epoch at this thread's last OpenMP join */
    uint32_t last_team_master;          /* the encountering thread of that join */
    uint32_t omp_depth;                 /* OMPT: implicit tasks begun, not ended */
    hs_team_ctx omp_ctx[HS_OMPT_LEVELS];  /* OMPT: per nesting level; team NULL: none */
    hs_team_ctx *team;
    struct hs_team *legacy;             /* GOMP_parallel_start .. _end, innermost */
    uint64_t legacy_bits;               /* per nesting level: 1 = wrapped */
    uint32_t legacy_depth;
    hs_centry cache[HS_CACHE_SETS * HS_CACHE_WAYS];
    hs_pend pending[HS_PENDING];
} hs_thread;

static __thread hs_thread *tls_hs;

static void hs_thread_free(void *p)
{
    if (p == tls_hs)
        tls_hs = NULL;
    free(p);
}

static hs_thread *hs_self(void)
{
    hs_thread *t = tls_hs;
    if (HS_LIKELY(t != NULL))
        return t;
    int e = errno;
    t = calloc(1, sizeof *t);
    if (t) {
        tls_hs = t;
        pthread_setspecific(hs_key, t);
    }
    errno = e;
    return t;
}

/* --------------------------------------------------- real functions */

struct hs_names { const char *v[256]; int n; };

static int hs_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct hs_names *c = arg;
    if (info->dlpi_name && info->dlpi_name[0] && (void *)info->dlpi_addr != hs_self_base && c->n < 256)
        c->v[c->n++] = info->dlpi_name;
    return 0;
}

static int hs_in_self(const void *p)
{
    const void *start;
    return hs_self_base != NULL && ss_object_of(p, NULL, &start) && start == hs_self_base;
}

/* dlvsym (glibc's pthread_cond_* have an old and a new version), then
 * dlsym(RTLD_NEXT); for libgomp also every loaded object in turn: a library
 * dlopen'ed RTLD_LOCAL (a Python extension) may bring its own, renamed copy
 * (PyTorch's libgomp-<hash>.so.1) that is not in the global scope. */
static void *hs_resolve(const char *name, const char *version, int search_all, void *volatile *slot)
{
    void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
    if (!p)
        p = dlsym(RTLD_NEXT, name);
    if (!p && search_all) {
        struct hs_names names = { .n = 0 };
        dl_iterate_phdr(hs_collect, &names);
        for (int i = 0; i < names.n && !p; i++) {
            void *h = dlopen(names.v[i], RTLD_NOLOAD | RTLD_LAZY);
            if (!h)
                continue;
            void *q = dlsym(h, name);
            if (q && !hs_in_self(q))
                p = q;
            dlclose(h);
        }
    }
    if (p)
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
}

__attribute__((noreturn, cold)) static void hs_missing(const char *name)
{
    fprintf(stderr, "syncsight: cannot find the real %s\n", name);
    abort();
}

/* REAL(fn, version, search_all): the next definition of fn; aborts when
 * there is none (the program calls it, so its library is loaded). */
#define HS_DECL(fn) static void *volatile hs_real_##fn
#define HS_REAL(fn, ver, all)                                                                   \
    ({                                                                                          \
        void *r_ = __atomic_load_n(&hs_real_##fn, __ATOMIC_ACQUIRE);                            \
        if (HS_UNLIKELY(r_ == NULL) && (r_ = hs_resolve(#fn, ver, all, &hs_real_##fn)) == NULL) \
            hs_missing(#fn);                                                                    \
        (__typeof__(&fn))r_;                                                                    \
    })

#if defined(__x86_64__)
#define HS_COND_VERSION "GLIBC_2.3.2"
#else
#define HS_COND_VERSION NULL
#endif

/* -------------------------------------------------- what is ignored */

static int hs_classify(uintptr_t caller)
{
    /* Which object, by ss_object_of: dladdr's symbol scan here made 28% of a
     * PyTorch training loop's samples while host sync was recorded (H100,
     * docs/performance.md 2026-11-23), once call sites missed the cache. */
    const char *name;
    const void *start;
    if (!ss_object_of((const void *)caller, &name, &start))
        return 0;                      /* anonymous code (a JIT): the program's */
    if (start == hs_self_base)
        return 1;
    const char *slash = strrchr(name, '/');
    if (slash)
        name = slash + 1;
    static const char *const cuda_libs[] = {
        "libcuda.", "libcudart", "libcupti", "libcublas", "libcudnn", "libcufft", "libcurand", "libcusparse",
        "libcusolver", "libcutensor", "libcufile", "libnvrtc", "libnvJitLink", "libnvidia-", "libnccl",
        "libnvToolsExt", "libnvperf", "libnvjpeg", "libsanitizer-public",
    };
    for (size_t i = 0; i < sizeof cuda_libs / sizeof cuda_libs[0]; i++)
        if (strncmp(name, cuda_libs[i], strlen(cuda_libs[i])) == 0)
            return 1;
    /* LLVM's libomp, while its OMPT callbacks give the fork, join and
     * barrier edges: its own mutexes and condition variables (passive
     * waits, thread pool) are its implementation, not the program's. */
    if (atomic_load_explicit(&hs_ompt_on, memory_order_relaxed) &&
        (strncmp(name, "libomp.", 7) == 0 || strncmp(name, "libomp-", 7) == 0 || strncmp(name, "libiomp", 7) == 0))
        return 1;
    return 0;
}

/* Per call site (return address): ignored or not.  Four ways per set, so
 * that two hot call sites whose hashes meet do not evict each other on
 * every lock (each miss is an object lookup). */
#define HS_CALLER_SLOTS 16384u
#define HS_CALLER_WAYS  4u
static _Atomic uint64_t hs_callers[HS_CALLER_SLOTS];   /* (addr << 1) | ignored */

static int hs_caller_ignored(uintptr_t caller)
{
    if (caller == 0)
        return 0;
    uint64_t key = (uint64_t)caller << 1;
    uint32_t set = hs_hash(caller) & (HS_CALLER_SLOTS - 1) & ~(HS_CALLER_WAYS - 1);
    _Atomic uint64_t *ways = &hs_callers[set];
    for (uint32_t w = 0; w < HS_CALLER_WAYS; w++) {
        uint64_t v = atomic_load_explicit(&ways[w], memory_order_relaxed);
        if (v != 0 && (v & ~1ull) == key)
            return (int)(v & 1);
    }
    int ign = hs_classify(caller);
    /* An empty way, else one chosen by the address: racing threads may
     * overwrite each other's entry, which costs a lookup, never a wrong
     * answer (an entry is one atomic word). */
    uint32_t victim = (uint32_t)(caller >> 4) & (HS_CALLER_WAYS - 1);
    for (uint32_t w = 0; w < HS_CALLER_WAYS; w++)
        if (atomic_load_explicit(&ways[w], memory_order_relaxed) == 0) {
            victim = w;
            break;
        }
    atomic_store_explicit(&ways[victim], key | (uint64_t)ign, memory_order_relaxed);
    return ign;
}

/* Inside a CUDA call being recorded (the interposer's or CUPTI's), or called
 * from the shim or a CUDA library: not the program's synchronization. */
static int hs_ignored(uintptr_t caller)
{
    ss_api_tls *a = ss_api_thread();
    if (a->active != NULL || a->cb_depth != 0)
        return 1;
    return hs_caller_ignored(caller);
}

/* -------------------------------------------------------- the table */

static inline hs_slot *hs_find(uint64_t key)
{
    uint32_t h = hs_hash(key);
    for (uint32_t i = 0; i < HS_PROBES; i++) {
        hs_slot *s = &hs_table[(h + i) & (HS_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == key)
            return s;
        if (k == 0)
            return NULL;
    }
    return NULL;
}

/* The slot of `key`, or the shared bucket (then *object = SS_HSYNC_BUCKET)
 * when its probe window is full: more ordering than there was, never less. */
static hs_slot *hs_insert(uint64_t key, uint64_t *object)
{
    uint32_t h = hs_hash(key);
    for (uint32_t i = 0; i < HS_PROBES; i++) {
        hs_slot *s = &hs_table[(h + i) & (HS_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == key)
            return s;
        if (k == 0) {
            uint64_t expect = 0;
            if (atomic_compare_exchange_strong_explicit(&s->key, &expect, key, memory_order_acq_rel,
                                                        memory_order_acquire)) {
                atomic_store_explicit(&hs_used, 1, memory_order_relaxed);
                return s;
            }
            if (expect == key)
                return s;
        }
    }
    if (!atomic_exchange(&hs_full, 1))
        ss_note(SS_NOTE_HOST_SYNC_FULL, HS_SLOTS,
                "host sync table full: further synchronization objects share one (more ordering than the "
                "program had)", 1);
    *object = SS_HSYNC_BUCKET;
    return &hs_bucket;
}

static inline void hs_store_max(_Atomic uint64_t *p, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(p, memory_order_relaxed);
    while (cur < v && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_release,
                                                             memory_order_relaxed))
        ;
}

/* An object is destroyed: its address may come back as another object. */
static void hs_forget(const void *obj)
{
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed))
        return;
    hs_slot *s = hs_find((uint64_t)(uintptr_t)obj);
    if (s)
        atomic_store_explicit(&s->seq, 0, memory_order_relaxed);
}

/* ---------------------------------------------------------- records */

static void hs_write(uint16_t kind, uint64_t object, uint64_t seq, uint16_t what, uint64_t time)
{
    ss_host_sync_rec *r = ss_rec_begin(SS_REC_HOST_SYNC, sizeof *r, 0);
    if (!r)
        return;
    r->h.flags = kind;
    r->time = time;
    r->object = object;
    r->seq = seq;
    r->tid = ss_tid();
    r->what = what;
    ss_rec_commit(r);
}

/* key's entry, or NULL: nothing known of it. */
static inline const hs_centry *hs_centry_find(const hs_thread *t, uint64_t key)
{
    const hs_centry *set = &t->cache[hs_cache_set(key) * HS_CACHE_WAYS];
    for (uint32_t w = 0; w < HS_CACHE_WAYS; w++)
        if (set[w].key == key)
            return &set[w];
    return NULL;
}

/* key's entry, moved first in its set; new (nothing known) in place of the
 * set's least recently used one when it had none. */
static inline hs_centry *hs_centry_get(hs_thread *t, uint64_t key)
{
    hs_centry *set = &t->cache[hs_cache_set(key) * HS_CACHE_WAYS];
    uint32_t w = 0;
    while (w < HS_CACHE_WAYS - 1 && set[w].key != key)
        w++;
    hs_centry e = set[w].key == key ? set[w] : (hs_centry){ key, 0, 0 };
    memmove(&set[1], &set[0], w * sizeof *set);
    set[0] = e;
    return &set[0];
}

/* Write the pending acquires (t->busy held).  The thread now knows more:
 * epoch + 1.  When the only acquire was of O and O already had everything
 * the thread knew, O still does. */
static void hs_flush(hs_thread *t)
{
    uint32_t n = t->npending;
    if (n == 0)
        return;
    uint64_t old = t->epoch;
    for (uint32_t i = 0; i < n; i++) {
        const hs_pend *p = &t->pending[i];
        hs_write(SS_HSYNC_ACQUIRE, p->object, p->seq, p->what, p->time);
    }
    t->npending = 0;
    t->epoch = old + 1;
    if (n == 1) {
        uint64_t k = t->pending[0].object;
        const hs_centry *known = hs_centry_find(t, k);
        if (old == 0 || (known != NULL && known->pub == old)) {
            hs_centry *e = hs_centry_get(t, k);
            e->pub = old + 1;
            if (e->acq < t->pending[0].seq)
                e->acq = t->pending[0].seq;
        }
    }
}

static void hs_add_pending(hs_thread *t, uint64_t object, uint64_t seq, uint16_t what, int team)
{
    uint64_t now = ss_now();
    for (uint32_t i = 0; i < t->npending; i++) {
        hs_pend *p = &t->pending[i];
        if (p->object == object) {
            if (seq > p->seq) {
                p->seq = seq;
                p->time = now;
            }
            p->team = (uint16_t)(p->team && team);
            return;
        }
    }
    if (t->npending == HS_PENDING) {
        int e = errno;
        t->busy = 1;
        hs_flush(t);
        t->busy = 0;
        errno = e;
    }
    t->pending[t->npending++] = (hs_pend){ object, seq, now, what, (uint16_t)team, 0 };
}

/* Does a release of `object` by t publish anything new? */
static inline int hs_release_needed(const hs_thread *t, uint64_t object)
{
    for (uint32_t i = 0; i < t->npending; i++)
        if (t->pending[i].object != object)
            return 1;
    const hs_centry *e = hs_centry_find(t, object);
    uint64_t pub = e != NULL ? e->pub : 0;
    return t->epoch > pub;
}

/* Record a release of `object` (t->busy must be clear); returns its seq. */
static uint64_t hs_do_release(hs_thread *t, uint64_t object, uint16_t what, _Atomic uint64_t *team_seq)
{
    int e = errno;
    t->busy = 1;
    hs_flush(t);
    uint64_t obj = object;
    hs_slot *s = team_seq ? NULL : hs_insert(object, &obj);
    uint64_t seq = atomic_fetch_add_explicit(&hs_next_seq, 1, memory_order_relaxed) + 1;
    hs_store_max(team_seq ? team_seq : &s->seq, seq);
    hs_write(SS_HSYNC_RELEASE, obj, seq, what, ss_now());
    hs_centry *c = hs_centry_get(t, object);
    c->pub = t->epoch;
    if (obj == object)
        c->acq = seq;
    t->busy = 0;
    errno = e;
    return seq;
}

__attribute__((noinline)) static void hs_release_slow(hs_thread *t, uint64_t object, uint16_t what,
                                                      uintptr_t caller)
{
    if (hs_ignored(caller) || !ss_recording())
        return;
    hs_do_release(t, object, what, NULL);
}

/* Before the real release operation. */
static inline void hs_release(const void *obj, uint16_t what, uintptr_t caller)
{
    /* While sampled recording is OFF nothing is paired across the gap (the
     * analyzer takes an OFF span as a barrier): releases and acquires of
     * mutexes, rwlocks, semaphores and barriers are not recorded then, at the
     * cost of one load (measured on the H100: a PyTorch loop's 32 threads
     * made ~630 000 of them in 1 550 steps), nor a join's acquire.  Thread
     * starts, exits and OpenMP team edges, rare, are recorded always. */
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed) || ss_hot_state_now() == SS_HOT_OFF)
        return;
    hs_thread *t = tls_hs;            /* NULL: the thread never had anything to say */
    if (HS_LIKELY(t == NULL) || t->busy)
        return;
    uint64_t object = (uint64_t)(uintptr_t)obj;
    if (HS_LIKELY(!hs_release_needed(t, object)))
        return;
    hs_release_slow(t, object, what, caller);
}

/* An acquire of `object` that synchronized with release `seq`. `check`:
 * see whether the caller is ignored. */
__attribute__((noinline)) static void hs_acquire_seq(uint64_t object, uint64_t seq, uint16_t what,
                                                     uintptr_t caller, int check, int team)
{
    hs_thread *t = hs_self();
    if (!t || t->busy)
        return;
    const hs_centry *c = hs_centry_find(t, object);
    if (c != NULL && seq <= c->acq)
        return;
    if (check && hs_ignored(caller))
        return;
    hs_centry_get(t, object)->acq = seq;
    hs_add_pending(t, object, seq, what, team);
}

/* After the real acquire operation succeeded. */
static inline void hs_acquire(const void *obj, uint16_t what, uintptr_t caller)
{
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed) || ss_hot_state_now() == SS_HOT_OFF)
        return;                       /* OFF: see hs_release */
    uint64_t object = (uint64_t)(uintptr_t)obj;
    hs_slot *s = hs_find(object);
    if (HS_LIKELY(s == NULL)) {
        if (HS_LIKELY(!atomic_load_explicit(&hs_full, memory_order_relaxed)))
            return;
        s = &hs_bucket;
        object = SS_HSYNC_BUCKET;
    }
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
    if (seq == 0)
        return;
    hs_acquire_seq(object, seq, what, caller, 1, 0);
}

/* --------------------------------------------- interface to the shim */

void ss_hostsync_api_begin(void)
{
    hs_thread *t;
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed) || (t = hs_self()) == NULL)
        return;
    if (t->busy++ == 0) {
        if (t->npending) {
            int e = errno;
            hs_flush(t);
            errno = e;
        }
        t->epoch++;
    }
}

void ss_hostsync_api_end(void)
{
    hs_thread *t = tls_hs;
    if (t && t->busy > 0)
        t->busy--;
}

static void hs_atfork_child(void)
{
    /* The child's trace is a new one: nothing released in the parent is in
     * it.  Only this thread exists now. */
    if (atomic_load_explicit(&hs_used, memory_order_relaxed)) {
        for (uint32_t i = 0; i < HS_SLOTS; i++)
            if (atomic_load_explicit(&hs_table[i].key, memory_order_relaxed))
                atomic_store_explicit(&hs_table[i].seq, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&hs_bucket.seq, 0, memory_order_relaxed);
    hs_thread *t = tls_hs;
    if (t) {
        t->epoch = 0;
        t->npending = 0;
        t->busy = 0;
        t->last_team_pub = 0;
        memset(t->cache, 0, sizeof t->cache);
    }
}

int pthread_mutex_unlock(pthread_mutex_t *m);

void ss_hostsync_init(void)
{
    const char *v = getenv("SYNCSIGHT_HOST_SYNC");
    if (v && v[0] == '0' && v[1] == '\0')
        return;
    const void *self;
    if (!ss_object_of((const void *)ss_hostsync_init, NULL, &self))
        return;
    hs_self_base = (void *)self;
    /* Only when our wrappers are the ones the program calls (LD_PRELOAD, not
     * CUDA_INJECTION64_PATH): otherwise there is nothing to see. */
    void *seen = dlsym(RTLD_DEFAULT, "pthread_mutex_unlock");
    if (seen == NULL || !hs_in_self(seen))
        return;
    if (pthread_key_create(&hs_key, hs_thread_free) != 0)
        return;
    pthread_atfork(NULL, NULL, hs_atfork_child);
    atomic_store_explicit(&hs_on, 1, memory_order_release);
}

/* ----------------------------------------------------------- mutexes */

HS_DECL(pthread_mutex_lock);
HS_DECL(pthread_mutex_trylock);
HS_DECL(pthread_mutex_timedlock);
HS_DECL(pthread_mutex_clocklock);
HS_DECL(pthread_mutex_unlock);
HS_DECL(pthread_mutex_destroy);

#define HS_LOCKED(rc) ((rc) == 0 || (rc) == EOWNERDEAD)

SS_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    int rc = HS_REAL(pthread_mutex_lock, NULL, 0)(m);
    if (HS_LOCKED(rc))
        hs_acquire(m, SS_HSYNC_MUTEX, HS_CALLER());
    return rc;
}

SS_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
    int rc = HS_REAL(pthread_mutex_trylock, NULL, 0)(m);
    if (HS_LOCKED(rc))
        hs_acquire(m, SS_HSYNC_MUTEX, HS_CALLER());
    return rc;
}

SS_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    int rc = HS_REAL(pthread_mutex_timedlock, NULL, 0)(m, abstime);
    if (HS_LOCKED(rc))
        hs_acquire(m, SS_HSYNC_MUTEX, HS_CALLER());
    return rc;
}

SS_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
    int rc = HS_REAL(pthread_mutex_clocklock, NULL, 0)(m, clock, abstime);
    if (HS_LOCKED(rc))
        hs_acquire(m, SS_HSYNC_MUTEX, HS_CALLER());
    return rc;
}

SS_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
    hs_release(m, SS_HSYNC_MUTEX, HS_CALLER());
    return HS_REAL(pthread_mutex_unlock, NULL, 0)(m);
}

SS_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
    int rc = HS_REAL(pthread_mutex_destroy, NULL, 0)(m);
    if (rc == 0)
        hs_forget(m);
    return rc;
}

/* ------------------------------------------------- condition waits */

HS_DECL(pthread_cond_wait);
HS_DECL(pthread_cond_timedwait);
HS_DECL(pthread_cond_clockwait);

/* The wait unlocks the mutex and locks it again, whatever it returns. */
SS_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    uintptr_t caller = HS_CALLER();
    hs_release(m, SS_HSYNC_MUTEX, caller);
    int rc = HS_REAL(pthread_cond_wait, HS_COND_VERSION, 0)(c, m);
    hs_acquire(m, SS_HSYNC_MUTEX, caller);
    return rc;
}

SS_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
    uintptr_t caller = HS_CALLER();
    hs_release(m, SS_HSYNC_MUTEX, caller);
    int rc = HS_REAL(pthread_cond_timedwait, HS_COND_VERSION, 0)(c, m, abstime);
    hs_acquire(m, SS_HSYNC_MUTEX, caller);
    return rc;
}

SS_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                     const struct timespec *abstime)
{
    uintptr_t caller = HS_CALLER();
    hs_release(m, SS_HSYNC_MUTEX, caller);
    int rc = HS_REAL(pthread_cond_clockwait, NULL, 0)(c, m, clock, abstime);
    hs_acquire(m, SS_HSYNC_MUTEX, caller);
    return rc;
}

/* ----------------------------------------------------------- rwlocks */

HS_DECL(pthread_rwlock_rdlock);
HS_DECL(pthread_rwlock_wrlock);
HS_DECL(pthread_rwlock_tryrdlock);
HS_DECL(pthread_rwlock_trywrlock);
HS_DECL(pthread_rwlock_timedrdlock);
HS_DECL(pthread_rwlock_timedwrlock);
HS_DECL(pthread_rwlock_clockrdlock);
HS_DECL(pthread_rwlock_clockwrlock);
HS_DECL(pthread_rwlock_unlock);
HS_DECL(pthread_rwlock_destroy);

#define HS_RW1(fn)                                                  \
    SS_EXPORT int fn(pthread_rwlock_t *l)                           \
    {                                                               \
        int rc = HS_REAL(fn, NULL, 0)(l);                           \
        if (rc == 0)                                                \
            hs_acquire(l, SS_HSYNC_RWLOCK, HS_CALLER());            \
        return rc;                                                  \
    }
#define HS_RW_TIMED(fn)                                             \
    SS_EXPORT int fn(pthread_rwlock_t *l, const struct timespec *t) \
    {                                                               \
        int rc = HS_REAL(fn, NULL, 0)(l, t);                        \
        if (rc == 0)                                                \
            hs_acquire(l, SS_HSYNC_RWLOCK, HS_CALLER());            \
        return rc;                                                  \
    }
#define HS_RW_CLOCK(fn)                                                         \
    SS_EXPORT int fn(pthread_rwlock_t *l, clockid_t c, const struct timespec *t) \
    {                                                                           \
        int rc = HS_REAL(fn, NULL, 0)(l, c, t);                                 \
        if (rc == 0)                                                            \
            hs_acquire(l, SS_HSYNC_RWLOCK, HS_CALLER());                        \
        return rc;                                                              \
    }
HS_RW1(pthread_rwlock_rdlock)
HS_RW1(pthread_rwlock_wrlock)
HS_RW1(pthread_rwlock_tryrdlock)
HS_RW1(pthread_rwlock_trywrlock)
HS_RW_TIMED(pthread_rwlock_timedrdlock)
HS_RW_TIMED(pthread_rwlock_timedwrlock)
HS_RW_CLOCK(pthread_rwlock_clockrdlock)
HS_RW_CLOCK(pthread_rwlock_clockwrlock)

SS_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    hs_release(l, SS_HSYNC_RWLOCK, HS_CALLER());
    return HS_REAL(pthread_rwlock_unlock, NULL, 0)(l);
}

SS_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
    int rc = HS_REAL(pthread_rwlock_destroy, NULL, 0)(l);
    if (rc == 0)
        hs_forget(l);
    return rc;
}

/* ---------------------------------------------------------- barriers */

HS_DECL(pthread_barrier_wait);
HS_DECL(pthread_barrier_destroy);

SS_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
    uintptr_t caller = HS_CALLER();
    hs_release(b, SS_HSYNC_BARRIER, caller);
    int rc = HS_REAL(pthread_barrier_wait, NULL, 0)(b);
    if (rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD)
        hs_acquire(b, SS_HSYNC_BARRIER, caller);
    return rc;
}

SS_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
    int rc = HS_REAL(pthread_barrier_destroy, NULL, 0)(b);
    if (rc == 0)
        hs_forget(b);
    return rc;
}

/* -------------------------------------------------------- semaphores */

HS_DECL(sem_post);
HS_DECL(sem_wait);
HS_DECL(sem_trywait);
HS_DECL(sem_timedwait);
HS_DECL(sem_clockwait);
HS_DECL(sem_destroy);

SS_EXPORT int sem_post(sem_t *s)
{
    hs_release(s, SS_HSYNC_SEM, HS_CALLER());
    return HS_REAL(sem_post, NULL, 0)(s);
}

SS_EXPORT int sem_wait(sem_t *s)
{
    int rc = HS_REAL(sem_wait, NULL, 0)(s);
    if (rc == 0)
        hs_acquire(s, SS_HSYNC_SEM, HS_CALLER());
    return rc;
}

SS_EXPORT int sem_trywait(sem_t *s)
{
    int rc = HS_REAL(sem_trywait, NULL, 0)(s);
    if (rc == 0)
        hs_acquire(s, SS_HSYNC_SEM, HS_CALLER());
    return rc;
}

SS_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
    int rc = HS_REAL(sem_timedwait, NULL, 0)(s, abstime);
    if (rc == 0)
        hs_acquire(s, SS_HSYNC_SEM, HS_CALLER());
    return rc;
}

SS_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
    int rc = HS_REAL(sem_clockwait, NULL, 0)(s, clock, abstime);
    if (rc == 0)
        hs_acquire(s, SS_HSYNC_SEM, HS_CALLER());
    return rc;
}

SS_EXPORT int sem_destroy(sem_t *s)
{
    int rc = HS_REAL(sem_destroy, NULL, 0)(s);
    if (rc == 0)
        hs_forget(s);
    return rc;
}

/* ----------------------------------------------------------- threads */

HS_DECL(pthread_create);
HS_DECL(pthread_exit);
HS_DECL(pthread_join);
HS_DECL(pthread_tryjoin_np);
HS_DECL(pthread_timedjoin_np);
HS_DECL(pthread_clockjoin_np);

struct hs_start {
    void *(*fn)(void *);
    void *arg;
    uint64_t key;
    uint64_t seq;               /* the parent's release, 0 none */
};

/* The exiting thread releases the key of itself that its joiner acquires. */
static void hs_thread_exit_release(void)
{
    hs_thread *t = tls_hs;
    if (!t || t->busy || (t->epoch == 0 && t->npending == 0) || !ss_recording())
        return;
    hs_do_release(t, SS_HSYNC_KEY_JOIN((uint64_t)pthread_self()), SS_HSYNC_THREAD_JOIN, NULL);
}

static void *hs_thread_start(void *p)
{
    struct hs_start s = *(struct hs_start *)p;
    free(p);
    /* A pthread_t comes back after a join: a new thread, nothing released yet. */
    hs_forget((void *)(uintptr_t)SS_HSYNC_KEY_JOIN((uint64_t)pthread_self()));
    if (s.seq)
        hs_acquire_seq(s.key, s.seq, SS_HSYNC_THREAD_CREATE, 0, 0, 0);
    void *ret = s.fn(s.arg);
    hs_thread_exit_release();
    return ret;
}

SS_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    __typeof__(&pthread_create) real = HS_REAL(pthread_create, NULL, 0);
    uintptr_t caller = HS_CALLER();
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed) || hs_caller_ignored(caller))
        return real(th, attr, fn, arg);
    int e = errno;
    struct hs_start *s = malloc(sizeof *s);
    if (!s) {
        errno = e;
        return real(th, attr, fn, arg);
    }
    s->fn = fn;
    s->arg = arg;
    s->key = SS_HSYNC_KEY_CREATE(atomic_fetch_add_explicit(&hs_next_key, 1, memory_order_relaxed) + 1);
    s->seq = 0;
    hs_thread *t = tls_hs;
    if (t && !t->busy && (t->epoch || t->npending) && !hs_ignored(caller) && ss_recording()) {
        /* a unique key, its seq handed to the child directly: no table slot */
        _Atomic uint64_t unused = 0;
        s->seq = hs_do_release(t, s->key, SS_HSYNC_THREAD_CREATE, &unused);
    }
    errno = e;
    int rc = real(th, attr, hs_thread_start, s);
    if (rc != 0)
        free(s);
    return rc;
}

SS_EXPORT void pthread_exit(void *ret)
{
    __typeof__(&pthread_exit) real = HS_REAL(pthread_exit, NULL, 0);
    if (atomic_load_explicit(&hs_on, memory_order_relaxed)) {
        int e = errno;
        hs_thread_exit_release();
        errno = e;
    }
    real(ret);
    __builtin_unreachable();
}

static void hs_joined(pthread_t th, uintptr_t caller)
{
    hs_acquire((void *)(uintptr_t)SS_HSYNC_KEY_JOIN((uint64_t)th), SS_HSYNC_THREAD_JOIN, caller);
}

SS_EXPORT int pthread_join(pthread_t th, void **ret)
{
    int rc = HS_REAL(pthread_join, NULL, 0)(th, ret);
    if (rc == 0)
        hs_joined(th, HS_CALLER());
    return rc;
}

SS_EXPORT int pthread_tryjoin_np(pthread_t th, void **ret)
{
    int rc = HS_REAL(pthread_tryjoin_np, NULL, 0)(th, ret);
    if (rc == 0)
        hs_joined(th, HS_CALLER());
    return rc;
}

SS_EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
    int rc = HS_REAL(pthread_timedjoin_np, NULL, 0)(th, ret, abstime);
    if (rc == 0)
        hs_joined(th, HS_CALLER());
    return rc;
}

SS_EXPORT int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clock, const struct timespec *abstime)
{
    int rc = HS_REAL(pthread_clockjoin_np, NULL, 0)(th, ret, clock, abstime);
    if (rc == 0)
        hs_joined(th, HS_CALLER());
    return rc;
}

/* ------------------------------------------------- GCC's libgomp */

/* libgomp's entry points (no public header): what GCC emits calls to. */
typedef void (*hs_omp_fn)(void *);
void GOMP_parallel(hs_omp_fn fn, void *data, unsigned num_threads, unsigned flags);
void GOMP_parallel_loop_static(hs_omp_fn, void *, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_dynamic(hs_omp_fn, void *, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_guided(hs_omp_fn, void *, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_nonmonotonic_dynamic(hs_omp_fn, void *, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_nonmonotonic_guided(hs_omp_fn, void *, unsigned, long, long, long, long, unsigned);
void GOMP_parallel_loop_runtime(hs_omp_fn, void *, unsigned, long, long, long, unsigned);
void GOMP_parallel_loop_nonmonotonic_runtime(hs_omp_fn, void *, unsigned, long, long, long, unsigned);
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(hs_omp_fn, void *, unsigned, long, long, long, unsigned);
void GOMP_parallel_sections(hs_omp_fn, void *, unsigned, unsigned, unsigned);
void GOMP_parallel_start(hs_omp_fn, void *, unsigned);
void GOMP_parallel_loop_static_start(hs_omp_fn, void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_dynamic_start(hs_omp_fn, void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_guided_start(hs_omp_fn, void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_runtime_start(hs_omp_fn, void *, unsigned, long, long, long);
void GOMP_parallel_sections_start(hs_omp_fn, void *, unsigned, unsigned);
void GOMP_parallel_end(void);
void GOMP_barrier(void);
bool GOMP_barrier_cancel(void);
void GOMP_loop_end(void);
bool GOMP_loop_end_cancel(void);
void GOMP_sections_end(void);
bool GOMP_sections_end_cancel(void);

/* One parallel region (on the encountering thread's stack, or on the heap
 * between GOMP_parallel_start and GOMP_parallel_end). */
typedef struct hs_team {
    hs_omp_fn fn;
    void *data;
    uint64_t id;
    uint64_t fork_seq;                  /* the encountering thread's release, 0 none */
    _Atomic uint64_t join_seq;          /* newest release of the join key */
    _Atomic uint64_t bar_seq;           /* newest release of the barrier key */
    uint32_t master_tid;
    const void *ompt_ra;                /* OMPT: the region's return address */
    hs_team_ctx master_ctx;             /* legacy start/end: the master's context */
    struct hs_team *legacy_prev;
} hs_team;

/* Does a release to a key of the team publish anything new?  Acquires of
 * the team's own keys (fork, barrier) are known to every member. */
static int hs_team_release_needed(const hs_thread *t, const hs_team_ctx *c)
{
    if (t->epoch > c->base)
        return 1;
    for (uint32_t i = 0; i < t->npending; i++)
        if (!t->pending[i].team)
            return 1;
    return 0;
}

/* The encountering thread, before the team starts.  Returns 1 when the
 * region is wrapped (tm filled), 0 to pass it through untouched. */
static int hs_omp_begin(hs_team *tm, hs_omp_fn fn, void *data, uintptr_t caller)
{
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed))
        return 0;
    hs_thread *t = hs_self();
    if (!t || t->busy || hs_ignored(caller))
        return 0;
    memset(tm, 0, sizeof *tm);
    tm->fn = fn;
    tm->data = data;
    tm->id = atomic_fetch_add_explicit(&hs_next_key, 1, memory_order_relaxed) + 1;
    tm->master_tid = ss_tid();
    if ((t->epoch || t->npending) && ss_recording()) {
        _Atomic uint64_t unused = 0;
        tm->fork_seq = hs_do_release(t, SS_HSYNC_KEY_OMP_FORK(tm->id), SS_HSYNC_OMP_FORK, &unused);
    }
    return 1;
}

/* The encountering thread, after the team ended. */
static void hs_omp_end(hs_team *tm)
{
    uint64_t s = atomic_load_explicit(&tm->join_seq, memory_order_acquire);
    if (s)
        hs_acquire_seq(SS_HSYNC_KEY_OMP_JOIN(tm->id), s, SS_HSYNC_OMP_JOIN, 0, 0, 0);
}

/* A member of team tm starts its part: ctx (on its stack, or in its OMPT
 * levels) becomes its innermost team; a worker acquires the fork key. */
static void hs_omp_member_begin(hs_thread *t, hs_team *tm, hs_team_ctx *ctx)
{
    *ctx = (hs_team_ctx){ tm, 0, t->team };
    if (ss_tid() == tm->master_tid) {
        ctx->base = tm->fork_seq ? t->epoch : 0;
    } else {
        if (tm->fork_seq)
            hs_acquire_seq(SS_HSYNC_KEY_OMP_FORK(tm->id), tm->fork_seq, SS_HSYNC_OMP_FORK, 0, 0, 1);
        /* Pool threads mostly serve one encountering thread, which acquired
         * (or had no need of) what this one published at its last join. */
        ctx->base = t->last_team_master == tm->master_tid ? t->last_team_pub : 0;
    }
    t->team = ctx;
}

/* ... and ends it (before the team's join): a worker releases the join key
 * when it has something new to say. */
static void hs_omp_member_end(hs_thread *t, hs_team_ctx *ctx)
{
    hs_team *tm = ctx->team;
    t->team = ctx->prev;
    if (ss_tid() == tm->master_tid || t->busy)
        return;
    if (hs_team_release_needed(t, ctx) && ss_recording()) {
        hs_do_release(t, SS_HSYNC_KEY_OMP_JOIN(tm->id), SS_HSYNC_OMP_JOIN, &tm->join_seq);
    } else {
        /* only what the team knows: nobody needs it from this thread */
        uint32_t n = 0;
        for (uint32_t i = 0; i < t->npending; i++)
            if (!t->pending[i].team)
                t->pending[n++] = t->pending[i];
        t->npending = n;
    }
    t->last_team_pub = t->epoch;
    t->last_team_master = tm->master_tid;
}

/* What every thread of the team runs in place of the outlined function. */
static void hs_omp_trampoline(void *p)
{
    hs_team *tm = p;
    hs_thread *t = hs_self();
    if (!t) {
        tm->fn(tm->data);
        return;
    }
    int e = errno;
    hs_team_ctx ctx;
    hs_omp_member_begin(t, tm, &ctx);
    errno = e;
    tm->fn(tm->data);
    e = errno;
    hs_omp_member_end(t, &ctx);
    errno = e;
}

/* The team barriers (GOMP_barrier and the barriers that end worksharing
 * constructs): release before, acquire after, on the team's barrier key. */
static hs_team_ctx *hs_omp_barrier_enter(void)
{
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed))
        return NULL;
    hs_thread *t = tls_hs;
    if (!t || t->busy || !t->team)
        return NULL;
    hs_team_ctx *c = t->team;
    if (hs_team_release_needed(t, c) && ss_recording()) {
        hs_do_release(t, SS_HSYNC_KEY_OMP_BAR(c->team->id), SS_HSYNC_OMP_BARRIER, &c->team->bar_seq);
        c->base = t->epoch;
    }
    return c;
}

static void hs_omp_barrier_leave(hs_team_ctx *c)
{
    if (!c)
        return;
    int e = errno;
    uint64_t s = atomic_load_explicit(&c->team->bar_seq, memory_order_acquire);
    if (s)
        hs_acquire_seq(SS_HSYNC_KEY_OMP_BAR(c->team->id), s, SS_HSYNC_OMP_BARRIER, 0, 0, 1);
    errno = e;
}

HS_DECL(GOMP_parallel);
HS_DECL(GOMP_parallel_loop_static);
HS_DECL(GOMP_parallel_loop_dynamic);
HS_DECL(GOMP_parallel_loop_guided);
HS_DECL(GOMP_parallel_loop_nonmonotonic_dynamic);
HS_DECL(GOMP_parallel_loop_nonmonotonic_guided);
HS_DECL(GOMP_parallel_loop_runtime);
HS_DECL(GOMP_parallel_loop_nonmonotonic_runtime);
HS_DECL(GOMP_parallel_loop_maybe_nonmonotonic_runtime);
HS_DECL(GOMP_parallel_sections);
HS_DECL(GOMP_parallel_start);
HS_DECL(GOMP_parallel_loop_static_start);
HS_DECL(GOMP_parallel_loop_dynamic_start);
HS_DECL(GOMP_parallel_loop_guided_start);
HS_DECL(GOMP_parallel_loop_runtime_start);
HS_DECL(GOMP_parallel_sections_start);
HS_DECL(GOMP_parallel_end);
HS_DECL(GOMP_barrier);
HS_DECL(GOMP_barrier_cancel);
HS_DECL(GOMP_loop_end);
HS_DECL(GOMP_loop_end_cancel);
HS_DECL(GOMP_sections_end);
HS_DECL(GOMP_sections_end_cancel);

#define HS_GOMP(fn) HS_REAL(fn, NULL, 1)

/* A combined region: run it with the trampoline, join after. ARGS: the
 * arguments after (fn, data). */
#define HS_REGION(name, ...)                                     \
    do {                                                         \
        __typeof__(&name) real_ = HS_GOMP(name);                 \
        hs_team tm_;                                             \
        if (!hs_omp_begin(&tm_, fn, data, HS_CALLER())) {        \
            real_(fn, data, __VA_ARGS__);                        \
            return;                                              \
        }                                                        \
        real_(hs_omp_trampoline, &tm_, __VA_ARGS__);             \
        hs_omp_end(&tm_);                                        \
    } while (0)

SS_EXPORT void GOMP_parallel(hs_omp_fn fn, void *data, unsigned n, unsigned flags)
{
    HS_REGION(GOMP_parallel, n, flags);
}

#define HS_LOOP8(name)                                                                                   \
    SS_EXPORT void name(hs_omp_fn fn, void *data, unsigned n, long a, long b, long c, long d, unsigned flags) \
    {                                                                                                    \
        HS_REGION(name, n, a, b, c, d, flags);                                                           \
    }
#define HS_LOOP7(name)                                                                           \
    SS_EXPORT void name(hs_omp_fn fn, void *data, unsigned n, long a, long b, long c, unsigned flags) \
    {                                                                                            \
        HS_REGION(name, n, a, b, c, flags);                                                      \
    }
HS_LOOP8(GOMP_parallel_loop_static)
HS_LOOP8(GOMP_parallel_loop_dynamic)
HS_LOOP8(GOMP_parallel_loop_guided)
HS_LOOP8(GOMP_parallel_loop_nonmonotonic_dynamic)
HS_LOOP8(GOMP_parallel_loop_nonmonotonic_guided)
HS_LOOP7(GOMP_parallel_loop_runtime)
HS_LOOP7(GOMP_parallel_loop_nonmonotonic_runtime)
HS_LOOP7(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

SS_EXPORT void GOMP_parallel_sections(hs_omp_fn fn, void *data, unsigned n, unsigned count, unsigned flags)
{
    HS_REGION(GOMP_parallel_sections, n, count, flags);
}

/* Before GCC 4.9: GOMP_parallel_start, the encountering thread calls fn
 * itself, GOMP_parallel_end.  The region lives on the heap meanwhile; a bit
 * per nesting level says whether it was wrapped. */
#define HS_LEGACY(name, ...)                                                       \
    do {                                                                           \
        __typeof__(&name) real_ = HS_GOMP(name);                                   \
        hs_thread *t_ = atomic_load_explicit(&hs_on, memory_order_relaxed) ? hs_self() : NULL; \
        hs_team *tm_ = t_ && t_->legacy_depth < 64 ? malloc(sizeof *tm_) : NULL;   \
        if (tm_ && !hs_omp_begin(tm_, fn, data, HS_CALLER())) {                    \
            free(tm_);                                                             \
            tm_ = NULL;                                                            \
        }                                                                          \
        if (t_ && t_->legacy_depth < 64) {                                         \
            t_->legacy_bits = (t_->legacy_bits << 1) | (tm_ != NULL);              \
            t_->legacy_depth++;                                                    \
        }                                                                          \
        if (!tm_) {                                                                \
            real_(fn, data, __VA_ARGS__);                                          \
            return;                                                                \
        }                                                                          \
        real_(hs_omp_trampoline, tm_, __VA_ARGS__);                                \
        tm_->master_ctx = (hs_team_ctx){ tm_, tm_->fork_seq ? t_->epoch : 0, t_->team }; \
        t_->team = &tm_->master_ctx;                                               \
        tm_->legacy_prev = t_->legacy;                                             \
        t_->legacy = tm_;                                                          \
    } while (0)

SS_EXPORT void GOMP_parallel_start(hs_omp_fn fn, void *data, unsigned n)
{
    HS_LEGACY(GOMP_parallel_start, n);
}

#define HS_LOOP_START7(name)                                                               \
    SS_EXPORT void name(hs_omp_fn fn, void *data, unsigned n, long a, long b, long c, long d) \
    {                                                                                      \
        HS_LEGACY(name, n, a, b, c, d);                                                    \
    }
HS_LOOP_START7(GOMP_parallel_loop_static_start)
HS_LOOP_START7(GOMP_parallel_loop_dynamic_start)
HS_LOOP_START7(GOMP_parallel_loop_guided_start)

SS_EXPORT void GOMP_parallel_loop_runtime_start(hs_omp_fn fn, void *data, unsigned n, long a, long b, long c)
{
    HS_LEGACY(GOMP_parallel_loop_runtime_start, n, a, b, c);
}

SS_EXPORT void GOMP_parallel_sections_start(hs_omp_fn fn, void *data, unsigned n, unsigned count)
{
    HS_LEGACY(GOMP_parallel_sections_start, n, count);
}

SS_EXPORT void GOMP_parallel_end(void)
{
    HS_GOMP(GOMP_parallel_end)();
    hs_thread *t = atomic_load_explicit(&hs_on, memory_order_relaxed) ? tls_hs : NULL;
    if (!t || t->legacy_depth == 0)
        return;
    int wrapped = (int)(t->legacy_bits & 1);
    t->legacy_bits >>= 1;
    t->legacy_depth--;
    hs_team *tm = t->legacy;
    if (!wrapped || !tm)
        return;
    int e = errno;
    t->legacy = tm->legacy_prev;
    t->team = tm->master_ctx.prev;
    hs_omp_end(tm);
    free(tm);
    errno = e;
}

/* Every libgomp entry point that ends in a team barrier (explicit barriers,
 * and the implicit ones ending worksharing loops and sections) is the same
 * wrapper: a release before, an acquire after.  One line each: */
#define HS_GOMP_BARRIER_VOID(name)                          \
    SS_EXPORT void name(void)                               \
    {                                                       \
        hs_team_ctx *c = hs_omp_barrier_enter();            \
        HS_GOMP(name)();                                    \
        hs_omp_barrier_leave(c);                            \
    }
#define HS_GOMP_BARRIER_BOOL(name)                          \
    SS_EXPORT bool name(void)                               \
    {                                                       \
        hs_team_ctx *c = hs_omp_barrier_enter();            \
        bool r = HS_GOMP(name)();                           \
        hs_omp_barrier_leave(c);                            \
        return r;                                           \
    }
HS_GOMP_BARRIER_VOID(GOMP_barrier)
HS_GOMP_BARRIER_BOOL(GOMP_barrier_cancel)
HS_GOMP_BARRIER_VOID(GOMP_loop_end)
HS_GOMP_BARRIER_BOOL(GOMP_loop_end_cancel)
HS_GOMP_BARRIER_VOID(GOMP_sections_end)
HS_GOMP_BARRIER_BOOL(GOMP_sections_end_cancel)

/* ------------------------------------------- LLVM's libomp (OMPT) */

/* libomp (clang -fopenmp) calls no GOMP_ entry point and its barriers are
 * futex-based: it is seen through the OpenMP tool interface instead.  The
 * few OMPT types and constants used, declared here from the OpenMP 5.x
 * specification (omp-tools.h) so that the build needs no OpenMP header. */
typedef union hs_ompt_data { uint64_t value; void *ptr; } hs_ompt_data;
typedef void (*hs_ompt_fn)(void);
typedef hs_ompt_fn (*hs_ompt_lookup)(const char *name);
typedef int (*hs_ompt_initialize)(hs_ompt_lookup lookup, int initial_device_num, hs_ompt_data *tool_data);
typedef void (*hs_ompt_finalize)(hs_ompt_data *tool_data);
typedef struct hs_ompt_start_tool_result {
    hs_ompt_initialize initialize;
    hs_ompt_finalize finalize;
    hs_ompt_data tool_data;
} hs_ompt_start_tool_result;
typedef int (*hs_ompt_set_callback)(int event, hs_ompt_fn callback);
enum {
    HS_OMPT_CB_PARALLEL_BEGIN = 3, HS_OMPT_CB_PARALLEL_END = 4, HS_OMPT_CB_IMPLICIT_TASK = 7,
    HS_OMPT_CB_SYNC_REGION = 23,                          /* ompt_callbacks_t */
    HS_OMPT_SET_NEVER = 1,                                /* ompt_set_result_t */
    HS_OMPT_SCOPE_BEGIN = 1, HS_OMPT_SCOPE_END = 2,       /* ompt_scope_endpoint_t */
    HS_OMPT_TASK_IMPLICIT = 0x2,                          /* ompt_task_flag_t */
    HS_OMPT_PARALLEL_LEAGUE = 0x40000000,                 /* ompt_parallel_flag_t */
    /* ompt_sync_region_t: barrier (5.0), barrier_implicit (5.0), explicit,
     * implementation, ..., implicit_workshare, implicit_parallel, teams */
    HS_OMPT_BARRIER = 1, HS_OMPT_BARRIER_IMPLICIT = 2, HS_OMPT_BARRIER_EXPLICIT = 3,
    HS_OMPT_BARRIER_IMPLEMENTATION = 4, HS_OMPT_BARRIER_IMPLICIT_WORKSHARE = 8,
    HS_OMPT_BARRIER_IMPLICIT_PARALLEL = 9,
};

/* The encountering thread, before the team starts: the region (heap, freed
 * at parallel_end) in parallel_data, or NULL when not followed. */
static void hs_ompt_parallel_begin(hs_ompt_data *task, const void *frame, hs_ompt_data *par, unsigned requested,
                                   int flags, const void *ra)
{
    (void)task, (void)frame, (void)requested;
    par->ptr = NULL;
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed) || (flags & HS_OMPT_PARALLEL_LEAGUE))
        return;
    int e = errno;
    hs_team *tm = malloc(sizeof *tm);
    if (tm && hs_omp_begin(tm, NULL, NULL, (uintptr_t)ra)) {
        tm->ompt_ra = ra;
        par->ptr = tm;
    } else {
        free(tm);
    }
    errno = e;
}

/* ... after it ended (every member passed the join barrier). */
static void hs_ompt_parallel_end(hs_ompt_data *par, hs_ompt_data *task, int flags, const void *ra)
{
    (void)task, (void)flags, (void)ra;
    hs_team *tm = par->ptr;
    if (!tm)
        return;
    int e = errno;
    par->ptr = NULL;
    hs_omp_end(tm);
    free(tm);
    errno = e;
}

/* Implicit task begin: a member starts (the trampoline's start).  A worker's
 * end comes after the join barrier, when the region may be gone (libomp
 * passes no parallel_data then): its join release was made when it entered
 * the join barrier, and here only an unreleased level is dropped. */
static void hs_ompt_implicit_task(int endpoint, hs_ompt_data *par, hs_ompt_data *task, unsigned actual,
                                  unsigned index, int flags)
{
    (void)task, (void)actual, (void)index;
    if (!(flags & HS_OMPT_TASK_IMPLICIT) || !atomic_load_explicit(&hs_on, memory_order_relaxed))
        return;
    int e = errno;
    hs_thread *t = hs_self();
    if (!t) {
        errno = e;
        return;
    }
    if (endpoint == HS_OMPT_SCOPE_BEGIN) {
        uint32_t d = t->omp_depth++;
        hs_team *tm = par ? par->ptr : NULL;
        if (d < HS_OMPT_LEVELS) {
            t->omp_ctx[d].team = NULL;
            if (tm)
                hs_omp_member_begin(t, tm, &t->omp_ctx[d]);
        }
    } else if (endpoint == HS_OMPT_SCOPE_END && t->omp_depth > 0) {
        uint32_t d = --t->omp_depth;
        if (d < HS_OMPT_LEVELS && t->omp_ctx[d].team) {
            t->team = t->omp_ctx[d].prev;
            t->omp_ctx[d].team = NULL;
        }
    }
    errno = e;
}

/* Barriers: release before, acquire after, on the region's barrier key; the
 * join barrier ending the region: a worker's join release.  libomp 14 calls
 * the join barrier barrier_implicit with no return address for workers (the
 * primary thread's is the region's), OpenMP 5.1 runtimes
 * barrier_implicit_parallel; a worker's end of it comes without
 * parallel_data. */
static void hs_ompt_sync_region(int kind, int endpoint, hs_ompt_data *par, hs_ompt_data *task, const void *ra)
{
    (void)task;
    if (kind != HS_OMPT_BARRIER && kind != HS_OMPT_BARRIER_IMPLICIT && kind != HS_OMPT_BARRIER_EXPLICIT &&
        kind != HS_OMPT_BARRIER_IMPLEMENTATION && kind != HS_OMPT_BARRIER_IMPLICIT_WORKSHARE &&
        kind != HS_OMPT_BARRIER_IMPLICIT_PARALLEL)
        return;
    if (!atomic_load_explicit(&hs_on, memory_order_relaxed))
        return;
    hs_thread *t = tls_hs;
    if (!t || t->omp_depth == 0 || t->omp_depth > HS_OMPT_LEVELS)
        return;
    hs_team_ctx *c = &t->omp_ctx[t->omp_depth - 1];
    hs_team *tm = c->team;
    if (!tm || t->team != c || !par || par->ptr != tm)
        return;                        /* not followed, or after the join barrier */
    int e = errno;
    int implicit = kind == HS_OMPT_BARRIER || kind == HS_OMPT_BARRIER_IMPLICIT;
    int master = ss_tid() == tm->master_tid;
    int join = kind == HS_OMPT_BARRIER_IMPLICIT_PARALLEL ||
               (implicit && (master ? ra == tm->ompt_ra : ra == NULL));
    if (endpoint == HS_OMPT_SCOPE_BEGIN) {
        if (join) {
            hs_omp_member_end(t, c);   /* the master: only its level goes */
            c->team = NULL;
        } else {
            hs_omp_barrier_enter();
        }
    } else if (endpoint == HS_OMPT_SCOPE_END && !join) {
        hs_omp_barrier_leave(c);
    }
    errno = e;
}

static int hs_ompt_init(hs_ompt_lookup lookup, int initial_device_num, hs_ompt_data *tool_data)
{
    (void)initial_device_num, (void)tool_data;
    if (!atomic_load_explicit(&hs_on, memory_order_acquire))
        return 0;                      /* a nonzero return keeps the tool active */
    hs_ompt_set_callback set = (hs_ompt_set_callback)lookup("ompt_set_callback");
    if (!set)
        return 0;
    int ok = set(HS_OMPT_CB_PARALLEL_BEGIN, (hs_ompt_fn)hs_ompt_parallel_begin) != HS_OMPT_SET_NEVER &&
             set(HS_OMPT_CB_PARALLEL_END, (hs_ompt_fn)hs_ompt_parallel_end) != HS_OMPT_SET_NEVER &&
             set(HS_OMPT_CB_IMPLICIT_TASK, (hs_ompt_fn)hs_ompt_implicit_task) != HS_OMPT_SET_NEVER;
    if (!ok)
        return 1;                      /* callbacks cannot be had: nothing followed */
    set(HS_OMPT_CB_SYNC_REGION, (hs_ompt_fn)hs_ompt_sync_region);
    atomic_store_explicit(&hs_ompt_on, 1, memory_order_relaxed);
    return 1;
}

static void hs_ompt_fini(hs_ompt_data *tool_data)
{
    (void)tool_data;
}

/* libomp looks this up in the process when it initializes.  OMPT has one
 * tool: while host ordering is on, syncsight's; otherwise the next
 * definition (another tool in the search order) is asked instead. */
SS_EXPORT hs_ompt_start_tool_result *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    if (atomic_load_explicit(&hs_on, memory_order_acquire)) {
        static hs_ompt_start_tool_result tool = { hs_ompt_init, hs_ompt_fini, { 0 } };
        return &tool;
    }
    hs_ompt_start_tool_result *(*next)(unsigned int, const char *) = NULL;
    *(void **)&next = dlsym(RTLD_NEXT, "ompt_start_tool");
    return next ? next(omp_version, runtime_version) : NULL;
}
