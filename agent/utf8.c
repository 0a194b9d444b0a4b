/*
 * utf8: validity per RFC 3629, and the U+FFFD replacement of stray bytes.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/utf8.h"

static int utf8_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t utf8_char_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return utf8_cont(s[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		/* Not overlong (E0), not a surrogate (ED). */
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
		return s[1] >= lo && s[1] <= hi && utf8_cont(s[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		/* Not overlong (F0), not past U+10FFFF (F4). */
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
		return s[1] >= lo && s[1] <= hi && utf8_cont(s[2]) && utf8_cont(s[3]) ? 4 : 0;
	}
	return 0;
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
	/* A stray byte grows to three. */
	char *out = malloc(3 * len + 1);

	if (!out)
		return NULL;
	while (*s) {
		size_t n = utf8_char_len(s);

		if (n == 0) {
			memcpy(out + o, UTF8_REPLACEMENT, 3);
			o += 3;
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
