/*
 * The analyzer's in-memory model of one trace file (one process).
 *
 * ss_model_load() reads every record of a trace, keeps the reader's mapping
 * open (records are referenced in place, never copied: the model stays well
 * under 100 bytes per record) and derives the tables the rules and the
 * exporters work on:
 *
 *   calls     host CUDA runtime calls, sorted by t_enter (ties by tid, then
 *             file order), each classified (ss_api_class) and joined with its
 *             stream, event, GPU operations and NVTX range;
 *   ops       GPU kernels / copies / memsets, sorted by start, each joined
 *             with the call that submitted it (correlation id) and its stream;
 *   syncs     CUPTI SYNCHRONIZATION records;
 *   streams   one entry per distinct stream (merged from SS_REC_STREAM,
 *             SS_REC_CONTEXT, creation calls and correlation joins);
 *   allocs    allocations (device, pinned host, managed) with their lifetime;
 *   nvtx      application NVTX ranges.
 *
 * Indexes (int32_t) are used between tables; -1 means "none".  Everything is
 * owned by the model and freed by ss_model_free().  Times are trace-clock ns.
 */
#ifndef SYNCSIGHT_ANALYZER_MODEL_H
#define SYNCSIGHT_ANALYZER_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "syncsight/trace_format.h"
#include "syncsight/trace_io.h"

/* What a runtime call does, decided from its base name (the CUPTI name without
 * _ptsz/_ptds) in ONE table, generated from preload/cuda_api.tab by
 * tools/gen_api.py ($(BUILD)/gen/ss_api_classes.c): ss_api_classify(). */
typedef enum ss_api_class {
    SS_API_OTHER = 0,
    SS_API_LAUNCH,          /* kernel launches, cudaGraphLaunch */
    SS_API_COPY_SYNC,       /* cudaMemcpy, cudaMemcpy2D/3D, ToSymbol, Peer ... */
    SS_API_COPY_ASYNC,      /* cudaMemcpyAsync & co. */
    SS_API_MEMSET_SYNC,     /* cudaMemset, 2D, 3D */
    SS_API_MEMSET_ASYNC,
    SS_API_ALLOC,           /* cudaMalloc*, cudaMallocHost, cudaHostAlloc, cudaHostRegister */
    SS_API_FREE,            /* cudaFree*, cudaFreeHost, cudaHostUnregister */
    SS_API_DEVICE_SYNC,     /* cudaDeviceSynchronize, cudaThreadSynchronize */
    SS_API_STREAM_SYNC,     /* cudaStreamSynchronize */
    SS_API_EVENT_SYNC,      /* cudaEventSynchronize */
    SS_API_STREAM_QUERY,
    SS_API_EVENT_QUERY,
    SS_API_EVENT_RECORD,    /* cudaEventRecord[WithFlags] */
    SS_API_STREAM_WAIT,     /* cudaStreamWaitEvent */
    SS_API_STREAM_CREATE,
    SS_API_STREAM_DESTROY,
    SS_API_EVENT_CREATE,
    SS_API_EVENT_DESTROY,
    SS_API_HOST_FUNC,       /* cudaLaunchHostFunc, cudaStreamAddCallback */
    SS_API_SET_LIMIT,       /* cudaDeviceSetLimit */
    SS_API_CAPTURE,         /* stream capture begin/end */
    SS_API_EVENT_ELAPSED,   /* cudaEventElapsedTime */
    SS_API_DEVICE_RESET,    /* cudaDeviceReset */
    SS_API_GRAPH_NODE,      /* cudaGraphAdd{Kernel,Memcpy,Memset}Node, their SetParams: builds, runs nothing */
    SS_API_STREAM_WAIT_VALUE,   /* cuStreamWaitValue32/64: the stream waits for a memory word (a fence) */
    SS_API_STREAM_WRITE_VALUE,  /* cuStreamWriteValue32/64: writes a memory word in stream order */
    SS_API_STREAM_BATCH_MEMOP,  /* cuStreamBatchMemOp: waits and writes that are not recorded */
    SS_API_MANAGED_MEMORY,      /* cudaMemPrefetchAsync, cudaMemDiscard*, cudaStreamAttachMemAsync: stream work
                                   on managed memory that CUPTI gives no GPU record for */
    SS_API_CONTEXT_EVENT,       /* cuCtxRecordEvent / cuCtxWaitEvent, cuGreenCtxRecordEvent / WaitEvent: a whole
                                   context's work recorded, or made to wait (arg 1 record, 2 wait): not modeled */
    SS_API_CLASS_COUNT
} ss_api_class;

const char *ss_api_class_name(ss_api_class c);

/* The `host` column of preload/cuda_api.tab: what a call does to the calling
 * host thread.  COPY, COPY_ASYNC, MEMSET and GRAPH depend on the call's memory
 * kinds (or its graph's nodes): ss_call_host_wait() decides them. */
