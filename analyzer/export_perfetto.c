/*
 * Chrome trace-event JSON ("JSON Array/Object Format") for ui.perfetto.dev
 * and chrome://tracing.
 *
 * Layout (per traced process; a job of several traces gives one timeline with
 * a process group per pid, on one time axis: export.h ss_job_time_shifts):
 *   process <pid> (the program)   one track per host thread: CUDA runtime calls
 *                                 and NVTX ranges (complete "X" events), an
 *                                 instant "i" on each call a finding blames,
 *                                 and tracks "syncsight findings [n]" holding
 *                                 every finding as a slice with its message,
 *                                 cost and fix (args: the members of the JSON
 *                                 report, finding_json.c; lanes so that
 *                                 overlapping findings do not mis-nest);
 *                                 a sampled trace: above them, a track
 *                                 "syncsight recording" with a slice per
 *                                 recorded span and per stretch not recorded;
 *   process "GPU <d> (pid <pid>)" one track per stream, named with its kind
 *                                 (legacy default / blocking / non-blocking /
 *                                 per-thread default) and device: kernels,
 *                                 copies, memsets.
 *   flows                         "s"/"f" pairs (one id per pair) from each
 *                                 cudaEventRecord to the cudaStreamWaitEvent /
 *                                 cudaEventSynchronize / completed
 *                                 cudaEventQuery it satisfied.
 *
 * Events are written per track in time order (tests check that each track's
 * timestamps never decrease), one event per line, straight to the FILE: the
 * output is never built in memory.  Times are microseconds since the earliest
 * of the traces' header starts and first records.
 */
#include <string.h>

#include "capture_windows.h"
#include "export.h"
#include "json.h"
#include "rule.h"
#include "util.h"

/* Pseudo-process ids for the GPUs: far above Linux's pid_max (4M); the
 * traces of a job each get their own range of GPU_PIDS_PER_TRACE. */
#define GPU_PID_BASE 1000000000u
#define GPU_PIDS_PER_TRACE 1000u
/* Pseudo thread ids of the findings lanes inside the program's process. */
#define FINDINGS_TID_BASE 0x7fff0000u
#define FINDINGS_MAX_LANES 32u
/* ... and of a sampled trace's recording track, above the findings. */
#define RECORDING_TID (FINDINGS_TID_BASE - 1u)

typedef struct pf {
    FILE *out;
    const ss_model *m;
    const ss_findings *f;
    int64_t base;           /* trace-clock ns of ts 0, on the job's common axis */
    int64_t shift;          /* this trace's clock to the common axis */
    uint32_t pid;
    uint32_t gpu_pid_base;  /* this trace's GPU pseudo-processes */
    uint64_t flow_id0;      /* flow ids of this trace start after it */
    int64_t sort_base;      /* process_sort_index of this trace's process */
    int job;                /* one of several traces */
    int first;              /* no event written yet */
    ss_json j;
    /* flows: pairs by record call (for "s") and by wait call (for "f") */
    ss_flow_pair *pairs; uint32_t npairs;
    uint32_t *by_record;    /* pair indexes sorted by record_call */
    ss_u64map record_first, wait_first;   /* call -> first index in by_record / pairs */
    /* findings blamed on calls: call -> first index into blamed[] (sorted by call) */
    uint64_t *blamed;       /* (call << 32) | finding index */
    uint32_t nblamed;
    ss_u64map blamed_first;
} pf;

static double ts_us(const pf *p, uint64_t t)
{
    return (double)((int64_t)t + p->shift - p->base) / 1e3;
}

/* Start an event object on its own line. */
static ss_json *ev(pf *p, const char *ph, uint32_t pid, uint32_t tid)
{
    fputs(p->first ? "\n" : ",\n", p->out);
    p->first = 0;
    ss_json_init(&p->j, p->out, 0);
    ss_json_obj_begin(&p->j);
    ss_json_kstr(&p->j, "ph", ph);
    ss_json_kuint(&p->j, "pid", pid);
    ss_json_kuint(&p->j, "tid", tid);
    return &p->j;
}
static void ev_end(pf *p) { ss_json_obj_end(&p->j); }

