// host_func_handoff with the host function enqueued on an idle third stream
// instead of behind the producer: it runs at once, the semaphore says nothing
// about the producer's kernel, and the consumer on another non-blocking
// stream reads the buffer while the producer still spins.  A real race.
#define PROGRAM_NAME "host_func_handoff_racy"
#define SIGNAL_ON_PRODUCER_STREAM 0
#include "host_func_handoff.cu"