typedef enum ss_api_host {
    SS_API_HOST_NONE = 0,       /* returns without waiting for GPU work */
    SS_API_HOST_STREAM,         /* waits for all work submitted to its stream */
    SS_API_HOST_EVENT,          /* waits for the work its event captured */
    SS_API_HOST_DEVICE,         /* waits for all work of the current device */
    SS_API_HOST_QUERY,          /* waits for nothing; success proves completion */
    SS_API_HOST_COPY,           /* synchronous memcpy family */
    SS_API_HOST_COPY_ASYNC,     /* cudaMemcpy*Async */
    SS_API_HOST_MEMSET,         /* synchronous memset family */
    SS_API_HOST_MEMSET_ASYNC,
    SS_API_HOST_GRAPH,          /* cudaGraphLaunch: waits when a memcpy node writes pageable memory */
    SS_API_HOST_PEER,           /* cudaMemcpyPeer: no host wait; on the GPU, serialized with all pending and
                                   future work of the devices involved */
    SS_API_HOST_COUNT
} ss_api_host;

const char *ss_api_host_name(ss_api_host h);   /* the table's spelling: "copy-async" */

/* One row of the generated table, per base name (entry points, their
 * _ptsz/_ptds twins and CUPTI's spellings share rows by base name). */
typedef struct ss_api_info {
    const char *name;           /* base name, e.g. "cudaMemcpyAsync" */
    const char *tab_class;      /* the shim's class in cuda_api.tab, e.g. "free-async" */
    uint8_t cls;                /* ss_api_class */
    uint8_t host;               /* ss_api_host */
    uint8_t fixed_dst, fixed_src;  /* enum ss_mem_kind the table fixes for ptr/ptr2
                                      (cudaMemcpyToSymbol: DEVICE), else UNKNOWN */
    uint8_t arg_is_memcpy_kind; /* ss_api_rec.arg holds the cudaMemcpyKind */
    uint8_t strided;            /* a 2D/3D copy or memset: rows a pitch apart, the pitches not recorded */
} ss_api_info;

/* cudaMemcpyKind, as the runtime numbers it (ss_api_rec.arg of the rows with
 * arg_is_memcpy_kind). */
enum ss_cuda_memcpy_kind {
    SS_CUDA_MEMCPY_HOST_TO_HOST = 0,
    SS_CUDA_MEMCPY_HOST_TO_DEVICE = 1,
    SS_CUDA_MEMCPY_DEVICE_TO_HOST = 2,
    SS_CUDA_MEMCPY_DEVICE_TO_DEVICE = 3,
    SS_CUDA_MEMCPY_DEFAULT = 4,          /* inferred from the pointers: says nothing */
};

/* The generated table, sorted by name (strcmp order). */
extern const ss_api_info ss_api_table[];
extern const size_t ss_api_table_count;

/* Base name of a CUPTI API name: drops "_ptsz"/"_ptds" and a trailing
 * "_v<digits>" version; writes into out (NUL-terminated). */
void ss_api_base_name(const char *name, char *out, size_t outlen);
/* Row of a base name (exact match), or NULL for a call the table does not list. */
const ss_api_info *ss_api_lookup(const char *base_name);
/* Its class; SS_API_OTHER for names the table does not list. */
ss_api_class ss_api_classify(const char *base_name);

/* Memory allocation kinds of ss_alloc.kind: enum ss_mem_kind (DEVICE, PINNED,
 * MANAGED). */

typedef struct ss_call {
    const ss_api_rec *rec;      /* the record, in the mapped trace */
    uint32_t name_idx;          /* index into ss_model.api_names */
    uint8_t  cls;               /* ss_api_class */
    uint8_t  is_async;          /* name ends in Async (copies, memsets, malloc/free) */
    uint8_t  captured;          /* recorded into a CUDA graph during stream capture: it
                                   did not execute then (its graph's launches do) */
    uint8_t  blocking_copy;     /* enum ss_blocking_copy: half of a blocking copy */
    int32_t  stream;            /* ss_model.streams index of rec->stream, -1 none */
    int32_t  first_op;          /* first GPU op joined by corr (ops of one call are
                                   chained through ss_gpu_op.next_of_call), -1 none */
    int32_t  event;             /* ss_model.events index for event calls, -1 none */
    int32_t  alloc;             /* ss_model.allocs index: alloc/free calls */
} ss_call;

/* A blocking copy made of two calls: an asynchronous copy and, right after
 * it, the synchronization of its stream, issued together by one caller (the
 * same thread, the same native caller or Python line, nothing else on the
 * stream in between).  PyTorch's blocking .to()/.cuda()/.cpu()/.item() are
 * made this way (cudaMemcpyAsync + cudaStreamSynchronize), and so is any
 * program that copies and waits back to back: a synchronous copy by intent,
 * judged as one (rules/implicit-sync), neither an asynchronous copy that
 * failed to be one nor a synchronization of nothing.  Marked at load. */
