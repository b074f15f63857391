// NVCC-FLAGS: -lcuda
// Fixed twin of green_context_legacy.cu: an event recorded after the producer
// and waited by the green context's legacy stream (as PyTorch's
// GreenContext.set_context does) orders the consumer.
// Expected: nothing to report.
#define FENCE_WITH_EVENT 1
#define PROGRAM_NAME "green_context_legacy_fixed"
#include "green_context_legacy.cu"
