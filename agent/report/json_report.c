/*
 * json_report: the window-end reply and the --json-file run document.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "agent/base/json_buf.h"
#include "agent/report/aggr.h"
#include "agent/report/json_report.h"
#include "agent/base/log.h"
#include "agent/base/output.h"
#include "agent/report/report.h"
#include "agent/ranges/range_registry.h"
#include "agent/ranges/range_set.h"
#include "agent/report/run.h"
#include "agent/base/signals.h"
#include "agent/base/utf8.h"
#include "proto/ctl_proto.h"

struct json_report {
	const char *path;		/* --json-file, or NULL: no document */
	struct output out;		/* a FIFO or a device, written in place */
	int tmp_fd;			/* a regular file: the temporary one, or -1 */
	char *tmp_path, *target;	/* ... and what it is renamed to */
	json_t *intervals;		/* the -I series */
	json_t *interval;		/* the one being recorded */
	unsigned long intervals_dropped;	/* past JSON_REPORT_INTERVALS_MAX */
	struct json_buf reply;		/* the window-end reply, kept between calls */
	size_t *reply_keys;		/* its keys per counter */
	/* Some -I interval could not be recorded whole for want of memory:
	 * the document would be short, so writing it fails instead. */
	bool out_of_memory;
};

/*
 * Every string that enters the JSON goes through here: jansson refuses
 * text that is not UTF-8 (json_string returns NULL, and the object or
 * array it was meant for silently lacks it), and command arguments,
 * filters and range specs can be any bytes.  Stray bytes become U+FFFD.
 * NULL stays NULL (an "o?" pack gives null), and so is out of memory.
 *
 * Out of memory anywhere in the document: a part that cannot be made is
 * NULL, and a json_pack given NULL for an "o" fails (freeing its other
 * values), so that the whole document fails rather than lacks the part.
 */
static json_t *json_text(const char *text)
{
	char *clean;
	json_t *j;

	if (!text)
		return NULL;
	/* Names are nearly always UTF-8 already: no copy on the reply path. */
	if (utf8_valid(text))
		return json_string_nocheck(text);
	clean = utf8_sanitize(text);
	j = clean ? json_string_nocheck(clean) : NULL;
	free(clean);
	return j;
}

/* text as json_text, and null for NULL text; NULL out of memory. */
static json_t *json_text_or_null(const char *text)
{
	return text ? json_text(text) : json_null();
}

/* obj[key] = value, with the key made UTF-8 as json_text does: 0, or -1
 * out of memory (value freed; obj or value NULL fail the same way). */
static int json_set(json_t *obj, const char *key, json_t *value)
{
	char *clean;
	int rc;

	if (utf8_valid(key))
		return json_object_set_new_nocheck(obj, key, value);
	clean = utf8_sanitize(key);
	if (!clean) {
		json_decref(value);
		return -1;
	}
	rc = json_object_set_new_nocheck(obj, clean, value);
	free(clean);
	return rc;
}

/* arr NULL, or an arr to which a failed append was made: freed, NULL. */
static json_t *json_drop_if(json_t *arr, int failed)
{
	if (!failed)
		return arr;
	json_decref(arr);
	return NULL;
}

/*
 * The window-end reply, on the hot path: written into jr's kept
 * buffer (agent/json_buf), no jansson tree and no allocation per call.
 * The bytes are those jansson gave for the same object, which the tests
 * compare with: an -e event named twice is one key, where the first one
 * was, with the last one's value.
 */

/* Per counter: the counter whose value its key shows (the last one of its
 * name), or nr_counters when an earlier one already showed the name.
 * Worked out once: the events do not change during a run. */
static const size_t *json_reply_keys(struct json_report *jr, const struct run *run)
{
	size_t n = run->nr_counters;

	if (jr->reply_keys || !n)
		return jr->reply_keys;
	jr->reply_keys = malloc(n * sizeof(*jr->reply_keys));
	if (!jr->reply_keys)
		return NULL;
	for (size_t i = 0; i < n; i++)
		jr->reply_keys[i] = i;
	for (size_t i = 0; i < n; i++) {
		if (jr->reply_keys[i] == n)
			continue;
		for (size_t j = i + 1; j < n; j++) {
			if (strcmp(run->counters[i].def.name, run->counters[j].def.name) == 0) {
				jr->reply_keys[i] = j;
				jr->reply_keys[j] = n;
			}
		}
	}
	return jr->reply_keys;
}

