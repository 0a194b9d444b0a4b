/*
 * filter_parse.c: a recursive-descent parser for the kernel's tracepoint
 * filter syntax, and its canonical printer (the API is in filter_parse.h).
 *
 * The rules follow what the kernel's own parser (kernel/trace/
 * trace_events_filter.c) accepts, so that a filter this parser passes only
 * fails in the kernel for reasons that need the tracepoint's format (an
 * unknown field, a string compared with '<'), which the agent checks next:
 * operators are matched longest first, "&&" is never the '&' operator, a
 * number is what kstrtoull(s, 0) reads, strings have no escapes and at most
 * 255 bytes, "CPUS{...}" holds a cpulist.  Where the kernel would say
 * "Invalid argument" with a caret at the start of the filter, this parser
 * names the byte and the reason.
 *
 * Input is untrusted (control channels, command lines) and fuzzed
 * (tests/fuzz/fuzz_range.c): every byte value is handled, nesting is
 * bounded, and an allocation failure is an error like any other.
 */
#include "proto/filter_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's limits: MAX_FILTER_STR_VAL and its 24-byte number buffer. */
#define FILTER_STR_MAX 255
#define FILTER_NUM_MAX 23
/* Names quoted in error reasons are cut to this many bytes. */
#define QUOTE_MAX 40

struct fparser {
	const char *s;
	size_t len;
	size_t pos;
	bool paren;		/* filter_parse_paren: ends at an unmatched ')' */
	int depth;
	bool failed;
	struct filter_error *err;
};

/* ---- errors --------------------------------------------------------------- */

/* The first error wins: later ones are consequences of it. */
__attribute__((format(printf, 3, 4)))
static void fail(struct fparser *p, size_t offset, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	errno = EINVAL;
	if (!p->err)
		return;
	p->err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(p->err->reason, sizeof(p->err->reason), fmt, ap);
	va_end(ap);
}

static void fail_nomem(struct fparser *p)
{
	fail(p, p->pos, "out of memory");
	errno = ENOMEM;
}

/* text[0..n) for a reason: cut to QUOTE_MAX bytes, with "..." when cut. */
static const char *quoted(char *buf, size_t cap, const char *text, size_t n)
{
	if (n > QUOTE_MAX)
		snprintf(buf, cap, "%.*s...", QUOTE_MAX, text);
	else
		snprintf(buf, cap, "%.*s", (int)n, text);
	return buf;
}

/* ---- characters ------------------------------------------------------------ */

static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(int c)
{
	return is_alpha(c) || is_digit(c);
}

/* A byte that may appear in an unquoted word value. */
static bool is_word_byte(int c)
{
	return c > 0x20 && c != 0x7f && !strchr("()&|\"'", c);
}

static int peek(const struct fparser *p, size_t k)
{
	return p->pos + k < p->len ? (unsigned char)p->s[p->pos + k] : -1;
}

static void skip_space(struct fparser *p)
{
	while (p->pos < p->len && is_space((unsigned char)p->s[p->pos]))
		p->pos++;
}

static bool looking_at(const struct fparser *p, const char *tok)
{
	size_t n = strlen(tok);

	return p->len - p->pos >= n && memcmp(p->s + p->pos, tok, n) == 0;
}

static char *copy_bytes(struct fparser *p, const char *s, size_t n)
{
	char *c = malloc(n + 1);

	if (!c) {
		fail_nomem(p);
		return NULL;
	}
	memcpy(c, s, n);
	c[n] = '\0';
	return c;
}

/* ---- nodes ------------------------------------------------------------------ */

static struct filter_node *node_new(struct fparser *p, enum filter_kind kind, size_t offset)
{
	struct filter_node *n = calloc(1, sizeof(*n));

	if (!n) {
		fail_nomem(p);
		return NULL;
	}
	n->kind = kind;
	n->span.offset = offset;
	return n;
}

