/*
 * ack-latency: how fast does a control agent answer, and what does it cost?
 *
 * Starts `perf stat` and perfgate the same way a controlling script does,
 *
 *	TOOL -D -1 -e task-clock -o /dev/null --control fifo:CTL,ACK -- sleep 3600
 *
 * and drives each over its FIFO pair with N commands, enable and disable in
 * turn.  One round trip is: write "enable\n" to CTL, read one reply line from
 * ACK ("ack\n" followed by perf's NUL).  For each tool it reports the median
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
 * started or stops answering.  bench/ack-latency (the wrapper) builds and runs
 * it; bench/README.md has the results.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TOOLS	3
#define REPLY_MAX	256
/* The first reply waits for the tool to start up (perf opens its counters
 * and forks the workload first), so it gets a longer timeout. */
#define STARTUP_TIMEOUT_MS	10000

/* Where the client and the tools run; -1: wherever the scheduler likes. */
struct sched_mode {
	char label[32];
	int client_cpu;
	int tool_cpu;
};

struct options {
	long n;			/* measured commands per tool and mode */
	long warmup;		/* unmeasured commands before them */
	long block;		/* commands per tool before switching tool */
	int timeout_ms;		/* per reply, once the tool is up */
	int cpu;		/* the client's CPU when pinned */
	struct sched_mode modes[3];
	int nmodes;
	const char *perf;	/* NULL: not measured */
	const char *perfgate;	/* NULL: not measured */
	bool floor;		/* also measure the built-in minimal agent */
};

struct tool {
	const char *name;
	const char *path;	/* NULL: the built-in floor agent */
	const char *subcommand;	/* "stat" for perf, NULL for perfgate */
	pid_t pid;		/* also its process group id */
	int ctl_fd;
	int ack_fd;
	char ctl_path[PATH_MAX];
	char ack_path[PATH_MAX];
	char log_path[PATH_MAX];
	char reply[REPLY_MAX];	/* bytes read from ACK, not yet consumed */
	size_t reply_len;
	unsigned long sent;	/* commands sent: its parity picks the next one */
	uint64_t *rtt_ns;	/* measured round trips */
	size_t nrtt;
	uint64_t cpu_ns;	/* agent CPU during the measured blocks */
	int client_cpu;		/* where we wrote the last command from */
	long samples;		/* round trips checked for placement ... */
	long samples_shared;	/* ... with agent and client on one CPU */
};

/* Everything the cleanup must undo, reachable from a signal handler. */
static struct tool tools[MAX_TOOLS];
static int ntools;
static char workdir[PATH_MAX];

static void cleanup_files(void)
{
	for (int i = 0; i < ntools; i++) {
		unlink(tools[i].ctl_path);
		unlink(tools[i].ack_path);
		unlink(tools[i].log_path);
	}
	if (workdir[0])
		rmdir(workdir);
}

/* Async-signal-safe: kill, waitpid and unlink only.  The tools live in
 * their own process groups (so a Ctrl-C on the terminal does not stop them
 * halfway through a measurement), which means we must take them down
 * ourselves, and reap them: this machine's init does not. */
static void cleanup_hard(void)
{
	for (int i = 0; i < ntools; i++) {
		if (tools[i].pid <= 0)
			continue;
		kill(-tools[i].pid, SIGKILL);
		while (waitpid(-tools[i].pid, NULL, 0) > 0)
			;
	}
	cleanup_files();
}

