/*
 * ss_hb_feed (hb.h): a second happens-before replay run on a thread of its
 * own, read in lockstep by a rule's walk (relies-on-legacy-sync's replay
 * without the legacy barrier, missing-fence's with held-back records).  On
 * every trace recorded on a GPU (tests/fixtures/), for both flag sets and
 * on one thread and on four, with the default ring and with chunks of one
 * and of three clocks (the ring wraps thousands of times and both sides
 * wait), the clocks it hands over must be those of the same replay applied
 * call by call: the submitting stream's clock after each submission.  And a
 * walk that stops early must be able to free it (its thread waiting for
 * room in the ring is released).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb.h"
#include "model.h"

static int failures, checked;

#define CHECK(cond, ...)                                            \
    do {                                                            \
        if (!(cond)) {                                              \
            failures++;                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
            fprintf(stderr, __VA_ARGS__);                           \
            fputc('\n', stderr);                                    \
        }                                                           \
    } while (0)

/* Every clock the feed hands over against the replay applied here. */
static void compare(const ss_model *m, const char *path, unsigned flags, uint32_t chunk, const char *threads)
{
    setenv("SYNCSIGHT_THREADS", threads, 1);
    ss_hb *ref = ss_hb_new_ex(m, flags);
    ss_hb_feed *feed = ss_hb_feed_start(m, flags, chunk);
    uint32_t A = ss_hb_width(ref), subs = 0, bad = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        if (!ss_hb_apply(ref, (int32_t)i)) continue;
        const uint32_t *got = ss_hb_feed_next(feed);
        const uint32_t *want = ss_hb_stream_clock(ref, m->calls[i].stream);
        subs++;
        if (!got || memcmp(got, want, A * sizeof(uint32_t))) {
            if (!bad++)
                CHECK(0, "%s: flags %u, chunk %u, %s thread(s): submission %u (call %u): %s", path, flags, chunk,
                      threads, subs, i, got ? "another clock" : "no clock");
        }
    }
    ss_hb_feed_free(feed);
    ss_hb_free(ref);
    checked += subs;
}

/* A walk that takes a few clocks and stops: freeing the feed must not wait
 * for a thread stuck on a full ring. */
static void stop_early(const ss_model *m, uint32_t chunk)
{
    setenv("SYNCSIGHT_THREADS", "4", 1);
    ss_hb_feed *feed = ss_hb_feed_start(m, SS_HB_NO_LEGACY_BARRIER, chunk);
    for (int k = 0; k < 3; k++) ss_hb_feed_next(feed);
    ss_hb_feed_free(feed);
}

int main(void)
{
    glob_t g;
    if (glob("tests/fixtures/*.sstrace", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        fprintf(stderr, "FAIL: no traces in tests/fixtures (run from the repository root)\n");
        return 1;
    }
    static const unsigned flag_sets[] = { SS_HB_NO_LEGACY_BARRIER, SS_HB_RECORD_HOLDS_STREAM };
    static const uint32_t chunks[] = { 0, 1, 3 };
    unsigned traces = 0;
    for (size_t t = 0; t < g.gl_pathc; t++) {
        char err[512];
        ss_model *m = ss_model_load(g.gl_pathv[t], err, sizeof err);
        if (!m) {
            CHECK(0, "%s does not load: %s", g.gl_pathv[t], err);
            continue;
        }
        traces++;
        for (size_t f = 0; f < sizeof flag_sets / sizeof *flag_sets; f++)
            for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
                compare(m, g.gl_pathv[t], flag_sets[f], chunks[c], "1");
                compare(m, g.gl_pathv[t], flag_sets[f], chunks[c], "4");
            }
        stop_early(m, 1);
        stop_early(m, 0);
        ss_model_free(m);
    }
    globfree(&g);
    printf("%u traces, %d clocks compared, %d failures\n", traces, checked, failures);
    return failures ? 1 : 0;
}
