/*
 * nonblock_poll: a benchmark runner that starts the tool itself and drives
 * its control FIFOs from outside the workload, in the style of runners
 * built on non-blocking pipes (an async runtime's FIFO sender and
 * receiver): FIFOs made 0700, both opened O_RDWR | O_NONBLOCK, commands
 * written as "enable\n\0" (sizeof("enable\n")), each ack awaited with
 * poll() and a one-second timeout, and gathered until exactly five bytes,
 * "ack\n\0", have come.  A final `ping` checks that the ack channel carries
 * nothing but replies to commands.
 *
 *   nonblock_poll DIR K MARKER -- TOOL [ARG...]
 *
 * runs TOOL ARG... -D -1 -x, -o DIR/stat -e syscalls:sys_enter_getppid
 * --control fifo:DIR/ctl,DIR/ack -- MARKER ..., whose workload makes 3
 * getppid() calls, notifies DIR/done, waits for DIR/go, makes K calls,
 * notifies DIR/done, waits for DIR/go again and makes 2 more.  The runner
 * opens the window between the first notice and release, and closes it
 * (then pings) between the second, so DIR/stat must count K.  After the
 * tool has exited, nothing may be left on the ack FIFO (EAGAIN).
 */
#include "compat.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *me = "nonblock_poll";

static int make_fifo(const char *dir, const char *name, char *path, size_t size)
{
	int fd;

	if ((size_t)snprintf(path, size, "%s/%s", dir, name) >= size)
		compat_die(me, "path too long: %s/%s", dir, name);
	if (mkfifo(path, S_IRWXU) < 0)
		compat_die(me, "mkfifo %s: %s", path, strerror(errno));
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		compat_die(me, "open %s: %s", path, strerror(errno));
	return fd;
}

/* Wait up to MS milliseconds for FD to be readable; false on a timeout. */
static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		compat_die(me, "poll: %s", strerror(errno));
	return n > 0;
}

static void command(int ctl, int ack, const char *cmd, size_t len)
{
	char reply[COMPAT_ACK_LEN];
	struct compat_esc e1, e2;
	size_t got = 0;

	if (write(ctl, cmd, len) != (ssize_t)len)
		compat_die(me, "write '%s': %s", compat_escape(&e1, cmd, len), strerror(errno));
	while (got < sizeof(reply)) {
		ssize_t n;

		if (!readable(ack, 1000))
			compat_die(me, "'%s': no ack within 1 s (%zu bytes so far)",
				   compat_escape(&e1, cmd, len), got);
		n = read(ack, reply + got, sizeof(reply) - got);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			compat_die(me, "read ack: %s", n ? strerror(errno) : "end of file");
		got += (size_t)n;
	}
	if (memcmp(reply, COMPAT_ACK, sizeof(reply)) != 0)
		compat_die(me, "reply to '%s': '%s', want 'ack\\n\\0'",
			   compat_escape(&e1, cmd, len), compat_escape(&e2, reply, sizeof(reply)));
}

/* The workload's steps take as long as the machine lets them: no 1 s here. */
static void wait_line(int fd, const char *path)
{
	char line[16];

	if (!readable(fd, 30000))
		compat_die(me, "the workload did not notify %s within 30 s", path);
	if (read(fd, line, sizeof(line)) <= 0)
		compat_die(me, "read %s: %s", path, strerror(errno));
}

static void release(int fd, const char *path)
{
	if (write(fd, "go\n", 3) != 3)
		compat_die(me, "write %s: %s", path, strerror(errno));
}

int main(int argc, char **argv)
{
	static const char enable[] = "enable\n", disable[] = "disable\n", ping[] = "ping\n";
	char ctl_path[4096], ack_path[4096], go_path[4096], done_path[4096];
	char stat_path[4096], control[8300];
	const char *dir, *marker, *k;
	int ctl, ack, go, done, status, ntool;
	pid_t pid;

	compat_lifetime();
	if (argc < 6 || strcmp(argv[4], "--"))
		compat_die(me, "usage: nonblock_poll DIR K MARKER -- TOOL [ARG...]");
	dir = argv[1];
	k = argv[2];
	compat_count(me, k);
	marker = argv[3];
	ntool = argc - 5;

	ctl = make_fifo(dir, "ctl", ctl_path, sizeof(ctl_path));
	ack = make_fifo(dir, "ack", ack_path, sizeof(ack_path));
	go = make_fifo(dir, "go", go_path, sizeof(go_path));
	done = make_fifo(dir, "done", done_path, sizeof(done_path));
	snprintf(stat_path, sizeof(stat_path), "%s/stat", dir);
	snprintf(control, sizeof(control), "fifo:%s,%s", ctl_path, ack_path);

	pid = fork();
	if (pid < 0)
		compat_die(me, "fork: %s", strerror(errno));
	if (pid > 0)
		compat_child = pid;
	if (pid == 0) {
		const char *tail[] = {
			"-D", "-1", "-x,", "-o", stat_path, "-e", "syscalls:sys_enter_getppid",
			"--control", control, "--", marker, "getppid", "3", "notify", done_path,
			"wait", go_path, "getppid", k, "notify", done_path, "wait", go_path,
			"getppid", "2", NULL
		};
		size_t ntail = sizeof(tail) / sizeof(tail[0]);
		char **av = calloc((size_t)ntool + ntail, sizeof(*av));

		if (!av)
			compat_die(me, "out of memory");
		for (int i = 0; i < ntool; i++)
			av[i] = argv[5 + i];
		for (size_t i = 0; i < ntail; i++)
			av[(size_t)ntool + i] = (char *)tail[i];
		execvp(av[0], av);
		compat_die(me, "exec %s: %s", av[0], strerror(errno));
	}

	wait_line(done, done_path);
	command(ctl, ack, enable, sizeof(enable));
	release(go, go_path);
	wait_line(done, done_path);
	command(ctl, ack, disable, sizeof(disable));
	command(ctl, ack, ping, sizeof(ping));
	release(go, go_path);

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			compat_die(me, "waitpid: %s", strerror(errno));
	compat_child = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		compat_die(me, "the tool failed (wait status 0x%x)", status);

	/* The tool is gone, so whatever it wrote is in the FIFO by now. */
	{
		char rest[256];
		struct compat_esc e2;
		ssize_t n = read(ack, rest, sizeof(rest));

		if (n > 0)
			compat_die(me, "%zd stray bytes on the ack FIFO: '%s'", n,
				   compat_escape(&e2, rest, (size_t)n));
		if (n == 0 || errno != EAGAIN)
			compat_die(me, "final read of the ack FIFO: %s",
				   n ? strerror(errno) : "end of file");
	}
	compat_exit(0);
}
