/*
 * The trace file of one process (writer.h): its name, its creation at the
 * first record that shows CUDA use, the output lock, block writes and write
 * failures (RLIMIT_FSIZE, a full disk).  What the file says first and what
 * starts once it exists (exit and signal handlers, the flush thread) is left
 * to the open hooks that lifecycle.c registers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "writer.h"
#include "syncsight/trace_io.h"

enum out_state { OUT_NONE = 0, OUT_OPEN = 1, OUT_FAILED = 2 };

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int     out_state;
int                    ss_output_opened;    /* hot-path copy of out_state == OUT_OPEN */
static ss_writer       writer = { .fd = -1 };
static char            trace_path[PATH_MAX];
static _Atomic uint32_t out_lock_owner;     /* tid holding the output lock, 0 = free */
static uint64_t        fsize_max = UINT64_MAX;  /* RLIMIT_FSIZE soft limit in bytes */
static int             write_failed;
static int             forked_child;        /* this process is a fork() child */
static ss_output_hooks hooks;
static __thread int    tls_in_signal;       /* the lock was taken by a signal handler */

void ss_output_set_hooks(const ss_output_hooks *h)
{
    hooks = *h;
}

/* ------------------------------------------------------------ the lock */

void ss_output_lock(void)
{
    uint32_t me = ss_tid();
    for (;;) {
        uint32_t free_owner = 0;
        if (atomic_compare_exchange_weak_explicit(&out_lock_owner, &free_owner, me,
                                                  memory_order_acquire, memory_order_relaxed))
            return;
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);
    }
}