static void meta_name(pf *p, const char *what, uint32_t pid, uint32_t tid, const char *name, size_t len)
{
    ss_json *j = ev(p, "M", pid, tid);
    ss_json_kstr(j, "name", what);
    ss_json_key(j, "args"); ss_json_obj_begin(j);
    ss_json_key(j, "name"); ss_json_strn(j, name, len);
    ss_json_obj_end(j);
    ev_end(p);
}

static void meta_sort(pf *p, const char *what, uint32_t pid, uint32_t tid, int64_t index)
{
    ss_json *j = ev(p, "M", pid, tid);
    ss_json_kstr(j, "name", what);
    ss_json_key(j, "args"); ss_json_obj_begin(j);
    ss_json_kint(j, "sort_index", index);
    ss_json_obj_end(j);
    ev_end(p);
}

static uint32_t gpu_pid(const pf *p, int32_t device)
{
    uint32_t d = device < 0 || device >= (int32_t)GPU_PIDS_PER_TRACE - 1 ? GPU_PIDS_PER_TRACE - 1 : (uint32_t)device;
    return p->gpu_pid_base + d;
}

static void stream_text(const ss_model *m, int32_t s, char *buf, size_t len)
{
    ss_stream_describe(m, s, buf, len);
}

static void x_times(pf *p, ss_json *j, uint64_t t0, uint64_t t1)
{
    ss_json_kdouble(j, "ts", ts_us(p, t0));
    ss_json_kdouble(j, "dur", t1 > t0 ? (double)(t1 - t0) / 1e3 : 0.0);
}

/* ---- sampled recording --------------------------------------------------- */

/* A sampled trace (capture_windows.h): one slice per recorded span (the
 * head, each window) and per unrecorded stretch between them, so that empty
 * tracks there are not read as an idle GPU or host.  The stretches are the
 * analyzer's own (ss_capture_stretches); a trace recorded in full has no
 * such track. */
static void write_recording_track(pf *p)
{
    const ss_model *m = p->m;
    if (!ss_capture_sampled(m)) return;
    const ss_capture *c = ss_capture_of(m);
    ss_capture_stretch *st;
    uint32_t n = ss_capture_stretches(m, &st);
    static const char track[] = "syncsight recording";
    meta_name(p, "thread_name", p->pid, RECORDING_TID, track, sizeof track - 1);
    meta_sort(p, "thread_sort_index", p->pid, RECORDING_TID, -2000);
    for (uint32_t i = 0; i < n; i++) {
        char name[64];
        const ss_capture_span *sp = st[i].span >= 0 ? &c->spans[st[i].span] : NULL;
        if (!sp) snprintf(name, sizeof name, "not recorded (sampled)");
        else if (sp->window == 0) snprintf(name, sizeof name, "head");
        else snprintf(name, sizeof name, "window %u", sp->window);
        ss_json *j = ev(p, "X", p->pid, RECORDING_TID);
        ss_json_kstr(j, "name", name);
        ss_json_kstr(j, "cat", "syncsight.capture");
        x_times(p, j, st[i].t0, st[i].t1);
        ss_json_kstr(j, "cname", sp ? "good" : "grey");
        ss_json_key(j, "args"); ss_json_obj_begin(j);
        if (sp) {
            ss_json_kuint(j, "window", sp->window);
            ss_json_kuint(j, "hot_calls", sp->hot_off > sp->hot_on ? sp->hot_off - sp->hot_on : 0);
            if (sp->reason_on == SS_CAPTURE_FORCED_ON) ss_json_kstr(j, "opened_by", "a stream capture (forced on)");
        } else {
            const ss_capture_span *prev = i > 0 && st[i - 1].span >= 0 ? &c->spans[st[i - 1].span] : NULL;
            const ss_capture_span *next = i + 1 < n && st[i + 1].span >= 0 ? &c->spans[st[i + 1].span] : NULL;
            /* hot calls made unseen: known between two switches, unless some
             * reach syncsight only through CUPTI callbacks (off while OFF) */
            if (prev && next && !c->count_partial && next->hot_on >= prev->hot_off)
                ss_json_kuint(j, "hot_calls_not_recorded", next->hot_on - prev->hot_off);
            ss_json_kstr(j, "note", "no CUDA call, GPU operation or stack of the hot path was recorded here: "
                                    "empty tracks do not mean an idle GPU (docs/sampling.md)");
        }
        ss_json_obj_end(j);
        ev_end(p);
    }
    free(st);
}

