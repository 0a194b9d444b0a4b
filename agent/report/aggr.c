/*
 * aggr: the keys of perf stat's aggregation modes, and the report rows
 * summed per key.  Topology comes from sysfs, thread names from /proc,
 * both read once when the counters are opened.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "agent/report/aggr.h"
#include "agent/base/log.h"

/* One integer from a sysfs file; -1 when it cannot be read. */
static int sysfs_int(const char *fmt, int cpu)
{
	char path[128];
	FILE *f;
	int v = -1;

	snprintf(path, sizeof(path), fmt, cpu);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The NUMA node that lists cpu (node0 when there is no node directory:
 * a kernel without NUMA has one node, as perf assumes too). */
static int cpu_node(int cpu)
{
	DIR *dir = opendir("/sys/devices/system/node");
	struct dirent *entry;
	int node = 0;

	while (dir && (entry = readdir(dir))) {
		char path[320];
		int n;

		if (sscanf(entry->d_name, "node%d", &n) != 1)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/%s/cpu%d", entry->d_name,
			 cpu);
		if (access(path, F_OK) == 0) {
			node = n;
			break;
		}
	}
	if (dir)
		closedir(dir);
	return node;
}

static int cpu_key(struct report_aggr_key *k, int cpu)
{
	memset(k, 0, sizeof(*k));
	k->cpu = cpu;
	k->socket = sysfs_int("/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
	k->die = sysfs_int("/sys/devices/system/cpu/cpu%d/topology/die_id", cpu);
	k->core = sysfs_int("/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
	k->node = cpu_node(cpu);
	if (k->socket < 0 || k->core < 0) {
		log_error("cannot read the topology of CPU %d from "
			  "/sys/devices/system/cpu/cpu%d/topology", cpu, cpu);
		return -1;
	}
	if (k->die < 0)
		k->die = 0;	/* kernels before 5.2 have no die_id: one die */
	return 0;
}

/* Whether a and b are the same key in mode. */
static bool key_same(enum aggr_mode mode, const struct report_aggr_key *a,
		     const struct report_aggr_key *b)
{
	switch (mode) {
	case AGGR_CORE:
		return a->socket == b->socket && a->die == b->die && a->core == b->core;
	case AGGR_DIE:
		return a->socket == b->socket && a->die == b->die;
	case AGGR_SOCKET:
		return a->socket == b->socket;
	case AGGR_NODE:
		return a->node == b->node;
	default:
		return a->cpu == b->cpu;
	}
}

/* perf's order of the topology keys: socket, die, core, node ids. */
static int key_cmp(const void *pa, const void *pb)
{
	const struct report_aggr_key *a = pa, *b = pb;

	if (a->node != b->node)
		return a->node - b->node;
	if (a->socket != b->socket)
		return a->socket - b->socket;
	if (a->die != b->die)
		return a->die - b->die;
	return a->core - b->core;
}

static size_t key_find(const struct aggr_map *m, const struct report_aggr_key *k)
{
	for (size_t i = 0; i < m->nr_keys; i++)
		if (key_same(m->mode, &m->keys[i], k))
			return i;
	return m->nr_keys;
}

/* A thread's key: its comm now, as perf reads it when it builds its map. */
static void thread_key(struct report_aggr_key *k, pid_t tid)
{
	char path[64];
	FILE *f;

	memset(k, 0, sizeof(*k));
	k->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(k->comm, sizeof(k->comm), f))
			k->comm[strcspn(k->comm, "\n")] = '\0';
		fclose(f);
	}
}

static int map_threads(struct aggr_map *m, const struct counter_target *target)
{
	m->nr_keys = (size_t)m->nr_threads;
	m->keys = calloc(m->nr_keys ? m->nr_keys : 1, sizeof(*m->keys));
	if (!m->keys)
		return -1;
	for (int t = 0; t < m->nr_threads; t++) {
		thread_key(&m->keys[t], perf_thread_map__pid(target->threads, t));
		for (int c = 0; c < m->nr_cpus; c++)
			m->key_of[(size_t)c * (size_t)m->nr_threads + (size_t)t] = (size_t)t;
	}
	return 0;
}

