/*
 * Internal interfaces between the parts of the shim (build/libsyncsight.so).
 *
 *   runtime.c   (+ buffers, writer thread, fork/signal/exit handling, file
 *               naming, CUPTI loading/subscription, activity, NVTX)
 *   api_*.c     the recording of CUDA runtime calls: wrappers generated from
 *               the table preload/cuda_api.tab and the CUPTI runtime-callback
 *               path for statically linked cudart
 *   callsite.c  native and Python call stacks, module map
 *
 * Everything here is hidden from the program (-fvisibility=hidden); only the
 * interposed CUDA entry points and InitializeInjection are exported.
 */
#ifndef SYNCSIGHT_SHIM_H
#define SYNCSIGHT_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include "syncsight/trace_format.h"

#define SS_HIDDEN __attribute__((visibility("hidden")))

/* ---- provided by runtime.c ---------------------------------------------- */

/* Trace clock (CLOCK_MONOTONIC, ns): the same clock CUPTI is told to use. */
SS_HIDDEN uint64_t ss_now(void);

/* gettid() of the calling thread, cached in TLS. */
SS_HIDDEN uint32_t ss_tid(void);

/* Reserve a record in the calling thread's buffer.  Returns a zeroed record of
 * fixed_size + tail_size bytes (rounded up to 8) with its ss_rec_hdr filled,
 * or NULL when recording is off or memory is exhausted (the loss is counted
 * and reported as SS_NOTE_DROPPED_API).  No lock, no allocation, no syscall
 * on the common path.  The record becomes visible to the writer thread only at
 * ss_rec_commit(); at most one record per thread is open at a time, and the
 * caller must not call back into anything that records before committing. */
SS_HIDDEN void *ss_rec_begin(uint16_t type, uint32_t fixed_size, uint32_t tail_size);
SS_HIDDEN void  ss_rec_commit(void *rec);

/* Intern a string for this trace: returns its SS_REC_STRING id (>= 1),
 * writing the STRING record the first time the text is seen. Thread-safe. */
SS_HIDDEN uint32_t ss_string_id(const char *text, size_t len);

/* Write an SS_REC_NOTE (and, when `stderr_once`, print the message once to
 * stderr prefixed "syncsight: "). */
SS_HIDDEN void ss_note(uint32_t code, uint64_t value, const char *msg, int stderr_once);

/* Is recording on for this process (not disabled, output usable)? */
SS_HIDDEN int ss_recording(void);

/* Settings read once from the environment (documented in docs/shim.md). */
typedef struct ss_settings {
    int      cupti;          /* SYNCSIGHT_CUPTI: 0 = never subscribe */
    int      nvtx_emit;      /* SYNCSIGHT_NVTX: 0 = emit no NVTX ranges of our own */
    int      stacks;         /* SYNCSIGHT_STACKS: 0 off, 1 default policy (callsite.c), 2 every call fully */
    uint32_t flush_ms;       /* SYNCSIGHT_FLUSH_MS, default 200 */
    uint32_t activity_mask;  /* SYNCSIGHT_ACTIVITY: bit per SS_ACT_* */
    uint32_t cubin_mb;       /* SYNCSIGHT_CUBIN_MB: module images per process, MiB; 0 = none */
    uint32_t cubin_image_mb; /* SYNCSIGHT_CUBIN_IMAGE_MB: largest image recorded, MiB */
} ss_settings;
SS_HIDDEN extern ss_settings ss_cfg;

enum ss_activity_bits {
    SS_ACT_KERNEL = 1u << 0, SS_ACT_MEMCPY = 1u << 1, SS_ACT_MEMSET = 1u << 2,
    SS_ACT_SYNC   = 1u << 3, SS_ACT_EVENT  = 1u << 4, SS_ACT_STREAM = 1u << 5,
    SS_ACT_CONTEXT = 1u << 6, SS_ACT_JIT = 1u << 7,
};

/* ---- provided by the API recording part (api_*.c) ------------------------ */

