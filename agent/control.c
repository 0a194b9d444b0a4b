/*
 * control: control channels on libevent -- opening, reading, replying.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "agent/control.h"
#include "agent/log.h"
#include "agent/options.h"

/* Replies a silent ack reader may leave unread before they are dropped. */
#define PENDING_MAX (1024 * 1024)

/*
 * Our own non-blocking description of a user's fd.  Pipes and FIFOs are
 * reopened through /proc, which creates a new open file description:
 * setting O_NONBLOCK on the shared one would make the client's own blocking
 * reads (bash's "read -u") fail with EAGAIN.  Other kinds (sockets) are
 * duplicated and made non-blocking, which is harmless for them.
 */
static int reopen_nonblocking(int fd, const char *label)
{
	char path[64];
	struct stat st;
	int flags, nfd = -1;

	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fstat(fd, &st) < 0) {
		log_error("control channel %s: fd %d is not open", label, fd);
		return -1;
	}
	if (S_ISFIFO(st.st_mode)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		nfd = open(path, (flags & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC);
	}
	if (nfd < 0) {
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (nfd >= 0)
			fcntl(nfd, F_SETFL, fcntl(nfd, F_GETFL) | O_NONBLOCK);
	}
	if (nfd < 0)
		log_error("control channel %s: cannot use fd %d: %s", label, fd, strerror(errno));
	return nfd;
}

/* A FIFO given by path: no symlinks, must be a FIFO.  Opened read-write so
 * that neither a missing peer blocks the open nor a closing writer ends it. */
static int open_fifo(const char *path, const char *role)
{
	struct stat st, before;
	int fd;

	/* Look before opening: opening a device node can have effects of
	 * its own (a tape rewinds), so only a FIFO is ever opened. */
	if (lstat(path, &before) == 0 && !S_ISFIFO(before.st_mode) && !S_ISLNK(before.st_mode)) {
		log_error("refusing %s FIFO '%s': it is not a FIFO (create one with mkfifo)",
			  role, path);
		return -1;
	}
	fd = open(path, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			log_error("refusing %s FIFO '%s': it is a symbolic link "
				  "(give the path of the FIFO itself)", role, path);
		else
			log_error("cannot open %s FIFO '%s': %s%s", role, path, strerror(errno),
				  errno == ENOENT ? " (create it with mkfifo)" : "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		log_error("refusing %s FIFO '%s': it is not a FIFO (create one with mkfifo)",
			  role, path);
		close(fd);
		return -1;
	}
	return fd;
}

static void control_deliver_line(void *ctx, const char *line, size_t len, bool too_long)
{
	struct control_channel *ch = ctx;

	/* After "stop" nothing more is read: its ack must stay the last reply. */
	if (!ch->paused)
		ch->on_line(ch->ctx, ch, line, len, too_long);
}

static void control_on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct control_channel *ch = arg;
	char buf[4096];
	ssize_t n;

	(void)what;
	while (!ch->paused) {
		n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			ctl_framer_feed(&ch->framer, buf, (size_t)n, control_deliver_line, ch);
			/* A short read emptied the pipe: no read just to see EAGAIN. */
			if ((size_t)n < sizeof(buf))
				break;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		/* End of file: every writer of an fd: channel is gone. */
		if (n == 0)
			event_del(ch->read_event);
		break;
	}
}

static void control_mark_broken(struct control_channel *ch)
{
	ch->ack_broken = true;
	evbuffer_drain(ch->pending, evbuffer_get_length(ch->pending));
	event_del(ch->write_event);
}

static void control_on_writable(evutil_socket_t fd, short what, void *arg)
{
	struct control_channel *ch = arg;

	(void)what;
	if (evbuffer_write(ch->pending, fd) < 0 && errno != EAGAIN && errno != EINTR) {
		control_mark_broken(ch);
		return;
	}
	if (evbuffer_get_length(ch->pending) == 0)
		event_del(ch->write_event);
}

static int control_start(struct control_channel *ch, struct event_base *base,
			 control_line_fn on_line, void *ctx)
{
	ctl_framer_init(&ch->framer);
	ch->on_line = on_line;
	ch->ctx = ctx;
	ch->pending = evbuffer_new();
	ch->read_event = event_new(base, ch->ctl_fd, EV_READ | EV_PERSIST, control_on_readable, ch);
	ch->write_event = ch->ack_fd >= 0 ?
		event_new(base, ch->ack_fd, EV_WRITE | EV_PERSIST, control_on_writable, ch) : NULL;
	if (!ch->pending || !ch->read_event || (ch->ack_fd >= 0 && !ch->write_event)) {
		log_error("control channel %s: out of memory", ch->label);
		return -1;
	}
	return event_add(ch->read_event, NULL);
}