enum ss_blocking_copy {
    SS_BLOCKING_COPY_NONE = 0,
    SS_BLOCKING_COPY_COPY = 1,  /* the copy: its sync is the thread's next call */
    SS_BLOCKING_COPY_SYNC = 2,  /* the sync: its copy is the thread's previous call */
};
/* At most this long between the copy's return and the sync's entry. */
#define SS_BLOCKING_COPY_GAP_NS 1000000ull

enum ss_op_kind { SS_OP_KERNEL = 1, SS_OP_MEMCPY = 2, SS_OP_MEMSET = 3 };

typedef struct ss_gpu_op {
    const ss_gpu_common *rec;   /* the SS_REC_KERNEL/MEMCPY/MEMSET record */
    uint64_t start, end;        /* copies of rec->start/end */
    uint64_t submit;            /* t_enter of the joined call, else start */
    uint8_t  kind;              /* enum ss_op_kind */
    uint8_t  pad[3];
    int32_t  stream;            /* ss_model.streams index */
    int32_t  call;              /* ss_model.calls index, -1 when not joined */
    int32_t  next_of_call;      /* next op of the same call (graph launches), -1 */
    int32_t  node_call;         /* an op of a graph launch: the call whose parameters its node runs (the launch,
                                   copy or memset captured into the graph, the cudaGraphAdd*Node call, or the
                                   latest call that set the node's parameters before this launch); -1 unknown
                                   or not a graph op.  See ss_model_load, "graph nodes". */
    uint32_t pad2;
} ss_gpu_op;

typedef struct ss_stream {
    uint64_t handle;            /* cudaStream_t; 0 for default streams / unknown */
    uint32_t stream_id;         /* CUPTI stream id, 0 when never learned */
    uint32_t context_id;
    int32_t  device;            /* -1 unknown */
    uint32_t kind;              /* enum ss_stream_kind */
    uint32_t flags;             /* creation flags */
    int32_t  priority;
    uint32_t owner_tid;         /* per-thread default streams: the thread */
    int32_t  create_call;       /* calls index, -1 */
    uint64_t busy_ns;           /* union of its op intervals */
    uint32_t nops;
    uint32_t name_id;           /* the name the program gave it (SS_REC_STREAM_NAME), 0 none */
    /* The reach of the legacy default stream's implicit barriers: streams
     * with the same ldomain are ordered by them.  Each CUDA context has a
     * legacy stream of its own (green contexts too: measured on the H200,
     * docs/design.md), so where the trace says which context each call ran
     * in (SS_REC_THREAD_CONTEXT) it is the device and the context; in older
     * traces the device.  A dense index (below nstreams); -1: device unknown. */
    int32_t  ldomain;
    /* The context whose device-wide waits cover this stream's work: its
     * context, or for a green context's stream the context it was made from
     * (cudaDeviceSynchronize in either waits for both: measured).  0 unknown. */
    uint32_t family;
} ss_stream;

typedef struct ss_alloc {
    uint64_t ptr, size;
    uint64_t t_alloc, t_free;   /* t_free = UINT64_MAX while never freed */
    uint32_t kind;              /* enum ss_mem_kind */
    int32_t  alloc_call, free_call;
} ss_alloc;

/* cudaEventDisableTiming (CU_EVENT_DISABLE_TIMING) in ss_event.flags: a host
 * wait on a blocking stream need not wait for such a record held back by the
 * legacy barrier (hb.c, EVENT_RECORD) */
#define SS_EVENT_DISABLE_TIMING 0x2u

typedef struct ss_event {       /* one lifetime of an event handle */
    uint64_t handle;
    int32_t  create_call;       /* -1 when created before the trace */
    int32_t  first_record;      /* first successful cudaEventRecord call, -1 (captured ones and graph
                                   record nodes included: what a captured wait can join) */
    int32_t  first_run_record;  /* the first call after which the event is recorded when work runs: a record
                                   call neither captured nor a node, or a launch of a graph that records it
                                   (a record node, an External record captured); -1 */
    uint32_t flags;             /* creation flags: SS_EVENT_DISABLE_TIMING, ... */
    uint8_t  from_ipc;          /* opened from another process's handle (cudaIpcOpenEventHandle):
                                   recorded there, so never "unrecorded" here */
    uint8_t  by_context;        /* recorded by cuCtxRecordEvent / cuGreenCtxRecordEvent: all of a
                                   context's work, which the model does not follow */
} ss_event;

typedef struct ss_nvtx {
    const ss_nvtx_rec *rec;
} ss_nvtx;

