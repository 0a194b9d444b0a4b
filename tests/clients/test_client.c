/*
 * test_client: libperfgate, alone and against the real agent.
 *
 * The first part needs no agent: inert mode, option checks, and a fake
 * agent made of pipes this test holds (timeouts, late, malformed and err
 * replies, a gone agent, the cross-process lock).  The second part runs
 * this binary again under the agent named by $PERFGATE:
 *
 *   $PERFGATE -D -1 -x, -o DIR/MODE.csv --json-file DIR/MODE.json \
 *             -e syscalls:sys_enter_getppid -- <this binary> --child MODE DIR/MODE.res
 *
 * The child makes known numbers of getppid() calls inside and outside its
 * windows and writes one line per check to MODE.res ("1 what" or
 * "0 what\tdetail"); the parent turns those lines into TAP points and also
 * checks the agent's report.  Synchronisation is by replies, barriers and
 * pipes, never by sleeping; alarm() turns a hang into a failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clients/c/perfgate.h"
#include "proto/ctl_lock.h"
#include "tests/unit/tap.h"

#define EV "syscalls:sys_enter_getppid"
#define NTHREADS 4

static void getppid_n(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* ---- small helpers ------------------------------------------------------- */

/* The number after "key": (spaces allowed) at or after the first `from` in
 * text; -1 when absent or not a number (null). */
static long long json_num(const char *text, const char *from, const char *key)
{
	char pat[128];
	const char *p = from ? strstr(text, from) : text;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = p ? strstr(p, pat) : NULL;
	if (!p)
		return -1;
	for (p += strlen(pat); *p == ' '; p++)
		;
	return isdigit((unsigned char)*p) ? strtoll(p, NULL, 10) : -1;
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* The count of EVENT in a -x, report: -1 when absent, -2 when not counted. */
static long long csv_count(const char *path, const char *event)
{
	char *text = slurp(path), *line, *save = NULL, *field;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		field = strchr(line, ',');
		field = field ? strchr(field + 1, ',') : NULL;
		if (!field || strncmp(field + 1, event, strlen(event)) ||
		    field[1 + strlen(event)] != ',')
			continue;
		return isdigit((unsigned char)line[0]) ? strtoll(line, NULL, 10) : -2;
	}
	return -1;
}

