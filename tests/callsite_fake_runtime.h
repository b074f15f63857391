/* Test-only controls of tests/callsite_fake_runtime.c. */
#ifndef SYNCSIGHT_CALLSITE_FAKE_RUNTIME_H
#define SYNCSIGHT_CALLSITE_FAKE_RUNTIME_H

#include <stdint.h>

/* Write every record made so far as one block of a real trace file. */
int fake_runtime_write_trace(const char *path);
/* Text of an interned string id, NULL if unknown. */
const char *fake_runtime_string(uint32_t id);
/* Benchmarks: keep reusing the buffer instead of filling it. */
void fake_runtime_discard_records(int on);
uint32_t fake_runtime_record_count(void);

#endif