/* ---- findings ------------------------------------------------------------ */

static void finding_args(ss_json *j, const ss_finding *x)
{
    ss_json_key(j, "args"); ss_json_obj_begin(j);
    ss_finding_json_members(j, x, SS_FM_SUMMARY);
    ss_json_obj_end(j);
}

static void finding_name(const ss_finding *x, char *buf, size_t len)
{
    snprintf(buf, len, "%s: %s (%.3f ms%s)", ss_severity_name(x->severity), x->rule, x->cost_ms,
             x->count > 1 ? ", several occurrences" : "");
}

typedef struct fspan { uint64_t t0, t1; uint32_t idx; } fspan;
static int cmp_fspan(const void *a, const void *b)
{
    const fspan *x = a, *y = b;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void write_findings_track(pf *p)
{
    const ss_findings *f = p->f;
    fspan *v = ss_xcalloc(f->n, sizeof *v);
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        uint32_t tid; int32_t st;
        if (ss_finding_span(&f->v[i], &v[n].t0, &v[n].t1, &tid, &st)) { v[n].idx = i; n++; }
        else { v[n].t0 = v[n].t1 = p->m->t_first; v[n].idx = i; n++; }   /* still listed, at the start */
    }
    ss_qsort(v, n, sizeof *v, cmp_fspan);
    uint64_t lane_end[FINDINGS_MAX_LANES];
    uint32_t nlanes = 0;
    for (uint32_t k = 0; k < n; k++) {
        /* first lane free at t0; when all are taken, the one freed earliest */
        uint32_t lane = nlanes, best = 0;
        for (uint32_t l = 0; l < nlanes; l++) {
            if (lane_end[l] <= v[k].t0) { lane = l; break; }
            if (lane_end[l] < lane_end[best]) best = l;
        }
        if (lane == nlanes) {
            if (nlanes < FINDINGS_MAX_LANES) {
                nlanes++;
                char name[64];
                snprintf(name, sizeof name, lane ? "syncsight findings [%u]" : "syncsight findings", lane);
                meta_name(p, "thread_name", p->pid, FINDINGS_TID_BASE + lane, name, strlen(name));
                meta_sort(p, "thread_sort_index", p->pid, FINDINGS_TID_BASE + lane, -1000 + (int64_t)lane);
            } else {
                lane = best;
            }
        }
        /* zero-length spans get 1 us so that the slice can be seen and clicked */
        uint64_t t1 = v[k].t1 > v[k].t0 ? v[k].t1 : v[k].t0 + 1000;
        lane_end[lane] = t1;
        const ss_finding *x = &f->v[v[k].idx];
        char name[256];
        finding_name(x, name, sizeof name);
        ss_json *j = ev(p, "X", p->pid, FINDINGS_TID_BASE + lane);
        ss_json_kstr(j, "name", name);
        ss_json_kstr(j, "cat", "syncsight.finding");
        x_times(p, j, v[k].t0, t1);
        ss_json_kstr(j, "cname", x->severity == SS_SEV_ERROR ? "terrible" : x->severity == SS_SEV_WARNING ? "bad" : "yellow");
        finding_args(j, x);
        ev_end(p);
    }
    free(v);
}

/* ---- host threads -------------------------------------------------------- */

