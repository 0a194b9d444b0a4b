/*
 * fuzz_range.c: libFuzzer target for grammar/range_parse and
 * grammar/filter_parse, the parsers that read range specs and filters from
 * command lines and control channels.
 *
 * The input is a spec, any bytes.  Whatever it holds, the parsers must not
 * crash, leak or read out of bounds, and:
 *
 * - an error names a byte inside the input (or its end) and a one-line
 *   reason, and both error formatters keep snprintf's contract;
 * - a spec that parses has a consistent tree: every name, tracepoint and
 *   filter text is the very bytes at its offsets, every span lies inside
 *   its parent's, ranges and triggers are listed left to right, AND and OR
 *   nodes have two operands or more, NOT one;
 * - the canonical text parses again, to a tree that prints the same text
 *   (a fixed point) and opens and closes exactly when the first one does
 *   (checked on range states drawn from the input);
 * - every filter, as written and as formatted for the kernel, parses on
 *   its own (filter_parse) to an equal tree.
 *
 * The input is also parsed as a whole filter (--filter), with the same
 * checks.
 *
 * Build: clang -g -O1 -I. -fsanitize=fuzzer,address,undefined -o fuzz_range \
 *        tests/fuzz/fuzz_range.c grammar/range_parse.c grammar/filter_parse.c grammar/scan.c \
 *        grammar/text_out.c
 */
#include "grammar/cpu_list.h"
#include "grammar/range_parse.h"
#include "tests/fuzz/check.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t *in;
static size_t in_len;

/* Is text the very bytes of the input at [offset, offset + len)? */
static bool at_input(const char *text, size_t offset, size_t len)
{
	return text_at(in, in_len, text, offset, len);
}

/* A NOT node has one operand; an AND or an OR two or more. */
static void check_operands(bool is_not, size_t nchildren)
{
	CHECK(is_not ? nchildren == 1 : nchildren >= 2);
}

/* ---- snprintf's contract, for every formatter ------------------------------ */

/* fmt(obj, buf, cap) with every kind of cap: length constant, text a prefix. */
static char *format_all(size_t (*fmt)(const void *, char *, size_t), const void *obj)
{
	size_t n = fmt(obj, NULL, 0), caps[] = { 1, 2, n / 2 + 1, n, n + 1 };
	char *full = malloc(n + 1), *part = malloc(n + 2);

	CHECK(full && part);
	CHECK(fmt(obj, full, n + 1) == n && strlen(full) == n);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		size_t cap = caps[i] < n + 1 ? caps[i] : n + 1;

		memset(part, 'X', n + 2);
		CHECK(fmt(obj, part, cap) == n);
		CHECK(part[cap - 1] == '\0' && part[cap] == 'X');
		CHECK(memcmp(part, full, cap - 1) == 0);
	}
	free(part);
	return full;
}

static size_t fmt_spec(const void *spec, char *buf, size_t cap)
{
	return range_spec_format(spec, buf, cap);
}

static size_t fmt_filter(const void *f, char *buf, size_t cap)
{
	return filter_format(f, FILTER_FORMAT_CANONICAL, buf, cap);
}

static size_t fmt_filter_kernel(const void *f, char *buf, size_t cap)
{
	return filter_format(f, FILTER_FORMAT_KERNEL, buf, cap);
}

static const struct pg_error *cur_err;

static size_t fmt_error(const void *text, char *buf, size_t cap)
{
	return range_error_format(text, in_len, cur_err, buf, cap);
}

static size_t fmt_error_line(const void *text, char *buf, size_t cap)
{
	return range_error_format_line(text, in_len, cur_err, buf, cap);
}

/* ---- filters -------------------------------------------------------------------- */

