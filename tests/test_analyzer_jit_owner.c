/*
 * first-launch-stall's PTX JIT finding says whose PTX was compiled: the
 * module that made the call the compilation served (callsite.h,
 * ss_call_maker).  A library's PTX (PyTorch's, cuDNN's) is no build of the
 * user's: its fix must not tell them to pass nvcc -gencode.  Three traces
 * with the same JIT compilation, the served launch made
 *   - inside libtorch_cuda.so (site-packages), called from the program;
 *   - by the program's own executable (its launch stub);
 *   - with no native stack at all.
 * Module files need not exist: a frame's module comes from the trace's
 * SS_REC_MODULE records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_builder.h"
#include "findings.h"
#include "model.h"
#include "replay.h"
#include "rule.h"

enum { CB_cudaLaunchKernel = 211 };
static const tb_api_name api_names[] = { { CB_cudaLaunchKernel, "cudaLaunchKernel" } };

#define TID 5151
#define APP_BASE 0x400000ull
#define TORCH_BASE 0x7f1000000000ull
#define CUDART_BASE 0x7f2000000000ull

static char dir[] = "/tmp/ss_jit_owner_XXXXXX";

static void tb_module(tb *b, const char *path, uint64_t base, uint64_t size)
{
    uint32_t len = (uint32_t)strlen(path);
    ss_module_rec *r = tb_rec(b, SS_REC_MODULE, sizeof *r, len);
    r->base = base; r->size = size; r->time = T0; r->path_len = len; r->build_id_len = 0;
    memcpy((char *)r + sizeof *r, path, len);
}

static void tb_stack(tb *b, uint32_t id, const uint64_t *pcs, uint32_t depth)
{
    ss_stack_rec *r = tb_rec(b, SS_REC_STACK, sizeof *r, 8u * depth);
    r->id = id; r->depth = depth;
    memcpy((char *)r + sizeof *r, pcs, 8u * depth);
}

/* maker: 0 the executable, 1 libtorch_cuda.so, 2 no native stack;
 * kernel_end: when the served kernel ends (its launch returns at 70 ms) */
static void write_trace(const char *path, int maker, double kernel_end)
{
    tb b;
    tb_begin(&b, path, api_names, sizeof api_names / sizeof api_names[0], 7);
    ss_thread_rec *th = tb_rec(&b, SS_REC_THREAD, sizeof *th, 4);
    th->tid = TID; th->len = 4; th->pthread_self = 0;
    memcpy((char *)th + sizeof *th, "main", 4);
    tb_module(&b, "/work/app/train", APP_BASE, 0x100000);
    tb_module(&b, "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", TORCH_BASE, 0x1000000);
    tb_module(&b, "/usr/local/cuda/lib64/libcudart.so.13", CUDART_BASE, 0x100000);
    /* innermost first: cudart (plumbing), then the maker, then main */
    const uint64_t by_torch[] = { CUDART_BASE + 0x1234, TORCH_BASE + 0x5678, APP_BASE + 0x100 };
    const uint64_t by_app[] = { CUDART_BASE + 0x1234, APP_BASE + 0x200, APP_BASE + 0x100 };
    if (maker == 1) tb_stack(&b, 1, by_torch, 3);
    if (maker == 0) tb_stack(&b, 1, by_app, 3);
    ss_api_rec *r = tb_rec(&b, SS_REC_API, sizeof *r, 0);
    r->cbid = CB_cudaLaunchKernel; r->tid = TID; r->t_enter = MS(1); r->t_exit = MS(70); r->corr = b.next_corr++;
    r->stream = 0; r->device = 0; r->flags = SS_API_F_CUPTI_CB; r->stack_id = maker == 2 ? 0 : 1;
    ss_kernel_rec *k = tb_rec(&b, SS_REC_KERNEL, sizeof *k, 0);
    k->g.start = MS(kernel_end - 0.01); k->g.end = MS(kernel_end); k->g.corr = r->corr; k->g.stream_id = 7; k->g.context_id = 1;
    k->grid[0] = k->block[0] = 1;
    ss_jit_rec *j = tb_rec(&b, SS_REC_JIT, sizeof *j, 0);
    j->g.start = MS(2); j->g.end = MS(62); j->g.corr = r->corr; j->g.context_id = 1;
    j->entry_type = SS_JIT_ENTRY_PTX_TO_CUBIN; j->op_type = SS_JIT_OP_COMPILE; j->tid = TID;
    tb_close(&b);
}

