/*
 * counter: a physical counter -- one perf event opened once, through libperf,
 * on the run's target (the workload's threads, attached pids/tids, or CPUs).
 *
 * However many views read it, a counter is opened once.  It is enabled in the
 * kernel only while at least one view needs it (counter_retain/release
 * count those views), so nothing is counted while every gate is closed.
 * The software and tracepoint counters of one read group are enabled
 * together, while any of them is needed (counter_open_read_group).
 */
#ifndef PERFGATE_COUNTER_H
#define PERFGATE_COUNTER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "agent/events/events.h"

struct perf_evsel;
struct perf_cpu_map;
struct perf_thread_map;

/* A counter's value summed over its CPUs and threads. */
struct counter_value {
	uint64_t val;	/* count */
	uint64_t ena;	/* ns enabled */
	uint64_t run;	/* ns running on the PMU */
};

/*
 * What a counter reads when something else already counts its event
 * (the start-up range set, agent/ranges/): member is that thing's own
 * number for the event.  The count layer calls through these and knows
 * nothing of what implements them.
 */
struct counter_backing_ops {
	/* Can obj count member on this machine? */
	bool (*supported)(const void *obj, size_t member);
	/* member's value now, as counter_read would give it. */
	void (*read)(void *obj, size_t member, struct counter_value *value);
};

struct counter {
	struct event_def def;
	struct perf_evsel *evsel;
	bool supported;		/* false: the machine lacks it (<not supported>) */
	bool unopened;		/* supported, but its group could not open: <not counted> */
	unsigned users;		/* views that need it now; enabled while > 0 */
	/* While no view needs it the counter is disabled and cannot move:
	 * its value then is kept here, so opening a gate costs no read. */
	struct counter_value idle_value;
	bool idle_valid;
	/* How many CPUs and threads it was opened on: libperf does not keep
	 * the maps of an evsel opened on its own. */
	int nr_cpus, nr_threads;
	/* A member of a group {a,b}: read with the others in one read of
	 * the leader's fds (PERF_FORMAT_GROUP), its position there. */
	struct counter_group *group;
	size_t group_pos;
	bool in_read_group;	/* group is a read group (counter_open_read_group) */
	/* A tool event (duration_time, ...): the agent's own clock. */
	struct {
		uint64_t acc_ns;	/* time open before the current opening */
		uint64_t since_ns;	/* CLOCK_MONOTONIC when it last opened */
		uint64_t end_ns;	/* the run's end, once ended */
		uint64_t rusage_ns;	/* user_time, system_time: the workload's */
		bool ended;
	} tool;
	/* An event the start-up ranges count too is read from their group
	 * member instead of a perf fd of its own, so that its plain view and
	 * its range views share one physical counter.  That member stays
	 * enabled as long as the ranges are loaded. */
	const struct counter_backing_ops *backing;	/* NULL: a perf fd of its own */
	void *backing_obj;
	size_t backing_member;
	/* Its value in the current reading (counter_reading_begin), when
	 * reading_id is that reading's: the kernel is asked once per command. */
	unsigned long reading_id;
	struct counter_value reading_value;
	/* fds of its own, one per position (cpu * nr_threads + thread),
	 * where libperf cannot do what is needed; NULL otherwise.  -G: one
	 * per CPU opened on the cgroup (PERF_FLAG_PID_CGROUP).  --per-thread
	 * -a: one per thread, -1 for a thread that ended before it opened. */
	int *own_fds;
};

struct counter_target {
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	bool inherit;		/* count children of the target threads too */
	bool enable_on_exec;	/* the kernel enables it when the workload execs */
	bool cpus_missing;	/* -C named CPUs that are not online: nothing
				 * opens, every event is "<not supported>" */
	bool all_threads;	/* --per-thread -a: every thread of the machine,
				 * of which some may end before they open */
	bool cgroup;		/* -G: count only the tasks of the cgroup ... */
	int cgroup_fd;		/* ... whose directory this is open on */
};

/* A group's shared part: the evlist libperf opened it as, and the
 * leader's fd per (cpu, thread), which a group read goes through. */
struct counter_group {
	struct perf_evlist *evlist;
	int *leader_fds;
	size_t n;		/* members opened (the group's nr) */
	/* The read group (counter_open_read_group): a dummy leader at
	 * position 0 that only carries and switches the group, its members
	 * (n - 1 of them, open_members still open), and whether the leader
	 * is on in the kernel (read_group_sync keeps it in step). */
	bool leader_on;
	struct counter **members;
	size_t open_members;
	bool dirty;		/* changed in the current batch */
	struct counter_group *dirty_next;
	/* The last group read of every leader fd, and the reading it belongs
	 * to: all members of a group share one read() per fd per reading. */
	uint64_t *reading_data;
	unsigned long reading_id;
};

