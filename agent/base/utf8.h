/*
 * utf8: text from the command line, the kernel or a client made valid
 * UTF-8 before it enters JSON (jansson refuses anything else, and a -j
 * line with a stray byte does not parse).  Each byte that does not belong
 * to a well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF) becomes U+FFFD REPLACEMENT CHARACTER.
 */
#ifndef PERFGATE_UTF8_H
#define PERFGATE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/utf8.h"

/* Length (1-4) of the well-formed sequence at the start of the
 * NUL-terminated s, or 0 when its first byte does not start one. */
size_t utf8_char_len(const char *s);
/* s is well-formed UTF-8 throughout: nothing to replace. */
bool utf8_valid(const char *s);
/* A malloc'd copy of s with every stray byte replaced by U+FFFD. */
char *utf8_sanitize(const char *s);

#endif
