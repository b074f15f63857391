/*
 * The trace file of one process and everything that decides when it is
 * written: lazy creation at the first record, the writer thread, the exit
 * path, fatal signals, fork() and write failures.
 *
 * Locking: one "output lock" serializes every write to the file.  It is a
 * tid-owned spin/sleep lock rather than a pthread mutex because the fatal
 * signal handler must be able to tell whether its own thread already holds
 * it (then it must not flush) and must be able to give up after a bounded
 * wait; both need only atomics and nanosleep(), which are async-signal-safe.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "syncsight/trace_io.h"

extern char **environ;

enum out_state { OUT_NONE = 0, OUT_OPEN = 1, OUT_FAILED = 2 };

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int     out_state;
int                    ss_output_opened;    /* hot-path copy of out_state == OUT_OPEN */
static ss_writer       writer = { .fd = -1 };
static char            trace_path[PATH_MAX];
static _Atomic uint32_t out_lock_owner;     /* tid holding the output lock, 0 = free */
static uint64_t        fsize_max = UINT64_MAX;  /* RLIMIT_FSIZE soft limit in bytes */
static int             write_failed;
static int             forked_child;
static pid_t           fork_parent;
static _Atomic int     finishing;           /* the exit path ran */
static _Atomic int     in_fatal_signal;

/* What CUPTI loading found out before there was a file to say it in. */
static struct {
    int      set;
    uint32_t code;              /* 0: nothing to note, only the META value */
    char     meta[160];
    char     msg[320];
    int      print_on_first_record;
    int      printed;
} deferred;

static pthread_t       writer_thread;
static int             writer_running;
static int             writer_stop;
static pthread_mutex_t wake_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  wake_cv;

static int              handlers_installed;
static struct sigaction old_actions[NSIG];

static __thread int tls_in_signal;
static int cupti_final_done;
static void on_process_exit(int status, void *arg);

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

/* From a signal handler: 0 when this thread already holds the lock (it was
 * interrupted mid-write) or another thread kept it for ~100 ms. */
