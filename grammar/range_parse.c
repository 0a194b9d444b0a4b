/*
 * range_parse.c: a recursive-descent parser for range specs, the canonical
 * printer, gate evaluation, and caret error messages (the API is in
 * range_parse.h, the grammar and its meaning in docs/perfgate-ranges.7).
 *
 * One function per production (parse_events, parse_gate, parse_term,
 * parse_factor, parse_range, parse_trigger); filters inside a trigger's
 * parentheses are handed to filter_parse_paren(), which finds the ')' that
 * closes them (a ')' inside a quoted string does not).  Every token may be
 * surrounded by whitespace; names and operators may not contain it.
 *
 * The input comes from command lines and control channels, so every byte
 * value is handled, nesting is bounded (RANGE_NEST_MAX), and the first
 * error stops the parse with the offset of the byte it is about: the
 * offending byte, or for a missing token the byte where it should have been
 * (the next token, or the end of the spec).
 *
 * Memory: every gate node and trigger is recorded in the spec as soon as it
 * is allocated, so an error anywhere frees the partial tree with
 * range_spec_free() and nothing leaks.
 *
 * The byte-level reading shared with filter_parse.c (position, whitespace,
 * first-error-wins errors) is in grammar/scan.c.
 */
#include "grammar/range_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/scan.h"
#include "grammar/text_out.h"

/* The spec as the parser builds it: the public part and every node. */
struct spec_impl {
	struct range_spec pub;
	size_t nnodes;
	struct range_gate **nodes;
};

struct rparser {
	struct scan sc;		/* the text, the position, the first error */
	int depth;
	struct spec_impl *impl;
};

/* ---- errors -------------------------------------------------------------- */

/* A byte for a reason: 'x', or "byte 0x01" when it would not print. */
static const char *describe(char *buf, size_t cap, int c)
{
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, cap, "'%c'", c);
	else
		snprintf(buf, cap, "byte 0x%02x", (unsigned)c & 0xff);
	return buf;
}

/* ---- characters ----------------------------------------------------------- */

/* perf event names: cycles:u, task-clock, L1-dcache-loads, sched:sched_switch... */
static bool is_event_byte(int c)
{
	return scan_is_ident(c) || c == '.' || c == ':' || c == '-';
}

/* Where a trigger may start (':' too, to say that the subsystem is missing). */
static bool is_trigger_start(int c)
{
	return scan_is_ident(c) || c == ':';
}

static bool is_wildcard(int c)
{
	return c == '*' || c == '?' || c == '[';
}

/* ---- nodes ------------------------------------------------------------------ */

static struct range_gate *gate_new(struct rparser *p, enum range_gate_kind kind, size_t offset)
{
	struct range_gate *g = scan_calloc(&p->sc, sizeof(*g));

	if (!g)
		return NULL;
	if (!SCAN_PUSH(&p->sc, p->impl->nodes, p->impl->nnodes, g)) {
		free(g);
		return NULL;
	}
	g->kind = kind;
	g->offset = offset;
	return g;
}

/*
 * Append child, which the spec holds up to end (past its ')' when it was a
 * group: the parentheses of an operand belong to the node around it).
 */
static bool gate_add(struct rparser *p, struct range_gate *g, struct range_gate *child,
		     size_t end)
{
	if (!SCAN_PUSH(&p->sc, g->children, g->nchildren, child))
		return false;
	g->len = end - g->offset;
	return true;
}

static void trigger_free(struct range_trigger *t)
{
	if (!t)
		return;
	free(t->tracepoint);
	free(t->subsys);
	free(t->name);
	free(t->filter_text);
	filter_free(t->filter);
	free(t);
}

void range_spec_free(struct range_spec *spec)
{
	struct spec_impl *impl = (struct spec_impl *)spec;

	if (!spec)
		return;
	for (size_t i = 0; i < impl->nnodes; i++) {
		free(impl->nodes[i]->children);
		free(impl->nodes[i]);
	}
	free(impl->nodes);
	for (size_t i = 0; i < spec->ntriggers; i++)
		trigger_free(spec->triggers[i]);
	free(spec->triggers);
	free(spec->ranges);
	for (size_t i = 0; i < spec->nevents; i++)
		free(spec->events[i].name);
	free(spec->events);
	free(spec->text);
	free(impl);
}

