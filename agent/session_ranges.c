/*
 * session_ranges: start-up and run-time range sets of a session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perf/threadmap.h>

#include "agent/base/log.h"
#include "agent/ranges/range_set.h"
#include "agent/session.h"
#include "agent/session_ranges.h"
#include "agent/count/target.h"

bool session_ranges_is_spec(const struct event_spec *spec)
{
	return strchr(spec->name, '@') != NULL;
}

static void print_spec_error(const char *text, size_t offset, const char *reason)
{
	struct range_error rerr = { .offset = offset };
	size_t n;
	char *buf;

	snprintf(rerr.reason, sizeof(rerr.reason), "%.127s", reason);
	n = range_error_format(text, strlen(text), &rerr, NULL, 0);
	buf = malloc(n + 1);
	if (!buf) {
		log_error("bad range spec: %s at byte %zu", rerr.reason, offset);
		return;
	}
	range_error_format(text, strlen(text), &rerr, buf, n + 1);
	log_error("bad range spec:\n%s", buf);
	free(buf);
}

int session_ranges_parse(struct session *s)
{
	const struct options *opts = s->opts;

	for (size_t i = 0; i < opts->nr_events; i++) {
		const struct event_spec *e = &opts->events[i];
		struct range_error rerr = { 0 };
		struct range_spec *spec;

		if (!session_ranges_is_spec(e))
			continue;
		if (e->filter) {
			log_error("--filter applies to a tracepoint, not to the range spec '%s' "
				  "(put the filter in parentheses after a trigger)", e->name);
			return -1;
		}
		spec = range_parse(e->name, &rerr);
		if (!spec) {
			print_spec_error(e->name, rerr.offset, rerr.reason);
			return -1;
		}
		s->startup_specs = realloc(s->startup_specs,
					   (s->nr_startup_specs + 1) * sizeof(*s->startup_specs));
		s->startup_specs[s->nr_startup_specs++] = spec;
	}
	return 0;
}

static void add_set(struct session *s, struct range_set *rs)
{
	s->range_sets = realloc(s->range_sets, (s->nr_range_sets + 1) * sizeof(*s->range_sets));
	s->range_sets[s->nr_range_sets++] = rs;
}

/* The threads ranges are opened on at start-up: the workload, or -p/-t. */
static int startup_roots(struct session *s, pid_t **roots, size_t *nr)
{
	struct counter_target target;
	int n;

	if (target_build(&target, s->opts, s->has_workload ? s->workload.pid : -1))
		return -1;
	n = perf_thread_map__nr(target.threads);
	*roots = calloc((size_t)n, sizeof(pid_t));
	for (int i = 0; i < n; i++)
		(*roots)[i] = perf_thread_map__pid(target.threads, i);
	*nr = (size_t)n;
	target_free(&target);
	return 0;
}

static bool cpu_wide(const struct session *s)
{
	return s->opts->system_wide || s->opts->cpu_list;
}

/* The target of a set: the session's CPUs (-a, -C) or the given threads. */
static struct range_set_target target_of(const struct session *s, const pid_t *roots,
					 size_t nr_roots, bool at_exec)
{
	return (struct range_set_target){
		.roots = roots, .nr_roots = nr_roots, .enable_on_exec = at_exec,
		.cpu_wide = cpu_wide(s), .cpu_list = s->opts->cpu_list,
		.scope = (enum range_scope)s->opts->range_scope,
		.pages = s->opts->mmap_pages,
		.backend = (enum range_backend)s->opts->range_backend,
	};
}

static void back_plain_counters(struct session *s, struct range_set *rs)
{
	for (size_t i = 0; i < s->nr_counters; i++) {
		size_t m;

		/* A group is read as one; a tool event has no counter.  Under
		 * -A and --per-* a plain event keeps a counter of its own, as
		 * range sets keep no per-CPU values. */
		if (s->counters[i].def.in_group || s->counters[i].def.tool != EVENT_TOOL_NONE ||
		    s->opts->aggr_mode != AGGR_GLOBAL)
			continue;
		m = range_set_find_counted(rs, &s->counters[i].def);

		if (m)
			counter_back_with_range(&s->counters[i], rs, m);
	}
}

