/*
 * scan: the reading state the two grammar modules share (range_parse.c and
 * filter_parse.c): the text, the position in it, and the first error.
 *
 * Both parsers walk bytes the same way: peek ahead, skip whitespace, match
 * a literal token, copy a name out, and stop at the first error with the
 * byte offset it is about.  That part lives here, once; each parser keeps
 * its own grammar, its own character sets (event names, unquoted words)
 * and its own messages.  Allocation failures are errors like syntax errors
 * ("out of memory" at the current position, errno ENOMEM), so the helpers
 * that allocate record them too.  Errors go into a struct pg_error
 * (common/error.h) that the parser's caller owns and clears.
 *
 * Pure C, no I/O; internal to grammar/ (not part of any public API).
 */
#ifndef PERFGATE_SCAN_H
#define PERFGATE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>		/* realloc, for SCAN_PUSH */

#include "common/error.h"

struct scan {
	const char *s;		/* the text: s[0..len), not NUL-terminated */
	size_t len;
	size_t pos;
	bool failed;		/* an error is recorded; later ones are dropped */
	struct pg_error *err;	/* where the error goes (NULL: only errno is set) */
};

/* An initializer for a scan of text[0..len_) from its start that reports
 * into err (NULL: nowhere). */
#define SCAN_INIT(text, len_, err_) { .s = (text), .len = (len_), .err = (err_) }

/* ---- errors --------------------------------------------------------------- */

/*
 * Record an error about the byte at offset and set errno to EINVAL.  The
 * first error wins: later ones are consequences of it.
 */
__attribute__((format(printf, 3, 4)))
void scan_fail(struct scan *sc, size_t offset, const char *fmt, ...);

/* Record "out of memory" at the current position; errno is ENOMEM. */
void scan_fail_nomem(struct scan *sc);

/* Names quoted in error reasons are cut to this many bytes ... */
#define SCAN_QUOTE_MAX 40
/* ... and fit a buffer of this size, "..." and NUL included. */
#define SCAN_QUOTE_SIZE (SCAN_QUOTE_MAX + 4)

/* text[0..n) for a reason: cut to SCAN_QUOTE_MAX bytes, with "..." when cut. */
const char *scan_quote(char *buf, size_t cap, const char *text, size_t n);

/* ---- characters (ASCII only, whatever the locale; -1 is none) ------------- */

bool scan_is_space(int c);	/* ' ', \t, \n, \r, \v, \f */
bool scan_is_alpha(int c);	/* a-z A-Z */
bool scan_is_digit(int c);	/* 0-9 */
bool scan_is_alnum(int c);	/* a-z A-Z 0-9 */
bool scan_is_ident(int c);	/* a-z A-Z 0-9 _ */

/* ---- reading -------------------------------------------------------------- */

/* The byte k places ahead of the position, or -1 past the end. */
int scan_peek(const struct scan *sc, size_t k);

/* Move the position past any whitespace. */
void scan_skip_space(struct scan *sc);

/* Does the text at the position start with tok?  (The position stays.) */
bool scan_looking_at(const struct scan *sc, const char *tok);

/*
 * Enter one more level of '(' or '!': true, or false with "WHAT nested too
 * deeply (over MAX levels of '(' and '!')" recorded.  *depth counts up
 * either way; the caller counts it down when it leaves the level.
 */
bool scan_nest(struct scan *sc, int *depth, int max, const char *what);

/* ---- n-ary operators --------------------------------------------------------- */

/*
 * One level of a left-to-right n-ary operator, operand { tok operand }, as
 * both grammars have it ("&&" and "||"), for either's tree: the parser
 * passes itself and its node functions, and gets its own nodes back.
 */
struct scan_nary {
	const char *tok;	/* "&&" */
	int kind;		/* the node's kind, given to node_new */
	/* Parse one operand, which follows the text after ("(", "&&"). */
	void *(*operand)(void *parser, const char *after);
	void *(*node_new)(void *parser, int kind, size_t offset);
	/* Append child, which ends at byte end, to node; false on failure
	 * (child is still the caller's). */
	bool (*node_add)(void *parser, void *node, void *child, size_t end);
	/* Free a subtree the parse gives up; NULL when the parser owns every
	 * node it made anyway. */
	void (*node_free)(void *node);
};

/*
 * Parse the level at sc->pos: a single operand is returned as it is,
 * without a node around it; two or more under one node of level->kind.
 * NULL when one fails (its error recorded).
 */
void *scan_nary(struct scan *sc, void *parser, const struct scan_nary *level, const char *after);

/* ---- allocating (failure is recorded with scan_fail_nomem) ----------------- */

/* A NUL-terminated copy of s[0..n), or NULL. */
char *scan_copy(struct scan *sc, const char *s, size_t n);

/* calloc(1, size), or NULL. */
void *scan_calloc(struct scan *sc, size_t size);

/*
 * Append item to the growing array arr of n items: true, or false (out of
 * memory) with the array left as it was.
 */
#define SCAN_PUSH(sc, arr, n, item) __extension__ ({				\
	__typeof__(arr) a_ = realloc((arr), ((n) + 1) * sizeof(*(arr)));	\
	a_ ? ((arr) = a_, (arr)[(n)++] = (item), true)				\
	   : (scan_fail_nomem(sc), false);					\
})

#endif
