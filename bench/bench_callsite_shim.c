/*
 * The shim side of bench/bench_callsite.c: preload/callsite.c and pystack.c
 * with the test stand-in for the layers below them, built as a shared
 * library so that, as in the real shim, the benchmark's own frames are
 * outside it (frames inside the library are dropped as the shim's own: built
 * into the executable, every frame would be, and no stack would be kept).
 */
#include <string.h>
#include "producers.h"
#include "callsite_fake_runtime.h"
#include "callsite_internal.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void bench_shim_init(void)
{
    fake_runtime_discard_records(1);
    ss_cfg.stacks = 1;
    ss_callsite_init();
}

EXPORT const char *bench_shim_unwinder(void) { return ss_callsite_unwinder(); }

/* A CUDA API wrapper as the interposer has it: the record on its stack, the
 * wrapper's return address as the caller.  Returns the stack id. */
__attribute__((noinline)) EXPORT uint32_t bench_shim_call(int want, uint64_t func, uint64_t stream)
{
    ss_api_rec r;
    memset(&r, 0, sizeof r);
    r.func = func;
    r.stream = stream;
    ss_callsite_capture_launch(&r, want, (uintptr_t)__builtin_return_address(0));
    __asm__ volatile("" ::: "memory");
    return r.stack_id;
}