static void check_filter_tree(const struct filter_node *n, size_t lo, size_t hi)
{
	const struct filter_pred *p = &n->pred;

	CHECK(n->span.offset >= lo && n->span.len > 0 && n->span.offset + n->span.len <= hi);
	switch (n->kind) {
	case FILTER_PRED:
		CHECK(n->nchildren == 0);
		CHECK(p->field_span.offset == n->span.offset);
		CHECK(p->field_span.len >= strlen(p->field));
		CHECK(memcmp(in + p->field_span.offset, p->field, strlen(p->field)) == 0);
		CHECK(p->op_span.offset >= p->field_span.offset + p->field_span.len);
		CHECK(at_input(filter_op_name(p->op), p->op_span.offset, p->op_span.len));
		CHECK(p->value_span.offset >= p->op_span.offset + p->op_span.len);
		CHECK(p->value_span.offset + p->value_span.len == n->span.offset + n->span.len);
		if (p->value_kind == FILTER_VALUE_NUMBER || p->value_kind == FILTER_VALUE_WORD)
			CHECK(at_input(p->value, p->value_span.offset, p->value_span.len));
		if (p->value_kind == FILTER_VALUE_STRING)
			CHECK(at_input(p->value, p->value_span.offset + 1, p->value_span.len - 2) &&
			      in[p->value_span.offset] == (uint8_t)p->quote);
		break;
	case FILTER_NOT:
	case FILTER_AND:
	case FILTER_OR:
		check_operands(n->kind == FILTER_NOT, n->nchildren);
		break;
	}
	for (size_t i = 0; i < n->nchildren; i++) {
		check_filter_tree(n->children[i], i ? n->children[i - 1]->span.offset +
				  n->children[i - 1]->span.len : n->span.offset,
				  n->span.offset + n->span.len);
	}
}

static int count_pred(const struct filter_pred *p, void *ctx)
{
	(void)p;
	(*(size_t *)ctx)++;
	return 0;
}

/* A filter's text, canonical and kernel forms each parse to an equal tree. */
static void check_filter_texts(const struct filter_node *f, const char *as_written)
{
	struct pg_error ferr = { 0 };
	struct filter_node *again;
	char *canon = format_all(fmt_filter, f), *kernel = format_all(fmt_filter_kernel, f);
	const char *texts[] = { as_written, canon, kernel };
	size_t n1 = 0, n2;

	filter_for_each_pred(f, count_pred, &n1);
	for (size_t i = 0; i < 3; i++) {
		if (!texts[i])
			continue;
		again = filter_parse(texts[i], strlen(texts[i]), &ferr);
		if (!again)
			fprintf(stderr, "'%s' does not parse: %s at %zu\n", texts[i],
				ferr.message, ferr.offset);
		CHECK(again);
		CHECK(filter_equal(f, again));
		n2 = 0;
		filter_for_each_pred(again, count_pred, &n2);
		CHECK(n1 == n2);
		if (i == 1) {	/* canonical: a fixed point */
			char *twice = format_all(fmt_filter, again);

			CHECK(strcmp(twice, canon) == 0);
			free(twice);
		}
		filter_free(again);
	}
	free(canon);
	free(kernel);
}

/* ---- specs ---------------------------------------------------------------------- */

static size_t check_gate(const struct range_spec *spec, const struct range_gate *g,
			 size_t lo, size_t hi)
{
	size_t ranges = 0;

	CHECK(g->offset >= lo && g->len > 0 && g->offset + g->len <= hi);
	switch (g->kind) {
	case RANGE_GATE_RANGE:
		CHECK(g->nchildren == 0 && (g->starter || g->stopper));
		CHECK(g->index < spec->nranges && spec->ranges[g->index] == g);
		CHECK(in[g->dots_offset] == '.' && in[g->dots_offset + 1] == '.');
		CHECK(g->dots_offset >= g->offset && g->dots_offset + 2 <= g->offset + g->len);
		if (g->starter)
			CHECK(g->starter->offset == g->offset && g->starter->role == RANGE_STARTER &&
			      g->starter->range_index == g->index &&
			      g->starter->offset + g->starter->len <= g->dots_offset);
		if (g->stopper)
			CHECK(g->stopper->offset > g->dots_offset &&
			      g->stopper->role == RANGE_STOPPER &&
			      g->stopper->range_index == g->index);
		return 1;
	case RANGE_GATE_NOT:
	case RANGE_GATE_AND:
	case RANGE_GATE_OR:
		CHECK(g->kind != RANGE_GATE_NOT || in[g->offset] == '!');
		check_operands(g->kind == RANGE_GATE_NOT, g->nchildren);
		break;
	}
	for (size_t i = 0; i < g->nchildren; i++) {
		size_t from = i ? g->children[i - 1]->offset + g->children[i - 1]->len : g->offset;

		ranges += check_gate(spec, g->children[i], from, g->offset + g->len);
	}
	return ranges;
}

