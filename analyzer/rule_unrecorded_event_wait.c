/*
 * unrecorded-event-wait: cudaStreamWaitEvent / cudaEventSynchronize on an
 * event that had not been recorded (in its current lifetime) by the time of
 * the wait.  CUDA treats such an event as complete, so the wait orders
 * nothing: a fence that is not there.
 */
#include <stdio.h>
#include "rule.h"

static void run(const ss_model *m, ss_findings *out)
{
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if ((c->cls != SS_API_STREAM_WAIT && c->cls != SS_API_EVENT_SYNC) || c->event < 0) continue;
        if (c->rec->ret != 0) continue;   /* a failed call is an error the program sees */
        const ss_event *e = &m->events[c->event];
        /* a wait captured into a graph joins records captured before it; any
         * other waits for a record that happens when work runs (model.h) */
        int32_t first = c->captured ? e->first_record : e->first_run_record;
        if (first >= 0 && (uint32_t)first < i) continue;
        if (e->from_ipc) continue;   /* another process records it (CUDA IPC) */
        if (e->by_context) continue; /* cuCtxRecordEvent & co. record it: all of a context's work */
        char sd[96], msg[512];
        int is_wait = c->cls == SS_API_STREAM_WAIT;
        if (is_wait)
            snprintf(msg, sizeof msg,
                     "%s makes %s wait for event 0x%llx, which had not been recorded yet: CUDA treats an "
                     "unrecorded event as complete, so this wait orders nothing",
                     ss_model_call_name(m, c), ss_stream_describe(m, c->stream, sd, sizeof sd),
                     (unsigned long long)c->rec->event);
        else
            snprintf(msg, sizeof msg,
                     "%s on event 0x%llx, which had not been recorded yet: it returns at once and the host "
                     "waits for nothing",
                     ss_model_call_name(m, c), (unsigned long long)c->rec->event);
        ss_occurrence o = {
            .rule = "unrecorded-event-wait",
            .severity = is_wait ? SS_SEV_ERROR : SS_SEV_WARNING,
            .fixed_severity = 1,
            .cost_ms = 0,
            .cost_basis = "0 ms: a missing fence costs correctness, not time",
            .message = msg,
            .fix = is_wait
                ? "Record the event on the producer stream after the work the consumer needs "
                  "(cudaEventRecord(ev, producer)) before calling cudaStreamWaitEvent(consumer, ev); if the "
                  "record happens on another thread, make sure it happens first. In PyTorch: "
                  "ev.record(producer_stream) before consumer_stream.wait_event(ev)."
                : "Record the event after the work you want to wait for (cudaEventRecord) before "
                  "cudaEventSynchronize, or synchronize the stream that runs that work.",
            .refs = { { (int32_t)i, c->first_op, is_wait ? "wait" : "sync" } },
            .nrefs = 1,
            .alloc = -1,
        };
        ss_findings_add(out, m, &o);
    }
}

const ss_rule ss_rule_unrecorded_event_wait = {
    "unrecorded-event-wait", "wait on an event that was never recorded", run,
    SS_SAMPLED_HEAD,
    0,   /* asks_memory */
    0,   /* asks_replay */
    0,   /* removes_causes */
};
