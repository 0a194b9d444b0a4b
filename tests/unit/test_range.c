/*
 * test_range.c: unit tests for grammar/range_parse and grammar/filter_parse:
 * every production of the range grammar and of the kernel filter syntax,
 * whitespace, nesting and precedence, the tree the agent walks (kinds,
 * children, offsets, filter text as written), gate evaluation, canonical
 * printing and its round trips, and every error reason with the exact byte
 * offset the caret goes under (the agent and the end-to-end tests show
 * them to users); the same for tracepoint names alone, long input shown
 * in a window, and -C lists (grammar/cpu_list).  Output is TAP
 * (tests/unit/tap.h).
 */
#include "grammar/cpu_list.h"
#include "grammar/range_parse.h"
#include "tests/unit/tap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------- */

static char got[8192];

/* A test name stays on its TAP line: control bytes become '?'. */
static const char *name_of(char *what, size_t cap, const char *prefix, const char *text)
{
	snprintf(what, cap, "%s%s", prefix, text);
	for (char *c = what; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return what;
}

/* Parse, and give the canonical text or "ERR offset: reason". */
static const char *parse_show(const char *text)
{
	struct pg_error err = { 0 };
	struct range_spec *spec = range_parse(text, &err);

	if (!spec) {
		snprintf(got, sizeof(got), "ERR %zu: %s", err.offset, err.message);
		pg_error_clear(&err);
		return got;
	}
	range_spec_format(spec, got, sizeof(got));
	range_spec_free(spec);
	return got;
}

/* One test point: text parses, to this canonical form. */
static void ok_spec(const char *text, const char *canonical)
{
	char what[512];

	name_of(what, sizeof(what), "parses: ", text);
	is_str(parse_show(text), canonical, what);
}

/* One test point: text fails at this byte, for this reason. */
static void err_spec(const char *text, size_t offset, const char *reason)
{
	char what[512], want[512];

	snprintf(want, sizeof(want), "error at %zu: ", offset);
	name_of(what, sizeof(what), want, text);
	snprintf(want, sizeof(want), "ERR %zu: %s", offset, reason);
	is_str(parse_show(text), want, what);
}

/* Same for a whole filter (--filter): canonical text, or the error. */
static const char *filter_show(const char *text, unsigned flags)
{
	struct pg_error err = { 0 };
	struct filter_node *f = filter_parse(text, strlen(text), &err);

	if (!f) {
		snprintf(got, sizeof(got), "ERR %zu: %s", err.offset, err.message);
		pg_error_clear(&err);
		return got;
	}
	filter_format(f, flags, got, sizeof(got));
	filter_free(f);
	return got;
}

static void ok_filter(const char *text, const char *canonical)
{
	char what[512];

	name_of(what, sizeof(what), "filter parses: ", text);
	is_str(filter_show(text, FILTER_FORMAT_CANONICAL), canonical, what);
}

static void err_filter(const char *text, size_t offset, const char *reason)
{
	char what[512], want[512];

	snprintf(want, sizeof(want), "filter error at %zu: ", offset);
	name_of(what, sizeof(what), want, text);
	snprintf(want, sizeof(want), "ERR %zu: %s", offset, reason);
	is_str(filter_show(text, FILTER_FORMAT_CANONICAL), want, what);
}

/* The gate tree as a compact S-expression: (or (and R0 (not R1)) R2). */
static void shape(const struct range_gate *g, char *buf, size_t cap)
{
	size_t n = strlen(buf);
	static const char *names[] = { "R", "and", "or", "not" };

	if (g->kind == RANGE_GATE_RANGE) {
		snprintf(buf + n, cap - n, "R%zu", g->index);
		return;
	}
	snprintf(buf + n, cap - n, "(%s", names[g->kind]);
	for (size_t i = 0; i < g->nchildren; i++) {
		n = strlen(buf);
		snprintf(buf + n, cap - n, " ");
		shape(g->children[i], buf, cap);
	}
	n = strlen(buf);
	snprintf(buf + n, cap - n, ")");
}

static void ok_shape(const char *text, const char *want)
{
	struct range_spec *spec = range_parse(text, NULL);
	char what[512];

	got[0] = '\0';
	if (spec && spec->gate)
		shape(spec->gate, got, sizeof(got));
	snprintf(what, sizeof(what), "tree of %s", text);
	is_str(got, want, what);
	range_spec_free(spec);
}

/* ---- the grammar, production by production -------------------------------- */

static void test_productions(void)
{
	/* The seed discussion's examples. */
	ok_spec("instructions@irq:softirq_entry..irq:softirq_exit",
		"instructions@irq:softirq_entry..irq:softirq_exit");
	ok_spec("instructions@irq:softirq_exit..irq:softirq_entry",
		"instructions@irq:softirq_exit..irq:softirq_entry");
	ok_spec("task-clock@syscalls:sys_enter_read..syscalls:sys_exit_read",
		"task-clock@syscalls:sys_enter_read..syscalls:sys_exit_read");
	/* Open ends. */
	ok_spec("cycles@lock:lock_acquire..", "cycles@lock:lock_acquire..");
	ok_spec("cycles@..lock:lock_acquire", "cycles@..lock:lock_acquire");
	ok_spec("cycles@(..lock:lock_acquire)", "cycles@..lock:lock_acquire");
	/* Events: one, a list, a list of one, perf's spellings. */
	ok_spec("cycles", "cycles");
	ok_spec("(cycles,instructions)@a:b..c:d", "(cycles,instructions)@a:b..c:d");
	ok_spec("(cycles)@a:b..", "cycles@a:b..");
	ok_spec("(cycles:u,L1-dcache-loads,sched:sched_switch,r003c,mem.x)",
		"(cycles:u,L1-dcache-loads,sched:sched_switch,r003c,mem.x)");
	/* Gates: union, intersection, complement, grouping. */
	ok_spec("x@a:b..c:d || e:f..g:h", "x@a:b..c:d || e:f..g:h");
	ok_spec("x@a:b..c:d && e:f..g:h", "x@a:b..c:d && e:f..g:h");
	ok_spec("x@!a:b..c:d", "x@!a:b..c:d");
	ok_spec("x@!!a:b..", "x@!!a:b..");
	ok_spec("x@(((a:b..)))", "x@a:b..");
	ok_spec("x@..a:b && a:b..", "x@..a:b && a:b..");
	ok_spec("(inst,cycles)@(lock:acquire_a..lock:release_a || lock:acquire_b..lock:release_b)",
		"(inst,cycles)@lock:acquire_a..lock:release_a || lock:acquire_b..lock:release_b");
	/* Filters on triggers. */
	ok_spec("instructions@irq:softirq_entry(vec == 3)..irq:softirq_exit(vec == 3)",
		"instructions@irq:softirq_entry(vec == 3)..irq:softirq_exit(vec == 3)");
	ok_spec("x@syscalls:sys_enter_write(count==1)..syscalls:sys_exit_write",
		"x@syscalls:sys_enter_write(count == 1)..syscalls:sys_exit_write");
	ok_spec("x@a:b(s == \"a)b\")..", "x@a:b(s == \"a)b\")..");
	/* Same tracepoint, different filters: two triggers. */
	ok_spec("x@irq:e(vec == 1)..irq:e(vec == 2)", "x@irq:e(vec == 1)..irq:e(vec == 2)");
}

static void test_whitespace(void)
{
	ok_spec("  cycles  ", "cycles");
	ok_spec(" ( a , b ) @ a:b .. c:d ", "(a,b)@a:b..c:d");
	ok_spec("x @ ( a:b..c:d ) && ! e:f..", "x@a:b..c:d && !e:f..");
	ok_spec("x@\ta:b\t(\tn == 1\t)\t..\tc:d\n", "x@a:b(n == 1)..c:d");
	ok_spec("x@a:b..c:d&&e:f..||..g:h", "x@a:b..c:d && e:f.. || ..g:h");
	/* Inside a name or an operator, whitespace is not allowed. */
	err_spec("x@a :b..", 2, "expected tracepoint (subsys:name) before '..'");
	err_spec("x@a:b. .c:d", 5, "expected '..' after trigger");
	err_spec("x@a:b..c:d & & e:f..", 11, "single '&' between ranges: use '&&'");
}

static void test_precedence(void)
{
	ok_shape("x@a:b..", "R0");
	ok_shape("x@a:b.. || c:d.. && e:f..", "(or R0 (and R1 R2))");
	ok_shape("x@a:b.. && c:d.. || e:f..", "(or (and R0 R1) R2)");
	ok_shape("x@!a:b.. && c:d..", "(and (not R0) R1)");
	ok_shape("x@!(a:b.. && c:d..)", "(not (and R0 R1))");
	ok_shape("x@a:b.. && c:d.. && e:f..", "(and R0 R1 R2)");
	ok_shape("x@a:b.. || c:d.. || e:f.. || g:h..", "(or R0 R1 R2 R3)");
	ok_shape("x@(a:b.. || c:d..) && e:f..", "(and (or R0 R1) R2)");
	ok_shape("x@a:b.. && (c:d.. && e:f..)", "(and R0 (and R1 R2))");
	ok_shape("x@!!a:b..", "(not (not R0))");
	/* Printing keeps precedence and shape with the fewest parentheses. */
	ok_spec("x@(a:b.. || c:d..) && e:f..", "x@(a:b.. || c:d..) && e:f..");
	ok_spec("x@(a:b.. && c:d..) || e:f..", "x@a:b.. && c:d.. || e:f..");
	ok_spec("x@a:b.. && (c:d.. && e:f..)", "x@a:b.. && (c:d.. && e:f..)");
	ok_spec("x@!(a:b..) && !(c:d.. || e:f..)", "x@!a:b.. && !(c:d.. || e:f..)");
}

static void test_nesting(void)
{
	char deep[512];
	size_t n = 0;

	for (int i = 0; i < RANGE_NEST_MAX; i++)
		deep[n++] = '(';
	memcpy(deep + n, "a:b..", 5);
	n += 5;
	for (int i = 0; i < RANGE_NEST_MAX; i++)
		deep[n++] = ')';
	deep[n] = '\0';
	{
		char spec[600];

		snprintf(spec, sizeof(spec), "x@%s", deep);
		ok_spec(spec, "x@a:b..");
		snprintf(spec, sizeof(spec), "x@(%s)", deep);
		err_spec(spec, 2 + RANGE_NEST_MAX,
			 "spec nested too deeply (over 64 levels of '(' and '!')");
	}
	memset(deep, '!', 70);
	strcpy(deep + 70, "a:b..");
	{
		char spec[600];

		snprintf(spec, sizeof(spec), "x@%s", deep);
		err_spec(spec, 2 + RANGE_NEST_MAX,
			 "spec nested too deeply (over 64 levels of '(' and '!')");
	}
}

/* ---- the tree the agent walks ------------------------------------------------ */

static void test_tree(void)
{
	const char *text = "(cycles, task-clock)@irq:softirq_entry(vec == 3)..irq:softirq_exit"
			   " || !..sched:sched_switch";
	struct pg_error err = { 0 };
	struct range_spec *spec = range_parse(text, &err);
	struct range_trigger *t;
	struct range_gate *r;
	size_t i, n = 0;

	ok(spec != NULL, "tree: parses");
	if (!spec)
		return;
	is_int(spec->nevents, 2, "tree: two events");
	is_str(spec->events[1].name, "task-clock", "tree: event name");
	is_int(spec->events[1].offset, 9, "tree: event offset");
	is_int(spec->events[1].len, 10, "tree: event length");
	is_int(spec->at_offset, 20, "tree: '@' offset");
	is_int(spec->gate->kind, RANGE_GATE_OR, "tree: top is OR");
	is_int(spec->gate->nchildren, 2, "tree: OR of two");
	is_int(spec->nranges, 2, "tree: two ranges");
	is_int(spec->ntriggers, 3, "tree: three triggers");
	r = spec->ranges[0];
	is_int(r->offset, 21, "tree: range offset");
	is_int(r->len, 45, "tree: range length (to the stopper's end)");
	is_int(r->dots_offset, 48, "tree: '..' offset");
	t = r->starter;
	is_str(t->tracepoint, "irq:softirq_entry", "tree: starter tracepoint");
	ok(strcmp(t->subsys, "irq") == 0 && strcmp(t->name, "softirq_entry") == 0,
	   "tree: starter subsys and name");
	ok(t->offset == 21 && t->len == 17, "tree: starter offset and length");
	is_str(t->filter_text, "vec == 3", "tree: filter text as written");
	ok(t->filter_offset == 39 && t->filter_len == 8 &&
	   memcmp(text + t->filter_offset, "vec == 3", 8) == 0, "tree: filter bytes in the spec");
	ok(t->role == RANGE_STARTER && t->range_index == 0, "tree: starter role and range");
	ok(r->stopper && r->stopper->filter == NULL && r->stopper->filter_text == NULL &&
	   r->stopper->filter_len == 0, "tree: no filter is NULL");
	r = spec->ranges[1];
	ok(r->starter == NULL && r->stopper && r->stopper->role == RANGE_STOPPER &&
	   r->stopper->range_index == 1, "tree: open start");
	ok(spec->gate->children[1]->kind == RANGE_GATE_NOT &&
	   spec->gate->children[1]->children[0] == r, "tree: NOT holds the second range");
	range_spec_for_each_trigger(spec, t, i)
		n += t->offset;
	is_int(n, 21 + 50 + 73, "tree: range_spec_for_each_trigger visits left to right");
	range_spec_free(spec);

	spec = range_parse("cycles", &err);
	ok(spec && spec->gate == NULL && spec->at_offset == 6 && spec->nranges == 0,
	   "tree: no '@' means no gate");
	range_spec_free(spec);

	errno = 0;
	spec = range_parse("cycles@", &err);
	ok(spec == NULL && errno == EINVAL, "errors set errno to EINVAL");
	pg_error_clear(&err);
	ok(range_parse("x@..", NULL) == NULL, "err may be NULL");
	range_spec_free(NULL);
}

/* A group's parentheses belong to the node around it. */
static void test_spans(void)
{
	struct range_spec *spec = range_parse("x@!(a:b..) && (c:d.. || e:f..)", NULL);
	struct range_gate *and = spec->gate, *not = and->children[0];

	ok(not->offset == 2 && not->len == 8 && not->children[0]->offset == 4 &&
	   not->children[0]->len == 5, "spans: NOT covers its group, the range does not");
	ok(and->offset == 2 && and->len == 28 && and->children[1]->offset == 15 &&
	   and->children[1]->len == 14, "spans: AND covers its last operand's ')'");
	range_spec_free(spec);
	spec = range_parse("x@a:b(!(n == 1) && (m == 2))..", NULL);
	{
		struct filter_node *f = spec->triggers[0]->filter;

		ok(f->span.offset == 6 && f->span.len == 21 && f->children[0]->span.len == 9 &&
		   f->children[0]->children[0]->span.offset == 8 &&
		   f->children[1]->span.offset == 20 && f->children[1]->span.len == 6,
		   "spans: the same in filters");
	}
	range_spec_free(spec);
}

static void test_eval(void)
{
	struct range_spec *spec = range_parse("x@a:b.. && !c:d.. || e:f..", NULL);
	int wrong = 0;

	for (int m = 0; m < 8; m++) {
		bool open[3] = { m & 1, m & 2, m & 4 };
		bool want = (open[0] && !open[1]) || open[2];

		wrong += range_gate_eval(spec->gate, open) != want;
	}
	is_int(wrong, 0, "eval: && is intersection, ! complement, || union");
	range_spec_free(spec);
}

/* ---- filters ------------------------------------------------------------------ */

static void test_filter_syntax(void)
{
	/* Every operator. */
	ok_filter("a==1", "a == 1");
	ok_filter("a != 1", "a != 1");
	ok_filter("a<1", "a < 1");
	ok_filter("a<=1", "a <= 1");
	ok_filter("a>1", "a > 1");
	ok_filter("a>=1", "a >= 1");
	ok_filter("flags&0x4", "flags & 0x4");
	ok_filter("comm~\"ba*\"", "comm ~ \"ba*\"");
	/* Values: hex, negative, octal, strings in both quotes, words, cpulists. */
	ok_filter("a == 0XfF && b == -12 && c == 017", "a == 0XfF && b == -12 && c == 017");
	ok_filter("s == 'it''s'", "ERR 9: expected '&&' or '||' in filter");
	ok_filter("s == 'say \"hi\"' || t != \"it's\"", "s == 'say \"hi\"' || t != \"it's\"");
	ok_filter("comm != bash", "comm != bash");
	ok_filter("cpus & CPUS{0-3,8,16-31:2/4}", "cpus & CPUS{0-3,8,16-31:2/4}");
	ok_filter("call_site.function == kmem_cache_free", "call_site.function == kmem_cache_free");
	ok_filter("filename.ustring ~ \"*.so\"", "filename.ustring ~ \"*.so\"");
	/* Grouping and precedence: ! over && over ||. */
	ok_filter("((sig >= 10 && sig < 15) || sig == 17) && comm != bash",
		  "(sig >= 10 && sig < 15 || sig == 17) && comm != bash");
	ok_filter("a == 1 || b == 2 && c == 3", "a == 1 || b == 2 && c == 3");
	ok_filter("!a == 1 && !(b == 2 || c == 3)", "!(a == 1) && !(b == 2 || c == 3)");
	ok_filter("!!(a == 1)", "!!(a == 1)");
	/* The kernel's form quotes words, except a .function symbol. */
	is_str(filter_show("comm != bash && f.function == kfree && n == 1", FILTER_FORMAT_KERNEL),
	       "comm != \"bash\" && f.function == kfree && n == 1", "kernel form quotes words");
}

static void test_filter_tree(void)
{
	const char *text = "x@t:p(n == -0x10 && s ~ 'a*' || !(c & CPUS{1}))..";
	struct range_spec *spec = range_parse(text, NULL);
	struct filter_node *f = spec ? spec->triggers[0]->filter : NULL;
	struct filter_pred *p;

	ok(f && f->kind == FILTER_OR && f->nchildren == 2 &&
	   f->children[0]->kind == FILTER_AND && f->children[1]->kind == FILTER_NOT,
	   "filter tree: OR(AND, NOT)");
	if (!f)
		return;
	p = &f->children[0]->children[0]->pred;
	ok(strcmp(p->field, "n") == 0 && p->field_span.offset == 6 && p->field_span.len == 1,
	   "filter tree: field and its offset");
	ok(p->op == FILTER_OP_EQ && p->op_span.offset == 8 && p->op_span.len == 2,
	   "filter tree: operator and its offset");
	ok(p->value_kind == FILTER_VALUE_NUMBER && p->negative && p->number == (uint64_t)-16 &&
	   p->value_span.offset == 11 && p->value_span.len == 5 && strcmp(p->value, "-0x10") == 0,
	   "filter tree: negative hex number");
	p = &f->children[0]->children[1]->pred;
	ok(p->value_kind == FILTER_VALUE_STRING && p->quote == '\'' &&
	   strcmp(p->value, "a*") == 0 && p->value_span.offset == 24 && p->value_span.len == 4,
	   "filter tree: string without its quotes, span with them");
	p = &f->children[1]->children[0]->pred;
	ok(p->value_kind == FILTER_VALUE_CPUS && strcmp(p->value, "1") == 0 &&
	   p->op == FILTER_OP_BAND, "filter tree: cpulist");
	is_int(f->span.offset, 6, "filter tree: span starts at the first field");
	is_int(f->span.len, 40, "filter tree: span ends at the last value");
	range_spec_free(spec);

	{
		struct filter_node *a = filter_parse("x == 0x10 && s == 'a'", 21, NULL);
		struct filter_node *b = filter_parse("x==16&&s==a", 11, NULL);
		struct filter_node *c = filter_parse("s == 'a' && x == 16", 19, NULL);

		ok(filter_equal(a, b) && !filter_equal(a, c) && filter_equal(NULL, NULL),
		   "filter_equal: one value however written; order counts");
		filter_free(a);
		filter_free(b);
		filter_free(c);
	}
	{
		struct filter_node *f2 = filter_parse("n == 18446744073709551615", 25, NULL);

		ok(f2 && f2->pred.number == UINT64_MAX && !f2->pred.negative,
		   "filter: largest unsigned number");
		filter_free(f2);
		f2 = filter_parse("n == -9223372036854775808", 25, NULL);
		ok(f2 && f2->pred.number == (uint64_t)1 << 63 && f2->pred.negative,
		   "filter: smallest signed number");
		filter_free(f2);
		f2 = filter_parse("n == 0777", 9, NULL);
		ok(f2 && f2->pred.number == 511, "filter: a leading 0 is octal, as in the kernel");
		filter_free(f2);
	}
}

/* ---- errors: every reason, at its byte ------------------------------------------ */

static void test_errors_events(void)
{
	err_spec("", 0, "expected an event name");
	err_spec("   ", 3, "expected an event name");
	err_spec("@a:b..", 0, "expected an event name before '@'");
	err_spec("()@a:b..", 1, "empty event list");
	err_spec("(a,)@a:b..", 3, "expected an event name after ','");
	err_spec("(", 1, "expected an event name after '('");
	err_spec("(a,b", 4, "unterminated event list: missing ')'");
	err_spec("(a b)@x:y..", 3, "expected ',' or ')' in event list");
	err_spec("(a,b,a)@x:y..", 5, "event 'a' is listed twice");
	err_spec("cycles,instructions@a:b..", 6, "a list of events goes in parentheses: (a,b)@...");
	err_spec("cycles..a:b", 6, "'..' inside event name 'cycles..a:b': is '@' missing before the range?");
	err_spec("inst*@a:b..", 4, "wildcards are not supported in event names");
	err_spec("cpu/cycles/@a:b..", 3, "unexpected '/' in event name");
	err_spec("a\001", 1, "unexpected byte 0x01 in event name");
	err_spec("a b", 2, "expected '@' or end of spec after the events");
	err_spec("a)", 1, "unexpected ')'");
	err_spec("x@a:b..c:d@e:f..", 10, "a spec has one '@': combine ranges with '&&' or '||'");
}

static void test_errors_gate(void)
{
	err_spec("cycles@", 7, "expected a range after '@'");
	err_spec("x@a:b.. &&", 10, "expected a range after '&&'");
	err_spec("x@a:b.. || )", 11, "expected a range after '||'");
	err_spec("x@!", 3, "expected a range after '!'");
	err_spec("x@()", 3, "expected a range after '('");
	err_spec("x@..", 2, "empty range: a tracepoint is needed before or after '..'");
	err_spec("x@(.. && a:b..)", 3, "empty range: a tracepoint is needed before or after '..'");
	err_spec("x@a:b", 5, "expected '..' after trigger");
	err_spec("cycles@irq:softirq_entry.irq:softirq_exit", 24, "expected '..' after trigger");
	err_spec("x@(a:b && c:d)..e:f", 7, "expected '..' after trigger");
	err_spec("x@a:b...c:d", 7, "unexpected '.' after '..'");
	err_spec("x@a:b..c:d..e:f", 10, "a range has one '..': combine ranges with '&&' or '||'");
	err_spec("x@sys_enter_read..", 2, "expected tracepoint (subsys:name) before '..'");
	err_spec("x@..sys_exit_read", 4, "expected tracepoint (subsys:name) after '..'");
	err_spec("x@:b..", 2, "expected a subsystem name before ':'");
	err_spec("x@a:..", 4, "expected a tracepoint name after 'a:'");
	err_spec("x@a:b:c..", 5, "a tracepoint has exactly one ':' (subsys:name)");
	err_spec("x@a:b-c..", 5, "invalid character '-' in tracepoint name");
	err_spec("x@lock:*acquire..", 7, "wildcards are not supported: name one tracepoint (subsys:name)");
	err_spec("x@*..", 2, "wildcards are not supported: name one tracepoint (subsys:name)");
	err_spec("x@a:b..c:d)", 10, "unexpected ')'");
	err_spec("x@(a:b..c:d", 11, "unterminated group: missing ')'");
	err_spec("x@(a:b..c:d $)", 12, "expected '&&', '||' or ')'");
	err_spec("x@a:b..c:d e:f..", 11, "expected '&&' or '||' between ranges");
	err_spec("x@a:b.. (n == 1)", 8, "expected '&&' or '||' between ranges");
	err_spec("x@a:b.. | c:d..", 8, "single '|' between ranges: use '||'");
	err_spec("x@a:b..c:d $", 11, "trailing characters after spec");
	err_spec("x@a:b..a:b", 7, "the stopper is the same trigger as the starter");
	err_spec("x@a:b(n==1)..a:b( n == 0x1 )", 13, "the stopper is the same trigger as the starter");
}

static void test_errors_filter(void)
{
	/* Inside a trigger's parentheses: offsets count from the spec's start. */
	err_spec("x@a:b()..", 6, "empty filter");
	err_spec("x@a:b(", 6, "unterminated filter: missing ')'");
	err_spec("x@a:b(n == 1", 12, "unterminated filter: missing ')'");
	err_spec("x@a:b(n == 1 && (m == 2)..", 24, "expected '&&', '||' or ')' in filter");
	err_spec("x@a:b(count)..", 11, "expected an operator after field 'count'");
	err_spec("x@a:b(count && n == 1)..", 12, "expected an operator after field 'count'");
	err_spec("x@irq:irq_handler_entry(irq=eth0)..", 27, "'=' is not an operator: use '=='");
	err_spec("x@a:b(n ==)..", 10, "expected a value after '=='");
	err_spec("x@a:b(n == && m == 1)..", 11, "expected a value after '=='");
	err_spec("x@a:b(comm == \"bash)..c:d", 14, "unterminated string");
	err_spec("x@a:b(n == 1 &&)..", 15, "expected a field name after '&&'");
	err_spec("x@a:b(n == 1 || )..", 16, "expected a field name after '||'");
	err_spec("x@a:b(!)..", 7, "expected a field name after '!'");
	err_spec("x@a:b(5 == n)..", 6, "expected a field name");
	err_spec("x@a:b(())..", 7, "empty parentheses in filter");
	err_spec("x@a:b(n == 1 m == 2)..", 13, "expected '&&', '||' or ')' in filter");
	err_spec("x@a:b(n == 1 & m == 2)..", 13, "single '&' between conditions: use '&&'");
	err_spec("x@a:b(n == 1 | m == 2)..", 13, "single '|' between conditions: use '||'");
	err_spec("x@a:b(n.foo == 1)..", 7, "unknown field suffix: expected .function or .ustring");
	err_spec("x@a:b(s < \"x\")..", 8, "operator '<' does not apply to strings: use ==, != or ~");
	err_spec("x@a:b(n ~ 5)..", 8, "operator '~' matches strings, not numbers");
	err_spec("x@a:b(n > big)..", 10, "expected a number after '>'");
	err_spec("x@a:b(n == -)..", 12, "expected a digit after '-'");
	err_spec("x@a:b(n == 0x)..", 11, "invalid number '0x'");
	err_spec("x@a:b(n == 12ab)..", 11, "invalid number '12ab'");
	err_spec("x@a:b(n == 09)..", 11, "invalid number '09' (a leading 0 means octal)");
	err_spec("x@a:b(n == 18446744073709551616)..", 11,
		 "number '18446744073709551616' does not fit in 64 bits");
	err_spec("x@a:b(n == -9223372036854775809)..", 11,
		 "number '-9223372036854775809' does not fit in 64 bits");
	err_spec("x@a:b(n == 000000000000000000000001)..", 11,
		 "number '000000000000000000000001' is too long (over 23 characters)");
	err_spec("x@a:b(c == CPUS)..", 15, "expected '{' after CPUS");
	err_spec("x@a:b(c == CPUS{1)..", 15, "unterminated CPU list: missing '}'");
	err_spec("x@a:b(c == CPUS{})..", 16, "empty CPU list");
	err_spec("x@a:b(c == CPUS{1-})..", 18,
		 "invalid CPU list (expected n, n-m or n-m:used/group, separated by ',')");
	err_spec("x@a:b(c < CPUS{1})..", 8, "operator '<' does not apply to a CPU list: use ==, != or &");
	err_spec("x@a:b(f.function > 1)..", 17, "a .function field compares with == or != only");
	err_spec("x@a:b(f.function == \"kfree\")..", 20,
		 "expected a symbol name or an address after '==' (unquoted)");
	err_spec("x@a:b(s == \"a\nb\")..", 13, "control byte 0x0a in string");
	{
		char spec[400] = "x@a:b(s == \"";

		memset(spec + 12, 'a', 256);
		strcpy(spec + 268, "\")..");
		err_spec(spec, 11, "string too long (over 255 bytes)");
	}
	{
		char spec[200] = "x@a:b(";

		memset(spec + 6, '(', 70);
		strcpy(spec + 76, "n == 1");
		err_spec(spec, 6 + FILTER_NEST_MAX,
			 "filter nested too deeply (over 64 levels of '(' and '!')");
	}
	/* A whole filter (--filter) ends at the end, not at ')'. */
	err_filter("", 0, "empty filter");
	err_filter("n == 1)", 6, "unexpected ')'");
	err_filter("(n == 1", 7, "missing ')'");
	err_filter("n == 1 m", 7, "expected '&&' or '||' in filter");
}

/* ---- printing ---------------------------------------------------------------------- */

static void test_round_trips(void)
{
	static const char *specs[] = {
		"(a,b)@!(x:y..z:w || !..p:q) && r:s(!(n & 0x10) || m ~ '*foo?')..",
		"x@(a:b.. && c:d..) && (e:f.. || g:h..) && !(..i:j && k:l..)",
		"x@a:b(((a == 1 || b == 2) && c == 3) || !(d == 4 && e == 5))..c:d(s ~ \"x\")",
		"x@ a:b( ! ! ( a==1 ) && ( b==2 && c==3 ) )..",
		"x@a:b(comm != bash && cpus & CPUS{0-3})..c:d(f.function == 0xffff)",
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		char first[1024], second[1024];
		struct range_spec *a = range_parse(specs[i], NULL), *b;

		if (!a) {
			bad++;
			continue;
		}
		range_spec_format(a, first, sizeof(first));
		b = range_parse(first, NULL);
		if (b)
			range_spec_format(b, second, sizeof(second));
		if (!b || strcmp(first, second) != 0 || a->nranges != b->nranges ||
		    a->ntriggers != b->ntriggers) {
			printf("# round trip of '%s' gave '%s'\n", specs[i], first);
			bad++;
		}
		range_spec_free(a);
		range_spec_free(b);
	}
	is_int(bad, 0, "canonical text parses back to the same tree (fixed point)");
}

static void test_format_contract(void)
{
	struct range_spec *spec = range_parse("(a,b)@c:d(n == 1)..e:f", NULL);
	char small[8];
	size_t n;

	n = range_spec_format(spec, small, sizeof(small));
	ok(n == 22 && strcmp(small, "(a,b)@c") == 0, "format: snprintf contract, truncated");
	ok(range_spec_format(spec, NULL, 0) == 22, "format: length with cap 0");
	n = range_gate_format(spec->gate, got, sizeof(got));
	ok(n == 16 && strcmp(got, "c:d(n == 1)..e:f") == 0, "format: a gate alone");
	memset(small, 'X', sizeof(small));
	n = range_gate_format(spec->gate, small, 6);
	ok(n == 16 && strcmp(small, "c:d(n") == 0 && small[6] == 'X',
	   "format: a filter truncated inside the gate stays in bounds");
	range_spec_free(spec);
}

static void test_error_format(void)
{
	const char *text = "cycles@irq:softirq_entry.irq:softirq_exit";
	struct pg_error err = { 0 };

	range_parse(text, &err);
	range_error_format(text, strlen(text), &err, got, sizeof(got));
	is_str(got, "cycles@irq:softirq_entry.irq:softirq_exit\n"
		    "                        ^ expected '..' after trigger",
	       "error format: caret under the byte");
	range_error_format_line(text, strlen(text), &err, got, sizeof(got));
	is_str(got, "expected '..' after trigger at byte 24: "
		    "cycles@irq:softirq_entry<HERE>.irq:softirq_exit",
	       "error format: one line for an err reply");
	text = "x@\ta:b(s == \"\xc3\xa9\") ..c";
	range_parse(text, &err);
	range_error_format(text, strlen(text), &err, got, sizeof(got));
	is_str(got, "x@ a:b(s == \"\xc3\xa9\") ..c\n"
		    "                   ^ expected tracepoint (subsys:name) after '..'",
	       "error format: tabs shown as spaces, UTF-8 as one column");
	text = "x@a:b(";
	range_parse(text, &err);
	range_error_format(text, strlen(text), &err, got, sizeof(got));
	is_str(got, "x@a:b(\n      ^ unterminated filter: missing ')'",
	       "error format: caret after the end for a missing token");
	pg_error_clear(&err);
}

/* A tracepoint name alone (-e): "ok", or "ERR offset: reason". */
static void tp_check(const char *text, const char *want)
{
	struct pg_error err = { 0 };
	char what[512];

	if (range_tracepoint_check(text, strlen(text), &err))
		snprintf(got, sizeof(got), "ok");
	else
		snprintf(got, sizeof(got), "ERR %zu: %s", err.offset, err.message);
	pg_error_clear(&err);
	name_of(what, sizeof(what), "tracepoint name: ", text);
	is_str(got, want, what);
}

static void test_tracepoint_check(void)
{
	tp_check("syscalls:sys_enter_write", "ok");
	tp_check("a:b", "ok");
	tp_check("syscalls:../../../../../tmp/X/tp",
		 "ERR 9: invalid character '.' in tracepoint name");
	tp_check("sys/calls:x", "ERR 3: invalid character '/' in tracepoint subsystem");
	tp_check("..:x", "ERR 0: invalid character '.' in tracepoint subsystem");
	tp_check("syscalls:sys_enter_write/id", "ERR 24: invalid character '/' in tracepoint name");
	tp_check("syscalls:sys_enter_write:u", "ERR 24: a tracepoint has exactly one ':' (subsys:name)");
	tp_check(":x", "ERR 0: expected a subsystem name before ':'");
	tp_check("syscalls:", "ERR 9: expected a tracepoint name after 'syscalls:'");
	tp_check("syscalls", "ERR 8: expected ':' in tracepoint 'syscalls' (subsys:name)");
	tp_check("a:b c", "ERR 3: invalid character byte 0x20 in tracepoint name");
	tp_check("a:b\x01", "ERR 3: invalid character byte 0x01 in tracepoint name");
	tp_check("a:\xc3\xa9", "ERR 2: invalid character byte 0xc3 in tracepoint name");
	errno = 0;
	ok(!range_tracepoint_check("a:/", 3, NULL) && errno == EINVAL,
	   "tracepoint name: err may be NULL, errno EINVAL");
	ok(range_tracepoint_check("a:bc/", 4, NULL), "tracepoint name: only text[0..len) is read");
}

/* Long input: a window around the caret, "..." at each cut end, the
 * caret under its byte, the reason whole; short input shown whole. */
static void test_error_window(void)
{
	static char text[12000];
	struct pg_error err = { .offset = 0, .message = (char []){ "why" } };
	size_t n, len;
	char *nl;

	/* 10000 'a', then "XY", then 1000 'b': the caret under 'X'. */
	memset(text, 'a', 10000);
	memcpy(text + 10000, "XY", 2);
	memset(text + 10002, 'b', 1000);
	len = 11002;
	err.offset = 10000;
	n = range_error_format(text, len, &err, got, sizeof(got));
	ok(n == strlen(got) && n < 2 * RANGE_CARET_WINDOW + 20,
	   "window: the message of an 11 KB spec is a window long");
	nl = strchr(got, '\n');
	ok(nl && strncmp(got, "...", 3) == 0 && strncmp(nl - 3, "...", 3) == 0,
	   "window: '...' at both cut ends");
	ok(nl && nl[1 + (strchr(got, 'X') - got)] == '^' && strcmp(strchr(nl, '^'), "^ why") == 0,
	   "window: the caret under the byte, then the reason");
	ok(nl && (size_t)(nl - got) <= RANGE_CARET_WINDOW + 6, "window: the shown line is short");
	/* Caret at the very end (a missing token): under the end, no trailing "...". */
	err.offset = len;
	range_error_format(text, len, &err, got, sizeof(got));
	nl = strchr(got, '\n');
	ok(nl && nl[-1] == 'b' && nl[1 + (nl - got)] == '^', "window: caret after the end of a long text");
	/* Caret at 0: no leading "...". */
	err.offset = 0;
	range_error_format(text, len, &err, got, sizeof(got));
	is_str(strchr(got, '\n') + 1, "^ why", "window: caret at the start of a long text");
	ok(got[0] == 'a', "window: no '...' before the start");
	/* UTF-8 before the caret counts one column each, even cut. */
	for (size_t i = 0; i < 3000; i += 2)
		memcpy(text + i, "\xc3\xa9", 2);
	memset(text + 3000, 'c', 200);
	text[3100] = 'X';
	err.offset = 3100;
	range_error_format(text, 3200, &err, got, sizeof(got));
	nl = strchr(got, '\n');
	ok(nl && strncmp(got, "...", 3) == 0 && (unsigned char)got[3] != 0xa9,
	   "window: never starts inside a UTF-8 sequence");
	{
		size_t col = 0;

		for (char *c = got; c < strchr(got, 'X'); c++)
			col += ((unsigned char)*c & 0xc0) != 0x80;
		ok(nl[1 + col] == '^', "window: caret column counts UTF-8 as one");
	}
	/* At RANGE_CARET_WIDTH columns the text is still shown whole. */
	memset(text, 'd', RANGE_CARET_WIDTH);
	err.offset = RANGE_CARET_WIDTH - 1;
	range_error_format(text, RANGE_CARET_WIDTH, &err, got, sizeof(got));
	ok(got[0] == 'd' && strchr(got, '\n') - got == RANGE_CARET_WIDTH,
	   "window: a text of RANGE_CARET_WIDTH columns is whole");
	/* range_caret_format: indented lines, no reason. */
	range_caret_format("ab", 2, 1, "  ", got, sizeof(got));
	is_str(got, "  ab\n   ^", "caret format: indent on both lines");
}

/* -C LIST: "lo-hi@offset ..." per item, or "ERR offset: reason". */
static void cpu_list(const char *text, const char *want)
{
	struct pg_error err = { 0 };
	struct cpu_list_item *items;
	size_t n, used = 0;
	char what[512];

	items = cpu_list_parse(text, strlen(text), &n, &err);
	got[0] = '\0';
	if (!items)
		snprintf(got, sizeof(got), "ERR %zu: %s", err.offset, err.message);
	pg_error_clear(&err);
	for (size_t i = 0; items && i < n; i++)
		used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%ld-%ld@%zu",
					 i ? " " : "", items[i].lo, items[i].hi, items[i].offset);
	free(items);
	name_of(what, sizeof(what), "cpu list: ", text);
	is_str(got, want, what);
}

