/* Happens-before over streams and host threads: see hb.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "hb.h"
#include "capture_windows.h"
#include "util.h"

#define SS_HB_MAX_DEVICES 64
/* write-values remembered per address: a wait links to the latest of them
 * that satisfies it (flags, counters and sequence numbers are rewritten
 * every iteration: older values are long superseded) */
#define VALUE_RING 16

struct ss_hb {
    const ss_model *m;
    uint32_t A;            /* clock width = number of streams */
    uint32_t *svc;         /* A x A: stream clocks */
    uint32_t *tvc;         /* nthreads x A: host thread clocks */
    uint32_t **evc;        /* per event: clock of its latest record, or NULL */
    uint32_t *epoch;       /* per call: epoch of its submission, 0 none */
    unsigned flags;        /* SS_HB_* */
    uint32_t *devbar[SS_HB_MAX_DEVICES];   /* per device: clock of its latest
                                              device-serialized op, or NULL */
    /* host thread synchronization (SS_REC_HOST_SYNC), replayed in time order
     * between the calls: a cumulative clock per object */
    uint32_t next_hsync;
    ss_u64map obj_index;   /* object -> index in objc */
    uint32_t **objc; uint32_t nobj, capobj;
    /* per stream, the latest host waits that covered it: (when the wait
     * returned, the stream epoch it covered), a ring */
    struct covered { uint64_t t; uint32_t epoch; uint32_t tid; } *cov;   /* A x COVER_RING */
    uint8_t *ncov;
    uint32_t next_off;     /* sampled traces: the next recorded span whose OFF switch is still ahead */
    /* per stream s: the streams whose clocks the legacy barrier joins into
     * s's (lj[lj_off[s] .. lj_off[s + 1])), found once rather than by a
     * look at every stream on every submission */
    uint32_t *lj_off, *lj;
    /* per stream k: the host function applied so far that is ordered after
     * the most of k's work (its stream clock's k component, and the call) */
    uint32_t *hf_epoch;
    int32_t *hf_call;
    /* stream memory operations: per address written by a write-value
     * (vaddr: address -> index in vw), its latest write-values, a ring: the
     * call and its stream's clock after it */
    ss_u64map vaddr;
    struct vwrites { int32_t call[VALUE_RING]; uint32_t *clk[VALUE_RING]; uint32_t n; } *vw;
    uint32_t nvw, capvw;
    /* per stream: the waits on a memory value linked to no recorded write
     * (and the batches, whose ops are not recorded), in order: epoch, call */
    struct uwait { uint32_t epoch; int32_t call; } **uw;
    uint32_t *nuw, *capuw;
    /* executable graphs: CUDA orders each cudaGraphLaunch after the previous
     * launch of the same cudaGraphExec_t, whatever the streams ("Each launch
     * is ordered behind both any previous work in stream and any previous
     * launches of graphExec"), as if the launch waited on an event recorded
     * after the previous one.  Per exec handle (the call's func): its
     * stream's clock after its latest launch. */
    ss_u64map gexec_index;     /* exec handle -> index in gexc */
    uint32_t **gexc; uint32_t ngex, capgex;
    /* Where host threads were, as host synchronization carries it: per
     * thread, the latest time of each thread it is ordered after (its own:
     * the time of its latest release), and the same per object.  A stream
     * clock says what GPU work a thread knows of, not how far another
     * thread had got: this does (ss_hb_thread_knows).  NULL past
     * HT_MAX_THREADS threads (nthreads^2 words). */
    uint64_t *htc;             /* nthreads x nthreads */
    uint64_t **objt; uint32_t nobjt, capobjt;   /* per object of objc (same index), nthreads wide */
};

#define HT_MAX_THREADS 512u

#define COVER_RING 16

static void join(uint32_t *dst, const uint32_t *src, uint32_t A)
{
    for (uint32_t k = 0; k < A; k++) if (src[k] > dst[k]) dst[k] = src[k];
}

static uint32_t *SV(const ss_hb *h, int32_t s) { return h->svc + (size_t)s * h->A; }

static uint32_t *TV(const ss_hb *h, uint32_t tid)
{
    const ss_thread *t = ss_model_thread(h->m, tid);
    return t ? h->tvc + (size_t)(t - h->m->threads) * h->A : NULL;
}

/* thread tid's row of htc, and its index in it */
static uint64_t *HT(const ss_hb *h, uint32_t tid, uint32_t *index)
{
    const ss_thread *t = h->htc ? ss_model_thread(h->m, tid) : NULL;
    if (!t) return NULL;
    *index = (uint32_t)(t - h->m->threads);
    return h->htc + (size_t)*index * h->m->nthreads;
}

static void join_t(uint64_t *dst, const uint64_t *src, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) if (src[k] > dst[k]) dst[k] = src[k];
}

