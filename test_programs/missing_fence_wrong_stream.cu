// missing_fence_wrong_stream: missing_fence.cu with the variant "event recorded on the consumer's stream (orders nothing)".
// See missing_fence.cu for what the variants show.
#define FENCE FENCE_WRONG_STREAM
#define PROGRAM_NAME "missing_fence_wrong_stream"
#include "missing_fence.cu"
