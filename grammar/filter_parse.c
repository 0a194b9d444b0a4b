/*
 * filter_parse.c: a recursive-descent parser for the kernel's tracepoint
 * filter syntax, and its canonical printer (the API is in filter_parse.h).
 *
 * The rules follow what the kernel's own tracepoint filter parser
 * accepts, so that a filter this parser passes only fails in the kernel
 * for reasons that need the tracepoint's format (an
 * unknown field, a string compared with '<'), which the agent checks next:
 * operators are matched longest first, "&&" is never the '&' operator, a
 * number is what kstrtoull(s, 0) reads, strings have no escapes and at most
 * 255 bytes, "CPUS{...}" holds a cpulist.  Where the kernel would say
 * "Invalid argument" with a caret at the start of the filter, this parser
 * names the byte and the reason.
 *
 * Input is untrusted (control channels, command lines) and fuzzed
 * (tests/fuzz/fuzz_range.c): every byte value is handled, nesting is
 * bounded, and an allocation failure is an error like any other.  The
 * byte-level reading shared with range_parse.c (position, whitespace,
 * first-error-wins errors) is in grammar/scan.c.
 */
#include "grammar/filter_parse.h"

#include <stdlib.h>
#include <string.h>

#include "grammar/scan.h"
#include "grammar/text_out.h"

/* The kernel's limits: MAX_FILTER_STR_VAL and its 24-byte number buffer. */
#define FILTER_STR_MAX 255
#define FILTER_NUM_MAX 23

struct fparser {
	struct scan sc;		/* the text, the position, the first error */
	bool paren;		/* filter_parse_paren: ends at an unmatched ')' */
	int depth;
};

/* ---- characters ------------------------------------------------------------ */

/* A byte that may appear in an unquoted word value. */
static bool is_word_byte(int c)
{
	return c > 0x20 && c != 0x7f && !strchr("()&|\"'", c);
}

/* ---- nodes ------------------------------------------------------------------ */

static struct filter_node *node_new(struct fparser *p, enum filter_kind kind, size_t offset)
{
	struct filter_node *n = scan_calloc(&p->sc, sizeof(*n));

	if (!n)
		return NULL;
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
	if (!SCAN_PUSH(&p->sc, n->children, n->nchildren, child))
		return false;
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
	int c = scan_peek(&p->sc, 0);

	if (c < 0) {
		if (p->paren)
			scan_fail(&p->sc, p->sc.pos, "unterminated filter: missing ')'");
		else if (in_group)
			scan_fail(&p->sc, p->sc.pos, "missing ')'");
	} else if ((c == '&' || c == '|') && scan_peek(&p->sc, 1) != c) {
		scan_fail(&p->sc, p->sc.pos, "single '%c' between conditions: use '%c%c'", c, c, c);
	} else if (c == ')' && !in_group && !p->paren) {
		scan_fail(&p->sc, p->sc.pos, "unexpected ')'");
	} else if (in_group || p->paren) {
		scan_fail(&p->sc, p->sc.pos, "expected '&&', '||' or ')' in filter");
	} else {
		scan_fail(&p->sc, p->sc.pos, "expected '&&' or '||' in filter");
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
	char q[SCAN_QUOTE_SIZE];

	pred->op_span.offset = p->sc.pos;
	if (scan_looking_at(&p->sc, "&&"))
		goto bad;
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++) {
		if (scan_looking_at(&p->sc, op_names[i].text)) {
			pred->op = op_names[i].op;
			pred->op_span.len = strlen(op_names[i].text);
			p->sc.pos += pred->op_span.len;
			return true;
		}
	}
	if (scan_peek(&p->sc, 0) == '=') {
		scan_fail(&p->sc, p->sc.pos, "'=' is not an operator: use '=='");
		return false;
	}
bad:
	scan_fail(&p->sc, p->sc.pos, "expected an operator after field '%s'",
		  scan_quote(q, sizeof(q), pred->field, strlen(pred->field)));
	return false;
}

/*
 * A number as the kernel's kstrtoull(s, 0) reads it: 0x hex, 0 octal,
 * otherwise decimal; '-' in front for signed fields.  The kernel takes the
 * whole alphanumeric run as the number, so "12ab" is one bad number.
 */
