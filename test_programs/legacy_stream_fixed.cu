// Fixed twin of legacy_stream.cu: the same program with streams created
// cudaStreamNonBlocking, which do not synchronize with the legacy default
// stream, so the three 30 ms kernels run side by side (~30 ms).
#define STREAM_FLAGS cudaStreamNonBlocking
#include "legacy_stream.cu"
