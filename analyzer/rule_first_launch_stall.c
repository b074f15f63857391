/*
 * first-launch-stall: the first launch of a kernel stalled the device or the
 * host, inside the run, for a reason that has nothing to do with the program:
 *   - lazy module loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA
 *     12.2): the kernel is loaded at its first launch, and work submitted
 *     after that launch waits until the device has drained (replay.c finds
 *     these barriers from the measured starts);
 *   - PTX JIT: the executable has no machine code for this GPU, so the
 *     driver compiles PTX on the host thread at first use (SS_REC_JIT).
 * Cost: the what-if saving with the barrier, or the compilation, gone.
 * Either is paid once (ss_occurrence.once): a stall inside the steady state
 * is that state's cost only when stalls recur in its iterations (a
 * recompilation every step), else it is setup, wherever it fell.
 */
#include <stdio.h>
#include <string.h>

#include "rule.h"
#include "replay.h"
#include "callsite.h"

/* The call a JIT compilation served: the first call of its thread that had
 * not returned when the compilation began (cudart loads a module before it
 * enters the launch it loads it for). */
static int32_t call_after(const ss_model *m, uint32_t tid, uint64_t t)
{
    const ss_thread *th = ss_model_thread(m, tid);
    if (!th) return -1;
    for (uint32_t i = 0; i < th->ncalls; i++)
        if (m->calls[th->calls[i]].rec->t_exit >= t) return th->calls[i];
    return -1;
}

