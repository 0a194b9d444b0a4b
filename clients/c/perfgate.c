/*
 * libperfgate: the C client a program links to drive the perfgate agent
 * that runs it (docs/design.md, "The control protocol"; libperfgate(3) for
 * users).
 *
 * Each call writes one command line on the ctl fd and waits, within a
 * timeout, for its one reply line on the ack fd.  Many callers may share a
 * channel, and two locks keep their command/reply pairs from interleaving:
 *
 *  - Threads: one process-wide mutex around every pair.
 *  - Processes: children forked by the workload, and programs it starts
 *    with posix_spawn or system(), inherit the same pipes, so each pair
 *    also holds a lock that other processes see:
 *     - On the channel the agent gives its workload, the mutex in the
 *       channel's lock page (proto/ctl_lock.h): shared memory, so taking
 *       it costs no system call while nobody else waits.
 *     - On a private FIFO channel, the mutex of the page the agent names
 *       after the ctl FIFO (/dev/shm/perfgate-lock.DEV.INO), however the
 *       handle reached the FIFO (by path, or fds in opts).
 *     - Elsewhere (--control-shared FIFOs, fds of other pipes), a
 *       POSIX record lock (fcntl F_WRLCK) on the ctl pipe: two system
 *       calls per command, a visible part of a round trip (bench/README.md,
 *       client-lock).  Checked on Linux 6.18: record locks work on pipes and
 *       FIFOs (the lock sits on the pipe's inode, so it covers every fd of
 *       that pipe), another process gets EAGAIN while one holds it, and a
 *       forked child does not inherit its parent's lock.  F_WRLCK needs an
 *       fd open for writing, which the ctl fd is.
 *    A handle opened single_process takes neither until this process
 *    forks (pthread_atfork tells).  The library cannot tell on its own
 *    that no other process uses the channel: posix_spawn and system() run
 *    no fork handler.
 *
 * Every handle on a pipe holds a read end of the ctl pipe of its own, so a
 * write never raises SIGPIPE and needs no signal mask around it (two system
 * calls more): an agent that is gone shows as ECONNRESET on the reply
 * channel.  Only a ctl fd that is not a pipe (a socket) is written with
 * SIGPIPE blocked around the write.
 *
 * Record locks belong to a process, not to an fd or a thread.  That is why
 * the mutex is one for the whole process rather than one per handle (two
 * handles on one pipe would otherwise both "hold" the record lock at once),
 * and why fds are closed only under the mutex (closing any fd of a pipe
 * drops the process's lock on it).  pthread_atfork takes the mutex around
 * fork(), so a child never starts with it held by a thread it does not have.
 *
 * Without an agent in the environment a handle is inert: every call
 * returns 0 at once, so the same binary runs with and without perfgate.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "clients/c/perfgate.h"
#include "proto/ctl_lock.h"
#include "proto/ctl_proto.h"

/* The public header promises room for any short reply without including
 * the protocol's header: the two limits are one. */
_Static_assert(PERFGATE_REPLY_MAX == CTL_REPLY_MAX,
	       "PERFGATE_REPLY_MAX is the protocol's CTL_REPLY_MAX");

struct perfgate {
	bool inert;
	int ctl_fd, ack_fd;	/* our own close-on-exec, non-blocking fds */
	/* A read end of the ctl pipe of our own, so that a write never raises
	 * SIGPIPE and needs no signal mask around it (two system calls).  The
	 * agent's death then shows on the reply channel (ECONNRESET) rather
	 * than as EPIPE.  -1 when the ctl fd is not a pipe. */
	int ctl_reader_fd;
	/* The channel's lock page (proto/ctl_lock.h), mapped, or NULL: then
	 * the record lock keeps processes apart. */
	struct ctl_lock_page *lock_page;
	bool page_by_name;	/* it was a FIFO's named page (proto/ctl_lock.h) */
	/* No page when opened, on a FIFO: the agent makes its page before it
	 * reads the ctl FIFO, but a reader of someone else's (another client,
	 * a script holding the FIFO open read-write) lets us connect before
	 * that.  Looked for on each call until the agent has answered one. */
	bool find_page;
	int timeout_ms;
	/* Reply state, only touched under channel_mutex.  A forked child gets
	 * a copy that belongs to its parent; generation tells them apart. */
	unsigned generation;
	bool single_process;	/* no process lock until a fork */
	unsigned owed;		/* replies due for commands already written
				 * (in the lock page instead when there is one) */
	size_t len;		/* bytes read from ack_fd but not yet used */
	size_t cap;		/* buf's size: CTL_REPLY_MAX, grown for a long
				 * window-end reply up to CTL_REPLY_LONG_MAX */
	char *buf;
};

static pthread_mutex_t channel_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned fork_generation;	/* bumped in every forked child */
static bool forked;		/* this process or an ancestor has forked since
				 * the first perfgate_open: record locks for all */

/* ---- errors -------------------------------------------------------------- */

static __thread char last_error[256];

const char *perfgate_last_error(void)
{
	return last_error;
}

/* Record why a call failed; returns -err with errno set to err. */
__attribute__((format(printf, 2, 3)))
static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	errno = err;
	return -err;
}

/* ---- time ---------------------------------------------------------------- */

