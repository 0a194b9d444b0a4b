/*
 * session_rows: the session's views turned into report rows, and printed.
 */
#ifndef PERFGATE_SESSION_ROWS_H
#define PERFGATE_SESSION_ROWS_H

struct session;

#include <stddef.h>
#include <stdint.h>

/* One interval's lines (-I), each view's delta since the last ones;
 * dropped (and counted) when the output's backlog has no room for them. */
void session_print_interval(struct session *s);
/* The same at the end of the run: always queued. */
void session_print_last_interval(struct session *s);
/* The counts so far, as interval-style lines stamped now ("snapshot").
 * -1 with the reason for "err" when the output's backlog has no room. */
int session_print_snapshot(struct session *s, char *reason, size_t len);
/* perf stat's final report (with -r, that of every run: repeat.h). */
void session_print_final(struct session *s);
/* --summary with -I: the final report of the counts the interval lines
 * showed, summed, as perf's (perf reads no counter after its last
 * interval); named windows, ranges and the run's document keep the whole
 * run. */
void session_print_summary(struct session *s);
/* -v at the end of a -I run without --summary: perf's last per-counter
 * lines (the counts since the last interval), with no report after them. */
void session_print_verbose_end(struct session *s);

struct report_row;
struct report_run;
struct view;
/* The final rows of views (one per counter), and of every range view
 * (*n of them), malloc'd; and the run's header and footer facts. */
struct report_row *session_rows_total(struct session *s, struct view *views);
struct report_row *session_rows_ranges(struct session *s, size_t *n, uint64_t span_ns);
void session_rows_run(struct session *s, struct report_run *run);

#endif
