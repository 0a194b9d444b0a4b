/*
 * range_groups: open the range groups through libperf, watch and drain
 * their ring buffers, decode the records for range_account.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>

#include "agent/base/log.h"
#include "agent/ranges/range_account.h"
#include "agent/ranges/range_groups.h"

/* See counter.c: exported by libperf.a, declared in an internal header. */
int perf_evsel__apply_filter(struct perf_evsel *evsel, const char *filter);

/*
 * Records younger than this may still have older company on another CPU.
 * A client waiting for its numbers gets none: the records of its own
 * thread were written before its command (program order), and another
 * thread's record still being written on a CPU at that instant is taken at
 * the next drain -- out of order only if that thread also moved CPUs then.
 */
#define DRAIN_MARGIN_NS 2000000ull
#define DRAIN_MARGIN_COMMAND_NS 0ull

/* Group reads (in records and from the leaders' fds): nr, time enabled,
 * time running, then { value, id } per member. */
#define GROUP_READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID | \
			   PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define GROUP_HEADER_WORDS 3

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		     PERF_SAMPLE_CPU | PERF_SAMPLE_READ)

/* A decoded record waiting for its turn in time order. */
struct pending {
	bool lost;		/* a PERF_RECORD_LOST: how many in lost_count */
	uint64_t lost_count;
	uint64_t time;
	uint32_t tid, cpu;
	unsigned root;
	int member;
	size_t values;		/* offset of nr_members values in the value pool */
	uint64_t seq;		/* decode order: ties in time keep buffer order */
};

struct leader {
	uint64_t id;
	int fd;			/* found by id: libperf has no fd accessor */
	unsigned root;
	int cpu_idx;
};

struct watch_arg {
	void (*fn)(void *arg);
	void *arg;
};

struct range_groups {
	struct perf_evlist *evlist;
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct perf_evsel *leader_evsel;
	pid_t *roots;
	size_t nr_roots;
	bool cpu_wide;

	size_t nr_members;		/* caller's events + 1 */
	bool *supported;		/* per member */
	int *member_of_position;	/* group position -> member */
	size_t nr_positions;
	unsigned nr_cpus;		/* highest CPU number + 1 */

	struct leader *leaders;		/* per (cpu, root) */
	size_t nr_leaders;
	struct event **watches;
	struct watch_arg watch;

	struct pending *pending;
	size_t nr_pending, cap_pending;
	/* Per ring buffer (in libperf's order): the time of its last record.
	 * A loss in that buffer happened after it and is accounted there. */
	uint64_t *buffer_last_time;
	size_t nr_buffers;
	size_t buffer_bytes;		/* a ring buffer's data size */
	uint64_t next_seq;
	uint64_t *pool;			/* values of pending records */
	size_t nr_pool, cap_pool;
	uint64_t lost;
	/* Records dropped for want of memory, told to the account as lost
	 * at the next drain, so that the views show incomplete. */
	uint64_t dropped;
	/* Made at open, so that reading totals never fails for want of
	 * memory: one group read, and a value per (cpu, member) or member. */
	uint64_t *read_buf, *totals;
};

static void attr_common(struct perf_event_attr *attr, bool samples, bool cpu_wide)
{
	attr->size = sizeof(*attr);
	/* Per task, follow the roots' future children; CPU-wide sees all. */
	attr->inherit = !cpu_wide;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;	/* comparable with the agent's clock */
	attr->sample_id_all = 1;
	if (samples) {
		attr->sample_period = 1;
		attr->sample_type = SAMPLE_TYPE;
		attr->read_format = GROUP_READ_FORMAT;
	} else {
		attr->read_format = PERF_FORMAT_ID;
	}
}

static struct perf_event_attr switch_sampler(const struct range_groups_params *p)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	};

	attr_common(&attr, true, p->cpu_wide);
	/*
	 * Opened disabled, and enabled when every member is in: a member
	 * added to a group already running on a CPU context would stay idle
	 * until the group is next scheduled in, which for -a is not soon.
	 */
	attr.disabled = 1;
	attr.enable_on_exec = p->enable_on_exec;
	attr.watermark = 1;
	attr.wakeup_watermark = (unsigned)p->pages * (unsigned)sysconf(_SC_PAGESIZE) / 2;
	return attr;
}

/* Can the machine count this event at all?  (A group with one member the
 * PMU lacks fails whole, so such members are left out up front.) */