/*
 * Append child, which the text holds up to end (past its ')' when it was a
 * group: the parentheses of an operand belong to the node around it).  On
 * failure the caller still owns child.
 */
static bool node_add(struct fparser *p, struct filter_node *n, struct filter_node *child,
		     size_t end)
{
	struct filter_node **c = realloc(n->children, (n->nchildren + 1) * sizeof(*c));

	if (!c) {
		fail_nomem(p);
		return false;
	}
	n->children = c;
	n->children[n->nchildren++] = child;
	n->span.len = end - n->span.offset;
	return true;
}

void filter_free(struct filter_node *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->nchildren; i++)
		filter_free(node->children[i]);
	free(node->children);
	free(node->pred.field);
	free(node->pred.value);
	free(node);
}

/* ---- grammar ----------------------------------------------------------------- */

static struct filter_node *parse_or(struct fparser *p, const char *after);

/*
 * After a complete operand, only "&&", "||", a closing ')' or the end may
 * follow; name what came instead.  in_group: inside the filter's own
 * parentheses, where ')' is expected.
 */
static void fail_after_operand(struct fparser *p, bool in_group)
{
	int c = peek(p, 0);

	if (c < 0) {
		if (p->paren)
			fail(p, p->pos, "unterminated filter: missing ')'");
		else if (in_group)
			fail(p, p->pos, "missing ')'");
	} else if ((c == '&' || c == '|') && peek(p, 1) != c) {
		fail(p, p->pos, "single '%c' between conditions: use '%c%c'", c, c, c);
	} else if (c == ')' && !in_group && !p->paren) {
		fail(p, p->pos, "unexpected ')'");
	} else if (in_group || p->paren) {
		fail(p, p->pos, "expected '&&', '||' or ')' in filter");
	} else {
		fail(p, p->pos, "expected '&&' or '||' in filter");
	}
}

struct op_name {
	const char *text;
	enum filter_op op;
};

/* Longest first, as the kernel matches them. */
static const struct op_name op_names[] = {
	{ "==", FILTER_OP_EQ }, { "!=", FILTER_OP_NE },
	{ "<=", FILTER_OP_LE }, { ">=", FILTER_OP_GE },
	{ "<", FILTER_OP_LT }, { ">", FILTER_OP_GT },
	{ "~", FILTER_OP_GLOB }, { "&", FILTER_OP_BAND },
};

const char *filter_op_name(enum filter_op op)
{
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (op_names[i].op == op)
			return op_names[i].text;
	return "?";
}

static bool parse_op(struct fparser *p, struct filter_pred *pred)
{
	char q[QUOTE_MAX + 4];

	pred->op_span.offset = p->pos;
	if (looking_at(p, "&&"))
		goto bad;
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++) {
		if (looking_at(p, op_names[i].text)) {
			pred->op = op_names[i].op;
			pred->op_span.len = strlen(op_names[i].text);
			p->pos += pred->op_span.len;
			return true;
		}
	}
	if (peek(p, 0) == '=') {
		fail(p, p->pos, "'=' is not an operator: use '=='");
		return false;
	}
bad:
	fail(p, p->pos, "expected an operator after field '%s'",
	     quoted(q, sizeof(q), pred->field, strlen(pred->field)));
	return false;
}

/*
 * A number as the kernel's kstrtoull(s, 0) reads it: 0x hex, 0 octal,
 * otherwise decimal; '-' in front for signed fields.  The kernel takes the
 * whole alphanumeric run as the number, so "12ab" is one bad number.
 */
