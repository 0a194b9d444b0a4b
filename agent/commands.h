/*
 * commands: what each control command does to the session, and its reply.
 *
 * Every line a channel delivers gets exactly one reply on that channel:
 * "ack" (perf's exact bytes for perf's commands), "ack JSON" for hello, or
 * "err REASON" -- never silence, so a waiting client never hangs.  (Empty
 * lines are no commands: the framer delivers none, as perf answers none.)  Window
 * deltas are read here, before the ack is written: when the client has read
 * the ack, the window is open (or closed).
 */
#ifndef PERFGATE_COMMANDS_H
#define PERFGATE_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

struct control_channel;

/* control_line_fn for the session's channels; ctx is the session. */
void commands_on_line(void *ctx, struct control_channel *ch, const char *line, size_t len,
		      bool too_long);

#endif