typedef struct ss_thread {
    uint32_t tid;
    const char *name;           /* from SS_REC_THREAD, NULL when none */
    uint32_t name_len;
    uint64_t pthread;           /* pthread_self() from SS_REC_THREAD, 0 when none */
    int32_t *calls;             /* calls of this thread in time order */
    uint32_t ncalls;
    uint64_t blocked_ns;        /* time inside sync/blocking calls */
} ss_thread;

typedef struct ss_device_summary {
    int32_t  device;
    uint64_t busy_ns;           /* union of op intervals */
    uint64_t copy_ns, copy_overlap_ns;   /* copy time; of it, time a kernel also ran */
    uint64_t multi_stream_kernel_ns;     /* time with kernels on >= 2 streams */
} ss_device_summary;

typedef struct ss_string_ref { const char *s; uint32_t len; } ss_string_ref;

typedef struct ss_model {
    const char *path;
    ss_reader *reader;          /* kept open: records live in its mapping */
    ss_file_header hdr;
    int truncated;              /* reader stopped at a bad block */
    char truncated_why[256];
    uint64_t nrecords;
    /* An incomplete trace (cut mid-way, the program killed or dead of a
     * signal, a write error) may lack the GPU records of its last moments:
     * CUPTI hands them over in batches, later than the host calls.  Only the
     * span where host and GPU records are both complete, up to span_end, is
     * analyzed: calls that ended and GPU ops that started after it are left
     * out of the model (t_last = span_end then). */
    const char *incomplete_why; /* NULL for a complete trace (static text) */
    uint64_t incomplete_sig;    /* the fatal signal, when that is why */
    int span_cut;               /* records after span_end were left out */
    uint64_t span_end;          /* end of the analyzed span */
    uint64_t recorded_end;      /* last time seen in any record */
    uint64_t gpu_records_end;   /* last GPU op end recorded, 0 none */
    uint64_t host_records_end;  /* last host call end recorded, 0 none */
    uint32_t calls_cut, ops_cut;
    uint32_t ops_unrecorded;    /* GPU records of work submitted while recording was OFF, left out */

    ss_call *calls;   uint32_t ncalls;
    ss_gpu_op *ops;   uint32_t nops;
    const ss_sync_rec **syncs; uint32_t nsyncs;
    const ss_cuda_event_rec **cuda_events; uint32_t ncuda_events;
    ss_stream *streams; uint32_t nstreams;
    uint32_t nper_thread_streams;           /* streams of kind SS_STREAM_PER_THREAD (threads' own default streams) */
    ss_event *events; uint32_t nevents;
    ss_alloc *allocs; uint32_t nallocs;    /* sorted by (ptr, t_alloc) */
    ss_nvtx *nvtx; uint32_t nnvtx;          /* sorted by (tid, start) */
    ss_thread *threads; uint32_t nthreads;  /* sorted by tid */
    const ss_note_rec **notes; uint32_t nnotes;
    const ss_meta_rec **metas; uint32_t nmetas;
    const ss_context_rec **contexts; uint32_t ncontexts;
    /* Which context each thread's calls ran in (trace format 1.9), sorted by
     * thread, then time: ss_model_call_context.  `split_contexts`: there are
     * some, so the model keeps a legacy stream per device and context. */
    const ss_thread_context_rec **tctx; uint32_t ntctx;
    int split_contexts;
    /* t_enter of the first successful context-wide event call (SS_API_CONTEXT_EVENT), 0 none:
     * from then on an order the model cannot see may exist between any two streams */
    uint64_t context_event_t;
    const ss_stack_rec **stacks; uint32_t nstacks;      /* indexed by id via lookup */
    const ss_pystack_rec **pystacks; uint32_t npystacks;
    const ss_module_rec **modules; uint32_t nmodules;
    const ss_cubin_rec **cubins; uint32_t ncubins;      /* module device code images */
    /* Exact memory mode (SS_REC_KERNEL_ACCESS), sorted by (tid, t_enter):
     * use ss_call_exact_access(). */
    const ss_kernel_access_rec **xaccess; uint32_t nxaccess;
    /* Host thread synchronization (SS_REC_HOST_SYNC), sorted by time. */
    const ss_host_sync_rec **hsyncs; uint32_t nhsyncs;
    /* JIT compilations and compute-cache loads (SS_REC_JIT), sorted by start. */
    const ss_jit_rec **jits; uint32_t njits;
    /* the shim's own holds of a thread after a call (trace format 1.7), by
     * thread, then start: host time that was not the program's */
    const ss_shim_pause_rec **pauses; uint32_t npauses;
    /* CUDA graph node events (SS_REC_GRAPH_NODE), in file order; resolved
     * into ss_gpu_op.node_call at load. */
    const ss_graph_node_rec **gnodes; uint32_t ngnodes;
    /* Stream capture: per call, the capture it was recorded into (1, 2, ...
     * in the order captures began; 0 none); NULL when the trace has none. */
    uint32_t *call_capture;
    /* Captured external event nodes, in call order: cudaEventRecordWithFlags
     * (.., cudaEventRecordExternal) and cudaStreamWaitEvent(..,
     * cudaEventWaitExternal) during a capture make an event record or wait
     * node, which every launch of the captured graph runs
     * (ss_graph_launch_capture). */
    int32_t *ext_event_calls; uint32_t next_event_calls;
    /* The event record and wait nodes each graph launch runs, from graphs
     * built node by node (cudaGraphAddEventRecordNode / WaitNode, or
     * cudaGraphAddNode of those types), sorted by launch call
     * (ss_graph_launch_events). */
    struct ss_launch_event *launch_events; uint32_t nlaunch_events;

    /* API names: api_names[i] is the display name, api_class[i] its class,
     * api_info[i] its row of the generated table (NULL: not listed). */
    char **api_names; uint8_t *api_class; uint32_t napi_names;
    const ss_api_info **api_info;
    uint8_t *api_graph_launch;  /* per name: cudaGraphLaunch / cuGraphLaunch and twins (ss_call_is_graph_launch) */
    uint8_t has_graph_launch;   /* some name is one */

    /* Strings by id (SS_REC_STRING), sparse: lookup via ss_model_string(). */
    struct ss_strmap *strings;

    ss_device_summary *devices; uint32_t ndevices;
    struct ss_timeline *timelines; uint32_t ntimelines;   /* private to model.c */
    uint64_t t_first, t_last;   /* first/last time seen in any record */
    int has_gpu;                /* any kernel/memcpy/memset record */
    int cupti_state;            /* 0 ok/unknown, 1 taken, 2 unavailable */

    /* Exact early exits for the hot lookups (built at load): */
    uint64_t *alloc_max_end;    /* per allocs[i]: max(ptr + size) over allocs[0..i] */
    uint64_t *alloc_ptr;        /* per allocs[i]: its ptr, side by side for the search */
    uint32_t *alloc_group;      /* per allocs[i]: the first entry with its ptr */
    uint64_t *alloc_group_free; /* per allocs[i]: max t_free over that entry .. i */
    uint64_t *op_max_end;       /* per ops[i]: max end over ops[0..i] */
    uint64_t *op_min_submit;    /* per ops[i]: min submit over ops[i..nops) */

    /* Caches that the parts built on the model fill on first use and that
     * are freed with it.  The model knows nothing of them but how to free
     * them: kernel parameter accesses (kernel_access.c, which sets
     * kaccess_free), the symbolizer of the trace's modules (callsite.c). */
    struct ss_kaccess *kaccess;
    void (*kaccess_free)(struct ss_kaccess *);
    struct ss_symbolizer *symbolizer;
    /* callsite.c: per native stack id, the library its call was made inside
     * (ss_call_library), under the symbolizer's lock */
    struct ss_library_cache *library_cache;
    void (*library_cache_free)(struct ss_library_cache *);
    struct ss_replay *replay;
    void (*replay_free)(struct ss_replay *);
    /* replay.c: the replay being built on another thread (ss_replay_prefetch),
     * and what waits for it and frees it when the model goes first */
    void *replay_job;
    void (*replay_job_free)(struct ss_model *);
    struct ss_iterations *iterations;   /* iterations.c: the repeated iteration */
    /* Sampled recording (capture_windows.h): the recorded spans, built at
     * load from the SS_REC_CAPTURE records; one span for a trace without. */
    struct ss_capture *capture;
    void (*iterations_free)(struct ss_iterations *);
    struct ss_ranges_cache *ranges;     /* rule_common.c: the memory calls touch, recently asked for */
    void (*ranges_free)(struct ss_ranges_cache *);
} ss_model;

