/*
 * range_compile: a range set compiled into the BPF programs' tables; see
 * range_compile.h.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <event-parse.h>
#include <tracefs.h>

#include "agent/ranges/range_compile.h"
#include "agent/ranges/range_layout.h"

/* A set's leaves, numbered by the range set, index the programs' tables. */
_Static_assert(RB_LEAVES_MAX == RANGE_LEAVES_MAX, "one leaf limit for the set and its programs");

/* This architecture's syscall numbers, from <asm/unistd.h> at build time. */
static const struct syscall_entry {
	const char *name;
	int nr;
} syscall_table[] = {
#include "agent/ranges/syscall_table.h"
};

/*
 * The syscall number behind a "syscalls:sys_enter_NAME" or
 * "syscalls:sys_exit_NAME" event, or -1 (another tracepoint, or a syscall
 * this build's table does not know: it keeps a program of its own).
 */
static int syscall_of(const char *event, bool *is_exit)
{
	const char *name;

	if (strncmp(event, "syscalls:sys_enter_", 19) == 0) {
		name = event + 19;
		*is_exit = false;
	} else if (strncmp(event, "syscalls:sys_exit_", 18) == 0) {
		name = event + 18;
		*is_exit = true;
	} else {
		return -1;
	}
	for (size_t i = 0; i < sizeof(syscall_table) / sizeof(syscall_table[0]); i++)
		if (strcmp(syscall_table[i].name, name) == 0)
			return syscall_table[i].nr < RB_SYSCALLS_MAX ? syscall_table[i].nr : -1;
	return -1;
}

struct compiler {
	struct rb_config *cfg;
	__u32 nr_preds;
	char *why;
	size_t cap;
	range_format_reader *read_format;
	void *ctx;
};

static int refuse(struct compiler *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->cap, fmt, ap);
	va_end(ap);
	return -1;
}

static int emit(struct compiler *c, struct rb_op_code *ops, __u32 *nr, size_t max,
		enum rb_op op, unsigned arg)
{
	if (*nr >= max)
		return refuse(c, "a gate or filter longer than %zu operations", max);
	ops[(*nr)++] = (struct rb_op_code){ .op = (__u8)op, .arg = (__u8)arg };
	return 0;
}

static int emit_gate(struct compiler *c, const struct range_gate *g, unsigned base)
{
	struct rb_config *cfg = c->cfg;
	enum rb_op op = g->kind == RANGE_GATE_AND ? RB_OP_AND : RB_OP_OR;

	switch (g->kind) {
	case RANGE_GATE_RANGE:
		return emit(c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, RB_OP_PUSH,
			    base + (unsigned)g->index);
	case RANGE_GATE_NOT:
		if (emit_gate(c, g->children[0], base))
			return -1;
		return emit(c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, RB_OP_NOT, 0);
	default:
		for (size_t i = 0; i < g->nchildren; i++) {
			if (emit_gate(c, g->children[i], base))
				return -1;
			if (i && emit(c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, op, 0))
				return -1;
		}
		return 0;
	}
}

/* Where a trigger's predicates read: the tracepoint's format. */
struct format {
	struct tep_handle *tep;
	struct tep_event *event;
	char *text;
};

static int format_load(struct compiler *c, struct format *f, const char *subsys,
		       const char *name)
{
	int size = 0;

	f->tep = tep_alloc();
	f->text = c->read_format(subsys, name, &size, c->ctx);
	if (!f->tep || !f->text || size <= 0 ||
	    tep_parse_format(f->tep, &f->event, f->text, (unsigned long)size, subsys) != 0)
		return -1;
	return 0;
}

static void format_free(struct format *f)
{
	free(f->text);
	if (f->tep)
		tep_free(f->tep);
}

/* The kernel's forms of "~": abc, abc*, *abc, *abc*; anything else is a
 * full glob, which the programs do not evaluate. */
static int string_match(struct compiler *c, const char *value, enum filter_op op,
			struct rb_pred *p)
{
	size_t len = strlen(value);
	const char *s = value;

