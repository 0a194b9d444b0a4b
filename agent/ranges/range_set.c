/*
 * range_set: compile range specs, open them, and read their views.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "agent/events/events.h"
#include "agent/events/filter_check.h"
#include "agent/base/log.h"
#include "agent/ranges/range_bpf.h"
#include "agent/ranges/range_set.h"

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

/* The member for def (+ filter), added when new; takes def and filter.
 * trigger: the range trigger it is for, or NULL (a counted event). */
static size_t member_for(struct range_set *rs, struct event_def *def, char *filter,
			 const struct range_trigger *trigger)
{
	bool samples = trigger != NULL;

	for (size_t i = 0; i < rs->layout.nr_events; i++) {
		if (same_event(&rs->layout.defs[i], rs->layout.defs[i].filter, def, filter)) {
			rs->layout.events[i].samples |= samples;
			if (!rs->layout.trigger_of[i])
				rs->layout.trigger_of[i] = trigger;
			events_def_free(def);
			free(filter);
			return i + 1;
		}
	}
	rs->layout.trigger_of = realloc(rs->layout.trigger_of, (rs->layout.nr_events + 1) * sizeof(*rs->layout.trigger_of));
	rs->layout.trigger_of[rs->layout.nr_events] = trigger;
	rs->layout.defs = realloc(rs->layout.defs, (rs->layout.nr_events + 1) * sizeof(*rs->layout.defs));
	rs->layout.events = realloc(rs->layout.events, (rs->layout.nr_events + 1) * sizeof(*rs->layout.events));
	rs->layout.members = realloc(rs->layout.members, (rs->layout.nr_events + 2) * sizeof(*rs->layout.members));
	def->filter = filter;
	rs->layout.defs[rs->layout.nr_events] = *def;
	rs->layout.events[rs->layout.nr_events] = (struct range_group_event){ .samples = samples };
	memset(&rs->layout.members[rs->layout.nr_events + 1], 0, sizeof(*rs->layout.members));
	return ++rs->layout.nr_events;
}

/* A trigger: its tracepoint resolved, its filter checked, its role set. */
static int compile_trigger(struct range_set *rs, const struct range_trigger *t,
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
	m = member_for(rs, &def, t->filter ? events_kernel_filter(t->filter) : NULL, t);
	if (t->role == RANGE_STARTER)
		rs->layout.members[m].starts |= 1ull << (leaf_base + t->range_index);
	else
		rs->layout.members[m].stops |= 1ull << (leaf_base + t->range_index);
	return 0;
}

static int compile_events(struct range_set *rs, size_t s, const struct range_spec *spec,
			  struct pg_error *err)
{
	rs->layout.shown[s] = calloc(spec->nevents ? spec->nevents : 1, sizeof(size_t));
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
		m = member_for(rs, &def, NULL, NULL);
		rs->layout.members[m].counted = true;
		rs->layout.shown[s][i] = m;
	}
	return 0;
}

static int compile_spec(struct range_set *rs, size_t s, struct pg_error *err)
{
	const struct range_spec *spec = rs->layout.specs[s];
	unsigned base = (unsigned)rs->layout.nr_leaves;

	if (rs->layout.nr_leaves + spec->nranges > RANGE_LEAVES_MAX) {
		pg_error_set(err, spec->at_offset, "too many ranges in one set (over 64)");
		return -1;
	}
	for (size_t i = 0; i < spec->nranges; i++) {
		rs->layout.leaves[base + i].has_starter = spec->ranges[i]->starter != NULL;
		rs->layout.leaves[base + i].has_stopper = spec->ranges[i]->stopper != NULL;
	}
	rs->layout.nr_leaves += spec->nranges;
	for (size_t i = 0; i < spec->ntriggers; i++)
		if (compile_trigger(rs, spec->triggers[i], base, err))
			return -1;
	rs->layout.views[s] = (struct range_view_def){ spec->gate, base };
	return compile_events(rs, s, spec, err);
}

