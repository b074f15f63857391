/* Terminal/HTML-safe escaping of program strings (see escape.h). */
#include <string.h>
#include "escape.h"

size_t ss_utf8_seq_len(const unsigned char *s, size_t avail, unsigned *codepoint)
{
    if (!avail) return 0;
    unsigned c = s[0], cp, need;
    if (c < 0x80) { if (codepoint) *codepoint = c; return 1; }
    if (c >= 0xc2 && c <= 0xdf) { need = 1; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { need = 2; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { need = 3; cp = c & 0x07; }
    else return 0;
    if (avail < need + 1) return 0;
    for (unsigned i = 1; i <= need; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* reject overlong forms, UTF-16 surrogates and values past U+10FFFF */
    if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    if (codepoint) *codepoint = cp;
    return need + 1;
}

/* Calls emit(piece, n) for each output piece: shared by FILE and buffer forms. */
typedef void (*emit_fn)(void *ctx, const char *p, size_t n);

static void escape_core(emit_fn emit, void *ctx, const char *s, size_t len, int html)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned cp = 0;
        size_t n = ss_utf8_seq_len(u + i, len - i, &cp);
        char tmp[8];
        if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
            /* invalid byte or control character: show each byte as \xNN */
            size_t k = n ? n : 1;
            for (size_t j = 0; j < k; j++) {
                static const char hex[] = "0123456789abcdef";
                tmp[0] = '\\'; tmp[1] = 'x';
                tmp[2] = hex[u[i + j] >> 4]; tmp[3] = hex[u[i + j] & 15];
                emit(ctx, tmp, 4);
            }
            i += k;
            continue;
        }
        if (cp == '\\') emit(ctx, "\\\\", 2);
        else if (html && cp == '&') emit(ctx, "&amp;", 5);
        else if (html && cp == '<') emit(ctx, "&lt;", 4);
        else if (html && cp == '>') emit(ctx, "&gt;", 4);
        else if (html && cp == '"') emit(ctx, "&quot;", 6);
        else if (html && cp == '\'') emit(ctx, "&#39;", 5);
        else emit(ctx, (const char *)u + i, n);
        i += n;
    }
}

static void emit_file(void *ctx, const char *p, size_t n) { fwrite(p, 1, n, (FILE *)ctx); }

void ss_escape_term(FILE *out, const char *s, size_t len) { escape_core(emit_file, out, s, len, 0); }
void ss_escape_html(FILE *out, const char *s, size_t len) { escape_core(emit_file, out, s, len, 1); }

typedef struct bufctx { char *out; size_t cap, used; int full; } bufctx;
static void emit_buf(void *ctx, const char *p, size_t n)
{
    bufctx *b = ctx;
    if (b->full || b->used + n + 1 > b->cap) { b->full = 1; return; }
    memcpy(b->out + b->used, p, n);
    b->used += n;
}

size_t ss_escape_term_buf(char *out, size_t outlen, const char *s, size_t len)
{
    if (!outlen) return 0;
    bufctx b = { out, outlen, 0, 0 };
    escape_core(emit_buf, &b, s, len, 0);
    out[b.used] = 0;
    return b.used;
}
