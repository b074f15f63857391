/*
 * Trace writer and reader (include/syncsight/trace_io.h).  Shared by the shim,
 * the analyzer, the trace generator and the tests, so that there is exactly
 * one implementation of the format.
 */
#define _GNU_SOURCE
#include "syncsight/trace_io.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SS_VERSION
#define SS_VERSION "0.0.0"
#endif

/* ------------------------------------------------------------------ CRC-32 */

/* CRC-32 (IEEE, reflected 0xEDB88320), the same polynomial and values
 * whichever library computes it, so traces written before and after read
 * alike.  In order of preference:
 *   - libdeflate's libdeflate_crc32 (libdeflate.so.0: libtiff's dependency,
 *     on most desktop and CUDA images): carry-less multiply (PCLMUL/VPCLMUL),
 *     11-14 GB/s on the 2-vCPU EPYC VM where zlib 1.2.13 runs at 3-4 GB/s;
 *     it is what a 36 MiB set of module images costs the loading thread
 *     (bench-cubin, docs/performance.md "Module images");
 *   - zlib's crc32 (libz.so.1, on every glibc Linux: libelf, Python and
 *     PyTorch need it);
 *   - a bytewise table loop: the same values, slowly.
 * Both libraries are reached with dlopen rather than linked: their headers
 * and link names come with -dev packages a fresh machine may lack, a link
 * dependency would have to reach every program that builds this file (the
 * shim, the analyzer, tests, tools, GPU scripts), and the shim, preloaded
 * into every traced process, stays linked with libc alone.  The prototypes
 * are stable: zlib's uLong crc32(uLong crc, const Bytef *buf, uInt len)
 * since 1.0, libdeflate's uint32_t libdeflate_crc32(uint32_t crc, const void
 * *buf, size_t len) since 1.0 (initial value 0, as zlib's). */
typedef unsigned long (*zlib_crc32_fn)(unsigned long crc, const unsigned char *buf, unsigned int len);
typedef uint32_t (*deflate_crc32_fn)(uint32_t crc, const void *buf, size_t len);

enum { CRC_UNRESOLVED, CRC_LIBDEFLATE, CRC_ZLIB, CRC_TABLE };
/* Per CRC_*: its name, and where the libraries are, the library and symbol. */
static const struct { const char *name, *lib, *symbol; } crc_impls[] = {
    [CRC_UNRESOLVED] = { "unresolved", NULL, NULL },
    [CRC_LIBDEFLATE] = { "libdeflate", "libdeflate.so.0", "libdeflate_crc32" },
    [CRC_ZLIB] = { "zlib", "libz.so.1", "crc32" },
    [CRC_TABLE] = { "table", NULL, NULL },
};
static void *crc_fn;               /* the library function of crc_state */
static uint32_t crc_table[256];
static int crc_state;              /* CRC_* */

/* Use implementation `which` from now on: 0, or -1 when its library does not
 * load.  Idempotent (a pure function of the machine): threads racing through
 * it store the same values. */
static int crc_use(int which)
{
    if (crc_impls[which].lib) {
        void *lib = dlopen(crc_impls[which].lib, RTLD_NOW | RTLD_LOCAL);
        void *fn = lib ? dlsym(lib, crc_impls[which].symbol) : NULL;
        if (!fn)
            return -1;
        __atomic_store_n(&crc_fn, fn, __ATOMIC_RELAXED);
    } else {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            crc_table[i] = c;
        }
    }
    __atomic_store_n(&crc_state, which, __ATOMIC_RELEASE);
    return 0;
}

/* The implementation in use; at the first call, the first that loads in
 * the order of preference. */
static int crc_current(void)
{
    int state = __atomic_load_n(&crc_state, __ATOMIC_ACQUIRE);
    if (state != CRC_UNRESOLVED)
        return state;
    for (int which = CRC_LIBDEFLATE; crc_use(which) != 0; which++)
        ;
    return __atomic_load_n(&crc_state, __ATOMIC_ACQUIRE);
}

