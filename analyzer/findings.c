/* Findings: folding by call site, severities, ranking (see findings.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "capture_windows.h"
#include "callsite.h"
#include "util.h"

struct ss_foldmap { ss_u64map map; };

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

void ss_findings_init(ss_findings *f)
{
    memset(f, 0, sizeof *f);
    f->fold = ss_xcalloc(1, sizeof(struct ss_foldmap));
}

static void finding_free(ss_finding *x)
{
    free(x->cost_basis); free(x->message); free(x->fix); free(x->fold_key); free(x->library);
    free(x->relax);
}

void ss_findings_free(ss_findings *f)
{
    for (uint32_t i = 0; i < f->n; i++) finding_free(&f->v[i]);
    free(f->v);
    if (f->fold) { ss_u64map_free(&f->fold->map); free(f->fold); }
    memset(f, 0, sizeof *f);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

/* Was call `call` made inside the library family `family` (its innermost
 * frames past the plumbing)? */
static int call_in_family(const ss_model *m, int32_t call, const char *family)
{
    char lib[96], fn[8];
    return call >= 0 && ss_call_cuda_library(m, call, lib, sizeof lib, fn, sizeof fn) &&
           ss_module_cuda_library(lib) == family;
}

/* Is occurrence o a library's internal matter?  Every call of it -- the
 * accesses, and the allocation of its buffer where that is one -- made
 * inside one NVIDIA library (native stacks, whoever called the library:
 * a Python line, PyTorch's autograd thread), and the buffer or a stream
 * the library's own: the library allocated the buffer (cuDNN's zeroed
 * scratch), or one access ran on a stream the library created (cuDNN's
 * internal streams, which it joins back to the caller's stream itself).
 * Then the user's code neither touches the buffer nor could order the two.
 * Two library calls on the user's own streams over the user's tensor stay
 * the user's.  A call without a native stack says nothing: no. */
static int library_internal(const ss_model *m, const ss_occurrence *o, const char *inlib)
{
    const char *family = ss_module_cuda_library(inlib);
    if (!family || o->alloc < 0 || (uint32_t)o->alloc >= m->nallocs) return 0;
    int32_t alloc_call = m->allocs[o->alloc].alloc_call;
    int own = 0, accesses = 0;
    for (uint32_t i = 0; i < o->nrefs && i < SS_FINDING_MAX_REFS; i++) {
        int32_t call = o->refs[i].call;
        if (call < 0) continue;
        if (call == alloc_call) {
            own |= call_in_family(m, call, family);
            continue;
        }
        if (!call_in_family(m, call, family)) return 0;
        accesses++;
        int32_t st = m->calls[call].stream;
        if (st >= 0 && (uint32_t)st < m->nstreams && call_in_family(m, m->streams[st].create_call, family))
            own = 1;
    }
    return accesses >= 2 && own;
}

void ss_finding_site(const ss_finding *x, ss_site *site)
{
    if (x->nrefs && x->refs[0].call >= 0) ss_call_site(x->model, x->refs[0].call, site);
    else if (x->nrefs && x->refs[0].op >= 0) ss_op_site(x->model, x->refs[0].op, site);
    else ss_call_site(x->model, -1, site);
}

/* The time of an occurrence: where its first call entered, else its first
 * op started; 0 none. */
static uint64_t occurrence_time(const ss_model *m, const ss_occurrence *o)
{
    if (!o->nrefs) return 0;
    if (o->refs[0].call >= 0) return m->calls[o->refs[0].call].rec->t_enter;
    if (o->refs[0].op >= 0) return m->ops[o->refs[0].op].start;
    return 0;
}

/* The phase of an occurrence, from its time. */
static ss_phase occurrence_phase(const ss_model *m, const ss_occurrence *o)
{
    const ss_iterations *it = ss_iterations_of(m);
    uint64_t t = occurrence_time(m, o);
    if (!it->found || !t) return SS_PHASE_STEADY;
    return ss_phase_at(it, t);
}

/* A one-time cost's occurrence in the steady state: the iteration it fell
 * in counted among its finding's distinct ones (the first few are enough). */
static void note_recurrence(ss_finding *y, const ss_model *m, const ss_occurrence *o)
{
    int32_t k = ss_iteration_index(ss_iterations_of(m), occurrence_time(m, o));
    if (k < 0 || y->nrecur >= SS_MIN_ITERATIONS) return;
    for (uint32_t i = 0; i < y->nrecur; i++)
        if (y->recur[i] == k) return;
    y->recur[y->nrecur++] = k;
}

