// sample_inference_workers.cu without the stream sync after the weights'
// upload: cudaMemcpy from pageable memory may return once its data is staged,
// before the copy lands (CUDA's API synchronization rules), so nothing orders
// the workers' kernels on their non-blocking streams after it.  See
// sample_inference_workers.cu.
#define WORKERS_RACY 1
#define PROGRAM_NAME "sample_inference_workers_racy"
#include "sample_inference_workers.cu"
