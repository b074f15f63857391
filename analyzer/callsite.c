/* Call sites of a model's calls (see callsite.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "callsite.h"
#include "util.h"

/* The symbolizer is a cache (addresses resolved, modules opened) and the
 * rules, which name call sites in their messages, run on several threads at
 * once: every use of it here holds this lock.  Its answers stay valid after
 * (the strings it hands out live as long as it does). */
static pthread_mutex_t symbolizer_lock = PTHREAD_MUTEX_INITIALIZER;

static ss_symbolizer *model_symbolizer_locked(const ss_model *m)
{
    /* created on first use and freed by ss_model_free(), like the kernel
     * access cache: reports that show no stack never open a module */
    ss_model *mm = (ss_model *)m;
    if (mm->symbolizer) return mm->symbolizer;
    ss_symbolizer *s = ss_symbolizer_new();
    if (!s) {
        fputs("syncsight: out of memory\n", stderr);
        exit(2);
    }
    /* addr2line prints file names joined with the compilation directory:
     * the symbolizer shows those under the program's cwd relative to it. */
    ss_string_ref cwd = ss_model_meta(m, "cwd");
    if (cwd.s) ss_symbolizer_set_cwd(s, cwd.s, cwd.len);
    for (uint32_t i = 0; i < m->nmodules; i++) {
        const ss_module_rec *r = m->modules[i];
        if (sizeof(*r) + (uint64_t)r->path_len + r->build_id_len > r->h.size) continue;
        const char *tail = ss_rec_tail(&r->h, sizeof(*r));
        char *path = ss_xcalloc(r->path_len + 1, 1);
        memcpy(path, tail, r->path_len);
        ss_symbolizer_add_module(s, path, r->base, r->size, (const uint8_t *)tail + r->path_len, r->build_id_len);
        free(path);
    }
    mm->symbolizer = s;
    return s;
}

ss_symbolizer *ss_model_symbolizer(const ss_model *m)
{
    pthread_mutex_lock(&symbolizer_lock);
    ss_symbolizer *s = model_symbolizer_locked(m);
    pthread_mutex_unlock(&symbolizer_lock);
    return s;
}

void ss_call_site(const ss_model *m, int32_t call, ss_site *site)
{
    memset(site, 0, sizeof *site);
    site->call = call;
    site->op = -1;
    if (call < 0 || (uint32_t)call >= m->ncalls) return;
    const ss_call *c = &m->calls[call];
    site->kind = SS_SITE_CALL;
    const ss_stack_rec *s = ss_model_stack(m, c->rec->stack_id);
    if (s) {
        pthread_mutex_lock(&symbolizer_lock);
        int found = ss_stack_site(model_symbolizer_locked(m), ss_rec_tail(&s->h, sizeof(*s)), s->depth, &site->native);
        pthread_mutex_unlock(&symbolizer_lock);
        if (found >= 0) {
            site->kind = SS_SITE_NATIVE;
            return;
        }
    }
    const ss_pystack_rec *p = ss_model_pystack(m, c->rec->pystack_id);
    if (p && p->depth) {
        const ss_pyframe *fr = ss_rec_tail(&p->h, sizeof(*p));
        uint32_t pick = 0;
        for (uint32_t i = 0; i < p->depth; i++) {
            ss_string_ref file = ss_model_string(m, fr[i].file_id);
            if (file.s && ss_pyfile_is_user(file.s, file.len)) { pick = i; break; }
        }
        site->kind = SS_SITE_PYTHON;
        site->py_file = ss_model_string(m, fr[pick].file_id);
        site->py_function = ss_model_string(m, fr[pick].func_id);
        site->py_line = fr[pick].line;
    }
}

void ss_op_site(const ss_model *m, int32_t op, ss_site *site)
{
    memset(site, 0, sizeof *site);
    site->call = -1;
    site->op = op;
    if (op >= 0 && (uint32_t)op < m->nops) site->kind = SS_SITE_OP;
}