const char *ss_crc32_impl(void)
{
    return crc_impls[crc_current()].name;
}

int ss_crc32_select(const char *impl)
{
    for (int which = CRC_LIBDEFLATE; which <= CRC_TABLE; which++)
        if (strcmp(impl, crc_impls[which].name) == 0)
            return crc_use(which);
    return -1;
}

uint32_t ss_crc32(uint32_t crc, const void *data, size_t len)
{
    int state = crc_current();
    const uint8_t *p = data;
    if (state == CRC_LIBDEFLATE)
        return ((deflate_crc32_fn)__atomic_load_n(&crc_fn, __ATOMIC_RELAXED))(crc, p, len);
    if (state == CRC_ZLIB) {
        zlib_crc32_fn fn = (zlib_crc32_fn)__atomic_load_n(&crc_fn, __ATOMIC_RELAXED);
        /* uInt lengths: a larger buffer goes in 1 GiB pieces (CRCs chain) */
        unsigned long c = crc;
        while (len > 0) {
            unsigned int n = len > (1u << 30) ? (1u << 30) : (unsigned int)len;
            c = fn(c, p, n);
            p += n;
            len -= n;
        }
        return (uint32_t)c;
    }
    crc = ~crc;
    while (len--)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* ------------------------------------------------------------------ writer */

void ss_file_header_init(ss_file_header *hdr, uint64_t start_ns, uint64_t start_realtime_ns)
{
    memset(hdr, 0, sizeof *hdr);
    memcpy(hdr->magic, SS_TRACE_MAGIC, 8);
    hdr->version_major = SS_TRACE_VERSION_MAJOR;
    hdr->version_minor = SS_TRACE_VERSION_MINOR;
    hdr->header_size = sizeof *hdr;
    hdr->pid = (uint32_t)getpid();
    hdr->ppid = (uint32_t)getppid();
    hdr->clock_id = SS_CLOCK_MONOTONIC;
    hdr->start_ns = start_ns;
    hdr->start_realtime_ns = start_realtime_ns;
    if (gethostname(hdr->hostname, sizeof hdr->hostname - 1) != 0)
        hdr->hostname[0] = '\0';
    hdr->hostname[sizeof hdr->hostname - 1] = '\0';
    snprintf(hdr->shim_version, sizeof hdr->shim_version, "%s", SS_VERSION);
}

/* write() all of buf, retrying on EINTR and short writes. */
static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int ss_writer_open(ss_writer *w, const char *path, const ss_file_header *hdr)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    /* O_EXCL + O_NOFOLLOW: never write through a planted symlink or over an
     * existing file (the same policy perf uses for perf.data). */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, hdr, sizeof *hdr);
    if (rc < 0) {
        close(fd);
        unlink(path);
        return rc;
    }
    w->fd = fd;
    w->bytes_written = sizeof *hdr;
    return 0;
}

int ss_writer_write_block(ss_writer *w, const void *payload, uint32_t payload_bytes,
                          uint32_t record_count)
{
    struct iovec part = { .iov_base = (void *)payload, .iov_len = payload_bytes };
    return ss_writer_write_blockv(w, &part, 1, record_count);
}

