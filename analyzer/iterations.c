/* The repeated iteration of a run (iterations.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iterations.h"
#include "capture_windows.h"
#include "util.h"

/* A window of one period matches the next one when this share of its keys
 * is the same. */
#define MATCH_RATE 0.8
/* Lags tried: the most frequent gaps between repeats of a key. */
#define MAX_CANDIDATES 16
/* Two lags whose matching windows differ by less than this share are as
 * good as each other: the shorter one is the iteration. */
#define TIE_SHARE 0.02
/* A leading iteration this much slower than the median one is warm-up. */
#define WARMUP_FACTOR 1.5

const char *ss_phase_name(ss_phase p) { return p == SS_PHASE_SETUP ? "setup" : "steady"; }

typedef struct cand { uint32_t lag; uint64_t weight; } cand;

static int cmp_cand_weight(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
    return x->lag < y->lag ? -1 : x->lag > y->lag;
}

static int cmp_cand_lag(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    return x->lag < y->lag ? -1 : x->lag > y->lag;
}

/* The stretch of keys that repeats with lag p: windows [i, i+p) that match
 * [i+p, i+2p), merged across breaks of up to 2p windows (an occasional extra
 * call misaligns about one period).  Returns the good windows of the best
 * stretch; *start and *covered its extent. */
static uint32_t stretch(const uint64_t *keys, uint32_t n, uint32_t p, uint32_t *pre, uint32_t *start,
                        uint32_t *covered)
{
    pre[0] = 0;
    for (uint32_t i = 0; i + p < n; i++) pre[i + 1] = pre[i] + (keys[i] == keys[i + p]);
    uint32_t best_good = 0, run_a = 0, run_b = 0, good = 0;
    int in_run = 0;
    uint32_t need = (uint32_t)(MATCH_RATE * p + 0.999);
    *start = 0; *covered = 0;
    for (uint32_t i = 0; i + 2 * p <= n; i++) {
        if (pre[i + p] - pre[i] < need) continue;
        if (in_run && i - run_b > 2 * p) {
            if (good > best_good) { best_good = good; *start = run_a; *covered = run_b + 2 * p - run_a; }
            in_run = 0;
        }
        if (!in_run) { in_run = 1; run_a = i; good = 0; }
        run_b = i;
        good++;
    }
    if (in_run && good > best_good) { best_good = good; *start = run_a; *covered = run_b + 2 * p - run_a; }
    return best_good;
}

