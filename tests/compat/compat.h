/*
 * compat.h: the few helpers the C clients of tests/compat/ share: failing
 * loudly, counting getppid() calls the compiler and libc cannot elide, and
 * ending without exit()'s handlers (a sanitizer's exit-time check makes
 * syscalls of its own, which would spoil a whole-run count).
 *
 * Each client is otherwise written in the style of one family of real
 * harnesses (README.md), so the helpers stop at what every style shares:
 * how a command is written and how an ack is read stay in each client.
 */
#ifndef COMPAT_H
#define COMPAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* How long a client may live: a tool that never answers must not leave a
 * client blocked in read() behind a failed test. */
#define COMPAT_LIFETIME_S 90

/* A child (the tool) that compat_die() ends with the client, when set. */
static pid_t compat_child;

/* perf's ack, as perf 6.1 writes it: "ack\n" and the NUL of its C string. */
#define COMPAT_ACK "ack\n"
#define COMPAT_ACK_LEN sizeof(COMPAT_ACK)

__attribute__((noreturn)) static inline void compat_exit(int status)
{
	fflush(stdout);
	fflush(stderr);
	_exit(status);
}

__attribute__((noreturn, format(printf, 2, 3)))
static inline void compat_die(const char *who, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (compat_child > 0)
		kill(compat_child, SIGKILL);
	compat_exit(1);
}

/* N raw getppid() syscalls: syscall(2), so that no libc can cache them. */
static inline void compat_getppid_n(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* A positive count from the command line. */
static inline long compat_count(const char *who, const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < 0)
		compat_die(who, "not a count: '%s'", s);
	return n;
}

/* End the client by SIGALRM after COMPAT_LIFETIME_S, whatever happens. */
static inline void compat_lifetime(void)
{
	alarm(COMPAT_LIFETIME_S);
}

/* An escaped copy of LEN bytes of BUF, for messages about what was read. */
struct compat_esc {
	char s[128];
};

static inline const char *compat_escape(struct compat_esc *out, const char *buf, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < sizeof(out->s); i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n')
			o += (size_t)snprintf(out->s + o, sizeof(out->s) - o, "\\n");
		else if (c >= 0x20 && c < 0x7f)
			out->s[o++] = (char)c;
		else
			o += (size_t)snprintf(out->s + o, sizeof(out->s) - o, "\\%o", c);
	}
	out->s[o] = '\0';
	return out->s;
}

#endif
