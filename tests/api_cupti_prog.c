/*
 * The program tests/test_api_cupti_fake.sh runs under the shim with the fake
 * libcupti (api_fake_cupti.c), linked against the fake libcudart.so.13 /
 * libcuda.so.1.  It launches kernels whose parameters include a struct
 * (through the runtime-level layout and through the driver-level callback),
 * then "loads" the modules of api_fake_images.h, the first one from two
 * threads at once.  A graph kernel node of the foreign kernel is added and
 * set (graph-node records).  Prints the addresses involved ("key value" lines) for
 * api_cupti_check.  Exit status != 0 when a call's result was altered.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "api_fake_images.h"

extern void fake_cudart_register_stub(const void *stub, uintptr_t func, int foreign);

/* Host stubs: any code addresses of the program, standing for kernels of
 * the fake driver's layouts (api_fake_cuda.c): struct_stub for 0xF00E, and
 * foreign_stub for 0xF00F, unknown to cudaGetFuncBySymbol as a stub of
 * another, static, cudart is: only the driver-level callback sees its
 * parameters. */
struct fake_s { void *p; uint64_t n; void *q; uint64_t m; };
void struct_stub(void *a, int n, void *b, struct fake_s s);
void struct_stub(void *a, int n, void *b, struct fake_s s) { (void)a; (void)n; (void)b; (void)s; }
void foreign_stub(int n, void *a, struct fake_s s, void *b);
void foreign_stub(int n, void *a, struct fake_s s, void *b) { (void)a; (void)n; (void)b; (void)s; }

typedef void (*module_loaded_fn)(const void *, size_t, uint32_t);
static module_loaded_fn module_loaded;

static void *load_module(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    size_t n = fake_image_size(id);
    uint8_t *image = malloc(n);
    if (image == NULL)
        return (void *)1;
    fake_image_fill(id, image);
    module_loaded(image, n, id);
    free(image);
    return NULL;
}

int main(void)
{
    int failures = 0;
    void *buf = NULL;
    if (cudaMalloc(&buf, 256) != cudaSuccess) {
        fprintf(stderr, "api_cupti_prog: cudaMalloc failed\n");
        return 1;
    }
    printf("buf %llu\n", (unsigned long long)(uintptr_t)buf);

    fake_cudart_register_stub((const void *)struct_stub, 0xF00E, 0);
    fake_cudart_register_stub((const void *)foreign_stub, 0xF00F, 1);
    void *a = (void *)(uintptr_t)0x1111000;
    int n = 7;
    void *b = (void *)(uintptr_t)0x2222000;
    /* p and q point into the allocation; n and m do not look like pointers */
    struct fake_s s = { (char *)buf + 16, 5, (char *)buf + 64, 0xFFFFFFFFFFFFFFF0ull };
    void *args[4] = { &a, &n, &b, &s };
    failures += cudaLaunchKernel((const void *)struct_stub, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, 0)
                != cudaSuccess;
    void *foreign_args[4] = { &n, &a, &s, &b };
    failures += cudaLaunchKernel((const void *)foreign_stub, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, foreign_args,
                                 0, 0) != cudaSuccess;
    /* A graph node of the foreign kernel, added then set again: only the
     * driver calls inside (cuGraphAddKernelNode_v2, cuGraphNodeSetParams)
     * show its parameters, as for a static cudart's stub on a GPU. */
    struct cudaKernelNodeParams node_params = { 0 };
    node_params.func = (void *)foreign_stub;
    node_params.gridDim = (dim3){ 1, 1, 1 };
    node_params.blockDim = (dim3){ 32, 1, 1 };
    node_params.kernelParams = foreign_args;
    cudaGraphNode_t node = NULL;
    failures += cudaGraphAddKernelNode(&node, (cudaGraph_t)(uintptr_t)0x7000, NULL, 0, &node_params) != cudaSuccess;
    failures += cudaGraphKernelNodeSetParams(node, &node_params) != cudaSuccess;
    printf("struct_stub %llu\n", (unsigned long long)(uintptr_t)struct_stub);
    printf("foreign_stub %llu\n", (unsigned long long)(uintptr_t)foreign_stub);

    /* Present when the shim loaded the fake libcupti. */
    module_loaded = (module_loaded_fn)dlsym(RTLD_DEFAULT, "fake_cupti_module_loaded");
    if (module_loaded != NULL) {
        pthread_t t1, t2;
        void *r1 = NULL, *r2 = NULL;
        pthread_create(&t1, NULL, load_module, (void *)(uintptr_t)1);
        pthread_create(&t2, NULL, load_module, (void *)(uintptr_t)2);
        pthread_join(t1, &r1);
        pthread_join(t2, &r2);
        failures += r1 != NULL || r2 != NULL;
        for (uint32_t id = 3; id <= FAKE_MODULES; id++)
            failures += load_module((void *)(uintptr_t)id) != NULL;
    }
    printf("modules_loaded %d\n", module_loaded != NULL);
    return failures == 0 ? 0 : 1;
}
