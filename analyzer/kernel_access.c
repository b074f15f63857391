/*
 * Kernel parameter accesses for the model (see kernel_access.h).
 *
 * Classifying needs the toolkit's nvdisasm, which the machine that reads a
 * trace may lack (pip-installed PyTorch, a CI runner with CUDA headers only).
 * So every kernel classified is also written to a sidecar beside the trace,
 * "<trace>.kaccess" (or $SYNCSIGHT_SASS_CACHE), one text line per kernel:
 *
 *     <images-hash:16 hex> <words> <codes> <mangled name>
 *
 * codes: one letter per 8-byte parameter word: r read, w written, x both,
 * - not accessed, ? unknown.  The hash sums the recorded hashes of the images
 * that hold the kernel, so an entry applies only to the same code; a trace
 * whose images were dropped (tools/strip_cubins.py) is matched by name.  A trace
 * copied with its sidecar gets the same verdicts anywhere; only successful
 * classifications are stored, and a sidecar that cannot be written is skipped.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "kernel_access.h"
#include "model.h"
#include "util.h"

typedef struct kentry {
    uint32_t name_id;           /* SS_REC_STRING id of the kernel's name */
    int rc;                     /* 0 classified, -1 not (why in ss_kaccess.why) */
    ss_param_access *acc;       /* per 8-byte word of the parameter buffer */
    uint32_t nacc;
} kentry;

typedef struct side_entry { uint64_t hash; char *name; char *codes; } side_entry;

struct ss_kaccess {
    kentry *k; uint32_t n, cap;
    side_entry *side; uint32_t nside, capside;
    int side_loaded;
    char side_path[4096];
    ss_u64map by_name;          /* name_id -> index in k */
    uint32_t nfailed;           /* kernels asked about and not classified */
    uint32_t nno_disasm;        /* of them: in a recorded image, but no disassembler here (fixable) */
    char first_disasm_why[256]; /* the first of those */
    uint32_t no_offsets;        /* launches without recorded offsets */
    /* 1 once ss_kernel_access_prepare() has classified every kernel the
     * questions below can ask about: from then on they only read, and the
     * rules may ask from several threads at once */
    int prepared;
    char first_why[256];        /* reason of the first failure */
    char line[600];             /* ss_kernel_access_limits() text */
};

/* The model frees its cache with this (ss_model.kaccess_free). */
static void kaccess_free(struct ss_kaccess *k)
{
    if (!k) return;
    for (uint32_t i = 0; i < k->n; i++) free(k->k[i].acc);
    free(k->k);
    for (uint32_t i = 0; i < k->nside; i++) { free(k->side[i].name); free(k->side[i].codes); }
    free(k->side);
    ss_u64map_free(&k->by_name);
    free(k);
}

static struct ss_kaccess *cache(const ss_model *m)
{
    /* a lazily built cache behind a const model: the model owns it */
    ss_model *mm = (ss_model *)m;
    if (!mm->kaccess) {
        mm->kaccess = ss_xcalloc(1, sizeof(struct ss_kaccess));
        mm->kaccess_free = kaccess_free;
    }
    return mm->kaccess;
}

/* Join of two images' answers for the same kernel: the launch ran one of them. */
static ss_param_access join(ss_param_access a, ss_param_access b)
{
    if (a == SS_ACCESS_UNKNOWN || b == SS_ACCESS_UNKNOWN) return SS_ACCESS_UNKNOWN;
    if (a == SS_ACCESS_NONE) return b;
    if (b == SS_ACCESS_NONE || a == b) return a;
    return SS_ACCESS_READ_WRITE;
}

static const char codes_of[] = { '?', '-', 'r', 'w', 'x' };   /* by ss_param_access */

static ss_param_access access_of(char c)
{
    for (int a = 0; a < 5; a++) if (codes_of[a] == c) return (ss_param_access)a;
    return SS_ACCESS_UNKNOWN;
}

