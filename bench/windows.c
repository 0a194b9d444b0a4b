/*
 * windows: what does a named window cost?  perfgate's `window begin` +
 * `window end` round trips against perf stat's `enable` + `disable`.
 *
 * Every agent is started as a controlling script starts it, on its own FIFO
 * pair in a private directory:
 *
 *	perfgate  -D -1 -e task-clock --control fifo:CTL,ACK -o /dev/null -- sleep 3600
 *	perf stat -D -1 -e task-clock --control fifo:CTL,ACK -o /dev/null -- sleep 3600
 *
 * One *pair* is two commands and their replies, timed as one (CLOCK_MONOTONIC
 * from before the first write to after the second reply is in):
 *
 *	perfgate window   "window begin w" -> "ack", "window end w" -> "ack {json}"
 *	perfgate enable   "enable" -> "ack", "disable" -> "ack"   (the default window)
 *	perf              "enable" -> "ack\n\0", "disable" -> "ack\n\0"
 *	libperfgate       perfgate_window_begin() + perfgate_window_end(), the
 *	                  C client library (dlopen'ed) against its own perfgate
 *	libperfgate 1proc the same on a handle opened single_process
 *	floor             a minimal agent built in here: poll, read, "ack\n" per
 *	                  line: what two round trips cost with no agent work
 *
 * For each it reports the median and 99th percentile pair time and the
 * agent's CPU time per pair (the sum over its threads of
 * /proc/PID/task/TID/schedstat's first field, ns on a CPU, read before and
 * after each measured block), then the ratios to perf.  The window-end reply
 * is checked: its "calls" must be the number of pairs sent so far.
 *
 * -e gives every agent's events (task-clock by default); --open-windows N
 * has each perfgate begin N other windows before w and leave them open, to
 * show that a pair does not grow with the windows an agent holds.
 *
 * All agents run at once and are measured in turns of -b pairs, the order
 * reversed every round, so drift on a shared VM hits all alike.  Each
 * scheduling mode (pinned: client and agents on one CPU; split: client on
 * one CPU, agents on the next; default: no pinning) starts fresh agents.
 *
 * A benchmark, not a test: it fails only when an agent cannot be started,
 * stops answering or answers wrongly.  bench/windows (the wrapper) builds it,
 * with bench_common.c (what it shares with bench/ack-latency.c), and runs it;
 * bench/windows.md has the method and the results.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "perfgate.h"	/* struct perfgate_opts; the library is dlopen'ed */

#define MAX_TOOLS	8
#define WINDOW_NAME	"w"

const char bench_name[] = "windows";

enum kind { PG_WINDOW, PG_NO_VALUES, PG_ENABLE, PERF, LIBPG, LIBPG_SINGLE, FLOOR };

static const char *const kind_name[] = {
	[PG_WINDOW] = "perfgate window", [PG_NO_VALUES] = "pg window no values",
	[PG_ENABLE] = "perfgate enable",
	[PERF] = "perf", [LIBPG] = "libperfgate", [LIBPG_SINGLE] = "libperfgate 1proc",
	[FLOOR] = "floor",
};

static const char *const kind_file[] = {
	[PG_WINDOW] = "pg-window", [PG_NO_VALUES] = "pg-window-novalues",
	[PG_ENABLE] = "pg-enable", [PERF] = "perf",
	[LIBPG] = "libperfgate", [LIBPG_SINGLE] = "libperfgate-single", [FLOOR] = "floor",
};

struct options {
	long n, warmup, block;
	int timeout_ms, cpu;
	struct bench_sched modes[3];
	int nmodes;
	const char *perf, *perfgate, *libperfgate;
	const char *events;	/* -e for every agent */
	long open_windows;	/* other windows each perfgate holds open */
	bool floor, enable, no_values;
};

/* libperfgate, when given: resolved with dlsym. */
static struct {
	int (*open)(struct perfgate **, const struct perfgate_opts *);
	void (*close)(struct perfgate *);
	int (*begin)(struct perfgate *, const char *);
	int (*end)(struct perfgate *, const char *, char *, size_t);
	const char *(*last_error)(void);
} lib;

/* a.count: pairs sent since start, the next window's "calls"; a.ns: the
 * measured pairs. */
struct tool {
	struct bench_agent a;
	enum kind kind;
	struct perfgate *pg;	/* LIBPG, LIBPG_SINGLE */
};