static void check_trigger(const struct range_spec *spec, const struct range_trigger *t,
			  size_t i)
{
	size_t ls = strlen(t->subsys);

	CHECK(at_input(t->tracepoint, t->offset, t->len));
	CHECK(ls > 0 && strlen(t->name) > 0 && ls + 1 + strlen(t->name) == t->len);
	CHECK(memcmp(t->tracepoint, t->subsys, ls) == 0 && t->tracepoint[ls] == ':' &&
	      strcmp(t->tracepoint + ls + 1, t->name) == 0);
	CHECK(strchr(t->name, ':') == NULL);
	CHECK(t->range_index < spec->nranges);
	CHECK(i == 0 || spec->triggers[i - 1]->offset < t->offset);
	CHECK(!t->filter == !t->filter_text);
	if (!t->filter) {
		CHECK(t->filter_len == 0);
		return;
	}
	CHECK(at_input(t->filter_text, t->filter_offset, t->filter_len));
	CHECK(in[t->filter_offset - 1] == '(' && in[t->filter_offset + t->filter_len] == ')');
	check_filter_tree(t->filter, t->filter_offset, t->filter_offset + t->filter_len);
	check_filter_texts(t->filter, t->filter_text);
}

static void check_spec(const struct range_spec *spec)
{
	CHECK(spec->text_len == in_len && memcmp(spec->text, in, in_len) == 0);
	CHECK(spec->text[in_len] == '\0');
	CHECK(spec->nevents >= 1);
	for (size_t i = 0; i < spec->nevents; i++) {
		CHECK(at_input(spec->events[i].name, spec->events[i].offset, spec->events[i].len));
		CHECK(spec->events[i].len > 0 && strstr(spec->events[i].name, "..") == NULL);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(spec->events[i].name, spec->events[j].name) != 0);
	}
	if (!spec->gate) {
		CHECK(spec->at_offset == in_len && spec->nranges == 0 && spec->ntriggers == 0);
		return;
	}
	CHECK(in[spec->at_offset] == '@');
	CHECK(check_gate(spec, spec->gate, spec->at_offset + 1, in_len) == spec->nranges);
	for (size_t i = 0; i < spec->nranges; i++)
		CHECK(spec->ranges[i]->index == i &&
		      (i == 0 || spec->ranges[i - 1]->offset < spec->ranges[i]->offset));
	for (size_t i = 0; i < spec->ntriggers; i++)
		check_trigger(spec, spec->triggers[i], i);
}

/* The reparsed canonical spec gates the same way, on states from the input. */
static void check_same_gate(const struct range_spec *a, const struct range_spec *b)
{
	bool open[64];
	size_t n = a->nranges < 64 ? a->nranges : 64;

	if (!a->gate || a->nranges > 64)
		return;
	for (size_t round = 0; round < 8; round++) {
		for (size_t i = 0; i < n; i++)
			open[i] = in_len ? (in[(round * 7 + i * 13) % in_len] >> (i % 8)) & 1 : 0;
		CHECK(range_gate_eval(a->gate, open) == range_gate_eval(b->gate, open));
	}
}

/* A message as every error must have one: there, one line. */
static bool is_one_line(const char *message)
{
	return message && message[0] != '\0' && strchr(message, '\n') == NULL;
}

