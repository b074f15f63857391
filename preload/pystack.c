/*
 * Python stacks at CUDA calls (see docs/call-sites.md).
 *
 * For a Python program the native stack ends in the interpreter's eval loop,
 * which names no user code; the user's call site is the Python frame that
 * called into PyTorch.  This file reads the calling thread's Python frames
 * through the interpreter's C API, resolved with dlsym(RTLD_DEFAULT) so the
 * shim links no libpython and costs a non-Python program one failed lookup.
 *
 * Rules that keep this safe inside an arbitrary CUDA call:
 *  - only when the interpreter is initialized, not finalizing, and the
 *    calling thread holds the GIL (PyGILState_Check): a thread that released
 *    the GIL around the CUDA call (ctypes, most of ATen's blocking waits) may
 *    not touch Python objects;
 *  - no Python code runs: frames, code objects and their string attributes
 *    are read through C accessors only;
 *  - not while an exception is set, so the program's error state is never
 *    touched; errors we cause ourselves are cleared;
 *  - reference counts follow the 3.9+ API: PyThreadState_GetFrame,
 *    PyFrame_GetCode, PyFrame_GetBack and PyObject_GetAttrString return new
 *    references, each released with Py_DecRef.  Python 3.8 lacks
 *    PyFrame_GetCode/GetBack: there Python stacks are simply not recorded.
 *
 * Each code object seen is pinned (one extra reference) in a cache that maps
 * it to the string ids of its file and function: a pinned object cannot be
 * freed, so its address is never reused by another code object and the cache
 * stays correct.  The cache is bounded; past it, names are looked up again
 * for each frame.  Distinct stacks are written once (SS_REC_PYSTACK) like
 * native stacks.  All of this runs under the GIL; a mutex (try-lock, never
 * waited on) covers interpreters with their own GIL.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "shim.h"
#include "callsite_internal.h"

typedef struct py_api {
    int   (*is_initialized)(void);
    int   (*is_finalizing)(void);                   /* optional */
    int   (*gil_check)(void);
    void *(*tstate_unchecked)(void);
    void *(*tstate_get_frame)(void *tstate);
    void *(*frame_get_code)(void *frame);
    int   (*frame_get_line)(void *frame);
    void *(*frame_get_back)(void *frame);
    void *(*getattr)(void *obj, const char *name);
    const char *(*unicode_utf8)(void *str, ssize_t *size);
    void  (*incref)(void *obj);
    void  (*decref)(void *obj);
    void *(*err_occurred)(void);
    void  (*err_clear)(void);
} py_api;

static py_api g_py;
static _Atomic int g_py_state;          /* 0 not tried, 1 usable, -1 absent */
static uint32_t g_py_tried_generation = UINT32_MAX; /* none tried yet */
static pthread_mutex_t g_py_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_no_qualname;               /* Python < 3.11: code has no co_qualname */

static void *sym(const char *name) { return dlsym(RTLD_DEFAULT, name); }

/* Resolve the API; everything required must be there, or nothing is used. */
static void resolve_python_api(void)
{
    py_api a;
    memset(&a, 0, sizeof a);
    *(void **)&a.is_initialized   = sym("Py_IsInitialized");
    if (!a.is_initialized)
        return;                      /* not a Python process (yet) */
    *(void **)&a.is_finalizing    = sym("Py_IsFinalizing");        /* 3.13 */
    if (!a.is_finalizing)
        *(void **)&a.is_finalizing = sym("_Py_IsFinalizing");      /* 3.7-3.12 */
    *(void **)&a.gil_check        = sym("PyGILState_Check");
    *(void **)&a.tstate_unchecked = sym("PyThreadState_GetUnchecked");  /* 3.13 */
    if (!a.tstate_unchecked)
        *(void **)&a.tstate_unchecked = sym("_PyThreadState_UncheckedGet");
    *(void **)&a.tstate_get_frame = sym("PyThreadState_GetFrame");
    *(void **)&a.frame_get_code   = sym("PyFrame_GetCode");
    *(void **)&a.frame_get_line   = sym("PyFrame_GetLineNumber");
    *(void **)&a.frame_get_back   = sym("PyFrame_GetBack");
    *(void **)&a.getattr          = sym("PyObject_GetAttrString");
    *(void **)&a.unicode_utf8     = sym("PyUnicode_AsUTF8AndSize");
    *(void **)&a.incref           = sym("Py_IncRef");
    *(void **)&a.decref           = sym("Py_DecRef");
    *(void **)&a.err_occurred     = sym("PyErr_Occurred");
    *(void **)&a.err_clear        = sym("PyErr_Clear");
    if (!a.gil_check || !a.tstate_unchecked || !a.tstate_get_frame || !a.frame_get_code ||
        !a.frame_get_line || !a.frame_get_back || !a.getattr || !a.unicode_utf8 ||
        !a.incref || !a.decref || !a.err_occurred || !a.err_clear) {
        /* Python 3.8 (no PyFrame_GetCode/GetBack) or an unusual build:
         * no Python stacks, native stacks still work. */
        atomic_store(&g_py_state, -1);
        return;
    }
    g_py = a;
    atomic_store(&g_py_state, 1);
}

