/*
 * repeat: the runs of -r N kept as per-run series, and reported as perf
 * stat -r reports them (repeat.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "agent/report/repeat.h"
#include "agent/report/rows.h"
#include "agent/report/run.h"
#include "agent/base/utf8.h"

int repeat_init(struct repeat *rep, unsigned runs)
{
	memset(rep, 0, sizeof(*rep));
	rep->runs_wanted = runs;
	rep->elapsed_ns = calloc(runs, sizeof(*rep->elapsed_ns));
	rep->exit_codes = calloc(runs, sizeof(*rep->exit_codes));
	if (!rep->elapsed_ns || !rep->exit_codes) {
		repeat_free(rep);
		return -ENOMEM;
	}
	return 0;
}

static void repeat_series_clear(struct repeat_series *sr)
{
	free(sr->event);
	free(sr->label);
	free(sr->values);
	free(sr->ena);
	free(sr->run);
	free(sr->present);
}

void repeat_free(struct repeat *rep)
{
	for (size_t i = 0; i < rep->nr_series; i++)
		repeat_series_clear(&rep->series[i]);
	free(rep->series);
	free(rep->elapsed_ns);
	free(rep->exit_codes);
	memset(rep, 0, sizeof(*rep));
}

bool repeat_done(const struct repeat *rep)
{
	return rep->stopped || rep->runs_done >= rep->runs_wanted;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The series of (kind, label, event), or NULL when there is none. */
static const struct repeat_series *repeat_series_find(const struct repeat *rep,
						      enum repeat_kind kind,
						      const char *label, const char *event)
{
	for (size_t i = 0; i < rep->nr_series; i++) {
		const struct repeat_series *sr = &rep->series[i];

		if (sr->kind == kind && same(sr->label, label) && same(sr->event, event))
			return sr;
	}
	return NULL;
}

/* The series of (kind, label, event), made the first time it is seen;
 * NULL when out of memory (rep->out_of_memory then set). */
static struct repeat_series *repeat_series_of(struct repeat *rep, enum repeat_kind kind,
					      const char *label, const char *event)
{
	const struct repeat_series *found = repeat_series_find(rep, kind, label, event);
	struct repeat_series *sr;
	unsigned n = rep->runs_wanted;

	if (found)
		return &rep->series[found - rep->series];
	sr = realloc(rep->series, (rep->nr_series + 1) * sizeof(*sr));
	if (!sr) {
		rep->out_of_memory = true;
		return NULL;
	}
	rep->series = sr;
	sr = &rep->series[rep->nr_series++];
	memset(sr, 0, sizeof(*sr));
	sr->kind = kind;
	sr->label = label ? strdup(label) : NULL;
	sr->event = event ? strdup(event) : NULL;
	sr->values = calloc(n, sizeof(*sr->values));
	sr->ena = calloc(n, sizeof(*sr->ena));
	sr->run = calloc(n, sizeof(*sr->run));
	sr->present = calloc(n, sizeof(*sr->present));
	if ((label && !sr->label) || (event && !sr->event) ||
	    !sr->values || !sr->ena || !sr->run || !sr->present) {
		repeat_series_clear(sr);
		rep->nr_series--;
		rep->out_of_memory = true;
		return NULL;
	}
	return sr;
}

/* A figure that is no event: a window's calls or open time. */
static void repeat_put(struct repeat *rep, enum repeat_kind kind, const char *label,
		       uint64_t value)
{
	struct repeat_series *sr = repeat_series_of(rep, kind, label, NULL);
	unsigned r = rep->runs_done;

	if (!sr)
		return;
	sr->supported = true;
	sr->values[r] = value;
	sr->ena[r] = sr->run[r] = 1;
	sr->present[r] = true;
}

/* One report row of this run: its count scaled as perf scales it
 * (count * enabled / running), or nothing when it was not counted. */
