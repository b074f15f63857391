/*
 * syncsight shim runtime: initialization, settings, the trace clock, thread
 * ids, string interning and notes.  The rest of the runtime part lives in
 * buffers.c (per-thread record buffers), output.c (the file, writer thread,
 * exit/signal/fork handling), cupti.c (CUPTI loading, callbacks, activity)
 * and nvtx.c (NVTX emission and capture).  See docs/shim.md.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

#define SS_EXPORT __attribute__((visibility("default")))

ss_settings ss_cfg = {
    .cupti = 1, .nvtx_emit = 1, .stacks = 1, .flush_ms = 200,
    .cubin_mb = 64, .cubin_image_mb = 8,
    .activity_mask = SS_ACT_KERNEL | SS_ACT_MEMCPY | SS_ACT_MEMSET | SS_ACT_SYNC |
                     SS_ACT_EVENT | SS_ACT_STREAM | SS_ACT_CONTEXT | SS_ACT_JIT,
};

int ss_rec_enabled;                 /* read on the hot path */
static int disabled_by_env;         /* SYNCSIGHT_DISABLE=1 */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------- clock and tids */

uint64_t ss_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __thread uint32_t tls_tid;

uint32_t ss_tid(void)
{
    if (__builtin_expect(tls_tid == 0, 0))
        tls_tid = (uint32_t)syscall(SYS_gettid);
    return tls_tid;
}

void ss_tid_reset(void)
{
    tls_tid = 0;
}

int ss_recording(void)
{
    return __atomic_load_n(&ss_rec_enabled, __ATOMIC_RELAXED);
}

void ss_recording_stop(void)
{
    __atomic_store_n(&ss_rec_enabled, 0, __ATOMIC_RELAXED);
}

