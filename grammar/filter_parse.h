/*
 * filter_parse: the kernel's tracepoint filter syntax, as a tree.
 *
 * A filter narrows which hits of a tracepoint count, in the kernel, before
 * they reach user space (PERF_EVENT_IOC_SET_FILTER).  perfgate takes filters
 * in two places: in parentheses after a range trigger
 * ("irq:softirq_entry(vec == 3)..irq:softirq_exit") and in --filter after
 * -e.  The syntax is the kernel's own (Documentation/trace/events.rst,
 * "Event filtering"):
 *
 *     filter    = or
 *     or        = and { "||" and }
 *     and       = unary { "&&" unary }
 *     unary     = "!" unary | "(" or ")" | predicate
 *     predicate = field op value
 *     field     = name [ ".function" | ".ustring" ]
 *     op        = "==" | "!=" | "<" | "<=" | ">" | ">=" | "&" | "~"
 *     value     = number | string | "CPUS{" cpulist "}" | word
 *
 * This module checks the syntax only; whether a field exists, and whether
 * an operator fits its type, is for the agent to decide with the
 * tracepoint's format (libtraceevent).  Every node keeps the byte offsets of
 * its field, operator and value, so that the agent can put a caret under
 * the real mistake, which the kernel itself never does.
 *
 * Pure C: no I/O.  The parser allocates a tree, freed with filter_free().
 * Pointer-returning functions return NULL and set errno (EINVAL for a
 * syntax error, ENOMEM) as libbpf does.
 */
#ifndef PERFGATE_FILTER_PARSE_H
#define PERFGATE_FILTER_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Deepest nesting of '(' and '!' accepted in a filter. */
#define FILTER_NEST_MAX 64

enum filter_kind {
	FILTER_PRED,		/* field op value */
	FILTER_AND,		/* all children match (n >= 2) */
	FILTER_OR,		/* any child matches (n >= 2) */
	FILTER_NOT,		/* the one child does not match */
};

enum filter_op {
	FILTER_OP_EQ,		/* == */
	FILTER_OP_NE,		/* != */
	FILTER_OP_LT,		/* <  */
	FILTER_OP_LE,		/* <= */
	FILTER_OP_GT,		/* >  */
	FILTER_OP_GE,		/* >= */
	FILTER_OP_BAND,		/* &  (bitwise and: true when any bit is common) */
	FILTER_OP_GLOB,		/* ~  (glob match, strings only) */
};

enum filter_value_kind {
	/* -?digits: decimal, 0x hex, or 0-prefixed octal, as the kernel's
	 * kstrtoull(..., 0, ...) reads it. */
	FILTER_VALUE_NUMBER,
	/* "..." or '...': no escapes, the kernel has none. */
	FILTER_VALUE_STRING,
	/* An unquoted word ("comm != bash").  Kernels since 4.17
	 * accept it only for a .function field (a symbol name) and for the
	 * ip field of ftrace:function; filter_format(FILTER_FORMAT_KERNEL)
	 * quotes it everywhere else. */
	FILTER_VALUE_WORD,
	/* CPUS{0-3,8}: a cpulist for cpumask and CPU fields (kernel 6.6+). */
	FILTER_VALUE_CPUS,
};

enum filter_field_suffix {
	FILTER_SUFFIX_NONE,
	FILTER_SUFFIX_FUNCTION,	/* field.function == symbol */
	FILTER_SUFFIX_USTRING,	/* field.ustring: a user-space string */
};

/* A piece of the text: bytes [offset, offset + len). */
struct filter_span {
	size_t offset;
	size_t len;
};

struct filter_pred {
	char *field;			/* "count": the name, suffix excluded */
	enum filter_field_suffix suffix;
	struct filter_span field_span;	/* the name, suffix included */
	enum filter_op op;
	struct filter_span op_span;
	enum filter_value_kind value_kind;
	/* The value as written (quotes and CPUS{} included). */
	struct filter_span value_span;
	/*
	 * NUMBER: the digits as written ("-0x10"); STRING: the bytes between
	 * the quotes; WORD: the word; CPUS: the list between the braces.
	 */
	char *value;
	uint64_t number;	/* NUMBER: the value, two's complement if negative */
	bool negative;		/* NUMBER: written with '-' */
	char quote;		/* STRING: '"' or '\'' */
};

struct filter_node {
	enum filter_kind kind;
	/*
	 * The node's bytes: a group's parentheses belong to the node around
	 * the group ("!(a == 1)" is all NOT; the PRED is "a == 1").
	 */
	struct filter_span span;
	/* AND, OR: the operands, left to right; NOT: one. */
	size_t nchildren;
	struct filter_node **children;
	struct filter_pred pred;	/* FILTER_PRED only */
};

/*
 * Parse text[0..len) as one whole filter (--filter).  Offsets in the tree
 * and in *err are indices into text.  Returns NULL on error, with *err
 * filled (err may be NULL) and errno set.
 */
struct filter_node *filter_parse(const char *text, size_t len, struct pg_error *err);

/*
 * Parse the filter that starts at text[start] and is closed by a ')' that
 * it does not open itself (range triggers: "tp(FILTER)").  On success
 * *close gets the index of that ')'.  "tp()" is an error (empty filter), as
 * is a text that ends first ("unterminated filter: missing ')'").
 * Offsets are indices into text.
 */
struct filter_node *filter_parse_paren(const char *text, size_t len, size_t start,
				       size_t *close, struct pg_error *err);

void filter_free(struct filter_node *node);

enum filter_format_flags {
	FILTER_FORMAT_CANONICAL = 0,
	/*
	 * Quote bare words ("comm != bash" becomes "comm != \"bash\"") except
	 * the value of a .function field: what kernels since 4.17 accept.
	 */
	FILTER_FORMAT_KERNEL = 1,
};

/*
 * The canonical text of a filter: predicates as "field op value" with one
 * space around the operator, values as written, " && " and " || " between
 * operands, "!" before its operand, and parentheses only where precedence
 * (! over && over ||) or the tree's shape needs them.  Parsing the result
 * gives the same tree.  snprintf's contract: writes at most cap bytes
 * (NUL included, when cap > 0) and returns the length of the whole text.
 */
size_t filter_format(const struct filter_node *node, unsigned flags, char *buf, size_t cap);

/*
 * Do two filters select the same hits, judged by their trees?  Equal when
 * they have the same shape, fields, operators and values, with 'x', "x"
 * and x one string and 0x10 and 16 one number; the order of operands
 * counts (a && b is not b && a here).  Two NULLs are equal.
 */
bool filter_equal(const struct filter_node *a, const struct filter_node *b);

/* "==", "!=", ... */
const char *filter_op_name(enum filter_op op);

/*
 * Call fn on every predicate, left to right.  A non-zero return from fn
 * stops the walk and is returned; otherwise 0.
 */
int filter_for_each_pred(const struct filter_node *node,
			 int (*fn)(const struct filter_pred *pred, void *ctx), void *ctx);

#endif
