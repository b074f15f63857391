/*
 * CUDA graphs: which node each graph op ran as, and where that node came from
 * (SS_REC_GRAPH_NODE, SS_GPU_F_GRAPH_NODE; docs/trace-format.md).
 *
 * A replayed op's activity record carries only CUPTI's id of the node of the
 * executable graph.  Its parameters are those of the call that created the
 * node (a launch captured during stream capture, cudaGraphAddKernelNode) or
 * last set them; instantiation clones every node.  CUPTI's resource callbacks
 * say both, on the thread and inside the call that acts on the node, so the
 * record written here needs no state of the call recording: the analyzer
 * finds the call by (tid, time).  They fire when graphs are built, never on
 * a replay, so cudaGraphLaunch pays nothing for them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include <cupti.h>

#include "producers.h"

static __typeof__(&cuptiGetGraphNodeId) p_node_id;
static __typeof__(&cuptiGetGraphId) p_graph_id;
static __typeof__(&cuptiGetGraphExecId) p_exec_id;

void ss_graphs_start(void *cupti_lib)
{
    if (!cupti_lib) return;
    p_node_id = (__typeof__(p_node_id))dlsym(cupti_lib, "cuptiGetGraphNodeId");
    p_graph_id = (__typeof__(p_graph_id))dlsym(cupti_lib, "cuptiGetGraphId");
    p_exec_id = (__typeof__(p_exec_id))dlsym(cupti_lib, "cuptiGetGraphExecId");
}

size_t ss_graphs_wanted_cbids(const uint32_t **ids)
{
    static const uint32_t wanted[] = {
        CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
        CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED, CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS,
    };
    /* without the node id there is nothing to link: no callbacks at all */
    *ids = wanted;
    return p_node_id ? sizeof wanted / sizeof wanted[0] : 0;
}

static uint64_t node_id(CUgraphNode n)
{
    uint64_t id = 0;
    if (!n || p_node_id(n, &id) != CUPTI_SUCCESS) id = 0;
    return id;
}

static uint32_t graph_id(CUgraph g)
{
    uint32_t id = 0;
    if (!g || !p_graph_id || p_graph_id(g, &id) != CUPTI_SUCCESS) id = 0;
    return id;
}

void ss_graphs_on_resource(uint32_t cbid, const void *resource_data)
{
    const CUpti_ResourceData *rd = resource_data;
    const CUpti_GraphData *gd = rd ? rd->resourceDescriptor : NULL;
    if (!gd || !p_node_id) return;
    uint16_t what;
    switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: what = SS_GNODE_CREATED; break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: what = SS_GNODE_CLONED; break;
    case CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED: what = SS_GNODE_UPDATED; break;
    case CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS: what = SS_GNODE_SET_PARAMS; break;
    default: return;
    }
    uint64_t id = node_id(gd->node);
    if (!id) return;
    /* ids first: CUPTI calls must not run while a record is open */
    uint64_t orig = what == SS_GNODE_CLONED ? node_id(gd->originalNode) : 0;
    uint32_t gid = graph_id(gd->graph);
    uint32_t ogid = what == SS_GNODE_CLONED ? graph_id(gd->originalGraph) : 0;
    uint32_t xid = 0;
    if (what == SS_GNODE_SET_PARAMS && gd->graphExec && p_exec_id && p_exec_id(gd->graphExec, &xid) != CUPTI_SUCCESS)
        xid = 0;
    ss_graph_node_rec *r = ss_rec_begin(SS_REC_GRAPH_NODE, sizeof *r, 0);
    if (!r) return;
    r->h.flags = what;
    r->node_id = id;
    r->orig_node_id = orig;
    r->time = ss_now();
    r->tid = ss_tid();
    r->node_type = (uint32_t)gd->nodeType;
    r->graph_id = gid;
    r->orig_graph_id = ogid;
    r->exec_id = xid;
    ss_rec_commit(r);
}

/* CUPTI's id of an executable graph: the graphId the activity records of
 * its nodes carry, 0 when unknown (no CUPTI, an older one, a bad handle).
 * A graph launch records it (the `arg` slot, cuda_api.tab) because CUPTI
 * gives the ops of a conditional node's body no correlation id: the
 * analyzer joins them to the launches of the graph they ran in.  A lookup
 * in CUPTI, no CUDA call, so it is safe where the launch is: inside a
 * capture too.  Called before the record is written, and only after a
 * launch that succeeded: a handle the driver refused is not handed to CUPTI. */
uint32_t ss_graphs_exec_id(const void *exec)
{
    uint32_t id = 0;
    if (!exec || !p_exec_id || p_exec_id((CUgraphExec)(uintptr_t)exec, &id) != CUPTI_SUCCESS) id = 0;
    return id;
}

void *ss_graphs_gpu_rec_begin(uint16_t type, uint32_t fixed_size, uint64_t graph_node_id)
{
    ss_rec_hdr *h = ss_rec_begin(type, fixed_size, graph_node_id ? 8u : 0u);
    if (h && graph_node_id) {
        h->flags |= SS_GPU_F_GRAPH_NODE;
        memcpy((char *)h + fixed_size, &graph_node_id, 8);
    }
    return h;
}
