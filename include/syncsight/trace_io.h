/*
 * Trace writer and reader shared by the shim, the analyzer and the tools that
 * make traces (bench/ generator, tests).  Implementation: common/trace_io.c.
 *
 * The writer never allocates after open and is safe to call from a signal
 * handler as long as each call gets its own buffer (it only uses write()).
 * Callers serialize calls on one writer (the shim holds a lock around
 * ss_writer_write_block; one write() per block keeps blocks whole).
 */
#ifndef SYNCSIGHT_TRACE_IO_H
#define SYNCSIGHT_TRACE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "syncsight/trace_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ writer */

typedef struct ss_writer {
    int      fd;
    int      failed_errno;      /* first write error (ENOSPC, EFBIG...), 0 if none */
    uint64_t bytes_written;
    uint64_t blocks_written;
} ss_writer;

/* Create `path` like perf.data: O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode
 * 0600, and write the header.  Returns 0, or -errno (the file is not left
 * behind when the header cannot be written). */
int  ss_writer_open(ss_writer *w, const char *path, const ss_file_header *hdr);

/* Write one block holding `payload_bytes` of records (`record_count` of them).
 * One write() call (retried on EINTR/short writes).  Returns 0 or -errno; after
 * a failure the writer is marked failed and later calls return the same error
 * without writing, so a full disk costs the program nothing more. */
int  ss_writer_write_block(ss_writer *w, const void *payload, uint32_t payload_bytes,
                           uint32_t record_count);
/* The same block with its payload gathered from up to SS_WRITER_MAX_PARTS
 * pieces (a record's fixed part, a multi-MiB tail kept where it is, the
 * padding), still one writev() and one CRC over the whole payload. */
#define SS_WRITER_MAX_PARTS 8
int  ss_writer_write_blockv(ss_writer *w, const struct iovec *parts, int nparts,
                            uint32_t record_count);
int  ss_writer_close(ss_writer *w);

/* Fill a header with magic, version, pid/ppid, clock id, start times, host. */
void ss_file_header_init(ss_file_header *hdr, uint64_t start_ns, uint64_t start_realtime_ns);

/* CRC-32 (IEEE 802.3 polynomial): libdeflate's libdeflate_crc32 from
 * libdeflate.so.0, else zlib's crc32() from libz.so.1 (both dlopen'ed; see
 * trace_io.c), else the same values from a bytewise table. */
uint32_t ss_crc32(uint32_t crc, const void *data, size_t len);
/* "libdeflate", "zlib" or "table": which one ss_crc32 uses in this process. */
const char *ss_crc32_impl(void);
/* Use that one from now on (tests, benchmarks): 0, or -1 when its library
 * cannot be loaded.  Not to be called while another thread checksums. */
int ss_crc32_select(const char *impl);

/* ------------------------------------------------------- record building */

/* Append helpers for building a block payload in a caller-owned buffer.
 * Each returns a pointer to the record in `buf` (zeroed, header filled) or
 * NULL when it does not fit; *used is advanced by the aligned size. */
void *ss_rec_reserve(void *buf, uint32_t cap, uint32_t *used, uint16_t type,
                     uint32_t fixed_size, uint32_t tail_size);

/* ------------------------------------------------------------------ reader */

enum ss_read_status {
    SS_READ_OK        = 0,
    SS_READ_END       = 1,  /* clean end of file */
    SS_READ_TRUNCATED = 2,  /* stopped at an incomplete or corrupt block */
};

typedef struct ss_reader ss_reader;

/* Open and map a trace.  On failure returns NULL and writes a one-line reason
 * (without the file name) into err. */
ss_reader *ss_reader_open(const char *path, char *err, size_t errlen);
void       ss_reader_close(ss_reader *r);
const ss_file_header *ss_reader_header(const ss_reader *r);

/* Next record, in file order.  Returns SS_READ_OK with *rec set, SS_READ_END,
 * or SS_READ_TRUNCATED (then ss_reader_error() says where and why).  A record
 * whose size is smaller than its type's fixed struct, or that overruns its
 * block, makes the block corrupt: nothing of a corrupt block is returned
 * (blocks are verified whole before their first record is handed out). */
int        ss_reader_next(ss_reader *r, const ss_rec_hdr **rec);
const char *ss_reader_error(const ss_reader *r);
uint64_t   ss_reader_offset(const ss_reader *r);   /* file offset of the current block */
uint64_t   ss_reader_file_size(const ss_reader *r);

/* Block by block, for readers that verify blocks on several threads and
 * keep what ss_reader_next would have returned: the blocks before the first
 * one that is not valid.
 *   ss_reader_blocks: the blocks whose headers and lengths are sane, in file
 *     order, from the first up to the first that is not (then
 *     ss_reader_error() says why, as ss_reader_next would; empty at a clean
 *     end).  *out is malloc'ed (free() it), NULL when there is none.
 *   ss_reader_verify_block: one listed block's checksum and record tiling;
 *     0, or -1 with the reason in err (ss_reader_next's words).  Reads the
 *     mapping only: safe on several threads at once.
 *   ss_reader_block_payload: a block's records, record_count of them. */
typedef struct ss_block_ref {
    uint64_t off;            /* file offset of the block header */
    uint32_t payload_bytes;
    uint32_t record_count;
} ss_block_ref;
uint32_t   ss_reader_blocks(ss_reader *r, ss_block_ref **out);
int        ss_reader_verify_block(const ss_reader *r, const ss_block_ref *b, char *err, size_t errlen);
const uint8_t *ss_reader_block_payload(const ss_reader *r, const ss_block_ref *b);

/* Fixed struct size for a record type (0 for unknown types). */
uint32_t   ss_rec_fixed_size(uint16_t type);

/* Tail bytes of a record that carries text or arrays (after the fixed part). */
static inline const void *ss_rec_tail(const ss_rec_hdr *h, uint32_t fixed_size)
{
    return (const char *)h + fixed_size;
}

#ifdef __cplusplus
}
#endif
#endif /* SYNCSIGHT_TRACE_IO_H */
