/*
 * ack-latency: how fast does a control agent answer, and what does it cost?
 *
 * Starts `perf stat` and perfgate the same way a controlling script does,
 *
 *	TOOL -D -1 -e task-clock -o /dev/null --control fifo:CTL,ACK -- sleep 3600
 *
 * and drives each over its FIFO pair with N commands, enable and disable in
 * turn.  One round trip is: write "enable\n" to CTL, read one reply line from
 * ACK ("ack\n" followed by perf's NUL).  With --bare the commands are
 * written as some harnesses write them, "enable" with no terminator, which
 * perf ends where the bytes end and perfgate after its grace period.  With
 * --baseline another perfgate binary (an earlier build) is measured too,
 * and the ratios of this one to it are printed.  For each tool it reports the median
 * and 99th percentile round-trip time (CLOCK_MONOTONIC around the write and
 * the read) and the agent's CPU time per command (the sum over its threads of
 * /proc/PID/task/TID/schedstat's first field, ns spent on a CPU, read before
 * and after each measured block), then the perfgate/perf ratios.  A third,
 * built-in agent, the "floor", does nothing but poll, read and write: what
 * the round trip itself costs, which no agent can save.
 *
 * All the agents run at the same time and are measured in alternating
 * blocks, so slow drift in a noisy VM hits all alike.  Scheduling matters a lot here (a
 * wake-up on another CPU costs far more than a switch on the same one), so the
 * whole measurement is done with default scheduling, then with the client and
 * the tools pinned to one CPU, then pinned to two different CPUs.  Default
 * scheduling alone would mislead: the scheduler places each tool on its own,
 * so in one run one tool may share the client's CPU and the other not.
 *
 * This is a benchmark, not a test: it fails only when a tool cannot be
 * started or stops answering.  bench/ack-latency (the wrapper) builds it,
 * with bench_common.c (what it shares with bench/windows.c), and runs it;
 * bench/README.md has the results.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bench_common.h"

#define MAX_TOOLS	4

const char bench_name[] = "ack-latency";

struct options {
	long n;			/* measured commands per tool and mode */
	long warmup;		/* unmeasured commands before them */
	long block;		/* commands per tool before switching tool */
	int timeout_ms;		/* per reply, once the tool is up */
	int cpu;		/* the client's CPU when pinned */
	struct bench_sched modes[3];
	int nmodes;
	const char *perf;	/* NULL: not measured */
	const char *perfgate;	/* NULL: not measured */
	bool floor;		/* also measure the built-in minimal agent */
	bool bare;		/* commands without their '\n' */
	const char *baseline;	/* another perfgate to compare with, or NULL */
};

/* a.count: commands sent, its parity picks the next one; a.ns: the
 * measured round trips. */
struct tool {
	struct bench_agent a;
	const char *path;	/* NULL: the built-in floor agent */
	bool bare;		/* send "enable", not "enable\n" */
	int client_cpu;		/* where we wrote the last command from */
	long samples;		/* round trips checked for placement ... */
	long samples_shared;	/* ... with agent and client on one CPU */
};

static struct tool tools[MAX_TOOLS];
static int ntools;

/*
 * How busy the rest of the machine was while we measured.  With default
 * scheduling it decides the result: with a CPU idle, the tool is woken on
 * another CPU than the client (slow); with every other CPU busy, both end
 * up sharing one (fast, as when pinned).  /proc/stat counts in clock ticks,
 * so over a run of a fraction of a second this is coarse, but it tells
 * "idle" from "one CPU busy".
 */
struct load_probe {
	uint64_t wall_ns;
	uint64_t busy_ns;	/* all CPUs, from /proc/stat */
	uint64_t own_ns;	/* this client and the tools */
};

static uint64_t machine_busy_ns(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	/* cpu user nice system idle iowait irq softirq steal */
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		v[0] = v[1] = v[2] = v[5] = v[6] = v[7] = 0;
	fclose(f);
	return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1000000000ull /
	       sysconf(_SC_CLK_TCK);
}

static struct load_probe load_probe_now(void)
{
	struct load_probe p = { now_ns(), machine_busy_ns(),
				process_cpu_ns(getpid()) };

