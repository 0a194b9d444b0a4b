/*
 * bench_common: the code bench/ack-latency.c and bench/windows.c share.
 * Control agents on private FIFO pairs (start, commands and replies, stop,
 * and their cleanup however the program ends), their CPU time from
 * schedstat, alternating measured blocks, percentiles, and the options both
 * take.  See bench_common.h; the wrappers bench/ack-latency and
 * bench/windows compile it with each program.
 */
#define _GNU_SOURCE
#include "bench_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Everything the cleanup must undo, reachable from a signal handler. */
static struct bench_agent *registered[BENCH_MAX_AGENTS];
static int nregistered;
static char workdir[PATH_MAX];

void bench_cleanup_files(void)
{
	for (int i = 0; i < nregistered; i++) {
		unlink(registered[i]->ctl_path);
		unlink(registered[i]->ack_path);
		unlink(registered[i]->log_path);
	}
	if (workdir[0])
		rmdir(workdir);
}

/* Async-signal-safe: kill, waitpid and unlink only.  The agents live in
 * their own process groups (so a Ctrl-C on the terminal does not stop them
 * halfway through a measurement), which means we must take them down
 * ourselves, and reap them: this machine's init does not. */
static void cleanup_hard(void)
{
	for (int i = 0; i < nregistered; i++) {
		pid_t group = registered[i]->pid;

		if (group <= 0)
			continue;
		kill(-group, SIGKILL);
		while (waitpid(-group, NULL, 0) > 0)
			;
		registered[i]->pid = 0;
	}
	bench_cleanup_files();
}

static void on_signal(int sig)
{
	cleanup_hard();
	_exit(128 + sig);
}

void bench_install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* An agent that dies must show up as EPIPE on our write, with its
	 * log, not as a silent death of the benchmark. */
	signal(SIGPIPE, SIG_IGN);
}

/* "NAME: AGENT: message" on stderr; without AGENT, "NAME: message". */
static void say(const char *agent, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", bench_name);
	if (agent)
		fprintf(stderr, "%s: ", agent);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(NULL, fmt, ap);
	va_end(ap);
	cleanup_hard();
	exit(1);
}

/* What the agent said before it failed: usually the real reason.  Start-up
 * errors come first, so the first lines are the useful ones. */
static void show_log(const struct bench_agent *a)
{
	FILE *log = fopen(a->log_path, "r");
	char line[512];

	for (int i = 0; log && i < 20 && fgets(line, sizeof(line), log); i++) {
		if (i == 0)
			fprintf(stderr, "--- %s's stderr ---\n", a->name);
		fputs(line, stderr);
	}
	if (log)
		fclose(log);
}