	p->match = RB_MATCH_FULL;
	if (op == FILTER_OP_GLOB) {
		bool front = len && value[len - 1] == '*', back = len && value[0] == '*';

		if (back) {
			s++;
			len--;
		}
		if (front && len) {
			len--;
		}
		if (memchr(s, '*', len) || memchr(s, '?', len) || memchr(s, '[', len) ||
		    memchr(s, '\\', len))
			return refuse(c, "the glob '%s' (only abc, abc*, *abc and *abc* are "
				      "evaluated in BPF)", value);
		p->match = front && back ? RB_MATCH_MIDDLE : front ? RB_MATCH_FRONT :
			   back ? RB_MATCH_END : RB_MATCH_FULL;
	}
	if (len >= RB_STR_MAX)
		return refuse(c, "a string of %zu bytes in a filter (at most %d)", len,
			      RB_STR_MAX - 1);
	memcpy(p->str, s, len);
	p->str_len = (__u8)len;
	p->cmp = op == FILTER_OP_NE ? RB_CMP_NE : RB_CMP_EQ;
	return 0;
}

static int compile_pred(struct compiler *c, const struct format *f,
			const struct filter_pred *fp, struct rb_pred *p)
{
	static const enum rb_cmp cmp_of[] = {
		[FILTER_OP_EQ] = RB_CMP_EQ, [FILTER_OP_NE] = RB_CMP_NE,
		[FILTER_OP_LT] = RB_CMP_LT, [FILTER_OP_LE] = RB_CMP_LE,
		[FILTER_OP_GT] = RB_CMP_GT, [FILTER_OP_GE] = RB_CMP_GE,
		[FILTER_OP_BAND] = RB_CMP_BAND,
	};
	struct tep_format_field *field = tep_find_any_field(f->event, fp->field);
	bool string;

	if (fp->suffix != FILTER_SUFFIX_NONE || fp->value_kind == FILTER_VALUE_CPUS)
		return refuse(c, "the filter on '%s' (.function, .ustring and CPUS{} are "
			      "evaluated by the kernel's filter only)", fp->field);
	if (!field && !strcasecmp(fp->field, "comm")) {
		p->kind = RB_FIELD_COMM;
		return string_match(c, fp->value, fp->op, p);
	}
	if (!field && (!strcasecmp(fp->field, "cpu") || !strcmp(fp->field, "common_cpu"))) {
		p->kind = RB_FIELD_CPU;
		p->size = 4;
		/* The kernel's generic cpu field is an int: "cpu > -1" holds,
		 * as in its filter and in filter_check's sign check. */
		p->is_signed = 1;
	} else if (!field) {
		return refuse(c, "field '%s' not found", fp->field);
	} else {
		string = (field->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) ||
			 ((field->flags & TEP_FIELD_IS_ARRAY) && strstr(field->type, "char"));
		p->offset = (__u16)field->offset;
		if (string) {
			p->kind = field->flags & TEP_FIELD_IS_DYNAMIC ? RB_FIELD_DATA_LOC :
				  RB_FIELD_ARRAY;
			p->size = (__u8)(field->size < RB_STR_MAX ? field->size : RB_STR_MAX);
			return string_match(c, fp->value, fp->op, p);
		}
		if (field->size != 1 && field->size != 2 && field->size != 4 && field->size != 8)
			return refuse(c, "field '%s' of %d bytes", fp->field, field->size);
		p->kind = RB_FIELD_NUMBER;
		p->size = (__u8)field->size;
		p->is_signed = (field->flags & TEP_FIELD_IS_SIGNED) != 0;
	}
	if (fp->value_kind != FILTER_VALUE_NUMBER)
		return refuse(c, "a non-numeric value for '%s'", fp->field);
	p->cmp = (__u8)cmp_of[fp->op];
	p->value = fp->number;
	return 0;
}

