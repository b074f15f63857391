/*
 * The producers of the shim (preload/LAYERS): everything that turns what the
 * program does into records, and what lifecycle.c calls to start them, reset
 * them in a fork() child and finish them at exit.
 *
 *   api_support.c + generated    CUDA runtime calls: interposed wrappers and
 *     $(BUILD)/gen/ss_api_*.c    the CUPTI runtime-callback path (api_support.h)
 *   cupti.c                      CUPTI: the subscription, GPU activity
 *   nvtx.c                       NVTX: our own ranges, the program's ranges
 *   callsite.c, pystack.c        native and Python call stacks, module map
 *   cubin.c                      device code of loaded modules
 *   hostsync.c                   host thread ordering (locks, OpenMP)
 *   exact_memory.c               the CUDA Sanitizer API (exact memory mode)
 *   selftest.c                   synthetic records for the CPU tests
 *   sampling.c                   sampled recording: head, windows, switches
 *
 * They write through the layers below: record.h (strings, notes), buffers.h
 * (records), writer.h (records too large for a buffer), base.h.
 */
#ifndef SYNCSIGHT_PRODUCERS_H
#define SYNCSIGHT_PRODUCERS_H

#include <stddef.h>
#include <stdint.h>
#include "base.h"
#include "buffers.h"
#include "record.h"
#include "syncsight/trace_format.h"

/* ---- CUDA runtime calls (api_support.c, generated ss_api_*.c) ------------ */

/* Called once from the shim's initialization (constructor or
 * InitializeInjection), before CUPTI is subscribed: resolve the real
 * cudart entry points lazily, set up per-function caches. */
SS_HIDDEN void ss_api_init(void);

/* The CUPTI runtime-API callback, dispatched here by cupti.c for
 * CUPTI_CB_DOMAIN_RUNTIME_API.  `cbdata` is a const CUpti_CallbackData *.
 * For calls the interposer is already recording on this thread it only
 * stores the correlation id; otherwise it records the call itself. */
SS_HIDDEN void ss_api_on_runtime_callback(uint32_t cbid, const void *cbdata);

/* The CUPTI driver-API callback (CUPTI_CB_DOMAIN_DRIVER_API), enabled only for
 * the cbids ss_api_wanted_driver_cbids() lists (the driver rows of
 * cuda_api.tab).  A driver call made outside every runtime call is recorded
 * as itself (Triton, CuPy, JAX); inside a runtime launch being recorded on
 * this thread, a driver launch gives it its kernel parameters when the
 * runtime level cannot (stubs registered with another, static, cudart);
 * any other nested driver call is part of its runtime call and ignored. */
SS_HIDDEN void ss_api_on_driver_callback(uint32_t cbid, const void *cbdata);
SS_HIDDEN size_t ss_api_wanted_driver_cbids(const uint32_t **ids);

/* The runtime cbids the call recording wants callbacks for (cupti.c enables
 * just these with cuptiEnableCallback). Returns the count, fills *ids. */
SS_HIDDEN size_t ss_api_wanted_cbids(const uint32_t **ids);

/* The runtime (driver = 0) or driver (1) cbids of the table's hot rows: the
 * callbacks sampled recording disables while OFF. */
SS_HIDDEN size_t ss_api_hot_cbids_of(int driver, const uint32_t **ids);

/* After fork() in the child: reset the calling thread's call state and the
 * names already written. */
SS_HIDDEN void ss_api_atfork_child(void);

/* ---- sampled recording (sampling.c, SS_REC_CAPTURE) ----------------------
 * The state itself is base.h's ss_hot_state; the hot path reads it through
 * ss_api_hot_admit (api_support.h). */

/* From initialization (and a fork child): the head starts (SYNCSIGHT_SAMPLE
 * set), or the state is ON for good (off). */
SS_HIDDEN void ss_sampling_init(void);
/* The hot path while the head lasts: 1 when this hot call is one of the
 * first HEAD_CALLS (record it); the call that is not ends the head. */
SS_HIDDEN int  ss_sampling_head_admit(void);
/* A stream capture began (1) or ended (0) successfully: never OFF while one
 * is open; one that begins while OFF switches ON (FORCED_ON) at once. */
SS_HIDDEN void ss_sampling_capture(int begin);
/* The controller (the writer thread): make the switches that are due, keep
 * CUPTI in step; returns the trace-clock time of the next planned switch,
 * 0 when none is planned. */
SS_HIDDEN uint64_t ss_sampling_tick(void);
/* lifecycle.c's hook: wake the controller at once (a switch was made on the
 * hot path and CUPTI must follow). */
SS_HIDDEN void ss_sampling_set_wake(void (*wake)(void));
/* The META "sampling" value: "HEAD,WINDOW_MS,PERIOD_MS" or "off". */
SS_HIDDEN void ss_sampling_describe(char *buf, size_t len);
SS_HIDDEN void ss_sampling_atfork_child(void);
/* Incremented at every switch to OFF: a CUPTI-path call entered in an
 * earlier epoch may never see its exit callback (api_support.h). */
