/*
 * The bottom layer of the shim (preload/LAYERS): the trace clock, thread ids,
 * the settings read from the environment and the process-wide recording
 * switch.  Knows nothing of records, files or CUDA.
 *
 * Everything in the shim is hidden from the program (-fvisibility=hidden);
 * only the interposed entry points and InitializeInjection are exported.
 */
#ifndef SYNCSIGHT_BASE_H
#define SYNCSIGHT_BASE_H

#include <stddef.h>
#include <stdint.h>

#define SS_HIDDEN __attribute__((visibility("hidden")))
#define SS_EXPORT __attribute__((visibility("default")))

/* Trace clock (CLOCK_MONOTONIC, ns): the same clock CUPTI is told to use. */
SS_HIDDEN uint64_t ss_now(void);

/* gettid() of the calling thread, cached in TLS. */
SS_HIDDEN uint32_t ss_tid(void);
SS_HIDDEN void     ss_tid_reset(void);          /* fork child: a new tid */

/* Settings read once from the environment (documented in docs/shim.md). */
typedef struct ss_settings {
    int      disabled;       /* SYNCSIGHT_DISABLE=1: no recording, no handlers, no file */
    int      cupti;          /* SYNCSIGHT_CUPTI: 0 = never subscribe */
    int      exact_memory;   /* SYNCSIGHT_EXACT_MEMORY: 1 = the Sanitizer API instead of CUPTI */
    int      nvtx_emit;      /* SYNCSIGHT_NVTX: 0 = emit no NVTX ranges of our own */
    int      stacks;         /* SYNCSIGHT_STACKS: 0 off, 1 default policy (callsite.c), 2 every call fully */
    uint32_t flush_ms;       /* SYNCSIGHT_FLUSH_MS, default 200 */
    uint32_t buffer_mb;      /* SYNCSIGHT_BUFFER_MB: the record buffer pool, 4..4096 */
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

/* Fill ss_cfg from the environment (once, at initialization). */
SS_HIDDEN void ss_settings_read(void);

/* An integer environment variable; `def` when unset, empty or not a number. */
SS_HIDDEN int ss_env_int(const char *name, int def);

/* The recording switch, read by the hot path with a relaxed load: on from
 * initialization (unless disabled), off for good once the output failed. */
SS_HIDDEN extern int ss_rec_enabled;
SS_HIDDEN int  ss_recording(void);
SS_HIDDEN void ss_recording_start(void);
SS_HIDDEN void ss_recording_stop(void);

#endif /* SYNCSIGHT_BASE_H */
