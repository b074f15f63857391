// robust_late_dlopen: the CUDA runtime is loaded late with dlopen(RTLD_LOCAL),
// the way PyTorch loads its CUDA libraries, and called through dlsym.  The
// program has no link-time reference to cudart, so an LD_PRELOAD interposer
// cannot see these calls; syncsight must still record them (through CUPTI)
// and must not disturb the program.  Prints the same lines with or without
// the shim.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
typedef int (*memcpy_fn)(void *, const void *, size_t, int);
typedef int (*memset_fn)(void *, int, size_t);
typedef int (*sync_fn)(void);

static void *load_cudart(void)
{
    // The toolkit's lib64 is not always on the loader path: try it by name,
    // then where CUDA_HOME and the default install put it.
    const char *home = getenv("CUDA_HOME");
    char in_home[4096] = "";
    if (home && *home)
        snprintf(in_home, sizeof in_home, "%s/lib64/libcudart.so.13", home);
    const char *candidates[] = { "libcudart.so.13", in_home, "/usr/local/cuda/lib64/libcudart.so.13" };
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (!candidates[i][0])
            continue;
        void *h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    fprintf(stderr, "robust_late_dlopen: cannot load libcudart.so.13: %s\n", dlerror());
    return NULL;
}

#define SYM(handle, type, name)                                                            \
    type name = (type)dlsym(handle, #name);                                                \
    if (!name) {                                                                           \
        fprintf(stderr, "robust_late_dlopen: %s missing from libcudart\n", #name);         \
        return 1;                                                                          \
    }

#define CKR(call)                                                                          \
    do {                                                                                   \
        int ckr_ = (call);                                                                 \
        if (ckr_ != 0) {                                                                   \
            fprintf(stderr, "robust_late_dlopen: %s failed: %d\n", #call, ckr_);           \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

int main(void)
{
    printf("late_dlopen: before loading the CUDA runtime\n");
    fflush(stdout);
    void *cudart = load_cudart();
    if (!cudart)
        return 1;
    SYM(cudart, malloc_fn, cudaMalloc);
    SYM(cudart, free_fn, cudaFree);
    SYM(cudart, memcpy_fn, cudaMemcpy);
    SYM(cudart, memset_fn, cudaMemset);
    SYM(cudart, sync_fn, cudaDeviceSynchronize);

    const size_t n = 1 << 20;
    unsigned char *device = NULL;
    CKR(cudaMalloc((void **)&device, n));
    CKR(cudaMemset(device, 7, n));
    unsigned char *host = (unsigned char *)malloc(n);
    if (!host)
        return 1;
    const int cudaMemcpyDeviceToHost_ = 2;
    CKR(cudaMemcpy(host, device, n, cudaMemcpyDeviceToHost_));
    CKR(cudaDeviceSynchronize());
    long long sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += host[i];
    CKR(cudaFree(device));
    free(host);
    printf("late_dlopen: sum %lld\n", sum);
    // Not dlclose()d: cudart is not meant to be unloaded while CUDA is set up.
    return 0;
}
