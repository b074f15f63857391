/*
 * What-if replay (replay.h).  The schedule is evaluated in the order the
 * measured run happened: every dependency of an item ended, in the measured
 * run, before the item began, so one pass over call entries, GPU operation
 * starts, marker completions and the exits of calls that wait (a call that
 * waits for nothing returns with its entry's item: exits_as_items), sorted
 * by measured time, sees every dependency already replayed.
 *
 * Submission order is a key: call i has key 2i+1; a GPU operation has its
 * submitting call's key, or, when no call was recorded for it (driver-API
 * launches), the even key between the calls around its start.  "The work of
 * stream s submitted before k" is then the last operation of s with a key
 * below k: a stream runs its operations in order, so that one ends last.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "capture_windows.h"
#include "util.h"

#define MATCH_NS 30000u   /* two operations that started "together" */
#define TOL_NS   20000u   /* clock and dispatch jitter */
#define DELAY_NS 50000u   /* a delay worth explaining */
#define DEFAULT_CONNECTIONS 8u
#define MAX_DEVICES 1024

enum { W_NONE, W_STREAM, W_GROUP, W_EVENT, W_DEVICE };

typedef struct wait_dep {      /* a cudaStreamWaitEvent: ops of the stream after `key` wait for */
    int64_t key;               /* the work of `stream` submitted before `bound` */
    int32_t stream;
    int64_t bound;
} wait_dep;

/* A stream marker: an event record or an event wait.  It runs nothing, but
 * it completes only when the work before it on its stream -- and, on the
 * legacy stream's terms, the work the legacy barrier puts before it -- is
 * done; a host wait on the stream or the event waits for it. */
typedef struct rmark {
    int32_t call, stream;      /* its key is its call's, mark_key */
    uint32_t wbeg, wend;       /* the stream's waits between its previous operation and it (itself included) */
} rmark;
static int64_t mark_key(const rmark *x) { return 2 * (int64_t)x->call + 1; }

typedef struct rstream {
    int32_t *ops; uint32_t nops, cops;     /* by key */
    int64_t *opk;                          /* their keys, side by side: searched on every dependency */
    int32_t *marks; uint32_t nmarks;       /* rmark indexes, by key */
    int64_t *mkk;                          /* their keys */
    wait_dep *waits; uint32_t nwaits;
    int32_t device;
    int32_t ldomain;                       /* ss_stream.ldomain: one legacy stream's reach */
    uint8_t kind;
} rstream;

typedef struct rdevice {
    int32_t *streams; uint32_t nstreams, cstreams;     /* every stream of the device */
    int32_t *group; uint32_t ngroup, cgroup;           /* blocking and per-thread: ordered with legacy */
    int32_t *legacy; uint32_t nlegacy, clegacy;
} rdevice;

/* What a call's host wait waits for, and what the measured run says of it:
 * one for each call that waits on GPU work (kind != W_NONE), found through
 * the per-call index cwi.  A call that waits on nothing has none: it did
 * not wait, post 0, wait_op -1 (most calls are launches and records: 4
 * bytes for them, where these fields in per-call arrays were 29).  A device
 * is only ever used as an index below ndev (<= MAX_DEVICES), so any other
 * number is kept as -1, "unknown", which it is treated as anyway. */
typedef struct cwait {
    int64_t bound;             /* exclusive */
    int32_t stream;
    int16_t device;
    uint8_t kind;              /* W_* */
    uint8_t waited : 1;        /* in the measured run, it waited (its wait ended after its entry) */
    uint8_t ops_only : 1;      /* it returned before the stream markers the model puts in its way:
                                  it waits for operations only (waits_slice) */
    uint64_t post;             /* time from the end of what it waited for to its return (0: it did not wait) */
    int32_t wait_op;           /* the operation whose end released its wait, -1 */
    uint32_t context;          /* W_DEVICE: the context family waited for (ss_model_call_context), 0 any */
} cwait;
#define NO_WAIT UINT32_MAX     /* cwi of a call that waits on nothing */
_Static_assert(MAX_DEVICES <= INT16_MAX, "cwait.device holds a device index");

typedef struct item { uint64_t t; uint8_t rank; int32_t idx; } item;
/* at one time: a marker's completion first (a host wait released by it exits
 * at the same time), then exits, entries, operation starts */
enum { I_MARK = 0, I_EXIT = 1, I_ENTER = 2, I_START = 3 };
/* an item as the passes read it: what it is, not its time */
typedef struct iref { uint8_t rank; int32_t idx; } iref;

struct ss_replay {
    const ss_model *m;
    int64_t *opkey;
    rstream *st;
    rdevice *dev; int32_t ndev;
    int32_t *op_pred;
    uint32_t *op_wbeg, *op_wend;
    int32_t *op_qpred;
    int32_t *op_barrier;
    uint64_t *ready;
    int64_t *lat;
    uint32_t *cwi;             /* per call: its cwait in cws, NO_WAIT none */
    cwait *cws; uint32_t ncws;
    uint64_t *wake;            /* per op: the host's release after its end where a call waited for it (UINT64_MAX: none) */
    int32_t *call_prev;        /* previous call of the same thread, -1 */
    /* per call: its measured entry and exit (an exit before the entry taken
     * as the entry), side by side: every pass reads them at each call's
     * items, where the call's record in the mapped trace was a miss of its
     * own behind the model's call */
    struct ctime { uint64_t enter, exit; } *ct;
    /* the measured order of events (items, sorted by time), kept as two
     * arrays: 5 bytes an item where the sorted items are 16 (their times
     * are asked for only by first_item_after: item_time finds them) */
    int32_t *iidx; uint8_t *irank; uint32_t nitems;
    ss_hwq_device *hwq; uint32_t nhwq;
    ss_load_barrier *lb; uint32_t nlb;
    int64_t *lb_key;
    rmark *mk; uint32_t nmk;
    uint64_t *mk_real;         /* per marker: its completion in the measured run (measured, else modelled) */
    int64_t *mk_lat;           /* per marker: measured completion - modelled readiness (0 unknown) */
    int launch_blocking;
    uint64_t end;
    uint64_t base_end;         /* ss_replay_run with nothing removed */
    int full;                  /* SYNCSIGHT_REPLAY_FULL=1: every what-if replayed in full, no shortcut */
    /* The replay with nothing removed, kept so that a what-if replays only
     * what its causes change (see "shortcuts" below): */
    uint32_t *posE, *posX;     /* per call: the positions of its entry and exit in items */
    uint32_t *posS, *posM;     /* per op: of its start; per marker: of its completion */
    uint64_t *fold_xmax;       /* per 64 items: the latest measured exit of a call whose exit is no item
                                  (exits_as_items) entered there or before (host_time_from) */
    uint64_t *bval;            /* per item: its replayed time (entry, exit, start, completion) */
    uint32_t *lastread;        /* per value (items, then load barriers' drains): the last item reading it */
    /* the values live at a position (read both before and from it on),
     * counted when asked (live_at): the births before it, from the outlives
     * bits and these counts, less the deaths before it (die_off) */
    uint32_t *born_blk;        /* per 64 items: the items before it that outlive their item */
    uint32_t *dborn; uint32_t ndborn;   /* the positions of the outliving drains' births, sorted */
    uint32_t *die_off, *die;   /* per position: the values last read there */
    uint8_t *outlives;         /* per value: read after the item that makes it (a bit; whole
                                  64-bit words allocated, counted a word at a time) */
    uint32_t *noninv; uint32_t nnoninv;   /* items not shifted with their inputs (below) */
    uint64_t *blk_end;         /* per 64 items: the latest exit or operation end among them */
    uint32_t *drain_first;     /* per load barrier: the item that first asks for its drain */
    uint64_t *bdrain;
    uint64_t vmin, vmax;       /* the range of every replayed time */
    /* the passes' times, allocated once per worker thread (ss_parallel_for):
     * a pass reads only what it wrote (proc), so they are never cleared (a
     * what-if touching 2% of the run pays for 2% of them) */
    struct scratch { uint64_t *E, *X, *S, *M; } sc[SS_MAX_THREADS];
    /* Built on its own thread (ss_replay_prefetch), the replay is handed
     * out once everything but the recorded baseline is made: the rules
     * and the what-ifs that replay the whole run need no more.  What reads
     * the baseline waits for it (wait_baseline). */
    int baseline_ready;        /* under replay_of_lock */
    uint32_t record_chunks, record_again, record_rounds;   /* the recording pass's chunks, those replayed
                                                             again, in how many rounds */
    /* What-ifs already replayed, by their relaxations with repeats removed:
     * findings of one rule often remove the same cause (every occurrence of
     * legacy-stream-serialization removes its device's legacy barriers). */
    struct memo *memo; uint32_t nmemo, cmemo;
};

static iref item_at(const ss_replay *r, uint32_t i) { return (iref){ r->irank[i], r->iidx[i] }; }
static void wait_baseline(const ss_replay *r);

/* the slices of a loop over n records (calls, ops, items) on the threads */
static unsigned build_slices(size_t n) { return ss_slice_count(n, SS_MIN_SLICE, ss_thread_count()); }

/* what-ifs replayed at once, at most (their scratch is per worker) */
#define WHATIF_THREADS 8u

/* item i's measured time, the key it was sorted by */
static uint64_t item_time(const ss_replay *r, uint32_t i)
{
    int32_t x = r->iidx[i];
    switch (r->irank[i]) {
    case I_MARK: return r->mk_real[x];
    case I_EXIT: return r->ct[x].exit;
    case I_ENTER: return r->ct[x].enter;
    default: return r->m->ops[x].start;
    }
}

typedef struct memo {
    uint64_t hash;
    ss_relax *rx; uint32_t n;
    uint64_t end;
} memo;

/* ---- one evaluation ------------------------------------------------------ */

typedef struct pass {
    const ss_replay *r;
    int real;                  /* measured times, no replay */
    struct mk_deps *deps;      /* real: the unmeasured markers it reads are listed here (the build's
                                  unmeasured_slice) */
    uint64_t *E, *X, *S;       /* replayed times (NULL in the real pass): entries by call, exits that are
                                  items by cwi, starts by op (an operation's end is its start plus its
                                  measured duration, as the replay keeps it) */
    uint64_t *M;               /* replayed marker completions */
    uint8_t *cflag;            /* per call: 1 no host wait, 2 narrowed */
    const ss_relax *rx; uint32_t nrx;
    uint8_t *no_legacy, *no_queue;   /* per device */
    uint8_t *no_legacy_op;           /* per op */
    uint8_t *no_barrier;             /* per load barrier */
    uint64_t *drain;                 /* per load barrier, replayed (0: not yet) */
    int async_launches;
    int with_hw;               /* include hardware queues and loading barriers */
    /* The relaxations indexed once per pass, so that a call looks at its own
     * (a what-if of every finding at once has one per occurrence: scanning
     * them all at every call made the replay quadratic in the trace). */
    struct host_cut *cuts; uint32_t ncuts;   /* HOST_TIME, per thread */
    uint32_t *narrow; uint32_t nnarrow;      /* NARROW_WAIT indices, by call */
    /* per stream: where the last search of its operations and of its
     * markers ended (NULL: none kept).  The replay walks the run in time
     * order, so most searches end near the previous one. */
    uint32_t *hint_op, *hint_mk;
    /* position-based state: the item being replayed; items before p0 are
     * the baseline's; an item of [p0, cur) was replayed here (proc) or lies
     * in a segment that is the baseline shifted by a constant (segs) */
    uint32_t cur, p0;
    uint8_t *proc;
    struct seg *segs; uint32_t nsegs, csegs;
    int rec;                   /* the baseline: record what each item reads */
    const ss_capture *cap;     /* a sampled trace's windows (pin_to_window), else NULL */
    uint64_t *bank;            /* cap: per span, the least any of its first calls gained */
    uint32_t *lastread;
    uint8_t *abs_read;         /* rec: per item, 1 when it is not shift-invariant */
    /* rec on threads (record_chunk): this pass replays the items from lo
     * on.  Values made before lo are another chunk's: their reads are logged
     * in xl (what was read, and by which item), and with spec they are taken
     * as measured (item_time, the measured drain) until the chunks before
     * are known.  xl NULL: the one recording pass, from item 0. */
    uint32_t lo;
    int spec;
    struct xlog *xl;
} pass;

typedef struct xread { uint32_t slot, reader; } xread;
typedef struct xlog { xread *v; uint32_t n, cap; } xlog;

/* the time a pass gave an item: its marker's completion, its op's start,
 * its call's entry or exit */
static uint64_t pass_value(const pass *p, iref it)
{
    switch (it.rank) {
    case I_MARK: return p->M[it.idx];
    case I_START: return p->S[it.idx];
    case I_ENTER: return p->E[it.idx];
    default: return p->X[p->r->cwi[it.idx]];
    }
}

typedef struct seg { uint32_t a, b; int64_t d; } seg;

/* The HOST_TIME intervals [t0, t1) of one thread, as two sorted arrays with
 * prefix sums: the time they remove from [a, b) is F(b) - F(a), where
 * F(x) = sum over intervals of |[t0, t1) ∩ (-inf, x)|
 *      = sum_{t0 < x} (x - t0) - sum_{t1 < x} (x - t1),
 * the same sum of clipped lengths the intervals give one by one.  Unsigned
 * arithmetic wraps in F and is exact in the difference (which fits). */
typedef struct host_cut {
    uint32_t tid, n;
    uint64_t *t0, *t1;         /* sorted */
    uint64_t *s0, *s1;         /* s0[i] = t0[0] + ... + t0[i-1] */
} host_cut;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t count_below(const uint64_t *v, uint32_t n, uint64_t x)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static uint64_t cut_below(const host_cut *h, uint64_t x)
{
    uint32_t k0 = count_below(h->t0, h->n, x), k1 = count_below(h->t1, h->n, x);
    return ((uint64_t)k0 * x - h->s0[k0]) - ((uint64_t)k1 * x - h->s1[k1]);
}

static void index_host_cuts(pass *p)
{
    for (uint32_t i = 0; i < p->nrx; i++) {
        const ss_relax *x = &p->rx[i];
        if (x->kind != SS_RELAX_HOST_TIME || x->t1 <= x->t0) continue;   /* empty: removes nothing */
        host_cut *h = NULL;
        for (uint32_t k = 0; k < p->ncuts; k++) if (p->cuts[k].tid == x->tid) { h = &p->cuts[k]; break; }
        if (!h) {
            p->cuts = realloc(p->cuts, (p->ncuts + 1) * sizeof *p->cuts);
            if (!p->cuts) { fputs("syncsight: out of memory\n", stderr); exit(2); }
            h = &p->cuts[p->ncuts++];
            memset(h, 0, sizeof *h);
            h->tid = x->tid;
        }
        h->n++;
    }
    for (uint32_t k = 0; k < p->ncuts; k++) {
        host_cut *h = &p->cuts[k];
        h->t0 = ss_xcalloc(h->n, sizeof(uint64_t));
        h->t1 = ss_xcalloc(h->n, sizeof(uint64_t));
        h->s0 = ss_xcalloc(h->n + 1, sizeof(uint64_t));
        h->s1 = ss_xcalloc(h->n + 1, sizeof(uint64_t));
        h->n = 0;
    }
    for (uint32_t i = 0; i < p->nrx; i++) {
        const ss_relax *x = &p->rx[i];
        if (x->kind != SS_RELAX_HOST_TIME || x->t1 <= x->t0) continue;
        for (uint32_t k = 0; k < p->ncuts; k++)
            if (p->cuts[k].tid == x->tid) {
                host_cut *h = &p->cuts[k];
                h->t0[h->n] = x->t0;
                h->t1[h->n] = x->t1;
                h->n++;
                break;
            }
    }
    for (uint32_t k = 0; k < p->ncuts; k++) {
        host_cut *h = &p->cuts[k];
        qsort(h->t0, h->n, sizeof(uint64_t), cmp_u64);
        qsort(h->t1, h->n, sizeof(uint64_t), cmp_u64);
        for (uint32_t i = 0; i < h->n; i++) {
            h->s0[i + 1] = h->s0[i] + h->t0[i];
            h->s1[i + 1] = h->s1[i] + h->t1[i];
        }
    }
}

typedef struct narrow_key { int32_t call; uint32_t i; } narrow_key;
static int cmp_narrow(const void *a, const void *b)
{
    const narrow_key *x = a, *y = b;
    if (x->call != y->call) return x->call < y->call ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void index_narrow_waits(pass *p)
{
    for (uint32_t i = 0; i < p->nrx; i++)
        if (p->rx[i].kind == SS_RELAX_NARROW_WAIT) p->nnarrow++;
    if (!p->nnarrow) return;
    p->narrow = ss_xcalloc(p->nnarrow, sizeof(uint32_t));
    /* sorted as (call, index) pairs: no comparator context, so passes can
     * run on several threads */
    narrow_key *k = ss_xcalloc(p->nnarrow, sizeof *k);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nrx; i++)
        if (p->rx[i].kind == SS_RELAX_NARROW_WAIT) k[n++] = (narrow_key){ p->rx[i].call, i };
    qsort(k, n, sizeof *k, cmp_narrow);
    for (uint32_t i = 0; i < n; i++) p->narrow[i] = k[i].i;
    free(k);
}

/* The number of keys below b in the sorted k[0..n), searched outward from
 * *hint (doubling steps, then bisection) and left there: the same count as
 * a bisection of the whole array. */
static uint32_t count_keys_below(const int64_t *k, uint32_t n, int64_t b, uint32_t *hint)
{
    uint32_t h = *hint < n ? *hint : n, lo, hi;
    if (h < n && k[h] < b) {
        lo = h + 1;
        hi = n;
        for (uint32_t step = 1, q = h + 1; q < n; step *= 2, q = h + step) {
            if (k[q] < b) lo = q + 1;
            else { hi = q; break; }
        }
    } else {
        hi = h;
        lo = 0;
        for (uint32_t step = 1; step <= h; step *= 2) {
            uint32_t q = h - step;
            if (k[q] >= b) hi = q;
            else { lo = q + 1; break; }
        }
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (k[mid] < b) lo = mid + 1; else hi = mid;
    }
    *hint = lo;
    return lo;
}

static int32_t last_before(const ss_replay *r, int32_t s, int64_t bound)
{
    const rstream *st = &r->st[s];
    uint32_t lo = 0, hi = st->nops;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (st->opk[mid] < bound) lo = mid + 1; else hi = mid;
    }
    return lo ? st->ops[lo - 1] : -1;
}

/* ---- values replayed before the current item -----------------------------
 * A value at position pos < cur was replayed by this pass (proc), is the
 * baseline's (pos < p0: nothing removed acts before p0), or lies in a
 * segment where this pass is the baseline shifted by the segment's d. */
static int replayed_here(const pass *p, uint32_t pos)
{
    return (p->proc[pos >> 3] >> (pos & 7)) & 1;
}

/* The segment holding pos: the first one ending after it, searched from the
 * last one made backwards (doubling steps, then bisection): the values an
 * item reads were mostly made just before it, in the latest segments. */
