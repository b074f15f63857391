/*
 * XXH64, the 64-bit hash of the xxHash specification
 * (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md): the
 * identity of a module's device code image (SS_REC_CUBIN.hash), computed by
 * the shim while the driver loads a module, on the program's thread.
 *
 * Written here rather than taken from libxxhash: the shim cannot count on
 * libxxhash.so.0 on the user's machine and the value is part of the trace,
 * so a fallback would have to be this same code.  tests/test_hash64.c checks
 * it against values from the reference implementation.
 */
#ifndef SYNCSIGHT_HASH64_H
#define SYNCSIGHT_HASH64_H

#include <stddef.h>
#include <stdint.h>

uint64_t ss_xxh64(const void *data, size_t len, uint64_t seed);

#endif
