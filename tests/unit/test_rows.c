/*
 * test_rows: the rows builder (agent/report/rows.h) on views of fake
 * counters.  Each counter is backed by a fake whose values the test sets
 * (struct counter_backing_ops): no kernel, no root.  What is checked is
 * how a row is taken from a view in each mode -- the total so far, the
 * delta of an interval, and the sum of the interval lines shown
 * (--summary) -- and a row's status and names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/options.h"
#include "agent/count/counter.h"
#include "agent/count/target.h"
#include "agent/count/view.h"
#include "agent/ranges/range_registry.h"
#include "agent/report/report.h"
#include "agent/report/rows.h"
#include "agent/report/run.h"
#include "tests/unit/tap.h"

#define NR 3

/* The counts the fake counters give: counter i reads value[i]. */
struct fake_counts {
	uint64_t value[NR];
	bool supported[NR];
};

static bool fake_supported(const void *obj, size_t member)
{
	const struct fake_counts *f = obj;

	return f->supported[member];
}

static void fake_read(void *obj, size_t member, struct counter_value *value)
{
	struct fake_counts *f = obj;

	value->val = f->value[member];
	value->ena = value->run = 1000 + f->value[member];
}

static const struct counter_backing_ops fake_ops = {
	.supported = fake_supported,
	.read = fake_read,
};

struct fixture {
	struct fake_counts fake;
	struct options opts;
	struct counter counters[NR];
	struct view views[NR];
	struct run run;
};

static const char *const names[NR] = { "task-clock", "syscalls:sys_enter_write", "cycles" };

static int fixture_init(struct fixture *f)
{
	struct counter_target target = { 0 };

	memset(f, 0, sizeof(*f));
	f->fake.supported[0] = f->fake.supported[1] = true;	/* "cycles": not here */
	for (size_t i = 0; i < NR; i++) {
		f->counters[i].def.name = (char *)names[i];
		f->counters[i].def.is_clock = i == 0;
		counter_back_with(&f->counters[i], &fake_ops, &f->fake, i);
		if (counter_open(&f->counters[i], &target))
			return -1;
		view_init(&f->views[i], &f->counters[i]);
	}
	f->run.opts = &f->opts;
	f->run.counters = f->counters;
	f->run.default_views = f->views;
	f->run.nr_counters = NR;
	f->run.ranges = range_registry_new(&f->opts, NULL);
	return f->run.ranges ? 0 : -1;
}

static void fixture_free(struct fixture *f)
{
	range_registry_free(f->run.ranges);
	for (size_t i = 0; i < NR; i++)
		counter_close(&f->counters[i]);
}

static void set_counts(struct fixture *f, uint64_t a, uint64_t b)
{
	f->fake.value[0] = a;
	f->fake.value[1] = b;
}

static void test_total(void)
{
	struct fixture f;
	struct report_row *rows;

	ok(fixture_init(&f) == 0, "total: fake counters open");
	set_counts(&f, 100, 7);
	view_open(&f.views[0]);
	set_counts(&f, 150, 9);
	view_close(&f.views[0]);
	set_counts(&f, 400, 30);	/* after the gate closed: not the view's */
	rows = rows_of_views(&f.run, f.views, ROWS_TOTAL);
	ok(rows != NULL, "total: rows made");
	if (!rows) {
		fixture_free(&f);
		return;
	}
	ok(rows[0].status == REPORT_COUNTED && rows[0].count == 50,
	   "total: a view counts what its gate saw (150 - 100)");
	ok(rows[0].enabled_ns == 50 && rows[0].running_ns == 50,
	   "total: its times are the deltas too");
	ok(!strcmp(rows[0].event, "task-clock") && rows[0].is_clock && rows[0].unit == NULL,
	   "total: the row names its event, a clock");
	ok(rows[1].status == REPORT_NOT_COUNTED && !rows[1].is_clock,
	   "total: a view never opened is <not counted>");
	ok(rows[2].status == REPORT_NOT_SUPPORTED, "total: an unsupported counter says so");
	free(rows);
	fixture_free(&f);
}

static void test_interval_and_shown(void)
{
	struct fixture f;
	struct report_row *first, *second, *shown, *total;

	ok(fixture_init(&f) == 0, "interval: fake counters open");
	set_counts(&f, 0, 0);
	view_open(&f.views[1]);
	set_counts(&f, 0, 10);
	first = rows_of_views(&f.run, f.views, ROWS_INTERVAL);
	set_counts(&f, 0, 25);
	second = rows_of_views(&f.run, f.views, ROWS_INTERVAL);
	set_counts(&f, 0, 40);		/* after the last interval line */
	shown = rows_of_views(&f.run, f.views, ROWS_SHOWN);
	total = rows_of_views(&f.run, f.views, ROWS_TOTAL);
	ok(first && second && shown && total, "interval: rows made");
	if (first && second && shown && total) {
		ok(first[1].count == 10 && first[1].status == REPORT_COUNTED,
		   "interval: the first line is the delta since the gate opened");
		ok(second[1].count == 15, "interval: the next is the delta since the last line");
		ok(first[0].status == REPORT_NOT_COUNTED,
		   "interval: a view not open in the interval is <not counted>");
		ok(shown[1].count == 25,
		   "summary: the sum of the lines shown (10 + 15), not the count since");
		ok(total[1].count == 40, "total: the count so far, past the last line");
	}
	free(first);
	free(second);
	free(shown);
	free(total);
	view_close(&f.views[1]);
	fixture_free(&f);
}

static void test_no_ranges(void)
{
	struct fixture f;
	size_t n = 99;
	struct report_row *rows;

	ok(fixture_init(&f) == 0, "ranges: fake counters open");
	rows = rows_of_ranges(&f.run, ROWS_TOTAL, &n, 1000);
	ok(n == 0, "ranges: a run with no range set has no range rows");
	free(rows);
	fixture_free(&f);
}

int main(void)
{
	test_total();
	test_interval_and_shown();
	test_no_ranges();
	return tap_done();
}