void ss_site_text(const ss_model *m, const ss_site *site, char *buf, size_t len)
{
    if (!len) return;
    char sd[96];
    switch (site->kind) {
    case SS_SITE_NATIVE:
        ss_frame_format(&site->native, buf, len);
        return;
    case SS_SITE_PYTHON:
        snprintf(buf, len, "%.*s:%u %.*s", site->py_file.s ? (int)site->py_file.len : 1,
                 site->py_file.s ? site->py_file.s : "?", site->py_line,
                 site->py_function.s ? (int)site->py_function.len : 1,
                 site->py_function.s ? site->py_function.s : "?");
        return;
    case SS_SITE_CALL: {
        const ss_call *c = &m->calls[site->call];
        if (c->stream >= 0)
            snprintf(buf, len, "%s on %s", ss_model_call_name(m, c), ss_stream_describe(m, c->stream, sd, sizeof sd));
        else
            snprintf(buf, len, "%s", ss_model_call_name(m, c));
        return;
    }
    case SS_SITE_OP: {
        const ss_gpu_op *op = &m->ops[site->op];
        ss_string_ref nm = ss_model_op_name(m, op);
        snprintf(buf, len, "%.*s on %s", (int)nm.len, nm.s, ss_stream_describe(m, op->stream, sd, sizeof sd));
        return;
    }
    case SS_SITE_NONE:
        break;
    }
    snprintf(buf, len, "(no call)");
}

typedef struct library_walk {
    const char *module, *function;   /* the library frame furthest out so far */
    int done, found;
    int header;                      /* it is a header library's (ss_header_library): module is its name */
} library_walk;

static void library_visit(void *ctx, uint32_t i, const ss_frame *f, int is_user)
{
    (void)i;
    library_walk *w = ctx;
    if (w->done) return;
    if (!f->module) { w->done = 1; return; }          /* cannot tell what follows */
    if (is_user) {
        /* a header library's code inlined into the user's line (the
         * thrust::reduce the compiler folded into main) is further out
         * than any of its frames that were real calls */
        if (f->header_lib) { w->module = f->header_lib; w->function = f->header_fn; w->header = 1; }
        w->found = w->module != NULL;
        w->done = 1;
        return;
    }
    /* a header library's function the compiler did not inline: in the
     * user's binary, not the user's code */
    const char *hl = ss_module_is_user(f->module) ? ss_header_library(f->file) : NULL;
    if (hl) { w->module = hl; w->function = f->function; w->header = 1; return; }
    /* the user's own binary (its static cudart, nvcc's stubs) and the
     * plumbing are passed through */
    if (ss_module_is_user(f->module) || ss_module_is_plumbing(f->module)) return;
    w->module = f->module;
    w->function = f->function;
}

/* ss_call_cuda_library: from the innermost frame, past the plumbing, the
 * frames of one NVIDIA CUDA library, up to the first frame that is none of
 * them (the framework, the program, or libstdc++'s thread start on
 * PyTorch's autograd threads). */
static void cuda_library_visit(void *ctx, uint32_t i, const ss_frame *f, int is_user)
{
    (void)i; (void)is_user;
    library_walk *w = ctx;
    if (w->done) return;
    if (!f->module) { w->done = 1; return; }   /* an unknown frame: the library frames end here */
    if (!w->module && ss_module_is_plumbing(f->module)) return;
    if (ss_module_cuda_library(f->module) &&
        (!w->module || ss_module_cuda_library(w->module) == ss_module_cuda_library(f->module))) {
        w->module = f->module;
        w->function = f->function;
        w->found = 1;
        return;
    }
    w->done = 1;   /* the framework (or the end of the library's frames) */
}

/* ss_call_maker: the innermost frame past the plumbing, whoever's it is;
 * found only when it is not the user's module (a library, a framework). */
