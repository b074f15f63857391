/*
 * CPU: what a module load costs the loading thread under the shim
 * (preload/cubin.c), through the fake libcupti of the tests: `make
 * bench-cubin`.  The driver loads modules lazily, at a kernel's first launch,
 * so in a PyTorch process the ~37 MB of images it loads land inside the first
 * training steps, on the threads that launch.
 *
 *   cubin_load_bench IMAGES KIB
 * "Loads" IMAGES distinct images of KIB KiB each (pseudo-random bytes behind
 * an ELF magic), timing each MODULE_LOADED callback, and prints the total
 * and the median per image in ms.  Without the fake libcupti (no shim, or
 * SYNCSIGHT_CUPTI=0) no callback runs and it prints the loop's own cost.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>

typedef void (*module_loaded_fn)(const void *, size_t, uint32_t);

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cubin_load_bench IMAGES KIB\n");
        return 2;
    }
    long images = atol(argv[1]), kib = atol(argv[2]);
    if (images < 1 || kib < 1 || kib > (1L << 20)) {
        fprintf(stderr, "cubin_load_bench: IMAGES >= 1 and 1 <= KIB <= 2^20\n");
        return 2;
    }
    void *dev = NULL;
    if (cudaMalloc(&dev, 256) != cudaSuccess) {     /* CUDA use: the shim starts CUPTI */
        fprintf(stderr, "cubin_load_bench: cudaMalloc failed\n");
        return 1;
    }
    module_loaded_fn loaded = (module_loaded_fn)dlsym(RTLD_DEFAULT, "fake_cupti_module_loaded");
    size_t n = (size_t)kib << 10;
    uint8_t *image = malloc(n);
    double *ms = calloc((size_t)images, sizeof *ms);
    if (!image || !ms)
        return 1;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        image[i] = (uint8_t)x;
    }
    memcpy(image, "\x7f" "ELF", 4);
    double total = 0;
    for (long k = 0; k < images; k++) {
        memcpy(image + 8, &k, sizeof k);            /* each image distinct */
        double t0 = now_ms();
        if (loaded)
            loaded(image, n, (uint32_t)k + 1);
        ms[k] = now_ms() - t0;
        total += ms[k];
    }
    qsort(ms, (size_t)images, sizeof *ms, cmp_double);
    printf("%s %ld x %ld KiB: %.2f ms in the callbacks, median %.3f ms per image\n",
           loaded ? "callbacks" : "no-callback", images, kib, total, ms[images / 2]);
    cudaFree(dev);
    free(image);
    free(ms);
    return 0;
}