/* Load `path`.  Returns NULL on failure with a one-line reason in err (without
 * the file name).  A truncated trace loads (truncated = 1). */
ss_model *ss_model_load(const char *path, char *err, size_t errlen);
void ss_model_free(ss_model *m);

/* Value of a SS_REC_META key ("exe", "env.CUDA_DEVICE_MAX_CONNECTIONS"):
 * {NULL,0} when the trace has none (the first record of that key). */
ss_string_ref ss_model_meta(const ss_model *m, const char *key);
/* An environment variable of the traced process as the shim recorded it
 * (SYNCSIGHT_*, CUDA_*, PYTORCH_CUDA_*, NCCL_*), NUL-terminated into buf;
 * NULL when it was not set (or the trace predates format 1.4 for CUDA_*). */
const char *ss_model_env(const ss_model *m, const char *name, char *buf, size_t len);

/* The environment variables that decide how streams overlap and when work
 * waits, shown in every report's header (NULL-terminated). */
extern const char *const ss_decisive_env[];

/* String of an SS_REC_STRING id: {NULL,0} when unknown. */
ss_string_ref ss_model_string(const ss_model *m, uint32_t id);
/* The same string as recorded: kernel names stay mangled (ss_model_string
 * gives them demangled), as the cubins' symbol tables spell them. */
