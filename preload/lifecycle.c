/*
 * The shim's lifecycle, the top of its layers (preload/LAYERS): start-up
 * (constructor or InitializeInjection), what happens when the trace file is
 * created (the first block, exit and signal handlers, the writer thread),
 * the periodic flush, exit, fatal signals and fork().  It calls down into
 * every other layer; the only call back up is writer.c's open hooks, which
 * this file registers.
 *
 * Exit: the handlers flush the last CUPTI buffers, close open NVTX ranges,
 * write every buffer and end the trace with its notes (dropped records,
 * skipped module images, EXIT).  A fatal signal writes what was committed,
 * then the SIGNAL note, and re-raises.  fork(): the child forgets the
 * parent's file, buffers, strings and per-part state, and gets its own file
 * at its first record.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "writer.h"
#include "buffers.h"
#include "record.h"
#include "producers.h"
#include "syncsight/trace_io.h"

extern char **environ;

static pthread_once_t  init_once = PTHREAD_ONCE_INIT;
static ss_startup_note startup_note;        /* CUPTI or exact mode, for the first block */
static int             startup_note_printed;
static int             forked_child;
static pid_t           fork_parent;
static _Atomic int     finishing;           /* the exit path ran */
static _Atomic int     in_fatal_signal;
static int             final_flush_done;

static pthread_t       writer_thread;
static int             writer_running;
static int             writer_stop;
static pthread_mutex_t wake_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  wake_cv;
static int             sample_poke;         /* sampling switched on the hot path: CUPTI must follow */

static int              handlers_installed;
static struct sigaction old_actions[NSIG];

static void on_process_exit(int status, void *arg);

/* The one SS_NOTE_CUBIN_SKIPPED and SS_NOTE_CUBIN_COST of the trace, written
 * at its end (exit or fatal signal: the counts are final only then).  The
 * caller holds the output lock.  Async-signal-safe. */
static void write_cubin_note(void)
{
    uint64_t skipped = 0;
    const char *msg = ss_cubin_take_note(&skipped);
    if (msg)
        ss_output_write_note(SS_NOTE_CUBIN_SKIPPED, skipped, msg);
    uint64_t ns = 0;
    if ((msg = ss_cubin_take_cost(&ns)) != NULL)
        ss_output_write_note(SS_NOTE_CUBIN_COST, ns, msg);
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
        char sampling[64];
        ss_sampling_describe(sampling, sizeof sampling);
        put_meta_str(buf, cap, &used, &count, "sampling", sampling);
    }
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
    if (startup_note.code)
        notes[nnotes++] = (typeof(notes[0])){ startup_note.code, 0, startup_note.msg };
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

/* The writer thread is also sampling's controller (sampling.c): it sleeps
 * until the next flush or the next planned switch, whichever comes first, or
 * until a switch made on the hot path pokes it. */
static void *writer_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "syncsight-wr");
    uint64_t flush_ns = (uint64_t)ss_cfg.flush_ms * 1000000u;
    uint64_t next_flush = ss_now() + flush_ns;
    uint64_t next_switch = ss_sampling_tick();
    for (;;) {
        pthread_mutex_lock(&wake_mu);
        if (!writer_stop && !sample_poke) {
            uint64_t ns = next_switch && next_switch < next_flush ? next_switch : next_flush;
            struct timespec until = { .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };
            pthread_cond_timedwait(&wake_cv, &wake_mu, &until);
        }
        sample_poke = 0;
        int stop = writer_stop;
        pthread_mutex_unlock(&wake_mu);
        /* Only a failed output stops recording: nothing more to write. */
        if (stop || !ss_recording())
            break;
        next_switch = ss_sampling_tick();
        if (ss_now() < next_flush)
            continue;
        /* CUPTI hands over completed activity buffers on this thread; the
         * records it produces land in this thread's buffer and go out with
         * the flush right after. */
        if (ss_cupti_active())
            ss_cupti_flush(0);
        ss_output_lock();
        ss_output_refresh_limits();
        ss_buffers_flush(0);
        ss_output_unlock();
        next_flush = ss_now() + flush_ns;
    }
    return NULL;
}

