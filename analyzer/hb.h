/*
 * Happens-before over streams and host threads, replayed call by call.
 *
 * Vector clocks (one component per stream of the model), FastTrack style: a
 * GPU submission is named by (stream, epoch), and it is ordered before a
 * point whose clock vc has vc[stream] >= epoch.  What orders work:
 *   - program order on a stream: each submission ticks the stream's clock;
 *   - a submission carries the submitting host thread's clock (the host did
 *     everything it knew of before submitting);
 *   - cudaEventRecord snapshots the stream's clock; cudaStreamWaitEvent joins
 *     the snapshot of the latest record before the wait.  A launch that
 *     records an event through a launch attribute (ss_call_records_event)
 *     snapshots its stream after its kernel (a programmatic event) or before
 *     it (a launch-completion event, or one triggered at block start);
 *   - stream memory operations: a write-value (cuStreamWriteValue32/64) is a
 *     submission whose clock is kept under its address; a wait-value
 *     (cuStreamWaitValue32/64, also a submission) joins the clock of the
 *     latest earlier write-value to its address whose value satisfies its
 *     condition (GEQ, EQ, AND, NOR on 32 or 64 bits).  A wait no recorded
 *     write satisfies, and a cuStreamBatchMemOp (its ops are not recorded),
 *     orders nothing provable: ss_hb_unlinked_wait_before() names it;
 *   - a call that made the host wait for GPU work joins that work's clock into
 *     the thread's clock — what a call waits for comes from ONE table,
 *     ss_call_host_wait() (stream, event, device, successful queries, and the
 *     calls CUDA documents as blocking: D2H copies, cudaFree, ...);
 *   - the legacy default stream is ordered with the device's blocking and
 *     per-thread default streams, both ways; an event recorded on such a
 *     stream covers the legacy work the barrier holds the record behind,
 *     the stream's own clock only for a timing event (a host wait on the
 *     stream need not wait for a cudaEventDisableTiming record:
 *     SS_HB_RECORD_HOLDS_STREAM below);
 *   - launches of one executable graph: cudaGraphLaunch (cuGraphLaunch) is
 *     ordered after the previous launch of the same cudaGraphExec_t, on
 *     whichever stream (CUDA runs one instance of an exec at a time), as if
 *     it waited on an event recorded after that launch;
 *   - a device-serialized op (cudaMemcpyPeer, ss_call_device_serialized) is
 *     ordered after all earlier and before all later work of its devices;
 *   - host threads: a release of a host synchronization object (mutex
 *     unlock, sem_post, thread creation, OpenMP fork, a barrier's arrival;
 *     SS_REC_HOST_SYNC) joins the thread's clock into the object's, an
 *     acquire joins the object's into the thread's, replayed in time order
 *     between the calls.
 * Calls that failed, and calls recorded during stream capture (they build
 * graph nodes and run nothing), order nothing.
 *
 * Rules drive it: ss_hb_apply() each call in model order, reading clocks in
 * between.  Memory is O(streams^2 + threads*streams + events*streams).
 */
#ifndef SYNCSIGHT_ANALYZER_HB_H
#define SYNCSIGHT_ANALYZER_HB_H

#include <stdint.h>
#include "model.h"

typedef struct ss_hb ss_hb;

ss_hb *ss_hb_new(const ss_model *m);
/* The same without the legacy default stream's implicit ordering: what the
 * program would get with non-blocking or per-thread default streams. */
enum { SS_HB_NO_LEGACY_BARRIER = 1u << 0,
       /* Every event record on a blocking stream carries the legacy
        * barrier's work into the stream's clock, so that a host wait on the
        * stream waits for it, as the H100 of 2026-11-23 did (by default a
        * cudaEventDisableTiming record does not: an H200 did not wait for
        * one, see EVENT_RECORD in hb.c).  What such a wait would have
        * ordered, for a finding to tell apart. */
       SS_HB_RECORD_HOLDS_STREAM = 1u << 1 };
ss_hb *ss_hb_new_ex(const ss_model *m, unsigned flags);
void ss_hb_free(ss_hb *h);

/* Apply calls[call]; calls must be applied in model order.  Returns the epoch
 * the call's GPU work got on its stream when it submitted work (launch, copy,
 * memset, host function, stream memory operation), else 0. */
uint32_t ss_hb_apply(ss_hb *h, int32_t call);

/* Epoch a call's submission got (0: not a submission, or not applied yet). */
uint32_t ss_hb_call_epoch(const ss_hb *h, int32_t call);

/* The epoch of one operation of a graph launch that got `epoch`: a graph
 * with event record nodes (captured cudaEventRecordExternal) takes one epoch
 * per node on its stream, so that each node's event covers the nodes
 * captured before it and not those after.  Any other operation: `epoch`. */
