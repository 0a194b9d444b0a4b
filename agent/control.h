/*
 * control: one control channel -- a ctl fd the agent reads commands from and
 * an optional ack fd it writes one reply per command to.
 *
 * Channels come from --control fd:/fifo: (or --ctl-fd).  The agent works on
 * its own non-blocking file descriptions of the user's fds, so a client's
 * blocking reads are not disturbed; FIFOs are opened read-write so that a
 * writer closing its end does not end the channel; an ack reader that goes
 * away costs neither a SIGPIPE nor a blocked agent (replies wait in a
 * bounded buffer, or are dropped once nobody can read them).
 *
 * The bytes are framed into lines by proto/; what a line means is the
 * session's business (the on_line callback).
 */
#ifndef PERFGATE_CONTROL_H
#define PERFGATE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/ctl_proto.h"

struct event_base;
struct event;
struct evbuffer;
struct control_spec;
struct control_channel;

typedef void (*control_line_fn)(void *ctx, struct control_channel *ch,
				const char *line, size_t len, bool too_long);

struct control_channel {
	char label[256];		/* "fifo:/path" or "fd:3", for messages */
	int ctl_fd, ack_fd;		/* our own descriptions; ack_fd -1 when none */
	struct ctl_framer framer;
	struct event *read_event, *write_event;
	struct evbuffer *pending;	/* replies the ack fd could not take yet */
	bool ack_broken;		/* the ack reader went away */
	bool dropping;			/* replies are being dropped (warned once) */
	bool paused;			/* "stop" was served: read nothing more */
	control_line_fn on_line;
	void *ctx;
};

/* Open the channel from its spec and start serving it on base.  Prints an
 * error naming the path or fd and returns -1 on failure. */
int control_open(struct control_channel *ch, const struct control_spec *spec,
		 struct event_base *base, control_line_fn on_line, void *ctx);
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
