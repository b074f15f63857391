// Fixed twin of memset_async.cu: an event recorded on the default stream after
// the cudaMemset and waited on by the reader's stream orders the two.
#define FENCE_WITH_EVENT 1
#define PROGRAM_NAME "memset_async_fixed"
#include "memset_async.cu"
