/*
 * range_layout: what compiling range specs gives (range_set_compile), and
 * what a backend is handed to count it: the members of the kernel group,
 * the leaves of every gate and the views, all numbered once; and the
 * target the set is opened on.
 *
 * Members: 0 is the switch sampler, then every trigger and counted event,
 * each once however often it is named (member m is defs[m - 1]).  Leaves:
 * every "S..T" of every spec.  Views: one per spec, each showing its own
 * events (shown[spec][e] is the member of its event e).
 */
#ifndef PERFGATE_RANGE_LAYOUT_H
#define PERFGATE_RANGE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "agent/events/events.h"
#include "agent/ranges/range_account.h"
#include "agent/ranges/range_groups.h"
#include "grammar/range_parse.h"

struct range_layout {
	struct range_spec **specs;	/* one view each */
	size_t nr_specs;

	struct event_def *defs;		/* member i + 1's event */
	const struct range_trigger **trigger_of;	/* member i + 1's first trigger, or NULL */
	struct range_group_event *events;
	size_t nr_events;
	struct range_member *members;	/* nr_events + 1; 0 is the switch sampler */
	struct range_leaf leaves[RANGE_LEAVES_MAX];
	size_t nr_leaves;
	struct range_view_def *views;	/* per spec */
	size_t **shown;			/* per spec: the member of each of its events */
	bool per_cpu;			/* range state per CPU, not per thread (set at start) */
};

enum range_scope { RANGE_SCOPE_AUTO, RANGE_SCOPE_THREAD, RANGE_SCOPE_CPU };
enum range_backend { RANGE_BACKEND_AUTO, RANGE_BACKEND_BPF, RANGE_BACKEND_SAMPLE };

/* What a set is opened on. */
struct range_set_target {
	const pid_t *roots;	/* per task: threads (inherit follows their children) */
	size_t nr_roots;
	/* Per task, at run time: the processes whose whole trees the roots
	 * are (the workload, -p), walked again for threads made meanwhile. */
	bool trees;
	const pid_t *tree_roots;
	size_t nr_tree_roots;
	bool enable_on_exec;	/* per task: count from the workload's exec */
	bool cpu_wide;		/* -a / -C: every task on cpu_list (NULL: all) */
	const char *cpu_list;
	enum range_scope scope;	/* AUTO: per CPU when every trigger fires in CPU context */
	int pages;		/* -m */
	enum range_backend backend;
};

#endif
