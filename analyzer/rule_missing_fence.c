/*
 * missing-fence: two GPU operations on different streams touch the same
 * memory, at least one writes, and nothing orders them.
 *
 * Ordering is the shared happens-before replay (hb.h): stream order, event
 * record/wait, stream memory operations (a cuStreamWaitValue* satisfied by a
 * recorded cuStreamWriteValue*), the legacy barrier, and the host waits CUDA really performs
 * (ss_call_host_wait: a cudaMemset to device memory or a device-to-device
 * cudaMemcpy is NOT a host join).
 *
 * Memory, per access (see docs/rules/missing-fence.md, "memory model"):
 *   - copies and memsets access exact byte ranges (dst written, src read);
 *   - a kernel pointer argument p that falls inside a live allocation is an
 *     access that certainly touches p and may reach to the end of that
 *     allocation.  Whether the kernel reads or writes through it comes from
 *     its machine code (kernel_access.h); where that is unknown the access
 *     "may read or write".  Arguments the kernel never dereferences are no
 *     access at all.
 * A CUDA graph launch is one submission on its stream (every replayed node is
 * ordered after what precedes the launch there and before what follows); each
 * of its ops accesses what its node's parameters say (ss_op_mem_accesses: the
 * launch captured into the graph, or the cudaGraphAdd*Node call), against the
 * allocations live at the replay.  Nodes of one replay are not checked
 * against each other (the graph's own edges order them).
 * With an exact-memory trace (syncsight run --exact-memory) a kernel's
 * accesses are the byte ranges it really read and wrote, recorded per
 * allocation through the CUDA Sanitizer API: nothing is inferred.
 * A race is reported only where both accesses certainly touch common bytes
 * (overlapping exact ranges, a kernel pointer inside a copied range, the
 * same pointer given to two kernels): two kernels handed different offsets of
 * one buffer (buf + i*chunk) are taken to work on different slices.  Where
 * other unordered writers sit beyond a kernel's pointer, inside what it may
 * reach, the finding says so as evidence, not as a verdict.
 *
 * Severity: error when both accesses are known (a write is proven); warning
 * ("possible") when a kernel's access could not be classified, or when the
 * first access had already been waited for by another thread before the
 * second was submitted, when a host function behind the first access was
 * enqueued before the second was submitted, or when the second access is
 * ordered after a wait on a memory value that no recorded write satisfies
 * (orderings the trace may not show); two reads never race.  Stream memory
 * operations are fences, not accesses: the words they write and wait on are
 * never reported.  Cost 0 ms: a race costs correctness, not time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hb.h"
#include "kernel_access.h"
#include "rule.h"
#include "util.h"

enum { ACC_READ = 1, ACC_WRITE = 2, ACC_RW = 3, ACC_MAY = 4 };
#define SHADOW_MAX 256

typedef struct access {
    uint64_t lo, hi;      /* bytes certainly touched */
    uint64_t reach;       /* end of what it may touch (kernel arguments: the allocation's end) */
    int32_t stream;
    uint32_t epoch;
    int32_t call;
    int32_t op;           /* an op of a graph launch: which (the node), else -1 */
    uint8_t kind;
    uint8_t inferred;     /* kernel argument: extent inferred, not known */
    uint8_t hull;         /* exact memory mode's kernel range: the lowest to the highest byte touched,
                             not every byte between */
} access;
typedef struct shadow { access *v; uint32_t n, cap; } shadow;

typedef struct fence_state {
    const ss_model *m;
    ss_hb *hb;
    /* The same replay where an event record carries the legacy barrier's
     * work into its stream (SS_HB_RECORD_HOLDS_STREAM): a host wait on a
     * blocking stream then waits for the record, as an H100 did and an H200
     * did not.  NULL where no record can be held so (no legacy stream, or no
     * stream it orders).  Replayed beside the walk (ss_hb_feed): of it the
     * walk reads only the submitting stream's clock, held_clock, at each
     * submission. */
    ss_hb_feed *held;
    const uint32_t *held_clock;
    shadow *sh;                /* per allocation */
    ss_findings *out;
} fence_state;

/* Two streams of one device that the legacy barrier would order were they
 * of one context: the legacy stream of one and a blocking (or per-thread
 * default) stream or the legacy stream of another. */
static int legacy_of_another_context(const ss_model *m, int32_t a, int32_t b)
{
    if (a < 0 || b < 0 || !m->split_contexts || m->streams[a].device != m->streams[b].device ||
        ss_same_legacy_domain(m, a, b))
        return 0;
    uint32_t ka = m->streams[a].kind, kb = m->streams[b].kind;
    int oa = ka == SS_STREAM_BLOCKING || ka == SS_STREAM_PER_THREAD || ka == SS_STREAM_LEGACY_NULL;
    int ob = kb == SS_STREAM_BLOCKING || kb == SS_STREAM_PER_THREAD || kb == SS_STREAM_LEGACY_NULL;
    return oa && ob && (ka == SS_STREAM_LEGACY_NULL || kb == SS_STREAM_LEGACY_NULL);
}

static int writes(uint8_t kind) { return kind == ACC_WRITE || kind == ACC_RW || kind == ACC_MAY; }

