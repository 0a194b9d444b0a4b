/*
 * range_groups: the kernel side of ranges -- perf groups whose triggers
 * write a record of every counter at every hit, and the ring buffers they
 * write into (docs/design.md, "The sample backend").
 *
 * Layout, decided by what the kernel accepts:
 * one group per CPU and per root thread (pid = thread, cpu = N, inherit = 1,
 * so the thread's future children and threads are followed), one ring
 * buffer per CPU shared by all roots.  Member 0 of every group is a
 * context-switch sampler: its switch-out records snapshot the CPU a thread
 * leaves, so a thread that migrates inside a range loses nothing.  (No
 * inherit_stat: its final records at a thread's exit are written by the
 * exiting CPU into other CPUs' buffers, and such cross-CPU writes garbled
 * records under load; range_set adds a sched_process_exit sampler for the
 * exit instead.)  Records are decoded, merged across CPUs in time order and
 * fed to range_account.
 */
#ifndef PERFGATE_RANGE_GROUPS_H
#define PERFGATE_RANGE_GROUPS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct event_base;
struct range_account;
struct range_groups;

/* One member the caller asks for (the switch sampler is added as member 0,
 * so the caller's member i is group member i + 1). */
struct range_group_event {
	const char *name;		/* for messages */
	struct perf_event_attr attr;	/* type and config */
	const char *filter;		/* tracepoint filter, or NULL */
	bool samples;			/* a trigger: a record at every hit */
};

struct range_groups_params {
	const struct range_group_event *events;
	size_t nr_events;
	const pid_t *roots;		/* threads to open on (inherit follows their children) */
	size_t nr_roots;
	bool enable_on_exec;		/* start counting when the workload execs */
	int pages;			/* ring-buffer data pages per CPU (-m) */
	/* System-wide (-a, -C): every task on these CPUs (NULL: all online),
	 * one group per CPU; roots are then ignored. */
	bool cpu_wide;
	const char *cpu_list;
};

/* Open and mmap; prints what failed and returns NULL on error.  A counted
 * event the machine lacks is left out: range_groups_supported() says so. */
struct range_groups *range_groups_open(const struct range_groups_params *params);
void range_groups_close(struct range_groups *g);

size_t range_groups_nr_members(const struct range_groups *g);
unsigned range_groups_nr_cpus(const struct range_groups *g);
bool range_groups_supported(const struct range_groups *g, size_t member);

/* Call fn when a ring buffer passes its watermark (the loop's wakeup): 0,
 * -ENOMEM, or -1 when the loop refuses a watch. */
int range_groups_watch(struct range_groups *g, struct event_base *base,
		       void (*fn)(void *arg), void *arg);
/*
 * How far a drain may go.  Records are taken in time order, and a record
 * stamped just before the drain may not be in its buffer yet (its CPU is
 * still writing it): records younger than a margin wait for the next drain.
 */
enum range_drain {
	RANGE_DRAIN_BACKGROUND,	/* a buffer filled up: a 2 ms margin */
	RANGE_DRAIN_COMMAND,	/* a client waits for numbers: no margin */
	RANGE_DRAIN_ALL,	/* the counting has stopped: everything */
};

/* Feed acct the records written so far, in time order. */
void range_groups_drain(struct range_groups *g, struct range_account *acct,
			enum range_drain how);
/* A member's value summed over every group, read from the kernel now,
 * with the groups' enabled and running times (the counter behind a plain
 * -e view of an event the ranges also count). */
void range_groups_read_member(struct range_groups *g, size_t member, uint64_t *val,
			      uint64_t *ena, uint64_t *run);
/* The run is over: drain everything and account the roots' last stretch. */
void range_groups_finish(struct range_groups *g, struct range_account *acct);

#endif
