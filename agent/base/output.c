/*
 * output: the report's destination, written without blocking the loop
 * (see output.h for the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "agent/base/log.h"
#include "agent/base/output.h"

int output_check_path(const char *path, const char *what)
{
	struct stat link, dir;
	char *copy, *parent;
	int rc = 0;

	if (lstat(path, &link) < 0 || !S_ISLNK(link.st_mode))
		return 0;
	copy = strdup(path);
	if (!copy) {
		/* Unchecked, the link might be one the kernel would not follow. */
		log_error("cannot check %s '%s': out of memory", what, path);
		return -1;
	}
	parent = dirname(copy);
	/* fs.protected_symlinks: a link in a sticky world-writable directory
	 * is followed only by its owner, or when the directory's owner owns
	 * it too.  Only the owner of the link or of the directory can replace
	 * such a link, so the check cannot be raced. */
	if (stat(parent, &dir) == 0 && (dir.st_mode & S_ISVTX) && (dir.st_mode & S_IWOTH) &&
	    link.st_uid != geteuid() && link.st_uid != dir.st_uid) {
		log_error("refusing %s '%s': it is a symbolic link in the sticky world-writable "
			  "directory '%s', owned by neither us nor the directory's owner", what, path,
			  parent);
		rc = -1;
	}
	free(copy);
	return rc;
}

static void output_fail(struct output *o, int err)
{
	if (o->error)
		return;
	o->error = err;
	if (o->backlog)
		evbuffer_drain(o->backlog, evbuffer_get_length(o->backlog));
	if (o->stage)
		evbuffer_drain(o->stage, evbuffer_get_length(o->stage));
	if (o->write_event)
		event_del(o->write_event);
	/* Said at once, unless the failed output is stderr itself. */
	if (!o->shares_stderr) {
		o->reported = true;
		log_error("cannot write %s '%s': %s", o->what, o->name, strerror(err));
	}
}

