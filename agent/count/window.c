/*
 * window: named windows over shared counters, with nesting, call counts
 * and open time.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/count/window.h"

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)(b->tv_sec - a->tv_sec) * 1000000000u + (uint64_t)b->tv_nsec -
	       (uint64_t)a->tv_nsec;
}

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

struct window *window_new(const char *name, struct counter *counters, size_t nr,
			  size_t values_cap)
{
	struct window *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->views = calloc(nr ? nr : 1, sizeof(*w->views));
	w->call_stats = calloc(nr ? nr : 1, sizeof(*w->call_stats));
	if (!w->views || !w->call_stats) {
		window_free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->nr_views = nr;
	for (size_t i = 0; i < nr; i++) {
		view_init(&w->views[i], &counters[i]);
		stats_init(&w->call_stats[i], 0);
	}
	stats_init(&w->time_stats, 0);
	w->log.cap = values_cap;
	w->log.rng = STATS_RANDOM_SEED;
	return w;
}

void window_free(struct window *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->depth; i++)
		free(w->stack[i].ranges_at_begin);
	for (unsigned i = 0; i < w->stack_cap; i++)
		free(w->stack[i].at_begin);
	free(w->stack);
	free(w->views);
	free(w->call_stats);
	free(w->log.begin_ns);
	free(w->log.end_ns);
	free(w->log.values);
	free(w);
}

/* The call log's rows, at the window's first begin rather than with the
 * window, so that a window named but never used costs none; 0, or -ENOMEM
 * (none kept, to be tried again at the next begin). */
static int log_alloc(struct window *w)
{
	struct window_call_log *log = &w->log;

	if (!log->cap || log->begin_ns)
		return 0;
	log->begin_ns = malloc(log->cap * sizeof(*log->begin_ns));
	log->end_ns = malloc(log->cap * sizeof(*log->end_ns));
	log->values = malloc(log->cap * (w->nr_views ? w->nr_views : 1) * sizeof(*log->values));
	if (!log->begin_ns || !log->end_ns || !log->values) {
		free(log->begin_ns);
		free(log->end_ns);
		free(log->values);
		log->begin_ns = log->end_ns = log->values = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The row call number `calls` (1-based) goes to, or -1 when it is not
 * kept: rows in order up to the cap, then algorithm R's choice. */
static long log_slot(struct window *w)
{
	struct window_call_log *log = &w->log;
	uint64_t slot;

	if (log->kept < log->cap)
		return (long)log->kept++;
	if (!log->cap)
		return -1;
	slot = stats_random(&log->rng) % w->calls;
	return slot < log->cap ? (long)slot : -1;
}

/* One call's values into the statistics and the log: O(views), whatever
 * the number of calls. */
static void window_record_call(struct window *w, const struct counter_value *call,
			       const struct timespec *begun, const struct timespec *ended)
{
	long slot = log_slot(w);

	/* These keep no values (cap 0): stats_add cannot fail on them. */
	stats_add(&w->time_stats, ns_of(ended) - ns_of(begun));
	for (size_t i = 0; i < w->nr_views; i++)
		stats_add(&w->call_stats[i], call[i].val);
	if (slot < 0)
		return;
	w->log.begin_ns[slot] = ns_of(begun);
	w->log.end_ns[slot] = ns_of(ended);
	for (size_t i = 0; i < w->nr_views; i++)
		w->log.values[(size_t)slot * w->nr_views + i] = call[i].val;
}

double window_call_quantile(const struct window *w, size_t view, double q)
{
	uint64_t *column;
	double result;

	if (!w->log.kept || view > w->nr_views)
		return NAN;
	column = malloc(w->log.kept * sizeof(*column));
	if (!column)
		return NAN;
	for (size_t r = 0; r < w->log.kept; r++)
		column[r] = view == w->nr_views ? w->log.end_ns[r] - w->log.begin_ns[r] :
						  w->log.values[r * w->nr_views + view];
	result = stats_quantile_of(column, w->log.kept, q);
	free(column);
	return result;
}

int window_begin(struct window *w, uint64_t *ranges, size_t n)
{
	struct window_call *call;
	struct counter_value *at_begin;

	bool opening = w->depth == 0;

	if (w->depth >= WINDOW_DEPTH_MAX || log_alloc(w))
		return -1;
	if (w->depth == w->stack_cap) {
		unsigned cap = w->stack_cap ? w->stack_cap * 2 : 4;
		struct window_call *stack = realloc(w->stack, cap * sizeof(*stack));

		if (!stack)
			return -1;
		memset(stack + w->stack_cap, 0, (cap - w->stack_cap) * sizeof(*stack));
		w->stack = stack;
		w->stack_cap = cap;
	}
	/* Each level of the stack keeps its values' room from call to call:
	 * a begin allocates only the first time the window is this deep. */
	at_begin = w->stack[w->depth].at_begin;
	if (!at_begin) {
		at_begin = calloc(w->nr_views ? w->nr_views : 1, sizeof(*at_begin));
		if (!at_begin)
			return -1;
	}
	call = &w->stack[w->depth++];
	call->at_begin = at_begin;
	counter_batch_begin();	/* the views' counters go on together, at its end */
	for (size_t i = 0; i < w->nr_views; i++) {
		/*
		 * The call starts where the gate opens: the value at that
		 * instant is the closed periods' sum, with no second read.
		 * Reading again would start the call a little after the gate
		 * and leave a single call short of its window's total.
		 */
		if (opening) {
			view_open(&w->views[i]);
			call->at_begin[i] = w->views[i].closed_sum;
		} else {
			view_value(&w->views[i], &call->at_begin[i]);
		}
	}
	counter_batch_end();
	clock_gettime(CLOCK_MONOTONIC, &call->begun);
	if (opening)
		w->opened = call->begun;
	call->ranges_at_begin = ranges;
	call->nr_ranges_at_begin = n;
	return 0;
}

int window_end(struct window *w, struct window_end_result *result)
{
	struct window_call call;
	struct timespec now;

	if (w->depth == 0)
		return -1;
	call = w->stack[--w->depth];
	if (w->depth == 0)
		view_close_all(w->views, w->nr_views);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (w->depth == 0)
		w->open_ns += ns_between(&w->opened, &now);
	w->calls++;
	result->call = call.at_begin;
	result->call_ns = ns_between(&call.begun, &now);
	result->ranges_at_begin = call.ranges_at_begin;
	result->nr_ranges_at_begin = call.nr_ranges_at_begin;
	for (size_t i = 0; i < w->nr_views; i++) {
		struct counter_value end;

		view_value(&w->views[i], &end);
		result->call[i].val = end.val - result->call[i].val;
		result->call[i].ena = end.ena - result->call[i].ena;
		result->call[i].run = end.run - result->call[i].run;
	}
	window_record_call(w, result->call, &call.begun, &now);
	return 0;
}

void window_finish(struct window *w)
{
	w->open_ns = window_open_ns(w);
	w->open_at_finish = w->depth;
	view_close_all(w->views, w->nr_views);
	for (unsigned i = 0; i < w->depth; i++) {
		free(w->stack[i].ranges_at_begin);
		w->stack[i].ranges_at_begin = NULL;
	}
	w->depth = 0;
}

uint64_t window_open_ns(const struct window *w)
{
	struct timespec now;

	if (w->depth == 0)
		return w->open_ns;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return w->open_ns + ns_between(&w->opened, &now);
}
