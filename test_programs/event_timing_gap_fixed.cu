// Fixed twin of event_timing_gap.cu: before stop is recorded, its stream waits
// on an event recorded on every worker stream, so the interval covers all the
// work whichever default stream stream 0 is.
#define JOIN_WORKERS 1
#define PROGRAM_NAME "event_timing_gap_fixed"
#include "event_timing_gap.cu"
