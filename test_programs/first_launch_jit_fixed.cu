// Fixed twin of first_launch_jit.cu: the same source built with machine code
// for the GPU (the suite's default -arch), so no JIT at the first launch.
// RUN-ENV: CUDA_CACHE_DISABLE=1
#include "first_launch_jit.cu"