static bool parse_number(struct fparser *p, struct filter_pred *pred)
{
	size_t v0 = p->pos, i = p->pos, d, end;
	unsigned base = 10;
	uint64_t v = 0;
	char q[QUOTE_MAX + 4];

	if (p->s[i] == '-') {
		pred->negative = true;
		i++;
		if (i >= p->len || !is_digit((unsigned char)p->s[i])) {
			fail(p, i, "expected a digit after '-'");
			return false;
		}
	}
	d = i;
	while (i < p->len && is_alnum((unsigned char)p->s[i]))
		i++;
	end = i;
	quoted(q, sizeof(q), p->s + v0, end - v0);
	if (end - v0 > FILTER_NUM_MAX) {
		fail(p, v0, "number '%s' is too long (over %d characters)", q, FILTER_NUM_MAX);
		return false;
	}
	if (p->s[d] == '0' && end - d >= 2 && (p->s[d + 1] | 0x20) == 'x') {
		base = 16;
		d += 2;
	} else if (p->s[d] == '0' && end - d >= 2) {
		base = 8;
		d++;
	}
	if (d == end) {
		fail(p, v0, "invalid number '%s'", q);
		return false;
	}
	for (i = d; i < end; i++) {
		int c = (unsigned char)p->s[i] | 0x20;
		unsigned digit = is_digit(c) ? (unsigned)(c - '0') :
				 (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10) : 99;

		if (digit >= base) {
			fail(p, v0, "invalid number '%s'%s", q,
			     base == 8 && digit < 10 ? " (a leading 0 means octal)" : "");
			return false;
		}
		if (v > (UINT64_MAX - digit) / base) {
			fail(p, v0, "number '%s' does not fit in 64 bits", q);
			return false;
		}
		v = v * base + digit;
	}
	if (pred->negative && v > (uint64_t)1 << 63) {
		fail(p, v0, "number '%s' does not fit in 64 bits", q);
		return false;
	}
	pred->number = pred->negative ? 0 - v : v;
	pred->value_kind = FILTER_VALUE_NUMBER;
	pred->value = copy_bytes(p, p->s + v0, end - v0);
	p->pos = end;
	return pred->value != NULL;
}

/* '...' or "...": no escapes, no control bytes, at most 255 bytes. */
static bool parse_string(struct fparser *p, struct filter_pred *pred)
{
	size_t q0 = p->pos, i = p->pos + 1;
	char quote = p->s[q0];

	for (; i < p->len && p->s[i] != quote; i++) {
		unsigned char c = (unsigned char)p->s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			fail(p, i, "control byte 0x%02x in string", c);
			return false;
		}
	}
	if (i >= p->len) {
		fail(p, q0, "unterminated string");
		return false;
	}
	if (i - q0 - 1 > FILTER_STR_MAX) {
		fail(p, q0, "string too long (over %d bytes)", FILTER_STR_MAX);
		return false;
	}
	pred->value_kind = FILTER_VALUE_STRING;
	pred->quote = quote;
	pred->value = copy_bytes(p, p->s + q0 + 1, i - q0 - 1);
	p->pos = i + 1;
	return pred->value != NULL;
}

/* A decimal CPU number, or N (the last CPU), at text[*i]. */
static bool cpulist_number(const char *s, size_t end, size_t *i)
{
	size_t start = *i;

	if (*i < end && s[*i] == 'N') {
		(*i)++;
		return true;
	}
	while (*i < end && is_digit((unsigned char)s[*i]))
		(*i)++;
	return *i > start;
}

/*
 * CPUS{list}: list = item { "," item }, item = n [ "-" n [ ":" n "/" n ] ],
 * the syntax of the kernel's cpulist_parse().
 */
