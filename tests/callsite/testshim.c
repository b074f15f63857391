/*
 * The part of a CUDA API wrapper that call-site capture sees, for tests: an
 * exported "CUDA call" that assembles an API record on its stack, captures
 * the call site with the real preload/callsite.c, and commits the record.
 * Built with callsite.c, pystack.c and the fake runtime into a library named
 * libsyncsight_test.so, so that its frames count as syncsight's (not user
 * code) exactly like the real shim's wrappers.
 */
#include <string.h>
#include "producers.h"
#include "callsite_fake_runtime.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void testshim_init(int stacks_mode)
{
    ss_cfg.stacks = stacks_mode;
    ss_callsite_init();
}

EXPORT void testshim_set_stacks(int stacks_mode) { ss_cfg.stacks = stacks_mode; }

__attribute__((noinline)) EXPORT int fake_cuda_call(unsigned cbid, int blameable)
{
    ss_api_rec local;
    memset(&local, 0, sizeof local);
    local.cbid = cbid;
    local.tid = ss_tid();
    local.t_enter = ss_now();
    ss_callsite_capture(&local, blameable);
    local.t_exit = ss_now();
    ss_api_rec *rec = ss_rec_begin(SS_REC_API, sizeof *rec, 0);
    if (!rec)
        return -1;
    ss_rec_hdr h = rec->h;
    *rec = local;
    rec->h = h;
    ss_rec_commit(rec);
    return 0;
}

EXPORT int testshim_write_trace(const char *path) { return fake_runtime_write_trace(path); }