int ss_writer_write_blockv(ss_writer *w, const struct iovec *parts, int nparts, uint32_t record_count)
{
    if (w->fd < 0)
        return -EBADF;
    if (w->failed_errno)
        return -w->failed_errno;
    if (nparts < 0 || nparts > SS_WRITER_MAX_PARTS)
        return -EINVAL;
    uint64_t payload_bytes = 0;
    uint32_t crc = 0;
    for (int i = 0; i < nparts; i++) {
        payload_bytes += parts[i].iov_len;
        /* crc32 chains: the CRC of the parts in turn is the CRC of the whole */
        crc = ss_crc32(crc, parts[i].iov_base, parts[i].iov_len);
    }
    if (payload_bytes == 0)
        return 0;
    if (payload_bytes > SS_BLOCK_MAX_PAYLOAD || (payload_bytes & 7u))
        return -EINVAL;

    ss_block_header bh = {
        .magic = SS_BLOCK_MAGIC,
        .payload_bytes = (uint32_t)payload_bytes,
        .record_count = record_count,
        .crc32 = crc,
    };
    /* Header and payload go out in one writev(): a crash or a full disk in
     * the middle leaves a block the reader rejects by length or CRC. */
    struct iovec iov[1 + SS_WRITER_MAX_PARTS];
    iov[0] = (struct iovec){ .iov_base = &bh, .iov_len = sizeof bh };
    for (int i = 0; i < nparts; i++)
        iov[1 + i] = parts[i];
    size_t total = sizeof bh + (size_t)payload_bytes;
    ssize_t n;
    do
        n = writev(w->fd, iov, 1 + nparts);
    while (n < 0 && errno == EINTR);
    int rc = 0;
    if (n < 0) {
        rc = -errno;
    } else if ((size_t)n < total) {
        /* Short write: finish each piece with plain writes (each retried on
         * EINTR), skipping what already went out. */
        size_t done = (size_t)n;
        for (int i = 0; i < 1 + nparts && rc == 0; i++) {
            if (done >= iov[i].iov_len) {
                done -= iov[i].iov_len;
                continue;
            }
            rc = write_all(w->fd, (const char *)iov[i].iov_base + done, iov[i].iov_len - done);
            done = 0;
        }
    }
    if (rc < 0) {
        w->failed_errno = -rc;
        return rc;
    }
    w->bytes_written += total;
    w->blocks_written++;
    return 0;
}

int ss_writer_close(ss_writer *w)
{
    int rc = 0;
    if (w->fd >= 0 && close(w->fd) != 0)
        rc = -errno;
    w->fd = -1;
    return rc;
}

void *ss_rec_reserve(void *buf, uint32_t cap, uint32_t *used, uint16_t type,
                     uint32_t fixed_size, uint32_t tail_size)
{
    uint64_t size = (uint64_t)fixed_size + tail_size;
    size = (size + 7u) & ~(uint64_t)7u;
    if (size > UINT32_MAX || *used > cap || size > (uint64_t)(cap - *used))
        return NULL;
    ss_rec_hdr *h = (ss_rec_hdr *)((char *)buf + *used);
    memset(h, 0, (size_t)size);
    h->type = type;
    h->size = (uint32_t)size;
    *used += (uint32_t)size;
    return h;
}

/* ------------------------------------------------------------------ reader */

struct ss_reader {
    int            fd;
    const uint8_t *map;
    uint64_t       size;
    ss_file_header hdr;
    uint64_t       block_off;    /* offset of the current block header */
    uint64_t       rec_off;      /* offset of the next record in the block */
    uint64_t       block_end;    /* end of the current block's payload */
    int            done;
    char           err[256];
};

uint32_t ss_rec_fixed_size(uint16_t type)
{
    switch (type) {
    case SS_REC_META:       return sizeof(ss_meta_rec);
    case SS_REC_STRING:     return sizeof(ss_string_rec);
    case SS_REC_API_NAME:   return sizeof(ss_api_name_rec);
    case SS_REC_API:        return sizeof(ss_api_rec);
    case SS_REC_KERNEL:     return sizeof(ss_kernel_rec);
    case SS_REC_MEMCPY:     return sizeof(ss_memcpy_rec);
    case SS_REC_MEMSET:     return sizeof(ss_memset_rec);
    case SS_REC_SYNC:       return sizeof(ss_sync_rec);
    case SS_REC_CUDA_EVENT: return sizeof(ss_cuda_event_rec);
    case SS_REC_STREAM:     return sizeof(ss_stream_rec);
    case SS_REC_CONTEXT:    return sizeof(ss_context_rec);
    case SS_REC_NVTX:       return sizeof(ss_nvtx_rec);
    case SS_REC_NOTE:       return sizeof(ss_note_rec);
    case SS_REC_CLOCK:      return sizeof(ss_clock_rec);
    case SS_REC_THREAD:     return sizeof(ss_thread_rec);
    case SS_REC_STACK:      return sizeof(ss_stack_rec);
    case SS_REC_MODULE:     return sizeof(ss_module_rec);
    case SS_REC_PYSTACK:    return sizeof(ss_pystack_rec);
    case SS_REC_CUBIN:      return sizeof(ss_cubin_rec);
    case SS_REC_KERNEL_ACCESS: return sizeof(ss_kernel_access_rec);
    case SS_REC_HOST_SYNC:  return sizeof(ss_host_sync_rec);
    case SS_REC_JIT:        return sizeof(ss_jit_rec);
    case SS_REC_STREAM_NAME: return sizeof(ss_stream_name_rec);
    case SS_REC_GRAPH_NODE: return sizeof(ss_graph_node_rec);
    case SS_REC_SHIM_PAUSE: return sizeof(ss_shim_pause_rec);
    case SS_REC_THREAD_CONTEXT: return sizeof(ss_thread_context_rec);
    default:                return 0;
    }
}