static void run(const ss_model *m, ss_findings *out)
{
    const ss_replay *r = ss_replay_of(m);
    char env[64];
    const char *loading = ss_model_env(m, "CUDA_MODULE_LOADING", env, sizeof env);
    uint32_t n;
    const ss_load_barrier *lb = ss_replay_load_barriers(r, &n);
    for (uint32_t i = 0; i < n; i++) {
        ss_relax rx = { .kind = SS_RELAX_LOAD_BARRIER, .index = (int32_t)i };
        uint64_t saving = ss_replay_saving(r, &rx, 1);
        char k[192], e[192], se[96], msg[1200];
        ss_op_label(m, lb[i].op, k, sizeof k);
        ss_op_label(m, lb[i].example_op, e, sizeof e);
        const ss_call *c = &m->calls[lb[i].call];
        snprintf(msg, sizeof msg,
                 "the first launch of %s (at %.3f ms) made the device drain before any later work could start: "
                 "%u operations that were ready waited until %.3f ms (%.3f ms in all; e.g. %s on %s). The kernel "
                 "was loaded lazily at its first launch (CUDA_MODULE_LOADING %s%s)",
                 k, ss_trace_ms(m, c->rec->t_enter), lb[i].delayed_ops, ss_trace_ms(m, lb[i].drain),
                 ss_ms(lb[i].delay_ns), e, ss_stream_describe(m, m->ops[lb[i].example_op].stream, se, sizeof se),
                 loading ? "=" : "unset: LAZY, the default", loading ? loading : "");
        ss_occurrence o = {
            .rule = "first-launch-stall",
            .cost_ms = ss_ms(saving),
            /* no number in the basis: the header gives the cost, which folding
             * sums over the occurrences (a first occurrence's own would read
             * as a contradiction beside it) */
            .cost_basis = "what-if replay: how much sooner the run ends without the loading barrier",
            .message = msg,
            .fix = "Load kernels before the work that must overlap: launch each kernel once in a warm-up outside "
                   "the timed or overlapped region, or set CUDA_MODULE_LOADING=EAGER (every module loads when "
                   "CUDA starts: longer start-up, more memory).",
            .refs = { { lb[i].call, lb[i].op, "first launch" }, { m->ops[lb[i].example_op].call, lb[i].example_op,
                                                                  "delayed op" } },
            .nrefs = 2,
            .alloc = -1,
            .site_extra = "lazy",
            .relax = { rx },
            .nrelax = 1,
            .once = 1,   /* a module loads once: steady only if loads recur every step */
        };
        ss_findings_add(out, m, &o);
    }

    for (uint32_t i = 0; i < m->njits; i++) {
        const ss_jit_rec *j = m->jits[i];
        if (j->op_type != SS_JIT_OP_COMPILE || j->g.end <= j->g.start) continue;
        const ss_thread *th = ss_model_thread_of_cupti(m, j->tid);
        if (!th) continue;
        uint32_t tid = th->tid;
        int32_t ci = call_after(m, tid, j->g.start);
        ss_relax rx = { .kind = SS_RELAX_HOST_TIME, .tid = tid, .t0 = j->g.start, .t1 = j->g.end };
        uint64_t saving = ss_replay_saving(r, &rx, 1);
        char what[192] = "a CUDA call", msg[1400], lib[96] = "", fn[160] = "", fix[900];
        /* whose PTX: the module that made the call the compilation served
         * (a library loads its own modules: cuDNN at its handle's first
         * use, PyTorch at its kernel's first launch) */
        int maker = ci >= 0 ? ss_call_maker(m, ci, lib, sizeof lib, fn, sizeof fn) : -1;
        if (ci >= 0) {
            const ss_call *c = &m->calls[ci];
            if (c->first_op >= 0) ss_op_label(m, c->first_op, what, sizeof what);
            else ss_call_label(m, ci, what, sizeof what);
        }
        const char *code = j->entry_type == SS_JIT_ENTRY_NVVM_IR_TO_PTX ? "NVVM IR" : "PTX";
        if (maker == 1) {
            snprintf(msg, sizeof msg,
                     "the driver JIT-compiled %s for %.3f ms on the host thread at the first use of %s, made inside "
                     "%s%s%s%s: that library carries no machine code (SASS) for this GPU for the code it loaded, "
                     "only PTX", code, ss_ms(j->g.end - j->g.start), what, lib, fn[0] ? " (" : "", fn,
                     fn[0] ? ")" : "");
            snprintf(fix, sizeof fix,
                     "The PTX is %s's, not your build's: no flag of yours compiles it. Use a build of that library "
                     "made for this GPU's architecture (a newer release, or, for PyTorch, a wheel built for this GPU "
                     "and CUDA version), or keep the driver's JIT cache between runs: CUDA_CACHE_PATH on storage "
                     "that outlives the container and CUDA_CACHE_MAXSIZE large enough for it (CUDA_CACHE_DISABLE "
                     "unset); the compilation then happens once per cache, not once per run.", lib);
        } else {
            snprintf(msg, sizeof msg,
                     "the driver JIT-compiled %s for %.3f ms on the host thread at the first use of %s: %s has no "
                     "machine code (SASS) for this GPU, only PTX", code, ss_ms(j->g.end - j->g.start), what,
                     maker == 0 ? "the executable" : "the code loaded (whose, no native stack of the call says)");
            snprintf(fix, sizeof fix, "%s",
                     "Build machine code for the GPUs you run on: nvcc -gencode arch=compute_XY,code=sm_XY for each "
                     "(nvidia-smi --query-gpu=compute_cap --format=csv prints X.Y), keeping a compute_XY PTX only "
                     "for GPUs newer than the build. A JIT cache (~/.nv/ComputeCache, CUDA_CACHE_MAXSIZE) hides it "
                     "on later runs of the same binary, not on fresh machines or containers.");
        }
        ss_occurrence o = {
            .rule = "first-launch-stall",
            .cost_ms = ss_ms(saving),
            .cost_basis = "what-if replay: how much sooner the run ends without the compilation",
            .message = msg,
            .fix = fix,
            .refs = { { ci, ci >= 0 ? m->calls[ci].first_op : -1, "first use" } },
            .nrefs = 1,
            .alloc = -1,
            .site_extra = "jit",
            .relax = { rx },
            .nrelax = 1,
            .once = 1,   /* compiled once: steady only if compilations recur every step */
        };
        ss_findings_add(out, m, &o);
    }
}

const ss_rule ss_rule_first_launch_stall = {
    "first-launch-stall", "a kernel's first launch stalled the device or the host (lazy loading, PTX JIT)", run,
    SS_SAMPLED_HEAD,
    0,   /* asks_memory */
    1,   /* asks_replay */
    1,   /* removes_causes */
};
