/*
 * range_registry: start-up and run-time range sets of a run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perf/threadmap.h>

#include "agent/base/log.h"
#include "agent/base/options.h"
#include "agent/count/counter.h"
#include "agent/count/target.h"
#include "agent/ranges/range_registry.h"
#include "agent/ranges/range_set.h"

struct range_registry {
	const struct options *opts;
	struct range_spec **startup_specs;	/* -e ranges, until their set owns them */
	size_t nr_startup_specs;
	struct range_set **sets;	/* start-up set first, then "range load"s */
	size_t nr_sets;
	bool told_here;			/* told_fallback when the caller keeps none */
	bool *told_fallback;		/* a set fell back to samples, and said why */
};

struct range_registry *range_registry_new(const struct options *opts, bool *told_fallback)
{
	struct range_registry *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	reg->opts = opts;
	reg->told_fallback = told_fallback ? told_fallback : &reg->told_here;
	return reg;
}

size_t range_registry_nr_sets(const struct range_registry *reg)
{
	return reg->nr_sets;
}

struct range_set *range_registry_set(const struct range_registry *reg, size_t i)
{
	return reg->sets[i];
}

bool range_registry_has_startup_specs(const struct range_registry *reg)
{
	return reg->nr_startup_specs > 0;
}

bool range_registry_is_spec(const struct event_spec *spec)
{
	return strchr(spec->name, '@') != NULL;
}

static void print_spec_error(const char *text, const struct pg_error *err)
{
	size_t n = range_error_format(text, strlen(text), err, NULL, 0);
	char *buf = malloc(n + 1);

	if (!buf) {
		log_error("bad range spec: %s at byte %zu", err->message, err->offset);
		return;
	}
	range_error_format(text, strlen(text), err, buf, n + 1);
	log_error("bad range spec:\n%s", buf);
	free(buf);
}

int range_registry_parse(struct range_registry *reg)
{
	const struct options *opts = reg->opts;

	for (size_t i = 0; i < opts->nr_events; i++) {
		const struct event_spec *e = &opts->events[i];
		struct pg_error rerr = { 0 };
		struct range_spec *spec, **grown;

		if (!range_registry_is_spec(e))
			continue;
		if (e->filter) {
			log_error("--filter applies to a tracepoint, not to the range spec '%s' "
				  "(put the filter in parentheses after a trigger)", e->name);
			return -1;
		}
		spec = range_parse(e->name, &rerr);
		if (!spec) {
			print_spec_error(e->name, &rerr);
			pg_error_clear(&rerr);
			return -1;
		}
		grown = realloc(reg->startup_specs,
				(reg->nr_startup_specs + 1) * sizeof(*reg->startup_specs));
		if (!grown) {
			range_spec_free(spec);
			log_error("out of memory");
			return -1;
		}
		reg->startup_specs = grown;
		reg->startup_specs[reg->nr_startup_specs++] = spec;
	}
	return 0;
}

static int add_set(struct range_registry *reg, struct range_set *rs)
{
	struct range_set **grown = realloc(reg->sets, (reg->nr_sets + 1) * sizeof(*reg->sets));

	if (!grown)
		return -1;
	reg->sets = grown;
	reg->sets[reg->nr_sets++] = rs;
	return 0;
}