double ss_finding_cost_per_iteration(const ss_finding *x)
{
    const ss_iterations *it = ss_iterations_of(x->model);
    if (!it->found || !it->count || x->phase != SS_PHASE_STEADY) return -1;
    return x->steady_cost_ms / it->count;
}

/* A sampled trace: may the recorded part support this occurrence
 * (capture_windows.h)?  "Right before complete": what it cannot support is
 * left unsaid. */
static int sampled_judgeable(const ss_findings *f, const ss_model *m, const ss_occurrence *o)
{
    int32_t calls[SS_FINDING_MAX_REFS], ops[SS_FINDING_MAX_REFS];
    uint32_t n = o->nrefs > SS_FINDING_MAX_REFS ? SS_FINDING_MAX_REFS : o->nrefs;
    for (uint32_t i = 0; i < n; i++) { calls[i] = o->refs[i].call; ops[i] = o->refs[i].op; }
    return ss_capture_judgeable(m, f->sampled_need, calls, ops, n);
}

/* What an occurrence folds by, and what makes a new finding of it read as
 * it does (a library's call, one made inside a library the user called). */
typedef struct occ_key {
    ss_phase phase;
    ss_string_ref lib;
    char inlib[96], infn[160];
    int inside, internal, pyinside;
    char *key;
    uint64_t h;
} occ_key;

static void occurrence_key(const ss_model *m, const ss_occurrence *o, occ_key *k)
{
    k->phase = occurrence_phase(m, o);
    const ss_call *c = o->nrefs && o->refs[0].call >= 0 ? &m->calls[o->refs[0].call] : NULL;
    k->lib = (ss_string_ref){ NULL, 0 };
    /* a call made inside a collective library's own API: the user cannot
     * change that code, so its findings are reported as info, folded apart,
     * and say where they come from */
    if (c) k->lib = ss_model_call_library_range(m, c);
    ss_finding x;
    memset(&x, 0, sizeof x);
    x.nrefs = o->nrefs > SS_FINDING_MAX_REFS ? SS_FINDING_MAX_REFS : o->nrefs;
    memcpy(x.refs, o->refs, sizeof(ss_finding_ref) * x.nrefs);
    x.model = m;
    /* Fold by call site.  When the site could not be resolved to a source
     * line (no binary, no debug info), it is a module offset or an API name
     * that many call sites share: the recorded stack then tells them apart. */
    ss_site site;
    ss_finding_site(&x, &site);
    char text[1024];
    ss_site_text(m, &site, text, sizeof text);
    const char *file;
    size_t flen;
    uint32_t line;
    uint32_t stack_key = 0;
    if (c && site.kind != SS_SITE_PYTHON && !ss_site_source(&site, &file, &flen, &line))
        stack_key = c->rec->pystack_id ? 0x80000000u | c->rec->pystack_id : c->rec->stack_id;
    /* a call that a library made on the user's behalf (cublasDestroy's
     * device synchronization): its own finding, which says so */
    k->inlib[0] = k->infn[0] = '\0';
    k->inside = k->internal = k->pyinside = 0;
    if (!k->lib.s && c) {
        /* the whole occurrence the library's own (whoever called it: a
         * Python line, the autograd thread); else, for native code, the
         * library the user's code called that made the call */
        k->internal = o->alloc >= 0 &&
                      ss_call_cuda_library(m, o->refs[0].call, k->inlib, sizeof k->inlib, k->infn, sizeof k->infn) &&
                      library_internal(m, o, k->inlib);
        k->inside = k->internal ||
                    ss_call_library(m, o->refs[0].call, k->inlib, sizeof k->inlib, k->infn, sizeof k->infn);
        /* a Python framework's own machinery (several of its files inside the
         * user's frame), not the API the user's line called */
        if (!k->inside)
            k->inside = k->pyinside =
                ss_call_python_library(m, o->refs[0].call, k->inlib, sizeof k->inlib, k->infn, sizeof k->infn);
    }
    k->key = ss_strdup_printf("%s|%u|%s|%s|%u%s%s%s", o->rule, m->hdr.pid, text,
                              o->site_extra ? o->site_extra : "", stack_key, k->lib.s ? "|lib" : "",
                              k->inside ? "|in:" : "", k->inlib);
    k->h = hash_str(k->key);
}

