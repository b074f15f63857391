// multigpu_fence_fixed: multigpu_fence.cu with the cross-device fence (event
// recorded on GPU 0's stream, waited on by GPU 1's stream).
#define MULTIGPU_FENCED 1
#define PROGRAM_NAME "multigpu_fence_fixed"
#include "multigpu_fence.cu"
