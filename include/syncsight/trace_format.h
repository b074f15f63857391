/*
 * syncsight trace format — the one contract between the shim (preload/) and
 * the analyzer (analyzer/).  Documented for users in docs/trace-format.md;
 * change both together and bump SS_TRACE_VERSION on any layout change.
 *
 * A trace file is
 *
 *     ss_file_header
 *     block*            each: ss_block_header + payload of records
 *
 * Blocks are written whole with one write() by whoever flushes a per-thread
 * buffer, so a file cut short by a crash, a SIGKILL or a full disk still reads
 * back up to its last complete block: the reader checks each block's length
 * and CRC and stops (with a warning) at the first one that does not verify.
 *
 * Records inside a block are 8-byte aligned, each starting with ss_rec_hdr.
 * `size` counts the whole record including the header and any variable tail,
 * rounded up to a multiple of 8.  Readers skip record types they do not know,
 * so new types can be added without breaking old analyzers (bump the minor
 * version); changing an existing struct bumps the major version.
 *
 * Records are NOT globally ordered: each host thread fills its own buffer, and
 * GPU activity arrives from CUPTI in batches.  Every time is in nanoseconds of
 * one clock (the "trace clock", CLOCK_MONOTONIC unless the header says
 * otherwise); GPU timestamps are converted into it (see SS_REC_CLOCK).
 *
 * All integers are little-endian (the format is only written on x86-64 and
 * aarch64 Linux hosts); the structs below are laid out without implicit padding
 * so that they can be written and read as they are.
 */
#ifndef SYNCSIGHT_TRACE_FORMAT_H
#define SYNCSIGHT_TRACE_FORMAT_H

#include <stdint.h>

#define SS_TRACE_MAGIC        "SYNCSGHT"     /* 8 bytes, no NUL stored */
#define SS_TRACE_VERSION_MAJOR 1
#define SS_TRACE_VERSION_MINOR 9     /* 1: SS_REC_CUBIN, SS_API_F_PARAM_OFFSETS;
                                        2: SS_REC_KERNEL_ACCESS; 3: SS_REC_HOST_SYNC;
                                        4: SS_REC_JIT; 5: SS_REC_STREAM_NAME,
                                        SS_REC_GRAPH_NODE, SS_GPU_F_GRAPH_NODE,
                                        driver-API calls (SS_API_F_DRIVER,
                                        SS_API_CBID_DRIVER); 6: SS_REC_CAPTURE
                                        (sampled recording windows);
                                        7: SS_REC_SHIM_PAUSE; 8: events recorded
                                        by launch attributes (SS_API_F_EVENT_AT_END,
                                        _AT_START) and IPC-opened events;
                                        9: SS_REC_THREAD_CONTEXT */
#define SS_BLOCK_MAGIC        0x4b425353u    /* "SSBK" */
#define SS_BLOCK_MAX_PAYLOAD  (16u << 20)    /* readers reject larger blocks */

/* Clock ids for ss_file_header.clock_id */
enum ss_clock_id {
    SS_CLOCK_MONOTONIC     = 1,   /* clock_gettime(CLOCK_MONOTONIC) in ns */
    SS_CLOCK_MONOTONIC_RAW = 2,
};

/* Fixed-size file header (256 bytes). */
typedef struct ss_file_header {
    char     magic[8];          /* SS_TRACE_MAGIC */
    uint16_t version_major;
    uint16_t version_minor;
    uint32_t header_size;       /* sizeof(ss_file_header) as written */
    uint32_t pid;
    uint32_t ppid;
    uint32_t clock_id;          /* enum ss_clock_id */
    uint32_t flags;             /* SS_FILE_F_* */
    uint64_t start_ns;          /* trace clock when the shim started */
    uint64_t start_realtime_ns; /* CLOCK_REALTIME at the same moment */
    char     hostname[64];      /* NUL-terminated */
    char     shim_version[32];  /* NUL-terminated, e.g. "0.1.0" */
    uint8_t  reserved[112];
} ss_file_header;

enum ss_file_flags {
    SS_FILE_F_INTERPOSER = 1u << 0, /* the symbol interposer was active */
    SS_FILE_F_CUPTI      = 1u << 1, /* CUPTI was subscribed by the shim */
};

typedef struct ss_block_header {
    uint32_t magic;             /* SS_BLOCK_MAGIC */
    uint32_t payload_bytes;     /* bytes of records following, multiple of 8 */
    uint32_t record_count;
    uint32_t crc32;             /* CRC-32 (IEEE, zlib's) of the payload */
} ss_block_header;

/* ---------------------------------------------------------------- records */