static struct timespec deadline_in(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* Milliseconds left before the deadline, rounded up; 0 once it passed. */
static int ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long long ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (deadline->tv_sec - now.tv_sec) * 1000000000LL + (deadline->tv_nsec - now.tv_nsec);
	return ns <= 0 ? 0 : (int)((ns + 999999) / 1000000);
}

/* 0 when fd is ready for events (or hung up), -ETIMEDOUT at the deadline. */
static int wait_fd(int fd, short events, const struct timespec *deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&p, 1, ms_left(deadline));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

/* ---- locking ------------------------------------------------------------- */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&channel_mutex);
	forked = true;		/* parent and child both share the channel now */
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&channel_mutex);
}

static void atfork_child(void)
{
	fork_generation++;
	pthread_mutex_unlock(&channel_mutex);
}

static void atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/*
 * Take the record lock on the ctl pipe.  F_SETLKW could wait forever behind
 * a process stopped while it holds the lock; retrying F_SETLK after short,
 * growing pauses (20 us to 1.3 ms) keeps the call's timeout.  A holder keeps
 * the lock for one round trip only.
 */
static int channel_lock(struct perfgate *pg, const struct timespec *deadline)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct timespec pause = { 0, 20000 };

	while (fcntl(pg->ctl_fd, F_SETLK, &lock) < 0) {
		if (errno != EAGAIN && errno != EACCES)
			return fail(errno, "cannot lock the control channel: %s", strerror(errno));
		if (!ms_left(deadline))
			return fail(ETIMEDOUT, "timed out after %d ms: another process kept "
				    "the control channel busy", pg->timeout_ms);
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 1000000)
			pause.tv_nsec *= 2;
	}
	return 0;
}

static void channel_unlock(struct perfgate *pg)
{
	struct flock lock = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

	fcntl(pg->ctl_fd, F_SETLK, &lock);
}

static struct ctl_lock_page *lock_page_named(int ctl_fd, int ack_fd);

/* page_lock found no page: the record lock is taken instead. */
#define NO_PAGE 1

/*
 * Take the lock page's mutex.  A holder that died (EOWNERDEAD) left the
 * channel whole: a command is written in one piece or not at all, and a
 * reply it did not read is counted in the page's owed, so the lock is
 * simply ours now.
 */
static int page_lock(struct perfgate *pg, const struct timespec *deadline)
{
	/* A handle whose named page went away looks for the next agent's on
	 * every call (one failed open) rather than settle for the record
	 * lock while that agent's other clients take its page. */
	if (!pg->lock_page && (pg->page_by_name || pg->find_page)) {
		pg->lock_page = lock_page_named(pg->ctl_fd, pg->ack_fd);
		pg->page_by_name |= pg->lock_page != NULL;
	}
	while (pg->lock_page) {
		pthread_mutex_t *mutex = &pg->lock_page->mutex;
		int rc = pthread_mutex_clocklock(mutex, CLOCK_MONOTONIC, deadline);

		if (rc == EOWNERDEAD)
			rc = pthread_mutex_consistent(mutex);
		if (rc == ETIMEDOUT)
			return fail(ETIMEDOUT, "timed out after %d ms: another process kept the "
				    "control channel busy", pg->timeout_ms);
		if (rc)
			return fail(rc, "cannot take the control channel's lock: %s",
				    strerror(rc));
		if (!__atomic_load_n(&pg->lock_page->retired, __ATOMIC_ACQUIRE)) {
			/* Replies owed under the lock this handle held before
			 * (below) are owed on this page now. */
			pg->lock_page->owed += pg->owed;
			pg->owed = 0;
			return 0;
		}
		/* The agent that made the page no longer serves the channel.
		 * One started since on the same FIFOs has a page of its own, or
		 * none, and its other clients take that: so does this one,
		 * taking along the replies the old page owed (the first client
		 * to leave it takes them all) for whichever lock comes next. */
		pg->owed += pg->lock_page->owed;
		pg->lock_page->owed = 0;
		pthread_mutex_unlock(mutex);
		munmap(pg->lock_page, CTL_LOCK_PAGE_SIZE);
		pg->lock_page = lock_page_named(pg->ctl_fd, pg->ack_fd);
	}
	return NO_PAGE;
}

/* ---- one command, one reply ---------------------------------------------- */

/*
 * write() without SIGPIPE: a program must not die because its agent exited.
 * SIGPIPE is blocked in this thread around the write and, if the write
 * raised it, taken back off the queue (unless one was pending already).
 * Only a SIGPIPE the thread had blocked itself can be pending before the
 * write, so sigpending() is asked only then: one system call less.
 */
