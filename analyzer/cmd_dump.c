/*
 * `syncsight dump [--json] FILE`: every record of a trace, in file order, one
 * line each (text: "type key=value ..."; --json: one JSON object per line,
 * {"type":"api","name":...}).  Times are ms relative to the header's start;
 * API names and string ids are resolved; all text is escaped.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "escape.h"
#include "json.h"
#include "util.h"
#include "syncsight/trace_io.h"

typedef struct dumper {
    FILE *out;
    int json;
    ss_json j;
    int nfields;
    uint64_t start_ns;
    ss_u64map names;       /* cbid -> index into texts */
    ss_u64map strings;     /* string id -> index into texts */
    const char **texts; uint32_t *lens; uint32_t ntexts, cap, caplens;
    uint16_t minor;        /* the trace's minor version: fields that came later */
} dumper;

static void begin(dumper *d, const char *type)
{
    d->nfields = 0;
    if (d->json) { ss_json_init(&d->j, d->out, 0); ss_json_obj_begin(&d->j); ss_json_kstr(&d->j, "type", type); }
    else fputs(type, d->out);
}

static void end(dumper *d)
{
    if (d->json) ss_json_obj_end(&d->j);
    fputc('\n', d->out);
}

static void key(dumper *d, const char *k)
{
    if (d->json) ss_json_key(&d->j, k);
    else fprintf(d->out, " %s=", k);
}

static void fstr(dumper *d, const char *k, const char *s, size_t len)
{
    key(d, k);
    if (d->json) { ss_json_strn(&d->j, s ? s : "", s ? len : 0); return; }
    fputc('"', d->out);
    /* quotes inside are shown escaped so a line parses back unambiguously */
    for (size_t i = 0; s && i < len; ) {
        size_t k2 = i;
        while (k2 < len && s[k2] != '"') k2++;
        ss_escape_term(d->out, s + i, k2 - i);
        if (k2 < len) { fputs("\\\"", d->out); k2++; }
        i = k2;
    }
    fputc('"', d->out);
}

static void fu(dumper *d, const char *k, uint64_t v) { key(d, k); if (d->json) ss_json_uint(&d->j, v); else fprintf(d->out, "%" PRIu64, v); }
static void fi(dumper *d, const char *k, int64_t v) { key(d, k); if (d->json) ss_json_int(&d->j, v); else fprintf(d->out, "%" PRId64, v); }
static void fx(dumper *d, const char *k, uint64_t v)
{
    key(d, k);
    char b[32]; snprintf(b, sizeof b, "0x%" PRIx64, v);
    if (d->json) ss_json_str(&d->j, b); else fputs(b, d->out);
}
static void fms(dumper *d, const char *k, uint64_t t)
{
    key(d, k);
    double v = ((double)t - (double)d->start_ns) / 1e6;
    if (d->json) ss_json_double(&d->j, v); else fprintf(d->out, "%.6f", v);
}
static void fdur(dumper *d, const char *k, uint64_t a, uint64_t b)
{
    key(d, k);
    double v = b >= a ? (double)(b - a) / 1e6 : -((double)(a - b) / 1e6);
    if (d->json) ss_json_double(&d->j, v); else fprintf(d->out, "%.6f", v);
}

static void text_ref(dumper *d, ss_u64map *map, uint64_t id, const char *k)
{
    int64_t i = ss_u64map_get(map, id, -1);
    if (i >= 0) fstr(d, k, d->texts[i], d->lens[i]);
    else if (d->json) { key(d, k); ss_json_null(&d->j); }
    else fprintf(d->out, " %s=?", k);
}

static void remember(dumper *d, ss_u64map *map, uint64_t id, const char *s, uint32_t len)
{
    if (ss_u64map_get(map, id, -1) >= 0) return;
    SS_PUSH(d->texts, d->ntexts, d->cap, s);
    uint32_t n = d->ntexts - 1;
    SS_PUSH(d->lens, n, d->caplens, len);
    ss_u64map_put(map, id, d->ntexts - 1);
}