static bool parse_number(struct fparser *p, struct filter_pred *pred)
{
	size_t v0 = p->sc.pos, i = p->sc.pos, d, end;
	unsigned base = 10;
	uint64_t v = 0;
	char q[SCAN_QUOTE_SIZE];

	if (p->sc.s[i] == '-') {
		pred->negative = true;
		i++;
		if (i >= p->sc.len || !scan_is_digit((unsigned char)p->sc.s[i])) {
			scan_fail(&p->sc, i, "expected a digit after '-'");
			return false;
		}
	}
	d = i;
	while (i < p->sc.len && scan_is_alnum((unsigned char)p->sc.s[i]))
		i++;
	end = i;
	scan_quote(q, sizeof(q), p->sc.s + v0, end - v0);
	if (end - v0 > FILTER_NUM_MAX) {
		scan_fail(&p->sc, v0,
			  "number '%s' is too long (over %d characters)", q, FILTER_NUM_MAX);
		return false;
	}
	if (p->sc.s[d] == '0' && end - d >= 2 && (p->sc.s[d + 1] | 0x20) == 'x') {
		base = 16;
		d += 2;
	} else if (p->sc.s[d] == '0' && end - d >= 2) {
		base = 8;
		d++;
	}
	if (d == end) {
		scan_fail(&p->sc, v0, "invalid number '%s'", q);
		return false;
	}
	for (i = d; i < end; i++) {
		int c = (unsigned char)p->sc.s[i] | 0x20;
		unsigned digit = scan_is_digit(c) ? (unsigned)(c - '0') :
				 (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10) : 99;

		if (digit >= base) {
			scan_fail(&p->sc, v0, "invalid number '%s'%s", q,
				  base == 8 && digit < 10 ? " (a leading 0 means octal)" : "");
			return false;
		}
		if (v > (UINT64_MAX - digit) / base) {
			scan_fail(&p->sc, v0, "number '%s' does not fit in 64 bits", q);
			return false;
		}
		v = v * base + digit;
	}
	if (pred->negative && v > (uint64_t)1 << 63) {
		scan_fail(&p->sc, v0, "number '%s' does not fit in 64 bits", q);
		return false;
	}
	pred->number = pred->negative ? 0 - v : v;
	pred->value_kind = FILTER_VALUE_NUMBER;
	pred->value = scan_copy(&p->sc, p->sc.s + v0, end - v0);
	p->sc.pos = end;
	return pred->value != NULL;
}

/* '...' or "...": no escapes, no control bytes, at most 255 bytes. */
static bool parse_string(struct fparser *p, struct filter_pred *pred)
{
	size_t q0 = p->sc.pos, i = p->sc.pos + 1;
	char quote = p->sc.s[q0];

	for (; i < p->sc.len && p->sc.s[i] != quote; i++) {
		unsigned char c = (unsigned char)p->sc.s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			scan_fail(&p->sc, i, "control byte 0x%02x in string", c);
			return false;
		}
	}
	if (i >= p->sc.len) {
		scan_fail(&p->sc, q0, "unterminated string");
		return false;
	}
	if (i - q0 - 1 > FILTER_STR_MAX) {
		scan_fail(&p->sc, q0, "string too long (over %d bytes)", FILTER_STR_MAX);
		return false;
	}
	pred->value_kind = FILTER_VALUE_STRING;
	pred->quote = quote;
	pred->value = scan_copy(&p->sc, p->sc.s + q0 + 1, i - q0 - 1);
	p->sc.pos = i + 1;
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
	while (*i < end && scan_is_digit((unsigned char)s[*i]))
		(*i)++;
	return *i > start;
}

/*
 * CPUS{list}: list = item { "," item }, item = n [ "-" n [ ":" n "/" n ] ],
 * the syntax of the kernel's cpulist_parse().
 */
static bool parse_cpus(struct fparser *p, struct filter_pred *pred)
{
	size_t lb = p->sc.pos + 4, rb, i;

	if (lb >= p->sc.len || p->sc.s[lb] != '{') {
		scan_fail(&p->sc, lb, "expected '{' after CPUS");
		return false;
	}
	for (rb = lb + 1; rb < p->sc.len && p->sc.s[rb] != '}'; rb++)
		;
	if (rb >= p->sc.len) {
		scan_fail(&p->sc, lb, "unterminated CPU list: missing '}'");
		return false;
	}
	if (rb == lb + 1) {
		scan_fail(&p->sc, rb, "empty CPU list");
		return false;
	}
	for (i = lb + 1; i < rb; i++) {
		if (!cpulist_number(p->sc.s, rb, &i))
			goto bad;
		if (i < rb && p->sc.s[i] == '-') {
			i++;
			if (!cpulist_number(p->sc.s, rb, &i))
				goto bad;
			if (i < rb && p->sc.s[i] == ':') {
				i++;
				if (!cpulist_number(p->sc.s, rb, &i) || i >= rb ||
				    p->sc.s[i] != '/')
					goto bad;
				i++;
				if (!cpulist_number(p->sc.s, rb, &i))
					goto bad;
			}
		}
		if (i < rb && p->sc.s[i] != ',')
			goto bad;
	}
	if (p->sc.s[rb - 1] == ',') {
		i = rb;
		goto bad;
	}
	pred->value_kind = FILTER_VALUE_CPUS;
	pred->value = scan_copy(&p->sc, p->sc.s + lb + 1, rb - lb - 1);
	p->sc.pos = rb + 1;
	return pred->value != NULL;
bad:
	scan_fail(&p->sc, i,
		  "invalid CPU list (expected n, n-m or n-m:used/group, separated by ',')");
	return false;
}

