/*
 * Shared by the libFuzzer targets: the reader API takes a path, so each input
 * is written to one memfd that is reused for the whole run and opened again
 * through /proc/self/fd (no files on disk, nothing to clean up).
 *
 * Random bytes almost never pass a block's CRC, which would leave everything
 * behind the block check unfuzzed.  So every input is tried twice: as it is
 * (the header and block checks), and with each block's CRC and record count
 * recomputed (the record walk and whatever consumes the records).
 */
#ifndef SYNCSIGHT_FUZZ_COMMON_H
#define SYNCSIGHT_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "syncsight/trace_io.h"

/* Write data as the content of the process's scratch memfd; returns its
 * /proc path (static storage), or NULL when the memfd cannot be written. */
static const char *fuzz_store(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("syncsight-fuzz", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        return NULL;
    return path;
}

/* Copy of data with every block that is complete and whose magic is right
 * given a valid CRC and the number of records its payload walks to (records
 * counted by their size fields while they stay inside the payload).  Returns
 * NULL when nothing changed.  The caller frees the result. */
static uint8_t *fuzz_fix_blocks(const uint8_t *data, size_t size)
{
    if (size < sizeof(ss_file_header))
        return NULL;
    ss_file_header fh;
    memcpy(&fh, data, sizeof fh);
    size_t off = fh.header_size;
    if (off < sizeof fh || off > size || (off & 7u))
        return NULL;
    uint8_t *copy = malloc(size);
    if (!copy)
        return NULL;
    memcpy(copy, data, size);
    int changed = 0;
    while (size - off >= sizeof(ss_block_header)) {
        ss_block_header bh;
        memcpy(&bh, copy + off, sizeof bh);
        if (bh.magic != SS_BLOCK_MAGIC || bh.payload_bytes > size - off - sizeof bh)
            break;
        const uint8_t *payload = copy + off + sizeof bh;
        uint32_t count = 0;
        for (uint32_t p = 0; p + sizeof(ss_rec_hdr) <= bh.payload_bytes;) {
            ss_rec_hdr h;
            memcpy(&h, payload + p, sizeof h);
            if (h.size < sizeof h || h.size > bh.payload_bytes - p)
                break;
            p += h.size;
            count++;
        }
        uint32_t crc = ss_crc32(0, payload, bh.payload_bytes);
        if (crc != bh.crc32 || count != bh.record_count) {
            bh.crc32 = crc;
            bh.record_count = count;
            memcpy(copy + off, &bh, sizeof bh);
            changed = 1;
        }
        off += sizeof bh + bh.payload_bytes;
    }
    if (!changed) {
        free(copy);
        return NULL;
    }
    return copy;
}

/* Every target's body: fn on the input as it is, then (when that changes
 * anything) on the input with its blocks fixed (fuzz_fix_blocks). */
static int fuzz_both_forms(const uint8_t *data, size_t size, void (*fn)(const char *path))
{
    const char *path = fuzz_store(data, size);
    if (!path)
        return 0;
    fn(path);
    uint8_t *fixed = fuzz_fix_blocks(data, size);
    if (fixed) {
        path = fuzz_store(fixed, size);
        if (path)
            fn(path);
        free(fixed);
    }
    return 0;
}

#endif /* SYNCSIGHT_FUZZ_COMMON_H */
