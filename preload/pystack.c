/*
 * Python stacks at CUDA calls (see docs/call-sites.md, "Python").
 *
 * For a Python program the native stack ends in the interpreter's eval loop,
 * which names no user code; the user's call site is the Python frame that
 * called into PyTorch.  PyTorch releases the GIL around almost all of its
 * work (tensor ops, .item(), torch.cuda.synchronize(), copies), so a reader
 * that needs the GIL sees nothing exactly where the interesting calls are.
 *
 * So this file reads the calling thread's frames straight from the
 * interpreter's memory, py-spy style, with or without the GIL:
 *
 *  - the thread state comes from PyGILState_GetThisThreadState(), which only
 *    reads a TSS key (no lock, no allocation);
 *  - frames, code objects and strings are read at offsets known per CPython
 *    minor version (3.10 to 3.13, table `g_layouts`, checked against each
 *    version's own headers), never through an API that allocates, locks or
 *    runs Python code.  The one interpreter function called is
 *    PyCode_Addr2Line(), a pure read of the code object's line table in
 *    3.10-3.13 (no allocation, no lock, no error set);
 *  - only the calling thread's own frames are read.  While the thread is
 *    inside a CUDA call it is not running Python, so its frame chain, the
 *    code objects the frames hold strong references to, and their names do
 *    not change under us; other threads may run Python meanwhile, but they
 *    never rewrite another thread's frames.
 *  - everything is validated before it is trusted: pointers plausible and
 *    aligned, code objects' ob_type == &PyCode_Type, strings' ob_type ==
 *    &PyUnicode_Type and compact, instruction offsets inside the code, depth
 *    bounded, loops detected.  Any mismatch records no Python stack at all,
 *    so a layout we got wrong costs the Python call site, never garbage in
 *    the trace.
 *  - a layout is trusted for plain reads only once proven in this process:
 *    until then captures read through process_vm_readv() on our own pid (a
 *    bad pointer fails with EFAULT instead of faulting), and the first one
 *    made with the GIL held must equal the C-API reader's stack.  A layout
 *    that fails is dropped for the C-API reader (capture_unverified()).
 *  - SYNCSIGHT_PYSTACK_READER=safe reads through process_vm_readv() always,
 *    so that even a dangling pointer (the interpreter freeing thread states
 *    at exit while this thread sits in a CUDA call) cannot fault.  It costs
 *    a system call per object read, so it is opt-in (numbers in
 *    docs/call-sites.md).
 *
 * Interpreters without a layout here (3.9 and older, 3.14+, free-threaded
 * builds) keep the earlier C-API reader: it needs the GIL, so for them only
 * calls made with the GIL held get a Python stack.  SYNCSIGHT_PYSTACK_READER
 * =api forces it (tests).
 *
 * Code objects cannot be pinned without the GIL, so the cache that maps a
 * code object to the string ids of its file and function is keyed by the
 * code object's address *and* the addresses of its filename, name and line
 * table objects and its first line: a code object freed and another one
 * allocated at the same address is recognized unless all of these match too.
 * Distinct stacks are written once (SS_REC_PYSTACK) like native stacks.  The
 * frame walk runs without any lock; the cache and the stack table are
 * guarded by a mutex held for a few hundred ns (nothing under it can call
 * back into CUDA, and a signal handler re-entering the shim on this thread is
 * stopped by callsite.c's reentrancy guard before it gets here).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "producers.h"
#include "callsite_internal.h"

/* ------------------------------------------------------------ layouts */

/* Where the fields we read sit, per CPython minor version (x86-64 and
 * aarch64 Linux, default non-debug builds; offsets printed with offsetof()
 * from each version's headers, Py_BUILD_CORE for the internal ones). */