static bool is_lib(enum kind k)
{
	return k == LIBPG || k == LIBPG_SINGLE;
}

static bool is_window(enum kind k)
{
	return k == PG_WINDOW || k == PG_NO_VALUES || is_lib(k);
}

static struct tool tools[MAX_TOOLS];
static int ntools;
static const struct options *opts;

/* "ack {"window":"w","calls":N,...}": N must be the pairs sent so far. */
static void check_window_end(struct tool *t, const char *reply)
{
	static const char prefix[] = "ack {\"window\":\"" WINDOW_NAME "\",\"calls\":";
	char *end;
	unsigned long calls;

	if (strncmp(reply, prefix, sizeof(prefix) - 1))
		bench_die_agent(&t->a, "window end: unexpected reply \"%.200s\"", reply);
	calls = strtoul(reply + sizeof(prefix) - 1, &end, 10);
	if (calls != t->a.count || *end != ',')
		bench_die_agent(&t->a, "window end: calls %lu, expected %lu: \"%.200s\"",
				calls, t->a.count, reply);
}

/* One pair through libperfgate; returns its duration in ns. */
static uint64_t lib_pair(struct tool *t)
{
	char reply[BENCH_REPLY_MAX];
	uint64_t start, end;
	int rc;

	start = now_ns();
	rc = lib.begin(t->pg, WINDOW_NAME);
	if (!rc)
		rc = lib.end(t->pg, WINDOW_NAME, reply, sizeof(reply));
	end = now_ns();
	if (rc)
		bench_die_agent(&t->a, "%s", lib.last_error());
	t->a.count++;
	/* The library hands over the JSON without "ack ". */
	memmove(reply + 4, reply, strlen(reply) + 1);
	memcpy(reply, "ack ", 4);
	check_window_end(t, reply);
	return end - start;
}

/* One pair; returns its duration in ns. */
static uint64_t tool_pair(struct tool *t, int timeout_ms)
{
	char first[BENCH_REPLY_MAX], second[BENCH_REPLY_MAX];
	const char *a, *b;
	uint64_t start, end;

	if (is_lib(t->kind))
		return lib_pair(t);
	if (t->kind == PG_WINDOW || t->kind == PG_NO_VALUES) {
		a = "window begin " WINDOW_NAME "\n";
		b = "window end " WINDOW_NAME "\n";
	} else {
		/* The long forms: perf 6.1 does not ack "e" and "d". */
		a = "enable\n";
		b = "disable\n";
	}
	start = now_ns();
	bench_send(&t->a, a);
	bench_reply_read(&t->a, first, sizeof(first), timeout_ms);
	bench_send(&t->a, b);
	bench_reply_read(&t->a, second, sizeof(second), timeout_ms);
	end = now_ns();
	t->a.count++;
	bench_expect_ack(&t->a, first, a);
	if (t->kind == PG_WINDOW || t->kind == PG_NO_VALUES)
		check_window_end(t, second);
	else
		bench_expect_ack(&t->a, second, b);
	return end - start;
}

/*
 * The library connects by FIFO path, with non-blocking opens, so the agent
 * must be up first: a raw ping through our fds, then perfgate_open, and only
 * then are our fds closed (an ACK FIFO without readers would break the
 * agent's channel).
 */
static void tool_connect_lib(struct tool *t)
{
	struct perfgate_opts o = PERFGATE_OPTS_INIT;
	char line[BENCH_REPLY_MAX];
	int rc;

	bench_send(&t->a, "ping\n");
	bench_reply_read(&t->a, line, sizeof(line), STARTUP_TIMEOUT_MS);
	bench_expect_ack(&t->a, line, "ping\n");
	o.ctl_path = t->a.ctl_path;
	o.ack_path = t->a.ack_path;
	o.timeout_ms = opts->timeout_ms;
	/* The benchmark is the channel's only process. */
	o.single_process = t->kind == LIBPG_SINGLE;
	rc = lib.open(&t->pg, &o);
	if (rc)
		bench_die_agent(&t->a, "perfgate_open: %s", lib.last_error());
	close(t->a.ctl_fd);
	close(t->a.ack_fd);
	t->a.ctl_fd = t->a.ack_fd = -1;
}

/* Windows begun and never ended: a window pair must cost the same
 * whatever the number of windows the agent knows and holds open. */
