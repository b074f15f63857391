// Fixed twin of implicit_memcpy_pageable.cu: the unrelated stream is created
// cudaStreamNonBlocking, so the legacy-stream cudaMemcpy no longer waits for it.
#define BUSY_STREAM_FLAGS cudaStreamNonBlocking
#define PROGRAM_NAME "implicit_memcpy_pageable_fixed"
#include "implicit_memcpy_pageable.cu"
