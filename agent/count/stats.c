/*
 * stats: exact and streaming statistics, and a uniform reservoir.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/count/stats.h"

void stats_init(struct stats *st, size_t cap)
{
	memset(st, 0, sizeof(*st));
	st->cap = cap;
	st->rng = STATS_RANDOM_SEED;
}

void stats_free(struct stats *st)
{
	free(st->kept);
	st->kept = NULL;
	st->nr_kept = 0;
}

/* splitmix64: small, fast, and good enough to pick reservoir slots. */
uint64_t stats_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Keep value for the quantiles: the first cap values, then algorithm R --
 * the n-th value replaces a random slot with probability cap/n, which
 * leaves every value seen so far in the reservoir with equal chance. */
static int stats_keep(struct stats *st, uint64_t value)
{
	if (st->nr_kept < st->cap) {
		if (!st->kept) {
			st->kept = malloc(st->cap * sizeof(*st->kept));
			if (!st->kept)
				return -1;
		}
		st->kept[st->nr_kept++] = value;
		return 0;
	}
	if (st->cap) {
		uint64_t slot = stats_random(&st->rng) % st->n;

		if (slot < st->cap)
			st->kept[slot] = value;
	}
	return 0;
}

int stats_add(struct stats *st, uint64_t value)
{
	double delta;

	st->n++;
	if (st->n == 1 || value < st->min)
		st->min = value;
	if (st->n == 1 || value > st->max)
		st->max = value;
	st->sum += value;
	delta = (double)value - st->mean;
	st->mean += delta / (double)st->n;
	st->m2 += delta * ((double)value - st->mean);
	return stats_keep(st, value);
}

double stats_mean(const struct stats *st)
{
	if (!st->n)
		return 0;
	/* The exact sum, divided once: no drift from the running mean. */
	return (double)(st->sum / st->n) + (double)(st->sum % st->n) / (double)st->n;
}

double stats_stddev(const struct stats *st)
{
	if (st->n < 2)
		return 0;
	return sqrt(st->m2 / (double)(st->n - 1));
}

double stats_stddev_of_mean(const struct stats *st)
{
	if (st->n < 2)
		return 0;
	return stats_stddev(st) / sqrt((double)st->n);
}

static int stats_compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

double stats_quantile_of(uint64_t *values, size_t n, double q)
{
	double rank, frac, result;
	size_t lo;

	if (!n || q < 0 || q > 1)
		return NAN;
	qsort(values, n, sizeof(*values), stats_compare);
	rank = q * (double)(n - 1);
	lo = (size_t)rank;
	frac = rank - (double)lo;
	result = (double)values[lo];
	if (lo + 1 < n)
		result += frac * ((double)values[lo + 1] - (double)values[lo]);
	return result;
}

double stats_quantile(const struct stats *st, double q)
{
	uint64_t *sorted;
	double result;

	if (!st->nr_kept)
		return NAN;
	sorted = malloc(st->nr_kept * sizeof(*sorted));
	if (!sorted)
		return NAN;
	memcpy(sorted, st->kept, st->nr_kept * sizeof(*sorted));
	result = stats_quantile_of(sorted, st->nr_kept, q);
	free(sorted);
	return result;
}

bool stats_sampled(const struct stats *st)
{
	return st->n > st->nr_kept;
}