/* {"event":count,...}; null for an event the machine lacks.  values are
 * the counts, or NULL for views' values now. */
static void json_reply_counts(const struct run *run, const size_t *keys,
			      const struct counter_value *values, struct view *views,
			      struct json_buf *b)
{
	bool first = true;

	json_buf_raw(b, "{", 1);
	for (size_t i = 0; i < run->nr_counters; i++) {
		size_t k = keys ? keys[i] : i;
		const struct counter *c;

		if (k == run->nr_counters)
			continue;
		c = &run->counters[k];
		json_buf_raw(b, ",", !first);
		first = false;
		json_buf_string(b, run->counters[i].def.name);
		json_buf_raw(b, ":", 1);
		if (!c->supported) {
			json_buf_raw(b, "null", 4);
		} else if (values) {
			json_buf_int(b, values[k].val);
		} else {
			struct counter_value v;

			view_value(&views[k], &v);
			json_buf_int(b, v.val);
		}
	}
	json_buf_raw(b, "}", 1);
}

/*
 * {"event@range":count,...} for every range view: its total so far, or
 * with at_begin, what it counted since then (a view loaded after the
 * begin counts whole).
 */
static void json_reply_ranges(const struct run *run, const uint64_t *at_begin, size_t nr,
			      struct json_buf *b)
{
	size_t k = 0;

	json_buf_raw(b, "{", 1);
	for (size_t i = 0; i < range_registry_nr_sets(run->ranges); i++) {
		const struct range_set *rs = range_registry_set(run->ranges, i);

		for (size_t sp = 0; sp < range_set_nr_specs(rs); sp++) {
			for (size_t e = 0; e < range_set_nr_events(rs, sp); e++) {
				uint64_t value = range_set_value(rs, sp, e);

				if (at_begin && k < nr)
					value -= at_begin[k];
				json_buf_raw(b, ",", k > 0);
				k++;
				json_buf_string2(b, range_set_event_name(rs, sp, e), "@",
						 range_set_label(rs, sp));
				json_buf_raw(b, ":", 1);
				if (range_set_supported(rs, sp, e))
					json_buf_int(b, value);
				else
					json_buf_raw(b, "null", 4);
			}
		}
	}
	json_buf_raw(b, "}", 1);
}

#define JSON_BUF_LIT(b, text) json_buf_raw(b, text, sizeof(text) - 1)

const char *json_report_window_end(struct json_report *jr, const struct run *run,
				   const struct window *w, const struct window_end_result *result,
				   char *reason, size_t len)
{
	const size_t *keys = json_reply_keys(jr, run);
	struct json_buf *b = &jr->reply;
	const char *text;

	if (!keys && run->nr_counters) {
		snprintf(reason, len, "cannot build the window's counts as JSON: out of memory");
		return NULL;
	}
	/* Room for "ack ", the line's end and its NUL (ctl_reply_format). */
	json_buf_reset(b, CTL_REPLY_LONG_MAX - 6);
	JSON_BUF_LIT(b, "{\"window\":");
	json_buf_string(b, w->name);
	JSON_BUF_LIT(b, ",\"calls\":");
	json_buf_int(b, w->calls);
	JSON_BUF_LIT(b, ",\"call\":{\"time_ns\":");
	json_buf_int(b, result->call_ns);
	JSON_BUF_LIT(b, ",\"counts\":");
	json_reply_counts(run, keys, result->call, NULL, b);
	JSON_BUF_LIT(b, ",\"ranges\":");
	json_reply_ranges(run, result->ranges_at_begin, result->nr_ranges_at_begin, b);
	JSON_BUF_LIT(b, "},\"total\":{\"time_ns\":");
	json_buf_int(b, window_open_ns(w));
	JSON_BUF_LIT(b, ",\"counts\":");
	json_reply_counts(run, keys, NULL, w->views, b);
	JSON_BUF_LIT(b, "},\"ranges\":");
	json_reply_ranges(run, NULL, 0, b);
	JSON_BUF_LIT(b, "}");
	text = json_buf_text(b);
	/* Never a bare "ack" that looks like a reply without counts. */
	if (!text)
		snprintf(reason, len, "cannot build the window's counts as JSON: %s",
			 b->len + 1 >= b->max ? "longer than a reply may be" : "out of memory");
	return text;
}