static int64_t shift_at(const pass *p, uint32_t pos)
{
    if (pos < p->p0) return 0;
    uint32_t n = p->nsegs;
    if (!n || p->segs[n - 1].b <= pos) return 0;
    uint32_t lo = 0, hi = n - 1;   /* segs[hi].b > pos; the answer is in [lo, hi] */
    for (uint32_t step = 1; step <= hi; step *= 2) {
        uint32_t q = hi - step;
        if (p->segs[q].b <= pos) { lo = q + 1; break; }
        hi = q;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->segs[mid].b <= pos) lo = mid + 1; else hi = mid;
    }
    return p->segs[lo].a <= pos ? p->segs[lo].d : 0;
}

/* The baseline's value at pos as this pass has it (not replayed here). */
static uint64_t shifted(const pass *p, uint32_t pos, uint64_t base)
{
    return base - (uint64_t)shift_at(p, pos);
}

/* where value `slot` is made: its item, or a drain's first asker */
static uint32_t value_born(const ss_replay *r, uint32_t slot)
{
    return slot < r->nitems ? slot : r->drain_first[slot - r->nitems];
}

/* Recording the baseline: the last reader of each value, and the items
 * that read a measured time (a value not replayed yet, a first call's
 * entry, a driver launch's start): those do not move with their inputs. */
/* the recording pass's part, out of line: every read of a what-if (which
 * records nothing) asks only whether to record */
static __attribute__((noinline)) void note_read_recorded(const pass *p, uint32_t slot)
{
    if (p->xl && value_born(p->r, slot) < p->lo)
        /* another chunk's value: its last reader is set after (record_chunks) */
        SS_PUSH(p->xl->v, p->xl->n, p->xl->cap, ((xread){ slot, p->cur }));
    else if (p->lastread[slot] < p->cur)
        p->lastread[slot] = p->cur;
}

static inline void note_read(const pass *p, uint32_t slot)
{
    if (p->lastread) note_read_recorded(p, slot);
}

static void note_abs(const pass *p)
{
    if (p->abs_read) p->abs_read[p->cur] = 1;
}

/* The value at pos < cur: in the recording pass every item before cur was
 * replayed and wrote its value to bval in place (no per-index copy, no
 * bitmap to ask); a what-if's is its own, or the baseline's shifted. */
static __attribute__((noinline)) uint64_t value_recorded(const pass *p, uint32_t pos)
{
    return pos < p->lo && p->spec ? item_time(p->r, pos) : p->r->bval[pos];
}

static uint64_t value_at(const pass *p, uint32_t pos, const uint64_t *mine, int32_t idx)
{
    if (p->rec) return value_recorded(p, pos);
    return replayed_here(p, pos) ? mine[idx] : shifted(p, pos, p->r->bval[pos]);
}

static uint64_t op_start(const pass *p, int32_t o)
{
    if (p->real) return p->r->m->ops[o].start;
    uint32_t pos = p->r->posS[o];
    if (pos >= p->cur) { note_abs(p); return p->r->m->ops[o].start; }
    note_read(p, pos);
    return value_at(p, pos, p->S, o);
}

static uint64_t op_end(const pass *p, int32_t o)
{
    const ss_gpu_op *op = &p->r->m->ops[o];
    if (p->real) return op->end;
    uint32_t pos = p->r->posS[o];
    if (pos >= p->cur) { note_abs(p); return op->end; }
    note_read(p, pos);
    return value_at(p, pos, p->S, o) + (op->end - op->start);
}

static uint64_t call_enter(const pass *p, int32_t c)
{
    if (p->real) return p->r->ct[c].enter;
    uint32_t pos = p->r->posE[c];
    if (pos >= p->cur) { note_abs(p); return p->r->ct[c].enter; }
    note_read(p, pos);
    return value_at(p, pos, p->E, c);
}

static uint64_t removed_host_time(const pass *p, const ss_call *c, uint64_t a, uint64_t b);

/* The exit of call k, whose exit is no item (exits_as_items), from its
 * entry e as pass p has it: what replay_item gives the exit of a call that
 * waits for nothing (its own time, less what p removes of it; a sampled
 * trace's wait of unknown end keeps its measured end).  In the stretches
 * where a what-if is the baseline (before p0) or the baseline shifted (a
 * segment) nothing is removed from it (host_time_from): the baseline's
 * exit, shifted with its entry. */
static uint64_t folded_exit(const pass *p, int32_t k, uint64_t e)
{
    const ss_replay *r = p->r;
    uint64_t E = r->ct[k].enter, X = r->ct[k].exit, own = X - E;
    uint64_t cut = removed_host_time(p, &r->m->calls[k], E, X);
    uint64_t x = e + (own > cut ? own - cut : 0);
    if (p->cap && x < X && !ss_capture_wait_known(r->m, k)) x = X;
    return x;
}

/* call c's replayed exit; `measured` when it is not replayed yet */
static uint64_t call_exit(const pass *p, int32_t c, uint64_t measured)
{
    uint32_t pos = p->r->posX[c];
    if (pos >= p->cur) { note_abs(p); return measured; }
    note_read(p, pos);
    if (pos == p->r->posE[c]) return folded_exit(p, c, value_at(p, pos, p->E, c));
    return value_at(p, pos, p->X, (int32_t)p->r->cwi[c]);
}

static int32_t last_mark_before(const ss_replay *r, int32_t s, int64_t bound)
{
    const rstream *st = &r->st[s];
    uint32_t lo = 0, hi = st->nmarks;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (st->mkk[mid] < bound) lo = mid + 1; else hi = mid;
    }
    return lo ? st->marks[lo - 1] : -1;
}

/* the markers of no measured completion one marker's readiness reads */
typedef struct mk_deps {
    const uint64_t *measured;  /* per marker: its measured completion, 0 none */
    uint32_t *v; uint32_t n, cap;
} mk_deps;

static uint64_t mark_end(const pass *p, int32_t k)
{
    if (p->real) {
        if (p->deps && !p->deps->measured[k]) SS_PUSH(p->deps->v, p->deps->n, p->deps->cap, (uint32_t)k);
        return p->r->mk_real[k];
    }
    uint32_t pos = p->r->posM[k];
    if (pos >= p->cur) { note_abs(p); return p->r->mk_real[k]; }
    note_read(p, pos);
    return value_at(p, pos, p->M, k);
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* a - b and t + d, saturating: times come from the trace, damaged ones too */
#define SS_DELAY_MAX (INT64_MAX / 4)
static int64_t sdiff(uint64_t a, uint64_t b)
{
    if (a >= b) return a - b > (uint64_t)SS_DELAY_MAX ? SS_DELAY_MAX : (int64_t)(a - b);
    return b - a > (uint64_t)SS_DELAY_MAX ? -SS_DELAY_MAX : -(int64_t)(b - a);
}

static uint64_t sadd(uint64_t t, int64_t d)
{
    if (d >= 0) return t > UINT64_MAX - (uint64_t)d ? UINT64_MAX : t + (uint64_t)d;
    uint64_t m = (uint64_t)(-d);
    return t > m ? t - m : 0;
}

/* When the work of stream s submitted before `bound` was done: its last
 * operation's end, or its last marker's completion (an event record held
 * back by the legacy barrier completes after the stream's last kernel)
 * unless `ops_only`. */
static uint64_t stream_done_by(const pass *p, int32_t s, int64_t bound, int32_t *who, int ops_only)
{
    const rstream *st = &p->r->st[s];
    int32_t o, k;
    if (p->hint_op) {
        uint32_t i = count_keys_below(st->opk, st->nops, bound, &p->hint_op[s]);
        uint32_t j = count_keys_below(st->mkk, st->nmarks, bound, &p->hint_mk[s]);
        o = i ? st->ops[i - 1] : -1;
        k = j ? st->marks[j - 1] : -1;
    } else {
        o = last_before(p->r, s, bound);
        k = last_mark_before(p->r, s, bound);
    }
    uint64_t t = o >= 0 ? op_end(p, o) : 0;
    *who = o;

    if (!ops_only && k >= 0 && mark_end(p, k) > t) {
        t = mark_end(p, k);
        *who = -1;   /* a marker: no operation of its own */
    }
    return t;
}

static uint64_t stream_done(const pass *p, int32_t s, int64_t bound)
{
    int32_t who;
    return stream_done_by(p, s, bound, &who, 0);
}

/* a drain as the passes keep it (0 is "not yet"), from the measured run */
static uint64_t drain_measured(const ss_replay *r, int32_t b)
{
    return r->lb[b].drain ? r->lb[b].drain : 1;
}

static uint64_t barrier_drain(pass *p, int32_t b)
{
    const ss_replay *r = p->r;
    if (p->real) return r->lb[b].drain;
    /* computed by the first operation that asks, kept for the others: a
     * value of its own (slot nitems + b), born at that operation */
    uint32_t first = r->drain_first[b];   /* known before the recording pass (record_baseline) */
    if (first < p->cur) {
        note_read(p, r->nitems + (uint32_t)b);
        if (p->rec) return first < p->lo && p->spec ? drain_measured(r, b) : p->drain[b];
        if (replayed_here(p, first)) return p->drain[b];
        return shifted(p, first, r->bdrain[b]);
    }
    const rdevice *d = &r->dev[r->lb[b].device];
    uint64_t v = 0;
    for (uint32_t i = 0; i < d->nstreams; i++)
        v = max_u64(v, stream_done(p, d->streams[i], r->lb_key[b]));
    p->drain[b] = v ? v : 1;
    if (p->rec && !v) note_abs(p);
    return v;
}

/* What the legacy default stream's implicit barriers put before work
 * submitted to stream s at `key`: for the legacy stream, the blocking
 * streams' earlier work; for a blocking stream, the legacy stream's. */
static uint64_t legacy_barrier(const pass *p, int32_t s, int64_t key)
{
    const ss_replay *r = p->r;
    const rstream *st = &r->st[s];
    int32_t dv = st->device;
    if (dv < 0 || (p->no_legacy && p->no_legacy[dv])) return 0;
    const rdevice *d = &r->dev[dv];
    uint64_t t = 0;
    /* a device's contexts each have a legacy stream: only its own orders */
    if (st->kind == SS_STREAM_LEGACY_NULL) {
        for (uint32_t i = 0; i < d->ngroup; i++)
            if (r->st[d->group[i]].ldomain == st->ldomain) t = max_u64(t, stream_done(p, d->group[i], key));
    } else if (st->kind == SS_STREAM_BLOCKING || st->kind == SS_STREAM_PER_THREAD) {
        for (uint32_t i = 0; i < d->nlegacy; i++)
            if (r->st[d->legacy[i]].ldomain == st->ldomain) t = max_u64(t, stream_done(p, d->legacy[i], key));
    }
    return t;
}

/* When marker k was complete, from what orders it: its submission, the
 * work before it on its stream, the events it waits on, legacy barriers. */
static uint64_t mark_ready_from(const pass *p, int32_t k, uint64_t enter)
{
    const ss_replay *r = p->r;
    const rmark *x = &r->mk[k];
    const rstream *st = &r->st[x->stream];
    uint64_t t = enter;
    t = max_u64(t, stream_done(p, x->stream, mark_key(x)));
    for (uint32_t w = x->wbeg; w < x->wend; w++)
        t = max_u64(t, stream_done(p, st->waits[w].stream, st->waits[w].bound));
    return max_u64(t, legacy_barrier(p, x->stream, mark_key(x)));
}

/* from its call's entry as pass p has it */
static uint64_t mark_ready(const pass *p, int32_t k)
{
    return mark_ready_from(p, k, call_enter(p, p->r->mk[k].call));
}

/* t raised to what the hardware puts before op o: the operation ahead of
 * it in its hardware queue, its loading barrier's drain. */
static uint64_t op_hw_ready(pass *p, int32_t o, uint64_t t)
{
    const ss_replay *r = p->r;
    const ss_gpu_op *op = &r->m->ops[o];
    if (op->stream < 0) return t;
    int32_t dv = r->st[op->stream].device;
    int32_t q = r->op_qpred[o];
    if (q >= 0 && !(p->no_queue && dv >= 0 && p->no_queue[dv])) t = max_u64(t, op_start(p, q));
    int32_t b = r->op_barrier[o];
    if (b >= 0 && !(p->no_barrier && p->no_barrier[b])) t = max_u64(t, barrier_drain(p, b));
    return t;
}

/* When op o could start: what orders it, without the delay it had after. */
static uint64_t op_ready(pass *p, int32_t o, int with_hw)
{
    const ss_replay *r = p->r;
    const ss_model *m = r->m;
    const ss_gpu_op *op = &m->ops[o];
    uint64_t t;
    if (op->call >= 0) t = call_enter(p, op->call);
    else { t = op->start; note_abs(p); }
    if (r->op_pred[o] >= 0) t = max_u64(t, op_end(p, r->op_pred[o]));
    if (op->stream >= 0) {
        const rstream *st = &r->st[op->stream];
        for (uint32_t w = r->op_wbeg[o]; w < r->op_wend[o]; w++)
            t = max_u64(t, stream_done(p, st->waits[w].stream, st->waits[w].bound));
        if (!(p->no_legacy_op && p->no_legacy_op[o])) t = max_u64(t, legacy_barrier(p, op->stream, r->opkey[o]));
    }
    return with_hw ? op_hw_ready(p, o, t) : t;
}

/* The GPU work call c waited for, done at (0: waited for nothing). */
/* The wait's release so far in *v, raised to the work of stream s before
 * `bound`; *who: the operation that ends it (-1: a marker, or nothing). */
static void wait_on(const pass *p, int32_t s, int64_t bound, uint64_t *v, int32_t *who, int ops_only)
{
    int32_t o;
    uint64_t t = stream_done_by(p, s, bound, &o, ops_only);
    if (t > *v || (*v == 0 && t == 0)) {
        *v = t;
        *who = o;
    }
}

/* Call c's host wait: its cwait, or for a call that waits on nothing one
 * that says so (did not wait, post 0, no releasing operation). */
static const cwait *cwait_of(const ss_replay *r, int32_t c)
{
    static const cwait none = { .stream = -1, .device = -1, .kind = W_NONE, .wait_op = -1 };
    return r->cwi[c] == NO_WAIT ? &none : &r->cws[r->cwi[c]];
}

static uint64_t wait_target(pass *p, int32_t c, int32_t *who)
{
    const ss_replay *r = p->r;
    const cwait w = *cwait_of(r, c);
    *who = -1;
    if (!p->real && p->cflag && p->cflag[c] == 2) {
        /* the streams the host needed, each up to this call */
        uint64_t v = 0;
        uint32_t lo = 0, hi = p->nnarrow;
        while (lo < hi) {                  /* first NARROW_WAIT of call c */
            uint32_t mid = lo + (hi - lo) / 2;
            if (p->rx[p->narrow[mid]].call < c) lo = mid + 1; else hi = mid;
        }
        for (uint32_t i = lo; i < p->nnarrow && p->rx[p->narrow[i]].call == c; i++)
            if (p->rx[p->narrow[i]].stream >= 0)
                wait_on(p, p->rx[p->narrow[i]].stream, 2 * (int64_t)c + 2, &v, who, w.ops_only);
        return v;
    }
    if (!p->real && p->async_launches && w.kind != W_NONE) {
        uint8_t cls = r->m->calls[c].cls;
        if (cls == SS_API_LAUNCH || cls == SS_API_COPY_ASYNC || cls == SS_API_MEMSET_ASYNC) return 0;
    }
    switch (w.kind) {
    case W_STREAM:
    case W_EVENT:
        if (w.stream >= 0) {
            uint64_t v = 0;
            wait_on(p, w.stream, w.bound, &v, who, w.ops_only);
            return v;
        }
        return 0;
    case W_GROUP:
    case W_DEVICE: {
        if (w.device < 0 || w.device >= r->ndev) return 0;
        const rdevice *d = &r->dev[w.device];
        uint64_t v = 0;
        if (w.kind == W_DEVICE) {
            for (uint32_t i = 0; i < d->nstreams; i++)
                if (ss_stream_in_context(r->m, d->streams[i], w.context)) wait_on(p, d->streams[i], w.bound, &v, who, w.ops_only);
        } else {
            /* the legacy stream: its own work, and with the legacy barriers
             * in place the blocking streams' earlier work too (of its own
             * context's legacy domain) */
            int32_t dom = w.stream >= 0 ? r->st[w.stream].ldomain : -1;
            for (uint32_t i = 0; i < d->nlegacy; i++)
                if (w.stream < 0 || r->st[d->legacy[i]].ldomain == dom) wait_on(p, d->legacy[i], w.bound, &v, who, w.ops_only);
            if (!(p->no_legacy && p->no_legacy[w.device]))
                for (uint32_t i = 0; i < d->ngroup; i++)
                    if (w.stream < 0 || r->st[d->group[i]].ldomain == dom) wait_on(p, d->group[i], w.bound, &v, who, w.ops_only);
        }
        return v;
    }
    default:
        return 0;
    }
}

/* Host time of call c's thread in [a, b) that a HOST_TIME relaxation
 * removes (its record read only then). */
static uint64_t removed_host_time(const pass *p, const ss_call *c, uint64_t a, uint64_t b)
{
    if (b <= a || !p->ncuts) return 0;
    uint32_t tid = c->rec->tid;
    for (uint32_t k = 0; k < p->ncuts; k++)
        if (p->cuts[k].tid == tid) return cut_below(&p->cuts[k], b) - cut_below(&p->cuts[k], a);
    return 0;
}

/* Sampled traces (capture_windows.h): what happened while recording was
 * OFF is unseen, so the replay never moves a thread's first call of a window
 * earlier than measured (unseen work may have held it), and a wait that may
 * have waited for unseen work keeps its measured end.  What the recorded
 * part saved before a window is banked: per window, the least that any
 * thread's first call of it had gained. */
static void pin_to_window(const ss_model *m, int32_t k, int32_t prev, uint64_t *e, uint64_t *bank)
{
    int32_t span = ss_capture_call_span(m, k);
    if (span <= 0 || (prev >= 0 && ss_capture_call_span(m, prev) == span)) return;
    uint64_t measured = m->calls[k].rec->t_enter;
    uint64_t gained = *e < measured ? measured - *e : 0;
    if (gained < bank[span]) bank[span] = gained;
    if (*e < measured) *e = measured;
}

/* t + d, saying whether it saturated (the result is then not t's shift) */
static uint64_t sadd_noting(const pass *p, uint64_t t, int64_t d)
{
    uint64_t v = sadd(t, d);
    if (p->abs_read && (d >= 0 ? t > UINT64_MAX - (uint64_t)d : t <= (uint64_t)(-d))) note_abs(p);
    return v;
}

/* Item i's value v, where the pass keeps it: in place for the recording
 * pass (value_at), else by index, with the item marked replayed here. */
static uint64_t keep(pass *p, uint32_t i, uint64_t *mine, int32_t idx, uint64_t v)
{
    if (p->rec) {
        ((ss_replay *)p->r)->bval[i] = v;   /* the baseline being recorded */
    } else {
        mine[idx] = v;
        p->proc[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
    return v;
}

/* The replay's inner loop is inlined where it is called (the what-ifs'
 * run_pass, the recording chunks): each caller's copy is compiled for its
 * own pass (one shared copy made every what-if about 10% slower). */
#define HOT_INLINE inline __attribute__((always_inline))

/* Replays item i (p->cur == i): its time, and in *endv its exit or its
 * operation's end (0: neither). */
static HOT_INLINE uint64_t replay_item(pass *p, uint32_t i, uint64_t *endv)
{
    const ss_replay *r = p->r;
    const ss_model *m = r->m;
    const iref it = item_at(r, i);
    int32_t k = it.idx;
    *endv = 0;
    if (it.rank == I_MARK) return keep(p, i, p->M, k, sadd_noting(p, mark_ready(p, k), r->mk_lat[k]));
    if (it.rank == I_START) {
        const ss_gpu_op *op = &m->ops[k];
        uint64_t ready = op_ready(p, k, 1);
        uint64_t v = keep(p, i, p->S, k, sadd_noting(p, ready, r->lat[k]));
        *endv = v + (op->end - op->start);
        return v;
    }
    const ss_call *c = &m->calls[k];
    uint64_t E = r->ct[k].enter, X = r->ct[k].exit;
    if (it.rank == I_ENTER) {
        int32_t prev = r->call_prev[k];
        uint64_t e;
        if (prev < 0) {
            note_abs(p);
            e = E - removed_host_time(p, c, 0, E);
        } else {
            uint64_t px = r->ct[prev].exit;
            uint64_t gap = E > px ? E - px : 0;
            uint64_t cut = removed_host_time(p, c, px, E);
            uint64_t base = call_exit(p, prev, px);
            e = base + (gap > cut ? gap - cut : 0);
        }
        if (p->cap) pin_to_window(m, k, prev, &e, p->bank);
        keep(p, i, p->E, k, e);
        if (r->posX[k] == i) *endv = folded_exit(p, k, e);   /* its exit, made here */
        return e;
    }
    /* exit (its entry not replayed yet: at the same time, exits go first) */
    uint64_t Ek = call_enter(p, k);
    /* what it did when it did not wait: its measured duration */
    const cwait *cw = cwait_of(r, k);
    uint64_t post = cw->post, own = X - E;
    uint64_t cut = removed_host_time(p, c, E, X);
    own = own > cut ? own - cut : 0;
    uint64_t nowait = cw->waited ? post : own;
    uint64_t x = Ek + nowait;
    if (!(p->cflag && p->cflag[k] == 1)) {
        int32_t who;
        uint64_t T2 = wait_target(p, k, &who);
        /* The host learns of a completion some time after it (the
         * driver's wake-up): a call now released by other work than in
         * the measured run takes that work's measured wake-up, where a
         * call was woken by it. */
        if (who != cw->wait_op && who >= 0 && r->wake[who] != UINT64_MAX) post = r->wake[who];
        if (T2 && T2 + post > x) x = T2 + post;
    }
    if (p->cap && x < X && !ss_capture_wait_known(m, k)) x = X;
    *endv = x;
    return keep(p, i, p->X, (int32_t)r->cwi[k], x);
}

/* The baseline's latest exit or operation end among items [a, b). */
static uint64_t baseline_end_in(const ss_replay *r, uint32_t a, uint32_t b)
{
    uint64_t e = 0;
    while (a < b) {
        if ((a & 63) == 0 && a + 64 <= b) {
            e = max_u64(e, r->blk_end[a >> 6]);
            a += 64;
            continue;
        }
        const iref it = item_at(r, a);
        if (it.rank == I_EXIT) e = max_u64(e, r->bval[a]);
        else if (it.rank == I_START)
            e = max_u64(e, r->bval[a] + (r->m->ops[it.idx].end - r->m->ops[it.idx].start));
        else if (it.rank == I_ENTER && r->posX[it.idx] == a)   /* and its exit (folded_exit) */
            e = max_u64(e, r->bval[a] + (r->ct[it.idx].exit - r->ct[it.idx].enter));
        a++;
    }
    return e;
}

/* The values live at position i (0 <= i <= nitems): born before it (an item
 * j < i, a drain first asked for before it) and read from it on. */
static uint32_t live_at(const ss_replay *r, uint32_t i)
{
    const uint8_t *o = r->outlives + 8 * (size_t)(i >> 6);   /* bit j of the array: o[j / 8] bit j % 8 */
    uint32_t born = r->born_blk[i >> 6], k = 0;
    for (; k < ((i & 63) >> 3); k++) born += (uint32_t)__builtin_popcount(o[k]);
    born += (uint32_t)__builtin_popcount(o[k] & ((1u << (i & 7)) - 1));
    uint32_t lo = 0, hi = r->ndborn;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->dborn[mid] < i) lo = mid + 1; else hi = mid;
    }
    return born + lo - r->die_off[i];
}

/* ---- shortcuts -------------------------------------------------------------
 * A what-if replays from p0, the first item a removed cause can change
 * (before it, the run is the baseline's).  From there it keeps the shift of
 * every live value (replayed before the current item and read by an item
 * from it on, as the baseline reads): baseline minus this pass.  When they
 * all have one shift d, every item up to the next that a removed cause
 * changes, or that does not move with its inputs (it reads a measured time,
 * or saturates), is the baseline's minus d: max, plus a constant and the
 * other operations of the replay commute with a shift, and d is below every
 * replayed time, so no shifted time reaches 0, where the replay tests for
 * "none".  Those items are skipped as one segment and the run's end taken
 * from the baseline's latest end among them, minus d. */
typedef struct dset { int64_t *d; uint32_t *c; uint32_t n, cap; } dset;

static void dset_add(dset *s, int64_t d, uint32_t c)
{
    if (!c) return;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->d[i] == d) { s->c[i] += c; return; }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->d = ss_xrealloc(s->d, s->cap * sizeof *s->d);
        s->c = ss_xrealloc(s->c, s->cap * sizeof *s->c);
    }
    s->d[s->n] = d;
    s->c[s->n++] = c;
}

