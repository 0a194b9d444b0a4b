/*
 * ctl_proto.c: framing, parsing and reply formatting for the control
 * protocol (docs/protocol.md; the API is described in ctl_proto.h).
 *
 * Everything here works on caller-owned buffers: no I/O, no allocation, no
 * global state.  Bytes come from a file descriptor the agent does not trust,
 * so every function accepts any input and every error names the problem and,
 * where it helps, its byte offset in the line (0-based, from the first byte
 * the framer delivered).
 */
#include "proto/ctl_proto.h"
#include "proto/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- framing ------------------------------------------------------------ */

void ctl_framer_init(struct ctl_framer *framer)
{
	framer->len = 0;
	framer->discarding = false;
}

/*
 * Index of the first '\n' or '\0' in data[0..n), or n.  Two memchr calls
 * instead of a byte loop: control fds may deliver large bursts, and the
 * second search only covers the prefix before the first newline.
 */
static size_t find_terminator(const char *data, size_t n)
{
	const char *nl = memchr(data, '\n', n);
	size_t end = nl ? (size_t)(nl - data) : n;
	const char *nul = memchr(data, '\0', end);

	return nul ? (size_t)(nul - data) : end;
}

/*
 * Append the bytes of an unterminated piece to the current line.  When the
 * line would pass CTL_LINE_MAX it is reported at once (the agent answers it
 * without waiting for the end of a line that may never come) and the framer
 * switches to discarding until the next terminator.
 */
static void framer_append(struct ctl_framer *framer, const char *data, size_t n,
			  ctl_line_fn on_line, void *ctx)
{
	size_t room = CTL_LINE_MAX - framer->len;

	if (framer->discarding || n == 0)
		return;
	if (n <= room) {
		memcpy(framer->line + framer->len, data, n);
		framer->len += n;
		return;
	}
	memcpy(framer->line + framer->len, data, room);
	framer->len = CTL_LINE_MAX;
	on_line(ctx, framer->line, framer->len, true);
	framer->len = 0;
	framer->discarding = true;
}

/*
 * A terminator ends either a normal line or the tail of a too-long one.  An
 * empty line is no command: perf answers it with nothing, and a client
 * that writes sizeof("disable\n") bytes sends "disable\n\0", whose NUL
 * must not cost it a second reply.
 */
static void framer_end_line(struct ctl_framer *framer, ctl_line_fn on_line, void *ctx)
{
	if (!framer->discarding && !ctl_line_is_empty(framer->line, framer->len))
		on_line(ctx, framer->line, framer->len, false);
	framer->len = 0;
	framer->discarding = false;
}

void ctl_framer_feed(struct ctl_framer *framer, const char *data, size_t n,
		     ctl_line_fn on_line, void *ctx)
{
	while (n > 0) {
		size_t piece = find_terminator(data, n);

		framer_append(framer, data, piece, on_line, ctx);
		if (piece == n)
			return;
		framer_end_line(framer, on_line, ctx);
		data += piece + 1;
		n -= piece + 1;
	}
}

size_t ctl_framer_partial(const struct ctl_framer *framer, const char **partial)
{
	*partial = framer->line;
	return framer->discarding ? 0 : framer->len;
}

bool ctl_framer_settle(struct ctl_framer *framer, ctl_line_fn on_line, void *ctx)
{
	size_t len = framer->len;

	if (framer->discarding || len == 0 || !ctl_command_is_whole(framer->line, len))
		return false;
	framer->len = 0;
	on_line(ctx, framer->line, len, false);
	return true;
}

/* Blanks left by a writer are no command and not worth a warning either. */
size_t ctl_framer_discard(struct ctl_framer *framer, const char **partial)
{
	size_t len = framer->discarding || ctl_line_is_empty(framer->line, framer->len) ?
		     0 : framer->len;

	*partial = framer->line;
	framer->len = 0;
	framer->discarding = false;
	return len;
}

/* ---- parsing helpers ---------------------------------------------------- */

/*
 * A cursor over the trimmed line.  base is the line as delivered, so that
 * offsets in error messages match what the user sent, leading blanks
 * included.
 */
