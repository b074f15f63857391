// Fixed twin of graph_pageable.cu: the graphs copy into pinned host memory
// (cudaMallocHost), so cudaGraphLaunch returns at once and the 40 launches are
// queued back to back; one cudaStreamSynchronize waits for them.
#define PINNED_DESTINATION 1
#define PROGRAM_NAME "graph_pageable_fixed"
#include "graph_pageable.cu"
