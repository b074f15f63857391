// unrecorded_event: missing_fence.cu with the variant "the consumer waits on an event that is never recorded".
// See missing_fence.cu for what the variants show.
#define FENCE FENCE_UNRECORDED
#define PROGRAM_NAME "unrecorded_event"
#include "missing_fence.cu"
