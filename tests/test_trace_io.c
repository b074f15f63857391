/*
 * Writer/reader round trip of the trace format, truncation at every byte,
 * corruption, the file-creation policy (0600, O_EXCL, no symlinks), and the
 * minor-1 additions (module images, kernel parameter offsets).
 */
#define _GNU_SOURCE
#include "syncsight/trace_io.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static char dir[] = "/tmp/ss_test_trace_io.XXXXXX";

static void path_in_dir(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* Build block payloads: block b holds 3 records (an API call with 2 kernel
 * params, a string, a kernel) whose fields encode b, so the reader's output
 * can be checked exactly. */
static uint32_t build_block(uint8_t *buf, uint32_t cap, int b)
{
    uint32_t used = 0;
    ss_api_rec *a = ss_rec_reserve(buf, cap, &used, SS_REC_API, sizeof *a, 2 * 8);
    a->cbid = 211;
    a->tid = 100 + (uint32_t)b;
    a->t_enter = 1000u * (uint64_t)b;
    a->t_exit = a->t_enter + 50;
    a->ret = b % 3;
    a->stream = 0x1000 + (uint64_t)b;
    a->nparams = 2;
    uint64_t params[2] = { 0xdead0000u + (uint64_t)b, 7 };
    memcpy((char *)a + sizeof *a, params, sizeof params);

    const char *text = "kernel<float>(int*) \x1b[31m";
    ss_string_rec *s = ss_rec_reserve(buf, cap, &used, SS_REC_STRING, sizeof *s, (uint32_t)strlen(text));
    s->id = (uint32_t)b + 1;
    s->len = (uint32_t)strlen(text);
    memcpy((char *)s + sizeof *s, text, s->len);

    ss_kernel_rec *k = ss_rec_reserve(buf, cap, &used, SS_REC_KERNEL, sizeof *k, 0);
    k->g.start = 5000u * (uint64_t)b;
    k->g.end = k->g.start + 10;
    k->g.corr = (uint32_t)b;
    k->name_id = (uint32_t)b + 1;
    return used;
}

static const int NBLOCKS = 5;

static int write_trace(const char *path)
{
    ss_file_header hdr;
    ss_file_header_init(&hdr, 123, 456);
    ss_writer w;
    int rc = ss_writer_open(&w, path, &hdr);
    if (rc < 0)
        return rc;
    uint8_t buf[4096];
    for (int b = 0; b < NBLOCKS; b++) {
        uint32_t used = build_block(buf, sizeof buf, b);
        rc = ss_writer_write_block(&w, buf, used, 3);
        if (rc < 0)
            return rc;
    }
    return ss_writer_close(&w);
}

/* Read a whole trace; returns the number of records and sets *status. */
static int read_all(const char *path, int *status, int verify)
{
    char err[256];
    ss_reader *r = ss_reader_open(path, err, sizeof err);
    if (!r) {
        *status = -1;
        return 0;
    }
    const ss_rec_hdr *h;
    int n = 0, st;
    while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
        int b = n / 3;
        if (verify) {
            switch (n % 3) {
            case 0: {
                CHECK(h->type == SS_REC_API, "record %d type %u", n, h->type);
                const ss_api_rec *a = (const void *)h;
                CHECK(a->tid == 100u + (uint32_t)b && a->t_exit == a->t_enter + 50, "api fields block %d", b);
                const uint64_t *p = ss_rec_tail(h, sizeof *a);
                CHECK(a->nparams == 2 && p[0] == 0xdead0000u + (uint64_t)b && p[1] == 7, "api params block %d", b);
                break;
            }
            case 1: {
                CHECK(h->type == SS_REC_STRING, "record %d type %u", n, h->type);
                const ss_string_rec *s = (const void *)h;
                CHECK(s->len == strlen("kernel<float>(int*) \x1b[31m") &&
                      memcmp(ss_rec_tail(h, sizeof *s), "kernel<float>", 13) == 0, "string block %d", b);
                break;
            }
            case 2:
                CHECK(h->type == SS_REC_KERNEL && ((const ss_kernel_rec *)(const void *)h)->g.corr == (uint32_t)b,
                      "kernel block %d", b);
                break;
            }
        }
        n++;
    }
    *status = st;
    ss_reader_close(r);
    return n;
}

/* The same file read block by block, as the analyzer's loader reads it
 * (ss_reader_blocks, then ss_reader_verify_block on each in order, up to the
 * first that fails): the records and the reason must be ss_reader_next's. */