void bench_die_agent(struct bench_agent *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(a->name, fmt, ap);
	va_end(ap);
	show_log(a);
	bench_die("giving up");
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * CPU time of a process in ns: the sum of its threads' schedstat run times.
 * schedstat counts in ns, where /proc/PID/stat counts in clock ticks (10 ms
 * here, far coarser than one command); /proc/PID/schedstat alone would miss
 * any thread but the main one.
 */
uint64_t process_cpu_ns(pid_t pid)
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
		bench_die("cannot read %s: %s", path, strerror(errno));
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

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* This client where the mode puts it; SAVED gets the CPUs to go back to. */
void bench_pin_client(const struct bench_sched *m, cpu_set_t *saved)
{
	sched_getaffinity(0, sizeof(*saved), saved);
	if (m->client_cpu >= 0 && pin_to_cpu(m->client_cpu) < 0)
		bench_die("cannot pin to CPU %d: %s", m->client_cpu,
			  strerror(errno));
}

/* Private FIFOs in a fresh directory: nobody else can write commands to
 * our agents or read their acks. */
void bench_make_workdir(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(workdir, sizeof(workdir), "%s/%s.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp", bench_name);
	if (!mkdtemp(workdir)) {
		workdir[0] = '\0';
		bench_die("mkdtemp: %s", strerror(errno));
	}
}

/* PATH = workdir/FILE.SUFFIX; PATH has room for PATH_MAX bytes. */
static void work_path(char *path, const char *file, const char *suffix)
{
	if (snprintf(path, PATH_MAX, "%s/%s.%s", workdir, file, suffix) >=
	    PATH_MAX)
		bench_die("TMPDIR path too long: %s", workdir);
}

/* The agent's FIFOs and log in the workdir, named FILE.ctl, .ack, .log, and
 * room for N measured times.  The caller fills in argv. */
void bench_agent_init(struct bench_agent *a, const char *name,
		      const char *file, const char *unit, long n)
{
	if (nregistered == BENCH_MAX_AGENTS)
		bench_die("more than %d agents", BENCH_MAX_AGENTS);
	registered[nregistered++] = a;	/* first: cleanup sees what is made */
	a->name = name;
	a->unit = unit;
	a->ctl_fd = a->ack_fd = -1;
	work_path(a->ctl_path, file, "ctl");
	work_path(a->ack_path, file, "ack");
	work_path(a->log_path, file, "log");
	if (mkfifo(a->ctl_path, 0600) < 0 || mkfifo(a->ack_path, 0600) < 0)
		bench_die("mkfifo in %s: %s", workdir, strerror(errno));
	snprintf(a->control, sizeof(a->control), "fifo:%s,%s", a->ctl_path,
		 a->ack_path);
	a->ns = calloc((size_t)n, sizeof(a->ns[0]));
	if (!a->ns)
		bench_die("out of memory");
}

/*
 * The floor: the least any agent can do per command, which is to wait for
 * the ctl FIFO, read it and write the ack.  Measured next to the real agents
 * it shows how much of their cost is the round trip itself (two wake-ups,
 * four syscalls), which no agent can save.  Runs in a forked child.
 */
static void floor_agent(const struct bench_agent *a)
{
	struct pollfd pfd;
	char buf[4096];
	ssize_t got;
	int ack;

	/* O_RDWR: our own write end keeps the FIFO open between writers. */
	pfd.fd = open(a->ctl_path, O_RDWR);
	ack = open(a->ack_path, O_WRONLY);
	if (pfd.fd < 0 || ack < 0)
		_exit(127);
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, -1) < 0)
			continue;
		got = read(pfd.fd, buf, sizeof(buf));
		/* Bare commands (no terminator) end where the read ends. */
		if (a->floor_bare && got > 0 &&
		    write(ack, "ack\n", a->floor_ack_len) != (ssize_t)a->floor_ack_len)
			_exit(1);
		for (ssize_t i = 0; !a->floor_bare && i < got; i++)
			if (buf[i] == '\n' &&
			    write(ack, "ack\n", a->floor_ack_len) !=
				    (ssize_t)a->floor_ack_len)
				_exit(1);
	}
}

/* The child side of bench_agent_start: its own process group, default signal
 * dispositions (we ignore SIGPIPE, and exec would pass that on), stderr to
 * a log we can show on failure. */
