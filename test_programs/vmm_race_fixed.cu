// NVCC-FLAGS: -lcuda
// vmm_race_fixed: vmm_race.cu with an event recorded after the writer on
// `producer` and waited for on `consumer`.  See vmm_race.cu.
#define VMM_FENCE 1
#define PROGRAM_NAME "vmm_race_fixed"
#include "vmm_race.cu"
