/*
 * One self-contained HTML page: the timeline of a process, or of every
 * process of a job (host threads, their NVTX ranges and GPU streams on one
 * time axis, a group of rows per process and a selector to show one), drawn
 * on a <canvas> by inline JavaScript, with every finding highlighted where it
 * happened and listed beside it with its cost and fix.  Wheel zooms, drag
 * pans, "reset" returns to the default view (from the first GPU operation,
 * not the program's start-up), "whole run" shows everything, clicking a
 * finding zooms in to its time span.  A label is drawn inside an event only
 * where it fits (else a shorter form or an ellipsis, never squeezed); a
 * legend says what the colours mean.  No network access: no external script,
 * style sheet or font.  URL fragments select: #pid=N one process, #finding=K
 * the K-th listed finding (links, and the tests in headless Chromium).
 *
 * The data is embedded as JSON in <script type="application/json">.  Program
 * strings go through the JSON writer (json.h: valid JSON whatever the bytes) and then
 * through a filter that writes '<', '>' and '&' as \u003c, \u003e, \u0026, so
 * that no kernel name or NVTX text can close the script element ("</script>")
 * or open a comment; JSON.parse gives the original text back.  The page puts
 * strings into the DOM with textContent only, never innerHTML.
 *
 * Data layout (compact, one array per track):
 *   {t0, t1, view: [v0, v1], procs: [P...]}        job-wide extent and default view
 *   P = {trace, pid, host, exe, note, t0, t1, first_op, view, [gaps,] tracks, ev, names, findings}
 *   gaps      = [[start_ms, dur_ms]...] a sampled trace's unrecorded stretches (only then)
 *   tracks[i] = {name, kind: "api"|"nvtx"|"stream"}
 *   ev[i]     = [start_ms, dur_ms, name_index, class, start_ms, ...] sorted by start
 *   names     = interned labels (API names, kernel names, NVTX text)
 *   findings  = [{rule, severity, cost_ms, cost_basis, message, fix, count, site (the members of
 *                the JSON report, finding_json.c), t, d, tracks}]
 * Times are ms from the start of the job's earliest trace (several hosts:
 * aligned through each trace's wall-clock start, render.h ss_job_time_shifts).
 *
 * Big traces: the page draws at most about two rectangles per pixel column
 * per track and frame: runs of events narrower than a pixel are merged into
 * one bar (prefix maximum of end times, binary search to the next pixel).
 */
#define _GNU_SOURCE
#include <string.h>

#include "capture_windows.h"
#include "escape.h"
#include "export.h"
#include "json.h"
#include "rule.h"
#include "util.h"

/* ---- '<' '>' '&' -> \u00XX filter over a FILE ---------------------------- */

static ssize_t script_safe_write(void *cookie, const char *buf, size_t size)
{
    FILE *out = cookie;
    size_t start = 0;
    for (size_t i = 0; i < size; i++) {
        const char *rep = buf[i] == '<' ? "\\u003c" : buf[i] == '>' ? "\\u003e" : buf[i] == '&' ? "\\u0026" : NULL;
        if (!rep) continue;
        if (i > start && fwrite(buf + start, 1, i - start, out) != i - start) return -1;
        if (fputs(rep, out) == EOF) return -1;
        start = i + 1;
    }
    if (size > start && fwrite(buf + start, 1, size - start, out) != size - start) return -1;
    return (ssize_t)size;
}

/* ---- interned labels ---------------------------------------------------- */

typedef struct names {
    ss_u64map index;            /* key -> position in v */
    ss_string_ref *v;
    uint32_t n, cap;
} names;

static uint32_t intern(names *nm, uint64_t key, const char *s, uint32_t len)
{
    int64_t i = ss_u64map_get(&nm->index, key, -1);
    if (i >= 0) return (uint32_t)i;
    ss_string_ref r = { s, len };
    SS_PUSH(nm->v, nm->n, nm->cap, r);
    ss_u64map_put(&nm->index, key, nm->n - 1);
    return nm->n - 1;
}

enum { KEY_API = 1, KEY_STRING = 2, KEY_STATIC = 3 };
#define NAME_KEY(kind, id) (((uint64_t)(kind) << 32) | (uint32_t)(id))

/* event classes: colors in the page */
enum { C_API = 0, C_SYNC = 1, C_KERNEL = 2, C_MEMCPY = 3, C_MEMSET = 4, C_NVTX = 5 };

static int call_class(const ss_call *c)
{
    switch (c->cls) {
    case SS_API_DEVICE_SYNC: case SS_API_STREAM_SYNC: case SS_API_EVENT_SYNC:
    case SS_API_COPY_SYNC: case SS_API_MEMSET_SYNC: case SS_API_FREE:
        return C_SYNC;
    default:
        return C_API;
    }
}

typedef struct hx {
    FILE *js;                   /* the filtered stream */
    ss_json j;
    const ss_model *m;
    int64_t base;               /* ns on the job's axis of time 0 */
    int64_t shift;              /* this trace's clock to the job's axis */
    names nm;
} hx;

static double rel_ms(const hx *h, uint64_t t) { return (double)((int64_t)t + h->shift - h->base) / 1e6; }

static void event(hx *h, uint64_t t0, uint64_t t1, uint32_t name, int cls)
{
    ss_json_double(&h->j, rel_ms(h, t0));
    ss_json_double(&h->j, t1 > t0 ? (double)(t1 - t0) / 1e6 : 0.0);
    ss_json_uint(&h->j, name);
    ss_json_int(&h->j, cls);
}

/* Track numbering, decided before writing: per thread an API track and (when
 * it has NVTX ranges) an NVTX track, then one per stream with ops. */
typedef struct layout {
    int32_t *thread_api, *thread_nvtx;   /* per m->threads index, -1 none */
    int32_t *stream_track;               /* per m->streams index, -1 none */
    uint32_t ntracks;
} layout;

static int thread_has_nvtx(const ss_model *m, uint32_t tid)
{
    uint32_t lo = 0, hi = m->nnvtx;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (m->nvtx[mid].rec->tid < tid) lo = mid + 1; else hi = mid;
    }
    return lo < m->nnvtx && m->nvtx[lo].rec->tid == tid;
}

