/*
 * counter: physical perf counters through libperf: one evsel per event,
 * one evlist per group {a,b} read as one (PERF_FORMAT_GROUP), one read
 * group under a dummy leader for the software and tracepoint events (read
 * as one, switched by their leader when they all go on or off together),
 * and the per-command reading that asks the kernel once per counter or
 * group.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>

#include "agent/count/counter.h"
#include "agent/base/log.h"

/*
 * libperf.a exports this but declares it only in an internal header that
 * needs the kernel's tools/include; declaring the one prototype here avoids
 * shipping those headers.
 */
int perf_evsel__apply_filter(struct perf_evsel *evsel, const char *filter);

/* The current reading's number (0: none yet), and whether one is open. */
static unsigned long reading_now;
static bool reading_open;

void counter_reading_begin(void)
{
	if (++reading_now == 0)
		reading_now = 1;
	reading_open = true;
}

void counter_reading_end(void)
{
	reading_open = false;
}

/* The reading's number if one is open, else 0 (which no value carries). */
static unsigned long reading_id(void)
{
	return reading_open ? reading_now : 0;
}

/* Errors that mean "this machine cannot count that", as perf treats them. */
static bool errno_is_unsupported(int err, const struct perf_event_attr *attr)
{
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == ENXIO)
		return true;
	/* A PMU's event on a VM without that PMU may also fail with EINVAL. */
	return err == EINVAL && (attr->type == PERF_TYPE_HARDWARE ||
				 attr->type == PERF_TYPE_HW_CACHE || attr->type == PERF_TYPE_RAW);
}

/* libperf returns -errno, or -1 with errno set. */
static int open_errno(int err)
{
	return -err > 1 ? -err : errno;
}

static void report_open_error(const struct counter *c, int err)
{
	if (err == EACCES || err == EPERM) {
		log_error("no permission to open '%s': %s.\n"
			  "  Run as root, give the agent CAP_PERFMON, or lower "
			  "/proc/sys/kernel/perf_event_paranoid (now read it with "
			  "'cat /proc/sys/kernel/perf_event_paranoid')",
			  c->def.name, strerror(err));
		return;
	}
	if (err == ESRCH) {
		log_error("cannot open '%s': no such process or thread", c->def.name);
		return;
	}
	log_error("cannot open '%s': %s", c->def.name, strerror(err));
}

/* An open that failed: "<not supported>" (0) for what this machine lacks,
 * as perf; otherwise the reason, and -1. */
static int open_failed(struct counter *c, int err, const struct perf_event_attr *attr)
{
	c->supported = false;
	if (errno_is_unsupported(err, attr))
		return 0;
	report_open_error(c, err);
	return -1;
}

/* 0, -1 after the reason, or -ESRCH, silently, when the target has
 * all_threads and a thread ended before its counter took the filter
 * (libperf stops at that thread: the ones after it have none). */
static int counter_apply_filter(struct counter *c, const struct counter_target *target)
{
	int err;

	if (!c->def.filter || !c->evsel)
		return 0;
	/* libperf returns -1 and leaves the ioctl's reason in errno. */
	err = perf_evsel__apply_filter(c->evsel, c->def.filter);
	if (err && errno == ESRCH && target->all_threads)
		return -ESRCH;
	if (err) {
		log_error("the kernel refused filter '%s' on '%s': %s",
			  c->def.filter, c->def.name, strerror(errno));
		return -1;
	}
	return 0;
}

void counter_back_with(struct counter *c, const struct counter_backing_ops *ops, void *obj,
		       size_t member)
{
	c->backing = ops;
	c->backing_obj = obj;
	c->backing_member = member;
}

static struct perf_event_attr counter_attr(const struct counter *c,
					   const struct counter_target *target, __u64 read_format)
{
	struct perf_event_attr attr = c->def.attr;

	attr.disabled = 1;
	attr.inherit = target->inherit;
	attr.enable_on_exec = target->enable_on_exec;
	attr.read_format = read_format;
	return attr;
}

/* Perf's fallback: a PMU without guest/host filtering refuses
 * exclude_guest with EINVAL (msr/tsc/ does); retry without it. */
static bool attr_drop_guest_bits(struct perf_event_attr *attr)
{
	bool had = attr->exclude_guest || attr->exclude_host;

	attr->exclude_guest = attr->exclude_host = 0;
	return had;
}

