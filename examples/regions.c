/*
 * regions: a program that marks its own phases for perfgate.
 *
 * It "parses" (builds an array of pseudo-random numbers) and "computes"
 * (sorts them and sums a checksum), marking each phase as a named window
 * with libperfgate.  Run alone, the library is inert and the program just
 * prints its result; run under perfgate, each window's counts come back in
 * the reply to "window end" (printed on stderr) and in the agent's report,
 * as event@parse and event@compute.
 *
 * Build (after `make install`, or with PKG_CONFIG_PATH pointing at the
 * build tree's clients/c):
 *
 *   cc -O2 -o regions examples/regions.c $(pkg-config --cflags --libs perfgate)
 *
 * Run:
 *
 *   ./regions                                  # no agent: inert, exits 0
 *   perfgate -D -1 -e instructions,task-clock -- ./regions 2000000
 *
 * With -D -1 nothing is counted outside the two windows.
 */
#include <stdio.h>
#include <stdlib.h>

#include <perfgate.h>

/* Report a failed call but keep going: measuring must never break the
 * program it measures.  (Without a handle, main has said so once.) */
static void mark(struct perfgate *pg, int rc, const char *what)
{
	if (pg && rc < 0)
		fprintf(stderr, "regions: %s: %s\n", what, perfgate_last_error());
}

static void window_done(struct perfgate *pg, const char *name)
{
	char json[PERFGATE_REPLY_MAX];
	int rc = perfgate_window_end(pg, name, json, sizeof(json));

	mark(pg, rc, name);
	if (rc == 0 && !perfgate_is_inert(pg))
		fprintf(stderr, "regions: %s: %s\n", name, json);
}

static int compare(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	struct perfgate *pg = perfgate_default();
	unsigned *values, seed = 12345;
	unsigned long long sum = 0;

	if (!pg)	/* the environment names an agent we cannot reach */
		fprintf(stderr, "regions: perfgate: %s (running unmeasured)\n",
			perfgate_last_error());
	values = malloc((n ? n : 1) * sizeof(*values));
	if (!values)
		return 1;

	mark(pg, perfgate_window_begin(pg, "parse"), "parse");
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		values[i] = seed >> 8;
	}
	window_done(pg, "parse");

	mark(pg, perfgate_window_begin(pg, "compute"), "compute");
	qsort(values, n, sizeof(*values), compare);
	for (size_t i = 0; i < n; i++)
		sum += values[i] * (unsigned long long)(i % 7 + 1);
	window_done(pg, "compute");

	printf("regions: %zu values, median %u, checksum %llu%s\n", n,
	       n ? values[n / 2] : 0, sum, pg && perfgate_is_inert(pg) ? " (no agent)" : "");
	free(values);
	return 0;
}
