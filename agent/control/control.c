/*
 * control: control channels on libevent -- opening, reading, replying.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "agent/control/channel_lock.h"
#include "agent/control/control.h"
#include "agent/base/log.h"
#include "agent/base/options.h"

/*
 * Replies waiting for a slow ack reader.  Past PENDING_PAUSE the channel's
 * commands are no longer read (backpressure: the client's writes block, as
 * perf stat's own blocking ack write would block it) until the reader has
 * taken them down to PENDING_RESUME.  One read can still bring up to a few
 * thousand commands, whose replies are queued whole; past PENDING_MAX
 * (a last resort, for huge window-end replies) replies are dropped.
 */
#define PENDING_PAUSE (64 * 1024)
#define PENDING_RESUME (16 * 1024)
#define PENDING_MAX (4 * 1024 * 1024)
/* Quoted prefix of a partial line discarded at end of input. */
#define PARTIAL_QUOTE_MAX 64
/*
 * How long unterminated bytes wait, once the control fd has run dry, before
 * they are settled: executed if they form a whole command, as perf ends a
 * command where the bytes end.  Long enough for the rest of a command that
 * one client writes in two write() calls (microseconds apart), short
 * enough that a client that writes "enable" with no terminator gets its
 * ack within a few milliseconds (docs/protocol.md, "Framing").
 */
#define SETTLE_GRACE_US 2000
/* One read of a control fd: a flooding client gets no more per turn. */
#define READ_MAX 4096

/*
 * Our own non-blocking description of a user's fd.  Pipes and FIFOs are
 * reopened through /proc, which creates a new open file description:
 * setting O_NONBLOCK on the shared one would make the client's own blocking
 * reads (bash's "read -u") fail with EAGAIN.  Other kinds (sockets) are
 * duplicated and made non-blocking, which is harmless for them.
 */
/* What kind of file mode is, for messages ("a regular file"). */
static const char *file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device that cannot be polled";
	if (S_ISBLK(mode))
		return "a block device";
	return "a file that cannot be polled";
}

/* Whether the event loop (epoll) can wait on fd: pipes, FIFOs, sockets and
 * ttys can; regular files, directories and /dev/null cannot. */
static bool can_poll(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	bool ok;

	if (ep < 0)
		return true;	/* cannot tell: let the event loop judge */
	ok = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0 || errno != EPERM;
	close(ep);
	return ok;
}

/*
 * Our own non-blocking description of a user's fd.  Pipes and FIFOs are
 * reopened through /proc, which creates a new open file description:
 * setting O_NONBLOCK on the shared one would make the client's own blocking
 * reads (bash's "read -u") fail with EAGAIN.  The control side is reopened
 * read-only, so that the agent is not a writer of its own input and sees
 * end of file when the client's writers are gone.  Other kinds (sockets,
 * ttys) are duplicated and made non-blocking, which is harmless for them;
 * a kind the event loop cannot wait on is refused by name.  what is "fd"
 * or "ack fd".
 */
static int reopen_nonblocking(int fd, const char *label, const char *what, bool is_ctl)
{
	char path[64], target[200];
	struct stat st;
	int flags, nfd = -1;
	ssize_t n;

	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fstat(fd, &st) < 0) {
		log_error("control channel %s: %s %d is not open", label, what, fd);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode) && !can_poll(fd)) {
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		log_error("control channel %s: %s %d is %s%s%s%s; %s must be a pipe, FIFO or socket",
			  label, what, fd, file_kind(st.st_mode), n > 0 ? " (" : "",
			  target, n > 0 ? ")" : "", is_ctl ? "a control channel" : "an ack channel");
		return -1;
	}
	if (S_ISFIFO(st.st_mode))
		nfd = open(path, (is_ctl ? O_RDONLY : (flags & O_ACCMODE)) | O_NONBLOCK | O_CLOEXEC);
	if (nfd < 0) {
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (nfd >= 0)
			fcntl(nfd, F_SETFL, fcntl(nfd, F_GETFL) | O_NONBLOCK);
	}
	if (nfd < 0)
		log_error("control channel %s: cannot use %s %d: %s", label, what, fd,
			  strerror(errno));
	return nfd;
}

/* "root (uid 0)", for messages about owners. */
static void describe_user(uid_t uid, char *buf, size_t cap)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, cap, "%s (uid %u)", pw->pw_name, (unsigned)uid);
	else
		snprintf(buf, cap, "uid %u", (unsigned)uid);
}