ss_hb *ss_hb_new(const ss_model *m) { return ss_hb_new_ex(m, 0); }

ss_hb *ss_hb_new_ex(const ss_model *m, unsigned flags)
{
    ss_hb *h = ss_xcalloc(1, sizeof *h);
    h->m = m;
    h->flags = flags;
    h->A = m->nstreams ? m->nstreams : 1;
    h->svc = ss_xcalloc((size_t)h->A * h->A, sizeof(uint32_t));
    h->tvc = ss_xcalloc((size_t)(m->nthreads ? m->nthreads : 1) * h->A, sizeof(uint32_t));
    h->evc = ss_xcalloc(m->nevents ? m->nevents : 1, sizeof(uint32_t *));
    h->epoch = ss_xcalloc(m->ncalls ? m->ncalls : 1, sizeof(uint32_t));
    h->cov = ss_xcalloc((size_t)h->A * COVER_RING, sizeof(*h->cov));
    h->ncov = ss_xcalloc(h->A, 1);
    h->hf_epoch = ss_xcalloc(h->A, sizeof(uint32_t));
    h->hf_call = ss_xcalloc(h->A, sizeof(int32_t));
    h->uw = ss_xcalloc(h->A, sizeof(*h->uw));
    h->nuw = ss_xcalloc(h->A, sizeof(uint32_t));
    h->capuw = ss_xcalloc(h->A, sizeof(uint32_t));
    if (m->nthreads && m->nthreads <= HT_MAX_THREADS)
        h->htc = ss_xcalloc((size_t)m->nthreads * m->nthreads, sizeof(uint64_t));
    return h;
}

void ss_hb_free(ss_hb *h)
{
    if (!h) return;
    for (uint32_t i = 0; i < h->m->nevents; i++) free(h->evc[i]);
    for (uint32_t d = 0; d < SS_HB_MAX_DEVICES; d++) free(h->devbar[d]);
    for (uint32_t i = 0; i < h->nobj; i++) free(h->objc[i]);
    free(h->objc);
    for (uint32_t i = 0; i < h->nobjt; i++) free(h->objt[i]);
    free(h->objt);
    free(h->htc);
    ss_u64map_free(&h->obj_index);
    free(h->cov); free(h->ncov); free(h->lj_off); free(h->lj);
    free(h->evc); free(h->svc); free(h->tvc); free(h->epoch);
    free(h->hf_epoch); free(h->hf_call);
    for (uint32_t i = 0; i < h->nvw; i++)
        for (uint32_t j = 0; j < VALUE_RING; j++) free(h->vw[i].clk[j]);
    free(h->vw);
    ss_u64map_free(&h->vaddr);
    for (uint32_t k = 0; k < h->A; k++) free(h->uw[k]);
    free(h->uw); free(h->nuw); free(h->capuw);
    for (uint32_t i = 0; i < h->ngex; i++) free(h->gexc[i]);
    free(h->gexc);
    ss_u64map_free(&h->gexec_index);
    free(h);
}

uint32_t ss_hb_width(const ss_hb *h) { return h->A; }

int32_t ss_hb_host_func_after(const ss_hb *h, int32_t stream, uint32_t epoch)
{
    if (stream < 0 || (uint32_t)stream >= h->A || !epoch || h->hf_epoch[stream] < epoch) return -1;
    return h->hf_call[stream];
}
int32_t ss_hb_unlinked_wait_before(const ss_hb *h, const uint32_t *vc, int32_t skip_stream)
{
    int32_t best = -1;
    for (uint32_t k = 0; k < h->A; k++) {
        /* a wait on the first access's own stream that the second access is
         * ordered after would order the first one too: never the case here */
        if ((int32_t)k == skip_stream || !h->nuw[k] || vc[k] < h->uw[k][0].epoch) continue;
        uint32_t lo = 0, hi = h->nuw[k];   /* the latest with epoch <= vc[k] */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (h->uw[k][mid].epoch <= vc[k]) lo = mid; else hi = mid;
        }
        if (h->uw[k][lo].call > best) best = h->uw[k][lo].call;
    }
    return best;
}

uint32_t ss_hb_call_epoch(const ss_hb *h, int32_t call) { return call >= 0 ? h->epoch[call] : 0; }
const uint32_t *ss_hb_stream_clock(const ss_hb *h, int32_t stream) { return SV(h, stream); }
const uint32_t *ss_hb_thread_clock(const ss_hb *h, uint32_t tid) { return TV(h, tid); }
const uint32_t *ss_hb_event_clock(const ss_hb *h, int32_t event) { return event >= 0 ? h->evc[event] : NULL; }

int ss_hb_call_before(const ss_hb *h, int32_t call, const uint32_t *vc)
{
    if (call < 0 || !h->epoch[call]) return 0;
    int32_t s = h->m->calls[call].stream;
    return s >= 0 && vc[s] >= h->epoch[call];
}