static bool parse_cpus(struct fparser *p, struct filter_pred *pred)
{
	size_t lb = p->pos + 4, rb, i;

	if (lb >= p->len || p->s[lb] != '{') {
		fail(p, lb, "expected '{' after CPUS");
		return false;
	}
	for (rb = lb + 1; rb < p->len && p->s[rb] != '}'; rb++)
		;
	if (rb >= p->len) {
		fail(p, lb, "unterminated CPU list: missing '}'");
		return false;
	}
	if (rb == lb + 1) {
		fail(p, rb, "empty CPU list");
		return false;
	}
	for (i = lb + 1; i < rb; i++) {
		if (!cpulist_number(p->s, rb, &i))
			goto bad;
		if (i < rb && p->s[i] == '-') {
			i++;
			if (!cpulist_number(p->s, rb, &i))
				goto bad;
			if (i < rb && p->s[i] == ':') {
				i++;
				if (!cpulist_number(p->s, rb, &i) || i >= rb || p->s[i] != '/')
					goto bad;
				i++;
				if (!cpulist_number(p->s, rb, &i))
					goto bad;
			}
		}
		if (i < rb && p->s[i] != ',')
			goto bad;
	}
	if (p->s[rb - 1] == ',') {
		i = rb;
		goto bad;
	}
	pred->value_kind = FILTER_VALUE_CPUS;
	pred->value = copy_bytes(p, p->s + lb + 1, rb - lb - 1);
	p->pos = rb + 1;
	return pred->value != NULL;
bad:
	fail(p, i, "invalid CPU list (expected n, n-m or n-m:used/group, separated by ',')");
	return false;
}

static bool parse_word(struct fparser *p, struct filter_pred *pred)
{
	size_t w0 = p->pos, i = p->pos;

	while (i < p->len && is_word_byte((unsigned char)p->s[i]))
		i++;
	if (i - w0 > FILTER_STR_MAX) {
		fail(p, w0, "word too long (over %d bytes)", FILTER_STR_MAX);
		return false;
	}
	pred->value_kind = FILTER_VALUE_WORD;
	pred->value = copy_bytes(p, p->s + w0, i - w0);
	p->pos = i;
	return pred->value != NULL;
}

/* Does the operator fit the kind of value?  The kernel's rules. */
static bool check_op(struct fparser *p, struct filter_pred *pred)
{
	const char *op = filter_op_name(pred->op);
	bool string_op = pred->op == FILTER_OP_EQ || pred->op == FILTER_OP_NE ||
			 pred->op == FILTER_OP_GLOB;

	if (pred->suffix == FILTER_SUFFIX_FUNCTION) {
		if (pred->op != FILTER_OP_EQ && pred->op != FILTER_OP_NE) {
			fail(p, pred->op_span.offset, "a .function field compares with == or != only");
			return false;
		}
		if (pred->value_kind == FILTER_VALUE_WORD ||
		    (pred->value_kind == FILTER_VALUE_NUMBER && !pred->negative))
			return true;
		fail(p, pred->value_span.offset,
		     "expected a symbol name or an address after '%s' (unquoted)", op);
		return false;
	}
	switch (pred->value_kind) {
	case FILTER_VALUE_NUMBER:
		if (pred->op == FILTER_OP_GLOB) {
			fail(p, pred->op_span.offset, "operator '~' matches strings, not numbers");
			return false;
		}
		return true;
	case FILTER_VALUE_STRING:
		if (!string_op) {
			fail(p, pred->op_span.offset,
			     "operator '%s' does not apply to strings: use ==, != or ~", op);
			return false;
		}
		return true;
	case FILTER_VALUE_WORD:
		if (!string_op) {
			fail(p, pred->value_span.offset, "expected a number after '%s'", op);
			return false;
		}
		return true;
	case FILTER_VALUE_CPUS:
		if (string_op && pred->op != FILTER_OP_GLOB)
			return true;
		if (pred->op == FILTER_OP_BAND)
			return true;
		fail(p, pred->op_span.offset,
		     "operator '%s' does not apply to a CPU list: use ==, != or &", op);
		return false;
	}
	return false;
}