enum ss_rec_type {
    SS_REC_META       = 1,  /* key=value text about the process            */
    SS_REC_STRING     = 2,  /* interned string (kernel names, NVTX text)   */
    SS_REC_API_NAME   = 3,  /* name of a CUPTI runtime cbid                */
    SS_REC_API        = 4,  /* one host CUDA runtime call                  */
    SS_REC_KERNEL     = 5,  /* GPU: kernel execution (CONCURRENT_KERNEL)   */
    SS_REC_MEMCPY     = 6,  /* GPU: copy                                   */
    SS_REC_MEMSET     = 7,  /* GPU: memset                                 */
    SS_REC_SYNC       = 8,  /* GPU: CUPTI SYNCHRONIZATION record           */
    SS_REC_CUDA_EVENT = 9,  /* GPU: CUPTI CUDA_EVENT record (event record) */
    SS_REC_STREAM     = 10, /* identity and flags of a stream              */
    SS_REC_CONTEXT    = 11, /* context -> device, null stream id           */
    SS_REC_NVTX       = 12, /* application NVTX range / mark               */
    SS_REC_NOTE       = 13, /* shim diagnostics: dropped data, CUPTI taken */
    SS_REC_CLOCK      = 14, /* trace clock <-> CUPTI clock pair            */
    SS_REC_THREAD     = 15, /* host thread id -> name                      */
    SS_REC_STACK      = 16, /* call stack, referenced by ss_api_rec.stack_id*/
    SS_REC_MODULE     = 17, /* loaded module: path, base, build id         */
    SS_REC_PYSTACK    = 18, /* Python stack, referenced like SS_REC_STACK  */
    SS_REC_CUBIN      = 19, /* device code image of a loaded module        */
    SS_REC_KERNEL_ACCESS = 20, /* exact mode: byte ranges a launch read/wrote */
    SS_REC_HOST_SYNC  = 21, /* a thread released / acquired a host sync object */
    SS_REC_JIT        = 22, /* a JIT compilation / compute-cache load of device code */
    SS_REC_STREAM_NAME = 23, /* the program named a stream (nvtxNameCudaStream*, nvtxNameCuStream*) */
    SS_REC_GRAPH_NODE = 24, /* a CUDA graph node created, cloned or given new parameters */
    SS_REC_CAPTURE    = 25, /* the shim started or stopped recording the hot path (sampling) */
    SS_REC_SHIM_PAUSE = 26, /* the shim held a thread after a call returned (its own work) */
    SS_REC_THREAD_CONTEXT = 27, /* from a call on, a thread's calls run in another CUDA context */
    SS_REC_TYPE_MAX
};

typedef struct ss_rec_hdr {
    uint16_t type;              /* enum ss_rec_type */
    uint16_t flags;             /* per-type */
    uint32_t size;              /* whole record, header and tail, multiple of 8 */
} ss_rec_hdr;

/* SS_REC_META: tail is "key\0value\0" (padded). Keys in use: "cmdline",
 * "exe", "cwd", "cupti" (ok | taken | unavailable: <why>), "interposer",
 * "env.SYNCSIGHT_*", "torch" ... */
typedef struct ss_meta_rec {
    ss_rec_hdr h;
    uint32_t key_len;           /* without NUL */
    uint32_t value_len;         /* without NUL */
} ss_meta_rec;

/* SS_REC_STRING: tail is `len` bytes of text (not NUL-terminated, padded).
 * Ids are unique per trace file; 0 means "no string". */
typedef struct ss_string_rec {
    ss_rec_hdr h;
    uint32_t id;
    uint32_t len;
} ss_string_rec;

/* SS_REC_API_NAME: written once per cbid before (or near) its first use;
 * tail is the name as CUPTI spells the cbid without prefix and version,
 * e.g. "cudaMemcpyAsync_ptsz". */
typedef struct ss_api_name_rec {
    ss_rec_hdr h;
    uint32_t cbid;
    uint32_t len;
} ss_api_name_rec;

/* Memory kinds, numbered as CUpti_ActivityMemoryKind so both sources agree. */
enum ss_mem_kind {
    SS_MEM_UNKNOWN  = 0,
    SS_MEM_PAGEABLE = 1,
    SS_MEM_PINNED   = 2,
    SS_MEM_DEVICE   = 3,
    SS_MEM_ARRAY    = 4,
    SS_MEM_MANAGED  = 5,
};

/* ss_memcpy_rec.copy_kind, numbered as CUpti_ActivityMemcpyKind. */
enum ss_copy_kind {
    SS_COPY_UNKNOWN = 0,
    SS_COPY_HTOD    = 1,
    SS_COPY_DTOH    = 2,
    SS_COPY_HTOA    = 3,
    SS_COPY_ATOH    = 4,
    SS_COPY_ATOA    = 5,
    SS_COPY_ATOD    = 6,
    SS_COPY_DTOA    = 7,
    SS_COPY_DTOD    = 8,
    SS_COPY_HTOH    = 9,
    SS_COPY_PTOP    = 10,
};

/* ss_api_rec.flags */
enum ss_api_flags {
    SS_API_F_INTERPOSER = 1u << 0, /* recorded by the symbol interposer   */
    SS_API_F_CUPTI_CB   = 1u << 1, /* recorded from a CUPTI callback      */
    SS_API_F_PTSZ       = 1u << 2, /* _ptsz/_ptds entry point: stream 0 is
                                      the per-thread default stream        */
    SS_API_F_CAPTURING  = 1u << 3, /* the stream was being captured       */
    SS_API_F_VIA_CUDA_LAUNCH_KERNEL = 1u << 4, /* entered as __cudaLaunchKernel */
    SS_API_F_PARAMS_TRUNCATED = 1u << 5, /* more pointer params than stored */
    SS_API_F_PARAM_OFFSETS = 1u << 6, /* the tail also holds each param's offset */
    SS_API_F_DRIVER     = 1u << 7, /* a CUDA driver-API call (1.5): cbid is
                                      SS_API_CBID_DRIVER + CUPTI's driver cbid */
    /* A launch that records `event` through a launch attribute
     * (cudaLaunchKernelEx, cuLaunchKernelEx; 1.8: a reader that knows
     * nothing of them sees a plain launch).  EVENT_AT_END: a
     * programmatic event that its blocks trigger
     * (cudaLaunchAttributeProgrammaticEvent, cudaTriggerProgrammaticLaunch-
     * Completion or the block's end).  EVENT_AT_START: it fires once every
     * block has started (cudaLaunchAttributeLaunchCompletionEvent, or a
     * programmatic event with triggerAtBlockStart): after the work before
     * the kernel, not the kernel's. */
    SS_API_F_EVENT_AT_END   = 1u << 8,
    SS_API_F_EVENT_AT_START = 1u << 9,
};