	for (int i = 0; i < ntools; i++)
		p.own_ns += process_cpu_ns(tools[i].a.pid);
	return p;
}

/* CPUs' worth of work done by others between two probes. */
static double load_probe_others(struct load_probe a, struct load_probe b)
{
	double others = (double)(b.busy_ns - a.busy_ns) -
			(double)(b.own_ns - a.own_ns);

	return others > 0 ? others / (b.wall_ns - a.wall_ns) : 0;
}

/* The CPU a process last ran on: field 39 of /proc/PID/stat, counted
 * from after the command name, which may contain spaces and ')'. */
static int process_last_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	int field = 2, cpu = -1;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	p = strrchr(buf, ')');
	while (p && field < 39) {
		p = strchr(p + 1, ' ');
		field++;
	}
	if (p)
		sscanf(p + 1, "%d", &cpu);
	return cpu;
}

/* One round trip; returns its duration in ns. */
static uint64_t tool_command(struct tool *t, int timeout_ms)
{
	/* enable first: the tool starts disabled (-D -1).  The long forms,
	 * because perf 6.1 does not ack "e" and "d". */
	const char *cmd = t->a.count % 2 == 0 ? "enable\n" : "disable\n";
	const char *bare = t->a.count % 2 == 0 ? "enable" : "disable";
	char line[BENCH_REPLY_MAX];
	uint64_t start, end;

	t->client_cpu = sched_getcpu();	/* cheap (rseq), for the sampling */
	start = now_ns();
	bench_send(&t->a, t->bare ? bare : cmd);
	t->a.count++;
	bench_reply_read(&t->a, line, sizeof(line), timeout_ms);
	end = now_ns();
	bench_expect_ack(&t->a, line, cmd);
	return end - start;
}

static void tool_warm_up(struct tool *t, const struct options *o)
{
	/* The first reply includes the tool's start-up. */
	tool_command(t, STARTUP_TIMEOUT_MS);
	for (long i = 1; i < o->warmup; i++)
		tool_command(t, o->timeout_ms);
}

/*
 * Did the last round trip stay on one CPU?  It did if we wrote the command
 * and got the ack on the same CPU and the agent answered from it too (right
 * after the ack, its last CPU is the one it answered from).  With default
 * scheduling this decides an agent's numbers, and the scheduler moves
 * tasks around, so it is sampled all along.
 */
static void tool_sample_placement(struct tool *t)
{
	int cpu = sched_getcpu();

	t->samples++;
	if (cpu == t->client_cpu && process_last_cpu(t->a.pid) == cpu)
		t->samples_shared++;
}

/* Measured commands, with the agent's CPU time read around them only: the
 * other tool's blocks and our own bookkeeping stay out of it.  Every 10th
 * round trip is followed by a placement sample (outside its timing). */
static void tool_measure_block(int i, long count, void *opts)
{
	const struct options *o = opts;
	struct tool *t = &tools[i];
	uint64_t cpu_before = process_cpu_ns(t->a.pid);

	for (long k = 0; k < count; k++) {
		t->a.ns[t->a.nns++] = tool_command(t, o->timeout_ms);
		if (k % 10 == 9)
			tool_sample_placement(t);
	}
	t->a.cpu_ns += process_cpu_ns(t->a.pid) - cpu_before;
}

static void print_header(void)
{
	printf("%-16s %-13s %10s %10s %12s %11s\n", "scheduling", "tool",
	       "median µs", "p99 µs", "CPU µs/cmd", "same CPU");
}

/* Sampled round trips with agent and client on one CPU, in %. */
static double shared_pct(const struct tool *t)
{
	return t->samples ? 100.0 * t->samples_shared / t->samples : 0;
}

static void print_result(const char *mode, const struct tool *t,
			 struct bench_result r)
{
	printf("%-16s %-13s %10.1f %10.1f %12.1f %10.0f%%\n", mode, t->a.name,
	       r.median_us, r.p99_us, r.cpu_us, shared_pct(t));
}

static void print_ratio(const char *mode, const char *what, struct bench_result pg,
			struct bench_result pf)
{
	printf("%-16s %-13s %9.2fx %9.2fx %11.2fx\n", mode, what,
	       pg.median_us / pf.median_us, pg.p99_us / pf.p99_us,
	       pg.cpu_us / pf.cpu_us);
}