static void maker_visit(void *ctx, uint32_t i, const ss_frame *f, int is_user)
{
    (void)i; (void)is_user;
    library_walk *w = ctx;
    if (w->done) return;
    if (!f->module) { w->done = 1; return; }   /* an unknown frame: cannot tell */
    if (ss_module_is_plumbing(f->module)) return;
    w->done = 1;
    w->found = 1;
    if (ss_module_is_user(f->module)) return;   /* found, no module: the user's */
    w->module = f->module;
    w->function = f->function;
}

/* The Python framework a module belongs to, from its path: its compiled
 * code (PyTorch's libtorch and c10 libraries, CuPy's Cython modules under
 * cupy/ and cupy_backends/), or NULL. */
static const char *framework_of_module(const char *module)
{
    if (strstr(module, "/cupy/") || strstr(module, "/cupy_backends/")) return "CuPy";
    const char *b = strrchr(module, '/');
    b = b ? b + 1 : module;
    if (!strncmp(b, "libtorch", 8) || !strncmp(b, "libc10", 6) || strstr(module, "/torch/")) return "PyTorch";
    return NULL;
}

/* ss_call_framework: the innermost frame in a framework's module */
static void framework_visit(void *ctx, uint32_t i, const ss_frame *f, int is_user)
{
    (void)i; (void)is_user;
    library_walk *w = ctx;
    if (w->done || !f->module) return;   /* an unknown frame: look further out */
    const char *fw = framework_of_module(f->module);
    if (!fw) return;
    w->module = fw;
    w->function = f->function;
    w->found = 1;
    w->done = 1;
}

typedef struct library_entry { char lib[96], fn[160]; } library_entry;
struct ss_library_cache {
    ss_u64map by_stack;   /* stack id -> index in v, or -1: made by the user's code */
    library_entry *v;
    uint32_t n, cap;
};

static void library_cache_free(struct ss_library_cache *c)
{
    if (!c) return;
    ss_u64map_free(&c->by_stack);
    free(c->v);
    free(c);
}

/* Walk call's native stack with `visit` (mode: which walk, part of the
 * cache key: 0 ss_call_library, 1 ss_call_cuda_library, 2 ss_call_maker,
 * 3 ss_call_framework), the result cached per stack. */
static int walk_library(const ss_model *m, int32_t call, int mode, char *lib, size_t liblen, char *fn, size_t fnlen)
{
    int none = mode == 2 ? -1 : 0;   /* no native stack says (ss_call_maker: -1) */
    if (liblen) lib[0] = '\0';
    if (fnlen) fn[0] = '\0';
    if (call < 0 || (uint32_t)call >= m->ncalls) return none;
    const ss_api_rec *rec = m->calls[call].rec;
    if (!rec->stack_id || (mode == 0 && rec->pystack_id)) return none;
    const ss_stack_rec *s = ss_model_stack(m, rec->stack_id);
    if (!s) return none;
    ss_model *mm = (ss_model *)m;   /* a cache the model frees, like the symbolizer */
    pthread_mutex_lock(&symbolizer_lock);
    if (!mm->library_cache) {
        mm->library_cache = ss_xcalloc(1, sizeof(struct ss_library_cache));
        mm->library_cache_free = library_cache_free;
    }
    struct ss_library_cache *c = mm->library_cache;
    uint64_t key = 4 * (uint64_t)rec->stack_id + (uint64_t)mode;
    int64_t k = ss_u64map_get(&c->by_stack, key, -2);
    if (k == -2) {
        library_walk w = { 0 };
        ss_stack_walk(model_symbolizer_locked(m), ss_rec_tail(&s->h, sizeof(*s)), s->depth,
                      mode == 3 ? framework_visit : mode == 2 ? maker_visit : mode ? cuda_library_visit : library_visit,
                      &w);
        k = -1;
        if (w.found) {
            library_entry e;
            const char *b = w.module ? strrchr(w.module, '/') : NULL;
            snprintf(e.lib, sizeof e.lib, "%s", b ? b + 1 : w.module ? w.module : "");
            if (w.header) ss_function_short(w.function, e.fn, sizeof e.fn);   /* the call as written */
            else snprintf(e.fn, sizeof e.fn, "%s", w.function ? w.function : "");
            k = c->n;
            SS_PUSH(c->v, c->n, c->cap, e);
        }
        ss_u64map_put(&c->by_stack, key, k);
    }
    int r = none;
    if (k >= 0) {
        snprintf(lib, liblen, "%s", c->v[k].lib);
        snprintf(fn, fnlen, "%s", c->v[k].fn);
        r = c->v[k].lib[0] != '\0';   /* empty: ss_call_maker found the user's module */
    }
    pthread_mutex_unlock(&symbolizer_lock);
    return r;
}