int session_ranges_open(struct session *s)
{
	struct range_set_error err = { 0 };
	struct range_set_target target;
	struct range_set *rs;
	pid_t *roots = NULL;
	size_t nr_roots = 0;
	int rc;

	if (!s->nr_startup_specs)
		return 0;
	rs = range_set_compile(s->startup_specs, s->nr_startup_specs, NULL, &err);
	if (!rs) {
		print_spec_error(s->startup_specs[err.spec]->text, err.offset, err.reason);
		return -1;
	}
	s->startup_specs = NULL;		/* the set owns them now */
	s->nr_startup_specs = 0;
	add_set(s, rs);
	if (!cpu_wide(s) && startup_roots(s, &roots, &nr_roots))
		return -1;
	/* Ranges are not gated by the default window: with a workload they
	 * count from its exec, whatever -D says. */
	target = target_of(s, roots, nr_roots, s->has_workload);
	/* -p: threads made while the set opens are found by walking again. */
	target.trees = s->opts->pid_list != NULL;
	target.tree_roots = roots;
	target.nr_tree_roots = nr_roots;
	rc = range_set_open(rs, &target, s->base, NULL, 0);
	free(roots);
	if (rc)
		return -1;
	back_plain_counters(s, rs);
	return 0;
}

/* ---- run time ------------------------------------------------------------ */

/* What a range loaded now must cover: every thread of the workload's
 * tree, or of the -p processes' trees (trees gets those processes), or
 * the -t threads. */
static void runtime_roots(struct session *s, struct tid_list *list, struct tid_list *trees)
{
	pid_t *startup = NULL;
	size_t nr = 0;

	if (s->has_workload) {
		target_process_tree(list, s->workload.pid);
		tid_list_add(trees, s->workload.pid);
		return;
	}
	if (startup_roots(s, &startup, &nr) == 0) {
		for (size_t i = 0; i < nr; i++) {
			if (s->opts->pid_list) {
				target_process_tree(list, startup[i]);
				tid_list_add(trees, startup[i]);
			} else {
				tid_list_add(list, startup[i]);
			}
		}
	}
	free(startup);
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

static size_t loaded_sets(const struct session *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_range_sets; i++)
		n += s->range_sets[i]->name && !s->range_sets[i]->unloaded;
	return n;
}

static struct range_set *find_set(struct session *s, const char *name)
{
	for (size_t i = 0; i < s->nr_range_sets; i++)
		if (s->range_sets[i]->name && !strcmp(s->range_sets[i]->name, name))
			return s->range_sets[i];
	return NULL;
}

static int compile_error(const char *text, size_t offset, const char *why, char *reason,
			 size_t cap)
{
	struct range_error rerr = { .offset = offset };

	snprintf(rerr.reason, sizeof(rerr.reason), "%.127s", why);
	range_error_format_line(text, strlen(text), &rerr, reason, cap);
	return -1;
}