/* One write that never waits: what the fd took, or -1 (EAGAIN: nothing). */
static ssize_t output_write_some(struct output *o, const char *buf, size_t n)
{
	if (o->guarded) {
		struct pollfd p = { .fd = o->fd, .events = POLLOUT };

		if (poll(&p, 1, 0) <= 0) {
			errno = EAGAIN;
			return -1;
		}
		/* With room for PIPE_BUF bytes, a write of that many does
		 * not wait. */
		if (n > PIPE_BUF)
			n = PIPE_BUF;
	}
	if (o->socket)
		return send(o->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	return write(o->fd, buf, n);
}

/* Write from the front of the backlog until the fd takes no more.
 * Returns the bytes written, or -1 after a failure. */
static ssize_t output_write_backlog(struct output *o)
{
	ssize_t total = 0;

	while (!o->error && evbuffer_get_length(o->backlog)) {
		struct evbuffer_iovec v;
		ssize_t n;

		if (evbuffer_peek(o->backlog, -1, NULL, &v, 1) < 1)
			break;
		n = output_write_some(o, v.iov_base, v.iov_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			output_fail(o, n < 0 ? errno : EIO);
			return -1;
		}
		evbuffer_drain(o->backlog, (size_t)n);
		total += n;
	}
	return total;
}

static void output_on_writable(evutil_socket_t fd, short what, void *arg)
{
	struct output *o = arg;

	(void)fd, (void)what;
	output_write_backlog(o);
	if (o->error || evbuffer_get_length(o->backlog) == 0)
		event_del(o->write_event);
}

/* Bytes for the fd, now or when it can take them. */
void output_write(struct output *o, const char *buf, size_t n)
{
	if (o->error || n == 0)
		return;
	if (o->direct) {
		while (n) {
			ssize_t w = write(o->fd, buf, n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				output_fail(o, w < 0 ? errno : EIO);
				return;
			}
			buf += w;
			n -= (size_t)w;
		}
		return;
	}
	/* Bytes lost would leave a report with a hole in it: the output fails. */
	if (evbuffer_add(o->backlog, buf, n)) {
		output_fail(o, ENOMEM);
		return;
	}
	if (output_write_backlog(o) < 0)
		return;
	if (evbuffer_get_length(o->backlog) && o->write_event)
		event_add(o->write_event, NULL);
}

static ssize_t output_cookie_write(void *cookie, const char *buf, size_t n)
{
	struct output *o = cookie;

	if (o->staging) {
		if (evbuffer_add(o->stage, buf, n))
			output_fail(o, ENOMEM);
	} else {
		output_write(o, buf, n);
	}
	/* Always "taken": failures are the output's to report, not stdio's. */
	return (ssize_t)n;
}

/* log.c's messages, when the report shares stderr: in order with the
 * report's lines, and never a blocked agent. */
static void output_message(void *ctx, const char *buf, size_t n)
{
	struct output *o = ctx;

	if (o->error || output_backlog(o) + n > OUTPUT_BACKLOG_MAX + OUTPUT_MESSAGE_SLACK)
		return;
	output_write(o, buf, n);
}

static bool output_same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Wrap o->fd (ours) in the FILE* the report writes to. */
static int output_start(struct output *o)
{
	cookie_io_functions_t io = { .write = output_cookie_write };
	struct stat st;

	if (fstat(o->fd, &st) < 0)
		return -1;
	o->direct = S_ISREG(st.st_mode);
	o->socket = S_ISSOCK(st.st_mode);
	o->shares_stderr = output_same_file(o->fd, STDERR_FILENO);
	o->backlog = evbuffer_new();
	o->stage = evbuffer_new();
	o->fp = fopencookie(o, "w", io);
	if (!o->backlog || !o->stage || !o->fp)
		return -1;
	/* Interval lines must reach a reading script as they are made. */
	setvbuf(o->fp, NULL, _IOLBF, 0);
	return 0;
}

static void output_init(struct output *o, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->what = "the report to";
}

int output_open_path(struct output *o, const char *path, bool append, const char *what)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
	struct stat st;

	output_init(o, path);
	if (strcmp(what, "output file") != 0)
		o->what = what;
	if (output_check_path(path, what))
		return -1;
	/* A FIFO waits here for its reader, as perf's does; once the loop
	 * runs nothing waits. */
	o->fd = open(path, flags, 0666);
	if (o->fd < 0 || fstat(o->fd, &st) < 0) {
		log_error("cannot open %s '%s': %s", what, path, strerror(errno));
		return -1;
	}
	/* Our own description: O_NONBLOCK disturbs nobody else. */
	if (!S_ISREG(st.st_mode))
		fcntl(o->fd, F_SETFL, fcntl(o->fd, F_GETFL) | O_NONBLOCK);
	if (output_start(o)) {
		log_error("cannot open %s '%s': %s", what, path, strerror(errno));
		return -1;
	}
	return 0;
}