static void side_load(const ss_model *m, struct ss_kaccess *ka)
{
    ka->side_loaded = 1;
    const char *env = getenv("SYNCSIGHT_SASS_CACHE");
    if (env && *env) snprintf(ka->side_path, sizeof ka->side_path, "%s", env);
    else if (m->path) snprintf(ka->side_path, sizeof ka->side_path, "%s.kaccess", m->path);
    if (!ka->side_path[0]) return;
    int fd = open(ka->side_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) { if (fd >= 0) close(fd); return; }
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        unsigned long long h;
        unsigned words;
        int at = 0;
        if (line[0] == '#' || sscanf(line, "%16llx %u %n", &h, &words, &at) != 2 || !at) continue;
        char *codes = line + at, *sp = strchr(codes, ' ');
        if (!sp || (size_t)(sp - codes) != words || words > 4096) continue;
        *sp = 0;
        char *name = sp + 1;
        name[strcspn(name, "\r\n")] = 0;
        if (!*name) continue;
        side_entry e = { h, ss_xcalloc(strlen(name) + 1, 1), ss_xcalloc(words + 1, 1) };
        memcpy(e.name, name, strlen(name));
        memcpy(e.codes, codes, words);
        SS_PUSH(ka->side, ka->nside, ka->capside, e);
    }
    fclose(f);
}

/* The entry for this kernel in these images.  A trace whose images were
 * dropped (tools/strip_cubins.py: the committed fixtures) has hash 0: then the
 * kernel's name decides, if every entry for it says the same. */
static const side_entry *side_find(const struct ss_kaccess *ka, uint64_t hash, const char *name)
{
    const side_entry *by_name = NULL;
    for (uint32_t i = ka->nside; i-- > 0; ) {
        const side_entry *e = &ka->side[i];
        if (strcmp(e->name, name)) continue;
        if (hash && e->hash == hash) return e;
        if (!hash) {
            if (by_name && strcmp(by_name->codes, e->codes)) return NULL;   /* builds disagree */
            by_name = e;
        }
    }
    return by_name;
}

static void side_store(struct ss_kaccess *ka, uint64_t hash, const char *name, const kentry *e)
{
    if (!ka->side_path[0] || strchr(name, '\n') || strchr(name, ' ')) return;
    int fd = open(ka->side_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) { ka->side_path[0] = 0; return; }   /* read-only place: classify again next time */
    char *codes = ss_xcalloc(e->nacc + 1, 1);
    for (uint32_t w = 0; w < e->nacc; w++) codes[w] = codes_of[e->acc[w] <= SS_ACCESS_READ_WRITE ? e->acc[w] : 0];
    char *line = ss_strdup_printf("%016llx %u %s %s\n", (unsigned long long)hash, e->nacc, codes, name);
    ssize_t ignored = write(fd, line, strlen(line));
    (void)ignored;
    close(fd);
    free(line);
    free(codes);
}

