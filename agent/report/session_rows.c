/*
 * session_rows: build report rows from views (status, counts, times) for
 * the default window and every named window, and print them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "agent/report/aggr.h"
#include "agent/report/json_report.h"
#include "agent/base/log.h"
#include "agent/report/repeat.h"
#include "agent/session.h"
#include "agent/ranges/range_set.h"
#include "agent/ranges/range_registry.h"
#include "agent/report/session_rows.h"

/* How a set of rows is taken from its views. */
enum rows_mode {
	ROWS_TOTAL,	/* the value so far (final report, snapshot) */
	ROWS_INTERVAL,	/* the delta since the last interval */
	ROWS_SHOWN,	/* the sum of the interval lines (--summary, as perf) */
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
	else if (mode == ROWS_SHOWN)
		value = v->interval_base;
	else
		view_value(v, &value);
	row->event = v->counter->def.name;
	row->is_clock = v->counter->def.is_clock;
	row->unit = v->counter->def.tool != EVENT_TOOL_NONE ? "ns" : NULL;
	row->unread = v->counter->unopened;
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

	for (size_t i = 0; i < s->nr_counters; i++) {
		row_fill(&rows[i], &views[i], mode);
		rows[i].cgroup = s->opts->cgroup;
	}
	return rows;
}

/* The default window's rows per key under -A and --per-* (malloc'd, *n
 * of them), from its rows per counter just taken; NULL without a mode. */