struct cursor {
	const char *base;
	size_t pos;
	size_t end;
};

struct word {
	const char *s;
	size_t len;
	size_t off;		/* offset of s in the line */
};

/* Sub-parsers report errors through this; it never overflows reason_buf. */
struct err_buf {
	char *buf;
	size_t cap;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* Bytes a command must not contain: tab is a separator, not a control. */
static bool is_bad_byte(unsigned char c)
{
	return is_control(c) && c != '\t';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
	       c == '-';
}

/* Always returns -1 so that callers can write `return fail(...)`. */
__attribute__((format(printf, 2, 3)))
static int fail(struct err_buf *err, const char *fmt, ...)
{
	va_list ap;

	if (err->buf && err->cap > 0) {
		va_start(ap, fmt);
		vsnprintf(err->buf, err->cap, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static void skip_blanks(struct cursor *cur)
{
	while (cur->pos < cur->end && is_blank(cur->base[cur->pos]))
		cur->pos++;
}

static bool at_end(struct cursor *cur)
{
	skip_blanks(cur);
	return cur->pos == cur->end;
}

/* Next word: a run of bytes up to a blank or `stop` (0 for none). */
static bool next_word(struct cursor *cur, struct word *w, char stop)
{
	skip_blanks(cur);
	w->s = cur->base + cur->pos;
	w->off = cur->pos;
	while (cur->pos < cur->end && !is_blank(cur->base[cur->pos]) &&
	       (stop == 0 || cur->base[cur->pos] != stop))
		cur->pos++;
	w->len = cur->pos - w->off;
	return w->len > 0;
}

static bool word_is(const struct word *w, const char *lit)
{
	return strlen(lit) == w->len && memcmp(w->s, lit, w->len) == 0;
}

/* dst holds CTL_LINE_MAX + 1 bytes and len <= CTL_LINE_MAX (checked on entry). */
static void copy_field(char *dst, const char *src, size_t len)
{
	if (len > 0)
		memcpy(dst, src, len);
	dst[len] = '\0';
}

/*
 * Window and range names end up as JSON keys and report labels, so they are
 * restricted to a small, quote-free alphabet.  what is "window" or "range".
 */
static int check_name(const struct word *w, const char *what, struct err_buf *err)
{
	if (w->len > CTL_NAME_MAX)
		return fail(err, "%s name too long (over %d bytes)", what, CTL_NAME_MAX);
	for (size_t i = 0; i < w->len; i++) {
		unsigned char c = (unsigned char)w->s[i];

		if (is_name_char((char)c))
			continue;
		/* Non-ASCII bytes are shown in hex: a lone byte of a UTF-8
		 * sequence would print as garbage. */
		if (c >= 0x80)
			return fail(err, "invalid byte 0x%02x in %s name at offset %zu",
				    c, what, w->off + i);
		return fail(err, "invalid character '%c' in %s name at offset %zu",
			    c, what, w->off + i);
	}
	return 0;
}

/* ---- command parsers ---------------------------------------------------- */

/*
 * What a parser found, as words of the line: copied into a struct
 * ctl_command only once the whole line has parsed, so that judging a
 * line (ctl_command_is_whole) needs no command to fill.
 */
struct parsed {
	enum ctl_cmd_kind kind;
	struct word name;	/* EVENT, NAME or the evlist options; len 0: none */
	struct word spec;
	char opts[4];		/* evlist's option letters, NUL-terminated */
};

/* "enable"/"e"/"disable"/"d" with an optional EVENT, left for the agent to resolve. */
static int parse_toggle(struct cursor *cur, struct parsed *p, struct err_buf *err)
{
	struct word ev;

	if (!next_word(cur, &ev, 0))
		return 0;
	if (!at_end(cur))
		return fail(err, "'%s' takes at most one EVENT", ctl_command_name(p->kind));
	p->name = ev;
	return 0;
}

static int parse_no_arg(struct cursor *cur, struct parsed *p, struct err_buf *err)
{
	if (!at_end(cur))
		return fail(err, "'%s' takes no argument", ctl_command_name(p->kind));
	return 0;
}

/*
 * perf's "evlist [-v|-g|-F]": list the events (-v with their attributes,
 * -g with their groups, -F with their sample frequency).  perf takes one
 * option; more, each once, are accepted here.
 */
static int parse_evlist(struct cursor *cur, struct parsed *p, struct err_buf *err)
{
	static const char letters[] = "vgF";
	struct word opt;
	size_t n = 0;

	while (next_word(cur, &opt, 0)) {
		const char *l = opt.len == 2 && opt.s[0] == '-' ?
				memchr(letters, opt.s[1], sizeof(letters) - 1) : NULL;

		if (!l)
			return fail(err, "'evlist' takes -v, -g or -F");
		if (memchr(p->opts, *l, n))
			continue;
		p->opts[n++] = *l;
	}
	p->opts[n] = '\0';
	return 0;
}

/* The single NAME of "window begin/end NAME" and "range unload NAME". */
static int parse_one_name(struct cursor *cur, struct parsed *p,
			  const char *what, struct err_buf *err)
{
	const char *verb = ctl_command_name(p->kind);
	struct word name;

	if (!next_word(cur, &name, 0))
		return fail(err, "'%s' needs a NAME", verb);
	if (check_name(&name, what, err) < 0)
		return -1;
	if (!at_end(cur))
		return fail(err, "'%s' takes exactly one NAME", verb);
	p->name = name;
	return 0;
}

static int parse_window(struct cursor *cur, struct parsed *p, struct err_buf *err)
{
	struct word sub;

	next_word(cur, &sub, 0);
	if (word_is(&sub, "begin"))
		p->kind = CTL_CMD_WINDOW_BEGIN;
	else if (word_is(&sub, "end"))
		p->kind = CTL_CMD_WINDOW_END;
	else
		return fail(err, "'window' needs 'begin' or 'end'");
	return parse_one_name(cur, p, "window", err);
}

/*
 * "range load NAME = SPEC": the name stops at a blank or at '=', so that
 * "NAME=SPEC" works too; SPEC is the rest of the (trimmed) line, verbatim,
 * for the range grammar parser to judge.
 */
static int parse_range_load(struct cursor *cur, struct parsed *p, struct err_buf *err)
{
	struct word name;

	if (!next_word(cur, &name, '='))
		return fail(err, "'range load' needs NAME = SPEC");
	if (check_name(&name, "range", err) < 0)
		return -1;
	if (at_end(cur))
		return fail(err, "'range load' needs NAME = SPEC");
	if (cur->base[cur->pos] != '=')
		return fail(err, "expected '=' after range name at offset %zu", cur->pos);
	cur->pos++;
	if (at_end(cur))
		return fail(err, "'range load' needs a SPEC after '='");
	p->name = name;
	p->spec.s = cur->base + cur->pos;
	p->spec.len = cur->end - cur->pos;
	p->spec.off = cur->pos;
	return 0;
}

static int parse_range(struct cursor *cur, struct parsed *p, struct err_buf *err)
{
	struct word sub;

	next_word(cur, &sub, 0);
	if (word_is(&sub, "load")) {
		p->kind = CTL_CMD_RANGE_LOAD;
		return parse_range_load(cur, p, err);
	}
	if (word_is(&sub, "unload")) {
		p->kind = CTL_CMD_RANGE_UNLOAD;
		return parse_one_name(cur, p, "range", err);
	}
	return fail(err, "'range' needs 'load' or 'unload'");
}

typedef int (*cmd_parser)(struct cursor *cur, struct parsed *p, struct err_buf *err);

/* First words, matched exactly: perf acks "enablexyz", we do not. */
static const struct {
	const char *word;
	enum ctl_cmd_kind kind;	/* window/range parsers refine it */
	cmd_parser parse;
} commands[] = {
	{ "enable",   CTL_CMD_ENABLE,       parse_toggle },
	{ "e",        CTL_CMD_ENABLE,       parse_toggle },
	{ "disable",  CTL_CMD_DISABLE,      parse_toggle },
	{ "d",        CTL_CMD_DISABLE,      parse_toggle },
	{ "ping",     CTL_CMD_PING,         parse_no_arg },
	{ "snapshot", CTL_CMD_SNAPSHOT,     parse_no_arg },
	{ "stop",     CTL_CMD_STOP,         parse_no_arg },
	{ "hello",    CTL_CMD_HELLO,        parse_no_arg },
	{ "evlist",   CTL_CMD_EVLIST,       parse_evlist },
	{ "window",   CTL_CMD_WINDOW_BEGIN, parse_window },
	{ "range",    CTL_CMD_RANGE_LOAD,   parse_range },
};

/* ---- ctl_command_parse -------------------------------------------------- */

/* Trailing "\r" comes from clients that send "\r\n"; blanks from sloppy ones. */
static void trim(struct cursor *cur)
{
	const char *s = cur->base;

	while (cur->end > 0 && (s[cur->end - 1] == '\r' || is_blank(s[cur->end - 1])))
		cur->end--;
	skip_blanks(cur);
}

bool ctl_line_is_empty(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_blank(line[i]) && line[i] != '\r')
			return false;
	return true;
}

/*
 * Control bytes inside a command are almost always a client bug (binary
 * data written to the wrong fd, a stray "\r" mid-line); naming the byte and
 * its offset makes that easy to see.
 */
static int check_bytes(const struct cursor *cur, struct err_buf *err)
{
	for (size_t i = cur->pos; i < cur->end; i++) {
		unsigned char c = (unsigned char)cur->base[i];

		if (is_bad_byte(c))
			return fail(err, "invalid byte 0x%02x at offset %zu", c, i);
	}
	return 0;
}

/*
 * How many bytes of w to quote in a reason: at most CTL_NAME_MAX, and never
 * the first bytes of a UTF-8 character whose rest is cut off.  A byte that
 * is no part of a valid sequence counts as one (the reply shows it as
 * U+FFFD).
 */
static size_t quote_len(const struct word *w)
{
	size_t n = 0;

	while (n < w->len) {
		size_t c = utf8_seq_len(w->s + n, w->len - n);

		if (c == 0)
			c = 1;
		if (n + c > CTL_NAME_MAX)
			break;
		n += c;
	}
	return n;
}

static int dispatch(struct cursor *cur, struct parsed *p, struct err_buf *err)
{
	struct word first;

	next_word(cur, &first, 0);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (word_is(&first, commands[i].word)) {
			p->kind = commands[i].kind;
			return commands[i].parse(cur, p, err);
		}
	}
	/* Quote a bounded prefix: the reply must stay short whatever was sent. */
	return fail(err, "unknown command '%.*s'", (int)quote_len(&first), first.s);
}

int ctl_command_parse(const char *line, size_t len, struct ctl_command *cmd,
		      char *reason_buf, size_t reason_cap)
{
	struct err_buf err = { reason_buf, reason_cap };
	struct cursor cur = { line, 0, len };
	struct parsed p;

	memset(&p, 0, sizeof(p));
	if (cmd) {
		cmd->name[0] = '\0';
		cmd->spec[0] = '\0';
	}
	if (len > CTL_LINE_MAX)
		return fail(&err, "%s", CTL_ERR_TOO_LONG);
	trim(&cur);
	if (cur.pos == cur.end)
		return fail(&err, "empty command");
	if (check_bytes(&cur, &err) < 0 || dispatch(&cur, &p, &err) < 0)
		return -1;
	if (cmd) {
		cmd->kind = p.kind;
		if (p.kind == CTL_CMD_EVLIST)
			copy_field(cmd->name, p.opts, strlen(p.opts));
		else
			copy_field(cmd->name, p.name.s, p.name.len);
		copy_field(cmd->spec, p.spec.s, p.spec.len);
	}
	return 0;
}

bool ctl_command_is_whole(const char *line, size_t len)
{
	return ctl_command_parse(line, len, NULL, NULL, 0) == 0;
}

const char *ctl_command_name(enum ctl_cmd_kind kind)
{
	switch (kind) {
	case CTL_CMD_ENABLE:		return "enable";
	case CTL_CMD_DISABLE:		return "disable";
	case CTL_CMD_PING:		return "ping";
	case CTL_CMD_SNAPSHOT:		return "snapshot";
	case CTL_CMD_STOP:		return "stop";
	case CTL_CMD_HELLO:		return "hello";
	case CTL_CMD_WINDOW_BEGIN:	return "window begin";
	case CTL_CMD_WINDOW_END:	return "window end";
	case CTL_CMD_RANGE_LOAD:	return "range load";
	case CTL_CMD_RANGE_UNLOAD:	return "range unload";
	case CTL_CMD_EVLIST:		return "evlist";
	}
	return "unknown";
}

/* ---- replies ------------------------------------------------------------ */

/*
 * Copy text into dst, at most room bytes, as valid UTF-8 on one line:
 * control bytes become spaces, a byte that starts no well-formed sequence
 * becomes U+FFFD, and the copy stops before a character that does not fit
 * whole.  Returns the bytes written.
 */
static size_t copy_text(char *dst, size_t room, const char *text)
{
	size_t in = 0, o = 0, left = strlen(text);

	while (in < left) {
		size_t c = utf8_seq_len(text + in, left - in);
		const char *src = text + in;
		size_t out_len = c;

		if (c == 0) {
			src = UTF8_REPLACEMENT;
			out_len = UTF8_REPLACEMENT_LEN;
			c = 1;
		}
		if (o + out_len > room)
			break;
		if (out_len == 1 && is_control((unsigned char)*src))
			dst[o] = ' ';
		else
			memcpy(dst + o, src, out_len);
		o += out_len;
		in += c;
	}
	return o;
}

size_t ctl_reply_format(char *out, size_t cap, bool ok, const char *text)
{
	/* "ack" + "\n\0": the shortest reply, and perf's exact bytes. */
	const size_t bare = 5;
	size_t n = 3, tlen = 0;

	if (cap > CTL_REPLY_LONG_MAX)
		cap = CTL_REPLY_LONG_MAX;
	if (cap < bare) {
		if (cap > 0)
			out[0] = '\0';
		return 0;
	}
	/*
	 * "err" alone would not parse as a reply: an error always has a
	 * reason, and one that cannot keep a single character does not fit.
	 */
	if (!ok && (!text || !*text))
		text = "unspecified error";
	if (text && cap > bare + 1)
		tlen = copy_text(out + 4, cap - bare - 1, text);
	if (!ok && tlen == 0) {
		out[0] = '\0';
		return 0;
	}
	memcpy(out, ok ? "ack" : "err", 3);
	if (tlen > 0) {
		out[n++] = ' ';
		n += tlen;
	}
	out[n++] = '\n';
	out[n++] = '\0';
	return n;
}

/* True when line[0..len) holds no '\n' and no NUL: one reply, nothing more. */
static bool is_one_line(const char *line, size_t len)
{
	return memchr(line, '\n', len) == NULL && memchr(line, '\0', len) == NULL;
}

int ctl_reply_parse(const char *line, size_t len, bool *ok, const char **text,
		    size_t *text_len)
{
	bool is_ack;

	if (len > 0 && line[0] == '\0') {
		line++;
		len--;
	}
	if (len < 3 || !is_one_line(line, len))
		return -1;
	if (memcmp(line, "ack", 3) == 0)
		is_ack = true;
	else if (memcmp(line, "err", 3) == 0)
		is_ack = false;
	else
		return -1;
	/* "ack" may stand alone; "err" must say why. */
	if (len == 3 && !is_ack)
		return -1;
	if (len > 3 && line[3] != ' ')
		return -1;
	if (len == 4 && !is_ack)
		return -1;
	if (ok)
		*ok = is_ack;
	if (text)
		*text = len > 4 ? line + 4 : line + len;
	if (text_len)
		*text_len = len > 4 ? len - 4 : 0;
	return 0;
}