void ss_recording_reset_after_fork(void)
{
    __atomic_store_n(&ss_rec_enabled, !disabled_by_env, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------- settings */

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long n = strtol(v, &end, 10);
    return (*end == '\0') ? (int)n : def;
}

static uint32_t parse_activity(const char *list)
{
    static const struct { const char *name; uint32_t bit; } kinds[] = {
        { "kernel", SS_ACT_KERNEL }, { "memcpy", SS_ACT_MEMCPY }, { "memset", SS_ACT_MEMSET },
        { "sync", SS_ACT_SYNC },     { "event", SS_ACT_EVENT },   { "stream", SS_ACT_STREAM },
        { "context", SS_ACT_CONTEXT }, { "jit", SS_ACT_JIT },
    };
    uint32_t all = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        all |= kinds[k].bit;
    uint32_t mask = 0;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 3 && strncmp(p, "all", 3) == 0)
            mask |= all;
        else if (len == 4 && strncmp(p, "none", 4) == 0)
            mask = 0;
        else {
            int known = 0;
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
                if (strlen(kinds[k].name) == len && strncmp(p, kinds[k].name, len) == 0) {
                    mask |= kinds[k].bit;
                    known = 1;
                }
            if (!known && len)
                fprintf(stderr, "syncsight: SYNCSIGHT_ACTIVITY: unknown kind '%.*s' ignored\n",
                        (int)(len > 32 ? 32 : len), p);
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return mask;
}

static void read_settings(void)
{
    disabled_by_env = env_int("SYNCSIGHT_DISABLE", 0) != 0;
    ss_cfg.cupti = env_int("SYNCSIGHT_CUPTI", 1) != 0;
    ss_cfg.nvtx_emit = env_int("SYNCSIGHT_NVTX", 1) != 0;
    ss_cfg.stacks = env_int("SYNCSIGHT_STACKS", 1);
    int flush = env_int("SYNCSIGHT_FLUSH_MS", 200);
    ss_cfg.flush_ms = flush < 10 ? 10 : (flush > 60000 ? 60000 : (uint32_t)flush);
    const char *act = getenv("SYNCSIGHT_ACTIVITY");
    if (act && *act)
        ss_cfg.activity_mask = parse_activity(act);
    int mb = env_int("SYNCSIGHT_BUFFER_MB", 64);
    ss_buffers_set_total_mb(mb > 0 ? (uint32_t)mb : 64);
    /* Module images: 0 turns capture off; an image is one block, and a block
     * holds at most SS_BLOCK_MAX_PAYLOAD (16 MiB) with the record header. */
    int cubin = env_int("SYNCSIGHT_CUBIN_MB", 64);
    ss_cfg.cubin_mb = cubin < 0 ? 64 : (cubin > 65536 ? 65536 : (uint32_t)cubin);
    int image = env_int("SYNCSIGHT_CUBIN_IMAGE_MB", 8);
    ss_cfg.cubin_image_mb = image < 1 ? 8 : (image > 15 ? 15 : (uint32_t)image);
}

/* ------------------------------------------------------ string interning */

/* Open-addressing table of texts already written in this trace.  Kernel
 * names repeat millions of times; each is written once per file. */
#define STR_SLOTS      (1u << 16)
#define STR_MAX_USED   (STR_SLOTS / 4 * 3)
#define STR_ARENA_CHUNK (256u * 1024)

struct str_slot { uint64_t hash; const char *text; uint32_t len; uint32_t id; };
struct arena_chunk { struct arena_chunk *next; size_t used; char data[]; };

static pthread_mutex_t    str_mu = PTHREAD_MUTEX_INITIALIZER;
static struct str_slot   *str_table;
static uint32_t           str_used;
static uint32_t           str_next_id = 1;
static struct arena_chunk *str_arena;

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static const char *arena_copy(const char *text, size_t len)
{
    if (len >= STR_ARENA_CHUNK / 4)
        return NULL;             /* huge texts are written, not interned */
    if (!str_arena || str_arena->used + len > STR_ARENA_CHUNK) {
        struct arena_chunk *c = malloc(sizeof *c + STR_ARENA_CHUNK);
        if (!c)
            return NULL;
        c->next = str_arena;
        c->used = 0;
        str_arena = c;
    }
    char *dst = str_arena->data + str_arena->used;
    memcpy(dst, text, len);
    str_arena->used += len;
    return dst;
}

static void write_string_record(uint32_t id, const char *text, size_t len)
{
    ss_string_rec *r = ss_rec_begin(SS_REC_STRING, sizeof *r, (uint32_t)len);
    if (!r)
        return;
    r->id = id;
    r->len = (uint32_t)len;
    memcpy(r + 1, text, len);
    ss_rec_commit(r);
}

uint32_t ss_string_id(const char *text, size_t len)
{
    if (!text)
        return 0;
    if (len > (1u << 20))
        len = 1u << 20;      /* keep a record well inside one buffer */
    uint64_t h = fnv1a(text, len);
    uint32_t id;
    pthread_mutex_lock(&str_mu);
    if (!str_table)
        str_table = calloc(STR_SLOTS, sizeof *str_table);
    if (str_table) {
        uint32_t i = (uint32_t)h & (STR_SLOTS - 1);
        while (str_table[i].text) {
            struct str_slot *s = &str_table[i];
            if (s->hash == h && s->len == len && memcmp(s->text, text, len) == 0) {
                id = s->id;
                pthread_mutex_unlock(&str_mu);
                return id;
            }
            i = (i + 1) & (STR_SLOTS - 1);
        }
        id = str_next_id++;
        const char *copy = str_used < STR_MAX_USED ? arena_copy(text, len) : NULL;
        if (copy) {
            str_table[i] = (struct str_slot){ h, copy, (uint32_t)len, id };
            str_used++;
        }
    } else {
        id = str_next_id++;
    }
    pthread_mutex_unlock(&str_mu);
    /* Outside the lock: the record may need a buffer switch, which may open
     * the file.  A table full of texts still gets correct (repeated) records. */
    write_string_record(id, text, len);
    return id;
}

void ss_strings_reset(void)
{
    pthread_mutex_init(&str_mu, NULL);
    if (str_table)
        memset(str_table, 0, STR_SLOTS * sizeof *str_table);
    str_used = 0;
    str_next_id = 1;
    while (str_arena) {
        struct arena_chunk *next = str_arena->next;
        free(str_arena);
        str_arena = next;
    }
}

/* ---------------------------------------------------------------- notes */

void ss_note(uint32_t code, uint64_t value, const char *msg, int stderr_once)
{
    static _Atomic uint64_t printed_codes;
    if (!msg)
        msg = "";
    size_t len = strnlen(msg, 4096);
    if (stderr_once && code < 64) {
        uint64_t bit = 1ull << code;
        if (!(atomic_fetch_or(&printed_codes, bit) & bit))
            fprintf(stderr, "syncsight: %.*s\n", (int)len, msg);
    }
    ss_note_rec *n = ss_rec_begin(SS_REC_NOTE, sizeof *n, (uint32_t)len);
    if (!n)
        return;
    n->code = code;
    n->len = (uint32_t)len;
    n->value = value;
    n->time = ss_now();
    memcpy(n + 1, msg, len);
    ss_rec_commit(n);
}

/* ------------------------------------------------------------- selftest */

/* SYNCSIGHT_SELFTEST=<n>: write <n> synthetic API records plus one string,
 * one kernel and one NVTX record through the real buffer and writer path, so
 * the CPU test suite can exercise file creation, crashes, fork, exit and
 * write failures without a GPU.  The records are marked by cbid 0 (CUPTI's
 * INVALID runtime cbid), which no real call has. */
static void selftest_records(int n)
{
    uint32_t name = ss_string_id("syncsight_selftest_kernel", 25);
    for (int i = 0; i < n; i++) {
        ss_api_rec *r = ss_rec_begin(SS_REC_API, sizeof *r, 0);
        if (!r)
            break;
        r->cbid = 0;
        r->tid = ss_tid();
        r->t_enter = ss_now();
        r->t_exit = r->t_enter + 1000;
        r->arg = (uint32_t)i;
        r->device = -1;
        ss_rec_commit(r);
    }
    ss_kernel_rec *k = ss_rec_begin(SS_REC_KERNEL, sizeof *k, 0);
    if (k) {
        k->g.start = ss_now();
        k->g.end = k->g.start + 5000;
        k->name_id = name;
        k->grid[0] = k->grid[1] = k->grid[2] = 1;
        k->block[0] = 32;
        k->block[1] = k->block[2] = 1;
        ss_rec_commit(k);
    }
    ss_nvtx_rec *v = ss_rec_begin(SS_REC_NVTX, sizeof *v, 0);
    if (v) {
        v->start = ss_now();
        v->end = v->start + 100;
        v->tid = ss_tid();
        v->name_id = name;
        ss_rec_commit(v);
    }
}

/* In a fork() child, the same synthetic records: the CPU tests check that
 * the child writes its own file (pid in the name, SS_NOTE_FORKED) with only
 * its own records. */
void ss_selftest_after_fork(void)
{
    int selftest = disabled_by_env ? 0 : env_int("SYNCSIGHT_SELFTEST", 0);
    if (selftest > 0)
        selftest_records(selftest);
}

/* --------------------------------------------------------------- init */

static void ss_init(void)
{
    read_settings();
    if (disabled_by_env)
        return;              /* no CUPTI, no handlers, no file: a plain program */
    __atomic_store_n(&ss_rec_enabled, 1, __ATOMIC_RELAXED);
    ss_output_init();
    ss_api_init();
    ss_hostsync_init();
    ss_callsite_init();
    /* Exact memory mode takes the place of CUPTI.  Measured (H100, CUDA
     * 13.0): the Sanitizer API and CUPTI share one callback slot.  Sanitizer
     * first: cuptiSubscribe fails (MULTIPLE_SUBSCRIBERS); CUPTI first:
     * sanitizerSubscribe succeeds but delivers no callback at all. */
    int exact = env_int("SYNCSIGHT_EXACT_MEMORY", 0) != 0 && ss_exact_memory_start();
    if (exact)
        ss_output_set_deferred_note(SS_NOTE_CUPTI_UNAVAILABLE, "unavailable: exact memory mode",
                                    "exact memory mode: CUPTI is not used (the CUDA Sanitizer API holds its "
                                    "callback slot): no GPU activity timeline; calls are recorded through the "
                                    "Sanitizer's callbacks", 1);
    else if (ss_cfg.cupti)
        ss_cupti_start();
    int selftest = env_int("SYNCSIGHT_SELFTEST", 0);
    if (selftest > 0)
        selftest_records(selftest);
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
