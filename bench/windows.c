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
 *	floor             a minimal agent built in here: poll, read, "ack\n" per
 *	                  line: what two round trips cost with no agent work
 *
 * For each it reports the median and 99th percentile pair time and the
 * agent's CPU time per pair (the sum over its threads of
 * /proc/PID/task/TID/schedstat's first field, ns on a CPU, read before and
 * after each measured block), then the ratios to perf.  The window-end reply
 * is checked: its "calls" must be the number of pairs sent so far.
 *
 * All agents run at once and are measured in turns of -b pairs, the order
 * reversed every round, so drift on a shared VM hits all alike.  Each
 * scheduling mode (pinned: client and agents on one CPU; split: client on
 * one CPU, agents on the next; default: no pinning) starts fresh agents.
 *
 * A benchmark, not a test: it fails only when an agent cannot be started,
 * stops answering or answers wrongly.  bench/windows (the wrapper) builds and
 * runs it; bench/windows.md has the method and the results.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
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
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfgate.h"	/* struct perfgate_opts; the library is dlopen'ed */

#define MAX_TOOLS	5
#define REPLY_MAX	8192
#define STARTUP_TIMEOUT_MS	10000
#define WINDOW_NAME	"w"

enum kind { PG_WINDOW, PG_ENABLE, PERF, LIBPG, FLOOR };

static const char *const kind_name[] = {
	[PG_WINDOW] = "perfgate window", [PG_ENABLE] = "perfgate enable",
	[PERF] = "perf", [LIBPG] = "libperfgate", [FLOOR] = "floor",
};

static const char *const kind_file[] = {
	[PG_WINDOW] = "pg-window", [PG_ENABLE] = "pg-enable", [PERF] = "perf",
	[LIBPG] = "libperfgate", [FLOOR] = "floor",
};

struct sched_mode {
	char label[32];
	int client_cpu;		/* -1: not pinned */
	int tool_cpu;
};

struct options {
	long n, warmup, block;
	int timeout_ms, cpu;
	struct sched_mode modes[3];
	int nmodes;
	const char *perf, *perfgate, *libperfgate;
	bool floor, enable;
};

/* libperfgate, when given: resolved with dlsym. */
static struct {
	int (*open)(struct perfgate **, const struct perfgate_opts *);
	void (*close)(struct perfgate *);
	int (*begin)(struct perfgate *, const char *);
	int (*end)(struct perfgate *, const char *, char *, size_t);
	const char *(*last_error)(void);
} lib;

struct tool {
	enum kind kind;
	pid_t pid;		/* also its process group */
	int ctl_fd, ack_fd;
	struct perfgate *pg;	/* LIBPG */
	char ctl_path[PATH_MAX], ack_path[PATH_MAX], log_path[PATH_MAX];
	char reply[REPLY_MAX];	/* read from ACK, not yet consumed */
	size_t reply_len;
	unsigned long pairs;	/* sent since start: the next window's "calls" */
	uint64_t *pair_ns;
	size_t npairs;
	uint64_t cpu_ns;
};

static struct tool tools[MAX_TOOLS];
static int ntools;
static char workdir[PATH_MAX];
static const struct options *opts;

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

/* Async-signal-safe: the agents are in their own process groups (a Ctrl-C
 * on the terminal reaches us only), so we take them down and reap them. */