/* CUPTI numbers runtime and driver callbacks separately and the two ranges
 * overlap, so a driver-API call's ss_api_rec.cbid (and its SS_REC_API_NAME)
 * is CUPTI's driver cbid (cupti_driver_cbid.h) plus this offset: every cbid
 * in a trace names one entry point, and a reader that knows nothing of
 * driver calls (1.4) still reads them as calls it cannot classify.  Runtime
 * cbids stay below it. */
#define SS_API_CBID_DRIVER 0x10000u

/*
 * SS_REC_API: one call of a CUDA runtime entry point, 112 bytes + tail.
 *
 * `cbid` is CUPTI's runtime callback id (cupti_runtime_cbid.h), so a call has
 * the same id whichever way it was caught; SS_REC_API_NAME gives its name.
 * A call of the CUDA driver API that was not made inside a runtime call
 * (Triton, CuPy's RawKernel, JAX launch through cuLaunchKernel*; 1.5) has
 * SS_API_F_DRIVER and cbid SS_API_CBID_DRIVER + CUPTI's driver cbid; its name
 * is the driver function without its "_v2"-style version, e.g.
 * "cuMemcpyHtoDAsync_ptsz", and its slots are those of its runtime twin
 * below (cuLaunchKernel* as kernel launches, cuMemcpy* as the memcpy family
 * with `arg` the cudaMemcpyKind the function's name implies, cudaMemcpyDefault
 * for cuMemcpy/cuMemcpyAsync, cuMemsetD8/16/32 with `bytes` = N times the
 * element size, cuCtxSynchronize as cudaDeviceSynchronize).
 * The meaning of the generic argument slots depends on the call:
 *
 *   call                         stream   event    ptr      ptr2    bytes     func        arg          arg2
 *   cudaStreamCreate*            new      -        -        -       -         -           flags        priority
 *   cudaStreamDestroy/Sync/Query stream   -
 *   cudaStreamWaitEvent          stream   event    -        -       -         -           flags
 *   cudaStreamAddCallback,
 *   cudaLaunchHostFunc           stream   -        -        -       -         fn
 *   cudaStreamBegin/EndCapture   stream   -        -        -       -         graph(end)  mode
 *   cuStreamWrite/WaitValue32/64 stream   -        addr     value>>32 4 or 8    -           value        flags
 *   cuStreamBatchMemOp           stream   -        -        -       -         -           op count     flags
 *                                (its ops are not recorded)
 *   cudaEventCreate*             -        new      -        -       -         -           flags
 *   cudaEventRecord[WithFlags]   stream   event                                           flags
 *   cu[Green]CtxRecordEvent/
 *   WaitEvent (context-wide)     -        event    context  -       -         -           1 record, 2 wait
 *   cudaEventSynchronize/Query/
 *   Destroy                      -        event
 *   cudaEventElapsedTime         -        start    end(evt)
 *   memcpy family                stream   -        dst      src     bytes     -           cudaMemcpyKind  -
 *   cudaMemcpyPeer*              stream   -        dst      src     bytes     -           dst device   src device
 *   memset family                stream   -        dst      -       bytes     -           value
 *   cudaMalloc(all kinds),  
 *   MallocManaged/HostRegister   stream*  -        ptr      -       bytes     -           flags
 *   cudaFree(all kinds),    
 *   HostUnregister               stream*  -        ptr
 *   kernel launches              stream   -        -        -       -         function    grid x*y*z   block x*y*z
 *   cudaGraphLaunch              stream   -        -        -       -         graphExec   exec's graph id
 *   graph event record/wait nodes
 *   (cudaGraphAddEvent*Node, their
 *   SetEvent calls, cudaGraphAddNode
 *   of those types)              -        event    -        -       -         -           deps (Add)   1 record, 2 wait
 *   cudaDeviceSynchronize        -
 *   cudaDeviceSetLimit           -        -        -        -       value     -           limit
 *   cudaSetDevice                -        -        -        -       -         -           device
 *   (* stream only for the Async variants)
 *
 * A device-wide sync's `arg` (cudaDeviceSynchronize, cuCtxSynchronize) is
 * CUPTI's id of the context it waited for, the calling thread's current
 * one (0 unknown, and in traces before 2026-11-29).
 * A graph launch's `arg` is CUPTI's id of the executable graph (the graphId
 * of its nodes' activity records; 0 unknown, and in traces written before
 * it was recorded): the ops of a conditional node's body carry that id but
 * no correlation id, and the analyzer joins them to the launch by it.
 * 2D/3D copies and memsets store the total bytes moved. Batch copies store
 * the first dst/src and the sum of the sizes.  For kernel launches the tail
 * holds `nparams` uint64 values, in parameter order: every kernel parameter
 * that is 8 bytes wide, and, inside wider (struct) parameters, the 8-aligned
 * words that fall within the address range of the allocations seen so far —
 * the candidate pointers the analyzer matches against known allocations.
 * When SS_API_F_PARAM_OFFSETS is set (minor version 1), the values are
 * followed by `nparams` uint16 byte offsets, one per value: where the word
 * sits in the kernel's packed parameter buffer (the parameter's offset plus,
 * for a word found inside a struct parameter, the word's offset in it), i.e.
 * where the kernel's code reads it (constant bank 0, parameter base +
 * offset).  The tail is then 10 * nparams bytes, rounded up to 8.
 */
/* A graph-node call's arg2 when the node records or waits for an event. */
enum ss_graph_node_event {
    SS_GRAPH_NODE_EVENT_RECORD = 1,
    SS_GRAPH_NODE_EVENT_WAIT = 2,
};