static bool event_supported(struct perf_event_attr attr, struct perf_thread_map *threads,
			    struct perf_cpu_map *cpus, bool cpu_wide)
{
	/* A per-task probe on any CPU, or a CPU-wide one on the first CPU. */
	struct perf_cpu_map *any = cpu_wide ? perf_cpu_map__get(cpus) : perf_cpu_map__new_any_cpu();
	struct perf_evsel *probe;
	bool ok;

	attr.disabled = 1;
	attr.inherit = 0;
	probe = perf_evsel__new(&attr);
	ok = probe && perf_evsel__open(probe, any, threads) == 0;
	if (probe) {
		perf_evsel__close(probe);
		perf_evsel__delete(probe);
	}
	perf_cpu_map__put(any);
	return ok;
}

static int groups_add_members(struct range_groups *g, const struct range_groups_params *p)
{
	struct perf_event_attr leader = switch_sampler(p);

	g->member_of_position = calloc(g->nr_members, sizeof(int));
	g->leader_evsel = perf_evsel__new(&leader);
	if (!g->member_of_position || !g->leader_evsel) {
		if (g->leader_evsel)
			perf_evsel__delete(g->leader_evsel);
		g->leader_evsel = NULL;
		return -ENOMEM;
	}
	perf_evlist__add(g->evlist, g->leader_evsel);
	g->supported[0] = true;
	g->member_of_position[g->nr_positions++] = 0;
	for (size_t i = 0; i < p->nr_events; i++) {
		struct perf_event_attr attr = p->events[i].attr;
		struct perf_evsel *evsel;

		attr_common(&attr, p->events[i].samples, p->cpu_wide);
		/* Only the PMU's events may be missing; a resolved software event
		 * or tracepoint opens, and probing each would cost a group of
		 * a hundred events a second. */
		if (!p->events[i].samples && attr.type == PERF_TYPE_HARDWARE &&
		    !event_supported(attr, g->threads, g->cpus, p->cpu_wide))
			continue;
		evsel = perf_evsel__new(&attr);
		if (!evsel)
			return -ENOMEM;
		perf_evlist__add(g->evlist, evsel);
		g->supported[i + 1] = true;
		g->member_of_position[g->nr_positions++] = (int)i + 1;
	}
	return 0;
}