static int emit_filter(struct compiler *c, const struct format *f, const struct filter_node *n,
		       __u32 *nr_ops)
{
	struct rb_config *cfg = c->cfg;

	switch (n->kind) {
	case FILTER_PRED:
		if (c->nr_preds >= RB_PREDS_MAX)
			return refuse(c, "more than %d filter predicates", RB_PREDS_MAX);
		if (compile_pred(c, f, &n->pred, &cfg->preds[c->nr_preds]))
			return -1;
		c->nr_preds++;
		return emit(c, cfg->filter_ops, nr_ops, RB_FILTER_OPS_MAX, RB_OP_PUSH,
			    c->nr_preds - 1);
	case FILTER_NOT:
		if (emit_filter(c, f, n->children[0], nr_ops))
			return -1;
		return emit(c, cfg->filter_ops, nr_ops, RB_FILTER_OPS_MAX, RB_OP_NOT, 0);
	case FILTER_AND:
	case FILTER_OR:
		for (size_t i = 0; i < n->nchildren; i++) {
			if (emit_filter(c, f, n->children[i], nr_ops))
				return -1;
			if (i && emit(c, cfg->filter_ops, nr_ops, RB_FILTER_OPS_MAX,
				      n->kind == FILTER_AND ? RB_OP_AND : RB_OP_OR, 0))
				return -1;
		}
		return 0;
	}
	return 0;
}

/* A counted tracepoint is counted in BPF, hit by hit; any other counted
 * event by a per-CPU perf counter. */
bool range_compile_counted_in_bpf(const struct range_layout *layout, size_t m)
{
	return layout->members[m].counted && layout->defs[m - 1].is_tracepoint;
}

static int leaf_list(struct compiler *c, uint64_t mask, __u8 *list, __u8 *nr)
{
	for (unsigned i = 0; i < RB_LEAVES_MAX; i++) {
		if (!(mask & (1ull << i)))
			continue;
		if (*nr >= RB_TRIGGER_LEAVES)
			return refuse(c, "a trigger that starts or stops more than %d ranges",
				      RB_TRIGGER_LEAVES);
		list[(*nr)++] = (__u8)i;
	}
	return 0;
}

static bool same_trigger_tracepoint(const struct range_layout *layout, size_t a, size_t b)
{
	return layout->defs[a - 1].attr.type == layout->defs[b - 1].attr.type &&
	       layout->defs[a - 1].attr.config == layout->defs[b - 1].attr.config;
}

static bool is_trigger(const struct range_layout *layout, size_t m)
{
	return layout->members[m].starts || layout->members[m].stops;
}

/* Does a program go on member m's tracepoint? */
static bool needs_program(const struct range_layout *layout, size_t m)
{
	return is_trigger(layout, m) || range_compile_counted_in_bpf(layout, m);
}

static int compile_trigger(struct compiler *c, const struct range_layout *layout, size_t m,
			   struct rb_trigger *t, __u32 *nr_ops)
{
	const struct range_member *mem = &layout->members[m];
	const struct range_trigger *trig = layout->trigger_of[m - 1];
	struct format f = { 0 };
	int rc;

	if (leaf_list(c, mem->starts, t->starts, &t->nr_starts) ||
	    leaf_list(c, mem->stops, t->stops, &t->nr_stops))
		return -1;
	if (!trig || !trig->filter)
		return 0;
	if (format_load(c, &f, trig->subsys, trig->name)) {
		format_free(&f);
		return refuse(c, "cannot read the format of %s", trig->tracepoint);
	}
	t->first_filter_op = (__u16)*nr_ops;
	rc = emit_filter(c, &f, trig->filter, nr_ops);
	format_free(&f);
	t->nr_filter_ops = (__u16)(*nr_ops - t->first_filter_op);
	return rc;
}

/* A syscall tracepoint's hits come from the raw syscall programs. */
static void route_syscall(struct rb_config *cfg, const char *event, size_t first)
{
	bool is_exit;
	int nr = syscall_of(event, &is_exit);

	if (nr < 0 || first + 1 > 255)
		return;
	if (is_exit)
		cfg->syscall_exit[nr] = (__u8)(first + 1);
	else
		cfg->syscall_enter[nr] = (__u8)(first + 1);
}

bool range_compile_routed(const struct rb_config *cfg, const char *event, size_t first)
{
	bool is_exit;
	int nr = syscall_of(event, &is_exit);

	if (nr < 0)
		return false;
	return (is_exit ? cfg->syscall_exit[nr] : cfg->syscall_enter[nr]) == first + 1;
}

bool range_compile_any_routed(const __u8 *table)
{
	for (size_t i = 0; i < RB_SYSCALLS_MAX; i++)
		if (table[i])
			return true;
	return false;
}