typedef struct py_layout {
    int      minor;                 /* 3.<minor> */
    int      frame_objects;         /* 3.10: frames are PyFrameObjects (f_back chain) */
    uint16_t tstate_frame;          /* PyThreadState: current frame, or cframe (see next) */
    int16_t  cframe_current;        /* _PyCFrame.current_frame; -1: tstate_frame is the frame */
    /* _PyInterpreterFrame (3.11+) or PyFrameObject (3.10) */
    uint16_t frame_code, frame_back, frame_instr, frame_owner, frame_read;
    uint16_t frame_trace, frame_lineno;     /* 3.10 only: f_trace, f_lineno */
    int16_t  owner_cstack;          /* FRAME_OWNED_BY_CSTACK (3.12+), -1 none */
    uint8_t  owner_max;             /* highest valid owner value */
    /* PyCodeObject */
    uint16_t code_firstlineno, code_filename, code_name, code_linetable;
    int16_t  code_firsttraceable;   /* -1: none (3.10) */
    uint16_t code_adaptive;         /* co_code_adaptive: start of the code units (3.11+) */
    uint16_t code_read;
    /* PyUnicode: sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject),
     * and the state bit that must be set for compact data to exist. */
    uint16_t ascii_size, compact_size;
    uint32_t state_ready_bit;       /* 3.10/3.11 "ready"; 0 = none (3.12+) */
} py_layout;

/* Owner values shared by 3.11-3.13 (pycore_frame.h). */
#define OWNER_GENERATOR 1

static const py_layout g_layouts[] = {
    { .minor = 10, .frame_objects = 1, .tstate_frame = 24, .cframe_current = -1,
      .frame_code = 32, .frame_back = 24, .frame_instr = 96, .frame_owner = 0, .frame_read = 104,
      .frame_trace = 72, .frame_lineno = 100, .owner_cstack = -1, .owner_max = 0,
      .code_firstlineno = 40, .code_filename = 104, .code_name = 112 /* co_name */,
      .code_linetable = 120, .code_firsttraceable = -1, .code_adaptive = 0, .code_read = 128,
      .ascii_size = 48, .compact_size = 72, .state_ready_bit = 0x80 },
    { .minor = 11, .tstate_frame = 56, .cframe_current = 8,
      .frame_code = 32, .frame_back = 48, .frame_instr = 56, .frame_owner = 69, .frame_read = 72,
      .owner_cstack = -1, .owner_max = 2,
      .code_firstlineno = 72, .code_filename = 112, .code_name = 128 /* co_qualname */,
      .code_linetable = 136, .code_firsttraceable = 168, .code_adaptive = 184, .code_read = 176,
      .ascii_size = 48, .compact_size = 72, .state_ready_bit = 0x80 },
    { .minor = 12, .tstate_frame = 56, .cframe_current = 0,
      .frame_code = 0, .frame_back = 8, .frame_instr = 56, .frame_owner = 70, .frame_read = 72,
      .owner_cstack = 3, .owner_max = 3,
      .code_firstlineno = 68, .code_filename = 112, .code_name = 128,
      .code_linetable = 136, .code_firsttraceable = 176, .code_adaptive = 192, .code_read = 184,
      .ascii_size = 40, .compact_size = 56, .state_ready_bit = 0 },
    { .minor = 13, .tstate_frame = 72, .cframe_current = -1,
      .frame_code = 0 /* f_executable */, .frame_back = 8, .frame_instr = 56 /* instr_ptr */,
      .frame_owner = 70, .frame_read = 72, .owner_cstack = 3, .owner_max = 3,
      .code_firstlineno = 68, .code_filename = 112, .code_name = 128,
      .code_linetable = 136, .code_firsttraceable = 184, .code_adaptive = 200, .code_read = 192,
      .ascii_size = 40, .compact_size = 56, .state_ready_bit = 0 },
};

/* PyObject header (no Py_TRACE_REFS): ob_refcnt, ob_type, then ob_size. */
#define OB_TYPE 8
#define OB_SIZE 16
/* PyASCIIObject: length at 16, state bit field at 32 in every version here. */
#define STR_LENGTH 16
#define STR_STATE  32
#define STATE_KIND(s)    (((s) >> 2) & 7u)
#define STATE_COMPACT    0x20u
#define STATE_ASCII      0x40u

#define WALK_MAX 64                 /* frames looked at, recorded or skipped */
#define STR_MAX_CHARS 1024          /* longer names are cut (paths rarely are) */

/* ------------------------------------------------------------ resolution */

enum reader_kind { READER_NONE = 0, READER_DIRECT, READER_API };

