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
#include "syncsight/trace_format.h"
#include "syncsight/trace_io.h"

/* What a runtime call does, decided from its base name (the CUPTI name without
 * _ptsz/_ptds) in ONE table: model.c ss_api_classify(). */
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
    SS_API_CLASS_COUNT
} ss_api_class;

const char *ss_api_class_name(ss_api_class c);

/* Base name of a CUPTI API name: drops "_ptsz"/"_ptds" and a trailing
 * "_v<digits>" version; writes into out (NUL-terminated). */
void ss_api_base_name(const char *name, char *out, size_t outlen);
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
    uint8_t  pad;
    int32_t  stream;            /* ss_model.streams index of rec->stream, -1 none */
    int32_t  first_op;          /* first GPU op joined by corr (ops of one call are
                                   chained through ss_gpu_op.next_of_call), -1 none */
    int32_t  event;             /* ss_model.events index for event calls, -1 none */
    int32_t  alloc;             /* ss_model.allocs index: alloc/free calls */
} ss_call;

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
    uint32_t pad;
} ss_stream;

typedef struct ss_alloc {
    uint64_t ptr, size;
    uint64_t t_alloc, t_free;   /* t_free = UINT64_MAX while never freed */
    uint32_t kind;              /* enum ss_mem_kind */
    int32_t  alloc_call, free_call;
} ss_alloc;

typedef struct ss_event {       /* one lifetime of an event handle */
    uint64_t handle;
    int32_t  create_call;       /* -1 when created before the trace */
    int32_t  first_record;      /* first successful cudaEventRecord call, -1 */
    uint32_t flags;
} ss_event;

typedef struct ss_nvtx {
    const ss_nvtx_rec *rec;
} ss_nvtx;

typedef struct ss_thread {
    uint32_t tid;
    const char *name;           /* from SS_REC_THREAD, NULL when none */
    uint32_t name_len;
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

    ss_call *calls;   uint32_t ncalls;
    ss_gpu_op *ops;   uint32_t nops;
    const ss_sync_rec **syncs; uint32_t nsyncs;
    const ss_cuda_event_rec **cuda_events; uint32_t ncuda_events;
    ss_stream *streams; uint32_t nstreams;
    ss_event *events; uint32_t nevents;
    ss_alloc *allocs; uint32_t nallocs;    /* sorted by (ptr, t_alloc) */
    ss_nvtx *nvtx; uint32_t nnvtx;          /* sorted by (tid, start) */
    ss_thread *threads; uint32_t nthreads;  /* sorted by tid */
    const ss_note_rec **notes; uint32_t nnotes;
    const ss_meta_rec **metas; uint32_t nmetas;
    const ss_context_rec **contexts; uint32_t ncontexts;
    const ss_stack_rec **stacks; uint32_t nstacks;      /* indexed by id via lookup */
    const ss_pystack_rec **pystacks; uint32_t npystacks;
    const ss_module_rec **modules; uint32_t nmodules;

    /* API names: api_names[i] is the display name, api_class[i] its class. */
    char **api_names; uint8_t *api_class; uint32_t napi_names;

    /* Strings by id (SS_REC_STRING), sparse: lookup via ss_model_string(). */
    struct ss_strmap *strings;

    ss_device_summary *devices; uint32_t ndevices;
    struct ss_timeline *timelines; uint32_t ntimelines;   /* private to model.c */
    uint64_t t_first, t_last;   /* first/last time seen in any record */
    int has_gpu;                /* any kernel/memcpy/memset record */
    int cupti_state;            /* 0 ok/unknown, 1 taken, 2 unavailable */

    /* Exact early exits for the hot lookups (built at load): */
    uint64_t *alloc_max_end;    /* per allocs[i]: max(ptr + size) over allocs[0..i] */
    uint64_t *op_max_end;       /* per ops[i]: max end over ops[0..i] */
    uint64_t *op_min_submit;    /* per ops[i]: min submit over ops[i..nops) */
} ss_model;

/* Load `path`.  Returns NULL on failure with a one-line reason in err (without
 * the file name).  A truncated trace loads (truncated = 1). */
ss_model *ss_model_load(const char *path, char *err, size_t errlen);
void ss_model_free(ss_model *m);

/* String of an SS_REC_STRING id: {NULL,0} when unknown. */
ss_string_ref ss_model_string(const ss_model *m, uint32_t id);
const char *ss_model_call_name(const ss_model *m, const ss_call *c);
/* Description of a stream: "legacy default", "per-thread default", "blocking",
 * "non-blocking" or "unknown". */
const char *ss_stream_kind_name(uint32_t kind);
/* Innermost NVTX range enclosing [t0,t1] on thread tid, or NULL. */
const ss_nvtx_rec *ss_model_nvtx_at(const ss_model *m, uint32_t tid, uint64_t t0, uint64_t t1);
/* Allocation containing addr at time t (live then), or -1. */
int32_t ss_model_alloc_at(const ss_model *m, uint64_t addr, uint64_t t);
/* Is a stream-ordered call a capture (cudaGraphLaunch) whose GPU work the
 * launch stream orders as one unit?  Its ops may run on internal streams. */
int ss_call_is_graph_launch(const ss_model *m, const ss_call *c);
/* Thread entry of tid or NULL. */
const ss_thread *ss_model_thread(const ss_model *m, uint32_t tid);
const ss_stack_rec *ss_model_stack(const ss_model *m, uint32_t id);
const ss_pystack_rec *ss_model_pystack(const ss_model *m, uint32_t id);
/* Kernel name (mangled as recorded) of an op, or a kind label for copies. */
ss_string_ref ss_model_op_name(const ss_model *m, const ss_gpu_op *op);
/* The op's device. */
static inline int32_t ss_op_device(const ss_gpu_op *op) { return (int32_t)op->rec->device; }
/* Pointer-sized kernel parameters of a launch call (tail of the record). */
static inline const uint64_t *ss_call_params(const ss_call *c, uint32_t *n)
{
    *n = c->rec->nparams;
    if ((uint64_t)sizeof(ss_api_rec) + 8u * c->rec->nparams > c->rec->h.size) *n = 0;
    return (const uint64_t *)ss_rec_tail(&c->rec->h, sizeof(ss_api_rec));
}

/* ---- timeline helpers shared by rules (built at load) ---------------------
 * Per device, ops sorted by submit time with a running maximum of their end:
 * answers "was GPU work submitted before t still unfinished at t?" in
 * O(log n). */
int ss_model_busy_at(const ss_model *m, int32_t device, uint64_t t);
/* Start of the first op on device starting at or after t; UINT64_MAX when none. */
uint64_t ss_model_next_start(const ss_model *m, int32_t device, uint64_t t);
/* Device of a call: rec->device, else its stream's, else its first op's, else 0. */
int32_t ss_model_call_device(const ss_model *m, const ss_call *c);

#endif
