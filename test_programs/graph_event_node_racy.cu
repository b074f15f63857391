// graph_event_node with the side stream waiting on the event BEFORE the graph
// is launched: the wait takes the event's latest record, the previous
// replay's, and the consumer on `side` reads the buffer while this replay's
// producer still spins.  A real race.
#define PROGRAM_NAME "graph_event_node_racy"
#define WAIT_BEFORE_LAUNCH 1
#include "graph_event_node.cu"