/* ---- events ------------------------------------------------------------------- */

/* One event name; after is the token before it, for messages (NULL: none). */
static bool parse_event_name(struct rparser *p, const char *after)
{
	struct range_spec *spec = &p->impl->pub;
	struct range_event ev = { .offset = p->sc.pos };
	char q[SCAN_QUOTE_SIZE], d[16];
	int c;

	while (p->sc.pos < p->sc.len && is_event_byte((unsigned char)p->sc.s[p->sc.pos]))
		p->sc.pos++;
	ev.len = p->sc.pos - ev.offset;
	c = scan_peek(&p->sc, 0);
	if (ev.len == 0) {
		if (is_wildcard(c))
			scan_fail(&p->sc, p->sc.pos, "wildcards are not supported in event names");
		else if (c == '@' && !after)
			scan_fail(&p->sc, p->sc.pos, "expected an event name before '@'");
		else if (after)
			scan_fail(&p->sc, p->sc.pos, "expected an event name after '%s'", after);
		else
			scan_fail(&p->sc, p->sc.pos, "expected an event name");
		return false;
	}
	scan_quote(q, sizeof(q), p->sc.s + ev.offset, ev.len);
	if (c >= 0 && !scan_is_space(c) && !strchr("@,()", c)) {
		if (is_wildcard(c))
			scan_fail(&p->sc, p->sc.pos, "wildcards are not supported in event names");
		else
			scan_fail(&p->sc, p->sc.pos,
				  "unexpected %s in event name", describe(d, sizeof(d), c));
		return false;
	}
	for (size_t i = ev.offset; i + 1 < p->sc.pos; i++) {
		if (p->sc.s[i] == '.' && p->sc.s[i + 1] == '.') {
			scan_fail(&p->sc, i,
				  "'..' inside event name '%s': is '@' missing before the range?", q);
			return false;
		}
	}
	for (size_t i = 0; i < spec->nevents; i++) {
		if (spec->events[i].len == ev.len &&
		    memcmp(spec->events[i].name, p->sc.s + ev.offset, ev.len) == 0) {
			scan_fail(&p->sc, ev.offset, "event '%s' is listed twice", q);
			return false;
		}
	}
	ev.name = scan_copy(&p->sc, p->sc.s + ev.offset, ev.len);
	if (!ev.name)
		return false;
	if (!SCAN_PUSH(&p->sc, spec->events, spec->nevents, ev)) {
		free(ev.name);
		return false;
	}
	return true;
}

/* events = event | "(" event { "," event } ")" */
static bool parse_events(struct rparser *p)
{
	const char *after = "(";

	scan_skip_space(&p->sc);
	if (scan_peek(&p->sc, 0) != '(')
		return parse_event_name(p, NULL);
	p->sc.pos++;
	scan_skip_space(&p->sc);
	if (scan_peek(&p->sc, 0) == ')') {
		scan_fail(&p->sc, p->sc.pos, "empty event list");
		return false;
	}
	for (;;) {
		scan_skip_space(&p->sc);
		if (!parse_event_name(p, after))
			return false;
		scan_skip_space(&p->sc);
		switch (scan_peek(&p->sc, 0)) {
		case ',':
			p->sc.pos++;
			after = ",";
			continue;
		case ')':
			p->sc.pos++;
			return true;
		case -1:
			scan_fail(&p->sc, p->sc.pos, "unterminated event list: missing ')'");
			return false;
		default:
			scan_fail(&p->sc, p->sc.pos, "expected ',' or ')' in event list");
			return false;
		}
	}
}

/* ---- gate ------------------------------------------------------------------------ */

static struct range_gate *parse_gate(struct rparser *p, const char *after);

/*
 * After a complete factor only "&&", "||", a group's ')' or the end of the
 * spec may follow; name what came instead.
 */
