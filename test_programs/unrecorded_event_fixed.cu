// unrecorded_event_fixed: missing_fence.cu with the variant "the same event, now recorded after the producer".
// See missing_fence.cu for what the variants show.
#define FENCE FENCE_UNRECORDED_FIXED
#define PROGRAM_NAME "unrecorded_event_fixed"
#include "missing_fence.cu"