static void classify(const ss_model *m, struct ss_kaccess *ka, kentry *e)
{
    char why[256] = "";
    int no_disasm = 0;          /* its code was recorded; nothing here disassembles it */
    ss_string_ref r = ss_model_string_raw(m, e->name_id);
    e->rc = -1;
    if (!r.s || !r.len) {
        snprintf(why, sizeof(why), "a kernel has no recorded name");
    } else {
        char *name = ss_xcalloc(r.len + 1, 1);
        memcpy(name, r.s, r.len);
        uint32_t found = 0;
        /* the images holding the kernel: their hashes key the sidecar */
        uint64_t images = 0;
        for (uint32_t i = 0; i < m->ncubins; i++) {
            uint32_t len;
            const uint8_t *img = ss_cubin_image(m->cubins[i], &len);
            if (len && ss_cubin_has_function(img, len, name) == 1) images += m->cubins[i]->hash;
        }
        if (!ka->side_loaded) side_load(m, ka);
        const side_entry *se = side_find(ka, images, name);
        if (se) {
            e->nacc = (uint32_t)strlen(se->codes);
            e->acc = ss_xcalloc(e->nacc + 1, sizeof(ss_param_access));
            for (uint32_t w = 0; w < e->nacc; w++) e->acc[w] = access_of(se->codes[w]);
            e->rc = 0;
            free(name);
            return;
        }
        for (uint32_t i = 0; i < m->ncubins; i++) {
            uint32_t len;
            const uint8_t *img = ss_cubin_image(m->cubins[i], &len);
            if (!len || ss_cubin_has_function(img, len, name) != 1) continue;
            found++;
            ss_cubin_kernel k;
            char err[256];
            if (ss_cubin_kernel_info(img, len, name, &k, err, sizeof(err)) != 0) {
                snprintf(why, sizeof(why), "%.60s: %.180s", name, err);
                e->rc = -1;
                break;
            }
            uint32_t nw = (k.cbank_size + 7) / 8;
            ss_cubin_kernel_free(&k);
            ss_param_access *acc = ss_xcalloc(nw + 1, sizeof(ss_param_access));
            if (ss_sass_classify(img, len, name, acc, nw, err, sizeof(err)) != 0) {
                snprintf(why, sizeof(why), "%.60s: %.180s", name, err);
                char none[8];
                no_disasm = !ss_sass_disassembler(none, sizeof none);
                free(acc);
                e->rc = -1;
                break;
            }
            if (e->rc != 0) {
                free(e->acc);
                e->acc = acc; e->nacc = nw; e->rc = 0;
            } else {
                uint32_t lo = nw < e->nacc ? nw : e->nacc;
                for (uint32_t w = 0; w < lo; w++) e->acc[w] = join(e->acc[w], acc[w]);
                for (uint32_t w = lo; w < e->nacc; w++) e->acc[w] = SS_ACCESS_UNKNOWN;
                if (nw < e->nacc) e->nacc = nw;
                free(acc);
            }
        }
        if (!found)
            snprintf(why, sizeof(why), "%.60s%s: not in any recorded cubin%s", name, r.len > 60 ? "..." : "",
                     m->ncubins ? "" : " (the trace has none)");
        if (e->rc != 0) { free(e->acc); e->acc = NULL; e->nacc = 0; }
        else if (images) side_store(ka, images, name, e);
        free(name);
    }
    if (e->rc != 0) {
        if (!ka->nfailed) snprintf(ka->first_why, sizeof(ka->first_why), "%s", why);
        ka->nfailed++;
        if (no_disasm) {
            if (!ka->nno_disasm) snprintf(ka->first_disasm_why, sizeof(ka->first_disasm_why), "%s", why);
            ka->nno_disasm++;
        }
    }
}

/* The kernel's name: its first kernel op's (a launch), 0 when none joined. */
static uint32_t launch_kernel_name(const ss_model *m, const ss_call *c)
{
    for (int32_t o = c->first_op; o >= 0 && (uint32_t)o < m->nops; o = m->ops[o].next_of_call)
        if (m->ops[o].kind == SS_OP_KERNEL) return ((const ss_kernel_rec *)m->ops[o].rec)->name_id;
    return 0;
}

/* Access through the i-th parameter word of launch c, running kernel name_id. */
static ss_param_access param_access(const ss_model *m, const ss_call *c, uint32_t name_id, uint32_t i)
{
    struct ss_kaccess *ka = cache(m);
    uint32_t n;
    ss_call_params(c, &n);
    if (i >= n) return SS_ACCESS_UNKNOWN;
    const uint16_t *offs = ss_call_param_offsets(c);
    if (!offs) {
        if (!ka->prepared) ka->no_offsets++;   /* prepared: counted there */
        return SS_ACCESS_UNKNOWN;
    }
    if (!name_id) return SS_ACCESS_UNKNOWN;   /* no GPU record joined: nothing to look up */
    int64_t at = ss_u64map_get(&ka->by_name, name_id, -1);
    kentry *e;
    if (at >= 0) {
        e = &ka->k[at];
    } else if (ka->prepared) {
        return SS_ACCESS_UNKNOWN;   /* not reached: prepare saw every kernel a launch can name */
    } else {
        kentry ne = { name_id, -1, NULL, 0 };
        SS_PUSH(ka->k, ka->n, ka->cap, ne);
        ss_u64map_put(&ka->by_name, name_id, ka->n - 1);
        e = &ka->k[ka->n - 1];
        classify(m, ka, e);
    }
    if (e->rc != 0 || offs[i] % 8 || offs[i] / 8 >= e->nacc) return SS_ACCESS_UNKNOWN;
    return e->acc[offs[i] / 8];
}