static ssize_t write_nosigpipe(int fd, const void *data, size_t len)
{
	sigset_t pipe_set, old, pending;
	struct timespec zero = { 0, 0 };
	bool was_pending = false;
	ssize_t n;
	int err;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	if (sigismember(&old, SIGPIPE) && sigpending(&pending) == 0)
		was_pending = sigismember(&pending, SIGPIPE);
	n = write(fd, data, len);
	err = errno;
	if (n < 0 && err == EPIPE && !was_pending)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

/*
 * Write "line\n".  Callers keep lines under PIPE_BUF bytes, so on a pipe or
 * FIFO the kernel writes each in one piece or not at all: no other writer's
 * bytes can land inside a command, and a timeout never leaves half of one.
 */
static int write_line(struct perfgate *pg, const char *line, const struct timespec *deadline)
{
	char out[PIPE_BUF];
	size_t len = strlen(line), done = 0;
	ssize_t n;
	int rc;

	memcpy(out, line, len);
	out[len++] = '\n';
	while (done < len) {
		n = pg->ctl_reader_fd >= 0 ? write(pg->ctl_fd, out + done, len - done) :
					     write_nosigpipe(pg->ctl_fd, out + done, len - done);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EPIPE)
			return fail(EPIPE, "the agent is gone: nobody reads its control channel");
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return fail(errno, "cannot write to the agent: %s", strerror(errno));
		rc = wait_fd(pg->ctl_fd, POLLOUT, deadline);
		if (rc == -ETIMEDOUT)
			return fail(ETIMEDOUT, "timed out after %d ms: the agent does not read "
				    "its control channel", pg->timeout_ms);
		if (rc)
			return fail(-rc, "cannot wait for the control channel: %s", strerror(-rc));
	}
	return 0;
}

/* A window-end reply over many events is longer than most: room for it
 * grows, up to the longest reply the agent sends. */
static int buf_grow(struct perfgate *pg)
{
	size_t cap = pg->cap * 2;
	char *buf;

	if (pg->cap >= CTL_REPLY_LONG_MAX)
		return -1;
	if (cap > CTL_REPLY_LONG_MAX)
		cap = CTL_REPLY_LONG_MAX;
	buf = realloc(pg->buf, cap);
	if (!buf)
		return -1;
	pg->buf = buf;
	pg->cap = cap;
	return 0;
}

static void buf_drop(struct perfgate *pg, size_t n)
{
	memmove(pg->buf, pg->buf + n, pg->len - n);
	pg->len -= n;
}

/*
 * Read until pg->buf starts with a whole reply line; *len is its length,
 * without the '\n'.  The NUL that follows each reply on the wire
 * ("ack\n\0", perf's framing) is dropped when it starts the buffer.
 */
static int read_line(struct perfgate *pg, const struct timespec *deadline, size_t *len)
{
	char *nl;
	size_t nuls;
	ssize_t n;
	int rc;

	for (;;) {
		for (nuls = 0; nuls < pg->len && pg->buf[nuls] == '\0'; nuls++)
			;
		buf_drop(pg, nuls);
		nl = memchr(pg->buf, '\n', pg->len);
		if (nl) {
			*len = (size_t)(nl - pg->buf);
			pg->find_page = false;	/* an agent serves the channel */
			return 0;
		}
		if (pg->len == pg->cap && buf_grow(pg)) {
			pg->len = 0;
			return fail(EPROTO, "reply from the agent longer than %zu bytes", pg->cap);
		}
		/* With nothing buffered the reply has rarely arrived yet: poll
		 * first, rather than a read that fails with EAGAIN, then poll,
		 * then read again -- one system call less per command. */
		if (!pg->len) {
			rc = wait_fd(pg->ack_fd, POLLIN, deadline);
			if (rc == -ETIMEDOUT)
				return fail(ETIMEDOUT, "timed out after %d ms waiting for the "
					    "agent's reply", pg->timeout_ms);
			if (rc)
				return fail(-rc, "cannot wait for the agent's reply: %s",
					    strerror(-rc));
		}
		n = read(pg->ack_fd, pg->buf + pg->len, pg->cap - pg->len);
		if (n > 0) {
			pg->len += (size_t)n;
			continue;
		}
		if (n == 0)
			return fail(ECONNRESET, "the agent is gone: its reply channel was closed");
		if (errno != EAGAIN && errno != EINTR)
			return fail(errno, "cannot read from the agent: %s", strerror(errno));
		rc = wait_fd(pg->ack_fd, POLLIN, deadline);
		if (rc == -ETIMEDOUT)
			return fail(ETIMEDOUT, "timed out after %d ms waiting for the agent's reply",
				    pg->timeout_ms);
		if (rc)
			return fail(-rc, "cannot wait for the agent's reply: %s", strerror(-rc));
	}
}

static void copy_text(char *dst, size_t size, const char *text, size_t len)
{
	if (!dst || !size)
		return;
	if (len >= size)
		len = size - 1;
	memcpy(dst, text, len);
	dst[len] = '\0';
}

/* Turn a reply line into the call's result: its payload goes to reply. */
static int reply_use(const char *line, size_t len, char *reply, size_t reply_size)
{
	const char *text;
	size_t text_len;
	bool ok;

	if (ctl_reply_parse(line, len, &ok, &text, &text_len))
		return fail(EPROTO, "malformed reply from the agent: '%.*s'",
			    (int)(len < 80 ? len : 80), line);
	copy_text(reply, reply_size, text, text_len);
	if (!ok)
		return fail(EREMOTEIO, "agent: %.*s", (int)text_len, text);
	if (reply && text_len >= reply_size)
		return fail(ENOBUFS, "the reply needs %zu bytes, the buffer has %zu "
			    "(the command itself succeeded)", text_len + 1, reply_size);
	return 0;
}

