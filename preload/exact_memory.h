/*
 * Exact memory mode: the per-launch tracker shared by the shim
 * (preload/exact_memory.c, host) and its device patch
 * (preload/exact_memory_patch.cu, compiled by nvcc and run by the CUDA
 * Sanitizer API at every global memory access of a patched kernel).
 * Plain C, included by both compilers: the layout is the contract.
 */
#ifndef SYNCSIGHT_EXACT_MEMORY_H
#define SYNCSIGHT_EXACT_MEMORY_H

/* Allocations one launch's tracker holds (the launch record stores at most
 * SS_API_MAX_PARAMS = 32 words; room to spare). */
#define SS_XM_MAX_RANGES 64

/* Name of the device callback in the patch image. */
#define SS_XM_CALLBACK_NAME "ss_xm_global_access"

enum ss_xm_range_flags {
    SS_XM_READ   = 1u << 0,
    SS_XM_WRITE  = 1u << 1,
    SS_XM_ATOMIC = 1u << 2,
};

/* One allocation a recorded parameter word points into: [lo, hi).  The
 * device widens read/write [lo, hi) with atomicMin/atomicMax; the host
 * starts them at (~0, 0). */
typedef struct ss_xm_range {
    unsigned long long lo, hi;
    unsigned long long read_lo, read_hi;
    unsigned long long write_lo, write_hi;
    unsigned int flags;                 /* enum ss_xm_range_flags, atomicOr */
    unsigned int pad;
} ss_xm_range;

typedef struct ss_xm_tracker {
    unsigned int n;                     /* ranges in use */
    unsigned int pad;
    unsigned long long outside;         /* accesses in no range (atomicAdd) */
    ss_xm_range r[SS_XM_MAX_RANGES];
} ss_xm_tracker;

#endif /* SYNCSIGHT_EXACT_MEMORY_H */
