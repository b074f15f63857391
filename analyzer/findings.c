/* Findings: folding by call site, severities, ranking (see findings.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "rule.h"
#include "escape.h"
#include "util.h"
/* Call sites come from engineer C's symbolizer (analyzer/symbolize.c, always
 * linked into the analyzer); the module+offset code below is only used when
 * it cannot be created.  Define SS_NO_SYMBOLIZER to build without it. */
#ifndef SS_NO_SYMBOLIZER
#define SS_HAVE_SYMBOLIZER 1
#include "symbolize.h"
#include "callsite_view.h"
#endif

struct ss_sitemap { ss_u64map map; };

const char *ss_severity_name(ss_severity s)
{
    return s == SS_SEV_ERROR ? "error" : s == SS_SEV_WARNING ? "warning" : "info";
}

int ss_severity_parse(const char *s, ss_severity *out)
{
    if (!strcmp(s, "info")) *out = SS_SEV_INFO;
    else if (!strcmp(s, "warning")) *out = SS_SEV_WARNING;
    else if (!strcmp(s, "error")) *out = SS_SEV_ERROR;
    else return -1;
    return 0;
}

char *ss_strdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    char *s = ss_xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void ss_findings_init(ss_findings *f)
{
    memset(f, 0, sizeof *f);
    f->fold = ss_xcalloc(1, sizeof(struct ss_sitemap));
}

static void free_symbolizer(ss_findings *f)
{
#ifdef SS_HAVE_SYMBOLIZER
    if (f->sym) ss_symbolizer_free(f->sym);
#endif
    f->sym = NULL;
    f->sym_model = NULL;
}

