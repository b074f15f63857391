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

/* Bumped by the shim's slow paths on this thread (a native stack unwound,
 * a record buffer swapped): where a recorded call may have held the thread
 * long enough to say so (SS_REC_SHIM_PAUSE, api_support.c) without reading
 * the clock after every call. */
SS_HIDDEN extern __thread unsigned ss_t_slow_work;

/* gettid() of the calling thread, cached in TLS. */
SS_HIDDEN uint32_t ss_tid(void);
SS_HIDDEN void     ss_tid_reset(void);          /* fork child: a new tid */

/* Which loaded object holds `addr`: 1 and its file name ("" for the main
 * program) and lowest mapped address, or 0 (no object: JIT code, heap).
 * glibc's _dl_find_object (2.35+: lock-free, O(log objects)) where there is
 * one, else dladdr, which also scans the object's dynamic symbols for the
 * nearest one: 540 us a call in a library of 100 000 symbols against
 * 0.01 us (bench/object_lookup_cost.sh). */
SS_HIDDEN int ss_object_of(const void *addr, const char **name, const void **start);

/* Settings read once from the environment (documented in docs/shim.md). */
/* SYNCSIGHT_SWITCH_KINDS: the memcpy, memset and (where enabled) CUDA-event
 * activity kinds under sampled recording (docs/shim.md) */
enum { SS_SWITCH_KERNEL_ONLY, SS_SWITCH_HOT };

typedef struct ss_settings {
    int      disabled;       /* SYNCSIGHT_DISABLE=1: no recording, no handlers, no file */
    int      cupti;          /* SYNCSIGHT_CUPTI: 0 = never subscribe */
    int      exact_memory;   /* SYNCSIGHT_EXACT_MEMORY: 1 = the Sanitizer API instead of CUPTI */
    int      nvtx_emit;      /* SYNCSIGHT_NVTX: 0 = emit no NVTX ranges of our own */
    int      stacks;         /* SYNCSIGHT_STACKS: 0 off, 1 default policy (callsite.c), 2 every call fully */
    uint32_t flush_ms;       /* SYNCSIGHT_FLUSH_MS, default 200 */
    uint32_t buffer_mb;      /* SYNCSIGHT_BUFFER_MB: the record buffer pool, 4..4096 */
    uint32_t activity_mask;  /* SYNCSIGHT_ACTIVITY: bit per SS_ACT_* */
    int switch_kinds;        /* SYNCSIGHT_SWITCH_KINDS: what sampling does to the memcpy, memset and
                              * event activity kinds (SS_SWITCH_*; preload/cupti.c) */
    uint32_t cubin_mb;       /* SYNCSIGHT_CUBIN_MB: module images per process, MiB; 0 = none */
    uint32_t cubin_image_mb; /* SYNCSIGHT_CUBIN_IMAGE_MB: largest image recorded, MiB */
    /* SYNCSIGHT_SAMPLE (docs/sampling.md): sampled recording of the hot
     * calls, or off (sample_head == 0: everything recorded, as before 1.6). */
    int      sample;         /* 1: HEAD_CALLS,WINDOW_MS,PERIOD_MS,SPREAD below; 0: off */
    uint64_t sample_head;    /* hot calls recorded in full from the start */
    uint32_t sample_window_ms; /* then a recording window this long ... */
    uint32_t sample_period_ms; /* ... opening once per this period */
    uint32_t sample_spread;  /* ... which doubles after each this many windows (0: never) */
} ss_settings;

/* The sampling defaults, the one place to tune them: record the first
 * 3 000 hot calls in full, then a 100 ms window every 2000 ms (what the
 * measurements behind them are: docs/sampling.md; the head was 10 000 until
 * a PyTorch loop's head steps were measured to be most of its cost). */
#define SS_SAMPLE_DEFAULT_HEAD      3000u
#define SS_SAMPLE_DEFAULT_WINDOW_MS 100u
#define SS_SAMPLE_DEFAULT_PERIOD_MS 2000u
/* The period doubles after every SPREAD windows, up to this many times the
 * first: each switch of CUPTI's kernel activity carries a small risk of
 * killing the program inside CUPTI (docs/sampling.md, "CUPTI and the
 * switches"), so a run's switches grow with the logarithm of its length
 * (224 windows in the first 2.3 hours at the defaults), then 28 an
 * hour, instead of 1 800 an hour. */
#define SS_SAMPLE_DEFAULT_SPREAD    32u
#define SS_SAMPLE_MAX_PERIOD_FACTOR 64u
SS_HIDDEN extern ss_settings ss_cfg;

enum ss_activity_bits {
    SS_ACT_KERNEL = 1u << 0, SS_ACT_MEMCPY = 1u << 1, SS_ACT_MEMSET = 1u << 2,
    SS_ACT_SYNC   = 1u << 3, SS_ACT_EVENT  = 1u << 4, SS_ACT_STREAM = 1u << 5,
    SS_ACT_CONTEXT = 1u << 6, SS_ACT_JIT = 1u << 7,
};
/* The kinds of `mask` by their SYNCSIGHT_ACTIVITY names, ", "-separated
 * ("none" for 0), into out[len]. */
SS_HIDDEN void ss_activity_names(uint32_t mask, char *out, size_t len);

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

/* The hot-path switch of sampled recording (docs/sampling.md): whether a
 * hot call (a launch, copy, memset, event or stream operation, sync) is
 * recorded.  ON: recorded (always so with SYNCSIGHT_SAMPLE=off); OFF: passed
 * straight through, only counted; HEAD: recorded while the head lasts,
 * admitted one by one (sampling.c).  Read on the hot path with one relaxed
 * load; written by sampling.c only. */
enum ss_hot_state { SS_HOT_OFF = 0, SS_HOT_ON = 1, SS_HOT_HEAD = 2 };
SS_HIDDEN extern int ss_hot_state;
static inline int ss_hot_state_now(void)
{
    return __atomic_load_n(&ss_hot_state, __ATOMIC_RELAXED);
}

/* Hot calls counted per thread: each thread owns a counter slot that only it
 * writes (a plain increment, no atomic read-modify-write); the controller
 * sums them with relaxed loads.  ss_hot_slot_claim gives the calling thread
 * its slot (once), *shared = 1 when the slots ran out: the slot is then one
 * that every such thread adds to atomically. */
SS_HIDDEN uint64_t *ss_hot_slot_claim(int *shared);
SS_HIDDEN uint64_t  ss_hot_calls(void);          /* the process's hot calls so far */
SS_HIDDEN void      ss_hot_atfork_child(void);   /* the child counts from 0 */

/* Hot calls that reach the shim only through CUPTI callbacks (statically
 * linked cudart, the driver API) cannot be counted while OFF, when their
 * callbacks are off: once one was seen, every SS_REC_CAPTURE says its count
 * is a lower bound (SS_CAPTURE_F_COUNT_PARTIAL).  A load, and a store once. */
SS_HIDDEN extern int ss_hot_callback_seen;
static inline void ss_hot_seen_via_callback(void)
{
    if (__builtin_expect(!__atomic_load_n(&ss_hot_callback_seen, __ATOMIC_RELAXED), 0))
        __atomic_store_n(&ss_hot_callback_seen, 1, __ATOMIC_RELAXED);
}

#endif /* SYNCSIGHT_BASE_H */
