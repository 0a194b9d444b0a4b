/*
 * rows: report rows from a run's views (status, counts, times) for the
 * default window, every named window and every range view, and the
 * reports they feed (rows.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "agent/report/aggr.h"
#include "agent/report/json_report.h"
#include "agent/base/log.h"
#include "agent/ranges/range_registry.h"
#include "agent/ranges/range_set.h"
#include "agent/report/rows.h"
#include "agent/report/run.h"

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double seconds_since_start(const struct run *run)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return seconds_between(&run->started, &now);
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

struct report_row *rows_of_views(const struct run *run, struct view *views, enum rows_mode mode)
{
	struct report_row *rows = calloc(run->nr_counters ? run->nr_counters : 1, sizeof(*rows));

	if (!rows)
		return NULL;
	for (size_t i = 0; i < run->nr_counters; i++) {
		row_fill(&rows[i], &views[i], mode);
		rows[i].cgroup = run->opts->cgroup;
	}
	return rows;
}

/* The default window's rows per key under -A and --per-* (malloc'd, *n
 * of them), from its rows per counter just taken; NULL without a mode,
 * or when out of memory (report->out_of_memory then set). */
static struct report_row *aggr_rows_of(const struct run *run, struct report *report,
				       const struct report_row *totals, enum rows_mode mode,
				       size_t *n)
{
	struct report_row *rows;

	*n = 0;
	if (!run->aggr || !totals)
		return NULL;
	rows = aggr_rows(run->aggr, run->default_views, totals, run->nr_counters,
			 mode == ROWS_INTERVAL ? AGGR_VALUES_INTERVAL :
			 mode == ROWS_SHOWN ? AGGR_VALUES_SHOWN : AGGR_VALUES_TOTAL, n);
	if (!rows)
		report->out_of_memory = true;
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

struct report_row *rows_of_ranges(const struct run *run, enum rows_mode mode, size_t *n,
				  uint64_t span_ns)
{
	struct report_row *rows;
	size_t total = 0;

	*n = 0;
	for (size_t i = 0; i < range_registry_nr_sets(run->ranges); i++) {
		struct range_set *rs = range_registry_set(run->ranges, i);

		for (size_t sp = 0; sp < range_set_nr_specs(rs); sp++)
			total += range_set_nr_events(rs, sp);
	}
	rows = calloc(total ? total : 1, sizeof(*rows));
	if (!rows)
		return NULL;
	for (size_t i = 0; i < range_registry_nr_sets(run->ranges); i++) {
		struct range_set *rs = range_registry_set(run->ranges, i);
		bool incomplete = range_set_lost(rs) > 0;

		for (size_t sp = 0; sp < range_set_nr_specs(rs); sp++) {
			for (size_t e = 0; e < range_set_nr_events(rs, sp); e++) {
				uint64_t value = range_set_value(rs, sp, e);
				uint64_t *base = range_set_interval_base(rs, sp, e);
				struct report_row *row = &rows[(*n)++];

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

void rows_report_run(const struct run *run, struct report_run *out)
{
	struct timespec ended = run->ended;

	*out = (struct report_run){ .target = run->target };
	out->user_s = out->sys_s = -1;
	if (ended.tv_sec == 0 && ended.tv_nsec == 0)
		clock_gettime(CLOCK_MONOTONIC, &ended);
	out->elapsed_s = seconds_between(&run->started, &ended);
	/* As perf 6.1: no user and sys times system-wide (-a, -C), where
	 * the workload's are not what was counted. */
	if (run->workload_usage && !run->opts->system_wide && !run->opts->cpu_list) {
		const struct rusage *ru = run->workload_usage;

		out->user_s = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
		out->sys_s = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	}
}

/*
 * -v: perf's "NAME: count enabled running" line per counter each time it
 * reads them, before the report's lines and on the report's output; a
 * counter that could not be opened gets "failed to read counter NAME" on
 * stderr instead, as in perf 6.1.
 */
static void print_verbose(const struct run *run, FILE *out, const struct report_row *rows)
{
	if (!run->opts->verbose)
		return;
	for (size_t i = 0; i < run->nr_counters; i++) {
		if (!run->counters[i].supported)
			log_info("failed to read counter %s", rows[i].event);
		else
			fprintf(out, "%s: %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", rows[i].event,
				rows[i].count, rows[i].enabled_ns, rows[i].running_ns);
	}
}

void rows_print_verbose_end(const struct run *run, struct report *report)
{
	struct report_row *rows;

	if (!run->opts->verbose)
		return;
	rows = rows_of_views(run, run->default_views, ROWS_INTERVAL);
	if (rows)
		print_verbose(run, report->out, rows);
	else
		report->out_of_memory = true;
	free(rows);
}

/* The default window's interval lines, per key under -A and --per-*. */
static void print_interval_default(const struct run *run, struct report *report,
				   struct json_report *json, enum rows_mode mode, double now)
{
	struct report_row *rows = rows_of_views(run, run->default_views, mode), *per_key;
	size_t n;

	if (!rows) {
		report->out_of_memory = true;
		return;
	}
	print_verbose(run, report->out, rows);
	per_key = aggr_rows_of(run, report, rows, mode, &n);
	if (per_key)
		report_interval(report, now, per_key, n);
	else if (!run->aggr)
		report_interval(report, now, rows, run->nr_counters);
	/* The document's series keeps each event's total. */
	json_report_interval_rows(json, NULL, rows, run->nr_counters);
	free(per_key);
	free(rows);
}

void rows_print_interval(const struct run *run, struct report *report, struct json_report *json,
			 enum rows_mode mode)
{
	double now = seconds_since_start(run);
	struct report_row *rows;
	size_t n;

	/* Only intervals go into the document's series, not snapshots. */
	if (mode != ROWS_INTERVAL)
		json = NULL;
	json_report_interval_begin(json, (uint64_t)(now * 1e9));
	print_interval_default(run, report, json, mode, now);
	for (size_t i = 0; i < run->nr_windows; i++) {
		struct report_window rw = report_window_of(run->windows[i]);

		rows = rows_of_views(run, run->windows[i]->views, mode);
		if (!rows) {
			report->out_of_memory = true;
			continue;
		}
		report_interval_window(report, now, &rw, rows, run->nr_counters);
		json_report_interval_rows(json, run->windows[i]->name, rows, run->nr_counters);
		free(rows);
	}
	rows = rows_of_ranges(run, mode, &n, mode == ROWS_INTERVAL ? report->interval_ns :
			      (uint64_t)(now * 1e9));
	if (!rows)
		report->out_of_memory = true;
	if (n)
		report_interval_ranges(report, now, rows, n);
	json_report_interval_rows(json, NULL, rows, n);
	json_report_interval_end(json);
	free(rows);
}

/* The per-call table's lines for window w (malloc'd): the calls' wall
 * time, then each event. */
static struct report_call_stat *call_stats_of(const struct run *run, const struct window *w,
					      size_t *n)
{
	struct report_call_stat *lines = calloc(run->nr_counters + 1, sizeof(*lines));

	*n = 0;
	if (!lines || !w->calls)
		return lines;
	for (size_t i = 0; i <= run->nr_counters; i++) {
		const struct stats *st = i < run->nr_counters ? &w->call_stats[i] : &w->time_stats;
		struct report_call_stat *line = &lines[(*n)++];

		line->name = i < run->nr_counters ? run->counters[i].def.name : "wall time (ns)";
		line->supported = i == run->nr_counters || run->counters[i].supported;
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

/* The final report's block of each named window, with its per-call table. */
static void print_final_windows(const struct run *run, struct report *report)
{
	for (size_t i = 0; i < run->nr_windows; i++) {
		struct report_window rw = report_window_of(run->windows[i]);
		struct report_call_stat *lines = call_stats_of(run, run->windows[i],
							       &rw.nr_call_stats);
		struct report_row *rows = rows_of_views(run, run->windows[i]->views, ROWS_TOTAL);

		rw.call_stats = lines;
		rw.call_stats_sampled = run->windows[i]->log.kept < run->windows[i]->calls;
		if (rows && lines)
			report_final_window(report, &rw, rows, run->nr_counters);
		else
			report->out_of_memory = true;
		free(rows);
		free(lines);
	}
}

void rows_print_final(const struct run *run, struct report *report, enum rows_mode mode)
{
	struct report_run facts;
	struct report_row *rows, *per_key;
	size_t n;

	rows = rows_of_views(run, run->default_views, mode);
	if (!rows) {
		report->out_of_memory = true;
		return;
	}
	rows_report_run(run, &facts);
	print_verbose(run, report->out, rows);
	per_key = aggr_rows_of(run, report, rows, mode, &n);
	if (per_key)
		report_final(report, &facts, per_key, n);
	else if (!run->aggr)
		report_final(report, &facts, rows, run->nr_counters);
	free(per_key);
	free(rows);
	print_final_windows(run, report);
	rows = rows_of_ranges(run, ROWS_TOTAL, &n, (uint64_t)(facts.elapsed_s * 1e9));
	if (!rows)
		report->out_of_memory = true;
	if (n)
		report_final_ranges(report, facts.elapsed_s, rows, n);
	free(rows);
}