/* qsort has no context argument: the pairs being sorted (one export at a time) */
static const ss_flow_pair *g_pairs;
static int cmp_pair_record(const void *a, const void *b)
{
    const ss_flow_pair *x = &g_pairs[*(const uint32_t *)a], *y = &g_pairs[*(const uint32_t *)b];
    if (x->record_call != y->record_call) return x->record_call < y->record_call ? -1 : 1;
    return x->wait_call < y->wait_call ? -1 : x->wait_call > y->wait_call;
}
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void write_call(pf *p, int32_t ci)
{
    const ss_model *m = p->m;
    const ss_call *c = &m->calls[ci];
    const ss_api_rec *r = c->rec;
    ss_json *j = ev(p, "X", p->pid, r->tid);
    ss_json_kstr(j, "name", ss_model_call_name(m, c));
    ss_json_kstr(j, "cat", "cuda_api");
    x_times(p, j, r->t_enter, r->t_exit);
    ss_json_key(j, "args"); ss_json_obj_begin(j);
    ss_json_kint(j, "ret", r->ret);
    ss_json_kuint(j, "corr", r->corr);
    if (c->stream >= 0) {
        char sd[96];
        stream_text(m, c->stream, sd, sizeof sd);
        ss_json_kstr(j, "stream", sd);
    }
    if (r->event) { char b[32]; snprintf(b, sizeof b, "0x%llx", (unsigned long long)r->event); ss_json_kstr(j, "event", b); }
    if (r->bytes) ss_json_kuint(j, "bytes", r->bytes);
    if (c->cls == SS_API_LAUNCH && c->first_op >= 0) {
        ss_string_ref k = ss_model_op_name(m, &m->ops[c->first_op]);
        ss_json_key(j, "kernel"); ss_json_strn(j, k.s, k.len);
    }
    ss_json_obj_end(j);
    ev_end(p);

    /* an instant on the blamed call, for each finding that blames it */
    int64_t bi = ss_u64map_get(&p->blamed_first, (uint64_t)ci, -1);
    for (uint32_t k = bi < 0 ? p->nblamed : (uint32_t)bi; k < p->nblamed && (int32_t)(p->blamed[k] >> 32) == ci; k++) {
        const ss_finding *x = &p->f->v[(uint32_t)p->blamed[k]];
        char name[256];
        finding_name(x, name, sizeof name);
        j = ev(p, "i", p->pid, r->tid);
        ss_json_kstr(j, "name", name);
        ss_json_kstr(j, "cat", "syncsight.finding");
        ss_json_kstr(j, "s", "t");
        ss_json_kdouble(j, "ts", ts_us(p, r->t_enter));
        finding_args(j, x);
        ev_end(p);
    }

    /* flow ends bind to this call's slice: put them inside it */
    uint64_t mid = r->t_enter + (r->t_exit > r->t_enter ? (r->t_exit - r->t_enter) / 2 : 0);
    int64_t fi = ss_u64map_get(&p->wait_first, (uint64_t)ci, -1);
    for (uint32_t k = fi < 0 ? p->npairs : (uint32_t)fi; k < p->npairs && p->pairs[k].wait_call == ci; k++) {
        j = ev(p, "f", p->pid, r->tid);
        ss_json_kstr(j, "name", "event record -> wait");
        ss_json_kstr(j, "cat", "syncsight.event");
        ss_json_kuint(j, "id", p->flow_id0 + k + 1);
        ss_json_kstr(j, "bp", "e");
        ss_json_kdouble(j, "ts", ts_us(p, mid));
        ev_end(p);
    }
    int64_t si = ss_u64map_get(&p->record_first, (uint64_t)ci, -1);
    for (uint32_t k = si < 0 ? p->npairs : (uint32_t)si; k < p->npairs && p->pairs[p->by_record[k]].record_call == ci; k++) {
        j = ev(p, "s", p->pid, r->tid);
        ss_json_kstr(j, "name", "event record -> wait");
        ss_json_kstr(j, "cat", "syncsight.event");
        ss_json_kuint(j, "id", p->flow_id0 + p->by_record[k] + 1);
        ss_json_kdouble(j, "ts", ts_us(p, mid));
        ev_end(p);
    }
}

