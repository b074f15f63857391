// Fixed twin of ptds_consumer.cu: each producer stream records an event and
// stream 0 waits on it before `consume`: ordered whichever default stream
// stream 0 is (legacy or per-thread).
#define FENCE_WITH_EVENTS 1
#define PROGRAM_NAME "ptds_consumer_fixed"
#include "ptds_consumer.cu"