/* Bytes of variable tail a record declares, beyond its fixed struct; checked
 * against the record's size so that a reader never reads past a record. */
static uint64_t declared_tail(const ss_rec_hdr *h)
{
    switch (h->type) {
    case SS_REC_META: {
        const ss_meta_rec *m = (const void *)h;
        return (uint64_t)m->key_len + 1 + m->value_len + 1;
    }
    case SS_REC_STRING:   return ((const ss_string_rec *)(const void *)h)->len;
    case SS_REC_API_NAME: return ((const ss_api_name_rec *)(const void *)h)->len;
    case SS_REC_API: {
        const ss_api_rec *a = (const void *)h;
        /* values, then (minor 1) one uint16 offset per value */
        return (uint64_t)a->nparams * ((a->flags & SS_API_F_PARAM_OFFSETS) ? 10u : 8u);
    }
    case SS_REC_NOTE:     return ((const ss_note_rec *)(const void *)h)->len;
    case SS_REC_THREAD:   return ((const ss_thread_rec *)(const void *)h)->len;
    case SS_REC_STACK:    return (uint64_t)((const ss_stack_rec *)(const void *)h)->depth * 8u;
    case SS_REC_MODULE: {
        const ss_module_rec *m = (const void *)h;
        return (uint64_t)m->path_len + m->build_id_len;
    }
    case SS_REC_PYSTACK:
        return (uint64_t)((const ss_pystack_rec *)(const void *)h)->depth * sizeof(ss_pyframe);
    case SS_REC_CUBIN:    return ((const ss_cubin_rec *)(const void *)h)->size;
    case SS_REC_KERNEL_ACCESS:
        return (uint64_t)((const ss_kernel_access_rec *)(const void *)h)->nentries *
               sizeof(ss_kernel_access_entry);
    case SS_REC_KERNEL: case SS_REC_MEMCPY: case SS_REC_MEMSET:
        return (h->flags & SS_GPU_F_GRAPH_NODE) ? 8u : 0u;   /* the graph node id (minor 5) */
    default:
        return 0;
    }
}