static void fail_leftover(struct rparser *p, bool in_group)
{
	int c = scan_peek(&p->sc, 0);

	if (c < 0) {
		if (in_group)
			scan_fail(&p->sc, p->sc.pos, "unterminated group: missing ')'");
	} else if (c == ')' && !in_group) {
		scan_fail(&p->sc, p->sc.pos, "unexpected ')'");
	} else if (c == '@') {
		scan_fail(&p->sc, p->sc.pos,
			  "a spec has one '@': combine ranges with '&&' or '||'");
	} else if (scan_looking_at(&p->sc, "..")) {
		scan_fail(&p->sc, p->sc.pos,
			  "a range has one '..': combine ranges with '&&' or '||'");
	} else if ((c == '&' || c == '|') && scan_peek(&p->sc, 1) != c) {
		scan_fail(&p->sc, p->sc.pos, "single '%c' between ranges: use '%c%c'", c, c, c);
	} else if (is_trigger_start(c) || c == '!' || c == '(') {
		scan_fail(&p->sc, p->sc.pos, "expected '&&' or '||' between ranges");
	} else if (in_group) {
		scan_fail(&p->sc, p->sc.pos, "expected '&&', '||' or ')'");
	} else {
		scan_fail(&p->sc, p->sc.pos, "trailing characters after spec");
	}
}

static void fail_wildcard(struct rparser *p, size_t at)
{
	scan_fail(&p->sc, at, "wildcards are not supported: name one tracepoint (subsys:name)");
}

/*
 * The "subsys:name" of a trigger at p->sc.pos, where says where it stands
 * ("before '..'" or "after '..'"): true with *colon and *end set (the
 * bytes of ':' and just past the name), or false with the error recorded.
 */
static bool scan_trigger_name(struct rparser *p, const char *where, size_t *colon, size_t *end)
{
	size_t t0 = p->sc.pos, i = p->sc.pos;
	char q[SCAN_QUOTE_SIZE];

	while (i < p->sc.len && scan_is_ident((unsigned char)p->sc.s[i]))
		i++;
	if (i == t0 && i < p->sc.len && p->sc.s[i] == ':') {
		scan_fail(&p->sc, t0, "expected a subsystem name before ':'");
		return false;
	}
	if (i >= p->sc.len || p->sc.s[i] != ':') {
		if (i < p->sc.len && is_wildcard((unsigned char)p->sc.s[i]))
			fail_wildcard(p, i);
		else
			scan_fail(&p->sc, t0, "expected tracepoint (subsys:name) %s", where);
		return false;
	}
	*colon = i++;
	while (i < p->sc.len && scan_is_ident((unsigned char)p->sc.s[i]))
		i++;
	*end = i;
	if (i == *colon + 1 && !(i < p->sc.len && is_wildcard((unsigned char)p->sc.s[i])))
		scan_fail(&p->sc, i, "expected a tracepoint name after '%s:'",
			  scan_quote(q, sizeof(q), p->sc.s + t0, *colon - t0));
	else if (i < p->sc.len && p->sc.s[i] == ':')
		scan_fail(&p->sc, i, "a tracepoint has exactly one ':' (subsys:name)");
	else if (i < p->sc.len && is_wildcard((unsigned char)p->sc.s[i]))
		fail_wildcard(p, i);
	else if (i < p->sc.len && p->sc.s[i] == '-')
		scan_fail(&p->sc, i, "invalid character '-' in tracepoint name");
	else
		return true;
	return false;
}

/* A trigger for the name at bytes [t0, end) with ':' at colon, added to
 * the spec's list; NULL when out of memory. */
static struct range_trigger *trigger_new(struct rparser *p, enum range_trigger_role role,
					 size_t t0, size_t colon, size_t end)
{
	struct range_spec *spec = &p->impl->pub;
	struct range_trigger *t = scan_calloc(&p->sc, sizeof(*t));

	if (!t)
		return NULL;
	if (!SCAN_PUSH(&p->sc, spec->triggers, spec->ntriggers, t)) {
		free(t);
		return NULL;
	}
	t->role = role;
	t->offset = t0;
	t->len = end - t0;
	t->tracepoint = scan_copy(&p->sc, p->sc.s + t0, end - t0);
	t->subsys = scan_copy(&p->sc, p->sc.s + t0, colon - t0);
	t->name = scan_copy(&p->sc, p->sc.s + colon + 1, end - colon - 1);
	if (!t->tracepoint || !t->subsys || !t->name)
		return NULL;
	return t;
}

/*
 * The trigger's "(" filter ")" at p->sc.pos, if there is one: true with
 * p->sc.pos past its ')' (or where it was, when there is none), or false
 * with the error recorded.
 */