static void make_layout(const ss_model *m, layout *L)
{
    L->thread_api = ss_xcalloc(m->nthreads, sizeof(int32_t));
    L->thread_nvtx = ss_xcalloc(m->nthreads, sizeof(int32_t));
    L->stream_track = ss_xcalloc(m->nstreams, sizeof(int32_t));
    L->ntracks = 0;
    for (uint32_t t = 0; t < m->nthreads; t++) {
        L->thread_api[t] = m->threads[t].ncalls ? (int32_t)L->ntracks++ : -1;
        L->thread_nvtx[t] = thread_has_nvtx(m, m->threads[t].tid) ? (int32_t)L->ntracks++ : -1;
    }
    for (uint32_t s = 0; s < m->nstreams; s++)
        L->stream_track[s] = m->streams[s].nops ? (int32_t)L->ntracks++ : -1;
}

static int32_t thread_index(const ss_model *m, uint32_t tid)
{
    const ss_thread *th = ss_model_thread(m, tid);
    return th ? (int32_t)(th - m->threads) : -1;
}

/* The default view of one process: from its first GPU operation to its
 * end.  When the GPU then sat idle for more than half of what remains, and
 * did less than a tenth of its work before that (set-up copies, then
 * start-up: imports, data loading), the view starts after that gap instead.
 * Without GPU operations: the whole run. */
static void default_view(const ss_model *m, uint64_t *v0, uint64_t *v1)
{
    *v0 = m->t_first;
    *v1 = m->t_last > m->t_first ? m->t_last : m->t_first;
    if (!m->nops) return;
    uint64_t busy = 0, busy_end = 0;   /* ops are sorted by start: their union */
    for (uint32_t i = 0; i < m->nops; i++) {
        const ss_gpu_op *op = &m->ops[i];
        uint64_t from = op->start > busy_end ? op->start : busy_end;
        if (op->end > from) busy += op->end - from;
        if (op->end > busy_end) busy_end = op->end;
    }
    uint64_t end = busy_end > *v1 ? busy_end : *v1, before = 0;
    *v0 = m->ops[0].start;
    busy_end = m->ops[0].start;
    for (uint32_t i = 0; i < m->nops; i++) {
        const ss_gpu_op *op = &m->ops[i];
        if (i && op->start > busy_end && op->start - busy_end > (end - busy_end) / 2 && before < (busy - before) / 10)
            *v0 = op->start;
        uint64_t from = op->start > busy_end ? op->start : busy_end;
        if (op->end > from) before += op->end - from;
        if (op->end > busy_end) busy_end = op->end;
    }
    *v1 = end;
}

static void exe_name(const ss_model *m, char *out, size_t len)
{
    ss_string_ref exe = ss_model_meta(m, "exe");
    const char *b = exe.s;
    uint32_t bl = exe.len;
    for (uint32_t i = 0; exe.s && i < exe.len; i++)
        if (exe.s[i] == '/') { b = exe.s + i + 1; bl = exe.len - i - 1; }
    snprintf(out, len, "%.*s", b ? (int)(bl > 100 ? 100 : bl) : 0, b ? b : "");
}