static int tail_ok(const ss_rec_hdr *h, uint32_t fixed, uint64_t tail) { return fixed + tail <= h->size; }

static void gpu_common(dumper *d, const ss_gpu_common *g)
{
    fms(d, "start_ms", g->start); fdur(d, "dur_ms", g->start, g->end);
    fu(d, "corr", g->corr); fu(d, "stream_id", g->stream_id); fu(d, "context", g->context_id); fu(d, "device", g->device);
}

/* the node a graph op ran as (SS_GPU_F_GRAPH_NODE), only when recorded */
static void graph_node(dumper *d, const ss_rec_hdr *h, uint32_t fixed)
{
    uint64_t id;
    if (!(h->flags & SS_GPU_F_GRAPH_NODE) || !tail_ok(h, fixed, 8)) return;
    memcpy(&id, (const char *)h + fixed, 8);
    fu(d, "graph_node", id);
}

static void dump_record(dumper *d, const ss_rec_hdr *h)
{
    switch (h->type) {
    case SS_REC_META: {
        const ss_meta_rec *r = (const void *)h;
        begin(d, "meta");
        if (tail_ok(h, sizeof *r, (uint64_t)r->key_len + r->value_len + 2)) {
            const char *t = ss_rec_tail(h, sizeof *r);
            fstr(d, "key", t, r->key_len); fstr(d, "value", t + r->key_len + 1, r->value_len);
        }
        break;
    }
    case SS_REC_STRING: {
        const ss_string_rec *r = (const void *)h;
        begin(d, "string"); fu(d, "id", r->id);
        if (tail_ok(h, sizeof *r, r->len)) fstr(d, "text", ss_rec_tail(h, sizeof *r), r->len);
        break;
    }
    case SS_REC_API_NAME: {
        const ss_api_name_rec *r = (const void *)h;
        begin(d, "api_name"); fu(d, "cbid", r->cbid);
        if (tail_ok(h, sizeof *r, r->len)) fstr(d, "name", ss_rec_tail(h, sizeof *r), r->len);
        break;
    }
    case SS_REC_API: {
        const ss_api_rec *r = (const void *)h;
        begin(d, "api");
        text_ref(d, &d->names, r->cbid, "name");
        fu(d, "cbid", r->cbid); fu(d, "tid", r->tid); fms(d, "t_ms", r->t_enter); fdur(d, "dur_ms", r->t_enter, r->t_exit);
        fi(d, "ret", r->ret); fu(d, "corr", r->corr); fx(d, "stream", r->stream); fx(d, "event", r->event);
        fx(d, "ptr", r->ptr); fx(d, "ptr2", r->ptr2); fu(d, "bytes", r->bytes); fx(d, "func", r->func);
        fx(d, "flags", r->flags); fu(d, "arg", r->arg); fi(d, "arg2", r->arg2); fu(d, "mem_dst", r->mem_dst);
        fu(d, "mem_src", r->mem_src); fi(d, "device", r->device); fu(d, "stack", r->stack_id); fu(d, "pystack", r->pystack_id);
        if (r->nparams && tail_ok(h, sizeof *r, 8ull * r->nparams)) {
            const uint64_t *p = ss_rec_tail(h, sizeof *r);
            key(d, "params");
            if (d->json) ss_json_arr_begin(&d->j);
            for (uint32_t i = 0; i < r->nparams; i++) {
                char b[32]; snprintf(b, sizeof b, "0x%" PRIx64, p[i]);
                if (d->json) ss_json_str(&d->j, b); else fprintf(d->out, "%s%s", i ? "," : "", b);
            }
            if (d->json) ss_json_arr_end(&d->j);
            /* where each value sits in the kernel's parameter buffer */
            if ((r->flags & SS_API_F_PARAM_OFFSETS) && tail_ok(h, sizeof *r, 10ull * r->nparams)) {
                const uint8_t *o = (const uint8_t *)(p + r->nparams);
                key(d, "param_offsets");
                if (d->json) ss_json_arr_begin(&d->j);
                for (uint32_t i = 0; i < r->nparams; i++) {
                    uint16_t off;
                    memcpy(&off, o + 2 * i, sizeof off);
                    if (d->json) ss_json_uint(&d->j, off); else fprintf(d->out, "%s%u", i ? "," : "", off);
                }
                if (d->json) ss_json_arr_end(&d->j);
            }
        }
        break;
    }
    case SS_REC_KERNEL: {
        const ss_kernel_rec *r = (const void *)h;
        begin(d, "kernel"); text_ref(d, &d->strings, r->name_id, "name"); gpu_common(d, &r->g);
        key(d, "grid");
        if (d->json) { ss_json_arr_begin(&d->j); for (int i = 0; i < 3; i++) ss_json_uint(&d->j, r->grid[i]); ss_json_arr_end(&d->j); }
        else fprintf(d->out, "%u,%u,%u", r->grid[0], r->grid[1], r->grid[2]);
        key(d, "block");
        if (d->json) { ss_json_arr_begin(&d->j); for (int i = 0; i < 3; i++) ss_json_uint(&d->j, r->block[i]); ss_json_arr_end(&d->j); }
        else fprintf(d->out, "%u,%u,%u", r->block[0], r->block[1], r->block[2]);
        fu(d, "shared_bytes", r->shared_bytes); fu(d, "graph_id", r->graph_id);
        graph_node(d, h, sizeof *r);
        break;
    }
    case SS_REC_MEMCPY: {
        const ss_memcpy_rec *r = (const void *)h;
        begin(d, "memcpy"); gpu_common(d, &r->g); fu(d, "bytes", r->bytes); fu(d, "copy_kind", r->copy_kind);
        fu(d, "src_kind", r->src_kind); fu(d, "dst_kind", r->dst_kind); fu(d, "async", r->async);
        fu(d, "src_device", r->src_device); fu(d, "dst_device", r->dst_device); fu(d, "graph_id", r->graph_id);
        graph_node(d, h, sizeof *r);
        break;
    }
    case SS_REC_MEMSET: {
        const ss_memset_rec *r = (const void *)h;
        begin(d, "memset"); gpu_common(d, &r->g); fu(d, "bytes", r->bytes); fu(d, "value", r->value);
        fu(d, "mem_kind", r->mem_kind); fu(d, "async", r->async); fu(d, "graph_id", r->graph_id);
        graph_node(d, h, sizeof *r);
        break;
    }
    case SS_REC_SYNC: {
        const ss_sync_rec *r = (const void *)h;
        begin(d, "sync"); gpu_common(d, &r->g); fu(d, "sync_type", r->sync_type); fu(d, "event_id", r->event_id);
        break;
    }
    case SS_REC_CUDA_EVENT: {
        const ss_cuda_event_rec *r = (const void *)h;
        begin(d, "cuda_event"); gpu_common(d, &r->g); fu(d, "event_id", r->event_id);
        break;
    }
    case SS_REC_STREAM: {
        const ss_stream_rec *r = (const void *)h;
        begin(d, "stream"); fx(d, "handle", r->handle); fu(d, "stream_id", r->stream_id); fu(d, "context", r->context_id);
        fu(d, "device", r->device); fu(d, "kind", r->kind); fx(d, "flags", r->flags); fi(d, "priority", r->priority);
        fu(d, "corr", r->corr);
        break;
    }
    case SS_REC_CONTEXT: {
        const ss_context_rec *r = (const void *)h;
        begin(d, "context"); fu(d, "context", r->context_id); fu(d, "device", r->device); fu(d, "null_stream_id", r->null_stream_id);
        if (d->minor >= 9 && r->parent_id) fu(d, "green_parent", r->parent_id);
        break;
    }
    case SS_REC_NVTX: {
        const ss_nvtx_rec *r = (const void *)h;
        begin(d, "nvtx"); text_ref(d, &d->strings, r->name_id, "name");
        if (r->domain_id) text_ref(d, &d->strings, r->domain_id, "domain");
        fms(d, "start_ms", r->start); fdur(d, "dur_ms", r->start, r->end); fu(d, "tid", r->tid);
        fu(d, "depth", r->depth); fx(d, "color", r->color); fx(d, "flags", h->flags);
        break;
    }
    case SS_REC_NOTE: {
        const ss_note_rec *r = (const void *)h;
        begin(d, "note"); fu(d, "code", r->code); fu(d, "value", r->value); fms(d, "t_ms", r->time);
        if (tail_ok(h, sizeof *r, r->len)) fstr(d, "message", ss_rec_tail(h, sizeof *r), r->len);
        break;
    }
    case SS_REC_CLOCK: {
        const ss_clock_rec *r = (const void *)h;
        begin(d, "clock"); fu(d, "trace_ns", r->trace_ns); fu(d, "cupti_ns", r->cupti_ns);
        break;
    }
    case SS_REC_THREAD: {
        const ss_thread_rec *r = (const void *)h;
        begin(d, "thread"); fu(d, "tid", r->tid); fx(d, "pthread", r->pthread_self);
        if (tail_ok(h, sizeof *r, r->len)) fstr(d, "name", ss_rec_tail(h, sizeof *r), r->len);
        break;
    }
    case SS_REC_STACK: {
        const ss_stack_rec *r = (const void *)h;
        begin(d, "stack"); fu(d, "id", r->id); fu(d, "depth", r->depth);
        if (tail_ok(h, sizeof *r, 8ull * r->depth)) {
            const uint64_t *a = ss_rec_tail(h, sizeof *r);
            key(d, "addrs");
            if (d->json) ss_json_arr_begin(&d->j);
            for (uint32_t i = 0; i < r->depth; i++) {
                char b[32]; snprintf(b, sizeof b, "0x%" PRIx64, a[i]);
                if (d->json) ss_json_str(&d->j, b); else fprintf(d->out, "%s%s", i ? "," : "", b);
            }
            if (d->json) ss_json_arr_end(&d->j);
        }
        break;
    }
    case SS_REC_MODULE: {
        const ss_module_rec *r = (const void *)h;
        begin(d, "module"); fx(d, "base", r->base); fx(d, "size", r->size); fms(d, "t_ms", r->time);
        if (tail_ok(h, sizeof *r, (uint64_t)r->path_len + r->build_id_len)) {
            const char *t = ss_rec_tail(h, sizeof *r);
            fstr(d, "path", t, r->path_len);
            char hex[129] = "";
            for (uint32_t i = 0; i < r->build_id_len && i < 64; i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)t[r->path_len + i]);
            fstr(d, "build_id", hex, strlen(hex));
        }
        break;
    }
    case SS_REC_PYSTACK: {
        const ss_pystack_rec *r = (const void *)h;
        begin(d, "pystack"); fu(d, "id", r->id); fu(d, "depth", r->depth);
        if (tail_ok(h, sizeof *r, sizeof(ss_pyframe) * (uint64_t)r->depth)) {
            const ss_pyframe *f = ss_rec_tail(h, sizeof *r);
            key(d, "frames");
            if (d->json) ss_json_arr_begin(&d->j);
            for (uint32_t i = 0; i < r->depth; i++) {
                int64_t fi_ = ss_u64map_get(&d->strings, f[i].file_id, -1), fn = ss_u64map_get(&d->strings, f[i].func_id, -1);
                if (d->json) {
                    ss_json_obj_begin(&d->j);
                    ss_json_key(&d->j, "file"); if (fi_ >= 0) ss_json_strn(&d->j, d->texts[fi_], d->lens[fi_]); else ss_json_null(&d->j);
                    ss_json_kuint(&d->j, "line", f[i].line);
                    ss_json_key(&d->j, "function"); if (fn >= 0) ss_json_strn(&d->j, d->texts[fn], d->lens[fn]); else ss_json_null(&d->j);
                    ss_json_obj_end(&d->j);
                } else {
                    if (i) fputc(';', d->out);
                    if (fi_ >= 0) ss_escape_term(d->out, d->texts[fi_], d->lens[fi_]); else fputc('?', d->out);
                    fprintf(d->out, ":%u:", f[i].line);
                    if (fn >= 0) ss_escape_term(d->out, d->texts[fn], d->lens[fn]); else fputc('?', d->out);
                }
            }
            if (d->json) ss_json_arr_end(&d->j);
        }
        break;
    }
    case SS_REC_CUBIN: {
        /* the image itself is binary: say which one it is, never print it */
        const ss_cubin_rec *r = (const void *)h;
        begin(d, "cubin"); fx(d, "hash", r->hash); fu(d, "size", r->size); fu(d, "module", r->module_id);
        fms(d, "t_ms", r->time);
        break;
    }
    case SS_REC_KERNEL_ACCESS: {
        /* exact memory mode: what one launch read and wrote (absolute addresses) */
        const ss_kernel_access_rec *r = (const void *)h;
        begin(d, "kernel_access"); fu(d, "corr", r->corr); fu(d, "tid", r->tid); fms(d, "t_ms", r->t_enter);
        fu(d, "t_enter_ns", r->t_enter); fx(d, "func", r->func); fx(d, "flags", h->flags);
        fu(d, "nallocs", r->nallocs); fu(d, "outside_accesses", r->outside_accesses);
        if (r->nentries && tail_ok(h, sizeof *r, (uint64_t)r->nentries * sizeof(ss_kernel_access_entry))) {
            const ss_kernel_access_entry *e = ss_rec_tail(h, sizeof *r);
            key(d, "entries");
            if (d->json) ss_json_arr_begin(&d->j);
            for (uint32_t i = 0; i < r->nentries; i++) {
                if (d->json) {
                    ss_json_obj_begin(&d->j);
                    ss_json_key(&d->j, "word"); ss_json_uint(&d->j, e[i].word);
                    ss_json_key(&d->j, "offset"); ss_json_uint(&d->j, e[i].offset);
                    ss_json_key(&d->j, "flags"); ss_json_uint(&d->j, e[i].flags);
                    const char *names[] = { "value", "alloc_lo", "alloc_hi", "read_lo", "read_hi", "write_lo", "write_hi" };
                    const uint64_t vals[] = { e[i].value, e[i].alloc_lo, e[i].alloc_hi, e[i].read_lo, e[i].read_hi,
                                              e[i].write_lo, e[i].write_hi };
                    for (int k = 0; k < 7; k++) {
                        char b[32]; snprintf(b, sizeof b, "0x%" PRIx64, vals[k]);
                        ss_json_key(&d->j, names[k]); ss_json_str(&d->j, b);
                    }
                    ss_json_obj_end(&d->j);
                } else {
                    fprintf(d->out, "%s%u@%u:%s%s%s", i ? ";" : "", e[i].word, e[i].offset,
                            (e[i].flags & SS_KACCESS_E_READ) ? "r" : "", (e[i].flags & SS_KACCESS_E_WRITE) ? "w" : "",
                            (e[i].flags & SS_KACCESS_E_ATOMIC) ? "a" : "");
                    fprintf(d->out, "[0x%" PRIx64 ",0x%" PRIx64 ")r[0x%" PRIx64 ",0x%" PRIx64 ")w[0x%" PRIx64
                            ",0x%" PRIx64 ")", e[i].alloc_lo, e[i].alloc_hi, e[i].read_lo, e[i].read_hi,
                            e[i].write_lo, e[i].write_hi);
                }
            }
            if (d->json) ss_json_arr_end(&d->j);
        }
        break;
    }
    case SS_REC_HOST_SYNC: {
        /* a release/acquire of a host synchronization object (trace-format.md) */
        static const char *const whats[] = { "?", "mutex", "rwlock", "sem", "barrier", "thread_create",
                                             "thread_join", "omp_fork", "omp_join", "omp_barrier" };
        const ss_host_sync_rec *r = (const void *)h;
        const char *kind = h->flags == SS_HSYNC_RELEASE ? "release" : h->flags == SS_HSYNC_ACQUIRE ? "acquire" : "?";
        const char *what = r->what < sizeof whats / sizeof whats[0] ? whats[r->what] : "?";
        begin(d, "host_sync"); fstr(d, "kind", kind, strlen(kind)); fstr(d, "what", what, strlen(what));
        fu(d, "tid", r->tid); fms(d, "t_ms", r->time); fu(d, "t_ns", r->time); fx(d, "object", r->object);
        fu(d, "seq", r->seq);
        break;
    }
    case SS_REC_STREAM_NAME: {
        const ss_stream_name_rec *r = (const void *)h;
        begin(d, "stream_name"); fx(d, "stream", r->handle); text_ref(d, &d->strings, r->name_id, "name");
        fms(d, "t_ms", r->time); fu(d, "tid", r->tid);
        break;
    }
    case SS_REC_GRAPH_NODE: {
        static const char *const whats[] = { "?", "created", "cloned", "updated", "set_params" };
        const ss_graph_node_rec *r = (const void *)h;
        const char *what = h->flags < 5 ? whats[h->flags] : "?";
        begin(d, "graph_node"); fstr(d, "event", what, strlen(what)); fu(d, "node", r->node_id);
        if (r->orig_node_id) fu(d, "orig_node", r->orig_node_id);
        fu(d, "node_type", r->node_type); fu(d, "graph_id", r->graph_id);
        if (r->orig_graph_id) fu(d, "orig_graph_id", r->orig_graph_id);
        if (r->exec_id) fu(d, "exec_id", r->exec_id);
        fu(d, "tid", r->tid); fms(d, "t_ms", r->time);
        break;
    }
    case SS_REC_CAPTURE: {
        static const char *const reasons[] = { "?", "head_done", "window_open", "window_close", "forced_on" };
        const ss_capture_rec *r = (const void *)h;
        unsigned st = h->flags & SS_CAPTURE_STATE_MASK;
        const char *state = st == SS_CAPTURE_ON ? "on" : st == SS_CAPTURE_OFF ? "off" : "?";
        const char *why = r->reason < 5 ? reasons[r->reason] : "?";
        begin(d, "capture"); fstr(d, "state", state, strlen(state)); fstr(d, "reason", why, strlen(why));
        fu(d, "window", r->window); fu(d, "hot_calls", r->hot_calls);
        if (h->flags & SS_CAPTURE_F_COUNT_PARTIAL) fu(d, "count_partial", 1);
        fms(d, "t_ms", r->time);
        break;
    }
    case SS_REC_SHIM_PAUSE: {
        const ss_shim_pause_rec *r = (const void *)h;
        begin(d, "shim_pause"); fu(d, "tid", r->tid); fms(d, "t_ms", r->t0);
        fdur(d, "dur_ms", r->t0, r->t1);
        break;
    }
    case SS_REC_THREAD_CONTEXT: {
        const ss_thread_context_rec *r = (const void *)h;
        begin(d, "thread_context"); fu(d, "tid", r->tid); fu(d, "context", r->context_id); fms(d, "t_ms", r->t);
        break;
    }
    case SS_REC_JIT: {
        static const char *const entries[] = { "?", "ptx-to-cubin", "nvvm-ir-to-ptx" };
        static const char *const ops[] = { "?", "cache-load", "cache-store", "compile" };
        const ss_jit_rec *r = (const void *)h;
        const char *entry = r->entry_type < 3 ? entries[r->entry_type] : "?";
        const char *op = r->op_type < 4 ? ops[r->op_type] : "?";
        begin(d, "jit"); fstr(d, "op", op, strlen(op)); fstr(d, "entry", entry, strlen(entry));
        fms(d, "start_ms", r->g.start); fdur(d, "dur_ms", r->g.start, r->g.end); fu(d, "corr", r->g.corr);
        fu(d, "device", r->g.device); fu(d, "tid", r->tid); fu(d, "cache_size", r->cache_size);
        break;
    }
    default:
        begin(d, "unknown"); fu(d, "record_type", h->type); fu(d, "size", h->size);
        break;
    }
    end(d);
}

