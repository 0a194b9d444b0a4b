/*
 * range_set: range specs (grammar/range_parse.h) compiled into one kernel
 * group layout and one accounting, and the views they show.
 *
 * The specs given with -e at start-up form one set, so that every event
 * they count is one physical counter: a plain "-e E" of the same event
 * reads that counter too (counter_back_with_range), which is what makes
 * E@R + E@!R == E exact.  Each "range load NAME = SPEC" makes a set of its
 * own, opened on the threads that exist at that moment.
 *
 * Compiling resolves every event and trigger (tracefs), checks trigger
 * filters against the tracepoint formats (filter_check), and numbers:
 * group members (0: the switch sampler, then triggers and counted events,
 * each once however often it is named), leaves (every "S..T" of every
 * spec), and views (one per spec, each showing its own events).
 */
#ifndef PERFGATE_RANGE_SET_H
#define PERFGATE_RANGE_SET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/count/counter.h"
#include "agent/ranges/range_account.h"
#include "agent/ranges/range_groups.h"
#include "common/error.h"
#include "grammar/range_parse.h"

struct event_base;
struct range_bpf;

struct range_set {
	char *name;			/* "range load" NAME; NULL for start-up specs */
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

	/* The backend counting the set: BPF programs, or (sample) perf
	 * groups whose records range_account walks. */
	struct range_bpf *bpf;
	struct range_groups *groups;
	struct range_account *acct;
	uint64_t *interval_base;	/* [spec][event] at the last interval line */
	bool unloaded;			/* "range unload": totals kept, groups closed */
	bool per_cpu;			/* range state per CPU, not per thread */
};

/* Takes ownership of specs (an array of n) on success; on failure they
 * stay the caller's, so that it can show the spec with the error: *err
 * is about specs[*err_spec] (err_spec may be NULL), at an offset in its
 * text. */
struct range_set *range_set_compile(struct range_spec **specs, size_t n, const char *name,
				    size_t *err_spec, struct pg_error *err);
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

/* Open the backend and start accounting; -1 (message printed, or in
 * reason when reason is not NULL). */
int range_set_open(struct range_set *rs, const struct range_set_target *target,
		   struct event_base *base, char *reason, size_t cap);
/* Does the set keep its range state per CPU (else per thread)? */
bool range_set_per_cpu(const struct range_set *rs);
void range_set_free(struct range_set *rs);

/* Account what the kernel wrote so far (see range_groups_drain). */
void range_set_drain(struct range_set *rs, enum range_drain how);
/* Everything, and the roots' last stretch: the run is over. */
void range_set_finish(struct range_set *rs);
/* "range unload": finish now and close the groups; the totals stay. */
void range_set_unload(struct range_set *rs);

/* The member counting the same thing as def (no filter), or 0 if none. */
size_t range_set_find_counted(const struct range_set *rs, const struct event_def *def);
/* A member's value (for a counter it backs): the kernel's current one
 * (sample backend), or as of the last range_set_drain (BPF backend). */
void range_set_read_member(struct range_set *rs, size_t member, struct counter_value *value);
/* Can the set count member m on this machine? */
bool range_set_member_supported(const struct range_set *rs, size_t member);
/* Is the set counted by the BPF backend (else by samples)? */
bool range_set_is_bpf(const struct range_set *rs);

/* The "range load" NAME, or NULL for the start-up set. */
const char *range_set_name(const struct range_set *rs);
/* Has the set been unloaded ("range unload")?  Its totals stay. */
bool range_set_is_unloaded(const struct range_set *rs);
/* The set's specs, one view each; spec s as written. */
size_t range_set_nr_specs(const struct range_set *rs);
const char *range_set_spec_text(const struct range_set *rs, size_t spec);
/* A view row: spec s, its event e. */
size_t range_set_nr_events(const struct range_set *rs, size_t spec);
const struct event_def *range_set_event(const struct range_set *rs, size_t spec, size_t e);
bool range_set_supported(const struct range_set *rs, size_t spec, size_t e);
uint64_t range_set_value(const struct range_set *rs, size_t spec, size_t e);
/* What follows "event@" in a row: the NAME of "range load", or the gate
 * as written in a start-up spec ("" for a spec without one). */
const char *range_set_label(const struct range_set *rs, size_t spec);
/* The event's name as written in the spec. */
const char *range_set_event_name(const struct range_set *rs, size_t spec, size_t e);
/* The row's value at the last interval line, for the report to keep. */
uint64_t *range_set_interval_base(struct range_set *rs, size_t spec, size_t e);
/* Records lost (sample) or hits not accounted (BPF): views incomplete. */
uint64_t range_set_lost(const struct range_set *rs);

#endif