/*
 * Write a command and read replies until none is owed: replies to commands
 * that timed out earlier come first on the wire and are dropped, so a late
 * reply is never taken for this command's.
 */
static int round_trip(struct perfgate *pg, unsigned *owed, const char *line, char *reply,
		      size_t reply_size, const struct timespec *deadline)
{
	size_t len = 0;
	int rc;

	rc = write_line(pg, line, deadline);
	if (rc)
		return rc;
	(*owed)++;
	while (*owed) {
		rc = read_line(pg, deadline, &len);
		if (rc)
			return rc;
		if (--*owed == 0)
			rc = reply_use(pg->buf, len, reply, reply_size);
		buf_drop(pg, len + 1);
	}
	return rc;
}

/* One command and its reply, alone on the channel. */
static int exchange(struct perfgate *pg, const char *line, char *reply, size_t reply_size)
{
	struct timespec deadline = deadline_in(pg->timeout_ms);
	int rc;

	rc = pthread_mutex_clocklock(&channel_mutex, CLOCK_MONOTONIC, &deadline);
	if (rc == ETIMEDOUT)
		return fail(rc, "timed out after %d ms: another thread kept the control "
			    "channel busy", pg->timeout_ms);
	if (rc)
		return fail(rc, "cannot take the channel mutex: %s", strerror(rc));
	if (pg->generation != fork_generation) {
		/* Forked: what the parent is owed and has buffered is its own.
		 * Before a lock is chosen: page_lock moves the handle's count
		 * onto the page. */
		pg->generation = fork_generation;
		pg->owed = 0;
		pg->len = 0;
	}
	if (pg->single_process && !forked) {
		rc = round_trip(pg, &pg->owed, line, reply, reply_size, &deadline);
	} else if ((rc = page_lock(pg, &deadline)) == 0) {
		/* The channel's count: a reply another process left unread is
		 * dropped here too. */
		rc = round_trip(pg, &pg->lock_page->owed, line, reply, reply_size, &deadline);
		/* A call that timed out may leave the head of its reply here;
		 * the page's count owes that whole line, so the next holder, in
		 * any process, reads the rest as one. */
		pg->len = 0;
		pthread_mutex_unlock(&pg->lock_page->mutex);
	} else if (rc == NO_PAGE) {
		bool looking = pg->find_page;

		rc = channel_lock(pg, &deadline);
		if (!rc) {
			rc = round_trip(pg, &pg->owed, line, reply, reply_size, &deadline);
			channel_unlock(pg);
		}
		/* The agent answered (read_line), so it serves the channel: its
		 * page, if it makes one, exists by now.  None then means none
		 * to find (a --control-shared channel). */
		if (looking && !pg->find_page) {
			pg->lock_page = lock_page_named(pg->ctl_fd, pg->ack_fd);
			pg->page_by_name = pg->lock_page != NULL;
		}
	}
	pthread_mutex_unlock(&channel_mutex);
	if (rc)
		errno = -rc;	/* unlocking may have changed it */
	return rc;
}

/* ---- opening ------------------------------------------------------------- */

/* Fields a caller built against an older header did not have read as def. */
#define OPTS_HAS(o, f) ((o) && (o)->sz >= offsetof(struct perfgate_opts, f) + sizeof((o)->f))
#define OPTS_GET(o, f, def) (OPTS_HAS(o, f) ? (o)->f : (def))

/* A caller built against a newer header may pass a bigger struct, as long
 * as the fields this library does not know are zero. */
static bool opts_valid(const struct perfgate_opts *opts)
{
	if (opts->sz < sizeof(opts->sz))
		return false;
	for (size_t i = sizeof(*opts); i < opts->sz; i++)
		if (((const char *)opts)[i])
			return false;
	return true;
}

static int parse_int(const char *text, int *value)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 0 || v > INT_MAX)
		return -1;
	*value = (int)v;
	return 0;
}

/*
 * Our own fd on the caller's pipe.  A pipe or FIFO is reopened through
 * /proc, which makes a new open file description: ours can be non-blocking
 * without changing the caller's (a shell script reading the same pipe would
 * see EAGAIN).  Anything else is duplicated and made non-blocking.
 */
static int reopen_fd(int fd, int mode, const char *what)
{
	char path[40];
	struct stat st;
	int flags = fcntl(fd, F_GETFL), nfd;

	if (flags < 0 || fstat(fd, &st) < 0)
		return fail(EBADF, "%s: fd %d is not open", what, fd);
	if ((flags & O_ACCMODE) != mode && (flags & O_ACCMODE) != O_RDWR)
		return fail(EBADF, "%s: fd %d is not open for %s", what, fd,
			    mode == O_WRONLY ? "writing" : "reading");
	if (S_ISFIFO(st.st_mode)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		nfd = open(path, mode | O_NONBLOCK | O_CLOEXEC);
		if (nfd >= 0)
			return nfd;
		if (errno == ENXIO)
			return fail(ENXIO, "%s: nobody reads fd %d: is the agent running?", what, fd);
	}
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return fail(errno, "%s: cannot use fd %d: %s", what, fd, strerror(errno));
	fcntl(nfd, F_SETFL, flags | O_NONBLOCK);
	return nfd;
}

