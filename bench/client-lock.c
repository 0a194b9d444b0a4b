/*
 * client-lock: what libperfgate adds to a window round trip on the channel
 * the agent gives its workload, and what its process lock costs.
 *
 * Runs as perfgate's workload (bench/client-lock, the wrapper, starts it):
 *
 *	perfgate -D -1 -e EVENTS -o /dev/null -- client-lock [options]
 *
 * with perfgate and this program pinned to one CPU.  It times N window
 * pairs ("window begin W" + "window end W", the reply checked) per row, in
 * turns of -b pairs with the order reversed every round, so that drift hits
 * every row alike:
 *
 *	raw            write() on PERFGATE_CTL_FD, poll() + read() on
 *	               PERFGATE_ACK_FD: the least a client can do
 *	libperfgate    the default handle: the channel's lock page
 *	record lock    a handle opened with PERFGATE_LOCK_FD unset: the POSIX
 *	               record lock a channel without a page gets (shared FIFOs)
 *	1proc          a handle opened single_process: no process lock
 *
 * For each: the median and 99th percentile µs per pair, the agent's CPU µs
 * per pair (its threads' schedstat; the agent is our parent), and the
 * median's ratio to raw's.  A benchmark, not a test: it fails only when a
 * reply is wrong or missing.  bench/windows.md has the method and results.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"	/* now_ns, process_cpu_ns */
#include "perfgate.h"

const char bench_name[] = "client-lock";

enum row { RAW, LIB, RECORD, SINGLE, NROWS };

static const char *const row_name[NROWS] = {
	[RAW] = "raw", [LIB] = "libperfgate", [RECORD] = "record lock", [SINGLE] = "1proc",
};

struct row_state {
	struct perfgate *pg;	/* NULL for raw */
	char window[16];
	unsigned long calls;	/* pairs sent: the next reply's "calls" */
	uint64_t *ns;
	size_t nns;
	uint64_t cpu_ns;
};

static struct row_state rows[NROWS];
static int raw_ctl = -1, raw_ack = -1;
static char raw_buf[1 << 16];
static size_t raw_len;

/* One reply line from the raw channel into line (NUL framing skipped). */
static void raw_reply(char *line, size_t size)
{
	struct pollfd p = { .fd = raw_ack, .events = POLLIN };
	char *nl;
	ssize_t n;

	for (;;) {
		while (raw_len && raw_buf[0] == '\0')
			memmove(raw_buf, raw_buf + 1, --raw_len);
		nl = memchr(raw_buf, '\n', raw_len);
		if (nl) {
			size_t len = (size_t)(nl - raw_buf);

			snprintf(line, size, "%.*s", (int)len, raw_buf);
			raw_len -= len + 1;
			memmove(raw_buf, nl + 1, raw_len);
			return;
		}
		if (poll(&p, 1, 5000) != 1)
			bench_die("no reply from the agent within 5 s");
		n = read(raw_ack, raw_buf + raw_len, sizeof(raw_buf) - raw_len);
		if (n <= 0)
			bench_die("the agent's reply channel: %s", n ? strerror(errno) : "closed");
		raw_len += (size_t)n;
	}
}