int ss_call_library(const ss_model *m, int32_t call, char *lib, size_t liblen, char *fn, size_t fnlen)
{
    return walk_library(m, call, 0, lib, liblen, fn, fnlen);
}

int ss_call_cuda_library(const ss_model *m, int32_t call, char *lib, size_t liblen, char *fn, size_t fnlen)
{
    return walk_library(m, call, 1, lib, liblen, fn, fnlen);
}

int ss_call_maker(const ss_model *m, int32_t call, char *lib, size_t liblen, char *fn, size_t fnlen)
{
    return walk_library(m, call, 2, lib, liblen, fn, fnlen);
}

int ss_call_framework(const ss_model *m, int32_t call, char *name, size_t len)
{
    return walk_library(m, call, 3, name, len, NULL, 0) > 0;
}

static int same_ref(ss_string_ref a, ss_string_ref b)
{
    return a.len == b.len && (a.s == b.s || (a.s && b.s && !memcmp(a.s, b.s, a.len)));
}

int ss_call_python_library(const ss_model *m, int32_t call, char *pkg, size_t pkglen, char *where, size_t wlen)
{
    if (call < 0 || (uint32_t)call >= m->ncalls) return 0;
    const ss_call *c = &m->calls[call];
    if (ss_call_host_wait(m, c) == SS_WAIT_NONE) return 0;   /* only a host wait: who chose to wait */
    const ss_pystack_rec *p = ss_model_pystack(m, c->rec->pystack_id);
    if (!p || p->depth < 3) return 0;
    const ss_pyframe *fr = ss_rec_tail(&p->h, sizeof(*p));
    uint32_t user = p->depth, api = p->depth;
    for (uint32_t i = 0; i < p->depth && user == p->depth; i++) {
        ss_string_ref f = ss_model_string(m, fr[i].file_id);
        if (f.s && ss_pyfile_is_user(f.s, f.len)) user = i;
        else if (api == p->depth && f.s && f.len && f.s[0] != '<') api = i;   /* not a generated <string> frame */
    }
    if (user == p->depth || api >= user) return 0;
    /* the innermost frame is the framework's synchronize API
     * (torch.cuda.synchronize, Stream.synchronize, Event.synchronize) */
    ss_string_ref fn0 = ss_model_string(m, fr[api].func_id);
    static const char sync[] = "synchronize";
    size_t sl = sizeof sync - 1;
    if (!fn0.s || fn0.len < sl || memcmp(fn0.s + fn0.len - sl, sync, sl) ||
        (fn0.len > sl && fn0.s[fn0.len - sl - 1] != '.'))
        return 0;
    ss_string_ref apifile = ss_model_string(m, fr[api].file_id);
    for (uint32_t i = api + 1; i < user; i++) {
        ss_string_ref f = ss_model_string(m, fr[i].file_id);
        if (!f.s || !f.len || f.s[0] == '<' || same_ref(f, apifile)) continue;
        /* the caller of the API: the user's compiled code (torch.compile's
         * output), or the framework's own machinery */
        if (ss_pyfile_is_generated(f.s, f.len)) return 0;
        size_t rn;
        const char *rel = ss_pyfile_package_path(f.s, f.len, &rn);
        const char *slash = rel != f.s ? memchr(rel, '/', rn) : NULL;   /* the package: its first directory */
        ss_string_ref fn = ss_model_string(m, fr[i].func_id);
        snprintf(pkg, pkglen, "%.*s", (int)(slash ? (size_t)(slash - rel) : rn < 80 ? rn : 80), rel);
        snprintf(where, wlen, "%.*s:%u %.*s", (int)(rn < 200 ? rn : 200), rel, fr[i].line,
                 (int)(fn.len < 120 ? fn.len : 120), fn.s ? fn.s : "");
        return 1;
    }
    return 0;   /* the user's line called the API itself */
}