static void write_nvtx(pf *p, const ss_nvtx_rec *r)
{
    ss_string_ref s = ss_model_string(p->m, r->name_id);
    ss_json *j;
    if (r->h.flags & SS_NVTX_F_MARK) {
        j = ev(p, "i", p->pid, r->tid);
        ss_json_kstr(j, "s", "t");
        ss_json_kdouble(j, "ts", ts_us(p, r->start));
    } else {
        j = ev(p, "X", p->pid, r->tid);
        x_times(p, j, r->start, r->end);
    }
    ss_json_key(j, "name"); ss_json_strn(j, s.s ? s.s : "(unnamed range)", s.s ? s.len : 15);
    ss_json_kstr(j, "cat", "nvtx");
    ss_json_key(j, "args"); ss_json_obj_begin(j);
    ss_string_ref d = ss_model_string(p->m, r->domain_id);
    ss_json_key(j, "domain"); ss_json_strn(j, d.s ? d.s : "default", d.s ? d.len : 7);
    if (r->h.flags & SS_NVTX_F_UNCLOSED) ss_json_kstr(j, "note", "still open when the program ended");
    ss_json_obj_end(j);
    ev_end(p);
}

static void write_threads(pf *p)
{
    const ss_model *m = p->m;
    uint32_t nv = 0;   /* cursor into m->nvtx, which is sorted by (tid, start) */
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const ss_thread *th = &m->threads[t];
        char name[160];
        int n = snprintf(name, sizeof name, "thread %u", th->tid);
        if (th->name && n > 0 && (size_t)n < sizeof name)
            snprintf(name + n, sizeof name - (size_t)n, " (%.*s)", (int)(th->name_len > 100 ? 100 : th->name_len), th->name);
        meta_name(p, "thread_name", p->pid, th->tid, name, strlen(name));
        meta_sort(p, "thread_sort_index", p->pid, th->tid, (int64_t)t);
        while (nv < m->nnvtx && m->nvtx[nv].rec->tid < th->tid) nv++;
        uint32_t c = 0;
        /* merge calls and NVTX ranges by start; at equal starts the NVTX range
         * (the enclosing one) first */
        while (c < th->ncalls || (nv < m->nnvtx && m->nvtx[nv].rec->tid == th->tid)) {
            int take_nvtx = 0;
            if (nv < m->nnvtx && m->nvtx[nv].rec->tid == th->tid)
                take_nvtx = c >= th->ncalls || m->nvtx[nv].rec->start <= m->calls[th->calls[c]].rec->t_enter;
            if (take_nvtx) write_nvtx(p, m->nvtx[nv++].rec);
            else write_call(p, th->calls[c++]);
        }
    }
    /* NVTX ranges of threads that made no CUDA call */
    for (uint32_t i = 0; i < m->nnvtx; i++) {
        const ss_nvtx_rec *r = m->nvtx[i].rec;
        if (ss_model_thread(m, r->tid)) continue;
        if (i == 0 || m->nvtx[i - 1].rec->tid != r->tid) {
            char name[64];
            snprintf(name, sizeof name, "thread %u", r->tid);
            meta_name(p, "thread_name", p->pid, r->tid, name, strlen(name));
        }
        write_nvtx(p, r);
    }
}

/* ---- GPU streams --------------------------------------------------------- */

