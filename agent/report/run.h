/*
 * run: what a run counted, as the reports read it.
 *
 * The session (agent/session.c) fills one and keeps it up to date as the
 * run goes: the counters and their default views, the named windows, the
 * range sets, the aggregation keys, the target and the run's times.  Every
 * report -- the text, CSV and -j lines, the --json-file document, the -r
 * repeats, the Prometheus exposition -- reads the run through this, and
 * none of them knows the session.
 */
#ifndef PERFGATE_RUN_H
#define PERFGATE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <time.h>

#include "agent/base/options.h"
#include "agent/count/counter.h"
#include "agent/count/view.h"
#include "agent/count/window.h"

struct aggr_map;
struct range_registry;

struct run {
	const struct options *opts;

	struct counter *counters;	/* one per resolved event */
	struct view *default_views;	/* the default window's view of each counter */
	size_t nr_counters;
	struct aggr_map *aggr;		/* -A, --per-*: the report's keys, or NULL */

	struct window **windows;	/* named windows, in order of first begin */
	size_t nr_windows;

	struct range_registry *ranges;	/* range sets: start-up, then "range load"s */

	char *target;			/* "'cmd args'", "system wide", ... */
	struct timespec started, ended;	/* CLOCK_MONOTONIC; ended 0 while it runs */
	/* The workload's CPU times once it is reaped; NULL without a
	 * workload or while it runs. */
	const struct rusage *workload_usage;
	long intervals_done;		/* -I intervals printed */
	int exit_signal;		/* the signal that ended the run (signals.h), or 0 */
	bool stopped;			/* a "stop" command ended the run */
};

#endif