static bool parse_value(struct fparser *p, struct filter_pred *pred)
{
	int c = peek(p, 0);
	bool ok;

	pred->value_span.offset = p->pos;
	if (c < 0 || (!is_word_byte(c) && c != '"' && c != '\'') || c == '!') {
		fail(p, p->pos, "expected a value after '%s'", filter_op_name(pred->op));
		return false;
	}
	if (c == '"' || c == '\'')
		ok = parse_string(p, pred);
	else if (pred->suffix != FILTER_SUFFIX_FUNCTION && looking_at(p, "CPUS"))
		ok = parse_cpus(p, pred);
	else if (is_digit(c) || c == '-')
		ok = parse_number(p, pred);
	else
		ok = parse_word(p, pred);
	if (!ok)
		return false;
	pred->value_span.len = p->pos - pred->value_span.offset;
	return check_op(p, pred);
}

static bool parse_field(struct fparser *p, struct filter_pred *pred, const char *after)
{
	size_t f0 = p->pos, i = p->pos, name_end;
	int c = peek(p, 0);

	if (!is_alpha(c) && c != '_') {
		if (after)
			fail(p, p->pos, "expected a field name after '%s'", after);
		else if (c < 0 && p->paren)
			fail(p, p->pos, "unterminated filter: missing ')'");
		else if (c < 0 || (c == ')' && p->paren))
			fail(p, p->pos, "empty filter");
		else
			fail(p, p->pos, "expected a field name");
		return false;
	}
	while (i < p->len && (is_alnum((unsigned char)p->s[i]) || p->s[i] == '_'))
		i++;
	name_end = i;
	if (i < p->len && p->s[i] == '.') {
		size_t s0 = ++i;

		while (i < p->len && is_alpha((unsigned char)p->s[i]))
			i++;
		if (i - s0 == 8 && memcmp(p->s + s0, "function", 8) == 0) {
			pred->suffix = FILTER_SUFFIX_FUNCTION;
		} else if (i - s0 == 7 && memcmp(p->s + s0, "ustring", 7) == 0) {
			pred->suffix = FILTER_SUFFIX_USTRING;
		} else {
			fail(p, s0 - 1, "unknown field suffix: expected .function or .ustring");
			return false;
		}
	}
	pred->field_span.offset = f0;
	pred->field_span.len = i - f0;
	pred->field = copy_bytes(p, p->s + f0, name_end - f0);
	p->pos = i;
	return pred->field != NULL;
}

static struct filter_node *parse_pred(struct fparser *p, const char *after)
{
	struct filter_node *n = node_new(p, FILTER_PRED, p->pos);

	if (!n)
		return NULL;
	if (!parse_field(p, &n->pred, after))
		goto fail;
	skip_space(p);
	if (!parse_op(p, &n->pred))
		goto fail;
	skip_space(p);
	if (!parse_value(p, &n->pred))
		goto fail;
	n->span.len = p->pos - n->span.offset;
	return n;
fail:
	filter_free(n);
	return NULL;
}

static bool nest(struct fparser *p)
{
	if (++p->depth <= FILTER_NEST_MAX)
		return true;
	fail(p, p->pos, "filter nested too deeply (over %d levels of '(' and '!')",
	     FILTER_NEST_MAX);
	return false;
}

static struct filter_node *parse_unary(struct fparser *p, const char *after)
{
	struct filter_node *n, *child;
	size_t at;

	skip_space(p);
	at = p->pos;
	if (peek(p, 0) == '!' && peek(p, 1) != '=') {
		if (!nest(p))
			return NULL;
		p->pos++;
		child = parse_unary(p, "!");
		p->depth--;
		if (!child)
			return NULL;
		n = node_new(p, FILTER_NOT, at);
		if (!n || !node_add(p, n, child, p->pos)) {
			filter_free(child);
			filter_free(n);
			return NULL;
		}
		return n;
	}
	if (peek(p, 0) == '(') {
		if (!nest(p))
			return NULL;
		p->pos++;
		skip_space(p);
		if (peek(p, 0) == ')') {
			fail(p, p->pos, "empty parentheses in filter");
			return NULL;
		}
		child = parse_or(p, "(");
		p->depth--;
		if (!child)
			return NULL;
		skip_space(p);
		if (peek(p, 0) == ')') {
			p->pos++;
			return child;
		}
		fail_after_operand(p, true);
		filter_free(child);
		return NULL;
	}
	return parse_pred(p, after);
}

