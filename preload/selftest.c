/*
 * SYNCSIGHT_SELFTEST=<n> (producers.h): synthetic records written through
 * the real buffer and writer path, so the CPU test suite can exercise file
 * creation, crashes, fork, exit and write failures without a GPU.  The API
 * records are marked by cbid 0 (CUPTI's INVALID runtime cbid), which no real
 * call has.  Run at initialization and again in a fork() child, which must
 * write its own file (pid in the name, SS_NOTE_FORKED) with only its own
 * records.
 */
#include "producers.h"

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

void ss_selftest_run(void)
{
    int n = ss_env_int("SYNCSIGHT_SELFTEST", 0);
    if (n > 0)
        selftest_records(n);
}