/* A read end of the pipe or FIFO fd writes to, or -1 (a socket, say:
 * its writes then go through write_nosigpipe). */
static int open_reader(int fd)
{
	char path[40];
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

/* The page in fd, mapped, if it is the agent's for the channel ctl/ack. */
static struct ctl_lock_page *lock_page_check(int fd, const struct stat *ctl, const struct stat *ack)
{
	struct ctl_lock_page *page;

	page = mmap(NULL, CTL_LOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED)
		return NULL;
	if (ctl_lock_page_whole(page) && page->ctl_ino == ctl->st_ino &&
	    page->ack_ino == ack->st_ino)
		return page;
	munmap(page, CTL_LOCK_PAGE_SIZE);
	return NULL;
}

/*
 * The lock page PERFGATE_LOCK_FD names, mapped, when it is the agent's page
 * for the channel of ctl_fd and ack_fd (proto/ctl_lock.h); NULL otherwise.
 * It must be sealed against shrinking: a page cut short under the mapping
 * would raise SIGBUS at the next command.
 */
static struct ctl_lock_page *lock_page_map(int ctl_fd, int ack_fd)
{
	const char *env = getenv(CTL_LOCK_ENV);
	struct stat page_st, ctl, ack;
	int fd, seals;

	if (!env || !*env || parse_int(env, &fd) || fstat(fd, &page_st) ||
	    !S_ISREG(page_st.st_mode) || page_st.st_size < CTL_LOCK_PAGE_SIZE)
		return NULL;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(ctl_fd, &ctl) || fstat(ack_fd, &ack))
		return NULL;
	return lock_page_check(fd, &ctl, &ack);
}

/*
 * The named page of a FIFO channel (proto/ctl_lock.h), mapped, when the
 * agent made it; NULL otherwise (no such name: a shared channel, a pipe,
 * an older agent).  The agent's page is the ctl FIFO's owner's alone; a
 * file under the name that is not was put there by someone else, and is
 * ignored.  It cannot be sealed (a tmpfs file is not a memfd), but only
 * its owner, who owns the channel too, could shrink it.
 */
static struct ctl_lock_page *lock_page_named(int ctl_fd, int ack_fd)
{
	char name[CTL_LOCK_NAME_MAX];
	struct stat page_st, ctl, ack;
	struct ctl_lock_page *page = NULL;
	int fd;

	if (fstat(ctl_fd, &ctl) || fstat(ack_fd, &ack) || !S_ISFIFO(ctl.st_mode))
		return NULL;
	ctl_lock_name(name, &ctl);
	fd = shm_open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &page_st) == 0 && S_ISREG(page_st.st_mode) &&
	    page_st.st_uid == ctl.st_uid && !(page_st.st_mode & 077) &&
	    page_st.st_size >= CTL_LOCK_PAGE_SIZE)
		page = lock_page_check(fd, &ctl, &ack);
	close(fd);
	return page;
}

/* A FIFO by path: not through a symbolic link, and it must be a FIFO. */
static int open_fifo(const char *path, int mode, const char *what)
{
	struct stat st;
	int fd = open(path, mode | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW), err = errno;

	if (fd < 0)
		return fail(err, "cannot open the %s FIFO '%s': %s%s", what, path, strerror(err),
			    err == ENXIO ? " (no agent reads it: start perfgate --control fifo:...)" :
			    err == ELOOP ? " (it is a symbolic link: give the FIFO itself)" : "");
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		close(fd);
		return fail(EINVAL, "the %s path '%s' is not a FIFO", what, path);
	}
	return fd;
}

/* The ack side is opened first: the error path then never closes a ctl fd,
 * which would drop a record lock another handle of ours holds on it. */
static int connect_fds(struct perfgate *pg, int ctl_fd, int ack_fd, const char *what)
{
	pg->ack_fd = reopen_fd(ack_fd, O_RDONLY, what);
	if (pg->ack_fd < 0)
		return pg->ack_fd;
	pg->ctl_fd = reopen_fd(ctl_fd, O_WRONLY, what);
	return pg->ctl_fd < 0 ? pg->ctl_fd : 0;
}

static int connect_paths(struct perfgate *pg, const char *ctl_path, const char *ack_path)
{
	pg->ack_fd = open_fifo(ack_path, O_RDONLY, "ack");
	if (pg->ack_fd < 0)
		return pg->ack_fd;
	pg->ctl_fd = open_fifo(ctl_path, O_WRONLY, "ctl");
	return pg->ctl_fd < 0 ? pg->ctl_fd : 0;
}

/* Make pg inert, keeping the reason for perfgate_last_error(); not a failure. */
__attribute__((format(printf, 2, 3)))
static int go_inert(struct perfgate *pg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	pg->inert = true;
	return 0;
}

