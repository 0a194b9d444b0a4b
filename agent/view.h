/*
 * view: what one report line shows -- a physical counter seen through a gate.
 *
 * A view's value is the sum of its counter's deltas over the periods its
 * gate was open (DESIGN.md section 4).  Deltas are taken by reading the
 * counter when the gate opens and when it closes, so views over one counter
 * that partition the time add up exactly to the counter's total.  Gates in
 * this version: the default window (enable/disable, -D) per event.
 */
#ifndef PERFGATE_VIEW_H
#define PERFGATE_VIEW_H

#include <stdbool.h>

#include "agent/counter.h"

struct view {
	struct counter *counter;
	bool open;
	bool ever_opened;		/* final report: <not counted> when never */
	bool opened_this_interval;	/* interval report: <not counted> when not */
	struct counter_value opened_at;	/* counter value when the gate last opened */
	struct counter_value closed_sum;	/* deltas of the periods already closed */
	struct counter_value interval_base;	/* view value at the last interval line */
};

void view_init(struct view *v, struct counter *counter);
/* Open the gate now (reads the counter, enables it if it was idle). */
void view_open(struct view *v);
/* Open the gate at the workload's exec (counter opened with enable_on_exec). */
void view_open_at_exec(struct view *v);
/* Close the gate now (disables an idle counter, then reads it). */
void view_close(struct view *v);
/* The view's value now: closed periods plus the open one so far. */
void view_value(struct view *v, struct counter_value *value);
/* The value since the last call, for an interval line; restarts the interval. */
void view_take_interval(struct view *v, struct counter_value *delta, bool *counted);

#endif