static void raw_send(const char *cmd)
{
	if (write(raw_ctl, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		bench_die("write to the agent: %s", strerror(errno));
}

/* The window-end reply must name the window and count this pair. */
static void check_end(struct row_state *r, const char *json)
{
	char head[64];

	snprintf(head, sizeof(head), "{\"window\":\"%s\",\"calls\":%lu,", r->window, r->calls);
	if (strncmp(json, head, strlen(head)))
		bench_die("%s: reply '%.120s', expected it to start '%s'", r->window, json, head);
}

static uint64_t pair(struct row_state *r)
{
	char begin[64], end[64], reply[1 << 16];
	uint64_t t0, t1;

	r->calls++;
	t0 = now_ns();
	if (r->pg) {
		if (perfgate_window_begin(r->pg, r->window) ||
		    perfgate_window_end(r->pg, r->window, reply, sizeof(reply)))
			bench_die("%s: %s", r->window, perfgate_last_error());
		t1 = now_ns();
		check_end(r, reply);
		return t1 - t0;
	}
	snprintf(begin, sizeof(begin), "window begin %s\n", r->window);
	snprintf(end, sizeof(end), "window end %s\n", r->window);
	raw_send(begin);
	raw_reply(reply, sizeof(reply));
	raw_send(end);
	raw_reply(reply, sizeof(reply));
	t1 = now_ns();
	if (strncmp(reply, "ack ", 4))
		bench_die("raw: reply '%.120s'", reply);
	check_end(r, reply + 4);
	return t1 - t0;
}

static void block(struct row_state *r, long count, bool measured)
{
	uint64_t cpu = measured ? process_cpu_ns(getppid()) : 0;

	for (long i = 0; i < count; i++) {
		uint64_t ns = pair(r);

		if (measured)
			r->ns[r->nns++] = ns;
	}
	if (measured)
		r->cpu_ns += process_cpu_ns(getppid()) - cpu;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(const struct row_state *r, int p)
{
	size_t i = (r->nns * (size_t)p + 99) / 100;

	return (double)r->ns[i ? i - 1 : 0] / 1000.0;
}

static void open_rows(void)
{
	struct perfgate_opts o = PERFGATE_OPTS_INIT;
	const char *ctl = getenv("PERFGATE_CTL_FD"), *ack = getenv("PERFGATE_ACK_FD");
	char *lock_fd = getenv("PERFGATE_LOCK_FD");

	if (!ctl || !ack)
		bench_die("run me as perfgate's workload (bench/client-lock does)");
	if (!lock_fd)
		bench_die("the agent gave no PERFGATE_LOCK_FD: an agent older than the lock page?");
	raw_ctl = atoi(ctl);
	raw_ack = atoi(ack);
	rows[LIB].pg = perfgate_default();
	if (!rows[LIB].pg || perfgate_is_inert(rows[LIB].pg))
		bench_die("default handle: %s", perfgate_last_error());
	lock_fd = strdup(lock_fd);
	unsetenv("PERFGATE_LOCK_FD");
	if (perfgate_open(&rows[RECORD].pg, NULL))
		bench_die("record-lock handle: %s", perfgate_last_error());
	setenv("PERFGATE_LOCK_FD", lock_fd, 1);
	free(lock_fd);
	o.single_process = true;
	if (perfgate_open(&rows[SINGLE].pg, &o))
		bench_die("single_process handle: %s", perfgate_last_error());
}

int main(int argc, char **argv)
{
	long n = 3000, warmup = 200, per_block = 100;
	int c;

	while ((c = getopt(argc, argv, "n:w:b:h")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 'w': warmup = atol(optarg); break;
		case 'b': per_block = atol(optarg); break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"usage: client-lock [-n PAIRS] [-w WARMUP] [-b PER_BLOCK]\n"
				"(run through bench/client-lock)\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (n < 1 || warmup < 1 || per_block < 1)
		bench_die("-n, -w and -b take positive counts");
	open_rows();
	for (int r = 0; r < NROWS; r++) {
		snprintf(rows[r].window, sizeof(rows[r].window), "w%d", r);
		rows[r].ns = calloc((size_t)n, sizeof(uint64_t));
		if (!rows[r].ns)
			bench_die("out of memory");
		block(&rows[r], warmup, false);
	}
	for (long done = 0, round = 0; done < n; done += per_block, round++) {
		long count = n - done < per_block ? n - done : per_block;

		for (int k = 0; k < NROWS; k++)
			block(&rows[round % 2 ? NROWS - 1 - k : k], count, true);
	}
	printf("%-14s %10s %10s %13s %10s\n", "client", "median µs", "p99 µs", "agent CPU µs",
	       "median/raw");
	for (int r = 0; r < NROWS; r++)
		qsort(rows[r].ns, rows[r].nns, sizeof(uint64_t), cmp_u64);
	for (int r = 0; r < NROWS; r++)
		printf("%-14s %10.1f %10.1f %13.1f %9.2fx\n", row_name[r], pct_us(&rows[r], 50),
		       pct_us(&rows[r], 99), (double)rows[r].cpu_ns / 1000.0 / (double)rows[r].nns,
		       pct_us(&rows[r], 50) / pct_us(&rows[RAW], 50));
	return 0;
}