int control_open(struct control_channel *ch, const struct control_spec *spec,
		 struct event_base *base, control_line_fn on_line, void *ctx)
{
	memset(ch, 0, sizeof(*ch));
	ch->ctl_fd = ch->ack_fd = -1;
	if (spec->is_fifo) {
		snprintf(ch->label, sizeof(ch->label), "fifo:%s", spec->ctl_path);
		ch->ctl_fd = open_fifo(spec->ctl_path, "control");
		if (ch->ctl_fd >= 0 && spec->ack_path)
			ch->ack_fd = open_fifo(spec->ack_path, "ack");
		if (ch->ctl_fd < 0 || (spec->ack_path && ch->ack_fd < 0))
			return -1;
	} else {
		snprintf(ch->label, sizeof(ch->label), "fd:%d", spec->ctl_fd);
		ch->ctl_fd = reopen_nonblocking(spec->ctl_fd, ch->label);
		if (ch->ctl_fd >= 0 && spec->ack_fd >= 0)
			ch->ack_fd = reopen_nonblocking(spec->ack_fd, ch->label);
		if (ch->ctl_fd < 0 || (spec->ack_fd >= 0 && ch->ack_fd < 0))
			return -1;
	}
	return control_start(ch, base, on_line, ctx);
}

int control_open_fds(struct control_channel *ch, int ctl_fd, int ack_fd, const char *label,
		     struct event_base *base, control_line_fn on_line, void *ctx)
{
	memset(ch, 0, sizeof(*ch));
	snprintf(ch->label, sizeof(ch->label), "%s", label);
	ch->ctl_fd = ctl_fd;
	ch->ack_fd = ack_fd;
	fcntl(ctl_fd, F_SETFL, fcntl(ctl_fd, F_GETFL) | O_NONBLOCK);
	if (ack_fd >= 0)
		fcntl(ack_fd, F_SETFL, fcntl(ack_fd, F_GETFL) | O_NONBLOCK);
	return control_start(ch, base, on_line, ctx);
}

/* Queue what write() did not take; a reader that never reads loses
 * replies past PENDING_MAX rather than growing the agent without bound. */
static void control_queue(struct control_channel *ch, const char *bytes, size_t n)
{
	if (evbuffer_get_length(ch->pending) + n > PENDING_MAX) {
		if (!ch->dropping)
			log_warn("control channel %s: ack reader is not reading; dropping replies",
				 ch->label);
		ch->dropping = true;
		return;
	}
	ch->dropping = false;
	evbuffer_add(ch->pending, bytes, n);
	event_add(ch->write_event, NULL);
}

void control_reply(struct control_channel *ch, bool ok, const char *text)
{
	char small[CTL_REPLY_MAX], *reply = small;
	size_t cap = sizeof(small), n;
	ssize_t written = 0;

	if (ch->ack_fd < 0 || ch->ack_broken)
		return;
	/* A window-end reply over many events outgrows the usual bound:
	 * it is sent whole rather than cut into JSON that does not parse. */
	if (text && strlen(text) + 16 > cap) {
		cap = strlen(text) + 16;
		reply = malloc(cap);
		if (!reply)
			return;
	}
	n = ctl_reply_format(reply, cap, ok, text);
	if (evbuffer_get_length(ch->pending) == 0) {
		written = write(ch->ack_fd, reply, n);
		if (written < 0 && errno != EAGAIN && errno != EINTR) {
			control_mark_broken(ch);	/* EPIPE: nobody will read it */
			return;
		}
		if (written < 0)
			written = 0;
	}
	if ((size_t)written < n)
		control_queue(ch, reply + written, n - (size_t)written);
	if (reply != small)
		free(reply);
}

void control_pause(struct control_channel *ch)
{
	ch->paused = true;
	if (ch->read_event)
		event_del(ch->read_event);
}

void control_flush(struct control_channel *ch, int timeout_ms)
{
	struct pollfd pfd = { .fd = ch->ack_fd, .events = POLLOUT };

	while (ch->ack_fd >= 0 && !ch->ack_broken && evbuffer_get_length(ch->pending)) {
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return;
		if (evbuffer_write(ch->pending, ch->ack_fd) < 0 && errno != EAGAIN)
			return;
	}
}

void control_close(struct control_channel *ch)
{
	if (ch->read_event)
		event_free(ch->read_event);
	if (ch->write_event)
		event_free(ch->write_event);
	if (ch->pending)
		evbuffer_free(ch->pending);
	if (ch->ctl_fd >= 0)
		close(ch->ctl_fd);
	if (ch->ack_fd >= 0 && ch->ack_fd != ch->ctl_fd)
		close(ch->ack_fd);
	memset(ch, 0, sizeof(*ch));
	ch->ctl_fd = ch->ack_fd = -1;
}
