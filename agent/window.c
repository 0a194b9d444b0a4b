/*
 * window: named windows over shared counters, with nesting, call counts
 * and open time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/window.h"

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)(b->tv_sec - a->tv_sec) * 1000000000u + (uint64_t)b->tv_nsec -
	       (uint64_t)a->tv_nsec;
}

struct window *window_new(const char *name, struct counter *counters, size_t nr)
{
	struct window *w = calloc(1, sizeof(*w));

	snprintf(w->name, sizeof(w->name), "%s", name);
	w->views = calloc(nr, sizeof(*w->views));
	w->nr_views = nr;
	for (size_t i = 0; i < nr; i++)
		view_init(&w->views[i], &counters[i]);
	return w;
}

void window_free(struct window *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->depth; i++) {
		free(w->stack[i].at_begin);
		free(w->stack[i].ranges_at_begin);
	}
	free(w->stack);
	free(w->views);
	free(w);
}

int window_begin(struct window *w, uint64_t *ranges, size_t n)
{
	struct window_call *call;
	struct counter_value *at_begin;

	if (w->depth >= WINDOW_DEPTH_MAX)
		return -1;
	if (w->depth == w->stack_cap) {
		unsigned cap = w->stack_cap ? w->stack_cap * 2 : 4;
		struct window_call *stack = realloc(w->stack, cap * sizeof(*stack));

		if (!stack)
			return -1;
		w->stack = stack;
		w->stack_cap = cap;
	}
	at_begin = calloc(w->nr_views ? w->nr_views : 1, sizeof(*at_begin));
	if (!at_begin)
		return -1;
	if (w->depth == 0) {
		for (size_t i = 0; i < w->nr_views; i++)
			view_open(&w->views[i]);
		clock_gettime(CLOCK_MONOTONIC, &w->opened);
	}
	call = &w->stack[w->depth++];
	call->at_begin = at_begin;
	for (size_t i = 0; i < w->nr_views; i++)
		view_value(&w->views[i], &call->at_begin[i]);
	clock_gettime(CLOCK_MONOTONIC, &call->begun);
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
		for (size_t i = 0; i < w->nr_views; i++)
			view_close(&w->views[i]);
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
	return 0;
}

void window_finish(struct window *w)
{
	w->open_ns = window_open_ns(w);
	w->open_at_finish = w->depth;
	for (size_t i = 0; i < w->nr_views; i++)
		view_close(&w->views[i]);
	for (unsigned i = 0; i < w->depth; i++) {
		free(w->stack[i].at_begin);
		free(w->stack[i].ranges_at_begin);
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