/* The count of the window view named NAME in a --json-file document. */
static long long json_file_window_count(const char *path, const char *name)
{
	char pat[128];
	const char *text = slurp(path), *p;

	snprintf(pat, sizeof(pat), "\"window\": \"%s\"", name);
	p = strstr(text, pat);
	return p ? json_num(p, NULL, "count") : -1;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static bool pipe_empty(int fd)
{
	char c;
	int flags = fcntl(fd, F_GETFL);
	ssize_t n;

	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	n = read(fd, &c, 1);
	fcntl(fd, F_SETFL, flags);
	return n < 0 && errno == EAGAIN;
}

static void put(int fd, const char *text, size_t len)
{
	if (write(fd, text, len) != (ssize_t)len)
		perror("write");
}

/* ---- part 1: no agent ---------------------------------------------------- */

static void test_inert(void)
{
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;
	struct perfgate *pg = NULL;
	char json[64] = "junk";

	unsetenv("PERFGATE_CTL_FD");
	unsetenv("PERFGATE_ACK_FD");
	is_int(perfgate_open(&pg, NULL), 0, "inert: open without an agent succeeds");
	ok(pg && perfgate_is_inert(pg), "inert: the handle is inert");
	is_int(perfgate_enable(pg), 0, "inert: enable returns 0");
	is_int(perfgate_disable(pg), 0, "inert: disable returns 0");
	is_int(perfgate_ping(pg), 0, "inert: ping returns 0");
	is_int(perfgate_window_begin(pg, "parse"), 0, "inert: window begin returns 0");
	is_int(perfgate_window_end(pg, "parse", json, sizeof(json)), 0, "inert: window end returns 0");
	is_str(json, "", "inert: window end leaves an empty payload");
	is_int(perfgate_command(pg, "anything at all", NULL, 0), 0, "inert: a raw command returns 0");
	perfgate_close(pg);
	is_int(perfgate_open(&pg, &opts), 0, "inert: open with empty opts reads the environment");
	ok(perfgate_is_inert(pg), "inert: ... and is inert too");
	perfgate_close(pg);
	ok(perfgate_default() && perfgate_is_inert(perfgate_default()),
	   "inert: the default handle is inert");
	is_int(perfgate_window_begin(perfgate_default(), "x"), 0, "inert: default handle calls return 0");
}

static void test_opts(void)
{
	struct { struct perfgate_opts o; char more[8]; } big = { PERFGATE_OPTS_INIT, { 0 } };
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;
	struct perfgate *pg = NULL;

	opts.sz = 1;
	is_int(perfgate_open(&pg, &opts), -EINVAL, "opts: a too small sz is refused");
	ok(pg == NULL && errno == EINVAL, "opts: ... with errno EINVAL and no handle");
	big.o.sz = sizeof(big);
	is_int(perfgate_open(&pg, &big.o), 0, "opts: a newer caller's bigger struct, zero tail, is fine");
	perfgate_close(pg);
	big.more[3] = 1;
	is_int(perfgate_open(&pg, &big.o), -EINVAL, "opts: ... but not with unknown fields set");
	opts = (struct perfgate_opts)PERFGATE_OPTS_INIT;
	opts.ctl_fd = 1;
	is_int(perfgate_open(&pg, &opts), -EINVAL, "opts: ctl_fd without ack_fd is refused");
	setenv("PERFGATE_CTL_FD", "12x", 1);
	setenv("PERFGATE_ACK_FD", "13", 1);
	is_int(perfgate_open(&pg, NULL), -EINVAL, "env: a malformed PERFGATE_CTL_FD is refused");
	ok(strstr(perfgate_last_error(), "PERFGATE_CTL_FD") != NULL, "env: ... and the message says so");
	unsetenv("PERFGATE_CTL_FD");
	unsetenv("PERFGATE_ACK_FD");
}

/* Open from PERFGATE_CTL_FD=ctl, PERFGATE_ACK_FD=ack (and PERFGATE_CHANNEL_ID
 * = id unless NULL); 1 when the handle came out inert, 0 when connected,
 * -1 when the open failed. */
static int env_open(int ctl, int ack, const char *id)
{
	char c[16], a[16];
	struct perfgate *pg = NULL;
	int inert;

	snprintf(c, sizeof(c), "%d", ctl);
	snprintf(a, sizeof(a), "%d", ack);
	setenv("PERFGATE_CTL_FD", c, 1);
	setenv("PERFGATE_ACK_FD", a, 1);
	if (id)
		setenv("PERFGATE_CHANNEL_ID", id, 1);
	else
		unsetenv("PERFGATE_CHANNEL_ID");
	if (perfgate_open(&pg, NULL))
		return -1;
	inert = perfgate_is_inert(pg);
	perfgate_window_begin(pg, "w");	/* must write nothing when inert */
	perfgate_close(pg);
	return inert;
}

/* The environment outlives the fds it names: stale or foreign fds leave
 * the library inert, and nothing is written into them. */
static void test_env_inert(void)
{
	int ctl[2], ack[2], file = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct stat c, a;
	char id[64], wrong[64], byte;

	if (pipe(ctl) || pipe(ack) || file < 0)
		{ ok(0, "env: pipes for the test"); return; }
	fstat(ctl[1], &c);
	fstat(ack[0], &a);
	snprintf(id, sizeof(id), "%llu:%llu", (unsigned long long)c.st_ino,
		 (unsigned long long)a.st_ino);
	snprintf(wrong, sizeof(wrong), "%llu:%llu", (unsigned long long)c.st_ino + 1000,
		 (unsigned long long)a.st_ino);
	fcntl(ctl[0], F_SETFL, O_NONBLOCK);

	is_int(env_open(999, 998, NULL), 1, "env: fds that are not open leave the handle inert");
	ok(strstr(perfgate_last_error(), "not the agent's pipes") != NULL,
	   "env: ... and perfgate_last_error() says why");
	is_int(env_open(file, ack[0], NULL), 1, "env: a ctl fd that is not a pipe: inert");
	is_int(env_open(ctl[1], file, NULL), 1, "env: an ack fd that is not a pipe: inert");
	is_int(env_open(ctl[0], ack[1], NULL), 1, "env: pipe ends of the wrong direction: inert");
	is_int(env_open(ctl[1], ack[0], wrong), 1,
	       "env: other pipes than PERFGATE_CHANNEL_ID names: inert");
	ok(read(ctl[0], &byte, 1) < 0 && errno == EAGAIN,
	   "env: ... and nothing was written into them");
	is_int(env_open(ctl[1], ack[0], "12"), -1, "env: a malformed PERFGATE_CHANNEL_ID is refused");
	/* The right pipes connect; window begin then waits for a reply that
	 * this fake never sends, so only the open is checked. */
	setenv("PERFGATE_TIMEOUT_MS", "1", 1);
	is_int(env_open(ctl[1], ack[0], id), 0, "env: the pipes PERFGATE_CHANNEL_ID names connect");
	ok(read(ctl[0], &byte, 1) == 1 && byte == 'w', "env: ... and the command reaches them");
	unsetenv("PERFGATE_TIMEOUT_MS");
	unsetenv("PERFGATE_CTL_FD");
	unsetenv("PERFGATE_ACK_FD");
	unsetenv("PERFGATE_CHANNEL_ID");
	close(ctl[0]), close(ctl[1]), close(ack[0]), close(ack[1]), close(file);
}

/* The numeric accessors on fixed replies: docs/protocol.md's example. */
static void test_reply_numbers(void)
{
	const char *r = "{\"window\":\"rep\",\"calls\":3,\"call\":{\"time_ns\":45718,"
		"\"counts\":{\"task-clock\":27701,\"w\":11,\"cycles\":null},"
		"\"ranges\":{\"w@gate\":3}},\"total\":{\"time_ns\":47851,"
		"\"counts\":{\"task-clock\":27702,\"w\":12,\"cycles\":null}},"
		"\"ranges\":{\"w@gate\":5}}";
	uint64_t call = 0, total = 0;
	unsigned long calls = 0;
	char name[16];

	is_int(perfgate_reply_count(r, "w", &call, &total), 0, "reply: count of an event");
	ok(call == 11 && total == 12, "reply: ... the call's and the total's");
	is_int(perfgate_reply_count(r, "w@gate", &call, &total), 0, "reply: count of a range view");
	ok(call == 3 && total == 5, "reply: ... from call.ranges and ranges");
	is_int(perfgate_reply_count(r, "w", NULL, NULL), 0, "reply: outputs may be NULL");
	is_int(perfgate_reply_count(r, "cycles", &call, &total), -ENODATA,
	       "reply: an unsupported event is ENODATA");
	is_int(perfgate_reply_count(r, "nope", &call, &total), -ENOENT, "reply: no such event: ENOENT");
	is_int(perfgate_reply_count("", "w", &call, &total), -ENOENT, "reply: an inert (empty) reply: ENOENT");
	is_int(perfgate_reply_count("{\"x\":1}", "w", &call, &total), -EPROTO,
	       "reply: not a window-end reply: EPROTO");
	is_int(perfgate_reply_count("{\"window\":", "w", &call, &total), -EPROTO,
	       "reply: cut JSON: EPROTO");
	is_int(perfgate_reply_time(r, &call, &total, &calls), 0, "reply: times");
	ok(call == 45718 && total == 47851 && calls == 3, "reply: ... call, total and calls");
	is_int(perfgate_reply_event(r, 2, name, sizeof(name)), 0, "reply: event 2");
	is_str(name, "cycles", "reply: ... is the third -e event");
	is_int(perfgate_reply_event(r, 3, name, sizeof(name)), 0, "reply: event 3");
	is_str(name, "w@gate", "reply: ... is the range view");
	is_int(perfgate_reply_event(r, 4, name, sizeof(name)), -ENOENT, "reply: past the last: ENOENT");
	is_int(perfgate_reply_event(r, 0, name, 4), -ENOBUFS, "reply: a name too long: ENOBUFS");
}

/* A fake agent: pipes whose far ends this test holds and answers (or not). */
struct fake {
	int ctl[2], ack[2];
	struct perfgate *pg;
};

static int fake_open(struct fake *f, int timeout_ms)
{
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;

	if (pipe(f->ctl) || pipe(f->ack))
		return -1;
	opts.ctl_fd = f->ctl[1];
	opts.ack_fd = f->ack[0];
	opts.timeout_ms = timeout_ms;
	return perfgate_open(&f->pg, &opts);
}

static void fake_close(struct fake *f)
{
	perfgate_close(f->pg);
	for (int i = 0; i < 2; i++) {
		close(f->ctl[i]);
		close(f->ack[i]);
	}
}

static void test_fake_agent(void)
{
	struct fake f;
	struct timespec t0;
	char reply[64], got[64];
	ssize_t n;
	int rc;

	is_int(fake_open(&f, 200), 0, "fake: open on explicit fds");
	ok(!perfgate_is_inert(f.pg), "fake: the handle is live");

	is_int(perfgate_window_begin(f.pg, "has space"), -EINVAL, "name: a space is refused locally");
	ok(errno == EINVAL && strstr(perfgate_last_error(), "bad window name"),
	   "name: ... errno EINVAL and a message");
	is_int(perfgate_window_begin(f.pg, ""), -EINVAL, "name: empty is refused");
	is_int(perfgate_window_end(f.pg, "a/b", NULL, 0), -EINVAL, "name: '/' is refused");
	is_int(perfgate_window_begin(f.pg, NULL), -EINVAL, "name: NULL is refused");
	is_int(perfgate_window_begin(f.pg, "x1234567890123456789012345678901234567890123456789012345678901234"),
	       -EINVAL, "name: 65 bytes is refused");
	is_int(perfgate_command(f.pg, "ping\nping", NULL, 0), -EINVAL, "command: two lines are refused");
	is_int(perfgate_command(f.pg, " \t\r", NULL, 0), -EINVAL,
	       "command: a blank line (no reply would come) is refused");
	ok(pipe_empty(f.ctl[0]), "refused calls wrote nothing");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = perfgate_ping(f.pg);
	is_int(rc, -ETIMEDOUT, "timeout: an unanswered ping times out");
	ok(ms_since(&t0) >= 190 && ms_since(&t0) < 1000, "timeout: ... after about 200 ms");
	ok(errno == ETIMEDOUT && strstr(perfgate_last_error(), "timed out"),
	   "timeout: errno ETIMEDOUT and a message");
	n = read(f.ctl[0], got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = '\0';
	is_str(got, "ping\n", "timeout: the command was sent as one line");

	/* The late reply to that ping and the reply to the next command are both
	 * waiting: the late one must be skipped, not taken for the next one's. */
	put(f.ack[1], "ack\n\0ack {\"x\":1}\n\0", 18);
	is_int(perfgate_command(f.pg, "hello", reply, sizeof(reply)), 0, "late reply: next command succeeds");
	is_str(reply, "{\"x\":1}", "late reply: ... and gets its own reply, not the late one");
	put(f.ack[1], "err nope, not today\n\0", 21);
	is_int(perfgate_ping(f.pg), -EREMOTEIO, "err: an err reply gives -EREMOTEIO");
	is_str(perfgate_last_error(), "agent: nope, not today", "err: last_error holds the agent's reason");
	put(f.ack[1], "hello there\n", 12);
	is_int(perfgate_ping(f.pg), -EPROTO, "malformed: a reply that is not ack/err gives -EPROTO");
	put(f.ack[1], "ack 0123456789\n\0", 16);
	is_int(perfgate_command(f.pg, "x", reply, 5), -ENOBUFS, "small buffer: -ENOBUFS");
	is_str(reply, "0123", "small buffer: ... with the payload truncated");

	close(f.ctl[0]);
	f.ctl[0] = -1;
	is_int(perfgate_ping(f.pg), -ETIMEDOUT,
	       "gone: no reader on ctl but the handle's own: no SIGPIPE, the reply times out");
	fake_close(&f);

	/* A ctl fd that is not a pipe gets no reader of its own: its write is
	 * made with SIGPIPE blocked. */
	{
		struct perfgate_opts opts = PERFGATE_OPTS_INIT;
		struct perfgate *pg = NULL;
		int sv[2], ack[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(ack))
			return;
		opts.ctl_fd = sv[0];
		opts.ack_fd = ack[0];
		opts.timeout_ms = 200;
		is_int(perfgate_open(&pg, &opts), 0, "gone: open with a socket as ctl");
		close(sv[1]);
		is_int(perfgate_ping(pg), -EPIPE,
		       "gone: nobody on the socket's other end gives -EPIPE (and no SIGPIPE death)");
		perfgate_close(pg);
		close(sv[0]);
		close(ack[0]);
		close(ack[1]);
	}

	fake_open(&f, 5000);
	close(f.ack[1]);
	f.ack[1] = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	is_int(perfgate_ping(f.pg), -ECONNRESET, "gone: a closed reply channel gives -ECONNRESET");
	ok(ms_since(&t0) < 1000, "gone: ... at once, not after the timeout");
	fake_close(&f);
}

/* Another process holds the record lock: our call must wait, not write,
 * and time out; once the lock is released the call goes through. */
/* A single_process handle: no record lock, and a read end of the ctl pipe
 * of its own, so a write never raises SIGPIPE: an agent gone shows on the
 * reply channel.  Runs before any fork in this process. */
static void test_single_process(void)
{
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;
	struct fake f;
	char got[16];
	ssize_t n;

	if (pipe(f.ctl) || pipe(f.ack))
		return;
	opts.ctl_fd = f.ctl[1];
	opts.ack_fd = f.ack[0];
	opts.timeout_ms = 200;
	opts.single_process = true;
	is_int(perfgate_open(&f.pg, &opts), 0, "single_process: open on explicit fds");
	put(f.ack[1], "ack\n\0", 5);
	is_int(perfgate_ping(f.pg), 0, "single_process: a ping goes through");
	n = read(f.ctl[0], got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = '\0';
	is_str(got, "ping\n", "single_process: ... as one line");
	close(f.ctl[0]);
	f.ctl[0] = -1;
	is_int(perfgate_ping(f.pg), -ETIMEDOUT,
	       "single_process: no reader on ctl but ours: no SIGPIPE, the reply times out");
	close(f.ack[1]);
	f.ack[1] = -1;
	is_int(perfgate_ping(f.pg), -ECONNRESET,
	       "single_process: the reply channel closed gives -ECONNRESET");
	fake_close(&f);
}

/*
 * A lock page made here, as the agent makes one (agent/control/channel_lock.c), on
 * the fake's pipes: a call that timed out with half its reply read leaves
 * the rest to whichever process calls next, and its own next reply whole.
 */
static void test_page_partial_reply(void)
{
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;
	struct ctl_lock_page *page;
	pthread_mutexattr_t attr;
	struct stat ctl, ack;
	char env[16], reply[64];
	struct fake f;
	int fd, status;
	pid_t pid;

	if (pipe(f.ctl) || pipe(f.ack) || fstat(f.ctl[1], &ctl) || fstat(f.ack[0], &ack))
		return;
	fd = memfd_create("test-lock", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, CTL_LOCK_PAGE_SIZE))
		return;
	page = mmap(NULL, CTL_LOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED)
		return;
	memcpy(page->magic, CTL_LOCK_MAGIC, sizeof(CTL_LOCK_MAGIC));
	page->ctl_ino = ctl.st_ino;
	page->ack_ino = ack.st_ino;
	page->mutex_size = sizeof(pthread_mutex_t);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&page->mutex, &attr);
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	snprintf(env, sizeof(env), "%d", fd);
	setenv(CTL_LOCK_ENV, env, 1);
	opts.ctl_fd = f.ctl[1];
	opts.ack_fd = f.ack[0];
	opts.timeout_ms = 200;
	is_int(perfgate_open(&f.pg, &opts), 0, "page: open on explicit fds with a page");
	unsetenv(CTL_LOCK_ENV);

	put(f.ack[1], "ack {\"x\"", 9);
	is_int(perfgate_ping(f.pg), -ETIMEDOUT, "page: half a reply, then the call times out");
	is_int((long long)page->owed, 1, "page: ... and the channel owes that reply");
	pid = fork();
	if (pid == 0) {
		alarm(10);
		put(f.ack[1], ":1}\n\0ack\n\0", 11);
		if (perfgate_command(f.pg, "hi", reply, sizeof(reply)))
			_exit(1);
		_exit(reply[0] ? 2 : 0);
	}
	waitpid(pid, &status, 0);
	is_int(status, 0, "page: another process drops the rest of it and gets its own reply");
	put(f.ack[1], "ack\n\0", 5);
	is_int(perfgate_command(f.pg, "hi", reply, sizeof(reply)), 0,
	       "page: the caller that timed out gets its next reply ...");
	is_str(reply, "", "page: ... whole, not glued to the head it had read");
	is_int((long long)page->owed, 0, "page: nothing is owed now");
	fake_close(&f);
	munmap(page, CTL_LOCK_PAGE_SIZE);
	close(fd);
}

static void test_process_lock(void)
{
	struct fake f;
	int ready[2], release[2], status;
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char c;
	pid_t pid;

	fake_open(&f, 200);
	if (pipe(ready) || pipe(release))
		return;
	pid = fork();
	if (pid == 0) {
		alarm(20);
		if (fcntl(f.ctl[1], F_SETLK, &lock) < 0)
			_exit(1);
		put(ready[1], "r", 1);
		_exit(read(release[0], &c, 1) == 1 ? 0 : 2);
	}
	ok(read(ready[0], &c, 1) == 1, "lock: another process holds the channel lock");
	is_int(perfgate_ping(f.pg), -ETIMEDOUT, "lock: our call waits for it and times out");
	ok(strstr(perfgate_last_error(), "another process"), "lock: ... saying another process held it");
	ok(pipe_empty(f.ctl[0]), "lock: ... without writing its command");
	put(release[1], "x", 1);
	waitpid(pid, &status, 0);
	is_int(status, 0, "lock: the holder released it and exited");
	put(f.ack[1], "ack\n\0", 5);
	is_int(perfgate_ping(f.pg), 0, "lock: once free, the call goes through");
	fake_close(&f);
	close(ready[0]);
	close(ready[1]);
	close(release[0]);
	close(release[1]);
}

static void test_fifo_paths(const char *dir)
{
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;
	struct perfgate *pg = NULL;
	char ctl[256], ack[256], link[256], file[256];
	int hold_ctl, hold_ack;

	snprintf(ctl, sizeof(ctl), "%s/ctl", dir);
	snprintf(ack, sizeof(ack), "%s/ack", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	if (mkfifo(ctl, 0600) || mkfifo(ack, 0600) || symlink(ctl, link) ||
	    close(open(file, O_WRONLY | O_CREAT, 0600)))
		perror("fifo set-up");
	opts.ctl_path = ctl;
	opts.ack_path = ack;
	opts.timeout_ms = 200;
	is_int(perfgate_open(&pg, &opts), -ENXIO, "fifo: nobody reading the ctl FIFO: -ENXIO");
	ok(strstr(perfgate_last_error(), "no agent"), "fifo: ... and the message says no agent reads it");
	/* An agent that holds both FIFOs open but never answers. */
	hold_ctl = open(ctl, O_RDWR);
	hold_ack = open(ack, O_RDWR);
	opts.ctl_path = link;
	is_int(perfgate_open(&pg, &opts), -ELOOP, "fifo: a symbolic link is refused");
	opts.ctl_path = file;
	is_int(perfgate_open(&pg, &opts), -EINVAL, "fifo: a regular file is refused");
	opts.ctl_path = ctl;
	is_int(perfgate_open(&pg, &opts), 0, "fifo: open by path with a reader present");
	is_int(perfgate_window_begin(pg, "w"), -ETIMEDOUT, "fifo: unanswered: -ETIMEDOUT");
	perfgate_close(pg);
	close(hold_ctl);
	close(hold_ack);
}

/* ---- part 2: under the agent (parent side) ------------------------------ */

static const char *agent, *tmpdir;
static char self[4096];

static void path_of(char *out, size_t size, const char *mode, const char *ext)
{
	snprintf(out, size, "%s/%s.%s", tmpdir, mode, ext);
}

/* Run `--child MODE` under the agent and wait until the agent and every
 * process holding `done` (the workload and its children) are gone.
 * Returns the agent's wait status. */
static int run_under_agent(const char *mode)
{
	char csv[512], json[512], res[512], c;
	int done[2], status = -1;
	pid_t pid;

	path_of(csv, sizeof(csv), mode, "csv");
	path_of(json, sizeof(json), mode, "json");
	path_of(res, sizeof(res), mode, "res");
	if (pipe(done))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(done[0]);
		execl(agent, agent, "-D", "-1", "-x", ",", "-o", csv, "--json-file", json,
		      "-e", EV, "--", self, "--child", mode, res, (char *)NULL);
		_exit(127);
	}
	close(done[1]);
	waitpid(pid, &status, 0);
	while (read(done[0], &c, 1) > 0)
		;
	close(done[0]);
	return status;
}

/* Replay the child's checks as TAP points; returns how many there were. */
static int replay_results(const char *mode)
{
	char res[512], what[512], *line, *save = NULL, *detail;
	int n = 0;

	path_of(res, sizeof(res), mode, "res");
	for (line = strtok_r(slurp(res), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		detail = strchr(line, '\t');
		if (detail)
			*detail++ = '\0';
		snprintf(what, sizeof(what), "%s: %s", mode, line + 2);
		if (!ok(line[0] == '1', what) && detail)
			printf("#   %s\n", detail);
		n++;
	}
	return n;
}

static void agent_scenario(const char *mode, int want_checks)
{
	char what[128];
	int status = run_under_agent(mode);

	snprintf(what, sizeof(what), "%s: the agent ran the workload, exit status 0", mode);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, what);
	snprintf(what, sizeof(what), "%s: the workload reported its %d checks", mode, want_checks);
	is_int(replay_results(mode), want_checks, what);
}

static void report_is(const char *mode, const char *event, long long want)
{
	char csv[512], what[256];

	path_of(csv, sizeof(csv), mode, "csv");
	snprintf(what, sizeof(what), "%s: report -x line for %s is %lld", mode, event, want);
	is_int(csv_count(csv, event), want, what);
}

/* ---- part 2: under the agent (workload side) ---------------------------- */

#define R 50	/* rounds per thread */
#define K 3	/* getppid calls per round */

static int results_fd = -1;
static char *results_path;

__attribute__((format(printf, 3, 4)))
static bool check(bool cond, const char *what, const char *fmt, ...)
{
	char line[1024], detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%d %s\t%s\n", cond, what, detail);
	put(results_fd, line, strlen(line));
	return cond;
}

#define check_int(got, want, what) do {						\
	long long g_ = (got), w_ = (want);					\
	check(g_ == w_, (what), "got %lld, want %lld (%s)", g_, w_,		\
	      perfgate_last_error());						\
} while (0)