SS_HIDDEN extern uint32_t ss_sampling_epoch_n;
static inline uint32_t ss_sampling_epoch(void)
{
    return __atomic_load_n(&ss_sampling_epoch_n, __ATOMIC_RELAXED);
}

/* ---- host thread ordering (hostsync.c, SS_REC_HOST_SYNC) ----------------- */

/* From initialization: read SYNCSIGHT_HOST_SYNC; on only when the shim's
 * pthread/semaphore/libgomp wrappers are the ones the program calls. */
SS_HIDDEN void ss_hostsync_init(void);
/* Around the emission of every recorded CUDA call's record (ss_api_emit):
 * begin writes the thread's pending acquires and counts the call as news
 * the thread may have to publish; until end, the wrappers record nothing on
 * this thread (a record is open). */
SS_HIDDEN void ss_hostsync_api_begin(void);
SS_HIDDEN void ss_hostsync_api_end(void);

/* ---- call sites (callsite.c, pystack.c) ---------------------------------- */

/* Read SYNCSIGHT_STACKS, record the modules loaded now (SS_REC_MODULE) and
 * arrange to record ones loaded later. */
SS_HIDDEN void ss_callsite_init(void);

/* What call-site capture a record wants (ss_callsite_capture's `want`). */
enum ss_stack_want {
    SS_STACK_NONE = 0,      /* SYNCSIGHT_STACKS=1: Python stack only (if any) */
    SS_STACK_FULL = 1,      /* native + Python stack, every call */
    SS_STACK_SAMPLED = 2,   /* kernel launch off the legacy stream: native stack
                               sampled per launched function (callsite.c) */
};

/* Fill r->stack_id (native) and r->pystack_id (Python: read straight from
 * the interpreter's memory, with or without the GIL; see pystack.c) as
 * ss_cfg.stacks and `want` (enum ss_stack_want) say:
 *   SYNCSIGHT_STACKS=1: the Python stack for every call of a Python thread;
 *     the native stack for SS_STACK_FULL, and for SS_STACK_SAMPLED through a
 *     per-thread cache keyed by (r->func, `caller`): the first 4 launches of
 *     a key and then 1 in 256 are unwound, the others reuse the cached id;
 *   SYNCSIGHT_STACKS=2: both stacks, fully, for every call.
 * ss_callsite_capture_launch also takes `caller`, the interposer wrapper's
 * return address (0 on the CUPTI path), part of the sampling key.
 * Called on the recording thread while the API record is still being
 * assembled in a local struct, i.e. before ss_rec_begin() for it: it may
 * itself write SS_REC_STACK / SS_REC_PYSTACK / SS_REC_STRING records.
 * (ss_api_emit builds each call's record on its own stack and copies it into
 * the buffer at the call's exit, so no record is open across the real call.) */
SS_HIDDEN void ss_callsite_capture(ss_api_rec *r, int want);
SS_HIDDEN void ss_callsite_capture_launch(ss_api_rec *r, int want, uintptr_t caller);

SS_HIDDEN void ss_callsite_atfork_child(void);

/* ---- NVTX (nvtx.c) --------------------------------------------------------
 * Emission, what makes syncsight visible in Nsight Systems: a "syncsight"
 * NVTX domain.  The call recording calls begin at the entry of every
 * blocking or synchronizing call and end at its exit (always paired, on the
 * same thread).  `category` is an enum ss_nvtx_category; `blocked_ns` is how
 * long the call kept the host; `gpu_busy_known` is 1 when the caller knows
 * device work was in flight when the call began (so a long block is a wait
 * on the GPU), 0 when it does not know.  All three are no-ops under
 * SYNCSIGHT_NVTX=0. */
enum ss_nvtx_category {
    SS_NVTX_CAT_DEVICE_SYNC = 1, /* cudaDeviceSynchronize, cudaThreadSynchronize   */
    SS_NVTX_CAT_STREAM_SYNC = 2, /* cudaStreamSynchronize / Query                 */
    SS_NVTX_CAT_EVENT_SYNC  = 3, /* cudaEventSynchronize / Query, StreamWaitEvent  */
    SS_NVTX_CAT_MAY_BLOCK   = 4, /* may synchronize implicitly: cudaFree, sync copies */
    SS_NVTX_CAT_COPY        = 5, /* asynchronous copies and memsets                */
    SS_NVTX_CAT_OTHER       = 6,
};
SS_HIDDEN void ss_nvtx_begin_call(uint32_t cbid, const char *api_name, int category);
SS_HIDDEN void ss_nvtx_end_call(uint32_t cbid, const char *api_name, uint64_t blocked_ns, int gpu_busy_known);
SS_HIDDEN void ss_nvtx_name_stream(void *stream, const char *name);