static const char RACE_COST[] = "0 ms: a correctness finding (results depend on timing), not a time cost";

static const char *verb(uint8_t kind, int past)
{
    switch (kind) {
    case ACC_READ: return past ? "read" : "reads";
    case ACC_WRITE: return past ? "wrote" : "writes";
    case ACC_RW: return past ? "read and wrote" : "reads and writes";
    default: return past ? "may have read or written" : "may read or write";
    }
}

static int unordered(const access *e, const uint32_t *vc)
{
    return vc[e->stream] < e->epoch;
}

/* Other unordered writers that sit beyond x's pointer, inside what x may
 * reach, on streams other than x's: evidence for a kernel that reads a whole
 * buffer from its base (a consumer of every slice). */
static uint32_t reach_writers(const fence_state *f, const shadow *sh, const access *x, const access *skip,
                              uint32_t *nstreams)
{
    const uint32_t *vc = ss_hb_stream_clock(f->hb, x->stream);
    uint32_t n = 0, ns = 0;
    uint8_t *seen = ss_xcalloc(f->m->nstreams ? f->m->nstreams : 1, 1);
    for (uint32_t i = 0; i < sh->n; i++) {
        const access *e = &sh->v[i];
        if (e == skip || e->stream == x->stream || !writes(e->kind) || !unordered(e, vc)) continue;
        if (e->lo < x->hi || e->lo >= x->reach) continue;   /* not beyond x's pointer, or out of its reach */
        n++;
        if (!seen[e->stream]) { seen[e->stream] = 1; ns++; }
    }
    free(seen);
    *nstreams = ns;
    return n;
}

/* "kernel K", or for a graph node "kernel K (graph node, replayed by cudaGraphLaunch)" */
static void access_label(const ss_model *m, const access *a, char *buf, size_t len)
{
    if (a->op < 0) { ss_call_label(m, a->call, buf, len); return; }
    char op[240];
    ss_op_label(m, a->op, op, sizeof op);
    snprintf(buf, len, "%s (a node of the CUDA graph replayed by %s)", op, ss_model_call_name(m, &m->calls[a->call]));
}

/* An access's GPU operation: the graph node's, else its call's first; NULL
 * when none was recorded. */
static const ss_gpu_op *access_op(const ss_model *m, const access *a)
{
    int32_t o = a->op >= 0 ? a->op : m->calls[a->call].first_op;
    return o >= 0 ? &m->ops[o] : NULL;
}

/* A synchronous copy from pageable host memory to the device: its call
 * waits for the work before it on its stream, stages the data and may return
 * before the copy lands (ss_call_host_wait: SS_WAIT_STREAM_PRIOR), so it
 * orders nothing for another stream's work -- a user reading "cudaMemcpy is
 * synchronous" is told why. */
static int staged_copy(const ss_model *m, const access *e)
{
    const ss_call *ce = &m->calls[e->call];
    return e->op < 0 && ss_call_host_wait(m, ce) == SS_WAIT_STREAM_PRIOR && ce->rec->t_exit >= ce->rec->t_enter;
}

/* Something the trace cannot show may order the first access e before the
 * second x: then the pair is possible, not proven, and `why` says what.
 *   - Another thread had already waited for e before x was submitted: the
 *     threads may be ordered by means the trace does not show (futexes,
 *     atomics, a lock-free queue).  Said even where a kernel's access is
 *     unknown (`unknown_access`, already possible): it is the stronger doubt.
 *   - A host function that runs only after e was enqueued before x was
 *     submitted, and e's GPU work was done by then: what it did (a
 *     semaphore, a flag the submitting thread waited for, as CUDA's
 *     simpleCallback sample does) runs on a driver thread the trace does not
 *     follow.
 *   - A wait on a memory value (cuStreamWaitValue*) that syncsight cannot
 *     link to a write is ordered before x: the word may have been written
 *     after e (by a kernel, the host, another process, a cuStreamBatchMemOp),
 *     and the wait then orders the two -- unless the GPU ran them
 *     overlapping, which no wait could have allowed.
 *   - The first access is a synchronous cudaMemcpy from pageable host
 *     memory to the device, and the second was submitted after it returned:
 *     by the same thread, or by a thread that host synchronization orders
 *     after the return (ss_hb_thread_knows: a worker started, or handed a
 *     lock, after the main thread uploaded).  CUDA's synchronization rules let such a
 *     copy return once its data is staged, before it lands (so nothing
 *     orders another stream's work after it; measured, copies of up to
 *     16 MB nearly always land after the return: bench/pageable_landing.cu).
 *     Where the run shows the copy had landed before the call returned, the
 *     driver did wait that time: the race is CUDA's letter, not what the run
 *     did (NVIDIA's StreamPriorities sample copies 64 MB inputs so, before
 *     kernels on non-blocking streams read them).
 * An unknown GPU time counts as "may have".  Returns which doubt it found
 * (UNSEEN_*): the staged copy's is told apart, its words already said. */
enum { UNSEEN_NONE, UNSEEN_OTHER, UNSEEN_STAGED };   /* which doubt unseen_ordering found */

