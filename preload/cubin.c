/*
 * The device code of loaded modules: one SS_REC_CUBIN per distinct image.
 *
 * CUPTI's MODULE_LOADED resource callback hands over the image (a cubin, or
 * a fatbin element already chosen for the device) while the driver loads a
 * module, once per module and context.  The analyzer reads kernels' SASS from
 * these images to tell which pointer parameters a kernel reads or writes.
 *
 * An image can be megabytes, far more than a per-thread buffer holds (1 MiB),
 * so its record goes straight to the file as a block of its own
 * (ss_output_write_big_record), written from the pointer CUPTI gives: no
 * copy.  Bounds: images over SYNCSIGHT_CUBIN_IMAGE_MB and images past the
 * per-process SYNCSIGHT_CUBIN_MB budget are skipped and counted, and the
 * count goes into one SS_NOTE_CUBIN_SKIPPED at the end of the trace.
 *
 * Module loads are rare (not a hot path).  The table lock is taken only
 * here, and never around file I/O or hashing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "producers.h"
#include "syncsight/hash64.h"
#include "writer.h"

#define CUBIN_SLOTS    1024u               /* power of two */
#define CUBIN_MAX_USED (CUBIN_SLOTS / 4 * 3)

/* Images seen: written, or skipped (then counted once, not at each load). */
struct cubin_slot {
    uint64_t hash;
    uint32_t size;              /* 0 = empty slot (empty images are ignored) */
    uint32_t written;
};

static pthread_mutex_t   cubin_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cubin_slot cubin_table[CUBIN_SLOTS];
static uint32_t          cubin_used;
static uint64_t          cubin_bytes;          /* image bytes reserved for the file */
static _Atomic uint64_t  cubin_skipped;        /* images not recorded */
static _Atomic int       cubin_note_taken;
/* What the images cost the loading threads (SS_NOTE_CUBIN_COST): a module
 * load is rare, so two clock reads per load measure it at no real cost. */
static _Atomic uint64_t  cubin_loads, cubin_ns, cubin_written, cubin_written_bytes;
static _Atomic int       cubin_cost_taken;

enum { CUBIN_SEEN, CUBIN_WRITE, CUBIN_SKIP };

/* Look the image up and decide, under the lock, what becomes of it. */
static int cubin_admit(uint64_t hash, uint32_t size)
{
    int verdict;
    pthread_mutex_lock(&cubin_mu);
    uint32_t i = (uint32_t)hash & (CUBIN_SLOTS - 1u);
    while (cubin_table[i].size != 0 &&
           !(cubin_table[i].hash == hash && cubin_table[i].size == size))
        i = (i + 1) & (CUBIN_SLOTS - 1u);
    if (cubin_table[i].size != 0) {
        verdict = CUBIN_SEEN;
    } else if (cubin_used >= CUBIN_MAX_USED) {
        /* Cannot remember it, so cannot keep a repeated load from being
         * written twice: counted as skipped instead (at each load). */
        verdict = CUBIN_SKIP;
    } else {
        uint64_t limit = (uint64_t)ss_cfg.cubin_image_mb << 20;
        uint64_t budget = (uint64_t)ss_cfg.cubin_mb << 20;
        int fits = size <= limit && cubin_bytes + size <= budget;
        cubin_table[i] = (struct cubin_slot){ hash, size, (uint32_t)fits };
        cubin_used++;
        if (fits)
            cubin_bytes += size;
        verdict = fits ? CUBIN_WRITE : CUBIN_SKIP;
    }
    pthread_mutex_unlock(&cubin_mu);
    return verdict;
}

/* Hash, admit and write one image (the time the load's record carries). */
static void cubin_record(const void *image, size_t size, uint32_t module_id, uint64_t time)
{
    if (size > UINT32_MAX - 64) {
        atomic_fetch_add_explicit(&cubin_skipped, 1, memory_order_relaxed);
        return;
    }
    uint64_t hash = ss_xxh64(image, size, 0);
    int verdict = cubin_admit(hash, (uint32_t)size);
    if (verdict == CUBIN_SKIP)
        atomic_fetch_add_explicit(&cubin_skipped, 1, memory_order_relaxed);
    if (verdict != CUBIN_WRITE)
        return;
    ss_cubin_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.h.type = SS_REC_CUBIN;
    rec.h.flags = SS_CUBIN_F_NONE;
    rec.h.size = SS_REC_ALIGN((uint32_t)sizeof rec + (uint32_t)size);
    rec.hash = hash;
    rec.time = time;
    rec.size = (uint32_t)size;
    rec.module_id = module_id;
    /* A failure here means the trace itself stopped (the output layer says
     * so in its own note): the image is not counted as written. */
    if (ss_output_write_big_record(&rec, sizeof rec, image, (uint32_t)size) == 0) {
        atomic_fetch_add_explicit(&cubin_written, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&cubin_written_bytes, size, memory_order_relaxed);
    }
}

