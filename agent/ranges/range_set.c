/*
 * range_set: compile range specs, open them, and read their views.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/events/events.h"
#include "agent/events/filter_check.h"
#include "agent/base/log.h"
#include "agent/ranges/range_bpf.h"
#include "agent/ranges/range_sample.h"
#include "agent/ranges/range_set.h"

struct range_set {
	char *name;			/* "range load" NAME; NULL for start-up specs */
	struct range_layout layout;	/* what the backend counts */
	/* What counts it (range_set_start picks it), and its object. */
	const struct range_backend_ops *backend;
	void *backend_obj;
	uint64_t *interval_base;	/* [spec][event] at the last interval line */
	bool unloaded;			/* "range unload": totals kept, counters closed */
};

static bool same_event(const struct event_def *a, const char *a_filter,
		       const struct event_def *b, const char *b_filter)
{
	if (a->attr.type != b->attr.type || a->attr.config != b->attr.config ||
	    a->attr.exclude_user != b->attr.exclude_user ||
	    a->attr.exclude_kernel != b->attr.exclude_kernel ||
	    a->attr.exclude_hv != b->attr.exclude_hv)
		return false;
	if (!a_filter || !b_filter)
		return !a_filter && !b_filter;
	return strcmp(a_filter, b_filter) == 0;
}

/* Room for one more member in every per-member array: 0, or -1. */
static int grow_members(struct range_layout *layout)
{
	size_t n = layout->nr_events + 1;
	const struct range_trigger **trigger_of;
	struct range_group_event *events;
	struct range_member *members;
	struct event_def *defs;

	trigger_of = realloc(layout->trigger_of, n * sizeof(*trigger_of));
	if (trigger_of)
		layout->trigger_of = trigger_of;
	defs = realloc(layout->defs, n * sizeof(*defs));
	if (defs)
		layout->defs = defs;
	events = realloc(layout->events, n * sizeof(*events));
	if (events)
		layout->events = events;
	members = realloc(layout->members, (n + 1) * sizeof(*members));
	if (members)
		layout->members = members;
	return trigger_of && defs && events && members ? 0 : -1;
}

/* The member for def (+ filter), added when new; takes def and filter.
 * trigger: the range trigger it is for, or NULL (a counted event).
 * 0 when out of memory. */
static size_t member_for(struct range_layout *layout, struct event_def *def, char *filter,
			 const struct range_trigger *trigger)
{
	bool samples = trigger != NULL;

	for (size_t i = 0; i < layout->nr_events; i++) {
		if (same_event(&layout->defs[i], layout->defs[i].filter, def, filter)) {
			layout->events[i].samples |= samples;
			if (!layout->trigger_of[i])
				layout->trigger_of[i] = trigger;
			events_def_free(def);
			free(filter);
			return i + 1;
		}
	}
	if (grow_members(layout)) {
		events_def_free(def);
		free(filter);
		return 0;
	}
	layout->trigger_of[layout->nr_events] = trigger;
	def->filter = filter;
	layout->defs[layout->nr_events] = *def;
	layout->events[layout->nr_events] = (struct range_group_event){ .samples = samples };
	memset(&layout->members[layout->nr_events + 1], 0, sizeof(*layout->members));
	return ++layout->nr_events;
}

/* A trigger: its tracepoint resolved, its filter checked, its role set. */
static int compile_trigger(struct range_layout *layout, const struct range_trigger *t,
			   unsigned leaf_base, struct pg_error *err)
{
	struct pg_error eerr = { 0 };
	struct event_def def;
	size_t m;

	if (events_resolve_name(t->tracepoint, strlen(t->tracepoint), &def, &eerr)) {
		events_def_free(&def);
		pg_error_move(err, &eerr, t->offset);	/* its offset in the spec */
		return -1;
	}
	if (t->filter && filter_check(t->subsys, t->name, t->filter, err)) {
		events_def_free(&def);
		return -1;
	}
	char *kernel_filter = t->filter ? events_kernel_filter(t->filter) : NULL;

	if (t->filter && !kernel_filter) {
		events_def_free(&def);
		pg_error_set(err, t->offset, "out of memory");
		return -1;
	}
	m = member_for(layout, &def, kernel_filter, t);
	if (!m) {
		pg_error_set(err, t->offset, "out of memory");
		return -1;
	}
	if (t->role == RANGE_STARTER)
		layout->members[m].starts |= 1ull << (leaf_base + t->range_index);
	else
		layout->members[m].stops |= 1ull << (leaf_base + t->range_index);
	return 0;
}

