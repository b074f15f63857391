/*
 * What the analyzer's outputs promise whatever the trace held (docs/fuzzing.md,
 * fuzz_export): program strings (kernel names, NVTX text, paths, thread
 * names) are escaped before they reach JSON, HTML or a terminal.
 *
 *   oc_json      a whole buffer is one RFC 8259 JSON value: UTF-8, strings
 *                with no raw control character and only the escapes JSON
 *                has, numbers in JSON's grammar (no NaN, no Infinity)
 *   oc_terminal  text for a terminal: well-formed UTF-8, no control
 *                character but newline (C0, DEL and C1: ESC would let a
 *                kernel name drive the terminal)
 *   oc_html      the HTML page: its script elements are the template's
 *                two, the data element holds valid JSON with no raw '<',
 *                '>' or '&' (a name cannot close the element), and outside
 *                the scripts there is no markup the template does not write
 *
 * Each returns NULL when the promise holds, else a short reason with the
 * offset (static storage: the caller prints it before the next call).
 */
#ifndef SYNCSIGHT_FUZZ_OUTPUT_CHECKS_H
#define SYNCSIGHT_FUZZ_OUTPUT_CHECKS_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static char oc_why[256];

static inline const char *oc_fail(const char *what, size_t at)
{
    snprintf(oc_why, sizeof oc_why, "%s at byte %zu", what, at);
    return oc_why;
}

/* why (often oc_why itself) behind a prefix saying where, in oc_why */
static inline const char *oc_prefixed(const char *where, const char *why)
{
    char inner[sizeof oc_why];
    snprintf(inner, sizeof inner, "%s", why);
    snprintf(oc_why, sizeof oc_why, "%.80s%.160s", where, inner);
    return oc_why;
}

/* Length of the well-formed UTF-8 sequence at s (1..4), 0 if none; *cp its
 * code point.  Independent of analyzer/escape.c on purpose: the check must
 * not share the code it checks. */
static inline size_t oc_utf8(const unsigned char *s, size_t n, unsigned *cp)
{
    if (!n) return 0;
    unsigned c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (!len || c > 0xf4 || len > n) return 0;
    unsigned v = c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    static const unsigned least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (v < least[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return len;
}

typedef struct oc_json_in { const unsigned char *s; size_t n, i; int depth; const char *why; } oc_json_in;

static inline void oc_ws(oc_json_in *j)
{
    while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\n' || j->s[j->i] == '\r' || j->s[j->i] == '\t')) j->i++;
}

static inline int oc_bad(oc_json_in *j, const char *what)
{
    if (!j->why) j->why = oc_fail(what, j->i);
    return 0;
}

static inline int oc_hex4(oc_json_in *j, unsigned *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++, j->i++) {
        if (j->i >= j->n) return oc_bad(j, "JSON: \\u escape cut");
        unsigned char c = j->s[j->i];
        unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
        if (d == 16) return oc_bad(j, "JSON: bad \\u escape");
        *v = *v << 4 | d;
    }
    return 1;
}

static inline int oc_string(oc_json_in *j)
{
    j->i++;   /* the opening quote */
    while (j->i < j->n) {
        unsigned char c = j->s[j->i];
        if (c == '"') { j->i++; return 1; }
        if (c < 0x20) return oc_bad(j, "JSON: raw control character in a string");
        if (c == '\\') {
            if (++j->i >= j->n) break;
            c = j->s[j->i++];
            if (c == 'u') {
                unsigned v, w;
                if (!oc_hex4(j, &v)) return 0;
                /* a lone surrogate is no character: a decoder may reject it */
                if (v >= 0xdc00 && v <= 0xdfff) return oc_bad(j, "JSON: lone low surrogate escape");
                if (v >= 0xd800 && v <= 0xdbff) {
                    if (j->i + 2 > j->n || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u')
                        return oc_bad(j, "JSON: lone high surrogate escape");
                    j->i += 2;
                    if (!oc_hex4(j, &w)) return 0;
                    if (w < 0xdc00 || w > 0xdfff) return oc_bad(j, "JSON: high surrogate without its low half");
                }
            } else if (!c || !strchr("\"\\/bfnrt", c)) {
                return oc_bad(j, "JSON: unknown escape");
            }
            continue;
        }
        unsigned cp;
        size_t len = oc_utf8(j->s + j->i, j->n - j->i, &cp);
        if (!len) return oc_bad(j, "JSON: invalid UTF-8 in a string");
        j->i += len;
    }
    return oc_bad(j, "JSON: unterminated string");
}

static inline int oc_digits(oc_json_in *j)
{
    size_t at = j->i;
    while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') j->i++;
    return j->i > at;
}

static inline int oc_number(oc_json_in *j)
{
    if (j->s[j->i] == '-') j->i++;
    if (j->i < j->n && j->s[j->i] == '0') j->i++;
    else if (!oc_digits(j)) return oc_bad(j, "JSON: bad number");
    if (j->i < j->n && j->s[j->i] == '.') {
        j->i++;
        if (!oc_digits(j)) return oc_bad(j, "JSON: bad fraction");
    }
    if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
        j->i++;
        if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-')) j->i++;
        if (!oc_digits(j)) return oc_bad(j, "JSON: bad exponent");
    }
    return 1;
}

static inline int oc_value(oc_json_in *j)
{
    oc_ws(j);
    if (j->i >= j->n) return oc_bad(j, "JSON: value expected, end of output");
    unsigned char c = j->s[j->i];
    if (c == '{' || c == '[') {
        if (++j->depth > 256) return oc_bad(j, "JSON: nested deeper than 256");
        char close = c == '{' ? '}' : ']';
        j->i++;
        oc_ws(j);
        if (j->i < j->n && j->s[j->i] == close) { j->i++; j->depth--; return 1; }
        for (;;) {
            if (c == '{') {
                oc_ws(j);
                if (j->i >= j->n || j->s[j->i] != '"') return oc_bad(j, "JSON: key expected");
                if (!oc_string(j)) return 0;
                oc_ws(j);
                if (j->i >= j->n || j->s[j->i] != ':') return oc_bad(j, "JSON: ':' expected");
                j->i++;
            }
            if (!oc_value(j)) return 0;
            oc_ws(j);
            if (j->i < j->n && j->s[j->i] == ',') { j->i++; continue; }
            if (j->i < j->n && j->s[j->i] == close) { j->i++; j->depth--; return 1; }
            return oc_bad(j, "JSON: ',' or the closing bracket expected");
        }
    }
    if (c == '"') return oc_string(j);
    if (c == '-' || (c >= '0' && c <= '9')) return oc_number(j);
    static const char *const lit[] = { "true", "false", "null" };
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lit[k]);
        if (j->n - j->i >= l && !memcmp(j->s + j->i, lit[k], l)) { j->i += l; return 1; }
    }
    return oc_bad(j, "JSON: unexpected character (NaN or Infinity?)");
}