static bool fd_is_fifo(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* Is fd one end of a pipe or FIFO, open for mode?  Its inode goes to ino. */
static bool fd_is_pipe_end(int fd, int mode, ino_t *ino)
{
	struct stat st;
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return false;
	*ino = st.st_ino;
	return (flags & O_ACCMODE) == mode || (flags & O_ACCMODE) == O_RDWR;
}

/*
 * The channel the agent exports to its workload.  None at all means inert.
 * So do descriptors that are not the agent's: closed since (a stale
 * environment inherited without its fds), not pipes of the right direction
 * (PERFGATE_CTL_FD=1 on a terminal), or other pipes than the ones
 * PERFGATE_CHANNEL_ID names.  Writing commands into such a file would
 * corrupt it; a program run outside perfgate must run as if alone.
 */
static int connect_env(struct perfgate *pg)
{
	const char *ctl = getenv("PERFGATE_CTL_FD"), *ack = getenv("PERFGATE_ACK_FD");
	const char *id = getenv("PERFGATE_CHANNEL_ID");
	unsigned long long want_ctl, want_ack;
	ino_t ctl_ino, ack_ino;
	int ctl_fd, ack_fd, end;

	if ((!ctl || !*ctl) && (!ack || !*ack))
		return go_inert(pg, "inert: no agent in the environment");
	if (!ctl || !ack || parse_int(ctl, &ctl_fd) || parse_int(ack, &ack_fd))
		return fail(EINVAL, "PERFGATE_CTL_FD ('%s') and PERFGATE_ACK_FD ('%s') must both "
			    "be file descriptor numbers", ctl ? ctl : "", ack ? ack : "");
	if (!fd_is_pipe_end(ctl_fd, O_WRONLY, &ctl_ino) ||
	    !fd_is_pipe_end(ack_fd, O_RDONLY, &ack_ino) || ctl_ino == ack_ino)
		return go_inert(pg, "inert: PERFGATE_CTL_FD %d and PERFGATE_ACK_FD %d are not "
				"the agent's pipes (closed, or other files)", ctl_fd, ack_fd);
	if (id && *id) {
		if (sscanf(id, "%llu:%llu%n", &want_ctl, &want_ack, &end) != 2 || id[end])
			return fail(EINVAL, "PERFGATE_CHANNEL_ID ('%s') must be CTL_INODE:ACK_INODE",
				    id);
		if (want_ctl != (unsigned long long)ctl_ino || want_ack != (unsigned long long)ack_ino)
			return go_inert(pg, "inert: PERFGATE_CTL_FD %d and PERFGATE_ACK_FD %d are "
					"other pipes than PERFGATE_CHANNEL_ID names", ctl_fd, ack_fd);
	}
	return connect_fds(pg, ctl_fd, ack_fd, "PERFGATE_CTL_FD/PERFGATE_ACK_FD");
}

static int connect_opts(struct perfgate *pg, const struct perfgate_opts *opts)
{
	const char *ctl_path = OPTS_GET(opts, ctl_path, NULL);
	const char *ack_path = OPTS_GET(opts, ack_path, NULL);
	int ctl_fd = OPTS_GET(opts, ctl_fd, -1), ack_fd = OPTS_GET(opts, ack_fd, -1);

	if (ctl_path || ack_path) {
		if (!ctl_path || !ack_path || ctl_fd >= 0 || ack_fd >= 0)
			return fail(EINVAL, "give both ctl_path and ack_path, and no fds with them");
		return connect_paths(pg, ctl_path, ack_path);
	}
	if (ctl_fd >= 0 || ack_fd >= 0) {
		if (ctl_fd < 0 || ack_fd < 0)
			return fail(EINVAL, "give both ctl_fd and ack_fd");
		return connect_fds(pg, ctl_fd, ack_fd, "opts");
	}
	return connect_env(pg);
}

static int timeout_from(const struct perfgate_opts *opts, int *ms)
{
	const char *env = getenv("PERFGATE_TIMEOUT_MS");

	*ms = OPTS_GET(opts, timeout_ms, 0);
	if (*ms < 0)
		return fail(EINVAL, "timeout_ms (%d) is negative", *ms);
	if (!*ms && env && *env && (parse_int(env, ms) || *ms == 0))
		return fail(EINVAL, "PERFGATE_TIMEOUT_MS ('%s') is not a positive number of "
			    "milliseconds", env);
	if (!*ms)
		*ms = PERFGATE_TIMEOUT_MS_DEFAULT;
	return 0;
}

int perfgate_open(struct perfgate **pgp, const struct perfgate_opts *opts)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
	struct perfgate *pg;
	int rc;

	if (!pgp)
		return fail(EINVAL, "perfgate_open: pg is NULL");
	*pgp = NULL;
	if (opts && !opts_valid(opts))
		return fail(EINVAL, "perfgate_open: opts->sz (%zu) does not fit this library's "
			    "struct perfgate_opts (start from PERFGATE_OPTS_INIT)", opts->sz);
	pthread_once(&atfork_once, atfork_register);
	pg = calloc(1, sizeof(*pg));
	if (pg) {
		pg->cap = CTL_REPLY_MAX;
		pg->buf = malloc(pg->cap);
	}
	if (!pg || !pg->buf) {
		free(pg);
		return fail(ENOMEM, "perfgate_open: out of memory");
	}
	pg->ctl_fd = pg->ack_fd = pg->ctl_reader_fd = -1;
	pg->generation = fork_generation;
	pg->single_process = OPTS_GET(opts, single_process, false);
	rc = connect_opts(pg, opts);
	if (!rc && !pg->inert)
		rc = timeout_from(opts, &pg->timeout_ms);
	if (!rc && !pg->inert) {
		pg->ctl_reader_fd = open_reader(pg->ctl_fd);
		pg->lock_page = lock_page_map(pg->ctl_fd, pg->ack_fd);
		if (!pg->lock_page) {
			pg->lock_page = lock_page_named(pg->ctl_fd, pg->ack_fd);
			pg->page_by_name = pg->lock_page != NULL;
			pg->find_page = !pg->lock_page && fd_is_fifo(pg->ctl_fd);
		}
	}
	if (rc) {
		perfgate_close(pg);
		errno = -rc;
		return rc;
	}
	*pgp = pg;
	return 0;
}

