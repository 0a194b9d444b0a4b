/*
 * test_stats: agent/count/stats.c against values worked out by hand (and by
 * NumPy's percentile, whose default interpolation stats_quantile follows).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agent/count/stats.h"
#include "tests/unit/tap.h"

static bool near(double got, double want)
{
	return fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
}

#define is_near(got, want, what) do {						\
	double g_ = (got), w_ = (want);						\
	if (!ok(near(g_, w_), (what)))						\
		printf("#   got %.12g, want %.12g\n", g_, w_);			\
} while (0)

static void add_all(struct stats *st, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		stats_add(st, v[i]);
}

static void test_small(void)
{
	/* Mean 5, sum of squared deviations 32. */
	static const uint64_t v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct stats st;

	stats_init(&st, 16);
	add_all(&st, v, 8);
	ok(st.n == 8 && st.min == 2 && st.max == 9, "small: n, min, max");
	is_near(stats_mean(&st), 5, "small: mean");
	is_near(stats_stddev(&st), sqrt(32.0 / 7), "small: sample stddev");
	is_near(stats_stddev_of_mean(&st), sqrt(32.0 / 7) / sqrt(8), "small: stddev of the mean");
	/* numpy.percentile(v, [50, 90, 99]) */
	is_near(stats_quantile(&st, 0.5), 4.5, "small: median");
	is_near(stats_quantile(&st, 0.9), 7.6, "small: p90");
	is_near(stats_quantile(&st, 0.99), 8.86, "small: p99");
	is_near(stats_quantile(&st, 0), 2, "small: q0 is the min");
	is_near(stats_quantile(&st, 1), 9, "small: q1 is the max");
	ok(!stats_sampled(&st), "small: every value kept");
	stats_free(&st);
}

static void test_edges(void)
{
	struct stats st;

	stats_init(&st, 4);
	is_near(stats_mean(&st), 0, "empty: mean 0");
	ok(isnan(stats_quantile(&st, 0.5)), "empty: no median");
	stats_add(&st, 42);
	is_near(stats_stddev(&st), 0, "one value: stddev 0");
	is_near(stats_quantile(&st, 0.99), 42, "one value: every quantile is it");
	stats_free(&st);
	stats_init(&st, 0);
	stats_add(&st, 1);
	stats_add(&st, 3);
	is_near(stats_mean(&st), 2, "cap 0: mean still exact");
	ok(isnan(stats_quantile(&st, 0.5)), "cap 0: no quantiles");
	ok(stats_sampled(&st), "cap 0: ... and says the values are not all kept");
	stats_free(&st);
}

static void test_stability(void)
{
	/* A large offset: the naive sum of squares loses the variance. */
	static const uint64_t v[] = { 1000000004, 1000000007, 1000000013, 1000000016 };
	struct stats st;

	stats_init(&st, 0);
	add_all(&st, v, 4);
	is_near(stats_stddev(&st), sqrt(30), "offset 1e9: sample stddev of 4,7,13,16");
	is_near(stats_mean(&st), 1000000010, "offset 1e9: mean");
	stats_free(&st);
	/* Sums past 64 bits stay exact. */
	stats_init(&st, 0);
	for (int i = 0; i < 4; i++)
		stats_add(&st, UINT64_MAX - 1);
	ok(st.sum == (unsigned __int128)(UINT64_MAX - 1) * 4, "sum: exact past 64 bits");
	is_near(stats_mean(&st), (double)(UINT64_MAX - 1), "sum: ... and the mean");
	stats_free(&st);
}

static void test_reservoir(void)
{
	struct stats st;
	bool in_range = true, distinct = true;
	double median;

	stats_init(&st, 100);
	for (uint64_t i = 0; i < 10000; i++)
		stats_add(&st, i);
	ok(st.nr_kept == 100 && stats_sampled(&st), "reservoir: 100 kept of 10000, and says so");
	is_near(stats_mean(&st), 4999.5, "reservoir: the mean is over all values, exact");
	ok(st.min == 0 && st.max == 9999, "reservoir: min and max over all values");
	for (size_t i = 0; i < st.nr_kept; i++) {
		in_range &= st.kept[i] < 10000;
		for (size_t j = 0; j < i; j++)
			distinct &= st.kept[i] != st.kept[j];
	}
	ok(in_range && distinct, "reservoir: kept values are distinct values of the stream");
	/* A uniform sample of 0..9999 has its median near 5000: with 100
	 * values the median's standard error is about 500. */
	median = stats_quantile(&st, 0.5);
	if (!ok(median > 3000 && median < 7000, "reservoir: its median is the stream's, roughly"))
		printf("#   median %g\n", median);
	stats_free(&st);
}

int main(void)
{
	test_small();
	test_edges();
	test_stability();
	test_reservoir();
	return tap_done();
}
