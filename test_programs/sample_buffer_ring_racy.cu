// sample_buffer_ring.cu with slot_free[k] recorded before the kernel that
// reads slot k: the next lap's upload into the slot is not ordered after the
// read.  See sample_buffer_ring.cu.
#define RING_RACY 1
#define PROGRAM_NAME "sample_buffer_ring_racy"
#include "sample_buffer_ring.cu"