static void check_blockwise(const char *path, int want_records, int want_status, const char *label)
{
    char err[256], why[256] = "", first[256];
    ss_reader *r = ss_reader_open(path, err, sizeof err);
    if (!r) return;   /* read_all saw the same refusal */
    ss_block_ref *blk;
    uint32_t nb = ss_reader_blocks(r, &blk);
    snprintf(first, sizeof first, "%s", ss_reader_error(r));
    int n = 0, bad = 0;
    for (uint32_t b = 0; b < nb && !bad; b++) {
        if (ss_reader_verify_block(r, &blk[b], why, sizeof why) != 0) { bad = 1; break; }
        const uint8_t *p = ss_reader_block_payload(r, &blk[b]);
        for (uint32_t k = 0; k < blk[b].record_count; k++) p += ((const ss_rec_hdr *)(const void *)p)->size;
        CHECK(p == ss_reader_block_payload(r, &blk[b]) + blk[b].payload_bytes, "%s: block %u's records tile it", label, b);
        n += (int)blk[b].record_count;
    }
    const char *reason = bad ? why : first;
    CHECK(n == want_records, "%s: block by block %d records, record by record %d", label, n, want_records);
    CHECK((reason[0] != 0) == (want_status == SS_READ_TRUNCATED), "%s: block by block says '%s', status %d", label,
          reason, want_status);
    /* the reason in the same words */
    const ss_rec_hdr *h;
    ss_reader *q = ss_reader_open(path, err, sizeof err);
    if (q) {
        while (ss_reader_next(q, &h) == SS_READ_OK) {}
        CHECK(strcmp(ss_reader_error(q), reason) == 0, "%s: '%s' against '%s'", label, reason, ss_reader_error(q));
        ss_reader_close(q);
    }
    free(blk);
    ss_reader_close(r);
}

static void test_round_trip(void)
{
    char path[512];
    path_in_dir(path, sizeof path, "rt.sstrace");
    CHECK(write_trace(path) == 0, "write_trace");
    int st;
    int n = read_all(path, &st, 1);
    CHECK(n == 3 * NBLOCKS, "read %d records, want %d", n, 3 * NBLOCKS);
    CHECK(st == SS_READ_END, "status %d, want END", st);

    char err[256];
    ss_reader *r = ss_reader_open(path, err, sizeof err);
    CHECK(r != NULL, "reopen: %s", err);
    if (r) {
        const ss_file_header *h = ss_reader_header(r);
        CHECK(h->start_ns == 123 && h->start_realtime_ns == 456, "header times");
        CHECK(h->pid == (uint32_t)getpid(), "header pid");
        CHECK(h->version_major == SS_TRACE_VERSION_MAJOR, "header version");
        ss_reader_close(r);
    }

    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "mode %o, want 0600", sb.st_mode & 0777);
}

/* Cut the file at every length: the reader must never fail to open a file
 * that still has its header, must return exactly the records of the complete
 * blocks, and must say TRUNCATED unless the cut falls on a block boundary. */
static void test_truncation(void)
{
    char path[512], cut[512];
    path_in_dir(path, sizeof path, "full.sstrace");
    path_in_dir(cut, sizeof cut, "cut.sstrace");
    CHECK(write_trace(path) == 0, "write_trace");
    FILE *f = fopen(path, "rb");
    static uint8_t data[1 << 16];
    size_t len = fread(data, 1, sizeof data, f);
    fclose(f);

    /* Block boundaries, to know how many records each cut must keep. */
    size_t bounds[16];
    int nb = 0;
    size_t off = sizeof(ss_file_header);
    while (off < len && nb < 16) {
        ss_block_header bh;
        memcpy(&bh, data + off, sizeof bh);
        off += sizeof bh + bh.payload_bytes;
        bounds[nb++] = off;
    }
    CHECK(nb == NBLOCKS && bounds[nb - 1] == len, "block walk");

    for (size_t L = 0; L <= len; L++) {
        unlink(cut);
        int fd = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (write(fd, data, L) != (ssize_t)L)
            CHECK(0, "write cut");
        close(fd);
        int st;
        int n = read_all(cut, &st, 1);
        if (L < sizeof(ss_file_header)) {
            CHECK(st == -1, "len %zu: a file without a whole header must be rejected", L);
            continue;
        }
        int complete = 0;
        for (int b = 0; b < nb; b++)
            if (bounds[b] <= L)
                complete = b + 1;
        int on_boundary = (L == sizeof(ss_file_header)) || (complete && bounds[complete - 1] == L);
        CHECK(n == 3 * complete, "len %zu: %d records, want %d", L, n, 3 * complete);
        CHECK(st == (on_boundary ? SS_READ_END : SS_READ_TRUNCATED), "len %zu: status %d", L, st);
        char label[64];
        snprintf(label, sizeof label, "cut at %zu", L);
        check_blockwise(cut, n, st, label);
    }
}