ss_string_ref ss_model_string_raw(const ss_model *m, uint32_t id);
const char *ss_model_call_name(const ss_model *m, const ss_call *c);
/* A 2D or 3D copy or memset (the table's `strided`: rows a pitch apart, the
 * pitches not recorded). */
int ss_call_is_strided(const ss_model *m, const ss_call *c);
/* Description of a stream: "legacy default", "per-thread default", "blocking",
 * "non-blocking" or "unknown". */
const char *ss_stream_kind_name(uint32_t kind);
/* "stream 0x... (kind)" (the legacy stream as 0x0), or "no stream", into buf. */
const char *ss_stream_describe(const ss_model *m, int32_t stream, char *buf, size_t len);
/* Innermost NVTX range of its thread that holds call c, or NULL.  A range
 * never closed holds only the calls with the Python stack of its first call
 * (model.c, unclosed_holds). */
const ss_nvtx_rec *ss_model_call_nvtx(const ss_model *m, const ss_call *c);
/* The collective library's range holding call c (NCCL marks each of its API
 * calls with an NVTX range "nccl..."): its name, or { NULL, 0 } when the call
 * is not inside one.  (A range NCCL never closed for CUPTI holds only the
 * calls of its own API: ss_model_call_nvtx.) */
ss_string_ref ss_model_call_library_range(const ss_model *m, const ss_call *c);
/* Is an NVTX range of this name a collective library's own ("nccl...")? */
int ss_library_range_name(ss_string_ref name);
/* Allocation containing addr at time t (live then), or -1. */
int32_t ss_model_alloc_at(const ss_model *m, uint64_t addr, uint64_t t);
/* The range a successful release call c (class SS_API_FREE, c->alloc >= 0)
 * takes away: its allocation, or its own range when it releases part of one
 * (an unmap of some of the joined mappings, whose record holds ptr + bytes). */
void ss_call_released_range(const ss_model *m, const ss_call *c, uint64_t *lo, uint64_t *hi);
/* Does the call record its event: cudaEventRecord*, or a launch that
 * records one through a launch attribute (a programmatic or launch-completion
 * event: SS_API_F_EVENT_AT_END / _AT_START; the model gives a launch an
 * event only then, so this reads no record)?  A launch's record is placed
 * after its kernel (AT_END: its blocks trigger it as they end or call
 * cudaTriggerProgrammaticLaunchCompletion; where in the kernel is not in the
 * trace) or before it (AT_START: its blocks started, not ended). */
static inline int ss_call_records_event(const ss_call *c)
{
    return c->cls == SS_API_EVENT_RECORD || (c->cls == SS_API_LAUNCH && c->event >= 0);
}
static inline int ss_launch_records_event_before(const ss_call *c)
{
    return c->cls == SS_API_LAUNCH && c->event >= 0 && (c->rec->flags & SS_API_F_EVENT_AT_START);
}
/* Is a stream-ordered call a capture (cudaGraphLaunch) whose GPU work the
 * launch stream orders as one unit?  Its ops may run on internal streams. */
int ss_call_is_graph_launch(const ss_model *m, const ss_call *c);
/* Calls that take a place in their stream's order (happens-before ticks the
 * stream's clock for each): launches (graph launches too), copies, memsets,
 * host functions, stream memory operations (a wait-value holds back what
 * follows it, a write-value lands after what precedes it), managed-memory
 * prefetches. */
int ss_class_submits_work(uint8_t cls);
/* Stream work CUPTI gives no GPU record for (stream memory operations,
 * managed-memory prefetches and discards, host functions): it runs in its
 * stream's order and ends when nothing in the trace says.  The class, and a
 * call of it that ran (on a stream, not captured, not failed). */
int ss_class_is_unrecorded_stream_work(uint8_t cls);
int ss_call_is_unrecorded_stream_work(const ss_call *c);
/* An event node of a graph launch: the event, recorded or waited for
 * (SS_GRAPH_NODE_EVENT_*); first: a record node with no dependency, which
 * runs before the launch's other nodes (the place of one with dependencies
 * is not kept: it is taken to run after all of them). */
typedef struct ss_launch_event {
    int32_t call;
    int32_t event;
    uint8_t kind;
    uint8_t first;
    uint16_t pad;
} ss_launch_event;
/* The event nodes graph launch `call` runs, *n of them (NULL: none). */
const ss_launch_event *ss_graph_launch_events(const ss_model *m, int32_t call, uint32_t *n);

/* The capture a graph launch replays (ss_model.call_capture), 0 when not
 * known: the capture of the call any of its operations' nodes came from. */
