/*
 * utf8: validity of one UTF-8 sequence, per RFC 3629 (see utf8.h).
 */
#include "proto/utf8.h"

#include <stdbool.h>

static bool utf8_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t utf8_seq_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c, lo = 0x80, hi = 0xbf;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && utf8_cont(s[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		/* Not overlong (E0), not a surrogate (ED). */
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
		return n >= 3 && s[1] >= lo && s[1] <= hi && utf8_cont(s[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		/* Not overlong (F0), not past U+10FFFF (F4). */
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
		return n >= 4 && s[1] >= lo && s[1] <= hi && utf8_cont(s[2]) &&
		       utf8_cont(s[3]) ? 4 : 0;
	}
	return 0;
}
