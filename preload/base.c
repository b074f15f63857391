/*
 * The shim's base layer: the trace clock, thread ids, settings and the
 * recording switch (base.h).  See docs/shim.md for the settings.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

ss_settings ss_cfg = {
    .cupti = 1, .nvtx_emit = 1, .stacks = 1, .flush_ms = 200, .buffer_mb = 64,
    .cubin_mb = 64, .cubin_image_mb = 8,
    .sample = 1, .sample_head = SS_SAMPLE_DEFAULT_HEAD,
    .sample_window_ms = SS_SAMPLE_DEFAULT_WINDOW_MS, .sample_period_ms = SS_SAMPLE_DEFAULT_PERIOD_MS,
    .sample_spread = SS_SAMPLE_DEFAULT_SPREAD,
    /* Not SS_ACT_EVENT: CUDA_EVENT records carry a GPU time only with
     * CUPTI's event device timestamps, and those make every event record
     * hold its hardware work queue until its stream's earlier work is done,
     * which changes the schedule of a program with more streams than queues
     * (preload/cupti.c). */
    .activity_mask = SS_ACT_KERNEL | SS_ACT_MEMCPY | SS_ACT_MEMSET | SS_ACT_SYNC |
                     SS_ACT_STREAM | SS_ACT_CONTEXT | SS_ACT_JIT,
};

int ss_rec_enabled;                 /* read on the hot path */
int ss_hot_state = SS_HOT_ON;       /* read on the hot path; sampling.c sets it */

/* ------------------------------------------------------- clock and tids */

uint64_t ss_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__thread unsigned ss_t_slow_work;
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

/* ---------------------------------------------------- recording switch */

int ss_recording(void)
{
    return __atomic_load_n(&ss_rec_enabled, __ATOMIC_RELAXED);
}

void ss_recording_start(void)
{
    __atomic_store_n(&ss_rec_enabled, !ss_cfg.disabled, __ATOMIC_RELAXED);
}