/* The occurrence counted in the finding of its key, when there is one: 1
 * (its key freed), else 0.  A hash collision between different keys falls
 * back to a new finding. */
static int fold_into(ss_findings *f, const ss_occurrence *o, occ_key *k)
{
    int64_t *slot = ss_u64map_find(&f->fold->map, k->h);
    if (!slot || strcmp(f->v[*slot].fold_key, k->key)) return 0;
    ss_finding *y = &f->v[*slot];
    y->count++;
    y->cost_ms += o->cost_ms;
    if (k->phase == SS_PHASE_STEADY) {
        y->phase = SS_PHASE_STEADY;
        y->steady_cost_ms += o->cost_ms;
        y->steady_count++;
        if (y->once) note_recurrence(y, y->model, o);
    }
    for (uint32_t i = 0; i < o->nrelax && i < 4; i++) SS_PUSH(y->relax, y->nrelax, y->crelax, o->relax[i]);
    free(k->key);
    return 1;
}

int ss_findings_fold(ss_findings *f, const ss_model *m, const ss_occurrence *o)
{
    if (ss_capture_sampled(m) && !sampled_judgeable(f, m, o)) {
        f->sampled_left_out++;
        return 1;
    }
    occ_key k;
    occurrence_key(m, o, &k);
    if (fold_into(f, o, &k)) return 1;
    free(k.key);
    return 0;
}

void ss_findings_add(ss_findings *f, const ss_model *m, const ss_occurrence *o)
{
    if (ss_capture_sampled(m) && !sampled_judgeable(f, m, o)) {
        f->sampled_left_out++;
        return;
    }
    occ_key k;
    occurrence_key(m, o, &k);
    if (fold_into(f, o, &k)) return;
    int64_t *slot = ss_u64map_find(&f->fold->map, k.h);
    ss_phase phase = k.phase;
    const ss_call *c = o->nrefs && o->refs[0].call >= 0 ? &m->calls[o->refs[0].call] : NULL;
    ss_string_ref lib = k.lib;
    int inside = k.inside, internal = k.internal, pyinside = k.pyinside;
    char *inlib = k.inlib, *infn = k.infn, *key = k.key;
    ss_finding x;
    memset(&x, 0, sizeof x);
    x.nrefs = o->nrefs > SS_FINDING_MAX_REFS ? SS_FINDING_MAX_REFS : o->nrefs;
    memcpy(x.refs, o->refs, sizeof(ss_finding_ref) * x.nrefs);
    x.model = m;
    x.rule = o->rule;
    x.severity = lib.s || internal ? SS_SEV_INFO : o->severity;
    x.fixed_severity = lib.s || internal || o->fixed_severity;
    x.cost_ms = o->cost_ms;
    x.cost_basis = ss_strdup_printf("%s", o->cost_basis ? o->cost_basis : "");
    x.message = lib.s ? ss_strdup_printf("inside NCCL (%.*s), not in your code: %s", (int)(lib.len < 120 ? lib.len : 120),
                                         lib.s, o->message ? o->message : "")
                      : ss_strdup_printf("%s", o->message ? o->message : "");
    x.fix = ss_strdup_printf("%s", o->fix ? o->fix : "");
    if (internal) {
        char *msg = ss_strdup_printf("inside %s%s%s%s, on that library's own buffer or stream, not in your code: %s",
                                     inlib, infn[0] ? " (" : "", infn, infn[0] ? ")" : "", x.message);
        char *fix = ss_strdup_printf("Both accesses were made inside %s (native stacks), on a buffer it allocated or "
                                     "on a stream it created itself: nothing your code does touches or orders them. "
                                     "If the race is real it is the library's to fix: report it to its maintainers "
                                     "with this trace, or try a newer version.", inlib);
        free(x.message);
        free(x.fix);
        x.message = msg;
        x.fix = fix;
        x.library = ss_strdup_printf("%s", inlib);
    } else if (inside) {
        char *msg = ss_strdup_printf("inside %s%s%s%s, which your code called: %s", inlib, infn[0] ? " (" : "", infn,
                                     infn[0] ? ")" : "", x.message);
        char *fix = pyinside
            ? ss_strdup_printf("%s%sThe synchronization is made by %s's own code (%s), which the call on your line "
                               "reached, not by your code: what your code decides is when and how often it makes "
                               "that call.", x.fix, x.fix[0] ? " " : "", inlib, infn)
            : ss_strdup_printf("%s%sThe call is made by %s%s%s, not by your code: what your code decides is "
                                     "where and how often it calls %s (the library's documentation says what it "
                                     "synchronizes).", x.fix, x.fix[0] ? " " : "", inlib, infn[0] ? " inside " : "",
                                     infn, infn[0] ? infn : "into that library");
        free(x.message);
        free(x.fix);
        x.message = msg;
        x.fix = fix;
        x.library = ss_strdup_printf("%s", inlib);
    }
    x.count = 1;
    x.phase = phase;
    x.once = o->once;
    if (phase == SS_PHASE_STEADY) {
        x.steady_cost_ms = o->cost_ms;
        x.steady_count = 1;
        if (x.once) note_recurrence(&x, m, o);
    }
    x.fold_key = key;
    x.stack_id = c ? (int32_t)c->rec->stack_id : 0;
    x.pystack_id = c ? (int32_t)c->rec->pystack_id : 0;
    x.alloc = o->alloc;
    x.tag = o->tag;
    x.in_nccl = lib.s != NULL;
    x.pid = m->hdr.pid;
    for (uint32_t i = 0; i < o->nrelax && i < 4; i++) SS_PUSH(x.relax, x.nrelax, x.crelax, o->relax[i]);
    SS_PUSH(f->v, f->n, f->cap, x);
    if (!slot) ss_u64map_put(&f->fold->map, k.h, f->n - 1);
}

