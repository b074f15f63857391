// missing_fence_fixed: missing_fence.cu with the variant "event recorded after the producer, waited on by the consumer".
// See missing_fence.cu for what the variants show.
#define FENCE FENCE_EVENT
#define PROGRAM_NAME "missing_fence_fixed"
#include "missing_fence.cu"
