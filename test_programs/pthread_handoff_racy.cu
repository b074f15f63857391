// pthread_handoff without the producer's cudaStreamSynchronize before the
// hand-over: the mutex + condition variable order the HOST threads, but the
// producer's kernel may still be queued or spinning when the consumer's kernel
// reads the buffer on another non-blocking stream.  A real race.
#define PROGRAM_NAME "pthread_handoff_racy"
#define SYNC_BEFORE_HANDOFF 0
#include "pthread_handoff.cu"