static void dset_del(dset *s, int64_t d)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->d[i] == d) {
            if (--s->c[i] == 0) {
                s->d[i] = s->d[s->n - 1];
                s->c[i] = s->c[s->n - 1];
                s->n--;
            }
            return;
        }
}

/* the shift of value j (an item, or a load barrier's drain), replayed before cur */
static int64_t shift_of(const pass *p, uint32_t j)
{
    const ss_replay *r = p->r;
    if (j >= r->nitems) {
        uint32_t b = j - r->nitems, pos = r->drain_first[b];
        if (replayed_here(p, pos)) return (int64_t)(r->bdrain[b] - p->drain[b]);
        return shift_at(p, pos);
    }
    if (!replayed_here(p, j)) return shift_at(p, j);
    return (int64_t)(r->bval[j] - pass_value(p, item_at(r, j)));
}

/* rpos: the sorted positions of the items a removed cause changes; no
 * segment from jump_limit on (or at all: !jumps) */
static HOT_INLINE uint64_t evaluate(pass *p, const uint32_t *rpos, uint32_t nrpos, uint32_t jump_limit, int jumps)
{
    const ss_replay *r = p->r;
    uint64_t end = p->p0 ? baseline_end_in(r, 0, p->p0) : 0;
    dset live = { 0 };
    if (jumps) dset_add(&live, 0, live_at(r, p->p0));
    if (p->cap) {
        p->bank = ss_xcalloc(p->cap->nspans, sizeof(uint64_t));
        for (uint32_t s = 0; s < p->cap->nspans; s++) p->bank[s] = UINT64_MAX;
    }
    uint32_t ri = 0, ni = 0;
    if (jumps) {   /* first item at or after p0 that does not move with its inputs */
        uint32_t lo = 0, hi = r->nnoninv;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (r->noninv[mid] < p->p0) lo = mid + 1; else hi = mid;
        }
        ni = lo;
    }
    for (uint32_t i = p->p0; i < r->nitems; ) {
        p->cur = i;
        if (jumps && live.n == 1 && i < jump_limit) {
            while (ri < nrpos && rpos[ri] < i) ri++;
            while (ni < r->nnoninv && r->noninv[ni] < i) ni++;
            uint32_t n = jump_limit < r->nitems ? jump_limit : r->nitems;
            if (ri < nrpos && rpos[ri] < n) n = rpos[ri];
            if (ni < r->nnoninv && r->noninv[ni] < n) n = r->noninv[ni];
            int64_t d = live.d[0];
            uint64_t ad = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
            if (n > i && ad < r->vmin && ad < UINT64_MAX / 4 && r->vmax < UINT64_MAX / 4) {
                seg sg = { i, n, d };
                SS_PUSH(p->segs, p->nsegs, p->csegs, sg);
                uint64_t e = baseline_end_in(r, i, n);
                if (e) end = max_u64(end, e - (uint64_t)d);
                live.n = 0;
                dset_add(&live, d, live_at(r, n));
                i = n;
                continue;
            }
        }
        uint64_t endv, v = replay_item(p, i, &endv);
        end = max_u64(end, endv);
        if (jumps) {
            if ((r->outlives[i >> 3] >> (i & 7)) & 1) dset_add(&live, (int64_t)(r->bval[i] - v), 1);
            const iref it = item_at(r, i);
            if (it.rank == I_START) {
                int32_t b = r->op_barrier[it.idx];
                uint32_t slot = r->nitems + (uint32_t)b;
                if (b >= 0 && r->drain_first[b] == i && ((r->outlives[slot >> 3] >> (slot & 7)) & 1))
                    dset_add(&live, (int64_t)(r->bdrain[b] - p->drain[b]), 1);
            }
            for (uint32_t x = r->die_off[i]; x < r->die_off[i + 1]; x++) dset_del(&live, shift_of(p, r->die[x]));
        }
        i++;
    }
    free(live.d);
    free(live.c);
    if (p->cap) {
        const ss_model *m = r->m;
        /* the GPU too must have gained that much when recording went OFF:
         * the last op of each stream in the span before; nothing when the
         * span lost GPU records at its end (its judged end is early) */
        uint32_t S = m->nstreams ? m->nstreams : 1;
        int32_t *last = ss_xcalloc((size_t)p->cap->nspans * S, sizeof(int32_t));
        for (size_t i = 0; i < (size_t)p->cap->nspans * S; i++) last[i] = -1;
        for (uint32_t o = 0; o < m->nops; o++) {
            int32_t sp = ss_capture_op_span(m, (int32_t)o), st = m->ops[o].stream;
            if (sp < 0 || st < 0) continue;
            int32_t *l = &last[(size_t)sp * S + (size_t)st];
            if (*l < 0 || m->ops[*l].end <= m->ops[o].end) *l = (int32_t)o;
        }
        uint64_t banked = 0;
        for (uint32_t s = 1; s < p->cap->nspans; s++) {
            uint64_t b = p->bank[s] == UINT64_MAX ? 0 : p->bank[s];
            const ss_capture_span *before = &p->cap->spans[s - 1];
            if (before->judged_end < before->t_off) b = 0;
            for (uint32_t st = 0; st < m->nstreams && b; st++) {
                int32_t o = last[(size_t)(s - 1) * S + st];
                if (o < 0) continue;
                uint64_t f = op_end(p, o);
                uint64_t gained = f < m->ops[o].end ? m->ops[o].end - f : 0;
                if (gained < b) b = gained;
            }
            banked += b;
        }
        free(last);
        end = end > banked ? end - banked : 0;
    }
    free(p->bank);
    p->bank = NULL;
    return end;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* the first item after time t (none of a thread's time at or before t is
 * in its interval) */
static uint32_t first_item_after(const ss_replay *r, uint64_t t)
{
    uint32_t lo = 0, hi = r->nitems;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (item_time(r, mid) <= t) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* The first item that host time removed from t0 on can change: the first
 * after t0, or an entry before it whose call had not returned by t0 and
 * makes its exit (folded_exit), taken at the start of the first block of
 * items holding one (fold_xmax: a prefix maximum).  Before it every item,
 * and every exit an entry makes, is the baseline's. */
static uint32_t host_time_from(const ss_replay *r, uint64_t t0)
{
    uint32_t f = first_item_after(r, t0);
    uint32_t nblk = (r->nitems + 63) / 64, lo = 0, hi = nblk;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->fold_xmax[mid] <= t0) lo = mid + 1; else hi = mid;
    }
    if (lo < nblk && (uint64_t)lo * 64 < f) f = lo * 64;
    return f;
}

/* The item from which a removed cause can act: its call's exit, its op's
 * start, its load barrier's first drain, the first item after its host
 * time; 0 for a device-wide cause; r->nitems when it acts nowhere.  A
 * replay is the baseline up to the earliest of its causes'. */
static uint32_t first_acting_item(const ss_replay *r, const ss_relax *x)
{
    const ss_model *m = r->m;
    switch (x->kind) {
    case SS_RELAX_HOST_WAIT:
    case SS_RELAX_NARROW_WAIT:
        return x->call >= 0 && (uint32_t)x->call < m->ncalls && r->posX ? r->posX[x->call] : r->nitems;
    case SS_RELAX_LEGACY_BARRIERS:
        if (x->index >= 0 && (uint32_t)x->index < m->nops)
            return r->posS ? r->posS[x->index] : r->nitems;
        /* the whole device */
        return x->device >= 0 && x->device < r->ndev ? 0 : r->nitems;
    case SS_RELAX_HW_QUEUES:
        return x->device >= 0 && x->device < r->ndev ? 0 : r->nitems;
    case SS_RELAX_ASYNC_LAUNCHES:
        return 0;
    case SS_RELAX_LOAD_BARRIER:
        return x->index >= 0 && (uint32_t)x->index < r->nlb && r->drain_first ? r->drain_first[x->index] : r->nitems;
    case SS_RELAX_HOST_TIME:
        return x->t1 > x->t0 && r->iidx ? host_time_from(r, x->t0) : r->nitems;
    default:
        return r->nitems;
    }
}

/* A cause that acts on items no position can list (all a device's
 * barriers or queues, a loading barrier's drain, every launch): no
 * segment of a what-if removing it is the baseline shifted. */
static int stops_jumps(const ss_replay *r, const ss_relax *x)
{
    switch (x->kind) {
    case SS_RELAX_LEGACY_BARRIERS:
        if (x->index >= 0 && (uint32_t)x->index < r->m->nops) return 0;
        return x->device >= 0 && x->device < r->ndev;
    case SS_RELAX_HW_QUEUES:
        return x->device >= 0 && x->device < r->ndev;
    case SS_RELAX_LOAD_BARRIER:
        return x->index >= 0 && (uint32_t)x->index < r->nlb;
    case SS_RELAX_ASYNC_LAUNCHES:
        return 1;
    default:
        return 0;
    }
}

/* A what-if that replays the whole run even with the baseline recorded
 * (no shortcut, differing from item 0): it reads nothing of the baseline,
 * so it can run while the baseline is recorded. */
static int replays_whole_run(const ss_replay *r, const ss_relax *rx, uint32_t n)
{
    if (r->full || ss_capture_sampled(r->m)) return 1;
    int jumps = 1;
    uint32_t p0 = r->nitems;
    for (uint32_t i = 0; i < n; i++) {
        if (stops_jumps(r, &rx[i])) jumps = 0;
        uint32_t q = first_acting_item(r, &rx[i]);
        if (q < p0) p0 = q;
    }
    return !jumps && p0 == 0;
}

/* One what-if on worker `worker`'s scratch times (only that worker uses
 * them; everything else of the replay is read-only here).  baseline: the
 * baseline is recorded and its shortcuts may be taken; without, the whole
 * run is replayed (the same end: the shortcuts are exact). */
/* Worker `worker`'s scratch times, made on its first what-if with their
 * pages touched: 8 bytes a call, op and marker and an exit that is an item
 * (~80 MB a worker at 10 M records), whose first touches were a tenth of a
 * first what-if's time.  A what-if that reads the baseline makes them while
 * it waits for it (run_job), not after. */
static void *touched_table(size_t n, size_t sz)
{
    volatile char *p = ss_xcalloc(n, sz);   /* volatile: calloc's zeros are no reason to skip a store */
    for (size_t q = 0; q < n * sz; q += 4096) p[q] = 0;
    return (void *)p;
}

static struct scratch *scratch_of(const ss_replay *r, unsigned worker)
{
    ss_replay *rw = (ss_replay *)r;
    struct scratch *sc = &rw->sc[worker];
    if (!sc->E) {
        sc->E = touched_table(r->m->ncalls + 1, sizeof(uint64_t));
        sc->X = touched_table(r->ncws + 1, sizeof(uint64_t));   /* by cwi: exits that are items */
        sc->S = touched_table(r->m->nops + 1, sizeof(uint64_t));
        sc->M = touched_table(r->nmk + 1, sizeof(uint64_t));
    }
    return sc;
}

static uint64_t run_pass(const ss_replay *r, const ss_relax *rx, uint32_t n, unsigned worker, int baseline)
{
    const ss_model *m = r->m;
    pass p = { .r = r, .rx = rx, .nrx = n, .with_hw = 1 };
    struct scratch *sc = scratch_of(r, worker);
    p.E = sc->E; p.X = sc->X; p.S = sc->S; p.M = sc->M;
    p.drain = ss_xcalloc(r->nlb + 1, sizeof(uint64_t));
    p.proc = ss_xcalloc(r->nitems / 8 + 1, 1);
    p.hint_op = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t));
    p.hint_mk = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t));
    /* where each removed cause first acts; device-wide ones act anywhere */
    uint32_t *rpos = ss_xcalloc(n + 1, sizeof(uint32_t)), nrpos = 0;
    uint32_t p0 = r->nitems, jump_limit = r->nitems;
    int jumps = baseline && !r->full;
    for (uint32_t i = 0; i < n; i++) {
        const ss_relax *x = &rx[i];
        switch (x->kind) {
        case SS_RELAX_HOST_WAIT:
        case SS_RELAX_NARROW_WAIT:
            if (x->call < 0 || (uint32_t)x->call >= m->ncalls) break;
            if (!p.cflag) p.cflag = ss_xcalloc(m->ncalls, 1);
            if (x->kind == SS_RELAX_HOST_WAIT || p.cflag[x->call] != 1)
                p.cflag[x->call] = x->kind == SS_RELAX_HOST_WAIT ? 1 : 2;
            if (r->posX) rpos[nrpos++] = r->posX[x->call];
            break;
        case SS_RELAX_LEGACY_BARRIERS:
            if (x->index >= 0 && (uint32_t)x->index < m->nops) {
                if (!p.no_legacy_op) p.no_legacy_op = ss_xcalloc(m->nops, 1);
                p.no_legacy_op[x->index] = 1;
                if (r->posS) rpos[nrpos++] = r->posS[x->index];
                break;
            }
            /* the whole device */
            __attribute__((fallthrough));
        case SS_RELAX_HW_QUEUES: {
            if (x->device < 0 || x->device >= r->ndev) break;
            uint8_t **arr = x->kind == SS_RELAX_LEGACY_BARRIERS ? &p.no_legacy : &p.no_queue;
            if (!*arr) *arr = ss_xcalloc((size_t)r->ndev, 1);
            (*arr)[x->device] = 1;
            break;
        }
        case SS_RELAX_LOAD_BARRIER:
            if (x->index < 0 || (uint32_t)x->index >= r->nlb) break;
            if (!p.no_barrier) p.no_barrier = ss_xcalloc(r->nlb, 1);
            p.no_barrier[x->index] = 1;
            /* its drain is no value of this pass: no shift to keep (stops_jumps) */
            break;
        case SS_RELAX_HOST_TIME:
            if (x->t1 > x->t0 && r->iidx) {
                uint32_t f = host_time_from(r, x->t0);
                if (f < jump_limit) jump_limit = f;
            }
            break;
        case SS_RELAX_ASYNC_LAUNCHES:
            p.async_launches = 1;
            break;
        default:
            break;
        }
        if (stops_jumps(r, x)) jumps = 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t q = first_acting_item(r, &rx[i]);
        if (q < p0) p0 = q;
    }
    if (r->full || !baseline) p0 = 0;
    if (ss_capture_sampled(m)) {
        /* Sampled traces (pin_to_window): a window's first calls and the
         * waits on unseen work read measured times, and the savings banked
         * per window need every op of this pass: replayed in full. */
        p.cap = ss_capture_of(m);
        p0 = 0;
        jumps = 0;
    }
    qsort(rpos, nrpos, sizeof(uint32_t), cmp_u32);
    p.p0 = p0;
    index_host_cuts(&p);
    index_narrow_waits(&p);
    uint64_t end = evaluate(&p, rpos, nrpos, jump_limit, jumps);
    for (uint32_t k = 0; k < p.ncuts; k++) {
        free(p.cuts[k].t0); free(p.cuts[k].t1); free(p.cuts[k].s0); free(p.cuts[k].s1);
    }
    free(p.cuts); free(p.narrow); free(rpos); free(p.segs); free(p.proc);
    free(p.drain); free(p.hint_op); free(p.hint_mk);
    free(p.cflag); free(p.no_legacy); free(p.no_legacy_op); free(p.no_queue); free(p.no_barrier);
    return end;
}