/* ---- the process's default handle ---------------------------------------- */

static struct perfgate *default_pg;
static int default_err;
static char default_msg[sizeof(last_error)];

static void default_open(void)
{
	default_err = perfgate_open(&default_pg, NULL);
	if (default_err)
		snprintf(default_msg, sizeof(default_msg), "%s", last_error);
}

struct perfgate *perfgate_default(void)
{
	static pthread_once_t default_once = PTHREAD_ONCE_INIT;

	pthread_once(&default_once, default_open);
	if (!default_pg)
		fail(-default_err, "%s", default_msg);
	return default_pg;
}

void perfgate_close(struct perfgate *pg)
{
	if (!pg || pg == default_pg)
		return;
	/* Closing an fd of the ctl pipe drops this process's record lock on
	 * it: wait until no thread is using a channel. */
	pthread_mutex_lock(&channel_mutex);
	if (pg->ctl_fd >= 0)
		close(pg->ctl_fd);
	if (pg->ack_fd >= 0)
		close(pg->ack_fd);
	if (pg->ctl_reader_fd >= 0)
		close(pg->ctl_reader_fd);
	pthread_mutex_unlock(&channel_mutex);
	if (pg->lock_page)
		munmap(pg->lock_page, CTL_LOCK_PAGE_SIZE);
	free(pg->buf);
	free(pg);
}

bool perfgate_is_inert(const struct perfgate *pg)
{
	return pg && pg->inert;
}

/* ---- commands ------------------------------------------------------------ */

int perfgate_command(struct perfgate *pg, const char *line, char *reply, size_t reply_size)
{
	if (reply && reply_size)
		reply[0] = '\0';
	if (!pg)
		return fail(EINVAL, "no perfgate handle (did perfgate_open() or "
			    "perfgate_default() fail?)");
	if (pg->inert)
		return 0;
	/* A blank line is no command: the agent, as perf, sends no reply,
	 * and one counted as owed would make the next caller drop another's. */
	if (!line || ctl_line_is_empty(line, strlen(line)) || strchr(line, '\n') ||
	    strlen(line) >= PIPE_BUF)
		return fail(EINVAL, "a command is one non-empty line of fewer than %d bytes",
			    PIPE_BUF);
	return exchange(pg, line, reply, reply_size);
}

int perfgate_enable(struct perfgate *pg)
{
	return perfgate_command(pg, "enable", NULL, 0);
}

int perfgate_disable(struct perfgate *pg)
{
	return perfgate_command(pg, "disable", NULL, 0);
}

int perfgate_ping(struct perfgate *pg)
{
	return perfgate_command(pg, "ping", NULL, 0);
}

/* The agent's rule, checked here so a bad name fails before any I/O. */
static bool name_valid(const char *name)
{
	size_t len = name ? strnlen(name, CTL_NAME_MAX + 1) : 0;

	return len > 0 && len <= CTL_NAME_MAX &&
	       strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_.:-") == len;
}

static int window_command(struct perfgate *pg, const char *verb, const char *name,
			  char *json, size_t json_size)
{
	char line[32 + CTL_NAME_MAX];

	if (!pg || pg->inert)
		return perfgate_command(pg, NULL, json, json_size);
	if (json && json_size)
		json[0] = '\0';
	if (!name_valid(name))
		return fail(EINVAL, "bad window name '%.*s': give 1 to %d of A-Z a-z 0-9 _ . : -",
			    CTL_NAME_MAX + 1, name ? name : "(null)", CTL_NAME_MAX);
	snprintf(line, sizeof(line), "window %s %s", verb, name);
	return exchange(pg, line, json, json_size);
}

int perfgate_window_begin(struct perfgate *pg, const char *name)
{
	return window_command(pg, "begin", name, NULL, 0);
}

int perfgate_window_end(struct perfgate *pg, const char *name, char *json, size_t json_size)
{
	return window_command(pg, "end", name, json, json_size);
}

/* "range load NAME = SPEC": the agent parses SPEC and answers with the
 * place of a mistake; only the name and the line's length are checked here. */
int perfgate_range_load(struct perfgate *pg, const char *name, const char *spec)
{
	char line[CTL_LINE_MAX + 1];
	int n;

	if (!pg || pg->inert)
		return perfgate_command(pg, NULL, NULL, 0);
	if (!name_valid(name))
		return fail(EINVAL, "bad range name '%.*s': give 1 to %d of A-Z a-z 0-9 _ . : -",
			    CTL_NAME_MAX + 1, name ? name : "(null)", CTL_NAME_MAX);
	if (!spec || !*spec || strchr(spec, '\n'))
		return fail(EINVAL, "bad range spec: give one non-empty line");
	n = snprintf(line, sizeof(line), "range load %s = %s", name, spec);
	if (n < 0 || (size_t)n >= sizeof(line))
		return fail(EINVAL, "range spec too long (a command is at most %d bytes)",
			    CTL_LINE_MAX);
	return exchange(pg, line, NULL, 0);
}

