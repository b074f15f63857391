// pdl_event_handoff_racy: pdl_event_handoff.cu with a launch-completion event
// (cudaLaunchAttributeLaunchCompletionEvent) where the programmatic event was:
// it fires once every block of the producer has started, not ended, so the
// reader on the other stream races with the producer's writes.
// See pdl_event_handoff.cu.
// NVCC-ARCH: -arch=sm_90
#define PDL_LAUNCH_COMPLETION 1
#define PROGRAM_NAME "pdl_event_handoff_racy"
#include "pdl_event_handoff.cu"