int ss_find_period(const uint64_t *keys, const uint8_t *work, uint32_t n, uint32_t *period, uint32_t *start,
                   uint32_t *count)
{
    if (n < 2 * SS_MIN_ITERATIONS) return 0;
    uint32_t maxlag = n / SS_MIN_ITERATIONS;
    /* candidate lags: how often each gap separates two repeats of a key,
     * weighted by the calls such a period would span */
    ss_u64map last = { 0 }, hist = { 0 };
    for (uint32_t i = 0; i < n; i++) {
        int64_t *v = ss_u64map_find(&last, keys[i]);
        if (!v) { ss_u64map_put(&last, keys[i], i); continue; }
        uint32_t gap = i - (uint32_t)*v;
        *v = i;
        if (gap > maxlag) continue;
        int64_t *h = ss_u64map_find(&hist, gap);
        if (h) (*h)++; else ss_u64map_put(&hist, gap, 1);
    }
    cand *c = NULL;
    uint32_t nc = 0, cc = 0;
    for (uint32_t i = 0; i < hist.cap; i++)
        if (hist.used[i]) {
            cand x = { (uint32_t)hist.keys[i], (uint64_t)hist.vals[i] * hist.keys[i] };
            SS_PUSH(c, nc, cc, x);
        }
    ss_u64map_free(&last);
    ss_u64map_free(&hist);
    if (!nc) { free(c); return 0; }
    ss_qsort(c, nc, sizeof *c, cmp_cand_weight);
    if (nc > MAX_CANDIDATES) nc = MAX_CANDIDATES;
    ss_qsort(c, nc, sizeof *c, cmp_cand_lag);
    uint32_t *pre = ss_xcalloc(n + 1, sizeof(uint32_t));
    uint32_t best_good = 0;
    int found = 0;
    for (uint32_t k = 0; k < nc; k++) {
        uint32_t p = c[k].lag, a, covered;
        uint32_t good = stretch(keys, n, p, pre, &a, &covered);
        if (covered > n - a) covered = n - a;
        /* a window matches with a few keys off: the stretch begins at its
         * first key that repeats */
        while (covered > 0 && a + p < n && keys[a] != keys[a + p]) { a++; covered--; }
        if (covered / p < SS_MIN_ITERATIONS) continue;
        if (work) {
            uint32_t w = 0;
            for (uint32_t i = a; i < a + p && !w; i++) w = work[i];
            if (!w) continue;
        }
        /* shorter lags come first: a longer one must match clearly more */
        if (found && good <= best_good + (uint32_t)(TIE_SHARE * best_good)) continue;
        found = 1;
        best_good = good;
        *period = p; *start = a; *count = covered / p;
    }
    free(pre);
    free(c);
    return found;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Iteration starts (sorted, n of them) and the end of the last one: drop
 * the slow leading ones (warm-up) and fill in the steady window. */
static void settle(ss_iterations *it, const ss_model *m, uint64_t *starts, uint32_t n, uint64_t end)
{
    uint64_t *d = ss_xcalloc(n, sizeof(uint64_t)), *sorted = ss_xcalloc(n, sizeof(uint64_t));
    for (uint32_t k = 0; k < n; k++) d[k] = sorted[k] = (k + 1 < n ? starts[k + 1] : end) - starts[k];
    ss_qsort(sorted, n, sizeof(uint64_t), cmp_u64);
    uint64_t median = sorted[n / 2];
    uint32_t first = 0;
    while (n - first > SS_MIN_ITERATIONS && (double)d[first] > WARMUP_FACTOR * (double)median) first++;
    free(d); free(sorted);
    it->found = 1;
    it->count = n - first;
    it->t_start = starts[first];
    it->t_end = end;
    uint64_t t0 = m->t_first, t1 = m->t_last > m->t_first ? m->t_last : m->t_first;
    it->steady_ns = it->t_end > it->t_start ? it->t_end - it->t_start : 0;
    it->setup_ns = (it->t_start > t0 ? it->t_start - t0 : 0) + (t1 > it->t_end ? t1 - it->t_end : 0);
    /* GPU busy time, inside and outside the steady window (ops by start) */
    uint64_t cur_s = 0, cur_e = 0, total = 0, steady = 0;
    for (uint32_t i = 0; i <= m->nops; i++) {
        if (i < m->nops && m->ops[i].end <= m->ops[i].start) continue;
        if (i == m->nops || m->ops[i].start > cur_e) {
            if (cur_e > cur_s) {
                total += cur_e - cur_s;
                uint64_t lo = cur_s > it->t_start ? cur_s : it->t_start, hi = cur_e < it->t_end ? cur_e : it->t_end;
                if (hi > lo) steady += hi - lo;
            }
            if (i == m->nops) break;
            cur_s = m->ops[i].start; cur_e = m->ops[i].end;
        } else if (m->ops[i].end > cur_e) {
            cur_e = m->ops[i].end;
        }
    }
    it->steady_busy_ns = steady;
    it->setup_busy_ns = total - steady;
    it->setup_dominates = it->setup_busy_ns > it->steady_busy_ns;
}

/* A sampled trace (capture_windows.h): iterations are counted, and the
 * steady state's time measured, in the recorded spans only, so that a cost
 * per iteration divides the recorded part's cost by the recorded part's
 * iterations. */
static void sampled_adjust(ss_iterations *it, const ss_model *m, const uint64_t *starts, uint32_t n)
{
    const ss_capture *cap = ss_capture_of(m);
    uint32_t count = 0;
    for (uint32_t k = 0; k < n; k++)
        if (starts[k] >= it->t_start && starts[k] <= it->t_end && ss_capture_span_at(m, starts[k]) >= 0) count++;
    uint64_t t0 = m->t_first, t1 = m->t_last > m->t_first ? m->t_last : m->t_first, steady = 0, recorded = 0;
    for (uint32_t i = 0; i < cap->nspans; i++) {
        const ss_capture_span *sp = &cap->spans[i];
        uint64_t a = sp->t_on > t0 ? sp->t_on : t0, b = sp->t_off < t1 ? sp->t_off : t1;
        if (b <= a) continue;
        recorded += b - a;
        uint64_t lo = a > it->t_start ? a : it->t_start, hi = b < it->t_end ? b : it->t_end;
        if (hi > lo) steady += hi - lo;
    }
    it->count = count;
    it->steady_ns = steady;
    it->setup_ns = recorded - steady;
}

/* 1. a repeated NVTX range (not a library's own: "nccl...") that spans
 * most of the time between its repeats, as a step's range does: libraries
 * mark their own short operations with ranges too (CUB's
 * "cub::DeviceRadixSort" in every PyTorch embedding backward), and a range
 * that covers a sliver of each iteration is not the iteration. */
#define ITERATION_RANGE_COVER 0.2
typedef struct nvtx_name { uint32_t name_id, count; uint64_t total, first, last; } nvtx_name;

static int from_nvtx(ss_iterations *it, const ss_model *m)
{
    ss_u64map idx = { 0 };
    nvtx_name *names = NULL;
    uint32_t nn = 0, cn = 0;
    for (uint32_t i = 0; i < m->nnvtx; i++) {
        const ss_nvtx_rec *r = m->nvtx[i].rec;
        if (r->end <= r->start) continue;
        ss_string_ref s = ss_model_string(m, r->name_id);
        if (!s.s || ss_library_range_name(s)) continue;
        int64_t k = ss_u64map_get(&idx, r->name_id, -1);
        if (k < 0) {
            nvtx_name x = { r->name_id, 0, 0, r->start, r->end };
            SS_PUSH(names, nn, cn, x);
            k = nn - 1;
            ss_u64map_put(&idx, r->name_id, k);
        }
        names[k].count++;
        names[k].total += r->end - r->start;
        if (r->start < names[k].first) names[k].first = r->start;
        if (r->end > names[k].last) names[k].last = r->end;
    }
    ss_u64map_free(&idx);
    int32_t best = -1;
    for (uint32_t k = 0; k < nn; k++) {
        if (names[k].count < SS_MIN_ITERATIONS) continue;
        if ((double)names[k].total < ITERATION_RANGE_COVER * (double)(names[k].last - names[k].first)) continue;
        if (best < 0 || names[k].total > names[best].total) best = (int32_t)k;
    }
    if (best < 0) { free(names); return 0; }
    nvtx_name b = names[best];
    free(names);
    uint64_t *starts = ss_xcalloc(b.count, sizeof(uint64_t)), end = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nnvtx && n < b.count; i++) {
        const ss_nvtx_rec *r = m->nvtx[i].rec;
        if (r->name_id != b.name_id || r->end <= r->start) continue;
        starts[n++] = r->start;
        if (r->end > end) end = r->end;
    }
    ss_qsort(starts, n, sizeof(uint64_t), cmp_u64);
    ss_string_ref s = ss_model_string(m, b.name_id);
    snprintf(it->what, sizeof it->what, "NVTX range \"%.*s\"", (int)(s.len < 100 ? s.len : 100), s.s);
    it->from_nvtx = 1;
    settle(it, m, starts, n, end);
    if (ss_capture_sampled(m)) sampled_adjust(it, m, starts, n);   /* NVTX ranges are recorded while OFF too */
    free(starts);
    return 1;
}