static int map_cpus(struct aggr_map *m, const struct counter_target *target)
{
	struct report_aggr_key *by_cpu = calloc((size_t)m->nr_cpus, sizeof(*by_cpu));

	m->keys = calloc((size_t)m->nr_cpus, sizeof(*m->keys));
	if (!by_cpu || !m->keys) {
		free(by_cpu);
		return -1;
	}
	for (int c = 0; c < m->nr_cpus; c++) {
		if (cpu_key(&by_cpu[c], perf_cpu_map__cpu(target->cpus, c).cpu)) {
			free(by_cpu);
			errno = 0;	/* said: not out of memory */
			return -1;
		}
		/* -A: one key per CPU, in the map's order. */
		if (m->mode == AGGR_NONE || key_find(m, &by_cpu[c]) == m->nr_keys)
			m->keys[m->nr_keys++] = by_cpu[c];
	}
	if (m->mode != AGGR_NONE)
		qsort(m->keys, m->nr_keys, sizeof(*m->keys), key_cmp);
	for (int c = 0; c < m->nr_cpus; c++)
		for (int t = 0; t < m->nr_threads; t++)
			m->key_of[(size_t)c * (size_t)m->nr_threads + (size_t)t] =
				m->mode == AGGR_NONE ? (size_t)c : key_find(m, &by_cpu[c]);
	free(by_cpu);
	return 0;
}

struct aggr_map *aggr_map_new(enum aggr_mode mode, const struct counter_target *target)
{
	struct aggr_map *m = calloc(1, sizeof(*m));
	size_t nr;
	int rc;

	if (!m)
		return NULL;
	m->mode = mode;
	/* As perf: of every thread of the machine, only those that counted. */
	m->skip_zero = target->all_threads;
	m->nr_cpus = perf_cpu_map__nr(target->cpus);
	m->nr_threads = perf_thread_map__nr(target->threads);
	nr = (size_t)m->nr_cpus * (size_t)m->nr_threads;
	m->key_of = calloc(nr ? nr : 1, sizeof(*m->key_of));
	if (!m->key_of) {
		aggr_map_free(m);
		errno = ENOMEM;
		return NULL;
	}
	rc = mode == AGGR_THREAD ? map_threads(m, target) : map_cpus(m, target);
	if (rc) {
		int saved = errno;	/* ENOMEM, or 0 when said */

		aggr_map_free(m);
		errno = saved;
		return NULL;
	}
	return m;
}

void aggr_map_free(struct aggr_map *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->key_of);
	free(m);
}

void aggr_key_name(const struct aggr_map *m, size_t key, char *buf, size_t cap)
{
	const struct report_aggr_key *k = &m->keys[key];

	switch (m->mode) {
	case AGGR_NONE: snprintf(buf, cap, "CPU%d", k->cpu); return;
	case AGGR_THREAD: snprintf(buf, cap, "%s-%d", k->comm, (int)k->tid); return;
	case AGGR_CORE: snprintf(buf, cap, "S%d-D%d-C%d", k->socket, k->die, k->core); return;
	case AGGR_DIE: snprintf(buf, cap, "S%d-D%d", k->socket, k->die); return;
	case AGGR_SOCKET: snprintf(buf, cap, "S%d", k->socket); return;
	case AGGR_NODE: snprintf(buf, cap, "N%d", k->node); return;
	case AGGR_GLOBAL: break;
	}
	snprintf(buf, cap, "all");
}

void aggr_view_sums(const struct aggr_map *m, struct view *v, enum aggr_values which,
		    struct counter_value *sums, int *nrs)
{
	memset(sums, 0, m->nr_keys * sizeof(*sums));
	memset(nrs, 0, m->nr_keys * sizeof(*nrs));
	if (!v->pos)
		return;
	for (size_t k = 0; k < v->pos->nr; k++) {
		struct counter_value value;
		size_t key = m->key_of[k];

		/* Only the value so far needs a read: the others were kept
		 * when the interval line was taken. */
		if (which == AGGR_VALUES_TOTAL) {
			if (!view_position_value(v, k, &value))
				continue;
		} else if (!v->pos->present[k]) {
			continue;
		} else {
			value = which == AGGR_VALUES_INTERVAL ? v->pos->interval_delta[k] :
								v->pos->interval_base[k];
		}
		sums[key].val += value.val;
		sums[key].ena += value.ena;
		sums[key].run += value.run;
		nrs[key]++;
	}
}

