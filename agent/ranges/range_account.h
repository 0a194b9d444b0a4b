/*
 * range_account: the exact accounting behind range views, without the kernel.
 *
 * The kernel writes a record at every trigger hit and every context switch
 * of a measured thread, holding the value of every counter of the thread's
 * group on that CPU (PERF_SAMPLE_READ | PERF_FORMAT_GROUP).  Walking those
 * records in time order, this module keeps each thread's range state (the
 * nesting depth of every range leaf) and each (thread, CPU) pair's last
 * values, and adds every delta to the views whose gate was open over it.
 * Because deltas are differences of one physical counter, the views of an
 * event through complementary gates add up exactly to the event's total.
 *
 * The order of a trigger's own hit is defined (perfgate-ranges(7)): a
 * trigger's hit is inside the ranges it starts and inside the ranges it
 * stops; every other delta in its record happened before it, under the
 * state before it.  The module is pure (no I/O, no kernel) so that this
 * arithmetic is unit-tested on its own (tests/unit/test_range_account.c).
 */
#ifndef PERFGATE_RANGE_ACCOUNT_H
#define PERFGATE_RANGE_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grammar/range_parse.h"

#define RANGE_LEAVES_MAX 64	/* leaves of all gates of one range set */
_Static_assert(RANGE_LEAVES_MAX <= 64, "starts and stops are bits of a uint64_t");

/* What one member of the kernel group is for.  A member may be several
 * things at once: a tracepoint that starts one leaf and stops another, or
 * a trigger that is also a counted event. */
struct range_member {
	uint64_t starts;	/* bit i: starts leaf i */
	uint64_t stops;		/* bit i: stops leaf i */
	bool counted;		/* its value is shown in views */
	bool switches;		/* the context-switch sampler: its records are switch-outs */
};

/* How a leaf "S..T" behaves when an end is open. */
struct range_leaf {
	bool has_starter;	/* false: "..T", open from the thread's start */
	bool has_stopper;	/* false: "S..", open until the end */
};

/* One view set: a parsed gate (grammar/range_parse.h) whose ranges are
 * leaves leaf_base + range->index, counting every counted member.  A NULL
 * gate is always open (the events' ungated totals). */
struct range_view_def {
	const struct range_gate *gate;
	unsigned leaf_base;
};

/* A record: a trigger hit, a context switch or a thread's exit. */
struct range_record {
	uint64_t time;
	uint32_t tid;
	uint32_t cpu;
	unsigned root;		/* which group root the record came from (by id) */
	int member;		/* the member that sampled (SAMPLE), or -1 */
	const uint64_t *values;	/* one per member, member order */
};

struct range_account;

enum range_account_flags {
	/* Counters opened per CPU on every task (-a): a record's values are
	 * the CPU's, and the stretch since the CPU's previous record belongs
	 * to the record's thread (every switch-out leaves a record). */
	RANGE_ACCOUNT_CPU_WIDE = 1,
	/* Range state per CPU rather than per thread (--range-scope cpu,
	 * for triggers that fire in CPU context: irq, softirq, timers). */
	RANGE_ACCOUNT_CPU_SCOPE = 2,
};

/* NULL when out of memory. */
struct range_account *range_account_new(const struct range_member *members, size_t nr_members,
					const struct range_leaf *leaves, size_t nr_leaves,
					const struct range_view_def *views, size_t nr_views,
					unsigned nr_cpus, unsigned flags);
void range_account_free(struct range_account *acct);

/* Account one record; records must come in time order. */
void range_account_record(struct range_account *acct, const struct range_record *rec);
/*
 * The run is over: values[cpu * nr_members + m] is what the groups of root
 * (opened on thread root_tid, inherited by its descendants) counted on each
 * CPU in all, read from their fds.  What the records did not show -- the
 * root thread's last stretch, and the few instructions of each thread's
 * exit after its last record -- is added under the root thread's final
 * state, so the views add up to the fds' totals exactly.
 */
void range_account_finish_root(struct range_account *acct, unsigned root, uint32_t root_tid,
			       const uint64_t *values);

/* The same for CPU-wide counters: values[cpu * nr_members + m] is what
 * each CPU counted in all; the stretch since its last record goes to the
 * thread that was running then. */
void range_account_finish_cpus(struct range_account *acct, const uint64_t *values);
/* Close every open stretch into the sums (the run is over). */
void range_account_commit_all(struct range_account *acct);
/* A view's count of member m so far. */
uint64_t range_account_value(const struct range_account *acct, size_t view, size_t member);
/*
 * Records were lost on CPU cpu's buffer.  Views are flagged incomplete, and
 * no stretch is half-counted: every stretch open now is dropped when it
 * closes, the next delta of each thread on that CPU (it spans the loss) is
 * dropped, and each thread's depths are recounted from its trigger counts.
 */
void range_account_mark_lost(struct range_account *acct, uint64_t lost, uint32_t cpu);
/* Records lost; out of memory while accounting, the record being
 * accounted and every one after it count as lost too (the views are then
 * incomplete, not silently short). */
uint64_t range_account_lost(const struct range_account *acct);
/* Is a view's gate open when the leaves in open_leaves (bit i) are? */
bool range_view_is_open(const struct range_view_def *view, uint64_t open_leaves);

#endif
