// graph_added_race_fixed: graph_added_race.cu with events both ways (the
// rewrite on `side` before each replay, each replay before the next rewrite).
// See graph_side_race.cu.
#define GRAPH_SIDE_ADDED 1
#define GRAPH_SIDE_FIXED 1
#define PROGRAM_NAME "graph_added_race_fixed"
#include "graph_side_race.cu"