static void check_error(const struct pg_error *err, const char *text)
{
	char *shown;

	CHECK(err->offset <= in_len);
	CHECK(is_one_line(err->message));
	cur_err = err;
	shown = format_all(fmt_error, text);
	CHECK(strchr(shown, '\n') != NULL && strchr(strchr(shown, '\n') + 1, '\n') == NULL);
	{	/* The caret line: blanks, "^ ", the reason whole. */
		const char *c = strchr(shown, '\n') + 1;

		c += strspn(c, " ");
		CHECK(c[0] == '^' && c[1] == ' ' && strcmp(c + 2, err->message) == 0);
	}
	free(shown);
	shown = format_all(fmt_error_line, text);
	CHECK(strchr(shown, '\n') == NULL);
	free(shown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_error err = { 0 }, ferr = { 0 };
	struct range_spec *spec, *again;
	struct filter_node *f;
	char *canon, *twice, *text;

	in = data;
	in_len = size;
	text = malloc(size + 1);	/* a NUL-terminated copy for range_parse() */
	CHECK(text);
	memcpy(text, data, size);
	text[size] = '\0';

	spec = range_parse_n((const char *)data, size, &err);
	if (!spec) {
		check_error(&err, text);
		pg_error_clear(&err);
	} else {
		check_spec(spec);
		canon = format_all(fmt_spec, spec);
		again = range_parse(canon, &err);
		if (!again)
			fprintf(stderr, "canonical '%s' does not parse: %s at %zu\n", canon,
				err.message, err.offset);
		CHECK(again);
		CHECK(again->nevents == spec->nevents && again->nranges == spec->nranges &&
		      again->ntriggers == spec->ntriggers);
		twice = format_all(fmt_spec, again);
		CHECK(strcmp(canon, twice) == 0);
		check_same_gate(spec, again);
		for (size_t i = 0; i < spec->ntriggers; i++)
			CHECK(filter_equal(spec->triggers[i]->filter, again->triggers[i]->filter));
		free(twice);
		free(canon);
		range_spec_free(again);
		range_spec_free(spec);
	}

	/* The same bytes as an -e tracepoint name: accepted only when every
	 * byte is [A-Za-z0-9_] but exactly one ':' with a name either side. */
	if (range_tracepoint_check((const char *)data, size, &err)) {
		const char *colon = memchr(data, ':', size);

		CHECK(colon && colon != (const char *)data && colon != (const char *)data + size - 1);
		for (size_t i = 0; i < size; i++)
			CHECK(data[i] == ':' ? (const char *)data + i == colon :
			      isalnum(data[i]) || data[i] == '_');
	} else {
		CHECK(err.offset <= size && is_one_line(err.message));
		pg_error_clear(&err);
	}

	/* The same bytes as a -C list: items in order, lo <= hi, offsets in. */
	{
		struct pg_error cerr = { 0 };
		size_t n;
		struct cpu_list_item *items = cpu_list_parse((const char *)data, size, &n, &cerr);

		if (items) {
			CHECK(n > 0);
			for (size_t i = 0; i < n; i++)
				CHECK(items[i].lo >= 0 && items[i].lo <= items[i].hi &&
				      items[i].hi <= CPU_LIST_MAX && items[i].offset < size &&
				      isdigit(data[items[i].offset]));
			free(items);
		} else {
			CHECK(cerr.offset <= size && is_one_line(cerr.message));
			pg_error_clear(&cerr);
		}
	}

	/* The same bytes as a --filter. */
	f = filter_parse((const char *)data, size, &ferr);
	if (!f) {
		CHECK(ferr.offset <= size && is_one_line(ferr.message));
		pg_error_clear(&ferr);
	} else {
		check_filter_tree(f, 0, size);
		check_filter_texts(f, strlen(text) == size ? text : NULL);
		filter_free(f);
	}
	free(text);
	return 0;
}