int ss_output_trylock_signal(void)
{
    uint32_t me = ss_tid();
    for (int attempt = 0; attempt < 2000; attempt++) {
        uint32_t owner = 0;
        if (atomic_compare_exchange_strong_explicit(&out_lock_owner, &owner, me,
                                                    memory_order_acquire, memory_order_relaxed))
            return 1;
        if (owner == me)
            return 0;
        struct timespec ts = { 0, 50000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}

void ss_output_unlock(void)
{
    atomic_store_explicit(&out_lock_owner, 0, memory_order_release);
}

int ss_output_is_open(void)
{
    return atomic_load_explicit(&out_state, memory_order_acquire) == OUT_OPEN;
}

void ss_output_set_deferred_note(uint32_t code, const char *meta_value, const char *msg,
                                 int print_on_first_record)
{
    deferred.code = code;
    snprintf(deferred.meta, sizeof deferred.meta, "%s", meta_value ? meta_value : "");
    snprintf(deferred.msg, sizeof deferred.msg, "%s", msg ? msg : "");
    deferred.print_on_first_record = print_on_first_record;
    deferred.set = 1;
}

/* ------------------------------------------------------- small records */

/* A NOTE block built on the stack and written directly: used where the
 * buffers may be full or must not be touched (exit, signals, failures).
 * Only memset/clock_gettime/writev underneath: async-signal-safe. */
static void write_note_direct(uint32_t code, uint64_t value, const char *msg)
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

/* The one SS_NOTE_CUBIN_SKIPPED of the trace, written at its end (exit or
 * fatal signal: the count is final only then).  Async-signal-safe. */
static void write_cubin_note(void)
{
    uint64_t skipped = 0;
    const char *msg = ss_cubin_take_note(&skipped);
    if (msg)
        write_note_direct(SS_NOTE_CUBIN_SKIPPED, skipped, msg);
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

static void refresh_fsize_limit(void)
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

/* ----------------------------------------------------- the first block */

static void put_meta(char *buf, uint32_t cap, uint32_t *used, uint32_t *count,
                     const char *key, const char *value, uint32_t value_len)
{
    uint32_t key_len = (uint32_t)strlen(key);
    ss_meta_rec *m = ss_rec_reserve(buf, cap, used, SS_REC_META, sizeof(ss_meta_rec),
                                    key_len + 1 + value_len + 1);
    if (!m)
        return;
    m->key_len = key_len;
    m->value_len = value_len;
    char *tail = (char *)(m + 1);
    memcpy(tail, key, key_len);
    memcpy(tail + key_len + 1, value, value_len);
    (*count)++;
}

static void put_meta_str(char *buf, uint32_t cap, uint32_t *used, uint32_t *count,
                         const char *key, const char *value)
{
    put_meta(buf, cap, used, count, key, value, (uint32_t)strlen(value));
}

static int interposer_active(void)
{
    /* Our exported CUDA entry points win symbol lookup only when the library
     * was preloaded; loaded through CUDA_INJECTION64_PATH it is RTLD_LOCAL
     * and only the CUPTI callbacks see calls. */
    Dl_info self, found;
    void *sym = dlsym(RTLD_DEFAULT, "cudaMalloc");
    return sym && dladdr((void *)ss_now, &self) && dladdr(sym, &found) &&
           self.dli_fbase == found.dli_fbase;
}

static void write_first_block(void)
{
    uint32_t cap = 64 * 1024, used = 0, count = 0;
    char *buf = aligned_alloc(8, cap);
    if (!buf)
        return;

    char text[16384];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        if (n > 0) {
            /* argv is NUL-separated; readers want one line (they escape it). */
            for (ssize_t i = 0; i < n; i++)
                if (text[i] == '\0')
                    text[i] = ' ';
            while (n > 0 && text[n - 1] == ' ')
                n--;
            put_meta(buf, cap, &used, &count, "cmdline", text, (uint32_t)n);
        }
    }
    ssize_t n = readlink("/proc/self/exe", text, sizeof text - 1);
    if (n > 0)
        put_meta(buf, cap, &used, &count, "exe", text, (uint32_t)n);
    if (getcwd(text, sizeof text))
        put_meta_str(buf, cap, &used, &count, "cwd", text);
    put_meta_str(buf, cap, &used, &count, "cupti", ss_cupti_status());
    {
        /* CLOCK_MONOTONIC_RAW - CLOCK_MONOTONIC at this moment: what a tool
         * on the raw clock (Nsight Systems) needs to place our times
         * (syncsight export --format nvtxt reads it). */
        struct timespec mono, raw;
        clock_gettime(CLOCK_MONOTONIC, &mono);
        clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
        int64_t diff = ((int64_t)raw.tv_sec - (int64_t)mono.tv_sec) * 1000000000 +
                       ((int64_t)raw.tv_nsec - (int64_t)mono.tv_nsec);
        char num[32];
        snprintf(num, sizeof num, "%lld", (long long)diff);
        put_meta_str(buf, cap, &used, &count, "clock.monotonic_raw_minus_monotonic_ns", num);
    }
    put_meta_str(buf, cap, &used, &count, "interposer",
                 interposer_active() ? "active (LD_PRELOAD)"
                                     : "inactive (calls seen through CUPTI callbacks only)");
    /* The shim's own settings, and the CUDA/PyTorch settings that decide how
     * streams map to hardware queues, when modules load, whether launches
     * block (CUDA_DEVICE_MAX_CONNECTIONS, CUDA_MODULE_LOADING,
     * CUDA_LAUNCH_BLOCKING, CUDA_VISIBLE_DEVICES, PYTORCH_CUDA_ALLOC_CONF...):
     * the analyzer reads them as env.<NAME>. */
    static const char *const env_prefixes[] = { "SYNCSIGHT_", "CUDA_", "PYTORCH_CUDA_", "PYTORCH_NO_CUDA_",
                                                "NCCL_", "TORCH_NCCL_" };
    for (char **e = environ; e && *e; e++) {
        int keep = 0;
        for (size_t k = 0; k < sizeof env_prefixes / sizeof env_prefixes[0] && !keep; k++)
            keep = strncmp(*e, env_prefixes[k], strlen(env_prefixes[k])) == 0;
        if (!keep)
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        char key[128];
        snprintf(key, sizeof key, "env.%.*s", (int)(eq - *e), *e);
        put_meta_str(buf, cap, &used, &count, key, eq + 1);
    }

    uint64_t cupti_ts = ss_cupti_timestamp();
    if (cupti_ts) {
        ss_clock_rec *c = ss_rec_reserve(buf, cap, &used, SS_REC_CLOCK, sizeof *c, 0);
        if (c) {
            c->trace_ns = ss_now();
            c->cupti_ns = cupti_ts;
            count++;
        }
    }

    struct { uint32_t code; uint64_t value; const char *msg; } notes[2];
    int nnotes = 0;
    char fork_msg[96];
    if (deferred.set && deferred.code)
        notes[nnotes++] = (typeof(notes[0])){ deferred.code, 0, deferred.msg };
    if (forked_child) {
        snprintf(fork_msg, sizeof fork_msg, "fork() child of pid %ld", (long)fork_parent);
        notes[nnotes++] = (typeof(notes[0])){ SS_NOTE_FORKED, (uint64_t)fork_parent, fork_msg };
    }
    for (int i = 0; i < nnotes; i++) {
        uint32_t len = (uint32_t)strlen(notes[i].msg);
        ss_note_rec *r = ss_rec_reserve(buf, cap, &used, SS_REC_NOTE, sizeof *r, len);
        if (!r)
            continue;
        r->code = notes[i].code;
        r->len = len;
        r->value = notes[i].value;
        r->time = ss_now();
        memcpy(r + 1, notes[i].msg, len);
        count++;
    }
    ss_output_lock();
    ss_output_write_block(buf, used, count);
    ss_output_unlock();
    free(buf);
}

/* ------------------------------------------------------ writer thread */

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "syncsight-wr");
    for (;;) {
        pthread_mutex_lock(&wake_mu);
        if (!writer_stop) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)ss_cfg.flush_ms * 1000000u;
            until.tv_sec += (time_t)(ns / 1000000000u);
            until.tv_nsec = (long)(ns % 1000000000u);
            pthread_cond_timedwait(&wake_cv, &wake_mu, &until);
        }
        int stop = writer_stop;
        pthread_mutex_unlock(&wake_mu);
        if (stop || write_failed)
            break;
        /* CUPTI hands over completed activity buffers on this thread; the
         * records it produces land in this thread's buffer and go out with
         * the flush right after. */
        if (ss_cupti_active())
            ss_cupti_flush(0);
        ss_output_lock();
        refresh_fsize_limit();
        ss_buffers_flush(0);
        ss_output_unlock();
    }
    return NULL;
}