static int compile_events(struct range_layout *layout, size_t s, const struct range_spec *spec,
			  struct pg_error *err)
{
	layout->shown[s] = calloc(spec->nevents ? spec->nevents : 1, sizeof(size_t));
	if (!layout->shown[s]) {
		pg_error_set(err, 0, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < spec->nevents; i++) {
		const struct range_event *ev = &spec->events[i];
		struct pg_error eerr = { 0 };
		struct event_def def;
		size_t m;

		if (events_resolve_name(ev->name, strlen(ev->name), &def, &eerr)) {
			events_def_free(&def);
			pg_error_move(err, &eerr, ev->offset);	/* its offset in the spec */
			return -1;
		}
		m = member_for(layout, &def, NULL, NULL);
		if (!m) {
			pg_error_set(err, ev->offset, "out of memory");
			return -1;
		}
		layout->members[m].counted = true;
		layout->shown[s][i] = m;
	}
	return 0;
}

static int compile_spec(struct range_layout *layout, size_t s, struct pg_error *err)
{
	const struct range_spec *spec = layout->specs[s];
	unsigned base = (unsigned)layout->nr_leaves;

	if (layout->nr_leaves + spec->nranges > RANGE_LEAVES_MAX) {
		pg_error_set(err, spec->at_offset, "too many ranges in one set (over 64)");
		return -1;
	}
	for (size_t i = 0; i < spec->nranges; i++) {
		layout->leaves[base + i].has_starter = spec->ranges[i]->starter != NULL;
		layout->leaves[base + i].has_stopper = spec->ranges[i]->stopper != NULL;
	}
	layout->nr_leaves += spec->nranges;
	for (size_t i = 0; i < spec->ntriggers; i++)
		if (compile_trigger(layout, spec->triggers[i], base, err))
			return -1;
	layout->views[s] = (struct range_view_def){ spec->gate, base };
	return compile_events(layout, s, spec, err);
}

/*
 * A sample at every thread's exit, a last snapshot of its counters before
 * they go away, so that what it counted after its last trigger or switch
 * goes to its own state and not to the root's.  Without sched tracepoints
 * the root takes those last few instructions instead.  0, or -1 out of
 * memory.
 */
static int add_exit_sampler(struct range_layout *layout)
{
	static const char exit_tp[] = "sched:sched_process_exit";
	struct event_def def;
	bool out_of_memory;
	size_t m;

	if (events_resolve_name(exit_tp, strlen(exit_tp), &def, NULL) != 0) {
		/* Without the tracepoint the root takes them; only out of
		 * memory leaves no name. */
		out_of_memory = def.name == NULL;
		events_def_free(&def);
		return out_of_memory ? -1 : 0;
	}
	m = member_for(layout, &def, NULL, NULL);
	if (!m)
		return -1;
	layout->events[m - 1].samples = true;
	return 0;
}

/* A set that failed to compile on spec s: freed, its specs still the
 * caller's, who shows the error in specs[s]. */
static struct range_set *give_back(struct range_set *rs, size_t s, size_t *err_spec)
{
	if (err_spec)
		*err_spec = s;
	rs->layout.specs = NULL;
	range_set_free(rs);
	return NULL;
}

/* Out of memory while compiling: the error is about no spec in particular. */
static struct range_set *out_of_memory(struct range_set *rs, size_t *err_spec,
				       struct pg_error *err)
{
	pg_error_set(err, 0, "out of memory");
	return give_back(rs, 0, err_spec);
}

struct range_set *range_set_compile(struct range_spec **specs, size_t n, const char *name,
				    size_t *err_spec, struct pg_error *err)
{
	struct range_set *rs = calloc(1, sizeof(*rs));
	struct range_layout *layout;

	if (!rs) {
		if (err_spec)
			*err_spec = 0;
		pg_error_set(err, 0, "out of memory");
		return NULL;
	}
	layout = &rs->layout;
	layout->specs = specs;
	layout->nr_specs = n;
	rs->name = name ? strdup(name) : NULL;
	layout->views = calloc(n ? n : 1, sizeof(*layout->views));
	layout->shown = calloc(n ? n : 1, sizeof(*layout->shown));
	layout->members = calloc(1, sizeof(*layout->members));	/* 0: the switch sampler */
	if ((name && !rs->name) || !layout->views || !layout->shown || !layout->members)
		return out_of_memory(rs, err_spec, err);
	layout->members[0].switches = true;
	if (add_exit_sampler(layout))
		return out_of_memory(rs, err_spec, err);
	for (size_t s = 0; s < n; s++)
		if (compile_spec(layout, s, err))
			return give_back(rs, s, err_spec);
	for (size_t i = 0; i < layout->nr_events; i++) {
		layout->events[i].name = layout->defs[i].name;
		layout->events[i].attr = layout->defs[i].attr;
		layout->events[i].filter = layout->defs[i].filter;
	}
	rs->interval_base = calloc(n * (layout->nr_events + 1), sizeof(uint64_t));
	if (!rs->interval_base)
		return out_of_memory(rs, err_spec, err);
	return rs;
}

/* Triggers that fire in CPU context (interrupts, softirqs, timers) do not
 * belong to the thread they interrupt: their ranges are a CPU's. */
static bool trigger_in_cpu_context(const struct range_trigger *t)
{
	static const char *const cpu_context[] = { "irq", "irq_vectors", "timer", "napi" };

	for (size_t i = 0; i < sizeof(cpu_context) / sizeof(cpu_context[0]); i++)
		if (strcmp(t->subsys, cpu_context[i]) == 0)
			return true;
	return false;
}

static bool all_triggers_in_cpu_context(const struct range_layout *layout)
{
	size_t n = 0;

	for (size_t s = 0; s < layout->nr_specs; s++) {
		for (size_t i = 0; i < layout->specs[s]->ntriggers; i++, n++)
			if (!trigger_in_cpu_context(layout->specs[s]->triggers[i]))
				return false;
	}
	return n > 0;
}

/* Start the set on backend ops: 0, or -1 (why, if the backend says). */
static int start_on(struct range_set *rs, const struct range_backend_ops *ops,
		    const struct range_set_target *target, struct event_base *base, bool *unfit,
		    char *why, size_t cap)
{
	void *obj = ops->start(&rs->layout, target, base, unfit, why, cap);

	if (!obj)
		return -1;
	rs->backend = ops;
	rs->backend_obj = obj;
	return 0;
}

/*
 * BPF when it can, else samples: an explicit --range-backend bpf fails with
 * the reason; the default says once why it falls back (*told_fallback).
 */
int range_set_start(struct range_set *rs, const struct range_set_target *target,
		    struct event_base *base, bool *told_fallback, char *reason, size_t cap)
{
	char why[512] = "";
	bool unfit;