uint64_t ss_replay_run(const ss_replay *r, const ss_relax *rx, uint32_t n)
{
    wait_baseline(r);
    return run_pass(r, rx, n, 0, 1);
}

/* ---- the recording pass ----------------------------------------------------
 * The baseline (the replay with nothing removed) is one pass in item order,
 * each item reading values made before it.  Those are nearly always the
 * measured times themselves: the replay reproduces the run its delays were
 * measured from (on every recorded fixture, every value is).  So the items
 * are cut into chunks replayed at once, each taking a value made before it
 * as measured (item_time; a load barrier's drain: its measured one) and
 * logging the values it read so.  Then each chunk's log is compared with
 * what the chunks it read from made, once those are known, and a chunk that
 * read a value that differs is replayed again with their values (chunks
 * whose sources are known at once, at once).
 * Every item then gets what the one pass gives it: the same function (which
 * values an item reads does not depend on them) of the same values.  The
 * logs also carry the last readers of other chunks' values, set once every
 * chunk is known; a chunk sets only its own values' while it runs.
 * A sampled trace's pass banks per window what its first calls gained
 * (pin_to_window) in one pass: it is replayed whole, on one thread. */
typedef struct record_job {
    ss_replay *r;
    uint64_t *drain;           /* per load barrier, shared: each is made by the chunk of its first asker */
    uint8_t *abs_read;
    uint32_t nchunks;
    uint32_t *lo;              /* per chunk: its first item; lo[nchunks] = nitems */
    xlog *log;
    uint64_t *end;             /* per chunk: its latest exit or operation end */
    int spec;                  /* the chunks' first runs: values before lo guessed */
    const uint32_t *redo;      /* a round's chunks to replay again (record_again) */
} record_job;

static void record_chunk(void *ctx, uint32_t c, unsigned worker)
{
    (void)worker;
    record_job *j = ctx;
    ss_replay *r = j->r;
    pass p = { .r = r, .with_hw = 1, .rec = 1, .drain = j->drain, .abs_read = j->abs_read,
               .lastread = r->lastread, .lo = j->lo[c], .spec = j->spec, .xl = &j->log[c] };
    p.hint_op = ss_xcalloc(r->m->nstreams + 1, sizeof(uint32_t));
    p.hint_mk = ss_xcalloc(r->m->nstreams + 1, sizeof(uint32_t));
    uint64_t end = 0;
    for (uint32_t i = j->lo[c]; i < j->lo[c + 1]; i++) {
        p.cur = i;
        uint64_t endv;
        replay_item(&p, i, &endv);
        end = max_u64(end, endv);
    }
    j->end[c] = end;
    free(p.hint_op);
    free(p.hint_mk);
}

/* whether every value chunk c read before its first item is what it took */
static int chunk_guessed_right(const record_job *j, uint32_t c)
{
    const ss_replay *r = j->r;
    const xlog *l = &j->log[c];
    for (uint32_t k = 0; k < l->n; k++) {
        uint32_t s = l->v[k].slot;
        if (s < r->nitems ? r->bval[s] != item_time(r, s) : j->drain[s - r->nitems] != drain_measured(r, (int32_t)(s - r->nitems)))
            return 0;
    }
    return 1;
}

/* the chunk holding item pos */
static uint32_t chunk_of(const record_job *j, uint32_t pos)
{
    uint32_t lo = 0, hi = j->nchunks;   /* the last chunk whose first item is at or before pos */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (j->lo[mid] <= pos) lo = mid; else hi = mid;
    }
    return lo;
}

/* the chunks whose values chunk c read, a bit each (chunks before it) */
static uint64_t chunk_sources(const record_job *j, uint32_t c)
{
    const ss_replay *r = j->r;
    uint64_t bits = 0;
    for (uint32_t k = 0; k < j->log[c].n; k++) {
        uint32_t s = j->log[c].v[k].slot;
        bits |= 1ull << chunk_of(j, value_born(r, s));
    }
    return bits;
}

static uint64_t chunk_bits(uint32_t n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

/* A round's chunk c replayed again, its sources known: what its first run
 * wrote is cleared first (its items' flags and last readers, its drains'
 * last readers, its log; other chunks' are not its to touch). */
static void record_again(void *ctx, uint32_t k, unsigned worker)
{
    record_job *j = ctx;
    ss_replay *r = j->r;
    uint32_t c = j->redo[k], lo = j->lo[c], hi = j->lo[c + 1];
    memset(j->abs_read + lo, 0, hi - lo);
    memset(r->lastread + lo, 0, (size_t)(hi - lo) * sizeof(uint32_t));
    for (uint32_t b = 0; b < r->nlb; b++)
        if (r->drain_first[b] >= lo && r->drain_first[b] < hi) r->lastread[r->nitems + b] = 0;
    j->log[c].n = 0;
    record_chunk(j, c, worker);
}

/* Chunks of at least this many items: fewer cost more in thread starts and
 * logged reads than they save.  Four per thread, so that a chunk replayed
 * again costs a fraction of a thread's share. */
#define RECORD_CHUNK_MIN 65536
_Static_assert(4 * SS_MAX_THREADS <= 64, "a chunk's sources are bits of a 64-bit word");

static uint64_t record_chunks(ss_replay *r, uint64_t *drain, uint8_t *abs_read)
{
    unsigned threads = ss_thread_count();
    uint32_t nchunks = r->nitems / RECORD_CHUNK_MIN;
    if (nchunks > 4 * threads) nchunks = 4 * threads;
    if (threads == 1 || nchunks == 0) nchunks = 1;
    record_job j = { .r = r, .drain = drain, .abs_read = abs_read, .nchunks = nchunks, .spec = 1 };
    j.lo = ss_xcalloc(nchunks + 1, sizeof(uint32_t));
    for (uint32_t c = 0; c <= nchunks; c++) j.lo[c] = (uint32_t)((uint64_t)r->nitems * c / nchunks);
    j.log = ss_xcalloc(nchunks, sizeof(xlog));
    j.end = ss_xcalloc(nchunks, sizeof(uint64_t));
    ss_parallel_for(nchunks, threads, record_chunk, &j);
    /* Which chunks each one read values of (the same whatever the values),
     * then rounds: a chunk whose sources are all known is known when it
     * guessed right, else replayed again; those of a round at once.  The
     * first chunk not known always has its sources known: every round
     * settles at least one. */
    uint64_t *src = ss_xcalloc(nchunks, sizeof(uint64_t));
    for (uint32_t c = 1; c < nchunks; c++) src[c] = chunk_sources(&j, c);
    uint64_t known = 1;   /* chunk 0 read nothing before it */
    uint32_t again = 0, rounds = 0;
    uint32_t *redo = ss_xcalloc(nchunks, sizeof(uint32_t));
    j.spec = 0;
    j.redo = redo;
    while (known != chunk_bits(nchunks)) {
        uint32_t nredo = 0;
        for (uint32_t c = 1; c < nchunks; c++) {
            uint64_t bit = 1ull << c;
            if ((known & bit) || (src[c] & ~known)) continue;
            if (chunk_guessed_right(&j, c)) known |= bit;
            else redo[nredo++] = c;
        }
        ss_parallel_for(nredo, threads, record_again, &j);
        for (uint32_t k = 0; k < nredo; k++) known |= 1ull << redo[k];
        again += nredo;
        rounds += nredo > 0;
    }
    free(redo);
    free(src);
    uint64_t end = 0;
    for (uint32_t c = 0; c < nchunks; c++) {
        end = max_u64(end, j.end[c]);
        for (uint32_t k = 0; k < j.log[c].n; k++) {
            const xread *x = &j.log[c].v[k];
            if (r->lastread[x->slot] < x->reader) r->lastread[x->slot] = x->reader;
        }
        free(j.log[c].v);
    }
    r->record_chunks = nchunks;
    r->record_again = again;
    r->record_rounds = rounds;
    free(j.log); free(j.end); free(j.lo);
    return end;
}

/* A sampled trace's recording pass: the whole run on this thread. */
static uint64_t record_whole(ss_replay *r, uint64_t *drain, uint8_t *abs_read)
{
    pass p = { .r = r, .with_hw = 1, .rec = 1, .drain = drain, .abs_read = abs_read, .lastread = r->lastread,
               .cap = ss_capture_of(r->m) };
    p.hint_op = ss_xcalloc(r->m->nstreams + 1, sizeof(uint32_t));
    p.hint_mk = ss_xcalloc(r->m->nstreams + 1, sizeof(uint32_t));
    uint64_t end = evaluate(&p, NULL, 0, r->nitems, 0);
    free(p.hint_op);
    free(p.hint_mk);
    return end;
}

/* the baseline's summary for the shortcuts, per slice of 64-item blocks:
 * the range of its values, the items that do not shift, each block's end */
typedef struct summary_job {
    ss_replay *r;
    const uint8_t *abs_read;
    uint64_t *vmin, *vmax;     /* per slice */
    uint32_t **noninv, *nnoninv, *cnoninv;
} summary_job;

static void summary_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    summary_job *j = ctx;
    ss_replay *r = j->r;
    const ss_model *m = r->m;
    uint64_t vmin = UINT64_MAX, vmax = 0;
    for (size_t blk = from; blk < to; blk++) {
        uint32_t a = (uint32_t)blk * 64, b = a + 64 < r->nitems ? a + 64 : r->nitems;
        uint64_t bend = 0;
        for (uint32_t i = a; i < b; i++) {
            const iref it = item_at(r, i);
            uint64_t v = r->bval[i];
            /* an entry that makes its call's exit too (folded_exit) ends there */
            int folded = it.rank == I_ENTER && r->posX[it.idx] == i;
            uint64_t hi = it.rank == I_START ? v + (m->ops[it.idx].end - m->ops[it.idx].start)
                        : folded ? v + (r->ct[it.idx].exit - r->ct[it.idx].enter) : v;
            if (v < vmin) vmin = v;
            if (hi > vmax) vmax = hi;
            if (v > hi) vmax = UINT64_MAX;   /* an end before its start wrapped */
            if (j->abs_read[i]) SS_PUSH(j->noninv[sl], j->nnoninv[sl], j->cnoninv[sl], i);
            uint64_t e = it.rank == I_EXIT || it.rank == I_START || folded ? hi : 0;
            if (e > bend) bend = e;
        }
        r->blk_end[blk] = bend;
    }
    j->vmin[sl] = vmin;
    j->vmax[sl] = vmax;
}

static void summarize_baseline(ss_replay *r, const uint8_t *abs_read)
{
    size_t nblk = (r->nitems + 63) / 64;
    unsigned slices = ss_slice_count(nblk, SS_MIN_SLICE / 64, ss_thread_count());
    uint64_t vmin[SS_MAX_THREADS], vmax[SS_MAX_THREADS];
    uint32_t *noninv[SS_MAX_THREADS] = { 0 }, nnoninv[SS_MAX_THREADS] = { 0 }, cnoninv[SS_MAX_THREADS] = { 0 };
    summary_job j = { r, abs_read, vmin, vmax, noninv, nnoninv, cnoninv };
    ss_parallel_slices(nblk, slices, summary_slice, &j);
    r->vmin = UINT64_MAX;
    r->vmax = 0;
    uint32_t n = 0;
    for (unsigned s = 0; s < slices; s++) n += nnoninv[s];
    r->noninv = ss_xcalloc(n + 1, sizeof(uint32_t));
    for (unsigned s = 0; s < slices; s++) {
        if (vmin[s] < r->vmin) r->vmin = vmin[s];
        if (vmax[s] > r->vmax) r->vmax = vmax[s];
        if (nnoninv[s]) memcpy(r->noninv + r->nnoninv, noninv[s], nnoninv[s] * sizeof(uint32_t));
        r->nnoninv += nnoninv[s];
        free(noninv[s]);
    }
}

/* A digest of n values (64-bit when wide, else 32-bit) folded into h, by
 * blocks on threads: the same number whatever the threads. */
#define DIGEST_BLOCK 65536
typedef struct digest_job { const void *v; size_t n; int wide; uint64_t *part; } digest_job;

static void digest_block(void *ctx, uint32_t b, unsigned worker)
{
    (void)worker;
    digest_job *j = ctx;
    size_t from = (size_t)b * DIGEST_BLOCK, to = from + DIGEST_BLOCK < j->n ? from + DIGEST_BLOCK : j->n;
    uint64_t h = 0;
    for (size_t q = from; q < to; q++)
        h = ss_hash64(h ^ (j->wide ? ((const uint64_t *)j->v)[q] : ((const uint32_t *)j->v)[q]));
    j->part[b] = h;
}

static uint64_t digest(uint64_t h, const void *v, size_t n, int wide)
{
    uint32_t nb = (uint32_t)((n + DIGEST_BLOCK - 1) / DIGEST_BLOCK);
    digest_job j = { v, n, wide, ss_xcalloc(nb + 1, sizeof(uint64_t)) };
    ss_parallel_for(nb, ss_thread_count(), digest_block, &j);
    for (uint32_t b = 0; b < nb; b++) h = ss_hash64(h ^ j.part[b]);
    free(j.part);
    return ss_hash64(h ^ n);
}

/* The values' lifetimes (record_baseline): which values outlive the item
 * that makes it, and per position the values last read there, on slices.
 * Counts are atomic adds (positions are shared between slices); the lists
 * come out in one order whatever the threads did (lifetimes_order). */
typedef struct lifetime_job {
    ss_replay *r;
    uint32_t nv;
    uint32_t ndie;
} lifetime_job;

static void lifetimes_count(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    lifetime_job *lj = ctx;
    ss_replay *r = lj->r;
    uint32_t n = 0, hi = to * 64 < lj->nv ? (uint32_t)(to * 64) : lj->nv;
    for (uint32_t j = (uint32_t)(from * 64); j < hi; j++) {
        uint32_t born = value_born(r, j);
        if (born >= r->nitems || r->lastread[j] <= born) continue;
        r->outlives[j >> 3] |= (uint8_t)(1u << (j & 7));
        __atomic_fetch_add(&r->die_off[r->lastread[j] + 1], 1, __ATOMIC_RELAXED);
        n++;
    }
    __atomic_fetch_add(&lj->ndie, n, __ATOMIC_RELAXED);
}

static void lifetimes_place(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    lifetime_job *lj = ctx;
    ss_replay *r = lj->r;
    uint32_t hi = to * 64 < lj->nv ? (uint32_t)(to * 64) : lj->nv;
    for (uint32_t j = (uint32_t)(from * 64); j < hi; j++) {
        if (!((r->outlives[j >> 3] >> (j & 7)) & 1)) continue;
        uint32_t at = __atomic_sub_fetch(&r->die_off[r->lastread[j] + 1], 1, __ATOMIC_RELAXED);
        r->die[at] = j;
    }
}

/* each position's list, highest value first (a list is a few values) */
static void lifetimes_order(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    lifetime_job *lj = ctx;
    ss_replay *r = lj->r;
    for (size_t q = from; q < to; q++) {
        uint32_t *v = r->die + r->die_off[q], n = r->die_off[q + 1] - r->die_off[q];
        for (uint32_t a = 1; a < n; a++) {
            uint32_t x = v[a], b = a;
            for (; b > 0 && v[b - 1] < x; b--) v[b] = v[b - 1];
            v[b] = x;
        }
    }
}

/* items [from, to) at their places: each item is one call's entry or exit,
 * one op's start or one marker's completion, so no two write one entry */
static void positions_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    ss_replay *r = ctx;
    for (size_t i = from; i < to; i++) {
        const iref it = item_at(r, (uint32_t)i);
        uint32_t *pos = it.rank == I_MARK ? r->posM : it.rank == I_START ? r->posS
                      : it.rank == I_ENTER ? r->posE : r->posX;
        pos[it.idx] = (uint32_t)i;
    }
}

/* a call whose exit is no item (exits_as_items): its exit's position is its
 * entry's, where it is made (call_exit tells such a call by that) */
typedef struct folded_job { ss_replay *r; const uint8_t *exit_item; } folded_job;

static void folded_positions_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    folded_job *j = ctx;
    for (size_t c = from; c < to; c++)
        if (!j->exit_item[c]) j->r->posX[c] = j->r->posE[c];
}

/* per 64 items: the latest measured exit of the folded calls whose entries
 * are in the block (made prefix maxima after) */
static void folded_exits_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    ss_replay *r = ctx;
    for (size_t blk = from; blk < to; blk++) {
        uint32_t a = (uint32_t)blk * 64, b = a + 64 < r->nitems ? a + 64 : r->nitems;
        uint64_t x = 0;
        for (uint32_t i = a; i < b; i++)
            if (r->irank[i] == I_ENTER && r->posX[r->iidx[i]] == i) x = max_u64(x, r->ct[r->iidx[i]].exit);
        r->fold_xmax[blk] = x;
    }
}

/* Where each value is made in the measured order: every pass reads
 * through these, the whole-run what-ifs too (before the baseline). */
