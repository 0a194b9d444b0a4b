/*
 * aggr: perf stat's aggregation modes -- one report row per CPU (-A), per
 * thread (--per-thread), or per core, die, socket or NUMA node (--per-*).
 *
 * A counter is opened on a map of CPUs and one of threads; each (cpu,
 * thread) position of those maps belongs to one key of the mode.  The key
 * of a CPU comes from the kernel's topology in sysfs
 * (/sys/devices/system/cpu/cpuN/topology, /sys/devices/system/node), the
 * key of a thread is its comm and tid, read once at the start as perf does.
 * The default window's views keep their values per position (view.h), and
 * aggr_rows() sums them per key into report rows, in perf's order.
 */
#ifndef PERFGATE_AGGR_H
#define PERFGATE_AGGR_H

#include <stddef.h>

#include "agent/count/counter.h"
#include "agent/base/options.h"
#include "agent/report/report.h"
#include "agent/count/view.h"

struct aggr_map {
	enum aggr_mode mode;
	int nr_cpus, nr_threads;	/* the counters' maps */
	struct report_aggr_key *keys;	/* in perf's order */
	size_t nr_keys;
	size_t *key_of;		/* key of each position, cpu * nr_threads + thread */
	bool skip_zero;		/* --per-thread -a: no row for a thread that counted 0 */
};

/* The keys of mode over target's maps (malloc'd), or NULL: errno ENOMEM
 * when out of memory (not said), else 0 after an error is printed (a CPU
 * whose topology cannot be read). */
struct aggr_map *aggr_map_new(enum aggr_mode mode, const struct counter_target *target);
void aggr_map_free(struct aggr_map *m);

/* Which value of each position a sum takes. */
enum aggr_values {
	AGGR_VALUES_TOTAL,	/* the value so far */
	AGGR_VALUES_INTERVAL,	/* the delta view_take_interval() just took */
	AGGR_VALUES_SHOWN,	/* the value at the last interval line (--summary) */
};

/* A view's sums per key into sums[m->nr_keys], with the number of
 * positions (CPUs, threads) that had a value into nrs[m->nr_keys]. */
void aggr_view_sums(const struct aggr_map *m, struct view *v, enum aggr_values which,
		    struct counter_value *sums, int *nrs);
/* Key number key as perf's -x column spells it: "CPU0", "S0-D0-C1",
 * "S0-D0", "S0", "N0", "comm-tid". */
void aggr_key_name(const struct aggr_map *m, size_t key, char *buf, size_t cap);

/* The rows of views[0..nr) per key (malloc'd, *n of them; each row's
 * aggr points into m), from totals[0..nr), the views' own rows just
 * taken (whether each was counted), summing the values which says;
 * NULL when out of memory. */
struct report_row *aggr_rows(const struct aggr_map *m, struct view *views,
			     const struct report_row *totals, size_t nr,
			     enum aggr_values which, size_t *n);

#endif