int ss_hb_op_before(const ss_hb *h, int32_t op, const uint32_t *vc)
{
    if (op < 0) return 0;
    int32_t call = h->m->ops[op].call;
    if (call < 0 || !h->epoch[call]) return 0;
    int32_t s = h->m->calls[call].stream;
    return s >= 0 && vc[s] >= ss_hb_graph_op_epoch(h->m, call, op, h->epoch[call]);
}

/* Streams that the legacy default stream is ordered with: those created
 * without cudaStreamNonBlocking, and the per-thread default streams ("not a
 * non-blocking stream: it synchronizes with the legacy default stream"). */
static int legacy_ordered(uint32_t kind)
{
    return kind == SS_STREAM_BLOCKING || kind == SS_STREAM_PER_THREAD;
}

/* Work entering stream s waits for what the legacy barrier makes it wait for:
 * on the legacy stream, all earlier work of the device's blocking streams; on
 * a blocking stream, all earlier legacy work. */
static int legacy_partner(const ss_model *m, int32_t s, uint32_t k)
{
    if ((int32_t)k == s || !ss_same_legacy_domain(m, (int32_t)k, s)) return 0;
    uint32_t kind = m->streams[s].kind, other = m->streams[k].kind;
    return (kind == SS_STREAM_LEGACY_NULL && legacy_ordered(other)) ||
           (legacy_ordered(kind) && other == SS_STREAM_LEGACY_NULL);
}

static void legacy_partners_index(ss_hb *h)
{
    const ss_model *m = h->m;
    uint32_t n = 0;
    h->lj_off = ss_xcalloc((size_t)m->nstreams + 2, sizeof(uint32_t));
    for (uint32_t s = 0; s < m->nstreams; s++)
        for (uint32_t k = 0; k < m->nstreams; k++) n += (uint32_t)legacy_partner(m, (int32_t)s, k);
    h->lj = ss_xcalloc((size_t)n + 1, sizeof(uint32_t));
    n = 0;
    for (uint32_t s = 0; s < m->nstreams; s++) {
        h->lj_off[s] = n;
        for (uint32_t k = 0; k < m->nstreams; k++)
            if (legacy_partner(m, (int32_t)s, k)) h->lj[n++] = k;
    }
    h->lj_off[m->nstreams] = n;
}

static void legacy_joins(ss_hb *h, int32_t s)
{
    if (h->flags & SS_HB_NO_LEGACY_BARRIER) return;
    if (!h->lj_off) legacy_partners_index(h);
    for (uint32_t i = h->lj_off[s]; i < h->lj_off[s + 1]; i++) join(SV(h, s), SV(h, (int32_t)h->lj[i]), h->A);
}

/* The host waited for stream s: on the legacy stream that includes every
 * blocking stream's earlier work. */
static void host_joins_stream(ss_hb *h, uint32_t *tv, int32_t s)
{
    const ss_model *m = h->m;
    join(tv, SV(h, s), h->A);
    if (m->streams[s].kind == SS_STREAM_LEGACY_NULL && !(h->flags & SS_HB_NO_LEGACY_BARRIER))
        for (uint32_t k = 0; k < m->nstreams; k++)
            if (legacy_ordered(m->streams[k].kind) && ss_same_legacy_domain(m, (int32_t)k, s))
                join(tv, SV(h, (int32_t)k), h->A);
}

/* a device-wide wait: every stream it covers (ss_device_wait_covers) */
static void host_joins_device(ss_hb *h, uint32_t *tv, const ss_call *c)
{
    const ss_model *m = h->m;
    for (uint32_t k = 0; k < m->nstreams; k++)
        if (ss_device_wait_covers(m, c, (int32_t)k)) join(tv, SV(h, (int32_t)k), h->A);
}

/* A device-serialized op (cudaMemcpyPeer) runs after all earlier work of
 * its devices, and all later work of those devices runs after it. */
static void device_serialized(ss_hb *h, const ss_call *c, int32_t s)
{
    const ss_model *m = h->m;
    int32_t devs[3] = { m->streams[s].device, (int32_t)c->rec->arg, c->rec->arg2 };
    for (int i = 0; i < 3; i++) {
        int32_t d = devs[i];
        if (d < 0 || d >= SS_HB_MAX_DEVICES) continue;
        for (uint32_t k = 0; k < m->nstreams; k++)
            if (m->streams[k].device == d) join(SV(h, s), SV(h, (int32_t)k), h->A);
    }
}

static void device_barrier_after(ss_hb *h, const ss_call *c, int32_t s)
{
    int32_t devs[3] = { h->m->streams[s].device, (int32_t)c->rec->arg, c->rec->arg2 };
    for (int i = 0; i < 3; i++) {
        int32_t d = devs[i];
        if (d < 0 || d >= SS_HB_MAX_DEVICES) continue;
        if (!h->devbar[d]) h->devbar[d] = ss_xcalloc(h->A, sizeof(uint32_t));
        join(h->devbar[d], SV(h, s), h->A);
    }
}

