/*
 * text_out: bounded text output with snprintf's contract.
 */
#include <string.h>

#include "grammar/text_out.h"

void text_out_put(struct text_out *o, const char *s, size_t n)
{
	if (o->len < o->cap) {
		size_t room = o->cap - o->len;

		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

void text_out_puts(struct text_out *o, const char *s)
{
	text_out_put(o, s, strlen(s));
}

void text_out_char(struct text_out *o, char c)
{
	text_out_put(o, &c, 1);
}

size_t text_out_end(struct text_out *o)
{
	if (o->cap > 0)
		o->buf[o->len < o->cap ? o->len : o->cap - 1] = '\0';
	return o->len;
}