typedef struct py_direct {
    const py_layout *layout;
    int   (*is_initialized)(void);
    int   (*is_finalizing)(void);           /* optional */
    void *(*this_thread_state)(void);       /* PyGILState_GetThisThreadState */
    int   (*addr2line)(void *code, int byte_offset);
    uintptr_t code_type, unicode_type, frame_type;
} py_direct;

/* The C-API reader kept for interpreters without a layout (GIL held only). */
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

static py_direct g_direct;
static py_api g_py;
static _Atomic int g_reader;            /* enum reader_kind, valid when g_py_state == 1 */
static int g_safe_read;                 /* SYNCSIGHT_PYSTACK_READER=safe: always process_vm_readv */
static int g_can_safe_read;             /* process_vm_readv works in this process */
/* The layout is trusted for plain reads only once a capture read through
 * process_vm_readv has passed every check: a layout that does not match
 * this interpreter (a patched build, a changed patch release) then fails
 * that first capture without faulting, and the API reader takes over. */
enum { LAYOUT_UNVERIFIED = 0, LAYOUT_VERIFIED = 1 };
static _Atomic int g_layout_state;
static __thread int t_safe;             /* this capture reads through process_vm_readv */
static int g_api_ok;                    /* the C-API reader resolved too */
static pid_t g_pid;
static _Atomic int g_py_state;          /* 0 not tried, 1 usable, -1 absent */
static uint32_t g_py_tried_generation = UINT32_MAX; /* none tried yet */
static pthread_mutex_t g_py_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_no_qualname;               /* API reader, Python < 3.11: no co_qualname */

static void *sym(const char *name) { return dlsym(RTLD_DEFAULT, name); }

/* "3.12.3 (main, ...)" -> 12; -1 when not 3.x.  Free-threaded builds lay
 * out objects differently (no layout here). */
static int python_minor(void)
{
    const char *(*get_version)(void);
    *(void **)&get_version = sym("Py_GetVersion");
    if (!get_version)
        return -1;
    const char *v = get_version();     /* formats into a static buffer: no allocation */
    if (!v || v[0] != '3' || v[1] != '.')
        return -1;
    if (strstr(v, "free-threading"))
        return -1;
    char *end;
    long minor = strtol(v + 2, &end, 10);
    return end == v + 2 || *end != '.' ? -1 : (int)minor;
}

/* process_vm_readv on our own pid: allowed without ptrace rights (same
 * process), but a seccomp profile may forbid it; probe once. */