static int groups_apply_filters(struct range_groups *g, const struct range_groups_params *p)
{
	struct perf_evsel *evsel;
	size_t pos = 0;

	perf_evlist__for_each_evsel(g->evlist, evsel) {
		int member = g->member_of_position[pos++];
		const struct range_group_event *ev = member ? &p->events[member - 1] : NULL;

		if (!ev || !ev->filter)
			continue;
		if (perf_evsel__apply_filter(evsel, ev->filter)) {
			log_error("the kernel refused filter '%s' on '%s': %s", ev->filter,
				  ev->name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* libperf keeps its fds to itself; find each group leader's by its id. */
static int groups_find_leader_fds(struct range_groups *g)
{
	struct dirent *entry;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return -1;
	while ((entry = readdir(dir))) {
		int fd = atoi(entry->d_name);
		uint64_t id;

		if (entry->d_name[0] == '.' || ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
			continue;
		for (size_t i = 0; i < g->nr_leaders; i++)
			if (g->leaders[i].id == id)
				g->leaders[i].fd = fd;
	}
	closedir(dir);
	for (size_t i = 0; i < g->nr_leaders; i++)
		if (g->leaders[i].fd < 0)
			return -1;
	return 0;
}

static int groups_map_leaders(struct range_groups *g)
{
	int nr_cpus = perf_cpu_map__nr(g->cpus);

	g->leaders = calloc((size_t)nr_cpus * g->nr_roots, sizeof(*g->leaders));
	if (!g->leaders)
		return -ENOMEM;
	for (int c = 0; c < nr_cpus; c++) {
		for (size_t r = 0; r < g->nr_roots; r++) {
			struct perf_counts_values counts = { 0 };
			struct leader *l = &g->leaders[g->nr_leaders++];

			if (perf_evsel__read(g->leader_evsel, c, (int)r, &counts))
				return -1;
			*l = (struct leader){ counts.id, -1, (unsigned)r, c };
		}
	}
	return groups_find_leader_fds(g);
}

/* The maps, the evlist and what the groups are read into: 0, or -ENOMEM. */
static int groups_alloc(struct range_groups *g, const struct range_groups_params *p)
{
	g->nr_members = p->nr_events + 1;
	g->supported = calloc(g->nr_members, sizeof(bool));
	g->cpu_wide = p->cpu_wide;
	if (p->cpu_wide) {
		g->roots = calloc(1, sizeof(pid_t));
		if (!g->roots)
			return -ENOMEM;
		g->roots[0] = -1;
		g->nr_roots = 1;
		g->cpus = perf_cpu_map__new(p->cpu_list);
		g->threads = perf_thread_map__new_dummy();
	} else {
		g->roots = malloc((p->nr_roots ? p->nr_roots : 1) * sizeof(pid_t));
		if (!g->roots)
			return -ENOMEM;
		memcpy(g->roots, p->roots, p->nr_roots * sizeof(pid_t));
		g->nr_roots = p->nr_roots;
		g->cpus = perf_cpu_map__new_online_cpus();
		g->threads = perf_thread_map__new_array((int)p->nr_roots, g->roots);
	}
	if (!g->supported || !g->cpus || !g->threads)
		return -ENOMEM;
	g->nr_cpus = (unsigned)perf_cpu_map__max(g->cpus).cpu + 1;
	g->evlist = perf_evlist__new();
	g->read_buf = calloc(GROUP_HEADER_WORDS + 2 * g->nr_members, sizeof(uint64_t));
	g->totals = calloc((size_t)g->nr_cpus * g->nr_members, sizeof(uint64_t));
	if (!g->evlist || !g->read_buf || !g->totals)
		return -ENOMEM;
	return groups_add_members(g, p);
}

struct range_groups *range_groups_open(const struct range_groups_params *p)
{
	struct range_groups *g = calloc(1, sizeof(*g));
	int err;

	if (!g || groups_alloc(g, p)) {
		log_error("out of memory");
		goto fail;
	}
	perf_evlist__set_maps(g->evlist, g->cpus, g->threads);
	perf_evlist__set_leader(g->evlist);
	err = perf_evlist__open(g->evlist);
	if (err) {
		log_error("cannot open the range's perf group: %s", strerror(-err > 0 ? -err : errno));
		goto fail;
	}
	if (groups_apply_filters(g, p))
		goto fail;
	g->buffer_bytes = (size_t)p->pages * (size_t)sysconf(_SC_PAGESIZE);
	if (perf_evlist__mmap(g->evlist, p->pages)) {
		log_error("cannot map %d pages of ring buffer per CPU: %s (try a smaller -m, or "
			  "raise /proc/sys/kernel/perf_event_mlock_kb)", p->pages, strerror(errno));
		goto fail;
	}
	err = groups_map_leaders(g);
	if (err) {
		log_error(err == -ENOMEM ? "out of memory" :
			  "cannot find the range groups' file descriptors");
		goto fail;
	}
	if (!p->enable_on_exec)
		perf_evsel__enable(g->leader_evsel);
	return g;
fail:
	range_groups_close(g);
	return NULL;
}

void range_groups_close(struct range_groups *g)
{
	if (!g)
		return;
	for (size_t i = 0; g->watches && i < g->nr_leaders; i++)
		if (g->watches[i])
			event_free(g->watches[i]);
	if (g->evlist) {
		perf_evlist__munmap(g->evlist);
		perf_evlist__close(g->evlist);
		perf_evlist__delete(g->evlist);	/* deletes its evsels */
	}
	perf_cpu_map__put(g->cpus);
	perf_thread_map__put(g->threads);
	free(g->watches);
	free(g->leaders);
	free(g->supported);
	free(g->member_of_position);
	free(g->roots);
	free(g->pending);
	free(g->pool);
	free(g->buffer_last_time);
	free(g->read_buf);
	free(g->totals);
	free(g);
}

size_t range_groups_nr_members(const struct range_groups *g)
{
	return g->nr_members;
}

unsigned range_groups_nr_cpus(const struct range_groups *g)
{
	return g->nr_cpus;
}

bool range_groups_supported(const struct range_groups *g, size_t member)
{
	return member < g->nr_members && g->supported[member];
}

static void on_buffer_ready(evutil_socket_t fd, short what, void *arg)
{
	struct watch_arg *w = arg;

	(void)fd, (void)what;
	w->fn(w->arg);
}

int range_groups_watch(struct range_groups *g, struct event_base *base,
		       void (*fn)(void *arg), void *arg)
{
	g->watch = (struct watch_arg){ fn, arg };
	g->watches = calloc(g->nr_leaders ? g->nr_leaders : 1, sizeof(*g->watches));
	if (!g->watches)
		return -ENOMEM;
	/* Each CPU's buffer belongs to its first root's leader. */
	for (size_t i = 0; i < g->nr_leaders; i++) {
		if (g->leaders[i].root != 0)
			continue;
		g->watches[i] = event_new(base, g->leaders[i].fd, EV_READ | EV_PERSIST,
					  on_buffer_ready, &g->watch);
		if (!g->watches[i])
			return -ENOMEM;
		if (event_add(g->watches[i], NULL))
			return -1;
	}
	return 0;
}

/* ---- decoding ------------------------------------------------------------ */

static unsigned root_of_leader(const struct range_groups *g, uint64_t leader_id)
{
	for (size_t i = 0; i < g->nr_leaders; i++)
		if (g->leaders[i].id == leader_id)
			return g->leaders[i].root;
	return 0;
}

/* Room for one record's values, or NULL out of memory. */
static uint64_t *pool_take(struct range_groups *g, size_t *offset)
{
	if (g->nr_pool + g->nr_members > g->cap_pool) {
		size_t cap = (g->cap_pool + g->nr_members) * 2;
		uint64_t *pool = realloc(g->pool, cap * sizeof(*pool));

		if (!pool)
			return NULL;
		g->pool = pool;
		g->cap_pool = cap;
	}
	*offset = g->nr_pool;
	g->nr_pool += g->nr_members;
	memset(g->pool + *offset, 0, g->nr_members * sizeof(*g->pool));
	return g->pool + *offset;
}

/* A new pending record, or NULL out of memory. */
static struct pending *pending_add(struct range_groups *g)
{
	if (g->nr_pending == g->cap_pending) {
		size_t cap = g->cap_pending ? 2 * g->cap_pending : 1024;
		struct pending *pending = realloc(g->pending, cap * sizeof(*pending));

		if (!pending)
			return NULL;
		g->pending = pending;
		g->cap_pending = cap;
	}
	g->pending[g->nr_pending].seq = g->next_seq++;
	return &g->pending[g->nr_pending++];
}

/*
 * A group read: { nr, enabled, running, { value, id } x nr } in group
 * order.  The first id is the leader's (the root's group, by id); the
 * position of sampler_id says which member wrote the record.  Returns the
 * words read, 0 when the record is malformed.
 */
static size_t decode_group(struct range_groups *g, const uint64_t *p, const uint64_t *end,
			   struct pending *rec, uint64_t sampler_id)
{
	uint64_t nr = p < end ? p[0] : 0;
	const uint64_t *pairs = p + GROUP_HEADER_WORDS;
	uint64_t *values;

	if (nr == 0 || nr > g->nr_positions || pairs + 2 * nr > end)
		return 0;
	values = pool_take(g, &rec->values);
	if (!values) {
		g->dropped++;
		return 0;
	}
	rec->member = -1;
	rec->root = root_of_leader(g, pairs[1]);
	for (uint64_t i = 0; i < nr; i++) {
		int member = g->member_of_position[i];

		values[member] = pairs[2 * i];
		if (pairs[2 * i + 1] == sampler_id)
			rec->member = member;
	}
	return GROUP_HEADER_WORDS + 2 * (size_t)nr;
}

/* SAMPLE: id, pid/tid, time, cpu/res, group read. */
static void decode_sample(struct range_groups *g, const union perf_event *ev)
{
	const uint64_t *p = (const uint64_t *)(&ev->header + 1);
	const uint64_t *end = (const uint64_t *)((const char *)ev + ev->header.size);
	struct pending *rec = pending_add(g);

	if (!rec) {
		g->dropped++;
		return;
	}
	rec->lost = false;
	rec->tid = (uint32_t)(p[1] >> 32);
	rec->time = p[2];
	rec->cpu = (uint32_t)p[3];
	if (p + 4 > end || !decode_group(g, p + 4, end, rec, p[0]))
		g->nr_pending--;	/* malformed: dropped, never misread */
}

/* LOST: id, lost, then sample_id (pid/tid, time, cpu/res, id): accounted
 * in time order with the records around it. */
static void decode_lost(struct range_groups *g, const union perf_event *ev, uint64_t after)
{
	const uint64_t *p = (const uint64_t *)(&ev->header + 1);
	const uint64_t *end = (const uint64_t *)((const char *)ev + ev->header.size);
	struct pending *rec;

	g->lost += ev->lost.lost;
	rec = pending_add(g);
	if (!rec) {
		g->dropped += ev->lost.lost ? ev->lost.lost : 1;
		return;
	}
	rec->tid = 0;
	rec->root = 0;
	rec->lost = true;
	rec->lost_count = ev->lost.lost;
	rec->member = -1;
	/*
	 * The LOST record is written when room comes back, long after the
	 * records it stands for: it is placed right after the buffer's last
	 * record before it, so that no record of another CPU written after
	 * the lost ones closes a stretch before the loss is known.
	 */
	rec->time = after + 1;
	rec->cpu = p + 5 <= end ? (uint32_t)p[4] : UINT32_MAX;
	rec->values = SIZE_MAX;
}

static void decode_one(struct range_groups *g, const union perf_event *ev, uint64_t *last_time)
{
	switch (ev->header.type) {
	case PERF_RECORD_SAMPLE:
		decode_sample(g, ev);
		if (g->nr_pending)
			*last_time = g->pending[g->nr_pending - 1].time;
		break;
	case PERF_RECORD_LOST:
		decode_lost(g, ev, *last_time);
		break;
	}
}

/*
 * Read one buffer, buffer b in libperf's order; returns the bytes read.
 * No perf_mmap__read_done(): it moves the read position to the buffer's
 * head as it is now, skipping whatever the kernel wrote since the loop saw
 * the end.  Those records are read on the next drain instead of lost.
 */
static size_t read_buffer(struct range_groups *g, struct perf_mmap *map, size_t b)
{
	union perf_event *ev;
	size_t bytes = 0;

	if (b == g->nr_buffers) {
		uint64_t *grown = realloc(g->buffer_last_time, (b + 1) * sizeof(*grown));

		if (!grown) {
			g->dropped++;	/* its records are not read this time */
			return 0;
		}
		g->buffer_last_time = grown;
		g->buffer_last_time[g->nr_buffers++] = 0;
	}
	if (perf_mmap__read_init(map) < 0)
		return 0;
	while ((ev = perf_mmap__read_event(map))) {
		bytes += ev->header.size;
		decode_one(g, ev, &g->buffer_last_time[b]);
		perf_mmap__consume(map);
	}
	return bytes;
}

/*
 * Read every buffer; returns the latest time records may be accounted up
 * to.  A buffer read more than a quarter full may be overflowing: records
 * it loses come after its last one, and its LOST record shows only on a
 * later read, so nothing after its last record is accounted yet.
 */
static uint64_t read_buffers(struct range_groups *g)
{
	struct perf_mmap *map;
	uint64_t safe = UINT64_MAX;
	size_t b = 0;

	perf_evlist__for_each_mmap(g->evlist, map, false) {
		if (read_buffer(g, map, b) > g->buffer_bytes / 4 && g->buffer_last_time[b] < safe)
			safe = g->buffer_last_time[b];
		b++;
	}
	return safe;
}

static int pending_by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return (x->time > y->time) - (x->time < y->time);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Account the pending records up to cutoff, keep the younger ones. */
static void account_pending(struct range_groups *g, struct range_account *acct, uint64_t cutoff)
{
	size_t done = 0, kept = 0, kept_pool = 0;

	if (g->dropped) {
		range_account_mark_lost(acct, g->dropped, UINT32_MAX);
		g->dropped = 0;
	}
	if (g->nr_pending == 0)
		return;
	/* Time order; equal times keep the order the records were read in,
	 * which is the order one buffer was written in. */
	qsort(g->pending, g->nr_pending, sizeof(*g->pending), pending_by_time);
	for (; done < g->nr_pending && g->pending[done].time <= cutoff; done++) {
		const struct pending *p = &g->pending[done];
		struct range_record rec = { p->time, p->tid, p->cpu, p->root, p->member,
					    p->lost ? NULL : g->pool + p->values };

		if (p->lost)
			range_account_mark_lost(acct, p->lost_count, p->cpu);
		else
			range_account_record(acct, &rec);
	}
	/* The younger records wait; their values move to a fresh pool, since
	 * sorting left the old pool's order behind. */
	if (done < g->nr_pending) {
		uint64_t *pool = malloc((g->nr_pending - done) * g->nr_members * sizeof(*pool));

		if (!pool) {
			/* Not compacted: the values stay where they are. */
			memmove(g->pending, g->pending + done,
				(g->nr_pending - done) * sizeof(*g->pending));
			g->nr_pending -= done;
			return;
		}
		for (size_t i = done; i < g->nr_pending; i++, kept++) {
			if (!g->pending[i].lost)
				memcpy(pool + kept * g->nr_members, g->pool + g->pending[i].values,
				       g->nr_members * sizeof(*pool));
			g->pending[kept] = g->pending[i];
			g->pending[kept].values = kept * g->nr_members;
		}
		free(g->pool);
		g->pool = pool;
		g->cap_pool = kept * g->nr_members;
		kept_pool = g->cap_pool;
	}
	g->nr_pending = kept;
	g->nr_pool = kept_pool;
}

void range_groups_drain(struct range_groups *g, struct range_account *acct,
			enum range_drain how)
{
	/* Taken before reading: a record stamped earlier than this (less the
	 * margin for its commit) is in its buffer by the time we read it. */
	uint64_t safe, cutoff = how == RANGE_DRAIN_ALL ? UINT64_MAX :
			  now_ns() - (how == RANGE_DRAIN_COMMAND ? DRAIN_MARGIN_COMMAND_NS :
							   DRAIN_MARGIN_NS);

	safe = read_buffers(g);
	if (how != RANGE_DRAIN_ALL && safe < cutoff)
		cutoff = safe;
	account_pending(g, acct, cutoff);
}

/* The whole group's totals on one (cpu, root): a group read of its leader
 * (the root's own counts and those of its exited and living descendants).
 * Adds each member's value to values[member]; returns enabled and running. */
static void read_leader_totals(struct range_groups *g, const struct leader *l, uint64_t *values,
			       uint64_t *ena, uint64_t *run)
{
	size_t words = GROUP_HEADER_WORDS + 2 * g->nr_positions;
	uint64_t *buf = g->read_buf;

	memset(buf, 0, words * sizeof(uint64_t));
	if (read(l->fd, buf, words * sizeof(uint64_t)) > 0) {
		for (uint64_t i = 0; i < buf[0] && i < g->nr_positions; i++)
			values[g->member_of_position[i]] += buf[GROUP_HEADER_WORDS + 2 * i];
		*ena += buf[1];
		*run += buf[2];
	}
}

void range_groups_read_member(struct range_groups *g, size_t member, uint64_t *val,
			      uint64_t *ena, uint64_t *run)
{
	uint64_t *values = g->totals;

	memset(values, 0, g->nr_members * sizeof(uint64_t));
	*ena = *run = 0;
	for (size_t i = 0; i < g->nr_leaders; i++)
		read_leader_totals(g, &g->leaders[i], values, ena, run);
	/*
	 * A thread's group on CPU N is "enabled" whenever the thread runs and
	 * "running" only while it runs on N: summed over CPUs that looks like
	 * multiplexing, but no count was missed.  The running time is the
	 * thread's time; report it as both, so nothing is scaled.
	 */
	*ena = *run;
	*val = values[member];
}

void range_groups_finish(struct range_groups *g, struct range_account *acct)
{
	size_t per_root = (size_t)g->nr_cpus * g->nr_members;
	uint64_t *totals = g->totals;

	/* Stop counting first: what runs after the last record and before the
	 * totals are read must be the stretch of whoever ran last, not more. */
	perf_evsel__disable(g->leader_evsel);
	range_groups_drain(g, acct, RANGE_DRAIN_ALL);
	for (size_t r = 0; r < g->nr_roots; r++) {
		memset(totals, 0, per_root * sizeof(uint64_t));
		for (size_t i = 0; i < g->nr_leaders; i++) {
			const struct leader *l = &g->leaders[i];
			int cpu = perf_cpu_map__cpu(g->cpus, l->cpu_idx).cpu;
			uint64_t ena = 0, run = 0;

			if (l->root == r)
				read_leader_totals(g, l, totals + (size_t)cpu * g->nr_members,
						   &ena, &run);
		}
		if (g->cpu_wide)
			range_account_finish_cpus(acct, totals);
		else
			range_account_finish_root(acct, (unsigned)r, (uint32_t)g->roots[r], totals);
	}
}
