/*
 * report: perf stat's output formats for perfgate's views.
 *
 * The agent turns its views into an array of report rows (one per line of
 * output) and hands them here; this module only formats, so it is tested on
 * its own against golden output taken from perf stat 6.1 on the same events
 * (tests/unit/test_report.c).  Formats: the human text report, -x SEP
 * (CSV-like), -j (one JSON object per line), each in final and interval (-I)
 * form, with perf's columns, keys, "<not counted>" and "<not supported>".
 */
#ifndef PERFGATE_REPORT_H
#define PERFGATE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "agent/base/options.h"	/* enum aggr_mode */

enum report_status {
	REPORT_COUNTED,
	REPORT_NOT_COUNTED,	/* the view's gate stayed closed */
	REPORT_NOT_SUPPORTED,	/* the machine lacks the event (no PMU) */
};

/* What a row of an aggregation mode (-A, --per-*) is the sum over: perf
 * prints it before the count ("CPU0", "S0-D0-C1     1", "comm-tid"). */
struct report_aggr_key {
	int cpu;			/* -A */
	int socket, die, core, node;	/* --per-core, -die, -socket, -node */
	pid_t tid;			/* --per-thread ... */
	char comm[32];			/* ... and its comm */
};

struct report_row {
	const char *event;	/* printed name: "task-clock", "syscalls:sys_enter_write" */
	enum report_status status;
	/* Raw count; for clock events nanoseconds.  report scales it by
	 * enabled/running as perf does; a REPORT_COUNTED row that never ran
	 * (running_ns or enabled_ns 0) prints "<not counted>", as in perf. */
	uint64_t count;
	uint64_t enabled_ns;	/* time the view's counter was enabled ... */
	uint64_t running_ns;	/* ... and running on the PMU (for scaling) */
	bool is_clock;		/* task-clock / cpu-clock: shown as msec */
	const char *unit;	/* else a unit of its own ("ns": duration_time), or NULL */
	/* Never read (its group could not open): perf 6.1 then takes no
	 * clock from a task-clock row for the others' rates. */
	bool unread;
	/* A range view: shown as "event@range" (text, -x) or with a "range"
	 * key (-j); NULL for other views. */
	const char *range;
	/* Records were lost: the count may be short.  Text appends
	 * "  (incomplete)", -x a last field "incomplete", -j a key. */
	bool incomplete;
	/* Aggregation modes: the row's key (rows of one key share the
	 * pointer, and their metrics), and how many CPUs it summed. */
	const struct report_aggr_key *aggr;
	int aggr_nr;
	/* -G: the cgroup, a column after the event (perf's); NULL without. */
	const char *cgroup;
	/* -r N, N > 1: the row is the mean over the runs, not count: mean
	 * is the mean of the runs' counts, each already scaled as perf
	 * scales it, and enabled_ns and running_ns are the means of the
	 * runs' times.  noise_pct is perf's "+-" column: the standard
	 * deviation of the mean, in percent of the mean (0 when it is 0). */
	unsigned runs;
	double mean, noise_pct;
};

enum report_format { REPORT_TEXT, REPORT_CSV, REPORT_JSON };

struct report {
	FILE *out;
	enum report_format format;
	const char *csv_sep;		/* -x SEP (" " in text mode, as perf) */
	/* Text -I: intervals printed since the "#  time  counts ..." header;
	 * perf prints it before the 1st interval and again every 25. */
	unsigned lines_since_header;
	bool header_printed;		/* any header (final or interval) out */
	/* The -I period.  perf divides an interval's task-clock by this
	 * nominal period, not by the measured one, for "CPUs utilized".
	 * Set it after report_init(); 0 means "use the time since the
	 * previous interval" (close, but not perf's bytes). */
	uint64_t interval_ns;
	double last_timestamp_s;	/* previous report_interval() time */
	bool no_big_num;		/* --no-big-num: no thousands grouping */
	bool null_run;			/* -n: perf's footer without its blank line */
	/* --summary with -x (not --no-csv-summary): the final rows start
	 * with a "summary" column, "%16s" wide as perf 6.1 pads it. */
	bool csv_summary;
	/* /proc/sys/kernel/nmi_watchdog reads 1: perf then ends a final text
	 * report that has <not counted> rows with its "Try disabling the NMI
	 * watchdog" hint, and so do we.  Set it after report_init(). */
	bool nmi_watchdog;
	/* -A, --per-*: rows carry perf's key columns (row->aggr), and the
	 * -I text header names them.  Set it after report_init(). */
	enum aggr_mode aggr_mode;
	/* Rows that could not be made for want of memory were left out of
	 * a report (rows.c, repeat.c): the session says so and the run
	 * fails, rather than a short report passing for a whole one. */
	bool out_of_memory;
};