uint32_t ss_graph_launch_capture(const ss_model *m, const ss_call *c);
/* The event of ext_event_calls[k] when that call is of class `cls` and
 * belongs to `capture` (an external record or wait node of that graph), else -1. */
int32_t ss_graph_ext_event(const ss_model *m, uint32_t k, uint32_t capture, uint8_t cls);
/* A stream memory operation's value (cuStreamWriteValue*: written,
 * cuStreamWaitValue*: waited for): the record's `arg`, and for the 64-bit
 * calls (bytes == 8) the high half in ptr2 (preload/cuda_api.tab). */
uint64_t ss_call_memop_value(const ss_call *c);
/* Thread entry of tid or NULL. */
const ss_thread *ss_model_thread(const ss_model *m, uint32_t tid);
/* Thread entry of a CUPTI activity thread id (the low 32 bits of the
 * thread's pthread_self(), as in SS_REC_JIT), else of an OS tid; NULL when
 * neither matches. */
const ss_thread *ss_model_thread_of_cupti(const ss_model *m, uint32_t cupti_tid);
const ss_stack_rec *ss_model_stack(const ss_model *m, uint32_t id);
const ss_pystack_rec *ss_model_pystack(const ss_model *m, uint32_t id);
/* Kernel name (mangled as recorded) of an op, or a kind label for copies. */
ss_string_ref ss_model_op_name(const ss_model *m, const ss_gpu_op *op);
/* The op's device. */
static inline int32_t ss_op_device(const ss_gpu_op *op) { return (int32_t)op->rec->device; }
/* The stream the program put an op on: a graph launch's stream for the ops
 * of its nodes (they run on streams of the graph's own, ordered as one unit
 * on the stream it was launched on), else the stream the op ran on. */
int32_t ss_op_program_stream(const ss_model *m, const ss_gpu_op *op);
/* CUPTI's id of the graph node an op ran as (SS_GPU_F_GRAPH_NODE), 0 when
 * it did not run in a graph or the trace predates format 1.5. */
static inline uint64_t ss_op_graph_node(const ss_gpu_op *op)
{
    uint32_t fixed = op->kind == SS_OP_KERNEL ? (uint32_t)sizeof(ss_kernel_rec)
                   : op->kind == SS_OP_MEMCPY ? (uint32_t)sizeof(ss_memcpy_rec) : (uint32_t)sizeof(ss_memset_rec);
    uint64_t id = 0;
    if ((op->rec->h.flags & SS_GPU_F_GRAPH_NODE) && op->rec->h.size >= fixed + 8u)
        memcpy(&id, (const char *)op->rec + fixed, 8);
    return id;
}
/* Pointer-sized kernel parameters of a launch call (tail of the record). */
static inline const uint64_t *ss_call_params(const ss_call *c, uint32_t *n)
{
    *n = c->rec->nparams;
    if ((uint64_t)sizeof(ss_api_rec) + 8u * c->rec->nparams > c->rec->h.size) *n = 0;
    return (const uint64_t *)ss_rec_tail(&c->rec->h, sizeof(ss_api_rec));
}
/* Byte offset of each ss_call_params() value in the kernel's parameter
 * buffer (SS_API_F_PARAM_OFFSETS), or NULL when the record has none. */
static inline const uint16_t *ss_call_param_offsets(const ss_call *c)
{
    const ss_api_rec *r = c->rec;
    if (!(r->flags & SS_API_F_PARAM_OFFSETS) || r->nparams == 0 ||
        (uint64_t)sizeof(ss_api_rec) + 10u * r->nparams > r->h.size)
        return NULL;
    return (const uint16_t *)(const void *)((const char *)ss_rec_tail(&r->h, sizeof(ss_api_rec)) +
                                            8u * r->nparams);
}
/* The ELF image of an SS_REC_CUBIN record: its tail, *len bytes (0 when the
 * record is too short for its size field). */
static inline const uint8_t *ss_cubin_image(const ss_cubin_rec *r, uint32_t *len)
{
    *len = r->h.size >= sizeof(ss_cubin_rec) && r->size <= r->h.size - sizeof(ss_cubin_rec) ? r->size : 0;
    return (const uint8_t *)ss_rec_tail(&r->h, sizeof(ss_cubin_rec));
}

/* ---- exact memory mode (analyzer/exact_access.c) --------------------------
 * The SS_REC_KERNEL_ACCESS record of a launch call (what the kernel really
 * read and wrote, SYNCSIGHT_EXACT_MEMORY=1), joined by correlation id or by
 * (tid, t_enter); NULL when the trace has none for this call. */
const ss_kernel_access_rec *ss_call_exact_access(const ss_model *m, const ss_call *c);
/* Its entries (one per recorded parameter word pointing into an allocation):
 * *n of them, 0 when the record is too short for its count. */
