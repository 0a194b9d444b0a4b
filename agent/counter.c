/*
 * counter: physical perf counters through libperf.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <perf/cpumap.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>

#include "agent/counter.h"
#include "agent/log.h"
#include "agent/ranges/range_set.h"

/*
 * libperf.a exports this but declares it only in an internal header that
 * needs the kernel's tools/include; declaring the one prototype here avoids
 * shipping those headers.
 */
int perf_evsel__apply_filter(struct perf_evsel *evsel, const char *filter);

/* Errors that mean "this machine cannot count that", as perf treats them. */
static bool errno_is_unsupported(int err, const struct event_def *def)
{
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == ENXIO)
		return true;
	/* A hardware event on a VM without PMU may also fail with EINVAL. */
	return err == EINVAL && def->attr.type == PERF_TYPE_HARDWARE;
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

static int counter_apply_filter(struct counter *c)
{
	int err;

	if (!c->def.filter)
		return 0;
	/* libperf returns -1 and leaves the ioctl's reason in errno. */
	err = perf_evsel__apply_filter(c->evsel, c->def.filter);
	if (err) {
		log_error("the kernel refused filter '%s' on '%s': %s",
			  c->def.filter, c->def.name, strerror(errno));
		return -1;
	}
	return 0;
}

void counter_back_with_range(struct counter *c, struct range_set *rs, size_t member)
{
	c->backing = rs;
	c->backing_member = member;
}

int counter_open(struct counter *c, const struct counter_target *target)
{
	struct perf_event_attr attr = c->def.attr;
	int err;

	if (c->backing) {
		c->users = 0;
		c->supported = range_set_member_supported(c->backing, c->backing_member);
		return 0;
	}
	attr.disabled = 1;
	attr.inherit = target->inherit;
	attr.enable_on_exec = target->enable_on_exec;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	c->evsel = perf_evsel__new(&attr);
	c->users = 0;
	if (!c->evsel) {
		log_error("out of memory opening '%s'", c->def.name);
		return -1;
	}
	err = perf_evsel__open(c->evsel, target->cpus, target->threads);
	if (err) {
		err = -err > 0 ? -err : errno;
		perf_evsel__delete(c->evsel);
		c->evsel = NULL;
		c->supported = false;
		if (errno_is_unsupported(err, &c->def))
			return 0;
		report_open_error(c, err);
		return -1;
	}
	c->supported = true;
	/* Opened disabled: zero until something enables it. */
	memset(&c->idle_value, 0, sizeof(c->idle_value));
	c->idle_valid = !target->enable_on_exec;
	c->nr_cpus = perf_cpu_map__nr(target->cpus);
	c->nr_threads = perf_thread_map__nr(target->threads);
	return counter_apply_filter(c);
}

void counter_close(struct counter *c)
{
	if (!c->evsel)
		return;
	perf_evsel__close(c->evsel);
	perf_evsel__delete(c->evsel);
	c->evsel = NULL;
}

void counter_read(struct counter *c, struct counter_value *value)
{
	if (c->idle_valid && c->users == 0) {
		*value = c->idle_value;
		return;
	}
	memset(value, 0, sizeof(*value));
	if (c->backing) {
		range_set_read_member(c->backing, c->backing_member, value);
		return;
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

void counter_retain(struct counter *c)
{
	if (c->users++ == 0 && c->evsel)
		perf_evsel__enable(c->evsel);
	c->idle_valid = false;
}

void counter_retain_at_exec(struct counter *c)
{
	c->users++;
	c->idle_valid = false;
}

void counter_release(struct counter *c)
{
	if (c->users == 0)
		return;
	if (--c->users == 0 && c->evsel) {
		perf_evsel__disable(c->evsel);
		/* Read once now; it cannot move until the next retain. */
		counter_read(c, &c->idle_value);
		c->idle_valid = true;
	}
}
