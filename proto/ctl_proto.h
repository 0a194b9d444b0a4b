/*
 * ctl_proto: the perfgate control protocol, as bytes in and bytes out.
 *
 * Commands arrive on a control fd framed as perf stat 6.1 frames them: a
 * command ends at '\n', at '\0', or where the bytes available end (perf
 * reads one byte per read() and ends a command when the fd runs dry).  The
 * framer turns an arbitrary stream of reads (split or joined commands) into
 * lines, and says whether the bytes left unterminated form a whole command;
 * when they are the writer's last, the agent settles them as a line.  The
 * parser turns one line into a struct ctl_command or a reason for an error;
 * the reply formatter produces the exact bytes every reply is sent as
 * ("ack\n\0", the framing perf stat uses, so perf clients keep working),
 * always valid UTF-8.
 *
 * Nothing here does I/O, allocates, or knows about the kernel: this module is
 * unit-tested and fuzzed on its own (tests/unit/test_proto.c,
 * tests/fuzz/fuzz_proto.c).  The full protocol is in docs/protocol.md.
 */
#ifndef PERFGATE_CTL_PROTO_H
#define PERFGATE_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#define CTL_PROTO_VERSION 1
/* Longest command line accepted, terminator not included. */
#define CTL_LINE_MAX 4096
/* Longest window or range name. */
#define CTL_NAME_MAX 64
/* Longest reply line, terminator and NUL included, but for the JSON of a
 * window-end reply over many events, which may reach CTL_REPLY_LONG_MAX. */
#define CTL_REPLY_MAX (CTL_LINE_MAX + 256)
#define CTL_REPLY_LONG_MAX (1024 * 1024)
/*
 * The reason the agent sends ("err " CTL_ERR_TOO_LONG) for a line the framer
 * reports with too_long set; ctl_command_parse gives the same text for a
 * line longer than CTL_LINE_MAX.
 */
#define CTL_ERR_TOO_LONG "command too long (over 4096 bytes)"

/* ---- framing ------------------------------------------------------------ */

struct ctl_framer {
	char line[CTL_LINE_MAX];
	size_t len;
	bool discarding;	/* inside a line already reported as too long */
};

/*
 * Called once per complete line, without its terminator.  Empty lines
 * (nothing but blanks and '\r': ctl_line_is_empty) are not commands and are
 * not delivered, as perf answers them with nothing.  A line longer than
 * CTL_LINE_MAX is reported once, as soon as it passes the limit, with
 * too_long set (line and len then hold its first CTL_LINE_MAX bytes); the
 * rest of it, up to and including its terminator, is discarded.
 */
typedef void (*ctl_line_fn)(void *ctx, const char *line, size_t len, bool too_long);

void ctl_framer_init(struct ctl_framer *framer);
/* Feed n bytes (any split); calls on_line for every line they complete. */
void ctl_framer_feed(struct ctl_framer *framer, const char *data, size_t n,
		     ctl_line_fn on_line, void *ctx);
/*
 * The bytes held after the last terminator, not yet a line: returns their
 * length and points *partial at them (valid until the next call on the
 * framer), or returns 0 when there are none, or when they are the tail of
 * a line already reported as too long.
 */
size_t ctl_framer_partial(const struct ctl_framer *framer, const char **partial);
/*
 * The bytes available have ended (the fd ran dry and stayed dry, or its
 * writers are gone): as in perf, that ends a command.  If the unterminated
 * bytes form a whole command (ctl_command_is_whole), they are delivered
 * as a line and true is returned.  Otherwise they are kept, as a fragment
 * whose rest may still come, and false is returned; so are empty ones.
 */
bool ctl_framer_settle(struct ctl_framer *framer, ctl_line_fn on_line, void *ctx);
/*
 * End of input (every writer went away), after ctl_framer_settle: forget
 * the unterminated bytes, if any, so that they are never glued to what the
 * next writer sends.  Returns their length and points *partial at them
 * (valid until the next feed), or returns 0 when there were none.  The
 * tail of a line already reported as too long is forgotten too, and not
 * returned: it was answered.
 */