static void write_streams(pf *p)
{
    const ss_model *m = p->m;
    /* which devices have ops: name their pseudo-processes */
    for (uint32_t d = 0; d < m->ndevices; d++) {
        char name[64];
        snprintf(name, sizeof name, "GPU %d (pid %u)", m->devices[d].device, p->pid);
        meta_name(p, "process_name", gpu_pid(p, m->devices[d].device), 0, name, strlen(name));
        meta_sort(p, "process_sort_index", gpu_pid(p, m->devices[d].device), 0, p->sort_base + 1 + (int64_t)d);
    }
    for (uint32_t s = 0; s < m->nstreams; s++) {
        const ss_stream *st = &m->streams[s];
        if (!st->nops) continue;
        char sd[96], name[160];
        stream_text(m, (int32_t)s, sd, sizeof sd);
        snprintf(name, sizeof name, "%s, device %d, CUPTI id %u", sd, st->device, st->stream_id);
        meta_name(p, "thread_name", gpu_pid(p, st->device), s + 1, name, strlen(name));
        meta_sort(p, "thread_sort_index", gpu_pid(p, st->device), s + 1, st->kind == SS_STREAM_LEGACY_NULL ? -1 : (int64_t)s);
    }
    /* ops are sorted by start: every stream's track comes out in order */
    for (uint32_t i = 0; i < m->nops; i++) {
        const ss_gpu_op *op = &m->ops[i];
        int32_t dev = op->stream >= 0 ? m->streams[op->stream].device : ss_op_device(op);
        if (op->stream < 0) continue;   /* the model gives every op a stream; be safe */
        ss_json *j = ev(p, "X", gpu_pid(p, dev), (uint32_t)op->stream + 1);
        ss_string_ref nm = ss_model_op_name(m, op);
        ss_json_key(j, "name"); ss_json_strn(j, nm.s, nm.len);
        ss_json_kstr(j, "cat", op->kind == SS_OP_KERNEL ? "kernel" : op->kind == SS_OP_MEMCPY ? "memcpy" : "memset");
        x_times(p, j, op->start, op->end);
        ss_json_key(j, "args"); ss_json_obj_begin(j);
        ss_json_kuint(j, "corr", op->rec->corr);
        ss_json_kuint(j, "device", op->rec->device);
        if (op->call >= 0) ss_json_kdouble(j, "queued_us", op->start > op->submit ? (double)(op->start - op->submit) / 1e3 : 0);
        if (op->kind == SS_OP_KERNEL) {
            const ss_kernel_rec *k = (const ss_kernel_rec *)op->rec;
            char b[96];
            snprintf(b, sizeof b, "(%u,%u,%u) x (%u,%u,%u)", k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2]);
            ss_json_kstr(j, "grid x block", b);
        } else if (op->kind == SS_OP_MEMCPY) {
            const ss_memcpy_rec *c = (const ss_memcpy_rec *)op->rec;
            static const char *const mk[] = { "unknown", "pageable", "pinned", "device", "array", "managed" };
            ss_json_kuint(j, "bytes", c->bytes);
            ss_json_kstr(j, "src", c->src_kind < 6 ? mk[c->src_kind] : "unknown");
            ss_json_kstr(j, "dst", c->dst_kind < 6 ? mk[c->dst_kind] : "unknown");
            ss_json_key(j, "async"); ss_json_bool(j, c->async);
        } else {
            ss_json_kuint(j, "bytes", ((const ss_memset_rec *)op->rec)->bytes);
        }
        ss_json_obj_end(j);
        ev_end(p);
    }
}

/* One trace's process group (and its GPUs') into the open traceEvents array. */
static void write_process(pf *p, ss_process_result *res)
{
    /* flows, indexed both ways */
    p->pairs = ss_event_flows(p->m, &p->npairs);
    p->by_record = ss_xcalloc(p->npairs, sizeof(uint32_t));
    for (uint32_t i = 0; i < p->npairs; i++) p->by_record[i] = i;
    g_pairs = p->pairs;
    ss_qsort(p->by_record, p->npairs, sizeof(uint32_t), cmp_pair_record);
    for (uint32_t i = p->npairs; i-- > 0;) {
        ss_u64map_put(&p->record_first, (uint64_t)p->pairs[p->by_record[i]].record_call, i);
        ss_u64map_put(&p->wait_first, (uint64_t)p->pairs[i].wait_call, i);
    }
    /* blamed calls: the first call each finding references */
    p->blamed = ss_xcalloc(p->f->n, sizeof(uint64_t));
    for (uint32_t i = 0; i < p->f->n; i++) {
        const ss_finding *x = &p->f->v[i];
        for (uint32_t r = 0; r < x->nrefs; r++)
            if (x->refs[r].call >= 0) { p->blamed[p->nblamed++] = ((uint64_t)(uint32_t)x->refs[r].call << 32) | i; break; }
    }
    ss_qsort(p->blamed, p->nblamed, sizeof(uint64_t), cmp_u64);
    for (uint32_t i = p->nblamed; i-- > 0;) ss_u64map_put(&p->blamed_first, p->blamed[i] >> 32, i);

    char pname[300];
    ss_string_ref exe = ss_model_meta(p->m, "exe");
    const char *base = exe.s;
    uint32_t blen = exe.len;
    for (uint32_t i = 0; exe.s && i < exe.len; i++)
        if (exe.s[i] == '/') { base = exe.s + i + 1; blen = exe.len - i - 1; }
    char host[65];
    memcpy(host, p->m->hdr.hostname, 64);
    host[64] = 0;
    int n = snprintf(pname, sizeof pname, "%.*s (pid %u)", base ? (int)(blen > 120 ? 120 : blen) : 7,
                     base ? base : "program", p->m->hdr.pid);
    (void)res;
    if (p->job && host[0] && n > 0 && (size_t)n < sizeof pname)   /* a job: say where each ran */
        snprintf(pname + n, sizeof pname - (size_t)n, " on %.64s", host);
    meta_name(p, "process_name", p->pid, 0, pname, strlen(pname));
    meta_sort(p, "process_sort_index", p->pid, 0, p->sort_base);

    write_recording_track(p);
    write_findings_track(p);
    write_threads(p);
    write_streams(p);

    free(p->pairs); free(p->by_record); free(p->blamed);
    ss_u64map_free(&p->record_first); ss_u64map_free(&p->wait_first); ss_u64map_free(&p->blamed_first);
}