/*
 * The set's triggers, a tracepoint's together (its filters in member
 * order), the first of each carrying the events counted at its hits;
 * first_of[m] is the index of member m's tracepoint's first trigger.
 */
static int compile_triggers(struct compiler *c, const struct range_layout *layout,
			    const int *event_of_member, size_t *first_of)
{
	struct rb_config *cfg = c->cfg;
	__u32 nr_ops = 0;
	size_t n = 0;

	for (size_t head = 1; head <= layout->nr_events; head++) {
		size_t first = n;

		if (!needs_program(layout, head) || first_of[head] != SIZE_MAX)
			continue;
		for (size_t m = head; m <= layout->nr_events; m++) {
			if (!needs_program(layout, m) || !same_trigger_tracepoint(layout, head, m))
				continue;
			first_of[m] = first;
			if (range_compile_counted_in_bpf(layout, m))
				cfg->triggers[first].count_events |= 1u << event_of_member[m];
			if (!is_trigger(layout, m) && n > first)
				continue;	/* counted only: the head carries it */
			if (n >= RB_TRIGGERS_MAX)
				return refuse(c, "more than %d triggers", RB_TRIGGERS_MAX);
			if (n - first >= RB_CHAIN_MAX)
				return refuse(c, "more than %d filters on %s", RB_CHAIN_MAX,
					      layout->defs[m - 1].name);
			if (compile_trigger(c, layout, m, &cfg->triggers[n++], &nr_ops))
				return -1;
		}
		cfg->triggers[first].nr_chain = (__u8)(n - first);
		route_syscall(cfg, layout->defs[head - 1].name, first);
	}
	return 0;
}

/* Number the counted members 0..n-1 (event_of_member[m], -1 if none). */
static size_t number_events(const struct range_layout *layout, int *event_of_member)
{
	size_t n = 0;

	for (size_t m = 0; m <= layout->nr_events; m++)
		event_of_member[m] = m && layout->members[m].counted ? (int)n++ : -1;
	return n;
}

int range_compile_with(const struct range_layout *layout, range_format_reader *read_format,
		       void *ctx, struct rb_config *cfg, int *event_of_member, size_t *first_of,
		       size_t *nr_events, char *why, size_t cap)
{
	struct compiler c = { cfg, 0, why, cap, read_format, ctx };

	for (size_t m = 0; m <= layout->nr_events; m++)
		first_of[m] = SIZE_MAX;

	memset(cfg, 0, sizeof(*cfg));
	*nr_events = number_events(layout, event_of_member);
	if (*nr_events > RB_EVENTS_MAX)
		return refuse(&c, "%zu counted events in one set (at most %d)", *nr_events,
			      RB_EVENTS_MAX);
	if (layout->nr_specs > RB_VIEWS_MAX)
		return refuse(&c, "%zu range specs in one set (at most %d)", layout->nr_specs,
			      RB_VIEWS_MAX);
	for (size_t i = 0; i < layout->nr_leaves; i++) {
		cfg->leaf_used |= 1ull << i;
		if (!layout->leaves[i].has_starter)
			cfg->no_starter |= 1ull << i;
	}
	cfg->nr_views = (__u32)layout->nr_specs;
	for (size_t s = 0; s < layout->nr_specs; s++) {
		const struct range_view_def *v = &layout->views[s];

		for (size_t e = 0; e < layout->specs[s]->nevents; e++)
			cfg->views[s].events |= 1u << event_of_member[layout->shown[s][e]];
		if (v->gate ? emit_gate(&c, v->gate, v->leaf_base) :
			      emit(&c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, RB_OP_TRUE, 0))
			return -1;
		if (emit(&c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, RB_OP_VIEW,
			 (unsigned)s))
			return -1;
	}
	return compile_triggers(&c, layout, event_of_member, first_of);
}

static char *tracefs_format(const char *subsys, const char *name, int *size, void *ctx)
{
	(void)ctx;
	return tracefs_event_file_read(NULL, subsys, name, "format", size);
}

int range_compile(const struct range_layout *layout, struct rb_config *cfg, int *event_of_member,
		  size_t *first_of, size_t *nr_events, char *why, size_t cap)
{
	return range_compile_with(layout, tracefs_format, NULL, cfg, event_of_member, first_of,
				  nr_events, why, cap);
}