static void start_writer_thread(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake_cv, &ca);
    pthread_condattr_destroy(&ca);
    writer_stop = 0;

    /* The writer must never receive the program's signals (a SIGINT handler
     * of the program running on our thread, say): it starts with all of them
     * blocked, inherited from the mask set around pthread_create. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    writer_running = pthread_create(&writer_thread, NULL, writer_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (writer_running)
        pthread_detach(writer_thread);
}

static void stop_writer_thread(void)
{
    if (!writer_running)
        return;
    pthread_mutex_lock(&wake_mu);
    writer_stop = 1;
    pthread_cond_signal(&wake_cv);
    pthread_mutex_unlock(&wake_mu);
    /* Not joined: exit() may run on a thread while the writer sits in a CUPTI
     * flush; the output lock is what keeps the two apart. */
    writer_running = 0;
}

/* --------------------------------------------------------- fatal signals */

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved_errno = errno;
    tls_in_signal = 1;
    if (!atomic_exchange(&in_fatal_signal, 1) && ss_output_is_open() &&
        ss_output_trylock_signal()) {
        ss_buffers_flush(1);
        uint64_t dropped = ss_buffers_dropped();
        if (dropped)
            write_note_direct(SS_NOTE_DROPPED_API, dropped, "records dropped: buffer pool full");
        write_cubin_note();
        write_note_direct(SS_NOTE_SIGNAL, (uint64_t)sig, "the program died of a signal");
        ss_output_unlock();
    }
    tls_in_signal = 0;
    sigaction(sig, &old_actions[sig], NULL);
    /* A fault raised by the hardware re-executes the faulting instruction
     * when we return and so reaches the previous disposition with its real
     * siginfo; anything else (abort(), kill) is raised again, to be taken
     * by the previous disposition once this handler returns. */
    int hw_fault = (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) &&
                   si && si->si_code > 0;
    if (!hw_fault)
        raise(sig);
    errno = saved_errno;
}