static void on_signal(int sig)
{
	cleanup_hard();
	_exit(128 + sig);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("ack-latency: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup_hard();
	exit(1);
}

/* Show what a tool said before it failed: usually the real reason. */
static void die_tool(struct tool *t, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	FILE *log;

	fprintf(stderr, "ack-latency: %s: ", t->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	log = fopen(t->log_path, "r");
	/* Start-up errors come first: the first lines are the useful ones. */
	for (int i = 0; log && i < 20 && fgets(line, sizeof(line), log); i++) {
		if (i == 0)
			fprintf(stderr, "--- %s's stderr ---\n", t->name);
		fputs(line, stderr);
	}
	if (log)
		fclose(log);
	die("giving up");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * CPU time of a process in ns: the sum of its threads' schedstat run times.
 * schedstat counts in ns, where /proc/PID/stat counts in clock ticks (10 ms
 * here, far coarser than one command); /proc/PID/schedstat alone would miss
 * any thread but the main one.
 */
static uint64_t process_cpu_ns(pid_t pid)
{
	char path[64], file[PATH_MAX];
	unsigned long long run;
	uint64_t sum = 0;
	struct dirent *d;
	FILE *f;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		die("cannot read %s: %s", path, strerror(errno));
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s/schedstat", path, d->d_name);
		f = fopen(file, "r");
		if (!f)
			continue;	/* the thread just ended */
		if (fscanf(f, "%llu", &run) == 1)
			sum += run;
		fclose(f);
	}
	closedir(dir);
	return sum;
}

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
		p.own_ns += process_cpu_ns(tools[i].pid);
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

static int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The floor: the least any agent can do per command, which is to wait for
 * the ctl FIFO, read it and write the ack.  Measured next to the real tools
 * it shows how much of their cost is the round trip itself (two wake-ups,
 * four syscalls), which no agent can save.  Runs in a forked child.
 */
static void floor_agent(struct tool *t)
{
	struct pollfd pfd;
	char buf[4096];
	ssize_t got;
	int ack;

	/* O_RDWR: our own write end keeps the FIFO open between writers. */
	pfd.fd = open(t->ctl_path, O_RDWR);
	ack = open(t->ack_path, O_WRONLY);
	if (pfd.fd < 0 || ack < 0)
		_exit(127);
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, -1) < 0)
			continue;
		got = read(pfd.fd, buf, sizeof(buf));
		for (ssize_t i = 0; i < got; i++)
			if (buf[i] == '\n' && write(ack, "ack\n", 5) != 5)
				_exit(1);
	}
}

/* The child side of tool_start: its own process group, default signal
 * dispositions (we ignore SIGPIPE, and exec would pass that on), stderr to
 * a log we can show on failure. */