/* A window end reply names the window and gives the call number. */
static bool reply_is(const char *json, const char *name, long long calls)
{
	char head[128];

	snprintf(head, sizeof(head), "{\"window\":\"%s\",", name);
	return !strncmp(json, head, strlen(head)) && json_num(json, NULL, "calls") == calls;
}

/*
 * Call number `calls` of window w, making n getppid()s: begin and end are
 * acked, and the end reply (left in json) names w and the call number, and
 * counts exactly n for the call and `total` for the window so far.
 */
static void window_call(struct perfgate *pg, char *json, size_t cap, int n, long long calls,
			long long total)
{
	char what[128];

	snprintf(what, sizeof(what), "call %lld: window begin w", calls);
	check_int(perfgate_window_begin(pg, "w"), 0, what);
	getppid_n(n);
	snprintf(what, sizeof(what), "call %lld: window end w", calls);
	check_int(perfgate_window_end(pg, "w", json, cap), 0, what);
	snprintf(what, sizeof(what), "call %lld: the end reply names w and says calls %lld",
		 calls, calls);
	check(reply_is(json, "w", calls), what, "%s", json);
	snprintf(what, sizeof(what), "call %lld: the call counts exactly %d getppid", calls, n);
	check_int(json_num(json, "\"call\":", EV), n, what);
	snprintf(what, sizeof(what), "call %lld: the total is %lld", calls, total);
	check_int(json_num(json, "\"total\":", EV), total, what);
}

