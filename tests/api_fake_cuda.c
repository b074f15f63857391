/*
 * A fake libcuda.so.1 for tests/test_api_interposer.sh: the three driver
 * functions the API part uses (cuPointerGetAttributes for memory kinds,
 * cuFuncGetParamInfo / cuKernelGetParamInfo for kernel parameter layouts),
 * answering from memory regions and layouts the test chooses.
 */
#include <stdint.h>
#include <string.h>
#include <cuda.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* Regions the test program uses as "device", "pinned" and "managed" memory. */
FAKE_EXPORT unsigned char fake_device_mem[4096];
FAKE_EXPORT unsigned char fake_pinned_mem[4096];
FAKE_EXPORT unsigned char fake_managed_mem[4096];

static int fake_in(const unsigned char *region, CUdeviceptr p)
{
    return p >= (CUdeviceptr)(uintptr_t)region && p < (CUdeviceptr)(uintptr_t)region + 4096;
}

FAKE_EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data,
                                            CUdeviceptr ptr)
{
    for (unsigned int i = 0; i < n; i++) {
        if (attrs[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
            unsigned int type = 0;   /* unknown to the driver: pageable host memory */
            if (fake_in(fake_device_mem, ptr))
                type = CU_MEMORYTYPE_DEVICE;
            else if (fake_in(fake_pinned_mem, ptr))
                type = CU_MEMORYTYPE_HOST;
            else if (fake_in(fake_managed_mem, ptr))
                type = CU_MEMORYTYPE_DEVICE;
            memcpy(data[i], &type, sizeof type);
        } else if (attrs[i] == CU_POINTER_ATTRIBUTE_IS_MANAGED) {
            /* The real driver writes a bool here. */
            unsigned char managed = (unsigned char)fake_in(fake_managed_mem, ptr);
            memcpy(data[i], &managed, 1);
        } else {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

/* The functions cudaGetFuncBySymbol (fake cudart) maps stubs to, with
 * S = struct { void *p; uint64_t n; void *q; uint64_t m; } (32 bytes), laid
 * out as nvcc packs them:
 *   0xF00D (every stub by default): (void *a, int n, void *b);
 *   0xF00E: (void *a, int n, void *b, S s): s at 24;
 *   0xF00F: (int n, void *a, S s, void *b): a at 8, s at 16, b at 48. */
FAKE_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t index, size_t *offset, size_t *size)
{
    static const size_t sizes[3][4] = { { 8, 4, 8 }, { 8, 4, 8, 32 }, { 4, 8, 32, 8 } };
    static const size_t offsets[3][4] = { { 0, 8, 16 }, { 0, 8, 16, 24 }, { 0, 8, 16, 48 } };
    static const size_t counts[3] = { 3, 4, 4 };
    uintptr_t f = (uintptr_t)func;
    if (f < 0xF00D || f > 0xF00F || index >= counts[f - 0xF00D])
        return CUDA_ERROR_INVALID_VALUE;
    *offset = offsets[f - 0xF00D][index];
    *size = sizes[f - 0xF00D][index];
    return CUDA_SUCCESS;
}

/* Every CUkernel has 40 pointer parameters: more than a record stores. */
#define FAKE_KERNEL_PARAMS 40
FAKE_EXPORT CUresult cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t *offset, size_t *size)
{
    if (kernel == NULL || index >= FAKE_KERNEL_PARAMS)
        return CUDA_ERROR_INVALID_VALUE;
    *offset = index * 8;
    *size = 8;
    return CUDA_SUCCESS;
}