/*
 * A sample at every thread's exit, a last snapshot of its counters before
 * they go away, so that what it counted after its last trigger or switch
 * goes to its own state and not to the root's.  Without sched tracepoints
 * the root takes those last few instructions instead.
 */
static void add_exit_sampler(struct range_set *rs)
{
	static const char exit_tp[] = "sched:sched_process_exit";
	struct event_def def;

	size_t m;

	if (events_resolve_name(exit_tp, strlen(exit_tp), &def, NULL) != 0) {
		events_def_free(&def);
		return;
	}
	m = member_for(rs, &def, NULL, NULL);
	rs->layout.events[m - 1].samples = true;
}

struct range_set *range_set_compile(struct range_spec **specs, size_t n, const char *name,
				    size_t *err_spec, struct pg_error *err)
{
	struct range_set *rs = calloc(1, sizeof(*rs));

	rs->layout.specs = specs;
	rs->layout.nr_specs = n;
	rs->name = name ? strdup(name) : NULL;
	rs->layout.views = calloc(n, sizeof(*rs->layout.views));
	rs->layout.shown = calloc(n, sizeof(*rs->layout.shown));
	rs->layout.members = calloc(1, sizeof(*rs->layout.members));	/* 0: the switch sampler */
	rs->layout.members[0].switches = true;
	add_exit_sampler(rs);
	for (size_t s = 0; s < n; s++) {
		if (compile_spec(rs, s, err)) {
			if (err_spec)
				*err_spec = s;
			rs->layout.specs = NULL;	/* still the caller's: it shows the error */
			range_set_free(rs);
			return NULL;
		}
	}
	for (size_t i = 0; i < rs->layout.nr_events; i++) {
		rs->layout.events[i].name = rs->layout.defs[i].name;
		rs->layout.events[i].attr = rs->layout.defs[i].attr;
		rs->layout.events[i].filter = rs->layout.defs[i].filter;
	}
	rs->interval_base = calloc(n * (rs->layout.nr_events + 1), sizeof(uint64_t));
	return rs;
}

