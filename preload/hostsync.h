/*
 * Host thread ordering (hostsync.c): the hash that places a synchronization
 * object in the shared table and in a thread's cache, and the cache's shape.
 * Shared with tests/hostsync_prog.c, which picks locks that meet in one
 * cache set to prove that a few hot objects of one thread never evict each
 * other.
 */
#ifndef SYNCSIGHT_HOSTSYNC_H
#define SYNCSIGHT_HOSTSYNC_H

#include <stdint.h>

#define HS_CACHE_SETS 64u
#define HS_CACHE_WAYS 4u

static inline uint32_t hs_hash(uint64_t k)
{
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(k >> 40);
}

/* The cache set of an object's address. */
static inline uint32_t hs_cache_set(uint64_t key)
{
    return hs_hash(key) & (HS_CACHE_SETS - 1u);
}

#endif