static void child_exact(struct perfgate *pg)
{
	char json[PERFGATE_REPLY_MAX];

	getppid_n(3);
	window_call(pg, json, sizeof(json), 5, 1, 5);
	getppid_n(7);
	window_call(pg, json, sizeof(json), 2, 2, 7);
	{
		uint64_t call = 0, total = 0, call_ns = 0, total_ns = 0;
		unsigned long calls = 0;
		char name[64] = "";

		check_int(perfgate_reply_count(json, EV, &call, &total), 0, "reply_count " EV);
		check(call == 2 && total == 7, "... gives the call's 2 and the total's 7",
		      "call %llu total %llu", (unsigned long long)call, (unsigned long long)total);
		check_int(perfgate_reply_time(json, &call_ns, &total_ns, &calls), 0, "reply_time");
		check(calls == 2 && call_ns > 0 && total_ns >= call_ns,
		      "... gives 2 calls and times, the total's the longer", "%s", json);
		check_int(perfgate_reply_event(json, 0, name, sizeof(name)), 0, "reply_event 0");
		check(!strcmp(name, EV), "... is " EV, "%s", name);
	}
	check_int(perfgate_enable(pg), 0, "enable");
	getppid_n(11);
	check_int(perfgate_disable(pg), 0, "disable");
	check_int(perfgate_ping(pg), 0, "ping");
}

struct worker {
	struct perfgate *pg;
	pthread_barrier_t *barrier;
	int id, failures;
	char name[16], detail[PERFGATE_REPLY_MAX + 64];
};

/* R times {begin w; K getppid; end w}, all threads on the same name. */
static void *worker_same_name(void *arg)
{
	struct worker *w = arg;
	char json[PERFGATE_REPLY_MAX] = "";

	pthread_barrier_wait(w->barrier);
	for (int r = 0; r < R; r++) {
		int b = perfgate_window_begin(w->pg, "w");

		getppid_n(K);
		if (b || perfgate_window_end(w->pg, "w", json, sizeof(json)) ||
		    strncmp(json, "{\"window\":\"w\",", 14)) {
			if (!w->failures++)
				snprintf(w->detail, sizeof(w->detail), "round %d: begin %d, %s: %s",
					 r, b, perfgate_last_error(), json);
		}
	}
	return NULL;
}