void ss_findings_free(ss_findings *f)
{
    for (uint32_t i = 0; i < f->n; i++) {
        ss_finding *x = &f->v[i];
        free(x->cost_basis); free(x->message); free(x->fix); free(x->site); free(x->site_key);
    }
    free(f->v);
    free(f->unresolved_why);
    if (f->fold) { ss_u64map_free(&f->fold->map); free(f->fold); }
    free_symbolizer(f);
    memset(f, 0, sizeof *f);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

/* -------------------------------------------------------------- call sites */

/* Module containing addr (from SS_REC_MODULE), for the fallback without a
 * symbolizer. */
static const ss_module_rec *module_of(const ss_model *m, uint64_t addr)
{
    for (uint32_t i = 0; i < m->nmodules; i++) {
        const ss_module_rec *r = m->modules[i];
        if (addr >= r->base && addr - r->base < r->size) return r;
    }
    return NULL;
}

static int path_is_system(const char *p, size_t n)
{
    static const char *const sys[] = { "libcudart", "libcuda.", "libcupti", "libsanitizer-public", "libsyncsight", "libc.so",
                                       "libc-", "libstdc++", "ld-linux", "libpthread", "libpython",
                                       "/python", "libtorch", "libc10", "site-packages/torch/", NULL };
    for (int i = 0; sys[i]; i++) {
        size_t k = strlen(sys[i]);
        for (size_t j = 0; j + k <= n; j++)
            if (!memcmp(p + j, sys[i], k)) return 1;
    }
    return 0;
}

#ifdef SS_HAVE_SYMBOLIZER
static void ensure_symbolizer(ss_findings *f, const ss_model *m)
{
    if (f->sym_model == m && f->sym) return;
    free_symbolizer(f);
    f->sym = ss_symbolizer_new();
    f->sym_model = m;
    for (uint32_t i = 0; f->sym && i < m->nmetas; i++) {   /* META cwd: see ss_symbolizer_set_cwd */
        const ss_meta_rec *r = m->metas[i];
        const char *k = ss_rec_tail(&r->h, sizeof(*r));
        if ((uint64_t)sizeof(*r) + r->key_len + 1 + r->value_len <= r->h.size && r->key_len == 3 && !memcmp(k, "cwd", 3))
            ss_symbolizer_set_cwd(f->sym, k + r->key_len + 1, r->value_len);
    }
    for (uint32_t i = 0; f->sym && i < m->nmodules; i++) {
        const ss_module_rec *r = m->modules[i];
        if (sizeof(*r) + (uint64_t)r->path_len + r->build_id_len > r->h.size) continue;
        const char *tail = ss_rec_tail(&r->h, sizeof(*r));
        char *path = ss_xcalloc(r->path_len + 1, 1);
        memcpy(path, tail, r->path_len);
        ss_symbolizer_add_module(f->sym, path, r->base, r->size,
                                 (const uint8_t *)tail + r->path_len, r->build_id_len);
        free(path);
    }
}
#endif

/* One frame as display text; *is_user says whether it is the user's code. */
static void frame_text(ss_findings *f, const ss_model *m, uint64_t addr, int innermost,
                       char *out, size_t outlen, int *is_user)
{
#ifdef SS_HAVE_SYMBOLIZER
    ensure_symbolizer(f, m);
    if (f->sym) {
        ss_frame fr[8];
        /* return addresses point after the call: look up addr-1 above the innermost */
        size_t n = ss_symbolizer_resolve(f->sym, innermost ? addr : addr - 1, fr, 8);
        if (n > 0) {
            /* inlined chain innermost first: name the innermost user frame */
            const ss_frame *x = &fr[n - 1];
            for (size_t i = 0; i < n; i++) if (fr[i].is_user) { x = &fr[i]; break; }
            *is_user = x->is_user;
            char raw[1024];
            ss_frame_format(x, raw, sizeof raw);
            ss_escape_term_buf(out, outlen, raw, strlen(raw));
            return;
        }
    }
#else
    (void)f; (void)innermost;
#endif
    const ss_module_rec *mod = module_of(m, addr);
    if (!mod || sizeof(*mod) + (uint64_t)mod->path_len > mod->h.size) {
        snprintf(out, outlen, "0x%llx", (unsigned long long)addr);
        *is_user = 0;
        return;
    }
    const char *path = ss_rec_tail(&mod->h, sizeof(*mod));
    size_t n = mod->path_len;
    const char *base = path;
    for (size_t i = 0; i < n; i++) if (path[i] == '/') base = path + i + 1;
    char mb[256];
    ss_escape_term_buf(mb, sizeof mb, base, n - (size_t)(base - path));
    snprintf(out, outlen, "%s+0x%llx", mb, (unsigned long long)(addr - mod->base));
    *is_user = !path_is_system(path, n);
}

void ss_findings_stack_frames(ss_findings *f, const ss_model *m, uint32_t stack_id,
                              ss_frame_cb cb, void *ctx)
{
    const ss_stack_rec *s = ss_model_stack(m, stack_id);
    if (!s) return;
    const uint64_t *addrs = ss_rec_tail(&s->h, sizeof(*s));
    for (uint32_t i = 0; i < s->depth; i++) {
        char text[1024];
        int user = 0;
        frame_text(f, m, addrs[i], i == 0, text, sizeof text, &user);
        cb(ctx, text, user);
    }
}

static int py_is_user(const char *file, uint32_t len)
{
#ifdef SS_HAVE_SYMBOLIZER
    char buf[512];
    size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
    memcpy(buf, file, n);
    buf[n] = 0;
    return ss_pyfile_is_user(buf);
#else
    return len > 0 && file[0] != '<' && !path_is_system(file, len);
#endif
}

/* First user frame of a Python stack (innermost first), else the innermost. */
static int python_site(const ss_model *m, uint32_t pystack_id, char *out, size_t outlen)
{
    const ss_pystack_rec *p = ss_model_pystack(m, pystack_id);
    if (!p || !p->depth) return 0;
    const ss_pyframe *fr = ss_rec_tail(&p->h, sizeof(*p));
    uint32_t pick = 0;
    for (uint32_t i = 0; i < p->depth; i++) {
        ss_string_ref file = ss_model_string(m, fr[i].file_id);
        if (file.s && py_is_user(file.s, file.len)) { pick = i; break; }
    }
    ss_string_ref file = ss_model_string(m, fr[pick].file_id), fn = ss_model_string(m, fr[pick].func_id);
    char fb[384], nb[256];
    ss_escape_term_buf(fb, sizeof fb, file.s ? file.s : "?", file.s ? file.len : 1);
    ss_escape_term_buf(nb, sizeof nb, fn.s ? fn.s : "?", fn.s ? fn.len : 1);
    snprintf(out, outlen, "%s:%u %s", fb, fr[pick].line, nb);
    return 1;
}

const char *ss_stream_describe(const ss_model *m, int32_t stream, char *buf, size_t len)
{
    if (stream < 0 || (uint32_t)stream >= m->nstreams) { snprintf(buf, len, "no stream"); return buf; }
    const ss_stream *s = &m->streams[stream];
    uint64_t handle = s->handle;
    if (s->kind == SS_STREAM_LEGACY_NULL) handle = 0;
    snprintf(buf, len, "stream 0x%llx (%s)", (unsigned long long)handle, ss_stream_kind_name(s->kind));
    return buf;
}

#ifdef SS_HAVE_SYMBOLIZER
static int site_has_line(const char *site);

/* The first site that stayed module+offset keeps why ("module: problem"). */
static void note_unresolved(ss_findings *f, uint64_t addr, char **why)
{
    if (*why) return;
    ss_frame fr[8];
    size_t n = ss_symbolizer_resolve(f->sym, addr, fr, 8);
    const char *module = n ? fr[n - 1].module : NULL;
    const char *problem = module ? ss_symbolizer_module_problem(f->sym, module) : "address in no module of the trace";
    const char *base = module ? strrchr(module, '/') : NULL;
    char raw[1024];
    snprintf(raw, sizeof raw, "%s: %s", module ? (base ? base + 1 : module) : "?",
             problem ? problem : "no line information at this address (built without -g?)");
    char text[1536];
    ss_escape_term_buf(text, sizeof text, raw, strlen(raw));
    *why = ss_strdup_printf("%s", text);
}
#endif

/* Site of a call: first user frame, else innermost Python frame, else API +
 * stream.  *why is set when the user's native frame has no file:line. */
static void call_site(ss_findings *f, const ss_model *m, const ss_call *c, char *out, size_t outlen, char **why)
{
    char py[1024];
    int have_py = python_site(m, c->rec->pystack_id, py, sizeof py);
    const ss_stack_rec *s = ss_model_stack(m, c->rec->stack_id);
#ifdef SS_HAVE_SYMBOLIZER
    if (s) {
        ensure_symbolizer(f, m);
        char raw[1024];
        const uint64_t *addrs = ss_rec_tail(&s->h, sizeof(*s));
        int at = f->sym ? ss_site_format(f->sym, addrs, s->depth, raw, sizeof raw) : -1;
        if (at >= 0) {
            if (!site_has_line(raw)) note_unresolved(f, addrs[at], why);
            ss_escape_term_buf(out, outlen, raw, strlen(raw));
            return;
        }
    }
#else
    (void)why;
#endif
    if (s) {
        const uint64_t *addrs = ss_rec_tail(&s->h, sizeof(*s));
        for (uint32_t i = 0; i < s->depth; i++) {
            int user = 0;
            frame_text(f, m, addrs[i], i == 0, out, outlen, &user);
            if (user) return;
        }
    }
    if (have_py) { snprintf(out, outlen, "%s", py); return; }
    char sd[96], nm[160];
    const char *name = ss_model_call_name(m, c);
    ss_escape_term_buf(nm, sizeof nm, name, strlen(name));
    if (c->stream >= 0)
        snprintf(out, outlen, "%s on %s", nm, ss_stream_describe(m, c->stream, sd, sizeof sd));
    else
        snprintf(out, outlen, "%s", nm);
}

/* A call made inside a collective library's own API (NCCL marks each of
 * its calls with an NVTX range "nccl..."): the user cannot change that code,
 * so its findings are reported as info, folded apart, and say where they
 * come from.  Returns the range name or NULL. */
static int library_range(const ss_model *m, const ss_call *c, char *name, size_t namelen)
{
    const ss_nvtx_rec *r = ss_model_nvtx_at(m, c->rec->tid, c->rec->t_enter, c->rec->t_exit);
    if (!r)
        return 0;
    ss_string_ref s = ss_model_string(m, r->name_id);
    if (!s.s || s.len < 4 || strncmp(s.s, "nccl", 4) != 0)
        return 0;
    ss_escape_term_buf(name, namelen, s.s, s.len < 120 ? s.len : 120);
    return 1;
}

/* "file:line function": a site resolved to the user's source. */
static int site_has_line(const char *site)
{
    const char *colon = strrchr(site, ':');
    while (colon && colon > site) {
        const char *p = colon + 1;
        if (*p >= '0' && *p <= '9') {
            while (*p >= '0' && *p <= '9') p++;
            if (*p == ' ' || *p == '\0') return 1;
        }
        const char *prev = colon;
        colon = NULL;
        for (const char *q = site; q < prev; q++) if (*q == ':') colon = q;
    }
    return 0;
}

void ss_findings_add(ss_findings *f, const ss_model *m, const ss_occurrence *o)
{
    char site[1024] = "(no call)";
    const ss_call *c = NULL;
    char lib[160];
    int in_library = o->nrefs && o->refs[0].call >= 0 &&
                     library_range(m, &m->calls[o->refs[0].call], lib, sizeof lib);
    char *unresolved = NULL;
    if (o->nrefs && o->refs[0].call >= 0) {
        c = &m->calls[o->refs[0].call];
        call_site(f, m, c, site, sizeof site, &unresolved);
    } else if (o->nrefs && o->refs[0].op >= 0) {
        char sd[96];
        ss_string_ref nm = ss_model_op_name(m, &m->ops[o->refs[0].op]);
        char nb[256];
        ss_escape_term_buf(nb, sizeof nb, nm.s, nm.len);
        snprintf(site, sizeof site, "%s on %s", nb, ss_stream_describe(m, m->ops[o->refs[0].op].stream, sd, sizeof sd));
    }
    /* Fold by call site.  When the site could not be resolved to a source
     * line (no binary, no debug info), the text falls back to a module
     * offset or an API name that many call sites share: the recorded stack
     * then tells the sites apart. */
    uint32_t stack_key = 0;
    if (c && !site_has_line(site))
        stack_key = c->rec->pystack_id ? 0x80000000u | c->rec->pystack_id : c->rec->stack_id;
    char *key = ss_strdup_printf("%s|%u|%s|%s|%u%s", o->rule, m->hdr.pid, site,
                                 o->site_extra ? o->site_extra : "", stack_key, in_library ? "|lib" : "");
    uint64_t h = hash_str(key);
    int64_t *slot = ss_u64map_find(&f->fold->map, h);
    /* a hash collision between different keys falls back to a new finding */
    if (slot && !strcmp(f->v[*slot].site_key, key)) {
        ss_finding *x = &f->v[*slot];
        x->count++;
        x->cost_ms += o->cost_ms;
        free(key);
        free(unresolved);
        return;
    }
    if (unresolved) {
        f->unresolved_sites++;
        if (!f->unresolved_why) f->unresolved_why = unresolved;
        else free(unresolved);
    }
    ss_finding x;
    memset(&x, 0, sizeof x);
    x.rule = o->rule;
    x.severity = in_library ? SS_SEV_INFO : o->severity;
    x.fixed_severity = in_library || o->fixed_severity;
    x.cost_ms = o->cost_ms;
    x.cost_basis = ss_strdup_printf("%s", o->cost_basis ? o->cost_basis : "");
    x.message = in_library ? ss_strdup_printf("inside NCCL (%s), not in your code: %s", lib, o->message ? o->message : "")
                           : ss_strdup_printf("%s", o->message ? o->message : "");
    x.fix = ss_strdup_printf("%s", o->fix ? o->fix : "");
    x.count = 1;
    x.site = ss_strdup_printf("%s", site);
    x.site_key = key;
    x.stack_id = c ? (int32_t)c->rec->stack_id : 0;
    x.pystack_id = c ? (int32_t)c->rec->pystack_id : 0;
    x.nrefs = o->nrefs > SS_FINDING_MAX_REFS ? SS_FINDING_MAX_REFS : o->nrefs;
    memcpy(x.refs, o->refs, sizeof(ss_finding_ref) * x.nrefs);
    x.alloc = o->alloc;
    x.pid = m->hdr.pid;
    x.model = m;
    SS_PUSH(f->v, f->n, f->cap, x);
    if (!slot) ss_u64map_put(&f->fold->map, h, f->n - 1);
}

static int cmp_finding(const void *a, const void *b)
{
    const ss_finding *x = a, *y = b;
    if (x->severity != y->severity) return x->severity > y->severity ? -1 : 1;
    if (x->cost_ms != y->cost_ms) return x->cost_ms > y->cost_ms ? -1 : 1;
    int r = strcmp(x->rule, y->rule);
    return r ? r : strcmp(x->site_key, y->site_key);
}

void ss_findings_finish(ss_findings *f, uint64_t wall_ns)
{
    double wall_ms = (double)wall_ns / 1e6;
    for (uint32_t i = 0; i < f->n; i++) {
        ss_finding *x = &f->v[i];
        if (x->fixed_severity) continue;
        x->severity = (x->cost_ms >= 1.0 || (wall_ms > 0 && x->cost_ms >= 0.01 * wall_ms))
                      ? SS_SEV_WARNING : SS_SEV_INFO;
    }
    ss_qsort(f->v, f->n, sizeof(ss_finding), cmp_finding);
    /* the fold map indexes are stale after sorting: no adds after finish */
    ss_u64map_free(&f->fold->map);
}
