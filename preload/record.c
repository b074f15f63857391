/*
 * Interned strings and notes (record.h): records that every producer writes
 * the same way, through the buffers like any other.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "buffers.h"

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