static void tool_open_windows(struct tool *t)
{
	char line[64], reply[BENCH_REPLY_MAX];

	for (long i = 0; i < opts->open_windows; i++) {
		snprintf(line, sizeof(line), "window begin open%ld\n", i);
		if (is_lib(t->kind)) {
			line[strlen(line) - 1] = '\0';
			if (lib.begin(t->pg, line + strlen("window begin ")))
				bench_die_agent(&t->a, "%s", lib.last_error());
			continue;
		}
		bench_send(&t->a, line);
		bench_reply_read(&t->a, reply, sizeof(reply), STARTUP_TIMEOUT_MS);
		bench_expect_ack(&t->a, reply, line);
	}
}

static void tool_warm_up(struct tool *t)
{
	char line[BENCH_REPLY_MAX];

	/* The first reply may include the agent's start-up.  The other
	 * windows are begun before w, so that w is the agent's last. */
	if (is_lib(t->kind)) {
		tool_connect_lib(t);
	} else if (is_window(t->kind)) {
		bench_send(&t->a, "ping\n");
		bench_reply_read(&t->a, line, sizeof(line), STARTUP_TIMEOUT_MS);
		bench_expect_ack(&t->a, line, "ping\n");
	}
	if (is_window(t->kind))
		tool_open_windows(t);
	tool_pair(t, STARTUP_TIMEOUT_MS);
	for (long i = 1; i < opts->warmup; i++)
		tool_pair(t, opts->timeout_ms);
}

static void tool_measure_block(int i, long count, void *unused)
{
	struct tool *t = &tools[i];
	uint64_t before = process_cpu_ns(t->a.pid);

	(void)unused;
	for (long k = 0; k < count; k++)
		t->a.ns[t->a.nns++] = tool_pair(t, opts->timeout_ms);
	t->a.cpu_ns += process_cpu_ns(t->a.pid) - before;
}

static void tool_stop(struct tool *t)
{
	if (t->pg)
		lib.close(t->pg);
	t->pg = NULL;
	bench_agent_stop(&t->a);
}

static void print_row(const char *mode, const char *name, struct bench_result r)
{
	printf("%-17s %-22s %10.1f %10.1f %13.1f\n", mode, name, r.median_us, r.p99_us,
	       r.cpu_us);
}

static void print_ratio(const char *mode, const char *name, struct bench_result a,
			struct bench_result b)
{
	printf("%-17s %-22s %9.2fx %9.2fx %12.2fx\n", mode, name, a.median_us / b.median_us,
	       a.p99_us / b.p99_us, a.cpu_us / b.cpu_us);
}

/* The same for what each adds above the floor (tails do not subtract). */
static void print_ratio_above(const char *mode, const char *name, struct bench_result a,
			      struct bench_result b, struct bench_result fl)
{
	printf("%-17s %-22s", mode, name);
	bench_print_quotient(10, a.median_us - fl.median_us, b.median_us - fl.median_us);
	printf(" %10s", "-");
	bench_print_quotient(13, a.cpu_us - fl.cpu_us, b.cpu_us - fl.cpu_us);
	printf("\n");
}

static int tool_index(enum kind k)
{
	for (int i = 0; i < ntools; i++)
		if (tools[i].kind == k)
			return i;
	return -1;
}

/* Stop the agents and print their rows, then each one's ratios to perf. */
static void print_mode(const struct bench_sched *m)
{
	struct bench_result res[MAX_TOOLS];
	int perf = tool_index(PERF), fl = tool_index(FLOOR);

	for (int i = 0; i < ntools; i++) {
		tool_stop(&tools[i]);
		res[i] = bench_agent_result(&tools[i].a);
		print_row(m->label, kind_name[tools[i].kind], res[i]);
	}
	for (int i = 0; perf >= 0 && i < ntools; i++) {
		char name[40];

		if (tools[i].kind == PERF || tools[i].kind == FLOOR)
			continue;
		snprintf(name, sizeof(name), "%s/perf", kind_name[tools[i].kind]);
		print_ratio(m->label, name, res[i], res[perf]);
		if (fl >= 0)
			print_ratio_above(m->label, "  above floor", res[i], res[perf], res[fl]);
	}
	/* What per-call statistics cost: the same window with no per-call
	 * values kept (--call-values 0; the exact statistics stay on). */
	if (tool_index(PG_WINDOW) >= 0 && tool_index(PG_NO_VALUES) >= 0)
		print_ratio(m->label, "window/no values", res[tool_index(PG_WINDOW)],
			    res[tool_index(PG_NO_VALUES)]);
	/* The bounds: a window pair's CPU against the floor's two
	 * commands, the library against the raw FIFO client. */
	if (tool_index(PG_WINDOW) >= 0 && fl >= 0)
		print_ratio(m->label, "window/floor", res[tool_index(PG_WINDOW)], res[fl]);
	for (int i = 0; tool_index(PG_WINDOW) >= 0 && i < ntools; i++)
		if (is_lib(tools[i].kind))
			print_ratio(m->label, tools[i].kind == LIBPG ? "libperfgate/raw" :
				    "1proc/raw", res[i], res[tool_index(PG_WINDOW)]);
	printf("\n");
	fflush(stdout);
}