static const char *json_event_type(const struct counter *c)
{
	switch (c->def.attr.type) {
	case PERF_TYPE_HARDWARE: return "hardware";
	case PERF_TYPE_SOFTWARE: return "software";
	case PERF_TYPE_TRACEPOINT: return "tracepoint";
	default: return "other";
	}
}

static json_t *json_events(const struct run *run)
{
	json_t *events = json_array();
	int failed = 0;

	for (size_t i = 0; i < run->nr_counters; i++) {
		const struct counter *c = &run->counters[i];

		failed |= json_array_append_new(events, json_pack("{s:o, s:s, s:b, s:s, s:o}",
			"name", json_text(c->def.name), "type", json_event_type(c),
			"supported", c->supported, "unit",
			c->def.is_clock || c->def.tool != EVENT_TOOL_NONE ? "ns" : "",
			"filter", json_text_or_null(c->def.filter)));
	}
	return json_drop_if(events, failed);
}

/* One view: the counter's event through a gate ("default" or "window"). */
static json_t *json_view(const struct view *v, const char *gate, const char *window)
{
	struct counter_value value;
	const char *status;

	view_value((struct view *)v, &value);
	/* As the text report: a gate opened on a counter that never ran
	 * shows "<not counted>" there, so "not counted" here. */
	status = !v->counter->supported ? "not supported" :
		 v->ever_opened && value.ena && value.run ? "counted" : "not counted";
	return json_pack("{s:o, s:s, s:o, s:s, s:I, s:I, s:I}",
		"event", json_text(v->counter->def.name), "gate", gate,
		"window", json_text_or_null(window),
		"status", status, "count", (json_int_t)value.val,
		"time_enabled_ns", (json_int_t)value.ena, "time_running_ns", (json_int_t)value.run);
}

/* Range views: one per event of every spec of every set: 0, or -1 out
 * of memory. */
static int json_range_views(const struct run *run, json_t *views)
{
	int failed = 0;

	for (size_t i = 0; i < range_registry_nr_sets(run->ranges); i++) {
		const struct range_set *rs = range_registry_set(run->ranges, i);

		for (size_t sp = 0; sp < range_set_nr_specs(rs); sp++) {
			for (size_t e = 0; e < range_set_nr_events(rs, sp); e++) {
				bool ok = range_set_supported(rs, sp, e);

				failed |= json_array_append_new(views, json_pack(
					"{s:o, s:s, s:o, s:s, s:I, s:b}",
					"event", json_text(range_set_event_name(rs, sp, e)),
					"gate", "range", "range", json_text(range_set_label(rs, sp)),
					"status", ok ? "counted" : "not supported",
					"count", (json_int_t)range_set_value(rs, sp, e),
					"incomplete", range_set_lost(rs) > 0));
			}
		}
	}
	return failed;
}

/* Every range set: its specs as written, and what it lost. */
static json_t *json_ranges(const struct run *run)
{
	json_t *ranges = json_array();
	int failed = 0;

	for (size_t i = 0; i < range_registry_nr_sets(run->ranges); i++) {
		const struct range_set *rs = range_registry_set(run->ranges, i);

		for (size_t sp = 0; sp < range_set_nr_specs(rs); sp++)
			failed |= json_array_append_new(ranges, json_pack("{s:o, s:o, s:o, s:b, s:I}",
				"label", json_text(range_set_label(rs, sp)),
				"name", json_text_or_null(range_set_name(rs)),
				"spec", json_text(range_set_spec_text(rs, sp)), "unloaded", range_set_is_unloaded(rs),
				"lost_records", (json_int_t)range_set_lost(rs)));
	}
	return json_drop_if(ranges, failed);
}