/*
 * libperf learns an evsel's maps from an evlist, not from
 * perf_evsel__open(): an evsel opened on its own on several CPUs has no
 * CPU map, and perf_evsel__apply_filter() then reaches its first CPU's
 * fds only, so a filtered tracepoint would count unfiltered on the other
 * CPUs.  The evsel is passed through an evlist for its maps (it keeps its
 * own references to them) and opened on them.
 */
static int evsel_open_with_maps(struct perf_evsel *evsel, const struct counter_target *target)
{
	struct perf_evlist *evlist = perf_evlist__new();

	if (!evlist)
		return -ENOMEM;
	perf_evlist__add(evlist, evsel);
	perf_evlist__set_maps(evlist, target->cpus, target->threads);
	perf_evlist__remove(evlist, evsel);
	perf_evlist__delete(evlist);
	return perf_evsel__open(evsel, perf_evsel__cpus(evsel), perf_evsel__threads(evsel));
}

/*
 * perf_evsel__new() for attr.  libperf may be built from newer kernel
 * headers than ours, whose perf_event_attr is longer, and it copies its
 * own size of it: it is given a zeroed copy with room to spare, so that
 * the copy never reads past the end of what the caller has (the last
 * element of an array, at the end of a heap block).  attr.size stays
 * ours, so the kernel reads no more than we filled in.
 */
static struct perf_evsel *evsel_new(const struct perf_event_attr *attr)
{
	union {
		struct perf_event_attr attr;
		char room[2 * sizeof(struct perf_event_attr)];
	} padded = { .room = { 0 } };

	padded.attr = *attr;
	return perf_evsel__new(&padded.attr);
}

/* One evsel opened on target, with perf's exclude_guest fallback: 0, or
 * an errno. */
static int evsel_open(struct perf_event_attr *attr, const struct counter_target *target,
		      struct perf_evsel **out)
{
	for (;;) {
		struct perf_evsel *evsel = evsel_new(attr);
		int err;

		if (!evsel)
			return ENOMEM;
		err = evsel_open_with_maps(evsel, target);
		if (!err) {
			*out = evsel;
			return 0;
		}
		err = open_errno(err);
		perf_evsel__delete(evsel);
		if (err != EINVAL || !attr_drop_guest_bits(attr))
			return err;
	}
}

static void counter_opened(struct counter *c, const struct counter_target *target)
{
	c->supported = true;
	/* Opened disabled: zero until something enables it. */
	memset(&c->idle_value, 0, sizeof(c->idle_value));
	c->idle_valid = !target->enable_on_exec;
	c->nr_cpus = perf_cpu_map__nr(target->cpus);
	c->nr_threads = perf_thread_map__nr(target->threads);
}

/* ---- fds of the counter's own: -G, and --per-thread -a -------------------- */

/* Positions are cpu * nr_threads + thread, as for an evsel: one per CPU
 * for -G (one thread), one per thread for --per-thread -a (any CPU).  A
 * position whose thread had ended before it opened keeps fd -1. */
static size_t own_fds_nr(const struct counter *c)
{
	return (size_t)c->nr_cpus * (size_t)c->nr_threads;
}

static void own_fds_close(struct counter *c)
{
	for (size_t k = 0; c->own_fds && k < own_fds_nr(c); k++)
		if (c->own_fds[k] >= 0)
			close(c->own_fds[k]);
	free(c->own_fds);
	c->own_fds = NULL;
}

/* An array of nr fds, all -1, and the maps' sizes it stands for. */
static int own_fds_new(struct counter *c, int nr_cpus, int nr_threads)
{
	size_t nr = (size_t)nr_cpus * (size_t)nr_threads;

	c->own_fds = malloc((nr ? nr : 1) * sizeof(*c->own_fds));
	if (!c->own_fds)
		return -1;
	c->nr_cpus = nr_cpus;
	c->nr_threads = nr_threads;
	for (size_t k = 0; k < nr; k++)
		c->own_fds[k] = -1;
	return 0;
}

static int own_open(struct perf_event_attr *attr, pid_t pid, int cpu, unsigned long flags)
{
	for (;;) {
		int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1,
				      flags | PERF_FLAG_FD_CLOEXEC);

		if (fd >= 0 || errno != EINVAL || !attr_drop_guest_bits(attr))
			return fd;
	}
}

/*
 * perf's -G: the event opened with pid = the cgroup directory's fd and
 * PERF_FLAG_PID_CGROUP on every CPU of the target, so it counts only
 * while a task of the cgroup runs there.  libperf passes no flags to
 * perf_event_open, so these fds are the counter's own.
 */