static bool parse_trigger_filter(struct rparser *p, struct range_trigger *t)
{
	size_t save = p->sc.pos, close;

	scan_skip_space(&p->sc);
	if (scan_peek(&p->sc, 0) != '(') {
		p->sc.pos = save;
		return true;
	}
	t->filter_offset = p->sc.pos + 1;
	/* The filter parser reports into this parser's error, at offsets in
	 * the same text: its error is this parse's first one. */
	t->filter = filter_parse_paren(p->sc.s, p->sc.len, t->filter_offset, &close, p->sc.err);
	if (!t->filter) {
		p->sc.failed = true;
		return false;
	}
	t->filter_len = close - t->filter_offset;
	t->filter_text = scan_copy(&p->sc, p->sc.s + t->filter_offset, t->filter_len);
	if (!t->filter_text)
		return false;
	p->sc.pos = close + 1;
	return true;
}

/*
 * trigger = tracepoint [ "(" filter ")" ]; where says where it stands
 * ("before '..'" or "after '..'").  On success p->sc.pos is just past the
 * trigger (past its ')' when it has a filter).
 */
static struct range_trigger *parse_trigger(struct rparser *p, enum range_trigger_role role,
					   const char *where)
{
	size_t t0 = p->sc.pos, colon, end;
	struct range_trigger *t;

	if (!scan_trigger_name(p, where, &colon, &end))
		return NULL;
	t = trigger_new(p, role, t0, colon, end);
	if (!t)
		return NULL;
	p->sc.pos = end;
	return parse_trigger_filter(p, t) ? t : NULL;
}

/* Are two triggers the same (tracepoint and filter)? */
static bool same_trigger(const struct range_trigger *a, const struct range_trigger *b)
{
	return strcmp(a->tracepoint, b->tracepoint) == 0 && filter_equal(a->filter, b->filter);
}

/* range = [ trigger ] ".." [ trigger ] */
static struct range_gate *parse_range(struct rparser *p)
{
	struct range_spec *spec = &p->impl->pub;
	struct range_trigger *starter = NULL, *stopper = NULL;
	struct range_gate *g;
	size_t r0 = p->sc.pos, dots, end;

	if (!scan_looking_at(&p->sc, "..")) {
		starter = parse_trigger(p, RANGE_STARTER, "before '..'");
		if (!starter)
			return NULL;
		scan_skip_space(&p->sc);
		if (!scan_looking_at(&p->sc, "..")) {
			scan_fail(&p->sc, p->sc.pos, "expected '..' after trigger");
			return NULL;
		}
	}
	dots = p->sc.pos;
	p->sc.pos += 2;
	end = p->sc.pos;
	if (scan_peek(&p->sc, 0) == '.') {
		scan_fail(&p->sc, p->sc.pos, "unexpected '.' after '..'");
		return NULL;
	}
	scan_skip_space(&p->sc);
	if (is_trigger_start(scan_peek(&p->sc, 0))) {
		stopper = parse_trigger(p, RANGE_STOPPER, "after '..'");
		if (!stopper)
			return NULL;
		end = p->sc.pos;
	} else if (is_wildcard(scan_peek(&p->sc, 0))) {
		fail_wildcard(p, p->sc.pos);
		return NULL;
	}
	if (!starter && !stopper) {
		scan_fail(&p->sc, dots, "empty range: a tracepoint is needed before or after '..'");
		return NULL;
	}
	if (starter && stopper && same_trigger(starter, stopper)) {
		scan_fail(&p->sc, stopper->offset,
			  "the stopper is the same trigger as the starter");
		return NULL;
	}
	g = gate_new(p, RANGE_GATE_RANGE, r0);
	if (!g)
		return NULL;
	g->len = end - r0;
	g->starter = starter;
	g->stopper = stopper;
	g->dots_offset = dots;
	g->index = spec->nranges;
	if (!SCAN_PUSH(&p->sc, spec->ranges, spec->nranges, g))
		return NULL;
	if (starter)
		starter->range_index = g->index;
	if (stopper)
		stopper->range_index = g->index;
	return g;
}

static bool nest(struct rparser *p)
{
	return scan_nest(&p->sc, &p->depth, RANGE_NEST_MAX, "spec");
}

/* factor = "!" factor | "(" gate ")" | range */
static struct range_gate *parse_factor(struct rparser *p, const char *after)
{
	struct range_gate *g, *child;
	size_t at;
	int c;

