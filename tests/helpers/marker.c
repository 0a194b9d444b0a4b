/*
 * marker: a deterministic workload for perfgate's end-to-end tests.
 *
 * Its command line is a little script of steps, run in order, e.g.
 *
 *   marker getppid 3 ctl CTL ACK enable getppid 5 ctl CTL ACK disable \
 *          getppid 7 exit 3
 *
 * makes 3 getppid() calls outside any window, opens the agent's default
 * window itself, makes 5 calls inside it, closes it, makes 7 more and exits
 * with status 3.  Because the workload drives its own window and the agent
 * reads its counters before it acks, the inside count is exact (5) without
 * any sleep.  Syscalls are made with syscall(2) so libc cannot cache or
 * elide them.
 *
 * Steps:
 *   getppid N            N raw getppid() syscalls (the usual marker event)
 *   getpgid N            N raw getpgid(0) syscalls (a second, distinct event)
 *   write N              N one-byte write()s to /dev/null
 *   write2 N             N two-byte write()s to /dev/null (for --filter)
 *   fork N               a child makes N getppid() calls; the parent waits
 *   threads N1 N2        start threads "mk-thr1" and "mk-thr2", held until
 *                        "join": then they make N1 and N2 one-byte write()s
 *   join                 release those threads and wait for them to end
 *   ctl CTL ACK CMD      send "CMD\n" on FIFO CTL, read one reply line from
 *                        FIFO ACK, print it (leading NUL skipped) on stdout;
 *                        CMD is one argument: quote it if it has spaces
 *   fd CFD AFD CMD       the same over inherited file descriptors CFD, AFD
 *   wait FIFO            block until a line can be read from FIFO
 *   notify FIFO          write one line ("go\n") to FIFO
 *   sleep MS             sleep MS milliseconds (never used to synchronise)
 *   spin MS              getppid() calls for MS milliseconds: busy throughout
 *   pid FILE             write our pid to FILE (atomically, via rename)
 *   say TEXT             print TEXT and a newline on stdout
 *   exit N               exit now with status N
 *   kill SIG             raise signal SIG (a number) with its default action
 *
 * FIFOs are opened once, on first use, and kept open for the whole run, so a
 * reply's trailing NUL (perf's "ack\n\0" framing) is simply skipped at the
 * start of the next reply.  Any error is reported on stderr and ends the run
 * with status 100, which no test uses as a workload status.  No marker lives
 * longer than two minutes (SIGALRM), whatever happens to the agent.
 *
 * The marker always ends through _exit(), after flushing stdout: a build
 * with -fsanitize=address runs LeakSanitizer's check from exit(), and that
 * check makes getppid() calls of its own, which would spoil whole-run counts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MARKER_FAIL 100
#define MARKER_LIFETIME_S 120

/* Flush stdout and end now, without atexit handlers (see above). */
__attribute__((noreturn)) static void marker_exit(int status)
{
	fflush(stdout);
	_exit(status);
}

__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("marker: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	marker_exit(MARKER_FAIL);
}

static long parse_num(const char *s, const char *step)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		die("%s: bad number '%s'", step, s);
	return v;
}

/* ---- FIFOs, opened once by path and kept open ---------------------------- */

#define MAX_FIFOS 16

static struct {
	char *path;
	int fd;
} fifos[MAX_FIFOS];

/*
 * Open FIFO PATH (O_RDWR, so the open never blocks and a reader never sees
 * end-of-file while we hold it) or return the fd opened before.
 */
static int fifo_fd(const char *path)
{
	int i;

	for (i = 0; i < MAX_FIFOS && fifos[i].path; i++)
		if (!strcmp(fifos[i].path, path))
			return fifos[i].fd;
	if (i == MAX_FIFOS)
		die("too many FIFOs");
	fifos[i].fd = open(path, O_RDWR | O_CLOEXEC);
	if (fifos[i].fd < 0)
		die("open %s: %s", path, strerror(errno));
	fifos[i].path = strdup(path);
	return fifos[i].fd;
}

static void write_all(int fd, const char *buf, size_t len, const char *what)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("write %s: %s", what, strerror(errno));
		buf += n;
		len -= (size_t)n;
	}
}

/*
 * Read one line from fd, one byte at a time so that nothing after the '\n'
 * is consumed (the fd may be shared with the test script).  NULs before the
 * first real byte are skipped: they end the previous reply.
 */