static void agent_child_setup(const struct bench_agent *a, int pin_cpu)
{
	int fd;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	fd = open(a->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	if (pin_cpu >= 0 && pin_to_cpu(pin_cpu) < 0) {
		fprintf(stderr, "cannot pin to CPU %d: %s\n", pin_cpu,
			strerror(errno));
		_exit(127);
	}
}

static void agent_exec(const struct bench_agent *a, int pin_cpu)
{
	agent_child_setup(a, pin_cpu);
	if (!a->argv[0])
		floor_agent(a);
	execvp(a->argv[0], (char **)a->argv);
	fprintf(stderr, "cannot run %s: %s\n", a->argv[0], strerror(errno));
	_exit(127);
}

static bool agent_exited(struct bench_agent *a)
{
	if (a->pid <= 0 || waitpid(a->pid, NULL, WNOHANG) != a->pid)
		return false;
	a->pid = 0;
	return true;
}

/*
 * Open CTL for writing once the agent has opened it for reading.  A
 * non-blocking open fails with ENXIO until then; blocking instead would hang
 * forever on an agent that died during start-up.
 */
static void agent_open_ctl(struct bench_agent *a)
{
	uint64_t deadline = now_ns() + STARTUP_TIMEOUT_MS * 1000000ull;
	int fd;

	for (;;) {
		fd = open(a->ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno != ENXIO)
			bench_die("open %s: %s", a->ctl_path, strerror(errno));
		if (agent_exited(a))
			bench_die_agent(a, "exited during start-up");
		if (now_ns() > deadline)
			bench_die_agent(a, "did not open its ctl FIFO within %d ms",
					STARTUP_TIMEOUT_MS);
		usleep(1000);
	}
	/* Our writes are a few bytes: blocking writes never wait, and a
	 * plain write is the same single syscall for every agent. */
	fcntl(fd, F_SETFL, 0);
	a->ctl_fd = fd;
}

/* Start the agent, pinned to PIN_CPU unless it is -1, with nothing sent,
 * read or measured yet; return once it reads its ctl FIFO. */
void bench_agent_start(struct bench_agent *a, int pin_cpu)
{
	pid_t pid;

	/* Open our read end first and without blocking: the agent opens ACK
	 * for writing during start-up and would otherwise wait for us. */
	a->ack_fd = open(a->ack_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (a->ack_fd < 0)
		bench_die("open %s: %s", a->ack_path, strerror(errno));
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0)
		agent_exec(a, pin_cpu);
	setpgid(pid, pid);	/* here too: no race with an early kill */
	a->pid = pid;
	a->reply_len = 0;
	a->count = 0;
	a->nns = 0;
	a->cpu_ns = 0;
	agent_open_ctl(a);
}

/*
 * Stop an agent the way a terminal's Ctrl-C does: SIGINT to its whole process
 * group.  perf 6.1 ignores "stop" and, while its workload runs, only notes
 * a SIGINT sent to itself; the workload dying is what ends it.
 */
void bench_agent_stop(struct bench_agent *a)
{
	uint64_t deadline = now_ns() + 5000000000ull;
	pid_t group = a->pid;

	if (a->ctl_fd >= 0)
		close(a->ctl_fd);
	if (a->ack_fd >= 0)
		close(a->ack_fd);
	a->ctl_fd = a->ack_fd = -1;
	kill(-group, SIGINT);
	while (!agent_exited(a) && now_ns() < deadline)
		usleep(10000);
	if (a->pid)
		fprintf(stderr, "%s: %s ignored SIGINT for 5 s, killing it\n",
			bench_name, a->name);
	/* Also, perf may exit before its workload is gone: end what is left
	 * of the group, and reap what is ours (a subreaper inherits it all),
	 * rather than leave zombies to an init that may not reap them. */
	kill(-group, SIGKILL);
	while (waitpid(-group, NULL, 0) > 0)
		;
	a->pid = 0;
}

void bench_send(struct bench_agent *a, const char *cmd)
{
	size_t len = strlen(cmd);

	if (write(a->ctl_fd, cmd, len) != (ssize_t)len)
		bench_die_agent(a, "write to ctl FIFO: %s", strerror(errno));
}

/*
 * Take one complete reply line out of a->reply, if there is one.  A NUL at
 * the start of a line is skipped: it is the tail of perf's previous
 * "ack\n\0", which may arrive with that ack or on its own read.
 */
static bool reply_take_line(struct bench_agent *a, char *line, size_t size)
{
	size_t start = 0, end;
	char *nl;

	while (start < a->reply_len && a->reply[start] == '\0')
		start++;
	nl = memchr(a->reply + start, '\n', a->reply_len - start);
	if (!nl) {
		memmove(a->reply, a->reply + start, a->reply_len - start);
		a->reply_len -= start;
		return false;
	}
	end = (size_t)(nl - a->reply);
	snprintf(line, size, "%.*s", (int)(end - start), a->reply + start);
	a->reply_len -= end + 1;
	memmove(a->reply, nl + 1, a->reply_len);
	return true;
}

/* Read until one reply line is complete, however the bytes are split. */
void bench_reply_read(struct bench_agent *a, char *line, size_t size,
		      int timeout_ms)
{
	struct pollfd pfd = { .fd = a->ack_fd, .events = POLLIN };
	ssize_t got;
	int ready;

	while (!reply_take_line(a, line, size)) {
		if (a->reply_len == sizeof(a->reply))
			bench_die_agent(a, "reply longer than %d bytes",
					BENCH_REPLY_MAX);
		/* poll first, even though a blocking read would do: an agent
		 * that never answers (perf ignores some commands) must not
		 * hang us.  The extra syscall is the same for every agent. */
		ready = poll(&pfd, 1, timeout_ms);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			bench_die("poll: %s", strerror(errno));
		if (ready == 0)
			bench_die_agent(a, "no reply within %d ms (%s %lu)",
					timeout_ms, a->unit, a->count);
		got = read(a->ack_fd, a->reply + a->reply_len,
			   sizeof(a->reply) - a->reply_len);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got < 0)
			bench_die("read %s: %s", a->ack_path, strerror(errno));
		if (got == 0)
			bench_die_agent(a, "closed its ack FIFO (%s %lu)", a->unit,
					a->count);
		a->reply_len += (size_t)got;
	}
}

