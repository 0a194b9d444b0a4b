/*
 * target: cpu and thread maps for libperf, from perf stat's target options.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <fcntl.h>
#include <unistd.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "agent/base/log.h"
#include "agent/count/target.h"
#include "grammar/cpu_list.h"

/* A map that could not be made: said, and what was made given back. */
static int target_nomem(struct counter_target *target)
{
	log_error("out of memory for the CPU and thread maps");
	target_free(target);
	return -1;
}

/* tid at the end of list, without looking for it first: 0, or -1 when
 * out of memory (said). */
static int tid_list_append(struct tid_list *list, pid_t tid)
{
	pid_t *grown = realloc(list->tids, (list->nr + 1) * sizeof(*grown));

	if (!grown) {
		log_error("out of memory for the list of threads");
		return -1;
	}
	list->tids = grown;
	list->tids[list->nr++] = tid;
	return 0;
}

int tid_list_add(struct tid_list *list, pid_t tid)
{
	for (size_t i = 0; i < list->nr; i++)
		if (list->tids[i] == tid)
			return 0;
	return tid_list_append(list, tid) ? -ENOMEM : 0;
}

/*
 * Every thread of process pid, from /proc/PID/task, into list.  unique:
 * the list holds none of this process's threads yet (a walk of whole
 * processes), so each is appended without a search.  0, -ENOENT when
 * the process is gone (or -errno), -ENOMEM.
 */
static int list_threads(struct tid_list *list, const char *pid, bool unique)
{
	char path[300];
	struct dirent *entry;
	DIR *dir;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!rc && (entry = readdir(dir))) {
		pid_t tid = (pid_t)atoi(entry->d_name);

		if (entry->d_name[0] == '.')
			continue;
		if (unique)
			rc = tid_list_append(list, tid) ? -ENOMEM : 0;
		else
			rc = tid_list_add(list, tid);
	}
	closedir(dir);
	return rc;
}

/* Every thread of process pid, as perf stat -p does. */
static int add_process_threads(struct tid_list *list, pid_t pid)
{
	char id[24];
	int rc;

	snprintf(id, sizeof(id), "%d", (int)pid);
	rc = list_threads(list, id, false);
	if (rc && rc != -ENOMEM)	/* out of memory is said already */
		log_error("no process with id %d: %s", (int)pid, strerror(-rc));
	return rc ? -1 : 0;
}