/* Called once from the shim's initialization (constructor or
 * InitializeInjection), before CUPTI is subscribed: resolve the real
 * cudart entry points lazily, set up per-function caches. */
SS_HIDDEN void ss_api_init(void);

/* The CUPTI runtime-API callback, dispatched here by runtime.c for
 * CUPTI_CB_DOMAIN_RUNTIME_API.  `cbdata` is a const CUpti_CallbackData *.
 * For calls the interposer is already recording on this thread it only
 * stores the correlation id; otherwise it records the call itself. */
SS_HIDDEN void ss_api_on_runtime_callback(uint32_t cbid, const void *cbdata);

/* The CUPTI driver-API callback (CUPTI_CB_DOMAIN_DRIVER_API), enabled only for
 * the kernel-launch cbids ss_api_wanted_driver_cbids() lists: it gives the
 * runtime launch being recorded on this thread its kernel parameters when the
 * runtime level cannot (stubs registered with another, static, cudart). */
SS_HIDDEN void ss_api_on_driver_callback(uint32_t cbid, const void *cbdata);
SS_HIDDEN size_t ss_api_wanted_driver_cbids(const uint32_t **ids);

/* The runtime cbids the API part wants callbacks for (runtime.c enables just
 * these with cuptiEnableCallback). Returns the count, fills *ids. */
SS_HIDDEN size_t ss_api_wanted_cbids(const uint32_t **ids);

/* After fork() in the child: reset per-thread state of the API part. */
SS_HIDDEN void ss_api_atfork_child(void);

/* ---- provided by hostsync.c: host thread ordering (SS_REC_HOST_SYNC) ----- */

/* From initialization: read SYNCSIGHT_HOST_SYNC; on only when the shim's
 * pthread/semaphore/libgomp wrappers are the ones the program calls. */
SS_HIDDEN void ss_hostsync_init(void);
/* Around the emission of every recorded CUDA call's record (ss_api_emit):
 * begin writes the thread's pending acquires and counts the call as news
 * the thread may have to publish; until end, the wrappers record nothing on
 * this thread (a record is open). */
SS_HIDDEN void ss_hostsync_api_begin(void);
SS_HIDDEN void ss_hostsync_api_end(void);