int perfgate_range_unload(struct perfgate *pg, const char *name)
{
	char line[32 + CTL_NAME_MAX];

	if (!pg || pg->inert)
		return perfgate_command(pg, NULL, NULL, 0);
	if (!name_valid(name))
		return fail(EINVAL, "bad range name '%.*s': give 1 to %d of A-Z a-z 0-9 _ . : -",
			    CTL_NAME_MAX + 1, name ? name : "(null)", CTL_NAME_MAX);
	snprintf(line, sizeof(line), "range unload %s", name);
	return exchange(pg, line, NULL, 0);
}

/* ---- window-end replies as numbers --------------------------------------- */

/*
 * The reply is parsed with jansson on every call: these are for after a
 * window, not for its hot path, and a caller keeps no parsed state to free.
 * The reply's layout is docs/protocol.md's: {"window", "calls",
 * "call": {"time_ns", "counts", "ranges"}, "total": {"time_ns", "counts"},
 * "ranges"}.
 */
static json_t *reply_load(const char *json)
{
	json_t *reply;

	if (!json || !*json) {
		fail(ENOENT, "an empty reply (an inert handle's) has no events");
		return NULL;
	}
	reply = json_loads(json, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(reply) || !json_is_object(json_object_get(reply, "call")) ||
	    !json_is_object(json_object_get(reply, "total"))) {
		json_decref(reply);
		fail(EPROTO, "not a window-end reply: '%.60s'", json);
		return NULL;
	}
	return reply;
}

/* The object at PATH ("call.counts"), or an empty one. */
static json_t *reply_object(json_t *reply, const char *outer, const char *inner)
{
	json_t *o = json_object_get(reply, outer);

	if (inner)
		o = json_object_get(o, inner);
	return json_is_object(o) ? o : NULL;
}

/* One value into out (may be NULL): 0, -ENODATA for null, -EPROTO otherwise. */
static int reply_number(json_t *value, uint64_t *out)
{
	if (json_is_null(value))
		return -ENODATA;
	if (!json_is_integer(value) || json_integer_value(value) < 0)
		return -EPROTO;
	if (out)
		*out = (uint64_t)json_integer_value(value);
	return 0;
}

int perfgate_reply_count(const char *json, const char *event, uint64_t *call, uint64_t *total)
{
	json_t *reply = reply_load(json), *c, *t;
	bool range;
	int rc;

	if (!reply)
		return -errno;
	/* A range view ("event@label") is in the ranges objects. */
	range = event && strchr(event, '@');
	c = json_object_get(reply_object(reply, "call", range ? "ranges" : "counts"), event ? event : "");
	t = json_object_get(range ? reply_object(reply, "ranges", NULL) :
				    reply_object(reply, "total", "counts"), event ? event : "");
	if (!c || !t)
		rc = fail(ENOENT, "no event '%s' in the reply", event ? event : "(null)");
	else if ((rc = reply_number(c, call)) || (rc = reply_number(t, total)))
		rc = rc == -ENODATA ? fail(ENODATA, "'%s' is not supported on this machine", event)
				    : fail(EPROTO, "'%s' has no count in the reply", event);
	json_decref(reply);
	return rc;
}

int perfgate_reply_time(const char *json, uint64_t *call_ns, uint64_t *total_ns,
			unsigned long *calls)
{
	json_t *reply = reply_load(json);
	uint64_t n = 0;
	int rc;

	if (!reply)
		return -errno;
	rc = reply_number(json_object_get(reply_object(reply, "call", NULL), "time_ns"), call_ns);
	if (!rc)
		rc = reply_number(json_object_get(reply_object(reply, "total", NULL), "time_ns"),
				  total_ns);
	if (!rc)
		rc = reply_number(json_object_get(reply, "calls"), &n);
	if (rc)
		rc = fail(EPROTO, "the reply has no times or calls");
	else if (calls)
		*calls = (unsigned long)n;
	json_decref(reply);
	return rc;
}

int perfgate_reply_event(const char *json, size_t index, char *event, size_t size)
{
	json_t *reply = reply_load(json);
	json_t *lists[2];
	const char *key = NULL;
	json_t *value;
	int rc = 0;

	if (!reply)
		return -errno;
	lists[0] = reply_object(reply, "total", "counts");
	lists[1] = reply_object(reply, "ranges", NULL);
	for (size_t l = 0; l < 2 && !key; l++) {
		if (!lists[l])
			continue;
		json_object_foreach(lists[l], key, value) {
			if (index-- == 0)
				break;
		}
		/* foreach leaves key NULL when it ran off the end. */
	}
	if (!key)
		rc = fail(ENOENT, "the reply has fewer events");
	else if (!event || strlen(key) >= size)
		rc = fail(ENOBUFS, "event name '%s' needs %zu bytes", key, strlen(key) + 1);
	else
		memcpy(event, key, strlen(key) + 1);
	json_decref(reply);
	return rc;
}
