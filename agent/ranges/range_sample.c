/*
 * range_sample: range_backend_ops over range_groups and range_account.
 */
#include <errno.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/ranges/range_account.h"
#include "agent/ranges/range_groups.h"
#include "agent/ranges/range_sample.h"

struct range_sample {
	struct range_groups *groups;	/* NULL once released */
	struct range_account *acct;
};

static void sample_drain(void *obj, enum range_drain how)
{
	struct range_sample *s = obj;

	if (s->groups)
		range_groups_drain(s->groups, s->acct, how);
}

static void on_ring_buffer(void *arg)
{
	sample_drain(arg, RANGE_DRAIN_BACKGROUND);
}

static void sample_free(void *obj)
{
	struct range_sample *s = obj;

	if (!s)
		return;
	range_groups_close(s->groups);
	range_account_free(s->acct);
	free(s);
}

static struct range_account *account_for(const struct range_layout *layout,
					 const struct range_set_target *target,
					 const struct range_groups *groups)
{
	unsigned flags = target->cpu_wide ? RANGE_ACCOUNT_CPU_WIDE : 0;

	if (layout->per_cpu)
		flags |= RANGE_ACCOUNT_CPU_SCOPE;
	return range_account_new(layout->members, layout->nr_events + 1, layout->leaves,
				 layout->nr_leaves, layout->views, layout->nr_specs,
				 range_groups_nr_cpus(groups), flags);
}

/* Failures are printed: the reason is the kernel's, in the log. */
static void *sample_start(const struct range_layout *layout,
			  const struct range_set_target *target, struct event_base *base,
			  bool *unfit, char *why, size_t cap)
{
	struct range_groups_params params = {
		.events = layout->events, .nr_events = layout->nr_events,
		.roots = target->roots, .nr_roots = target->nr_roots,
		.enable_on_exec = target->enable_on_exec && !target->cpu_wide,
		.pages = target->pages,
		.cpu_wide = target->cpu_wide, .cpu_list = target->cpu_list,
	};
	struct range_sample *s = calloc(1, sizeof(*s));
	int rc;

	(void)why;
	(void)cap;
	*unfit = false;
	if (!s) {
		log_error("out of memory");
		return NULL;
	}
	s->groups = range_groups_open(&params);
	if (!s->groups)
		return sample_free(s), NULL;
	s->acct = account_for(layout, target, s->groups);
	if (!s->acct) {
		log_error("out of memory");
		return sample_free(s), NULL;
	}
	rc = range_groups_watch(s->groups, base, on_ring_buffer, s);
	if (rc) {
		log_error(rc == -ENOMEM ? "out of memory" : "cannot watch the range's ring buffers");
		return sample_free(s), NULL;
	}
	return s;
}

static void sample_finish(void *obj)
{
	struct range_sample *s = obj;

	if (s->groups)
		range_groups_finish(s->groups, s->acct);
}

static void sample_release(void *obj)
{
	struct range_sample *s = obj;

	range_groups_close(s->groups);
	s->groups = NULL;
}

static void sample_read_member(void *obj, size_t member, struct counter_value *value)
{
	struct range_sample *s = obj;

	if (s->groups)
		range_groups_read_member(s->groups, member, &value->val, &value->ena,
					 &value->run);
}

static bool sample_supported(const void *obj, size_t member)
{
	const struct range_sample *s = obj;

	return s->groups && range_groups_supported(s->groups, member);
}

static uint64_t sample_value(const void *obj, size_t view, size_t member)
{
	const struct range_sample *s = obj;

	return range_account_value(s->acct, view, member);
}

static uint64_t sample_lost(const void *obj)
{
	const struct range_sample *s = obj;

	return range_account_lost(s->acct);
}

const struct range_backend_ops range_sample_backend = {
	.in_kernel = false,
	.start = sample_start,
	.drain = sample_drain,
	.finish = sample_finish,
	.release = sample_release,
	.read_member = sample_read_member,
	.supported = sample_supported,
	.value = sample_value,
	.lost = sample_lost,
	.free = sample_free,
};