void ss_findings_absorb(ss_findings *f, ss_findings *from)
{
    for (uint32_t i = 0; i < from->n; i++) {
        SS_PUSH(f->v, f->n, f->cap, from->v[i]);
        /* the first finding of a hash holds its slot, as when added */
        uint64_t h = hash_str(from->v[i].fold_key);
        if (!ss_u64map_find(&f->fold->map, h)) ss_u64map_put(&f->fold->map, h, f->n - 1);
    }
    f->sampled_left_out += from->sampled_left_out;
    from->n = 0;   /* moved: freed with f */
    ss_findings_free(from);
}

void ss_finding_append_message(ss_finding *x, const char *text)
{
    char *msg = ss_strdup_printf("%s%s", x->message, text);
    free(x->message);
    x->message = msg;
}

void ss_findings_keep_if(ss_findings *f, uint32_t from, int (*keep)(ss_finding *x, void *ctx), void *ctx)
{
    uint32_t n = from;
    for (uint32_t i = from; i < f->n; i++) {
        if (keep(&f->v[i], ctx)) f->v[n++] = f->v[i];
        else finding_free(&f->v[i]);
    }
    if (n == f->n) return;
    f->n = n;
    /* indexes moved: fold again from scratch (the first finding of a hash
     * holds its slot, as when they were added) */
    ss_u64map_free(&f->fold->map);
    for (uint32_t i = 0; i < f->n; i++) {
        uint64_t h = hash_str(f->v[i].fold_key);
        if (!ss_u64map_find(&f->fold->map, h)) ss_u64map_put(&f->fold->map, h, i);
    }
}

static double ns_to_ms(uint64_t ns) { return (double)ns / 1e6; }

static int cmp_finding(const void *a, const void *b)
{
    const ss_finding *x = a, *y = b;
    if (x->folded != y->folded) return x->folded ? 1 : -1;
    if (x->severity != y->severity) return x->severity > y->severity ? -1 : 1;
    if (x->saving_ms != y->saving_ms) return x->saving_ms > y->saving_ms ? -1 : 1;
    if (x->cost_ms != y->cost_ms) return x->cost_ms > y->cost_ms ? -1 : 1;
    int r = strcmp(x->rule, y->rule);
    return r ? r : strcmp(x->fold_key, y->fold_key);
}

/* The what-ifs of findings v[0..n): one per finding with causes, in order
 * (nper of them), then one per model, every cause of its findings at once. */
typedef struct whatifs {
    ss_whatif *w; uint32_t nw, nper;
    ss_relax **alls; uint32_t nalls;   /* the lists of every cause, owned */
} whatifs;