/*
 * A FIFO another user owns lets someone other than the agent's user drive
 * it: stop its workload, load ranges, read counts, fill its memory.
 * Refused unless --control-shared.  One the agent's user owns but made
 * writable by its group or others is accepted, as perf accepts it
 * (control_check_open says what that allows).
 */
static int check_fifo_owner(const struct stat *st, const char *path, const char *role)
{
	char owner[96], self[96];

	if (st->st_uid != geteuid()) {
		describe_user(st->st_uid, owner, sizeof(owner));
		describe_user(geteuid(), self, sizeof(self));
		log_error("refusing %s FIFO '%s': it is owned by %s, not by %s who runs perfgate "
			  "(use --control-shared to allow it)", role, path, owner, self);
		return -1;
	}
	return 0;
}

/* Others than the file's owner may write to it. */
static bool writable_by_others(mode_t mode)
{
	return (mode & (S_IWGRP | S_IWOTH)) != 0;
}

/*
 * A FIFO given by path: no symlinks, must be a FIFO, and (unless shared)
 * the agent's user's.  The control FIFO is opened read-only, so
 * that the agent sees end of file when its writers are gone; the ack FIFO
 * read-write, so that a missing reader neither blocks the open nor makes
 * a write fail.  Both without blocking.
 */
static int open_fifo(const char *path, const char *role, bool is_ctl, bool shared)
{
	struct stat st, before;
	bool looked;
	int fd;

	/* Look before opening: opening a device node can have effects of
	 * its own (a tape rewinds), so only a FIFO is ever opened. */
	looked = lstat(path, &before) == 0;
	if (looked && !S_ISFIFO(before.st_mode) && !S_ISLNK(before.st_mode)) {
		log_error("refusing %s FIFO '%s': it is not a FIFO (create one with mkfifo)",
			  role, path);
		return -1;
	}
	if (looked && S_ISFIFO(before.st_mode) && !shared &&
	    check_fifo_owner(&before, path, role))
		return -1;
	fd = open(path, (is_ctl ? O_RDONLY : O_RDWR) | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
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
	/* What was opened is what was looked at, and is still ours. */
	if ((looked && (st.st_dev != before.st_dev || st.st_ino != before.st_ino)) ||
	    (!shared && check_fifo_owner(&st, path, role))) {
		if (looked && (st.st_dev != before.st_dev || st.st_ino != before.st_ino))
			log_error("refusing %s FIFO '%s': it was replaced while being opened",
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

/*
 * The bytes available have ended: unterminated bytes that form a whole
 * command are executed, as perf ends a command where the bytes end.  A
 * fragment ("window be") is kept, silently: its rest may still come.
 */
static void control_settle(struct control_channel *ch)
{
	if (!ch->paused)
		ctl_framer_settle(&ch->framer, control_deliver_line, ch);
}

/*
 * Every writer went away.  Bytes they left without a terminator are a
 * command if they form a whole one, executed and answered as perf would;
 * otherwise they are dropped, with a warning naming them, never glued to
 * the next writer's command, and with no reply (they were no command, and
 * the ack reader now may be the next client, who would take the reply for
 * its own).  A FIFO is opened again for the next writers: the new
 * description has not seen them come and go, so it does not report end
 * of file again until other writers have come and gone.  Any other
 * channel ends here.
 */
static void control_on_eof(struct control_channel *ch)
{
	char quoted[PARTIAL_QUOTE_MAX + 1], path[64];
	const char *partial;
	size_t n;
	int nfd = -1;

	control_settle(ch);
	n = ctl_framer_discard(&ch->framer, &partial);
	if (n > 0) {
		size_t q = n < PARTIAL_QUOTE_MAX ? n : PARTIAL_QUOTE_MAX;

		for (size_t i = 0; i < q; i++)
			quoted[i] = partial[i] < 0x20 || partial[i] == 0x7f ? '?' : partial[i];
		quoted[q] = '\0';
		log_warn("control channel %s: discarded %zu byte%s without a newline when the "
			 "writer closed: '%s'%s", ch->label, n, n == 1 ? "" : "s", quoted,
			 n > q ? "..." : "");
	}
	event_del(ch->read_event);
	if (!ch->reopen_at_eof)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ch->ctl_fd);
	nfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (nfd < 0) {
		log_warn("control channel %s: cannot reopen it for the next writer: %s",
			 ch->label, strerror(errno));
		return;
	}
	/* Opened before the old one is closed: the FIFO keeps a reader. */
	close(ch->ctl_fd);
	ch->ctl_fd = nfd;
	event_assign(ch->read_event, event_get_base(ch->read_event), nfd, EV_READ | EV_PERSIST,
		     event_get_callback(ch->read_event), ch);
	if (!ch->paused && !ch->backpressured)
		event_add(ch->read_event, NULL);
}

static void control_on_settle(evutil_socket_t fd, short what, void *arg);

/*
 * The grace period's clock: a timerfd of the channel's own, made the first
 * time it holds unterminated bytes.  libevent's timers read a coarse clock
 * (a tick of several milliseconds), which would stretch a 2 ms grace to
 * twice or thrice that; a timerfd fires on time, and costs channels whose
 * commands are all terminated nothing.
 */
static int control_settle_timer(struct control_channel *ch)
{
	if (ch->settle_event)
		return 0;
	ch->settle_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ch->settle_fd < 0) {
		log_warn("control channel %s: cannot make a timer, so a command without a "
			 "newline waits for its writer to close: %s", ch->label, strerror(errno));
		return -1;
	}
	ch->settle_event = event_new(event_get_base(ch->read_event), ch->settle_fd,
				     EV_READ | EV_PERSIST, control_on_settle, ch);
	if (!ch->settle_event || event_add(ch->settle_event, NULL)) {
		log_warn("control channel %s: out of memory for a timer", ch->label);
		return -1;
	}
	return 0;
}

/*
 * Unterminated bytes held after a read: (re)start the grace period after
 * which they are settled; more bytes before it ends start it again.  A
 * channel with none (the usual case: every command terminated) makes no
 * system call here.  A backpressured channel is not settled: the rest of
 * its bytes may wait unread in the pipe; it is armed again when it resumes.
 */
static void control_arm_settle(struct control_channel *ch)
{
	struct itimerspec grace = { .it_value = { 0, SETTLE_GRACE_US * 1000L } };
	struct itimerspec off = { .it_value = { 0, 0 } };
	const char *partial;

	if (!ch->paused && !ch->backpressured && ctl_framer_partial(&ch->framer, &partial) > 0) {
		if (ch->settle_timer_failed || control_settle_timer(ch)) {
			ch->settle_timer_failed = true;
			return;
		}
		ch->settle_armed = timerfd_settime(ch->settle_fd, 0, &grace, NULL) == 0;
	} else if (ch->settle_armed) {
		timerfd_settime(ch->settle_fd, 0, &off, NULL);
		ch->settle_armed = false;
	}
}

/* One read: feed what came, or handle end of input.  Returns what read() did. */
static ssize_t control_read(struct control_channel *ch)
{
	char buf[READ_MAX];
	ssize_t n = read(ch->ctl_fd, buf, sizeof(buf));

	if (n > 0)
		ctl_framer_feed(&ch->framer, buf, (size_t)n, control_deliver_line, ch);
	else if (n == 0)
		control_on_eof(ch);
	return n;
}

/*
 * One read per call: a flooding client gets one turn per loop, like every
 * other channel, and the interval timer and signals (a higher priority)
 * go first.  A short read emptied the pipe; a second read then tells at
 * once whether the writers are still there (EAGAIN) or gone (end of file).
 */
static void control_on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct control_channel *ch = arg;
	ssize_t n;

	(void)fd;
	(void)what;
	for (int reads = 0; reads < 2 && !ch->paused && !ch->backpressured; reads++) {
		n = control_read(ch);
		if (n <= 0 || (size_t)n == READ_MAX)
			break;		/* dry, gone, or more waits: next turn */
	}
	control_arm_settle(ch);
}

/*
 * The grace period ended with unterminated bytes held.  One more read
 * makes sure the fd is still dry (bytes that came meanwhile may have
 * woken this timer before the read event); then they are settled.
 */
static void control_on_settle(evutil_socket_t fd, short what, void *arg)
{
	struct control_channel *ch = arg;
	uint64_t expirations;
	ssize_t n;

	(void)what;
	if (read(fd, &expirations, sizeof(expirations)) < 0 || !ch->settle_armed)
		return;		/* disarmed meanwhile */
	ch->settle_armed = false;
	if (ch->paused || ch->backpressured)
		return;
	n = control_read(ch);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		control_settle(ch);
	else if (n != 0)
		control_arm_settle(ch);		/* more came, or try again */
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
	if (evbuffer_get_length(ch->pending) == 0) {
		event_del(ch->write_event);
		ch->dropping = false;		/* the episode is over */
	}
	if (ch->backpressured && evbuffer_get_length(ch->pending) <= PENDING_RESUME) {
		ch->backpressured = false;
		if (!ch->paused)
			event_add(ch->read_event, NULL);
		control_arm_settle(ch);
	}
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

/* Remember which file each end is, for control_check_channels. */
static void control_note_files(struct control_channel *ch)
{
	struct stat st;

	if (fstat(ch->ctl_fd, &st) == 0) {
		ch->ctl_file.dev = st.st_dev;
		ch->ctl_file.ino = st.st_ino;
		ch->ctl_file.is_pipe = S_ISFIFO(st.st_mode);
	}
	if (ch->ack_fd >= 0 && fstat(ch->ack_fd, &st) == 0) {
		ch->ack_file.dev = st.st_dev;
		ch->ack_file.ino = st.st_ino;
		ch->ack_file.is_pipe = S_ISFIFO(st.st_mode);
	}
}

/*
 * The named lock page of a private FIFO channel (proto/ctl_lock.h), made
 * before the ctl FIFO is opened: a client can connect only once the agent
 * reads that FIFO, and by then it finds the page.  Named after the FIFOs
 * as they are now; control_check_lock makes sure they are what was opened.
 * FIFOs that are missing or not FIFOs get none: open_fifo refuses them.
 * Nor do FIFOs that other users may write: their clients could not open
 * the agent's user's page (mode 0600) and would take the record lock, so
 * every client takes it, as on a --control-shared channel.
 */
static int control_publish_lock(struct control_channel *ch, const struct control_spec *spec)
{
	struct stat ctl, ack;

	if (lstat(spec->ctl_path, &ctl) || lstat(spec->ack_path, &ack) ||
	    !S_ISFIFO(ctl.st_mode) || !S_ISFIFO(ack.st_mode) ||
	    writable_by_others(ctl.st_mode) || writable_by_others(ack.st_mode))
		return 0;
	ctl_lock_name(ch->lock_name, &ctl);
	return channel_lock_publish(ch->lock_name, spec->ctl_path, &ctl, &ack, &ch->lock_page);
}

static int control_check_lock(struct control_channel *ch, const struct control_spec *spec)
{
	struct stat ctl, ack;

	if (!ch->lock_page)
		return 0;
	if (fstat(ch->ctl_fd, &ctl) == 0 && fstat(ch->ack_fd, &ack) == 0 &&
	    ctl.st_ino == ch->lock_page->ctl_ino && ack.st_ino == ch->lock_page->ack_ino) {
		char name[CTL_LOCK_NAME_MAX];

		ctl_lock_name(name, &ctl);
		if (!strcmp(name, ch->lock_name))
			return 0;
	}
	log_error("refusing control FIFO '%s': it or its ack FIFO '%s' was replaced while "
		  "being opened", spec->ctl_path, spec->ack_path);
	return -1;
}

/*
 * FIFOs of the agent's user that its group or others may write (a launcher
 * did chmod 666, or made them under umask 0) are served, as perf serves
 * them, with one warning: whoever can write the control FIFO drives the
 * run, whoever can write the ack FIFO can forge replies.  Commands that
 * make the agent load or attach something are refused on such a control
 * FIFO (commands.c) unless --control-shared says the sharing is meant.
 */
static void control_check_open(struct control_channel *ch, const struct control_spec *spec)
{
	struct stat ctl, ack;
	bool ctl_open, ack_open;
	char what[1024];

	ctl_open = fstat(ch->ctl_fd, &ctl) == 0 && writable_by_others(ctl.st_mode);
	ack_open = ch->ack_fd >= 0 && fstat(ch->ack_fd, &ack) == 0 &&
		   writable_by_others(ack.st_mode);
	ch->open_to_others = ctl_open;
	if (!ctl_open && !ack_open)
		return;
	if (ctl_open && ack_open)
		snprintf(what, sizeof(what), "control FIFO (mode %04o) and its ack FIFO '%s' "
			 "(mode %04o)", (unsigned)(ctl.st_mode & 07777), spec->ack_path,
			 (unsigned)(ack.st_mode & 07777));
	else if (ctl_open)
		snprintf(what, sizeof(what), "control FIFO (mode %04o)",
			 (unsigned)(ctl.st_mode & 07777));
	else
		snprintf(what, sizeof(what), "ack FIFO '%s' (mode %04o)", spec->ack_path,
			 (unsigned)(ack.st_mode & 07777));
	log_warn("control channel %s: users other than its owner can write to its %s, so they "
		 "can %s%s (chmod go-w, or use --control-shared %s)", ch->label, what,
		 ctl_open && ack_open ? "drive this run and forge its replies" :
		 ctl_open ? "drive this run" : "forge its replies",
		 ctl_open ? "; 'range load' and 'range unload' are refused on it" : "",
		 ctl_open ? "to allow them" : "if that is meant");
}

static void control_withdraw_lock(struct control_channel *ch)
{
	if (ch->lock_page)
		channel_lock_withdraw(ch->lock_name, ch->lock_page);
	ch->lock_page = NULL;
}

int control_open(struct control_channel *ch, const struct control_spec *spec,
		 struct event_base *base, control_line_fn on_line, void *ctx)
{
	memset(ch, 0, sizeof(*ch));
	ch->ctl_fd = ch->ack_fd = ch->settle_fd = -1;
	if (spec->is_fifo) {
		snprintf(ch->label, sizeof(ch->label), "fifo:%s", spec->ctl_path);
		snprintf(ch->ctl_name, sizeof(ch->ctl_name), "FIFO '%s'", spec->ctl_path);
		snprintf(ch->ack_name, sizeof(ch->ack_name), "FIFO '%s'",
			 spec->ack_path ? spec->ack_path : "");
		if (!spec->shared && spec->ack_path && control_publish_lock(ch, spec))
			return -1;
		ch->ctl_fd = open_fifo(spec->ctl_path, "control", true, spec->shared);
		if (ch->ctl_fd >= 0 && spec->ack_path)
			ch->ack_fd = open_fifo(spec->ack_path, "ack", false, spec->shared);
		if (ch->ctl_fd < 0 || (spec->ack_path && ch->ack_fd < 0) ||
		    control_check_lock(ch, spec)) {
			control_withdraw_lock(ch);
			return -1;
		}
		if (!spec->shared)
			control_check_open(ch, spec);
	} else {
		snprintf(ch->label, sizeof(ch->label), "fd:%d", spec->ctl_fd);
		snprintf(ch->ctl_name, sizeof(ch->ctl_name), "fd %d", spec->ctl_fd);
		snprintf(ch->ack_name, sizeof(ch->ack_name), "fd %d", spec->ack_fd);
		ch->ctl_fd = reopen_nonblocking(spec->ctl_fd, ch->label, "fd", true);
		if (ch->ctl_fd >= 0 && spec->ack_fd >= 0)
			ch->ack_fd = reopen_nonblocking(spec->ack_fd, ch->label, "ack fd", false);
		if (ch->ctl_fd < 0 || (spec->ack_fd >= 0 && ch->ack_fd < 0))
			return -1;
	}
	control_note_files(ch);
	/* A FIFO or a pipe whose writers all left is reopened for the next. */
	ch->reopen_at_eof = ch->ctl_file.is_pipe;
	return control_start(ch, base, on_line, ctx);
}

static bool same_file(const struct control_file *a, const struct control_file *b)
{
	return a->ino && a->dev == b->dev && a->ino == b->ino;
}

int control_check_channels(const struct control_channel *chs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct control_channel *a = &chs[i];

		for (size_t j = 0; j < n; j++) {
			const struct control_channel *b = &chs[j];

			/* A socket is two-way: one for both is a normal socketpair. */
			if (a->ack_fd >= 0 && a->ack_file.is_pipe && same_file(&a->ack_file, &b->ctl_file)) {
				if (i == j)
					log_error("control channel %s: the control and ack %s are the "
						  "same pipe; every reply would be read back as a "
						  "command", a->label,
						  a->ctl_name[0] == 'F' ? "FIFOs" : "fds");
				else
					log_error("control channel %s: its ack %s is the control "
						  "channel %s; every reply would be read back as a "
						  "command", a->label, a->ack_name, b->label);
				return -1;
			}
			if (j > i && same_file(&a->ctl_file, &b->ctl_file)) {
				log_error("control channels %s and %s read the same %s; each "
					  "command would go to one of them at random", a->label,
					  b->label, a->ctl_file.is_pipe ? "pipe" : "file");
				return -1;
			}
		}
	}
	return 0;
}

int control_open_fds(struct control_channel *ch, int ctl_fd, int ack_fd, const char *label,
		     struct event_base *base, control_line_fn on_line, void *ctx)
{
	memset(ch, 0, sizeof(*ch));
	ch->settle_fd = -1;
	snprintf(ch->label, sizeof(ch->label), "%s", label);
	ch->ctl_fd = ctl_fd;
	ch->ack_fd = ack_fd;
	fcntl(ctl_fd, F_SETFL, fcntl(ctl_fd, F_GETFL) | O_NONBLOCK);
	if (ack_fd >= 0)
		fcntl(ack_fd, F_SETFL, fcntl(ack_fd, F_GETFL) | O_NONBLOCK);
	control_note_files(ch);
	return control_start(ch, base, on_line, ctx);
}

/*
 * Queue what write() did not take.  Past PENDING_PAUSE the channel stops
 * being read until its reader catches up (control_on_writable); a reader
 * that never reads thus costs at most about PENDING_PAUSE plus one read's
 * replies.  Past PENDING_MAX replies are dropped, with one warning per
 * episode (until the queue has drained).
 */
static void control_queue(struct control_channel *ch, const char *bytes, size_t n)
{
	if (evbuffer_get_length(ch->pending) + n > PENDING_MAX) {
		if (!ch->dropping)
			log_warn("control channel %s: ack reader is not reading; dropping replies "
				 "(over %d bytes unread)", ch->label, PENDING_MAX);
		ch->dropping = true;
		return;
	}
	if (evbuffer_add(ch->pending, bytes, n)) {
		/* A reply cut short would put every later one out of step:
		 * the channel gives no more replies rather than wrong ones. */
		log_warn("control channel %s: out of memory for a reply; no more replies on it",
			 ch->label);
		control_mark_broken(ch);
		return;
	}
	event_add(ch->write_event, NULL);
	if (!ch->backpressured && evbuffer_get_length(ch->pending) > PENDING_PAUSE) {
		ch->backpressured = true;
		event_del(ch->read_event);
	}
}

void control_reply(struct control_channel *ch, bool ok, const char *text)
{
	char small[CTL_REPLY_MAX], *reply = small;
	size_t cap = sizeof(small), n, len;
	ssize_t written = 0;

	if (ch->ack_fd < 0 || ch->ack_broken)
		return;
	/* A window-end reply over many events outgrows the usual bound: it
	 * is sent whole rather than cut into JSON that does not parse, from
	 * a buffer the channel keeps (no allocation per reply). */
	len = text ? strlen(text) : 0;
	if (len + 16 > cap && len + 16 > ch->long_reply_cap) {
		char *grown = realloc(ch->long_reply, len + 16);

		if (grown) {
			ch->long_reply = grown;
			ch->long_reply_cap = len + 16;
		} else {
			/* The client still gets its one reply, or it would wait
			 * for it forever. */
			ok = false;
			text = "out of memory for the reply";
			len = strlen(text);
		}
	}
	if (len + 16 > cap) {
		reply = ch->long_reply;
		cap = len + 16;
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
}

void control_pause(struct control_channel *ch)
{
	ch->paused = true;
	if (ch->read_event)
		event_del(ch->read_event);
	control_arm_settle(ch);		/* paused: disarmed */
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
	if (ch->settle_event)
		event_free(ch->settle_event);
	if (ch->settle_fd >= 0)
		close(ch->settle_fd);
	if (ch->write_event)
		event_free(ch->write_event);
	if (ch->pending)
		evbuffer_free(ch->pending);
	control_withdraw_lock(ch);
	if (ch->ctl_fd >= 0)
		close(ch->ctl_fd);
	if (ch->ack_fd >= 0 && ch->ack_fd != ch->ctl_fd)
		close(ch->ack_fd);
	free(ch->long_reply);
	memset(ch, 0, sizeof(*ch));
	ch->ctl_fd = ch->ack_fd = ch->settle_fd = -1;
}