static bool parse_word(struct fparser *p, struct filter_pred *pred)
{
	size_t w0 = p->sc.pos, i = p->sc.pos;

	while (i < p->sc.len && is_word_byte((unsigned char)p->sc.s[i]))
		i++;
	if (i - w0 > FILTER_STR_MAX) {
		scan_fail(&p->sc, w0, "word too long (over %d bytes)", FILTER_STR_MAX);
		return false;
	}
	pred->value_kind = FILTER_VALUE_WORD;
	pred->value = scan_copy(&p->sc, p->sc.s + w0, i - w0);
	p->sc.pos = i;
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
			scan_fail(&p->sc, pred->op_span.offset,
				  "a .function field compares with == or != only");
			return false;
		}
		if (pred->value_kind == FILTER_VALUE_WORD ||
		    (pred->value_kind == FILTER_VALUE_NUMBER && !pred->negative))
			return true;
		scan_fail(&p->sc, pred->value_span.offset,
			  "expected a symbol name or an address after '%s' (unquoted)", op);
		return false;
	}
	switch (pred->value_kind) {
	case FILTER_VALUE_NUMBER:
		if (pred->op == FILTER_OP_GLOB) {
			scan_fail(&p->sc, pred->op_span.offset,
				  "operator '~' matches strings, not numbers");
			return false;
		}
		return true;
	case FILTER_VALUE_STRING:
		if (!string_op) {
			scan_fail(&p->sc, pred->op_span.offset,
				  "operator '%s' does not apply to strings: use ==, != or ~", op);
			return false;
		}
		return true;
	case FILTER_VALUE_WORD:
		if (!string_op) {
			scan_fail(&p->sc, pred->value_span.offset,
				  "expected a number after '%s'", op);
			return false;
		}
		return true;
	case FILTER_VALUE_CPUS:
		if (string_op && pred->op != FILTER_OP_GLOB)
			return true;
		if (pred->op == FILTER_OP_BAND)
			return true;
		scan_fail(&p->sc, pred->op_span.offset,
			  "operator '%s' does not apply to a CPU list: use ==, != or &", op);
		return false;
	}
	return false;
}

static bool parse_value(struct fparser *p, struct filter_pred *pred)
{
	int c = scan_peek(&p->sc, 0);
	bool ok;

	pred->value_span.offset = p->sc.pos;
	if (c < 0 || (!is_word_byte(c) && c != '"' && c != '\'') || c == '!') {
		scan_fail(&p->sc, p->sc.pos,
			  "expected a value after '%s'", filter_op_name(pred->op));
		return false;
	}
	if (c == '"' || c == '\'')
		ok = parse_string(p, pred);
	else if (pred->suffix != FILTER_SUFFIX_FUNCTION && scan_looking_at(&p->sc, "CPUS"))
		ok = parse_cpus(p, pred);
	else if (scan_is_digit(c) || c == '-')
		ok = parse_number(p, pred);
	else
		ok = parse_word(p, pred);
	if (!ok)
		return false;
	pred->value_span.len = p->sc.pos - pred->value_span.offset;
	return check_op(p, pred);
}