static int unseen_ordering(const fence_state *f, const access *x, const access *e, int unknown_access, char *why,
                           size_t len)
{
    const ss_model *m = f->m;
    const ss_api_rec *rx = m->calls[x->call].rec, *re = m->calls[e->call].rec;
    uint32_t waiter = 0;
    uint64_t when = 0;
    if (rx->tid != re->tid && ss_hb_waited_before(f->hb, e->call, rx->t_enter, &waiter, &when)) {
        snprintf(why, len,
                 " (possible: thread %u had already waited for the first access %.3f ms before thread %u submitted "
                 "the second, but no host synchronization between the threads was seen)",
                 waiter, (double)(rx->t_enter - when) / 1e6, rx->tid);
        return UNSEEN_OTHER;
    }
    if (unknown_access) return UNSEEN_NONE;
    const ss_gpu_op *eop = access_op(m, e), *xop = access_op(m, x);
    uint64_t e_end = eop ? eop->end : 0, x_start = xop ? xop->start : 0;
    int32_t hf = ss_hb_host_func_after(f->hb, e->stream, e->epoch);
    if (hf >= 0 && e_end <= rx->t_enter) {
        const ss_call *hc = &m->calls[hf];
        char sh[96];
        snprintf(why, len,
                 " (possible: %s on %s at %.3f ms enqueued a host function that runs only after the first "
                 "access, before the second was submitted; what a host function does, such as posting a "
                 "semaphore the submitting thread waits for, is not seen)",
                 ss_model_call_name(m, hc), ss_stream_describe(m, hc->stream, sh, sizeof sh),
                 ss_trace_ms(m, hc->rec->t_enter));
        return UNSEEN_OTHER;
    }
    const ss_call *ce = &m->calls[e->call];
    int after_return = rx->tid == re->tid ? rx->t_enter >= re->t_exit
                                          : ss_hb_thread_knows(f->hb, rx->tid, re->tid, re->t_exit);
    if (staged_copy(m, e) && e_end && e_end <= ce->rec->t_exit && after_return) {
        char who[128] = "on the same thread";
        if (rx->tid != re->tid)
            snprintf(who, sizeof who, "by thread %u, which host synchronization orders after that return on thread %u",
                     rx->tid, re->tid);
        snprintf(why, len,
                 " (possible: %s from pageable host memory may return once its data is staged, before the copy "
                 "lands, and then orders nothing on other streams; in this run the copy had landed %.3f ms before "
                 "the call returned, and the second access was submitted after the return, %s)",
                 ss_model_call_name(m, ce), (double)(ce->rec->t_exit - e_end) / 1e6, who);
        return UNSEEN_STAGED;
    }
    int32_t uw = ss_hb_unlinked_wait_before(f->hb, ss_hb_stream_clock(f->hb, x->stream), e->stream);
    if (uw >= 0 && (!e_end || !x_start || e_end <= x_start)) {
        const ss_call *wc = &m->calls[uw];
        char sw[96], what[200];
        if (wc->cls == SS_API_STREAM_BATCH_MEMOP)
            snprintf(what, sizeof what, "its %u operations are not recorded", wc->rec->arg);
        else
            snprintf(what, sizeof what, "the word at 0x%llx, value %llu, flags 0x%x", (unsigned long long)wc->rec->ptr,
                     (unsigned long long)ss_call_memop_value(wc), (unsigned)wc->rec->arg2);
        snprintf(why, len,
                 " (possible: the second access's stream waited on a memory value (%s on %s at %.3f ms: %s) "
                 "that syncsight cannot link to a write; a kernel, the host, another process or a batch of "
                 "stream memory operations may have written it after the first access)",
                 ss_model_call_name(m, wc), ss_stream_describe(m, wc->stream, sw, sizeof sw),
                 ss_trace_ms(m, wc->rec->t_enter), what);
        return UNSEEN_OTHER;
    }
    return UNSEEN_NONE;
}

static ss_byte_range byte_range_of(const access *x)
{
    return (ss_byte_range){ x->lo, x->hi, x->reach,
                            x->inferred ? SS_RANGE_INFERRED : x->hull ? SS_RANGE_HULL : SS_RANGE_EXACT };
}