/*
 * One level of a left-to-right n-ary operator: operand { tok operand }.
 * A single operand is returned as it is, without a node around it.
 */
static struct filter_node *parse_nary(struct fparser *p, const char *after, const char *tok,
				      enum filter_kind kind,
				      struct filter_node *(*operand)(struct fparser *, const char *))
{
	struct filter_node *first, *n = NULL, *child;
	size_t first_at, first_end;

	skip_space(p);
	first_at = p->pos;
	first = operand(p, after);
	if (!first)
		return NULL;
	first_end = p->pos;
	for (;;) {
		skip_space(p);
		if (!looking_at(p, tok))
			return n ? n : first;
		p->pos += 2;
		if (!n) {
			n = node_new(p, kind, first_at);
			if (!n || !node_add(p, n, first, first_end)) {
				filter_free(first);
				filter_free(n);
				return NULL;
			}
		}
		child = operand(p, tok);
		if (!child || !node_add(p, n, child, p->pos)) {
			filter_free(child);
			filter_free(n);
			return NULL;
		}
	}
}

static struct filter_node *parse_and(struct fparser *p, const char *after)
{
	return parse_nary(p, after, "&&", FILTER_AND, parse_unary);
}

static struct filter_node *parse_or(struct fparser *p, const char *after)
{
	return parse_nary(p, after, "||", FILTER_OR, parse_and);
}

static struct filter_node *parse_top(struct fparser *p)
{
	struct filter_node *n = parse_or(p, NULL);

	if (!n)
		return NULL;
	skip_space(p);
	if (p->paren ? peek(p, 0) == ')' : peek(p, 0) < 0)
		return n;
	fail_after_operand(p, false);
	filter_free(n);
	return NULL;
}

struct filter_node *filter_parse(const char *text, size_t len, struct filter_error *err)
{
	struct fparser p = { .s = text, .len = len, .err = err };

	return parse_top(&p);
}

struct filter_node *filter_parse_paren(const char *text, size_t len, size_t start,
				       size_t *close, struct filter_error *err)
{
	struct fparser p = { .s = text, .len = len, .pos = start, .paren = true, .err = err };
	struct filter_node *n = start <= len ? parse_top(&p) : NULL;

	if (n && close)
		*close = p.pos;
	if (!n && start > len)
		fail(&p, len, "unterminated filter: missing ')'");
	return n;
}

/* ---- walking ------------------------------------------------------------------ */

int filter_for_each_pred(const struct filter_node *node,
			 int (*fn)(const struct filter_pred *pred, void *ctx), void *ctx)
{
	int r;

	if (!node)
		return 0;
	if (node->kind == FILTER_PRED)
		return fn(&node->pred, ctx);
	for (size_t i = 0; i < node->nchildren; i++)
		if ((r = filter_for_each_pred(node->children[i], fn, ctx)) != 0)
			return r;
	return 0;
}

/* ---- comparing ----------------------------------------------------------------- */

static bool pred_equal(const struct filter_pred *a, const struct filter_pred *b)
{
	bool a_text = a->value_kind == FILTER_VALUE_STRING || a->value_kind == FILTER_VALUE_WORD;
	bool b_text = b->value_kind == FILTER_VALUE_STRING || b->value_kind == FILTER_VALUE_WORD;

	if (strcmp(a->field, b->field) != 0 || a->suffix != b->suffix || a->op != b->op)
		return false;
	if (a_text && b_text)		/* 'x', "x" and x are one string */
		return strcmp(a->value, b->value) == 0;
	if (a->value_kind != b->value_kind)
		return false;
	if (a->value_kind == FILTER_VALUE_NUMBER)	/* 0x10 and 16 are one number */
		return a->number == b->number;
	return strcmp(a->value, b->value) == 0;
}