/*
 * The same ratios for the cost each agent adds above the floor, the part an
 * agent's own code decides.  p99 is left out: tails do not subtract.
 */
static void print_ratio_above(const char *mode, struct bench_result pg,
			      struct bench_result pf, struct bench_result fl)
{
	printf("%-16s %-13s", mode, "  above floor");
	bench_print_quotient(10, pg.median_us - fl.median_us,
			     pf.median_us - fl.median_us);
	printf(" %10s", "-");
	bench_print_quotient(12, pg.cpu_us - fl.cpu_us, pf.cpu_us - fl.cpu_us);
	printf("\n");
}

/* Stop the tools and print their rows, with the ratios when there are
 * perfgate and perf (setup_tools put them first, in this order). */
static void print_mode(const struct bench_sched *m, double others)
{
	struct bench_result res[MAX_TOOLS];

	for (int i = 0; i < ntools; i++) {
		bench_agent_stop(&tools[i].a);
		res[i] = bench_agent_result(&tools[i].a);
		print_result(m->label, &tools[i], res[i]);
	}
	if (ntools >= 2 && !strcmp(tools[0].a.name, "perfgate") &&
	    !strcmp(tools[1].a.name, "perf")) {
		print_ratio(m->label, "perfgate/perf", res[0], res[1]);
		if (ntools >= 3 && !strcmp(tools[2].a.name, "floor"))
			print_ratio_above(m->label, res[0], res[1], res[2]);
	}
	if (ntools >= 2 && !strcmp(tools[0].a.name, "perfgate") &&
	    !strcmp(tools[ntools - 1].a.name, "baseline"))
		print_ratio(m->label, "pg/baseline", res[0], res[ntools - 1]);
	printf("%-16s (other processes kept %.1f of %ld CPUs busy meanwhile)\n",
	       "", others, sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout);
}

/*
 * One scheduling mode: start every tool, warm each up, then measure in
 * blocks, alternating tools and reversing the order every round (ABBA), so
 * neither tool always runs right after the other.
 */
static void run_mode(const struct options *o, const struct bench_sched *m)
{
	struct load_probe before;
	double others;
	cpu_set_t saved;

	bench_pin_client(m, &saved);
	for (int i = 0; i < ntools; i++) {
		tools[i].samples = tools[i].samples_shared = 0;
		bench_agent_start(&tools[i].a, m->tool_cpu);
		tool_warm_up(&tools[i], o);
	}
	before = load_probe_now();
	bench_alternate(o->n, o->block, ntools, tool_measure_block,
			(void *)o);
	others = load_probe_others(before, load_probe_now());
	print_mode(m, others);
	sched_setaffinity(0, sizeof(saved), &saved);
}

/* TOOL -D -1 -e task-clock -o /dev/null --control fifo:CTL,ACK -- sleep 3600,
 * where TOOL is PATH and, for perf, SUBCOMMAND; no PATH: the floor. */
static void tool_init(struct tool *t, const char *name, const char *path,
		      const char *subcommand, const struct options *o)
{
	const char *rest[] = { "-D", "-1", "-e", "task-clock", "-o", "/dev/null",
			       "--control", t->a.control, "--", "sleep", "3600" };
	const char **argv = t->a.argv;

	bench_agent_init(&t->a, name, name, "command", o->n);
	t->path = path;
	t->bare = o->bare;
	t->a.floor_ack_len = 5;		/* "ack\n\0", as perf replies */
	t->a.floor_bare = o->bare;
	if (!path)
		return;
	*argv++ = path;
	if (subcommand)
		*argv++ = subcommand;
	memcpy(argv, rest, sizeof(rest));
	argv[sizeof(rest) / sizeof(rest[0])] = NULL;
}

static void setup_tools(const struct options *o)
{
	bench_make_workdir();
	if (o->perfgate)
		tool_init(&tools[ntools++], "perfgate", o->perfgate, NULL, o);
	if (o->perf)
		tool_init(&tools[ntools++], "perf", o->perf, "stat", o);
	if (o->floor)
		tool_init(&tools[ntools++], "floor", NULL, NULL, o);
	if (o->baseline)
		tool_init(&tools[ntools++], "baseline", o->baseline, NULL, o);
}