void ss_recording_stop(void)
{
    __atomic_store_n(&ss_rec_enabled, 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------ hot-call counts */

/* One cache line per slot: a thread's increments never contend with
 * another's.  Slots are never given back (a thread's calls still count after
 * it exited); threads beyond SS_HOT_SLOTS share the overflow slot. */
#define SS_HOT_SLOTS 1024
static struct { uint64_t n; char pad[56]; } __attribute__((aligned(64))) hot_slots[SS_HOT_SLOTS];
static uint32_t hot_nslots;
static uint64_t hot_overflow;

uint64_t *ss_hot_slot_claim(int *shared)
{
    uint32_t i = __atomic_fetch_add(&hot_nslots, 1, __ATOMIC_RELAXED);
    if (i < SS_HOT_SLOTS) {
        *shared = 0;
        return &hot_slots[i].n;
    }
    __atomic_store_n(&hot_nslots, SS_HOT_SLOTS, __ATOMIC_RELAXED);   /* no wrap-around */
    *shared = 1;
    return &hot_overflow;
}

int ss_hot_callback_seen;

uint64_t ss_hot_calls(void)
{
    uint32_t n = __atomic_load_n(&hot_nslots, __ATOMIC_RELAXED);
    if (n > SS_HOT_SLOTS)
        n = SS_HOT_SLOTS;
    uint64_t sum = __atomic_load_n(&hot_overflow, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < n; i++)
        sum += __atomic_load_n(&hot_slots[i].n, __ATOMIC_RELAXED);
    return sum;
}

void ss_hot_atfork_child(void)
{
    /* The slots stay claimed (the forking thread keeps its own): only the
     * counts start again. */
    for (uint32_t i = 0; i < SS_HOT_SLOTS; i++)
        __atomic_store_n(&hot_slots[i].n, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&hot_overflow, 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------- settings */

int ss_env_int(const char *name, int def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long n = strtol(v, &end, 10);
    return (*end == '\0') ? (int)n : def;
}

/* SYNCSIGHT_ACTIVITY's names of the SS_ACT_* bits */
static const struct { const char *name; uint32_t bit; } kinds[] = {
    { "kernel", SS_ACT_KERNEL }, { "memcpy", SS_ACT_MEMCPY }, { "memset", SS_ACT_MEMSET },
    { "sync", SS_ACT_SYNC },     { "event", SS_ACT_EVENT },   { "stream", SS_ACT_STREAM },
    { "context", SS_ACT_CONTEXT }, { "jit", SS_ACT_JIT },
};

void ss_activity_names(uint32_t mask, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && used < len; k++)
        if (mask & kinds[k].bit)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "", kinds[k].name);
    if (!mask) snprintf(out, len, "none");
}

static uint32_t parse_activity(const char *list)
{
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

/* SYNCSIGHT_SAMPLE: "off", or HEAD_CALLS,WINDOW_MS,PERIOD_MS[,SPREAD].  A
 * value that is neither gets one line on stderr and the defaults. */
static void parse_sample(const char *v)
{
    if (!v || !*v)
        return;
    if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) {
        ss_cfg.sample = 0;
        return;
    }
    unsigned long long head, window, period, spread = SS_SAMPLE_DEFAULT_SPREAD;
    char tail;
    int n = sscanf(v, "%llu,%llu,%llu,%llu%c", &head, &window, &period, &spread, &tail);
    if ((n == 3 || n == 4) && strspn(v, "0123456789,") == strlen(v) && v[strlen(v) - 1] != ',' &&
        window >= 1 && period > window && period <= 86400000ull && head <= (1ull << 62) && spread <= 1000000ull) {
        ss_cfg.sample = 1;
        ss_cfg.sample_head = head;
        ss_cfg.sample_window_ms = (uint32_t)window;
        ss_cfg.sample_period_ms = (uint32_t)period;
        ss_cfg.sample_spread = (uint32_t)spread;
        return;
    }
    fprintf(stderr, "syncsight: SYNCSIGHT_SAMPLE='%.40s' is neither 'off' nor HEAD_CALLS,WINDOW_MS,PERIOD_MS[,SPREAD] "
            "(whole numbers, WINDOW_MS >= 1, PERIOD_MS > WINDOW_MS): using %u,%u,%u,%u\n", v,
            SS_SAMPLE_DEFAULT_HEAD, SS_SAMPLE_DEFAULT_WINDOW_MS, SS_SAMPLE_DEFAULT_PERIOD_MS, SS_SAMPLE_DEFAULT_SPREAD);
}

/* SYNCSIGHT_SWITCH_KINDS: kernel (default: the memcpy and memset kinds, and
 * the event kind where SYNCSIGHT_ACTIVITY enables it, stay on all along), hot
 * (switched with every window, as until 2026-11-24: CUPTI kills programs; for
 * reproducing that). */
static void parse_switch_kinds(const char *v)
{
    ss_cfg.switch_kinds = SS_SWITCH_KERNEL_ONLY;
    if (!v || !*v || strcmp(v, "kernel") == 0)
        return;
    if (strcmp(v, "hot") == 0)
        ss_cfg.switch_kinds = SS_SWITCH_HOT;
    else
        fprintf(stderr, "syncsight: SYNCSIGHT_SWITCH_KINDS='%.40s' is neither kernel nor hot: using kernel\n", v);
}

void ss_settings_read(void)
{
    ss_cfg.disabled = ss_env_int("SYNCSIGHT_DISABLE", 0) != 0;
    ss_cfg.cupti = ss_env_int("SYNCSIGHT_CUPTI", 1) != 0;
    ss_cfg.exact_memory = ss_env_int("SYNCSIGHT_EXACT_MEMORY", 0) != 0;
    ss_cfg.nvtx_emit = ss_env_int("SYNCSIGHT_NVTX", 1) != 0;
    ss_cfg.stacks = ss_env_int("SYNCSIGHT_STACKS", 1);
    int flush = ss_env_int("SYNCSIGHT_FLUSH_MS", 200);
    ss_cfg.flush_ms = flush < 10 ? 10 : (flush > 60000 ? 60000 : (uint32_t)flush);
    const char *act = getenv("SYNCSIGHT_ACTIVITY");
    if (act && *act)
        ss_cfg.activity_mask = parse_activity(act);
    /* The buffer pool: at least a few threads must get a buffer at all. */
    int mb = ss_env_int("SYNCSIGHT_BUFFER_MB", 64);
    ss_cfg.buffer_mb = mb <= 0 ? 64 : (mb < 4 ? 4 : (mb > 4096 ? 4096 : (uint32_t)mb));
    /* Module images: 0 turns capture off; an image is one block, and a block
     * holds at most SS_BLOCK_MAX_PAYLOAD (16 MiB) with the record header. */
    int cubin = ss_env_int("SYNCSIGHT_CUBIN_MB", 64);
    ss_cfg.cubin_mb = cubin < 0 ? 64 : (cubin > 65536 ? 65536 : (uint32_t)cubin);
    int image = ss_env_int("SYNCSIGHT_CUBIN_IMAGE_MB", 8);
    ss_cfg.cubin_image_mb = image < 1 ? 8 : (image > 15 ? 15 : (uint32_t)image);
    parse_sample(getenv("SYNCSIGHT_SAMPLE"));
    parse_switch_kinds(getenv("SYNCSIGHT_SWITCH_KINDS"));
}

/* The leading fields of glibc's struct dl_find_object: the same offsets on
 * every 64-bit target; the buffer is larger than glibc's struct.  Looked up
 * at run time so that the shim still loads on a glibc older than 2.35. */
typedef struct ss_found_object {
    unsigned long long flags;
    void *map_start;
    void *map_end;
    struct link_map *link_map;
    unsigned long long rest[16];
} ss_found_object;
typedef int (*ss_find_object_fn)(void *address, ss_found_object *out);
/* Not looked up yet while it points at itself; NULL: glibc < 2.35.  Two
 * threads looking it up at once find the same. */
static void *find_object = &find_object;

int ss_object_of(const void *addr, const char **name, const void **start)
{
    void *f = __atomic_load_n(&find_object, __ATOMIC_RELAXED);
    if (f == &find_object) {
        f = dlsym(RTLD_DEFAULT, "_dl_find_object");
        __atomic_store_n(&find_object, f, __ATOMIC_RELAXED);
    }
    ss_find_object_fn find = (ss_find_object_fn)f;
    if (find) {
        ss_found_object o;
        if (find((void *)addr, &o) != 0 || o.link_map == NULL)
            return 0;
        if (name)
            *name = o.link_map->l_name ? o.link_map->l_name : "";
        if (start)
            *start = o.map_start;
        return 1;
    }
    Dl_info info;
    if (!dladdr(addr, &info))
        return 0;
    if (name)
        *name = info.dli_fname ? info.dli_fname : "";
    if (start)
        *start = info.dli_fbase;
    return 1;
}