/* LINE, the reply to CMD (newline included), must be a plain "ack". */
void bench_expect_ack(struct bench_agent *a, const char *line, const char *cmd)
{
	if (strcmp(line, "ack") != 0)
		bench_die_agent(a, "replied \"%.200s\" to %.*s", line,
				(int)strcspn(cmd, "\n"), cmd);
}

/*
 * N measured units per agent, in blocks of BLOCK: MEASURE(i, count, CTX)
 * measures COUNT of agent i.  The agents alternate, their order reversed
 * every round (ABBA), so none always runs right after another.
 */
void bench_alternate(long n, long block, int nagents,
		     void (*measure)(int i, long count, void *ctx), void *ctx)
{
	for (long done = 0, round = 0; done < n; done += block, round++) {
		long count = n - done < block ? n - done : block;

		for (int k = 0; k < nagents; k++)
			measure(round % 2 ? nagents - 1 - k : k, count, ctx);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array, in µs: no interpolation, so
 * it is always a time that really happened. */
static double percentile_us(const uint64_t *sorted, size_t n, unsigned pct)
{
	size_t rank = (pct * n + 99) / 100;

	return (double)sorted[rank > 0 ? rank - 1 : 0] / 1000.0;
}

/* Sorts a->ns. */
struct bench_result bench_agent_result(struct bench_agent *a)
{
	struct bench_result r;

	qsort(a->ns, a->nns, sizeof(a->ns[0]), cmp_u64);
	r.median_us = percentile_us(a->ns, a->nns, 50);
	r.p99_us = percentile_us(a->ns, a->nns, 99);
	r.cpu_us = (double)a->cpu_ns / 1000.0 / (double)a->nns;
	return r;
}

/* a/b in a column of WIDTH, or "-" where it means nothing (no cost above
 * the floor). */
void bench_print_quotient(int width, double a, double b)
{
	if (b > 0 && a >= 0)
		printf(" %*.2fx", width - 1, a / b);
	else
		printf(" %*s", width, "-");
}

void bench_print_machine(void)
{
	struct utsname u;

	uname(&u);
	printf("%s: Linux %s, %ld CPUs online\n", bench_name, u.release,
	       sysconf(_SC_NPROCESSORS_ONLN));
}

long bench_parse_count(const char *arg, const char *what, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < min)
		bench_die("bad %s: '%s' (an integer >= %ld)", what, arg, min);
	return v;
}

/* One --sched word into M; false if it is none of the modes. */
static bool parse_sched_word(const char *w, int cpu, struct bench_sched *m)
{
	int next_cpu = (int)((cpu + 1) % sysconf(_SC_NPROCESSORS_ONLN));

	if (!strcmp(w, "default")) {
		*m = (struct bench_sched){ "default", -1, -1 };
	} else if (!strcmp(w, "pinned")) {
		*m = (struct bench_sched){ "", cpu, cpu };
		snprintf(m->label, sizeof(m->label), "pinned (cpu %d)", cpu);
	} else if (!strcmp(w, "split")) {
		*m = (struct bench_sched){ "", cpu, next_cpu };
		snprintf(m->label, sizeof(m->label), "split (cpu %d/%d)", cpu,
			 next_cpu);
	} else {
		return false;
	}
	return true;
}

/* --sched LIST into MODES, at most MAX of them; returns how many.  CPU is
 * -c's: parse it first. */
int bench_parse_sched(const char *list, int cpu, struct bench_sched *modes,
		      int max)
{
	char *copy = strdup(list), *save = NULL;
	int n = 0;

	for (char *w = strtok_r(copy, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		if (n == max)
			bench_die("--sched: at most %d modes", max);
		if (!parse_sched_word(w, cpu, &modes[n]))
			bench_die("bad --sched mode '%s': default, pinned or "
				  "split", w);
		n++;
	}
	free(copy);
	if (n == 0)
		bench_die("--sched: no mode given");
	return n;
}
