// graph_added_race: graph_side_race.cu with the graph built node by node
// (cudaGraphAddKernelNode) instead of captured: the replayed kernel reads
// what cudaGraphAddKernelNode gave it.  See graph_side_race.cu.
#define GRAPH_SIDE_ADDED 1
#define GRAPH_SIDE_FIXED 0
#define PROGRAM_NAME "graph_added_race"
#include "graph_side_race.cu"
