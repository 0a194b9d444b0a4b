/*
 * target: what the counters are opened on -- the workload's threads, the
 * attached processes (-p) or threads (-t), or CPUs (-a, -C) -- and how the
 * report names it ("'cmd args'", "process id '42'", "system wide").
 */
#ifndef PERFGATE_TARGET_H
#define PERFGATE_TARGET_H

#include <sys/types.h>

#include "agent/count/counter.h"
#include "agent/base/options.h"

/* A list of thread ids without repeats. */
struct tid_list {
	pid_t *tids;
	size_t nr;
};

/* tid added unless the list has it: 0, or -ENOMEM (said). */
int tid_list_add(struct tid_list *list, pid_t tid);
/* Every thread of process pid and, through /proc/.../children, of all its
 * descendants, as they are now: 0, or -ENOMEM (said). */
int target_process_tree(struct tid_list *list, pid_t pid);

/* Build cpu and thread maps; workload_pid is -1 when there is no workload.
 * Prints an error and returns -1 for a bad list, a missing process, or
 * out of memory. */
int target_build(struct counter_target *target, const struct options *opts, pid_t workload_pid);
void target_free(struct counter_target *target);
/* pidfds of the -p processes and -t threads, readable when each ends, so
 * the run ends with its targets as perf stat's does.  Returns how many
 * (malloc'd array in *fds); a target that cannot be watched is skipped
 * (out of memory, with a warning). */
size_t target_pidfds(const struct options *opts, int **fds);
/* The words after "Performance counter stats for " (malloc'd), or NULL
 * with errno ENOMEM. */
char *target_describe(const struct options *opts);

#endif
