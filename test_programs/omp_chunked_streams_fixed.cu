// NVCC-FLAGS: -Xcompiler -fopenmp
// omp_chunked_streams with the clear made explicit: cudaMemsetAsync on stream
// 0, then cudaStreamSynchronize(0) before the parallel region, so every
// OpenMP thread's chunk starts after the bias is cleared, whatever stream 0 is
// (legacy or per-thread default).  Expected: no finding in either build.
#define PROGRAM_NAME "omp_chunked_streams_fixed"
#define SYNC_MEMSET 1
#include "omp_chunked_streams.cu"