typedef struct ss_api_rec {
    ss_rec_hdr h;
    uint32_t cbid;
    uint32_t tid;               /* gettid() of the calling thread */
    uint64_t t_enter;           /* trace clock */
    uint64_t t_exit;
    int32_t  ret;               /* cudaError_t returned to the program */
    uint32_t corr;              /* CUPTI correlation id, 0 when unknown */
    uint64_t stream;            /* cudaStream_t as passed */
    uint64_t event;
    uint64_t ptr;
    uint64_t ptr2;
    uint64_t bytes;
    uint64_t func;
    uint32_t flags;             /* enum ss_api_flags */
    uint32_t arg;
    int32_t  arg2;
    uint8_t  mem_dst;           /* enum ss_mem_kind of ptr  (copies, memsets) */
    uint8_t  mem_src;           /* enum ss_mem_kind of ptr2 (copies)          */
    uint8_t  nparams;           /* uint64 kernel params in the tail           */
    int8_t   device;            /* current device of the thread, -1 unknown   */
    uint32_t stack_id;          /* SS_REC_STACK id, 0 = none                  */
    uint32_t pystack_id;        /* SS_REC_PYSTACK id, 0 = none                */
} ss_api_rec;

/* GPU records share this prefix.  `stream_id` is CUPTI's stream id, which is
 * not the handle: SS_REC_STREAM links the two.
 *
 * h.flags of SS_REC_KERNEL, SS_REC_MEMCPY and SS_REC_MEMSET (minor version 5):
 * SS_GPU_F_GRAPH_NODE says the operation ran as a node of a graph launch and
 * that the fixed record is followed by a uint64 tail, CUPTI's id of that node
 * (graphNodeId: the node of the executable graph, a clone of the node that
 * was captured or added; SS_REC_GRAPH_NODE links the two).  Older readers
 * skip the tail; records without the flag have none. */
enum ss_gpu_flags {
    SS_GPU_F_GRAPH_NODE = 1u << 0,
};
typedef struct ss_gpu_common {
    ss_rec_hdr h;
    uint64_t start;             /* trace clock */
    uint64_t end;
    uint32_t corr;              /* correlation id of the API call */
    uint32_t stream_id;
    uint32_t context_id;
    uint32_t device;
} ss_gpu_common;

typedef struct ss_kernel_rec {
    ss_gpu_common g;
    uint32_t name_id;           /* SS_REC_STRING id of the (mangled) name */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_bytes;      /* static + dynamic */
    uint32_t graph_id;          /* CUPTI graph id if launched from a graph, else 0 */
    uint32_t reserved;
} ss_kernel_rec;

typedef struct ss_memcpy_rec {
    ss_gpu_common g;
    uint64_t bytes;
    uint8_t  copy_kind;         /* enum ss_copy_kind (CUpti_ActivityMemcpyKind) */
    uint8_t  src_kind;          /* enum ss_mem_kind */
    uint8_t  dst_kind;
    uint8_t  async;             /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC was set */
    uint32_t src_device;        /* peer copies; else == device */
    uint32_t dst_device;
    uint32_t graph_id;
} ss_memcpy_rec;

typedef struct ss_memset_rec {
    ss_gpu_common g;
    uint64_t bytes;
    uint32_t value;
    uint8_t  mem_kind;          /* enum ss_mem_kind */
    uint8_t  async;
    uint16_t reserved;
    uint32_t graph_id;
    uint32_t reserved2;
} ss_memset_rec;

/* SS_REC_SYNC: sync_type as CUpti_ActivitySynchronizationType:
 * EVENT_SYNCHRONIZE 1, STREAM_WAIT_EVENT 2, STREAM_SYNCHRONIZE 3,
 * CONTEXT_SYNCHRONIZE 4.  Times are host times of the wait. */
typedef struct ss_sync_rec {
    ss_gpu_common g;
    uint32_t sync_type;
    uint32_t event_id;          /* CUPTI event id (cudaEventId), 0 if none */
} ss_sync_rec;

/* SS_REC_CUDA_EVENT: a cudaEventRecord as CUPTI saw it. `device_ts` is the
 * GPU time at which the event completed (0 unless device timestamps were on). */
typedef struct ss_cuda_event_rec {
    ss_gpu_common g;            /* start = end = device_ts when known */
    uint32_t event_id;
    uint32_t reserved;
} ss_cuda_event_rec;

/* ss_stream_rec.kind */
enum ss_stream_kind {
    SS_STREAM_UNKNOWN      = 0,
    SS_STREAM_BLOCKING     = 1, /* created without cudaStreamNonBlocking */
    SS_STREAM_NON_BLOCKING = 2,
    SS_STREAM_LEGACY_NULL  = 3, /* the legacy default stream (stream 0)  */
    SS_STREAM_PER_THREAD   = 4, /* a per-thread default stream           */
};

/* SS_REC_STREAM: written when the shim learns a stream's identity (at
 * creation, or from CUPTI's STREAM activity).  Any field may be 0/unknown;
 * the analyzer merges records about the same handle or stream_id. */
typedef struct ss_stream_rec {
    ss_rec_hdr h;
    uint64_t handle;            /* cudaStream_t, 0 when unknown */
    uint32_t stream_id;         /* CUPTI stream id, 0 when unknown */
    uint32_t context_id;
    uint32_t device;
    uint32_t kind;              /* enum ss_stream_kind */
    uint32_t flags;             /* cudaStream* creation flags */
    int32_t  priority;
    uint32_t corr;              /* creating call's correlation id */
    uint32_t reserved;
} ss_stream_rec;

typedef struct ss_context_rec {
    ss_rec_hdr h;
    uint32_t context_id;
    uint32_t device;
    uint32_t null_stream_id;    /* CUPTI stream id of the legacy stream */
    uint32_t parent_id;         /* minor version 9: for a green context (cuGreenCtxCreate), the
                                   context it was made from (CUPTI's parentContextId); else 0.
                                   Earlier writers left it unset: read only from 1.9 on */
} ss_context_rec;

/* SS_REC_NVTX: one application NVTX range (push/pop or start/end), or a mark
 * (start == end, flags bit 0).  Text is in SS_REC_STRING `name_id`. */