/* An event recorded with the stream clock vc (a snapshot). */
static void event_recorded(ss_hb *h, int32_t event, const uint32_t *vc)
{
    if (!h->evc[event]) h->evc[event] = ss_xcalloc(h->A, sizeof(uint32_t));
    memcpy(h->evc[event], vc, h->A * sizeof(uint32_t));
}

/* Does a wait (flags, value, width) pass on memory holding `word`?  CUDA's
 * conditions (cuda.h CUstreamWaitValue_flags): GEQ is a cyclic comparison,
 * (int32_t)(word - value) >= 0 (int64_t for the 64-bit calls); EQ word ==
 * value; AND (word & value) != 0; NOR ~(word | value) != 0, on the call's
 * width.  CU_STREAM_WAIT_VALUE_FLUSH (1 << 30) changes nothing here. */
static int wait_passes(uint32_t flags, uint64_t value, uint64_t word, uint32_t width)
{
    uint64_t mask = width == 8 ? ~0ull : 0xffffffffull;
    value &= mask;
    word &= mask;
    switch (flags & 0xfu) {
    case 0x0: return width == 8 ? (int64_t)(word - value) >= 0 : (int32_t)(uint32_t)(word - value) >= 0;
    case 0x1: return word == value;
    case 0x2: return (word & value) != 0;
    case 0x3: return (~(word | value) & mask) != 0;
    default: return 0;   /* a condition CUDA 13 does not define: link nothing */
    }
}

/* A write-value: remember its stream's clock (which includes it) under its
 * address. */
static void value_written(ss_hb *h, int32_t ci, int32_t s)
{
    const ss_api_rec *r = h->m->calls[ci].rec;
    int64_t vi = ss_u64map_get(&h->vaddr, r->ptr, -1);
    if (vi < 0) {
        struct vwrites z;
        memset(&z, 0, sizeof z);
        SS_PUSH(h->vw, h->nvw, h->capvw, z);
        vi = h->nvw - 1;
        ss_u64map_put(&h->vaddr, r->ptr, vi);
    }
    struct vwrites *w = &h->vw[vi];
    uint32_t slot = w->n++ % VALUE_RING;
    if (!w->clk[slot]) w->clk[slot] = ss_xcalloc(h->A, sizeof(uint32_t));
    memcpy(w->clk[slot], SV(h, s), h->A * sizeof(uint32_t));
    w->call[slot] = ci;
}

/* A wait-value: its stream joins the clock of the latest earlier
 * write-value to its address whose value satisfies it.  None recorded (a
 * kernel, the host, another process or a batch wrote the word, or the
 * write was submitted after the wait): it orders nothing provable, and is
 * kept as a wait that may order what follows it (ss_hb_unlinked_wait_before);
 * so is a batch, whose ops are not recorded. */
static void value_waited(ss_hb *h, int32_t ci, int32_t s, uint32_t epoch)
{
    const ss_call *c = &h->m->calls[ci];
    if (c->cls == SS_API_STREAM_WAIT_VALUE) {
        int64_t vi = ss_u64map_get(&h->vaddr, c->rec->ptr, -1);
        const struct vwrites *w = vi >= 0 ? &h->vw[vi] : NULL;
        uint32_t width = c->rec->bytes == 8 ? 8 : 4;
        for (uint32_t j = 0; w && j < w->n && j < VALUE_RING; j++) {
            uint32_t slot = (w->n - 1 - j) % VALUE_RING;
            const ss_call *wr = &h->m->calls[w->call[slot]];
            if ((wr->rec->bytes == 8 ? 8u : 4u) != width ||
                !wait_passes((uint32_t)c->rec->arg2, ss_call_memop_value(c), ss_call_memop_value(wr), width))
                continue;
            join(SV(h, s), w->clk[slot], h->A);
            return;
        }
    }
    struct uwait u = { epoch, ci };
    SS_PUSH(h->uw[s], h->nuw[s], h->capuw[s], u);
}

/* Host synchronization up to time t: a release joins the thread's clock into
 * the object's, an acquire joins the object's into the thread's. */