static void cleanup_hard(void)
{
	for (int i = 0; i < ntools; i++) {
		if (tools[i].pid <= 0)
			continue;
		kill(-tools[i].pid, SIGKILL);
		waitpid(tools[i].pid, NULL, 0);
		tools[i].pid = 0;
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

	fputs("windows: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup_hard();
	exit(1);
}

/* What an agent said before it failed: usually the reason. */
static void die_tool(struct tool *t, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	FILE *log;

	fprintf(stderr, "windows: %s: ", kind_name[t->kind]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	log = fopen(t->log_path, "r");
	for (int i = 0; log && i < 20 && fgets(line, sizeof(line), log); i++) {
		if (i == 0)
			fprintf(stderr, "--- its stderr ---\n");
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
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of a process in ns: its threads' schedstat run times summed
 * (ns; /proc/PID/stat counts 10 ms ticks, more than a block of pairs). */
static uint64_t process_cpu_ns(pid_t pid)
{
	char path[64], file[PATH_MAX];
	unsigned long long run;
	uint64_t sum = 0;
	struct dirent *d;
	DIR *dir;
	FILE *f;

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

static int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The floor: a forked child answering "ack\n" to every line. */
static void floor_agent(struct tool *t)
{
	struct pollfd pfd;
	char buf[4096];
	ssize_t got;
	int ack;

	pfd.fd = open(t->ctl_path, O_RDWR);	/* our own writer: no EOF */
	ack = open(t->ack_path, O_WRONLY);
	if (pfd.fd < 0 || ack < 0)
		_exit(127);
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, -1) < 0)
			continue;
		got = read(pfd.fd, buf, sizeof(buf));
		for (ssize_t i = 0; i < got; i++)
			if (buf[i] == '\n' && write(ack, "ack\n", 4) != 4)
				_exit(1);
	}
}

static void tool_exec(struct tool *t, int pin_cpu)
{
	char control[2 * PATH_MAX + 16];
	const char *argv[16];
	int fd, argc = 0;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	fd = open(t->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	if (pin_cpu >= 0 && pin_to_cpu(pin_cpu) < 0) {
		fprintf(stderr, "cannot pin to CPU %d: %s\n", pin_cpu, strerror(errno));
		_exit(127);
	}
	if (t->kind == FLOOR)
		floor_agent(t);
	snprintf(control, sizeof(control), "fifo:%s,%s", t->ctl_path, t->ack_path);
	if (t->kind == PERF) {
		argv[argc++] = opts->perf;
		argv[argc++] = "stat";
	} else {
		argv[argc++] = opts->perfgate;
	}
	const char *rest[] = { "-D", "-1", "-e", "task-clock", "--control", control,
			       "-o", "/dev/null", "--", "sleep", "3600" };
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		argv[argc++] = rest[i];
	argv[argc] = NULL;
	execvp(argv[0], (char **)argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static bool tool_exited(struct tool *t)
{
	if (t->pid <= 0 || waitpid(t->pid, NULL, WNOHANG) != t->pid)
		return false;
	t->pid = 0;
	return true;
}

static void tool_start(struct tool *t, int pin_cpu)
{
	uint64_t deadline;
	pid_t pid;
	int fd;

	/* Our read end first, without blocking: the agent opens ACK for
	 * writing during start-up. */
	t->ack_fd = open(t->ack_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (t->ack_fd < 0)
		die("open %s: %s", t->ack_path, strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0)
		tool_exec(t, pin_cpu);
	setpgid(pid, pid);
	t->pid = pid;
	t->reply_len = 0;
	t->pairs = 0;

	/* CTL opens (without blocking) once the agent reads it. */
	deadline = now_ns() + STARTUP_TIMEOUT_MS * 1000000ull;
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
	fcntl(fd, F_SETFL, 0);	/* a few bytes: blocking writes never wait */
	t->ctl_fd = fd;
}

/* One complete reply line out of t->reply, skipping the NUL perf puts
 * after each "ack\n". */
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
	end = (size_t)(nl - t->reply);
	snprintf(line, size, "%.*s", (int)(end - start), t->reply + start);
	t->reply_len -= end + 1;
	memmove(t->reply, nl + 1, t->reply_len);
	return true;
}

static void reply_read(struct tool *t, char *line, size_t size, int timeout_ms)
{
	struct pollfd pfd = { .fd = t->ack_fd, .events = POLLIN };
	ssize_t got;
	int ready;

	while (!reply_take_line(t, line, size)) {
		if (t->reply_len == sizeof(t->reply))
			die_tool(t, "reply longer than %d bytes", REPLY_MAX);
		/* poll first: an agent that never answers must not hang us */
		ready = poll(&pfd, 1, timeout_ms);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			die("poll: %s", strerror(errno));
		if (ready == 0)
			die_tool(t, "no reply within %d ms (pair %lu)", timeout_ms,
				 t->pairs);
		got = read(t->ack_fd, t->reply + t->reply_len,
			   sizeof(t->reply) - t->reply_len);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got < 0)
			die("read %s: %s", t->ack_path, strerror(errno));
		if (got == 0)
			die_tool(t, "closed its ack FIFO (pair %lu)", t->pairs);
		t->reply_len += (size_t)got;
	}
}

static void send_cmd(struct tool *t, const char *cmd)
{
	size_t len = strlen(cmd);

	if (write(t->ctl_fd, cmd, len) != (ssize_t)len)
		die_tool(t, "write to ctl FIFO: %s", strerror(errno));
}

/* "ack {"window":"w","calls":N,...}": N must be the pairs sent so far. */
static void check_window_end(struct tool *t, const char *reply)
{
	static const char prefix[] = "ack {\"window\":\"" WINDOW_NAME "\",\"calls\":";
	char *end;
	unsigned long calls;

	if (strncmp(reply, prefix, sizeof(prefix) - 1))
		die_tool(t, "window end: unexpected reply \"%.200s\"", reply);
	calls = strtoul(reply + sizeof(prefix) - 1, &end, 10);
	if (calls != t->pairs || *end != ',')
		die_tool(t, "window end: calls %lu, expected %lu: \"%.200s\"", calls,
			 t->pairs, reply);
}

/* One pair; returns its duration in ns. */
static uint64_t tool_pair(struct tool *t, int timeout_ms)
{
	char first[REPLY_MAX], second[REPLY_MAX];
	const char *a, *b;
	uint64_t start, end;
	int rc;

	if (t->kind == LIBPG) {
		start = now_ns();
		rc = lib.begin(t->pg, WINDOW_NAME);
		if (!rc)
			rc = lib.end(t->pg, WINDOW_NAME, second, sizeof(second));
		end = now_ns();
		if (rc)
			die_tool(t, "%s", lib.last_error());
		t->pairs++;
		/* The library hands over the JSON without "ack ". */
		memmove(second + 4, second, strlen(second) + 1);
		memcpy(second, "ack ", 4);
		check_window_end(t, second);
		return end - start;
	}
	if (t->kind == PG_WINDOW) {
		a = "window begin " WINDOW_NAME "\n";
		b = "window end " WINDOW_NAME "\n";
	} else {
		/* The long forms: perf 6.1 does not ack "e" and "d". */
		a = "enable\n";
		b = "disable\n";
	}
	start = now_ns();
	send_cmd(t, a);
	reply_read(t, first, sizeof(first), timeout_ms);
	send_cmd(t, b);
	reply_read(t, second, sizeof(second), timeout_ms);
	end = now_ns();
	t->pairs++;
	if (strcmp(first, "ack"))
		die_tool(t, "replied \"%.200s\" to %.*s", first, (int)strlen(a) - 1, a);
	if (t->kind == PG_WINDOW)
		check_window_end(t, second);
	else if (strcmp(second, "ack"))
		die_tool(t, "replied \"%.200s\" to %.*s", second, (int)strlen(b) - 1, b);
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
	char line[REPLY_MAX];
	int rc;

	send_cmd(t, "ping\n");
	reply_read(t, line, sizeof(line), STARTUP_TIMEOUT_MS);
	if (strcmp(line, "ack"))
		die_tool(t, "replied \"%.200s\" to ping", line);
	o.ctl_path = t->ctl_path;
	o.ack_path = t->ack_path;
	o.timeout_ms = opts->timeout_ms;
	rc = lib.open(&t->pg, &o);
	if (rc)
		die_tool(t, "perfgate_open: %s", lib.last_error());
	close(t->ctl_fd);
	close(t->ack_fd);
	t->ctl_fd = t->ack_fd = -1;
}

static void tool_warm_up(struct tool *t)
{
	if (t->kind == LIBPG)
		tool_connect_lib(t);
	/* The first reply may include the agent's start-up. */
	tool_pair(t, STARTUP_TIMEOUT_MS);
	for (long i = 1; i < opts->warmup; i++)
		tool_pair(t, opts->timeout_ms);
}

static void tool_measure_block(struct tool *t, long count)
{
	uint64_t before = process_cpu_ns(t->pid);

	for (long i = 0; i < count; i++)
		t->pair_ns[t->npairs++] = tool_pair(t, opts->timeout_ms);
	t->cpu_ns += process_cpu_ns(t->pid) - before;
}

/* As a terminal's Ctrl-C: SIGINT to the agent's process group (perf 6.1
 * ignores "stop", and ends on SIGINT once its workload is gone). */
static void tool_stop(struct tool *t)
{
	uint64_t deadline = now_ns() + 5000000000ull;

	if (t->pg)
		lib.close(t->pg);
	t->pg = NULL;
	if (t->ctl_fd >= 0)
		close(t->ctl_fd);
	if (t->ack_fd >= 0)
		close(t->ack_fd);
	t->ctl_fd = t->ack_fd = -1;
	kill(-t->pid, SIGINT);
	while (!tool_exited(t)) {
		if (now_ns() > deadline) {
			fprintf(stderr, "windows: %s ignored SIGINT for 5 s, killing it\n",
				kind_name[t->kind]);
			kill(-t->pid, SIGKILL);
			waitpid(t->pid, NULL, 0);
			t->pid = 0;
			break;
		}
		usleep(10000);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: always a pair that really happened. */
static double percentile_us(const uint64_t *sorted, size_t n, unsigned pct)
{
	size_t rank = (pct * n + 99) / 100;

	return (double)sorted[rank > 0 ? rank - 1 : 0] / 1000.0;
}

struct result {
	double median_us, p99_us, cpu_us;
	bool valid;
};

static struct result tool_result(struct tool *t)
{
	struct result r = { .valid = true };

	qsort(t->pair_ns, t->npairs, sizeof(t->pair_ns[0]), cmp_u64);
	r.median_us = percentile_us(t->pair_ns, t->npairs, 50);
	r.p99_us = percentile_us(t->pair_ns, t->npairs, 99);
	r.cpu_us = (double)t->cpu_ns / 1000.0 / (double)t->npairs;
	return r;
}

static void print_row(const char *mode, const char *name, struct result r)
{
	printf("%-17s %-22s %10.1f %10.1f %13.1f\n", mode, name, r.median_us, r.p99_us,
	       r.cpu_us);
}

static void print_ratio(const char *mode, const char *name, struct result a,
			struct result b)
{
	printf("%-17s %-22s %9.2fx %9.2fx %12.2fx\n", mode, name, a.median_us / b.median_us,
	       a.p99_us / b.p99_us, a.cpu_us / b.cpu_us);
}

/* The same for what each adds above the floor (tails do not subtract). */
static void print_ratio_above(const char *mode, const char *name, struct result a,
			      struct result b, struct result fl)
{
	double am = a.median_us - fl.median_us, bm = b.median_us - fl.median_us;
	double ac = a.cpu_us - fl.cpu_us, bc = b.cpu_us - fl.cpu_us;

	printf("%-17s %-22s", mode, name);
	if (am >= 0 && bm > 0)
		printf(" %9.2fx", am / bm);
	else
		printf(" %10s", "-");
	printf(" %10s", "-");
	if (ac >= 0 && bc > 0)
		printf(" %12.2fx\n", ac / bc);
	else
		printf(" %13s\n", "-");
}

static int tool_index(enum kind k)
{
	for (int i = 0; i < ntools; i++)
		if (tools[i].kind == k)
			return i;
	return -1;
}

static void run_mode(const struct sched_mode *m)
{
	struct result res[MAX_TOOLS];
	cpu_set_t saved;
	int perf, fl;

	sched_getaffinity(0, sizeof(saved), &saved);
	if (m->client_cpu >= 0 && pin_to_cpu(m->client_cpu) < 0)
		die("cannot pin to CPU %d: %s", m->client_cpu, strerror(errno));
	for (int i = 0; i < ntools; i++) {
		tools[i].npairs = 0;
		tools[i].cpu_ns = 0;
		tool_start(&tools[i], m->tool_cpu);
	}
	for (int i = 0; i < ntools; i++)
		tool_warm_up(&tools[i]);
	for (long done = 0, round = 0; done < opts->n; done += opts->block, round++) {
		long count = opts->n - done < opts->block ? opts->n - done : opts->block;

		for (int k = 0; k < ntools; k++)
			tool_measure_block(&tools[round % 2 ? ntools - 1 - k : k], count);
	}
	for (int i = 0; i < ntools; i++) {
		tool_stop(&tools[i]);
		res[i] = tool_result(&tools[i]);
		print_row(m->label, kind_name[tools[i].kind], res[i]);
	}
	perf = tool_index(PERF);
	fl = tool_index(FLOOR);
	for (int i = 0; perf >= 0 && i < ntools; i++) {
		char name[40];

		if (tools[i].kind == PERF || tools[i].kind == FLOOR)
			continue;
		snprintf(name, sizeof(name), "%s/perf", kind_name[tools[i].kind]);
		print_ratio(m->label, name, res[i], res[perf]);
		if (fl >= 0)
			print_ratio_above(m->label, "  above floor", res[i], res[perf], res[fl]);
	}
	printf("\n");
	fflush(stdout);
	sched_setaffinity(0, sizeof(saved), &saved);
}

static void tool_add(enum kind kind, long n)
{
	struct tool *t = &tools[ntools++];	/* counted first: cleanup sees it */

	t->kind = kind;
	t->ctl_fd = t->ack_fd = -1;
	if (snprintf(t->ctl_path, PATH_MAX, "%s/%s.ctl", workdir, kind_file[kind]) >= PATH_MAX ||
	    snprintf(t->ack_path, PATH_MAX, "%s/%s.ack", workdir, kind_file[kind]) >= PATH_MAX ||
	    snprintf(t->log_path, PATH_MAX, "%s/%s.log", workdir, kind_file[kind]) >= PATH_MAX)
		die("TMPDIR path too long: %s", workdir);
	if (mkfifo(t->ctl_path, 0600) < 0 || mkfifo(t->ack_path, 0600) < 0)
		die("mkfifo in %s: %s", workdir, strerror(errno));
	t->pair_ns = calloc((size_t)n, sizeof(t->pair_ns[0]));
	if (!t->pair_ns)
		die("out of memory");
}

static void load_lib(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		die("cannot load libperfgate: %s", dlerror());
	lib.open = (int (*)(struct perfgate **, const struct perfgate_opts *))
		dlsym(h, "perfgate_open");
	lib.close = (void (*)(struct perfgate *))dlsym(h, "perfgate_close");
	lib.begin = (int (*)(struct perfgate *, const char *))dlsym(h, "perfgate_window_begin");
	lib.end = (int (*)(struct perfgate *, const char *, char *, size_t))
		dlsym(h, "perfgate_window_end");
	lib.last_error = (const char *(*)(void))dlsym(h, "perfgate_last_error");
	if (!lib.open || !lib.close || !lib.begin || !lib.end || !lib.last_error)
		die("%s: missing libperfgate symbols", path);
}

static void setup_tools(const struct options *o)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(workdir, sizeof(workdir), "%s/windows.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(workdir)) {
		workdir[0] = '\0';
		die("mkdtemp: %s", strerror(errno));
	}
	if (o->perfgate)
		tool_add(PG_WINDOW, o->n);
	if (o->perfgate && o->libperfgate)
		tool_add(LIBPG, o->n);
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
"      --perf PATH        perf binary (\"\" to leave perf out; default perf)\n"
"      --perfgate PATH    perfgate binary (default: not measured)\n"
"      --libperfgate PATH libperfgate.so: also time perfgate_window_begin +\n"
"                         perfgate_window_end against a perfgate of its own\n"
"      --no-enable        leave out perfgate's own enable + disable pairs\n"
"      --no-floor         leave out the built-in minimal agent\n"
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

static void parse_sched(const char *list, struct options *o)
{
	int next_cpu = (int)((o->cpu + 1) % sysconf(_SC_NPROCESSORS_ONLN));
	char *copy = strdup(list), *save = NULL;

	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		struct sched_mode *m = &o->modes[o->nmodes];

		if (o->nmodes == 3)
			die("--sched: at most 3 modes");
		if (!strcmp(w, "default")) {
			*m = (struct sched_mode){ "default", -1, -1 };
		} else if (!strcmp(w, "pinned")) {
			*m = (struct sched_mode){ "", o->cpu, o->cpu };
			snprintf(m->label, sizeof(m->label), "pinned (cpu %d)", o->cpu);
		} else if (!strcmp(w, "split")) {
			*m = (struct sched_mode){ "", o->cpu, next_cpu };
			snprintf(m->label, sizeof(m->label), "split (cpu %d/%d)", o->cpu,
				 next_cpu);
		} else {
			die("bad --sched mode '%s': pinned, split or default", w);
		}
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
		{ "libperfgate", required_argument, NULL, 'L' },
		{ "no-enable", no_argument, NULL, 'E' },
		{ "no-floor", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sched = "pinned,split";
	int c;

	*o = (struct options){ .n = 2000, .warmup = 200, .block = 100, .timeout_ms = 2000,
			       .perf = "perf", .floor = true, .enable = true };
	while ((c = getopt_long(argc, argv, "n:w:b:c:s:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->n = parse_count(optarg, "count", 1); break;
		case 'w': o->warmup = parse_count(optarg, "warmup", 1); break;
		case 'b': o->block = parse_count(optarg, "block", 1); break;
		case 'c': o->cpu = (int)parse_count(optarg, "cpu", 0); break;
		case 't': o->timeout_ms = (int)parse_count(optarg, "timeout", 1); break;
		case 's': sched = optarg; break;
		case 'P': o->perf = *optarg ? optarg : NULL; break;
		case 'G': o->perfgate = *optarg ? optarg : NULL; break;
		case 'L': o->libperfgate = *optarg ? optarg : NULL; break;
		case 'E': o->enable = false; break;
		case 'F': o->floor = false; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	if (!o->perf && !o->perfgate)
		die("nothing to measure: no perf and no perfgate");
	if (o->cpu >= sysconf(_SC_NPROCESSORS_ONLN))
		die("no CPU %d", o->cpu);
	parse_sched(sched, o);
}

int main(int argc, char **argv)
{
	static struct options o;
	struct sigaction sa = { .sa_handler = on_signal };
	struct utsname u;

	parse_options(argc, argv, &o);
	opts = &o;
	if (o.libperfgate && o.perfgate)
		load_lib(o.libperfgate);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* an agent that dies: EPIPE, with its log */
	setup_tools(&o);

	uname(&u);
	printf("windows: Linux %s, %ld CPUs online\n", u.release,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("  %ld measured pairs per agent and mode, %ld warm-up, agents "
	       "alternating every %ld pairs\n", o.n, o.warmup, o.block);
	if (o.perfgate)
		printf("  perfgate     %s\n", o.perfgate);
	if (o.libperfgate && o.perfgate)
		printf("  libperfgate  %s\n", o.libperfgate);
	if (o.perf)
		printf("  perf         %s stat\n", o.perf);
	printf("\n%-17s %-22s %10s %10s %13s\n", "scheduling", "agent", "median µs",
	       "p99 µs", "CPU µs/pair");
	fflush(stdout);
	for (int i = 0; i < o.nmodes; i++)
		run_mode(&o.modes[i]);
	cleanup_files();
	return 0;
}