/* The kernels prepare is about to classify, disassembled first image by
 * image on threads (ss_sass_prepare: one nvdisasm per image, restricted to
 * those kernels), so that classify() finds each answer cached.  Kernels
 * the sidecar names are left to it (by name here; classify checks the
 * images' hash, and asks nvdisasm itself when that does not match). */
typedef struct sass_job { const ss_model *m; const char **names; uint32_t n; } sass_job;

static void sass_image_job(void *ctx, uint32_t i, unsigned worker)
{
    (void)worker;
    const sass_job *j = ctx;
    uint32_t len;
    const uint8_t *img = ss_cubin_image(j->m->cubins[i], &len);
    if (len) ss_sass_prepare(img, len, j->names, j->n);
}

static void want_kernel(const ss_model *m, struct ss_kaccess *ka, ss_u64map *seen, uint32_t name_id,
                        const char ***names, uint32_t *n, uint32_t *cap)
{
    if (!name_id || ss_u64map_get(seen, name_id, -1) >= 0 || ss_u64map_get(&ka->by_name, name_id, -1) >= 0) return;
    ss_u64map_put(seen, name_id, 1);
    ss_string_ref r = ss_model_string_raw(m, name_id);
    if (!r.s || !r.len) return;
    char *name = ss_xcalloc(r.len + 1, 1);
    memcpy(name, r.s, r.len);
    for (uint32_t i = 0; i < ka->nside; i++)
        if (!strcmp(ka->side[i].name, name)) { free(name); return; }
    SS_PUSH(*names, *n, *cap, (const char *)name);
}

static void sass_prefetch(const ss_model *m, struct ss_kaccess *ka)
{
    if (!m->ncubins) return;
    char why[256];
    if (!ss_sass_disassembler(why, sizeof why)) return;   /* classify says why */
    if (!ka->side_loaded) side_load(m, ka);
    ss_u64map seen = { 0 };
    const char **names = NULL;
    uint32_t n = 0, cap = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        uint32_t np;
        if (c->cls != SS_API_LAUNCH || !ss_call_params(c, &np) || !np || !ss_call_param_offsets(c)) continue;
        want_kernel(m, ka, &seen, launch_kernel_name(m, c), &names, &n, &cap);
    }
    for (uint32_t o = 0; o < m->nops; o++) {
        const ss_gpu_op *op = &m->ops[o];
        if (op->node_call < 0 || op->kind != SS_OP_KERNEL) continue;
        const ss_call *nc = &m->calls[op->node_call];
        uint32_t np;
        if (!ss_call_params(nc, &np) || !np || !ss_call_param_offsets(nc)) continue;
        want_kernel(m, ka, &seen, ((const ss_kernel_rec *)op->rec)->name_id, &names, &n, &cap);
    }
    ss_u64map_free(&seen);
    if (n) {
        sass_job j = { m, names, n };
        ss_parallel_for(m->ncubins, ss_thread_count(), sass_image_job, &j);
    }
    for (uint32_t i = 0; i < n; i++) free((char *)names[i]);
    free(names);
}

/* The entry of every kernel a question can name, classified now: a
 * launch's first kernel (ss_kernel_param_access, inferred_accesses of a
 * launch) and each kernel op of a graph whose node's call holds parameters
 * (ss_op_mem_accesses).  Asked about only when the call has parameter words
 * and their offsets, as param_access() asks. */
void ss_kernel_access_prepare(const ss_model *m)
{
    struct ss_kaccess *ka = cache(m);
    if (ka->prepared) return;
    sass_prefetch(m, ka);
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (c->cls != SS_API_LAUNCH) continue;
        uint32_t np;
        ss_call_params(c, &np);
        if (np) param_access(m, c, launch_kernel_name(m, c), 0);
    }
    for (uint32_t o = 0; o < m->nops; o++) {
        const ss_gpu_op *op = &m->ops[o];
        if (op->node_call < 0 || op->kind != SS_OP_KERNEL) continue;
        const ss_call *nc = &m->calls[op->node_call];
        uint32_t np;
        ss_call_params(nc, &np);
        if (np) param_access(m, nc, ((const ss_kernel_rec *)op->rec)->name_id, 0);
    }
    ka->prepared = 1;
}

