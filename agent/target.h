/*
 * target: what the counters are opened on -- the workload's threads, the
 * attached processes (-p) or threads (-t), or CPUs (-a, -C) -- and how the
 * report names it ("'cmd args'", "process id '42'", "system wide").
 */
#ifndef PERFGATE_TARGET_H
#define PERFGATE_TARGET_H

#include <sys/types.h>

#include "agent/counter.h"
#include "agent/options.h"

/* Build cpu and thread maps; workload_pid is -1 when there is no workload.
 * Prints an error and returns -1 for a bad list or a missing process. */
int target_build(struct counter_target *target, const struct options *opts, pid_t workload_pid);
void target_free(struct counter_target *target);
/* The words after "Performance counter stats for " (malloc'd). */
char *target_describe(const struct options *opts);

#endif