int ss_site_source(const ss_site *site, const char **file, size_t *file_len, uint32_t *line)
{
    if (site->kind == SS_SITE_NATIVE && site->native.file && site->native.file[0] && site->native.line > 0) {
        *file = site->native.file;
        *file_len = strlen(site->native.file);
        *line = (uint32_t)site->native.line;
        return 1;
    }
    if (site->kind == SS_SITE_PYTHON && site->py_file.s && site->py_file.len && site->py_line > 0) {
        *file = site->py_file.s;
        *file_len = site->py_file.len;
        *line = site->py_line;
        return 1;
    }
    return 0;
}

int ss_site_unresolved(const ss_model *m, const ss_site *site, char *why, size_t len)
{
    if (site->kind != SS_SITE_NATIVE || (site->native.file && site->native.file[0] && site->native.line > 0))
        return 0;
    const char *module = site->native.module;
    const char *problem = "address in no module of the trace";
    if (module) {
        pthread_mutex_lock(&symbolizer_lock);
        problem = ss_symbolizer_module_problem(model_symbolizer_locked(m), module);
        pthread_mutex_unlock(&symbolizer_lock);
    }
    const char *base = module ? strrchr(module, '/') : NULL;
    if (len)
        snprintf(why, len, "%s: %s", module ? (base ? base + 1 : module) : "?",
                 problem ? problem : "no line information at this address (built without -g?)");
    return 1;
}

/* For the renderers, after the rules: on one thread (visit may ask the
 * symbolizer again, so the lock is not held around it). */
void ss_model_stack_walk(const ss_model *m, uint32_t stack_id, ss_frame_visit visit, void *ctx)
{
    const ss_stack_rec *s = ss_model_stack(m, stack_id);
    if (s) ss_stack_walk(ss_model_symbolizer(m), ss_rec_tail(&s->h, sizeof(*s)), s->depth, visit, ctx);
}

void ss_model_pystack_walk(const ss_model *m, uint32_t pystack_id, ss_pyframe_visit visit, void *ctx)
{
    const ss_pystack_rec *p = ss_model_pystack(m, pystack_id);
    if (!p) return;
    const ss_pyframe *fr = ss_rec_tail(&p->h, sizeof(*p));
    for (uint32_t i = 0; i < p->depth; i++) {
        ss_string_ref file = ss_model_string(m, fr[i].file_id), fn = ss_model_string(m, fr[i].func_id);
        visit(ctx, i, file, fr[i].line, fn, file.s && ss_pyfile_is_user(file.s, file.len));
    }
}

int ss_model_source_line(const ss_model *m, const char *file, size_t flen, uint32_t line, char *buf, size_t len)
{
    if (!flen || !line || len < 2 || flen > 4000) return 0;
    char path[4400];
    ss_string_ref cwd = ss_model_meta(m, "cwd");
    if (file[0] != '/' && cwd.s && cwd.len < 300)
        snprintf(path, sizeof path, "%.*s/%.*s", (int)cwd.len, cwd.s, (int)flen, file);
    else
        snprintf(path, sizeof path, "%.*s", (int)flen, file);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    uint32_t at = 1;
    int c, found = 0;
    size_t n = 0;
    while ((c = getc(f)) != EOF) {
        if (at == line) {
            if (c == '\n') { found = 1; break; }
            if (n + 1 < len) buf[n++] = (char)c;
        } else if (c == '\n' && ++at > line) {
            break;
        }
    }
    if (at == line && c == EOF) found = n > 0;
    fclose(f);
    buf[n] = '\0';
    return found;
}