static void index_positions(ss_replay *r, const uint8_t *exit_item)
{
    const ss_model *m = r->m;
    r->posE = ss_xcalloc(m->ncalls + 1, sizeof(uint32_t));
    r->posX = ss_xcalloc(m->ncalls + 1, sizeof(uint32_t));
    r->posS = ss_xcalloc(m->nops + 1, sizeof(uint32_t));
    r->posM = ss_xcalloc(r->nmk + 1, sizeof(uint32_t));
    ss_parallel_slices(r->nitems, build_slices(r->nitems), positions_slice, r);
    folded_job fj = { r, exit_item };
    ss_parallel_slices(m->ncalls, build_slices(m->ncalls), folded_positions_slice, &fj);
    size_t nblk = (r->nitems + 63) / 64;
    r->fold_xmax = ss_xcalloc(nblk + 1, sizeof(uint64_t));
    ss_parallel_slices(nblk, ss_slice_count(nblk, SS_MIN_SLICE / 64, ss_thread_count()), folded_exits_slice, r);
    for (size_t q = 1; q < nblk; q++) r->fold_xmax[q] = max_u64(r->fold_xmax[q], r->fold_xmax[q - 1]);
    /* each drain's first asker, where the recording pass makes it: the
     * first start of an op behind the barrier (op_hw_ready asks for every op
     * on a stream); UINT32_MAX for none */
    r->drain_first = ss_xcalloc(r->nlb + 1, sizeof(uint32_t));
    for (uint32_t b = 0; b < r->nlb; b++) r->drain_first[b] = UINT32_MAX;
    for (uint32_t o = 0; o < m->nops; o++) {
        int32_t b = r->op_barrier[o];
        if (b >= 0 && m->ops[o].stream >= 0 && r->posS[o] < r->drain_first[b]) r->drain_first[b] = r->posS[o];
    }
}

/* The replay with nothing removed, recorded for the shortcuts: its values
 * and last readers, and per position the values live there and those whose
 * last reader it is. */
static void record_baseline(ss_replay *r)
{
    double t = ss_seconds();
    const ss_model *m = r->m;
    uint32_t nv = r->nitems + r->nlb;
    r->bval = ss_xcalloc(r->nitems + 1, sizeof(uint64_t));
    r->blk_end = ss_xcalloc(r->nitems / 64 + 1, sizeof(uint64_t));
    r->lastread = ss_xcalloc(nv + 1, sizeof(uint32_t));
    r->bdrain = ss_xcalloc(r->nlb + 1, sizeof(uint64_t));
    uint8_t *abs_read = ss_xcalloc(r->nitems + 1, 1);
    /* the drains as the pass makes them: 0 until asked */
    uint64_t *drain = ss_xcalloc(r->nlb + 1, sizeof(uint64_t));
    r->base_end = ss_capture_sampled(m) ? record_whole(r, drain, abs_read) : record_chunks(r, drain, abs_read);
    summarize_baseline(r, abs_read);
    memcpy(r->bdrain, drain, r->nlb * sizeof(uint64_t));
    free(drain);
    free(abs_read);
    ss_timing("replay.build.record", t);
    t = ss_seconds();
    /* a value lives from after the item that makes it to its last reader:
     * per position, the values last read there (die_off[q]..die_off[q+1]),
     * and the number live (born before, read from it on).  What needs the
     * last readers is made first and they are freed before the live
     * counts are allocated (the build's peak: one array per position less) */
    r->die_off = ss_xcalloc(r->nitems + 2, sizeof(uint32_t));
    r->outlives = ss_xcalloc(nv / 64 + 1, 8);
    lifetime_job lj = { r, nv, 0 };
    /* slices of whole 64-value words: a slice sets the bits of its own bytes */
    uint32_t nwords = nv / 64 + 1;
    ss_parallel_slices(nwords, build_slices((size_t)nwords * 64), lifetimes_count, &lj);
    for (uint32_t i = 0; i <= r->nitems; i++) r->die_off[i + 1] += r->die_off[i];
    /* each slice takes its values' places from the end of their positions'
     * lists down, in whatever order the threads come; then each list is put
     * in the order one pass in value order gives it (the values last read
     * at a position, highest first) */
    r->die = ss_xcalloc(lj.ndie + 1, sizeof(uint32_t));
    ss_parallel_slices(nwords, build_slices((size_t)nwords * 64), lifetimes_place, &lj);
    memmove(r->die_off, r->die_off + 1, (r->nitems + 1) * sizeof(uint32_t));
    r->die_off[r->nitems + 1] = lj.ndie;
    ss_parallel_slices((size_t)r->nitems + 1, build_slices((size_t)r->nitems + 1), lifetimes_order, &lj);
    /* from here only whether a value outlives the item that makes it */
    free(r->lastread);
    r->lastread = NULL;
    /* live at position i: the values born before i less those last read
     * before i (die_off[i]: the lists are by position), counted by live_at
     * from per-64-item counts of the outliving items and the outliving
     * drains' births (4 bytes an item less than a count per position) */
    r->born_blk = ss_xcalloc(r->nitems / 64 + 2, sizeof(uint32_t));
    for (uint32_t q = 0, acc = 0; q <= r->nitems / 64; q++) {
        r->born_blk[q] = acc;
        uint64_t w;   /* 64 bits, whatever their order in it */
        memcpy(&w, r->outlives + 8 * (size_t)q, 8);
        if ((uint64_t)(q + 1) * 64 > r->nitems) break;   /* the last, partial word: the drains' bits follow */
        acc += (uint32_t)__builtin_popcountll(w);
    }
    r->dborn = ss_xcalloc(r->nlb + 1, sizeof(uint32_t));
    for (uint32_t b = 0; b < r->nlb; b++) {
        uint32_t j = r->nitems + b;
        if ((r->outlives[j >> 3] >> (j & 7)) & 1) r->dborn[r->ndborn++] = r->drain_first[b];
    }
    qsort(r->dborn, r->ndborn, sizeof(uint32_t), cmp_u32);
    ss_timing("replay.build.lifetimes", t);
    if (ss_timings_on()) {
        /* what the shortcuts read, as one number: the same however many
         * chunks recorded it (tests/test_replay_invariance.sh) */
        uint64_t h = ss_hash64(r->base_end);
        h = digest(h, r->bval, r->nitems, 1);
        h = digest(h, r->noninv, r->nnoninv, 0);
        h = digest(h, r->die_off, r->nitems + 2, 0);
        h = digest(h, r->die, r->die_off[r->nitems + 1], 0);
        h = digest(h, r->blk_end, (r->nitems + 63) / 64, 1);
        h = digest(h, r->bdrain, r->nlb, 1);
        h = digest(h, r->drain_first, r->nlb, 0);
        fprintf(stderr, "syncsight: replay: the recording pass: %u chunks, %u replayed again in %u rounds, baseline %016llx\n",
                r->record_chunks, r->record_again, r->record_rounds, (unsigned long long)h);
    }
}

uint64_t ss_replay_end(const ss_replay *r) { return r->end; }

static int relax_eq(const ss_relax *a, const ss_relax *b)
{
    return a->kind == b->kind && a->call == b->call && a->stream == b->stream && a->device == b->device &&
           a->index == b->index && a->tid == b->tid && a->t0 == b->t0 && a->t1 == b->t1;
}

static uint64_t relax_hash(const ss_relax *x)
{
    uint64_t h = ss_hash64(x->kind ^ ((uint64_t)(uint32_t)x->call << 8));
    h = ss_hash64(h ^ (uint32_t)x->stream ^ ((uint64_t)(uint32_t)x->device << 32));
    h = ss_hash64(h ^ (uint32_t)x->index ^ ((uint64_t)x->tid << 32));
    h = ss_hash64(h ^ x->t0);
    return ss_hash64(h ^ x->t1 ^ (x->t1 >> 31));
}

/* The relaxations in their order with repeats removed: the same what-if.
 * A repeated flag (a call's host wait, an op's or device's barriers, a
 * queue, a loading barrier, launch blocking) sets what it set already; a
 * repeated narrowed wait waits again for the same work (the first of equal
 * candidates stays the one that released the call).  HOST_TIME intervals
 * add up (each removes its time), so they all stay. */
static uint32_t relax_unique(const ss_relax *rx, uint32_t n, ss_relax *out)
{
    ss_u64map seen = { 0 };
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (rx[i].kind != SS_RELAX_HOST_TIME) {
            uint64_t h = relax_hash(&rx[i]);
            int64_t j = ss_u64map_get(&seen, h, -1);
            if (j >= 0 && relax_eq(&out[j], &rx[i])) continue;
            /* a hash shared by two different relaxations keeps both: a
             * repeat left in changes nothing */
            if (j < 0) ss_u64map_put(&seen, h, (int64_t)k);
        }
        out[k++] = rx[i];
    }
    ss_u64map_free(&seen);
    return k;
}

/* Where a what-if starts to differ from the recorded run, as run_pass
 * finds it: the items it replays are at most those from there on.  Only
 * used to start the longest what-ifs first. */
static uint32_t whatif_cost(const ss_replay *r, const ss_relax *rx, uint32_t n)
{
    if (r->full || ss_capture_sampled(r->m)) return r->nitems;
    uint32_t p0 = r->nitems;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t q = first_acting_item(r, &rx[i]);
        if (q < p0) p0 = q;
    }
    return r->nitems - p0;
}

/* Two what-ifs (relaxations with repeats removed, and their hash) ask the
 * same. */
static int same_whatif(uint64_t ha, const ss_relax *a, uint32_t na, uint64_t hb, const ss_relax *b, uint32_t nb)
{
    if (ha != hb || na != nb) return 0;
    for (uint32_t q = 0; q < na; q++)
        if (!relax_eq(&a[q], &b[q])) return 0;
    return 1;
}

/* One what-if of a batch (ss_replay_savings). */
typedef struct wjob {
    ss_relax *u; uint32_t nu;  /* its relaxations, repeats removed (full: as given) */
    uint64_t hash;
    int32_t same;              /* an earlier job of the batch asking the same what-if, -1 */
    int pending;               /* to replay (not in the memo) */
    int whole;                 /* it replays the whole run: it starts before the baseline is recorded */
    uint32_t cost;             /* the items from its first change on (whatif_cost) */
    uint64_t end;              /* replayed end */
} wjob;

typedef struct wbatch {
    ss_whatif *w;
    wjob *job;
    uint32_t *run;             /* the jobs to replay, longest first */
    uint32_t nrun;
} wbatch;

static void run_job(void *ctx, uint32_t i, unsigned worker)
{
    wbatch *b = ctx;
    uint32_t j = b->run[i];
    wjob *job = &b->job[j];
    double t0 = ss_seconds();
    scratch_of(b->w[j].r, worker);
    if (!job->whole) wait_baseline(b->w[j].r);
    double t1 = ss_seconds();
    job->end = run_pass(b->w[j].r, job->u, job->nu, worker, !job->whole);
    /* Which what-if the batch waited for, and whether for the baseline or
     * for its own replay: the critical path's last stretch on a large trace
     * (docs/performance.md). */
    if (ss_timings_on())
        fprintf(stderr, "syncsight: whatif: %u of %u: %s, %u relaxation%s, %u items from its first change; "
                "waited %.3f s for the baseline, replayed in %.3f s (ended at %.3f s)\n",
                i + 1, b->nrun, job->whole ? "whole run" : "with shortcuts", job->nu, job->nu == 1 ? "" : "s",
                job->cost, t1 - t0, ss_seconds() - t1, ss_seconds_since_start());
}

typedef struct cost_key { uint32_t cost, job; } cost_key;
static int cmp_cost(const void *a, const void *b)
{
    const cost_key *x = a, *y = b;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return x->job < y->job ? -1 : x->job > y->job;
}

/* One batch at a time: the memo and the workers' scratch times belong to
 * the replay, and the rules that ask for savings run on threads of their
 * own (rules.c).  A batch's own replays still run in parallel. */
static pthread_mutex_t savings_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t replay_savings_locked(ss_whatif *w, uint32_t n);

uint32_t ss_replay_savings(ss_whatif *w, uint32_t n)
{
    pthread_mutex_lock(&savings_lock);
    uint32_t replayed = replay_savings_locked(w, n);
    pthread_mutex_unlock(&savings_lock);
    return replayed;
}

static uint32_t replay_savings_locked(ss_whatif *w, uint32_t n)
{
    wbatch b = { w, ss_xcalloc(n, sizeof(wjob)), ss_xcalloc(n, sizeof(uint32_t)), 0 };
    cost_key *order = ss_xcalloc(n, sizeof *order);
    uint32_t nrun = 0;
    /* The memo and the batch's repeats, in job order: one replay per
     * distinct what-if (the memo is a cache inside the replay, like the
     * replay inside the model: it is read and filled only here, on the
     * calling thread, under savings_lock). */
    for (uint32_t i = 0; i < n; i++) {
        const ss_replay *r = w[i].r;
        wjob *j = &b.job[i];
        j->same = -1;
        w[i].saving = 0;
        if (w[i].n == 0) continue;
        j->u = ss_xcalloc(w[i].n, sizeof(ss_relax));
        if (r->full) {
            memcpy(j->u, w[i].rx, w[i].n * sizeof(ss_relax));
            j->nu = w[i].n;
        } else {
            j->nu = relax_unique(w[i].rx, w[i].n, j->u);
            uint64_t h = ss_hash64(j->nu);
            for (uint32_t k = 0; k < j->nu; k++) h = ss_hash64(h ^ relax_hash(&j->u[k]));
            j->hash = h;
            int hit = 0;
            for (uint32_t k = 0; k < r->nmemo && !hit; k++) {
                const memo *x = &r->memo[k];
                if (same_whatif(x->hash, x->rx, x->n, h, j->u, j->nu)) { j->end = x->end; hit = 1; }
            }
            for (uint32_t k = 0; k < i && !hit; k++) {
                const wjob *o = &b.job[k];
                if (o->pending && o->same < 0 && w[k].r == r && same_whatif(o->hash, o->u, o->nu, h, j->u, j->nu)) {
                    j->same = (int32_t)k;
                    hit = 1;
                }
            }
            if (hit) {
                if (j->same < 0) {
                    free(j->u);
                    j->u = NULL;
                }
                continue;
            }
        }
        j->pending = 1;
        j->whole = replays_whole_run(r, j->u, j->nu);
        j->cost = whatif_cost(r, j->u, j->nu);
        order[nrun++] = (cost_key){ j->cost, i };
    }
    /* The longest first, so that one long replay does not start last; the
     * order only decides which thread runs what, never a result. */
    qsort(order, nrun, sizeof *order, cmp_cost);
    for (uint32_t i = 0; i < nrun; i++) b.run[i] = order[i].job;
    b.nrun = nrun;
    free(order);
    /* at most WHATIF_THREADS at once: each worker keeps scratch times the
     * size of the run (sc), which bounds the memory they take together */
    unsigned threads = nrun > 1 ? ss_thread_count() : 1;
    if (threads > WHATIF_THREADS) threads = WHATIF_THREADS;
    ss_parallel_for(nrun, threads, run_job, &b);
    for (uint32_t i = 0; i < n; i++) {
        wjob *j = &b.job[i];
        ss_replay *r = (ss_replay *)w[i].r;
        if (!w[i].n) continue;   /* asked nothing */
        /* a saving is against the baseline's end */
        wait_baseline(r);
        if (!j->pending && j->same < 0) {   /* answered by the memo */
            w[i].saving = j->end < r->base_end ? r->base_end - j->end : 0;
            continue;
        }
        if (j->same >= 0) {
            j->end = b.job[j->same].end;
            free(j->u);
        } else if (r->full) {
            free(j->u);
        } else {
            memo x = { j->hash, j->u, j->nu, j->end };
            SS_PUSH(r->memo, r->nmemo, r->cmemo, x);
        }
        w[i].saving = j->end < r->base_end ? r->base_end - j->end : 0;
    }
    free(b.job);
    free(b.run);
    return nrun;
}

void ss_replay_savings_ahead(ss_whatif *w, uint32_t n)
{
    /* SYNCSIGHT_REPLAY_FULL=1 keeps no answer: each is replayed when asked */
    for (uint32_t i = 0; i < n; i++)
        if (w[i].r->full) return;
    ss_replay_savings(w, n);
}

uint64_t ss_replay_saving(const ss_replay *r, const ss_relax *rx, uint32_t n)
{
    ss_whatif w = { r, rx, n, 0 };
    ss_replay_savings(&w, 1);
    return w.saving;
}

uint64_t ss_replay_ready(const ss_replay *r, int32_t op)
{
    return op >= 0 && (uint32_t)op < r->m->nops ? r->ready[op] : 0;
}

const ss_hwq_device *ss_replay_hw_queues(const ss_replay *r, uint32_t *n)
{
    *n = r->nhwq;
    return r->hwq;
}

const ss_load_barrier *ss_replay_load_barriers(const ss_replay *r, uint32_t *n)
{
    *n = r->nlb;
    return r->lb;
}

/* ---- building the schedule ----------------------------------------------- */

/* The items by time, then rank, then index (the order the passes walk),
 * into r->iidx / r->irank.  Entries and operation starts are in that order
 * already (the model sorts calls by entry and operations by start).  Marker
 * completions and the exits that are items are not: given in rank order,
 * then index order, a stable sort of their times (ss_radix_sort16) leaves
 * equal times in that order.  Most exits are no items (a call that waits
 * for nothing: folded into its entry, see exits_as_items), so that sort is
 * of the markers and a few exits (as many exits as calls where every call
 * waits: CUDA_LAUNCH_BLOCKING=1).  The three sorted runs are then merged,
 * equal times by rank.  A trace whose entries or starts are out of order has
 * those sorted with the markers instead. */
_Static_assert(sizeof(item) == 16 && offsetof(item, t) == 0, "ss_radix_sort16 sorts items by t");

/* The three runs merge into one order: by time, at one time by rank, then
 * in each run's order.  So the items of a time interval [lo, hi) are a
 * stretch of it, which starts after every item before lo and which a merge
 * of the runs from their first items at or after lo makes: the stretches of
 * several intervals are merged on threads, each where it falls in the
 * whole. */
typedef struct merge_job {
    ss_replay *r;
    const item *a; uint32_t na, nb, nc;       /* as sort_items names them */
    const uint64_t *cut;                      /* slice s holds items of [cut[s], cut[s + 1]) */
    uint32_t slices;
} merge_job;

static uint32_t items_below(const item *a, uint32_t n, uint64_t t)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid].t < t) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static uint32_t entries_below(const ss_model *m, uint32_t n, uint64_t t)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->calls[mid].rec->t_enter < t) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static uint32_t starts_below(const ss_model *m, uint32_t n, uint64_t t)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->ops[mid].start < t) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* the items before time t: where the stretch from t starts, and each
 * run's first item at or after t */
static uint32_t merge_start(const merge_job *j, uint64_t t, uint32_t *i, uint32_t *b, uint32_t *c)
{
    const ss_model *m = j->r->m;
    *i = items_below(j->a, j->na, t);
    *b = j->nb ? entries_below(m, j->nb, t) : 0;
    *c = j->nc ? starts_below(m, j->nc, t) : 0;
    return *i + *b + *c;
}

static void merge_slice(void *ctx, uint32_t s, unsigned worker)
{
    (void)worker;
    merge_job *j = ctx;
    ss_replay *r = j->r;
    const ss_model *m = r->m;
    uint32_t i, b, c, i1, b1, c1;
    uint32_t n = merge_start(j, j->cut[s], &i, &b, &c);
    uint32_t end = s + 1 < j->slices ? merge_start(j, j->cut[s + 1], &i1, &b1, &c1) : r->nitems;
    const item *a = j->a;
    uint32_t na = j->na, nb = j->nb, nc = j->nc;
    while (n < end) {
        uint64_t ta = i < na ? a[i].t : UINT64_MAX;
        uint64_t tb = b < nb ? r->ct[b].enter : UINT64_MAX;
        uint64_t tc = c < nc ? m->ops[c].start : UINT64_MAX;
        /* ranks: a's (markers and exits; with !runs all items, sorted) <
         * entry < start; a run that is done is never taken (the others
         * still hold an item) */
        if (i < na && ta <= tb && ta <= tc) {
            r->iidx[n] = a[i].idx;
            r->irank[n++] = a[i++].rank;
        } else if (b < nb && (tb <= tc || c >= nc)) {
            r->iidx[n] = (int32_t)b++;
            r->irank[n++] = I_ENTER;
        } else {
            r->iidx[n] = (int32_t)c++;
            r->irank[n++] = I_START;
        }
    }
}