/* The threads ranges are opened on at start-up: the workload, or -p/-t. */
static int startup_roots(const struct options *opts, pid_t workload, pid_t **roots,
			 size_t *nr)
{
	struct counter_target target;
	int n;

	if (target_build(&target, opts, workload))
		return -1;
	n = perf_thread_map__nr(target.threads);
	*roots = calloc(n ? (size_t)n : 1, sizeof(pid_t));
	if (!*roots) {
		target_free(&target);
		log_error("out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++)
		(*roots)[i] = perf_thread_map__pid(target.threads, i);
	*nr = (size_t)n;
	target_free(&target);
	return 0;
}

static bool cpu_wide(const struct options *opts)
{
	return opts->system_wide || opts->cpu_list;
}

/* The target of a set: the session's CPUs (-a, -C) or the given threads. */
static struct range_set_target target_of(const struct options *opts, const pid_t *roots,
					 size_t nr_roots, bool at_exec)
{
	return (struct range_set_target){
		.roots = roots, .nr_roots = nr_roots, .enable_on_exec = at_exec,
		.cpu_wide = cpu_wide(opts), .cpu_list = opts->cpu_list,
		.scope = (enum range_scope)opts->range_scope,
		.pages = opts->mmap_pages,
		.backend = (enum range_backend)opts->range_backend,
	};
}

static void back_plain_counters(const struct options *opts, struct counter *counters,
				size_t nr_counters, struct range_set *rs)
{
	for (size_t i = 0; i < nr_counters; i++) {
		size_t m;

		/* A group is read as one; a tool event has no counter.  Under
		 * -A and --per-* a plain event keeps a counter of its own, as
		 * range sets keep no per-CPU values. */
		if (counters[i].def.in_group || counters[i].def.tool != EVENT_TOOL_NONE ||
		    opts->aggr_mode != AGGR_GLOBAL)
			continue;
		m = range_set_find_counted(rs, &counters[i].def);

		if (m)
			range_set_back_counter(rs, &counters[i], m);
	}
}

int range_registry_start(struct range_registry *reg, struct counter *counters,
			 size_t nr_counters, pid_t workload, struct event_base *base)
{
	const struct options *opts = reg->opts;
	struct pg_error err = { 0 };
	size_t bad_spec = 0;
	struct range_set_target target;
	struct range_set *rs;
	pid_t *roots = NULL;
	size_t nr_roots = 0;
	int rc;

	if (!reg->nr_startup_specs)
		return 0;
	rs = range_set_compile(reg->startup_specs, reg->nr_startup_specs, NULL, &bad_spec, &err);
	if (!rs) {
		print_spec_error(reg->startup_specs[bad_spec]->text, &err);
		pg_error_clear(&err);
		return -1;
	}
	reg->startup_specs = NULL;		/* the set owns them now */
	reg->nr_startup_specs = 0;
	if (add_set(reg, rs)) {
		range_set_free(rs);
		log_error("out of memory");
		return -1;
	}
	if (!cpu_wide(opts) && startup_roots(opts, workload, &roots, &nr_roots))
		return -1;
	/* Ranges are not gated by the default window: with a workload they
	 * count from its exec, whatever -D says. */
	target = target_of(opts, roots, nr_roots, workload > 0);
	/* -p: threads made while the set opens are found by walking again. */
	target.trees = opts->pid_list != NULL;
	target.tree_roots = roots;
	target.nr_tree_roots = nr_roots;
	rc = range_set_start(rs, &target, base, reg->told_fallback, NULL, 0);
	free(roots);
	if (rc)
		return -1;
	back_plain_counters(opts, counters, nr_counters, rs);
	return 0;
}

/* ---- run time ------------------------------------------------------------ */

/* What a range loaded now must cover: every thread of the workload's
 * tree, or of the -p processes' trees (trees gets those processes), or
 * the -t threads.  0, or -ENOMEM. */
static int runtime_roots(const struct options *opts, pid_t workload, struct tid_list *list,
			 struct tid_list *trees)
{
	pid_t *startup = NULL;
	size_t nr = 0;
	int rc = 0;

	if (workload > 0)
		return target_process_tree(list, workload) ?: tid_list_add(trees, workload);
	if (startup_roots(opts, workload, &startup, &nr) == 0) {
		for (size_t i = 0; i < nr && rc == 0; i++) {
			if (opts->pid_list)
				rc = target_process_tree(list, startup[i]) ?:
				     tid_list_add(trees, startup[i]);
			else
				rc = tid_list_add(list, startup[i]);
		}
	}
	free(startup);
	return rc;
}

/*
 * A loaded range set holds about ten fds per CPU and, with the sample
 * backend, -m pages of ring buffer per CPU (8 MiB on two CPUs at the
 * default -m): a client must not load without bound.  An unloaded set
 * gives those back but keeps its totals (and its name) for the report,
 * so sets over the whole run are bounded too.
 */
#define RANGE_SETS_LOADED_MAX 16
#define RANGE_SETS_RUN_MAX 256

static size_t loaded_sets(const struct range_registry *reg)
{
	size_t n = 0;

	for (size_t i = 0; i < reg->nr_sets; i++)
		n += range_set_name(reg->sets[i]) && !range_set_is_unloaded(reg->sets[i]);
	return n;
}

static struct range_set *find_set(const struct range_registry *reg, const char *name)
{
	for (size_t i = 0; i < reg->nr_sets; i++)
		if (range_set_name(reg->sets[i]) && !strcmp(range_set_name(reg->sets[i]), name))
			return reg->sets[i];
	return NULL;
}

/* The error as an "err" reply's text, err cleared; returns -1. */
static int compile_error(const char *text, struct pg_error *err, char *reason, size_t cap)
{
	range_error_format_line(text, strlen(text), err, reason, cap);
	pg_error_clear(err);
	return -1;
}

/* Why a "range load" cannot be taken now, in reason; 0 when it can. */
static int refuse_load(const struct range_registry *reg, const char *name, char *reason,
		       size_t cap)
{
	const struct range_set *same = find_set(reg, name);

	if (same)
		return snprintf(reason, cap, range_set_is_unloaded(same) ?
				"range '%s' was unloaded; its totals keep the name (choose another)" :
				"range '%s' is already loaded", name), -1;
	if (loaded_sets(reg) >= RANGE_SETS_LOADED_MAX)
		return snprintf(reason, cap, "too many loaded range sets (at most %d; "
				"unload one first)", RANGE_SETS_LOADED_MAX), -1;
	if (reg->nr_sets >= RANGE_SETS_RUN_MAX)
		return snprintf(reason, cap, "too many range sets in a run (at most %d, "
				"unloaded ones included)", RANGE_SETS_RUN_MAX), -1;
	return 0;
}

/* Compile the one spec of a "range load" into a set named name. */
static struct range_set *compile_loaded(const char *name, const char *text, char *reason,
					size_t cap)
{
	struct pg_error err = { 0 };
	struct range_spec **specs = calloc(1, sizeof(*specs));
	struct range_set *rs;

	if (!specs)
		return snprintf(reason, cap, "out of memory"), NULL;
	specs[0] = range_parse(text, &err);
	if (!specs[0]) {
		free(specs);
		compile_error(text, &err, reason, cap);
		return NULL;
	}
	rs = range_set_compile(specs, 1, name, NULL, &err);
	if (!rs) {
		range_spec_free(specs[0]);
		free(specs);
		compile_error(text, &err, reason, cap);
	}
	return rs;
}

/* Start a loaded set on every thread the target has now. */
static int start_loaded(struct range_registry *reg, pid_t workload,
			struct event_base *base, struct range_set *rs, char *why, size_t cap)
{
	const struct options *opts = reg->opts;
	struct tid_list roots = { 0 }, trees = { 0 };
	struct range_set_target target;
	int rc;

	if (!cpu_wide(opts) && runtime_roots(opts, workload, &roots, &trees)) {
		free(roots.tids);
		free(trees.tids);
		return snprintf(why, cap, "out of memory"), -1;
	}
	target = target_of(opts, roots.tids, roots.nr, false);
	target.trees = trees.nr > 0;
	target.tree_roots = trees.tids;
	target.nr_tree_roots = trees.nr;
	rc = -1;
	if (cpu_wide(opts) || roots.nr)
		rc = range_set_start(rs, &target, base, reg->told_fallback, why, cap);
	free(roots.tids);
	free(trees.tids);
	return rc;
}

int range_registry_load(struct range_registry *reg, pid_t workload, struct event_base *base,
			const char *name, const char *text, char *reason, size_t cap)
{
	char why[512];
	struct range_set *rs;

	if (refuse_load(reg, name, reason, cap))
		return -1;
	rs = compile_loaded(name, text, reason, cap);
	if (!rs)
		return -1;
	why[0] = 0;
	if (start_loaded(reg, workload, base, rs, why, sizeof(why))) {
		range_set_free(rs);
		if (why[0])
			return snprintf(reason, cap, "cannot open range '%s': %s", name, why), -1;
		return snprintf(reason, cap, "cannot open range '%s' (see the agent's log)", name), -1;
	}
	if (add_set(reg, rs)) {
		range_set_free(rs);
		return snprintf(reason, cap, "out of memory"), -1;
	}
	return 0;
}

int range_registry_unload(struct range_registry *reg, const char *name, char *reason,
			  size_t cap)
{
	struct range_set *rs = find_set(reg, name);

	if (!rs || range_set_is_unloaded(rs)) {
		snprintf(reason, cap, "range '%s' is not loaded", name);
		return -1;
	}
	range_set_unload(rs);
	return 0;
}

void range_registry_drain(struct range_registry *reg)
{
	/* Called when someone waits for numbers: a report, a window's end. */
	for (size_t i = 0; i < reg->nr_sets; i++)
		range_set_drain(reg->sets[i], RANGE_DRAIN_COMMAND);
}

void range_registry_finish(struct range_registry *reg)
{
	for (size_t i = 0; i < reg->nr_sets; i++)
		range_set_finish(reg->sets[i]);
}

uint64_t *range_registry_values(const struct range_registry *reg, size_t *n)
{
	uint64_t *values = NULL;
	size_t total = 0;

	*n = 0;
	for (size_t i = 0; i < reg->nr_sets; i++)
		for (size_t sp = 0; sp < range_set_nr_specs(reg->sets[i]); sp++)
			total += range_set_nr_events(reg->sets[i], sp);
	errno = 0;
	if (!total)
		return NULL;
	values = calloc(total, sizeof(*values));
	if (!values)
		return NULL;	/* errno ENOMEM */
	for (size_t i = 0; i < reg->nr_sets; i++) {
		const struct range_set *rs = reg->sets[i];

		for (size_t sp = 0; sp < range_set_nr_specs(rs); sp++)
			for (size_t e = 0; e < range_set_nr_events(rs, sp); e++)
				values[(*n)++] = range_set_value(rs, sp, e);
	}
	return values;
}

void range_registry_warn_lost(const struct range_registry *reg)
{
	unsigned long long lost = 0, missed = 0;

	for (size_t i = 0; i < reg->nr_sets; i++) {
		if (range_set_is_bpf(reg->sets[i]))
			missed += range_set_lost(reg->sets[i]);
		else
			lost += range_set_lost(reg->sets[i]);
	}
	if (lost)
		log_warn("%llu ring-buffer records were lost: range views are marked incomplete "
			 "(a larger -m keeps more)", lost);
	if (missed)
		log_warn("%llu trigger hits or context switches could not be accounted in BPF: "
			 "range views are marked incomplete", missed);
}

void range_registry_free(struct range_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->nr_sets; i++)
		range_set_free(reg->sets[i]);
	free(reg->sets);
	for (size_t i = 0; i < reg->nr_startup_specs; i++)
		range_spec_free(reg->startup_specs[i]);
	free(reg->startup_specs);
	free(reg);
}
