/*
 * cgroup: -G/--cgroup NAME, found as perf finds it: under the mount of the
 * cgroup v1 hierarchy with the perf_event controller, or else under the
 * cgroup2 mount (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid
 * system like the test machine's).
 */
#ifndef PERFGATE_CGROUP_H
#define PERFGATE_CGROUP_H

#include <stddef.h>

/* The directory of cgroup name into path; 0, or -1 after an error that
 * names the cgroup and where it was looked for. */
int cgroup_find(const char *name, char *path, size_t cap);

#endif