enum ss_nvtx_flags { SS_NVTX_F_MARK = 1, SS_NVTX_F_START_END = 2, SS_NVTX_F_UNCLOSED = 4 };
typedef struct ss_nvtx_rec {
    ss_rec_hdr h;
    uint64_t start;
    uint64_t end;
    uint32_t tid;               /* thread that pushed (started) it */
    uint32_t name_id;
    uint32_t domain_id;         /* SS_REC_STRING id of the domain name, 0 = default */
    uint32_t depth;             /* nesting depth at push, 0 = outermost */
    uint32_t color;             /* ARGB, 0 when none */
    uint32_t reserved;
} ss_nvtx_rec;

/* SS_REC_NOTE: something the analyzer must know about the trace's quality.
 * tail: a human-readable message (len bytes). */
enum ss_note_code {
    SS_NOTE_CUPTI_TAKEN       = 1, /* another tool holds CUPTI: no GPU timeline */
    SS_NOTE_CUPTI_UNAVAILABLE = 2, /* libcupti could not be loaded or failed    */
    SS_NOTE_DROPPED_API       = 3, /* value = API records lost (buffer full)    */
    SS_NOTE_DROPPED_ACTIVITY  = 4, /* value = CUPTI activity records dropped    */
    SS_NOTE_TRACE_INCOMPLETE  = 5, /* a write failed (ENOSPC, EFBIG): tracing stopped */
    SS_NOTE_SIGNAL            = 6, /* value = fatal signal the program died of  */
    SS_NOTE_EXIT              = 7, /* clean end of trace: value = exit status   */
    SS_NOTE_FORKED            = 8, /* this process is a fork child of ppid      */
    SS_NOTE_CUBIN_SKIPPED     = 9, /* value = module images not recorded (size
                                      limits, SYNCSIGHT_CUBIN_MB): the device code
                                      of some kernels is missing from the trace */
    SS_NOTE_EXACT_MEMORY      = 10, /* exact memory mode (SYNCSIGHT_EXACT_MEMORY=1):
                                      value 1 = on (kernels ran to completion inside
                                      their launch: GPU timings are not meaningful),
                                      0 = asked for but unavailable (message says why) */
    SS_NOTE_HOST_SYNC_FULL    = 11, /* the shim's table of host sync objects is full:
                                      objects not in it share one object,
                                      SS_HSYNC_BUCKET (more ordering, never less) */
    SS_NOTE_CUBIN_COST        = 12, /* value = ns the shim spent on module images
                                      (hash, checksum, write) on the threads that
                                      loaded the modules; the message gives the
                                      loads, the images written and their bytes */
};
typedef struct ss_note_rec {
    ss_rec_hdr h;
    uint32_t code;              /* enum ss_note_code */
    uint32_t len;
    uint64_t value;
    uint64_t time;
} ss_note_rec;

/* SS_REC_CLOCK: a simultaneous reading of the trace clock and CUPTI's clock.
 * When the shim registered its own clock with CUPTI the two are equal.  GPU
 * records are already converted; this record lets a reader check it. */
typedef struct ss_clock_rec {
    ss_rec_hdr h;
    uint64_t trace_ns;
    uint64_t cupti_ns;
} ss_clock_rec;

/* SS_REC_THREAD: tail = name (len bytes). */
typedef struct ss_thread_rec {
    ss_rec_hdr h;
    uint32_t tid;
    uint32_t len;
    uint64_t pthread_self;
} ss_thread_rec;

/* SS_REC_STACK: native call stack, tail = `depth` uint64 return addresses,
 * innermost first. Each distinct stack is written once; ids start at 1. */
typedef struct ss_stack_rec {
    ss_rec_hdr h;
    uint32_t id;
    uint32_t depth;
} ss_stack_rec;

/* SS_REC_MODULE: a loaded object; tail = path (path_len bytes) then build id
 * (build_id_len bytes). */
typedef struct ss_module_rec {
    ss_rec_hdr h;
    uint64_t base;              /* load address (dlpi_addr) */
    uint64_t size;              /* extent of its PT_LOAD segments from base */
    uint64_t time;              /* when it was seen loaded */
    uint32_t path_len;
    uint32_t build_id_len;
} ss_module_rec;

/* SS_REC_PYSTACK: Python stack, innermost first; tail = `depth` frames of
 * ss_pyframe. Strings are SS_REC_STRING ids. */
typedef struct ss_pyframe {
    uint32_t file_id;
    uint32_t func_id;
    uint32_t line;
    uint32_t reserved;
} ss_pyframe;
typedef struct ss_pystack_rec {
    ss_rec_hdr h;
    uint32_t id;
    uint32_t depth;
} ss_pystack_rec;

/* SS_REC_CUBIN: the device code image of a loaded module (CUPTI resource callback
 * CUPTI_CBID_RESOURCE_MODULE_LOADED: CUpti_ModuleResourceData.pCubin/cubinSize), written once per
 * distinct image (deduplicated by hash).  tail = `size` bytes of the ELF image.
 * Such a record can be megabytes: the shim writes it as a block of its own. */
enum ss_cubin_flags { SS_CUBIN_F_NONE = 0 };
typedef struct ss_cubin_rec {
    ss_rec_hdr h;
    uint64_t hash;          /* XXH64 (seed 0) of the image bytes: syncsight/hash64.h */
    uint64_t time;          /* trace clock when the module was loaded */
    uint32_t size;          /* image bytes in the tail */
    uint32_t module_id;     /* CUpti_ModuleResourceData.moduleId */
} ss_cubin_rec;