/* ------------------------------------------------------------ code cache */

#define CODE_SLOTS 16384u               /* power of two */
#define CODE_FILL_MAX (CODE_SLOTS / 4 * 3)

typedef struct code_slot {
    void    *code;                      /* pinned code object, NULL = empty */
    uint32_t file_id, func_id;
} code_slot;

static code_slot *g_codes;
static uint32_t g_codes_used;

/* Intern one string attribute of a code object; 0 when unavailable. */
static uint32_t attr_string_id(void *code, const char *attr)
{
    void *s = g_py.getattr(code, attr);
    if (!s) {
        g_py.err_clear();               /* no exception was set before us */
        return 0;
    }
    ssize_t len = 0;
    const char *text = g_py.unicode_utf8(s, &len);
    uint32_t id = 0;
    if (text)
        id = ss_string_id(text, (size_t)len);
    else
        g_py.err_clear();               /* e.g. lone surrogates */
    g_py.decref(s);
    return id;
}

static void code_names(void *code, uint32_t *file_id, uint32_t *func_id)
{
    *file_id = attr_string_id(code, "co_filename");
    *func_id = 0;
    if (!g_no_qualname) {
        *func_id = attr_string_id(code, "co_qualname");   /* Class.method, 3.11+ */
        if (!*func_id)
            g_no_qualname = 1;
    }
    if (!*func_id)
        *func_id = attr_string_id(code, "co_name");
}

