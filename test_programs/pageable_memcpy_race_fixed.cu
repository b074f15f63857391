// Fixed twin of pageable_memcpy_race.cu: after each pageable cudaMemcpy an
// event is recorded on the legacy stream and the checking stream waits for
// it (cudaEventRecord + cudaStreamWaitEvent), so the check runs after the
// copy has landed.
// Expected: no finding of missing-fence.
#define PROGRAM_NAME "pageable_memcpy_race_fixed"
#define FIXED 1
#include "pageable_memcpy_race.cu"