/* Capture: the CUPTI NVTX-domain callback (the program's own ranges). */
SS_HIDDEN void ss_nvtx_on_callback(uint32_t cbid, const void *cbdata);
/* At exit: write the ranges still open as UNCLOSED. */
SS_HIDDEN void ss_nvtx_close_open_ranges(void);

/* ---- CUDA graphs (graphs.c) ---------------------------------------------
 * Graph nodes' ids and origins (SS_REC_GRAPH_NODE), from CUPTI's resource
 * callbacks, and the node id of each graph op's activity record.  start
 * resolves CUPTI's id functions from the loaded library (none: no graph
 * callbacks are wanted); cupti.c enables the wanted resource cbids and
 * dispatches them to on_resource (a const CUpti_ResourceData *). */
SS_HIDDEN void   ss_graphs_start(void *cupti_lib);
SS_HIDDEN size_t ss_graphs_wanted_cbids(const uint32_t **ids);
SS_HIDDEN void   ss_graphs_on_resource(uint32_t cbid, const void *resource_data);
/* ss_rec_begin for a GPU activity record: with the SS_GPU_F_GRAPH_NODE tail
 * when graph_node_id is not 0. */
SS_HIDDEN void  *ss_graphs_gpu_rec_begin(uint16_t type, uint32_t fixed_size, uint64_t graph_node_id);
/* ---- CUPTI (cupti.c) ----------------------------------------------------- */

/* What a start-up found that the trace must say once it exists: a NOTE in
 * its first block, and one stderr line at the first record that creates the
 * file when `print_on_first_record` (a program that never uses CUDA hears
 * nothing). */
typedef struct ss_startup_note {
    uint32_t code;                  /* SS_NOTE_*; 0: nothing to say */
    int      print_on_first_record;
    char     msg[320];
} ss_startup_note;

/* Load libcupti, subscribe, enable the callbacks and activity kinds.  What
 * went wrong (missing, taken by another tool) goes into *note; a taken
 * subscription is also printed at once (another profiler means CUDA is in
 * play).  Recording then goes on with what the interposer sees. */
SS_HIDDEN void ss_cupti_start(ss_startup_note *note);
SS_HIDDEN int  ss_cupti_active(void);           /* subscribed and activity on */
SS_HIDDEN void ss_cupti_flush(int forced);      /* hand over completed activity buffers */
SS_HIDDEN uint64_t ss_cupti_timestamp(void);    /* 0 when CUPTI is not loaded */
SS_HIDDEN uint64_t ss_cupti_dropped(void);
SS_HIDDEN const char *ss_cupti_status(void);    /* META "cupti" value */
/* Sampled recording: switch CUPTI's activity kinds of hot work (the
 * CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET, SYNCHRONIZATION and CUDA_EVENT
 * kinds SYNCSIGHT_ACTIVITY enabled) and the runtime and driver callbacks of
 * hot calls off (0) or back on (1); structural, resource and NVTX callbacks
 * and the other kinds stay as they are.  Called by the controller only. */
SS_HIDDEN void ss_cupti_set_hot(int on);

/* ---- module images (cubin.c, SS_REC_CUBIN) ------------------------------- */

SS_HIDDEN void ss_cubin_on_module_loaded(const void *image, size_t size, uint32_t module_id);
/* The end-of-trace SS_NOTE_CUBIN_SKIPPED: its message, *value = images not
 * recorded; NULL when none were skipped or the note was already taken.
 * Async-signal-safe. */
SS_HIDDEN const char *ss_cubin_take_note(uint64_t *value);
/* Once: the SS_NOTE_CUBIN_COST message (and *ns), NULL when no module was
 * loaded.  Async-signal-safe. */
SS_HIDDEN const char *ss_cubin_take_cost(uint64_t *ns);
SS_HIDDEN void ss_cubin_atfork_child(void);

/* ---- exact memory mode (exact_memory.c) ----------------------------------
 * SYNCSIGHT_EXACT_MEMORY=1 (docs/shim.md): subscribe the CUDA Sanitizer API,
 * patch every module, record SS_REC_KERNEL_ACCESS per launch.  Returns 1
 * when on: CUPTI must then stay unsubscribed (the two share one callback
 * slot) and the Sanitizer's runtime callbacks stand in for CUPTI's; 0 (with
 * one stderr line saying why) when unavailable. */
SS_HIDDEN int ss_exact_memory_start(void);

/* ---- synthetic records (selftest.c) ---------------------------------------
 * SYNCSIGHT_SELFTEST=<n>: <n> synthetic API records plus one string, one
 * kernel and one NVTX record through the real buffer and writer path, so the
 * CPU tests can exercise file creation, crashes, fork, exit and write
 * failures without a GPU.  Nothing when unset. */
SS_HIDDEN void ss_selftest_run(void);

#endif /* SYNCSIGHT_PRODUCERS_H */