static void code_lookup(void *code, uint32_t *file_id, uint32_t *func_id)
{
    if (g_codes) {
        uint64_t h = ((uint64_t)(uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ull;
        for (uint32_t p = 0; p < CODE_SLOTS; p++) {
            code_slot *s = &g_codes[(h + p) & (CODE_SLOTS - 1)];
            if (s->code == code) {
                *file_id = s->file_id;
                *func_id = s->func_id;
                return;
            }
            if (!s->code) {
                if (g_codes_used >= CODE_FILL_MAX)
                    break;
                code_names(code, file_id, func_id);
                g_py.incref(code);
                s->code = code;
                s->file_id = *file_id;
                s->func_id = *func_id;
                g_codes_used++;
                return;
            }
        }
    }
    code_names(code, file_id, func_id);
}

/* ------------------------------------------------------------ stack table */

#define PYSTACK_SLOTS  4096u
#define PYSTACK_PROBES 64u

typedef struct pystack_slot {
    uint64_t   key;                     /* hash | 1, 0 = empty */
    uint32_t   id;
    uint32_t   depth;
    ss_pyframe frames[SS_PYSTACK_MAX_DEPTH];
} pystack_slot;

static pystack_slot *g_pystacks;
static uint32_t g_next_pystack_id = 1;

static uint64_t hash_frames(const ss_pyframe *f, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = ((uint64_t)f[i].file_id << 32 | f[i].func_id) ^ ((uint64_t)f[i].line << 17);
        h ^= v;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h | 1u;
}

static uint32_t write_pystack(const ss_pyframe *frames, uint32_t depth)
{
    ss_pystack_rec *rec = ss_rec_begin(SS_REC_PYSTACK, sizeof *rec,
                                       depth * (uint32_t)sizeof(ss_pyframe));
    if (!rec)
        return 0;
    uint32_t id = g_next_pystack_id++;
    rec->id = id;
    rec->depth = depth;
    memcpy((char *)rec + sizeof *rec, frames, depth * sizeof(ss_pyframe));
    ss_rec_commit(rec);
    return id;
}

static uint32_t pystack_id_for(const ss_pyframe *frames, uint32_t depth)
{
    uint64_t h = hash_frames(frames, depth);
    size_t bytes = depth * sizeof(ss_pyframe);
    if (g_pystacks) {
        for (uint32_t p = 0; p < PYSTACK_PROBES; p++) {
            pystack_slot *s = &g_pystacks[(h + p) & (PYSTACK_SLOTS - 1)];
            if (s->key == h && s->depth == depth && memcmp(s->frames, frames, bytes) == 0)
                return s->id;
            if (s->key == 0) {
                uint32_t id = write_pystack(frames, depth);
                if (id) {
                    s->id = id;
                    s->depth = depth;
                    memcpy(s->frames, frames, bytes);
                    s->key = h;
                }
                return id;
            }
        }
    }
    return write_pystack(frames, depth);   /* table full: written per call */
}

static void *map_table(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* ------------------------------------------------------------ capture */

uint32_t ss_pystack_capture(void)
{
    int state = atomic_load_explicit(&g_py_state, memory_order_acquire);
    if (state != 1) {
        /* Retry only when the module map changed: a program that embeds
         * Python may dlopen libpython after the shim started. */
        uint32_t gen = ss_callsite_module_generation();
        if (state == -1 || (state == 0 && __atomic_load_n(&g_py_tried_generation, __ATOMIC_RELAXED) == gen))
            return 0;
        if (pthread_mutex_trylock(&g_py_lock) != 0)
            return 0;
        if (atomic_load(&g_py_state) == 0 && g_py_tried_generation != gen) {
            g_py_tried_generation = gen;
            resolve_python_api();
        }
        pthread_mutex_unlock(&g_py_lock);
        if (atomic_load(&g_py_state) != 1)
            return 0;
    }

    if (!g_py.is_initialized() || (g_py.is_finalizing && g_py.is_finalizing()))
        return 0;
    if (!g_py.gil_check())
        return 0;
    /* PyGILState_Check answers 1 when its checks are disabled (some
     * sub-interpreter setups): the unchecked thread state tells for sure
     * whether this thread runs Python at all. */
    void *tstate = g_py.tstate_unchecked();
    if (!tstate || g_py.err_occurred())
        return 0;
    if (pthread_mutex_trylock(&g_py_lock) != 0)
        return 0;
    if (!g_codes)
        g_codes = map_table(CODE_SLOTS * sizeof(code_slot));
    if (!g_pystacks)
        g_pystacks = map_table(PYSTACK_SLOTS * sizeof(pystack_slot));

    ss_pyframe frames[SS_PYSTACK_MAX_DEPTH];
    uint32_t depth = 0;
    void *frame = g_py.tstate_get_frame(tstate);        /* new reference or NULL */
    while (frame && depth < SS_PYSTACK_MAX_DEPTH) {
        void *code = g_py.frame_get_code(frame);        /* new reference */
        ss_pyframe *f = &frames[depth++];
        memset(f, 0, sizeof *f);
        int line = g_py.frame_get_line(frame);
        f->line = line > 0 ? (uint32_t)line : 0;
        if (code) {
            code_lookup(code, &f->file_id, &f->func_id);
            g_py.decref(code);
        }
        void *back = g_py.frame_get_back(frame);        /* new reference or NULL */
        g_py.decref(frame);
        frame = back;
    }
    if (frame)
        g_py.decref(frame);
    uint32_t id = depth ? pystack_id_for(frames, depth) : 0;
    pthread_mutex_unlock(&g_py_lock);
    return id;
}

void ss_pystack_atfork_child(void)
{
    /* The child's trace starts without the parent's strings and stacks.  The
     * pins of the forgotten cache entries stay (a few code objects that are
     * never freed), which is harmless. */
    pthread_mutex_init(&g_py_lock, NULL);
    if (g_codes)
        madvise(g_codes, CODE_SLOTS * sizeof(code_slot), MADV_DONTNEED);
    if (g_pystacks)
        madvise(g_pystacks, PYSTACK_SLOTS * sizeof(pystack_slot), MADV_DONTNEED);
    g_codes_used = 0;
    g_next_pystack_id = 1;
}