/* Flip each byte of the payload region: every flip must be caught (CRC or
 * structure), and no flip may make the reader return records of the broken
 * block or crash. */
static void test_corruption(void)
{
    char path[512], bad[512];
    path_in_dir(path, sizeof path, "c.sstrace");
    path_in_dir(bad, sizeof bad, "bad.sstrace");
    CHECK(write_trace(path) == 0, "write_trace");
    FILE *f = fopen(path, "rb");
    static uint8_t data[1 << 16];
    size_t len = fread(data, 1, sizeof data, f);
    fclose(f);
    for (size_t i = sizeof(ss_file_header); i < len; i++) {
        data[i] ^= 0x5a;
        unlink(bad);
        int fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (write(fd, data, len) != (ssize_t)len)
            CHECK(0, "write bad");
        close(fd);
        data[i] ^= 0x5a;
        int st;
        int n = read_all(bad, &st, 0);
        CHECK(st == SS_READ_TRUNCATED, "flip at %zu not detected (status %d)", i, st);
        CHECK(n % 3 == 0 && n < 3 * NBLOCKS, "flip at %zu: %d records", i, n);
        char label[64];
        snprintf(label, sizeof label, "flip at %zu", i);
        check_blockwise(bad, n, st, label);
    }
    /* Bad magic and future major version are rejected with a reason. */
    char err[256];
    memcpy(data, "NOTATRAC", 8);
    int fd = open(bad, O_WRONLY | O_TRUNC);
    if (write(fd, data, len) != (ssize_t)len)
        CHECK(0, "write");
    close(fd);
    CHECK(ss_reader_open(bad, err, sizeof err) == NULL && strstr(err, "bad magic"), "bad magic: %s", err);
    memcpy(data, SS_TRACE_MAGIC, 8);
    ((ss_file_header *)(void *)data)->version_major = 99;
    fd = open(bad, O_WRONLY | O_TRUNC);
    if (write(fd, data, len) != (ssize_t)len)
        CHECK(0, "write");
    close(fd);
    CHECK(ss_reader_open(bad, err, sizeof err) == NULL && strstr(err, "version"), "version: %s", err);
    CHECK(ss_reader_open(dir, err, sizeof err) == NULL && strstr(err, "directory"), "dir: %s", err);
}

static void test_creation_policy(void)
{
    char path[512], target[512], link[512];
    path_in_dir(path, sizeof path, "exists.sstrace");
    ss_file_header hdr;
    ss_file_header_init(&hdr, 0, 0);
    ss_writer w;
    CHECK(ss_writer_open(&w, path, &hdr) == 0, "first open");
    ss_writer_close(&w);
    CHECK(ss_writer_open(&w, path, &hdr) == -EEXIST, "an existing file must not be overwritten");

    /* A planted symlink pointing at a file the user owns must not be followed. */
    path_in_dir(target, sizeof target, "victim");
    path_in_dir(link, sizeof link, "planted.sstrace");
    FILE *v = fopen(target, "w");
    fputs("precious", v);
    fclose(v);
    CHECK(symlink(target, link) == 0, "symlink");
    int rc = ss_writer_open(&w, link, &hdr);
    CHECK(rc == -EEXIST || rc == -ELOOP, "symlink followed? rc=%d", rc);
    v = fopen(target, "r");
    char got[16] = { 0 };
    CHECK(fread(got, 1, sizeof got - 1, v) == 8 && strcmp(got, "precious") == 0, "victim changed");
    fclose(v);

    /* After a write error the writer stays failed and returns the error. */
    path_in_dir(path, sizeof path, "full.sstrace2");
    CHECK(ss_writer_open(&w, path, &hdr) == 0, "open");
    int fd = w.fd;
    w.fd = open("/dev/full", O_WRONLY);
    close(fd);
    if (w.fd >= 0) {
        uint8_t buf[512];
        uint32_t used = build_block(buf, sizeof buf, 0);
        CHECK(ss_writer_write_block(&w, buf, used, 3) == -ENOSPC, "ENOSPC expected");
        CHECK(ss_writer_write_block(&w, buf, used, 3) == -ENOSPC && w.failed_errno == ENOSPC, "sticky failure");
        ss_writer_close(&w);
    }
    /* Misaligned payloads are refused rather than written. */
    path_in_dir(path, sizeof path, "misaligned.sstrace");
    CHECK(ss_writer_open(&w, path, &hdr) == 0, "open");
    uint8_t junk[12] = { 0 };
    CHECK(ss_writer_write_block(&w, junk, 12, 1) == -EINVAL, "misaligned block accepted");
    ss_writer_close(&w);
}