static void install_signal_handlers(void)
{
    if (handlers_installed)
        return;
    handlers_installed = 1;
    static const int always[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    static const int if_default[] = { SIGTERM, SIGINT };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        sigaction(always[i], &sa, &old_actions[always[i]]);
    for (size_t i = 0; i < sizeof if_default / sizeof if_default[0]; i++) {
        struct sigaction cur;
        if (sigaction(if_default[i], NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
            cur.sa_handler == SIG_DFL)
            sigaction(if_default[i], &sa, &old_actions[if_default[i]]);
    }
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
    /* This is the process's first record: it does use CUDA, so a CUPTI
     * failure found at startup is now worth a line on stderr. */
    if (deferred.set && deferred.print_on_first_record && !deferred.printed) {
        deferred.printed = 1;
        fprintf(stderr, "syncsight: %s\n", deferred.msg);
    }
    int rc = make_trace_path(trace_path, sizeof trace_path);
    if (rc == 0) {
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        ss_file_header hdr;
        ss_file_header_init(&hdr, ss_now(), (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
        if (interposer_active())
            hdr.flags |= SS_FILE_F_INTERPOSER;
        if (ss_cupti_active())
            hdr.flags |= SS_FILE_F_CUPTI;
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
    refresh_fsize_limit();
    atomic_store_explicit(&out_state, OUT_OPEN, memory_order_release);
    __atomic_store_n(&ss_output_opened, 1, __ATOMIC_RELEASE);
    /* Registered here as well as at init: exit handlers run in reverse order
     * of registration, and only one registered after the C library's own
     * registration of the library destructors (i.e. after main started)
     * runs while libcupti is still alive. */
    on_exit(on_process_exit, NULL);
    write_first_block();
    install_signal_handlers();
    start_writer_thread();
    pthread_mutex_unlock(&open_mu);
    return 0;
}

/* ---------------------------------------------------------------- exit */

/* Everything but the EXIT note: last CUPTI buffers, open NVTX ranges, the
 * closing clock pair, all buffers. */
static void final_flush(void)
{
    if (!cupti_final_done) {
        cupti_final_done = 1;
        stop_writer_thread();
        if (ss_cupti_active())
            ss_cupti_flush(1);
        ss_nvtx_close_open_ranges();
        uint64_t cupti_ts = ss_cupti_timestamp();
        if (cupti_ts) {
            ss_clock_rec *c = ss_rec_begin(SS_REC_CLOCK, sizeof *c, 0);
            if (c) {
                c->trace_ns = ss_now();
                c->cupti_ns = cupti_ts;
                ss_rec_commit(c);
            }
        }
    }
    ss_output_lock();
    ss_buffers_flush(0);
    ss_output_unlock();
}

/* exit(), return from main, exit() from any thread: on_exit gives us the
 * status.  Registered twice (init and file creation); the first to run
 * finishes the trace, later ones only flush what was recorded since. */
static void on_process_exit(int status, void *arg)
{
    (void)arg;
    if (!ss_output_is_open())
        return;
    if (atomic_exchange(&finishing, 1)) {
        ss_output_lock();
        ss_buffers_flush(0);
        ss_output_unlock();
        return;
    }
    final_flush();
    ss_output_lock();
    uint64_t dropped = ss_buffers_dropped();
    if (dropped)
        write_note_direct(SS_NOTE_DROPPED_API, dropped, "records dropped: buffer pool full");
    uint64_t dropped_act = ss_cupti_dropped();
    if (dropped_act)
        write_note_direct(SS_NOTE_DROPPED_ACTIVITY, dropped_act, "CUPTI activity records dropped");
    write_cubin_note();
    write_note_direct(SS_NOTE_EXIT, (uint64_t)(uint32_t)status, "exit");
    ss_output_unlock();
}

/* The library destructor runs before our exit handler when the file was
 * created before main() (e.g. from a constructor): flush everything while
 * libcupti is still loaded, and leave the EXIT note (which needs the status)
 * to the exit handler that follows. */
__attribute__((destructor)) static void ss_output_fini(void)
{
    if (ss_output_is_open())
        final_flush();
}

/* ---------------------------------------------------------------- fork */

static void fork_prepare(void)
{
    pthread_mutex_lock(&open_mu);
    ss_output_lock();
}

static void fork_parent_side(void)
{
    ss_output_unlock();
    pthread_mutex_unlock(&open_mu);
}

/* The child gets its own trace (pid in the name) at its first record; the
 * parent's descriptor and buffered records are not its to write. */
static void fork_child_side(void)
{
    pthread_mutex_init(&open_mu, NULL);
    pthread_mutex_init(&wake_mu, NULL);
    ss_tid_reset();
    atomic_store_explicit(&out_lock_owner, 0, memory_order_relaxed);
    if (writer.fd >= 0)
        ss_writer_close(&writer);
    fork_parent = getppid();
    forked_child = 1;
    writer_running = 0;
    writer_stop = 0;
    write_failed = 0;
    trace_path[0] = '\0';
    atomic_store_explicit(&finishing, 0, memory_order_relaxed);
    atomic_store_explicit(&in_fatal_signal, 0, memory_order_relaxed);
    atomic_store_explicit(&out_state, OUT_NONE, memory_order_release);
    __atomic_store_n(&ss_output_opened, 0, __ATOMIC_RELEASE);
    cupti_final_done = 0;
    ss_buffers_atfork_child();
    ss_strings_reset();
    ss_recording_reset_after_fork();
    ss_api_atfork_child();
    ss_cubin_atfork_child();
    ss_callsite_atfork_child();
    ss_selftest_after_fork();
}

void ss_output_init(void)
{
    on_exit(on_process_exit, NULL);
    pthread_atfork(fork_prepare, fork_parent_side, fork_child_side);
}