/* ---- provided by callsite.c ---------------------------------------------- */

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
 * (The API part builds each call's record on its own stack and copies it into
 * the buffer at the call's exit, so no record is open across the real call.) */
SS_HIDDEN void ss_callsite_capture(ss_api_rec *r, int want);
SS_HIDDEN void ss_callsite_capture_launch(ss_api_rec *r, int want, uintptr_t caller);

SS_HIDDEN void ss_callsite_atfork_child(void);


/* ---- provided by nvtx.c (runtime part): our own NVTX ranges -------------
 * What makes syncsight visible in Nsight Systems: a "syncsight" NVTX domain.
 * The API part calls begin at the entry of every blocking or synchronizing
 * call and end at its exit (always paired, on the same thread).  `category`
 * is an enum ss_nvtx_category; `blocked_ns` is how long the call kept the
 * host; `gpu_busy_known` is 1 when the API part knows device work was in
 * flight when the call began (so a long block is a wait on the GPU), 0 when
 * it does not know.  All three are no-ops under SYNCSIGHT_NVTX=0. */
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

/* ---- runtime-internal: between runtime.c, buffers.c, output.c, cupti.c,
 * nvtx.c (nothing outside the runtime part needs these) ------------------- */

/* Global on/off switch read by the hot path (relaxed load). */
SS_HIDDEN extern int ss_rec_enabled;
/* Set once the trace file exists.  Until then records pile up in the
 * buffers, and only a record that shows CUDA use (ss_rec_creates_file)
 * creates the file: modules, strings and stacks that other parts record at
 * startup must not leave a trace behind a program that never uses CUDA. */
SS_HIDDEN extern int ss_output_opened;
static inline int ss_rec_creates_file(uint16_t type)
{
    return !(type == SS_REC_MODULE || type == SS_REC_STRING || type == SS_REC_STACK ||
             type == SS_REC_PYSTACK || type == SS_REC_THREAD || type == SS_REC_API_NAME ||
             type == SS_REC_META);
}
SS_HIDDEN void ss_recording_stop(void);          /* output failed: stop recording */

/* buffers.c */
SS_HIDDEN void     ss_buffers_flush(int from_signal);   /* caller holds the output lock */
SS_HIDDEN void     ss_buffers_atfork_child(void);
SS_HIDDEN uint64_t ss_buffers_dropped(void);
SS_HIDDEN void     ss_buffers_set_total_mb(uint32_t mb);

/* output.c */
SS_HIDDEN int  ss_output_start(void);       /* lazily open the trace file; 0 or -1 */
SS_HIDDEN int  ss_output_is_open(void);
SS_HIDDEN int  ss_output_write_block(const void *payload, uint32_t bytes, uint32_t count);
/* A record too large for the per-thread buffers (SS_REC_CUBIN), written as a
 * block of its own: `fixed` is its fixed part with the header filled (size =
 * fixed + tail rounded up to 8), `tail` stays where the caller has it.  Opens
 * the file if needed and takes the output lock (the caller must not hold it).
 * 0, or -1 when nothing was written. */
SS_HIDDEN int  ss_output_write_big_record(const void *fixed, uint32_t fixed_bytes, const void *tail,
                                          uint32_t tail_bytes);
SS_HIDDEN void ss_output_lock(void);
SS_HIDDEN int  ss_output_trylock_signal(void);
SS_HIDDEN void ss_output_unlock(void);
SS_HIDDEN void ss_output_init(void);        /* from init: on_exit, atfork */
SS_HIDDEN void ss_output_set_deferred_note(uint32_t code, const char *meta_value,
                                           const char *msg, int print_on_first_record);

/* cupti.c */
SS_HIDDEN void ss_cupti_start(void);
SS_HIDDEN int  ss_cupti_active(void);           /* subscribed and activity on */
SS_HIDDEN void ss_cupti_flush(int forced);
SS_HIDDEN uint64_t ss_cupti_timestamp(void);    /* 0 when CUPTI is not loaded */
SS_HIDDEN uint64_t ss_cupti_dropped(void);
SS_HIDDEN const char *ss_cupti_status(void);    /* META "cupti" value */

/* cubin.c: the device code of loaded modules (SS_REC_CUBIN) */
SS_HIDDEN void ss_cubin_on_module_loaded(const void *image, size_t size, uint32_t module_id);
/* The end-of-trace SS_NOTE_CUBIN_SKIPPED: its message, *value = images not
 * recorded; NULL when none were skipped or the note was already taken.
 * Async-signal-safe. */
SS_HIDDEN const char *ss_cubin_take_note(uint64_t *value);
SS_HIDDEN void ss_cubin_atfork_child(void);

/* exact_memory.c: SYNCSIGHT_EXACT_MEMORY=1 (docs/shim.md): subscribe the
 * CUDA Sanitizer API, patch every module, record SS_REC_KERNEL_ACCESS per
 * launch.  Returns 1 when on: CUPTI must then stay unsubscribed (the two
 * share one callback slot) and the Sanitizer's runtime callbacks stand in
 * for CUPTI's; 0 (with one stderr line saying why) when unavailable. */
SS_HIDDEN int ss_exact_memory_start(void);

/* nvtx.c */
SS_HIDDEN void ss_nvtx_on_callback(uint32_t cbid, const void *cbdata); /* CUPTI NVTX domain */
SS_HIDDEN void ss_nvtx_close_open_ranges(void); /* at exit: write UNCLOSED ranges */

/* runtime.c */
SS_HIDDEN void ss_strings_reset(void);          /* fork child: ids restart per file */
SS_HIDDEN void ss_tid_reset(void);
SS_HIDDEN void ss_recording_reset_after_fork(void);
SS_HIDDEN void ss_selftest_after_fork(void);    /* SYNCSIGHT_SELFTEST only */

#endif /* SYNCSIGHT_SHIM_H */