static whatifs whatifs_of(ss_finding *const *v, uint32_t n)
{
    whatifs q = { 0 };
    uint32_t cw = 0, calls_ = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ss_finding *x = v[i];
        if (!x->nrelax) continue;
        ss_whatif one = { ss_replay_of(x->model), x->relax, x->nrelax, 0 };
        SS_PUSH(q.w, q.nw, cw, one);
    }
    q.nper = q.nw;
    for (uint32_t i = 0; i < n; i++) {
        const ss_model *m = v[i]->model;
        int first = 1;
        for (uint32_t j = 0; j < i; j++) if (v[j]->model == m) { first = 0; break; }
        if (!first) continue;
        ss_relax *all = NULL;
        uint32_t nall = 0, call = 0;
        for (uint32_t j = i; j < n; j++)
            if (v[j]->model == m)
                for (uint32_t k = 0; k < v[j]->nrelax; k++) SS_PUSH(all, nall, call, v[j]->relax[k]);
        if (!nall) continue;
        SS_PUSH(q.alls, q.nalls, calls_, all);
        ss_whatif every = { ss_replay_of(m), all, nall, 0 };
        SS_PUSH(q.w, q.nw, cw, every);
    }
    return q;
}

static void whatifs_free(whatifs *q)
{
    for (uint32_t k = 0; k < q->nalls; k++) free(q->alls[k]);
    free(q->alls);
    free(q->w);
}

void ss_findings_replay_ahead(ss_findings *const *sets, uint32_t nsets)
{
    ss_finding **v = NULL;
    uint32_t n = 0, cap = 0;
    for (uint32_t s = 0; s < nsets; s++)
        for (uint32_t i = 0; i < sets[s]->n; i++) SS_PUSH(v, n, cap, &sets[s]->v[i]);
    whatifs q = whatifs_of(v, n);
    free(v);
    double t = ss_seconds();
    ss_replay_savings_ahead(q.w, q.nw);
    ss_timing("whatifs.ahead", t);
    whatifs_free(&q);
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
    /* A one-time cost in the steady state that does not recur there (a
     * module loaded at the first step that took a new code path, the first
     * evaluation's new shapes) is paid once: setup, not a cost every
     * iteration pays (ss_occurrence.once). */
    for (uint32_t i = 0; i < f->n; i++) {
        ss_finding *x = &f->v[i];
        if (!x->once || x->phase != SS_PHASE_STEADY || !ss_iterations_of(x->model)->found) continue;
        if (x->nrecur >= SS_MIN_ITERATIONS) continue;
        x->phase = SS_PHASE_SETUP;
        x->steady_cost_ms = 0;
        x->steady_count = 0;
    }
    /* setup paid once: one line, unless setup is most of the run */
    for (uint32_t i = 0; i < f->n; i++) {
        ss_finding *x = &f->v[i];
        x->cost_severity = x->severity;
        const ss_iterations *it = ss_iterations_of(x->model);
        if (x->phase == SS_PHASE_SETUP && x->nrelax && it->found && !it->setup_dominates) {
            x->folded = 1;
            x->severity = SS_SEV_INFO;
        }
    }
    /* What-if replay: each finding's causes removed, then every cause of a
     * process at once (the findings overlap: the total is not their sum).
     * One batch: the replays are independent and run in parallel
     * (ss_replay_savings), each result going to its own finding. */
    f->saving_total_ms = 0;
    f->saving_total_known = 0;
    ss_finding **v = ss_xcalloc(f->n + 1, sizeof *v);
    for (uint32_t i = 0; i < f->n; i++) v[i] = &f->v[i];
    whatifs q = whatifs_of(v, f->n);
    free(v);
    double t = ss_seconds();
    uint32_t late = ss_replay_savings(q.w, q.nw);
    ss_timing("whatifs", t);
    if (ss_timings_on() && q.nw)
        fprintf(stderr, "syncsight: whatifs: %u asked, %u replayed at the end (the others ahead, or repeats)\n", q.nw, late);
    for (uint32_t i = 0, k = 0; i < f->n; i++) {
        ss_finding *x = &f->v[i];
        if (!x->nrelax) continue;
        x->saving_ms = ns_to_ms(q.w[k++].saving);
        x->saving_known = 1;
    }
    for (uint32_t k = q.nper; k < q.nw; k++) {
        double s = ns_to_ms(q.w[k].saving);
        if (s > f->saving_total_ms) f->saving_total_ms = s;
        f->saving_total_known = 1;
    }
    whatifs_free(&q);
    ss_qsort(f->v, f->n, sizeof(ss_finding), cmp_finding);
    /* the fold map indexes are stale after sorting: no adds after finish */
    ss_u64map_free(&f->fold->map);
}
