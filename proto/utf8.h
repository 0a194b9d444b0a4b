/*
 * utf8: where well-formed UTF-8 sequences start and end, for text that
 * leaves perfgate (control replies, JSON, report labels) and must be valid
 * UTF-8 whatever bytes a client or the command line put into it.
 *
 * Well-formed means RFC 3629: no overlong forms, no surrogates, nothing
 * past U+10FFFF.  A byte that does not start such a sequence is shown as
 * U+FFFD REPLACEMENT CHARACTER by the callers.  Pure: no I/O, no
 * allocation, so that proto/ can use it and the fuzzers reach it.
 */
#ifndef PERFGATE_PROTO_UTF8_H
#define PERFGATE_PROTO_UTF8_H

#include <stddef.h>

#define UTF8_REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */
#define UTF8_REPLACEMENT_LEN 3

/* Length (1-4) of the well-formed sequence at the start of s[0..n), or 0
 * when n is 0 or s[0] does not start one that ends within n bytes. */
size_t utf8_seq_len(const char *s, size_t n);

#endif