static void tool_exec(struct tool *t, int pin_cpu)
{
	char control[2 * PATH_MAX + 16];
	const char *argv[16];
	int fd, argc = 0;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	fd = open(t->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	if (pin_cpu >= 0 && pin_to_cpu(pin_cpu) < 0) {
		fprintf(stderr, "cannot pin to CPU %d: %s\n", pin_cpu,
			strerror(errno));
		_exit(127);
	}
	if (!t->path)
		floor_agent(t);
	snprintf(control, sizeof(control), "fifo:%s,%s", t->ctl_path,
		 t->ack_path);

	argv[argc++] = t->path;
	if (t->subcommand)
		argv[argc++] = t->subcommand;
	const char *rest[] = { "-D", "-1", "-e", "task-clock", "-o", "/dev/null",
			       "--control", control, "--", "sleep", "3600" };
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		argv[argc++] = rest[i];
	argv[argc] = NULL;

	execvp(argv[0], (char **)argv);
	fprintf(stderr, "cannot run %s: %s\n", t->path, strerror(errno));
	_exit(127);
}

static void tool_start(struct tool *t, int pin_cpu)
{
	pid_t pid;

	/* Open our read end first and without blocking: the tool opens ACK
	 * for writing during start-up and would otherwise wait for us. */
	t->ack_fd = open(t->ack_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (t->ack_fd < 0)
		die("open %s: %s", t->ack_path, strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0)
		tool_exec(t, pin_cpu);
	setpgid(pid, pid);	/* here too: no race with an early kill */
	t->pid = pid;
}

static bool tool_exited(struct tool *t)
{
	int status;

	if (waitpid(t->pid, &status, WNOHANG) != t->pid)
		return false;
	t->pid = 0;
	return true;
}

/*
 * Open CTL for writing once the tool has opened it for reading.  A
 * non-blocking open fails with ENXIO until then; blocking instead would hang
 * forever on a tool that died during start-up.
 */
static void tool_open_ctl(struct tool *t)
{
	uint64_t deadline = now_ns() + STARTUP_TIMEOUT_MS * 1000000ull;
	int fd;

	for (;;) {
		fd = open(t->ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno != ENXIO)
			die("open %s: %s", t->ctl_path, strerror(errno));
		if (tool_exited(t))
			die_tool(t, "exited during start-up");
		if (now_ns() > deadline)
			die_tool(t, "did not open its ctl FIFO within %d ms",
				 STARTUP_TIMEOUT_MS);
		usleep(1000);
	}
	/* Our writes are a few bytes: blocking writes never wait, and a
	 * plain write is the same single syscall for both tools. */
	fcntl(fd, F_SETFL, 0);
	t->ctl_fd = fd;
}

/*
 * Take one complete reply line out of t->reply, if there is one.  A NUL at
 * the start of a line is skipped: it is the tail of the previous "ack\n\0",
 * which may arrive with that ack or on its own read.
 */
static bool reply_take_line(struct tool *t, char *line, size_t size)
{
	size_t start = 0, end;
	char *nl;

	while (start < t->reply_len && t->reply[start] == '\0')
		start++;
	nl = memchr(t->reply + start, '\n', t->reply_len - start);
	if (!nl) {
		memmove(t->reply, t->reply + start, t->reply_len - start);
		t->reply_len -= start;
		return false;
	}
	end = nl - t->reply;
	snprintf(line, size, "%.*s", (int)(end - start), t->reply + start);
	t->reply_len -= end + 1;
	memmove(t->reply, nl + 1, t->reply_len);
	return true;
}

/* Read until one reply line is complete, however the bytes are split. */
static void reply_read(struct tool *t, char *line, size_t size, int timeout_ms)
{
	struct pollfd pfd = { .fd = t->ack_fd, .events = POLLIN };
	ssize_t got;
	int ready;

	while (!reply_take_line(t, line, size)) {
		if (t->reply_len == sizeof(t->reply))
			die_tool(t, "reply longer than %d bytes", REPLY_MAX);
		/* poll first, even though a blocking read would do: a tool
		 * that never answers (perf ignores some commands) must not
		 * hang us.  The extra syscall is the same for both tools. */
		ready = poll(&pfd, 1, timeout_ms);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			die("poll: %s", strerror(errno));
		if (ready == 0)
			die_tool(t, "no reply within %d ms (command %lu)",
				 timeout_ms, t->sent);
		got = read(t->ack_fd, t->reply + t->reply_len,
			   sizeof(t->reply) - t->reply_len);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got < 0)
			die("read %s: %s", t->ack_path, strerror(errno));
		if (got == 0)
			die_tool(t, "closed its ack FIFO (command %lu)", t->sent);
		t->reply_len += got;
	}
}

/* One round trip; returns its duration in ns. */
static uint64_t tool_command(struct tool *t, int timeout_ms)
{
	/* enable first: the tool starts disabled (-D -1).  The long forms,
	 * because perf 6.1 does not ack "e" and "d". */
	const char *cmd = t->sent % 2 == 0 ? "enable\n" : "disable\n";
	char line[REPLY_MAX];
	uint64_t start, end;

	t->client_cpu = sched_getcpu();	/* cheap (rseq), for the sampling */
	start = now_ns();
	if (write(t->ctl_fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		die_tool(t, "write to ctl FIFO: %s", strerror(errno));
	t->sent++;
	reply_read(t, line, sizeof(line), timeout_ms);
	end = now_ns();
	if (strcmp(line, "ack") != 0)
		die_tool(t, "replied \"%s\" to %.*s", line,
			 (int)strlen(cmd) - 1, cmd);
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
	if (cpu == t->client_cpu && process_last_cpu(t->pid) == cpu)
		t->samples_shared++;
}

/* Measured commands, with the agent's CPU time read around them only: the
 * other tool's blocks and our own bookkeeping stay out of it.  Every 10th
 * round trip is followed by a placement sample (outside its timing). */
static void tool_measure_block(struct tool *t, long count, int timeout_ms)
{
	uint64_t cpu_before = process_cpu_ns(t->pid);

	for (long i = 0; i < count; i++) {
		t->rtt_ns[t->nrtt++] = tool_command(t, timeout_ms);
		if (i % 10 == 9)
			tool_sample_placement(t);
	}
	t->cpu_ns += process_cpu_ns(t->pid) - cpu_before;
}

/*
 * Stop a tool the way a terminal's Ctrl-C does: SIGINT to its whole process
 * group.  perf 6.1 ignores "stop" and, while its workload runs, only notes
 * a SIGINT sent to itself; the workload dying is what ends it.
 */
static void tool_stop(struct tool *t)
{
	uint64_t deadline = now_ns() + 5000000000ull;
	pid_t group = t->pid;

	close(t->ctl_fd);
	close(t->ack_fd);
	t->ctl_fd = t->ack_fd = -1;
	kill(-group, SIGINT);
	while (!tool_exited(t) && now_ns() < deadline)
		usleep(10000);
	if (t->pid)
		fprintf(stderr, "ack-latency: %s ignored SIGINT for 5 s, "
			"killing it\n", t->name);
	/* Also, perf may exit before its workload is gone.  As the subreaper
	 * we inherit what is left of the group: end it and reap it, rather
	 * than leave zombies to an init that may not reap them. */
	kill(-group, SIGKILL);
	while (waitpid(-group, NULL, 0) > 0)
		;
	t->pid = 0;
	t->reply_len = 0;
	t->sent = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array, in µs: no interpolation, so
 * it is always a round trip that really happened. */
static double percentile_us(const uint64_t *sorted, size_t n, unsigned pct)
{
	size_t rank = (pct * n + 99) / 100;

	return sorted[rank > 0 ? rank - 1 : 0] / 1000.0;
}

struct result {
	double median_us;
	double p99_us;
	double cpu_us;		/* per command */
	double shared_pct;	/* sampled round trips on one CPU */
};

static struct result tool_result(struct tool *t)
{
	struct result r;

	qsort(t->rtt_ns, t->nrtt, sizeof(t->rtt_ns[0]), cmp_u64);
	r.median_us = percentile_us(t->rtt_ns, t->nrtt, 50);
	r.p99_us = percentile_us(t->rtt_ns, t->nrtt, 99);
	r.cpu_us = t->cpu_ns / 1000.0 / t->nrtt;
	r.shared_pct = t->samples ? 100.0 * t->samples_shared / t->samples
				  : 0;
	return r;
}

static void print_header(void)
{
	printf("%-16s %-13s %10s %10s %12s %11s\n", "scheduling", "tool",
	       "median µs", "p99 µs", "CPU µs/cmd", "same CPU");
}

static void print_result(const char *mode, const char *name, struct result r)
{
	printf("%-16s %-13s %10.1f %10.1f %12.1f %10.0f%%\n", mode, name,
	       r.median_us, r.p99_us, r.cpu_us, r.shared_pct);
}

/* a/b, or "-" where it means nothing (no cost above the floor). */
static void print_quotient(int width, double a, double b)
{
	if (b > 0 && a >= 0)
		printf(" %*.2fx", width - 1, a / b);
	else
		printf(" %*s", width, "-");
}

static void print_ratio(const char *mode, struct result pg, struct result pf)
{
	printf("%-16s %-13s %9.2fx %9.2fx %11.2fx\n", mode, "perfgate/perf",
	       pg.median_us / pf.median_us, pg.p99_us / pf.p99_us,
	       pg.cpu_us / pf.cpu_us);
}

/*
 * The same ratios for the cost each agent adds above the floor, the part an
 * agent's own code decides.  p99 is left out: tails do not subtract.
 */
static void print_ratio_above(const char *mode, struct result pg,
			      struct result pf, struct result fl)
{
	printf("%-16s %-13s", mode, "  above floor");
	print_quotient(10, pg.median_us - fl.median_us,
		       pf.median_us - fl.median_us);
	printf(" %10s", "-");
	print_quotient(12, pg.cpu_us - fl.cpu_us, pf.cpu_us - fl.cpu_us);
	printf("\n");
}

/*
 * One scheduling mode: start every tool, warm each up, then measure in
 * blocks, alternating tools and reversing the order every round (ABBA), so
 * neither tool always runs right after the other.
 */
static void run_mode(const struct options *o, const struct sched_mode *m)
{
	struct result res[MAX_TOOLS];
	struct load_probe before;
	double others;
	cpu_set_t saved;

	sched_getaffinity(0, sizeof(saved), &saved);
	if (m->client_cpu >= 0 && pin_to_cpu(m->client_cpu) < 0)
		die("cannot pin to CPU %d: %s", m->client_cpu, strerror(errno));

	for (int i = 0; i < ntools; i++) {
		tools[i].nrtt = 0;
		tools[i].cpu_ns = 0;
		tools[i].samples = tools[i].samples_shared = 0;
		tool_start(&tools[i], m->tool_cpu);
		tool_open_ctl(&tools[i]);
		tool_warm_up(&tools[i], o);
	}
	before = load_probe_now();
	for (long done = 0, round = 0; done < o->n; done += o->block, round++) {
		long count = o->n - done < o->block ? o->n - done : o->block;

		for (int k = 0; k < ntools; k++) {
			int i = round % 2 ? ntools - 1 - k : k;

			tool_measure_block(&tools[i], count, o->timeout_ms);
		}
	}
	others = load_probe_others(before, load_probe_now());
	for (int i = 0; i < ntools; i++) {
		tool_stop(&tools[i]);
		res[i] = tool_result(&tools[i]);
		print_result(m->label, tools[i].name, res[i]);
	}
	/* setup_tools put them in this order */
	if (ntools >= 2 && !strcmp(tools[0].name, "perfgate") &&
	    !strcmp(tools[1].name, "perf")) {
		print_ratio(m->label, res[0], res[1]);
		if (ntools == 3)
			print_ratio_above(m->label, res[0], res[1], res[2]);
	}
	printf("%-16s (other processes kept %.1f of %ld CPUs busy meanwhile)\n",
	       "", others, sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout);
	sched_setaffinity(0, sizeof(saved), &saved);
}

/* PATH = workdir/NAME.SUFFIX; PATH has room for PATH_MAX bytes. */
static void work_path(char *path, const char *name, const char *suffix)
{
	if (snprintf(path, PATH_MAX, "%s/%s.%s", workdir, name, suffix) >=
	    PATH_MAX)
		die("TMPDIR path too long: %s", workdir);
}

static void tool_init(struct tool *t, const char *name, const char *path,
		      const char *subcommand, long n)
{
	t->name = name;
	t->path = path;
	t->subcommand = subcommand;
	t->ctl_fd = t->ack_fd = -1;
	work_path(t->ctl_path, name, "ctl");
	work_path(t->ack_path, name, "ack");
	work_path(t->log_path, name, "log");
	if (mkfifo(t->ctl_path, 0600) < 0 || mkfifo(t->ack_path, 0600) < 0)
		die("mkfifo in %s: %s", workdir, strerror(errno));
	t->rtt_ns = calloc(n, sizeof(t->rtt_ns[0]));
	if (!t->rtt_ns)
		die("out of memory");
}

/* Private FIFOs in a fresh directory: nobody else can write commands to
 * our tools or read their acks. */
static void setup_tools(const struct options *o)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(workdir, sizeof(workdir), "%s/ack-latency.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(workdir)) {
		workdir[0] = '\0';
		die("mkdtemp: %s", strerror(errno));
	}
	/* Count before creating, so cleanup sees what was made if a later
	 * step fails. */
	if (o->perfgate) {
		ntools++;
		tool_init(&tools[ntools - 1], "perfgate", o->perfgate, NULL,
			  o->n);
	}
	if (o->perf) {
		ntools++;
		tool_init(&tools[ntools - 1], "perf", o->perf, "stat", o->n);
	}
	if (o->floor) {
		ntools++;
		tool_init(&tools[ntools - 1], "floor", NULL, NULL, o->n);
	}
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* A tool that dies must show up as EPIPE on our write, with its
	 * log, not as a silent death of the benchmark. */
	signal(SIGPIPE, SIG_IGN);
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
"  -h, --help\n");
}

static long parse_count(const char *arg, const char *what, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < min)
		die("bad %s: '%s' (an integer >= %ld)", what, arg, min);
	return v;
}

/* After -c: the modes refer to it. */
static void parse_sched(const char *list, struct options *o)
{
	int next_cpu = (o->cpu + 1) % sysconf(_SC_NPROCESSORS_ONLN);
	char *copy = strdup(list), *save = NULL;

	for (char *w = strtok_r(copy, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		struct sched_mode *m = &o->modes[o->nmodes];

		if (o->nmodes == 3)
			die("--sched: at most 3 modes");
		if (!strcmp(w, "default"))
			*m = (struct sched_mode){ "default", -1, -1 };
		else if (!strcmp(w, "pinned"))
			*m = (struct sched_mode){ "", o->cpu, o->cpu };
		else if (!strcmp(w, "split"))
			*m = (struct sched_mode){ "", o->cpu, next_cpu };
		else
			die("bad --sched mode '%s': default, pinned or split", w);
		if (m->client_cpu == m->tool_cpu && m->tool_cpu >= 0)
			snprintf(m->label, sizeof(m->label), "pinned (cpu %d)",
				 m->tool_cpu);
		else if (m->tool_cpu >= 0)
			snprintf(m->label, sizeof(m->label), "split (cpu %d/%d)",
				 m->client_cpu, m->tool_cpu);
		o->nmodes++;
	}
	free(copy);
	if (o->nmodes == 0)
		die("--sched: no mode given");
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
		case 'n': o->n = parse_count(optarg, "count", 1); break;
		case 'w': o->warmup = parse_count(optarg, "warmup", 1); break;
		case 'b': o->block = parse_count(optarg, "block", 1); break;
		case 'c': o->cpu = parse_count(optarg, "cpu", 0); break;
		case 't': o->timeout_ms = parse_count(optarg, "timeout", 1);
			  break;
		case 's': sched = optarg; break;
		case 'P': o->perf = *optarg ? optarg : NULL; break;
		case 'G': o->perfgate = *optarg ? optarg : NULL; break;
		case 'F': o->floor = false; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	if (!o->perf && !o->perfgate)
		die("nothing to measure: no perf and no perfgate");
	parse_sched(sched, o);
}

static void print_setup(const struct options *o)
{
	struct utsname u;

	uname(&u);
	printf("ack-latency: Linux %s, %ld CPUs online\n", u.release,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("  %ld measured commands per tool and mode (enable/disable in "
	       "turn), %ld warm-up,\n  tools alternating every %ld commands\n",
	       o->n, o->warmup, o->block);
	for (int i = 0; i < ntools; i++)
		printf("  %-8s  %s\n", tools[i].name,
		       tools[i].path ? tools[i].path : "(built in: poll, read, write)");
	printf("\n");
	print_header();
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct options o;

	parse_options(argc, argv, &o);
	install_signals();
	prctl(PR_SET_CHILD_SUBREAPER, 1);	/* see tool_stop */
	setup_tools(&o);
	print_setup(&o);
	for (int i = 0; i < o.nmodes; i++)
		run_mode(&o, &o.modes[i]);
	cleanup_files();
	return 0;
}