bool filter_equal(const struct filter_node *a, const struct filter_node *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->nchildren != b->nchildren)
		return false;
	if (a->kind == FILTER_PRED)
		return pred_equal(&a->pred, &b->pred);
	for (size_t i = 0; i < a->nchildren; i++)
		if (!filter_equal(a->children[i], b->children[i]))
			return false;
	return true;
}

/* ---- printing ----------------------------------------------------------------- */

struct out {
	char *buf;
	size_t cap;
	size_t len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->cap) {
		size_t room = o->cap - o->len;

		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static int prec(enum filter_kind kind)
{
	switch (kind) {
	case FILTER_OR:		return 1;
	case FILTER_AND:	return 2;
	case FILTER_NOT:	return 3;
	case FILTER_PRED:	break;
	}
	return 4;
}

static void format_node(struct out *o, const struct filter_node *n, unsigned flags);

/* Parentheses keep both precedence and the tree's shape ("(a && b) && c"). */
static void format_child(struct out *o, const struct filter_node *child, int parent_prec,
			 unsigned flags)
{
	bool parens = (child->kind == FILTER_AND || child->kind == FILTER_OR) &&
		      prec(child->kind) <= parent_prec;

	if (parens)
		puts_(o, "(");
	format_node(o, child, flags);
	if (parens)
		puts_(o, ")");
}

static void format_pred(struct out *o, const struct filter_pred *pred, unsigned flags)
{
	bool quote_word = (flags & FILTER_FORMAT_KERNEL) &&
			  pred->suffix != FILTER_SUFFIX_FUNCTION;

	puts_(o, pred->field);
	if (pred->suffix == FILTER_SUFFIX_FUNCTION)
		puts_(o, ".function");
	else if (pred->suffix == FILTER_SUFFIX_USTRING)
		puts_(o, ".ustring");
	puts_(o, " ");
	puts_(o, filter_op_name(pred->op));
	puts_(o, " ");
	switch (pred->value_kind) {
	case FILTER_VALUE_STRING:
		put(o, &pred->quote, 1);
		puts_(o, pred->value);
		put(o, &pred->quote, 1);
		break;
	case FILTER_VALUE_CPUS:
		puts_(o, "CPUS{");
		puts_(o, pred->value);
		puts_(o, "}");
		break;
	case FILTER_VALUE_WORD:
		if (quote_word)
			puts_(o, "\"");
		puts_(o, pred->value);
		if (quote_word)
			puts_(o, "\"");
		break;
	case FILTER_VALUE_NUMBER:
		puts_(o, pred->value);
		break;
	}
}

static void format_node(struct out *o, const struct filter_node *n, unsigned flags)
{
	switch (n->kind) {
	case FILTER_PRED:
		format_pred(o, &n->pred, flags);
		break;
	case FILTER_NOT:
		/* "!(a == 1)", not "!a == 1", which reads like C's (!a) == 1
		 * (though the kernel, like this parser, negates the predicate). */
		if (n->children[0]->kind == FILTER_PRED) {
			puts_(o, "!(");
			format_pred(o, &n->children[0]->pred, flags);
			puts_(o, ")");
		} else {
			puts_(o, "!");
			format_child(o, n->children[0], prec(n->kind), flags);
		}
		break;
	case FILTER_AND:
	case FILTER_OR:
		for (size_t i = 0; i < n->nchildren; i++) {
			if (i)
				puts_(o, n->kind == FILTER_AND ? " && " : " || ");
			format_child(o, n->children[i], prec(n->kind), flags);
		}
		break;
	}
}

size_t filter_format(const struct filter_node *node, unsigned flags, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };

	if (node)
		format_node(&o, node, flags);
	if (cap > 0)
		buf[o.len < cap ? o.len : cap - 1] = '\0';
	return o.len;
}
