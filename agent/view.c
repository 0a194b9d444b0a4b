/*
 * view: gated views of physical counters, and their exact delta accounting.
 */
#include <string.h>

#include "agent/view.h"

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

void view_open(struct view *v)
{
	if (v->open)
		return;
	/* Read before enabling: an idle counter does not move in between, and
	 * a busy one is read at the instant the gate opens. */
	counter_read(v->counter, &v->opened_at);
	counter_retain(v->counter);
	v->open = v->ever_opened = v->opened_this_interval = true;
}

void view_open_at_exec(struct view *v)
{
	/* The counter is still zero and the kernel starts it at exec. */
	memset(&v->opened_at, 0, sizeof(v->opened_at));
	counter_retain_at_exec(v->counter);
	v->open = v->ever_opened = v->opened_this_interval = true;
}

void view_close(struct view *v)
{
	struct counter_value now;

	if (!v->open)
		return;
	/* Disable before reading, so the value read is the period's last
	 * (for an idle counter, the value release just read). */
	counter_release(v->counter);
	counter_read(v->counter, &now);
	value_add(&v->closed_sum, &now, &v->opened_at);
	v->open = false;
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
	memset(delta, 0, sizeof(*delta));
	value_add(delta, &now, &v->interval_base);
	v->interval_base = now;
	*counted = v->opened_this_interval;
	v->opened_this_interval = v->open;
}
