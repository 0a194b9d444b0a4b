/*
 * text_out: writing text into a caller's buffer with snprintf's contract,
 * for the printers of proto/ (range_parse.c and filter_parse.c).
 *
 * Every write counts its bytes whether they fit or not, so a printer can
 * be run once with a small buffer and report how much it needed.  Pure C,
 * no I/O; internal to proto/.
 */
#ifndef PERFGATE_TEXT_OUT_H
#define PERFGATE_TEXT_OUT_H

#include <stddef.h>

struct text_out {
	char *buf;
	size_t cap;
	size_t len;	/* bytes written so far, those that did not fit included */
};

void text_out_put(struct text_out *o, const char *s, size_t n);
void text_out_puts(struct text_out *o, const char *s);
void text_out_char(struct text_out *o, char c);
/* NUL-terminate what fits (when cap > 0); returns the whole length. */
size_t text_out_end(struct text_out *o);

#endif