ss_param_access ss_kernel_param_access(const ss_model *m, const ss_call *c, uint32_t i)
{
    if (!m || !c || c->cls != SS_API_LAUNCH) return SS_ACCESS_UNKNOWN;
    return param_access(m, c, launch_kernel_name(m, c), i);
}

const char *ss_kernel_access_limits(const ss_model *m)
{
    struct ss_kaccess *ka = m ? m->kaccess : NULL;
    if (!ka || (!ka->nfailed && !ka->no_offsets)) return NULL;
    if (ka->nfailed)
        snprintf(ka->line, sizeof(ka->line),
                 "%u of %u kernels' parameter accesses unknown (first: %s); their pointers count as read and written",
                 ka->nfailed, ka->n, ka->first_why);
    else
        snprintf(ka->line, sizeof(ka->line),
                 "the trace records no kernel parameter offsets (older shim): kernel pointers count as read and written");
    return ka->line;
}

uint32_t ss_kernel_access_unknown(const ss_model *m, uint32_t *of, const char **why, uint32_t *no_disasm,
                                  const char **disasm_why)
{
    struct ss_kaccess *ka = m ? m->kaccess : NULL;
    *of = ka ? ka->n : 0;
    *why = ka && ka->nfailed ? ka->first_why : NULL;
    *no_disasm = ka ? ka->nno_disasm : 0;
    *disasm_why = ka && ka->nno_disasm ? ka->first_disasm_why : NULL;
    return ka ? ka->nfailed : 0;
}

/* Inferred from the pointer arguments of launch c (the kernel name_id),
 * resolved against the allocations live at time t. */
static uint32_t inferred_accesses(const ss_model *m, const ss_call *c, uint32_t name_id, uint64_t t,
                                  ss_kernel_mem *out, uint32_t max)
{
    uint32_t n = 0, np;
    const uint64_t *p = ss_call_params(c, &np);
    for (uint32_t i = 0; i < np && n < max; i++) {
        if (!p[i]) continue;
        int dup = 0;
        for (uint32_t j = 0; j < i; j++) dup |= p[j] == p[i];
        if (dup) continue;
        int32_t a = ss_model_alloc_at(m, p[i], t);
        if (a < 0) continue;
        ss_kernel_mem x = { p[i], p[i] + 1, 0, a, 0, 0, 1, 0 };
        for (uint32_t j = i; j < np; j++) {
            if (p[j] != p[i]) continue;
            switch (param_access(m, c, name_id, j)) {
            case SS_ACCESS_NONE: break;
            case SS_ACCESS_READ: x.read = 1; break;
            case SS_ACCESS_WRITE: x.write = 1; break;
            case SS_ACCESS_READ_WRITE: x.read = x.write = 1; break;
            default: x.read = x.write = 1; x.known = 0; break;
            }
        }
        if (!x.read && !x.write) continue;   /* the kernel never dereferences it */
        const ss_alloc *al = &m->allocs[a];
        x.reach = al->ptr + (al->size ? al->size : 1);
        out[n++] = x;
    }
    return n;
}

uint32_t ss_copy_range(const ss_model *m, const ss_call *c, uint64_t p, uint64_t bytes, uint64_t t, int write,
                       ss_kernel_mem *out, uint32_t max)
{
    if (!p || !max) return 0;
    int32_t a = ss_model_alloc_at(m, p, t);
    if (a < 0) return 0;
    uint64_t hi = p + (bytes ? bytes : 1);
    out[0] = (ss_kernel_mem){ p, hi, hi, a, (uint8_t)!write, (uint8_t)write, 1, 1 };
    if (ss_call_is_strided(m, c) && bytes > 1) {
        /* rows a pitch apart: only the pointer's byte is known, up to the
         * allocation's end may be touched */
        const ss_alloc *al = &m->allocs[a];
        out[0].hi = p + 1;
        out[0].reach = al->ptr + (al->size ? al->size : 1) > hi ? al->ptr + (al->size ? al->size : 1) : hi;
        out[0].exact = 0;
    }
    return 1;
}

