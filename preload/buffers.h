/*
 * Per-thread record buffers (buffers.c): the hot path every record goes
 * through, and the flush that hands what was committed to the trace file
 * (writer.h).  Knows no producer: what a record holds is the caller's.
 */
#ifndef SYNCSIGHT_BUFFERS_H
#define SYNCSIGHT_BUFFERS_H

#include "base.h"
#include "syncsight/trace_format.h"

/* Reserve a record in the calling thread's buffer.  Returns a zeroed record of
 * fixed_size + tail_size bytes (rounded up to 8) with its ss_rec_hdr filled,
 * or NULL when recording is off or memory is exhausted (the loss is counted
 * and reported as SS_NOTE_DROPPED_API).  No lock, no allocation, no syscall
 * on the common path.  The record becomes visible to the flush only at
 * ss_rec_commit(); at most one record per thread is open at a time, and the
 * caller must not call back into anything that records before committing. */
SS_HIDDEN void *ss_rec_begin(uint16_t type, uint32_t fixed_size, uint32_t tail_size);
SS_HIDDEN void  ss_rec_commit(void *rec);

/* Until the trace file exists, records pile up in the buffers, and only a
 * record that shows CUDA use creates the file: modules, strings and stacks
 * recorded at startup must not leave a trace behind a program that never
 * uses CUDA. */
static inline int ss_rec_creates_file(uint16_t type)
{
    return !(type == SS_REC_MODULE || type == SS_REC_STRING || type == SS_REC_STACK ||
             type == SS_REC_PYSTACK || type == SS_REC_THREAD || type == SS_REC_API_NAME ||
             type == SS_REC_META);
}

/* Write what each buffer has committed since the last flush; the caller
 * holds the output lock.  `from_signal`: recycle no retired buffer (an owner
 * interrupted by the signal may still be appending). */
SS_HIDDEN void     ss_buffers_flush(int from_signal);
SS_HIDDEN uint64_t ss_buffers_dropped(void);     /* records lost: pool full */
SS_HIDDEN void     ss_buffers_atfork_child(void);

#endif /* SYNCSIGHT_BUFFERS_H */