static void report(fence_state *f, int32_t alloc, const access *x, const access *e)
{
    const ss_model *m = f->m;
    const ss_alloc *a = &m->allocs[alloc];
    char lx[320], le[320], sx[96], se[96], msg[3200], extra[720] = "", why[900] = "";
    access_label(m, x, lx, sizeof lx);
    access_label(m, e, le, sizeof le);
    const char *akind = a->kind == SS_MEM_PINNED ? "pinned host" : a->kind == SS_MEM_MANAGED ? "managed" : "device";
    int maybe = x->kind == ACC_MAY || e->kind == ACC_MAY;
    if (maybe) {
        const char *lim = ss_kernel_access_limits(m);
        snprintf(why, sizeof why, " (%s: whether the kernel reads or writes this argument is not known%s%s)",
                 "possible", lim ? ": " : "", lim ? lim : "");
    }
    int unseen = unseen_ordering(f, x, e, maybe, why, sizeof why);
    if (unseen != UNSEEN_NONE) maybe = 1;
    if (!maybe && ss_after_context_event(m, &m->calls[x->call])) {
        maybe = 1;
        snprintf(why, sizeof why, " (possible: " SS_CONTEXT_EVENT_WHY ")");
    }
    /* Ordered only if a host wait on a blocking stream waits for an event
     * record there that the legacy barrier holds back: CUDA's GPUs differ
     * (hb.c, EVENT_RECORD).  Where the first access had ended before the
     * second was submitted, such a wait may have waited for it: possible.
     * Where it had not, the run shows the wait did not: a race, said why. */
    char held[600] = "";
    if (f->held_clock && !unordered(e, f->held_clock) && unseen == UNSEEN_NONE) {
        const ss_gpu_op *hop = access_op(m, e);
        uint64_t e_end = hop ? hop->end : 0, x_enter = m->calls[x->call].rec->t_enter;
        const char *held_why =
            "the only thing that would order them is a host wait on a blocking stream after an event record that "
            "the legacy default stream's barrier held back behind the first access; the event completes after it "
            "(cudaEventSynchronize waits for it), but cudaStreamSynchronize on the stream need not wait for the "
            "record (on an H200, driver 580, it returned without waiting for a cudaEventDisableTiming record)";
        if (!maybe && e_end && e_end <= x_enter) {
            maybe = 1;
            snprintf(why, sizeof why, " (possible: %s; in this run the first access had ended %.3f ms before the "
                     "second was submitted)", held_why, (double)(x_enter - e_end) / 1e6);
        } else if (!maybe) {
            snprintf(held, sizeof held, "; %s, and in this run the second was submitted %.3f ms before the first "
                     "access ended", held_why, e_end > x_enter ? (double)(e_end - x_enter) / 1e6 : 0.0);
        }
    }
    /* A kernel's access is inferred from its pointer argument: the kernel
     * was handed a pointer into these bytes, and its code dereferences it,
     * but which bytes it touches from there is not recorded.  A kernel
     * indexes from its pointer by its other arguments as often as not --
     * kernel(d_a, offset) on each stream of NVIDIA's overlap sample touches
     * only its stream's chunk of d_a -- so an overlap at the pointer is
     * evidence, not proof (exact memory mode records the bytes).  Unless
     * the other access is exact and covers everything the kernel may touch
     * from its pointer (to the allocation's end): whatever bytes it touches,
     * they are among those. */
    ss_byte_range bx = byte_range_of(x), be = byte_range_of(e);
    if (!maybe && (x->inferred || e->inferred) && !ss_ranges_share_a_byte(&bx, &be)) {
        const access *k = x->inferred ? x : e;
        char lk[320];
        access_label(m, k, lk, sizeof lk);
        maybe = 1;
        if (m->calls[k->call].cls == SS_API_LAUNCH)
            snprintf(why, sizeof why,
                     " (possible: %s was handed a pointer to these bytes, but which bytes it touches from there is "
                     "not recorded; a kernel may index from its pointer by its other arguments, as kernel(d_a, "
                     "offset) on each stream touches only its own chunk; syncsight run --exact-memory records the "
                     "range each kernel touched, which clears this where the ranges lie apart)", lk);
        else
            snprintf(why, sizeof why,
                     " (possible: %s copies or sets rows a pitch apart from its pointer, and the trace records its "
                     "width and height but not its pitches: which bytes it touches beyond the first row's start is "
                     "not known; tiles of one pitched image on several streams interleave without overlapping)", lk);
    }
    if (!maybe && !ss_ranges_share_a_byte(&bx, &be)) {   /* hulls that only overlap */
        maybe = 1;
        snprintf(why, sizeof why,
                 " (possible: exact memory mode records, per allocation, the lowest and the highest byte a kernel "
                 "touched, not every byte between; the two ranges overlap, the bytes may not, as tiles of one "
                 "image interleave row by row)");
    }
    uint32_t ns = 0, nw = x->inferred ? reach_writers(f, &f->sh[alloc], x, e, &ns) : 0;
    int staged = staged_copy(m, e);
    const ss_gpu_op *eop = staged ? access_op(m, e) : NULL;
    const ss_api_rec *re = m->calls[e->call].rec;
    if (staged && unseen != UNSEEN_STAGED) {
        /* why a copy the program reads as synchronous orders nothing here */
        char landed[160] = "";
        if (eop && eop->end > re->t_exit)
            snprintf(landed, sizeof landed, ": in this run the copy landed %.3f ms after the call returned",
                     (double)(eop->end - re->t_exit) / 1e6);
        else if (!eop)
            snprintf(landed, sizeof landed, ": when this copy landed was not recorded");
        snprintf(extra, sizeof extra,
                 "; %s from pageable host memory returns once its data is staged, and the copy may land after "
                 "that (CUDA's API synchronization rules), so it orders nothing for another stream%s",
                 ss_model_call_name(m, &m->calls[e->call]), landed);
    } else if (nw)
        snprintf(extra, sizeof extra,
                 "; %u more operation%s on %u other stream%s wrote into the same allocation beyond +%llu without "
                 "being ordered before it: if it reads that far, they race too",
                 nw, nw == 1 ? "" : "s", ns, ns == 1 ? "" : "s", (unsigned long long)(x->lo - a->ptr));
    else if (legacy_of_another_context(m, m->calls[x->call].stream, m->calls[e->call].stream))
        snprintf(extra, sizeof extra,
                 "; the legacy default stream's implicit barrier does not order them: each CUDA context (a "
                 "green context too) has a legacy stream of its own, which orders only that context's streams");
    else if (held[0])
        snprintf(extra, sizeof extra, "%s", held);
    snprintf(msg, sizeof msg,
             "%s%s: %s on %s %s buffer 0x%llx (+%llu, %s allocation of %llu bytes made by %s) that %s on %s %s, "
             "and nothing orders the two (no cudaEventRecord + cudaStreamWaitEvent between the streams, no host "
             "synchronization in between)%s",
             maybe ? "possible data race" : "data race", why,
             lx, ss_stream_describe(m, m->calls[x->call].stream, sx, sizeof sx), verb(x->kind, 0),
             (unsigned long long)a->ptr, (unsigned long long)(x->lo - a->ptr), akind,
             (unsigned long long)a->size, a->alloc_call >= 0 ? ss_model_call_name(m, &m->calls[a->alloc_call]) : "?",
             le, ss_stream_describe(m, m->calls[e->call].stream, se, sizeof se), verb(e->kind, 1), extra);
    ss_occurrence o = {
        .rule = "missing-fence",
        .severity = maybe ? SS_SEV_WARNING : SS_SEV_ERROR,
        .fixed_severity = 1,
        .cost_ms = 0,
        .cost_basis = RACE_COST,
        .message = msg,
        .fix = staged ? "Make the upload's end explicit before other streams read the data: cudaStreamSynchronize "
                        "on the copy's stream (or cudaDeviceSynchronize) right after the copy, or copy from pinned "
                        "memory (cudaMallocHost / cudaHostRegister: such a cudaMemcpy returns only once the data "
                        "has landed), or record an event after the copy and make the reading stream wait on it "
                        "(cudaStreamWaitEvent)."
                      : "Order the two streams: cudaEventRecord(ev, producer_stream) after the producer and "
               "cudaStreamWaitEvent(consumer_stream, ev) before the consumer (or synchronize the producer "
               "stream on the host first). In PyTorch: consumer.wait_stream(producer) before using the tensor "
               "on the consumer stream, and tensor.record_stream(consumer) when a tensor allocated on one "
               "stream is used on another.",
        .refs = { { x->call, x->op >= 0 ? x->op : m->calls[x->call].first_op, "second access" },
                  { e->call, e->op >= 0 ? e->op : m->calls[e->call].first_op, "first access" } },
        .nrefs = 2,
        .alloc = alloc,
        .site_extra = maybe ? "possible" : "proven",
    };
    if (a->alloc_call >= 0) o.refs[o.nrefs++] = (ss_finding_ref){ a->alloc_call, -1, "allocation" };
    /* where a replayed node's parameters were given: the captured launch */
    const access *g = x->op >= 0 ? x : e->op >= 0 ? e : NULL;
    if (g && m->ops[g->op].node_call >= 0)
        o.refs[o.nrefs++] = (ss_finding_ref){ m->ops[g->op].node_call, -1, "graph node captured/added" };
    ss_findings_add(f->out, m, &o);
}

