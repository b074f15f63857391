/*
 * Cost of one Python stack capture (preload/pystack.c), for
 * tests/callsite/pybench.py: built with pystack.c, callsite.c and the fake
 * runtime (tests/callsite_fake_runtime.c) into a library that Python calls
 * through ctypes, so that the stack being captured is a real interpreter's.
 */
#include <stdint.h>
#include <time.h>
#include "producers.h"
#include "callsite_internal.h"
#include "callsite_fake_runtime.h"

#define EXPORT __attribute__((visibility("default")))

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns per ss_pystack_capture() over `iterations` captures of the caller's
 * (unchanging) stack, after a first capture that resolves the interpreter,
 * interns the names and writes the stack.  *stack_id gets the id every
 * capture returned, or 0 when one of them returned another id (then the
 * number measures nothing useful and the driver fails). */
EXPORT double pybench_ns_per_capture(int iterations, uint32_t *stack_id)
{
    fake_runtime_discard_records(1);
    uint32_t first = ss_pystack_capture();
    uint64_t t0 = now_ns();
    uint32_t differs = 0;
    for (int i = 0; i < iterations; i++)
        differs |= ss_pystack_capture() ^ first;
    uint64_t t1 = now_ns();
    *stack_id = differs ? 0 : first;
    return iterations > 0 ? (double)(t1 - t0) / iterations : 0.0;
}
