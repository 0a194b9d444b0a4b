/*
 * stats: statistics of a stream of counts -- a window's per-call values
 * or the runs of -r.
 *
 * Count, min, max and the sum are exact (the sum in 128 bits, so the mean
 * is the exact sum over n, rounded once).  The variance is Welford's
 * streaming update, stable where the naive sum of squares cancels.
 * Quantiles need the values themselves: the first `cap` values are kept;
 * past the cap a uniform reservoir of `cap` values stands for them all
 * (Vitter's algorithm R, with a fixed-seed generator so that a run is
 * repeatable), and stats_sampled() says so.
 */
#ifndef PERFGATE_STATS_H
#define PERFGATE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stats {
	uint64_t n;
	uint64_t min, max;
	unsigned __int128 sum;
	double mean, m2;		/* Welford's running mean and sum of squares */
	uint64_t *kept;			/* values, or the reservoir past the cap */
	size_t nr_kept, cap;
	uint64_t rng;			/* the reservoir's generator state */
};

/* cap: how many values to keep for quantiles (0: none). */
void stats_init(struct stats *st, size_t cap);
void stats_free(struct stats *st);
/* Add one value; -1 only when memory for a kept value ran out (the value
 * still counts in n, min, max, mean and variance). */
int stats_add(struct stats *st, uint64_t value);

double stats_mean(const struct stats *st);
/* Sample standard deviation (n - 1 in the denominator); 0 when n < 2. */
double stats_stddev(const struct stats *st);
/* Standard deviation of the mean, perf stat -r's "+-": stddev / sqrt(n). */
double stats_stddev_of_mean(const struct stats *st);
/* The q-quantile (0 <= q <= 1) of the kept values, interpolated linearly
 * between closest ranks (NumPy's default, type 7 of Hyndman and Fan);
 * NAN when none are kept, or out of memory for the sorted copy. */
double stats_quantile(const struct stats *st, double q);
/* The same over values[0..n), which it sorts in place. */
double stats_quantile_of(uint64_t *values, size_t n, double q);
/* splitmix64's next value from *state: the reservoirs' slot picker (a
 * fixed seed, so that a run is repeatable). */
uint64_t stats_random(uint64_t *state);
#define STATS_RANDOM_SEED 0x9e3779b97f4a7c15ull
/* True when the kept values are a reservoir sample, not all of them. */
bool stats_sampled(const struct stats *st);

#endif