static void on_access(fence_state *f, int32_t alloc, access x)
{
    shadow *sh = &f->sh[alloc];
    const uint32_t *vc = ss_hb_stream_clock(f->hb, x.stream);
    /* One pass over the shadow (the walk's costliest step: about 3.5 M
     * accesses at 10 M records, each against about 7 earlier ones) finds the
     * latest earlier access x conflicts with and drops what x supersedes:
     * earlier accesses it is ordered after and that it certainly overwrites
     * whole, and its own stream's identical reads.  A conflict is on another
     * stream and unordered, so it is never dropped; and what is dropped is
     * on x's stream or ordered before it, which reach_writers() would pass
     * over: the report is the one of a conflict found first and a drop after. */
    int x_writes = writes(x.kind);
    int overwrites = (x.kind == ACC_WRITE || x.kind == ACC_RW) && !x.inferred && !x.hull;
    uint32_t w = 0;
    int32_t hit = -1;   /* where the latest conflict is kept */
    for (uint32_t i = 0; i < sh->n; i++) {
        access e = sh->v[i];
        int other = e.stream != x.stream, unord = unordered(&e, vc);
        if (other && unord && e.lo < x.hi && x.lo < e.hi && (x_writes || writes(e.kind))) hit = (int32_t)w;
        int drop = overwrites ? (!other || !unord) && e.lo >= x.lo && e.hi <= x.hi
                              : !other && e.kind == x.kind && e.lo == x.lo && e.hi == x.hi;
        if (!drop) sh->v[w++] = e;
    }
    sh->n = w;
    if (hit >= 0) report(f, alloc, &x, &sh->v[hit]);   /* one report per access: the most direct conflict */
    if (sh->n == SHADOW_MAX) { memmove(sh->v, sh->v + 1, (SHADOW_MAX - 1) * sizeof(access)); sh->n--; }
    SS_PUSH(sh->v, sh->n, sh->cap, x);
}

/* Did thread tid wait for any GPU work between calls a and b?  A wait that
 * left e in flight before the release is incomplete-sync's finding (it says
 * which synchronization fell short); this rule keeps the releases that follow
 * no wait at all. */
