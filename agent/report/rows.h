/*
 * rows: a run's views turned into report rows, and the reports they feed.
 *
 * One builder for every report: the text, CSV and -j lines (report.c),
 * the -I series of the --json-file document (json_report.c) and the -r
 * repeats (repeat.c) all take their rows from here.  A row is taken from
 * a view in one of three ways (enum rows_mode).
 */
#ifndef PERFGATE_ROWS_H
#define PERFGATE_ROWS_H

#include <stddef.h>
#include <stdint.h>

struct run;
struct report;
struct report_row;
struct report_run;
struct json_report;
struct view;

/* How a set of rows is taken from its views. */
enum rows_mode {
	ROWS_TOTAL,	/* the value so far (final report, snapshot) */
	ROWS_INTERVAL,	/* the delta since the last interval (moves the views on) */
	ROWS_SHOWN,	/* the sum of the interval lines (--summary, as perf) */
};

/* The rows of views, one per counter of run (malloc'd), or NULL when out
 * of memory. */
struct report_row *rows_of_views(const struct run *run, struct view *views, enum rows_mode mode);
/* The rows of every range view of every set (malloc'd, *n of them), each
 * enabled and running for span_ns, or NULL when out of memory.  For an
 * interval, each row is the delta since the last one. */
struct report_row *rows_of_ranges(const struct run *run, enum rows_mode mode, size_t *n,
				  uint64_t span_ns);
/* The run's facts for the final report's header and footer. */
void rows_report_run(const struct run *run, struct report_run *out);

/*
 * The printers below leave out rows they cannot make for want of memory,
 * and set report->out_of_memory (report.h) for the caller to say so.
 */

/* Interval-style lines of every view: -I's (ROWS_INTERVAL: each view's
 * delta since the last ones, also recorded in json's series; json may be
 * NULL) or a snapshot's (ROWS_TOTAL: the counts so far, stamped now). */
void rows_print_interval(const struct run *run, struct report *report, struct json_report *json,
			 enum rows_mode mode);
/* perf stat's final report (ROWS_TOTAL), or with --summary and -I
 * (ROWS_SHOWN) that of the counts the interval lines showed, summed, as
 * perf's (perf reads no counter after its last interval); named windows
 * and ranges keep the whole run.  -r prints with repeat_print() instead. */
void rows_print_final(const struct run *run, struct report *report, enum rows_mode mode);
/* -v at the end of a -I run without --summary (and after each run of
 * -r): perf's last per-counter lines (the counts since the last
 * interval), with no report after them. */
void rows_print_verbose_end(const struct run *run, struct report *report);

#endif
