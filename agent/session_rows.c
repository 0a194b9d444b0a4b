/*
 * session_rows: build report rows from views (status, counts, times).
 */
#include <stdlib.h>
#include <sys/time.h>

#include "agent/session.h"
#include "agent/session_rows.h"

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

static void row_fill(struct report_row *row, const struct view *v,
		     const struct counter_value *value, bool counted)
{
	row->event = v->counter->def.name;
	row->is_clock = v->counter->def.is_clock;
	row->count = value->val;
	row->enabled_ns = value->ena;
	row->running_ns = value->run;
	if (!v->counter->supported)
		row->status = REPORT_NOT_SUPPORTED;
	else
		row->status = counted ? REPORT_COUNTED : REPORT_NOT_COUNTED;
}

void session_print_interval(struct session *s)
{
	struct report_row *rows = calloc(s->nr_counters, sizeof(*rows));

	for (size_t i = 0; i < s->nr_counters; i++) {
		struct counter_value delta;
		bool counted;

		view_take_interval(&s->default_views[i], &delta, &counted);
		row_fill(&rows[i], &s->default_views[i], &delta, counted);
	}
	report_interval(&s->report, seconds_since_start(s), rows, s->nr_counters);
	free(rows);
}

void session_print_snapshot(struct session *s)
{
	struct report_row *rows = calloc(s->nr_counters, sizeof(*rows));

	for (size_t i = 0; i < s->nr_counters; i++) {
		struct counter_value value;

		view_value(&s->default_views[i], &value);
		row_fill(&rows[i], &s->default_views[i], &value, s->default_views[i].ever_opened);
	}
	report_interval(&s->report, seconds_since_start(s), rows, s->nr_counters);
	free(rows);
}

void session_print_final(struct session *s)
{
	struct report_row *rows = calloc(s->nr_counters, sizeof(*rows));
	struct report_run run = { .target = s->target, .user_s = -1, .sys_s = -1 };

	for (size_t i = 0; i < s->nr_counters; i++) {
		struct counter_value value;

		view_value(&s->default_views[i], &value);
		row_fill(&rows[i], &s->default_views[i], &value, s->default_views[i].ever_opened);
	}
	if (s->ended.tv_sec == 0 && s->ended.tv_nsec == 0)
		clock_gettime(CLOCK_MONOTONIC, &s->ended);
	run.elapsed_s = seconds_between(&s->started, &s->ended);
	if (s->has_workload && !s->workload.running) {
		const struct rusage *ru = &s->workload.usage;

		run.user_s = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
		run.sys_s = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	}
	report_final(&s->report, &run, rows, s->nr_counters);
	free(rows);
}
