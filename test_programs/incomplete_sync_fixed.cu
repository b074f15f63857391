// Fixed twin of incomplete_sync.cu: cudaDeviceSynchronize before the host
// reads and frees the buffers: it waits for every stream in both builds.
#define DEVICE_SYNC 1
#define PROGRAM_NAME "incomplete_sync_fixed"
#include "incomplete_sync.cu"
