/*
 * metrics_expo: the exposition text of the run's views (see
 * metrics_expo.h; every family is described in docs/metrics.md).
 *
 * The views are first collected into rows (one per sample of the count
 * families), so that each family's samples can be written together, as
 * both formats require.  Two views that would give one series the same
 * labels (an event given twice with -e, a range spec given twice) are
 * written once: a repeated series is an error to every Prometheus parser.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/buffer.h>

#include "agent/base/utf8.h"
#include "agent/metrics/metrics_expo.h"
#include "agent/ranges/range_registry.h"
#include "agent/ranges/range_set.h"
#include "agent/report/run.h"

/* One view, as the count families show it. */
struct expo_row {
	const char *event, *filter, *gate, *window, *range;
	bool is_clock;
	bool has_times;			/* default and window views */
	bool incomplete;		/* range views: records were lost */
	struct counter_value value;
};

struct expo {
	struct evbuffer *out;
	enum metrics_format format;
	const struct options *opts;
	bool constant_labels;
	bool failed;		/* some text could not be added: out of memory */
};

static void expo_add(struct expo *x, const void *data, size_t len)
{
	if (evbuffer_add(x->out, data, len))
		x->failed = true;
}

__attribute__((format(printf, 2, 3)))
static void expo_printf(struct expo *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (evbuffer_add_vprintf(x->out, fmt, ap) < 0)
		x->failed = true;
	va_end(ap);
}

const char *metrics_expo_content_type(enum metrics_format format)
{
	return format == METRICS_OPENMETRICS ?
		"application/openmetrics-text; version=1.0.0; charset=utf-8" :
		"text/plain; version=0.0.4; charset=utf-8";
}

/*
 * A label value between double quotes: backslash, double quote and
 * newline escaped (both formats).  Label values must be UTF-8; a byte that
 * is not is written as U+FFFD, so an odd event name cannot break a scrape.
 */
static void expo_label_value(struct expo *x, const char *value)
{
	const char *p = value;

	expo_add(x, "\"", 1);
	while (*p) {
		size_t len = utf8_char_len(p);

		if (*p == '\\')
			expo_add(x, "\\\\", 2);
		else if (*p == '"')
			expo_add(x, "\\\"", 2);
		else if (*p == '\n')
			expo_add(x, "\\n", 2);
		else if (len)
			expo_add(x, p, len);
		else
			expo_add(x, UTF8_REPLACEMENT, 3);
		p += len ? len : 1;
	}
	expo_add(x, "\"", 1);
}

/*
 * A family's metadata.  name is the OpenMetrics family name: a counter's
 * samples are NAME_total, an info's NAME_info.  Format 0.0.4 has no such
 * suffix rule, so there the family is named as its samples are, and an
 * info is a gauge (as Prometheus' own client libraries write it).
 */
static void expo_family(struct expo *x, const char *name, const char *type,
			const char *unit, const char *help)
{
	const char *suffix = "";

	if (x->format == METRICS_OPENMETRICS) {
		expo_printf(x, "# TYPE %s %s\n", name, type);
		if (unit)
			expo_printf(x, "# UNIT %s %s\n", name, unit);
		expo_printf(x, "# HELP %s %s\n", name, help);
		return;
	}
	if (strcmp(type, "counter") == 0)
		suffix = "_total";
	else if (strcmp(type, "info") == 0)
		suffix = "_info", type = "gauge";
	expo_printf(x, "# HELP %s%s %s\n", name, suffix, help);
	expo_printf(x, "# TYPE %s%s %s\n", name, suffix, type);
}

/* NAME{k="v",...} VALUE: pairs with a NULL value are left out. */
static void expo_sample(struct expo *x, const char *name, const char *const *labels,
			size_t nr, const char *value)
{
	bool first = true;

	expo_printf(x, "%s", name);
	if (x->constant_labels) {
		for (size_t i = 0; i < x->opts->nr_metrics_labels; i++) {
			expo_printf(x, "%s%s=", first ? "{" : ",",
					    x->opts->metrics_labels[i].name);
			expo_label_value(x, x->opts->metrics_labels[i].value);
			first = false;
		}
	}
	for (size_t i = 0; i + 1 < 2 * nr; i += 2) {
		if (!labels[i + 1])
			continue;
		expo_printf(x, "%s%s=", first ? "{" : ",", labels[i]);
		expo_label_value(x, labels[i + 1]);
		first = false;
	}
	expo_printf(x, "%s %s\n", first ? "" : "}", value);
}