uint32_t ss_hb_graph_op_epoch(const ss_model *m, int32_t call, int32_t op, uint32_t epoch);

/* Clocks now.  NULL for an event that has no record yet. */
const uint32_t *ss_hb_stream_clock(const ss_hb *h, int32_t stream);
const uint32_t *ss_hb_thread_clock(const ss_hb *h, uint32_t tid);
const uint32_t *ss_hb_event_clock(const ss_hb *h, int32_t event);

/* Is the submission of `call` ordered before clock vc? */
int ss_hb_call_before(const ss_hb *h, int32_t call, const uint32_t *vc);
/* Is GPU operation `op` ordered before clock vc?  Its call's submission, or
 * for a node of a graph with event record nodes the node's own place
 * (ss_hb_graph_op_epoch). */
int ss_hb_op_before(const ss_hb *h, int32_t op, const uint32_t *vc);

/* Had some host thread already waited for the GPU work of `call` (a host
 * join covering it had returned) at or before time t?  Then *waiter_tid and
 * *when say which thread and when.  Evidence for an ordering the trace may
 * not show (futexes, atomics, lock-free queues between threads). */
int ss_hb_waited_before(const ss_hb *h, int32_t call, uint64_t t, uint32_t *waiter_tid, uint64_t *when);

/* Is host thread `reader` ordered, by the host synchronization applied so
 * far (a release by `writer` at or after time t, reaching `reader` through
 * objects it acquired: a mutex, thread creation, a join), after thread
 * `writer` had got to time t?  0 when not, for an unknown thread, and past
 * 512 threads (the table is nthreads^2).  A host wait's return is not a
 * release: what a thread learnt from the GPU is in its stream clock. */
int ss_hb_thread_knows(const ss_hb *h, uint32_t reader, uint32_t writer, uint64_t t);

/* A host function (cudaLaunchHostFunc, cudaStreamAddCallback) applied so
 * far that runs only after the submission (stream, epoch): the one of them
 * ordered after the most work of that stream, or -1.  What a host function
 * does (post a semaphore, set a flag) runs on a driver thread the trace does
 * not follow, so a host thread may have learnt of that work through it:
 * evidence for an ordering the trace cannot show. */
int32_t ss_hb_host_func_after(const ss_hb *h, int32_t stream, uint32_t epoch);

/* A wait on a memory value (cuStreamWaitValue32/64) that no recorded
 * write-value satisfies, or a cuStreamBatchMemOp (its ops are not recorded),
 * applied so far and ordered before clock vc: the latest such call, or -1.
 * Waits on stream skip_stream are left out (pass the first access's stream:
 * a wait there that vc is ordered after would order that access too).  The
 * word may have been written by a kernel, the host, another process or the
 * batch, after work the trace cannot tell: evidence for an ordering the
 * trace cannot show. */
int32_t ss_hb_unlinked_wait_before(const ss_hb *h, const uint32_t *vc, int32_t skip_stream);

/* Clock width (number of streams). */
uint32_t ss_hb_width(const ss_hb *h);

/* A second replay (other flags) beside a rule's own, on a thread of its
 * own: a rule that walks two replays in lockstep (with and without the
 * legacy barrier, say) reads of the second only the submitting stream's
 * clock at each submission, so the second runs ahead of the walk and hands
 * those clocks over in order, a bounded ring of chunks at a time.  The
 * walk asks ss_hb_feed_next once for each call its own replay gave an epoch
 * (the same calls in either replay: flags change what is ordered, never
 * what is a submission) and gets the clock of that call's stream after it
 * in the second replay; valid until the next ask.  On one thread
 * (SYNCSIGHT_THREADS=1, or no thread to be had) the second replay is
 * advanced by the asks themselves: the same clocks. */
typedef struct ss_hb_feed ss_hb_feed;
/* chunk_clocks: clocks a chunk of the ring holds; 0 for 1 MiB of them (a
 * test passes a few, to make the ring wrap and both sides wait) */
ss_hb_feed *ss_hb_feed_start(const ss_model *m, unsigned flags, uint32_t chunk_clocks);
const uint32_t *ss_hb_feed_next(ss_hb_feed *f);
void ss_hb_feed_free(ss_hb_feed *f);
/* Seconds the walk has waited in ss_hb_feed_next for the replay beside it
 * (measured under SYNCSIGHT_TIMINGS=1 only, else 0): a walk that waits is
 * bound by the second replay, not by its own work. */
double ss_hb_feed_waited(const ss_hb_feed *f);

#endif
