/*
 * One self-contained HTML page: the process's timeline (host threads, their
 * NVTX ranges and GPU streams on one time axis) drawn on a <canvas> by inline
 * JavaScript, with every finding highlighted where it happened and listed
 * beside it with its cost and fix.  Wheel zooms, drag pans, "reset" shows
 * everything, clicking a finding zooms to it.  No network access: no external
 * script, style sheet or font.
 *
 * The data is embedded as JSON in <script type="application/json">.  Program
 * strings go through the JSON writer (json.h: valid JSON whatever the bytes) and then
 * through a filter that writes '<', '>' and '&' as \u003c, \u003e, \u0026, so
 * that no kernel name or NVTX text can close the script element ("</script>")
 * or open a comment; JSON.parse gives the original text back.  The page puts
 * strings into the DOM with textContent only, never innerHTML.
 *
 * Data layout (compact, one array per track):
 *   tracks[i] = {name, kind: "api"|"nvtx"|"stream"}
 *   ev[i]     = [start_ms, dur_ms, name_index, class, start_ms, ...] sorted by start
 *   names     = interned labels (API names, kernel names, NVTX text)
 *   findings  = [{rule, severity, cost_ms, cost_basis, message, fix, count, site (the members of
 *                the JSON report, finding_json.c), t, d, tracks}]
 * Times are ms from the start of the trace.
 *
 * Big traces: the page draws at most about two rectangles per pixel column
 * per track and frame: runs of events narrower than a pixel are merged into
 * one bar (prefix maximum of end times, binary search to the next pixel).
 */
#define _GNU_SOURCE
#include <string.h>

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
    uint64_t base;
    names nm;
} hx;

static double rel_ms(const hx *h, uint64_t t) { return ((double)t - (double)h->base) / 1e6; }

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