static void on_ring_buffer(void *arg)
{
	range_set_drain(arg, RANGE_DRAIN_BACKGROUND);
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

static bool all_triggers_in_cpu_context(const struct range_set *rs)
{
	size_t n = 0;

	for (size_t s = 0; s < rs->layout.nr_specs; s++) {
		for (size_t i = 0; i < rs->layout.specs[s]->ntriggers; i++, n++)
			if (!trigger_in_cpu_context(rs->layout.specs[s]->triggers[i]))
				return false;
	}
	return n > 0;
}

/* The sample backend: perf groups sampling every trigger hit, records
 * walked by range_account. */
static int open_sample(struct range_set *rs, const struct range_set_target *target,
		       struct event_base *base)
{
	struct range_groups_params params = {
		.events = rs->layout.events, .nr_events = rs->layout.nr_events,
		.roots = target->roots, .nr_roots = target->nr_roots,
		.enable_on_exec = target->enable_on_exec && !target->cpu_wide,
		.pages = target->pages,
		.cpu_wide = target->cpu_wide, .cpu_list = target->cpu_list,
	};
	unsigned flags = target->cpu_wide ? RANGE_ACCOUNT_CPU_WIDE : 0;

	if (rs->layout.per_cpu)
		flags |= RANGE_ACCOUNT_CPU_SCOPE;
	rs->groups = range_groups_open(&params);
	if (!rs->groups)
		return -1;
	rs->acct = range_account_new(rs->layout.members, rs->layout.nr_events + 1, rs->layout.leaves, rs->layout.nr_leaves,
				     rs->layout.views, rs->layout.nr_specs, range_groups_nr_cpus(rs->groups),
				     flags);
	if (range_groups_watch(rs->groups, base, on_ring_buffer, rs)) {
		log_error("cannot watch the range's ring buffers");
		return -1;
	}
	return 0;
}

/*
 * BPF when it can, else samples: an explicit --range-backend bpf fails with
 * the reason; the default says once why it falls back.
 */
int range_set_open(struct range_set *rs, const struct range_set_target *target,
		   struct event_base *base, char *reason, size_t cap)
{
	static bool told;
	char why[512] = "";
	bool unfit;

	rs->layout.per_cpu = target->scope == RANGE_SCOPE_CPU ||
		      (target->scope == RANGE_SCOPE_AUTO && all_triggers_in_cpu_context(rs));
	if (target->backend == RANGE_BACKEND_SAMPLE)
		return open_sample(rs, target, base);
	rs->bpf = range_bpf_open(&rs->layout, target, &unfit, why, sizeof(why));
	if (rs->bpf)
		return 0;
	if (unfit && target->backend == RANGE_BACKEND_AUTO)
		return open_sample(rs, target, base);	/* no fault of the machine */
	if (target->backend == RANGE_BACKEND_BPF) {
		if (reason)
			snprintf(reason, cap, "%s", why);
		else
			log_error("ranges cannot be counted in BPF: %s", why);
		return -1;
	}
	if (!told)
		log_warn("ranges are counted from samples, not in BPF: %s", why);
	told = true;
	return open_sample(rs, target, base);
}

void range_set_free(struct range_set *rs)
{
	if (!rs)
		return;
	range_bpf_close(rs->bpf);
	range_groups_close(rs->groups);
	range_account_free(rs->acct);
	for (size_t i = 0; i < rs->layout.nr_events; i++)
		events_def_free(&rs->layout.defs[i]);
	for (size_t s = 0; s < rs->layout.nr_specs; s++) {
		if (rs->layout.specs)
			range_spec_free(rs->layout.specs[s]);
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
	if (rs->bpf && !rs->unloaded)
		range_bpf_refresh(rs->bpf);
	if (rs->groups)
		range_groups_drain(rs->groups, rs->acct, how);
}

void range_set_finish(struct range_set *rs)
{
	/* System-wide, the programs would go on counting other processes
	 * between the final report's readings: the counting stops here. */
	if (rs->bpf)
		range_bpf_unload(rs->bpf);
	if (rs->groups)
		range_groups_finish(rs->groups, rs->acct);
}

void range_set_unload(struct range_set *rs)
{
	range_set_finish(rs);
	range_groups_close(rs->groups);
	rs->groups = NULL;
	if (rs->bpf)
		range_bpf_unload(rs->bpf);
	rs->unloaded = true;
}

size_t range_set_find_counted(const struct range_set *rs, const struct event_def *def)
{
	for (size_t i = 0; i < rs->layout.nr_events; i++)
		if (rs->layout.members[i + 1].counted && same_event(&rs->layout.defs[i], rs->layout.defs[i].filter,
							     def, def->filter))
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
	if (rs->bpf && !rs->unloaded) {
		value->val = range_bpf_total(rs->bpf, member, &value->ena);
		value->run = value->ena;
	}
	if (rs->groups)
		range_groups_read_member(rs->groups, member, &value->val, &value->ena, &value->run);
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
	if (rs->bpf)
		return range_bpf_supported(rs->bpf, member);
	return rs->groups && range_groups_supported(rs->groups, member);
}

bool range_set_is_bpf(const struct range_set *rs)
{
	return rs->bpf != NULL;
}

uint64_t range_set_value(const struct range_set *rs, size_t spec, size_t e)
{
	if (rs->bpf)
		return range_bpf_value(rs->bpf, spec, rs->layout.shown[spec][e]);
	return rs->acct ? range_account_value(rs->acct, spec, rs->layout.shown[spec][e]) : 0;
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

bool range_set_per_cpu(const struct range_set *rs)
{
	return rs->layout.per_cpu;
}

uint64_t range_set_lost(const struct range_set *rs)
{
	if (rs->bpf)
		return range_bpf_missed(rs->bpf);
	return rs->acct ? range_account_lost(rs->acct) : 0;
}
