/* Streaming JSON writer (see json.h). */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "json.h"
#include "escape.h"

void ss_json_init(ss_json *j, FILE *out, int pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
    j->first[0] = 1;
}

static void indent(ss_json *j)
{
    if (!j->pretty) return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
}

/* Separator before a value or key at the current level. */
static void before_value(ss_json *j)
{
    if (j->after_key) { j->after_key = 0; return; }
    if (!j->first[j->depth]) fputc(',', j->out);
    j->first[j->depth] = 0;
    if (j->depth > 0) indent(j);
}

static void open_level(ss_json *j, char c)
{
    before_value(j);
    fputc(c, j->out);
    if (j->depth + 1 < SS_JSON_MAX_DEPTH) j->depth++;
    j->first[j->depth] = 1;
}

static void close_level(ss_json *j, char c)
{
    int empty = j->first[j->depth];
    if (j->depth > 0) j->depth--;
    if (!empty) indent(j);
    fputc(c, j->out);
}

void ss_json_obj_begin(ss_json *j) { open_level(j, '{'); }
void ss_json_obj_end(ss_json *j) { close_level(j, '}'); }
void ss_json_arr_begin(ss_json *j) { open_level(j, '['); }
void ss_json_arr_end(ss_json *j) { close_level(j, ']'); }

void ss_json_write_string(FILE *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', out);
    size_t i = 0;
    while (i < len) {
        unsigned cp = 0;
        size_t n = ss_utf8_seq_len(u + i, len - i, &cp);
        if (n == 0) {
            fprintf(out, "\\\\x%c%c", hex[u[i] >> 4], hex[u[i] & 15]);
            i++;
            continue;
        }
        if (cp == '"') fputs("\\\"", out);
        else if (cp == '\\') fputs("\\\\", out);
        else if (cp == '\n') fputs("\\n", out);
        else if (cp == '\t') fputs("\\t", out);
        else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
            fprintf(out, "\\u%04x", cp);
        else if (cp == 0x2028 || cp == 0x2029)   /* line separators break JS embedding */
            fprintf(out, "\\u%04x", cp);
        else fwrite(u + i, 1, n, out);
        i += n;
    }
    fputc('"', out);
}

void ss_json_key(ss_json *j, const char *key)
{
    before_value(j);
    ss_json_write_string(j->out, key, strlen(key));
    fputs(j->pretty ? ": " : ":", j->out);
    j->after_key = 1;
}

void ss_json_strn(ss_json *j, const char *s, size_t len) { before_value(j); ss_json_write_string(j->out, s ? s : "", s ? len : 0); }
void ss_json_str(ss_json *j, const char *s) { ss_json_strn(j, s, s ? strlen(s) : 0); }
void ss_json_int(ss_json *j, int64_t v) { before_value(j); fprintf(j->out, "%" PRId64, v); }
void ss_json_uint(ss_json *j, uint64_t v) { before_value(j); fprintf(j->out, "%" PRIu64, v); }
void ss_json_bool(ss_json *j, int v) { before_value(j); fputs(v ? "true" : "false", j->out); }
void ss_json_null(ss_json *j) { before_value(j); fputs("null", j->out); }
void ss_json_double(ss_json *j, double v)
{
    before_value(j);
    if (!isfinite(v)) { fputs("null", j->out); return; }
    /* millisecond values: nanosecond precision, without trailing zeros */
    char b[64];
    if (fabs(v) >= 1e15) snprintf(b, sizeof b, "%.17g", v);
    else {
        snprintf(b, sizeof b, "%.6f", v);
        char *e = b + strlen(b) - 1;
        while (*e == '0') *e-- = 0;
        if (*e == '.') *e = 0;
        if (!strcmp(b, "-0")) strcpy(b, "0");
    }
    fputs(b, j->out);
}
