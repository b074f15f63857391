/*
 * Shared helpers of the GPU benchmark programs (launch_bound.cu,
 * copy_bound.cu): error checks, a monotonic clock, integer options, and the
 * one result line run_bench.sh parses:
 *
 *   BENCH name=<program> wall_s=<seconds of the timed loop> calls=<CUDA runtime calls in it>
 *
 * Only the timed loop counts: context creation, module loading and warm-up
 * are outside it, so that the tool's per-call overhead is what differs.
 */
#ifndef SYNCSIGHT_BENCH_UTIL_H
#define SYNCSIGHT_BENCH_UTIL_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_CHECK(call)                                                                     \
    do {                                                                                      \
        cudaError_t err_ = (call);                                                            \
        if (err_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,              \
                    cudaGetErrorString(err_));                                                \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "--name=value" from argv, else the environment variable, else the default:
 * run_bench.sh shrinks sizes through the environment. */
static inline long bench_option(int argc, char **argv, const char *name, const char *env, long dflt)
{
    size_t len = strlen(name);
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--", 2) && !strncmp(argv[i] + 2, name, len) && argv[i][2 + len] == '=')
            return strtol(argv[i] + 3 + len, NULL, 10);
    const char *e = getenv(env);
    return e && *e ? strtol(e, NULL, 10) : dflt;
}

static inline void bench_report(const char *name, double wall_s, long calls)
{
    printf("BENCH name=%s wall_s=%.6f calls=%ld\n", name, wall_s, calls);
    fflush(stdout);
}

#endif /* SYNCSIGHT_BENCH_UTIL_H */