uint32_t ss_op_mem_accesses(const ss_model *m, int32_t op, ss_kernel_mem *out, uint32_t max)
{
    if (!m || op < 0 || (uint32_t)op >= m->nops) return 0;
    const ss_gpu_op *o = &m->ops[op];
    if (o->node_call < 0) return 0;
    const ss_call *nc = &m->calls[o->node_call];
    const ss_api_rec *r = nc->rec;
    /* the replay's allocations: those live when the graph was launched */
    uint64_t t = o->submit;
    uint32_t n = 0;
    /* A node added by cudaGraphAdd*Node (SS_API_GRAPH_NODE) holds what a
     * launch, copy or memset call would: the kernel's parameters, or the
     * range in ptr/ptr2/bytes. */
    int node = nc->cls == SS_API_GRAPH_NODE;
    switch (o->kind) {
    case SS_OP_KERNEL:
        if ((nc->cls != SS_API_LAUNCH && !node) || ss_call_is_graph_launch(m, nc)) return 0;
        return inferred_accesses(m, nc, ((const ss_kernel_rec *)o->rec)->name_id, t, out, max);
    case SS_OP_MEMCPY:
        if (nc->cls != SS_API_COPY_ASYNC && nc->cls != SS_API_COPY_SYNC && !node) return 0;
        n = ss_copy_range(m, nc, r->ptr2, r->bytes, t, 0, out, max);
        return n + ss_copy_range(m, nc, r->ptr, r->bytes, t, 1, out + n, max - n);
    case SS_OP_MEMSET:
        if (nc->cls != SS_API_MEMSET_ASYNC && nc->cls != SS_API_MEMSET_SYNC && !node) return 0;
        return ss_copy_range(m, nc, r->ptr, r->bytes, t, 1, out, max);
    default:
        return 0;
    }
}

uint32_t ss_kernel_mem_accesses(const ss_model *m, const ss_call *c, ss_kernel_mem *out, uint32_t max)
{
    uint32_t n = 0;
    if (!m || !c || c->cls != SS_API_LAUNCH) return 0;
    if (ss_call_is_graph_launch(m, c)) {
        /* the union of its nodes' accesses; one range touched alike by
         * several nodes counts once */
        for (int32_t o = c->first_op; o >= 0 && n < max; o = m->ops[o].next_of_call) {
            ss_kernel_mem k[64];
            uint32_t nk = ss_op_mem_accesses(m, o, k, 64);
            for (uint32_t i = 0; i < nk && n < max; i++) {
                uint32_t j = 0;
                while (j < n && !(out[j].alloc == k[i].alloc && out[j].lo == k[i].lo && out[j].hi == k[i].hi &&
                                  out[j].reach == k[i].reach && out[j].known == k[i].known &&
                                  out[j].exact == k[i].exact))
                    j++;
                if (j < n) { out[j].read |= k[i].read; out[j].write |= k[i].write; }
                else out[n++] = k[i];
            }
        }
        return n;
    }
    const ss_kernel_access_rec *xr = ss_call_exact_access(m, c);
    if (xr && !(xr->h.flags & SS_KACCESS_F_PARAMS_UNKNOWN)) {
        uint32_t ne;
        const ss_kernel_access_entry *e = ss_exact_access_entries(xr, &ne);
        for (uint32_t i = 0; i < ne && n + 2 <= max; i++) {
            int dup = 0;   /* words into one allocation share its ranges */
            for (uint32_t j = 0; j < i; j++) dup |= e[j].alloc_lo == e[i].alloc_lo;
            int32_t a = dup ? -1 : ss_model_alloc_at(m, e[i].value, c->rec->t_enter);
            if (a < 0) continue;
            if ((e[i].flags & SS_KACCESS_E_READ) && e[i].read_hi > e[i].read_lo)
                out[n++] = (ss_kernel_mem){ e[i].read_lo, e[i].read_hi, e[i].read_hi, a, 1, 0, 1, 1 };
            if ((e[i].flags & SS_KACCESS_E_WRITE) && e[i].write_hi > e[i].write_lo)
                out[n++] = (ss_kernel_mem){ e[i].write_lo, e[i].write_hi, e[i].write_hi, a, 0, 1, 1, 1 };
        }
        return n;
    }
    return inferred_accesses(m, c, launch_kernel_name(m, c), c->rec->t_enter, out, max);
}