/* Each thread its own window; barriers make every window open while every
 * thread makes its calls, so each call of each window counts all of them. */
static void *worker_own_name(void *arg)
{
	struct worker *w = arg;
	char json[PERFGATE_REPLY_MAX];
	const long long all = 1 + 2 + 3 + 4;

	for (int r = 0; r < R; r++) {
		int b = perfgate_window_begin(w->pg, w->name), e;

		pthread_barrier_wait(w->barrier);
		getppid_n(w->id + 1);
		pthread_barrier_wait(w->barrier);
		e = perfgate_window_end(w->pg, w->name, json, sizeof(json));
		if (b || e || !reply_is(json, w->name, r + 1) ||
		    json_num(json, "\"call\":", EV) != all ||
		    json_num(json, "\"total\":", EV) != all * (r + 1)) {
			if (!w->failures++)
				snprintf(w->detail, sizeof(w->detail), "round %d: %d/%d %s: %s",
					 r, b, e, perfgate_last_error(), json);
		}
	}
	return NULL;
}

static void run_workers(struct perfgate *pg, void *(*fn)(void *))
{
	struct worker w[NTHREADS];
	pthread_t tid[NTHREADS];
	pthread_barrier_t barrier;
	char what[64];

	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ .pg = pg, .barrier = &barrier, .id = i };
		snprintf(w[i].name, sizeof(w[i].name), "n%d", i);
		pthread_create(&tid[i], NULL, fn, &w[i]);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(tid[i], NULL);
		snprintf(what, sizeof(what), "thread %d: all %d begin/end pairs right", i, R);
		check(w[i].failures == 0, what, "%d failures, first: %s", w[i].failures, w[i].detail);
	}
	pthread_barrier_destroy(&barrier);
}

static void child_threads(struct perfgate *pg)
{
	char json[PERFGATE_REPLY_MAX];

	run_workers(pg, worker_same_name);
	check_int(perfgate_window_begin(pg, "w"), 0, "a last, empty begin w");
	check_int(perfgate_window_end(pg, "w", json, sizeof(json)), 0, "... and end w");
	check_int(json_num(json, "\"total\":", EV), NTHREADS * R * K, "total is exactly 4*R*K");
	check_int(json_num(json, NULL, "calls"), NTHREADS * R + 1, "calls is 4*R + 1");
}

static void child_names(struct perfgate *pg)
{
	run_workers(pg, worker_own_name);
}

/* N begin/end pairs on NAME; every reply must be this process's own. */
static void fork_loop(struct perfgate *pg, const char *name, int n)
{
	char json[PERFGATE_REPLY_MAX], what[64], first[PERFGATE_REPLY_MAX + 64] = "";
	int failures = 0;

	for (int i = 0; i < n; i++) {
		int b = perfgate_window_begin(pg, name);
		int e = perfgate_window_end(pg, name, json, sizeof(json));

		if ((b || e || !reply_is(json, name, i + 1)) && !failures++)
			snprintf(first, sizeof(first), "pair %d: %d/%d %s: %s", i, b, e,
				 perfgate_last_error(), json);
	}
	snprintf(what, sizeof(what), "process %s: %d pairs, every reply its own", name, n);
	check(failures == 0, what, "%d failures, first: %s", failures, first);
}

static void child_fork(struct perfgate *pg)
{
	int go[2], status;
	char c;
	pid_t pid;

	if (pipe(go))
		return;
	pid = fork();
	if (pid == 0) {
		alarm(30);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		fork_loop(pg, "c", 300);
		_exit(0);
	}
	close(go[0]);
	put(go[1], "g", 1);	/* both start now */
	fork_loop(pg, "p", 300);
	waitpid(pid, &status, 0);
	check_int(status, 0, "the forked child finished");
}

/* The same on a handle opened single_process: no record lock until the
 * fork, then the lock again in both processes (else their replies mix). */
static void child_fork_single(struct perfgate *pg)
{
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;
	struct perfgate *single = NULL;

	(void)pg;
	opts.single_process = true;
	if (!check(perfgate_open(&single, &opts) == 0 && !perfgate_is_inert(single),
		   "a single_process handle from the environment", "%s", perfgate_last_error()))
		return;
	fork_loop(single, "s", 50);	/* alone: no record lock */
	child_fork(single);
	perfgate_close(single);
}

/* The channel's lock page (proto/ctl_lock.h), mapped here to play a
 * process that holds it. */
static struct ctl_lock_page *page_map(void)
{
	const char *env = getenv(CTL_LOCK_ENV);
	void *page;

	if (!env)
		return NULL;
	page = mmap(NULL, CTL_LOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, atoi(env), 0);
	return page == MAP_FAILED ? NULL : page;
}

/*
 * The workload's channel has a lock page, and the library takes it rather
 * than the record lock: processes started with posix_spawn (no fork
 * handler runs) stay apart, a holder that stops makes us time out, one that
 * dies hands the lock on, and a reply it left unread is not taken for ours.
 */
static void child_page(struct perfgate *pg)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;
	struct ctl_lock_page *page = page_map();
	struct perfgate *quick = NULL;
	char json[PERFGATE_REPLY_MAX], c;
	int ready[2], status, rc;
	char *argv[] = { "test_client", "--child", "spawned", results_path, NULL };
	pid_t pid;

	if (!check(page && !memcmp(page->magic, CTL_LOCK_MAGIC, sizeof(CTL_LOCK_MAGIC)),
		   "PERFGATE_LOCK_FD names the channel's lock page", "%s", getenv(CTL_LOCK_ENV)))
		return;
	if (pipe(ready))
		return;

	/* Another process holds the record lock: not our lock any more. */
	pid = fork();
	if (pid == 0) {
		if (fcntl(atoi(getenv("PERFGATE_CTL_FD")), F_SETLK, &lock) < 0)
			_exit(1);
		put(ready[1], "r", 1);
		pause();
		_exit(0);
	}
	if (read(ready[0], &c, 1) == 1)
		check_int(perfgate_ping(pg), 0, "a record lock held elsewhere does not stop us");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	/* A program started with posix_spawn, on the default handle of its own,
	 * while this process makes calls too. */
	rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
	if (!check(rc == 0, "posix_spawn this test", "%s", strerror(rc)))
		return;
	fork_loop(pg, "p", 300);
	waitpid(pid, &status, 0);
	check_int(status, 0, "the spawned program finished");

	/* A holder that stops: our call times out, naming another process. */
	opts.timeout_ms = 200;
	if (!check(perfgate_open(&quick, &opts) == 0, "a second handle, 200 ms timeout", "%s",
		   perfgate_last_error()))
		return;
	pid = fork();
	if (pid == 0) {
		pthread_mutex_lock(&page->mutex);
		/* Then die holding it, with a command written and its reply
		 * unread: the next holder must drop that reply. */
		put(atoi(getenv("PERFGATE_CTL_FD")), "window begin z\n", 15);
		page->owed++;
		put(ready[1], "r", 1);
		pause();
		_exit(0);
	}
	if (read(ready[0], &c, 1) == 1) {
		check_int(perfgate_ping(quick), -ETIMEDOUT, "a stopped holder: our call times out");
		check(strstr(perfgate_last_error(), "another process") != NULL,
		      "... saying another process held the channel", "%s", perfgate_last_error());
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	rc = perfgate_window_begin(quick, "y");
	check_int(rc, 0, "its holder killed: the lock is ours");
	rc = perfgate_window_end(quick, "y", json, sizeof(json));
	check(rc == 0 && reply_is(json, "y", 1), "... and each reply is our own, not the dead one's",
	      "%d %s", rc, json);
	perfgate_close(quick);
	close(ready[0]);
	close(ready[1]);
}

/* The program child_page starts with posix_spawn. */
static void child_spawned(struct perfgate *pg)
{
	fork_loop(pg, "s", 300);
}