/* -A, --per-*: the default view's values per key, as the report's rows. */
static json_t *json_per_key(const struct run *run, struct view *v)
{
	const struct aggr_map *m = run->aggr;
	struct counter_value *sums = calloc(m->nr_keys ? m->nr_keys : 1, sizeof(*sums));
	int *nrs = calloc(m->nr_keys ? m->nr_keys : 1, sizeof(*nrs));
	json_t *keys = json_array();
	int failed = 0;

	if (!sums || !nrs) {
		free(sums);
		free(nrs);
		json_decref(keys);
		return NULL;
	}
	aggr_view_sums(m, v, AGGR_VALUES_TOTAL, sums, nrs);
	for (size_t k = 0; k < m->nr_keys; k++) {
		char name[64];
		const char *status = !v->counter->supported ? "not supported" :
				     v->ever_opened && nrs[k] && sums[k].ena && sums[k].run ?
				     "counted" : "not counted";

		aggr_key_name(m, k, name, sizeof(name));
		failed |= json_array_append_new(keys, json_pack("{s:o, s:i, s:s, s:I, s:I, s:I}",
			"key", json_text(name), "aggregate_number", nrs[k], "status", status,
			"count", (json_int_t)sums[k].val, "time_enabled_ns", (json_int_t)sums[k].ena,
			"time_running_ns", (json_int_t)sums[k].run));
	}
	free(sums);
	free(nrs);
	return json_drop_if(keys, failed);
}

static json_t *json_views(const struct run *run)
{
	json_t *views = json_array();
	int failed = 0;

	for (size_t i = 0; i < run->nr_counters; i++) {
		json_t *view = json_view(&run->default_views[i], "default", NULL);

		if (run->aggr && json_object_set_new(view, "per_key",
						     json_per_key(run, &run->default_views[i])))
			failed = 1;
		failed |= json_array_append_new(views, view);
	}
	for (size_t w = 0; w < run->nr_windows; w++)
		for (size_t i = 0; i < run->nr_counters; i++)
			failed |= json_array_append_new(views,
							json_view(&run->windows[w]->views[i],
								  "window", run->windows[w]->name));
	failed |= json_range_views(run, views);
	return json_drop_if(views, failed);
}

/* A number, or null for NAN (a quantile with no kept values). */
static json_t *json_real_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* The statistics of one view's (view == nr_views: the wall time's)
 * per-call values; null for an event the machine lacks. */
static json_t *json_call_stats(const struct window *w, const struct stats *st, size_t view,
			       bool supported)
{
	if (!supported)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o}",
		"count", (json_int_t)st->n, "min", (json_int_t)st->min,
		"max", (json_int_t)st->max, "mean", json_real(stats_mean(st)),
		"stddev", json_real(stats_stddev(st)),
		"median", json_real_or_null(window_call_quantile(w, view, 0.5)),
		"p90", json_real_or_null(window_call_quantile(w, view, 0.9)),
		"p99", json_real_or_null(window_call_quantile(w, view, 0.99)));
}

/* qsort_r's order of two kept calls of the window w: by their begin. */
static int json_by_begin(const void *a, const void *b, void *w)
{
	const struct window *win = w;
	uint64_t x = win->log.begin_ns[*(const size_t *)a];
	uint64_t y = win->log.begin_ns[*(const size_t *)b];

	return (x > y) - (x < y);
}

static uint64_t ns_since(const struct timespec *start, uint64_t ns)
{
	uint64_t t0 = (uint64_t)start->tv_sec * 1000000000u + (uint64_t)start->tv_nsec;

	return ns > t0 ? ns - t0 : 0;
}

/* The kept calls, in the order they began: times since the start of the
 * run, and each event's count. */
