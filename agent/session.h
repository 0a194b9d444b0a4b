/*
 * session: one run of the agent, from resolved events to the final report.
 *
 * The session owns the physical counters, their views, the control channels,
 * the report and the workload, and runs the libevent loop that ties them
 * together: control commands, the interval timer, the -D delay, the child's
 * exit and the signals that end a run.  What it counted is a struct run
 * (agent/report/run.h), which every report reads.  main() makes one per
 * run and calls the steps below in order; nothing stops a program from
 * making many.
 */
#ifndef PERFGATE_SESSION_H
#define PERFGATE_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/control/control.h"

struct session;
struct options;
struct repeat;
struct counter;

/* A session for opts (which must outlive it), serving every control
 * channel's lines with on_line (its ctx is the session).  With -r, repeat
 * keeps the runs (repeat.h): every run is a session of its own, and the
 * last one reports them all; else NULL.  NULL when out of memory. */
struct session *session_new(const struct options *opts, struct repeat *repeat,
			    control_line_fn on_line);
/* Resolve events and open the report output. */
int session_init(struct session *s);
/* Open counters and control channels, start the workload. */
int session_start(struct session *s);
/* Serve until the workload exits, "stop", a signal, or --interval-count. */
void session_run(struct session *s);
/* End the run from inside the loop: "stop", a signal (sig != 0), or the
 * last --interval-count interval. */
void session_end(struct session *s, int sig);
/* Start-up failed: end a held workload and release what was made. */
void session_abort(struct session *s);
/* Final report; returns perfgate's exit code (the workload's status).
 * With -r, a run before the last only records its rows; a signal that
 * ended the run makes it the last (repeat_done() then holds), and the
 * process then dies of that signal. */
int session_finish(struct session *s);
/* Release what the session still holds (after session_finish() or
 * session_abort(), nothing) and free it.  s may be NULL. */
void session_free(struct session *s);

/* What the control commands (agent/commands.c) do to a running session.
 * Each returns what the command's reply needs. */

/* The counters, one per resolved event (*n of them). */
const struct counter *session_counters(const struct session *s, size_t *n);
/* Open or close the default window of every event, or of the events named
 * event ("" for all: perf's "enable EVENT").  Returns the number of
 * views matched. */
size_t session_set_default_window(struct session *s, const char *event, bool open);
/* "window begin NAME": 0, or -1 with the reason for "err". */
int session_window_begin(struct session *s, const char *name, char *reason, size_t len);
/* "window end NAME": the reply's JSON (valid until the next call), or
 * NULL with the reason for "err". */
const char *session_window_end(struct session *s, const char *name, char *reason, size_t len);
/* "snapshot": the counts so far, as interval-style lines stamped now.  -1
 * with the reason for "err" when the output's backlog has no room. */
int session_snapshot(struct session *s, char *reason, size_t len);
/* "range load NAME = SPEC", "range unload NAME": 0, or -1 with the
 * reason for "err". */
int session_range_load(struct session *s, const char *name, const char *spec, char *reason,
		       size_t len);
int session_range_unload(struct session *s, const char *name, char *reason, size_t len);
/* "stop" on channel ch: no channel reads more, the run ends, and ch is
 * acked after the final report, so that the ack is every channel's last. */
void session_stop(struct session *s, struct control_channel *ch);

#endif