static void write_data(hx *h, ss_process_result *res, const layout *L)
{
    const ss_model *m = h->m;
    ss_json *j = &h->j;
    ss_json_obj_begin(j);
    ss_json_kstr(j, "trace", res->path);
    ss_json_kuint(j, "pid", m->hdr.pid);
    char host[65];
    memcpy(host, m->hdr.hostname, 64);
    host[64] = 0;
    ss_json_kstr(j, "host", host);
    ss_json_kdouble(j, "t0", rel_ms(h, m->t_first ? m->t_first : h->base));
    ss_json_kdouble(j, "t1", rel_ms(h, m->t_last > h->base ? m->t_last : h->base));
    ss_json_key(j, "note"); if (ss_no_gpu_reason(m)) ss_json_str(j, ss_no_gpu_reason(m)); else ss_json_null(j);

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
        if (t0 == UINT64_MAX) t0 = t1 = h->base;
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
"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
"<title>syncsight timeline</title>\n<style>\n"
"body{margin:0;font:12px/1.35 system-ui,sans-serif;color:#222;background:#fafafa;display:flex;flex-direction:column;height:100vh}\n"
"#bar{padding:6px 10px;background:#263238;color:#eceff1;display:flex;gap:12px;align-items:center}\n"
"#bar b{font-size:14px} #bar button{font:inherit;padding:2px 10px}\n"
"#main{flex:1;display:flex;min-height:0}\n"
"#tl{flex:1;position:relative;min-width:0;overflow-y:auto;overflow-x:hidden}\n"
"#side{width:380px;overflow-y:auto;border-left:1px solid #ccc;background:#fff}\n"
"#side h2{font-size:13px;margin:8px 10px}\n"
".f{padding:6px 10px;border-bottom:1px solid #eee;cursor:pointer}\n"
".f:hover,.f.sel{background:#fff3e0}\n"
".sev{display:inline-block;padding:0 5px;border-radius:3px;color:#fff;font-weight:bold;margin-right:4px}\n"
".error{background:#c62828}.warning{background:#ef6c00}.info{background:#1565c0}\n"
".msg{margin:3px 0}.fix{color:#2e7d32}.site{color:#555;font-family:monospace;word-break:break-all}\n"
"#tip{position:fixed;pointer-events:none;background:#fffde7;border:1px solid #aaa;padding:3px 6px;display:none;max-width:520px;word-break:break-all}\n"
"canvas{display:block;cursor:grab}\n"
"</style></head>\n<body>\n"
"<div id=\"bar\"><b>syncsight</b><span id=\"what\"></span><button id=\"reset\" type=\"button\">reset zoom</button>"
"<span id=\"range\"></span><span style=\"margin-left:auto;opacity:.8\">wheel: zoom, drag: pan, click a finding: zoom to it</span></div>\n"
"<div id=\"main\"><div id=\"tl\"><canvas id=\"cv\"></canvas></div><div id=\"side\"><h2 id=\"fh\"></h2><div id=\"fl\"></div></div></div>\n"
"<div id=\"tip\"></div>\n"
"<script type=\"application/json\" id=\"syncsight-data\">";

static const char page_tail[] =
"</script>\n<script>\n"
"'use strict';\n"
"const D = JSON.parse(document.getElementById('syncsight-data').textContent);\n"
"const LABEL = 250, ROW = 20, AXIS = 24, MAX_RECTS = 400000;\n"
"const COLORS = ['#78909c', '#e53935', '#43a047', '#1e88e5', '#8e24aa', '#fbc02d'];\n"
"const SEVCOLOR = {error: 'rgba(198,40,40,', warning: 'rgba(239,108,0,', info: 'rgba(21,101,192,'};\n"
"const cv = document.getElementById('cv'), ctx = cv.getContext('2d');\n"
"const tracks = D.tracks.map((t, i) => {\n"
"  const e = D.ev[i] || [], n = e.length / 4, s = new Float64Array(n), d = new Float64Array(n), pm = new Float64Array(n);\n"
"  let m = -Infinity;\n"
"  for (let k = 0; k < n; k++) { s[k] = e[4*k]; d[k] = e[4*k+1]; m = Math.max(m, s[k] + d[k]); pm[k] = m; }\n"
"  return {name: t.name, kind: t.kind, s, d, pm, nm: e.filter((_, k) => k % 4 == 2), cl: e.filter((_, k) => k % 4 == 3), n};\n"
"});\n"
"let t0 = D.t0, t1 = Math.max(D.t1, D.t0 + 1e-3);\n"
"for (const f of D.findings) { t0 = Math.min(t0, f.t); t1 = Math.max(t1, f.t + f.d); }\n"
"const pad = (t1 - t0) * 0.01; t0 -= pad; t1 += pad;\n"
"let v0 = t0, v1 = t1, selected = -1;\n"
"document.getElementById('what').textContent = 'pid ' + D.pid + (D.host ? ' on ' + D.host : '') + ' \\u2014 ' + D.trace + (D.note ? ' \\u2014 ' + D.note : '');\n"
"function lowerBound(a, x) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < x) lo = m + 1; else hi = m; } return lo; }\n"
"function W() { return cv.width / devicePixelRatio - LABEL; }\n"
"function X(t) { return LABEL + (t - v0) / (v1 - v0) * W(); }\n"
"function T(x) { return v0 + (x - LABEL) / W() * (v1 - v0); }\n"
"function fmt(ms) { return ms >= 1000 ? (ms / 1000).toFixed(3) + ' s' : ms >= 1 ? ms.toFixed(3) + ' ms' : (ms * 1000).toFixed(1) + ' us'; }\n"
"function resize() {\n"
"  const w = document.getElementById('tl').clientWidth, h = AXIS + tracks.length * ROW + 10;\n"
"  cv.width = w * devicePixelRatio; cv.height = h * devicePixelRatio; cv.style.width = w + 'px'; cv.style.height = h + 'px';\n"
"  draw();\n"
"}\n"
"function draw() {\n"
"  const w = cv.width / devicePixelRatio, h = cv.height / devicePixelRatio;\n"
"  ctx.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);\n"
"  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);\n"
"  let rects = 0, tracksDrawn = 0, findingsDrawn = 0;\n"
"  ctx.font = '11px system-ui,sans-serif'; ctx.textBaseline = 'middle';\n"
"  tracks.forEach((tr, i) => {\n"
"    const y = AXIS + i * ROW;\n"
"    ctx.fillStyle = i % 2 ? '#f5f5f5' : '#fff'; ctx.fillRect(0, y, w, ROW);\n"
"    ctx.save(); ctx.beginPath(); ctx.rect(LABEL, y, w - LABEL, ROW); ctx.clip();\n"
"    let k = lowerBound(tr.pm, v0);\n"
"    while (k < tr.n && tr.s[k] <= v1 && rects < MAX_RECTS) {\n"
"      const x0 = X(tr.s[k]), x1 = X(tr.s[k] + tr.d[k]);\n"
"      const inset = tr.kind === 'nvtx' ? 4 : 2;\n"
"      if (x1 - x0 >= 1) {\n"
"        ctx.fillStyle = COLORS[tr.cl[k]] || '#999'; ctx.fillRect(x0, y + inset, x1 - x0, ROW - 2 * inset); rects++;\n"
"        if (x1 - x0 > 40) { ctx.fillStyle = '#fff'; ctx.fillText(D.names[tr.nm[k]], Math.max(x0, LABEL) + 3, y + ROW / 2, Math.min(x1, w) - Math.max(x0, LABEL) - 6); }\n"
"        k++;\n"
"      } else {\n"
"        /* everything starting within this pixel column becomes one bar up to the furthest end */\n"
"        const px = Math.floor(x0), j = Math.max(k + 1, lowerBound(tr.s, T(px + 1)));\n"
"        const end = X(tr.pm[j - 1]);\n"
"        ctx.fillStyle = COLORS[tr.cl[k]] || '#999'; ctx.fillRect(px, y + inset, Math.max(1, end - px), ROW - 2 * inset); rects++;\n"
"        k = j;\n"
"      }\n"
"    }\n"
"    ctx.restore();\n"
"    ctx.fillStyle = '#222'; ctx.fillText(tr.name, 4, y + ROW / 2, LABEL - 8);\n"
"    tracksDrawn++;\n"
"  });\n"
"  D.findings.forEach((f, i) => {\n"
"    if (f.t > v1 || f.t + f.d < v0) return;\n"
"    const x0 = X(f.t), x1 = Math.max(X(f.t + f.d), x0 + 3), c = SEVCOLOR[f.severity] || SEVCOLOR.info;\n"
"    ctx.fillStyle = c + (i === selected ? '0.28)' : '0.13)'); ctx.fillRect(x0, AXIS, x1 - x0, h - AXIS);\n"
"    ctx.strokeStyle = c + '1)'; ctx.lineWidth = i === selected ? 3 : 2;\n"
"    for (const k of f.tracks) ctx.strokeRect(x0, AXIS + k * ROW + 1, x1 - x0, ROW - 2);\n"
"    ctx.fillStyle = c + '1)'; ctx.beginPath(); ctx.moveTo(x0 - 5, AXIS - 9); ctx.lineTo(x0 + 5, AXIS - 9); ctx.lineTo(x0, AXIS - 1); ctx.fill();\n"
"    findingsDrawn++;\n"
"  });\n"
"  ctx.fillStyle = '#eceff1'; ctx.fillRect(0, 0, w, AXIS - 10); ctx.fillStyle = '#222';\n"
"  /* ticks at 1, 2 or 5 times a power of ten, at least 90 px apart */\n"
"  const target = (v1 - v0) * 90 / W(); let step = Math.pow(10, Math.floor(Math.log10(target)));\n"
"  if (step < target) step *= 2; if (step < target) step *= 2.5; if (step < target) step *= 2;\n"
"  for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) { const x = X(t); if (x < LABEL) continue; ctx.fillRect(x, 0, 1, AXIS - 10); ctx.fillText(fmt(t), x + 3, 7); }\n"
"  document.getElementById('range').textContent = fmt(v0) + ' \\u2013 ' + fmt(v1);\n"
"  document.body.dataset.tracksDrawn = tracksDrawn; document.body.dataset.findingsDrawn = findingsDrawn;\n"
"  document.body.dataset.rectsDrawn = rects;\n"
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
"  const r = cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top, i = Math.floor((y - AXIS) / ROW);\n"
"  if (e.target !== cv || x < LABEL || i < 0 || i >= tracks.length) { tip.style.display = 'none'; return; }\n"
"  const tr = tracks[i], t = T(x), tol = 3 * (v1 - v0) / W();\n"
"  let k = lowerBound(tr.s, t + tol) - 1, hit = -1;\n"
"  for (let n = 0; k >= 0 && n < 64; k--, n++) if (tr.s[k] + tr.d[k] >= t - tol) { hit = k; break; }\n"
"  if (hit < 0) { tip.style.display = 'none'; return; }\n"
"  tip.textContent = D.names[tr.nm[hit]] + '  start ' + fmt(tr.s[hit]) + ', ' + fmt(tr.d[hit]);\n"
"  tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px'; tip.style.display = 'block';\n"
"});\n"
"document.getElementById('reset').addEventListener('click', () => { selected = -1; markSelected(); zoomTo(t0, t1); });\n"
"const list = document.getElementById('fl');\n"
"document.getElementById('fh').textContent = D.findings.length ? D.findings.length + ' finding' + (D.findings.length > 1 ? 's' : '') + ', ranked by cost' : 'no findings';\n"
"function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }\n"
"function markSelected() { [...list.children].forEach((c, i) => c.classList.toggle('sel', i === selected)); }\n"
"D.findings.forEach((f, i) => {\n"
"  const d = el('div', 'f'); const h = el('div');\n"
"  h.append(el('span', 'sev ' + f.severity, f.severity), el('b', '', f.rule), document.createTextNode('  ' + fmt(f.cost_ms) + (f.count > 1 ? ' (' + f.count + ' occurrences)' : '')));\n"
"  d.append(h, el('div', 'site', f.site), el('div', 'msg', f.message), el('div', 'fix', 'fix: ' + f.fix));\n"
"  d.title = 'cost: ' + f.cost_basis;\n"
"  d.addEventListener('click', () => { selected = i; markSelected(); const p = Math.max(f.d * 2, (t1 - t0) * 1e-4, 1e-3); zoomTo(f.t - p, f.t + f.d + p); });\n"
"  list.append(d);\n"
"});\n"
"document.body.dataset.findingsListed = D.findings.length;\n"
"document.body.dataset.tracks = tracks.length;\n"
"window.addEventListener('resize', resize);\n"
"resize();\n"
"</script>\n</body></html>\n";

int ss_export_html(FILE *out, ss_process_result *res)
{
    hx h;
    memset(&h, 0, sizeof h);
    h.m = res->model;
    h.base = h.m->hdr.start_ns;
    if (h.m->t_first && h.m->t_first < h.base) h.base = h.m->t_first;
    layout L;
    make_layout(h.m, &L);

    fputs(page_head, out);
    cookie_io_functions_t io = { NULL, script_safe_write, NULL, NULL };
    h.js = fopencookie(out, "w", io);
    if (!h.js) { free(L.thread_api); free(L.thread_nvtx); free(L.stream_track); return -1; }
    ss_json_init(&h.j, h.js, 0);
    write_data(&h, res, &L);
    int bad = fclose(h.js) != 0;
    fputs(page_tail, out);

    free(L.thread_api); free(L.thread_nvtx); free(L.stream_track);
    free(h.nm.v);
    ss_u64map_free(&h.nm.index);
    return bad ? -1 : 0;
}