static void run_mode(const struct bench_sched *m)
{
	cpu_set_t saved;

	bench_pin_client(m, &saved);
	for (int i = 0; i < ntools; i++)
		bench_agent_start(&tools[i].a, m->tool_cpu);
	for (int i = 0; i < ntools; i++)
		tool_warm_up(&tools[i]);
	bench_alternate(opts->n, opts->block, ntools, tool_measure_block, NULL);
	print_mode(m);
	sched_setaffinity(0, sizeof(saved), &saved);
}

/* perfgate or perf stat -D -1 -e task-clock --control fifo:CTL,ACK
 * -o /dev/null -- sleep 3600; the floor has no command line. */
static void tool_add(enum kind kind, long n)
{
	struct tool *t = &tools[ntools++];
	const char *rest[] = { "-D", "-1", "-e", opts->events, "--control", t->a.control,
			       "-o", "/dev/null", "--", "sleep", "3600" };
	const char **argv = t->a.argv;

	bench_agent_init(&t->a, kind_name[kind], kind_file[kind], "pair", n);
	t->kind = kind;
	t->a.floor_ack_len = 4;		/* "ack\n" */
	if (kind == FLOOR)
		return;
	if (kind == PERF) {
		*argv++ = opts->perf;
		*argv++ = "stat";
	} else {
		*argv++ = opts->perfgate;
	}
	if (kind == PG_NO_VALUES) {
		*argv++ = "--call-values";
		*argv++ = "0";
	}
	memcpy(argv, rest, sizeof(rest));
	argv[sizeof(rest) / sizeof(rest[0])] = NULL;
}

static void load_lib(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		bench_die("cannot load libperfgate: %s", dlerror());
	lib.open = (int (*)(struct perfgate **, const struct perfgate_opts *))
		dlsym(h, "perfgate_open");
	lib.close = (void (*)(struct perfgate *))dlsym(h, "perfgate_close");
	lib.begin = (int (*)(struct perfgate *, const char *))dlsym(h, "perfgate_window_begin");
	lib.end = (int (*)(struct perfgate *, const char *, char *, size_t))
		dlsym(h, "perfgate_window_end");
	lib.last_error = (const char *(*)(void))dlsym(h, "perfgate_last_error");
	if (!lib.open || !lib.close || !lib.begin || !lib.end || !lib.last_error)
		bench_die("%s: missing libperfgate symbols", path);
}

static void setup_tools(const struct options *o)
{
	bench_make_workdir();
	if (o->perfgate)
		tool_add(PG_WINDOW, o->n);
	if (o->perfgate && o->no_values)
		tool_add(PG_NO_VALUES, o->n);
	if (o->perfgate && o->libperfgate) {
		tool_add(LIBPG, o->n);
		tool_add(LIBPG_SINGLE, o->n);
	}
	if (o->perfgate && o->enable)
		tool_add(PG_ENABLE, o->n);
	if (o->perf)
		tool_add(PERF, o->n);
	if (o->floor)
		tool_add(FLOOR, o->n);
}