static json_t *json_per_call(const struct run *run, const struct window *w)
{
	size_t kept = w->log.kept, *order = calloc(kept ? kept : 1, sizeof(*order));
	json_t *begin = json_array(), *end = json_array(), *counts = json_object();
	int failed = !order;

	for (size_t r = 0; order && r < kept; r++)
		order[r] = r;
	if (order)
		qsort_r(order, kept, sizeof(*order), json_by_begin, (void *)w);
	for (size_t r = 0; order && r < kept; r++) {
		failed |= json_array_append_new(begin, json_integer((json_int_t)
			ns_since(&run->started, w->log.begin_ns[order[r]])));
		failed |= json_array_append_new(end, json_integer((json_int_t)
			ns_since(&run->started, w->log.end_ns[order[r]])));
	}
	for (size_t i = 0; order && i < w->nr_views; i++) {
		json_t *values = json_array();
		int lost = 0;

		for (size_t r = 0; r < kept; r++)
			lost |= json_array_append_new(values, json_integer((json_int_t)
				w->log.values[order[r] * w->nr_views + i]));
		failed |= json_set(counts, run->counters[i].def.name,
				   run->counters[i].supported ? json_drop_if(values, lost) :
				   (json_decref(values), json_null()));
	}
	free(order);
	return json_pack("{s:I, s:b, s:o, s:o, s:o}",
		"kept", (json_int_t)kept, "sampled", kept < w->calls,
		"begin_ns", json_drop_if(begin, failed), "end_ns", json_drop_if(end, failed),
		"counts", json_drop_if(counts, failed));
}

static json_t *json_windows(const struct run *run)
{
	json_t *windows = json_array();
	int failed = 0;

	for (size_t i = 0; i < run->nr_windows; i++) {
		const struct window *w = run->windows[i];
		json_t *stats = json_null();

		if (w->calls) {
			json_t *counts = json_object();
			int lost = 0;

			for (size_t v = 0; v < w->nr_views; v++)
				lost |= json_set(counts, run->counters[v].def.name,
						 json_call_stats(w, &w->call_stats[v], v,
								 run->counters[v].supported));
			stats = json_pack("{s:o, s:o}",
				"time_ns", json_call_stats(w, &w->time_stats, w->nr_views, true),
				"counts", json_drop_if(counts, lost));
		}
		failed |= json_array_append_new(windows, json_pack("{s:o, s:I, s:I, s:I, s:o, s:o}",
			"name", json_text(w->name), "calls", (json_int_t)w->calls,
			"open_ns", (json_int_t)window_open_ns(w),
			"open_at_end", (json_int_t)w->open_at_finish,
			"stats", stats, "per_call", json_per_call(run, w)));
	}
	return json_drop_if(windows, failed);
}

/* ---- the -I series ------------------------------------------------------ */

void json_report_interval_begin(struct json_report *jr, uint64_t time_ns)
{
	if (!jr || !jr->path)
		return;
	if (!jr->intervals && !(jr->intervals = json_array())) {
		jr->out_of_memory = true;
		return;
	}
	if (json_array_size(jr->intervals) >= JSON_REPORT_INTERVALS_MAX) {
		jr->intervals_dropped++;
		return;
	}
	jr->interval = json_pack("{s:I, s:{}, s:{}, s:{}}", "time_ns", (json_int_t)time_ns,
				"default", "windows", "ranges");
	if (!jr->interval)
		jr->out_of_memory = true;
}

/* A row's value in the series: its count, null when its gate stayed shut
 * or the machine lacks the event. */
static json_t *json_row_value(const struct report_row *row)
{
	return row->status == REPORT_COUNTED && row->enabled_ns ?
	       json_integer((json_int_t)row->count) : json_null();
}

void json_report_interval_rows(struct json_report *jr, const char *window,
			       const struct report_row *rows, size_t n)
{
	json_t *into;
	int failed = 0;

	if (!jr || !jr->interval)
		return;
	/* Our own reference: json_set drops the value if it fails. */
	into = json_incref(json_object_get(jr->interval, "default"));
	if (window) {
		json_decref(into);
		into = json_object();
		failed |= json_set(json_object_get(jr->interval, "windows"), window,
				   json_incref(into));
	}
	for (size_t i = 0; i < n; i++) {
		char *key = NULL;

		if (!rows[i].range) {
			failed |= json_set(into, rows[i].event, json_row_value(&rows[i]));
			continue;
		}
		if (asprintf(&key, "%s@%s", rows[i].event, rows[i].range) < 0) {
			failed = 1;
			continue;
		}
		failed |= json_set(json_object_get(jr->interval, "ranges"), key,
				   json_row_value(&rows[i]));
		free(key);
	}
	json_decref(into);
	jr->out_of_memory |= failed != 0;
}