/* Which calls' exits are items.  A call that waits for nothing (no cwait)
 * returns its own measured time after its entry in every pass: no
 * relaxation makes a call wait, and the host time a HOST_TIME relaxation
 * removes from it is read from measured times.  So its exit is made with
 * its entry, by the entry's item (folded_exit), and is no item of its own:
 * most calls of a trace are launches and records, and their exits were a
 * third of the items that every pass walks.  Unless the thread's next call
 * entered before that exit (a damaged trace): it read the measured exit,
 * which only the exit's own item keeps.  `item` per call: 1 its exit is an
 * item. */
typedef struct exits_job { const ss_replay *r; uint8_t *item; uint64_t *end; uint8_t *unordered; } exits_job;

static void exit_waits_slice(void *ctx, uint32_t s, size_t from, size_t to)
{
    exits_job *j = ctx;
    const ss_replay *r = j->r;
    uint64_t e = 0;
    for (size_t c = from; c < to; c++) {
        j->item[c] = r->cwi[c] != NO_WAIT;
        e = max_u64(e, r->ct[c].exit);
        if (c && r->ct[c - 1].enter > r->ct[c].enter) j->unordered[s] = 1;
    }
    j->end[s] = e;
}

/* after exit_waits_slice on every call: each call is the previous call of
 * at most one, so each byte is written by one slice */
static void exit_overlaps_slice(void *ctx, uint32_t s, size_t from, size_t to)
{
    (void)s;
    exits_job *j = ctx;
    const ss_replay *r = j->r;
    for (size_t c = from; c < to; c++) {
        int32_t p = r->call_prev[c];
        if (p >= 0 && r->ct[p].exit > r->ct[c].enter) j->item[p] = 1;
    }
}

static uint8_t *exits_as_items(ss_replay *r, int *runs)
{
    const ss_model *m = r->m;
    uint8_t *item = ss_xcalloc(m->ncalls + 1, 1);
    uint64_t ends[SS_MAX_THREADS] = { 0 };
    uint8_t unordered[SS_MAX_THREADS] = { 0 };
    exits_job ej = { r, item, ends, unordered };
    unsigned xs = build_slices(m->ncalls);
    ss_parallel_slices(m->ncalls, xs, exit_waits_slice, &ej);
    ss_parallel_slices(m->ncalls, xs, exit_overlaps_slice, &ej);
    for (unsigned s = 0; s < xs; s++) {
        r->end = max_u64(r->end, ends[s]);
        if (unordered[s]) *runs = 0;
    }
    /* Every exit that is an item has a cwait, the passes' times of exits
     * being kept by cwi: one that waits for nothing (a call that overlaps
     * the next) gets one that says so (cwait_of's). */
    uint32_t extra = 0;
    for (uint32_t c = 0; c < m->ncalls; c++) extra += item[c] && r->cwi[c] == NO_WAIT;
    if (extra) {
        r->cws = ss_xrealloc(r->cws, (r->ncws + extra + 1) * sizeof(cwait));
        for (uint32_t c = 0; c < m->ncalls; c++)
            if (item[c] && r->cwi[c] == NO_WAIT) {
                r->cws[r->ncws] = *cwait_of(r, (int32_t)c);
                r->cwi[c] = r->ncws++;
            }
    }
    return item;
}

/* returns which calls' exits are items (exits_as_items) */
static uint8_t *sort_items(ss_replay *r)
{
    const ss_model *m = r->m;
    /* the runs taken as sorted, checked (else sorted with the markers) */
    int runs = 1;
    uint8_t *exit_item = exits_as_items(r, &runs);
    for (uint32_t o = 1; o < m->nops && runs; o++) runs = m->ops[o - 1].start <= m->ops[o].start;
    uint32_t nx = 0;
    for (uint32_t c = 0; c < m->ncalls; c++) nx += exit_item[c];
    uint32_t na = 0, nb = runs ? m->ncalls : 0, nc = runs ? m->nops : 0;
    item *a = ss_xcalloc((size_t)r->nmk + nx + (runs ? 0 : (size_t)m->ncalls + m->nops) + 1, sizeof(item));
    for (uint32_t k = 0; k < r->nmk; k++) a[na++] = (item){ r->mk_real[k], I_MARK, (int32_t)k };
    for (uint32_t c = 0; c < m->ncalls; c++)
        if (exit_item[c]) a[na++] = (item){ r->ct[c].exit, I_EXIT, (int32_t)c };
    for (uint32_t o = 0; o < m->nops; o++) r->end = max_u64(r->end, m->ops[o].end);
    if (!runs) {
        for (uint32_t c = 0; c < m->ncalls; c++) a[na++] = (item){ r->ct[c].enter, I_ENTER, (int32_t)c };
        for (uint32_t o = 0; o < m->nops; o++) a[na++] = (item){ m->ops[o].start, I_START, (int32_t)o };
    }
    ss_radix_sort16_threads(a, na, ss_thread_count());
    r->nitems = na + nb + nc;
    r->iidx = ss_xcalloc(r->nitems + 1, sizeof(int32_t));
    r->irank = ss_xcalloc(r->nitems + 1, 1);
    /* the intervals: cut at calls' entries spread over the run (any times
     * in increasing order would do; equal cuts make empty stretches) */
    merge_job j = { r, a, na, nb, nc, NULL, build_slices(r->nitems) };
    if (!runs || !m->ncalls) j.slices = 1;
    uint64_t *cut = ss_xcalloc(j.slices + 1, sizeof(uint64_t));
    for (uint32_t s = 1; s < j.slices; s++) cut[s] = r->ct[(uint64_t)m->ncalls * s / j.slices].enter;
    j.cut = cut;
    ss_parallel_for(j.slices, j.slices, merge_slice, &j);
    free(cut);
    free(a);
    return exit_item;
}

static _Thread_local const ss_replay *sort_ctx;   /* the replay being built, on this thread */
/* v (operation indices, ascending) by key, then start, then index: ascending
 * indices are ascending starts (the model sorts operations by start, ties
 * by index), so a stable sort of their keys gives (key, start, index) --
 * by a radix sort of (key, index) pairs rather than glibc's merge sort
 * through the comparator.  Keys are >= 0. */
static void sort_ops_by_key_threads(const ss_replay *r, int32_t *v, uint32_t n, unsigned threads)
{
    if (n < 2) return;
    uint64_t (*kv)[2] = ss_xcalloc(n, sizeof *kv);
    for (uint32_t i = 0; i < n; i++) {
        kv[i][0] = (uint64_t)r->opkey[v[i]];
        kv[i][1] = (uint64_t)(uint32_t)v[i];
    }
    ss_radix_sort16_threads(kv, n, threads);
    for (uint32_t i = 0; i < n; i++) v[i] = (int32_t)(uint32_t)kv[i][1];
    free(kv);
}

static void sort_ops_by_key(const ss_replay *r, int32_t *v, uint32_t n) { sort_ops_by_key_threads(r, v, n, 1); }

static int cmp_stream_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const ss_stream *sx = &sort_ctx->m->streams[x], *sy = &sort_ctx->m->streams[y];
    if (sx->stream_id != sy->stream_id) return sx->stream_id < sy->stream_id ? -1 : 1;
    return (x > y) - (x < y);
}

static uint32_t connections_of(const ss_model *m, int *from_env)
{
    char buf[32];
    *from_env = 0;
    const char *v = ss_model_env(m, "CUDA_DEVICE_MAX_CONNECTIONS", buf, sizeof buf);
    if (v) {
        char *endp;
        long n = strtol(v, &endp, 10);
        if (endp != v && n >= 1 && n <= 128) {
            *from_env = 1;
            return (uint32_t)n;
        }
    }
    return DEFAULT_CONNECTIONS;
}

/* Streams beyond CUDA_DEVICE_MAX_CONNECTIONS share work queues, assigned
 * round-robin in creation order (CUPTI stream ids grow with creation).  The
 * mapping is used only when the measured starts agree with it everywhere (a
 * queue starts its operations in submission order) and operations were seen
 * waiting for an unrelated one in their queue. */
static void find_hw_queues(ss_replay *r, int32_t dv)
{
    const ss_model *m = r->m;
    const rdevice *d = &r->dev[dv];
    int from_env;
    uint32_t conn = connections_of(m, &from_env);
    int32_t *qs = ss_xcalloc(d->nstreams + 1, sizeof(int32_t));
    uint32_t nq = 0;
    for (uint32_t i = 0; i < d->nstreams; i++) {
        const ss_stream *s = &m->streams[d->streams[i]];
        if ((s->kind == SS_STREAM_BLOCKING || s->kind == SS_STREAM_NON_BLOCKING) && s->stream_id)
            qs[nq++] = d->streams[i];
    }
    if (nq <= conn) { free(qs); return; }
    sort_ctx = r;
    ss_qsort(qs, nq, sizeof(int32_t), cmp_stream_id);
    int32_t *queue_of = ss_xcalloc(m->nstreams, sizeof(int32_t));
    for (uint32_t i = 0; i < m->nstreams; i++) queue_of[i] = -1;
    for (uint32_t i = 0; i < nq; i++) queue_of[qs[i]] = (int32_t)(i % conn);

    /* kernels of those streams in submission order */
    int32_t *last = ss_xcalloc(conn, sizeof(int32_t));
    for (uint32_t q = 0; q < conn; q++) last[q] = -1;
    int32_t *qpred = ss_xcalloc(m->nops + 1, sizeof(int32_t));
    int32_t *order = ss_xcalloc(m->nops + 1, sizeof(int32_t));
    uint32_t n = 0;
    for (uint32_t o = 0; o < m->nops; o++) {
        const ss_gpu_op *op = &m->ops[o];
        if (op->kind == SS_OP_KERNEL && op->stream >= 0 && queue_of[op->stream] >= 0) order[n++] = (int32_t)o;
    }
    sort_ops_by_key(r, order, n);
    uint32_t checked = 0, violations = 0, delayed = 0;
    uint64_t delay = 0;
    int32_t ex = -1, exb = -1;
    for (uint32_t i = 0; i < n; i++) {
        int32_t o = order[i];
        const ss_gpu_op *op = &m->ops[o];
        int32_t q = queue_of[op->stream];
        int32_t y = last[q];
        last[q] = o;
        qpred[o] = -1;
        if (y < 0 || m->ops[y].stream == op->stream) continue;
        qpred[o] = y;
        checked++;
        if (op->start + TOL_NS < m->ops[y].start) violations++;
        uint64_t ready = r->ready[o];
        uint64_t ys = m->ops[y].start;
        uint64_t gap = op->start > ys ? op->start - ys : ys - op->start;
        if (op->start > ready + DELAY_NS && gap <= MATCH_NS && ys > ready + DELAY_NS / 2) {
            delayed++;
            delay += op->start - ready;
            if (ex < 0) { ex = o; exb = y; }
        }
    }
    if (delayed >= 2 && (uint64_t)violations * 100 <= checked) {
        for (uint32_t i = 0; i < n; i++) r->op_qpred[order[i]] = qpred[order[i]];
        r->hwq = ss_xrealloc(r->hwq, (r->nhwq + 1) * sizeof *r->hwq);
        r->hwq[r->nhwq++] = (ss_hwq_device){ .device = dv, .connections = conn, .connections_from_env = from_env,
                                             .streams = nq, .delayed_ops = delayed, .delay_ns = delay,
                                             .example_op = ex, .example_blocker = exb };
    }
    free(qs); free(queue_of); free(last); free(qpred); free(order);
}

/* Under lazy module loading the first launch of a kernel can make the work
 * submitted after it wait until everything before it has finished.  Seen
 * as: work was in flight at the launch, and every later operation that was
 * ready before that work drained started only when it drained (two at
 * least, a kernel among them). */
static void find_load_barriers(ss_replay *r, int32_t dv, const int32_t *by_key, uint32_t n)
{
    const ss_model *m = r->m;
    const rdevice *d = &r->dev[dv];
    ss_u64map seen = { 0 };
    pass real = { .r = r, .real = 1 };
    for (uint32_t i = 0; i < n; i++) {
        int32_t o = by_key[i];
        const ss_gpu_op *op = &m->ops[o];
        if (op->kind != SS_OP_KERNEL || op->call < 0 || ss_op_device(op) != dv) continue;
        const ss_kernel_rec *k = (const ss_kernel_rec *)op->rec;
        if (!k->name_id || ss_u64map_get(&seen, k->name_id, -1) >= 0) continue;
        ss_u64map_put(&seen, k->name_id, 1);
        int64_t key = r->opkey[o];
        uint64_t launch = m->calls[op->call].rec->t_enter;
        uint64_t drain = 0;
        for (uint32_t s = 0; s < d->nstreams; s++) drain = max_u64(drain, stream_done(&real, d->streams[s], key));
        if (drain < launch + DELAY_NS) continue;
        uint32_t delayed = 0, early = 0, kernels = 0;
        uint64_t delay = 0;
        int32_t ex = -1;
        for (uint32_t j = i + 1; j < n; j++) {
            int32_t x = by_key[j];
            const ss_gpu_op *xo = &m->ops[x];
            if (ss_op_device(xo) != dv || r->opkey[x] <= key) continue;
            if (xo->submit > drain) break;
            if (r->ready[x] + DELAY_NS > drain) continue;
            if (xo->start + TOL_NS < drain) { early++; break; }
            if (xo->start <= drain + MATCH_NS) {
                delayed++;
                kernels += xo->kind == SS_OP_KERNEL;
                delay += xo->start - r->ready[x];
                if (ex < 0) ex = x;
            }
        }
        /* two operations at least, a kernel among them: one copy starting at
         * a kernel's end is too common a coincidence to call a barrier */
        if (early || delayed < 2 || !kernels) continue;
        r->lb = ss_xrealloc(r->lb, (r->nlb + 1) * sizeof *r->lb);
        r->lb_key = ss_xrealloc(r->lb_key, (r->nlb + 1) * sizeof *r->lb_key);
        r->lb[r->nlb] = (ss_load_barrier){ .device = dv, .call = op->call, .op = o, .drain = drain,
                                           .delayed_ops = delayed, .delay_ns = delay, .example_op = ex };
        r->lb_key[r->nlb] = key;
        r->nlb++;
    }
    ss_u64map_free(&seen);
}

/* A sorted array rather than a hash map: 16 bytes an entry where the map
 * had 34 and more (half full, doubling), in one allocation. */
typedef struct corr_time { uint64_t corr, t; } corr_time;
_Static_assert(sizeof(corr_time) == 16 && offsetof(corr_time, corr) == 0, "ss_radix_sort16 sorts by corr");

/* The time of the last entry with `corr` in v (sorted by corr, stable), 0 none. */
static uint64_t corr_time_of(const corr_time *v, uint32_t n, uint64_t corr)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {                  /* first entry above corr */
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].corr <= corr) lo = mid + 1; else hi = mid;
    }
    return lo && v[lo - 1].corr == corr ? v[lo - 1].t : 0;
}

static int16_t device_index(int32_t dv, int32_t ndev) { return dv >= 0 && dv < ndev ? (int16_t)dv : -1; }

static void push_i32(int32_t **v, uint32_t *n, uint32_t *cap, int32_t x) { SS_PUSH(*v, *n, *cap, x); }

/* ---- the build's loops, on threads --------------------------------------
 * The loops over operations and calls below read the model and what the
 * build made before them, and each writes its own elements (ready, lat,
 * a call's host wait): the same tables on any number of threads.  The real
 * pass keeps per-stream search hints, which only make its searches shorter:
 * each slice has a real pass of its own. */
typedef struct build_loop {
    ss_replay *r;
    uint8_t *chw;                 /* per call: its host wait, or CALL_SKIP */
    corr_time *event_ts;          /* event records' times by correlation id */
    uint32_t nevent_ts;
    uint64_t *mk_measured;        /* per marker */
    int32_t *ndev;                /* per slice: 1 + the highest device number of its ops */
    uint64_t *mk_enter;           /* per marker: its call's entry */
    /* the unmeasured markers: per marker, its readiness from what is known
     * (mk_local) and where its list of unmeasured markers read ends in its
     * slice's (dep_end); per slice, those lists and its markers */
    uint64_t *mk_local;
    uint32_t *dep_end;
    uint32_t *udeps[SS_MAX_THREADS];
    size_t ufrom[SS_MAX_THREADS], uto[SS_MAX_THREADS];
    /* the calls' loop: per slice of calls, its calls that record or wait on
     * an event (counted, then written from sl_ev0 on) and its host waits
     * (counted, then written from sl_cw0 on) */
    int fill;
    uint32_t sl_nev[SS_MAX_THREADS], sl_ev0[SS_MAX_THREADS];
    uint32_t sl_ncw[SS_MAX_THREADS], sl_cw0[SS_MAX_THREADS];
    int32_t *evcall;              /* those calls, in call order */
    int32_t *ev_stream;           /* per such call: the stream of its event's last record before it, -1 */
    int64_t *ev_bound;            /* and that record's key + 1 */
} build_loop;

/* a stream's ops in key order */
static void stream_order_job(void *ctx, uint32_t s, unsigned worker)
{
    (void)worker;
    ss_replay *r = ctx;
    rstream *st = &r->st[s];
    sort_ops_by_key(r, st->ops, st->nops);
    st->opk = ss_xcalloc(st->nops + 1, sizeof(int64_t));
    for (uint32_t i = 0; i < st->nops; i++) st->opk[i] = r->opkey[st->ops[i]];
}

/* a stream's ops: the one before each, and the waits between them */
static void stream_waits_job(void *ctx, uint32_t s, unsigned worker)
{
    (void)worker;
    ss_replay *r = ctx;
    const rstream *st = &r->st[s];
    uint32_t w = 0;
    for (uint32_t i = 0; i < st->nops; i++) {
        int32_t o = st->ops[i];
        r->op_pred[o] = i ? st->ops[i - 1] : -1;
        r->op_wbeg[o] = w;
        while (w < st->nwaits && st->waits[w].key < r->opkey[o]) w++;
        r->op_wend[o] = w;
    }
}

/* a marker's waits: from the op before it on its stream (the waits in
 * between), up to it; and its call's entry (a miss in the mapped trace) */
static void marker_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    build_loop *b = ctx;
    ss_replay *r = b->r;
    for (size_t k = from; k < to; k++) {
        rmark *x = &r->mk[k];
        const rstream *st = &r->st[x->stream];
        int32_t prev = last_before(r, x->stream, mark_key(x));
        x->wbeg = prev >= 0 ? r->op_wend[prev] : 0;
        uint32_t lo = x->wbeg, hi = st->nwaits;   /* the first wait after it */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (st->waits[mid].key <= mark_key(x)) lo = mid + 1; else hi = mid;
        }
        x->wend = lo;
        b->mk_enter[k] = r->m->calls[x->call].rec->t_enter;
    }
}