/* SS_REC_KERNEL_ACCESS (exact memory mode, SYNCSIGHT_EXACT_MEMORY=1): what one
 * kernel launch really read and wrote in global memory, measured by patching
 * every global memory access of the kernel through the CUDA Sanitizer API.
 * The kernel ran to completion inside its launch call (the shim waited for it).
 *
 * Joined to its SS_REC_API launch record by `corr` (the CUPTI correlation id,
 * when known) or else by (tid, t_enter), which equal that record's fields.
 * tail = `nentries` x ss_kernel_access_entry, one per recorded parameter word
 * (ss_api_rec tail value `word`) that points into a known allocation.
 * Ranges are half-open byte ranges [lo, hi) of absolute addresses: the hull
 * of the bytes accessed inside that word's allocation (lo == hi == 0: none).
 * Words that point into the same allocation see the same ranges. */
enum ss_kaccess_flags {                 /* ss_kernel_access_rec.h.flags */
    SS_KACCESS_F_TRUNCATED  = 1u << 0,  /* more allocations than the tracker holds
                                           (SS_KACCESS_MAX_ALLOCS): the rest count
                                           as outside */
    SS_KACCESS_F_PARAMS_UNKNOWN = 1u << 1, /* the launch's parameters could not be
                                           read: every access counts as outside */
};
#define SS_KACCESS_MAX_ALLOCS 64
enum ss_kaccess_entry_flags {           /* ss_kernel_access_entry.flags */
    SS_KACCESS_E_READ   = 1u << 0,      /* read_lo/read_hi hold a range      */
    SS_KACCESS_E_WRITE  = 1u << 1,      /* write_lo/write_hi hold a range    */
    SS_KACCESS_E_ATOMIC = 1u << 2,      /* some access was an atomic (it is
                                           counted as both read and write)   */
};
typedef struct ss_kernel_access_entry {
    uint32_t word;              /* index of the value in the launch record's params */
    uint16_t offset;            /* its byte offset in the parameter buffer */
    uint16_t flags;             /* enum ss_kaccess_entry_flags */
    uint64_t value;             /* the parameter word (a pointer) */
    uint64_t alloc_lo, alloc_hi;   /* the allocation it points into */
    uint64_t read_lo, read_hi;
    uint64_t write_lo, write_hi;
} ss_kernel_access_entry;
typedef struct ss_kernel_access_rec {
    ss_rec_hdr h;               /* h.flags: enum ss_kaccess_flags */
    uint32_t corr;              /* correlation id of the launch call, 0 unknown */
    uint32_t tid;               /* thread of the launch call */
    uint64_t t_enter;           /* t_enter of the launch call (trace clock) */
    uint64_t func;              /* CUfunction that ran */
    uint32_t nentries;
    uint32_t nallocs;           /* distinct allocations tracked */
    uint64_t outside_accesses;  /* global accesses in no tracked allocation
                                   (module globals, pointers read from memory) */
} ss_kernel_access_rec;

/* SS_REC_HOST_SYNC: a release or acquire of a host synchronization object by a thread, recorded only where it can
 * matter for CUDA work (see docs/shim.md, "host thread ordering").  Releases carry a process-wide ascending
 * sequence number; an acquire names the latest release of that object it synchronized with. */
enum ss_hsync_kind { SS_HSYNC_RELEASE = 1, SS_HSYNC_ACQUIRE = 2 };        /* ss_rec_hdr.flags */
enum ss_hsync_what {
    SS_HSYNC_MUTEX = 1, SS_HSYNC_RWLOCK = 2, SS_HSYNC_SEM = 3, SS_HSYNC_BARRIER = 4,
    SS_HSYNC_THREAD_CREATE = 5, SS_HSYNC_THREAD_JOIN = 6,
    SS_HSYNC_OMP_FORK = 7, SS_HSYNC_OMP_JOIN = 8, SS_HSYNC_OMP_BARRIER = 9,
};
typedef struct ss_host_sync_rec {
    ss_rec_hdr h;
    uint64_t time;      /* trace clock */
    uint64_t object;    /* the object: mutex/sem/barrier address, or a per-thread-creation / per-team key */
    uint64_t seq;       /* release: its number (from 1, process-wide); acquire: the release it saw, 0 none */
    uint32_t tid;
    uint16_t what;      /* enum ss_hsync_what */
    uint16_t reserved;
} ss_host_sync_rec;

/* Keys that are not addresses (user-space addresses stay below 2^56): the top
 * byte says what the rest numbers.  SS_HSYNC_BUCKET stands for every object
 * the shim had no room to track separately (SS_NOTE_HOST_SYNC_FULL). */
#define SS_HSYNC_BUCKET          (0x80ull << 56)
#define SS_HSYNC_KEY_CREATE(n)   ((0x81ull << 56) | (n))   /* n: creation number   */
#define SS_HSYNC_KEY_JOIN(pt)    ((0x82ull << 56) | (pt))  /* pt: the pthread_t    */
#define SS_HSYNC_KEY_OMP_FORK(n) ((0x83ull << 56) | (n))   /* n: team number       */
#define SS_HSYNC_KEY_OMP_JOIN(n) ((0x84ull << 56) | (n))
#define SS_HSYNC_KEY_OMP_BAR(n)  ((0x85ull << 56) | (n))

/* SS_REC_JIT: CUPTI's JIT activity (CUpti_ActivityJit2): the driver compiled
 * PTX (or NVVM IR) for this GPU, or loaded/stored the result in its compute
 * cache.  g.start/g.end are the host-side times of that work (trace clock),
 * g.corr the correlation id of the API call that caused it, g.stream_id 0.
 * It runs on the host thread `tid`, often before the API call it belongs to
 * is even entered (cudart loads a module before its launch callback). */
