/*
 * Cost of capturing one call stack (24 frames) on this CPU, per unwinder,
 * and of the full ss_callsite_capture() path (unwind + module check + dedup
 * lookup) that the shim runs at each blameable CUDA call.  Run:
 *     make bench-callsite
 * The stack is made 40 frames deep by recursion so every capture walks the
 * full 24 frames.  Frame pointers are measured for comparison only: the
 * shim cannot rely on them (most libraries, PyTorch's included, omit them).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unwind.h>

#include <stdint.h>

/* bench_callsite_shim.c */
void bench_shim_init(void);
const char *bench_shim_unwinder(void);
uint32_t bench_shim_call(int want, uint64_t func, uint64_t stream);

#define DEPTH 24
#define ITERS 200000

typedef int (*unwinder_fn)(void **buf, int max);

static int via_backtrace(void **buf, int max) { return backtrace(buf, max); }

struct ub_state { void **buf; int n, max; };
static _Unwind_Reason_Code ub_step(struct _Unwind_Context *ctx, void *arg)
{
    struct ub_state *st = arg;
    if (st->n >= st->max)
        return _URC_END_OF_STACK;
    st->buf[st->n++] = (void *)_Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}
static int via_unwind_backtrace(void **buf, int max)
{
    struct ub_state st = { buf, 0, max };
    _Unwind_Backtrace(ub_step, &st);
    return st.n;
}

/* Valid only because this file is built with frame pointers kept. */
__attribute__((optimize("no-omit-frame-pointer")))
static int via_frame_pointers(void **buf, int max)
{
    void **fp = __builtin_frame_address(0);
    int n = 0;
    while (fp && n < max) {
        void *ret = fp[1];
        if (!ret)
            break;
        buf[n++] = ret;
        void **next = fp[0];
        if (next <= fp)
            break;
        fp = next;
    }
    return n;
}

static int (*unw_backtrace_fn)(void **, int);
static int via_libunwind(void **buf, int max) { return unw_backtrace_fn(buf, max); }

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile int sink;

static void run_unwinder(const char *name, unwinder_fn fn)
{
    void *buf[DEPTH];
    int n = fn(buf, DEPTH);               /* warm-up (first call loads libgcc_s) */
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++)
        sink += fn(buf, DEPTH);
    double ns = (now_ns() - t0) / ITERS;
    printf("%-28s %4d frames  %8.0f ns/stack\n", name, n, ns);
}

/* The shim's capture path (bench_callsite_shim.c: the real callsite.c in a
 * library of its own) called like a CUDA API wrapper from one call site:
 * want 1 = a blameable call that returned quickly, 2 = a kernel launch on a
 * non-default stream: both through the verified cache (a hit: the stack's
 * return addresses checked in place), 16 frames kept (the shim's default for
 * the interposer path); every call here has the same stack. */
static void run_capture(const char *name, int want)
{
    for (int i = 0; i < 8; i++)           /* first calls: unwound and written */
        bench_shim_call(want, 0x1234, 0x5678);
    uint32_t id = 0;
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++)
        id = bench_shim_call(want, 0x1234, 0x5678);
    double ns = (now_ns() - t0) / ITERS;
    printf("%-28s %4d frames  %8.0f ns/call (%s, same call site%s)\n", name, 16, ns,
           bench_shim_unwinder(), id ? "" : "; NO STACK");
}

__attribute__((noinline, optimize("no-omit-frame-pointer", "no-optimize-sibling-calls")))
static void recurse(int depth)
{
    if (depth > 0) {
        recurse(depth - 1);
        sink++;
        return;
    }
    run_unwinder("backtrace (glibc/libgcc)", via_backtrace);
    run_unwinder("_Unwind_Backtrace (libgcc)", via_unwind_backtrace);
    if (unw_backtrace_fn)
        run_unwinder("unw_backtrace (libunwind)", via_libunwind);
    else
        printf("%-28s not installed\n", "unw_backtrace (libunwind)");
    run_unwinder("frame pointers", via_frame_pointers);
    run_capture("capture, quick call", 1);
    run_capture("capture, launch", 2);
}

int main(void)
{
    void *lu = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (lu)
        *(void **)&unw_backtrace_fn = dlsym(lu, "unw_backtrace");
    bench_shim_init();
    recurse(40);
    return 0;
}