static void row_set(struct report_row *row, struct view *v, bool counted,
		    const struct counter_value *sum, int nr, const struct report_aggr_key *key)
{
	const struct counter *c = v->counter;

	memset(row, 0, sizeof(*row));
	row->event = c->def.name;
	row->is_clock = c->def.is_clock;
	row->unit = c->def.tool != EVENT_TOOL_NONE ? "ns" : NULL;
	row->unread = c->unopened;
	row->count = sum->val;
	row->enabled_ns = sum->ena;
	row->running_ns = sum->run;
	row->aggr = key;
	row->aggr_nr = nr;
	if (!c->supported)
		row->status = REPORT_NOT_SUPPORTED;
	else
		row->status = counted && nr > 0 ? REPORT_COUNTED : REPORT_NOT_COUNTED;
}

/* --per-thread: each event's threads by count, the largest first, as perf;
 * equal counts in the thread map's order. */
static int by_count_desc(const void *pa, const void *pb, void *arg)
{
	const struct counter_value *sums = arg;
	uint64_t a = sums[*(const size_t *)pa].val, b = sums[*(const size_t *)pb].val;

	if (a != b)
		return a < b ? 1 : -1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

struct report_row *aggr_rows(const struct aggr_map *m, struct view *views,
			     const struct report_row *totals, size_t nr, enum aggr_values which,
			     size_t *n)
{
	size_t nk = m->nr_keys ? m->nr_keys : 1;
	struct counter_value *sums = calloc(nr * nk, sizeof(*sums));
	int *nrs = calloc(nr * nk, sizeof(*nrs));
	struct report_row *rows = calloc(nr * nk + 1, sizeof(*rows));
	size_t *order = calloc(nk, sizeof(*order));

	*n = 0;
	if (!sums || !nrs || !rows || !order) {
		free(sums), free(nrs), free(rows), free(order);
		return NULL;
	}
	for (size_t i = 0; i < nr; i++)
		aggr_view_sums(m, &views[i], which, &sums[i * nk], &nrs[i * nk]);
	if (m->mode == AGGR_NONE || m->mode == AGGR_THREAD) {
		/* Event by event, a row per CPU or thread that has the event
		 * (duration_time is on the first only); an event the machine
		 * lacks gets a row per key. */
		for (size_t i = 0; i < nr; i++) {
			bool counted = totals[i].status != REPORT_NOT_COUNTED;

			for (size_t k = 0; k < m->nr_keys; k++)
				order[k] = k;
			if (m->mode == AGGR_THREAD) {
				qsort_r(order, m->nr_keys, sizeof(*order), by_count_desc, &sums[i * nk]);
			}
			for (size_t j = 0; j < m->nr_keys; j++) {
				size_t k = order[j];

				if (views[i].counter->supported && !nrs[i * nk + k])
					continue;
				if (m->skip_zero && views[i].counter->supported &&
				    !sums[i * nk + k].val)
					continue;
				row_set(&rows[*n], &views[i], counted, &sums[i * nk + k],
					nrs[i * nk + k], &m->keys[k]);
				rows[(*n)++].cgroup = totals[i].cgroup;
			}
		}
	} else {
		/* Key by key, every event, <not counted> where it has no CPU. */
		for (size_t k = 0; k < m->nr_keys; k++)
			for (size_t i = 0; i < nr; i++) {
				bool counted = totals[i].status != REPORT_NOT_COUNTED;

				row_set(&rows[*n], &views[i], counted, &sums[i * nk + k],
					nrs[i * nk + k], &m->keys[k]);
				rows[(*n)++].cgroup = totals[i].cgroup;
			}
	}
	free(sums);
	free(nrs);
	free(order);
	return rows;
}