static void host_sync_until(ss_hb *h, uint64_t t)
{
    const ss_model *m = h->m;
    for (; h->next_hsync < m->nhsyncs && m->hsyncs[h->next_hsync]->time <= t; h->next_hsync++) {
        const ss_host_sync_rec *r = m->hsyncs[h->next_hsync];
        uint32_t *tv = TV(h, r->tid);
        if (!tv) continue;
        int64_t oi = ss_u64map_get(&h->obj_index, r->object, -1);
        uint32_t ti = 0, nt = m->nthreads;
        uint64_t *ht = HT(h, r->tid, &ti);
        if (r->h.flags == SS_HSYNC_RELEASE) {
            if (oi < 0) {
                uint32_t *clk = ss_xcalloc(h->A, sizeof(uint32_t));
                SS_PUSH(h->objc, h->nobj, h->capobj, clk);
                oi = h->nobj - 1;
                ss_u64map_put(&h->obj_index, r->object, oi);
                if (h->htc) SS_PUSH(h->objt, h->nobjt, h->capobjt, ss_xcalloc(nt, sizeof(uint64_t)));
            }
            join(h->objc[oi], tv, h->A);
            if (ht) {
                if (r->time > ht[ti]) ht[ti] = r->time;   /* how far this thread had got */
                join_t(h->objt[oi], ht, nt);
            }
        } else if (r->h.flags == SS_HSYNC_ACQUIRE && oi >= 0) {
            join(tv, h->objc[oi], h->A);
            if (ht) join_t(ht, h->objt[oi], nt);
        }
    }
}

/* After a host wait on thread tid returning at t: remember, per stream whose
 * epoch the thread's clock now covers further, that the host had waited for
 * it by then (evidence for ss_hb_waited_before). */
static void note_covered(ss_hb *h, const uint32_t *before, const uint32_t *tv, uint64_t t, uint32_t tid)
{
    for (uint32_t k = 0; k < h->A; k++) {
        if (tv[k] <= before[k]) continue;
        struct covered *ring = h->cov + (size_t)k * COVER_RING;
        ring[h->ncov[k] % COVER_RING] = (struct covered){ t, tv[k], tid };
        h->ncov[k] = (uint8_t)((h->ncov[k] + 1) % (2 * COVER_RING));
    }
}

int ss_hb_thread_knows(const ss_hb *h, uint32_t reader, uint32_t writer, uint64_t t)
{
    uint32_t ri = 0, wi = 0;
    const uint64_t *row = HT(h, reader, &ri);
    if (!row || !HT(h, writer, &wi)) return 0;
    return row[wi] >= t;
}

int ss_hb_waited_before(const ss_hb *h, int32_t call, uint64_t t, uint32_t *waiter_tid, uint64_t *when)
{
    if (call < 0 || !h->epoch[call]) return 0;
    int32_t s = h->m->calls[call].stream;
    if (s < 0) return 0;
    const struct covered *ring = h->cov + (size_t)s * COVER_RING;
    int found = 0;
    for (uint32_t i = 0; i < COVER_RING; i++) {
        const struct covered *c = &ring[i];
        if (!c->epoch || c->epoch < h->epoch[call] || c->t > t) continue;
        if (!found || c->t < *when) { *when = c->t; *waiter_tid = c->tid; }
        found = 1;
    }
    return found;
}

/* Sampled recording: what happened while OFF is unseen (event records,
 * host waits, ...), so nothing before an OFF span is paired with anything
 * after it: the span acts as a barrier, everything before it happens before
 * everything after.  An event's record from before it orders nothing after
 * it (the event may have been recorded again unseen). */
static void off_barriers_until(ss_hb *h, uint64_t t)
{
    const ss_model *m = h->m;
    const ss_capture *cap = ss_capture_of(m);
    if (!cap || !cap->sampled) return;
    while (h->next_off < cap->nspans && cap->spans[h->next_off].t_off <= t) {
        h->next_off++;
        uint32_t *g = ss_xcalloc(h->A, sizeof(uint32_t));
        for (uint32_t s = 0; s < m->nstreams; s++) join(g, SV(h, (int32_t)s), h->A);
        for (uint32_t i = 0; i < m->nthreads; i++) join(g, h->tvc + (size_t)i * h->A, h->A);
        if (h->htc)   /* every thread ordered after everything before the span */
            for (size_t i = 0; i < (size_t)m->nthreads * m->nthreads; i++)
                if (h->htc[i] < cap->spans[h->next_off - 1].t_off) h->htc[i] = cap->spans[h->next_off - 1].t_off;
        for (uint32_t s = 0; s < m->nstreams; s++) memcpy(SV(h, (int32_t)s), g, h->A * sizeof(uint32_t));
        for (uint32_t i = 0; i < m->nthreads; i++) memcpy(h->tvc + (size_t)i * h->A, g, h->A * sizeof(uint32_t));
        for (uint32_t e = 0; e < m->nevents; e++) { free(h->evc[e]); h->evc[e] = NULL; }
        free(g);
    }
}

/* Is external event node k (ss_model.ext_event_calls) of capture gcap and of
 * class cls (an event record node, or a wait node)?  Its event, or -1. */
