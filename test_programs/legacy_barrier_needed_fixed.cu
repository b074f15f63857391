// Fixed twin of legacy_barrier_needed.cu: each stream records an event after
// kernel_B and stream 0 waits on all 32 events before `sum`, so the order no
// longer depends on which default stream stream 0 is: correct with the legacy
// default stream and with --default-stream per-thread.
#define FENCE_WITH_EVENTS 1
#define PROGRAM_NAME "legacy_barrier_needed_fixed"
#include "legacy_barrier_needed.cu"
