// graph_generic_race: graph_added_race.cu with the node added by the generic
// cudaGraphAddNode (CUDA 12.2+) instead of cudaGraphAddKernelNode.  See graph_side_race.cu.
#define GRAPH_SIDE_ADDED 2
#define GRAPH_SIDE_FIXED 0
#define PROGRAM_NAME "graph_generic_race"
#include "graph_side_race.cu"
