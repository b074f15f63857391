// legacy_record_handoff with the host waiting for the blocking stream
// (cudaStreamSynchronize(first)) instead of the event recorded on it: the
// record is held back behind the producer on the legacy default stream, but
// on an H200 (driver 580) the stream synchronization returns without waiting
// for it, and the consumer on a non-blocking stream reads while the producer
// still spins.  A real race there; where a GPU's stream synchronization does
// wait for the record, still not what CUDA promises.
#define PROGRAM_NAME "legacy_record_handoff_racy"
#define WAIT_EVENT 0
#include "legacy_record_handoff.cu"