static int waited_between(const ss_model *m, uint32_t tid, int32_t a, int32_t b)
{
    for (int32_t i = a + 1; i < b; i++)
        if (m->calls[i].rec->tid == tid && ss_call_host_wait(m, &m->calls[i]) != SS_WAIT_NONE) return 1;
    return 0;
}

/* A release that does not wait for the GPU (cuMemUnmap: measured on an H100,
 * 0.1-0.2 ms with a kernel in flight) takes its range away from GPU work on it
 * that nothing has ordered before the call: that work may fault, or touch
 * whatever is mapped there next.  (cudaFree and its kin wait for the device
 * first, so nothing of theirs can still run.)  The latest such access is
 * reported; one whose touched bytes lie in the range is proven, one that only
 * may reach into it (a kernel's pointer below the range) is possible. */
static void release_check(fence_state *f, int32_t ci)
{
    const ss_model *m = f->m;
    const ss_call *c = &m->calls[ci];
    const shadow *sh = &f->sh[c->alloc];
    const uint32_t *vc = ss_hb_thread_clock(f->hb, c->rec->tid);
    if (!vc) return;
    uint64_t lo, hi;
    ss_call_released_range(m, c, &lo, &hi);
    for (uint32_t i = sh->n; i-- > 0; ) {
        const access *e = &sh->v[i];
        uint64_t ehi = e->reach > e->hi ? e->reach : e->hi;
        if (e->lo >= hi || lo >= ehi || !unordered(e, vc)) continue;
        if (waited_between(m, c->rec->tid, e->call, ci)) return;
        int unknown = e->kind == ACC_MAY, below = !(e->lo < hi && lo < e->hi), maybe = unknown || below;
        /* of a hull, only its ends are known to be touched */
        if (e->hull && !(lo <= e->lo && e->lo < hi) && !(lo <= e->hi - 1 && e->hi - 1 < hi)) maybe = 1;
        const ss_alloc *a = &m->allocs[c->alloc];
        const char *name = ss_model_call_name(m, c);
        char le[320], se[96], msg[1400];
        access_label(m, e, le, sizeof le);
        snprintf(msg, sizeof msg,
                 "%s: %s released 0x%llx..0x%llx (%llu bytes of a device allocation of %llu bytes made by %s) while "
                 "%s on %s, which %s it, was not ordered before the call (no synchronization of that stream, of an "
                 "event recorded after it, or of the device, seen by this thread); %s does not wait for GPU work, so "
                 "that work may fault or touch whatever is mapped there next",
                 below ? "possible use after release (the kernel's pointer lies below the range and may reach into it)"
                 : unknown ? "possible use after release (whether the kernel dereferences this argument is not known)"
                           : "use after release",
                 name, (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)(hi - lo),
                 (unsigned long long)a->size, a->alloc_call >= 0 ? ss_model_call_name(m, &m->calls[a->alloc_call]) : "?",
                 le, ss_stream_describe(m, m->calls[e->call].stream, se, sizeof se),
                 below ? "may reach" : verb(e->kind, 0), name);
        ss_occurrence o = {
            .rule = "missing-fence",
            .severity = maybe ? SS_SEV_WARNING : SS_SEV_ERROR,
            .fixed_severity = 1,
            .cost_ms = 0,
            .cost_basis = RACE_COST,
            .message = msg,
            .fix = "Wait for the GPU work that uses the memory before releasing it: cudaStreamSynchronize on its "
                   "stream, or an event recorded after that work and cudaEventSynchronize (or a successful "
                   "cudaEventQuery), then cuMemUnmap. An allocator can keep an event per block and unmap a block "
                   "only once its event has completed (PyTorch's caching allocator synchronizes before it unmaps).",
            .refs = { { ci, -1, "release" },
                      { e->call, e->op >= 0 ? e->op : m->calls[e->call].first_op, "GPU access" } },
            .nrefs = 2,
            .alloc = c->alloc,
            .site_extra = maybe ? "possible" : "proven",
        };
        if (a->alloc_call >= 0) o.refs[o.nrefs++] = (ss_finding_ref){ a->alloc_call, -1, "allocation" };
        ss_findings_add(f->out, m, &o);
        return;
    }
}

/* The accesses of a batch of calls, found ahead of the walk.  They are a
 * pure function of the model (kernel_access.c's, the copy ranges), about
 * half of the rule's time, and independent of one another; the walk that
 * orders them (happens-before, the shadows) is in call order.  So they are
 * gathered on threads, a batch at a time, while the walk takes the batch
 * before: the same accesses in the same order as one thread finds them. */
#define BATCH 32768u         /* calls per batch */
#define SLICES 16u           /* jobs per batch */

typedef struct found { access x; int32_t alloc; } found;   /* x.epoch: set by the walk */
typedef struct found_slice { found *v; uint32_t n, cap; } found_slice;

typedef struct batch {
    const ss_model *m;
    uint32_t first, n;           /* calls [first, first + n) */
    uint32_t *off;               /* [BATCH]: where call first + i's accesses start in its slice (they end where
                                    the next call's start, or at the slice's end) */
    found_slice sl[SLICES];
    ss_beside job;               /* the gathering, beside the walk */
} batch;