static struct report_row *aggr_rows_of(struct session *s, const struct report_row *totals,
				       enum rows_mode mode, size_t *n)
{
	*n = 0;
	if (!s->aggr || !totals)
		return NULL;
	return aggr_rows(s->aggr, s->default_views, totals, s->nr_counters,
			 mode == ROWS_INTERVAL ? AGGR_VALUES_INTERVAL :
			 mode == ROWS_SHOWN ? AGGR_VALUES_SHOWN : AGGR_VALUES_TOTAL, n);
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

/* Rows of every range view of every set (malloc'd; *n of them).  For an
 * interval, each row is the delta since the last one. */
static struct report_row *range_rows(struct session *s, enum rows_mode mode, size_t *n,
				     uint64_t span_ns)
{
	struct report_row *rows = NULL;

	*n = 0;
	for (size_t i = 0; i < range_registry_nr_sets(s->ranges); i++) {
		struct range_set *rs = range_registry_set(s->ranges, i);
		bool incomplete = range_set_lost(rs) > 0;

		for (size_t sp = 0; sp < range_set_nr_specs(rs); sp++) {
			for (size_t e = 0; e < range_set_nr_events(rs, sp); e++) {
				uint64_t value = range_set_value(rs, sp, e);
				uint64_t *base = range_set_interval_base(rs, sp, e);
				struct report_row *row;

				rows = realloc(rows, (*n + 1) * sizeof(*rows));
				row = &rows[(*n)++];
				memset(row, 0, sizeof(*row));
				row->event = range_set_event_name(rs, sp, e);
				row->range = range_set_label(rs, sp);
				row->is_clock = range_set_event(rs, sp, e)->is_clock;
				row->count = mode == ROWS_INTERVAL ? value - *base : value;
				if (mode == ROWS_INTERVAL)
					*base = value;
				row->enabled_ns = row->running_ns = span_ns ? span_ns : 1;
				row->incomplete = incomplete;
				row->status = range_set_supported(rs, sp, e) ? REPORT_COUNTED :
					      REPORT_NOT_SUPPORTED;
			}
		}
	}
	return rows;
}

/*
 * -v: perf's "NAME: count enabled running" line per counter each time it
 * reads them, before the report's lines and on the report's output; a
 * counter that could not be opened gets "failed to read counter NAME" on
 * stderr instead, as in perf 6.1.
 */
static void print_verbose(struct session *s, const struct report_row *rows)
{
	if (!s->opts->verbose)
		return;
	for (size_t i = 0; i < s->nr_counters; i++) {
		if (!s->counters[i].supported)
			log_info("failed to read counter %s", rows[i].event);
		else
			fprintf(s->out, "%s: %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", rows[i].event,
				rows[i].count, rows[i].enabled_ns, rows[i].running_ns);
	}
}

void session_print_verbose_end(struct session *s)
{
	struct report_row *rows;

	if (!s->opts->verbose)
		return;
	rows = rows_of(s, s->default_views, ROWS_INTERVAL);
	print_verbose(s, rows);
	free(rows);
}

static void print_interval_lines(struct session *s, enum rows_mode mode)
{
	double now = seconds_since_start(s);
	struct report_row *rows, *per_key;
	size_t n;

	/* Only intervals go into the document's series, not snapshots. */
	bool record = mode == ROWS_INTERVAL;

	range_registry_drain(s->ranges);
	if (record)
		json_report_interval_begin(s, (uint64_t)(now * 1e9));
	rows = rows_of(s, s->default_views, mode);
	print_verbose(s, rows);
	per_key = aggr_rows_of(s, rows, mode, &n);
	if (per_key)
		report_interval(&s->report, now, per_key, n);
	else
		report_interval(&s->report, now, rows, s->nr_counters);
	/* The document's series keeps each event's total. */
	if (record)
		json_report_interval_rows(s, NULL, rows, s->nr_counters);
	free(per_key);
	free(rows);
	for (size_t i = 0; i < s->nr_windows; i++) {
		struct report_window rw = report_window_of(s->windows[i]);

		rows = rows_of(s, s->windows[i]->views, mode);
		report_interval_window(&s->report, now, &rw, rows, s->nr_counters);
		if (record)
			json_report_interval_rows(s, s->windows[i]->name, rows, s->nr_counters);
		free(rows);
	}
	rows = range_rows(s, mode, &n, mode == ROWS_INTERVAL ? s->report.interval_ns :
			  (uint64_t)(now * 1e9));
	if (n)
		report_interval_ranges(&s->report, now, rows, n);
	if (record) {
		json_report_interval_rows(s, NULL, rows, n);
		json_report_interval_end(s);
	}
	free(rows);
}

/* An interval goes out whole or not at all: one the output has no room
 * for is dropped (its deltas with it) and counted. */
void session_print_interval(struct session *s)
{
	output_stage(&s->output);
	print_interval_lines(s, ROWS_INTERVAL);
	if (output_commit(&s->output, false))
		output_drop_interval(&s->output);
}

void session_print_last_interval(struct session *s)
{
	print_interval_lines(s, ROWS_INTERVAL);
}

int session_print_snapshot(struct session *s, char *reason, size_t len)
{
	struct output *o = &s->output;
	size_t backlog = output_backlog(o), staged = 0;

	if (o->error) {
		snprintf(reason, len, "snapshot refused: the report output '%s' failed: %s",
			 o->name, strerror(o->error));
		return -1;
	}
	/* Already over: not even worth building. */
	if (backlog < OUTPUT_BACKLOG_MAX) {
		output_stage(o);
		print_interval_lines(s, ROWS_TOTAL);
		staged = output_staged(o);
		if (output_commit(o, true) == 0)
			return 0;
	}
	o->refused_snapshots++;
	if (backlog)
		snprintf(reason, len, "snapshot refused: the report output's backlog would pass "
			 "its limit of %d bytes (its reader is not keeping up)", OUTPUT_BACKLOG_MAX);
	else
		snprintf(reason, len, "snapshot refused: it would be %zu bytes, more than the "
			 "report output's limit of %d bytes", staged, OUTPUT_BACKLOG_MAX);
	return -1;
}

static void fill_run(struct session *s, struct report_run *run)
{
	*run = (struct report_run){ .target = s->target };
	run->user_s = run->sys_s = -1;
	if (s->ended.tv_sec == 0 && s->ended.tv_nsec == 0)
		clock_gettime(CLOCK_MONOTONIC, &s->ended);
	run->elapsed_s = seconds_between(&s->started, &s->ended);
	/* As perf 6.1: no user and sys times system-wide (-a, -C), where
	 * the workload's are not what was counted. */
	if (s->has_workload && !s->workload.running && !s->opts->system_wide &&
	    !s->opts->cpu_list) {
		const struct rusage *ru = &s->workload.usage;

		run->user_s = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
		run->sys_s = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	}
}

/* The per-call table's lines for window w (malloc'd): the calls' wall
 * time, then each event. */
static struct report_call_stat *call_stats_of(const struct session *s, const struct window *w,
					      size_t *n)
{
	struct report_call_stat *lines = calloc(s->nr_counters + 1, sizeof(*lines));

	*n = 0;
	if (!lines || !w->calls)
		return lines;
	for (size_t i = 0; i <= s->nr_counters; i++) {
		const struct stats *st = i < s->nr_counters ? &w->call_stats[i] : &w->time_stats;
		struct report_call_stat *line = &lines[(*n)++];

		line->name = i < s->nr_counters ? s->counters[i].def.name : "wall time (ns)";
		line->supported = i == s->nr_counters || s->counters[i].supported;
		line->min = st->min;
		line->max = st->max;
		line->mean = stats_mean(st);
		line->stddev = stats_stddev(st);
		line->median = window_call_quantile(w, i, 0.5);
		line->p90 = window_call_quantile(w, i, 0.9);
		line->p99 = window_call_quantile(w, i, 0.99);
	}
	return lines;
}

struct report_row *session_rows_total(struct session *s, struct view *views)
{
	return rows_of(s, views, ROWS_TOTAL);
}

struct report_row *session_rows_ranges(struct session *s, size_t *n, uint64_t span_ns)
{
	return range_rows(s, ROWS_TOTAL, n, span_ns);
}

void session_rows_run(struct session *s, struct report_run *run)
{
	fill_run(s, run);
}

static void print_final(struct session *s, enum rows_mode mode)
{
	struct report_run run;
	struct report_row *rows, *per_key;
	size_t n;

	if (s->repeat) {
		repeat_print(s->repeat, s);
		return;
	}
	rows = rows_of(s, s->default_views, mode);
	fill_run(s, &run);
	print_verbose(s, rows);
	per_key = aggr_rows_of(s, rows, mode, &n);
	if (per_key)
		report_final(&s->report, &run, per_key, n);
	else
		report_final(&s->report, &run, rows, s->nr_counters);
	free(per_key);
	free(rows);
	for (size_t i = 0; i < s->nr_windows; i++) {
		struct report_window rw = report_window_of(s->windows[i]);
		struct report_call_stat *lines = call_stats_of(s, s->windows[i],
							       &rw.nr_call_stats);

		rw.call_stats = lines;
		rw.call_stats_sampled = s->windows[i]->log.kept < s->windows[i]->calls;
		rows = rows_of(s, s->windows[i]->views, ROWS_TOTAL);
		report_final_window(&s->report, &rw, rows, s->nr_counters);
		free(rows);
		free(lines);
	}
	rows = range_rows(s, ROWS_TOTAL, &n, (uint64_t)(run.elapsed_s * 1e9));
	if (n)
		report_final_ranges(&s->report, run.elapsed_s, rows, n);
	free(rows);
}

void session_print_final(struct session *s)
{
	print_final(s, ROWS_TOTAL);
}

void session_print_summary(struct session *s)
{
	print_final(s, ROWS_SHOWN);
}