static void test_cpu_list(void)
{
	cpu_list("0", "0-0@0");
	cpu_list("0,0", "0-0@0 0-0@2");		/* kept; the agent merges */
	cpu_list("0-3,6", "0-3@0 6-6@4");
	cpu_list("12,3-3", "12-12@0 3-3@3");
	cpu_list("2147483647", "2147483647-2147483647@0");
	cpu_list("", "ERR 0: expected a CPU number or range (0,2-3)");
	cpu_list("0,", "ERR 2: expected a CPU number or range (0,2-3)");
	cpu_list(",0", "ERR 0: expected a CPU number or range (0,2-3)");
	cpu_list("0,,1", "ERR 2: expected a CPU number or range (0,2-3)");
	cpu_list("-1", "ERR 0: expected a CPU number or range (0,2-3)");
	cpu_list("1-", "ERR 2: expected a CPU number after '-'");
	cpu_list("1-0", "ERR 2: range 1-0 goes backwards");
	cpu_list("0 ,1", "ERR 1: expected ',' between CPUs");
	cpu_list("0x1", "ERR 1: expected ',' between CPUs");
	cpu_list("1-2-3", "ERR 3: expected ',' between CPUs");
	cpu_list("0,2147483648", "ERR 2: CPU number too large (at most 2147483647)");
	cpu_list("0-99999999999999999999", "ERR 2: CPU number too large (at most 2147483647)");
	{
		size_t n = 7;

		errno = 0;
		ok(!cpu_list_parse("x", 1, &n, NULL) && errno == EINVAL && n == 0,
		   "cpu list: err may be NULL, errno EINVAL, n 0");
		free(cpu_list_parse("1,2x", 3, &n, NULL));
		ok(n == 2, "cpu list: only text[0..len) is read");
	}
}

int main(void)
{
	test_productions();
	test_whitespace();
	test_precedence();
	test_nesting();
	test_tree();
	test_spans();
	test_eval();
	test_filter_syntax();
	test_filter_tree();
	test_errors_events();
	test_errors_gate();
	test_errors_filter();
	test_round_trips();
	test_format_contract();
	test_error_format();
	test_tracepoint_check();
	test_error_window();
	test_cpu_list();
	return tap_done();
}