static void add(found_slice *v, int32_t alloc, access x)
{
    found f = { x, alloc };
    SS_PUSH(v->v, v->n, v->cap, f);
}

/* A 2D or 3D copy or memset touches rows of its width, a pitch apart; the
 * trace records width x height (x depth) bytes but not the pitches, so its
 * bytes are known only at the pointer: like a kernel's pointer argument, it
 * certainly touches that byte and may reach to the allocation's end.  (Tiles
 * of one pitched image on several streams interleave row by row: taken as
 * contiguous bytes from the pointer, they would seem to overlap.) */
static void range_access(found_slice *v, const ss_model *m, int32_t ci, uint64_t p, uint64_t bytes, uint8_t kind)
{
    const ss_call *c = &m->calls[ci];
    ss_kernel_mem k;
    if (!ss_copy_range(m, c, p, bytes, c->rec->t_enter, kind != ACC_READ, &k, 1)) return;
    add(v, k.alloc, (access){ k.lo, k.hi, k.reach, c->stream, 0, ci, -1, kind, (uint8_t)!k.exact, 0 });
}

static uint8_t kind_of(const ss_kernel_mem *k)
{
    return !k->known ? ACC_MAY : k->read && k->write ? ACC_RW : k->write ? ACC_WRITE : ACC_READ;
}

/* Kernel launches: the accesses kernel_access.c derives (exact ranges in
 * exact-memory mode, else inferred from the pointer arguments). */
static void kernel_accesses(found_slice *v, const ss_model *m, int32_t ci)
{
    const ss_call *c = &m->calls[ci];
    ss_kernel_mem k[256];
    if (ss_call_is_graph_launch(m, c)) {
        /* node by node: a finding names the replayed node */
        for (int32_t o = c->first_op; o >= 0; o = m->ops[o].next_of_call) {
            uint32_t n = ss_op_mem_accesses(m, o, k, 256);
            for (uint32_t i = 0; i < n; i++)
                add(v, k[i].alloc, (access){ k[i].lo, k[i].hi, k[i].reach, c->stream, 0, ci, o, kind_of(&k[i]),
                                             (uint8_t)!k[i].exact,
                                             (uint8_t)(k[i].exact && m->ops[o].kind == SS_OP_KERNEL) });
        }
        return;
    }
    uint32_t n = ss_kernel_mem_accesses(m, c, k, 256);
    for (uint32_t i = 0; i < n; i++)
        add(v, k[i].alloc, (access){ k[i].lo, k[i].hi, k[i].reach, c->stream, 0, ci, -1, kind_of(&k[i]),
                                     (uint8_t)!k[i].exact, k[i].exact });
}

/* A call's accesses, whether or not it turns out to be a submission (the
 * walk leaves out those of calls that are not). */
static void call_accesses(found_slice *v, const ss_model *m, int32_t i)
{
    const ss_call *c = &m->calls[i];
    switch (c->cls) {
    case SS_API_COPY_SYNC: case SS_API_COPY_ASYNC:
        range_access(v, m, i, c->rec->ptr2, c->rec->bytes, ACC_READ);
        range_access(v, m, i, c->rec->ptr, c->rec->bytes, ACC_WRITE);
        break;
    case SS_API_MEMSET_SYNC: case SS_API_MEMSET_ASYNC:
        range_access(v, m, i, c->rec->ptr, c->rec->bytes, ACC_WRITE);
        break;
    case SS_API_LAUNCH:
        /* In an incomplete trace a launch whose kernel record never came
         * cannot say which kernel ran: judged by nothing. */
        if (m->incomplete_why && c->first_op < 0) break;
        kernel_accesses(v, m, i);
        break;
    default: break;
    }
}

/* slice s of a batch: calls first + [slice_start(s), slice_start(s + 1)) */
static uint32_t slice_start(const batch *b, uint32_t s) { return b->n * s / SLICES; }

static void gather_slice(void *ctx, uint32_t s, unsigned worker)
{
    (void)worker;
    batch *b = ctx;
    uint32_t lo = slice_start(b, s), hi = slice_start(b, s + 1);
    found_slice *v = &b->sl[s];
    v->n = 0;
    for (uint32_t i = lo; i < hi; i++) {
        b->off[i] = v->n;
        call_accesses(v, b->m, (int32_t)(b->first + i));
    }
}

static void gather(void *ctx) { ss_parallel_for(SLICES, ss_side_pool_threads(), gather_slice, ctx); }

/* Gather the accesses of calls [first, first + n), beside the walk. */
static void batch_start(batch *b, uint32_t first, uint32_t n)
{
    b->first = first;
    b->n = n;
    ss_beside_start(&b->job, gather, b);
}

/* Call i in the walk: its accesses (found ahead: acc[0 .. nacc)) once it is
 * known to be a submission, ordered by its epoch; a release's check. */