static void call_times_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    ss_replay *r = ctx;
    for (size_t c = from; c < to; c++) {
        const ss_api_rec *rec = r->m->calls[c].rec;
        r->ct[c].enter = rec->t_enter;
        r->ct[c].exit = rec->t_exit < rec->t_enter ? rec->t_enter : rec->t_exit;
    }
}

static void op_devices_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    build_loop *b = ctx;
    int32_t n = 0;
    for (size_t o = from; o < to; o++) {
        int32_t d = ss_op_device(&b->r->m->ops[o]);
        if (d < MAX_DEVICES && d + 1 > n) n = d + 1;
    }
    b->ndev[sl] = n;
}


static pass real_pass_of(const ss_replay *r)
{
    pass p = { .r = r, .real = 1 };
    p.hint_op = ss_xcalloc(r->m->nstreams + 1, sizeof(uint32_t));
    p.hint_mk = ss_xcalloc(r->m->nstreams + 1, sizeof(uint32_t));
    return p;
}

static void real_pass_free(pass *p)
{
    free(p->hint_op);
    free(p->hint_mk);
}

/* a measured completion's delay after its readiness: a completion measured
 * before its modelled readiness keeps the measured run (the model holds it
 * back too much): its delay is negative, as an operation's may be */
static void marker_delay_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    build_loop *b = ctx;
    ss_replay *r = b->r;
    pass real = real_pass_of(r);
    for (size_t k = from; k < to; k++)
        if (b->mk_measured[k])
            r->mk_lat[k] = sdiff(b->mk_measured[k], mark_ready_from(&real, (int32_t)k, b->mk_enter[k]));
    real_pass_free(&real);
}

/* An unmeasured marker's completion is its readiness: the latest of its
 * call's entry and the completions of the work it follows, a maximum with
 * nothing added.  What it reads is the same whatever the values (the last
 * operation and marker before a key), so each marker's readiness from what
 * is known (operations' ends, measured completions; 0 for the others) is
 * found on slices, with the unmeasured markers it read; then, in key order,
 * the maximum of that and their completions, the same value as reading
 * them. */
static void unmeasured_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    build_loop *b = ctx;
    ss_replay *r = b->r;
    pass real = real_pass_of(r);
    mk_deps d = { .measured = b->mk_measured };
    real.deps = &d;
    for (size_t k = from; k < to; k++) {
        if (!b->mk_measured[k]) b->mk_local[k] = mark_ready_from(&real, (int32_t)k, b->mk_enter[k]);
        b->dep_end[k] = d.n;
    }
    b->udeps[sl] = d.v;
    b->ufrom[sl] = from;
    b->uto[sl] = to;
    real_pass_free(&real);
}

/* what the model alone says each op waited for */
static void ready_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    build_loop *b = ctx;
    pass real = real_pass_of(b->r);
    for (size_t o = from; o < to; o++) b->r->ready[o] = op_ready(&real, (int32_t)o, 0);
    real_pass_free(&real);
}

/* the delay each op had after everything modelled: its readiness raised by
 * the hardware's terms, the same as op_ready(&real, o, 1) without walking
 * its streams again */
static void lat_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    build_loop *b = ctx;
    pass real = real_pass_of(b->r);
    for (size_t o = from; o < to; o++)
        b->r->lat[o] = sdiff(b->r->m->ops[o].start, op_hw_ready(&real, (int32_t)o, b->r->ready[o]));
    real_pass_free(&real);
}

/* what each call did besides waiting, measured (a call that waits on
 * nothing did not wait: wait_target is 0); the earliest wake-up of each
 * releasing op is taken after, in call order */
static void waits_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    build_loop *b = ctx;
    ss_replay *r = b->r;
    pass real = real_pass_of(r);
    for (size_t c = from; c < to; c++) {
        if (r->cwi[c] == NO_WAIT) continue;
        const ss_api_rec *rec = r->m->calls[c].rec;
        uint64_t E = rec->t_enter, X = rec->t_exit < E ? E : rec->t_exit;
        int32_t who;
        uint64_t T = wait_target(&real, (int32_t)c, &who);
        cwait *w = &r->cws[r->cwi[c]];
        if (T > X + TOL_NS) {
            /* It returned before what the model puts in its way.  Where
             * that is a stream marker (measured on the H200, driver 580: a
             * cudaStreamSynchronize on a blocking stream does not wait for
             * a cudaEventDisableTiming record that the legacy barrier holds
             * back, although the event completes behind it), the measured
             * return says it did not wait for the marker: it waits for
             * operations only, in this run and in every what-if.  Were it
             * read, the marker's completion, later than the return, would
             * come later in the replay's order too, and would be read as
             * measured, unmoved by any fix. */
            w->ops_only = 1;
            int32_t who2;
            uint64_t T2 = wait_target(&real, (int32_t)c, &who2);
            if (T2 <= X + TOL_NS) { T = T2; who = who2; }
            else w->ops_only = 0;   /* an operation it waits for ended after it returned: not a marker's doing */
        }
        w->waited = T > E;
        w->post = w->waited && X > T ? X - T : 0;
        w->wait_op = w->waited ? who : -1;
    }
    real_pass_free(&real);
}

/* event records' (correlation id, device time); corr 0 where either is
 * missing */
static void event_ts_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    build_loop *b = ctx;
    for (size_t e = from; e < to; e++) {
        const ss_cuda_event_rec *ev = b->r->m->cuda_events[e];
        b->event_ts[e] = ev->g.start && ev->g.corr ? (corr_time){ ev->g.corr, ev->g.start } : (corr_time){ 0, 0 };
    }
}

static void measured_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    build_loop *b = ctx;
    const ss_model *m = b->r->m;
    for (size_t k = from; k < to; k++) {
        const ss_call *call = &m->calls[b->r->mk[k].call];
        if (call->cls == SS_API_EVENT_RECORD) b->mk_measured[k] = corr_time_of(b->event_ts, b->nevent_ts, call->rec->corr);
    }
}

/* each call's host wait as the build's call loop takes it (CALL_SKIP: a
 * failed or captured call, which neither waits nor marks), read from the
 * records (a cache miss each in the mapped trace) on threads first */
#define CALL_SKIP 0xff
static void host_wait_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    (void)sl;
    build_loop *b = ctx;
    const ss_model *m = b->r->m;
    for (size_t c = from; c < to; c++) {
        const ss_call *call = &m->calls[c];
        if (call->rec->ret != 0 || call->captured) { b->chw[c] = CALL_SKIP; continue; }
        ss_host_wait hw = ss_call_host_wait(m, call);
        if (b->r->launch_blocking && hw == SS_WAIT_NONE &&
            (call->cls == SS_API_LAUNCH || call->cls == SS_API_COPY_ASYNC || call->cls == SS_API_MEMSET_ASYNC))
            hw = SS_WAIT_STREAM;
        b->chw[c] = (uint8_t)hw;
    }
}

static int is_record(const ss_call *call) { return call->cls == SS_API_EVENT_RECORD && call->stream >= 0; }
/* a launch recording an event through a launch attribute: no marker of its
 * own (its kernel is an operation); the event's bound is after the kernel's
 * ops (key 2c + 1), or before them when it fires as the blocks start */
static int is_launch_record(const ss_call *call)
{
    return call->cls == SS_API_LAUNCH && call->stream >= 0 && ss_call_records_event(call);
}
static int is_stream_wait(const ss_call *call) { return call->cls == SS_API_STREAM_WAIT && call->stream >= 0; }

/* A call whose event the build follows (events_walk): it records an event
 * on a stream, waits on one on a stream, or waits on one from the host. */
static int uses_event(const ss_call *call, uint8_t hw)
{
    if (hw == CALL_SKIP || call->event < 0) return 0;
    if (is_record(call) || is_stream_wait(call) || is_launch_record(call)) return 1;
    return hw == SS_WAIT_EVENT;
}

static void event_calls_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    build_loop *b = ctx;
    const ss_model *m = b->r->m;
    uint32_t n = 0, at = b->fill ? b->sl_ev0[sl] : 0;
    for (size_t c = from; c < to; c++) {
        if (!uses_event(&m->calls[c], b->chw[c])) continue;
        if (b->fill) b->evcall[at + n] = (int32_t)c;
        n++;
    }
    if (!b->fill) b->sl_nev[sl] = n;
}

/* call c's host wait (kind W_NONE: none); its event's last record from
 * events_walk (stream -1: none before it) */
static cwait host_wait_of(const ss_replay *r, int32_t c, uint8_t hw, int32_t ev_stream, int64_t ev_bound)
{
    const ss_model *m = r->m;
    const ss_call *call = &m->calls[c];
    int64_t key = 2 * (int64_t)c + 1;
    int32_t s = call->stream;
    cwait w = { .bound = 0, .stream = -1, .device = -1, .kind = W_NONE, .wait_op = -1 };
    switch ((ss_host_wait)hw) {
    case SS_WAIT_STREAM:
    case SS_WAIT_STREAM_PRIOR:
        if (s < 0) break;
        w.stream = s;
        w.bound = hw == SS_WAIT_STREAM ? key + 1 : key;
        w.device = device_index(m->streams[s].device, r->ndev);
        w.kind = m->streams[s].kind == SS_STREAM_LEGACY_NULL ? W_GROUP : W_STREAM;
        break;
    case SS_WAIT_EVENT:
        if (call->event >= 0 && ev_stream >= 0) {
            w.kind = W_EVENT;
            w.stream = ev_stream;
            w.bound = ev_bound;
        }
        break;
    case SS_WAIT_DEVICE:
        w.kind = W_DEVICE;
        w.device = device_index(ss_model_call_device(m, call), r->ndev);
        w.context = ss_model_call_context(m, call);
        w.bound = key;
        break;
    default:
        break;
    }
    return w;
}

/* the host waits of a slice of calls: counted, then (fill) written at the
 * slice's place in call order; an event's record comes from events_walk
 * (the slice's calls that use one are its stretch of evcall, in order) */
static void host_waits_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    build_loop *b = ctx;
    ss_replay *r = b->r;
    const ss_model *m = r->m;
    uint32_t n = 0, ev = b->sl_ev0[sl];
    for (size_t c = from; c < to; c++) {
        uint8_t hw = b->chw[c];
        if (hw == CALL_SKIP) continue;
        int32_t es = -1;
        int64_t eb = 0;
        if (uses_event(&m->calls[c], hw)) {
            es = b->ev_stream[ev];
            eb = b->ev_bound[ev];
            ev++;
        }
        if (hw == SS_WAIT_NONE) continue;
        cwait w = host_wait_of(r, (int32_t)c, hw, es, eb);
        if (w.kind == W_NONE) continue;
        if (b->fill) {
            r->cwi[c] = b->sl_cw0[sl] + n;
            r->cws[b->sl_cw0[sl] + n] = w;
        }
        n++;
    }
    if (!b->fill) b->sl_ncw[sl] = n;
}

/* ---- events' records and waits, on slices -----------------------------------
 * What a wait on an event waits for is the event's last record before it
 * (in call order, the call itself included).  Each slice of the calls that
 * use an event (bl->evcall) finds it among its own calls first; the last
 * record of each event before each slice is then carried from slice to
 * slice, and the waits that found none in their slice take it.  Then each
 * record is a marker, and so is each stream wait that found a record (a
 * wait_dep of its stream): counted per slice, and placed at their place in
 * call order.  Slices keep a table of every event: fewer slices where the
 * program made very many events. */
enum { EV_UNSEEN = -2 };       /* no record of the event before it in its slice */

typedef struct events_job {
    build_loop *b;
    uint32_t nevents, nstreams;
    int fill;
    int32_t *loc_stream;       /* [slice][event]: its last record in the slice (EV_UNSEEN none), */
    int64_t *loc_key;          /* then (carried) its last record before the slice (stream -1 none) */
    uint32_t nmk[SS_MAX_THREADS], mk0[SS_MAX_THREADS];
    uint32_t *nwait;           /* [slice][stream]: its waits, counted, then where the slice's first goes */
} events_job;


static void events_slice(void *ctx, uint32_t sl, size_t from, size_t to)
{
    events_job *j = ctx;
    build_loop *b = j->b;
    ss_replay *r = b->r;
    const ss_model *m = r->m;
    int32_t *ls = j->loc_stream + (size_t)sl * j->nevents;
    int64_t *lk = j->loc_key + (size_t)sl * j->nevents;
    if (j->fill == 0) {
        for (uint32_t e = 0; e < j->nevents; e++) ls[e] = EV_UNSEEN;
        for (size_t i = from; i < to; i++) {
            int32_t c = b->evcall[i];
            const ss_call *call = &m->calls[c];
            int32_t e = call->event;
            if (is_record(call) || is_launch_record(call)) {
                ls[e] = call->stream;
                lk[e] = 2 * (int64_t)c + (ss_launch_records_event_before(call) ? 1 : 2);
            }
            b->ev_stream[i] = ls[e];
            b->ev_bound[i] = lk[e];
        }
        return;
    }
    uint32_t *nw = j->nwait + (size_t)sl * j->nstreams;
    uint32_t nmk = 0;
    for (size_t i = from; i < to; i++) {
        const ss_call *call = &m->calls[b->evcall[i]];
        int32_t e = call->event;
        if (j->fill == 1) {
            /* before the slice (carried), where the slice had none */
            if (b->ev_stream[i] == EV_UNSEEN) {
                b->ev_stream[i] = ls[e];
                b->ev_bound[i] = lk[e];
            }
            if (is_record(call)) nmk++;
            else if (is_stream_wait(call) && b->ev_stream[i] >= 0) { nmk++; nw[call->stream]++; }
            continue;
        }
        int32_t c = b->evcall[i], s = call->stream;
        if (!is_record(call) && !(is_stream_wait(call) && b->ev_stream[i] >= 0)) continue;
        r->mk[j->mk0[sl] + nmk++] = (rmark){ c, s, 0, 0 };
        if (is_stream_wait(call))
            r->st[s].waits[nw[s]++] = (wait_dep){ 2 * (int64_t)c + 1, b->ev_stream[i], b->ev_bound[i] };
    }
    if (j->fill == 1) j->nmk[sl] = nmk;
}

/* Markers and stream waits of the calls that use events (bl->evcall), and
 * for each such call its event's last record (bl->ev_stream, ev_bound). */
static void events_walk(build_loop *bl, uint32_t nev)
{
    ss_replay *r = bl->r;
    const ss_model *m = r->m;
    unsigned slices = build_slices(nev);
    while (slices > 1 && (size_t)slices * m->nevents > ((size_t)1 << 20)) slices--;
    events_job j = { .b = bl, .nevents = m->nevents, .nstreams = m->nstreams };
    j.loc_stream = ss_xcalloc((size_t)slices * m->nevents + 1, sizeof(int32_t));
    j.loc_key = ss_xcalloc((size_t)slices * m->nevents + 1, sizeof(int64_t));
    j.nwait = ss_xcalloc((size_t)slices * m->nstreams + 1, sizeof(uint32_t));
    ss_parallel_slices(nev, slices, events_slice, &j);
    /* each slice's table becomes the last records before it */
    int32_t *gs = ss_xcalloc(m->nevents + 1, sizeof(int32_t));
    int64_t *gk = ss_xcalloc(m->nevents + 1, sizeof(int64_t));
    for (uint32_t e = 0; e < m->nevents; e++) gs[e] = -1;
    for (unsigned k = 0; k < slices; k++) {
        int32_t *ls = j.loc_stream + (size_t)k * m->nevents;
        int64_t *lk = j.loc_key + (size_t)k * m->nevents;
        for (uint32_t e = 0; e < m->nevents; e++) {
            int32_t st = ls[e];
            int64_t key = lk[e];
            ls[e] = gs[e];
            lk[e] = gk[e];
            if (st != EV_UNSEEN) { gs[e] = st; gk[e] = key; }
        }
    }
    free(gs);
    free(gk);
    j.fill = 1;
    ss_parallel_slices(nev, slices, events_slice, &j);
    for (unsigned k = 0; k < slices; k++) { j.mk0[k] = r->nmk; r->nmk += j.nmk[k]; }
    r->mk = ss_xcalloc(r->nmk + 1, sizeof(rmark));
    for (uint32_t s = 0; s < m->nstreams; s++) {
        rstream *st = &r->st[s];
        for (unsigned k = 0; k < slices; k++) {
            uint32_t *x = &j.nwait[(size_t)k * m->nstreams + s], n = *x;
            *x = st->nwaits;
            st->nwaits += n;
        }
        if (!st->nwaits) continue;
        st->waits = ss_xcalloc(st->nwaits, sizeof(wait_dep));
    }
    j.fill = 2;
    ss_parallel_slices(nev, slices, events_slice, &j);
    free(j.loc_stream);
    free(j.loc_key);
    free(j.nwait);
}

/* CUDA orders each launch of an executable graph after the previous launch
 * of the same exec, on whichever stream (cudaGraphLaunch: "ordered behind
 * both any previous work in stream and any previous launches of
 * graphExec"; hb.c orders them the same way): each launch's ops wait for
 * the work of its exec's previous launch's stream up to that launch, a
 * wait_dep keyed just before the launch's own ops (2c < 2c + 1).  Merged
 * into each stream's waits, which stay in key order.  Nothing to do, and
 * no pass over the calls, in a trace without graph launches. */
static void graph_exec_waits(ss_replay *r)
{
    const ss_model *m = r->m;
    if (!m->has_graph_launch) return;
    ss_u64map last = { 0 };        /* exec handle -> its latest launch */
    wait_dep **add = ss_xcalloc(m->nstreams + 1, sizeof(wait_dep *));
    uint32_t *nadd = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t)), *cadd = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t));
    for (uint32_t c = 0; c < m->ncalls; c++) {
        const ss_call *call = &m->calls[c];
        if (!ss_call_is_graph_launch(m, call)) continue;
        if (call->rec->ret != 0 || call->captured || call->stream < 0 || !call->rec->func) continue;
        int64_t prev = ss_u64map_get(&last, call->rec->func, -1);
        ss_u64map_put(&last, call->rec->func, c);
        if (prev < 0) continue;
        int32_t ps = m->calls[prev].stream;
        if (ps == call->stream) continue;   /* its stream's order already */
        SS_PUSH(add[call->stream], nadd[call->stream], cadd[call->stream],
                ((wait_dep){ 2 * (int64_t)c, ps, 2 * prev + 2 }));
    }
    for (uint32_t s = 0; s < m->nstreams; s++) {
        if (!nadd[s]) continue;
        rstream *st = &r->st[s];
        wait_dep *v = ss_xcalloc(st->nwaits + nadd[s], sizeof(wait_dep));
        uint32_t i = 0, j = 0, k = 0;
        while (i < st->nwaits || j < nadd[s])
            v[k++] = j >= nadd[s] || (i < st->nwaits && st->waits[i].key <= add[s][j].key) ? st->waits[i++] : add[s][j++];
        free(st->waits);
        st->waits = v;
        st->nwaits = k;
        free(add[s]);
    }
    ss_u64map_free(&last);
    free(add); free(nadd); free(cadd);
}