static void usage(FILE *out)
{
	fprintf(out,
"usage: windows [options]\n"
"Round trips of perfgate's window begin + window end against perf stat's\n"
"enable + disable, over --control fifo:CTL,ACK, and agent CPU per pair.\n"
"\n"
"  -n, --count N          measured pairs per agent and mode (default 2000)\n"
"  -w, --warmup N         unmeasured pairs first, at least 1 (default 200)\n"
"  -b, --block N          pairs per agent before switching (default 100)\n"
"  -s, --sched LIST       scheduling modes, comma-separated (default pinned,split):\n"
"                           pinned   client and agents on CPU N\n"
"                           split    client on CPU N, agents on the next CPU\n"
"                           default  nobody pinned: the scheduler decides\n"
"  -c, --cpu N            CPU N above (default 0)\n"
"  -t, --timeout MS       per reply (default 2000)\n"
"  -e, --events LIST      the agents' -e (default task-clock)\n"
"  -o, --open-windows N   windows each perfgate agent holds open besides w\n"
"                         (begun at warm-up, never ended; default 0)\n"
"      --perf PATH        perf binary (\"\" to leave perf out; default perf)\n"
"      --perfgate PATH    perfgate binary (default: not measured)\n"
"      --libperfgate PATH libperfgate.so: also time perfgate_window_begin +\n"
"                         perfgate_window_end against a perfgate of its own\n"
"      --no-enable        leave out perfgate's own enable + disable pairs\n"
"      --no-stats-off     leave out the perfgate run with --call-values 0\n"
"      --no-floor         leave out the built-in minimal agent\n"
"  -h, --help\n");
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "block", required_argument, NULL, 'b' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "sched", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "events", required_argument, NULL, 'e' },
		{ "open-windows", required_argument, NULL, 'o' },
		{ "perf", required_argument, NULL, 'P' },
		{ "perfgate", required_argument, NULL, 'G' },
		{ "libperfgate", required_argument, NULL, 'L' },
		{ "no-enable", no_argument, NULL, 'E' },
		{ "no-stats-off", no_argument, NULL, 'V' },
		{ "no-floor", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sched = "pinned,split";
	int c;

	*o = (struct options){ .n = 2000, .warmup = 200, .block = 100, .timeout_ms = 2000,
			       .perf = "perf", .floor = true, .enable = true,
			       .no_values = true, .events = "task-clock" };
	while ((c = getopt_long(argc, argv, "n:w:b:c:s:t:e:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->n = bench_parse_count(optarg, "count", 1); break;
		case 'w': o->warmup = bench_parse_count(optarg, "warmup", 1); break;
		case 'b': o->block = bench_parse_count(optarg, "block", 1); break;
		case 'c': o->cpu = (int)bench_parse_count(optarg, "cpu", 0); break;
		case 't': o->timeout_ms = (int)bench_parse_count(optarg, "timeout", 1); break;
		case 's': sched = optarg; break;
		case 'e': o->events = optarg; break;
		case 'o': o->open_windows = bench_parse_count(optarg, "open-windows", 0); break;
		case 'P': o->perf = *optarg ? optarg : NULL; break;
		case 'G': o->perfgate = *optarg ? optarg : NULL; break;
		case 'L': o->libperfgate = *optarg ? optarg : NULL; break;
		case 'E': o->enable = false; break;
		case 'V': o->no_values = false; break;
		case 'F': o->floor = false; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		bench_die("unexpected argument '%s'", argv[optind]);
	if (!o->perf && !o->perfgate)
		bench_die("nothing to measure: no perf and no perfgate");
	if (o->cpu >= sysconf(_SC_NPROCESSORS_ONLN))
		bench_die("no CPU %d", o->cpu);
	o->nmodes = bench_parse_sched(sched, o->cpu, o->modes, 3);
}

static void print_setup(const struct options *o)
{
	bench_print_machine();
	printf("  %ld measured pairs per agent and mode, %ld warm-up, agents "
	       "alternating every %ld pairs\n", o->n, o->warmup, o->block);
	printf("  -e %s; %ld other windows open in each perfgate\n", o->events, o->open_windows);
	if (o->perfgate)
		printf("  perfgate     %s\n", o->perfgate);
	if (o->libperfgate && o->perfgate)
		printf("  libperfgate  %s\n", o->libperfgate);
	if (o->perf)
		printf("  perf         %s stat\n", o->perf);
	printf("\n%-17s %-22s %10s %10s %13s\n", "scheduling", "agent", "median µs",
	       "p99 µs", "CPU µs/pair");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct options o;

	parse_options(argc, argv, &o);
	opts = &o;
	if (o.libperfgate && o.perfgate)
		load_lib(o.libperfgate);
	bench_install_signals();
	setup_tools(&o);
	print_setup(&o);
	for (int i = 0; i < o.nmodes; i++)
		run_mode(&o.modes[i]);
	bench_cleanup_files();
	return 0;
}