static volatile bool hammer_stop;

static void *hammer(void *arg)
{
	struct perfgate *pg = arg;

	while (!hammer_stop) {
		perfgate_window_begin(pg, "t");
		perfgate_window_end(pg, "t", NULL, 0);
	}
	return NULL;
}

/* Fork while another thread is in the middle of commands: the children must
 * find the library usable (pthread_atfork), not stuck on a held mutex. */
static void child_atfork(struct perfgate *pg)
{
	const int nforks = 20;
	int good = 0, status;
	pthread_t tid;
	pid_t pid;

	pthread_create(&tid, NULL, hammer, pg);
	for (int i = 0; i < nforks; i++) {
		pid = fork();
		if (pid == 0) {
			alarm(10);
			_exit(perfgate_ping(perfgate_default()) == 0 ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		good += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	hammer_stop = true;
	pthread_join(tid, NULL);
	check_int(good, nforks, "children forked amid commands could ping");
}

static void child_errors(struct perfgate *pg)
{
	char reply[PERFGATE_REPLY_MAX], small[8];
	const char *name64 = "n123456789012345678901234567890123456789012345678901234567890123";
	int rc;

	rc = perfgate_window_end(pg, "never-opened", NULL, 0);
	check_int(rc, -EREMOTEIO, "end of a window never opened: -EREMOTEIO");
	check(errno == EREMOTEIO, "... errno EREMOTEIO", "errno %d", errno);
	check(strstr(perfgate_last_error(), "not open") != NULL, "... last_error says not open",
	      "%s", perfgate_last_error());
	check_int(perfgate_window_begin(pg, "bad name"), -EINVAL, "a bad name: -EINVAL");
	check_int(perfgate_window_begin(pg, name64), 0, "a 64-byte name is accepted");
	check_int(perfgate_window_end(pg, name64, NULL, 0), 0, "... and ended");
	check_int(perfgate_command(pg, "hello", reply, sizeof(reply)), 0, "raw command: hello");
	check(!strncmp(reply, "{\"protocol\":", 12), "... its reply is the JSON payload", "%s", reply);
	check_int(perfgate_command(pg, "bogus", reply, sizeof(reply)), -EREMOTEIO, "raw: unknown command");
	check(strstr(reply, "unknown command") != NULL, "... reply holds the reason", "%s", reply);
	check_int(perfgate_command(pg, "window begin raw", NULL, 0), 0, "raw: window begin");
	check_int(perfgate_window_end(pg, "raw", small, sizeof(small)), -ENOBUFS,
		  "a too small buffer: -ENOBUFS");
	check_int(perfgate_window_end(pg, "raw", NULL, 0), -EREMOTEIO,
		  "... but the window was ended");
	check_int(perfgate_ping(pg), 0, "the channel still works after errors");
}

/* A range loaded at run time counts the calls between its triggers; the
 * agent's reason for a bad spec reaches last_error. */
static void child_ranges(struct perfgate *pg)
{
	check_int(perfgate_range_load(pg, "r", EV "@syscalls:sys_enter_getpgid..syscalls:sys_enter_getsid"),
		  0, "range load r");
	getppid_n(2);
	syscall(SYS_getpgid, 0);
	getppid_n(3);
	syscall(SYS_getsid, 0);
	getppid_n(4);
	check_int(perfgate_range_unload(pg, "r"), 0, "range unload r");
	check_int(perfgate_range_unload(pg, "r"), -EREMOTEIO, "unload again: -EREMOTEIO");
	check_int(perfgate_range_load(pg, "s", EV "@syscalls:sys_enter_getpgid.syscalls:sys_enter_getsid"),
		  -EREMOTEIO, "a bad spec: -EREMOTEIO");
	check(strstr(perfgate_last_error(), "at byte") != NULL, "... last_error has the place",
	      "%s", perfgate_last_error());
	check_int(perfgate_range_load(pg, "bad name", EV "@syscalls:sys_enter_getpgid.."), -EINVAL,
		  "a bad range name: -EINVAL");
}

/* A window-end reply longer than PERFGATE_REPLY_MAX (a range over 60 events
 * makes one) arrives whole: the library's buffer grows for it. */
static void child_long(struct perfgate *pg)
{
	static char spec[4096], json[1 << 16];
	struct dirent *entry;
	DIR *dir = opendir("/sys/kernel/tracing/events/syscalls");
	size_t len = 0;
	int events = 0;

	if (!check(dir != NULL, "tracefs lists the syscalls events", "%s", strerror(errno)))
		return;
	len += (size_t)snprintf(spec, sizeof(spec), "(");
	while ((entry = readdir(dir)) && events < 60) {
		if (strncmp(entry->d_name, "sys_enter_", 10) != 0)
			continue;
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%ssyscalls:%s",
					events++ ? "," : "", entry->d_name);
	}
	closedir(dir);
	snprintf(spec + len, sizeof(spec) - len, ")@syscalls:sys_enter_getpgid..");
	check_int(perfgate_range_load(pg, "many", spec), 0, "range load over 60 events");
	check_int(perfgate_window_begin(pg, "w"), 0, "window begin");
	check_int(perfgate_window_end(pg, "w", json, sizeof(json)), 0,
		  "window end: a long reply, whole");
	check(strlen(json) > PERFGATE_REPLY_MAX, "... longer than PERFGATE_REPLY_MAX", "%zu bytes",
	      strlen(json));
	check(strstr(json, "\"ranges\":") != NULL && json[strlen(json) - 1] == '}',
	      "... ends as JSON does", "%.60s", json + strlen(json) - 60);
	check_int(perfgate_ping(pg), 0, "the channel is in step after it");
}

/* The agent dies: calls fail at once with -EPIPE instead of hanging, and
 * SIGPIPE does not kill us. */
static void child_gone(struct perfgate *pg)
{
	struct timespec t0;
	int rc;

	check_int(perfgate_ping(pg), 0, "ping while the agent runs");
	kill(getppid(), SIGKILL);
	/* Whether the agent is dead yet or only dying, the call must see it:
	 * the write finds no reader (-EPIPE), or the reply never comes and the
	 * reply channel closes (-ECONNRESET). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = perfgate_window_begin(pg, "w");
	check(rc == -EPIPE || rc == -ECONNRESET, "agent killed: -EPIPE or -ECONNRESET",
	      "got %d (%s)", rc, perfgate_last_error());
	check(ms_since(&t0) < 1000, "... at once", "%ld ms", ms_since(&t0));
}

static int child_main(const char *mode, const char *results)
{
	static const struct { const char *mode; void (*fn)(struct perfgate *); } modes[] = {
		{ "exact", child_exact }, { "threads", child_threads }, { "names", child_names },
		{ "fork", child_fork }, { "atfork", child_atfork }, { "errors", child_errors },
		{ "fork_single", child_fork_single },
		{ "gone", child_gone }, { "ranges", child_ranges }, { "long", child_long },
		{ "page", child_page }, { "spawned", child_spawned },
	};
	struct perfgate *pg;

	alarm(60);
	results_path = (char *)results;
	results_fd = open(results, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (results_fd < 0)
		return 3;
	pg = perfgate_default();
	if (!check(pg && !perfgate_is_inert(pg), "the default handle reaches the agent",
		   "%s", perfgate_last_error()))
		return 0;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i].mode))
			modes[i].fn(pg);
	return 0;
}

/* ---- part 3: a FIFO channel by path, against the real agent -------------- */

static char fifo_ctl[512], fifo_ack[512], fifo_page[512];

/* Start the agent on the FIFOs ctl and ack; its workload, a cat, runs
 * until *stdin_w is closed. */
static pid_t fifo_agent_on(const char *ctl, const char *ack, bool shared, int *stdin_w)
{
	char spec[1100], out[512];
	const char *argv[16];
	int in[2], n = 0;
	pid_t pid;

	snprintf(spec, sizeof(spec), "fifo:%s,%s", ctl, ack);
	path_of(out, sizeof(out), "fifo", "csv");
	if (pipe2(in, O_CLOEXEC))
		return -1;
	argv[n++] = agent;
	argv[n++] = "-D";
	argv[n++] = "-1";
	argv[n++] = "-x,";
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n++] = "-e";
	argv[n++] = EV;
	argv[n++] = "--control";
	argv[n++] = spec;
	if (shared)
		argv[n++] = "--control-shared";
	argv[n++] = "--";
	argv[n++] = "/bin/cat";
	argv[n] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(open("/dev/null", O_WRONLY), 1);
		execv(agent, (char **)argv);
		_exit(127);
	}
	close(in[0]);
	*stdin_w = in[1];
	return pid;
}

static pid_t fifo_agent_start(bool shared, int *stdin_w)
{
	return fifo_agent_on(fifo_ctl, fifo_ack, shared, stdin_w);
}

static int fifo_agent_stop(pid_t pid, int stdin_w)
{
	int status = -1;

	close(stdin_w);
	waitpid(pid, &status, 0);
	return status;
}

/*
 * Wait until the agent holds both FIFOs open.  A handle that outlived the
 * agent before holds a reader of the ctl FIFO itself, so opening one gives
 * no sign; a call before then would find no writer on the ack FIFO and
 * take the agent for gone (ECONNRESET).
 */
static void fifo_agent_wait_on(pid_t pid, const char *ctl_path, const char *ack_path)
{
	const struct timespec pause_ = { 0, 5 * 1000 * 1000 };
	struct stat ctl, ack, self_st, exe;
	bool has_ctl = false, has_ack = false;
	char dir[64], fd_path[320];

	if (stat(ctl_path, &ctl) || stat(ack_path, &ack) || stat("/proc/self/exe", &self_st))
		return;
	/* Until it execs, the child has our own fds on the FIFOs. */
	snprintf(dir, sizeof(dir), "/proc/%d/exe", (int)pid);
	while (stat(dir, &exe) == 0 && exe.st_dev == self_st.st_dev && exe.st_ino == self_st.st_ino)
		nanosleep(&pause_, NULL);
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	while (!has_ctl || !has_ack) {
		DIR *d = opendir(dir);
		struct dirent *e;
		struct stat st;

		has_ctl = has_ack = false;
		while (d && (e = readdir(d))) {
			snprintf(fd_path, sizeof(fd_path), "%s/%s", dir, e->d_name);
			if (e->d_name[0] == '.' || stat(fd_path, &st))
				continue;
			has_ctl |= st.st_dev == ctl.st_dev && st.st_ino == ctl.st_ino;
			has_ack |= st.st_dev == ack.st_dev && st.st_ino == ack.st_ino;
		}
		if (d)
			closedir(d);
		if (!has_ctl || !has_ack)
			nanosleep(&pause_, NULL);
	}
}

static void fifo_agent_wait(pid_t pid)
{
	fifo_agent_wait_on(pid, fifo_ctl, fifo_ack);
}

/* A handle by path, once the agent reads the ctl FIFO (ENXIO until then). */
static int fifo_connect(struct perfgate **pg, int timeout_ms)
{
	struct perfgate_opts opts = PERFGATE_OPTS_INIT;
	const struct timespec pause_ = { 0, 5 * 1000 * 1000 };
	int rc;

	opts.ctl_path = fifo_ctl;
	opts.ack_path = fifo_ack;
	opts.timeout_ms = timeout_ms;
	while ((rc = perfgate_open(pg, &opts)) == -ENXIO)
		nanosleep(&pause_, NULL);
	return rc;
}

/* Does this process map the FIFO's page, the one that has that name now? */
static bool maps_page(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[4096];
	bool found = false;

	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "/dev/shm/perfgate-lock."))
			found = strstr(line, fifo_page) && !strstr(line, "(deleted)");
	if (maps)
		fclose(maps);
	return found;
}

