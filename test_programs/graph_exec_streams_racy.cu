// graph_exec_streams_racy: graph_exec_streams.cu with the graph instantiated
// once per stream, so that launches on different streams may run at once
// (cudaGraphLaunch orders only launches of the same exec), and every one of
// them updates the same state in place, with no event between the streams.
// See graph_exec_streams.cu.
#define GRAPH_EXEC_PER_STREAM 1
#define PROGRAM_NAME "graph_exec_streams_racy"
#include "graph_exec_streams.cu"
