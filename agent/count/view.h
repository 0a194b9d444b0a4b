/*
 * view: what one report line shows -- a physical counter seen through a gate.
 *
 * A view's value is the sum of its counter's deltas over the periods its
 * gate was open (docs/design.md, "The core model").  Deltas are taken by
 * reading the counter when the gate opens and when it closes, so views over
 * one counter that partition the time add up exactly to the counter's
 * total.  The gates here: the default window (enable/disable, -D) per event
 * and named windows (window.h); ranges keep their own sums (agent/ranges/).
 */
#ifndef PERFGATE_VIEW_H
#define PERFGATE_VIEW_H

#include <stdbool.h>

#include "agent/count/counter.h"

/* The aggregation modes' (aggr.h) accounting, the same as the view's own,
 * at each (cpu, thread) position of the maps its counter was opened on. */
struct view_positions {
	size_t nr;
	int nr_threads;
	bool *present;			/* the counter has a value there */
	struct counter_value *opened_at, *closed_sum, *interval_base;
	struct counter_value *interval_delta;	/* the last view_take_interval's */
};

struct view {
	struct counter *counter;
	struct view_positions *pos;	/* NULL unless tracked per position */
	bool open;
	bool released;			/* open, its counter already released */
	bool ever_opened;		/* final report: <not counted> when never */
	bool opened_this_interval;	/* interval report: <not counted> when not */
	struct counter_value opened_at;	/* counter value when the gate last opened */
	struct counter_value closed_sum;	/* deltas of the periods already closed */
	struct counter_value interval_base;	/* view value at the last interval line */
};

void view_init(struct view *v, struct counter *counter);
/* Keep per-position values too (after the counter is opened, before the
 * view first opens); view_free_positions() frees them.  0, or -ENOMEM
 * (the view then keeps none). */
int view_track_positions(struct view *v, int nr_cpus, int nr_threads);
void view_free_positions(struct view *v);
/* Position k's value now (k = cpu * nr_threads + thread); false when the
 * counter has none there. */
bool view_position_value(struct view *v, size_t k, struct counter_value *value);
/* Open the gate now (reads the counter, enables it if it was idle). */
void view_open(struct view *v);
/* Open the gate at the workload's exec (counter opened with enable_on_exec). */
void view_open_at_exec(struct view *v);
/* Close the gate now (disables an idle counter, then reads it). */
void view_close(struct view *v);
/* The first half of view_close, for closing many views: release every
 * view's counter first, then view_close each, so that counters that share
 * one read group are read once, after all of them are disabled. */
void view_close_release(struct view *v);
/* Close views[0..n) that way, the releases as one batch. */
void view_close_all(struct view *views, size_t n);
/* The view's value now: closed periods plus the open one so far. */
void view_value(struct view *v, struct counter_value *value);
/* The value since the last call, for an interval line; restarts the interval. */
void view_take_interval(struct view *v, struct counter_value *delta, bool *counted);

#endif
