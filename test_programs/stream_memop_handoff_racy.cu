// NVCC-FLAGS: -lcuda
// stream_memop_handoff with the write-value enqueued on an idle third stream
// instead of behind the producer: it lands at once, the consumer's wait-value
// is satisfied at once, and the consumer on another non-blocking stream reads
// the buffer while the producer still spins.  A real race.
#define PROGRAM_NAME "stream_memop_handoff_racy"
#define WRITE_ON_PRODUCER_STREAM 0
#include "stream_memop_handoff.cu"