ss_reader *ss_reader_open(const char *path, char *err, size_t errlen)
{
#define FAIL(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); goto fail; } while (0)
    ss_reader *r = calloc(1, sizeof *r);
    if (!r) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        FAIL("cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(r->fd, &st) != 0)
        FAIL("cannot stat: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        FAIL("is a directory");
    if (!S_ISREG(st.st_mode))
        FAIL("not a regular file");
    r->size = (uint64_t)st.st_size;
    if (r->size < 8)
        FAIL("not a syncsight trace (file too short: %llu bytes)", (unsigned long long)r->size);
    r->map = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, r->fd, 0);
    if (r->map == MAP_FAILED) {
        r->map = NULL;
        FAIL("cannot map: %s", strerror(errno));
    }
    if (memcmp(r->map, SS_TRACE_MAGIC, 8) != 0)
        FAIL("not a syncsight trace (bad magic)");
    if (r->size < sizeof(ss_file_header))
        FAIL("truncated file header (%llu of %zu bytes)", (unsigned long long)r->size,
             sizeof(ss_file_header));
    memcpy(&r->hdr, r->map, sizeof r->hdr);
    if (r->hdr.version_major != SS_TRACE_VERSION_MAJOR)
        FAIL("unsupported trace version %u.%u (this syncsight reads %u.x)",
             r->hdr.version_major, r->hdr.version_minor, SS_TRACE_VERSION_MAJOR);
    if (r->hdr.header_size < sizeof(ss_file_header) || r->hdr.header_size > r->size ||
        r->hdr.header_size > 65536 || (r->hdr.header_size & 7u))
        FAIL("corrupt file header (header size %u)", r->hdr.header_size);
    r->hdr.hostname[sizeof r->hdr.hostname - 1] = '\0';
    r->hdr.shim_version[sizeof r->hdr.shim_version - 1] = '\0';
    r->block_off = r->hdr.header_size;
    r->rec_off = r->block_end = 0;
    madvise((void *)r->map, r->size, MADV_SEQUENTIAL);
    return r;
fail:
    ss_reader_close(r);
    return NULL;
#undef FAIL
}

void ss_reader_close(ss_reader *r)
{
    if (!r)
        return;
    if (r->map)
        munmap((void *)r->map, r->size);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

const ss_file_header *ss_reader_header(const ss_reader *r) { return &r->hdr; }
const char *ss_reader_error(const ss_reader *r) { return r->err; }
uint64_t ss_reader_offset(const ss_reader *r) { return r->block_off; }
uint64_t ss_reader_file_size(const ss_reader *r) { return r->size; }

/* The block header at `off`: magic, a sane length, and the whole payload
 * inside the file.  Returns 1 with *bh filled, 0 at a clean end of file, -1
 * with err set when the file stops being valid there. */
static int check_block_header(const ss_reader *r, uint64_t off, ss_block_header *bh, char *err, size_t errlen)
{
    if (off == r->size)
        return 0;
    if (r->size - off < sizeof(ss_block_header)) {
        snprintf(err, errlen, "incomplete block header at offset %llu (%llu bytes left)",
                 (unsigned long long)off, (unsigned long long)(r->size - off));
        return -1;
    }
    memcpy(bh, r->map + off, sizeof *bh);
    if (bh->magic != SS_BLOCK_MAGIC) {
        snprintf(err, errlen, "bad block magic at offset %llu", (unsigned long long)off);
        return -1;
    }
    if (bh->payload_bytes == 0 || bh->payload_bytes > SS_BLOCK_MAX_PAYLOAD || (bh->payload_bytes & 7u)) {
        snprintf(err, errlen, "bad block length %u at offset %llu", bh->payload_bytes, (unsigned long long)off);
        return -1;
    }
    uint64_t start = off + sizeof *bh;
    if (r->size - start < bh->payload_bytes) {
        snprintf(err, errlen, "incomplete block at offset %llu (%llu of %u bytes)", (unsigned long long)off,
                 (unsigned long long)(r->size - start), bh->payload_bytes);
        return -1;
    }
    return 1;
}

/* A block whose header passed check_block_header, verified whole: its CRC,
 * and that its records tile the payload exactly with sane sizes (each must
 * fit, be aligned, be at least as large as its type's fixed part, and hold
 * the tail it declares).  Reads the map only: blocks may be verified on
 * several threads at once.  0, or -1 with err set. */
static int verify_block(const ss_reader *r, uint64_t off, const ss_block_header *bh, char *err, size_t errlen)
{
    uint64_t start = off + sizeof *bh;
    if (ss_crc32(0, r->map + start, bh->payload_bytes) != bh->crc32) {
        snprintf(err, errlen, "block checksum mismatch at offset %llu", (unsigned long long)off);
        return -1;
    }
    uint64_t p = start, end = start + bh->payload_bytes;
    uint32_t n = 0;
    while (p < end) {
        if (end - p < sizeof(ss_rec_hdr)) {
            snprintf(err, errlen, "record header overruns block at offset %llu", (unsigned long long)p);
            return -1;
        }
        ss_rec_hdr h;
        memcpy(&h, r->map + p, sizeof h);
        if (h.size < sizeof(ss_rec_hdr) || (h.size & 7u) || h.size > end - p) {
            snprintf(err, errlen, "bad record size %u at offset %llu", h.size, (unsigned long long)p);
            return -1;
        }
        uint32_t fixed = ss_rec_fixed_size(h.type);
        if (fixed) {
            if (h.size < fixed) {
                snprintf(err, errlen, "record of type %u too short (%u < %u bytes) at offset %llu", h.type,
                         h.size, fixed, (unsigned long long)p);
                return -1;
            }
            if (declared_tail((const ss_rec_hdr *)(const void *)(r->map + p)) > h.size - fixed) {
                snprintf(err, errlen, "record of type %u declares more data than it holds at offset %llu",
                         h.type, (unsigned long long)p);
                return -1;
            }
        }
        p += h.size;
        n++;
    }
    if (n != bh->record_count) {
        snprintf(err, errlen, "block at offset %llu holds %u records, header says %u", (unsigned long long)off,
                 n, bh->record_count);
        return -1;
    }
    return 0;
}

/* Verify the block at r->block_off whole before its first record is handed
 * out.  Returns 1 when it can be iterated, 0 at a clean end of file, -1 when
 * the file stops being valid. */
static int load_block(ss_reader *r)
{
    ss_block_header bh;
    int rc = check_block_header(r, r->block_off, &bh, r->err, sizeof r->err);
    if (rc <= 0)
        return rc;
    if (verify_block(r, r->block_off, &bh, r->err, sizeof r->err) != 0)
        return -1;
    r->rec_off = r->block_off + sizeof bh;
    r->block_end = r->rec_off + bh.payload_bytes;
    return 1;
}

uint32_t ss_reader_blocks(ss_reader *r, ss_block_ref **out)
{
    uint32_t n = 0, cap = 0;
    ss_block_ref *v = NULL;
    uint64_t off = r->hdr.header_size;
    *out = NULL;
    r->err[0] = '\0';
    for (;;) {
        ss_block_header bh;
        if (check_block_header(r, off, &bh, r->err, sizeof r->err) <= 0)
            break;
        if (n == cap) {
            uint32_t nc = cap ? 2 * cap : 256;
            ss_block_ref *nv = realloc(v, (size_t)nc * sizeof *v);
            if (!nv) {
                snprintf(r->err, sizeof r->err, "out of memory listing blocks at offset %llu",
                         (unsigned long long)off);
                break;
            }
            v = nv;
            cap = nc;
        }
        v[n++] = (ss_block_ref){ off, bh.payload_bytes, bh.record_count };
        off += sizeof bh + bh.payload_bytes;
    }
    *out = v;
    return n;
}

int ss_reader_verify_block(const ss_reader *r, const ss_block_ref *b, char *err, size_t errlen)
{
    ss_block_header bh;
    memcpy(&bh, r->map + b->off, sizeof bh);
    return verify_block(r, b->off, &bh, err, errlen);
}

const uint8_t *ss_reader_block_payload(const ss_reader *r, const ss_block_ref *b)
{
    return r->map + b->off + sizeof(ss_block_header);
}

int ss_reader_next(ss_reader *r, const ss_rec_hdr **rec)
{
    if (r->done)
        return r->err[0] ? SS_READ_TRUNCATED : SS_READ_END;
    while (r->rec_off >= r->block_end) {
        if (r->block_end) /* step past the block just finished */
            r->block_off = r->block_end;
        int rc = load_block(r);
        if (rc <= 0) {
            r->done = 1;
            return rc == 0 ? SS_READ_END : SS_READ_TRUNCATED;
        }
    }
    const ss_rec_hdr *h = (const ss_rec_hdr *)(const void *)(r->map + r->rec_off);
    r->rec_off += h->size;
    *rec = h;
    return SS_READ_OK;
}