	scan_skip_space(&p->sc);
	at = p->sc.pos;
	c = scan_peek(&p->sc, 0);
	if (c == '!') {
		if (!nest(p))
			return NULL;
		p->sc.pos++;
		child = parse_factor(p, "!");
		p->depth--;
		if (!child)
			return NULL;
		g = gate_new(p, RANGE_GATE_NOT, at);
		if (!g || !gate_add(p, g, child, p->sc.pos))
			return NULL;
		return g;
	}
	if (c == '(') {
		if (!nest(p))
			return NULL;
		p->sc.pos++;
		g = parse_gate(p, "(");
		p->depth--;
		if (!g)
			return NULL;
		scan_skip_space(&p->sc);
		if (scan_peek(&p->sc, 0) == ')') {
			p->sc.pos++;
			return g;
		}
		fail_leftover(p, true);
		return NULL;
	}
	if (scan_looking_at(&p->sc, "..") || is_trigger_start(c))
		return parse_range(p);
	if (is_wildcard(c))
		fail_wildcard(p, p->sc.pos);
	else
		scan_fail(&p->sc, p->sc.pos, "expected a range after '%s'", after);
	return NULL;
}

/* scan_nary's view of this parser: gates, which the spec owns (no
 * node_free: range_spec_free frees every node made). */
static void *term_operand(void *p, const char *after)
{
	return parse_factor(p, after);
}

static struct range_gate *parse_term(struct rparser *p, const char *after);

static void *gate_operand(void *p, const char *after)
{
	return parse_term(p, after);
}

static void *nary_gate_new(void *p, int kind, size_t offset)
{
	return gate_new(p, (enum range_gate_kind)kind, offset);
}

static bool nary_gate_add(void *p, void *g, void *child, size_t end)
{
	return gate_add(p, g, child, end);
}

/* term = factor { "&&" factor } */
static struct range_gate *parse_term(struct rparser *p, const char *after)
{
	static const struct scan_nary level = { "&&", RANGE_GATE_AND, term_operand,
						 nary_gate_new, nary_gate_add, NULL };

	return scan_nary(&p->sc, p, &level, after);
}

/* gate = term { "||" term } */
static struct range_gate *parse_gate(struct rparser *p, const char *after)
{
	static const struct scan_nary level = { "||", RANGE_GATE_OR, gate_operand,
						 nary_gate_new, nary_gate_add, NULL };

	return scan_nary(&p->sc, p, &level, after);
}

/* spec = events [ "@" gate ] */
static bool parse_spec(struct rparser *p)
{
	struct range_spec *spec = &p->impl->pub;
	int c;

	if (!parse_events(p))
		return false;
	scan_skip_space(&p->sc);
	c = scan_peek(&p->sc, 0);
	if (c < 0) {
		spec->at_offset = p->sc.len;
		return true;
	}
	if (c != '@') {
		if (c == ',' && spec->nevents == 1 && spec->events[0].offset == 0)
			scan_fail(&p->sc, p->sc.pos,
				  "a list of events goes in parentheses: (a,b)@...");
		else if (c == ')')
			scan_fail(&p->sc, p->sc.pos, "unexpected ')'");
		else
			scan_fail(&p->sc, p->sc.pos,
				  "expected '@' or end of spec after the events");
		return false;
	}
	spec->at_offset = p->sc.pos++;
	spec->gate = parse_gate(p, "@");
	if (!spec->gate)
		return false;
	scan_skip_space(&p->sc);
	if (scan_peek(&p->sc, 0) >= 0) {
		fail_leftover(p, false);
		return false;
	}
	return true;
}

struct range_spec *range_parse_n(const char *text, size_t len, struct pg_error *err)
{
	struct rparser p = { .sc = SCAN_INIT(text, len, err) };
	struct spec_impl *impl = scan_calloc(&p.sc, sizeof(*impl));

	if (!impl)
		return NULL;
	p.impl = impl;
	impl->pub.text = scan_copy(&p.sc, text, len);
	impl->pub.text_len = len;
	if (impl->pub.text && parse_spec(&p))
		return &impl->pub;
	{
		int e = errno;

		range_spec_free(&impl->pub);
		errno = e;
	}
	return NULL;
}

struct range_spec *range_parse(const char *text, struct pg_error *err)
{
	return range_parse_n(text, strlen(text), err);
}

/* ---- evaluation ------------------------------------------------------------------- */