static const char *fmt_count(char *buf, size_t size, uint64_t v)
{
	snprintf(buf, size, "%" PRIu64, v);
	return buf;
}

/* Nanoseconds as exact decimal seconds, whatever the locale. */
static const char *fmt_seconds(char *buf, size_t size, uint64_t ns)
{
	snprintf(buf, size, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
	return buf;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Would row r give a series an earlier row already gave? */
static bool expo_row_repeats(const struct expo_row *rows, size_t nr, const struct expo_row *r)
{
	for (size_t i = 0; i < nr; i++)
		if (same(rows[i].event, r->event) && same(rows[i].filter, r->filter) &&
		    same(rows[i].gate, r->gate) && same(rows[i].window, r->window) &&
		    same(rows[i].range, r->range))
			return true;
	return false;
}

/* Row r after rows[0..*nr) unless it repeats one: 0, or -ENOMEM (the
 * rows then as they were). */
static int expo_add_row(struct expo_row **rows, size_t *nr, const struct expo_row *r)
{
	struct expo_row *grown;

	if (expo_row_repeats(*rows, *nr, r))
		return 0;
	grown = realloc(*rows, (*nr + 1) * sizeof(**rows));
	if (!grown)
		return -ENOMEM;
	*rows = grown;
	(*rows)[(*nr)++] = *r;
	return 0;
}

/* The views of one gate over every counter (the default one, a window's):
 * 0, or -ENOMEM. */
static int expo_collect_views(const struct run *run, struct view *views, const char *gate,
			      const char *window, struct expo_row **rows, size_t *nr)
{
	for (size_t i = 0; i < run->nr_counters; i++) {
		const struct counter *c = &run->counters[i];
		struct expo_row r = {
			.event = c->def.name, .filter = c->def.filter, .gate = gate,
			.window = window, .is_clock = c->def.is_clock, .has_times = true,
		};

		/* An event the machine cannot count has no value to give. */
		if (!c->supported)
			continue;
		view_value(&views[i], &r.value);
		if (expo_add_row(rows, nr, &r))
			return -ENOMEM;
	}
	return 0;
}

/* Every view, in the order of the --json-file document's "views" (into
 * *rows, malloc'd, *nr of them): 0, or -ENOMEM. */
static int expo_collect(const struct run *run, struct expo_row **rows, size_t *nr)
{
	int rc;

	*rows = NULL;
	*nr = 0;
	rc = expo_collect_views(run, run->default_views, "default", NULL, rows, nr);
	for (size_t w = 0; !rc && w < run->nr_windows; w++)
		rc = expo_collect_views(run, run->windows[w]->views, "window",
					run->windows[w]->name, rows, nr);
	if (rc)
		return rc;
	for (size_t i = 0; i < range_registry_nr_sets(run->ranges); i++) {
		const struct range_set *rs = range_registry_set(run->ranges, i);

		for (size_t sp = 0; sp < range_set_nr_specs(rs); sp++) {
			for (size_t e = 0; e < range_set_nr_events(rs, sp); e++) {
				const struct event_def *def = range_set_event(rs, sp, e);
				struct expo_row r = {
					.event = range_set_event_name(rs, sp, e),
					.filter = def ? def->filter : NULL, .gate = "range",
					.range = range_set_label(rs, sp),
					.is_clock = def && def->is_clock,
					.incomplete = range_set_lost(rs) > 0,
				};

				if (!range_set_supported(rs, sp, e))
					continue;
				r.value.val = range_set_value(rs, sp, e);
				if (expo_add_row(rows, nr, &r))
					return -ENOMEM;
			}
		}
	}
	return 0;
}

enum row_value { ROW_COUNT, ROW_ENABLED, ROW_RUNNING, ROW_INCOMPLETE };

/* The samples of one family, from the rows it applies to. */
static void expo_rows(struct expo *x, const char *sample, const struct expo_row *rows,
		      size_t nr, bool (*applies)(const struct expo_row *), enum row_value what)
{
	char buf[48];

	for (size_t i = 0; i < nr; i++) {
		const struct expo_row *r = &rows[i];
		const char *labels[] = {
			"event", r->event, "filter", r->filter, "gate", r->gate,
			"window", r->window, "range", r->range,
		};
		const char *value;

		if (!applies(r))
			continue;
		switch (what) {
		case ROW_COUNT:
			value = r->is_clock ? fmt_seconds(buf, sizeof(buf), r->value.val) :
					      fmt_count(buf, sizeof(buf), r->value.val);
			break;
		case ROW_ENABLED:
			value = fmt_seconds(buf, sizeof(buf), r->value.ena);
			break;
		case ROW_RUNNING:
			value = fmt_seconds(buf, sizeof(buf), r->value.run);
			break;
		default:
			value = r->incomplete ? "1" : "0";
			break;
		}
		expo_sample(x, sample, labels, sizeof(labels) / sizeof(labels[0]) / 2, value);
	}
}

static bool row_is_count(const struct expo_row *r) { return !r->is_clock; }
static bool row_is_clock(const struct expo_row *r) { return r->is_clock; }
static bool row_has_times(const struct expo_row *r) { return r->has_times; }
static bool row_is_range(const struct expo_row *r) { return strcmp(r->gate, "range") == 0; }

static const char *window_calls(char *buf, size_t size, const struct window *w)
{
	return fmt_count(buf, size, w->calls);
}

static const char *window_open(char *buf, size_t size, const struct window *w)
{
	return fmt_seconds(buf, size, window_open_ns(w));
}

static const char *window_depth(char *buf, size_t size, const struct window *w)
{
	return fmt_count(buf, size, w->depth);
}

/* One family with a sample per named window, labelled by its name. */
static void expo_window_family(struct expo *x, const struct run *run, const char *name,
			       const char *type, const char *unit, const char *help,
			       const char *sample,
			       const char *(*value)(char *, size_t, const struct window *))
{
	char buf[48];

	expo_family(x, name, type, unit, help);
	for (size_t w = 0; w < run->nr_windows; w++) {
		const char *labels[] = { "window", run->windows[w]->name };

		expo_sample(x, sample, labels, 1, value(buf, sizeof(buf), run->windows[w]));
	}
}

static void expo_windows(struct expo *x, const struct run *run)
{
	expo_window_family(x, run, "perfgate_window_calls", "counter", NULL,
			   "Completed window begin/end pairs (window end commands).",
			   "perfgate_window_calls_total", window_calls);
	expo_window_family(x, run, "perfgate_window_open_seconds", "counter", "seconds",
			   "Wall time the window was open (nested calls count once).",
			   "perfgate_window_open_seconds_total", window_open);
	expo_window_family(x, run, "perfgate_window_depth", "gauge", NULL,
			   "Window begins not yet ended (0: the window is closed).",
			   "perfgate_window_depth", window_depth);
}

int metrics_expo_render(const struct run *run, enum metrics_format format,
			bool constant_labels, struct evbuffer *out)
{
	struct expo x = { out, format, run->opts, constant_labels, false };
	const char *info_labels[] = { "version", PACKAGE_VERSION };
	struct expo_row *rows;
	size_t nr;

	/* The range values of the sample backend wait in ring buffers. */
	range_registry_drain(run->ranges);
	if (expo_collect(run, &rows, &nr)) {
		free(rows);
		return -ENOMEM;
	}

	expo_family(&x, "perfgate_count", "counter", NULL,
		    "Events counted while the view's gate was open.");
	expo_rows(&x, "perfgate_count_total", rows, nr, row_is_count, ROW_COUNT);
	expo_family(&x, "perfgate_seconds", "counter", "seconds",
		    "Time counted by a clock event (task-clock, cpu-clock) while the gate was open.");
	expo_rows(&x, "perfgate_seconds_total", rows, nr, row_is_clock, ROW_COUNT);
	expo_family(&x, "perfgate_time_enabled_seconds", "counter", "seconds",
		    "Time the counter was enabled while the gate was open.");
	expo_rows(&x, "perfgate_time_enabled_seconds_total", rows, nr, row_has_times, ROW_ENABLED);
	expo_family(&x, "perfgate_time_running_seconds", "counter", "seconds",
		    "Time the counter ran on the PMU while the gate was open.");
	expo_rows(&x, "perfgate_time_running_seconds_total", rows, nr, row_has_times, ROW_RUNNING);
	expo_family(&x, "perfgate_incomplete", "gauge", NULL,
		    "1 when a range view lost records and its count may be short.");
	expo_rows(&x, "perfgate_incomplete", rows, nr, row_is_range, ROW_INCOMPLETE);
	expo_windows(&x, run);
	/* Last, so that a reader of a textfile can tell a whole one. */
	expo_family(&x, "perfgate", "info", NULL, "The agent's version.");
	expo_sample(&x, "perfgate_info", info_labels, 1, "1");
	if (format == METRICS_OPENMETRICS)
		expo_add(&x, "# EOF\n", 6);
	free(rows);
	return x.failed ? -ENOMEM : 0;
}
