// Follows NVIDIA's CUDA sample simpleZeroCopy (Samples/0_Introduction/
// simpleZeroCopy): cudaSetDeviceFlags(cudaDeviceMapHost) before the context
// exists, then mapped pinned host memory that a kernel reads and writes
// directly over the bus ("zero copy"), in both of the sample's ways:
//   1. cudaHostAlloc(cudaHostAllocMapped) for a, b and c, device pointers
//      from cudaHostGetDevicePointer;
//   2. (the sample's "-use_generic_memory" path) malloc'd, page-aligned host
//      memory pinned and mapped with cudaHostRegister(cudaHostRegisterMapped),
//      device pointers from cudaHostGetDevicePointer, cudaHostUnregister at
//      the end.
// Each part: the host fills a and b, vectorAddGPU<<<grid, block>>>(a, b, c)
// runs on the default stream, cudaDeviceSynchronize, the host checks c.
//
// Why it is correct: the host writes a and b before launching the kernel and
// reads c only after cudaDeviceSynchronize, which waits for the kernel (the
// only GPU work, on the only stream); the buffers are freed or unregistered
// after that wait.  There are no copies at all: the kernel's loads and stores
// are the transfers.  The device synchronization is what the program needs
// (the kernel wrote pinned memory the host reads next).
// Difference from the sample: the check is exact (integers in float) and
// covers every element.
// Expected: nothing to report.
#include "ss_test.cuh"
#include <stdint.h>
#include <string.h>

#define NELEM (1 << 20)

__global__ void vectorAddGPU(const float *a, const float *b, float *c, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n)
        c[idx] = a[idx] + b[idx];
}

static void fill(float *a, float *b, float *c, int n, int part)
{
    for (int i = 0; i < n; i++) {
        a[i] = (float)(i % 1000 + part);
        b[i] = (float)(i % 777);
        c[i] = -1.0f;
    }
}

static long check(const float *a, const float *b, const float *c, int n)
{
    long bad = 0;
    for (int i = 0; i < n; i++)
        if (c[i] != a[i] + b[i])
            bad++;
    return bad;
}

static long run_vector_add(float *a, float *b, float *c, int part)
{
    float *d_a, *d_b, *d_c;
    CK(cudaHostGetDevicePointer((void **)&d_a, (void *)a, 0));
    CK(cudaHostGetDevicePointer((void **)&d_b, (void *)b, 0));
    CK(cudaHostGetDevicePointer((void **)&d_c, (void *)c, 0));
    fill(a, b, c, NELEM, part);

    dim3 block(256);
    dim3 grid((unsigned)((NELEM + block.x - 1) / block.x));
    vectorAddGPU<<<grid, block>>>(d_a, d_b, d_c, NELEM);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    return check(a, b, c, NELEM);
}

int main(void)
{
    int can_map = 0;
    CK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    if (!can_map) {
        printf("sample_zero_copy: waived, the device cannot map host memory\n");
        return 2;
    }
    // Before the context is created, as the sample does.
    CK(cudaSetDeviceFlags(cudaDeviceMapHost));
    ss_init_device();

    const size_t bytes = NELEM * sizeof(float);
    long bad_alloc = 0, bad_register = 0;

    // Part 1: cudaHostAlloc(cudaHostAllocMapped).
    {
        float *a, *b, *c;
        CK(cudaHostAlloc((void **)&a, bytes, cudaHostAllocMapped));
        CK(cudaHostAlloc((void **)&b, bytes, cudaHostAllocMapped));
        CK(cudaHostAlloc((void **)&c, bytes, cudaHostAllocMapped));
        bad_alloc = run_vector_add(a, b, c, 1);
        CK(cudaFreeHost(a));
        CK(cudaFreeHost(b));
        CK(cudaFreeHost(c));
    }

    // Part 2: malloc'd memory, page-aligned, registered and mapped.
    {
        const size_t align = 4096;
        char *raw[3];
        float *p[3];
        for (int k = 0; k < 3; k++) {
            raw[k] = (char *)malloc(bytes + align);
            if (!raw[k]) {
                fprintf(stderr, "sample_zero_copy: out of host memory\n");
                return 1;
            }
            p[k] = (float *)(((uintptr_t)raw[k] + align - 1) & ~(uintptr_t)(align - 1));
            CK(cudaHostRegister(p[k], bytes, cudaHostRegisterMapped));
        }
        bad_register = run_vector_add(p[0], p[1], p[2], 2);
        for (int k = 0; k < 3; k++) {
            CK(cudaHostUnregister(p[k]));
            free(raw[k]);
        }
    }

    if (bad_alloc || bad_register) {
        fprintf(stderr, "sample_zero_copy: %ld wrong with cudaHostAlloc, %ld with cudaHostRegister\n", bad_alloc,
                bad_register);
        printf("sample_zero_copy: FAILED\n");
        return 1;
    }
    printf("sample_zero_copy: OK\n");
    return 0;
}