bool range_gate_eval(const struct range_gate *gate, const bool *open)
{
	switch (gate->kind) {
	case RANGE_GATE_RANGE:
		return open[gate->index];
	case RANGE_GATE_NOT:
		return !range_gate_eval(gate->children[0], open);
	case RANGE_GATE_AND:
		for (size_t i = 0; i < gate->nchildren; i++)
			if (!range_gate_eval(gate->children[i], open))
				return false;
		return true;
	case RANGE_GATE_OR:
		for (size_t i = 0; i < gate->nchildren; i++)
			if (range_gate_eval(gate->children[i], open))
				return true;
		return false;
	}
	return false;
}

/* ---- printing ---------------------------------------------------------------------- */

static void put_trigger(struct text_out *o, const struct range_trigger *t)
{
	size_t room;

	text_out_puts(o, t->tracepoint);
	if (!t->filter)
		return;
	text_out_puts(o, "(");
	room = o->len < o->cap ? o->cap - o->len : 0;
	o->len += filter_format(t->filter, FILTER_FORMAT_CANONICAL,
				room ? o->buf + o->len : NULL, room);
	text_out_puts(o, ")");
}

bool range_tracepoint_check(const char *text, size_t len, struct pg_error *err)
{
	struct scan sc = SCAN_INIT(text, len, err);
	char d[16], q[SCAN_QUOTE_SIZE];
	size_t i = 0, colon;

	while (i < len && scan_is_ident((unsigned char)text[i]))
		i++;
	if (i == len) {
		scan_fail(&sc, i, "expected ':' in tracepoint '%s' (subsys:name)",
			  scan_quote(q, sizeof(q), text, len));
		return false;
	}
	if (text[i] != ':') {
		scan_fail(&sc, i, "invalid character %s in tracepoint subsystem",
			  describe(d, sizeof(d), (unsigned char)text[i]));
		return false;
	}
	if (i == 0) {
		scan_fail(&sc, 0, "expected a subsystem name before ':'");
		return false;
	}
	colon = i++;
	while (i < len && scan_is_ident((unsigned char)text[i]))
		i++;
	if (i == colon + 1 && i == len) {
		scan_fail(&sc, i, "expected a tracepoint name after '%s:'",
			  scan_quote(q, sizeof(q), text, colon));
		return false;
	}
	if (i < len && text[i] == ':') {
		scan_fail(&sc, i, "a tracepoint has exactly one ':' (subsys:name)");
		return false;
	}
	if (i < len) {
		scan_fail(&sc, i, "invalid character %s in tracepoint name",
			  describe(d, sizeof(d), (unsigned char)text[i]));
		return false;
	}
	return true;
}


static int prec(enum range_gate_kind kind)
{
	switch (kind) {
	case RANGE_GATE_OR:	return 1;
	case RANGE_GATE_AND:	return 2;
	case RANGE_GATE_NOT:	return 3;
	case RANGE_GATE_RANGE:	break;
	}
	return 4;
}

static void put_gate(struct text_out *o, const struct range_gate *g);

/* Parentheses keep both precedence and the tree's shape ("(a && b) && c"). */
static void put_child(struct text_out *o, const struct range_gate *child, int parent_prec)
{
	bool parens = (child->kind == RANGE_GATE_AND || child->kind == RANGE_GATE_OR) &&
		      prec(child->kind) <= parent_prec;

	if (parens)
		text_out_char(o, '(');
	put_gate(o, child);
	if (parens)
		text_out_char(o, ')');
}

static void put_gate(struct text_out *o, const struct range_gate *g)
{
	switch (g->kind) {
	case RANGE_GATE_RANGE:
		if (g->starter)
			put_trigger(o, g->starter);
		text_out_puts(o, "..");
		if (g->stopper)
			put_trigger(o, g->stopper);
		break;
	case RANGE_GATE_NOT:
		text_out_char(o, '!');
		put_child(o, g->children[0], prec(g->kind));
		break;
	case RANGE_GATE_AND:
	case RANGE_GATE_OR:
		for (size_t i = 0; i < g->nchildren; i++) {
			if (i)
				text_out_puts(o, g->kind == RANGE_GATE_AND ? " && " : " || ");
			put_child(o, g->children[i], prec(g->kind));
		}
		break;
	}
}

