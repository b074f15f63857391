/*
 * The trace file of one process (writer.c): its name, its lazy creation,
 * the output lock and block writes, write failures.  Knows no producer and
 * no buffer: what goes into the file first, and what starts once it exists,
 * is the business of the layer that registers the open hooks (lifecycle.c).
 */
#ifndef SYNCSIGHT_WRITER_H
#define SYNCSIGHT_WRITER_H

#include "base.h"
#include "syncsight/trace_format.h"

/* Called while the file is being created, under the open lock (so never
 * twice at once, and not again once the file exists or failed).
 * before_open: the file is about to be created; mark the header.
 * after_open: the file exists (ss_output_is_open() is true); the output lock
 * is free.  Whatever records other threads commit meanwhile stay in their
 * buffers until something flushes them. */
typedef struct ss_output_hooks {
    void (*before_open)(ss_file_header *hdr);
    void (*after_open)(void);
} ss_output_hooks;
SS_HIDDEN void ss_output_set_hooks(const ss_output_hooks *hooks);

/* Set once the trace file exists, read by the hot path (relaxed load). */
SS_HIDDEN extern int ss_output_opened;

SS_HIDDEN int  ss_output_start(void);       /* create the trace file if needed; 0 or -1 */
SS_HIDDEN int  ss_output_is_open(void);

/* The output lock serializes every write to the file.  It is a tid-owned
 * spin/sleep lock rather than a pthread mutex because the fatal-signal
 * handler must be able to tell whether its own thread already holds it
 * (then it must not flush) and must give up after a bounded wait; both need
 * only atomics and nanosleep(), which are async-signal-safe. */
SS_HIDDEN void ss_output_lock(void);
/* From a signal handler: 0 when this thread already holds the lock (it was
 * interrupted mid-write) or another thread kept it for ~100 ms.  Until the
 * unlock, a write failure says nothing on stderr (stdio is not
 * async-signal-safe). */
SS_HIDDEN int  ss_output_trylock_signal(void);
SS_HIDDEN void ss_output_unlock(void);

/* One block of `count` records; the caller holds the output lock.  A failed
 * write stops recording for good (ss_recording_stop) and says so once.
 * 0, or -1 when nothing was written. */
SS_HIDDEN int  ss_output_write_block(const void *payload, uint32_t bytes, uint32_t count);
/* An SS_REC_NOTE as a block of its own, built on the stack: for where the
 * buffers may be full or must not be touched (exit, signals).  The caller
 * holds the output lock.  Async-signal-safe. */
SS_HIDDEN void ss_output_write_note(uint32_t code, uint64_t value, const char *msg);
/* A record too large for the per-thread buffers (SS_REC_CUBIN), written as a
 * block of its own: `fixed` is its fixed part with the header filled (size =
 * fixed + tail rounded up to 8), `tail` stays where the caller has it.  Opens
 * the file if needed and takes the output lock (the caller must not hold it).
 * 0, or -1 when nothing was written. */
SS_HIDDEN int  ss_output_write_big_record(const void *fixed, uint32_t fixed_bytes, const void *tail,
                                          uint32_t tail_bytes);
/* Re-read RLIMIT_FSIZE (the program may change it); the caller holds the
 * output lock. */
SS_HIDDEN void ss_output_refresh_limits(void);

/* fork(): prepare takes the open and output locks so that the child does not
 * inherit them held mid-write; parent releases them; the child forgets the
 * parent's file and creates its own (pid in the name) at its first record. */
SS_HIDDEN void ss_output_fork_prepare(void);
SS_HIDDEN void ss_output_fork_parent(void);
SS_HIDDEN void ss_output_atfork_child(void);

#endif /* SYNCSIGHT_WRITER_H */
