/*
 * repeat: -r N, the workload run N times and reported once, as perf stat -r.
 *
 * main() runs one session per run.  At the end of each, the session hands
 * its run to repeat_record(), which takes its rows (rows.h): the default window's, every named window's
 * (with its calls and open time) and every range view's, each row's count
 * scaled as perf scales it.  A row is a series of per-run values, found by
 * what it shows (event, window, range), so a window that only some runs
 * open has values for those runs only.  The last run's session prints the
 * means with perf's "( +- x% )" -- the standard deviation of the mean,
 * Welford's (agent/count/stats.c), relative to the mean -- and writes the
 * per-run values into the --json-file document's "repeat" object.
 */
#ifndef PERFGATE_REPEAT_H
#define PERFGATE_REPEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/report/report.h"
#include "agent/count/stats.h"

struct run;
struct json_t;

enum repeat_kind {
	REPEAT_EVENT,		/* a default-window row */
	REPEAT_WINDOW_EVENT,	/* a named window's row */
	REPEAT_WINDOW_CALLS,	/* a named window's calls */
	REPEAT_WINDOW_OPEN,	/* a named window's open time, ns */
	REPEAT_RANGE,		/* a range view's row */
};

/* One row (or window figure) over the runs. */
struct repeat_series {
	enum repeat_kind kind;
	char *event;		/* the event's name (NULL for window figures) */
	char *label;		/* the window's name or the range's label */
	bool is_clock, unit_ns, supported, incomplete;
	unsigned open_at_end;	/* window: begins without an end, last run */
	/* Per run (runs_wanted of each): the scaled count, and whether the
	 * run had a counted value at all. */
	uint64_t *values, *ena, *run;
	bool *present;
};

struct repeat {
	unsigned runs_wanted;	/* -r N */
	unsigned runs_done;	/* runs recorded */
	bool stopped;		/* a signal or "stop" ended the repetition */
	struct repeat_series *series;
	size_t nr_series;
	uint64_t *elapsed_ns;	/* per run */
	int *exit_codes;	/* per run */
	bool told_range_fallback;	/* ranges fell back to samples: said once */
	/* Values of some run could not be kept for want of memory: the
	 * report is short, and says so (report.h's out_of_memory). */
	bool out_of_memory;
};

/* 0, or -ENOMEM (rep then holds nothing to free). */
int repeat_init(struct repeat *rep, unsigned runs);
void repeat_free(struct repeat *rep);
/* Record the run that has just ended (views closed), whose workload
 * ended with exit_code. */
void repeat_record(struct repeat *rep, const struct run *run, int exit_code);
/* Whether no run is left to start. */
bool repeat_done(const struct repeat *rep);
/* The final report of every run recorded, as perf stat -r prints it;
 * run is the last one (its target).  Rows out of memory are left out
 * and report->out_of_memory set. */
void repeat_print(const struct repeat *rep, const struct run *run, struct report *report);
/* The --json-file document's "repeat" object (docs/json-report.md), or
 * NULL when out of memory. */
struct json_t *repeat_json(const struct repeat *rep);

#endif
