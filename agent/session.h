/*
 * session: one run of the agent, from resolved events to the final report.
 *
 * The session owns the physical counters, their views, the control channels,
 * the report and the workload, and runs the libevent loop that ties them
 * together: control commands, the interval timer, the -D delay, the child's
 * exit and the signals that end a run.  main() only calls the four steps below in order.
 */
#ifndef PERFGATE_SESSION_H
#define PERFGATE_SESSION_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "agent/control/control.h"
#include "agent/count/counter.h"
#include "agent/base/json_buf.h"
#include "agent/base/options.h"
#include "agent/base/output.h"
#include "agent/report/report.h"
#include "agent/count/view.h"
#include "agent/count/window.h"
#include "agent/workload.h"

struct event_base;
struct event;
struct range_registry;
struct metrics;
struct aggr_map;
struct repeat;

struct session {
	const struct options *opts;

	struct counter *counters;	/* one per resolved event */
	struct view *default_views;	/* the default window's view of each counter */
	size_t nr_counters;
	struct aggr_map *aggr;		/* -A, --per-*: the report's keys, or NULL */

	struct range_registry *ranges;	/* range sets: start-up, then "range load"s */

	struct window **windows;	/* named windows, in order of first begin */
	size_t nr_windows;
	struct json_t *window_index;	/* name -> index in windows: a command
					 * finds its window in O(1), however many */
	size_t nr_open_calls;		/* begins without an end, all windows */

	struct control_channel *channels;
	size_t nr_channels;
	struct control_channel *stop_channel;	/* acked after the final report */

	struct output output;		/* the report's destination */
	FILE *out;			/* output.fp: what the report writes to */
	struct report report;
	struct output json_out;		/* --json-file on a FIFO or device */
	int json_tmp_fd;		/* --json-file: the temporary file, or -1 */
	char *json_tmp_path, *json_target;	/* ... and what it is renamed to */
	char *target;			/* "'cmd args'", "system wide", ... */

	struct workload workload;
	bool has_workload;
	int workload_ctl_fd, workload_ack_fd;	/* agent's ends, until a channel owns them */

	struct event_base *base;
	struct event *interval_timer, *delay_timer;
	struct event **signal_events;	/* SIGCHLD, then every run-ending signal */
	size_t nr_signal_events;
	struct event **target_watches;	/* -p/-t targets' pidfds */
	size_t nr_target_watches, targets_alive;
	struct timespec started, ended;
	long intervals_done;
	struct json_t *intervals;	/* -I series for --json-file (json_report) */
	struct json_t *interval;	/* the one being recorded */
	unsigned long intervals_dropped;	/* past JSON_REPORT_INTERVALS_MAX */
	int exit_signal;		/* the signal that ended the run (signals.h), or 0 */
	struct metrics *metrics;	/* --metrics-*: agent/metrics/, or NULL */
	struct json_buf reply;		/* the window-end reply, kept between calls */
	size_t *reply_keys;		/* its keys per counter (json_report) */
	struct repeat *repeat;		/* -r N, N > 1: every run's rows, or NULL */
};

/* Resolve events and open the report output.  With -r, repeat keeps the
 * runs (repeat.h): every run is a session of its own, and the last one
 * reports them all; else NULL. */
int session_init(struct session *s, const struct options *opts, struct repeat *repeat);
/* Open counters and control channels, start the workload. */
int session_start(struct session *s);
/* Serve until the workload exits, "stop", a signal, or --interval-count. */
void session_run(struct session *s);
/* End the run from inside the loop: "stop", a signal (sig != 0), or the
 * last --interval-count interval. */
void session_end(struct session *s, int sig);
/* The named window NAME, created (closed) when create is set. */
struct window *session_window(struct session *s, const char *name, bool create);
/* Start-up failed: end a held workload and free what was made. */
void session_abort(struct session *s);
/* Final report; returns perfgate's exit code (the workload's status).
 * With -r, a run before the last only records its rows; a signal that
 * ended the run makes it the last (repeat_done() then holds). */
int session_finish(struct session *s);

#endif