size_t range_gate_format(const struct range_gate *gate, char *buf, size_t cap)
{
	struct text_out o = { buf, cap, 0 };

	if (gate)
		put_gate(&o, gate);
	return text_out_end(&o);
}

size_t range_spec_format(const struct range_spec *spec, char *buf, size_t cap)
{
	struct text_out o = { buf, cap, 0 };

	if (spec->nevents != 1)
		text_out_char(&o, '(');
	for (size_t i = 0; i < spec->nevents; i++) {
		if (i)
			text_out_char(&o, ',');
		text_out_puts(&o, spec->events[i].name);
	}
	if (spec->nevents != 1)
		text_out_char(&o, ')');
	if (spec->gate) {
		text_out_char(&o, '@');
		put_gate(&o, spec->gate);
	}
	return text_out_end(&o);
}

/* ---- error messages ------------------------------------------------------------------ */

/* The spec as it can be shown on one terminal line, byte for byte. */
static void put_shown(struct text_out *o, const char *text, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		unsigned char c = (unsigned char)text[i];

		if (scan_is_space(c))
			text_out_char(o, ' ');
		else if (c < 0x20 || c == 0x7f)
			text_out_char(o, '?');
		else
			text_out_char(o, (char)c);
	}
}

/* Columns text[from..to) takes on a terminal (a UTF-8 sequence is one). */
static size_t columns(const char *text, size_t from, size_t to)
{
	size_t n = 0;

	for (size_t i = from; i < to; i++)
		n += ((unsigned char)text[i] & 0xc0) != 0x80;	/* not a continuation */
	return n;
}

/* Move i back to the first byte of the UTF-8 sequence it is in. */
static size_t char_start(const char *text, size_t len, size_t i)
{
	while (i > 0 && i < len && ((unsigned char)text[i] & 0xc0) == 0x80)
		i--;
	return i;
}

/* The bytes [*from, *to) of a long text to show around byte at. */
static void caret_window(const char *text, size_t len, size_t at, size_t *from, size_t *to)
{
	*from = 0;
	*to = len;
	if (columns(text, 0, len) <= RANGE_CARET_WIDTH)
		return;
	/* A third of the window before the caret, the rest after it. */
	*from = at > RANGE_CARET_WINDOW / 3 ? at - RANGE_CARET_WINDOW / 3 : 0;
	*from = char_start(text, len, *from);
	*to = *from + RANGE_CARET_WINDOW < len ? *from + RANGE_CARET_WINDOW : len;
	if (*to <= at)
		*to = at < len ? at + 1 : len;
	while (*to < len && ((unsigned char)text[*to] & 0xc0) == 0x80)
		(*to)++;
}

size_t range_caret_format(const char *text, size_t len, size_t offset, const char *indent,
			  char *buf, size_t cap)
{
	struct text_out o = { buf, cap, 0 };
	size_t at = offset < len ? offset : len, from, to, col;

	caret_window(text, len, at, &from, &to);
	text_out_puts(&o, indent);
	if (from > 0)
		text_out_puts(&o, "...");
	put_shown(&o, text, from, to);
	if (to < len)
		text_out_puts(&o, "...");
	text_out_char(&o, '\n');
	text_out_puts(&o, indent);
	col = (from > 0 ? 3 : 0) + columns(text, from, at);
	for (size_t i = 0; i < col; i++)
		text_out_char(&o, ' ');
	text_out_char(&o, '^');
	return text_out_end(&o);
}

size_t range_error_format(const char *text, size_t len, const struct pg_error *err,
			  char *buf, size_t cap)
{
	struct text_out o = { buf, cap, 0 };
	size_t n = range_caret_format(text, len, err->offset, "", buf, cap);

	o.len = n;
	text_out_char(&o, ' ');
	text_out_puts(&o, err->message);
	return text_out_end(&o);
}

size_t range_error_format_line(const char *text, size_t len, const struct pg_error *err,
			       char *buf, size_t cap)
{
	struct text_out o = { buf, cap, 0 };
	size_t at = err->offset < len ? err->offset : len;
	char n[32];

	text_out_puts(&o, err->message);
	snprintf(n, sizeof(n), " at byte %zu: ", at);
	text_out_puts(&o, n);
	put_shown(&o, text, 0, at);
	text_out_puts(&o, "<HERE>");
	put_shown(&o, text, at, len);
	return text_out_end(&o);
}