static bool parse_field(struct fparser *p, struct filter_pred *pred, const char *after)
{
	size_t f0 = p->sc.pos, i = p->sc.pos, name_end;
	int c = scan_peek(&p->sc, 0);

	if (!scan_is_alpha(c) && c != '_') {
		if (after)
			scan_fail(&p->sc, p->sc.pos, "expected a field name after '%s'", after);
		else if (c < 0 && p->paren)
			scan_fail(&p->sc, p->sc.pos, "unterminated filter: missing ')'");
		else if (c < 0 || (c == ')' && p->paren))
			scan_fail(&p->sc, p->sc.pos, "empty filter");
		else
			scan_fail(&p->sc, p->sc.pos, "expected a field name");
		return false;
	}
	while (i < p->sc.len && scan_is_ident((unsigned char)p->sc.s[i]))
		i++;
	name_end = i;
	if (i < p->sc.len && p->sc.s[i] == '.') {
		size_t s0 = ++i;

		while (i < p->sc.len && scan_is_alpha((unsigned char)p->sc.s[i]))
			i++;
		if (i - s0 == 8 && memcmp(p->sc.s + s0, "function", 8) == 0) {
			pred->suffix = FILTER_SUFFIX_FUNCTION;
		} else if (i - s0 == 7 && memcmp(p->sc.s + s0, "ustring", 7) == 0) {
			pred->suffix = FILTER_SUFFIX_USTRING;
		} else {
			scan_fail(&p->sc, s0 - 1,
				  "unknown field suffix: expected .function or .ustring");
			return false;
		}
	}
	pred->field_span.offset = f0;
	pred->field_span.len = i - f0;
	pred->field = scan_copy(&p->sc, p->sc.s + f0, name_end - f0);
	p->sc.pos = i;
	return pred->field != NULL;
}

static struct filter_node *parse_pred(struct fparser *p, const char *after)
{
	struct filter_node *n = node_new(p, FILTER_PRED, p->sc.pos);

	if (!n)
		return NULL;
	if (!parse_field(p, &n->pred, after))
		goto fail;
	scan_skip_space(&p->sc);
	if (!parse_op(p, &n->pred))
		goto fail;
	scan_skip_space(&p->sc);
	if (!parse_value(p, &n->pred))
		goto fail;
	n->span.len = p->sc.pos - n->span.offset;
	return n;
fail:
	filter_free(n);
	return NULL;
}

static bool nest(struct fparser *p)
{
	return scan_nest(&p->sc, &p->depth, FILTER_NEST_MAX, "filter");
}

/*
 * A '(' right after '!' opens no level of its own: "!(a == 1)" is how the
 * canonical form writes a negated predicate, and it must parse back
 * within the same limit as the text it came from.
 */
static struct filter_node *parse_unary_in(struct fparser *p, const char *after, bool after_not);

static struct filter_node *parse_unary(struct fparser *p, const char *after)
{
	return parse_unary_in(p, after, false);
}

static struct filter_node *parse_unary_in(struct fparser *p, const char *after, bool after_not)
{
	struct filter_node *n, *child;
	size_t at;

	scan_skip_space(&p->sc);
	at = p->sc.pos;
	if (scan_peek(&p->sc, 0) == '!' && scan_peek(&p->sc, 1) != '=') {
		if (!nest(p))
			return NULL;
		p->sc.pos++;
		child = parse_unary_in(p, "!", true);
		p->depth--;
		if (!child)
			return NULL;
		n = node_new(p, FILTER_NOT, at);
		if (!n || !node_add(p, n, child, p->sc.pos)) {
			filter_free(child);
			filter_free(n);
			return NULL;
		}
		return n;
	}
	if (scan_peek(&p->sc, 0) == '(') {
		if (!after_not && !nest(p))
			return NULL;
		p->sc.pos++;
		scan_skip_space(&p->sc);
		if (scan_peek(&p->sc, 0) == ')') {
			scan_fail(&p->sc, p->sc.pos, "empty parentheses in filter");
			return NULL;
		}
		child = parse_or(p, "(");
		if (!after_not)
			p->depth--;
		if (!child)
			return NULL;
		scan_skip_space(&p->sc);
		if (scan_peek(&p->sc, 0) == ')') {
			p->sc.pos++;
			return child;
		}
		fail_after_operand(p, true);
		filter_free(child);
		return NULL;
	}
	return parse_pred(p, after);
}

/* scan_nary's view of this parser: filter nodes, each freed by whoever
 * holds it. */
static void *and_operand(void *p, const char *after)
{
	return parse_unary(p, after);
}

static struct filter_node *parse_and(struct fparser *p, const char *after);

static void *or_operand(void *p, const char *after)
{
	return parse_and(p, after);
}

static void *nary_node_new(void *p, int kind, size_t offset)
{
	return node_new(p, (enum filter_kind)kind, offset);
}

static bool nary_node_add(void *p, void *n, void *child, size_t end)
{
	return node_add(p, n, child, end);
}

static void nary_node_free(void *n)
{
	filter_free(n);
}

/* and = unary { "&&" unary } */
static struct filter_node *parse_and(struct fparser *p, const char *after)
{
	static const struct scan_nary level = { "&&", FILTER_AND, and_operand, nary_node_new,
						 nary_node_add, nary_node_free };

	return scan_nary(&p->sc, p, &level, after);
}