int ss_cmd_dump(int argc, char **argv)
{
    int json = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            puts("usage: syncsight dump [--json] FILE\n\n"
                 "Print every record of a trace, one line each, in file order: times in ms since the\n"
                 "trace started, API names and strings resolved, text escaped.  --json prints one JSON\n"
                 "object per line ({\"type\":\"api\",\"name\":...}).\n\n"
                 "exit status: 0 ok (a truncated trace is dumped up to its last complete block, with a\n"
                 "warning), 2 usage or input error");
            return 0;
        }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-' && argv[i][1]) { fprintf(stderr, "syncsight: dump: unknown option %s\n", argv[i]); return SS_EXIT_USAGE; }
        else if (path) { fputs("syncsight: dump: one trace file at a time\n", stderr); return SS_EXIT_USAGE; }
        else path = argv[i];
    }
    if (!path) { fputs("syncsight: dump: no trace given (see syncsight dump --help)\n", stderr); return SS_EXIT_USAGE; }
    char err[256] = "";
    int rc = ss_dump_file(stdout, stderr, path, json, err, sizeof err);
    if (rc) {
        fputs("syncsight: ", stderr); ss_escape_term(stderr, path, strlen(path)); fprintf(stderr, ": %s\n", err);
        return rc;
    }
    return fflush(stdout) != 0 ? SS_EXIT_USAGE : 0;
}