static int counter_open_cgroup(struct counter *c, const struct counter_target *target)
{
	struct perf_event_attr attr = counter_attr(c, target, PERF_FORMAT_TOTAL_TIME_ENABLED |
						   PERF_FORMAT_TOTAL_TIME_RUNNING);
	int nr = perf_cpu_map__nr(target->cpus);

	if (own_fds_new(c, nr, 1))
		return -1;
	for (int i = 0; i < nr; i++) {
		int err;

		c->own_fds[i] = own_open(&attr, target->cgroup_fd,
					 perf_cpu_map__cpu(target->cpus, i).cpu, PERF_FLAG_PID_CGROUP);
		if (c->own_fds[i] >= 0)
			continue;
		err = errno;
		own_fds_close(c);
		return open_failed(c, err, &attr);
	}
	counter_opened(c, target);
	c->nr_threads = 1;
	for (int i = 0; c->def.filter && i < nr; i++) {
		if (ioctl(c->own_fds[i], PERF_EVENT_IOC_SET_FILTER, c->def.filter)) {
			log_error("the kernel refused filter '%s' on '%s': %s",
				  c->def.filter, c->def.name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * --per-thread -a: the event opened on each thread of the machine, on any
 * CPU.  Threads end all the time on a busy machine, and libperf gives up
 * on an evsel when one of its threads is gone (as perf 6.1 then fails), so
 * these fds are the counter's own: a thread that has ended before its
 * counter, or its filter, is set up simply counts nothing.
 */
static int counter_open_threads(struct counter *c, const struct counter_target *target)
{
	struct perf_event_attr attr = counter_attr(c, target, PERF_FORMAT_TOTAL_TIME_ENABLED |
						   PERF_FORMAT_TOTAL_TIME_RUNNING);
	int nr = perf_thread_map__nr(target->threads);

	if (own_fds_new(c, 1, nr))
		return -1;
	for (int t = 0; t < nr; t++) {
		int fd = own_open(&attr, perf_thread_map__pid(target->threads, t), -1, 0);
		int err = errno;

		if (fd < 0 && err == ESRCH)
			continue;
		if (fd < 0) {
			own_fds_close(c);
			return open_failed(c, err, &attr);
		}
		c->own_fds[t] = fd;
		if (c->def.filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, c->def.filter)) {
			err = errno;
			close(fd);
			c->own_fds[t] = -1;
			if (err == ESRCH)
				continue;
			log_error("the kernel refused filter '%s' on '%s': %s",
				  c->def.filter, c->def.name, strerror(err));
			return -1;
		}
	}
	counter_opened(c, target);
	return 0;
}

/* One position's value: enabled and running times follow the count. */
static int own_read(const struct counter *c, size_t k, struct counter_value *value)
{
	uint64_t data[3];

	if (c->own_fds[k] < 0 ||
	    read(c->own_fds[k], data, sizeof(data)) != (ssize_t)sizeof(data))
		return -1;
	value->val = data[0];
	value->ena = data[1];
	value->run = data[2];
	return 0;
}

static void own_switch(const struct counter *c, bool on)
{
	for (size_t k = 0; k < own_fds_nr(c); k++)
		if (c->own_fds[k] >= 0)
			ioctl(c->own_fds[k], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

int counter_open(struct counter *c, const struct counter_target *target)
{
	struct perf_event_attr attr = counter_attr(c, target, PERF_FORMAT_TOTAL_TIME_ENABLED |
						   PERF_FORMAT_TOTAL_TIME_RUNNING);
	int err;

	c->users = 0;
	if (c->backing) {
		c->supported = c->backing->supported(c->backing_obj, c->backing_member);
		return 0;
	}
	if (c->def.tool != EVENT_TOOL_NONE) {
		/* The agent's own number (report/rows.c): no counter to open. */
		counter_opened(c, target);
		return 0;
	}
	if (target->cgroup)
		return counter_open_cgroup(c, target);
	if (target->all_threads)
		return counter_open_threads(c, target);
	err = evsel_open(&attr, target, &c->evsel);
	if (err) {
		c->evsel = NULL;
		return open_failed(c, err, &attr);
	}
	counter_opened(c, target);
	return counter_apply_filter(c, target);
}

/* Group reads: nr, time enabled, time running, then { value, id } per member. */
#define GROUP_READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID | \
			   PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

/* libperf keeps its fds to itself: find the leader's for each (cpu,
 * thread) by the id the kernel gave it: 0, -ENOMEM, or -ENOENT when
 * some are not found. */
static int group_find_leader_fds(struct counter_group *g, struct perf_evsel *leader,
				 int nr_cpus, int nr_threads)
{
	size_t nr = (size_t)nr_cpus * (size_t)nr_threads, found = 0;
	uint64_t *ids = calloc(nr, sizeof(*ids));
	struct dirent *entry;
	DIR *dir;

	g->leader_fds = malloc(nr * sizeof(*g->leader_fds));
	/* A row per leader fd, and one more for counter_read_index's reads
	 * of a single position, which leave the reading's rows as they are. */
	g->reading_data = malloc((nr + 1) * (3 + 2 * g->n) * sizeof(*g->reading_data));
	if (!ids || !g->leader_fds || !g->reading_data) {
		free(ids);
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		for (int thread = 0; thread < nr_threads; thread++) {
			struct perf_counts_values counts = { 0 };
			size_t k = (size_t)cpu * (size_t)nr_threads + (size_t)thread;

			if (perf_evsel__read(leader, cpu, thread, &counts))
				goto out;
			ids[k] = counts.id;
			g->leader_fds[k] = -1;
		}
	}
	dir = opendir("/proc/self/fd");
	while (dir && (entry = readdir(dir))) {
		int fd = atoi(entry->d_name);
		uint64_t id;

		if (entry->d_name[0] == '.' || ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
			continue;
		for (size_t k = 0; k < nr; k++) {
			if (ids[k] == id && g->leader_fds[k] < 0) {
				g->leader_fds[k] = fd;
				found++;
			}
		}
	}
	if (dir)
		closedir(dir);
out:
	free(ids);
	return found == nr ? 0 : -ENOENT;
}

static void group_free(struct counter_group *g)
{
	if (!g)
		return;
	perf_evlist__delete(g->evlist);	/* closes and frees its evsels */
	free(g->members);
	free(g->leader_fds);
	free(g->reading_data);
	free(g);
}

/*
 * A group through one evlist, attrs[0] its leader: 0, or an errno.  As
 * perf, the members are enabled and follow their leader.  A member enabled
 * by ioctl after its group went on a CPU-wide context waits for a
 * reschedule that may never come, and counts 0 (Linux 6.18 does so with
 * -a).
 */
static int group_evlist_open(struct perf_event_attr *attrs, size_t nr,
			     const struct counter_target *target, bool guest_bits,
			     struct counter_group **out)
{
	struct counter_group *g = calloc(1, sizeof(*g));
	struct perf_evsel *evsel;
	int err;

	if (!g || !(g->evlist = perf_evlist__new())) {
		free(g);
		return ENOMEM;
	}
	g->n = nr;
	for (size_t i = 0; i < nr; i++) {
		if (i > 0)
			attrs[i].disabled = attrs[i].enable_on_exec = 0;
		if (!guest_bits)
			attr_drop_guest_bits(&attrs[i]);
		evsel = evsel_new(&attrs[i]);
		if (!evsel) {
			group_free(g);
			return ENOMEM;
		}
		perf_evlist__add(g->evlist, evsel);
	}
	perf_evlist__set_maps(g->evlist, target->cpus, target->threads);
	perf_evlist__set_leader(g->evlist);
	err = perf_evlist__open(g->evlist);
	if (err) {
		group_free(g);
		return open_errno(err);
	}
	*out = g;
	return 0;
}

/* The whole group {a,b} through one evlist: 0, or an errno. */
static int group_try_open(struct counter *c, size_t n, const struct counter_target *target,
			  bool guest_bits, struct counter_group **out)
{
	struct perf_event_attr *attrs = calloc(n, sizeof(*attrs));
	struct perf_evsel *evsel;
	size_t i = 0;
	int err;

	if (!attrs)
		return ENOMEM;
	for (i = 0; i < n; i++)
		attrs[i] = counter_attr(&c[i], target, GROUP_READ_FORMAT);
	err = group_evlist_open(attrs, n, target, guest_bits, out);
	free(attrs);
	if (err)
		return err;
	i = 0;
	perf_evlist__for_each_evsel((*out)->evlist, evsel)
		c[i++].evsel = evsel;
	return 0;
}

/* The opened group g's members are c[0..n): 0, or -1 (said), or a filter's error. */
static int group_take(struct counter *c, size_t n, struct counter_group *g,
		      const struct counter_target *target)
{
	int err;

	for (size_t i = 0; i < n; i++) {
		counter_opened(&c[i], target);
		c[i].group = g;
		c[i].group_pos = i;
	}
	err = group_find_leader_fds(g, c[0].evsel, c[0].nr_cpus, c[0].nr_threads);
	if (err) {
		log_error(err == -ENOMEM ? "group '%s': out of memory" :
			  "cannot find the file descriptors of group '%s'", c[0].def.name);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((err = counter_apply_filter(&c[i], target)))
			return err;
	return 0;
}

int counter_open_group(struct counter *c, size_t n, const struct counter_target *target)
{
	struct counter_group *g = NULL;
	bool lacking = false;
	int err;

	for (size_t i = 0; i < n; i++)
		c[i].users = 0;
	if (target->cgroup) {
		log_error("group '%s': groups {a,b} with -G are not supported yet", c[0].def.name);
		return -1;
	}
	err = group_try_open(c, n, target, true, &g);
	if (err == EINVAL)
		err = group_try_open(c, n, target, false, &g);
	if (err == ESRCH && target->all_threads)
		return -ESRCH;
	if (err == ENOMEM) {
		log_error("group '%s': out of memory", c[0].def.name);
		return -1;
	}
	if (err == 0)
		return group_take(c, n, g, target);
	/* Which members does the machine lack?  Each is tried alone. */
	for (size_t i = 0; i < n; i++) {
		struct perf_event_attr attr = counter_attr(&c[i], target,
							   PERF_FORMAT_TOTAL_TIME_ENABLED);
		struct perf_evsel *probe = NULL;
		int perr = evsel_open(&attr, target, &probe);

		if (probe) {
			perf_evsel__close(probe);
			perf_evsel__delete(probe);
		}
		c[i].evsel = NULL;
		c[i].supported = !(perr && errno_is_unsupported(perr, &attr));
		lacking |= !c[i].supported;
	}
	if (!lacking) {
		report_open_error(&c[0], err);
		return -1;
	}
	/* As perf 6.1: the group counts nothing, the others show <not counted>. */
	for (size_t i = 0; i < n; i++) {
		c[i].unopened = c[i].supported;
		c[i].idle_valid = false;
		c[i].nr_cpus = c[i].nr_threads = 0;
	}
	return 0;
}

bool counter_may_join_read_group(const struct counter *c, const struct counter_target *target)
{
	/* Not every thread of the machine: a thread that ends before the
	 * group's filters are set again would leave the threads after it
	 * unfiltered, with no map to try again with. */
	return c->supported && c->evsel && !c->group && !c->backing && !c->own_fds &&
	       c->def.tool == EVENT_TOOL_NONE && !target->cgroup && !target->all_threads &&
	       (c->def.attr.type == PERF_TYPE_SOFTWARE || c->def.attr.type == PERF_TYPE_TRACEPOINT);
}

/* The read group through one evlist, the dummy leader first: 0, or an errno. */
static int read_group_try_open(struct counter **c, size_t n, const struct counter_target *target,
			       bool guest_bits, struct counter_group **out)
{
	struct perf_event_attr *attrs = calloc(n + 1, sizeof(*attrs));
	int err;

	if (!attrs)
		return ENOMEM;
	attrs[0] = (struct perf_event_attr){
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attrs[0]),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.inherit = target->inherit,
		.enable_on_exec = target->enable_on_exec,
		.read_format = GROUP_READ_FORMAT,
	};
	for (size_t i = 0; i < n; i++)
		attrs[i + 1] = counter_attr(c[i], target, GROUP_READ_FORMAT);
	err = group_evlist_open(attrs, n + 1, target, guest_bits, out);
	free(attrs);
	return err;
}

int counter_open_read_group(struct counter **c, size_t n, const struct counter_target *target)
{
	struct counter_group *g = NULL;
	struct perf_evsel *evsel, *leader = NULL;
	size_t i = 0;
	int err;

	if (n < 2)
		return 0;
	err = read_group_try_open(c, n, target, true, &g);
	if (err == EINVAL)
		err = read_group_try_open(c, n, target, false, &g);
	if (err == ENOMEM)
		return -ENOMEM;
	if (err)
		return 0;	/* each counter keeps its own fds */
	g->members = malloc(n * sizeof(*g->members));
	if (!g->members) {
		group_free(g);
		return -ENOMEM;
	}
	perf_evlist__for_each_evsel(g->evlist, evsel) {
		if (!leader) {
			leader = evsel;
			continue;
		}
		/* The new fds replace the ones opened alone. */
		perf_evsel__close(c[i]->evsel);
		perf_evsel__delete(c[i]->evsel);
		c[i]->evsel = evsel;
		c[i]->group = g;
		c[i]->in_read_group = true;
		c[i]->group_pos = i + 1;
		c[i]->idle_valid = false;	/* its times are the leader's: read */
		i++;
	}
	g->open_members = n;
	memcpy(g->members, c, n * sizeof(*g->members));
	/* With enable_on_exec the kernel turns the leader on at exec. */
	g->leader_on = target->enable_on_exec;
	/* The members are the group's now: counter_close frees it. */
	err = group_find_leader_fds(g, leader, c[0]->nr_cpus, c[0]->nr_threads);
	if (err == -ENOMEM)
		return -ENOMEM;
	if (err)
		log_warn("cannot find the read group's file descriptors: "
			 "its counters read as 0");
	for (i = 0; i < n; i++)
		if (counter_apply_filter(c[i], target))
			log_warn("the filter of '%s' did not apply again", c[i]->def.name);
	return 0;
}

void counter_close(struct counter *c)
{
	own_fds_close(c);
	/* A {a,b} group is freed with its leader, before its other members
	 * are closed: only a read group's member may look at its group. */
	if (c->group && c->in_read_group) {
		/* The group's evlist holds every member's evsel; the run is
		 * over, so the group is not synced again. */
		if (--c->group->open_members == 0)
			group_free(c->group);
		c->group = NULL;
		c->in_read_group = false;
		c->evsel = NULL;
		return;
	}
	if (c->group) {
		/* The leader's evlist holds every member's evsel. */
		if (c->group_pos == 0)
			group_free(c->group);
		c->group = NULL;
		c->evsel = NULL;
		return;
	}
	if (!c->evsel)
		return;
	perf_evsel__close(c->evsel);
	perf_evsel__delete(c->evsel);
	c->evsel = NULL;
}

/*
 * One group read of every leader fd into reading_data: nr, time enabled,
 * time running, then { value, id } per member.
 *
 * The kernel refuses a group read with ECHILD while a copy of the group
 * inherited by a child task differs from it: a thread or child process is
 * exiting and its copy is being taken apart (the kernel's
 * __perf_read_group_add).  That lasts microseconds, unless the exiting task
 * is preempted half-way, so the read is tried again, waiting a little
 * longer each time, for up to a second.  Without this a window closed as a
 * workload's thread exits read as <not counted>.  A read that still fails
 * leaves nr 0, and the fd is skipped.
 */
#define GROUP_READ_WAIT_NS 1000000000L

static bool group_read_fd(const struct counter_group *g, size_t k, uint64_t *data)
{
	size_t bytes = (3 + 2 * g->n) * sizeof(*data);
	struct timespec pause = { 0, 1000 };
	long waited = 0;

	for (;;) {
		ssize_t n = read(g->leader_fds[k], data, bytes);

		if (n == (ssize_t)bytes && data[0] == g->n)
			return true;
		if (n >= 0 || errno != ECHILD || waited >= GROUP_READ_WAIT_NS)
			break;
		nanosleep(&pause, NULL);
		waited += pause.tv_nsec;
		if (pause.tv_nsec < 1000000)
			pause.tv_nsec *= 2;
	}
	data[0] = 0;
	return false;
}

static void group_read(struct counter_group *g, size_t nr_fds)
{
	for (size_t k = 0; k < nr_fds; k++)
		group_read_fd(g, k, g->reading_data + k * (3 + 2 * g->n));
}

/* A member's value from the leader's fds: its own count, the group's
 * enabled and running times (the whole group is scheduled as one).  The
 * members share one read per reading. */
static void counter_read_group(struct counter *c, struct counter_value *value, bool fresh)
{
	struct counter_group *g = c->group;
	size_t words = 3 + 2 * g->n, nr = (size_t)c->nr_cpus * (size_t)c->nr_threads;
	unsigned long id = reading_id();

	if (fresh || !id || g->reading_id != id)
		group_read(g, nr);
	g->reading_id = id;
	for (size_t k = 0; k < nr; k++) {
		const uint64_t *data = g->reading_data + k * words;

		if (data[0] != g->n)
			continue;
		value->ena += data[1];
		value->run += data[2];
		value->val += data[3 + 2 * c->group_pos];
	}
}

static uint64_t timespec_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* A tool's clock: now, or the end of the run once it is over. */
static uint64_t counter_tool_now(const struct counter *c)
{
	struct timespec now;

	if (c->tool.ended)
		return c->tool.end_ns;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return timespec_ns(&now);
}

/*
 * perf's tool events, counted by the agent: duration_time is the wall
 * time its views were open (so the run's, a window's or an interval's);
 * user_time and system_time are the workload's, known at its end.  As a
 * counter they always run: enabled and running equal the value.
 */
static void counter_read_tool(const struct counter *c, struct counter_value *value)
{
	uint64_t v;

	if (c->def.tool == EVENT_TOOL_DURATION_TIME)
		v = c->tool.acc_ns + (c->users ? counter_tool_now(c) - c->tool.since_ns : 0);
	else
		v = c->tool.ended ? c->tool.rusage_ns : 0;
	value->val = value->ena = value->run = v;
}

void counter_tool_start(struct counter *c, const struct timespec *started)
{
	if (c->def.tool != EVENT_TOOL_NONE && c->users)
		c->tool.since_ns = timespec_ns(started);
}

void counter_tool_end(struct counter *c, const struct timespec *ended, uint64_t user_ns,
		      uint64_t sys_ns)
{
	if (c->def.tool == EVENT_TOOL_NONE)
		return;
	c->tool.end_ns = timespec_ns(ended);
	c->tool.ended = true;
	c->tool.rusage_ns = c->def.tool == EVENT_TOOL_USER_TIME ? user_ns : sys_ns;
}

/* The counter's value from the kernel (or its backing) now; a group
 * member may take its group's read from earlier in the reading, unless
 * fresh. */
static void counter_read_now(struct counter *c, struct counter_value *value, bool fresh)
{
	memset(value, 0, sizeof(*value));
	if (c->backing) {
		c->backing->read(c->backing_obj, c->backing_member, value);
		return;
	}
	if (c->group) {
		counter_read_group(c, value, fresh);
		return;
	}
	for (size_t k = 0; c->own_fds && k < own_fds_nr(c); k++) {
		struct counter_value one;

		if (own_read(c, k, &one))
			continue;	/* a thread that had ended: nothing */
		value->val += one.val;
		value->ena += one.ena;
		value->run += one.run;
	}
	if (!c->evsel)
		return;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		for (int thread = 0; thread < c->nr_threads; thread++) {
			struct perf_counts_values counts = { 0 };

			if (perf_evsel__read(c->evsel, cpu, thread, &counts))
				continue;	/* should not happen on an open fd; skip it */
			value->val += counts.val;
			value->ena += counts.ena;
			value->run += counts.run;
		}
	}
}

void counter_read(struct counter *c, struct counter_value *value)
{
	unsigned long id = reading_id();

	if (c->def.tool != EVENT_TOOL_NONE) {
		counter_read_tool(c, value);
		return;
	}
	if (c->idle_valid && c->users == 0) {
		*value = c->idle_value;
		return;
	}
	if (id && c->reading_id == id) {
		*value = c->reading_value;
		return;
	}
	counter_read_now(c, value, false);
	c->reading_id = id;
	c->reading_value = *value;
}

/* One position of a group member: one read of the leader's fd there,
 * into the scratch row after the reading's rows. */
static int counter_read_group_index(struct counter *c, size_t k, struct counter_value *value)
{
	const struct counter_group *g = c->group;
	size_t nr = (size_t)c->nr_cpus * (size_t)c->nr_threads;
	uint64_t *data = g->reading_data + nr * (3 + 2 * g->n);

	if (!group_read_fd(g, k, data))
		return -1;
	value->ena = data[1];
	value->run = data[2];
	value->val = data[3 + 2 * c->group_pos];
	return 0;
}

int counter_read_index(struct counter *c, int cpu, int thread, struct counter_value *value)
{
	struct perf_counts_values counts = { 0 };

	memset(value, 0, sizeof(*value));
	if (c->def.tool != EVENT_TOOL_NONE) {
		if (cpu != 0)
			return -1;
		counter_read_tool(c, value);
		return 0;
	}
	if (c->backing || (!c->evsel && !c->own_fds) || cpu < 0 || cpu >= c->nr_cpus ||
	    thread < 0 || thread >= c->nr_threads)
		return -1;
	if (c->own_fds)
		return own_read(c, (size_t)cpu * (size_t)c->nr_threads + (size_t)thread, value);
	if (c->group)
		return counter_read_group_index(c, (size_t)cpu * (size_t)c->nr_threads +
						(size_t)thread, value);
	if (perf_evsel__read(c->evsel, cpu, thread, &counts))
		return -1;
	value->val = counts.val;
	value->ena = counts.ena;
	value->run = counts.run;
	return 0;
}

static void counter_tool_retain(struct counter *c)
{
	if (c->def.tool != EVENT_TOOL_NONE && c->users == 0)
		c->tool.since_ns = counter_tool_now(c);
}

static void counter_tool_release(struct counter *c)
{
	if (c->def.tool != EVENT_TOOL_NONE && c->users == 0)
		c->tool.acc_ns += counter_tool_now(c) - c->tool.since_ns;
}

/* The evsel to enable and disable: a group member's is its leader's
 * business (a read group's: read_group_sync). */
static struct perf_evsel *counter_switch(const struct counter *c)
{
	return c->group && c->group_pos > 0 ? NULL : c->evsel;
}

/*
 * Bring a read group's leader in step with its members' users: on while
 * any member is needed, off otherwise.  The members are always enabled and
 * count while the leader is on, so a member no view needs may count then
 * too; no view sees it, as every view's value is a difference of two
 * reads taken while its counter was needed.  A window over the group's
 * events thus costs one ioctl to open and one to close however many events
 * it has, where perf stat's enable and disable make one per event.
 */
static void read_group_sync(struct counter_group *g)
{
	struct perf_evsel *leader = perf_evlist__next(g->evlist, NULL);
	bool want = false;

	for (size_t i = 0; i + 1 < g->n && !want; i++)	/* n: the leader too */
		want = g->members[i]->users > 0;
	if (want != g->leader_on) {
		if (want)
			perf_evsel__enable(leader);
		else
			perf_evsel__disable(leader);
	}
	g->leader_on = want;
}

/* Read groups changed inside a batch, synced at its end. */
static unsigned batch_depth;
static struct counter_group *batch_dirty;

static void read_group_changed(struct counter_group *g)
{
	if (!batch_depth) {
		read_group_sync(g);
		return;
	}
	if (!g->dirty) {
		g->dirty = true;
		g->dirty_next = batch_dirty;
		batch_dirty = g;
	}
}

void counter_batch_begin(void)
{
	batch_depth++;
}

void counter_batch_end(void)
{
	if (batch_depth == 0 || --batch_depth > 0)
		return;
	while (batch_dirty) {
		struct counter_group *g = batch_dirty;

		batch_dirty = g->dirty_next;
		g->dirty = false;
		read_group_sync(g);
	}
}

void counter_retain(struct counter *c)
{
	counter_tool_retain(c);
	if (c->users == 0 && c->own_fds)
		own_switch(c, true);
	if (c->users++ == 0) {
		if (c->in_read_group)
			read_group_changed(c->group);
		if (counter_switch(c))
			perf_evsel__enable(c->evsel);
		/* Its value at the instant it was enabled is the idle one: the
		 * rest of this reading sees that, not a read from before. */
		c->reading_id = c->idle_valid ? reading_id() : 0;
		c->reading_value = c->idle_value;
	}
	c->idle_valid = false;
}

void counter_retain_at_exec(struct counter *c)
{
	counter_tool_retain(c);
	c->users++;
	c->idle_valid = false;
}

void counter_release(struct counter *c)
{
	if (c->users == 0)
		return;
	--c->users;
	counter_tool_release(c);
	if (c->users == 0 && (c->evsel || c->own_fds)) {
		if (c->own_fds)
			own_switch(c, false);
		else if (counter_switch(c))
			perf_evsel__disable(c->evsel);
		if (c->in_read_group) {
			/* Not read here: the next read, after the group is in
			 * step (at once, or at the batch's end), is the group's
			 * one read for every member the command released. */
			c->group->reading_id = 0;
			c->reading_id = 0;
			read_group_changed(c->group);
			return;
		}
		/* Read once now; it cannot move until the next retain. */
		counter_read_now(c, &c->idle_value, true);
		c->idle_valid = true;
	}
}