/* "12,34": each a positive id; processes expand to their threads. */
static int parse_ids(struct tid_list *list, const char *text, const char *opt, bool processes)
{
	const char *p = text;

	while (*p) {
		char *end;
		long id = strtol(p, &end, 10);

		if (end == p || id <= 0 || (*end && *end != ',')) {
			log_caret(text, (size_t)(end == p ? p - text : end - text),
				  "invalid value for %s: expected ids separated by ','", opt);
			return -1;
		}
		if (processes) {
			if (add_process_threads(list, (pid_t)id))
				return -1;
		} else if (tid_list_add(list, (pid_t)id)) {
			return -1;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int build_threads(struct counter_target *target, const struct options *opts,
			 pid_t workload_pid)
{
	struct tid_list list = { 0 };
	int rc = 0;

	if (workload_pid > 0)
		rc = tid_list_add(&list, workload_pid);
	if (!rc && opts->pid_list)
		rc = parse_ids(&list, opts->pid_list, "-p", true);
	if (!rc && opts->tid_list)
		rc = parse_ids(&list, opts->tid_list, "-t", false);
	if (!rc)
		target->threads = perf_thread_map__new_array((int)list.nr, list.tids);
	free(list.tids);
	if (rc)
		return -1;
	return target->threads ? 0 : target_nomem(target);
}

/*
 * -C LIST, as perf reads it: CPUs and ranges ("0,2-3") separated by ',',
 * duplicates merged ("0,0" is CPU 0).  The kernel refuses a counter on a
 * CPU that is not online with EINVAL, and perf 6.1 then shows the event as
 * "<not supported>" and runs on: so such a CPU sets *missing and is left
 * out of the map (which, when no listed CPU is online, is every online
 * CPU: nothing is opened on it).  libperf's own parser would refuse a
 * duplicate and take an offline CPU.
 */
static struct perf_cpu_map *cpu_list_map(const char *list, bool *missing)
{
	struct perf_cpu_map *online = perf_cpu_map__new_online_cpus(), *map = NULL;
	struct pg_error err = { 0 };
	struct cpu_list_item *items = NULL;
	size_t n = 0, canon_len = 0;
	char *canon = NULL;
	bool *seen = NULL;
	long max;
	FILE *out;

	if (!online) {
		log_error("out of memory for the -C list");
		return NULL;
	}
	max = perf_cpu_map__max(online).cpu;
	items = cpu_list_parse(list, strlen(list), &n, &err);
	if (!items) {
		log_caret(list, err.offset, "invalid value for -C: %s", err.message);
		pg_error_clear(&err);
		goto out;
	}
	seen = calloc((size_t)max + 1, sizeof(*seen));
	out = seen ? open_memstream(&canon, &canon_len) : NULL;
	if (!out)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		for (long cpu = items[i].lo; cpu <= items[i].hi; cpu++) {
			if (cpu > max ||
			    !perf_cpu_map__has(online, (struct perf_cpu){ .cpu = (int)cpu })) {
				*missing = true;
				if (cpu > max)
					break;	/* so is the rest of the range */
				continue;
			}
			seen[cpu] = true;
		}
	for (long cpu = 0; cpu <= max; cpu++)
		if (seen[cpu])
			fprintf(out, "%s%ld", ftell(out) ? "," : "", cpu);
	if (fclose(out))	/* the list could not all be written: out of memory */
		goto nomem;
	map = canon_len ? perf_cpu_map__new(canon) : perf_cpu_map__get(online);
	if (map)
		goto out;
nomem:
	log_error("out of memory for the -C list");
out:
	free(canon);
	free(seen);
	free(items);
	perf_cpu_map__put(online);
	return map;
}

/*
 * --per-thread -a: every thread of the machine as /proc lists it now, as
 * perf's thread map of all threads; a process or thread that ends while it
 * is read is left out.  Each counter counts its thread on any CPU, and
 * (unless -i) the children it makes later, which perf counts the same way.
 */
static int build_all_threads(struct counter_target *target, const struct options *opts)
{
	struct tid_list list = { 0 };
	struct dirent *entry;
	DIR *proc = opendir("/proc");

	if (!proc) {
		log_error("cannot read /proc: %s", strerror(errno));
		return -1;
	}
	while ((entry = readdir(proc))) {
		if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
			continue;
		/* A process that ended meanwhile is left out. */
		if (list_threads(&list, entry->d_name, true) == -ENOMEM) {
			closedir(proc);
			free(list.tids);
			return -1;
		}
	}
	closedir(proc);
	target->cpus = perf_cpu_map__new_any_cpu();
	target->threads = perf_thread_map__new_array((int)list.nr, list.tids);
	target->inherit = !opts->no_inherit;
	target->all_threads = true;
	free(list.tids);
	return target->cpus && target->threads ? 0 : target_nomem(target);
}

int target_build(struct counter_target *target, const struct options *opts, pid_t workload_pid)
{
	bool per_cpu = opts->system_wide || opts->cpu_list;

	memset(target, 0, sizeof(*target));
	if (opts->aggr_mode == AGGR_THREAD && opts->system_wide && !opts->cpu_list)
		return build_all_threads(target, opts);
	if (per_cpu) {
		/* System-wide: every task on these CPUs; a workload only times the run. */
		target->cpus = opts->cpu_list ? cpu_list_map(opts->cpu_list, &target->cpus_missing)
					      : perf_cpu_map__new_online_cpus();
		if (!target->cpus && opts->cpu_list)
			return -1;	/* said */
		target->threads = perf_thread_map__new_dummy();
		return target->cpus && target->threads ? 0 : target_nomem(target);
	}
	target->cpus = perf_cpu_map__new_any_cpu();
	target->inherit = !opts->no_inherit;
	if (!target->cpus)
		return target_nomem(target);
	return build_threads(target, opts, workload_pid);
}

void target_free(struct counter_target *target)
{
	perf_cpu_map__put(target->cpus);
	perf_thread_map__put(target->threads);
	memset(target, 0, sizeof(*target));
}

/* Linux 6.9's PIDFD_THREAD: a pidfd for one thread rather than a process. */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static void add_pidfds(const char *list, bool threads, int **fds, size_t *nr)
{
	for (const char *p = list; p && *p;) {
		char *end;
		long id = strtol(p, &end, 10);
		int fd = pidfd_open((pid_t)id, threads ? PIDFD_THREAD : 0);

		if (fd >= 0) {
			int *grown = realloc(*fds, (*nr + 1) * sizeof(int));

			fcntl(fd, F_SETFD, FD_CLOEXEC);
			if (!grown) {
				/* As a target that cannot be watched: skipped, said. */
				log_warn("out of memory: the run does not end with target %ld", id);
				close(fd);
			} else {
				*fds = grown;
				(*fds)[(*nr)++] = fd;
			}
		}
		p = *end ? end + 1 : end;
	}
}

size_t target_pidfds(const struct options *opts, int **fds)
{
	size_t nr = 0;

	*fds = NULL;
	add_pidfds(opts->pid_list, false, fds, &nr);
	add_pidfds(opts->tid_list, true, fds, &nr);
	return nr;
}

int target_process_tree(struct tid_list *list, pid_t pid)
{
	char path[320];
	struct dirent *entry;
	DIR *dir;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;	/* gone meanwhile: nothing to cover */
	while (!rc && (entry = readdir(dir))) {
		FILE *children;
		int child;

		if (entry->d_name[0] == '.')
			continue;
		rc = tid_list_add(list, (pid_t)atoi(entry->d_name));
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid, entry->d_name);
		children = rc ? NULL : fopen(path, "re");
		while (!rc && children && fscanf(children, "%d", &child) == 1)
			rc = target_process_tree(list, (pid_t)child);
		if (children)
			fclose(children);
	}
	closedir(dir);
	return rc;
}

char *target_describe(const struct options *opts)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	if (opts->cpu_list && !opts->system_wide)
		fprintf(f, "'CPU(s) %s'", opts->cpu_list);
	else if (opts->system_wide)
		fputs("'system wide'", f);
	else if (opts->pid_list)
		fprintf(f, "process id '%s'", opts->pid_list);
	else if (opts->tid_list)
		fprintf(f, "thread id '%s'", opts->tid_list);
	else {
		fputc('\'', f);
		for (int i = 0; i < opts->nr_workload; i++)
			fprintf(f, "%s%s", i ? " " : "", opts->workload[i]);
		fputc('\'', f);
	}
	if (fclose(f)) {	/* cut short: out of memory */
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	return text;
}