static void walk_call(fence_state *f, int32_t i, const found *acc, uint32_t nacc)
{
    const ss_model *m = f->m;
    const ss_call *c = &m->calls[i];
    uint32_t epoch = ss_hb_apply(f->hb, i);
    f->held_clock = f->held && epoch ? ss_hb_feed_next(f->held) : NULL;   /* of c->stream: every access's */
    if (epoch)
        for (uint32_t q = 0; q < nacc; q++) {
            access x = acc[q].x;
            x.epoch = x.op >= 0 ? ss_hb_graph_op_epoch(m, i, x.op, epoch) : epoch;
            on_access(f, acc[q].alloc, x);
        }
    if (c->cls == SS_API_FREE && !c->is_async && c->rec->ret == 0 && c->alloc >= 0 &&
        ss_call_host_wait(m, c) == SS_WAIT_NONE)
        release_check(f, i);
    /* a freed allocation's history ends (the next one at the address is
     * another allocation) */
    if (c->cls == SS_API_FREE && c->rec->ret == 0 && c->alloc >= 0) f->sh[c->alloc].n = 0;
}

static uint32_t batch_size(uint32_t from, uint32_t n) { return n - from < BATCH ? n - from : BATCH; }

/* Does the replay that carries held-back records into their streams
 * (fence_state.held) ever order more than the default one?  Only through a
 * host wait on a blocking (or per-thread default) stream whose latest call
 * before it was a cudaEventDisableTiming record, with no work submitted
 * since (which would wait behind the barrier itself), while the stream's
 * device has a legacy stream.  Most programs never do so: the second replay
 * is made only for those that do. */
static int held_record_waited(const ss_model *m)
{
    int legacy = 0;
    for (uint32_t s = 0; s < m->nstreams; s++) legacy |= m->streams[s].kind == SS_STREAM_LEGACY_NULL;
    if (!legacy) return 0;
    uint8_t *held = ss_xcalloc(m->nstreams ? m->nstreams : 1, 1);
    int found = 0;
    for (uint32_t i = 0; i < m->ncalls && !found; i++) {
        const ss_call *c = &m->calls[i];
        int32_t s = c->stream;
        if (s < 0 || c->rec->ret != 0 || c->captured) continue;
        uint32_t kind = m->streams[s].kind;
        if (kind != SS_STREAM_BLOCKING && kind != SS_STREAM_PER_THREAD) continue;
        if (c->cls == SS_API_EVENT_RECORD && c->event >= 0 && (m->events[c->event].flags & SS_EVENT_DISABLE_TIMING))
            held[s] = 1;   /* hb.c's EVENT_RECORD */
        else if (ss_class_submits_work(c->cls))
            held[s] = 0;
        ss_host_wait w = ss_call_host_wait(m, c);
        if (held[s] && (w == SS_WAIT_STREAM || w == SS_WAIT_STREAM_PRIOR || w == SS_WAIT_QUERY)) found = 1;
    }
    free(held);
    return found;
}

static void run(const ss_model *m, ss_findings *out)
{
    if (!m->nstreams || !m->nthreads) return;
    fence_state f = { m, ss_hb_new(m), NULL, NULL, NULL, out };
    if (held_record_waited(m)) f.held = ss_hb_feed_start(m, SS_HB_RECORD_HOLDS_STREAM, 0);
    f.sh = ss_xcalloc(m->nallocs ? m->nallocs : 1, sizeof(shadow));
    batch bt[2];
    memset(bt, 0, sizeof bt);
    for (int k = 0; k < 2; k++) {
        bt[k].m = m;
        bt[k].off = ss_xcalloc(BATCH, sizeof(uint32_t));
    }
    if (m->ncalls) batch_start(&bt[0], 0, batch_size(0, m->ncalls));
    for (uint32_t first = 0, cur = 0; first < m->ncalls; first += BATCH, cur ^= 1) {
        batch *b = &bt[cur];
        ss_beside_join(&b->job);
        if (first + b->n < m->ncalls) batch_start(&bt[cur ^ 1], first + b->n, batch_size(first + b->n, m->ncalls));
        for (uint32_t sl = 0; sl < SLICES; sl++) {
            const found_slice *v = &b->sl[sl];
            uint32_t lo = slice_start(b, sl), hi = slice_start(b, sl + 1);
            for (uint32_t j = lo; j < hi; j++) {
                uint32_t end = j + 1 < hi ? b->off[j + 1] : v->n;
                walk_call(&f, (int32_t)(first + j), end > b->off[j] ? v->v + b->off[j] : NULL, end - b->off[j]);
            }
        }
    }
    if (ss_timings_on())   /* a walk that waits is bound by what it waits for, not by its own work */
        fprintf(stderr, "syncsight: waits: missing-fence waited %.3f s for its accesses, %.3f s for the "
                "held replay\n", bt[0].job.waited + bt[1].job.waited, ss_hb_feed_waited(f.held));
    for (int k = 0; k < 2; k++) {
        ss_beside_join(&bt[k].job);
        free(bt[k].off);
        for (uint32_t s = 0; s < SLICES; s++) free(bt[k].sl[s].v);
    }
    for (uint32_t i = 0; i < m->nallocs; i++) free(f.sh[i].v);
    free(f.sh);
    ss_hb_free(f.hb);
    ss_hb_feed_free(f.held);
}

const ss_rule ss_rule_missing_fence = {
    "missing-fence", "unordered accesses to the same memory from different streams", run,
    SS_SAMPLED_SPAN,
    0,   /* asks_memory */
    0,   /* asks_replay */
    0,   /* removes_causes */
};
