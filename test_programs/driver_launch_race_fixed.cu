// NVCC-FLAGS: -lcuda -lnvrtc
// driver_launch_race_fixed: driver_launch_race.cu with an event recorded after
// the writer on the producer stream and waited for on the consumer stream.
#define DRIVER_FENCE 1
#define PROGRAM_NAME "driver_launch_race_fixed"
#include "driver_launch_race.cu"