int ss_export_perfetto_job(FILE *out, ss_process_result *procs, uint32_t n)
{
    int64_t *shift = ss_xcalloc(n ? n : 1, sizeof(int64_t));
    int64_t base = ss_job_time_shifts(procs, n, shift);   /* ts 0 of the job */

    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":", out);
    ss_json j;
    ss_json_init(&j, out, 0);
    ss_json_obj_begin(&j);
    ss_json_kstr(&j, "producer", "syncsight " SS_VERSION);
    uint32_t nfindings = 0, nflows = 0;
    for (uint32_t i = 0; i < n; i++) {
        nfindings += procs[i].findings.n;
        uint32_t np = 0;
        free(ss_event_flows(procs[i].model, &np));
        nflows += np;
    }
    if (n == 1) {
        ss_json_kstr(&j, "trace", procs[0].path);
        ss_json_kuint(&j, "pid", procs[0].model->hdr.pid);
    } else {
        ss_json_key(&j, "traces"); ss_json_arr_begin(&j);
        for (uint32_t i = 0; i < n; i++) {
            ss_json_obj_begin(&j);
            ss_json_kstr(&j, "trace", procs[i].path);
            ss_json_kuint(&j, "pid", procs[i].model->hdr.pid);
            ss_json_kint(&j, "clock_shift_ns", shift[i]);
            ss_json_obj_end(&j);
        }
        ss_json_arr_end(&j);
    }
    ss_json_kint(&j, "ts_zero_trace_clock_ns", base);
    ss_json_kuint(&j, "findings", nfindings);
    ss_json_kuint(&j, "event_flows", nflows);
    ss_json_obj_end(&j);
    fputs(",\"traceEvents\":[", out);

    int first = 1;
    uint64_t flow_id0 = 0;
    for (uint32_t i = 0; i < n; i++) {
        pf p;
        memset(&p, 0, sizeof p);
        p.out = out;
        p.m = procs[i].model;
        p.f = &procs[i].findings;
        p.pid = p.m->hdr.pid ? p.m->hdr.pid : 1 + i;
        /* two traces with one pid (two hosts): keep their groups apart */
        for (uint32_t k = 0; k < i; k++)
            if ((procs[k].model->hdr.pid ? procs[k].model->hdr.pid : 1 + k) == p.pid) p.pid = GPU_PID_BASE / 2 + i;
        p.gpu_pid_base = GPU_PID_BASE + i * GPU_PIDS_PER_TRACE;
        p.sort_base = n > 1 ? (int64_t)i * 100 : 0;
        p.job = n > 1;
        p.base = base;
        p.shift = shift[i];
        p.flow_id0 = flow_id0;
        p.first = first;
        write_process(&p, &procs[i]);
        first = p.first;
        flow_id0 += p.npairs;
    }
    fputs("\n]}\n", out);
    free(shift);
    return 0;
}

int ss_export_perfetto(FILE *out, ss_process_result *res)
{
    return ss_export_perfetto_job(out, res, 1);
}
