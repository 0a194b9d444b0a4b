/*
 * utf8: the U+FFFD replacement of stray bytes in NUL-terminated text
 * (proto/utf8.c judges each sequence).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/utf8.h"

/* s is NUL-terminated: a sequence ends at its NUL at the latest. */
size_t utf8_char_len(const char *s)
{
	return utf8_seq_len(s, strnlen(s, 4));
}

bool utf8_valid(const char *s)
{
	size_t n;

	for (; *s; s += n)
		if ((n = utf8_char_len(s)) == 0)
			return false;
	return true;
}

char *utf8_sanitize(const char *s)
{
	size_t len = strlen(s), o = 0;
	/* A stray byte grows to U+FFFD's bytes. */
	char *out = malloc(UTF8_REPLACEMENT_LEN * len + 1);

	if (!out)
		return NULL;
	while (*s) {
		size_t n = utf8_char_len(s);

		if (n == 0) {
			memcpy(out + o, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
			o += UTF8_REPLACEMENT_LEN;
			s++;
			continue;
		}
		memcpy(out + o, s, n);
		o += n;
		s += n;
	}
	out[o] = '\0';
	return out;
}
