/*
 * fd_env: a benchmark that drives perf's control channel over file
 * descriptors it inherits, named by environment variables, in the style of
 * harnesses launched as
 *
 *   exec {ctl}<>ctl.fifo; exec {ack}<>ack.fifo
 *   PERF_CTL_FD=$ctl PERF_CTL_ACK_FD=$ack perf stat --delay=-1 \
 *       --control fd:$ctl,$ack -- ./bench
 *
 * The tool and the benchmark share the two descriptors: the tool must leave
 * them open across its exec of the workload, as perf does.
 *
 *   fd_env K
 *
 * Commands are "enable\n" and "disable\n", written whole; each ack is read
 * until exactly five bytes have come (short reads are resumed) and must be
 * "ack\n\0".  3 getppid() calls come before `enable`, K inside, 2 after
 * `disable`.
 */
#include "compat.h"

static const char *me = "fd_env";

static int fd_env(const char *var)
{
	const char *s = getenv(var);

	if (!s || !*s)
		compat_die(me, "$%s is not set", var);
	return (int)compat_count(me, s);
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			compat_die(me, "write to fd %d: %s", fd, strerror(errno));
		buf += n;
		len -= (size_t)n;
	}
}

static void read_exact(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			compat_die(me, "read from fd %d: %s", fd, strerror(errno));
		if (n == 0)
			compat_die(me, "fd %d: end of file after %zu bytes", fd, got);
		got += (size_t)n;
	}
}

static void command(int ctl, int ack, const char *cmd)
{
	char reply[COMPAT_ACK_LEN];
	struct compat_esc e1, e2;

	write_all(ctl, cmd, strlen(cmd));
	read_exact(ack, reply, sizeof(reply));
	if (memcmp(reply, COMPAT_ACK, sizeof(reply)) != 0)
		compat_die(me, "reply to '%s': '%s', want 'ack\\n\\0'",
			   compat_escape(&e1, cmd, strlen(cmd)), compat_escape(&e2, reply, sizeof(reply)));
}

int main(int argc, char **argv)
{
	int ctl, ack;
	long k;

	compat_lifetime();
	if (argc != 2)
		compat_die(me, "usage: fd_env K");
	k = compat_count(me, argv[1]);
	ctl = fd_env("PERF_CTL_FD");
	ack = fd_env("PERF_CTL_ACK_FD");

	compat_getppid_n(3);
	command(ctl, ack, "enable\n");
	compat_getppid_n(k);
	command(ctl, ack, "disable\n");
	compat_getppid_n(2);
	compat_exit(0);
}
