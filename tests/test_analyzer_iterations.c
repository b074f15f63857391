/*
 * The period detection of analyzer/iterations.c on synthetic key sequences:
 * a setup prefix, then a repeated iteration (with the slips real loops have),
 * and sequences without one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iterations.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
                              fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

typedef struct seq { uint64_t *k; uint8_t *w; uint32_t n, cap; } seq;

static void put(seq *s, uint64_t key, int work)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->k = realloc(s->k, s->cap * sizeof *s->k);
        s->w = realloc(s->w, s->cap);
        if (!s->k || !s->w) abort();
    }
    s->k[s->n] = key; s->w[s->n] = (uint8_t)work; s->n++;
}

/* one iteration of a training step: 40 calls, keys 1000..1039, a few of
 * them (the layers) repeated inside */
static void step(seq *s)
{
    for (int l = 0; l < 4; l++) for (int c = 0; c < 5; c++) put(s, 1000 + c, 1);    /* 4 identical layers */
    for (int c = 0; c < 20; c++) put(s, 1100 + c, 1);                              /* backward, optimizer */
}

static void setup_prefix(seq *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) put(s, 5000 + i, i % 3 == 0);   /* every call different */
}

static void test_plain_loop(void)
{
    seq s = { 0 };
    setup_prefix(&s, 137);
    for (int i = 0; i < 50; i++) step(&s);
    setup_prefix(&s, 9);   /* teardown */
    uint32_t p = 0, a = 0, n = 0;
    CHECK(ss_find_period(s.k, s.w, s.n, &p, &a, &n), "no period found");
    CHECK(p == 40, "period %u", p);
    CHECK(a >= 137 && a < 137 + 40, "start %u", a);   /* within the first iteration */
    CHECK(n >= 48 && n <= 50, "count %u", n);
    free(s.k); free(s.w);
}

/* an occasional extra call (the allocator growing, a log line every 10
 * steps of 4 calls) does not hide the iteration */
static void test_slips(void)
{
    seq s = { 0 };
    setup_prefix(&s, 60);
    for (int i = 0; i < 200; i++) {
        step(&s);
        if (i % 37 == 5) put(&s, 9000, 1);
    }
    uint32_t p = 0, a = 0, n = 0;
    CHECK(ss_find_period(s.k, s.w, s.n, &p, &a, &n), "no period found");
    CHECK(p == 40, "period with slips %u", p);
    CHECK(a >= 60 && a < 100, "start %u", a);
    CHECK(n >= 190, "count %u", n);
    free(s.k); free(s.w);
}

/* a run of identical calls that submit no GPU work (a framework creating its
 * stream pool) is not an iteration; the same run submitting work (a kernel
 * launched in a loop) is */
static void test_work(void)
{
    seq s = { 0 };
    setup_prefix(&s, 20);
    for (int i = 0; i < 64; i++) put(&s, 7, 0);
    setup_prefix(&s, 20);
    uint32_t p = 0, a = 0, n = 0;
    CHECK(!ss_find_period(s.k, s.w, s.n, &p, &a, &n), "found %u x %u", p, n);
    CHECK(ss_find_period(s.k, NULL, s.n, &p, &a, &n) && p == 1 && n >= 60, "work ignored: %u x %u", p, n);
    free(s.k); free(s.w);
}

/* nothing repeats, or too few times */
static void test_none(void)
{
    seq s = { 0 };
    setup_prefix(&s, 500);
    uint32_t p = 0, a = 0, n = 0;
    CHECK(!ss_find_period(s.k, s.w, s.n, &p, &a, &n), "found %u x %u in distinct keys", p, n);
    s.n = 0;
    setup_prefix(&s, 30);
    for (int i = 0; i < 2; i++)   /* two iterations are not a steady state */
        for (int c = 0; c < 40; c++) put(&s, 1100 + c, 1);
    CHECK(!ss_find_period(s.k, s.w, s.n, &p, &a, &n), "found %u x %u in two steps", p, n);
    CHECK(!ss_find_period(s.k, s.w, 0, &p, &a, &n), "empty");
    free(s.k); free(s.w);
}

int main(void)
{
    test_plain_loop();
    test_slips();
    test_work();
    test_none();
    if (failures) { fprintf(stderr, "%d check(s) failed\n", failures); return 1; }
    printf("all iteration checks passed\n");
    return 0;
}