/* The one JIT finding's message and fix, joined into out; its count. */
static uint32_t jit_finding(const char *path, char *out, size_t len)
{
    char err[256];
    ss_model *m = ss_model_load(path, err, sizeof err);
    CHECK(m != NULL, "load %s: %s", path, err);
    if (!m) return 0;
    ss_findings f;
    ss_findings_init(&f);
    f.sampled_need = ss_rule_first_launch_stall.sampled;
    ss_rule_first_launch_stall.run(m, &f);
    uint32_t n = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < f.n; i++)
        if (strstr(f.v[i].message, "JIT-compiled")) {
            n++;
            snprintf(out, len, "%s || %s", f.v[i].message, f.v[i].fix);
        }
    ss_findings_free(&f);
    ss_model_free(m);
    return n;
}

int main(void)
{
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char path[600], text[4096];

    snprintf(path, sizeof path, "%s/torch.sstrace", dir);
    write_trace(path, 1, 70.02);
    CHECK(jit_finding(path, text, sizeof text) == 1, "one JIT finding");
    CHECK(strstr(text, "inside libtorch_cuda.so") != NULL, "names the library: %s", text);
    CHECK(strstr(text, "The PTX is libtorch_cuda.so's") != NULL, "a library's fix: %s", text);
    CHECK(strstr(text, "-gencode") == NULL, "no nvcc flags for a library's PTX: %s", text);
    CHECK(strstr(text, "the executable has") == NULL, "not the executable's: %s", text);

    snprintf(path, sizeof path, "%s/app.sstrace", dir);
    write_trace(path, 0, 70.02);
    CHECK(jit_finding(path, text, sizeof text) == 1, "one JIT finding");
    CHECK(strstr(text, "the executable has no machine code") != NULL, "the program's own PTX: %s", text);
    CHECK(strstr(text, "-gencode") != NULL, "the nvcc fix: %s", text);

    snprintf(path, sizeof path, "%s/nostack.sstrace", dir);
    write_trace(path, 2, 70.02);
    CHECK(jit_finding(path, text, sizeof text) == 1, "one JIT finding");
    CHECK(strstr(text, "no native stack of the call says") != NULL, "says it does not know whose: %s", text);
    CHECK(strstr(text, "the executable has") == NULL, "claims no owner: %s", text);

    /* The compilation's saving where the launch's return ends the run (its
     * kernel ends at 65 ms, the launch returns at 70): without the 60 ms of
     * JIT the launch returns at 10 ms and the run ends with the kernel, 5 ms
     * sooner.  The launch waits for nothing, so its exit is made with its
     * entry (replay.c, folded_exit), before the compilation starts: the
     * what-if must replay from that entry, not from the first item after
     * the compilation's start (which found the run's end unchanged). */
    snprintf(path, sizeof path, "%s/ends_at_return.sstrace", dir);
    write_trace(path, 0, 65.0);
    {
        char err[256];
        ss_model *m = ss_model_load(path, err, sizeof err);
        CHECK(m != NULL, "load %s: %s", path, err);
        if (m) {
            const ss_replay *rp = ss_replay_of(m);
            ss_relax rx = { .kind = SS_RELAX_HOST_TIME, .tid = TID, .t0 = MS(2), .t1 = MS(62) };
            uint64_t saving = ss_replay_saving(rp, &rx, 1);
            CHECK(saving == 5000000u, "the compilation's saving: %llu ns, not 5 ms",
                  (unsigned long long)saving);
            ss_model_free(m);
        }
    }

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    if (failures) { fprintf(stderr, "%d failure(s)\n", failures); return 1; }
    puts("ok");
    return 0;
}