static int safe_read_works(void)
{
    static const char probe[8] = "syncsgt";
    char out[8];
    struct iovec l = { out, sizeof out }, r = { (void *)probe, sizeof probe };
    g_pid = getpid();
    return process_vm_readv(g_pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof out &&
           memcmp(out, probe, sizeof out) == 0;
}

static int resolve_direct(int minor)
{
    const py_layout *layout = NULL;
    for (size_t i = 0; i < sizeof g_layouts / sizeof g_layouts[0]; i++)
        if (g_layouts[i].minor == minor)
            layout = &g_layouts[i];
    if (!layout)
        return 0;
    py_direct d;
    memset(&d, 0, sizeof d);
    d.layout = layout;
    *(void **)&d.is_initialized    = sym("Py_IsInitialized");
    *(void **)&d.is_finalizing     = sym("Py_IsFinalizing");        /* 3.13 */
    if (!d.is_finalizing)
        *(void **)&d.is_finalizing = sym("_Py_IsFinalizing");       /* 3.7-3.12 */
    *(void **)&d.this_thread_state = sym("PyGILState_GetThisThreadState");
    *(void **)&d.addr2line         = sym("PyCode_Addr2Line");
    d.code_type    = (uintptr_t)sym("PyCode_Type");
    d.unicode_type = (uintptr_t)sym("PyUnicode_Type");
    d.frame_type   = (uintptr_t)sym("PyFrame_Type");
    if (!d.is_initialized || !d.this_thread_state || !d.addr2line || !d.code_type ||
        !d.unicode_type || (layout->frame_objects && !d.frame_type))
        return 0;
    g_direct = d;
    return 1;
}

static int resolve_api(void)
{
    py_api a;
    memset(&a, 0, sizeof a);
    *(void **)&a.is_initialized   = sym("Py_IsInitialized");
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
    /* Python 3.8 (no PyFrame_GetCode/GetBack) or an unusual build: no
     * Python stacks, native stacks still work. */
    if (!a.is_initialized || !a.gil_check || !a.tstate_unchecked || !a.tstate_get_frame ||
        !a.frame_get_code || !a.frame_get_line || !a.frame_get_back || !a.getattr ||
        !a.unicode_utf8 || !a.incref || !a.decref || !a.err_occurred || !a.err_clear)
        return 0;
    g_py = a;
    return 1;
}

/* Choose the reader once Python is in the process; g_py_lock held. */
static void resolve_python(void)
{
    if (!sym("Py_IsInitialized"))
        return;                      /* not a Python process (yet): retried after a dlopen */
    const char *want = getenv("SYNCSIGHT_PYSTACK_READER");
    int force_api = want && strcmp(want, "api") == 0;
    /* Tests only: read with another version's layout, to check that the
     * validation turns wrong offsets into "no stack" and not into garbage. */
    const char *layout = getenv("SYNCSIGHT_PYSTACK_LAYOUT");
    int minor = layout && strncmp(layout, "3.", 2) == 0 ? atoi(layout + 2) : python_minor();
    if (!force_api && resolve_direct(minor)) {
        g_reader = READER_DIRECT;
        g_can_safe_read = safe_read_works();
        g_safe_read = want && strcmp(want, "safe") == 0 && g_can_safe_read;
        g_api_ok = resolve_api();       /* to check the layout against, and fall back to */
    } else if (resolve_api()) {
        g_reader = READER_API;
    } else {
        atomic_store(&g_py_state, -1);
        return;
    }
    atomic_store(&g_py_state, 1);
}

/* ------------------------------------------------------------ memory reads */

static inline int plausible_ptr(uintptr_t p, uintptr_t align)
{
    /* Below 64 KiB nothing is mapped (vm.mmap_min_addr); user space ends at
     * 2^56 even with 5-level page tables. */
    return p >= 65536 && p < (1ull << 56) && (p & (align - 1)) == 0;
}

/* Copy n bytes of our own memory at src.  Under t_safe a bad address fails
 * the read (EFAULT) instead of faulting the program. */
static int read_mem(void *dst, uintptr_t src, size_t n)
{
    if (!plausible_ptr(src, 1) || src + n < src)
        return -1;
    if (t_safe) {
        struct iovec l = { dst, n }, r = { (void *)src, n };
        return process_vm_readv(g_pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
    }
    memcpy(dst, (const void *)src, n);
    return 0;
}

static inline uintptr_t load_ptr(const unsigned char *buf, unsigned off)
{
    uintptr_t v;
    memcpy(&v, buf + off, sizeof v);
    return v;
}

static inline int32_t load_i32(const unsigned char *buf, unsigned off)
{
    int32_t v;
    memcpy(&v, buf + off, sizeof v);
    return v;
}

/* ------------------------------------------------------------ strings */

static size_t put_utf8(char *out, uint32_t c)
{
    if (c >= 0xDC80 && c <= 0xDCFF) {   /* surrogateescape: the original byte of a path */
        out[0] = (char)(c - 0xDC00);
        return 1;
    }
    if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
        c = 0xFFFD;                     /* lone surrogate: not valid UTF-8 */
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12);
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | c >> 18);
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* Intern a str object as UTF-8: its SS_REC_STRING id, or 0 when `obj` is
 * not a compact str (which, for a code object's names, means our view of
 * memory is wrong: the caller then records no stack). */
static uint32_t direct_string_id(uintptr_t obj, int *bad)
{
    const py_layout *L = g_direct.layout;
    unsigned char hdr[80];
    if (!plausible_ptr(obj, 8) || read_mem(hdr, obj, L->ascii_size) != 0 ||
        load_ptr(hdr, OB_TYPE) != g_direct.unicode_type) {
        *bad = 1;
        return 0;
    }
    int64_t length;
    uint32_t state;
    memcpy(&length, hdr + STR_LENGTH, sizeof length);
    memcpy(&state, hdr + STR_STATE, sizeof state);
    unsigned kind = STATE_KIND(state);
    int ascii = (state & STATE_ASCII) != 0;
    if (!(state & STATE_COMPACT) || (L->state_ready_bit && !(state & L->state_ready_bit)) ||
        (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1) ||
        length < 0 || length > (1 << 24)) {
        *bad = 1;
        return 0;
    }
    size_t nchars = (size_t)length < STR_MAX_CHARS ? (size_t)length : STR_MAX_CHARS;
    uintptr_t data = obj + (ascii ? L->ascii_size : L->compact_size);
    unsigned char raw[STR_MAX_CHARS * 4];
    if (nchars && read_mem(raw, data, nchars * kind) != 0) {
        *bad = 1;
        return 0;
    }
    if (ascii)
        return ss_string_id((const char *)raw, nchars);
    char utf8[STR_MAX_CHARS * 4];
    size_t n = 0;
    for (size_t i = 0; i < nchars; i++) {
        uint32_t c;
        if (kind == 1) {
            c = raw[i];
        } else if (kind == 2) {
            uint16_t u;
            memcpy(&u, raw + 2 * i, 2);
            c = u;
        } else {
            memcpy(&c, raw + 4 * i, 4);
        }
        n += put_utf8(utf8 + n, c);
    }
    return ss_string_id(utf8, n);
}

/* ------------------------------------------------------------ frame walk */

/* One frame as read, before its names and line are looked up. */
typedef struct raw_frame {
    uintptr_t code, filename, name, linetable;
    int32_t   firstlineno;
    int32_t   offset;           /* byte offset of the current instruction */
    int32_t   line;             /* valid when line_known */
    int32_t   line_known;       /* 3.10 while tracing: f_lineno */
} raw_frame;

/* Read and check the fields of a code object into f; 0 when it is one.
 * *cbp points at the object's header (our copy with the safe reader, the
 * object itself otherwise: copying ~190 bytes per frame was a third of the
 * walk's time). */
static int read_code(uintptr_t code, raw_frame *f, unsigned char *copy, const unsigned char **cbp)
{
    const py_layout *L = g_direct.layout;
    if (!plausible_ptr(code, 8))
        return -1;
    const unsigned char *cb = (const unsigned char *)code;
    if (t_safe) {
        if (read_mem(copy, code, L->code_read) != 0)
            return -1;
        cb = copy;
    }
    *cbp = cb;
    if (load_ptr(cb, OB_TYPE) != g_direct.code_type)
        return -1;
    f->code = code;
    f->filename = load_ptr(cb, L->code_filename);
    f->name = load_ptr(cb, L->code_name);
    f->linetable = load_ptr(cb, L->code_linetable);
    f->firstlineno = load_i32(cb, L->code_firstlineno);
    if (!plausible_ptr(f->filename, 8) || !plausible_ptr(f->name, 8) ||
        !plausible_ptr(f->linetable, 8) || f->firstlineno < 0)
        return -1;
    return 0;
}

/* The calling thread's frames, innermost first, into out[] (at most
 * SS_PYSTACK_MAX_DEPTH).  Returns the count, or -1 when anything read does
 * not look like what the layout says. */
static int walk_frames(uintptr_t tstate, raw_frame *out)
{
    const py_layout *L = g_direct.layout;
    uintptr_t frame;
    unsigned char tb[8];
    if (read_mem(tb, tstate + L->tstate_frame, 8) != 0)
        return -1;
    frame = load_ptr(tb, 0);
    if (L->cframe_current >= 0 && frame) {      /* 3.11/3.12: via the C frame */
        if (!plausible_ptr(frame, 8) || read_mem(tb, frame + (uintptr_t)L->cframe_current, 8) != 0)
            return -1;
        frame = load_ptr(tb, 0);
    }

    /* Brent's cycle detection: compare each frame with one saved earlier,
     * re-saved at power-of-two distances; a loop in the chain is found
     * within a few times its length, in O(1) per frame. */
    uintptr_t saved = 0;
    int power = 1, since_saved = 0;
    int n = 0;
    for (int steps = 0; frame && steps < WALK_MAX && n < SS_PYSTACK_MAX_DEPTH; steps++) {
        if (!plausible_ptr(frame, 8) || frame == saved)
            return -1;                          /* a loop: not a real chain */
        if (++since_saved == power) {
            saved = frame;
            power *= 2;
            since_saved = 0;
        }
        unsigned char fb[112], copy[208];
        const unsigned char *cb;
        if (read_mem(fb, frame, L->frame_read) != 0)
            return -1;
        uintptr_t back = load_ptr(fb, L->frame_back);
        raw_frame *f = &out[n];

        if (L->frame_objects) {                 /* 3.10: PyFrameObject */
            if (load_ptr(fb, OB_TYPE) != g_direct.frame_type ||
                read_code(load_ptr(fb, L->frame_code), f, copy, &cb) != 0)
                return -1;
            int32_t lasti = load_i32(fb, L->frame_instr);
            /* As PyFrame_GetLineNumber: f_lineno is kept only while tracing. */
            f->line_known = load_ptr(fb, L->frame_trace) != 0;
            f->line = f->line_known ? load_i32(fb, L->frame_lineno) : 0;
            f->offset = lasti < 0 || lasti > (1 << 26) ? -1 : lasti * 2;
            n++;
            frame = back;
            continue;
        }

        unsigned owner = fb[L->frame_owner];
        if (owner > L->owner_max)
            return -1;
        if ((int)owner == L->owner_cstack) {     /* the eval loop's entry shim */
            frame = back;
            continue;
        }
        if (read_code(load_ptr(fb, L->frame_code), f, copy, &cb) != 0)
            return -1;
        int64_t units;
        memcpy(&units, cb + OB_SIZE, sizeof units);
        int32_t first_traceable = load_i32(cb, (unsigned)L->code_firsttraceable);
        intptr_t offset = (intptr_t)(load_ptr(fb, L->frame_instr) - (f->code + L->code_adaptive));
        if (units <= 0 || units > (1 << 26) || first_traceable < 0 || first_traceable > units)
            return -1;
        /* A frame pushed but not yet started (its instruction pointer still
         * before the RESUME) is "incomplete": CPython skips it too. */
        if (owner != OWNER_GENERATOR && offset < (intptr_t)first_traceable * 2) {
            frame = back;
            continue;
        }
        if (offset < 0 || offset >= units * 2 || (offset & 1))
            return -1;
        f->offset = (int32_t)offset;
        f->line_known = 0;
        n++;
        frame = back;
    }
    return n;
}

/* ------------------------------------------------------------ code cache */

#define CODE_SLOTS 16384u               /* power of two */
#define CODE_FILL_MAX (CODE_SLOTS / 4 * 3)

/* Lines of the last few instruction offsets seen per code object:
 * PyCode_Addr2Line scans the line table from its start (~20-40 ns per
 * entry), and a loop of CUDA calls meets the same frames at the same
 * offsets again and again. */
#define LINE_MEMO 4

typedef struct code_slot {
    uintptr_t code;                     /* 0 = empty */
    uintptr_t filename, name, linetable;/* direct reader: recognizes a reused address */
    int32_t   firstlineno;
    uint32_t  file_id, func_id;
    uint32_t  pinned;                   /* API reader holds a reference: address stays this code's */
    uint32_t  memo_next;                /* round robin */
    int32_t   memo_offset[LINE_MEMO];   /* -2 = unused */
    int32_t   memo_line[LINE_MEMO];
} code_slot;

static code_slot *g_codes;
static uint32_t g_codes_used;

static code_slot *code_slot_for(uintptr_t code, int *is_new)
{
    *is_new = 0;
    if (!g_codes)
        return NULL;
    uint64_t h = ((uint64_t)code >> 4) * 0x9e3779b97f4a7c15ull;
    for (uint32_t p = 0; p < CODE_SLOTS; p++) {
        code_slot *s = &g_codes[(h + p) & (CODE_SLOTS - 1)];
        if (s->code == code)
            return s;
        if (!s->code) {
            if (g_codes_used >= CODE_FILL_MAX)
                return NULL;
            *is_new = 1;
            return s;
        }
    }
    return NULL;
}

static int32_t memo_line(code_slot *s, const raw_frame *f)
{
    if (f->line_known)
        return f->line;
    if (s)
        for (int i = 0; i < LINE_MEMO; i++)
            if (s->memo_offset[i] == f->offset)
                return s->memo_line[i];
    int32_t line = g_direct.addr2line((void *)f->code, f->offset);
    if (s) {
        uint32_t i = s->memo_next++ % LINE_MEMO;
        s->memo_offset[i] = f->offset;
        s->memo_line[i] = line;
    }
    return line;
}

/* Direct reader: string ids of a frame's file and function and its line;
 * g_py_lock held.  Returns -1 when a name is not a str (the stack is then
 * dropped). */
static int direct_frame_info(const raw_frame *f, ss_pyframe *out)
{
    int is_new;
    code_slot *s = code_slot_for(f->code, &is_new);
    if (!s || is_new || s->filename != f->filename || s->name != f->name ||
        s->linetable != f->linetable || s->firstlineno != f->firstlineno) {
        int bad = 0;
        uint32_t file_id = direct_string_id(f->filename, &bad);
        uint32_t func_id = direct_string_id(f->name, &bad);
        if (bad)
            return -1;
        if (!s) {                       /* cache full: uncached */
            int32_t line = memo_line(NULL, f);
            out->file_id = file_id;
            out->func_id = func_id;
            out->line = line > 0 ? (uint32_t)line : 0;
            return 0;
        }
        if (is_new)                     /* new slot, or a reused address: (re)fill */
            g_codes_used++;
        s->code = f->code;
        s->filename = f->filename;
        s->name = f->name;
        s->linetable = f->linetable;
        s->firstlineno = f->firstlineno;
        s->file_id = file_id;
        s->func_id = func_id;
        s->memo_next = 0;
        for (int i = 0; i < LINE_MEMO; i++)
            s->memo_offset[i] = -2;
    }
    out->file_id = s->file_id;
    out->func_id = s->func_id;
    int32_t line = memo_line(s, f);
    out->line = line > 0 ? (uint32_t)line : 0;
    return 0;
}

/* API reader: intern one string attribute of a code object; 0 when unavailable. */
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

static void api_code_names(void *code, uint32_t *file_id, uint32_t *func_id)
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

/* API reader (GIL held): code objects are pinned with one reference, so a
 * cached address can never be reused by another code object. */
static void api_code_lookup(void *code, uint32_t *file_id, uint32_t *func_id)
{
    int is_new;
    code_slot *s = code_slot_for((uintptr_t)code, &is_new);
    if (s && s->pinned) {
        *file_id = s->file_id;
        *func_id = s->func_id;
        return;
    }
    /* A slot the direct reader filled is not trusted: its code object was
     * not pinned and may have been replaced at the same address. */
    api_code_names(code, file_id, func_id);
    if (s) {
        g_py.incref(code);
        if (is_new)
            g_codes_used++;
        s->code = (uintptr_t)code;
        s->filename = s->name = s->linetable = 0;   /* the direct reader refills its keys */
        s->file_id = *file_id;
        s->func_id = *func_id;
        s->pinned = 1;
    }
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

static void map_tables(void)
{
    if (!g_codes)
        g_codes = map_table(CODE_SLOTS * sizeof(code_slot));
    if (!g_pystacks)
        g_pystacks = map_table(PYSTACK_SLOTS * sizeof(pystack_slot));
}

/* ------------------------------------------------------------ capture */

/* The direct reader.  *failed is set when something read did not pass the
 * checks (as opposed to: no Python frames on this thread). */
static uint32_t capture_direct(int *failed)
{
    *failed = 0;
    if (!g_direct.is_initialized() || (g_direct.is_finalizing && g_direct.is_finalizing()))
        return 0;
    /* Reads the thread's TSS slot only: valid with or without the GIL, NULL
     * on threads that never ran Python (CUDA's, PyTorch's C++ workers). */
    uintptr_t tstate = (uintptr_t)g_direct.this_thread_state();
    if (!tstate || !plausible_ptr(tstate, 8))
        return 0;

    int verified = atomic_load_explicit(&g_layout_state, memory_order_acquire) == LAYOUT_VERIFIED;
    t_safe = g_safe_read || (!verified && g_can_safe_read);
    *failed = 0;
    raw_frame raw[SS_PYSTACK_MAX_DEPTH];
    int n = walk_frames(tstate, raw);
    if (n <= 0) {
        *failed = n < 0;
        return 0;
    }

    ss_pyframe frames[SS_PYSTACK_MAX_DEPTH];
    uint32_t id = 0;
    pthread_mutex_lock(&g_py_lock);
    map_tables();
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        memset(&frames[i], 0, sizeof frames[i]);
        ok = direct_frame_info(&raw[i], &frames[i]) == 0;
    }
    if (ok)
        id = pystack_id_for(frames, (uint32_t)n);
    pthread_mutex_unlock(&g_py_lock);
    if (!ok)
        *failed = 1;
    return id;
}

/* The C-API reader: only with the GIL, only through the C accessors, never
 * while an exception is set (the program's error state stays untouched). */
static uint32_t capture_api(void)
{
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
    pthread_mutex_lock(&g_py_lock);
    map_tables();

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
            api_code_lookup(code, &f->file_id, &f->func_id);
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

/* The layout failed its test: this interpreter is not laid out as the
 * table says (a patched build, a patch release that moved a field).  Never
 * read with it again; the API reader still gives stacks for calls made with
 * the GIL held. */
static void reject_layout(void)
{
    pthread_mutex_lock(&g_py_lock);
    if (atomic_load(&g_reader) == READER_DIRECT &&
        atomic_load(&g_layout_state) != LAYOUT_VERIFIED) {
        if (g_api_ok)
            atomic_store(&g_reader, READER_API);
        else
            atomic_store(&g_py_state, -1);
    }
    pthread_mutex_unlock(&g_py_lock);
}

/* Until one capture has proven the layout, every capture is read through
 * process_vm_readv (t_safe) and checked.  The proof: with the GIL held, the
 * direct reader's stack equals the C-API reader's (same frames, names and
 * lines give the same stack id from the shared dedup table); without the
 * GIL, a stack whose every frame and name passed the checks.  A stack that
 * differs from the API's, or anything that fails a check, rejects it. */
static uint32_t capture_unverified(void)
{
    if (g_api_ok && g_py.is_initialized() && g_py.gil_check()) {
        uint32_t want = capture_api();
        if (want) {
            int failed;
            uint32_t got = capture_direct(&failed);
            if (got == want)
                atomic_store_explicit(&g_layout_state, LAYOUT_VERIFIED, memory_order_release);
            else
                reject_layout();
            return want;
        }
        /* No frames, or an exception set: nothing to compare; go on. */
    }
    int failed;
    uint32_t id = capture_direct(&failed);
    if (failed) {
        reject_layout();
        return atomic_load(&g_reader) == READER_API ? capture_api() : 0;
    }
    if (id)
        atomic_store_explicit(&g_layout_state, LAYOUT_VERIFIED, memory_order_release);
    return id;
}

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
            resolve_python();
        }
        pthread_mutex_unlock(&g_py_lock);
        if (atomic_load(&g_py_state) != 1)
            return 0;
    }
    if (atomic_load_explicit(&g_reader, memory_order_relaxed) == READER_DIRECT) {
        if (atomic_load_explicit(&g_layout_state, memory_order_acquire) == LAYOUT_VERIFIED) {
            int failed;
            return capture_direct(&failed);
        }
        return capture_unverified();
    }
    return capture_api();
}

void ss_pystack_atfork_child(void)
{
    /* The child's trace starts without the parent's strings and stacks.  The
     * pins of the API reader's forgotten cache entries stay (a few code
     * objects that are never freed), which is harmless. */
    pthread_mutex_init(&g_py_lock, NULL);
    if (g_codes)
        madvise(g_codes, CODE_SLOTS * sizeof(code_slot), MADV_DONTNEED);
    if (g_pystacks)
        madvise(g_pystacks, PYSTACK_SLOTS * sizeof(pystack_slot), MADV_DONTNEED);
    g_codes_used = 0;
    g_next_pystack_id = 1;
    g_pid = getpid();                   /* process_vm_readv reads the child's memory */
}
