/*
 * window: a named window -- "window begin NAME" ... "window end NAME" --
 * seen as one view per event, independent of the default window.
 *
 * A window's views share the session's physical counters (docs/design.md,
 * "The core model"): opening a window opens no new perf fd, it only retains
 * the counters, so a window and the default window add up exactly.  The same name begun again while open deepens it: the gate stays
 * open until every begin has had its end, so several threads or processes
 * marking the same window count exactly the union of their periods.  Each
 * end is one call; the window counts its calls and the wall time it was open.
 */
#ifndef PERFGATE_WINDOW_H
#define PERFGATE_WINDOW_H

#include <stdint.h>
#include <time.h>

#include "agent/count/stats.h"
#include "agent/count/view.h"
#include "proto/ctl_proto.h"

/* Begins without an end one window may hold: each costs memory (a value
 * per event and per range view), and a client must not grow the agent
 * without bound by beginning one name forever. */
#define WINDOW_DEPTH_MAX 1024

struct window_call {
	struct counter_value *at_begin;	/* each view's value at this begin */
	struct timespec begun;
	uint64_t *ranges_at_begin;	/* every range view's value then (caller's) */
	size_t nr_ranges_at_begin;
};

/*
 * The per-call values of a window: each call's begin and end times and its
 * count for every view.  The first cap calls are kept; past the cap a
 * uniform reservoir of cap calls stands for them all (algorithm R, one
 * slot decision per call for the whole row), and kept < calls says so.
 */
struct window_call_log {
	size_t cap, kept;
	uint64_t *begin_ns, *end_ns;	/* CLOCK_MONOTONIC, one per kept call */
	uint64_t *values;		/* kept rows of nr_views counts */
	uint64_t rng;			/* the reservoir's generator */
};

struct window {
	char name[CTL_NAME_MAX + 1];
	struct view *views;		/* one per session counter, same order */
	size_t nr_views;
	unsigned depth;			/* begins not yet ended */
	unsigned long calls;		/* ends so far */
	uint64_t open_ns;		/* wall time with depth > 0, closed periods */
	struct timespec opened;		/* when depth went 0 -> 1 */
	struct window_call *stack;	/* open calls, innermost last */
	unsigned stack_cap;		/* calls stack has room for */
	unsigned open_at_finish;	/* begins without an end when the run ended */
	struct stats *call_stats;	/* per view: its calls' counts (exact, Welford) */
	struct stats time_stats;	/* the calls' wall times */
	struct window_call_log log;
};

/* What one "window end" measured: the call's deltas, then the totals. */
struct window_end_result {
	struct counter_value *call;	/* nr_views values, the window's: valid
					 * until its next begin */
	uint64_t call_ns;
	uint64_t *ranges_at_begin;	/* as given to window_begin, caller frees */
	size_t nr_ranges_at_begin;
};

/* values_cap: per-call values kept for quantiles and the document. */
struct window *window_new(const char *name, struct counter *counters, size_t nr,
			  size_t values_cap);
void window_free(struct window *w);
/* Open a call.  ranges (n values, taken over; may be NULL) are the range
 * views' values at this begin, handed back by window_end for the call's
 * range deltas.  Returns -1 (ranges not taken) when the window already
 * holds WINDOW_DEPTH_MAX begins without an end, or memory is short. */
int window_begin(struct window *w, uint64_t *ranges, size_t n);
/* -1 when the window is not open. */
int window_end(struct window *w, struct window_end_result *result);
/* The run is over: close the gate, keep the counts; begins without an end
 * are not calls, they are remembered in open_at_finish. */
void window_finish(struct window *w);
/* Wall time open so far, the running period included. */
uint64_t window_open_ns(const struct window *w);
/* Quantile q of view's kept per-call counts (view == nr_views: the calls'
 * times); NAN when no call was kept, or out of memory for the sorted copy. */
double window_call_quantile(const struct window *w, size_t view, double q);

#endif