static void test_reserve_bounds(void)
{
    uint8_t buf[64];
    uint32_t used = 0;
    CHECK(ss_rec_reserve(buf, sizeof buf, &used, SS_REC_API, sizeof(ss_api_rec), 0) == NULL, "oversized reserve");
    CHECK(used == 0, "used moved on failure");
    ss_string_rec *s = ss_rec_reserve(buf, sizeof buf, &used, SS_REC_STRING, sizeof *s, 5);
    CHECK(s && used == 24 && s->h.size == 24 && s->h.type == SS_REC_STRING, "string reserve rounds to 8");
    CHECK(ss_crc32(0, "123456789", 9) == 0xCBF43926u, "CRC-32 check value");
}

/* ss_crc32, in each implementation this machine can load (libdeflate,
 * zlib, the table), against a bitwise reference of the polynomial the format
 * names, over lengths and alignments that exercise every code path, and
 * chained in pieces (the writer checksums gathered parts in turn). */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
    }
    return ~crc;
}

static int library_loads(const char *name)
{
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib)
        dlclose(lib);
    return lib != NULL;
}

static void test_crc32_values(void)
{
    /* The fastest library the machine has, chosen by itself: libdeflate
     * where it loads, else zlib (on any glibc system with libelf or
     * Python); the table only as the fallback. */
    const char *want = library_loads("libdeflate.so.0") ? "libdeflate" : library_loads("libz.so.1") ? "zlib" : "table";
    CHECK(strcmp(ss_crc32_impl(), want) == 0, "ss_crc32 uses %s where %s loads", ss_crc32_impl(), want);
    static uint8_t buf[70000];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
    static const size_t lens[] = { 0, 1, 3, 7, 8, 9, 15, 16, 31, 64, 255, 1000, 4096, 65536, 69990 };
    static const char *const impls[] = { "libdeflate", "zlib", "table" };
    int tried = 0;
    for (size_t m = 0; m < sizeof impls / sizeof impls[0]; m++) {
        if (ss_crc32_select(impls[m]) != 0) {
            CHECK(strcmp(impls[m], "table") != 0, "the table implementation cannot be selected");
            continue;
        }
        tried++;
        CHECK(strcmp(ss_crc32_impl(), impls[m]) == 0, "selected %s, using %s", impls[m], ss_crc32_impl());
        CHECK(ss_crc32(0, "123456789", 9) == 0xCBF43926u, "CRC-32 check value (%s)", impls[m]);
        for (size_t a = 0; a < 8; a++)
            for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
                CHECK(ss_crc32(0, buf + a, lens[i]) == crc32_bitwise(0, buf + a, lens[i]),
                      "crc32 of %zu bytes at offset %zu (%s)", lens[i], a, impls[m]);
        uint32_t chained = ss_crc32(ss_crc32(ss_crc32(0, buf, 10), buf + 10, 4000), buf + 4010, 60000);
        CHECK(chained == crc32_bitwise(0, buf, 64010), "chained crc32 (%s)", impls[m]);
    }
    CHECK(ss_crc32_select("crc32c") == -1, "an unknown implementation was accepted");
    CHECK(ss_crc32_select(want) == 0, "cannot go back to %s", want);
    printf("test_trace_io: crc32 checked in %d implementation(s), %s by default\n", tried, want);
}

/* Minor version 1: a multi-MiB SS_REC_CUBIN written as a block of its own
 * from gathered pieces (fixed part, image in place, padding), and an API
 * record whose tail holds parameter offsets after the values.  Both read
 * back exactly; records that declare more tail than they hold make their
 * block corrupt. */