size_t ctl_framer_discard(struct ctl_framer *framer, const char **partial);

/* The line holds nothing but blanks and '\r': no command, no reply. */
bool ctl_line_is_empty(const char *line, size_t len);

/* ---- commands ----------------------------------------------------------- */

enum ctl_cmd_kind {
	CTL_CMD_ENABLE,		/* "enable" / "e" [EVENT] */
	CTL_CMD_DISABLE,	/* "disable" / "d" [EVENT] */
	CTL_CMD_PING,
	CTL_CMD_SNAPSHOT,
	CTL_CMD_STOP,
	CTL_CMD_HELLO,
	CTL_CMD_WINDOW_BEGIN,	/* "window begin NAME" */
	CTL_CMD_WINDOW_END,	/* "window end NAME" */
	CTL_CMD_RANGE_LOAD,	/* "range load NAME = SPEC" */
	CTL_CMD_RANGE_UNLOAD,	/* "range unload NAME" */
	CTL_CMD_EVLIST,		/* "evlist" [-v] [-g] [-F], as in perf */
};

struct ctl_command {
	enum ctl_cmd_kind kind;
	/*
	 * EVENT for enable/disable ("" when absent), NAME for window/range,
	 * the option letters for evlist ("vF" for "evlist -v -F").
	 */
	char name[CTL_LINE_MAX + 1];
	/* SPEC for range load, "" otherwise. */
	char spec[CTL_LINE_MAX + 1];
};

/*
 * Parse one line (as delivered by the framer, at most CTL_LINE_MAX bytes, no
 * terminator).  Returns 0 on success.  On error returns -1 and writes a
 * one-line, human-readable reason into reason_buf (e.g. "unknown command
 * 'enablexyz'"; CTL_REPLY_MAX bytes is always enough, a smaller buffer gets
 * a truncated reason; NULL for none).  Offsets in reasons count bytes from
 * the start of line, from 0; bytes of the line a reason quotes are whole
 * UTF-8 characters (the reply formatter replaces invalid ones).  cmd->name
 * and cmd->spec are "" after an error.  cmd may be NULL, to judge the line
 * only.
 */
int ctl_command_parse(const char *line, size_t len, struct ctl_command *cmd,
		      char *reason_buf, size_t reason_cap);

/* The line parses as a command (ctl_command_parse would succeed). */
bool ctl_command_is_whole(const char *line, size_t len);

/* The command's canonical name ("enable", "window begin", ...). */
const char *ctl_command_name(enum ctl_cmd_kind kind);

/* ---- replies ------------------------------------------------------------ */

/*
 * Format a reply into out (cap >= CTL_REPLY_MAX; a bigger cap, up to
 * CTL_REPLY_LONG_MAX, for a long JSON payload): "ack\n\0", "ack TEXT\n\0"
 * or "err TEXT\n\0".  text may be NULL for a bare ack.  The reply is valid
 * UTF-8 and one line whatever text holds: newlines, tabs and other control
 * bytes in text become spaces, and each byte that does not belong to a
 * well-formed UTF-8 sequence becomes U+FFFD.  Text that does not fit is
 * cut between characters.  An err without text gets "unspecified error".
 * Returns the number of bytes to write, the final NUL included: at most
 * cap (and CTL_REPLY_LONG_MAX), and 0 when no valid reply fits (cap < 5,
 * or an err with no room for the first character of its reason).
 */
size_t ctl_reply_format(char *out, size_t cap, bool ok, const char *text);

/*
 * Parse a reply line received by a client (without its '\n'; one leading
 * NUL, left over from the previous reply's framing, is skipped).  Sets *ok
 * and points *text at the payload after "ack " / "err " ("" when none).
 * Returns 0, or -1 when the line is not a reply ("err" with no reason, or
 * a line holding another '\n' or NUL, is not one).
 */
int ctl_reply_parse(const char *line, size_t len, bool *ok, const char **text,
		    size_t *text_len);

#endif
