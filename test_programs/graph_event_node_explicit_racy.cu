// graph_event_node_explicit_racy: graph_event_node_explicit.cu with the
// event record node added without a dependency: it may run before the
// producer kernel, so the consumer that waits for it may read buf while the
// producer still fills it.  See graph_event_node_explicit.cu.
#define RECORD_AFTER_PRODUCER 0
#define PROGRAM_NAME "graph_event_node_explicit_racy"
#include "graph_event_node_explicit.cu"
