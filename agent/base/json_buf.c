/*
 * json_buf: compact JSON into a reusable buffer, escaped as jansson does.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/base/json_buf.h"
#include "agent/base/utf8.h"

void json_buf_reset(struct json_buf *b, size_t max)
{
	b->len = 0;
	b->max = max;
	b->failed = false;
}

void json_buf_free(struct json_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Room for n more bytes and a NUL; false (and failed) when there is none. */
static bool json_buf_room(struct json_buf *b, size_t n)
{
	size_t cap;
	char *data;

	if (b->failed)
		return false;
	if (b->len + n + 1 > b->max) {
		b->failed = true;
		return false;
	}
	if (b->len + n + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 512;
	while (cap < b->len + n + 1)
		cap *= 2;
	data = realloc(b->data, cap);
	if (!data) {
		b->failed = true;
		return false;
	}
	b->data = data;
	b->cap = cap;
	return true;
}

void json_buf_raw(struct json_buf *b, const char *text, size_t n)
{
	if (!json_buf_room(b, n))
		return;
	memcpy(b->data + b->len, text, n);
	b->len += n;
}

/* The inside of a JSON string: as jansson's dump, without
 * JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH. */
static void json_buf_escaped(struct json_buf *b, const char *text)
{
	static const char hex[] = "0123456789ABCDEF";

	while (*text) {
		const char *run = text;
		size_t n;

		/* Bytes that go out as they are, in one copy. */
		while (*text) {
			unsigned char c = (unsigned char)*text;

			if (c < 0x20 || c == '"' || c == '\\')
				break;
			if (c < 0x80) {
				text++;
				continue;
			}
			n = utf8_char_len(text);
			if (n == 0)
				break;
			text += n;
		}
		json_buf_raw(b, run, (size_t)(text - run));
		if (!*text)
			return;
		switch (*text) {
		case '"':  json_buf_raw(b, "\\\"", 2); break;
		case '\\': json_buf_raw(b, "\\\\", 2); break;
		case '\b': json_buf_raw(b, "\\b", 2); break;
		case '\f': json_buf_raw(b, "\\f", 2); break;
		case '\n': json_buf_raw(b, "\\n", 2); break;
		case '\r': json_buf_raw(b, "\\r", 2); break;
		case '\t': json_buf_raw(b, "\\t", 2); break;
		default:
			if ((unsigned char)*text < 0x20) {
				char u[6] = { '\\', 'u', '0', '0', hex[(unsigned char)*text >> 4],
					      hex[*text & 0xf] };

				json_buf_raw(b, u, sizeof(u));
			} else {
				json_buf_raw(b, UTF8_REPLACEMENT, 3);	/* a stray byte */
			}
		}
		text++;
	}
}

void json_buf_string(struct json_buf *b, const char *text)
{
	json_buf_raw(b, "\"", 1);
	json_buf_escaped(b, text);
	json_buf_raw(b, "\"", 1);
}

void json_buf_string2(struct json_buf *b, const char *a, const char *sep, const char *c)
{
	json_buf_raw(b, "\"", 1);
	json_buf_escaped(b, a);
	json_buf_escaped(b, sep);
	json_buf_escaped(b, c);
	json_buf_raw(b, "\"", 1);
}

void json_buf_int(struct json_buf *b, uint64_t value)
{
	char digits[24], *p = digits + sizeof(digits);
	bool negative = (int64_t)value < 0;
	uint64_t v = negative ? -value : value;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (negative)
		*--p = '-';
	json_buf_raw(b, p, (size_t)(digits + sizeof(digits) - p));
}

const char *json_buf_text(struct json_buf *b)
{
	if (!json_buf_room(b, 0))
		return NULL;
	b->data[b->len] = '\0';
	return b->data;
}