/* How many mappings of the FIFO's page this process has. */
static int page_maps(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[4096];
	int n = 0;

	while (maps && fgets(line, sizeof(line), maps))
		n += strstr(line, fifo_page) && !strstr(line, "(deleted)");
	if (maps)
		fclose(maps);
	return n;
}

static ino_t page_ino(void)
{
	struct stat st;

	return stat(fifo_page, &st) ? 0 : st.st_ino;
}

/* The page, as any process of the channel's user can map it. */
static struct ctl_lock_page *fifo_page_map(void)
{
	int fd = open(fifo_page, O_RDWR | O_CLOEXEC);
	void *page;

	if (fd < 0)
		return NULL;
	page = mmap(NULL, CTL_LOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return page == MAP_FAILED ? NULL : page;
}

/* n window pairs named name; how many did not get their own reply. */
static int pairs(struct perfgate *pg, const char *name, int n)
{
	char json[PERFGATE_REPLY_MAX];
	int failures = 0;

	for (int i = 0; i < n; i++) {
		int b = perfgate_window_begin(pg, name);
		int e = b ? 0 : perfgate_window_end(pg, name, json, sizeof(json));

		if ((b || e || !reply_is(json, name, i + 1)) && !failures++)
			printf("# process %s, pair %d: %d/%d %s: %.200s\n", name, i, b, e,
			       perfgate_last_error(), b || e ? "" : json);
	}
	return failures;
}

/*
 * On a private FIFO channel the agent makes a named lock page, and handles
 * opened by path take its mutex, not the record lock: a process holding
 * that mutex stops them.  Two processes stay apart.  The page goes when
 * the agent exits, a handle follows the next agent's page, one a killed
 * agent left is taken over with its debt forgiven, and a --control-shared
 * channel has none.
 */
static void test_fifo_page(void)
{
	struct perfgate *pg = NULL, *quick = NULL, *early = NULL;
	int hold_ctl, maps_before;
	struct ctl_lock_page *page;
	int stdin_w, ready[2], status, failures;
	struct stat st;
	ino_t ino;
	pid_t agent_pid, pid;
	char c;

	snprintf(fifo_ctl, sizeof(fifo_ctl), "%s/page.ctl", tmpdir);
	snprintf(fifo_ack, sizeof(fifo_ack), "%s/page.ack", tmpdir);
	if (mkfifo(fifo_ctl, 0600) || mkfifo(fifo_ack, 0600) || stat(fifo_ctl, &st) ||
	    pipe(ready)) {
		perror("fifo page set-up");
		return;
	}
	snprintf(fifo_page, sizeof(fifo_page), "/dev/shm" CTL_LOCK_NAME_FMT,
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);

	/* A reader of the ctl FIFO (a script holding it open read-write) lets
	 * a handle connect before any agent reads it. */
	hold_ctl = open(fifo_ctl, O_RDWR | O_CLOEXEC);
	is_int(fifo_connect(&early, 10000), 0,
	       "fifo page: a handle opened before the agent starts (another process reads the FIFO)");
	agent_pid = fifo_agent_start(false, &stdin_w);
	fifo_agent_wait(agent_pid);
	is_int(fifo_connect(&pg, 10000), 0, "fifo page: a handle by path reaches the agent");
	ok(stat(fifo_page, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == geteuid(),
	   "fifo page: the agent made /dev/shm/perfgate-lock.DEV.INO, 0600, its user's");
	is_int(perfgate_ping(pg), 0, "fifo page: a call goes through");
	ok(maps_page(), "fifo page: the handle maps the page");
	maps_before = page_maps();
	is_int(perfgate_ping(early), 0, "fifo page: the handle opened before the agent reaches it");
	is_int(page_maps(), maps_before + 1, "fifo page: ... and takes the page the agent made since");
	perfgate_close(early);
	close(hold_ctl);

	/* A process holding the page's mutex stops our calls: the handle takes
	 * that mutex, where the record lock would have let it through. */
	page = fifo_page_map();
	pid = fork();
	if (pid == 0) {
		if (!page || pthread_mutex_lock(&page->mutex))
			_exit(1);
		put(ready[1], "r", 1);
		pause();
		_exit(0);
	}
	is_int(fifo_connect(&quick, 200), 0, "fifo page: a second handle, 200 ms timeout");
	if (read(ready[0], &c, 1) == 1) {
		is_int(perfgate_ping(quick), -ETIMEDOUT,
		       "fifo page: another process holds its mutex: our call times out");
		ok(strstr(perfgate_last_error(), "another process"),
		   "fifo page: ... saying another process held the channel");
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	perfgate_close(quick);
	is_int(perfgate_ping(pg), 0, "fifo page: its holder killed, the lock is ours");

	/* Two processes, each with its own handle by path. */
	pid = fork();
	if (pid == 0) {
		struct perfgate *own = NULL;

		alarm(60);
		_exit(fifo_connect(&own, 10000) || pairs(own, "c", 300) ? 1 : 0);
	}
	failures = pairs(pg, "p", 300);
	waitpid(pid, &status, 0);
	is_int(failures, 0, "fifo page: process p: 300 pairs, every reply its own");
	is_int(status, 0, "fifo page: process c, at the same time: 300 pairs, every reply its own");

	is_int(fifo_agent_stop(agent_pid, stdin_w), 0, "fifo page: the agent exits with 0");
	ok(stat(fifo_page, &st) < 0 && errno == ENOENT, "fifo page: ... and removes the page");

	/* No agent: the handle finds the page retired and none to follow;
	 * its command stays in the FIFO, and its reply is owed. */
	is_int(perfgate_ping(pg), -ECONNRESET, "fifo page: no agent: a call fails, -ECONNRESET");

	/* The next agent on the same FIFOs: the handle takes its page, and the
	 * reply owed from before is dropped, not taken for a new call's. */
	agent_pid = fifo_agent_start(false, &stdin_w);
	fifo_agent_wait(agent_pid);
	is_int(perfgate_ping(pg), 0, "fifo page: the old handle reaches the next agent");
	ok(maps_page(), "fifo page: ... through the next agent's page");
	is_int(pairs(pg, "n", 3), 0, "fifo page: ... and every reply after is its own");

	/* Killed, it leaves the page; the next agent takes it over (its clients
	 * still map it) and forgives what the dead one owed. */
	ino = page_ino();
	if (page)
		munmap(page, CTL_LOCK_PAGE_SIZE);
	page = fifo_page_map();
	kill(agent_pid, SIGKILL);
	fifo_agent_stop(agent_pid, stdin_w);
	ok(page && page_ino() == ino, "fifo page: a killed agent leaves its page");
	if (page)
		page->owed = 7;
	agent_pid = fifo_agent_start(false, &stdin_w);
	fifo_agent_wait(agent_pid);
	ok(page && page->owed == 0, "fifo page: the next agent forgives the 7 owed replies");
	ok(page_ino() == ino, "fifo page: the next agent keeps that page");
	is_int(perfgate_ping(pg), 0, "fifo page: ... and a call goes through on it");
	is_int(fifo_agent_stop(agent_pid, stdin_w), 0, "fifo page: that agent exits with 0");
	if (page)
		munmap(page, CTL_LOCK_PAGE_SIZE);

	/* An agent killed on other FIFOs leaves its page; the next agent of
	 * this user, on any FIFO, removes it. */
	{
		char other_ctl[600], other_ack[600], other_page[600];
		struct timespec old_times[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };
		struct stat ost;

		snprintf(other_ctl, sizeof(other_ctl), "%s.other", fifo_ctl);
		snprintf(other_ack, sizeof(other_ack), "%s.other", fifo_ack);
		if (mkfifo(other_ctl, 0600) || mkfifo(other_ack, 0600) || stat(other_ctl, &ost))
			perror("fifo page: other FIFOs");
		snprintf(other_page, sizeof(other_page), "/dev/shm" CTL_LOCK_NAME_FMT,
			 (unsigned long long)ost.st_dev, (unsigned long long)ost.st_ino);
		agent_pid = fifo_agent_on(other_ctl, other_ack, false, &stdin_w);
		fifo_agent_wait_on(agent_pid, other_ctl, other_ack);
		kill(agent_pid, SIGKILL);
		fifo_agent_stop(agent_pid, stdin_w);
		/* Pages are left alone for a minute after they were made (the
		 * crashed agent's restart takes them over): make it old. */
		ok(utimensat(AT_FDCWD, other_page, old_times, 0) == 0,
		   "fifo page: an agent killed on other FIFOs leaves its page (made an hour old)");
		agent_pid = fifo_agent_start(false, &stdin_w);
		fifo_agent_wait(agent_pid);
		ok(stat(other_page, &ost) < 0 && errno == ENOENT,
		   "fifo page: ... which the next agent, on these FIFOs, removes");
		is_int(fifo_agent_stop(agent_pid, stdin_w), 0, "fifo page: that agent exits with 0");
	}

	/* --control-shared: clients of other users could not open the page, so
	 * there is none, and every client takes the record lock. */
	agent_pid = fifo_agent_start(true, &stdin_w);
	fifo_agent_wait(agent_pid);
	is_int(perfgate_ping(pg), 0, "fifo page: --control-shared: the old handle reaches it");
	ok(!page_ino() && !maps_page(), "fifo page: ... with no page: the record lock");
	is_int(fifo_agent_stop(agent_pid, stdin_w), 0, "fifo page: --control-shared: exits with 0");
	perfgate_close(pg);
	close(ready[0]);
	close(ready[1]);
}

/* ---- main ---------------------------------------------------------------- */

static void test_agent(void)
{
	char json[512];

	agent_scenario("exact", 20);
	report_is("exact", EV "@w", 7);
	report_is("exact", EV, 11);
	path_of(json, sizeof(json), "exact", "json");
	is_int(json_file_window_count(json, "w"), 7, "exact: --json-file view of w counts 7");

	agent_scenario("threads", 1 + NTHREADS + 4);
	report_is("threads", EV "@w", NTHREADS * R * K);

	agent_scenario("names", 1 + NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		char ev[64];

		snprintf(ev, sizeof(ev), EV "@n%d", i);
		report_is("names", ev, R * (1 + 2 + 3 + 4));
	}

	agent_scenario("fork", 4);
	agent_scenario("fork_single", 6);
	agent_scenario("atfork", 2);
	agent_scenario("page", 13);
	agent_scenario("errors", 15);

	agent_scenario("ranges", 1 + 6);
	agent_scenario("long", 2 + 6);
	report_is("ranges", EV "@r", 3);

	run_under_agent("gone");
	is_int(replay_results("gone"), 4, "gone: the workload reported its 4 checks");
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/test_client.XXXXXX";
	ssize_t n;

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child_main(argv[2], argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_DFL);	/* so "no SIGPIPE death" means something */
	alarm(300);
	agent = getenv("PERFGATE");
	tmpdir = mkdtemp(dir);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!tmpdir || n <= 0) {
		perror("test_client set-up");
		return 1;
	}
	test_inert();
	test_opts();
	test_env_inert();
	test_reply_numbers();
	test_fake_agent();
	test_single_process();
	test_process_lock();
	test_page_partial_reply();
	test_fifo_paths(tmpdir);
	if (agent && *agent) {
		test_agent();
		test_fifo_page();
	}
	else
		printf("ok %d # SKIP PERFGATE is not set: no tests against the agent\n", ++tap_count);
	if (!tap_failed) {
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd))
			perror("rm");
	} else {
		printf("# files kept in %s\n", tmpdir);
	}
	return tap_done();
}