int session_ranges_load(struct session *s, const char *name, const char *text,
			char *reason, size_t cap)
{
	struct range_set_error err = { 0 };
	struct range_error rerr = { 0 };
	struct range_spec **specs;
	struct tid_list roots = { 0 }, trees = { 0 };
	struct range_set_target target;
	char why[512];
	struct range_set *rs;
	int rc;

	if (find_set(s, name))
		return snprintf(reason, cap, find_set(s, name)->unloaded ?
				"range '%s' was unloaded; its totals keep the name (choose another)" :
				"range '%s' is already loaded", name), -1;
	if (loaded_sets(s) >= RANGE_SETS_LOADED_MAX)
		return snprintf(reason, cap, "too many loaded range sets (at most %d; "
				"unload one first)", RANGE_SETS_LOADED_MAX), -1;
	if (s->nr_range_sets >= RANGE_SETS_RUN_MAX)
		return snprintf(reason, cap, "too many range sets in a run (at most %d, "
				"unloaded ones included)", RANGE_SETS_RUN_MAX), -1;
	specs = calloc(1, sizeof(*specs));
	specs[0] = range_parse(text, &rerr);
	if (!specs[0]) {
		free(specs);
		return compile_error(text, rerr.offset, rerr.reason, reason, cap);
	}
	rs = range_set_compile(specs, 1, name, &err);
	if (!rs) {
		range_spec_free(specs[0]);
		free(specs);
		return compile_error(text, err.offset, err.reason, reason, cap);
	}
	if (!cpu_wide(s))
		runtime_roots(s, &roots, &trees);
	target = target_of(s, roots.tids, roots.nr, false);
	target.trees = trees.nr > 0;
	target.tree_roots = trees.tids;
	target.nr_tree_roots = trees.nr;
	why[0] = 0;
	rc = cpu_wide(s) || roots.nr ? range_set_open(rs, &target, s->base, why, sizeof(why)) : -1;
	free(roots.tids);
	free(trees.tids);
	if (rc) {
		range_set_free(rs);
		if (why[0])
			return snprintf(reason, cap, "cannot open range '%s': %s", name, why), -1;
		return snprintf(reason, cap, "cannot open range '%s' (see the agent's log)", name), -1;
	}
	add_set(s, rs);
	return 0;
}

int session_ranges_unload(struct session *s, const char *name, char *reason, size_t cap)
{
	struct range_set *rs = find_set(s, name);

	if (!rs || rs->unloaded) {
		snprintf(reason, cap, "range '%s' is not loaded", name);
		return -1;
	}
	range_set_unload(rs);
	return 0;
}

void session_ranges_drain(struct session *s)
{
	/* Called when someone waits for numbers: a report, a window's end. */
	for (size_t i = 0; i < s->nr_range_sets; i++)
		range_set_drain(s->range_sets[i], RANGE_DRAIN_COMMAND);
}

void session_ranges_finish(struct session *s)
{
	for (size_t i = 0; i < s->nr_range_sets; i++)
		range_set_finish(s->range_sets[i]);
}

uint64_t *session_ranges_values(const struct session *s, size_t *n)
{
	uint64_t *values = NULL;

	*n = 0;
	for (size_t i = 0; i < s->nr_range_sets; i++) {
		const struct range_set *rs = s->range_sets[i];

		for (size_t sp = 0; sp < rs->nr_specs; sp++) {
			for (size_t e = 0; e < range_set_nr_events(rs, sp); e++) {
				values = realloc(values, (*n + 1) * sizeof(*values));
				values[(*n)++] = range_set_value(rs, sp, e);
			}
		}
	}
	return values;
}

void session_ranges_warn_lost(const struct session *s)
{
	unsigned long long lost = 0, missed = 0;

	for (size_t i = 0; i < s->nr_range_sets; i++) {
		if (range_set_is_bpf(s->range_sets[i]))
			missed += range_set_lost(s->range_sets[i]);
		else
			lost += range_set_lost(s->range_sets[i]);
	}
	if (lost)
		log_warn("%llu ring-buffer records were lost: range views are marked incomplete "
			 "(a larger -m keeps more)", lost);
	if (missed)
		log_warn("%llu trigger hits or context switches could not be accounted in BPF: "
			 "range views are marked incomplete", missed);
}

void session_ranges_free(struct session *s)
{
	for (size_t i = 0; i < s->nr_range_sets; i++)
		range_set_free(s->range_sets[i]);
	free(s->range_sets);
	for (size_t i = 0; i < s->nr_startup_specs; i++)
		range_spec_free(s->startup_specs[i]);
	free(s->startup_specs);
}
