/*
 * What a hot CUDA call (docs/sampling.md: launches, copies, event records,
 * stream queries, ...) costs the program while sampled recording is OFF, the
 * state most of a long run is in: `make bench-hot-off` runs this under no
 * shim, the shim disabled, the default (sampled: this program's calls after
 * its first HEAD are not recorded) and full recording.
 *
 *   hot_call_bench [N]   best of 5 x N calls each of cudaStreamQuery and
 *                        cudaEventRecord, after 20 000 calls of warm-up (more
 *                        than the default head of 3 000 hot calls)
 *
 * Linked against the tests' fake libcudart.so.13, whose calls return at
 * once: what is timed is the path through the shim, not CUDA.
 */
#include "bench_util.h"

#define BEST_OF(label, n, call)                                                    \
    do {                                                                           \
        double best = 1e30;                                                        \
        for (int rep = 0; rep < 5; rep++) {                                        \
            double t0 = bench_now_s();                                             \
            for (long i = 0; i < (n); i++)                                         \
                (void)(call);                                                      \
            double ns = (bench_now_s() - t0) / (double)(n) * 1e9;                  \
            if (ns < best)                                                         \
                best = ns;                                                         \
        }                                                                          \
        printf("%-18s %8.1f\n", label, best);                                      \
    } while (0)

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    if (n <= 0) {
        fprintf(stderr, "usage: hot_call_bench [N > 0]\n");
        return 2;
    }
    cudaEvent_t ev = (cudaEvent_t)0x1;  /* the fake cudart never looks at it */
    for (int i = 0; i < 20000; i++)     /* past the default head */
        (void)cudaStreamQuery(NULL);
    BEST_OF("cudaStreamQuery", n, cudaStreamQuery(NULL));
    BEST_OF("cudaEventRecord", n, cudaEventRecord(ev, NULL));
    return 0;
}