uint32_t ss_hb_graph_op_epoch(const ss_model *m, int32_t call, int32_t op, uint32_t epoch)
{
    if (!m->next_event_calls || call < 0 || op < 0 || !epoch) return epoch;
    uint32_t gcap = ss_graph_launch_capture(m, &m->calls[call]);
    if (!gcap) return epoch;
    /* records after the op's node: each took one epoch below the launch's */
    int32_t node = m->ops[op].node_call;
    uint32_t after = 0;
    for (uint32_t k = 0; k < m->next_event_calls; k++)
        if (ss_graph_ext_event(m, k, gcap, SS_API_EVENT_RECORD) >= 0 && (node < 0 || node < m->ext_event_calls[k]))
            after++;
    return epoch > after ? epoch - after : epoch;
}

uint32_t ss_hb_apply(ss_hb *h, int32_t ci)
{
    const ss_model *m = h->m;
    const ss_call *c = &m->calls[ci];
    host_sync_until(h, c->rec->t_enter);
    off_barriers_until(h, c->rec->t_enter);
    if (c->rec->ret != 0 || c->captured) return 0;
    uint32_t *tv = TV(h, c->rec->tid);
    if (!tv) return 0;
    int32_t s = c->stream;
    ss_host_wait wait = ss_call_host_wait(m, c);
    uint32_t epoch = 0;
    /* the thread's clock before the call, to see what its wait covered */
    uint32_t before_stack[64], *before = NULL;
    if (wait != SS_WAIT_NONE) {
        before = h->A <= 64 ? before_stack : ss_xcalloc(h->A, sizeof(uint32_t));
        memcpy(before, tv, h->A * sizeof(uint32_t));
    }

    if (ss_class_submits_work(c->cls) && s >= 0) {   /* model.h: what takes a place in its order */
        uint32_t *sv = SV(h, s);
        join(sv, tv, h->A);
        legacy_joins(h, s);
        int32_t dev = m->streams[s].device;
        if (dev >= 0 && dev < SS_HB_MAX_DEVICES && h->devbar[dev]) join(sv, h->devbar[dev], h->A);
        /* a graph launch after its exec's previous launch (on any stream) */
        uint32_t *gexc = NULL;
        if (ss_call_is_graph_launch(m, c) && c->rec->func) {
            int64_t gi = ss_u64map_get(&h->gexec_index, c->rec->func, -1);
            if (gi < 0) {
                SS_PUSH(h->gexc, h->ngex, h->capgex, ss_xcalloc(h->A, sizeof(uint32_t)));
                gi = h->ngex - 1;
                ss_u64map_put(&h->gexec_index, c->rec->func, gi);
            }
            gexc = h->gexc[gi];
            join(sv, gexc, h->A);
        }
        int serialized = ss_call_device_serialized(m, c);
        if (serialized) device_serialized(h, c, s);
        /* the host waited for what was queued before its own operation
         * (pageable-to-device cudaMemcpy: stream sync, then staged) */
        if (wait == SS_WAIT_STREAM_PRIOR) host_joins_stream(h, tv, s);
        /* a launch recording an event through a launch attribute: when its
         * blocks have started (before its own epoch), or triggered/ended
         * (after) */
        int launch_record = c->cls == SS_API_LAUNCH && ss_call_records_event(c);
        if (launch_record && ss_launch_records_event_before(c)) event_recorded(h, c->event, sv);
        /* A graph captured with external event nodes: each launch waits
         * for the events its wait nodes name and records the events its
         * record nodes name.  A record node covers the nodes captured before
         * it: the launch takes an epoch per record node, and its operations
         * theirs (ss_hb_graph_op_epoch).  A wait node's place is not kept:
         * the whole launch is ordered after it (a race with a node captured
         * before the wait goes unreported, never the other way round). */
        uint32_t gcap = m->next_event_calls ? ss_graph_launch_capture(m, c) : 0;
        for (uint32_t k = 0; gcap && k < m->next_event_calls; k++) {
            int32_t e = ss_graph_ext_event(m, k, gcap, SS_API_STREAM_WAIT);
            if (e >= 0 && h->evc[e]) join(sv, h->evc[e], h->A);
        }
        for (uint32_t k = 0; gcap && k < m->next_event_calls; k++) {
            int32_t e = ss_graph_ext_event(m, k, gcap, SS_API_EVENT_RECORD);
            if (e < 0) continue;
            ++sv[s];   /* the nodes before this record node */
            event_recorded(h, e, sv);
        }
        /* A graph built node by node with event nodes: its wait nodes order
         * the whole launch after their events; a record node without
         * dependencies records before the launch's work, one with
         * dependencies after all of it (which nodes it follows is not kept:
         * a race with a node after it goes unreported, never the other way
         * round). */
        uint32_t nle = 0;
        const ss_launch_event *le = ss_call_is_graph_launch(m, c) ? ss_graph_launch_events(m, ci, &nle) : NULL;
        for (uint32_t k = 0; k < nle; k++)
            if (le[k].kind == SS_GRAPH_NODE_EVENT_WAIT && le[k].event >= 0 && h->evc[le[k].event])
                join(sv, h->evc[le[k].event], h->A);
        for (uint32_t k = 0; k < nle; k++)
            if (le[k].kind == SS_GRAPH_NODE_EVENT_RECORD && le[k].first && le[k].event >= 0)
                event_recorded(h, le[k].event, sv);
        epoch = ++sv[s];
        for (uint32_t k = 0; k < nle; k++)
            if (le[k].kind == SS_GRAPH_NODE_EVENT_RECORD && !le[k].first && le[k].event >= 0)
                event_recorded(h, le[k].event, sv);
        h->epoch[ci] = epoch;
        if (gexc) memcpy(gexc, sv, h->A * sizeof(uint32_t));
        if (launch_record && !ss_launch_records_event_before(c)) event_recorded(h, c->event, sv);
        if (serialized) device_barrier_after(h, c, s);
        if (c->cls == SS_API_HOST_FUNC)
            for (uint32_t k = 0; k < h->A; k++)
                if (sv[k] > h->hf_epoch[k]) { h->hf_epoch[k] = sv[k]; h->hf_call[k] = ci; }
        if (c->cls == SS_API_STREAM_WRITE_VALUE && c->rec->ptr) value_written(h, ci, s);
        else if (c->cls == SS_API_STREAM_WAIT_VALUE || c->cls == SS_API_STREAM_BATCH_MEMOP)
            value_waited(h, ci, s, epoch);
    }

    switch (c->cls) {
    case SS_API_EVENT_RECORD:
        if (s >= 0 && c->event >= 0) {
            join(SV(h, s), tv, h->A);
            int32_t dev = m->streams[s].device;
            if (dev >= 0 && dev < SS_HB_MAX_DEVICES && h->devbar[dev]) join(SV(h, s), h->devbar[dev], h->A);
            /* The record waits behind the legacy barrier: the event completes
             * after that work (cudaEventSynchronize and cudaStreamWaitEvent
             * wait for it).  The stream carries it on only for a timing event
             * (or one whose flags are not known): a host wait on the stream
             * need not wait for a cudaEventDisableTiming record (measured on
             * an H200, driver 580: cudaStreamSynchronize on a blocking stream
             * returned 30 ms before such a record held back so completed, and
             * waited for a timing event's; tools/legacy_marker_probe.cu).
             * The stream's next operation waits behind the barrier itself. */
            if ((h->flags & SS_HB_RECORD_HOLDS_STREAM) || !(m->events[c->event].flags & SS_EVENT_DISABLE_TIMING)) {
                legacy_joins(h, s);
                event_recorded(h, c->event, SV(h, s));
            } else {
                uint32_t keep_stack[64], *keep = h->A <= 64 ? keep_stack : ss_xcalloc(h->A, sizeof(uint32_t));
                memcpy(keep, SV(h, s), h->A * sizeof(uint32_t));
                legacy_joins(h, s);
                event_recorded(h, c->event, SV(h, s));
                memcpy(SV(h, s), keep, h->A * sizeof(uint32_t));
                if (keep != keep_stack) free(keep);
            }
        }
        return epoch;
    case SS_API_STREAM_WAIT:
        if (s >= 0) {
            join(SV(h, s), tv, h->A);
            if (c->event >= 0 && h->evc[c->event]) join(SV(h, s), h->evc[c->event], h->A);
        }
        return epoch;
    default:
        break;
    }

    switch (wait) {
    case SS_WAIT_STREAM:
        if (s >= 0) host_joins_stream(h, tv, s);
        break;
    case SS_WAIT_QUERY:    /* only successful calls get here: success means done */
        if (c->cls == SS_API_EVENT_QUERY) {
            if (c->event >= 0 && h->evc[c->event]) join(tv, h->evc[c->event], h->A);
        } else if (s >= 0) {
            host_joins_stream(h, tv, s);
        }
        break;
    case SS_WAIT_EVENT:
        if (c->event >= 0 && h->evc[c->event]) join(tv, h->evc[c->event], h->A);
        break;
    case SS_WAIT_DEVICE:
        host_joins_device(h, tv, c);
        break;
    default:
        break;
    }
    if (before) {
        note_covered(h, before, tv, c->rec->t_exit, c->rec->tid);
        if (before != before_stack) free(before);
    }
    return epoch;
}

