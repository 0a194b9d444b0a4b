/*
 * json_buf: JSON written straight into a buffer that is kept and reused,
 * for replies on the hot path (a window end), where building a jansson
 * tree and dumping it would allocate on every call.  The bytes are what
 * jansson's json_dumps(JSON_COMPACT | JSON_PRESERVE_ORDER) gives for the
 * same values: strings escaped as jansson escapes them, and text that is
 * not UTF-8 made valid as agent/utf8 does (a stray byte becomes U+FFFD).
 * The run's document is still built with jansson (json_report).
 */
#ifndef PERFGATE_JSON_BUF_H
#define PERFGATE_JSON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_buf {
	char *data;
	size_t len, cap;	/* bytes written, room (grows, never shrinks) */
	size_t max;		/* longest text allowed; past it failed is set */
	bool failed;		/* out of memory or past max: the text is cut */
};

/* Start a new text in b (its memory is kept from the last one). */
void json_buf_reset(struct json_buf *b, size_t max);
void json_buf_free(struct json_buf *b);
/* Raw bytes: punctuation, keys' colons, null. */
void json_buf_raw(struct json_buf *b, const char *text, size_t n);
/* A JSON string: quotes, escapes, stray bytes replaced. */
void json_buf_string(struct json_buf *b, const char *text);
/* Several pieces as one JSON string ("event@range" keys). */
void json_buf_string2(struct json_buf *b, const char *a, const char *sep, const char *c);
/* An integer as jansson's json_int_t (a signed 64-bit) prints it. */
void json_buf_int(struct json_buf *b, uint64_t value);
/* The text so far, NUL-terminated; NULL when it failed. */
const char *json_buf_text(struct json_buf *b);

#endif