/* or = and { "||" and } */
static struct filter_node *parse_or(struct fparser *p, const char *after)
{
	static const struct scan_nary level = { "||", FILTER_OR, or_operand, nary_node_new,
						 nary_node_add, nary_node_free };

	return scan_nary(&p->sc, p, &level, after);
}

static struct filter_node *parse_top(struct fparser *p)
{
	struct filter_node *n = parse_or(p, NULL);

	if (!n)
		return NULL;
	scan_skip_space(&p->sc);
	if (p->paren ? scan_peek(&p->sc, 0) == ')' : scan_peek(&p->sc, 0) < 0)
		return n;
	fail_after_operand(p, false);
	filter_free(n);
	return NULL;
}

struct filter_node *filter_parse(const char *text, size_t len, struct pg_error *err)
{
	struct fparser p = { .sc = SCAN_INIT(text, len, err) };

	return parse_top(&p);
}

struct filter_node *filter_parse_paren(const char *text, size_t len, size_t start,
				       size_t *close, struct pg_error *err)
{
	struct fparser p = { .sc = SCAN_INIT(text, len, err), .paren = true };
	struct filter_node *n = NULL;

	p.sc.pos = start;
	if (start <= len)
		n = parse_top(&p);
	if (n && close)
		*close = p.sc.pos;
	if (!n && start > len)
		scan_fail(&p.sc, len, "unterminated filter: missing ')'");
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

static void format_node(struct text_out *o, const struct filter_node *n, unsigned flags);

/* Parentheses keep both precedence and the tree's shape ("(a && b) && c"). */
static void format_child(struct text_out *o, const struct filter_node *child, int parent_prec,
			 unsigned flags)
{
	bool parens = (child->kind == FILTER_AND || child->kind == FILTER_OR) &&
		      prec(child->kind) <= parent_prec;

	if (parens)
		text_out_puts(o, "(");
	format_node(o, child, flags);
	if (parens)
		text_out_puts(o, ")");
}

static void format_pred(struct text_out *o, const struct filter_pred *pred, unsigned flags)
{
	bool quote_word = (flags & FILTER_FORMAT_KERNEL) &&
			  pred->suffix != FILTER_SUFFIX_FUNCTION;

	text_out_puts(o, pred->field);
	if (pred->suffix == FILTER_SUFFIX_FUNCTION)
		text_out_puts(o, ".function");
	else if (pred->suffix == FILTER_SUFFIX_USTRING)
		text_out_puts(o, ".ustring");
	text_out_puts(o, " ");
	text_out_puts(o, filter_op_name(pred->op));
	text_out_puts(o, " ");
	switch (pred->value_kind) {
	case FILTER_VALUE_STRING:
		text_out_put(o, &pred->quote, 1);
		text_out_puts(o, pred->value);
		text_out_put(o, &pred->quote, 1);
		break;
	case FILTER_VALUE_CPUS:
		text_out_puts(o, "CPUS{");
		text_out_puts(o, pred->value);
		text_out_puts(o, "}");
		break;
	case FILTER_VALUE_WORD:
		if (quote_word)
			text_out_puts(o, "\"");
		text_out_puts(o, pred->value);
		if (quote_word)
			text_out_puts(o, "\"");
		break;
	case FILTER_VALUE_NUMBER:
		text_out_puts(o, pred->value);
		break;
	}
}

static void format_node(struct text_out *o, const struct filter_node *n, unsigned flags)
{
	switch (n->kind) {
	case FILTER_PRED:
		format_pred(o, &n->pred, flags);
		break;
	case FILTER_NOT:
		/* "!(a == 1)", not "!a == 1", which reads like C's (!a) == 1
		 * (though the kernel, like this parser, negates the predicate). */
		if (n->children[0]->kind == FILTER_PRED) {
			text_out_puts(o, "!(");
			format_pred(o, &n->children[0]->pred, flags);
			text_out_puts(o, ")");
		} else {
			text_out_puts(o, "!");
			format_child(o, n->children[0], prec(n->kind), flags);
		}
		break;
	case FILTER_AND:
	case FILTER_OR:
		for (size_t i = 0; i < n->nchildren; i++) {
			if (i)
				text_out_puts(o, n->kind == FILTER_AND ? " && " : " || ");
			format_child(o, n->children[i], prec(n->kind), flags);
		}
		break;
	}
}

size_t filter_format(const struct filter_node *node, unsigned flags, char *buf, size_t cap)
{
	struct text_out o = { buf, cap, 0 };

	if (node)
		format_node(&o, node, flags);
	return text_out_end(&o);
}
