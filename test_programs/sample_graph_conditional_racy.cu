// sample_graph_conditional_racy: sample_graph_conditional.cu with the
// consumer stream launched right behind stream 0's cudaGraphLaunch, without
// the event: its kernel reads x while the graph's loop still rewrites it.
// See sample_graph_conditional.cu.
#define CONSUMER_WAITS 0
#define PROGRAM_NAME "sample_graph_conditional_racy"
#include "sample_graph_conditional.cu"