void json_report_interval_end(struct json_report *jr)
{
	if (!jr || !jr->interval)
		return;
	if (json_array_append_new(jr->intervals, jr->interval))
		jr->out_of_memory = true;
	jr->interval = NULL;
}

/* "SIGINT", "SIGHUP", ... (the signal that ended the run), "stop", or null
 * (the workload ended): fixed names, whatever the locale. */
static const char *json_ended_by(const struct run *run, char *buf, size_t size)
{
	if (run->exit_signal)
		return signals_name(run->exit_signal, buf, size);
	return run->stopped ? "stop" : NULL;
}

static json_t *json_run(const struct run *run, int exit_code)
{
	json_t *command = json_array();
	int failed = 0;
	char signal_name[32];
	uint64_t elapsed = (uint64_t)(run->ended.tv_sec - run->started.tv_sec) * 1000000000u +
			   (uint64_t)run->ended.tv_nsec - (uint64_t)run->started.tv_nsec;

	for (int i = 0; i < run->opts->nr_workload; i++)
		failed |= json_array_append_new(command, json_text(run->opts->workload[i]));
	return json_pack("{s:o, s:o, s:b, s:I, s:i, s:s?}",
		"target", json_text(run->target), "command", json_drop_if(command, failed),
		"system_wide", run->opts->system_wide || run->opts->cpu_list,
		"elapsed_ns", (json_int_t)elapsed, "exit_status", exit_code,
		"ended_by", json_ended_by(run, signal_name, sizeof(signal_name)));
}

struct json_report *json_report_new(void)
{
	struct json_report *jr = calloc(1, sizeof(*jr));

	if (!jr)
		return NULL;
	jr->out.fd = -1;
	jr->tmp_fd = -1;
	return jr;
}

void json_report_free(struct json_report *jr)
{
	if (!jr)
		return;
	json_report_discard(jr);
	json_decref(jr->interval);
	json_decref(jr->intervals);
	json_buf_free(&jr->reply);
	free(jr->reply_keys);
	free(jr);
}

/*
 * --json-file is checked and created when the run starts, so that a path
 * that cannot be written fails before anything is counted, and written at
 * the end atomically: a regular file (or a new one) through a temporary
 * file in the same directory, renamed over it; a FIFO or a device
 * (/dev/stdout) in place, through an output that never blocks.
 */
/* What a link at PATH names (malloc'd): the file is replaced, never the
 * link.  A dangling link names the file it will be. */
static char *json_link_target(const char *path)
{
	char *target = realpath(path, NULL), link[PATH_MAX], *copy, *out = NULL;
	ssize_t n;

	if (target)
		return target;
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return strdup(path);
	link[n] = '\0';
	if (link[0] == '/')
		return strdup(link);
	copy = strdup(path);
	if (copy && asprintf(&out, "%s/%s", dirname(copy), link) < 0)
		out = NULL;
	free(copy);
	return out;
}