static void test_cubin_and_offsets(void)
{
    char path[512];
    path_in_dir(path, sizeof path, "cubin.sstrace");
    ss_file_header hdr;
    ss_file_header_init(&hdr, 1, 2);
    CHECK(hdr.version_minor >= 1, "writer's minor version %u", hdr.version_minor);
    ss_writer w;
    CHECK(ss_writer_open(&w, path, &hdr) == 0, "open %s", path);

    const uint32_t image_bytes = (3u << 20) + 3;      /* > a shim thread buffer, needs padding */
    uint8_t *image = malloc(image_bytes);
    for (uint32_t i = 0; i < image_bytes; i++)
        image[i] = (uint8_t)(i * 131u + (i >> 9));
    ss_cubin_rec c;
    memset(&c, 0, sizeof c);
    c.h.type = SS_REC_CUBIN;
    c.h.size = SS_REC_ALIGN((uint32_t)sizeof c + image_bytes);
    c.hash = 0x0123456789abcdefull;
    c.time = 77;
    c.size = image_bytes;
    c.module_id = 42;
    static const uint8_t zeros[8];
    struct iovec parts[3] = {
        { &c, sizeof c }, { image, image_bytes }, { (void *)zeros, c.h.size - sizeof c - image_bytes },
    };
    CHECK(ss_writer_write_blockv(&w, parts, 3, 1) == 0, "gathered cubin block");

    uint8_t buf[512] __attribute__((aligned(8)));
    uint32_t used = 0;
    const uint64_t vals[3] = { 0x7f0000001000ull, 0x7f0000002000ull, 0x7f0000003000ull };
    const uint16_t offs[3] = { 0, 24, 40 };
    ss_api_rec *a = ss_rec_reserve(buf, sizeof buf, &used, SS_REC_API, sizeof *a, 3 * 10);
    a->cbid = 211;
    a->nparams = 3;
    a->flags = SS_API_F_INTERPOSER | SS_API_F_PARAM_OFFSETS;
    memcpy(a + 1, vals, sizeof vals);
    memcpy((char *)(a + 1) + sizeof vals, offs, sizeof offs);
    CHECK(a->h.size == SS_REC_ALIGN(sizeof *a + 30), "api record with offsets: %u bytes", a->h.size);
    CHECK(ss_writer_write_block(&w, buf, used, 1) == 0, "api block");
    ss_writer_close(&w);

    char err[256];
    ss_reader *r = ss_reader_open(path, err, sizeof err);
    CHECK(r != NULL, "reopen: %s", err);
    if (r) {
        const ss_rec_hdr *h;
        int st, n = 0;
        while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
            if (n == 0) {
                const ss_cubin_rec *rc = (const void *)h;
                CHECK(h->type == SS_REC_CUBIN && rc->size == image_bytes && rc->hash == c.hash && rc->time == 77 &&
                      rc->module_id == 42, "cubin record fields");
                CHECK(ss_rec_fixed_size(SS_REC_CUBIN) == sizeof(ss_cubin_rec), "cubin fixed size");
                CHECK(memcmp(ss_rec_tail(h, sizeof *rc), image, image_bytes) == 0, "cubin image bytes");
            } else if (n == 1) {
                const ss_api_rec *ra = (const void *)h;
                const uint8_t *t = ss_rec_tail(h, sizeof *ra);
                CHECK(ra->nparams == 3 && (ra->flags & SS_API_F_PARAM_OFFSETS) && memcmp(t, vals, sizeof vals) == 0 &&
                      memcmp(t + sizeof vals, offs, sizeof offs) == 0, "api values and offsets");
            }
            n++;
        }
        CHECK(n == 2 && st == SS_READ_END, "%d records, status %d", n, st);
        ss_reader_close(r);
    }

    /* An API record that says it has offsets but holds only the values, and
     * a cubin record shorter than its size field: each block is rejected. */
    for (int k = 0; k < 2; k++) {
        char bad[512];
        snprintf(bad, sizeof bad, "%s/bad%d.sstrace", dir, k);
        CHECK(ss_writer_open(&w, bad, &hdr) == 0, "open %s", bad);
        used = 0;
        if (k == 0) {
            a = ss_rec_reserve(buf, sizeof buf, &used, SS_REC_API, sizeof *a, 4 * 8);
            a->nparams = 4;               /* 32 bytes of values; 40 with offsets */
            a->flags = SS_API_F_PARAM_OFFSETS;
        } else {
            ss_cubin_rec *cr = ss_rec_reserve(buf, sizeof buf, &used, SS_REC_CUBIN, sizeof *cr, 64);
            cr->size = 65;
        }
        CHECK(ss_writer_write_block(&w, buf, used, 1) == 0, "write bad block %d", k);
        ss_writer_close(&w);
        r = ss_reader_open(bad, err, sizeof err);
        CHECK(r != NULL, "open bad %d: %s", k, err);
        if (r) {
            const ss_rec_hdr *h;
            CHECK(ss_reader_next(r, &h) == SS_READ_TRUNCATED, "bad record %d accepted", k);
            ss_reader_close(r);
        }
    }
    free(image);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_round_trip();
    test_truncation();
    test_corruption();
    test_creation_policy();
    test_reserve_bounds();
    test_crc32_values();
    test_cubin_and_offsets();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
    if (failures) {
        fprintf(stderr, "test_trace_io: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_trace_io: ok\n");
    return 0;
}
