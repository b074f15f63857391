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

/* The function cudaGetFuncBySymbol (fake cudart) maps every stub to:
 * parameters (void *a, int n, void *b). */
FAKE_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t index, size_t *offset, size_t *size)
{
    static const size_t sizes[] = { 8, 4, 8 };
    static const size_t offsets[] = { 0, 8, 16 };
    if ((uintptr_t)func != 0xF00D || index >= 3)
        return CUDA_ERROR_INVALID_VALUE;
    *offset = offsets[index];
    *size = sizes[index];
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
