/*
 * view: gated views of physical counters, and their exact delta accounting.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/count/view.h"

static void value_add(struct counter_value *sum, const struct counter_value *a,
		      const struct counter_value *b_subtracted)
{
	sum->val += a->val - b_subtracted->val;
	sum->ena += a->ena - b_subtracted->ena;
	sum->run += a->run - b_subtracted->run;
}

void view_init(struct view *v, struct counter *counter)
{
	memset(v, 0, sizeof(*v));
	v->counter = counter;
}

static bool position_read(struct view *v, size_t k, struct counter_value *value)
{
	int t = v->pos->nr_threads;

	return counter_read_index(v->counter, (int)(k / (size_t)t), (int)(k % (size_t)t),
				  value) == 0;
}

int view_track_positions(struct view *v, int nr_cpus, int nr_threads)
{
	struct view_positions *p = calloc(1, sizeof(*p));
	size_t nr = (size_t)nr_cpus * (size_t)nr_threads;

	if (!p)
		return -ENOMEM;
	p->nr = nr;
	p->nr_threads = nr_threads;
	p->present = calloc(nr ? nr : 1, sizeof(*p->present));
	p->opened_at = calloc(nr ? nr : 1, sizeof(*p->opened_at));
	p->closed_sum = calloc(nr ? nr : 1, sizeof(*p->closed_sum));
	p->interval_base = calloc(nr ? nr : 1, sizeof(*p->interval_base));
	p->interval_delta = calloc(nr ? nr : 1, sizeof(*p->interval_delta));
	v->pos = p;
	if (!p->present || !p->opened_at || !p->closed_sum || !p->interval_base ||
	    !p->interval_delta) {
		view_free_positions(v);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nr; k++) {
		struct counter_value now;

		p->present[k] = v->counter->supported && position_read(v, k, &now);
	}
	return 0;
}

void view_free_positions(struct view *v)
{
	struct view_positions *p = v->pos;

	if (!p)
		return;
	free(p->present);
	free(p->opened_at);
	free(p->closed_sum);
	free(p->interval_base);
	free(p->interval_delta);
	free(p);
	v->pos = NULL;
}

/* Each position read as the whole counter is, at the same moment. */
static void positions_opened(struct view *v, bool at_exec)
{
	if (!v->pos)
		return;
	for (size_t k = 0; k < v->pos->nr; k++)
		if (at_exec || !position_read(v, k, &v->pos->opened_at[k]))
			memset(&v->pos->opened_at[k], 0, sizeof(v->pos->opened_at[k]));
}

static void positions_closed(struct view *v)
{
	if (!v->pos)
		return;
	for (size_t k = 0; k < v->pos->nr; k++) {
		struct counter_value now;

		if (position_read(v, k, &now))
			value_add(&v->pos->closed_sum[k], &now, &v->pos->opened_at[k]);
	}
}

bool view_position_value(struct view *v, size_t k, struct counter_value *value)
{
	struct counter_value now;

	if (!v->pos || k >= v->pos->nr || !v->pos->present[k])
		return false;
	*value = v->pos->closed_sum[k];
	if (v->open && position_read(v, k, &now))
		value_add(value, &now, &v->pos->opened_at[k]);
	return true;
}

static void positions_take_interval(struct view *v)
{
	if (!v->pos)
		return;
	for (size_t k = 0; k < v->pos->nr; k++) {
		struct counter_value now;

		memset(&v->pos->interval_delta[k], 0, sizeof(now));
		if (!view_position_value(v, k, &now))
			continue;
		value_add(&v->pos->interval_delta[k], &now, &v->pos->interval_base[k]);
		v->pos->interval_base[k] = now;
	}
}

void view_open(struct view *v)
{
	if (v->open)
		return;
	/* Read before enabling: an idle counter does not move in between, and
	 * a busy one is read at the instant the gate opens. */
	counter_read(v->counter, &v->opened_at);
	positions_opened(v, false);
	counter_retain(v->counter);
	v->open = v->ever_opened = v->opened_this_interval = true;
}

void view_open_at_exec(struct view *v)
{
	/* The counter is still zero and the kernel starts it at exec. */
	memset(&v->opened_at, 0, sizeof(v->opened_at));
	positions_opened(v, true);
	counter_retain_at_exec(v->counter);
	v->open = v->ever_opened = v->opened_this_interval = true;
}

void view_close_release(struct view *v)
{
	if (!v->open || v->released)
		return;
	counter_release(v->counter);
	v->released = true;
}

void view_close(struct view *v)
{
	struct counter_value now;

	if (!v->open)
		return;
	/* Disable before reading, so the value read is the period's last
	 * (for an idle counter, the value release just read). */
	view_close_release(v);
	v->released = false;
	counter_read(v->counter, &now);
	value_add(&v->closed_sum, &now, &v->opened_at);
	positions_closed(v);
	v->open = false;
}

void view_close_all(struct view *views, size_t n)
{
	counter_batch_begin();
	for (size_t i = 0; i < n; i++)
		view_close_release(&views[i]);
	counter_batch_end();
	for (size_t i = 0; i < n; i++)
		view_close(&views[i]);
}

void view_value(struct view *v, struct counter_value *value)
{
	*value = v->closed_sum;
	if (v->open) {
		struct counter_value now;

		counter_read(v->counter, &now);
		value_add(value, &now, &v->opened_at);
	}
}

void view_take_interval(struct view *v, struct counter_value *delta, bool *counted)
{
	struct counter_value now;

	view_value(v, &now);
	positions_take_interval(v);
	memset(delta, 0, sizeof(*delta));
	value_add(delta, &now, &v->interval_base);
	v->interval_base = now;
	*counted = v->opened_this_interval;
	v->opened_this_interval = v->open;
}