static void usage(FILE *out)
{
	fprintf(out,
"usage: ack-latency [options]\n"
"Round-trip time and agent CPU per command of perfgate against perf stat,\n"
"over --control fifo:CTL,ACK.\n"
"\n"
"  -n, --count N        measured commands per tool and mode (default 2000)\n"
"  -w, --warmup N       unmeasured commands first, at least 1: the first\n"
"                       reply includes the tool's start-up (default 500)\n"
"  -b, --block N        commands per tool before switching (default 100)\n"
"  -s, --sched LIST     scheduling modes, comma-separated (default:\n"
"                       default,pinned,split):\n"
"                         default  no pinning, the scheduler decides\n"
"                         pinned   client and tools on CPU N\n"
"                         split    client on CPU N, tools on the next CPU\n"
"  -c, --cpu N          CPU N above (default 0)\n"
"  -t, --timeout MS     per reply (default 2000)\n"
"      --perf PATH      perf binary (default perf; \"\" to skip)\n"
"      --perfgate PATH  perfgate binary (default: not measured)\n"
"      --no-floor       do not measure the built-in minimal agent (poll,\n"
"                       read, write): the cost of the round trip itself\n"
"      --bare           write commands without their newline (\"enable\"),\n"
"                       as some harnesses do; the floor then acks each read\n"
"      --baseline PATH  also measure this perfgate binary (an earlier build)\n"
"                       and print perfgate/baseline ratios\n"
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
		{ "perf", required_argument, NULL, 'P' },
		{ "perfgate", required_argument, NULL, 'G' },
		{ "no-floor", no_argument, NULL, 'F' },
		{ "bare", no_argument, NULL, 'B' },
		{ "baseline", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sched = "default,pinned,split";
	int c;

	*o = (struct options){ .n = 2000, .warmup = 500, .block = 100,
			       .timeout_ms = 2000, .cpu = 0, .perf = "perf",
			       .floor = true };
	while ((c = getopt_long(argc, argv, "n:w:b:c:s:t:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'n': o->n = bench_parse_count(optarg, "count", 1); break;
		case 'w': o->warmup = bench_parse_count(optarg, "warmup", 1); break;
		case 'b': o->block = bench_parse_count(optarg, "block", 1); break;
		case 'c': o->cpu = bench_parse_count(optarg, "cpu", 0); break;
		case 't': o->timeout_ms = bench_parse_count(optarg, "timeout", 1);
			  break;
		case 's': sched = optarg; break;
		case 'P': o->perf = *optarg ? optarg : NULL; break;
		case 'G': o->perfgate = *optarg ? optarg : NULL; break;
		case 'F': o->floor = false; break;
		case 'B': o->bare = true; break;
		case 'L': o->baseline = *optarg ? optarg : NULL; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		bench_die("unexpected argument '%s'", argv[optind]);
	if (!o->perf && !o->perfgate)
		bench_die("nothing to measure: no perf and no perfgate");
	o->nmodes = bench_parse_sched(sched, o->cpu, o->modes, 3);
}

static void print_setup(const struct options *o)
{
	bench_print_machine();
	printf("  %ld measured commands per tool and mode (enable/disable in "
	       "turn%s), %ld warm-up,\n  tools alternating every %ld commands\n",
	       o->n, o->bare ? ", bare: no newline" : "", o->warmup, o->block);
	for (int i = 0; i < ntools; i++)
		printf("  %-8s  %s\n", tools[i].a.name,
		       tools[i].path ? tools[i].path : "(built in: poll, read, write)");
	printf("\n");
	print_header();
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct options o;

	parse_options(argc, argv, &o);
	bench_install_signals();
	prctl(PR_SET_CHILD_SUBREAPER, 1);	/* see bench_agent_stop */
	setup_tools(&o);
	print_setup(&o);
	for (int i = 0; i < o.nmodes; i++)
		run_mode(&o, &o.modes[i]);
	bench_cleanup_files();
	return 0;
}
