// Fixed twin of device_sync_loop.cu: wait only for the stream whose result the
// iteration needs; the background stream keeps running behind the loop.
#define WAIT_FOR_RESULT(fast_stream) CK(cudaStreamSynchronize(fast_stream))
#define PROGRAM_NAME "device_sync_loop_fixed"
#include "device_sync_loop.cu"