	rs->layout.per_cpu = target->scope == RANGE_SCOPE_CPU ||
		      (target->scope == RANGE_SCOPE_AUTO && all_triggers_in_cpu_context(&rs->layout));
	if (target->backend == RANGE_BACKEND_SAMPLE)
		return start_on(rs, &range_sample_backend, target, base, &unfit, why, sizeof(why));
	if (!start_on(rs, &range_bpf_backend, target, base, &unfit, why, sizeof(why)))
		return 0;
	if (unfit && target->backend == RANGE_BACKEND_AUTO)	/* no fault of the machine */
		return start_on(rs, &range_sample_backend, target, base, &unfit, why, sizeof(why));
	if (target->backend == RANGE_BACKEND_BPF) {
		if (reason)
			snprintf(reason, cap, "%s", why);
		else
			log_error("ranges cannot be counted in BPF: %s", why);
		return -1;
	}
	if (!*told_fallback)
		log_warn("ranges are counted from samples, not in BPF: %s", why);
	*told_fallback = true;
	return start_on(rs, &range_sample_backend, target, base, &unfit, why, sizeof(why));
}

void range_set_free(struct range_set *rs)
{
	if (!rs)
		return;
	if (rs->backend)
		rs->backend->free(rs->backend_obj);
	for (size_t i = 0; i < rs->layout.nr_events; i++)
		events_def_free(&rs->layout.defs[i]);
	for (size_t s = 0; s < rs->layout.nr_specs; s++) {
		if (rs->layout.specs)
			range_spec_free(rs->layout.specs[s]);
		if (rs->layout.shown)
			free(rs->layout.shown[s]);
	}
	free(rs->layout.specs);
	free(rs->layout.shown);
	free(rs->layout.views);
	free(rs->layout.defs);
	free(rs->layout.trigger_of);
	free(rs->layout.events);
	free(rs->layout.members);
	free(rs->interval_base);
	free(rs->name);
	free(rs);
}

void range_set_drain(struct range_set *rs, enum range_drain how)
{
	/* An unloaded set's values are final. */
	if (rs->backend && !rs->unloaded)
		rs->backend->drain(rs->backend_obj, how);
}

void range_set_finish(struct range_set *rs)
{
	/* System-wide, the programs would go on counting other processes
	 * between the final report's readings: the counting stops here. */
	if (rs->backend)
		rs->backend->finish(rs->backend_obj);
}

void range_set_unload(struct range_set *rs)
{
	range_set_finish(rs);
	if (rs->backend)
		rs->backend->release(rs->backend_obj);
	rs->unloaded = true;
}

size_t range_set_find_counted(const struct range_set *rs, const struct event_def *def)
{
	const struct range_layout *layout = &rs->layout;

	for (size_t i = 0; i < layout->nr_events; i++)
		if (layout->members[i + 1].counted &&
		    same_event(&layout->defs[i], layout->defs[i].filter, def, def->filter))
			return i + 1;
	return 0;
}

static bool member_supported(const struct range_set *rs, size_t member);

/* The counter_backing_ops of a plain counter the set backs. */
static bool backing_supported(const void *obj, size_t member)
{
	return member_supported(obj, member);
}

static void backing_read(void *obj, size_t member, struct counter_value *value)
{
	struct range_set *rs = obj;

	memset(value, 0, sizeof(*value));
	/* An unloaded set gave its counters back: its plain views read 0. */
	if (rs->backend && !rs->unloaded)
		rs->backend->read_member(rs->backend_obj, member, value);
}

static const struct counter_backing_ops backing_ops = {
	.supported = backing_supported,
	.read = backing_read,
};

void range_set_back_counter(struct range_set *rs, struct counter *c, size_t member)
{
	counter_back_with(c, &backing_ops, rs, member);
}

const char *range_set_name(const struct range_set *rs)
{
	return rs->name;
}

bool range_set_is_unloaded(const struct range_set *rs)
{
	return rs->unloaded;
}

size_t range_set_nr_specs(const struct range_set *rs)
{
	return rs->layout.nr_specs;
}

const char *range_set_spec_text(const struct range_set *rs, size_t spec)
{
	return rs->layout.specs[spec]->text;
}

uint64_t *range_set_interval_base(struct range_set *rs, size_t spec, size_t e)
{
	return &rs->interval_base[spec * (rs->layout.nr_events + 1) + e];
}

size_t range_set_nr_events(const struct range_set *rs, size_t spec)
{
	return rs->layout.specs[spec]->nevents;
}

const struct event_def *range_set_event(const struct range_set *rs, size_t spec, size_t e)
{
	return &rs->layout.defs[rs->layout.shown[spec][e] - 1];
}

bool range_set_supported(const struct range_set *rs, size_t spec, size_t e)
{
	size_t m = rs->layout.shown[spec][e];

	/* An unloaded set keeps what it counted; its groups are gone. */
	return rs->unloaded || member_supported(rs, m);
}

static bool member_supported(const struct range_set *rs, size_t member)
{
	return rs->backend && rs->backend->supported(rs->backend_obj, member);
}

bool range_set_is_bpf(const struct range_set *rs)
{
	return rs->backend && rs->backend->in_kernel;
}

uint64_t range_set_value(const struct range_set *rs, size_t spec, size_t e)
{
	if (!rs->backend)
		return 0;
	return rs->backend->value(rs->backend_obj, spec, rs->layout.shown[spec][e]);
}

const char *range_set_label(const struct range_set *rs, size_t spec)
{
	const struct range_spec *sp = rs->layout.specs[spec];

	if (rs->name)
		return rs->name;
	return sp->gate ? sp->text + sp->at_offset + 1 : "";
}

const char *range_set_event_name(const struct range_set *rs, size_t spec, size_t e)
{
	return rs->layout.specs[spec]->events[e].name;
}

uint64_t range_set_lost(const struct range_set *rs)
{
	return rs->backend ? rs->backend->lost(rs->backend_obj) : 0;
}