static void repeat_put_row(struct repeat *rep, enum repeat_kind kind, const char *label,
			   const struct report_row *row)
{
	struct repeat_series *sr = repeat_series_of(rep, kind, label, row->event);
	unsigned r = rep->runs_done;
	uint64_t count = row->count;

	if (!sr)
		return;
	sr->is_clock = row->is_clock;
	sr->unit_ns = row->unit != NULL;
	sr->supported |= row->status != REPORT_NOT_SUPPORTED;
	sr->incomplete |= row->incomplete;
	if (row->status != REPORT_COUNTED || !row->running_ns || !row->enabled_ns)
		return;
	if (row->running_ns < row->enabled_ns)
		count = (uint64_t)((double)count * (double)row->enabled_ns /
				   (double)row->running_ns);
	sr->values[r] = count;
	sr->ena[r] = row->enabled_ns;
	sr->run[r] = row->running_ns;
	sr->present[r] = true;
}

void repeat_record(struct repeat *rep, const struct run *run, int exit_code)
{
	struct report_run facts;
	struct report_row *rows;
	size_t n;

	if (repeat_done(rep))
		return;
	rows_report_run(run, &facts);
	rep->elapsed_ns[rep->runs_done] = (uint64_t)(facts.elapsed_s * 1e9 + 0.5);
	rep->exit_codes[rep->runs_done] = exit_code;
	rows = rows_of_views(run, run->default_views, ROWS_TOTAL);
	rep->out_of_memory |= !rows;
	for (size_t i = 0; rows && i < run->nr_counters; i++)
		repeat_put_row(rep, REPEAT_EVENT, NULL, &rows[i]);
	free(rows);
	for (size_t w = 0; w < run->nr_windows; w++) {
		struct window *win = run->windows[w];
		struct repeat_series *calls;

		repeat_put(rep, REPEAT_WINDOW_CALLS, win->name, win->calls);
		repeat_put(rep, REPEAT_WINDOW_OPEN, win->name, window_open_ns(win));
		calls = repeat_series_of(rep, REPEAT_WINDOW_CALLS, win->name, NULL);
		if (calls)
			calls->open_at_end = win->open_at_finish;
		rows = rows_of_views(run, win->views, ROWS_TOTAL);
		rep->out_of_memory |= !rows;
		for (size_t i = 0; rows && i < run->nr_counters; i++)
			repeat_put_row(rep, REPEAT_WINDOW_EVENT, win->name, &rows[i]);
		free(rows);
	}
	rows = rows_of_ranges(run, ROWS_TOTAL, &n, rep->elapsed_ns[rep->runs_done]);
	rep->out_of_memory |= !rows;
	for (size_t i = 0; i < n; i++)
		repeat_put_row(rep, REPEAT_RANGE, rows[i].range, &rows[i]);
	free(rows);
	rep->runs_done++;
}

/* The statistics of a series over the runs that have a value. */
static void repeat_stats(const struct repeat *rep, const struct repeat_series *sr,
			 struct stats *st, double *ena, double *run)
{
	stats_init(st, 0);
	*ena = *run = 0;
	for (unsigned r = 0; r < rep->runs_done; r++) {
		if (!sr->present[r])
			continue;
		stats_add(st, sr->values[r]);
		if (!sr->ena)
			continue;	/* the elapsed times: no enabled, running */
		*ena += ((double)sr->ena[r] - *ena) / (double)st->n;
		*run += ((double)sr->run[r] - *run) / (double)st->n;
	}
}

/* perf's "+-": the standard deviation of the mean, in percent of it. */
static double repeat_noise_pct(const struct stats *st)
{
	double mean = stats_mean(st);

	return mean != 0 ? 100.0 * stats_stddev_of_mean(st) / mean : 0;
}

static struct report_row repeat_row_of(const struct repeat *rep, const struct repeat_series *sr)
{
	struct report_row row = {
		.event = sr->event,
		.is_clock = sr->is_clock,
		.unit = sr->unit_ns ? "ns" : NULL,
		.range = sr->kind == REPEAT_RANGE ? sr->label : NULL,
		.incomplete = sr->incomplete,
		.runs = rep->runs_done,
	};
	struct stats st;
	double ena, run;

	repeat_stats(rep, sr, &st, &ena, &run);
	if (!sr->supported)
		row.status = REPORT_NOT_SUPPORTED;
	else if (!st.n)
		row.status = REPORT_NOT_COUNTED;
	row.mean = stats_mean(&st);
	row.noise_pct = repeat_noise_pct(&st);
	/* perf's times are whole nanoseconds; a counted mean is never 0. */
	row.enabled_ns = st.n ? (uint64_t)(ena + 0.5) : 0;
	row.running_ns = st.n ? (uint64_t)(run + 0.5) : 0;
	if (st.n && !row.enabled_ns)
		row.enabled_ns = row.running_ns = 1;
	stats_free(&st);
	return row;
}