int json_report_open(struct json_report *jr, const char *path)
{
	struct stat st, lst;
	char *copy = NULL, *dir = NULL;
	mode_t mask, mode;
	int exists;

	jr->path = path;
	if (output_check_path(path, "--json-file"))
		return -1;
	exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		log_error("cannot write --json-file '%s': %s", path, strerror(EISDIR));
		return -1;
	}
	if (exists && !S_ISREG(st.st_mode))
		return output_open_path(&jr->out, path, false, "--json-file");
	if (exists && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0) {
		log_error("cannot write --json-file '%s': %s", path, strerror(errno));
		return -1;
	}
	/* A link that may be followed is written through: the file it
	 * names is replaced, not the link. */
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
		jr->target = json_link_target(path);
	else
		jr->target = strdup(path);
	copy = jr->target ? strdup(jr->target) : NULL;
	if (copy)
		dir = dirname(copy);
	if (!copy || asprintf(&jr->tmp_path, "%s/.%s.XXXXXX", dir,
			      basename(jr->target)) < 0) {
		free(copy);
		jr->tmp_path = NULL;
		log_error("cannot write --json-file '%s': %s", path, strerror(ENOMEM));
		return -1;
	}
	jr->tmp_fd = mkostemp(jr->tmp_path, O_CLOEXEC);
	if (jr->tmp_fd < 0) {
		log_error("cannot write --json-file '%s': cannot create a file in '%s': %s", path,
			  dir, strerror(errno));
		free(copy);
		free(jr->tmp_path);
		jr->tmp_path = NULL;
		return -1;
	}
	free(copy);
	/* As a file fopen() creates, or the file it replaces. */
	mask = umask(0);
	umask(mask);
	mode = exists ? st.st_mode & 07777 : 0666 & ~mask;
	fchmod(jr->tmp_fd, mode);
	return 0;
}

void json_report_discard(struct json_report *jr)
{
	if (jr->tmp_fd >= 0) {
		close(jr->tmp_fd);
		unlink(jr->tmp_path);
	}
	jr->tmp_fd = -1;
	free(jr->tmp_path);
	free(jr->target);
	jr->tmp_path = jr->target = NULL;
	output_close(&jr->out);
}

/* The document into the temporary file, then renamed over the target. */
static int json_report_commit(struct json_report *jr, const char *path, json_t *doc)
{
	int fd = jr->tmp_fd, err = 0;

	jr->tmp_fd = -1;
	if (json_dumpfd(doc, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
		err = errno ? errno : EIO;
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(jr->tmp_path, jr->target) < 0)
		err = errno;
	if (err) {
		unlink(jr->tmp_path);
		log_error("cannot write --json-file '%s': %s", path, strerror(err));
		return -1;
	}
	return 0;
}

int json_report_write(struct json_report *jr, const struct run *run, int exit_code,
		      json_t *repeat)
{
	const char *path = jr->path;
	json_error_t error;
	json_t *doc;
	char *text;
	int rc;

	errno = 0;
	if (!jr->intervals)
		jr->intervals = json_array();
	if (!jr->intervals || jr->out_of_memory) {
		log_error("cannot write --json-file '%s': out of memory", path);
		return -1;
	}
	doc = json_pack_ex(&error, 0, "{s:{s:s, s:i}, s:o, s:o, s:o, s:o, s:o, s:O, s:I}",
		"perfgate", "version", PACKAGE_VERSION, "schema", JSON_REPORT_SCHEMA_VERSION,
		"run", json_run(run, exit_code),
		"events", json_events(run),
		"views", json_views(run),
		"windows", json_windows(run),
		"ranges", json_ranges(run),
		"intervals", jr->intervals,
		"intervals_dropped", (json_int_t)jr->intervals_dropped);
	/* -r: every run's values; the rest of the document is the last run's. */
	if (doc && repeat && json_object_set_new(doc, "repeat", json_incref(repeat))) {
		json_decref(doc);
		doc = NULL;
		snprintf(error.text, sizeof(error.text), "out of memory");
	}
	if (!doc) {
		/* A part given as NULL is one that ran out of memory. */
		log_error("cannot write --json-file '%s': cannot build the document: %s", path,
			  json_error_code(&error) == json_error_null_value ? "out of memory" :
			  error.text);
		return -1;
	}
	if (jr->tmp_fd >= 0) {
		rc = json_report_commit(jr, path, doc);
	} else {
		text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		rc = text ? 0 : -1;
		if (!text)
			log_error("cannot write --json-file '%s': out of memory", path);
		if (text)
			output_write(&jr->out, text, strlen(text));
		free(text);
		if (output_finish(&jr->out))
			rc = -1;
	}
	json_decref(doc);
	return rc;
}
