/*
 * nul_rdwr: a benchmark that opens and closes its own counting window, in
 * the style of C++ harnesses that find perf's FIFOs through environment
 * variables, open them O_RDWR, write a command as a C string with its NUL
 * (`write(fd, cmd, sizeof(cmd))`) and read the ack with one read() of
 * exactly five bytes, compared with "ack\n" as a C string.
 *
 *   nul_rdwr nul|nlnul K
 *
 * nul writes "enable\0" (sizeof("enable")), nlnul writes "enable\n\0"
 * (sizeof("enable\n")).  The FIFOs are $COMPAT_CTL_FIFO and
 * $COMPAT_ACK_FIFO.  It makes 3 getppid() calls before `enable`, K inside
 * the window and 2 after `disable`, so only a tool that counts exactly the
 * window reports K.  Any short read or reply other than "ack\n\0" fails.
 */
#include "compat.h"

#include <fcntl.h>

static const char *me = "nul_rdwr";

static int open_env(const char *var)
{
	const char *path = getenv(var);
	int fd;

	if (!path || !*path)
		compat_die(me, "$%s is not set", var);
	/* O_RDWR: the open never waits for the other end. */
	fd = open(path, O_RDWR);
	if (fd < 0)
		compat_die(me, "open %s: %s", path, strerror(errno));
	return fd;
}

static void command(int ctl, int ack, const char *cmd, size_t len)
{
	char reply[COMPAT_ACK_LEN];
	struct compat_esc e2;
	ssize_t n;

	n = write(ctl, cmd, len);
	if (n != (ssize_t)len)
		compat_die(me, "'%s': wrote %zd of %zu bytes", cmd, n, len);
	/* One read of exactly the ack's size, as these harnesses do. */
	n = read(ack, reply, sizeof(reply));
	if (n != (ssize_t)sizeof(reply))
		compat_die(me, "'%s': read %zd bytes of the ack, want %zu%s%s", cmd, n,
			   sizeof(reply), n > 0 ? ": " : "",
			   n > 0 ? compat_escape(&e2, reply, (size_t)n) : "");
	if (strcmp(reply, COMPAT_ACK) != 0 || reply[sizeof(reply) - 1] != '\0')
		compat_die(me, "'%s': reply '%s', want 'ack\\n\\0'", cmd,
			   compat_escape(&e2, reply, sizeof(reply)));
}

int main(int argc, char **argv)
{
	static const char enable_nul[] = "enable", disable_nul[] = "disable";
	static const char enable_nlnul[] = "enable\n", disable_nlnul[] = "disable\n";
	int nlnul, ctl, ack;
	long k;

	compat_lifetime();
	if (argc != 3 || (strcmp(argv[1], "nul") && strcmp(argv[1], "nlnul")))
		compat_die(me, "usage: nul_rdwr nul|nlnul K");
	nlnul = !strcmp(argv[1], "nlnul");
	k = compat_count(me, argv[2]);
	ctl = open_env("COMPAT_CTL_FIFO");
	ack = open_env("COMPAT_ACK_FIFO");

	compat_getppid_n(3);
	if (nlnul)
		command(ctl, ack, enable_nlnul, sizeof(enable_nlnul));
	else
		command(ctl, ack, enable_nul, sizeof(enable_nul));
	compat_getppid_n(k);
	if (nlnul)
		command(ctl, ack, disable_nlnul, sizeof(disable_nlnul));
	else
		command(ctl, ack, disable_nul, sizeof(disable_nul));
	compat_getppid_n(2);
	compat_exit(0);
}