/* The rows of one kind (and label), in the order first seen. */
static struct report_row *repeat_rows(const struct repeat *rep, enum repeat_kind kind,
				      const char *label, size_t *n)
{
	struct report_row *rows = calloc(rep->nr_series + 1, sizeof(*rows));

	*n = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < rep->nr_series; i++) {
		const struct repeat_series *sr = &rep->series[i];

		if (sr->kind == kind && (kind == REPEAT_RANGE || same(sr->label, label)))
			rows[(*n)++] = repeat_row_of(rep, sr);
	}
	return rows;
}

static double repeat_series_mean(const struct repeat *rep, const struct repeat_series *sr)
{
	struct stats st;
	double ena, run, mean;

	repeat_stats(rep, sr, &st, &ena, &run);
	mean = stats_mean(&st);
	stats_free(&st);
	return mean;
}

void repeat_print(const struct repeat *rep, const struct run *last, struct report *report)
{
	struct report_run run;
	struct report_row *rows;
	struct stats elapsed;
	size_t n;

	rows_report_run(last, &run);
	stats_init(&elapsed, 0);
	for (unsigned r = 0; r < rep->runs_done; r++)
		stats_add(&elapsed, rep->elapsed_ns[r]);
	run.runs = rep->runs_done;
	run.elapsed_s = stats_mean(&elapsed) / 1e9;
	run.elapsed_sd_s = stats_stddev_of_mean(&elapsed) / 1e9;
	stats_free(&elapsed);
	report->out_of_memory |= rep->out_of_memory;
	rows = repeat_rows(rep, REPEAT_EVENT, NULL, &n);
	if (rows)
		report_final(report, &run, rows, n);
	else
		report->out_of_memory = true;
	free(rows);
	for (size_t i = 0; i < rep->nr_series; i++) {
		const struct repeat_series *sr = &rep->series[i], *open;
		struct report_window rw = { .name = sr->label, .runs = rep->runs_done };

		if (sr->kind != REPEAT_WINDOW_CALLS)
			continue;
		/* Made with the calls' series, unless memory ran out then. */
		open = repeat_series_find(rep, REPEAT_WINDOW_OPEN, sr->label, NULL);
		rows = repeat_rows(rep, REPEAT_WINDOW_EVENT, sr->label, &n);
		if (!open || !rows) {
			report->out_of_memory = true;
			free(rows);
			continue;
		}
		/* The runs that opened the window: "(2 runs)" of -r 3. */
		rw.runs = 0;
		for (unsigned r = 0; r < rep->runs_done; r++)
			rw.runs += sr->present[r];
		rw.calls_mean = repeat_series_mean(rep, sr);
		rw.calls = (unsigned long)(rw.calls_mean + 0.5);
		rw.open_at_end = sr->open_at_end;
		rw.open_s = repeat_series_mean(rep, open) / 1e9;
		report_final_window(report, &rw, rows, n);
		free(rows);
	}
	rows = repeat_rows(rep, REPEAT_RANGE, NULL, &n);
	report->out_of_memory |= !rows;
	if (n)
		report_final_ranges(report, run.elapsed_s, rows, n);
	free(rows);
}

/* ---- --json-file ---------------------------------------------------- */

/* obj[key] = value, key made valid UTF-8: 0, or -1 out of memory
 * (value is freed either way). */
static int repeat_json_set(json_t *obj, const char *key, json_t *value)
{
	char *clean = utf8_valid(key) ? NULL : utf8_sanitize(key);
	int rc;

	if (!utf8_valid(key) && !clean) {
		json_decref(value);
		return -1;
	}
	rc = json_object_set_new(obj, clean ? clean : key, value);
	free(clean);
	return rc;
}

static json_t *repeat_json_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* {"values": [per run, null where the run had none], "mean", "stddev",
 * "stddev_of_mean", "noise_pct"}; the statistics over the runs that have
 * a value, null when none has.  NULL when out of memory. */