int ss_dump_file(FILE *out, FILE *warn, const char *path, int json, char *err, size_t errlen)
{
    ss_reader *r = ss_reader_open(path, err, errlen);
    if (!r) return SS_EXIT_USAGE;
    dumper d;
    memset(&d, 0, sizeof d);
    d.out = out;
    d.json = json;
    d.start_ns = ss_reader_header(r)->start_ns;
    /* pass 1: names and strings, which may follow their first use */
    const ss_rec_hdr *h;
    int st;
    while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
        if (h->type == SS_REC_API_NAME) {
            const ss_api_name_rec *a = (const void *)h;
            if (tail_ok(h, sizeof *a, a->len)) remember(&d, &d.names, a->cbid, ss_rec_tail(h, sizeof *a), a->len);
        } else if (h->type == SS_REC_STRING) {
            const ss_string_rec *s = (const void *)h;
            if (tail_ok(h, sizeof *s, s->len)) remember(&d, &d.strings, s->id, ss_rec_tail(h, sizeof *s), s->len);
        }
    }
    /* pass 2 on a second reader: the first one's mapping keeps the texts */
    ss_reader *r2 = ss_reader_open(path, err, errlen);
    int rc = 0;
    if (!r2) { snprintf(err, errlen, "cannot reopen the trace"); rc = SS_EXIT_USAGE; }
    else {
        const ss_file_header *fh = ss_reader_header(r2);
        d.minor = fh->version_major == SS_TRACE_VERSION_MAJOR ? fh->version_minor : 0;
        begin(&d, "header");
        fu(&d, "version_major", fh->version_major); fu(&d, "version_minor", fh->version_minor);
        fu(&d, "pid", fh->pid); fu(&d, "ppid", fh->ppid); fu(&d, "clock_id", fh->clock_id); fx(&d, "flags", fh->flags);
        fu(&d, "start_ns", fh->start_ns); fu(&d, "start_realtime_ns", fh->start_realtime_ns);
        fstr(&d, "hostname", fh->hostname, strnlen(fh->hostname, sizeof fh->hostname));
        fstr(&d, "shim_version", fh->shim_version, strnlen(fh->shim_version, sizeof fh->shim_version));
        end(&d);
        while ((st = ss_reader_next(r2, &h)) == SS_READ_OK) dump_record(&d, h);
        if (st == SS_READ_TRUNCATED) {
            fputs("syncsight: ", warn); ss_escape_term(warn, path, strlen(path));
            fprintf(warn, ": warning: truncated trace (%s); dumped up to its last complete block\n", ss_reader_error(r2));
        }
        ss_reader_close(r2);
    }
    ss_u64map_free(&d.names); ss_u64map_free(&d.strings);
    free(d.texts); free(d.lens);
    ss_reader_close(r);
    return rc;
}