/* What the final report's header and footer say about the run. */
struct report_run {
	/* What follows "Performance counter stats for ", verbatim, quotes
	 * included: "'sleep 1'", "'system wide'", "'CPU(s) 0-1'",
	 * "process id '42'", "thread id '42'". */
	const char *target;
	double elapsed_s;
	double user_s, sys_s;	/* negative when unknown (no workload) */
	/* -r N, N > 1: elapsed_s is the runs' mean and elapsed_sd_s the
	 * standard deviation of that mean; the header says "(N runs)". */
	unsigned runs;
	double elapsed_sd_s;
};

/* Numbers follow LC_NUMERIC as in perf, which calls setlocale(LC_ALL, ""):
 * thousands grouping in text counts, the decimal point everywhere.  The
 * program, not this module, makes that call.  csv_sep is used for
 * REPORT_CSV only (NULL means ","). */
void report_init(struct report *report, FILE *out, enum report_format format,
		 const char *csv_sep);
/* The final report (at exit, SIGINT, "stop").  perf stat -I prints none:
 * its last interval is the end of the output. */
void report_final(struct report *report, const struct report_run *run,
		  const struct report_row *rows, size_t n);
/* One interval's lines; timestamp_s is seconds since the start of the run. */
void report_interval(struct report *report, double timestamp_s,
		     const struct report_row *rows, size_t n);

/* One line of a window's per-call table: the statistics of one event's
 * (or the calls' wall time's) values over the window's calls. */
struct report_call_stat {
	const char *name;	/* the event, or "wall time (ns)" */
	bool supported;		/* false: "<not supported>" */
	uint64_t min, max;
	double mean, stddev;
	double median, p90, p99;	/* NAN when no call's values were kept */
};

/* A named window, as the report shows it next to its rows. */
struct report_window {
	const char *name;
	unsigned long calls;	/* begin/end pairs */
	double open_s;		/* wall time open */
	unsigned open_at_end;	/* begins still without an end at the end */
	/* The final text report's per-call table under the window's rows
	 * (LIKWID's region table); none when nr_call_stats is 0. */
	const struct report_call_stat *call_stats;
	size_t nr_call_stats;
	bool call_stats_sampled;	/* quantiles are from a uniform sample */
	/* -r N, N > 1: calls_mean and open_s are means per run (calls is
	 * then unused), and the rows are means with their "+-". */
	unsigned runs;
	double calls_mean;
};

/* The final report's block for one window (text: a header line with calls
 * and open time, then its rows named "event@NAME"; -x: the rows alone;
 * -j: the rows with a "window" key).  Printed after report_final(). */
void report_final_window(struct report *report, const struct report_window *w,
			 const struct report_row *rows, size_t n);
/* The final report's block of range views (text: " Ranges:" then the
 * rows; -x, -j: the rows alone).  wall_s is the run's elapsed time. */
void report_final_ranges(struct report *report, double wall_s,
			 const struct report_row *rows, size_t n);
/* Range rows for the interval just printed by report_interval(). */
void report_interval_ranges(struct report *report, double timestamp_s,
			    const struct report_row *rows, size_t n);
/* A window's rows for the interval just printed by report_interval(). */
void report_interval_window(struct report *report, double timestamp_s,
			    const struct report_window *w,
			    const struct report_row *rows, size_t n);

#endif