static inline const ss_kernel_access_entry *ss_exact_access_entries(const ss_kernel_access_rec *r, uint32_t *n)
{
    *n = (uint64_t)sizeof(*r) + (uint64_t)r->nentries * sizeof(ss_kernel_access_entry) <= r->h.size ? r->nentries : 0;
    return (const ss_kernel_access_entry *)ss_rec_tail(&r->h, sizeof(*r));
}
/* Index in ss_call_params(c) of the word an entry describes (checked by
 * offset when the call has offsets, and by value), or -1. */
int32_t ss_exact_access_word(const ss_call *c, const ss_kernel_access_entry *e);

/* ---- timeline helpers shared by rules (built at load) ---------------------
 * Per device, ops sorted by submit time with a running maximum of their end:
 * answers "was GPU work submitted before t still unfinished at t?" in
 * O(log n). */
int ss_model_busy_at(const ss_model *m, int32_t device, uint64_t t);
/* Start of the first op on device starting at or after t; UINT64_MAX when none. */
uint64_t ss_model_next_start(const ss_model *m, int32_t device, uint64_t t);
/* Device of a call: rec->device, else its stream's, else its first op's, else 0. */
int32_t ss_model_call_device(const ss_model *m, const ss_call *c);
/* The context family whose work a device-wide wait waits for (CUPTI's id,
 * as ss_stream.family; 0 unknown).  The context the call ran in:
 * cudaDeviceSynchronize and cuCtxSynchronize record it in `arg` (traces
 * from 2026-11-29 on), every call in its thread's SS_REC_THREAD_CONTEXT
 * (1.9); else a call on a created stream, its stream's context (in older
 * traces the legacy and per-thread default streams are one a device in the
 * model, whatever the context: theirs is unknown).  Then its family: a
 * green context's parent (cudaDeviceSynchronize in either waits for both).
 * Several contexts on one device (a context per thread, cuCtxCreate) order
 * nothing between them. */
uint32_t ss_model_call_context(const ss_model *m, const ss_call *c);
/* Is stream s among the work of context family `family` (ss_model_call_context;
 * 0: any; a stream of unknown context or a per-thread default stream: yes; a
 * legacy stream: yes unless the model keeps one per context)? */
int ss_stream_in_context(const ss_model *m, int32_t s, uint32_t family);
/* Does call c's device-wide wait (SS_WAIT_DEVICE) cover stream s: a stream
 * of its device (or of none known) and of its context? */
int ss_device_wait_covers(const ss_model *m, const ss_call *c, int32_t s);
/* Are streams a and b ordered by the same legacy stream's implicit barriers? */
static inline int ss_same_legacy_domain(const ss_model *m, int32_t a, int32_t b)
{
    return m->streams[a].ldomain == m->streams[b].ldomain;
}
/* How many context families (ss_stream.family) the streams of `device` belong to: 0, 1, or 2 for "more than one". */
uint32_t ss_model_device_contexts(const ss_model *m, int32_t device);

/* The other half of a blocking copy (the sync of a copy, the copy of a
 * sync), or -1 when the call is not part of one. */
int32_t ss_blocking_copy_partner(const ss_model *m, int32_t call);

/* ---- what a call did to the host thread -----------------------------------
 * THE answer every rule uses to know whether a call joined the host with GPU
 * work, from the `host` column of preload/cuda_api.tab plus, for copies,
 * memsets and graph launches, the memory kinds of this call.  "Its stream" is
 * c->stream (the legacy default stream's implicit ordering with blocking
 * streams is the caller's business).  A call that failed, or that was
 * recorded during stream capture (it ran nothing), waited for nothing. */
typedef enum ss_host_wait {
    SS_WAIT_NONE = 0,     /* returned without waiting for any GPU work */
    SS_WAIT_STREAM_PRIOR, /* waited for the work submitted to its stream before it, not for its own operation
                             (cudaMemcpy from pageable host memory to device: stream sync, then the copy is staged
                              and may land after the call returns) */
    SS_WAIT_STREAM,       /* waited for its stream up to and including its own operation */
    SS_WAIT_EVENT,        /* waited for the work its event captured */
    SS_WAIT_DEVICE,       /* waited for all work on the call's device */
    SS_WAIT_QUERY,        /* waited for nothing, but a successful return proves the stream/event complete
                             (cudaStreamQuery, cudaEventQuery; cudaEventElapsedTime: both of its events,
                             rec->event and rec->ptr) */
} ss_host_wait;
ss_host_wait ss_call_host_wait(const ss_model *m, const ss_call *c);
const char *ss_host_wait_name(ss_host_wait w);
/* Is the call's GPU work serialized with all earlier and later work of its
 * devices (cudaMemcpyPeer: "serialized with respect to all pending and future
 * asynchronous work in to the current device, srcDevice, and dstDevice")? */
int ss_call_device_serialized(const ss_model *m, const ss_call *c);   /* "none", "stream-prior", "stream", ... */

#endif