static json_t *repeat_json_series(const struct repeat *rep, const struct repeat_series *sr)
{
	json_t *values = json_array(), *j = json_object();
	struct stats st;
	double ena, run;
	bool any;
	int failed = 0;

	for (unsigned r = 0; r < rep->runs_done; r++)
		failed |= json_array_append_new(values, sr->present[r] ?
						json_integer((json_int_t)sr->values[r]) :
						json_null());
	repeat_stats(rep, sr, &st, &ena, &run);
	any = st.n > 0;
	/* Set one by one, in the document's order: each call takes its
	 * value even when it fails, so nothing leaks out of memory. */
	failed |= json_object_set_new(j, "values", values);
	failed |= json_object_set_new(j, "runs", json_integer((json_int_t)st.n));
	failed |= json_object_set_new(j, "mean",
				      any ? repeat_json_real(stats_mean(&st)) : json_null());
	failed |= json_object_set_new(j, "stddev",
				      any ? repeat_json_real(stats_stddev(&st)) : json_null());
	failed |= json_object_set_new(j, "stddev_of_mean",
				      any ? repeat_json_real(stats_stddev_of_mean(&st)) : json_null());
	failed |= json_object_set_new(j, "noise_pct",
				      any ? repeat_json_real(repeat_noise_pct(&st)) : json_null());
	stats_free(&st);
	if (failed) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* A named window's series into windows[label]: 0, or -1 out of memory. */
static int repeat_json_window(json_t *windows, const struct repeat *rep,
			      const struct repeat_series *sr)
{
	char *key = utf8_sanitize(sr->label);
	json_t *win;

	if (!key)
		return -1;
	win = json_object_get(windows, key);
	if (!win) {
		win = json_object();
		if (json_object_set_new(win, "counts", json_object()) ||
		    json_object_set_new(windows, key, win)) {
			free(key);
			return -1;
		}
	}
	free(key);
	if (sr->kind == REPEAT_WINDOW_EVENT)
		return repeat_json_set(json_object_get(win, "counts"), sr->event,
				       repeat_json_series(rep, sr));
	return json_object_set_new(win, sr->kind == REPEAT_WINDOW_CALLS ? "calls" : "time_ns",
				   repeat_json_series(rep, sr));
}

/* Series sr into counts, windows or ranges: 0, or -1 out of memory. */
static int repeat_json_add(json_t *counts, json_t *windows, json_t *ranges,
			   const struct repeat *rep, const struct repeat_series *sr)
{
	char *key;
	int rc;

	switch (sr->kind) {
	case REPEAT_EVENT:
		return repeat_json_set(counts, sr->event, repeat_json_series(rep, sr));
	case REPEAT_RANGE:
		if (asprintf(&key, "%s@%s", sr->event, sr->label) < 0)
			return -1;
		rc = repeat_json_set(ranges, key, repeat_json_series(rep, sr));
		free(key);
		return rc;
	default:
		return repeat_json_window(windows, rep, sr);
	}
}

json_t *repeat_json(const struct repeat *rep)
{
	json_t *codes = json_array(), *counts = json_object(), *windows = json_object(),
	       *ranges = json_object(), *doc = json_object();
	struct repeat_series elapsed = {
		.values = rep->elapsed_ns, .present = calloc(rep->runs_wanted ? rep->runs_wanted : 1, 1),
	};
	int failed = !elapsed.present;

	for (unsigned r = 0; r < rep->runs_done; r++) {
		failed |= json_array_append_new(codes, json_integer(rep->exit_codes[r]));
		if (elapsed.present)
			elapsed.present[r] = true;
	}
	for (size_t i = 0; i < rep->nr_series; i++)
		failed |= repeat_json_add(counts, windows, ranges, rep, &rep->series[i]);
	/* In the document's order; each call takes its value, failed or not. */
	failed |= json_object_set_new(doc, "runs", json_integer((json_int_t)rep->runs_done));
	failed |= json_object_set_new(doc, "runs_wanted",
				      json_integer((json_int_t)rep->runs_wanted));
	failed |= json_object_set_new(doc, "exit_status", codes);
	failed |= json_object_set_new(doc, "elapsed_ns",
				      elapsed.present ? repeat_json_series(rep, &elapsed) : NULL);
	failed |= json_object_set_new(doc, "counts", counts);
	failed |= json_object_set_new(doc, "windows", windows);
	failed |= json_object_set_new(doc, "ranges", ranges);
	free(elapsed.present);
	if (failed || rep->out_of_memory) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}
