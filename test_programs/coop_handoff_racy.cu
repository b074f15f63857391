// coop_handoff_racy: coop_handoff.cu without the event between the
// cooperative producer on `compute` and the reader on `side`: the reader
// races with the producer's writes.  See coop_handoff.cu.
#define COOP_RACY 1
#define PROGRAM_NAME "coop_handoff_racy"
#include "coop_handoff.cu"