/* Make c a view of member m of obj, read through ops (before counter_open). */
void counter_back_with(struct counter *c, const struct counter_backing_ops *ops, void *obj,
		       size_t member);
/* Open disabled.  An event the machine lacks leaves supported == false and
 * returns 0; other failures print why and return -1. */
int counter_open(struct counter *c, const struct counter_target *target);
/* Open c[0..n) as one group, c[0] the leader (perf's {a,b}): scheduled
 * together, read together, each member scaled by the group's times.  As
 * perf 6.1, a group with a member the machine lacks counts nothing: that
 * member is <not supported>, the others <not counted>.  Close each.
 * Returns 0, -1 after the reason is printed, or -ESRCH, silently, when
 * the target has all_threads and one of its threads has ended since the
 * map was made (the caller makes a new map and opens again). */
int counter_open_group(struct counter *c, size_t n, const struct counter_target *target);
/*
 * Open the software and tracepoint counters c[0..n) (each already opened
 * alone by counter_open, which found what the machine supports and
 * checked filters) again as one read group: a dummy software leader that
 * counts nothing, and each counter as a member that follows it.  A reading
 * then costs one read() per CPU or thread for all of them
 * (PERF_FORMAT_GROUP) instead of one per counter, and the leader alone is
 * switched: on while any member is needed (read_group_sync).  Software
 * events never multiplex, so the group changes no count.  A member no view
 * needs counts while the leader is on, which no view sees: a view's value
 * is a difference of two reads taken while its counter was needed.  Each
 * member's enabled and running times are the leader's, which over such a
 * span are the member's own.  When the group cannot open, the counters
 * stay as they were.  0, or -ENOMEM when out of memory (not said; the
 * counters are then closed with counter_close as ever).
 */
int counter_open_read_group(struct counter **c, size_t n, const struct counter_target *target);
/* Whether counter_open_read_group may take c. */
bool counter_may_join_read_group(const struct counter *c, const struct counter_target *target);
void counter_close(struct counter *c);

/*
 * A reading: from begin to end (one control command), each counter is read
 * from the kernel at most once, and every view the command touches takes
 * that value.  Views that close and open in one command thus meet at one
 * instant, and a command costs one read() per counter (per group, for a
 * group {a,b}) however many views see it.  Enabling or disabling a counter
 * inside the reading moves its value to the one at that instant.  Outside a
 * reading every counter_read asks the kernel.
 *
 * The session's hardware events are not put in one kernel group: a group
 * is scheduled all or nothing, and perf stat does not group -e events
 * (with a hardware PMU they multiplex one by one).  Software and
 * tracepoint events never multiplex, so they share one read group
 * (counter_open_read_group).
 */
void counter_reading_begin(void);
void counter_reading_end(void);
void counter_read(struct counter *c, struct counter_value *value);
/* The value at one (cpu, thread) position of the maps c was opened on,
 * for the aggregation modes (-A, --per-*; aggr.h).  A tool event has its
 * whole value on the first CPU and on each thread, as perf shows
 * duration_time on the first CPU only and whole on every thread.
 * Returns 0, or -1 when c has no value there: on other CPUs for a tool event,
 * a counter the machine lacks or that could not open, and a counter read
 * through a backing (c->backing), which is not kept per CPU. */
int counter_read_index(struct counter *c, int cpu, int thread, struct counter_value *value);
/* Tool events: the run's start (a view open at exec counts from there),
 * and its end, with the workload's CPU times; no-ops for other counters. */
void counter_tool_start(struct counter *c, const struct timespec *started);
void counter_tool_end(struct counter *c, const struct timespec *ended, uint64_t user_ns,
		      uint64_t sys_ns);
/*
 * A batch: retains and releases between begin and end bring read groups in
 * step once, at the end (read_group_sync), so that a window over every
 * event of a group switches the group's leader alone.  Callers end the
 * batch before they read what they released.  Outside a batch each call
 * acts at once.
 */
void counter_batch_begin(void);
void counter_batch_end(void);
/* A view starts needing the counter; the first one enables it. */
void counter_retain(struct counter *c);
/* The same, for a counter opened with enable_on_exec: the kernel enables it. */
void counter_retain_at_exec(struct counter *c);
/* A view stops needing it; the last one disables it. */
void counter_release(struct counter *c);

#endif
