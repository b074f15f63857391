/*
 * libFuzzer target: the trace reader (common/trace_io.c) on arbitrary files.
 *
 * Beyond "does not crash", it holds the reader to the promises trace_io.h
 * makes to its callers, so that the analyzer may rely on them:
 *   - every record handed out is at least as large as its type's fixed
 *     struct, 8-byte aligned in size, and holds the tail it declares (the
 *     harness reads every declared byte, so ASan catches an overread);
 *   - iteration ends in SS_READ_END or SS_READ_TRUNCATED (with a reason), and
 *     stays ended;
 *   - the header's strings are NUL-terminated.
 * A broken promise aborts, which libFuzzer reports as a crash.
 *
 *   make fuzz FUZZ_SECONDS=600     (see docs/fuzzing.md)
 */
#include "fuzz_common.h"

#define PROMISE(cond)                                                                 \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "fuzz_reader: reader broke its promise: %s\n", #cond);    \
            abort();                                                                  \
        }                                                                             \
    } while (0)

/* Fold every byte of a range into a sum the compiler cannot drop, so that
 * ASan sees each read. */
static volatile uint8_t sink;
static void touch(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc ^= b[i];
    sink ^= acc;
}

/* The tail a record declares, read the way an analyzer reads it. */
static void consume(const ss_rec_hdr *h)
{
    uint32_t fixed = ss_rec_fixed_size(h->type);
    PROMISE(h->size >= sizeof *h && (h->size & 7u) == 0);
    if (!fixed) {             /* unknown type: skipped by size alone */
        touch(h, h->size);
        return;
    }
    PROMISE(h->size >= fixed);
    const uint8_t *tail = ss_rec_tail(h, fixed);
    switch (h->type) {
    case SS_REC_META: {
        const ss_meta_rec *m = (const void *)h;
        touch(tail, (size_t)m->key_len + 1 + m->value_len + 1);
        break;
    }
    case SS_REC_STRING:   touch(tail, ((const ss_string_rec *)(const void *)h)->len); break;
    case SS_REC_API_NAME: touch(tail, ((const ss_api_name_rec *)(const void *)h)->len); break;
    case SS_REC_API:      touch(tail, (size_t)((const ss_api_rec *)(const void *)h)->nparams * 8); break;
    case SS_REC_NOTE:     touch(tail, ((const ss_note_rec *)(const void *)h)->len); break;
    case SS_REC_THREAD:   touch(tail, ((const ss_thread_rec *)(const void *)h)->len); break;
    case SS_REC_STACK:    touch(tail, (size_t)((const ss_stack_rec *)(const void *)h)->depth * 8); break;
    case SS_REC_MODULE: {
        const ss_module_rec *m = (const void *)h;
        touch(tail, (size_t)m->path_len + m->build_id_len);
        break;
    }
    case SS_REC_PYSTACK:
        touch(tail, (size_t)((const ss_pystack_rec *)(const void *)h)->depth * sizeof(ss_pyframe));
        break;
    default:
        touch(h, fixed);
        break;
    }
}

static void read_all(const char *path)
{
    char err[256];
    err[0] = '\0';
    ss_reader *r = ss_reader_open(path, err, sizeof err);
    if (!r) {
        PROMISE(err[0] != '\0');
        return;
    }
    const ss_file_header *fh = ss_reader_header(r);
    PROMISE(memchr(fh->hostname, '\0', sizeof fh->hostname) != NULL);
    PROMISE(memchr(fh->shim_version, '\0', sizeof fh->shim_version) != NULL);
    const ss_rec_hdr *h;
    int rc;
    uint64_t n = 0;
    while ((rc = ss_reader_next(r, &h)) == SS_READ_OK) {
        consume(h);
        PROMISE(++n <= ss_reader_file_size(r) / sizeof(ss_rec_hdr));
    }
    PROMISE(rc == SS_READ_END || rc == SS_READ_TRUNCATED);
    if (rc == SS_READ_TRUNCATED)
        PROMISE(ss_reader_error(r)[0] != '\0');
    PROMISE(ss_reader_next(r, &h) == rc);   /* stays ended */
    ss_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_both_forms(data, size, read_all);
}