static inline const char *oc_json(const char *s, size_t n)
{
    oc_json_in j = { (const unsigned char *)s, n, 0, 0, NULL };
    if (!oc_value(&j)) return j.why;
    oc_ws(&j);
    if (j.i != n) return oc_fail("JSON: text after the value", j.i);
    return NULL;
}

static inline const char *oc_terminal(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t len = oc_utf8(u + i, n - i, &cp);
        if (!len) return oc_fail("text: invalid UTF-8", i);
        if ((cp < 0x20 && cp != '\n') || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
            return oc_fail(cp == 0x1b ? "text: raw ESC" : "text: raw control character", i);
        i += len;
    }
    return NULL;
}

/* occurrences of `pat`, case-insensitive (HTML tag names are) */
static inline size_t oc_count_ci(const char *s, size_t n, const char *pat)
{
    size_t l = strlen(pat), k = 0;
    for (size_t i = 0; i + l <= n; i++)
        if (!strncasecmp(s + i, pat, l)) k++;
    return k;
}

#define OC_HTML_DATA_OPEN "<script type=\"application/json\" id=\"syncsight-data\">"

/* The elements export_html.c's template writes: outside the two scripts'
 * contents, a '<' that opens anything else came from a string. */
static inline int oc_html_tag_known(const char *s, size_t n)
{
    static const char *const known[] = { "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "div", "span",
                                         "button", "canvas", "select", "option", "h2", "b", "script" };
    size_t i = 0;
    if (i < n && s[i] == '/') i++;
    size_t a = i;
    while (i < n && (s[i] == '!' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                     (s[i] >= '0' && s[i] <= '9')))
        i++;
    if (i == n || (s[i] != '>' && s[i] != ' ' && s[i] != '\n')) return 0;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (strlen(known[k]) == i - a && !strncasecmp(s + a, known[k], i - a)) return 1;
    return 0;
}

static inline const char *oc_html(const char *s, size_t n)
{
    /* export_html.c's template: the data element and the page's code */
    if (oc_count_ci(s, n, "<script") != 2 || oc_count_ci(s, n, "</script") != 2)
        return oc_fail("HTML: script elements other than the template's two", 0);
    const char *open = memmem(s, n, OC_HTML_DATA_OPEN, sizeof OC_HTML_DATA_OPEN - 1);
    if (!open) return oc_fail("HTML: no data element", 0);
    const char *data = open + sizeof OC_HTML_DATA_OPEN - 1;
    const char *end = memmem(data, n - (size_t)(data - s), "</script>", 9);
    if (!end) return oc_fail("HTML: data element not closed", (size_t)(data - s));
    for (const char *p = data; p < end; p++)
        if (*p == '<' || *p == '>' || *p == '&') return oc_fail("HTML: raw '<', '>' or '&' in the data", (size_t)(p - s));
    /* the markup outside the scripts' contents: the template's elements only */
    for (size_t i = 0, in_script = 0; i < n; i++) {
        if (s[i] != '<') continue;
        if (in_script && strncasecmp(s + i, "</script", 8)) continue;   /* the code's own '<' */
        if (!oc_html_tag_known(s + i + 1, n - i - 1)) return oc_fail("HTML: markup the template does not write", i);
        if (!strncasecmp(s + i, "<script", 7)) in_script = 1;
        else if (!strncasecmp(s + i, "</script", 8)) in_script = 0;
    }
    const char *why = oc_json(data, (size_t)(end - data));
    return why ? oc_prefixed("HTML data: ", why) : NULL;
}

#endif