static void read_line(int fd, char *buf, size_t cap, const char *what)
{
	size_t len = 0;

	for (;;) {
		char c;
		ssize_t n = read(fd, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("read %s: %s", what, strerror(errno));
		if (n == 0)
			die("read %s: end of file", what);
		if (c == '\0' && len == 0)
			continue;
		if (c == '\n')
			break;
		if (len + 1 < cap)
			buf[len++] = c;
	}
	buf[len] = '\0';
}

/* Send "cmd\n" on ctl_fd, read one reply from ack_fd and print it. */
static void send_command(int ctl_fd, int ack_fd, const char *cmd)
{
	char reply[8192];
	size_t len = strlen(cmd);
	char *line = malloc(len + 2);

	/* One write: a command the agent sees without its newline for a
	 * moment (the marker preempted between two writes) is run on its
	 * own, as perf runs it, and the newline's write would then land
	 * inside the window it opened. */
	if (!line)
		die("out of memory");
	memcpy(line, cmd, len);
	line[len] = '\n';
	write_all(ctl_fd, line, len + 1, "control fd");
	free(line);
	read_line(ack_fd, reply, sizeof(reply), "ack fd");
	printf("%s\n", reply);
	fflush(stdout);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void write_pid(const char *path)
{
	char tmp[4096], buf[32];
	int fd, n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("open %s: %s", tmp, strerror(errno));
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	write_all(fd, buf, (size_t)n, tmp);
	close(fd);
	if (rename(tmp, path) < 0)
		die("rename %s: %s", tmp, strerror(errno));
}

/* ---- threads: two writers held at a barrier until "join" ---------------- */

static struct {
	pthread_t id;
	long writes;
	bool started;
} writers[2];
static pthread_barrier_t writers_go;
static int writers_fd = -1;

static void *writer_main(void *arg)
{
	long n = *(long *)arg;

	pthread_barrier_wait(&writers_go);
	while (n-- > 0)
		if (write(writers_fd, "x", 1) != 1)
			die("write /dev/null: %s", strerror(errno));
	return NULL;
}

static void threads_start(long n1, long n2, int devnull)
{
	writers_fd = devnull;
	pthread_barrier_init(&writers_go, NULL, 3);
	writers[0].writes = n1;
	writers[1].writes = n2;
	for (int t = 0; t < 2; t++) {
		if (pthread_create(&writers[t].id, NULL, writer_main, &writers[t].writes))
			die("threads: cannot create a thread");
		pthread_setname_np(writers[t].id, t ? "mk-thr2" : "mk-thr1");
		writers[t].started = true;
	}
}

static void threads_join(void)
{
	if (!writers[0].started)
		die("join: no threads started");
	pthread_barrier_wait(&writers_go);
	for (int t = 0; t < 2; t++)
		pthread_join(writers[t].id, NULL);
}

static void getppid_n(long n)
{
	while (n-- > 0)
		syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int i = 1;

	if (devnull < 0)
		die("open /dev/null: %s", strerror(errno));
	/*
	 * A safety net, not a timer the tests rely on: a marker left blocked
	 * by a broken agent (waiting for a reply that never comes) ends by
	 * SIGALRM instead of lingering after the test suite.
	 */
	alarm(MARKER_LIFETIME_S);
	/*
	 * A reader that went away makes write() fail with EPIPE, reported by
	 * die(), rather than a silent death by SIGPIPE.
	 */
	signal(SIGPIPE, SIG_IGN);

	while (i < argc) {
		const char *step = argv[i++];
		/* Steps taking one argument find it at argv[i]. */
		const char *arg = i < argc ? argv[i] : NULL;

		if (!strcmp(step, "ctl") || !strcmp(step, "fd")) {
			int ctl_fd, ack_fd;

			if (i + 3 > argc)
				die("%s: needs CTL ACK CMD", step);
			if (!strcmp(step, "ctl")) {
				ctl_fd = fifo_fd(argv[i]);
				ack_fd = fifo_fd(argv[i + 1]);
			} else {
				ctl_fd = (int)parse_num(argv[i], step);
				ack_fd = (int)parse_num(argv[i + 1], step);
			}
			send_command(ctl_fd, ack_fd, argv[i + 2]);
			i += 3;
			continue;
		}
		if (!strcmp(step, "join")) {
			threads_join();
			continue;
		}
		if (!strcmp(step, "threads")) {
			if (i + 2 > argc)
				die("threads: needs N1 N2");
			threads_start(parse_num(argv[i], step), parse_num(argv[i + 1], step), devnull);
			i += 2;
			continue;
		}
		if (!arg)
			die("%s: missing argument", step);
		i++;
		if (!strcmp(step, "getppid")) {
			getppid_n(parse_num(arg, step));
		} else if (!strcmp(step, "getpgid")) {
			for (long n = parse_num(arg, step); n > 0; n--)
				syscall(SYS_getpgid, 0);
		} else if (!strcmp(step, "write") || !strcmp(step, "write2")) {
			size_t sz = step[5] == '2' ? 2 : 1;

			for (long n = parse_num(arg, step); n > 0; n--)
				if (write(devnull, "xx", sz) != (ssize_t)sz)
					die("write /dev/null: %s", strerror(errno));
		} else if (!strcmp(step, "fork")) {
			long n = parse_num(arg, step);
			int status;
			pid_t pid;

			fflush(stdout);
			pid = fork();
			if (pid < 0)
				die("fork: %s", strerror(errno));
			if (pid == 0) {
				getppid_n(n);
				_exit(0);
			}
			if (waitpid(pid, &status, 0) < 0 || status != 0)
				die("fork: child failed");
		} else if (!strcmp(step, "wait")) {
			char line[256];

			read_line(fifo_fd(arg), line, sizeof(line), arg);
		} else if (!strcmp(step, "notify")) {
			write_all(fifo_fd(arg), "go\n", 3, arg);
		} else if (!strcmp(step, "spin")) {
			struct timespec start, now;
			long ms = parse_num(arg, step);

			clock_gettime(CLOCK_MONOTONIC, &start);
			do {
				getppid_n(100);
				clock_gettime(CLOCK_MONOTONIC, &now);
			} while ((now.tv_sec - start.tv_sec) * 1000 +
				 (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
		} else if (!strcmp(step, "sleep")) {
			sleep_ms(parse_num(arg, step));
		} else if (!strcmp(step, "pid")) {
			write_pid(arg);
		} else if (!strcmp(step, "say")) {
			printf("%s\n", arg);
			fflush(stdout);
		} else if (!strcmp(step, "exit")) {
			marker_exit((int)parse_num(arg, step));
		} else if (!strcmp(step, "kill")) {
			int sig = (int)parse_num(arg, step);

			fflush(stdout);
			signal(sig, SIG_DFL);
			raise(sig);
			die("kill: still alive after signal %d", sig);
		} else {
			die("unknown step '%s'", step);
		}
	}
	marker_exit(0);
}
