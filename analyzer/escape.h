/*
 * Escaping of program-provided strings (kernel names, NVTX text, paths,
 * thread names) before they reach a terminal, JSON or HTML.
 *
 * Terminal form: printable ASCII and well-formed UTF-8 pass through; control
 * characters (C0, DEL, and the C1 range U+0080..U+009F, which some terminals
 * act on), ESC included, and bytes that are not valid UTF-8 appear as \xNN;
 * a backslash appears as \\ so the output is unambiguous.
 */
#ifndef SYNCSIGHT_ANALYZER_ESCAPE_H
#define SYNCSIGHT_ANALYZER_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes there
 * are not a well-formed sequence (overlong, surrogate, > U+10FFFF, cut). */
size_t ss_utf8_seq_len(const unsigned char *s, size_t avail, unsigned *codepoint);

void ss_escape_term(FILE *out, const char *s, size_t len);
/* Same into a buffer, always NUL-terminated; returns the length written
 * (output is cut at a character boundary when it does not fit). */
size_t ss_escape_term_buf(char *out, size_t outlen, const char *s, size_t len);
/* HTML text/attribute escaping (& < > " ') on top of the terminal rules. */
void ss_escape_html(FILE *out, const char *s, size_t len);

#endif