static void write_data(hx *h, ss_process_result *res, const layout *L)
{
    const ss_model *m = h->m;
    ss_json *j = &h->j;
    ss_json_obj_begin(j);
    ss_json_kstr(j, "trace", res->path);
    ss_json_kuint(j, "pid", m->hdr.pid);
    char host[65], exe[128];
    memcpy(host, m->hdr.hostname, 64);
    host[64] = 0;
    ss_json_kstr(j, "host", host);
    exe_name(m, exe, sizeof exe);
    ss_json_kstr(j, "exe", exe);
    ss_json_kdouble(j, "t0", rel_ms(h, m->t_first));
    ss_json_kdouble(j, "t1", rel_ms(h, m->t_last > m->t_first ? m->t_last : m->t_first));
    ss_json_key(j, "first_op");
    if (m->nops) ss_json_double(j, rel_ms(h, m->ops[0].start)); else ss_json_null(j);
    uint64_t v0, v1;
    default_view(m, &v0, &v1);
    ss_json_key(j, "view"); ss_json_arr_begin(j);
    ss_json_double(j, rel_ms(h, v0)); ss_json_double(j, rel_ms(h, v1));
    ss_json_arr_end(j);
    char sampled[256], note[512];
    const char *why = ss_no_gpu_reason(m), *line = ss_capture_line(m, sampled, sizeof sampled);
    if (why && line) snprintf(note, sizeof note, "%s; %s", why, line);
    else snprintf(note, sizeof note, "%s", why ? why : line ? line : "");
    ss_json_key(j, "note"); if (why || line) ss_json_str(j, note); else ss_json_null(j);
    if (ss_capture_sampled(m)) {
        /* the analyzer's own stretches (capture_windows.h): the page shades
         * those not recorded, where empty rows do not mean idle */
        ss_capture_stretch *st;
        uint32_t nst = ss_capture_stretches(m, &st);
        ss_json_key(j, "gaps"); ss_json_arr_begin(j);
        for (uint32_t i = 0; i < nst; i++) {
            if (st[i].span >= 0) continue;
            ss_json_arr_begin(j);
            ss_json_double(j, rel_ms(h, st[i].t0));
            ss_json_double(j, (double)(st[i].t1 - st[i].t0) / 1e6);
            ss_json_arr_end(j);
        }
        ss_json_arr_end(j);
        free(st);
    }

    /* track names */
    ss_json_key(j, "tracks"); ss_json_arr_begin(j);
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const ss_thread *th = &m->threads[t];
        char name[200];
        int n = snprintf(name, sizeof name, "thread %u", th->tid);
        if (th->name && n > 0) snprintf(name + n, sizeof name - (size_t)n, " (%.*s)", (int)(th->name_len > 60 ? 60 : th->name_len), th->name);
        size_t len = strlen(name);
        if (L->thread_api[t] >= 0) {
            ss_json_obj_begin(j);
            ss_json_key(j, "name"); ss_json_strn(j, name, len);
            ss_json_kstr(j, "kind", "api");
            ss_json_obj_end(j);
        }
        if (L->thread_nvtx[t] >= 0) {
            ss_json_obj_begin(j);
            snprintf(name + len, sizeof name - len, " NVTX");
            ss_json_kstr(j, "name", name);
            ss_json_kstr(j, "kind", "nvtx");
            ss_json_obj_end(j);
        }
    }
    for (uint32_t s = 0; s < m->nstreams; s++) {
        if (L->stream_track[s] < 0) continue;
        char sd[96], name[160];
        ss_stream_describe(m, (int32_t)s, sd, sizeof sd);
        snprintf(name, sizeof name, "GPU %d %s", m->streams[s].device, sd);
        ss_json_obj_begin(j);
        ss_json_kstr(j, "name", name);
        ss_json_kstr(j, "kind", "stream");
        ss_json_obj_end(j);
    }
    ss_json_arr_end(j);

    /* events, one array per track, in track order */
    ss_json_key(j, "ev"); ss_json_arr_begin(j);
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const ss_thread *th = &m->threads[t];
        if (L->thread_api[t] >= 0) {
            ss_json_arr_begin(j);
            for (uint32_t k = 0; k < th->ncalls; k++) {
                const ss_call *c = &m->calls[th->calls[k]];
                const char *nmx = ss_model_call_name(m, c);
                uint32_t id = intern(&h->nm, NAME_KEY(KEY_API, c->name_idx), nmx, (uint32_t)strlen(nmx));
                event(h, c->rec->t_enter, c->rec->t_exit, id, call_class(c));
            }
            ss_json_arr_end(j);
        }
        if (L->thread_nvtx[t] >= 0) {
            ss_json_arr_begin(j);
            uint32_t lo = 0, hi = m->nnvtx;
            while (lo < hi) { uint32_t mid = (lo + hi) / 2; if (m->nvtx[mid].rec->tid < th->tid) lo = mid + 1; else hi = mid; }
            for (uint32_t k = lo; k < m->nnvtx && m->nvtx[k].rec->tid == th->tid; k++) {
                const ss_nvtx_rec *r = m->nvtx[k].rec;
                ss_string_ref s = ss_model_string(m, r->name_id);
                uint32_t id = s.s ? intern(&h->nm, NAME_KEY(KEY_STRING, r->name_id), s.s, s.len)
                                  : intern(&h->nm, NAME_KEY(KEY_STATIC, 100), "(unnamed range)", 15);
                event(h, r->start, r->end, id, C_NVTX);
            }
            ss_json_arr_end(j);
        }
    }
    /* ops grouped by stream, each group in start order (ops are sorted by start) */
    uint32_t *count = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < m->nops; i++) if (m->ops[i].stream >= 0) count[m->ops[i].stream + 1]++;
    for (uint32_t s = 0; s < m->nstreams; s++) count[s + 1] += count[s];
    uint32_t *order = ss_xcalloc(m->nops, sizeof(uint32_t));
    uint32_t *fill = ss_xcalloc(m->nstreams + 1, sizeof(uint32_t));
    memcpy(fill, count, (m->nstreams + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < m->nops; i++) if (m->ops[i].stream >= 0) order[fill[m->ops[i].stream]++] = i;
    for (uint32_t s = 0; s < m->nstreams; s++) {
        if (L->stream_track[s] < 0) continue;
        ss_json_arr_begin(j);
        for (uint32_t k = count[s]; k < count[s + 1]; k++) {
            const ss_gpu_op *op = &m->ops[order[k]];
            ss_string_ref nm = ss_model_op_name(m, op);
            uint32_t id;
            if (op->kind == SS_OP_KERNEL) {
                uint32_t sid = ((const ss_kernel_rec *)op->rec)->name_id;
                id = intern(&h->nm, NAME_KEY(sid ? KEY_STRING : KEY_STATIC, sid ? sid : 101), nm.s, nm.len);
            } else {
                /* copy/memset labels are static strings: key them by address */
                id = intern(&h->nm, NAME_KEY(KEY_STATIC, (uint32_t)(op->kind * 100 + (op->kind == SS_OP_MEMCPY ? ((const ss_memcpy_rec *)op->rec)->copy_kind : 0)) + 1000), nm.s, nm.len);
            }
            event(h, op->start, op->end, id, op->kind == SS_OP_KERNEL ? C_KERNEL : op->kind == SS_OP_MEMCPY ? C_MEMCPY : C_MEMSET);
        }
        ss_json_arr_end(j);
    }
    free(count); free(order); free(fill);
    ss_json_arr_end(j);

    ss_json_key(j, "names"); ss_json_arr_begin(j);
    for (uint32_t i = 0; i < h->nm.n; i++) ss_json_strn(j, h->nm.v[i].s, h->nm.v[i].len);
    ss_json_arr_end(j);

    ss_json_key(j, "findings"); ss_json_arr_begin(j);
    for (uint32_t i = 0; i < res->findings.n; i++) {
        const ss_finding *x = &res->findings.v[i];
        /* drawn over every call and op the finding involves (e.g. the launch
         * and the kernel it held back), outlined on each of their tracks */
        uint64_t t0 = UINT64_MAX, t1 = 0;
        int32_t tr[2 * SS_FINDING_MAX_REFS];
        uint32_t ntr = 0;
        for (uint32_t r = 0; r < x->nrefs; r++) {
            const ss_finding_ref *ref = &x->refs[r];
            if (ref->call >= 0) {
                const ss_api_rec *c = m->calls[ref->call].rec;
                if (c->t_enter < t0) t0 = c->t_enter;
                if (c->t_exit > t1) t1 = c->t_exit;
                int32_t ti = thread_index(m, c->tid);
                if (ti >= 0 && L->thread_api[ti] >= 0) tr[ntr++] = L->thread_api[ti];
            }
            if (ref->op >= 0) {
                const ss_gpu_op *op = &m->ops[ref->op];
                if (op->start < t0) t0 = op->start;
                if (op->end > t1) t1 = op->end;
                if (op->stream >= 0 && L->stream_track[op->stream] >= 0) tr[ntr++] = L->stream_track[op->stream];
            }
        }
        if (t0 == UINT64_MAX) t0 = t1 = m->t_first;
        if (t1 < t0) t1 = t0;
        ss_json_obj_begin(j);
        ss_finding_json_members(j, x, SS_FM_SUMMARY);
        ss_json_kdouble(j, "t", rel_ms(h, t0));
        ss_json_kdouble(j, "d", (double)(t1 - t0) / 1e6);
        ss_json_key(j, "tracks"); ss_json_arr_begin(j);
        for (uint32_t k = 0; k < ntr; k++) ss_json_int(j, tr[k]);
        ss_json_arr_end(j);
        ss_json_obj_end(j);
    }
    ss_json_arr_end(j);
    ss_json_obj_end(j);
}