static ss_replay *build_structure(const ss_model *m)
{
    double t = ss_seconds();
    ss_replay *r = ss_xcalloc(1, sizeof *r);
    r->m = m;
    r->opkey = ss_xcalloc(m->nops + 1, sizeof(int64_t));
    r->st = ss_xcalloc(m->nstreams + 1, sizeof(rstream));
    r->op_pred = ss_xcalloc(m->nops + 1, sizeof(int32_t));
    r->op_wbeg = ss_xcalloc(m->nops + 1, sizeof(uint32_t));
    r->op_wend = ss_xcalloc(m->nops + 1, sizeof(uint32_t));
    r->op_qpred = ss_xcalloc(m->nops + 1, sizeof(int32_t));
    r->op_barrier = ss_xcalloc(m->nops + 1, sizeof(int32_t));
    r->ready = ss_xcalloc(m->nops + 1, sizeof(uint64_t));
    r->lat = ss_xcalloc(m->nops + 1, sizeof(int64_t));
    r->cwi = ss_xcalloc(m->ncalls + 1, sizeof(uint32_t));
    for (uint32_t c = 0; c <= m->ncalls; c++) r->cwi[c] = NO_WAIT;
    r->call_prev = ss_xcalloc(m->ncalls + 1, sizeof(int32_t));
    r->ct = ss_xcalloc(m->ncalls + 1, sizeof *r->ct);
    ss_parallel_slices(m->ncalls, build_slices(m->ncalls), call_times_slice, r);
    char buf[16];
    const char *lb = ss_model_env(m, "CUDA_LAUNCH_BLOCKING", buf, sizeof buf);
    r->launch_blocking = lb && lb[0] == '1';
    const char *full = getenv("SYNCSIGHT_REPLAY_FULL");
    r->full = full && full[0] == '1';

    /* devices and their streams */
    /* device numbers come from the trace: beyond MAX_DEVICES they are
     * treated as unknown (no device-wide ordering), never as an index */
    int32_t ndev = 0;
    for (uint32_t s = 0; s < m->nstreams; s++)
        if (m->streams[s].device < MAX_DEVICES && m->streams[s].device + 1 > ndev) ndev = m->streams[s].device + 1;
    int32_t op_ndev[SS_MAX_THREADS] = { 0 };
    ss_parallel_slices(m->nops, build_slices(m->nops), op_devices_slice, &(build_loop){ .r = r, .ndev = op_ndev });
    for (unsigned s = 0; s < SS_MAX_THREADS; s++)
        if (op_ndev[s] > ndev) ndev = op_ndev[s];
    r->ndev = ndev;
    r->dev = ss_xcalloc((size_t)ndev + 1, sizeof(rdevice));
    for (uint32_t s = 0; s < m->nstreams; s++) {
        const ss_stream *st = &m->streams[s];
        r->st[s].device = st->device < ndev ? st->device : -1;
        r->st[s].ldomain = st->ldomain;
        r->st[s].kind = (uint8_t)st->kind;
        if (st->device < 0 || st->device >= ndev) continue;
        rdevice *d = &r->dev[st->device];
        push_i32(&d->streams, &d->nstreams, &d->cstreams, (int32_t)s);
        if (st->kind == SS_STREAM_LEGACY_NULL) push_i32(&d->legacy, &d->nlegacy, &d->clegacy, (int32_t)s);
        else if (st->kind == SS_STREAM_BLOCKING || st->kind == SS_STREAM_PER_THREAD)
            push_i32(&d->group, &d->ngroup, &d->cgroup, (int32_t)s);
    }

    /* operation keys and per-stream order */
    uint32_t ci = 0;
    for (uint32_t o = 0; o < m->nops; o++) {
        const ss_gpu_op *op = &m->ops[o];
        if (op->call >= 0) {
            r->opkey[o] = 2 * (int64_t)op->call + 1;
        } else {
            /* ops are sorted by start: calls entered before it, monotone */
            while (ci < m->ncalls && m->calls[ci].rec->t_enter <= op->start) ci++;
            r->opkey[o] = 2 * (int64_t)ci;
        }
        r->op_qpred[o] = -1;
        r->op_barrier[o] = -1;
        if (op->stream >= 0) {
            rstream *st = &r->st[op->stream];
            SS_PUSH(st->ops, st->nops, st->cops, (int32_t)o);
        }
    }
    ss_parallel_for(m->nstreams, ss_thread_count(), stream_order_job, r);

    ss_timing("replay.build.streams", t);
    t = ss_seconds();
    /* event records and waits, host waits, per call */
    /* the previous call of each call's thread: its thread's list, in the
     * calls' order (every call is in its thread's list; -1 for a first) */
    for (uint32_t c = 0; c < m->ncalls; c++) r->call_prev[c] = -1;
    for (uint32_t t = 0; t < m->nthreads; t++)
        for (uint32_t i = 1; i < m->threads[t].ncalls; i++)
            r->call_prev[m->threads[t].calls[i]] = m->threads[t].calls[i - 1];
    /* event records' device completion times, by correlation id (of
     * several records with one id, the last in the trace) */
    build_loop bl = { .r = r, .chw = ss_xcalloc(m->ncalls + 1, 1) };
    corr_time *event_ts = bl.event_ts = ss_xcalloc(m->ncuda_events + 1, sizeof *bl.event_ts);
    ss_parallel_slices(m->ncuda_events, build_slices(m->ncuda_events), event_ts_slice, &bl);
    ss_radix_sort16_threads(event_ts, m->ncuda_events, ss_thread_count());
    /* those without a time or an id (corr 0) sort first and are left out */
    uint32_t unknown = 0;
    while (unknown < m->ncuda_events && !event_ts[unknown].corr) unknown++;
    bl.event_ts = event_ts + unknown;
    bl.nevent_ts = m->ncuda_events - unknown;
    ss_parallel_slices(m->ncalls, build_slices(m->ncalls), host_wait_slice, &bl);
    /* The calls that record an event, wait on one on a stream or from the
     * host, found on slices; then their events' records and waits
     * (events_walk); then each call's host wait, counted and written on
     * slices at its place in call order. */
    unsigned csl = build_slices(m->ncalls);
    ss_parallel_slices(m->ncalls, csl, event_calls_slice, &bl);
    uint32_t nev = 0;
    for (unsigned k = 0; k < csl; k++) { uint32_t x = bl.sl_nev[k]; bl.sl_ev0[k] = nev; nev += x; }
    bl.evcall = ss_xcalloc(nev + 1, sizeof(int32_t));
    bl.ev_stream = ss_xcalloc(nev + 1, sizeof(int32_t));
    bl.ev_bound = ss_xcalloc(nev + 1, sizeof(int64_t));
    bl.fill = 1;
    ss_parallel_slices(m->ncalls, csl, event_calls_slice, &bl);
    /* an event's completion is its record's marker: bounds that name an
     * event record include it (key + 1).  Stream memory operations
     * (cuStreamWaitValue*, cuStreamWriteValue*, cuStreamBatchMemOp) are
     * neither operations nor markers here: CUPTI records no GPU activity
     * for them, and a wait-value is no wait_dep.  What an op behind a
     * wait-value waited for stays in its measured delay (lat: start -
     * modelled readiness), which every what-if keeps: the replay assumes
     * the value arrives when it did, and does not move that op when a
     * what-if moves the writer. */
    events_walk(&bl, nev);
    bl.fill = 0;
    ss_parallel_slices(m->ncalls, csl, host_waits_slice, &bl);
    for (unsigned k = 0; k < csl; k++) { uint32_t x = bl.sl_ncw[k]; bl.sl_cw0[k] = r->ncws; r->ncws += x; }
    r->cws = ss_xcalloc(r->ncws + 1, sizeof(cwait));
    bl.fill = 1;
    ss_parallel_slices(m->ncalls, csl, host_waits_slice, &bl);
    free(bl.evcall);
    free(bl.ev_stream);
    free(bl.ev_bound);
    free(bl.chw);
    bl.chw = NULL;
    /* per marker: its completion on the device (CUPTI's event record
     * timestamp of its call's correlation id), 0 unknown (a stream wait's);
     * read only until the markers are placed */
    uint64_t *mk_measured = ss_xcalloc(r->nmk + 1, sizeof(uint64_t));
    bl.mk_measured = mk_measured;
    ss_parallel_slices(r->nmk, build_slices(r->nmk), measured_slice, &bl);
    free(event_ts);
    bl.event_ts = NULL;

    graph_exec_waits(r);
    ss_parallel_for(m->nstreams, ss_thread_count(), stream_waits_job, r);

    ss_timing("replay.build.calls", t);
    t = ss_seconds();
    /* markers: per stream, their waits, and their completion in the
     * measured run -- in key order, so that what one depends on is known */
    r->mk_real = ss_xcalloc(r->nmk + 1, sizeof(uint64_t));
    r->mk_lat = ss_xcalloc(r->nmk + 1, sizeof(int64_t));
    pass real = real_pass_of(r);
    /* each marker's waits and its call's entry, on threads; then each
     * stream's markers (in key order: the markers are) */
    bl.mk_enter = ss_xcalloc(r->nmk + 1, sizeof(uint64_t));
    ss_parallel_slices(r->nmk, build_slices(r->nmk), marker_slice, &bl);
    for (uint32_t k = 0; k < r->nmk; k++) r->st[r->mk[k].stream].nmarks++;
    for (uint32_t s = 0; s < m->nstreams; s++) {
        rstream *st = &r->st[s];
        if (!st->nmarks) continue;
        st->marks = ss_xcalloc(st->nmarks, sizeof(int32_t));
        st->mkk = ss_xcalloc(st->nmarks, sizeof(int64_t));
        st->nmarks = 0;
    }
    for (uint32_t k = 0; k < r->nmk; k++) {
        rstream *st = &r->st[r->mk[k].stream];
        st->marks[st->nmarks] = (int32_t)k;
        st->mkk[st->nmarks++] = mark_key(&r->mk[k]);
    }
    /* Their completions.  A marker's readiness reads the completions of
     * markers before it in key order only (a stream's searches for markers
     * before a bound find only earlier ones).  A measured completion is
     * known without it: those are set first, then the others in key order
     * (each is its readiness, from earlier ones), then the measured ones'
     * delays, from their readiness, on threads. */
    for (uint32_t k = 0; k < r->nmk; k++) r->mk_real[k] = mk_measured[k];
    unsigned msl = build_slices(r->nmk);
    bl.mk_local = ss_xcalloc(r->nmk + 1, sizeof(uint64_t));
    bl.dep_end = ss_xcalloc(r->nmk + 1, sizeof(uint32_t));
    ss_parallel_slices(r->nmk, msl, unmeasured_slice, &bl);
    for (unsigned sl = 0; sl < msl; sl++) {
        uint32_t at = 0;
        for (size_t k = bl.ufrom[sl]; k < bl.uto[sl]; k++) {
            uint32_t end = bl.dep_end[k];
            if (!mk_measured[k]) {
                uint64_t v = bl.mk_local[k];
                for (; at < end; at++) v = max_u64(v, r->mk_real[bl.udeps[sl][at]]);
                r->mk_real[k] = v;
            }
            at = end;
        }
        free(bl.udeps[sl]);
    }
    free(bl.mk_local);
    free(bl.dep_end);
    ss_parallel_slices(r->nmk, build_slices(r->nmk), marker_delay_slice, &bl);
    free(mk_measured);
    free(bl.mk_enter);
    bl.mk_enter = NULL;
    real_pass_free(&real);

    ss_timing("replay.build.markers", t);
    t = ss_seconds();
    /* what the model alone says each op waited for */
    ss_parallel_slices(m->nops, build_slices(m->nops), ready_slice, &bl);
    ss_timing("replay.build.ready", t);
    t = ss_seconds();

    /* hardware effects, where the trace shows them */
    int32_t *by_key = ss_xcalloc(m->nops + 1, sizeof(int32_t));
    for (uint32_t o = 0; o < m->nops; o++) by_key[o] = (int32_t)o;
    sort_ops_by_key_threads(r, by_key, m->nops, ss_thread_count());
    for (int32_t dv = 0; dv < ndev; dv++) {
        find_hw_queues(r, dv);
        find_load_barriers(r, dv, by_key, m->nops);
    }
    if (r->nlb) {
        /* each op waits behind the latest barrier of its device before it.
         * Barriers were found device by device, each device's in key order:
         * one range of r->lb per device, walked by a cursor as the ops come
         * in key order (one pass, however many barriers a program has) */
        struct { uint32_t first, end, cur; } *span = ss_xcalloc((size_t)ndev + 1, sizeof *span);
        for (uint32_t b = r->nlb; b-- > 0; ) span[r->lb[b].device].first = span[r->lb[b].device].cur = b;
        for (uint32_t b = 0; b < r->nlb; b++) span[r->lb[b].device].end = b + 1;
        for (uint32_t i = 0; i < m->nops; i++) {
            int32_t o = by_key[i], dv = ss_op_device(&m->ops[o]);
            if (dv < 0 || dv >= ndev) continue;
            uint32_t *c = &span[dv].cur;   /* an empty span: end 0, never entered */
            while (*c < span[dv].end && r->lb_key[*c] <= r->opkey[o]) (*c)++;
            if (*c > span[dv].first) r->op_barrier[o] = (int32_t)(*c - 1);
        }
        free(span);
    }
    free(by_key);

    ss_timing("replay.build.hardware", t);
    t = ss_seconds();
    /* what each call did besides waiting, measured (waits_slice), and the
     * delay each op had after everything modelled (lat_slice) */
    ss_parallel_slices(m->ncalls, build_slices(m->ncalls), waits_slice, &bl);
    r->wake = ss_xcalloc(m->nops + 1, sizeof(uint64_t));
    for (uint32_t o = 0; o < m->nops; o++) r->wake[o] = UINT64_MAX;
    for (uint32_t i = 0; i < r->ncws; i++) {
        const cwait *w = &r->cws[i];
        if (w->waited && w->wait_op >= 0 && w->post < r->wake[w->wait_op]) r->wake[w->wait_op] = w->post;
    }
    ss_parallel_slices(m->nops, build_slices(m->nops), lat_slice, &bl);

    ss_timing("replay.build.waits", t);
    t = ss_seconds();
    /* the measured order of events */
    uint8_t *exit_item = sort_items(r);
    index_positions(r, exit_item);
    free(exit_item);
    ss_timing("replay.build.order", t);
    return r;
}

/* The whole replay on this thread: its structure, then the baseline. */
static ss_replay *build(const ss_model *m)
{
    double t = ss_seconds();
    ss_replay *r = build_structure(m);
    record_baseline(r);
    r->baseline_ready = 1;
    ss_timing("replay.build", t);
    return r;
}

/* The build on its own thread: it reads the model's loaded tables and
 * writes only the replay it makes, so the rules can run meanwhile (they
 * write other fields of the model: their own caches).  The replay is handed
 * out (ss_replay_of) once its structure is made; the thread goes on to
 * record the baseline, which what reads it waits for (wait_baseline). */
typedef struct prefetch { pthread_t tid; const ss_model *m; ss_replay *r; } prefetch;

/* Several rules ask for the replay from their threads at once (rules.c):
 * the first joins the build (or builds), the others wait for it here. */
static pthread_mutex_t replay_of_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t replay_stage = PTHREAD_COND_INITIALIZER;   /* a structure or a baseline made */

static void *prefetch_main(void *arg)
{
    prefetch *p = arg;
    double t = ss_seconds();
    ss_replay *r = build_structure(p->m);
    pthread_mutex_lock(&replay_of_lock);
    p->r = r;
    pthread_cond_broadcast(&replay_stage);
    pthread_mutex_unlock(&replay_of_lock);
    record_baseline(r);
    pthread_mutex_lock(&replay_of_lock);
    r->baseline_ready = 1;
    pthread_cond_broadcast(&replay_stage);
    pthread_mutex_unlock(&replay_of_lock);
    ss_timing("replay.build", t);
    return NULL;
}

static void wait_baseline(const ss_replay *r)
{
    pthread_mutex_lock(&replay_of_lock);
    while (!r->baseline_ready) pthread_cond_wait(&replay_stage, &replay_of_lock);
    pthread_mutex_unlock(&replay_of_lock);
}

static void prefetch_join(ss_model *mm)
{
    prefetch *p = mm->replay_job;
    if (!p) return;
    pthread_join(p->tid, NULL);
    mm->replay_job = NULL;
    /* ss_replay_of builds only without a job: the model has no other replay */
    mm->replay = p->r;
    mm->replay_free = ss_replay_free;
    free(p);
}

void ss_replay_prefetch(const ss_model *m)
{
    ss_model *mm = (ss_model *)m;
    if (mm->replay || mm->replay_job || ss_thread_count() < 2) return;
    prefetch *p = ss_xcalloc(1, sizeof *p);
    p->m = m;
    if (pthread_create(&p->tid, NULL, prefetch_main, p) != 0) {
        free(p);   /* built on first use instead */
        return;
    }
    mm->replay_job = p;
    mm->replay_job_free = prefetch_join;   /* the model frees the replay it leaves */
}

const ss_replay *ss_replay_of(const ss_model *m)
{
    ss_model *mm = (ss_model *)m;   /* a cache the model owns and frees, like kaccess */
    pthread_mutex_lock(&replay_of_lock);
    prefetch *p = mm->replay_job;
    if (!mm->replay && p) {
        while (!p->r) pthread_cond_wait(&replay_stage, &replay_of_lock);
        mm->replay = p->r;
        mm->replay_free = ss_replay_free;
    }
    if (!mm->replay) {
        mm->replay = build(m);
        mm->replay_free = ss_replay_free;
    }
    const ss_replay *r = mm->replay;
    pthread_mutex_unlock(&replay_of_lock);
    return r;
}

void ss_replay_free(ss_replay *r)
{
    if (!r) return;
    for (uint32_t s = 0; s < r->m->nstreams; s++) {
        free(r->st[s].ops);
        free(r->st[s].waits);
        free(r->st[s].marks);
        free(r->st[s].opk);
        free(r->st[s].mkk);
    }
    for (int32_t d = 0; d < r->ndev; d++) {
        free(r->dev[d].streams); free(r->dev[d].group); free(r->dev[d].legacy);
    }
    free(r->st); free(r->dev); free(r->opkey); free(r->op_pred); free(r->op_wbeg); free(r->op_wend);
    free(r->op_qpred); free(r->op_barrier); free(r->ready); free(r->lat); free(r->cwi); free(r->cws); free(r->call_prev);
    free(r->wake); free(r->ct);
    free(r->iidx); free(r->irank); free(r->hwq); free(r->lb); free(r->lb_key);
    free(r->mk); free(r->mk_real); free(r->mk_lat);
    free(r->posE); free(r->posX); free(r->fold_xmax); free(r->posS); free(r->posM); free(r->bval); free(r->lastread); free(r->outlives);
    free(r->born_blk); free(r->dborn); free(r->die_off); free(r->die); free(r->noninv); free(r->blk_end);
    free(r->drain_first); free(r->bdrain);
    for (unsigned w = 0; w < SS_MAX_THREADS; w++) {
        free(r->sc[w].E); free(r->sc[w].X); free(r->sc[w].S); free(r->sc[w].M);
    }
    for (uint32_t i = 0; i < r->nmemo; i++) free(r->memo[i].rx);
    free(r->memo);
    free(r);
}
