/*
 * scan.c: the reading state both grammar modules share (range_parse.c,
 * filter_parse.c): first-error-wins errors, character classes, the cursor
 * and allocation that records its failure (the API is in scan.h).
 */
#include "grammar/scan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors --------------------------------------------------------------- */

void scan_fail(struct scan *sc, size_t offset, const char *fmt, ...)
{
	va_list ap;

	if (sc->failed)
		return;
	sc->failed = true;
	va_start(ap, fmt);
	pg_error_vset(sc->err, offset, fmt, ap);
	va_end(ap);
	errno = EINVAL;
}

void scan_fail_nomem(struct scan *sc)
{
	scan_fail(sc, sc->pos, "out of memory");
	errno = ENOMEM;
}

const char *scan_quote(char *buf, size_t cap, const char *text, size_t n)
{
	if (n > SCAN_QUOTE_MAX)
		snprintf(buf, cap, "%.*s...", SCAN_QUOTE_MAX, text);
	else
		snprintf(buf, cap, "%.*s", (int)n, text);
	return buf;
}

/* ---- characters ------------------------------------------------------------ */

bool scan_is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool scan_is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool scan_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

bool scan_is_alnum(int c)
{
	return scan_is_alpha(c) || scan_is_digit(c);
}

bool scan_is_ident(int c)
{
	return scan_is_alnum(c) || c == '_';
}

/* ---- reading ---------------------------------------------------------------- */

int scan_peek(const struct scan *sc, size_t k)
{
	return sc->pos + k < sc->len ? (unsigned char)sc->s[sc->pos + k] : -1;
}

void scan_skip_space(struct scan *sc)
{
	while (sc->pos < sc->len && scan_is_space((unsigned char)sc->s[sc->pos]))
		sc->pos++;
}

bool scan_looking_at(const struct scan *sc, const char *tok)
{
	size_t n = strlen(tok);

	return sc->len - sc->pos >= n && memcmp(sc->s + sc->pos, tok, n) == 0;
}

bool scan_nest(struct scan *sc, int *depth, int max, const char *what)
{
	if (++*depth <= max)
		return true;
	scan_fail(sc, sc->pos, "%s nested too deeply (over %d levels of '(' and '!')", what, max);
	return false;
}

/* ---- n-ary operators ----------------------------------------------------------- */

static void nary_drop(const struct scan_nary *level, void *node)
{
	if (level->node_free && node)
		level->node_free(node);
}

void *scan_nary(struct scan *sc, void *parser, const struct scan_nary *level, const char *after)
{
	void *first, *node = NULL, *child;
	size_t first_at, first_end;

	scan_skip_space(sc);
	first_at = sc->pos;
	first = level->operand(parser, after);
	if (!first)
		return NULL;
	first_end = sc->pos;
	for (;;) {
		scan_skip_space(sc);
		if (!scan_looking_at(sc, level->tok))
			return node ? node : first;
		sc->pos += strlen(level->tok);
		if (!node) {
			node = level->node_new(parser, level->kind, first_at);
			if (!node || !level->node_add(parser, node, first, first_end)) {
				nary_drop(level, first);
				nary_drop(level, node);
				return NULL;
			}
		}
		child = level->operand(parser, level->tok);
		if (!child || !level->node_add(parser, node, child, sc->pos)) {
			nary_drop(level, child);
			nary_drop(level, node);
			return NULL;
		}
	}
}

/* ---- allocating --------------------------------------------------------------- */

char *scan_copy(struct scan *sc, const char *s, size_t n)
{
	char *c = malloc(n + 1);

	if (!c) {
		scan_fail_nomem(sc);
		return NULL;
	}
	if (n)		/* s may be NULL when n is 0 */
		memcpy(c, s, n);
	c[n] = '\0';
	return c;
}

void *scan_calloc(struct scan *sc, size_t size)
{
	void *p = calloc(1, size);

	if (!p)
		scan_fail_nomem(sc);
	return p;
}