void ss_cubin_on_module_loaded(const void *image, size_t size, uint32_t module_id)
{
    if (image == NULL || size == 0)
        return;
    if (ss_cfg.cubin_mb == 0) {
        /* Capture off: every load is counted, nothing is hashed. */
        atomic_fetch_add_explicit(&cubin_skipped, 1, memory_order_relaxed);
        return;
    }
    uint64_t time = ss_now();
    atomic_fetch_add_explicit(&cubin_loads, 1, memory_order_relaxed);
    cubin_record(image, size, module_id, time);
    atomic_fetch_add_explicit(&cubin_ns, ss_now() - time, memory_order_relaxed);
}

/* Appends the decimal digits of v at *p (async-signal-safe: no stdio). */
static void put_u64(char **p, const char *end, uint64_t v)
{
    char digits[20];
    int n = 0;
    do digits[n++] = (char)('0' + v % 10); while ((v /= 10) != 0 && n < 20);
    while (n > 0 && *p < end) *(*p)++ = digits[--n];
}

static void put_str(char **p, const char *end, const char *s)
{
    while (*s && *p < end) *(*p)++ = *s++;
}

const char *ss_cubin_take_cost(uint64_t *ns)
{
    static char msg[160];
    uint64_t loads = atomic_load_explicit(&cubin_loads, memory_order_relaxed);
    if (loads == 0 || atomic_exchange_explicit(&cubin_cost_taken, 1, memory_order_relaxed))
        return NULL;
    *ns = atomic_load_explicit(&cubin_ns, memory_order_relaxed);
    char *p = msg, *end = msg + sizeof msg - 1;
    uint64_t written = atomic_load_explicit(&cubin_written, memory_order_relaxed);
    put_str(&p, end, "module images, on the threads that loaded them: ");
    put_u64(&p, end, loads);
    put_str(&p, end, loads == 1 ? " load, " : " loads, ");
    put_u64(&p, end, written);
    put_str(&p, end, written == 1 ? " image written (" : " images written (");
    put_u64(&p, end, atomic_load_explicit(&cubin_written_bytes, memory_order_relaxed));
    put_str(&p, end, " bytes)");
    *p = '\0';
    return msg;
}

const char *ss_cubin_take_note(uint64_t *value)
{
    uint64_t skipped = atomic_load_explicit(&cubin_skipped, memory_order_relaxed);
    if (skipped == 0 || atomic_exchange_explicit(&cubin_note_taken, 1, memory_order_relaxed))
        return NULL;
    *value = skipped;
    return ss_cfg.cubin_mb == 0
        ? "module device code not recorded (SYNCSIGHT_CUBIN_MB=0): kernels' read/write "
          "classification incomplete"
        : "module device code images skipped (SYNCSIGHT_CUBIN_IMAGE_MB / SYNCSIGHT_CUBIN_MB "
          "limits): kernels' read/write classification incomplete";
}

/* fork() child: it writes its own trace, so every image is new to it.  Only
 * the forking thread exists: nothing can hold the lock any more. */
void ss_cubin_atfork_child(void)
{
    pthread_mutex_init(&cubin_mu, NULL);
    memset(cubin_table, 0, sizeof cubin_table);
    cubin_used = 0;
    cubin_bytes = 0;
    atomic_store_explicit(&cubin_skipped, 0, memory_order_relaxed);
    atomic_store_explicit(&cubin_note_taken, 0, memory_order_relaxed);
    atomic_store_explicit(&cubin_loads, 0, memory_order_relaxed);
    atomic_store_explicit(&cubin_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&cubin_written, 0, memory_order_relaxed);
    atomic_store_explicit(&cubin_written_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&cubin_cost_taken, 0, memory_order_relaxed);
}