enum ss_jit_entry { SS_JIT_ENTRY_PTX_TO_CUBIN = 1, SS_JIT_ENTRY_NVVM_IR_TO_PTX = 2 };
enum ss_jit_op { SS_JIT_OP_CACHE_LOAD = 1, SS_JIT_OP_CACHE_STORE = 2, SS_JIT_OP_COMPILE = 3 };
typedef struct ss_jit_rec {
    ss_gpu_common g;
    uint32_t entry_type;        /* enum ss_jit_entry */
    uint32_t op_type;           /* enum ss_jit_op */
    uint64_t cache_size;        /* bytes of the compute cache */
    uint32_t tid;               /* host thread (kernel tid), 0 unknown */
    uint32_t reserved;
} ss_jit_rec;

/* SS_REC_STREAM_NAME: the program gave a stream a name through NVTX
 * (nvtxNameCudaStreamA/W, nvtxNameCuStreamA/W; a cudaStream_t and its
 * CUstream are one handle).  The name holds for that handle from `time` on,
 * until the handle is named again or its stream destroyed. */
typedef struct ss_stream_name_rec {
    ss_rec_hdr h;
    uint64_t time;              /* trace clock */
    uint64_t handle;            /* cudaStream_t / CUstream; 0 = the default stream */
    uint32_t name_id;           /* SS_REC_STRING id (UTF-8) */
    uint32_t tid;
} ss_stream_name_rec;

/* SS_REC_GRAPH_NODE (minor version 5): what links a graph op's node id
 * (SS_GPU_F_GRAPH_NODE) to the API call whose parameters it executes.  From
 * CUPTI's resource callbacks, which fire on the thread, and inside the API
 * call, that acts on the node:
 *   SS_GNODE_CREATED     the node was created: by a call captured into a
 *                        graph (cudaLaunchKernel, cudaMemcpyAsync ... during
 *                        stream capture) or by cudaGraphAdd*Node.  That call
 *                        is the record of `tid` whose [t_enter, t_exit] holds
 *                        `time`; its parameters are the node's.
 *   SS_GNODE_CLONED      node_id was cloned from orig_node_id (graph
 *                        instantiation, cudaGraphClone): executable graphs
 *                        run clones, so an op's node id reaches the created
 *                        node through these.
 *   SS_GNODE_UPDATED     the node's parameters were set in its graph
 *                        (cudaGraphKernelNodeSetParams & co.),
 *   SS_GNODE_SET_PARAMS  or in an executable graph (exec_id;
 *                        cudaGraphExecKernelNodeSetParams & co.): from then
 *                        on the node runs with the parameters of that call.
 * Ids are CUPTI's (cuptiGetGraphNodeId, cuptiGetGraphId,
 * cuptiGetGraphExecId), 0 when unknown. */
enum ss_gnode_event {                   /* ss_graph_node_rec.h.flags */
    SS_GNODE_CREATED = 1, SS_GNODE_CLONED = 2, SS_GNODE_UPDATED = 3, SS_GNODE_SET_PARAMS = 4,
};
typedef struct ss_graph_node_rec {
    ss_rec_hdr h;
    uint64_t node_id;
    uint64_t orig_node_id;      /* CLONED: the node it is a clone of, else 0 */
    uint64_t time;              /* trace clock, inside the acting call */
    uint32_t tid;               /* thread of the acting call */
    uint32_t node_type;         /* CUgraphNodeType: 0 kernel, 1 memcpy, 2 memset, ... */
    uint32_t graph_id;          /* the graph holding node_id */
    uint32_t orig_graph_id;     /* CLONED: the graph holding orig_node_id */
    uint32_t exec_id;           /* SET_PARAMS: the executable graph */
    uint32_t reserved;
} ss_graph_node_rec;

/* SS_REC_SHIM_PAUSE (minor version 7): after CUDA call's real return, the
 * shim kept the thread from t0 (the call's t_exit) to t1 with work of its
 * own -- a native stack unwound into a library for the first time, module
 * images written, a buffer handed over -- for at least SS_SHIM_PAUSE_MIN_NS.
 * The program did not run then: a reader that measures the host time
 * between two calls (the blocking-copy idiom: a copy and its stream sync)
 * takes these out. */
#define SS_SHIM_PAUSE_MIN_NS 50000u
typedef struct ss_shim_pause_rec {
    ss_rec_hdr h;
    uint32_t tid;               /* gettid() of the thread held */
    uint32_t reserved;
    uint64_t t0, t1;            /* trace clock */
} ss_shim_pause_rec;

/* SS_REC_THREAD_CONTEXT (minor version 9): from its call at t on (that
 * call's t_enter), thread tid's CUDA calls ran in CUPTI's context
 * context_id, until the thread's next such record.  The shim writes one
 * before the first recorded call of a thread, and again before a recorded
 * call whose context differs from the thread's previous one (cuCtxSetCurrent,
 * cuCtxPushCurrent / PopCurrent, a green context made current, cudaSetDevice):
 * each context has a legacy default stream of its own, and cudaDeviceSynchronize
 * waits for the current context only.  Calls with no CUPTI callback (the
 * interposer without CUPTI) say nothing: a trace without these records has
 * the contexts of its GPU records only. */
typedef struct ss_thread_context_rec {
    ss_rec_hdr h;
    uint32_t tid;               /* gettid() of the thread */
    uint32_t context_id;        /* CUPTI's context id (contextUid), never 0 */
    uint64_t t;                 /* trace clock: t_enter of the first call in it */
} ss_thread_context_rec;