/* A native stack by its frames, not its id: a shim may record one chain of
 * frames under more than one id (with and without the return-address slots
 * its verified cache keeps), and the calls of one place must match. */
static uint64_t stack_content(const ss_model *m, uint32_t id)
{
    const ss_stack_rec *s = ss_model_stack(m, id);
    if (!s) return id;
    const uint64_t *a = ss_rec_tail(&s->h, sizeof(*s));
    uint64_t h = mix(0, s->depth);
    for (uint32_t i = 0; i < s->depth; i++) h = mix(h, a[i]);
    return h;
}

/* 2. the repeating pattern of the program's calls on its busiest thread.
 * A collective library's own calls (inside NCCL's ranges: its communicator
 * set-up maps and clears buffers in a tight loop at init) are the library's
 * pattern, not the program's iteration: they are left out of the keys. */
static int from_calls(ss_iterations *it, const ss_model *m)
{
    /* per call, whether the library made it: only where the trace has its
     * ranges at all (asking each call's range costs a search) */
    int any_lib_range = 0;
    for (uint32_t i = 0; i < m->nnvtx && !any_lib_range; i++)
        any_lib_range = ss_library_range_name(ss_model_string(m, m->nvtx[i].rec->name_id));
    uint8_t *lib = any_lib_range ? ss_xcalloc(m->ncalls, 1) : NULL;
    const ss_thread *th = NULL;
    uint32_t th_own = 0;
    for (uint32_t t = 0; t < m->nthreads; t++) {
        uint32_t own = m->threads[t].ncalls;
        for (uint32_t k = 0; lib && k < m->threads[t].ncalls; k++) {
            uint32_t ci = m->threads[t].calls[k];
            lib[ci] = ss_model_call_library_range(m, &m->calls[ci]).s != NULL;
            own -= lib[ci];
        }
        if (!th || own > th_own) { th = &m->threads[t]; th_own = own; }
    }
    if (!th || th_own < 2 * SS_MIN_ITERATIONS) { free(lib); return 0; }
    /* the thread's calls, the library's left out */
    uint32_t ncalls = 0, *calls = ss_xcalloc(th_own, sizeof(uint32_t));
    for (uint32_t k = 0; k < th->ncalls; k++)
        if (!lib || !lib[th->calls[k]]) calls[ncalls++] = th->calls[k];
    free(lib);
    uint64_t *keys = ss_xcalloc(ncalls, sizeof(uint64_t));
    uint8_t *work = ss_xcalloc(ncalls, 1);
    int sampled = ss_capture_sampled(m);
    for (uint32_t k = 0; k < ncalls; k++) {
        const ss_call *c = &m->calls[calls[k]];
        keys[k] = mix(mix(mix(0, c->name_idx), stack_content(m, c->rec->stack_id)), c->rec->pystack_id);
        /* a sampled trace: the period is found within one recorded span
         * (the calls of different spans never match), never across an OFF
         * gap whose calls are missing */
        if (sampled) keys[k] = mix(keys[k], (uint64_t)(int64_t)ss_capture_call_span(m, calls[k]) + 2u);
        work[k] = c->first_op >= 0 || c->cls == SS_API_LAUNCH || c->cls == SS_API_COPY_SYNC ||
                  c->cls == SS_API_COPY_ASYNC || c->cls == SS_API_MEMSET_SYNC || c->cls == SS_API_MEMSET_ASYNC;
    }
    uint32_t p, a, n;
    int ok = ss_find_period(keys, work, ncalls, &p, &a, &n);
    if (!ok) { free(keys); free(work); free(calls); return 0; }
    uint32_t cap = n, total = n;
    uint64_t *starts = ss_xcalloc(n, sizeof(uint64_t));
    for (uint32_t k = 0; k < n; k++) starts[k] = m->calls[calls[a + k * p]].rec->t_enter;
    const ss_call *lastc = &m->calls[calls[a + n * p - 1]];
    uint64_t end = lastc->rec->t_exit > lastc->rec->t_enter ? lastc->rec->t_exit : lastc->rec->t_enter;
    if (sampled) {
        /* the later spans repeat the iteration too: its first call (by
         * key, counted once per period) starts one, and the steady state
         * runs to the last recorded one */
        const ss_call *fc = &m->calls[calls[a]];
        uint64_t key0 = mix(mix(mix(0, fc->name_idx), stack_content(m, fc->rec->stack_id)), fc->rec->pystack_id);
        uint32_t per = 0, seen = 0;
        for (uint32_t k = a; k < a + p; k++) per += keys[k] == keys[a];
        for (uint32_t k = a + n * p; k < ncalls; k++) {
            const ss_call *c = &m->calls[calls[k]];
            uint64_t kk = mix(mix(mix(0, c->name_idx), stack_content(m, c->rec->stack_id)), c->rec->pystack_id);
            if (kk != key0 || ss_capture_call_span(m, calls[k]) < 0 || seen++ % (per ? per : 1)) continue;
            SS_PUSH(starts, total, cap, c->rec->t_enter);
            uint32_t lastk = k + p - 1 < ncalls ? k + p - 1 : ncalls - 1;
            const ss_call *lc = &m->calls[calls[lastk]];
            if (lc->rec->t_exit > end && ss_capture_call_span(m, calls[lastk]) == ss_capture_call_span(m, calls[k]))
                end = lc->rec->t_exit;
            else if (c->rec->t_exit > end)
                end = c->rec->t_exit;
        }
    }
    free(keys);
    free(work);
    free(calls);
    snprintf(it->what, sizeof it->what, "a repeating pattern of %u call%s on thread %u", p, p == 1 ? "" : "s",
             th->tid);
    settle(it, m, starts, total, end);
    if (sampled) sampled_adjust(it, m, starts, total);
    free(starts);
    return 1;
}

static void iterations_free(struct ss_iterations *it) { free(it); }

const ss_iterations *ss_iterations_of(const ss_model *m)
{
    ss_model *mm = (ss_model *)m;   /* a cache, filled once: the model stays as loaded */
    if (!mm->iterations) {
        ss_iterations *it = ss_xcalloc(1, sizeof *it);
        if (!from_nvtx(it, m)) from_calls(it, m);
        mm->iterations = it;
        mm->iterations_free = iterations_free;
    }
    return mm->iterations;
}

ss_phase ss_phase_at(const ss_iterations *it, uint64_t t)
{
    if (!it->found) return SS_PHASE_STEADY;
    return t >= it->t_start && t <= it->t_end ? SS_PHASE_STEADY : SS_PHASE_SETUP;
}

int32_t ss_iteration_index(const ss_iterations *it, uint64_t t)
{
    if (!it->found || !it->count || t < it->t_start || t > it->t_end || it->t_end <= it->t_start) return -1;
    uint32_t k = (uint32_t)((double)(t - it->t_start) / (double)(it->t_end - it->t_start) * it->count);
    return (int32_t)(k < it->count ? k : it->count - 1);
}
