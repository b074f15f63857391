// query_poll_handoff with the loop polling the consumer stream instead of
// the producer: the consumer stream is idle, so cudaStreamQuery succeeds at
// once, and the consumer on another non-blocking stream reads the buffer
// while the producer still spins.  A real race.
#define PROGRAM_NAME "query_poll_handoff_racy"
#define POLL_PRODUCER 0
#include "query_poll_handoff.cu"