static const char page_head[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
"<title>syncsight timeline</title>\n"
"<style>\n"
"body{margin:0;font:12px/1.35 system-ui,sans-serif;color:#222;background:#fafafa;display:flex;flex-direction:column;height:100vh}\n"
"#bar{padding:6px 10px;background:#263238;color:#eceff1;display:flex;gap:12px;align-items:center;min-width:0}\n"
"#bar b{font-size:14px} #bar button,#bar select{font:inherit;padding:2px 8px}\n"
"#what{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0;flex:1}\n"
"#legend{display:flex;flex-wrap:wrap;gap:4px 14px;padding:4px 10px;background:#eceff1;border-bottom:1px solid #cfd8dc}\n"
"#legend span{display:inline-flex;align-items:center;gap:5px;white-space:nowrap}\n"
"#legend i{display:inline-block;width:18px;height:10px;border-radius:2px}\n"
"#legend i.band{height:12px;border:2px solid;box-sizing:border-box}\n"
"#main{flex:1;display:flex;min-height:0}\n"
"#tl{flex:1;position:relative;min-width:0;overflow-y:auto;overflow-x:hidden}\n"
"#side{width:380px;flex:none;overflow-y:auto;overflow-x:hidden;border-left:1px solid #ccc;background:#fff}\n"
"#side h2{font-size:13px;margin:8px 10px}\n"
".f{padding:6px 10px;border-bottom:1px solid #eee;cursor:pointer;overflow:hidden}\n"
".f:hover,.f.sel{background:#fff3e0}\n"
".head{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}\n"
".sev{display:inline-block;padding:0 5px;border-radius:3px;color:#fff;font-weight:bold;margin-right:4px}\n"
".error{background:#c62828}.warning{background:#ef6c00}.info{background:#1565c0}\n"
".pid{color:#555;margin-left:6px}\n"
".msg{margin:3px 0;overflow-wrap:anywhere}.fix{color:#2e7d32;overflow-wrap:anywhere}\n"
".site{color:#555;font-family:monospace;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}\n"
"#tip{position:fixed;pointer-events:none;background:#fffde7;border:1px solid #aaa;padding:3px 6px;display:none;max-width:520px;overflow-wrap:anywhere}\n"
"canvas{display:block;cursor:grab}\n"
"</style></head>\n"
"<body>\n"
"<div id=\"bar\"><b>syncsight</b><select id=\"proc\" hidden></select><span id=\"what\"></span><button id=\"reset\" type=\"button\" title=\"from the first GPU operation to the end\">reset zoom</button><button id=\"all\" type=\"button\">whole run</button><span id=\"range\"></span><span style=\"opacity:.8;white-space:nowrap\">wheel: zoom, drag: pan, click a finding: zoom to it</span></div>\n"
"<div id=\"legend\"></div>\n"
"<div id=\"main\"><div id=\"tl\"><canvas id=\"cv\"></canvas></div><div id=\"side\"><h2 id=\"fh\"></h2><div id=\"fl\"></div></div></div>\n"
"<div id=\"tip\"></div>\n"
"<script type=\"application/json\" id=\"syncsight-data\">";

static const char page_tail_0[] =
"</script>\n"
"<script>\n"
"'use strict';\n"
"const D = JSON.parse(document.getElementById('syncsight-data').textContent);\n"
"const LABEL = 250, ROW = 20, HEAD = 18, AXIS = 24, MAX_RECTS = 400000, MIN_LABEL_PX = 24;\n"
"const COLORS = ['#78909c', '#e53935', '#43a047', '#1e88e5', '#8e24aa', '#fbc02d'];\n"
"const TEXT = ['#fff', '#fff', '#fff', '#fff', '#fff', '#3e2723'];\n"
"const CLASSES = ['CUDA call', 'blocking / synchronizing call', 'kernel', 'copy', 'memset', 'NVTX range'];\n"
"const SEVCOLOR = {error: 'rgba(198,40,40,', warning: 'rgba(239,108,0,', info: 'rgba(21,101,192,'};\n"
"const SEVRANK = {error: 0, warning: 1, info: 2};\n"
"const cv = document.getElementById('cv'), ctx = cv.getContext('2d');\n"
"const multi = D.procs.length > 1;\n"
"/* per process: its tracks with typed arrays for the drawing loop */\n"
"const P = D.procs.map((p, pi) => ({\n"
"  p, pi,\n"
"  tracks: p.tracks.map((t, i) => {\n"
"    const e = p.ev[i] || [], n = e.length / 4, s = new Float64Array(n), d = new Float64Array(n), pm = new Float64Array(n);\n"
"    let m = -Infinity;\n"
"    for (let k = 0; k < n; k++) { s[k] = e[4*k]; d[k] = e[4*k+1]; m = Math.max(m, s[k] + d[k]); pm[k] = m; }\n"
"    return {name: t.name, kind: t.kind, s, d, pm, nm: e.filter((_, k) => k % 4 == 2), cl: e.filter((_, k) => k % 4 == 3), n, names: p.names};\n"
"  })\n"
"}));\n"
"let shown = -1;            /* process index shown alone, -1 all */\n"
"let rows = [], findings = [], selected = -1, v0 = 0, v1 = 1, view = [0, 1], whole = [0, 1];\n"
"function lowerBound(a, x) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < x) lo = m + 1; else hi = m; } return lo; }\n"
"function W() { return cv.width / devicePixelRatio - LABEL; }\n"
"function X(t) { return LABEL + (t - v0) / (v1 - v0) * W(); }\n"
"function T(x) { return v0 + (x - LABEL) / W() * (v1 - v0); }\n"
"function fmt(ms) { const a = Math.abs(ms); return a >= 1000 ? (ms / 1000).toFixed(3) + ' s' : a >= 1 ? ms.toFixed(3) + ' ms' : (ms * 1000).toFixed(1) + ' us'; }\n"
"function procName(p) { return 'pid ' + p.pid + (p.exe ? ' ' + p.exe : '') + (p.host ? ' on ' + p.host : ''); }\n"
"/* ---- labels: drawn only where they fit, never squeezed ---- */\n"
"const widths = new Map();\n"
"function tw(s) { let w = widths.get(s); if (w === undefined) { w = ctx.measureText(s).width; if (widths.size < 50000) widths.set(s, w); } return w; }\n"
"/* \"void ns::kernel<T, 4>(float*, int)\" -> \"kernel\": the name without namespaces, template arguments and parameters */\n"
"function shortName(s) {\n"
"  let out = '', depth = 0;\n"
"  for (const c of s) { if (c === '<' || c === '(') depth++; else if ((c === '>' || c === ')') && depth > 0) depth--; else if (!depth) out += c; }\n"
"  out = out.trim(); const k = out.lastIndexOf('::'); if (k >= 0) out = out.slice(k + 2);\n"
"  out = out.replace(/^.*\\s/, '');\n"
"  return out || s;\n"
"}\n"
"function fitLabel(s, maxw) {\n"
"  if (maxw < MIN_LABEL_PX) return null;\n"
"  if (tw(s) <= maxw) return s;\n"
"  const sh = shortName(s);\n"
"  if (sh !== s && tw(sh) <= maxw) return sh;\n"
"  let lo = 0, hi = sh.length;   /* longest prefix that fits with an ellipsis */\n"
"  while (lo < hi) { const m = (lo + hi + 1) >> 1; if (ctx.measureText(sh.slice(0, m) + '\\u2026').width <= maxw) lo = m; else hi = m - 1; }\n"
"  return lo >= 3 ? sh.slice(0, lo) + '\\u2026' : null;\n"
"}\n"
"/* a track's name keeps its head (\"GPU 0 stream 13\") when the details in parentheses do not fit */\n"
"function trackName(s, maxw) { return tw(s) <= maxw ? s : s.replace(/\\s*\\(.*\\)\\s*$/, ''); }\n"
"let stats = null;\n"
"function label(s, x, y, maxw, color) {\n"
"  const t = fitLabel(s, maxw);\n"
"  if (t === null) return;\n"
"  const w = ctx.measureText(t).width;\n"
"  stats.labels++; if (w > maxw + 0.5) stats.labelsTooWide++; if (t !== s) stats.labelsShortened++;\n"
"  ctx.fillStyle = color; ctx.fillText(t, x, y);   /* no maxWidth: the browser would squeeze the glyphs */\n"
"}\n"
"/* ---- rows ---- */\n"
"function buildRows() {\n"
"  rows = []; findings = [];\n"
"  P.forEach(q => {\n"
"    if (shown >= 0 && q.pi !== shown) return;\n"
"    if (multi) rows.push({head: true, q});\n"
"    const first = rows.length;\n"
"    q.tracks.forEach(tr => rows.push({tr, q}));\n"
"    q.p.findings.forEach((f, i) => findings.push({f, q, i, rows: f.tracks.map(k => first + k)}));\n"
"  });\n"
"  /* the report's order (findings.c): setup folded last, severity, saving (how much sooner the run would end), cost */\n"
"  findings.sort((a, b) => ((a.f.folded ? 1 : 0) - (b.f.folded ? 1 : 0)) || (SEVRANK[a.f.severity] - SEVRANK[b.f.severity]) ||\n"
"    ((b.f.saving_ms ?? -1) - (a.f.saving_ms ?? -1)) || (b.f.cost_ms - a.f.cost_ms) || (a.q.pi - b.q.pi) || (a.i - b.i));\n"
"  let y = AXIS;\n"
"  for (const r of rows) { r.y = y; y += r.head ? HEAD : ROW; }\n"
"  const ps = shown >= 0 ? [D.procs[shown]] : D.procs;\n"
"  view = shown >= 0 ? ps[0].view.slice() : D.view.slice();\n"
"  whole = [Math.min(...ps.map(p => p.t0)), Math.max(...ps.map(p => p.t1))];\n"
"  for (const v of [view, whole]) { if (!(v[1] > v[0])) v[1] = v[0] + 1e-3; const pad = (v[1] - v[0]) * 0.02; v[0] -= pad; v[1] += pad; }\n"
"}\n"
"function rowAt(y) { for (const r of rows) if (y >= r.y && y < r.y + (r.head ? HEAD : ROW)) return r; return null; }\n"
"function resize() {\n"
"  const w = document.getElementById('tl').clientWidth, last = rows[rows.length - 1];\n"
"  const h = (last ? last.y + (last.head ? HEAD : ROW) : AXIS) + 10;\n"
"  cv.width = w * devicePixelRatio; cv.height = h * devicePixelRatio; cv.style.width = w + 'px'; cv.style.height = h + 'px';\n"
"  draw();\n"
"}\n"
"function draw() {\n"
"  const w = cv.width / devicePixelRatio, h = cv.height / devicePixelRatio;\n"
"  ctx.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);\n"
"  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);\n"
"  stats = {labels: 0, labelsTooWide: 0, labelsShortened: 0};\n"
"  let rects = 0, tracksDrawn = 0, findingsDrawn = 0;\n"
"  ctx.font = '11px system-ui,sans-serif'; ctx.textBaseline = 'middle';\n"
"  rows.forEach((r, i) => {\n"
"    const y = r.y;\n"
"    if (r.head) {\n"
"      ctx.fillStyle = '#cfd8dc'; ctx.fillRect(0, y, w, HEAD);\n"
"      ctx.font = 'bold 11px system-ui,sans-serif'; label(procName(r.q.p), 4, y + HEAD / 2, w - 8, '#263238'); ctx.font = '11px system-ui,sans-serif';\n"
"      return;\n"
"    }\n"
"    const tr = r.tr;\n"
"    ctx.fillStyle = i % 2 ? '#f5f5f5' : '#fff'; ctx.fillRect(0, y, w, ROW);\n"
"    ctx.save(); ctx.beginPath(); ctx.rect(LABEL, y, w - LABEL, ROW); ctx.clip();\n"
"    const inset = tr.kind === 'nvtx' ? 4 : 2;\n"
"    const wide = m => {   /* an event at least a pixel wide, with its label where it fits */\n"
"      const x0 = X(tr.s[m]), x1 = X(tr.s[m] + tr.d[m]);\n"
"      ctx.fillStyle = COLORS[tr.cl[m]] || '#999'; ctx.fillRect(x0, y + inset, x1 - x0, ROW - 2 * inset); rects++;\n"
"      const a = Math.max(x0, LABEL) + 3, b = Math.min(x1, w) - 3;\n"
"      if (b - a >= MIN_LABEL_PX) label(tr.names[tr.nm[m]], a, y + ROW / 2, b - a, TEXT[tr.cl[m]] || '#fff');\n"
"    };\n"
"    let k = lowerBound(tr.pm, v0);\n"
"    while (k < tr.n && tr.s[k] <= v1 && rects < MAX_RECTS) {\n"
"      const x0 = X(tr.s[k]);\n"
"      if (X(tr.s[k] + tr.d[k]) - x0 >= 1) { wide(k++); continue; }\n"
"      /* the events starting within this pixel column become one bar; those of them that\n"
"         reach past the column (a long call after a short one) are still drawn on their own */\n"
"      const px = Math.floor(x0), j = Math.max(k + 1, lowerBound(tr.s, T(px + 1)));\n"
"      let end = px + 1;\n"
"      if (X(tr.pm[j - 1]) > px + 1)\n"
"        for (let m = k; m < j; m++) { const b = X(tr.s[m] + tr.d[m]); if (b - X(tr.s[m]) >= 1) wide(m); else end = Math.max(end, b); }\n"
"      ctx.fillStyle = COLORS[tr.cl[k]] || '#999'; ctx.fillRect(px, y + inset, Math.max(1, end - px), ROW - 2 * inset); rects++;\n"
"      k = j;\n"
"    }\n"
"    ctx.restore();\n"
"    label(trackName(tr.name, LABEL - 8), 4, y + ROW / 2, LABEL - 8, '#222');\n"
"    tracksDrawn++;\n"
"  });\n";

/* sampled only: the processes' unrecorded stretches shaded on their rows */
static const char sampled_shade[] =
"  document.body.dataset.gapRectsDrawn = shadeGaps(w);\n";

static const char page_tail_1[] =
"  findings.forEach((F, i) => {\n"
"    const f = F.f;\n"
"    if (f.t > v1 || f.t + f.d < v0) return;\n"
"    const x0 = X(f.t), x1 = Math.max(X(f.t + f.d), x0 + 3), c = SEVCOLOR[f.severity] || SEVCOLOR.info;\n"
"    ctx.fillStyle = c + (i === selected ? '0.28)' : '0.13)'); ctx.fillRect(x0, AXIS, x1 - x0, h - AXIS);\n"
"    ctx.strokeStyle = c + '1)'; ctx.lineWidth = i === selected ? 3 : 2;\n"
"    for (const k of F.rows) if (rows[k]) ctx.strokeRect(x0, rows[k].y + 1, x1 - x0, ROW - 2);\n"
"    ctx.fillStyle = c + '1)'; ctx.beginPath(); ctx.moveTo(x0 - 5, AXIS - 9); ctx.lineTo(x0 + 5, AXIS - 9); ctx.lineTo(x0, AXIS - 1); ctx.fill();\n"
"    findingsDrawn++;\n"
"  });\n"
"  ctx.fillStyle = '#eceff1'; ctx.fillRect(0, 0, w, AXIS - 10); ctx.fillStyle = '#222';\n"
"  /* ticks at 1, 2 or 5 times a power of ten, at least 90 px apart */\n"
"  const target = (v1 - v0) * 90 / W(); let step = Math.pow(10, Math.floor(Math.log10(target)));\n"
"  if (step < target) step *= 2; if (step < target) step *= 2.5; if (step < target) step *= 2;\n"
"  for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) { const x = X(t); if (x < LABEL) continue; ctx.fillRect(x, 0, 1, AXIS - 10); ctx.fillText(fmt(t), x + 3, 7); }\n"
"  document.getElementById('range').textContent = fmt(v0) + ' \\u2013 ' + fmt(v1);\n"
"  const ds = document.body.dataset;\n"
"  ds.tracksDrawn = tracksDrawn; ds.findingsDrawn = findingsDrawn; ds.rectsDrawn = rects;\n"
"  ds.labelsDrawn = stats.labels; ds.labelsTooWide = stats.labelsTooWide; ds.labelsShortened = stats.labelsShortened;\n"
"  ds.viewStart = v0; ds.viewEnd = v1; ds.selectedFinding = selected;\n"
"  document.title = 'syncsight: ' + tracksDrawn + ' tracks, ' + findingsDrawn + ' findings drawn';\n"
"}\n"
"function zoomTo(a, b) { v0 = a; v1 = Math.max(b, a + 1e-6); draw(); }\n"
"cv.addEventListener('wheel', e => {\n"
"  e.preventDefault(); const r = cv.getBoundingClientRect(), x = e.clientX - r.left; if (x < LABEL) return;\n"
"  const t = T(x), k = Math.pow(1.0015, e.deltaY); zoomTo(t - (t - v0) * k, t + (v1 - t) * k);\n"
"}, {passive: false});\n"
"let drag = null;\n"
"cv.addEventListener('mousedown', e => { drag = {x: e.clientX, a: v0, b: v1}; cv.style.cursor = 'grabbing'; });\n"
"window.addEventListener('mouseup', () => { drag = null; cv.style.cursor = 'grab'; });\n"
"const tip = document.getElementById('tip');\n"
"window.addEventListener('mousemove', e => {\n"
"  if (drag) { const dt = (e.clientX - drag.x) / W() * (drag.b - drag.a); zoomTo(drag.a - dt, drag.b - dt); return; }\n"
"  const r = cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top, row = e.target === cv ? rowAt(y) : null;\n"
"  const show = text => { tip.textContent = text; tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px'; tip.style.display = 'block'; };\n"
"  if (!row) { tip.style.display = 'none'; return; }\n"
"  if (row.head) { show(procName(row.q.p) + ' \\u2014 ' + row.q.p.trace); return; }\n"
"  if (x < LABEL) { show(row.tr.name); return; }\n"
"  const tr = row.tr, t = T(x), tol = 3 * (v1 - v0) / W();\n"
"  let k = lowerBound(tr.s, t + tol) - 1, hit = -1;\n"
"  for (let n = 0; k >= 0 && n < 64; k--, n++) if (tr.s[k] + tr.d[k] >= t - tol) { hit = k; break; }\n";

/* sampled only: hovering an unrecorded stretch says so */
static const char sampled_tip[] =
"  const gap = hit < 0 && row.q.p.gaps ? row.q.p.gaps.find(g => g[0] <= t && t <= g[0] + g[1]) : null;\n"
"  if (gap) { show('not recorded (sampled): ' + fmt(gap[0]) + ' \\u2013 ' + fmt(gap[0] + gap[1]) + '; calls and GPU work made then are not in the trace'); return; }\n";

static const char page_tail_2[] =
"  if (hit < 0) { tip.style.display = 'none'; return; }\n"
"  show(tr.names[tr.nm[hit]] + '  start ' + fmt(tr.s[hit]) + ', ' + fmt(tr.d[hit]));\n"
"});\n"
"document.getElementById('reset').addEventListener('click', () => { selected = -1; markSelected(); zoomTo(view[0], view[1]); });\n"
"document.getElementById('all').addEventListener('click', () => zoomTo(whole[0], whole[1]));\n"
"const list = document.getElementById('fl');\n"
"function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }\n"
"function markSelected() { [...list.children].forEach((c, i) => c.classList.toggle('sel', i === selected)); }\n"
"/* zoom in to the finding: its time span, and a twentieth of it on each side */\n"
"function selectFinding(i) {\n"
"  const F = findings[i]; if (!F) return;\n"
"  selected = i; markSelected();\n"
"  const f = F.f, m = Math.max(f.d * 0.05, 0.002);\n"
"  zoomTo(f.t - m, f.t + f.d + m);\n"
"  const r = rows[F.rows[0]]; if (r) document.getElementById('tl').scrollTop = Math.max(0, r.y - 3 * ROW);\n"
"  list.children[i].scrollIntoView({block: 'nearest'});\n"
"}\n"
"function buildList() {\n"
"  list.textContent = '';\n"
"  document.getElementById('fh').textContent = findings.length ? findings.length + ' finding' + (findings.length > 1 ? 's' : '') + ', ranked by severity, then saving' : 'no findings';\n"
"  findings.forEach((F, i) => {\n"
"    const f = F.f, d = el('div', 'f'), h = el('div', 'head');\n"
"    h.append(el('span', 'sev ' + f.severity, f.severity), el('b', '', f.rule), document.createTextNode('  ' + fmt(f.cost_ms) + (f.saving_ms !== null && f.saving_ms !== undefined ? ', saves ' + fmt(f.saving_ms) : '') + (f.count > 1 ? ' (' + f.count + ' occurrences)' : '')));\n"
"    if (multi) h.append(el('span', 'pid', 'pid ' + F.q.p.pid));\n"
"    h.title = h.textContent;\n"
"    const site = el('div', 'site', f.site); site.title = f.site;\n"
"    d.append(h, site, el('div', 'msg', f.message), el('div', 'fix', 'fix: ' + f.fix));\n"
"    d.title = 'cost: ' + f.cost_basis;\n"
"    d.addEventListener('click', () => selectFinding(i));\n"
"    list.append(d);\n"
"  });\n"
"  /* text that runs past the panel: the panel scrolls sideways, or a line is cut (ellipsis) with no tooltip */\n"
"  const side = document.getElementById('side');\n"
"  let over = side.scrollWidth > side.clientWidth + 1 ? 1 : 0;\n"
"  for (const d of list.querySelectorAll('.f *')) if (d.scrollWidth > d.clientWidth + 1 && getComputedStyle(d).overflow === 'hidden' && !d.title) over++;\n"
"  const ds = document.body.dataset;\n"
"  ds.findingsListed = findings.length; ds.sideOverflow = over; ds.tracks = rows.filter(r => !r.head).length;\n"
"}\n"
"const legend = document.getElementById('legend');\n"
"CLASSES.forEach((c, i) => { const s = el('span'), sw = el('i'); sw.style.background = COLORS[i]; s.append(sw, document.createTextNode(c)); legend.append(s); });\n"
"['error', 'warning', 'info'].forEach(v => { const s = el('span'), sw = el('i', 'band'); sw.style.background = SEVCOLOR[v] + '0.13)'; sw.style.borderColor = SEVCOLOR[v] + '1)'; s.append(sw, document.createTextNode(v + ' finding')); legend.append(s); });\n";

/* sampled only: the shading (hatched grey) and its legend line */
static const char sampled_legend[] =
"const GAP_FILL = (() => {\n"
"  const c = document.createElement('canvas'); c.width = c.height = 8; const g = c.getContext('2d');\n"
"  g.fillStyle = 'rgba(96,125,139,0.16)'; g.fillRect(0, 0, 8, 8);\n"
"  g.strokeStyle = 'rgba(96,125,139,0.5)'; g.beginPath(); g.moveTo(0, 8); g.lineTo(8, 0); g.stroke();\n"
"  return ctx.createPattern(c, 'repeat');\n"
"})();\n"
"/* every stretch in view, on every row of its process; returns how many were drawn */\n"
"function shadeGaps(w) {\n"
"  let n = 0;\n"
"  ctx.fillStyle = GAP_FILL;\n"
"  for (const r of rows) {\n"
"    if (r.head || !r.q.p.gaps) continue;\n"
"    for (const g of r.q.p.gaps) {\n"
"      if (g[0] > v1 || g[0] + g[1] < v0) continue;\n"
"      const x0 = Math.max(X(g[0]), LABEL), x1 = Math.min(X(g[0] + g[1]), w);\n"
"      ctx.fillRect(x0, r.y, Math.max(1, x1 - x0), ROW); n++;\n"
"    }\n"
"  }\n"
"  return n;\n"
"}\n"
"{ const s = el('span'), sw = el('i'); sw.style.background = 'repeating-linear-gradient(135deg, rgba(96,125,139,0.16) 0 4px, rgba(96,125,139,0.5) 4px 5px)';\n"
"  s.append(sw, document.createTextNode('not recorded (sampled)')); s.title = 'a sampled trace: between its recording windows no CUDA call or GPU operation of the hot path was recorded; empty rows there do not mean idle';\n"
"  legend.append(s); }\n";

static const char page_tail_3[] =
"document.body.dataset.legendItems = legend.children.length;\n"
"const sel = document.getElementById('proc');\n"
"if (multi) {\n"
"  sel.hidden = false;\n"
"  sel.append(el('option', '', 'all ' + D.procs.length + ' processes'));\n"
"  D.procs.forEach(p => { const o = el('option', '', procName(p)); o.title = p.trace; sel.append(o); });\n"
"  sel.addEventListener('change', () => show(sel.selectedIndex - 1));\n"
"}\n"
"function show(pi) {\n"
"  shown = pi >= 0 && pi < D.procs.length ? pi : -1; sel.selectedIndex = shown + 1; selected = -1;\n"
"  const p = shown >= 0 ? D.procs[shown] : D.procs.length === 1 ? D.procs[0] : null;\n"
"  document.getElementById('what').textContent = p ? procName(p) + ' \\u2014 ' + p.trace + (p.note ? ' \\u2014 ' + p.note : '') : D.procs.length + ' processes';\n"
"  document.getElementById('what').title = document.getElementById('what').textContent;\n"
"  document.body.dataset.processShown = p ? p.pid : 0; document.body.dataset.processes = D.procs.length;\n"
"  buildRows(); buildList(); v0 = view[0]; v1 = view[1]; resize();\n"
"}\n"
"window.addEventListener('resize', resize);\n"
"/* #pid=N shows one process, #finding=K selects the K-th listed finding */\n"
"const hash = new URLSearchParams(location.hash.slice(1));\n"
"show(hash.has('pid') ? D.procs.findIndex(p => String(p.pid) === hash.get('pid')) : -1);\n"
"if (hash.has('finding')) selectFinding(parseInt(hash.get('finding'), 10));\n"
"</script>\n"
"</body></html>\n";

int ss_export_html_job(FILE *out, ss_process_result *procs, uint32_t n)
{
    int64_t *shift = ss_xcalloc(n ? n : 1, sizeof(int64_t));
    int64_t base = ss_job_time_shifts(procs, n, shift);   /* ts 0 of the job */
    fputs(page_head, out);
    cookie_io_functions_t io = { NULL, script_safe_write, NULL, NULL };
    FILE *js = fopencookie(out, "w", io);
    if (!js) { free(shift); return -1; }
    ss_json j;
    ss_json_init(&j, js, 0);
    ss_json_obj_begin(&j);
    /* the job's extent and default view: the union of the processes' */
    double t0 = 0, t1 = 0, v0 = 0, v1 = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ss_model *m = procs[i].model;
        hx h = { .m = m, .base = base, .shift = shift[i] };
        uint64_t a, b;
        default_view(m, &a, &b);
        double pt0 = rel_ms(&h, m->t_first), pt1 = rel_ms(&h, m->t_last), pv0 = rel_ms(&h, a), pv1 = rel_ms(&h, b);
        if (!i || pt0 < t0) t0 = pt0;
        if (!i || pt1 > t1) t1 = pt1;
        if (!i || pv0 < v0) v0 = pv0;
        if (!i || pv1 > v1) v1 = pv1;
    }
    ss_json_kdouble(&j, "t0", t0);
    ss_json_kdouble(&j, "t1", t1);
    ss_json_key(&j, "view"); ss_json_arr_begin(&j); ss_json_double(&j, v0); ss_json_double(&j, v1); ss_json_arr_end(&j);
    int sampled = 0;
    for (uint32_t i = 0; i < n; i++) sampled |= ss_capture_sampled(procs[i].model);
    ss_json_key(&j, "procs"); ss_json_arr_begin(&j);
    for (uint32_t i = 0; i < n; i++) {
        hx h;
        memset(&h, 0, sizeof h);
        h.js = js;
        h.j = j;
        h.m = procs[i].model;
        h.base = base;
        h.shift = shift[i];
        layout L;
        make_layout(h.m, &L);
        write_data(&h, &procs[i], &L);
        j = h.j;   /* the writer's state (separators) goes on */
        free(L.thread_api); free(L.thread_nvtx); free(L.stream_track);
        free(h.nm.v);
        ss_u64map_free(&h.nm.index);
    }
    ss_json_arr_end(&j);
    ss_json_obj_end(&j);
    int bad = fclose(js) != 0;
    /* the sampled pieces only where they draw something: a page of traces
     * recorded in full is what it was before sampled recording */
    fputs(page_tail_0, out);
    if (sampled) fputs(sampled_shade, out);
    fputs(page_tail_1, out);
    if (sampled) fputs(sampled_tip, out);
    fputs(page_tail_2, out);
    if (sampled) fputs(sampled_legend, out);
    fputs(page_tail_3, out);
    free(shift);
    return bad ? -1 : 0;
}

int ss_export_html(FILE *out, ss_process_result *res)
{
    return ss_export_html_job(out, res, 1);
}
