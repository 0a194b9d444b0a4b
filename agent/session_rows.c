/*
 * session_rows: build report rows from views (status, counts, times) for
 * the default window and every named window, and print them.
 */
#include <stdlib.h>
#include <sys/time.h>

#include "agent/session.h"
#include "agent/session_rows.h"

/* How a set of rows is taken from its views. */
enum rows_mode {
	ROWS_TOTAL,	/* the value so far (final report, snapshot) */
	ROWS_INTERVAL,	/* the delta since the last interval */
};

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double seconds_since_start(const struct session *s)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return seconds_between(&s->started, &now);
}

static void row_fill(struct report_row *row, struct view *v, enum rows_mode mode)
{
	struct counter_value value;
	bool counted = v->ever_opened;

	if (mode == ROWS_INTERVAL)
		view_take_interval(v, &value, &counted);
	else
		view_value(v, &value);
	row->event = v->counter->def.name;
	row->is_clock = v->counter->def.is_clock;
	row->count = value.val;
	row->enabled_ns = value.ena;
	row->running_ns = value.run;
	if (!v->counter->supported)
		row->status = REPORT_NOT_SUPPORTED;
	else
		row->status = counted ? REPORT_COUNTED : REPORT_NOT_COUNTED;
}

/* Rows of one view per counter (malloc'd, s->nr_counters of them). */
static struct report_row *rows_of(struct session *s, struct view *views, enum rows_mode mode)
{
	struct report_row *rows = calloc(s->nr_counters, sizeof(*rows));

	for (size_t i = 0; i < s->nr_counters; i++)
		row_fill(&rows[i], &views[i], mode);
	return rows;
}

static struct report_window report_window_of(const struct window *w)
{
	return (struct report_window){
		.name = w->name,
		.calls = w->calls,
		.open_s = (double)window_open_ns(w) / 1e9,
		.open_at_end = w->open_at_finish,
	};
}

static void print_interval_lines(struct session *s, enum rows_mode mode)
{
	double now = seconds_since_start(s);
	struct report_row *rows = rows_of(s, s->default_views, mode);

	report_interval(&s->report, now, rows, s->nr_counters);
	free(rows);
	for (size_t i = 0; i < s->nr_windows; i++) {
		struct report_window rw = report_window_of(s->windows[i]);

		rows = rows_of(s, s->windows[i]->views, mode);
		report_interval_window(&s->report, now, &rw, rows, s->nr_counters);
		free(rows);
	}
}

void session_print_interval(struct session *s)
{
	print_interval_lines(s, ROWS_INTERVAL);
}

void session_print_snapshot(struct session *s)
{
	print_interval_lines(s, ROWS_TOTAL);
}

static void fill_run(struct session *s, struct report_run *run)
{
	run->target = s->target;
	run->user_s = run->sys_s = -1;
	if (s->ended.tv_sec == 0 && s->ended.tv_nsec == 0)
		clock_gettime(CLOCK_MONOTONIC, &s->ended);
	run->elapsed_s = seconds_between(&s->started, &s->ended);
	if (s->has_workload && !s->workload.running) {
		const struct rusage *ru = &s->workload.usage;

		run->user_s = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
		run->sys_s = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	}
}

void session_print_final(struct session *s)
{
	struct report_run run;
	struct report_row *rows = rows_of(s, s->default_views, ROWS_TOTAL);

	fill_run(s, &run);
	report_final(&s->report, &run, rows, s->nr_counters);
	free(rows);
	for (size_t i = 0; i < s->nr_windows; i++) {
		struct report_window rw = report_window_of(s->windows[i]);

		rows = rows_of(s, s->windows[i]->views, ROWS_TOTAL);
		report_final_window(&s->report, &rw, rows, s->nr_counters);
		free(rows);
	}
}
