/*
 * A small streaming JSON writer that escapes every string it is given.
 * Strings are treated as bytes: valid UTF-8 passes through, control
 * characters become \u00XX, and bytes that are not valid UTF-8 become the
 * six characters \\xNN (a literal backslash in the decoded string), so the
 * output is always valid JSON and nothing is silently lost.
 */
#ifndef SYNCSIGHT_ANALYZER_JSON_H
#define SYNCSIGHT_ANALYZER_JSON_H

#include <stdint.h>
#include <stdio.h>

#define SS_JSON_MAX_DEPTH 32

typedef struct ss_json {
    FILE *out;
    int depth;
    int first[SS_JSON_MAX_DEPTH];   /* no element written yet at this level */
    int after_key;                  /* a key was written: the value needs no comma */
    int pretty;
} ss_json;

void ss_json_init(ss_json *j, FILE *out, int pretty);
void ss_json_obj_begin(ss_json *j);
void ss_json_obj_end(ss_json *j);
void ss_json_arr_begin(ss_json *j);
void ss_json_arr_end(ss_json *j);
void ss_json_key(ss_json *j, const char *key);
void ss_json_str(ss_json *j, const char *s);
void ss_json_strn(ss_json *j, const char *s, size_t len);
void ss_json_int(ss_json *j, int64_t v);
void ss_json_uint(ss_json *j, uint64_t v);
void ss_json_double(ss_json *j, double v);     /* non-finite values become null */
void ss_json_bool(ss_json *j, int v);
void ss_json_null(ss_json *j);
/* Write a string's escaped form (with quotes) to a FILE, no structure. */
void ss_json_write_string(FILE *out, const char *s, size_t len);

/* key + value shorthands */
static inline void ss_json_kstr(ss_json *j, const char *k, const char *v) { ss_json_key(j, k); if (v) ss_json_str(j, v); else ss_json_null(j); }
static inline void ss_json_kint(ss_json *j, const char *k, int64_t v) { ss_json_key(j, k); ss_json_int(j, v); }
static inline void ss_json_kuint(ss_json *j, const char *k, uint64_t v) { ss_json_key(j, k); ss_json_uint(j, v); }
static inline void ss_json_kdouble(ss_json *j, const char *k, double v) { ss_json_key(j, k); ss_json_double(j, v); }

#endif