int ss_output_trylock_signal(void)
{
    uint32_t me = ss_tid();
    for (int attempt = 0; attempt < 2000; attempt++) {
        uint32_t owner = 0;
        if (atomic_compare_exchange_strong_explicit(&out_lock_owner, &owner, me,
                                                    memory_order_acquire, memory_order_relaxed)) {
            tls_in_signal = 1;
            return 1;
        }
        if (owner == me)
            return 0;
        struct timespec ts = { 0, 50000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}

void ss_output_unlock(void)
{
    tls_in_signal = 0;
    atomic_store_explicit(&out_lock_owner, 0, memory_order_release);
}

int ss_output_is_open(void)
{
    return atomic_load_explicit(&out_state, memory_order_acquire) == OUT_OPEN;
}

/* ------------------------------------------------------- small records */

/* Only memset/clock_gettime/writev underneath: async-signal-safe. */
void ss_output_write_note(uint32_t code, uint64_t value, const char *msg)
{
    char block[512] __attribute__((aligned(8)));
    uint32_t used = 0;
    uint32_t len = (uint32_t)strnlen(msg, 400);
    ss_note_rec *n = ss_rec_reserve(block, sizeof block, &used, SS_REC_NOTE,
                                    sizeof(ss_note_rec), len);
    if (!n)
        return;
    n->code = code;
    n->len = len;
    n->value = value;
    n->time = ss_now();
    memcpy(n + 1, msg, len);
    ss_output_write_block(block, used, 1);
}


/* ------------------------------------------------------- write failures */

static void output_failed(int err, int hit_rlimit)
{
    if (write_failed)
        return;
    write_failed = 1;
    ss_recording_stop();
    if (hit_rlimit) {
        /* The file is still intact below the limit: say why it ends, if the
         * note itself fits. */
        const char *msg = "trace stopped at the file size limit (RLIMIT_FSIZE)";
        uint64_t note_bytes = sizeof(ss_block_header) + SS_REC_ALIGN(sizeof(ss_note_rec) + strlen(msg));
        if (writer.bytes_written + note_bytes <= fsize_max) {
            char block[256] __attribute__((aligned(8)));
            uint32_t used = 0;
            uint32_t len = (uint32_t)strlen(msg);
            ss_note_rec *n = ss_rec_reserve(block, sizeof block, &used, SS_REC_NOTE,
                                            sizeof(ss_note_rec), len);
            if (n) {
                n->code = SS_NOTE_TRACE_INCOMPLETE;
                n->len = len;
                n->value = (uint64_t)err;
                n->time = ss_now();
                memcpy(n + 1, msg, len);
                ss_writer_write_block(&writer, block, used, 1);
            }
        }
    }
    if (tls_in_signal)
        return;         /* stdio and strerror are not async-signal-safe */
    fprintf(stderr, "syncsight: writing %s failed (%s): the trace is incomplete; "
            "the program continues untraced\n", trace_path,
            hit_rlimit ? "file size limit reached" : strerror(err));
}

/* One block from `nparts` pieces; the caller holds the output lock. */
static int write_parts(const struct iovec *parts, int nparts, uint64_t bytes, uint32_t count)
{
    if (atomic_load_explicit(&out_state, memory_order_acquire) != OUT_OPEN || write_failed)
        return -1;
    if (bytes == 0)
        return 0;
    /* Check RLIMIT_FSIZE ourselves: exceeding it would raise SIGXFSZ, whose
     * default action kills the program because of the trace. */
    if (fsize_max != UINT64_MAX &&
        writer.bytes_written + sizeof(ss_block_header) + bytes > fsize_max) {
        output_failed(EFBIG, 1);
        return -1;
    }
    int rc = ss_writer_write_blockv(&writer, parts, nparts, count);
    if (rc < 0) {
        output_failed(-rc, 0);
        return -1;
    }
    return 0;
}

int ss_output_write_block(const void *payload, uint32_t bytes, uint32_t count)
{
    struct iovec part = { .iov_base = (void *)payload, .iov_len = bytes };
    return write_parts(&part, 1, bytes, count);
}

int ss_output_write_big_record(const void *fixed, uint32_t fixed_bytes, const void *tail,
                               uint32_t tail_bytes)
{
    static const uint8_t zeros[8];
    uint64_t bytes = (uint64_t)fixed_bytes + tail_bytes;
    uint64_t padded = (bytes + 7u) & ~(uint64_t)7u;
    if (fixed_bytes < sizeof(ss_rec_hdr) || padded > SS_BLOCK_MAX_PAYLOAD ||
        ((const ss_rec_hdr *)fixed)->size != padded)
        return -1;
    /* A module load is CUDA use: like the first such record, it creates the file. */
    if (!ss_recording() || ss_output_start() != 0)
        return -1;
    struct iovec parts[3] = {
        { .iov_base = (void *)fixed, .iov_len = fixed_bytes },
        { .iov_base = (void *)tail, .iov_len = tail_bytes },
        { .iov_base = (void *)zeros, .iov_len = (size_t)(padded - bytes) },
    };
    ss_output_lock();
    int rc = write_parts(parts, 3, padded, 1);
    ss_output_unlock();
    return rc;
}

void ss_output_refresh_limits(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        fsize_max = (uint64_t)rl.rlim_cur;
    else
        fsize_max = UINT64_MAX;
}

/* --------------------------------------------------------- file naming */

static void exe_basename(char *out, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const char *base = program_invocation_short_name;
    if (n > 0) {
        exe[n] = '\0';
        const char *slash = strrchr(exe, '/');
        base = slash ? slash + 1 : exe;
    }
    if (!base || !*base)
        base = "unknown";
    size_t len = strnlen(base, cap - 1);
    memcpy(out, base, len);
    out[len] = '\0';
}

/* Set when the output directory itself could not be created, so that the
 * one stderr line names the directory and the reason. */
static int dir_failed;

static int make_trace_path(char *out, size_t cap)
{
    dir_failed = 0;
    pid_t pid = getpid();
    const char *file = getenv("SYNCSIGHT_OUTPUT_FILE");
    if (file && *file) {
        /* `syncsight run` sets ROOT_PID to the program it started: that
         * process gets the exact name, its children get name.<pid>. */
        const char *root = getenv("SYNCSIGHT_ROOT_PID");
        int exact = root && *root ? (atol(root) == (long)pid) : !forked_child;
        int n = exact ? snprintf(out, cap, "%s", file)
                      : snprintf(out, cap, "%s.%ld", file, (long)pid);
        return (n > 0 && (size_t)n < cap) ? 0 : -ENAMETOOLONG;
    }
    const char *dir = getenv("SYNCSIGHT_OUTPUT_DIR");
    if (!dir || !*dir)
        dir = "./syncsight.data";
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        int err = errno;
        /* Name the directory, not a file that was never tried. */
        snprintf(out, cap, "%s", dir);
        dir_failed = 1;
        return -err;
    }
    char base[256];
    exe_basename(base, sizeof base);
    int n = snprintf(out, cap, "%s/%s.%ld.sstrace", dir, base, (long)pid);
    return (n > 0 && (size_t)n < cap) ? 0 : -ENAMETOOLONG;
}

/* --------------------------------------------------------------- open */

int ss_output_start(void)
{
    int st = atomic_load_explicit(&out_state, memory_order_acquire);
    if (st == OUT_OPEN)
        return 0;
    if (st == OUT_FAILED)
        return -1;
    pthread_mutex_lock(&open_mu);
    st = atomic_load_explicit(&out_state, memory_order_acquire);
    if (st != OUT_NONE) {
        pthread_mutex_unlock(&open_mu);
        return st == OUT_OPEN ? 0 : -1;
    }
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    ss_file_header hdr;
    ss_file_header_init(&hdr, ss_now(), (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
    if (hooks.before_open)
        hooks.before_open(&hdr);
    /* The block checksum's library is dlopen'ed at its first use: here, once,
     * rather than inside the first flush. */
    (void)ss_crc32_impl();
    int rc = make_trace_path(trace_path, sizeof trace_path);
    if (rc == 0) {
        rc = ss_writer_open(&writer, trace_path, &hdr);
        /* Without ROOT_PID any process of the tree may come first to the
         * exact name (another one exec'ed in the same pid, a spawned child):
         * the later ones take name.<pid>. */
        const char *file = getenv("SYNCSIGHT_OUTPUT_FILE"), *root = getenv("SYNCSIGHT_ROOT_PID");
        if (rc == -EEXIST && file && *file && !(root && *root) &&
            snprintf(trace_path, sizeof trace_path, "%s.%ld", file, (long)getpid()) <
                (int)sizeof trace_path)
            rc = ss_writer_open(&writer, trace_path, &hdr);
    }
    if (rc < 0) {
        if (dir_failed)
            fprintf(stderr, "syncsight: cannot create trace directory %s: %s (SYNCSIGHT_OUTPUT_DIR; "
                    "only its last component is created); the program runs untraced\n",
                    trace_path, strerror(-rc));
        else
            fprintf(stderr, "syncsight: cannot create trace file %s: %s; the program runs untraced\n",
                    trace_path[0] ? trace_path : "(name too long)", strerror(-rc));
        atomic_store_explicit(&out_state, OUT_FAILED, memory_order_release);
        ss_recording_stop();
        pthread_mutex_unlock(&open_mu);
        return -1;
    }
    write_failed = 0;
    ss_output_refresh_limits();
    atomic_store_explicit(&out_state, OUT_OPEN, memory_order_release);
    __atomic_store_n(&ss_output_opened, 1, __ATOMIC_RELEASE);
    if (hooks.after_open)
        hooks.after_open();
    pthread_mutex_unlock(&open_mu);
    return 0;
}

/* ---------------------------------------------------------------- fork */

void ss_output_fork_prepare(void)
{
    pthread_mutex_lock(&open_mu);
    ss_output_lock();
}

void ss_output_fork_parent(void)
{
    ss_output_unlock();
    pthread_mutex_unlock(&open_mu);
}

/* The parent's descriptor is not the child's to write: the child creates its
 * own trace at its first record. */
void ss_output_atfork_child(void)
{
    pthread_mutex_init(&open_mu, NULL);
    atomic_store_explicit(&out_lock_owner, 0, memory_order_relaxed);
    if (writer.fd >= 0)
        ss_writer_close(&writer);
    forked_child = 1;
    write_failed = 0;
    trace_path[0] = '\0';
    atomic_store_explicit(&out_state, OUT_NONE, memory_order_release);
    __atomic_store_n(&ss_output_opened, 0, __ATOMIC_RELEASE);
}