/* ---- a replay beside the walk (ss_hb_feed) ------------------------------ */

#define FEED_CHUNKS 4u               /* chunks in the ring */
#define FEED_CHUNK_BYTES (1u << 20)  /* clocks a chunk holds, in bytes */

struct ss_hb_feed {
    const ss_model *m;
    ss_hb *h;
    uint32_t A, rows;                /* clock width; clocks a chunk */
    int threaded;
    /* the ring: chunk k % FEED_CHUNKS holds clocks [k * rows, ...) */
    uint32_t *clk;                   /* [FEED_CHUNKS][rows][A] */
    uint32_t count[FEED_CHUNKS];     /* clocks in a published chunk */
    uint64_t produced, consumed;     /* chunks published, chunks handed back */
    int done, stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t tid;
    uint32_t next_call;              /* the replay's next call to apply (advance) */
    uint64_t cur;                    /* the chunk being read */
    uint32_t at;                     /* its next clock */
    int have;
    double waited;                   /* ss_hb_feed_waited */
};

static void feed_publish(ss_hb_feed *f, uint32_t n)
{
    pthread_mutex_lock(&f->mu);
    f->count[f->produced % FEED_CHUNKS] = n;
    f->produced++;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* The feed's replay up to its next submission: that stream's clock after
 * it, or NULL at the trace's end.  The thread and the inline asks alike. */
static const uint32_t *advance(ss_hb_feed *f)
{
    while (f->next_call < f->m->ncalls) {
        int32_t i = (int32_t)f->next_call++;
        if (ss_hb_apply(f->h, i)) return SV(f->h, f->m->calls[i].stream);
    }
    return NULL;
}

static void *feed_main(void *arg)
{
    ss_hb_feed *f = arg;
    uint32_t n = 0, *chunk = NULL;
    for (const uint32_t *clock; (clock = advance(f)); ) {
        if (!chunk) {   /* wait for a free chunk */
            pthread_mutex_lock(&f->mu);
            while (f->produced - f->consumed >= FEED_CHUNKS && !f->stop) pthread_cond_wait(&f->cv, &f->mu);
            int stop = f->stop;
            pthread_mutex_unlock(&f->mu);
            if (stop) break;
            chunk = f->clk + (size_t)(f->produced % FEED_CHUNKS) * f->rows * f->A;
        }
        memcpy(chunk + (size_t)n * f->A, clock, f->A * sizeof(uint32_t));
        if (++n == f->rows) {
            feed_publish(f, n);
            n = 0;
            chunk = NULL;
        }
    }
    if (n) feed_publish(f, n);
    pthread_mutex_lock(&f->mu);
    f->done = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

ss_hb_feed *ss_hb_feed_start(const ss_model *m, unsigned flags, uint32_t chunk_clocks)
{
    ss_hb_feed *f = ss_xcalloc(1, sizeof *f);
    f->m = m;
    f->h = ss_hb_new_ex(m, flags);
    f->A = f->h->A;
    if (ss_thread_count() < 2) return f;
    f->rows = chunk_clocks ? chunk_clocks : FEED_CHUNK_BYTES / (f->A * (uint32_t)sizeof(uint32_t));
    if (!f->rows) f->rows = 1;
    f->clk = ss_xcalloc((size_t)FEED_CHUNKS * f->rows * f->A, sizeof(uint32_t));
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    /* a thread of its own, not ss_beside_start: that runs the job at once
     * when no thread starts, and this one would wait on a full ring for
     * asks that never come */
    f->threaded = pthread_create(&f->tid, NULL, feed_main, f) == 0;
    if (!f->threaded) {   /* no thread to be had: advanced by the asks */
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->cv);
        free(f->clk);
        f->clk = NULL;
    }
    return f;
}

const uint32_t *ss_hb_feed_next(ss_hb_feed *f)
{
    if (!f->threaded) return advance(f);   /* NULL: asked more often than there are submissions */
    if (f->have && f->at == f->count[f->cur % FEED_CHUNKS]) {   /* hand the chunk back */
        pthread_mutex_lock(&f->mu);
        f->consumed++;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        f->cur++;
        f->have = 0;
    }
    if (!f->have) {
        pthread_mutex_lock(&f->mu);
        double t0 = f->produced <= f->cur && !f->done && ss_timings_on() ? ss_seconds() : 0;
        while (f->produced <= f->cur && !f->done) pthread_cond_wait(&f->cv, &f->mu);
        if (t0 > 0) f->waited += ss_seconds() - t0;
        int ok = f->produced > f->cur;
        pthread_mutex_unlock(&f->mu);
        if (!ok) return NULL;
        f->have = 1;
        f->at = 0;
    }
    return f->clk + ((size_t)(f->cur % FEED_CHUNKS) * f->rows + f->at++) * f->A;
}

double ss_hb_feed_waited(const ss_hb_feed *f) { return f ? f->waited : 0; }

void ss_hb_feed_free(ss_hb_feed *f)
{
    if (!f) return;
    if (f->threaded) {
        pthread_mutex_lock(&f->mu);
        f->stop = 1;   /* a walk that ended early: the replay need not go on */
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->tid, NULL);
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->cv);
    }
    free(f->clk);
    ss_hb_free(f->h);
    free(f);
}
