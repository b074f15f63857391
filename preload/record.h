/*
 * Records every producer writes the same way (record.c): interned strings
 * and notes.  Above the buffers (they are ordinary records), below the
 * producers.
 */
#ifndef SYNCSIGHT_RECORD_H
#define SYNCSIGHT_RECORD_H

#include "base.h"

/* Intern a string for this trace: returns its SS_REC_STRING id (>= 1),
 * writing the STRING record the first time the text is seen. Thread-safe. */
SS_HIDDEN uint32_t ss_string_id(const char *text, size_t len);
SS_HIDDEN void     ss_strings_reset(void);      /* fork child: ids restart per file */

/* Write an SS_REC_NOTE (and, when `stderr_once`, print the message once to
 * stderr prefixed "syncsight: "). */
SS_HIDDEN void ss_note(uint32_t code, uint64_t value, const char *msg, int stderr_once);

#endif /* SYNCSIGHT_RECORD_H */
