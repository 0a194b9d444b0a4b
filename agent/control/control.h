/*
 * control: one control channel -- a ctl fd the agent reads commands from and
 * an optional ack fd it writes one reply per command to.
 *
 * Channels come from --control fd:/fifo: (or --ctl-fd).  The agent works on
 * its own non-blocking file descriptions of the user's fds, so a client's
 * blocking reads are not disturbed.  The control side of a FIFO is read
 * read-only: when its last writer closes, bytes it left without a
 * terminator are executed if they form a whole command, or dropped with a
 * warning (never glued to the next writer's command), and the FIFO is
 * reopened for the next writers.  As in perf, a command also ends where
 * the bytes end: unterminated bytes still held a short grace period after
 * the fd ran dry are executed if they form a whole command.  Each channel is served one
 * read per turn of the event loop, so none can starve the others or the
 * interval timer; an ack reader that does not read stops its channel
 * being read (backpressure) and costs neither a SIGPIPE nor a blocked
 * agent.
 *
 * The bytes are framed into lines by proto/; what a line means is the
 * session's business (the on_line callback).
 */
#ifndef PERFGATE_CONTROL_H
#define PERFGATE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/ctl_lock.h"
#include "proto/ctl_proto.h"

struct event_base;
struct event;
struct evbuffer;
struct control_spec;
struct control_channel;

typedef void (*control_line_fn)(void *ctx, struct control_channel *ch,
				const char *line, size_t len, bool too_long);

/* Which file one end of a channel is (ino 0: unknown). */
struct control_file {
	unsigned long long dev, ino;
	bool is_pipe;			/* a pipe or FIFO: one-way */
};

struct control_channel {
	char label[256];		/* "fifo:/path" or "fd:3", for messages */
	char ctl_name[280], ack_name[280];	/* "FIFO '/path'" or "fd 3" */
	int ctl_fd, ack_fd;		/* our own descriptions; ack_fd -1 when none */
	struct control_file ctl_file, ack_file;
	struct ctl_framer framer;
	struct event *read_event, *write_event;
	/* The grace period of unterminated bytes: a timerfd, made when first
	 * needed (-1 until then), and its event. */
	int settle_fd;
	struct event *settle_event;
	bool settle_armed, settle_timer_failed;
	struct evbuffer *pending;	/* replies the ack fd could not take yet */
	bool reopen_at_eof;		/* a FIFO: its next writers may come */
	bool ack_broken;		/* the ack reader went away */
	bool backpressured;		/* too many replies unread: not reading */
	bool dropping;			/* replies are being dropped (warned once) */
	bool paused;			/* "stop" was served: read nothing more */
	/* Its control FIFO may be written by other users than its owner, and
	 * --control-shared was not given: loading commands are refused. */
	bool open_to_others;
	/* A private FIFO channel's named lock page (proto/ctl_lock.h), or NULL. */
	struct ctl_lock_page *lock_page;
	char lock_name[CTL_LOCK_NAME_MAX];
	char *long_reply;		/* kept for replies over CTL_REPLY_MAX */
	size_t long_reply_cap;
	control_line_fn on_line;
	void *ctx;
};

/* Open the channel from its spec and start serving it on base.  Prints an
 * error naming the path or fd and returns -1 on failure. */
int control_open(struct control_channel *ch, const struct control_spec *spec,
		 struct event_base *base, control_line_fn on_line, void *ctx);
/* Refuse channels that would feed on each other: a pipe or FIFO that is
 * both a control and an ack end (replies read back as commands), or one
 * control pipe read by two channels.  Prints the error; returns -1. */
int control_check_channels(const struct control_channel *chs, size_t n);
/* Open a channel on fds the agent created itself (taken over). */
int control_open_fds(struct control_channel *ch, int ctl_fd, int ack_fd, const char *label,
		     struct event_base *base, control_line_fn on_line, void *ctx);
/* Send one reply ("ack", "ack TEXT" or "err TEXT"); never blocks. */
void control_reply(struct control_channel *ch, bool ok, const char *text);
/* Read no more commands (the run is stopping). */
void control_pause(struct control_channel *ch);
/* Write what is still pending, blocking up to timeout_ms (at exit). */
void control_flush(struct control_channel *ch, int timeout_ms);
void control_close(struct control_channel *ch);

#endif