int output_open_fd(struct output *o, int fd, const char *name)
{
	char proc[64];
	struct stat st;
	int flags;

	output_init(o, name);
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fstat(fd, &st) < 0) {
		log_error("cannot write the report to '%s': %s", name, strerror(errno));
		return -1;
	}
	/* Pipes, FIFOs, terminals, devices: a description of our own through
	 * /proc, made non-blocking without touching the one we share with
	 * our parent and the workload.  A socket cannot be reopened: it is
	 * written with MSG_DONTWAIT.  What is left (a pipe whose reader has
	 * gone, where reopening fails) is written only when poll says so. */
	if (!S_ISREG(st.st_mode) && !S_ISSOCK(st.st_mode)) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		o->fd = open(proc, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
				   (flags & O_APPEND));
		o->guarded = o->fd < 0;
	}
	if (o->fd < 0)
		o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (o->fd < 0 || output_start(o)) {
		log_error("cannot write the report to '%s': %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

int output_attach(struct output *o, struct event_base *base)
{
	if (o->direct)
		return 0;
	o->write_event = event_new(base, o->fd, EV_WRITE | EV_PERSIST, output_on_writable, o);
	if (!o->write_event)
		return -1;
	if (evbuffer_get_length(o->backlog))
		event_add(o->write_event, NULL);
	if (o->shares_stderr) {
		log_route(output_message, o);
		o->routed = true;
	}
	return 0;
}

void output_stage(struct output *o)
{
	fflush(o->fp);
	o->staging = true;
}

size_t output_staged(struct output *o)
{
	fflush(o->fp);
	return evbuffer_get_length(o->stage);
}

size_t output_backlog(const struct output *o)
{
	return o->backlog ? evbuffer_get_length(o->backlog) : 0;
}

int output_commit(struct output *o, bool whole_limit)
{
	size_t staged = output_staged(o), backlog = output_backlog(o);

	o->staging = false;
	if (backlog + staged > OUTPUT_BACKLOG_MAX && (whole_limit || backlog)) {
		evbuffer_drain(o->stage, staged);
		return -1;
	}
	if (o->error || staged == 0) {
		evbuffer_drain(o->stage, staged);
		return 0;
	}
	if (o->direct) {
		while (evbuffer_get_length(o->stage) && !o->error) {
			struct evbuffer_iovec v;

			evbuffer_peek(o->stage, -1, NULL, &v, 1);
			output_write(o, v.iov_base, v.iov_len);
			evbuffer_drain(o->stage, v.iov_len);
		}
		evbuffer_drain(o->stage, evbuffer_get_length(o->stage));
		return 0;
	}
	if (evbuffer_add_buffer(o->backlog, o->stage)) {
		output_fail(o, ENOMEM);
		return 0;
	}
	if (output_write_backlog(o) >= 0 && evbuffer_get_length(o->backlog) && o->write_event)
		event_add(o->write_event, NULL);
	/* Written (or queued) again: a later refusal is a new episode. */
	o->dropping = false;
	return 0;
}

void output_drop_interval(struct output *o)
{
	o->dropped_intervals++;
	if (o->dropping)
		return;
	o->dropping = true;
	log_warn("the report output '%s' is not being read: more than %d bytes wait to be "
		 "written; dropping interval reports until it catches up", o->name,
		 OUTPUT_BACKLOG_MAX);
}

static long output_ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* The final wait: progress restarts the idle clock, the total is capped. */
static void output_drain(struct output *o)
{
	struct timespec start, progress;

	clock_gettime(CLOCK_MONOTONIC, &start);
	progress = start;
	while (!o->error && output_backlog(o)) {
		struct pollfd p = { .fd = o->fd, .events = POLLOUT };
		long idle = OUTPUT_DRAIN_IDLE_MS - output_ms_since(&progress);
		long total = OUTPUT_DRAIN_TOTAL_MS - output_ms_since(&start);
		long wait = idle < total ? idle : total;

		if (wait <= 0) {
			o->timed_out = true;
			return;
		}
		if (poll(&p, 1, (int)wait) < 0 && errno != EINTR) {
			output_fail(o, errno);
			return;
		}
		if (output_write_backlog(o) > 0)
			clock_gettime(CLOCK_MONOTONIC, &progress);
	}
}

int output_finish(struct output *o)
{
	size_t left;

	if (!o->fp)
		return 0;
	fflush(o->fp);
	if (o->dropped_intervals || o->refused_snapshots)
		log_warn("the report output '%s' fell behind: %lu interval report%s dropped, "
			 "%lu snapshot%s refused", o->name,
			 o->dropped_intervals, o->dropped_intervals == 1 ? "" : "s",
			 o->refused_snapshots, o->refused_snapshots == 1 ? "" : "s");
	output_drain(o);
	/* From here messages go straight to stderr. */
	if (o->routed)
		log_route(NULL, NULL);
	o->routed = false;
	left = output_backlog(o);
	if (o->timed_out) {
		/* Not on stderr when stderr is what does not read. */
		if (!o->shares_stderr)
			log_error("cannot write %s '%s': it was not read in time "
				  "(%d s without progress, %d s in all); %zu bytes were not written",
				  o->what, o->name, OUTPUT_DRAIN_IDLE_MS / 1000, OUTPUT_DRAIN_TOTAL_MS / 1000,
				  left);
		return -1;
	}
	if (o->error && !o->reported)
		log_error("cannot write %s '%s': %s", o->what, o->name, strerror(o->error));
	o->reported = true;
	return o->error ? -1 : 0;
}

void output_close(struct output *o)
{
	if (o->routed)
		log_route(NULL, NULL);
	if (o->fp) {
		o->staging = false;
		o->error = o->error ? o->error : EPIPE;	/* nothing more is written */
		fclose(o->fp);
	}
	if (o->write_event)
		event_free(o->write_event);
	if (o->backlog)
		evbuffer_free(o->backlog);
	if (o->stage)
		evbuffer_free(o->stage);
	if (o->fd >= 0)
		close(o->fd);
	output_init(o, "");
}