/* SS_REC_CAPTURE (minor version 6): sampled recording.  A trace starts
 * with everything recorded (as every trace before 1.6 is).  On a long run the
 * shim records the whole of a head (the first N hot calls of the process),
 * then recording windows (docs/sampling.md).  Between an SS_CAPTURE_OFF and
 * the next SS_CAPTURE_ON record of the same process:
 *   - hot calls (the classes of preload/cuda_api.tab whose work is on the
 *     GPU timeline or waits for it: launches, copies, memsets, event record /
 *     wait / query / sync / elapsed, stream and device sync / query, host
 *     functions, graph launches) leave no SS_REC_API record and no call
 *     stack.  CUPTI's kernel and synchronization activity kinds are disabled,
 *     so a GPU record of a kernel submitted just before the switch is not
 *     guaranteed (and, CUPTI being switched just after the state to OFF and
 *     just before it to ON, a GPU record of work submitted within a fraction
 *     of a millisecond of a switch may come without its API record).  Since
 *     2026-11-24 the memcpy, memset and CUDA-event kinds stay enabled
 *     (switching several kinds killed programs inside CUPTI): their records
 *     of calls made while OFF are in the trace, without API records.
 *     Readers leave out a GPU record that starts while OFF and whose
 *     correlation id no SS_REC_API record has (analyzer/model.c,
 *     leave_out_unrecorded_work);
 *   - structural calls (allocation and free, stream / event creation and
 *     destruction, stream capture, graph nodes, device settings), module
 *     loads, NVTX ranges and names, host-sync records and notes are recorded
 *     as always.
 * A call is recorded or not as a whole, by the state at its entry (one that
 * entered as the switch was made may have its t_enter a few microseconds
 * past an OFF record's time).  The shim
 * never switches to OFF while a stream capture it saw begin is still open.
 * The analyzer judges nothing that depends on what happened while off. */
enum ss_capture_state {                 /* ss_capture_rec.h.flags & SS_CAPTURE_STATE_MASK */
    SS_CAPTURE_OFF = 0, SS_CAPTURE_ON = 1,
};
#define SS_CAPTURE_STATE_MASK 0xffu
/* h.flags bit: some hot calls reach the shim only through CUPTI callbacks
 * (statically linked cudart, the driver API), which are off while OFF: such
 * calls made while OFF are not counted, and hot_calls is a lower bound. */
#define SS_CAPTURE_F_COUNT_PARTIAL 0x100u
enum ss_capture_reason {
    SS_CAPTURE_HEAD_DONE = 1,           /* OFF: the fully recorded head ended   */
    SS_CAPTURE_WINDOW_OPEN = 2,         /* ON: a recording window opened       */
    SS_CAPTURE_WINDOW_CLOSE = 3,        /* OFF: the window closed              */
    SS_CAPTURE_FORCED_ON = 4,           /* ON: e.g. a stream capture began     */
};
typedef struct ss_capture_rec {
    ss_rec_hdr h;
    uint64_t time;              /* trace clock of the switch */
    uint64_t hot_calls;         /* hot calls the process made until then, recorded or not */
    uint32_t reason;            /* enum ss_capture_reason */
    uint32_t window;            /* 0 for the head, then 1, 2, ... per window opened */
} ss_capture_rec;

/* CUgraphNodeType values used by the analyzer */
enum ss_gnode_type { SS_GNODE_KERNEL = 0, SS_GNODE_MEMCPY = 1, SS_GNODE_MEMSET = 2 };

/* Size checks: the layout is the format. */
#define SS_STATIC_ASSERT(c, m) _Static_assert(c, m)
SS_STATIC_ASSERT(sizeof(ss_file_header) == 256, "file header is 256 bytes");
SS_STATIC_ASSERT(sizeof(ss_block_header) == 16, "block header is 16 bytes");
SS_STATIC_ASSERT(sizeof(ss_api_rec) == 112, "api record layout");
SS_STATIC_ASSERT(sizeof(ss_gpu_common) == 40, "gpu common layout");
SS_STATIC_ASSERT(sizeof(ss_kernel_rec) % 8 == 0, "kernel record aligned");
SS_STATIC_ASSERT(sizeof(ss_memcpy_rec) % 8 == 0, "memcpy record aligned");
SS_STATIC_ASSERT(sizeof(ss_memset_rec) % 8 == 0, "memset record aligned");
SS_STATIC_ASSERT(sizeof(ss_jit_rec) % 8 == 0, "jit record aligned");
SS_STATIC_ASSERT(sizeof(ss_capture_rec) == 32, "capture record layout");
SS_STATIC_ASSERT(sizeof(ss_sync_rec) % 8 == 0, "sync record aligned");
SS_STATIC_ASSERT(sizeof(ss_stream_rec) % 8 == 0, "stream record aligned");
SS_STATIC_ASSERT(sizeof(ss_nvtx_rec) % 8 == 0, "nvtx record aligned");
SS_STATIC_ASSERT(sizeof(ss_stream_name_rec) == 32, "stream name record layout");
SS_STATIC_ASSERT(sizeof(ss_note_rec) % 8 == 0, "note record aligned");
SS_STATIC_ASSERT(sizeof(ss_module_rec) % 8 == 0, "module record aligned");
SS_STATIC_ASSERT(sizeof(ss_host_sync_rec) == 40, "host sync record layout");
SS_STATIC_ASSERT(sizeof(ss_cubin_rec) == 32, "cubin record layout");
SS_STATIC_ASSERT(sizeof(ss_kernel_access_rec) == 48, "kernel access record layout");
SS_STATIC_ASSERT(sizeof(ss_kernel_access_entry) == 64, "kernel access entry layout");
SS_STATIC_ASSERT(sizeof(ss_graph_node_rec) == 56, "graph node record layout");
SS_STATIC_ASSERT(sizeof(ss_thread_context_rec) == 24, "thread context record layout");
SS_STATIC_ASSERT(sizeof(ss_kernel_rec) == 80 && sizeof(ss_memcpy_rec) == 64 && sizeof(ss_memset_rec) == 64,
                 "graph node id tail is 8-aligned after the GPU records");

/* Round a record size up to the 8-byte alignment of the format. */
#define SS_REC_ALIGN(n) (((n) + 7u) & ~(uint32_t)7u)

#endif /* SYNCSIGHT_TRACE_FORMAT_H */
