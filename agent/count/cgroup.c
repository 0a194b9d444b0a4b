/*
 * cgroup: find a -G cgroup's directory, with perf's rules for which
 * hierarchy counts (cgroup.h).
 */
#include <errno.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/count/cgroup.h"
#include "agent/base/log.h"

/* The perf_event v1 hierarchy's mount, else the cgroup2 mount: 0,
 * -ENOMEM, or -ENOENT when there is neither (or no mount table). */
static int cgroup_mount(char *mnt, size_t cap)
{
	FILE *f = setmntent("/proc/mounts", "re");
	struct mntent *m;
	bool v2 = false;

	if (!f)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	while ((m = getmntent(f))) {
		if (strcmp(m->mnt_type, "cgroup") == 0 && hasmntopt(m, "perf_event")) {
			snprintf(mnt, cap, "%s", m->mnt_dir);
			endmntent(f);
			return 0;
		}
		if (strcmp(m->mnt_type, "cgroup2") == 0 && !v2) {
			snprintf(mnt, cap, "%s", m->mnt_dir);
			v2 = true;
		}
	}
	endmntent(f);
	return v2 ? 0 : -ENOENT;
}

int cgroup_find(const char *name, char *path, size_t cap)
{
	char mnt[4096];
	int rc = cgroup_mount(mnt, sizeof(mnt));

	if (rc == -ENOMEM) {
		log_error("-G %s: out of memory", name);
		return -1;
	}
	if (rc) {
		log_error("-G %s: no cgroup hierarchy with the perf_event controller is mounted "
			  "(nor a cgroup2 one)", name);
		return -1;
	}
	snprintf(path, cap, "%s/%s", mnt, name);
	if (access(path, X_OK) != 0) {
		log_error("-G: no cgroup '%s' (no access to %s)", name, path);
		return -1;
	}
	return 0;
}
