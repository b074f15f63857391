// When does a synchronous cudaMemcpy from pageable memory land, against when
// it returns?  CUDA's synchronization rules say a pageable-to-device copy may
// return once its data is staged, before the DMA to its destination ends;
// missing-fence weighs a race against such a copy by what the run shows
// (docs/rules/missing-fence.md).  This probe copies 256 B to 16 MB from
// malloc'd memory, 40 times each, with nothing else in flight; recorded under
// the shim, the trace gives each copy's GPU end and its call's return:
//   nvcc -arch=sm_90 -cudart static -o /tmp/pl bench/pageable_landing.cu
//   build/syncsight run -o /tmp/pl.sstrace --no-report -- /tmp/pl
//   build/syncsight dump --json /tmp/pl.sstrace   (memcpy end - cudaMemcpy exit, joined by corr)
// Measured on an H200 (CUDA 13.0, 2026-11-29): results in missing-fence.md.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    cudaFree(0);
    size_t sizes[] = { 256, 4096, 65536, 262144, 1 << 20, 16 << 20 };
    char *h = (char *)malloc(16 << 20);
    for (size_t i = 0; i < (16u << 20); i++)
        h[i] = (char)i;
    char *d = NULL;
    if (cudaMalloc(&d, 16 << 20) != cudaSuccess)
        return 1;
    for (int s = 0; s < 6; s++)
        for (int r = 0; r < 40; r++)
            if (cudaMemcpy(d, h, sizes[s], cudaMemcpyHostToDevice) != cudaSuccess)
                return 1;
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