/* sampling.c's hook. */
static void poke_controller(void)
{
    pthread_mutex_lock(&wake_mu);
    sample_poke = 1;
    pthread_cond_signal(&wake_cv);
    pthread_mutex_unlock(&wake_mu);
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
    if (!atomic_exchange(&in_fatal_signal, 1) && ss_output_is_open() &&
        ss_output_trylock_signal()) {
        ss_buffers_flush(1);
        uint64_t dropped = ss_buffers_dropped();
        if (dropped)
            ss_output_write_note(SS_NOTE_DROPPED_API, dropped, "records dropped: buffer pool full");
        write_cubin_note();
        ss_output_write_note(SS_NOTE_SIGNAL, (uint64_t)sig, "the program died of a signal");
        ss_output_unlock();
    }
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

/* ------------------------------------------------- the file is created */

/* writer.c's before_open hook: the first record that creates the file shows
 * CUDA use, so a CUPTI failure found at start-up is now worth a line on
 * stderr; the header says how calls were seen. */
static void before_open(ss_file_header *hdr)
{
    if (startup_note.code && startup_note.print_on_first_record && !startup_note_printed) {
        startup_note_printed = 1;
        fprintf(stderr, "syncsight: %s\n", startup_note.msg);
    }
    if (interposer_active())
        hdr->flags |= SS_FILE_F_INTERPOSER;
    if (ss_cupti_active())
        hdr->flags |= SS_FILE_F_CUPTI;
}

/* writer.c's after_open hook. */
static void after_open(void)
{
    /* Registered here as well as at init: exit handlers run in reverse order
     * of registration, and only one registered after the C library's own
     * registration of the library destructors (i.e. after main started)
     * runs while libcupti is still alive. */
    on_exit(on_process_exit, NULL);
    write_first_block();
    install_signal_handlers();
    start_writer_thread();
}

/* ---------------------------------------------------------------- exit */

/* Everything but the EXIT note: last CUPTI buffers, open NVTX ranges, the
 * closing clock pair, all buffers. */
static void final_flush(void)
{
    if (!final_flush_done) {
        final_flush_done = 1;
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
        ss_output_write_note(SS_NOTE_DROPPED_API, dropped, "records dropped: buffer pool full");
    uint64_t dropped_act = ss_cupti_dropped();
    if (dropped_act)
        ss_output_write_note(SS_NOTE_DROPPED_ACTIVITY, dropped_act, "CUPTI activity records dropped");
    write_cubin_note();
    ss_output_write_note(SS_NOTE_EXIT, (uint64_t)(uint32_t)status, "exit");
    ss_output_unlock();
}

/* The library destructor runs before our exit handler when the file was
 * created before main() (e.g. from a constructor): flush everything while
 * libcupti is still loaded, and leave the EXIT note (which needs the status)
 * to the exit handler that follows. */
__attribute__((destructor)) static void ss_lifecycle_fini(void)
{
    if (ss_output_is_open())
        final_flush();
}

/* ---------------------------------------------------------------- fork */

static void fork_prepare(void)
{
    ss_output_fork_prepare();
}

static void fork_parent_side(void)
{
    ss_output_fork_parent();
}

/* The child gets its own trace (pid in the name) at its first record; the
 * parent's descriptor, buffered records, string ids and per-part state are
 * not its own.  Only the forking thread exists here. */
static void fork_child_side(void)
{
    ss_tid_reset();
    ss_output_atfork_child();
    pthread_mutex_init(&wake_mu, NULL);
    fork_parent = getppid();
    forked_child = 1;
    writer_running = 0;
    writer_stop = 0;
    sample_poke = 0;
    atomic_store_explicit(&finishing, 0, memory_order_relaxed);
    atomic_store_explicit(&in_fatal_signal, 0, memory_order_relaxed);
    final_flush_done = 0;
    ss_buffers_atfork_child();
    ss_strings_reset();
    ss_recording_start();
    ss_api_atfork_child();
    ss_sampling_atfork_child();
    ss_cubin_atfork_child();
    ss_callsite_atfork_child();
    ss_selftest_run();
}

/* ---------------------------------------------------------------- init */

static void ss_init(void)
{
    ss_settings_read();
    if (ss_cfg.disabled)
        return;              /* no CUPTI, no handlers, no file: a plain program */
    ss_recording_start();
    static const ss_output_hooks hooks = { before_open, after_open };
    ss_output_set_hooks(&hooks);
    on_exit(on_process_exit, NULL);
    pthread_atfork(fork_prepare, fork_parent_side, fork_child_side);
    ss_api_init();
    ss_hostsync_init();
    ss_callsite_init();
    /* Exact memory mode takes the place of CUPTI.  Measured (H100, CUDA
     * 13.0): the Sanitizer API and CUPTI share one callback slot.  Sanitizer
     * first: cuptiSubscribe fails (MULTIPLE_SUBSCRIBERS); CUPTI first:
     * sanitizerSubscribe succeeds but delivers no callback at all. */
    if (ss_cfg.exact_memory && ss_exact_memory_start()) {
        /* Every launch's kernel accesses are recorded: nothing is sampled. */
        ss_cfg.sample = 0;
        startup_note.code = SS_NOTE_CUPTI_UNAVAILABLE;
        startup_note.print_on_first_record = 1;
        snprintf(startup_note.msg, sizeof startup_note.msg, "%s",
                 "exact memory mode: CUPTI is not used (the CUDA Sanitizer API holds its "
                 "callback slot): no GPU activity timeline; calls are recorded through the "
                 "Sanitizer's callbacks");
    } else if (ss_cfg.cupti) {
        ss_cupti_start(&startup_note);
    }
    ss_sampling_set_wake(poke_controller);
    ss_sampling_init();
    ss_selftest_run();
}

__attribute__((constructor)) static void ss_constructor(void)
{
    pthread_once(&init_once, ss_init);
}

/* Entry point for CUDA_INJECTION64_PATH=libsyncsight.so: the driver calls it
 * from cuInit, which also works for statically linked cudart. */
SS_EXPORT int InitializeInjection(void)
{
    pthread_once(&init_once, ss_init);
    return 1;
}
