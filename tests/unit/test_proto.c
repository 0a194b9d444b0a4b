/*
 * test_proto.c: unit tests for proto/ctl_proto (framing, command parsing,
 * reply bytes).  Every error text is asserted exactly, because clients and
 * the end-to-end tests match on them.  Output is TAP (tests/unit/tap.h).
 */
#include "proto/ctl_proto.h"
#include "tests/unit/tap.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a framer callback that records what it was given ------------------- */

#define REC_MAX 16

struct record {
	int count;
	struct {
		char line[CTL_LINE_MAX + 1];
		size_t len;
		bool too_long;
	} got[REC_MAX];
};

static struct record rec;

static void on_line(void *ctx, const char *line, size_t len, bool too_long)
{
	struct record *r = ctx;

	if (r->count < REC_MAX) {
		memcpy(r->got[r->count].line, line, len);
		r->got[r->count].line[len] = '\0';
		r->got[r->count].len = len;
		r->got[r->count].too_long = too_long;
	}
	r->count++;
}

/* A fresh framer, and an empty record of its lines. */
static void fresh_framer(struct ctl_framer *fr)
{
	memset(&rec, 0, sizeof(rec));
	ctl_framer_init(fr);
}

/* Feed fr one unterminated run of bytes longer than a line may be. */
static void feed_too_long(struct ctl_framer *fr)
{
	static char big[CTL_LINE_MAX + 10];

	memset(big, 'x', sizeof(big));
	ctl_framer_feed(fr, big, sizeof(big), on_line, &rec);
}

/* Feed data in pieces of `step` bytes to a fresh framer. */
static void frame(const char *data, size_t n, size_t step)
{
	struct ctl_framer fr;

	fresh_framer(&fr);
	for (size_t i = 0; i < n; i += step)
		ctl_framer_feed(&fr, data + i, n - i < step ? n - i : step, on_line, &rec);
}

static void test_framing_basic(void)
{
	frame("ping\n", 5, 5);
	is_int(rec.count, 1, "one line, one callback");
	is_str(rec.got[0].line, "ping", "line without its terminator");
	ok(!rec.got[0].too_long, "short line is not too long");

	frame("enable\ndisable\n", 15, 1);
	is_int(rec.count, 2, "byte by byte: two lines");
	is_str(rec.got[0].line, "enable", "byte by byte: first line");
	is_str(rec.got[1].line, "disable", "byte by byte: second line");

	frame("e\nd\nping\nstop\n", 14, 14);
	is_int(rec.count, 4, "four commands in one feed");
	is_str(rec.got[2].line, "ping", "third of four");

	frame("window begin a\nwindow end a\n", 28, 3);
	is_int(rec.count, 2, "3-byte splits: two lines");
	is_str(rec.got[1].line, "window end a", "3-byte splits: second line");
}

static void test_framing_terminators(void)
{
	frame("e\0d\0", 4, 4);
	is_int(rec.count, 2, "NUL ends a line");
	is_str(rec.got[1].line, "d", "line after a NUL");

	frame("a\0b\nc\0", 6, 1);
	is_int(rec.count, 3, "NUL and newline mixed");
	is_str(rec.got[2].line, "c", "last of mixed terminators");

	frame("ping\r\n", 6, 6);
	is_int((long long)rec.got[0].len, 5, "\\r\\n: the \\r reaches the parser");

	/* Empty lines are no commands: perf answers them with nothing. */
	frame("\n", 1, 1);
	is_int(rec.count, 0, "an empty line is not delivered");
	frame("\n\0\n", 3, 3);
	is_int(rec.count, 0, "three empty lines: none delivered");
	frame(" \t\r\n\r\0", 6, 1);
	is_int(rec.count, 0, "blank lines and lone \\r: none delivered");
	frame("disable\n\0", 9, 9);
	ok(rec.count == 1 && strcmp(rec.got[0].line, "disable") == 0,
	   "disable\\n\\0 (sizeof \"disable\\n\"): one line");
	frame("\0ping\n\n", 7, 2);
	ok(rec.count == 1 && strcmp(rec.got[0].line, "ping") == 0,
	   "empty lines around a command: only the command");

	frame("pin", 3, 3);
	is_int(rec.count, 0, "no callback before the terminator");
}

static void test_framing_split_state(void)
{
	struct ctl_framer fr;

	fresh_framer(&fr);
	ctl_framer_feed(&fr, "pi", 2, on_line, &rec);
	ctl_framer_feed(&fr, "", 0, on_line, &rec);
	ctl_framer_feed(&fr, "ng\nsto", 6, on_line, &rec);
	is_int(rec.count, 1, "line completed by a later feed");
	is_str(rec.got[0].line, "ping", "joined across feeds");
	ctl_framer_feed(&fr, "p\n", 2, on_line, &rec);
	is_str(rec.got[1].line, "stop", "tail of a feed starts the next line");

	ctl_framer_init(&fr);
	ctl_framer_feed(&fr, "x\n", 2, on_line, &rec);
	is_int(rec.count, 3, "init drops a partial line");
}

/* End of input: a partial line is handed back once and never glued on. */
static void test_framing_discard(void)
{
	struct ctl_framer fr;
	const char *partial;
	size_t n;

	fresh_framer(&fr);
	ctl_framer_feed(&fr, "window begin doomed", 19, on_line, &rec);
	n = ctl_framer_discard(&fr, &partial);
	is_int((long long)n, 19, "discard: the partial line's length");
	ok(n == 19 && memcmp(partial, "window begin doomed", 19) == 0,
	   "discard: the partial line's bytes");
	ctl_framer_feed(&fr, "ping\n", 5, on_line, &rec);
	is_int(rec.count, 1, "after discard: one line");
	is_str(rec.got[0].line, "ping", "after discard: the next writer's line alone");

	is_int((long long)ctl_framer_discard(&fr, &partial), 0,
	       "discard after a whole line: nothing");
	ctl_framer_feed(&fr, "ping\nsto", 8, on_line, &rec);
	is_int((long long)ctl_framer_discard(&fr, &partial), 3,
	       "discard: only the bytes after the last terminator");
	ok(memcmp(partial, "sto", 3) == 0, "discard: the tail of a feed");

	/* The tail of a too-long line was answered already: not handed back,
	 * and its end is not waited for by the next writer's first line. */
	memset(&rec, 0, sizeof(rec));
	feed_too_long(&fr);
	is_int(rec.count, 1, "too long before end of input: reported once");
	is_int((long long)ctl_framer_discard(&fr, &partial), 0,
	       "discard in a too-long line: nothing handed back");
	ctl_framer_feed(&fr, "ping\n", 5, on_line, &rec);
	is_int(rec.count, 2, "after a too-long line's discard: the next line is delivered");
	ok(!rec.got[1].too_long && strcmp(rec.got[1].line, "ping") == 0,
	   "after a too-long line's discard: 'ping' whole");
}

/*
 * The bytes available end without a terminator: a whole command is a line
 * (perf's framing), a fragment waits for its rest.
 */
static void test_framing_settle(void)
{
	struct ctl_framer fr;
	const char *partial;
	size_t n;

	fresh_framer(&fr);
	ok(!ctl_framer_settle(&fr, on_line, &rec), "settle with nothing held: nothing");
	ctl_framer_feed(&fr, "enable", 6, on_line, &rec);
	n = ctl_framer_partial(&fr, &partial);
	ok(n == 6 && memcmp(partial, "enable", 6) == 0, "partial: the unterminated bytes");
	is_int(rec.count, 0, "bare enable: no line before settling");
	ok(ctl_framer_settle(&fr, on_line, &rec), "settle: bare enable is a whole command");
	ok(rec.count == 1 && strcmp(rec.got[0].line, "enable") == 0, "settle: delivered as a line");
	is_int((long long)ctl_framer_partial(&fr, &partial), 0, "settle: nothing held after");
	ctl_framer_feed(&fr, "\n", 1, on_line, &rec);
	is_int(rec.count, 1, "a late terminator after a settled command: no second line");

	ctl_framer_feed(&fr, "window be", 9, on_line, &rec);
	ok(!ctl_framer_settle(&fr, on_line, &rec), "settle: a fragment is kept");
	is_int((long long)ctl_framer_partial(&fr, &partial), 9, "settle: the fragment still held");
	ctl_framer_feed(&fr, "gin rep\n", 8, on_line, &rec);
	ok(rec.count == 2 && strcmp(rec.got[1].line, "window begin rep") == 0,
	   "the fragment's rest makes it a line");

	ctl_framer_feed(&fr, "pi", 2, on_line, &rec);
	ok(!ctl_framer_settle(&fr, on_line, &rec), "settle: 'pi' is no command, kept");
	ctl_framer_feed(&fr, "ng", 2, on_line, &rec);
	ok(ctl_framer_settle(&fr, on_line, &rec), "settle: 'ping' after its rest came");
	ok(rec.count == 3 && strcmp(rec.got[2].line, "ping") == 0, "settle: ping delivered");

	ctl_framer_feed(&fr, " \t", 2, on_line, &rec);
	ok(!ctl_framer_settle(&fr, on_line, &rec) && rec.count == 3, "settle: blanks are no command");
	is_int((long long)ctl_framer_discard(&fr, &partial), 0, "discard: blanks, no warning");

	ctl_framer_feed(&fr, "ping\nstop", 9, on_line, &rec);
	ok(ctl_framer_settle(&fr, on_line, &rec) && rec.count == 5 &&
	   strcmp(rec.got[4].line, "stop") == 0, "settle: the tail after a terminated line");

	/* The tail of a too-long line was answered: nothing to settle. */
	feed_too_long(&fr);
	is_int(rec.count, 6, "too long: reported once");
	ok(!ctl_framer_settle(&fr, on_line, &rec) && rec.count == 6, "settle in a too-long line: nothing");
	is_int((long long)ctl_framer_partial(&fr, &partial), 0, "partial in a too-long line: none");
}

static void test_line_is_empty(void)
{
	ok(ctl_line_is_empty("", 0), "empty: no bytes");
	ok(ctl_line_is_empty(" \t\r ", 4), "empty: blanks and \\r");
	ok(!ctl_line_is_empty(" x ", 3), "not empty: a word");
	ok(!ctl_line_is_empty("\x01", 1), "not empty: a control byte (an err names it)");
	ok(ctl_command_is_whole("enable", 6), "whole: enable");
	ok(ctl_command_is_whole("window begin r", 14), "whole: window begin NAME");
	ok(!ctl_command_is_whole("window be", 9), "not whole: window be");
	ok(!ctl_command_is_whole("window begin", 12), "not whole: window begin without NAME");
	ok(!ctl_command_is_whole("", 0), "not whole: nothing");
	ok(!ctl_command_is_whole("enablexyz", 9), "not whole: unknown");
}

/* n 'a' bytes followed by tail (which may hold NULs: its size is taken). */
static size_t long_line(char *buf, size_t n, const char *tail, size_t tail_len)
{
	memset(buf, 'a', n);
	memcpy(buf + n, tail, tail_len);
	return n + tail_len;
}

#define LONG_LINE(buf, n, lit) long_line((buf), (n), (lit), sizeof(lit) - 1)

static void test_framing_limits(void)
{
	static char buf[CTL_LINE_MAX + 64];
	size_t n;

	n = LONG_LINE(buf, CTL_LINE_MAX, "\n");
	frame(buf, n, n);
	is_int(rec.count, 1, "4096 bytes: one line");
	ok(!rec.got[0].too_long, "4096 bytes: accepted");
	is_int((long long)rec.got[0].len, CTL_LINE_MAX, "4096 bytes: all delivered");

	frame(buf, n, 1);
	ok(rec.count == 1 && !rec.got[0].too_long, "4096 bytes byte by byte: accepted");

	n = LONG_LINE(buf, CTL_LINE_MAX + 1, "");
	frame(buf, n, 1000);
	is_int(rec.count, 1, "4097 bytes: reported before the terminator");
	ok(rec.got[0].too_long, "4097 bytes: too long");
	is_int((long long)rec.got[0].len, CTL_LINE_MAX, "too long: first 4096 bytes kept");

	n = LONG_LINE(buf, CTL_LINE_MAX + 1, "\nping\n");
	frame(buf, n, n);
	is_int(rec.count, 2, "4097 bytes + ping: reported once, then ping");
	is_str(rec.got[1].line, "ping", "command after a too-long line is served");

	n = LONG_LINE(buf, CTL_LINE_MAX + 1, "more\0stop\0");
	frame(buf, n, 7);
	is_int(rec.count, 2, "too long ended by NUL: rest discarded");
	is_str(rec.got[1].line, "stop", "NUL-framed command after it is served");
}

static void test_framing_huge(void)
{
	size_t big = 100 * 1024;
	char *buf = malloc(big + 8);
	size_t n;

	if (!buf)
		abort();
	n = LONG_LINE(buf, big, "");
	frame(buf, n, 1000);
	is_int(rec.count, 1, "100 KB without newline: reported exactly once");
	ok(rec.got[0].too_long, "100 KB: flagged too long");
	n = LONG_LINE(buf, big, "\nstop\n");
	frame(buf, n, 4099);
	is_int(rec.count, 2, "100 KB then stop: two callbacks");
	is_str(rec.got[1].line, "stop", "100 KB then stop: stop served");
	free(buf);
}

/* ---- ctl_command_parse -------------------------------------------------- */

static struct ctl_command cmd;
static char reason[CTL_REPLY_MAX];
static char summary[3 * CTL_LINE_MAX];

/*
 * Parse line and describe the result as one string: "kind|name|spec" on
 * success, "err: reason" on error, so each case is a single test point
 * that shows everything when it fails.
 */
static const char *parse_n(const char *line, size_t len)
{
	if (ctl_command_parse(line, len, &cmd, reason, sizeof(reason)) < 0)
		snprintf(summary, sizeof(summary), "err: %s", reason);
	else
		snprintf(summary, sizeof(summary), "%s|%s|%s",
			 ctl_command_name(cmd.kind), cmd.name, cmd.spec);
	return summary;
}

static const char *parse(const char *line)
{
	return parse_n(line, strlen(line));
}

static void test_parse_simple(void)
{
	is_str(parse("enable"), "enable||", "enable");
	is_str(parse("e"), "enable||", "e");
	is_str(parse("disable"), "disable||", "disable");
	is_str(parse("d"), "disable||", "d");
	is_str(parse("enable cycles"), "enable|cycles|", "enable EVENT");
	is_str(parse("e instructions:u"), "enable|instructions:u|", "e EVENT");
	is_str(parse("d cpu/event=0x3c/"), "disable|cpu/event=0x3c/|", "d EVENT with '/' and '='");
	is_str(parse("disable \t cycles \t "), "disable|cycles|", "disable EVENT with blanks");
	is_str(parse("ping"), "ping||", "ping");
	is_str(parse("snapshot"), "snapshot||", "snapshot");
	is_str(parse("stop"), "stop||", "stop");
	is_str(parse("hello"), "hello||", "hello");
	is_str(parse("evlist"), "evlist||", "evlist");
	is_str(parse("evlist -v"), "evlist|v|", "evlist -v");
	is_str(parse("evlist -F -g -v -g"), "evlist|Fgv|", "evlist options, each once");
	is_str(parse("  \tping \t\r"), "ping||", "leading blanks, trailing blanks and \\r");
	is_str(parse("ping\r\r"), "ping||", "several trailing \\r");
}

static void test_parse_window_range(void)
{
	char name64[80], line[160], want[160];

	is_str(parse("window begin parse"), "window begin|parse|", "window begin");
	is_str(parse("window end parse"), "window end|parse|", "window end");
	is_str(parse("window\tbegin \t a.b:c-D_9"), "window begin|a.b:c-D_9|",
	       "window name alphabet, tab separators");
	memset(name64, 'n', 64);
	name64[64] = '\0';
	snprintf(line, sizeof(line), "window begin %s", name64);
	snprintf(want, sizeof(want), "window begin|%s|", name64);
	is_str(parse(line), want, "64-byte window name accepted");

	is_str(parse("range load r1 = syscalls:sys_enter_read .. syscalls:sys_exit_read"),
	       "range load|r1|syscalls:sys_enter_read .. syscalls:sys_exit_read",
	       "range load NAME = SPEC");
	is_str(parse("range load r1=x"), "range load|r1|x", "range load without spaces");
	is_str(parse("range load r1 =x"), "range load|r1|x", "range load, space before '='");
	is_str(parse("range load r1=  x \t y  "), "range load|r1|x \t y",
	       "SPEC verbatim inside, trimmed at the ends");
	is_str(parse("range load r = a == b"), "range load|r|a == b", "'=' inside SPEC");
	is_str(parse("range unload r1"), "range unload|r1|", "range unload");
}

static void test_parse_errors_generic(void)
{
	char line[CTL_LINE_MAX + 2], want[128];

	is_str(parse(""), "err: empty command", "empty line");
	is_str(parse(" \t "), "err: empty command", "blank line");
	is_str(parse("\r"), "err: empty command", "lone \\r");
	is_str(parse("enablexyz"), "err: unknown command 'enablexyz'", "no prefix match");
	is_str(parse("ENABLE"), "err: unknown command 'ENABLE'", "commands are case-sensitive");
	is_str(parse("pin g"), "err: unknown command 'pin'", "only the first word is quoted");
	memset(line, 'x', 100);
	line[100] = '\0';
	snprintf(want, sizeof(want), "err: unknown command '%.64s'", line);
	is_str(parse(line), want, "unknown word quoted up to 64 bytes");
	/* 63 ASCII bytes then a 2-byte character: the character is not cut. */
	memset(line, 'x', 63);
	memcpy(line + 63, "\xc3\xa9z", 4);
	snprintf(want, sizeof(want), "err: unknown command '%.63s'", line);
	is_str(parse(line), want, "quote stops before a character it would cut");
	memset(line, 'x', 62);
	memcpy(line + 62, "\xc3\xa9z", 4);
	snprintf(want, sizeof(want), "err: unknown command '%.64s'", line);
	is_str(parse(line), want, "quote keeps a character that fits whole");
	is_str(parse("\xff\xfe"), "err: unknown command '\xff\xfe'",
	       "invalid bytes are quoted as sent (the reply replaces them)");
	is_str(parse("pi\x01ng"), "err: invalid byte 0x01 at offset 2", "control byte");
	is_str(parse("ping\x7f"), "err: invalid byte 0x7f at offset 4", "DEL byte");
	is_str(parse("ping\rx"), "err: invalid byte 0x0d at offset 4", "\\r inside the line");
	is_str(parse("  e\x1b"), "err: invalid byte 0x1b at offset 3", "offset counts leading blanks");
	is_str(parse_n("e\0x", 3), "err: invalid byte 0x00 at offset 1", "NUL inside the line");

	memset(line, 'a', CTL_LINE_MAX + 1);
	is_str(parse_n(line, CTL_LINE_MAX + 1), "err: " CTL_ERR_TOO_LONG, "over 4096 bytes");
	memcpy(line, "enable ", 7);
	is_int(ctl_command_parse(line, CTL_LINE_MAX, &cmd, reason, sizeof(reason)), 0,
	       "4096-byte command accepted");
	is_int((long long)strlen(cmd.name), CTL_LINE_MAX - 7, "4096-byte command: EVENT kept whole");
}

static void test_parse_errors_args(void)
{
	is_str(parse("ping x"), "err: 'ping' takes no argument", "ping with argument");
	is_str(parse("snapshot now"), "err: 'snapshot' takes no argument", "snapshot with argument");
	is_str(parse("stop 1"), "err: 'stop' takes no argument", "stop with argument");
	is_str(parse("hello v2"), "err: 'hello' takes no argument", "hello with argument");
	is_str(parse("enable a b"), "err: 'enable' takes at most one EVENT", "enable two events");
	is_str(parse("d a b"), "err: 'disable' takes at most one EVENT", "d two events");
	is_str(parse("evlist -x"), "err: 'evlist' takes -v, -g or -F", "evlist -x");
	is_str(parse("evlist v"), "err: 'evlist' takes -v, -g or -F", "evlist v");
	is_str(parse("evlistfoo"), "err: unknown command 'evlistfoo'", "evlistfoo");
}

static void test_parse_errors_window(void)
{
	char line[160];

	is_str(parse("window"), "err: 'window' needs 'begin' or 'end'", "window alone");
	is_str(parse("window start x"), "err: 'window' needs 'begin' or 'end'", "window start");
	is_str(parse("window begin"), "err: 'window begin' needs a NAME", "window begin no name");
	is_str(parse("window end  "), "err: 'window end' needs a NAME", "window end no name");
	memset(line, 0, sizeof(line));
	memcpy(line, "window begin ", 13);
	memset(line + 13, 'n', 65);
	is_str(parse(line), "err: window name too long (over 64 bytes)", "65-byte window name");
	is_str(parse("window begin a/b"), "err: invalid character '/' in window name at offset 14",
	       "bad character in window name");
	is_str(parse(" window end x\"y"), "err: invalid character '\"' in window name at offset 13",
	       "quote in window name");
	is_str(parse("window begin caf\xc3\xa9"),
	       "err: invalid byte 0xc3 in window name at offset 16", "non-ASCII window name");
	is_str(parse("window begin a b"), "err: 'window begin' takes exactly one NAME",
	       "window begin two names");
	is_str(parse("window end a b"), "err: 'window end' takes exactly one NAME",
	       "window end two names");
}

static void test_parse_errors_range(void)
{
	char line[160];

	is_str(parse("range"), "err: 'range' needs 'load' or 'unload'", "range alone");
	is_str(parse("range loader x"), "err: 'range' needs 'load' or 'unload'", "range loader");
	is_str(parse("range load"), "err: 'range load' needs NAME = SPEC", "range load alone");
	is_str(parse("range load r"), "err: 'range load' needs NAME = SPEC", "range load no '='");
	is_str(parse("range load = x"), "err: 'range load' needs NAME = SPEC", "range load no name");
	is_str(parse("range load r = \t"), "err: 'range load' needs a SPEC after '='",
	       "range load empty SPEC");
	is_str(parse("range load r x = y"), "err: expected '=' after range name at offset 13",
	       "range load two words before '='");
	is_str(parse("range load r/x = y"), "err: invalid character '/' in range name at offset 12",
	       "bad character in range name");
	memset(line, 0, sizeof(line));
	memcpy(line, "range load ", 11);
	memset(line + 11, 'r', 65);
	memcpy(line + 76, "=x", 2);
	is_str(parse(line), "err: range name too long (over 64 bytes)", "65-byte range name");
	is_str(parse("range unload"), "err: 'range unload' needs a NAME", "range unload no name");
	is_str(parse("range unload a b"), "err: 'range unload' takes exactly one NAME",
	       "range unload two names");
}

static void test_parse_misc(void)
{
	char small[8];

	parse("enable cycles");
	parse("window begin a b");
	ok(cmd.name[0] == '\0' && cmd.spec[0] == '\0', "fields cleared after an error");
	ctl_command_parse("nope", 4, &cmd, small, sizeof(small));
	is_str(small, "unknown", "reason truncated to reason_cap");
	is_int(ctl_command_parse("ping", 4, &cmd, NULL, 0), 0, "reason buffer unused on success");
}

static void test_command_names(void)
{
	is_str(ctl_command_name(CTL_CMD_ENABLE), "enable", "name: enable");
	is_str(ctl_command_name(CTL_CMD_DISABLE), "disable", "name: disable");
	is_str(ctl_command_name(CTL_CMD_PING), "ping", "name: ping");
	is_str(ctl_command_name(CTL_CMD_SNAPSHOT), "snapshot", "name: snapshot");
	is_str(ctl_command_name(CTL_CMD_STOP), "stop", "name: stop");
	is_str(ctl_command_name(CTL_CMD_HELLO), "hello", "name: hello");
	is_str(ctl_command_name(CTL_CMD_WINDOW_BEGIN), "window begin", "name: window begin");
	is_str(ctl_command_name(CTL_CMD_WINDOW_END), "window end", "name: window end");
	is_str(ctl_command_name(CTL_CMD_RANGE_LOAD), "range load", "name: range load");
	is_str(ctl_command_name(CTL_CMD_RANGE_UNLOAD), "range unload", "name: range unload");
	is_str(ctl_command_name(CTL_CMD_EVLIST), "evlist", "name: evlist");
	is_str(ctl_command_name((enum ctl_cmd_kind)99), "unknown", "name: out of range");
}

/* ---- replies ------------------------------------------------------------ */

static char out[CTL_REPLY_MAX + 64];

/* Format, then check length and bytes (NUL included) in one test point. */
static void reply_is(bool ok_, const char *text, size_t cap, const char *want,
		     size_t want_len, const char *what)
{
	size_t n;

	memset(out, '#', sizeof(out));
	n = ctl_reply_format(out, cap, ok_, text);
	if (!ok(n == want_len && memcmp(out, want, want_len) == 0, what))
		printf("#   got %zu bytes: '%.*s'\n", n, (int)n, out);
}

static void test_reply_format(void)
{
	static char big[10000];
	size_t n;

	reply_is(true, NULL, sizeof(out), "ack\n\0", 5, "bare ack is perf's 5 bytes");
	reply_is(true, "", sizeof(out), "ack\n\0", 5, "ack with empty text is bare");
	reply_is(true, "{\"version\":1}", sizeof(out), "ack {\"version\":1}\n\0", 19, "ack TEXT");
	reply_is(false, "unknown command 'x'", sizeof(out),
		 "err unknown command 'x'\n\0", 25, "err TEXT");
	reply_is(false, NULL, sizeof(out), "err unspecified error\n\0", 23, "err without text");
	reply_is(false, "a\nb\tc\rd\x7f" "e", sizeof(out), "err a b c d e\n\0", 15,
		 "control bytes become spaces");
	reply_is(true, "caf\xc3\xa9", sizeof(out), "ack caf\xc3\xa9\n\0", 11, "UTF-8 kept");
	reply_is(true, "hello", 5, "ack\n\0", 5, "cap 5: text dropped");
	reply_is(true, "a\xc3\xa9", 8, "ack a\n\0", 7, "cut before a split UTF-8 sequence");
	reply_is(true, "abcdef", 9, "ack abc\n\0", 9, "text truncated to cap");
	is_int((long long)ctl_reply_format(out, 4, true, NULL), 0, "cap 4: nothing fits");
	is_int((long long)ctl_reply_format(out, 6, false, "x"), 0, "cap 6: no room for a reason");
	reply_is(false, "xyz", 7, "err x\n\0", 7, "cap 7: one byte of reason");
	is_int((long long)ctl_reply_format(out, 7, false, "\xc3\xa9"), 0,
	       "cap 7: a 2-byte character does not fit, and is not cut");
	reply_is(false, "\xc3\xa9", 8, "err \xc3\xa9\n\0", 8, "cap 8: the character fits");
	reply_is(true, "a\xe2\x82\xac", 9, "ack a\n\0", 7, "a 3-byte character is not cut");
	reply_is(true, "a\xf0\x9f\x98\x80" "b", sizeof(out), "ack a\xf0\x9f\x98\x80" "b\n\0", 12,
		 "a 4-byte character kept");
	reply_is(false, "x\xffy", sizeof(out), "err x\xef\xbf\xbdy\n\0", 11,
		 "an invalid byte becomes U+FFFD");
	reply_is(false, "x\xc3", sizeof(out), "err x\xef\xbf\xbd\n\0", 10,
		 "a truncated sequence becomes U+FFFD");
	reply_is(false, "\xed\xa0\x80", sizeof(out),
		 "err \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\n\0", 15,
		 "a surrogate's three bytes become three U+FFFD");
	reply_is(false, "\xc0\xaf", sizeof(out), "err \xef\xbf\xbd\xef\xbf\xbd\n\0", 12,
		 "an overlong form becomes U+FFFD");
	reply_is(true, "a\xff", 8, "ack a\n\0", 7, "no room for U+FFFD: stops before it");

	memset(big, 'x', sizeof(big) - 1);
	n = ctl_reply_format(out, CTL_REPLY_MAX, true, big);
	is_int((long long)n, CTL_REPLY_MAX, "long text: reply capped at its buffer, CTL_REPLY_MAX");
	ok(memcmp(out + n - 2, "\n\0", 2) == 0, "long text: framing kept");
	ok(memchr(out, '\n', n - 2) == NULL, "long text: one line");
}

static const char *reply_parse(const char *line, size_t len)
{
	const char *text;
	size_t tlen;
	bool ok_;

	if (ctl_reply_parse(line, len, &ok_, &text, &tlen) < 0)
		return "-1";
	snprintf(summary, sizeof(summary), "%s:%.*s", ok_ ? "ack" : "err", (int)tlen, text);
	return summary;
}

static void test_reply_parse(void)
{
	size_t n;

	is_str(reply_parse("ack", 3), "ack:", "parse: ack");
	is_str(reply_parse("\0ack", 4), "ack:", "parse: leading NUL skipped");
	is_str(reply_parse("ack {\"v\":1}", 11), "ack:{\"v\":1}", "parse: ack payload");
	is_str(reply_parse("\0err boom", 9), "err:boom", "parse: err reason");
	is_str(reply_parse("ack ", 4), "ack:", "parse: ack with empty payload");
	is_str(reply_parse("err", 3), "-1", "parse: err without reason");
	is_str(reply_parse("err ", 4), "-1", "parse: err with empty reason");
	is_str(reply_parse("ackx", 4), "-1", "parse: ackx");
	is_str(reply_parse("nak", 3), "-1", "parse: nak");
	is_str(reply_parse("", 0), "-1", "parse: empty");
	is_str(reply_parse("\0", 1), "-1", "parse: lone NUL");
	is_str(reply_parse("\0\0ack", 5), "-1", "parse: only one NUL skipped");
	is_str(reply_parse("ack a\nb", 7), "-1", "parse: embedded newline");
	is_str(reply_parse("ac", 2), "-1", "parse: short");

	n = ctl_reply_format(out, sizeof(out), false, "bad\nthing");
	is_str(reply_parse(out, n - 2), "err:bad thing", "format then parse round trip");
}

int main(void)
{
	test_framing_basic();
	test_framing_terminators();
	test_framing_split_state();
	test_framing_discard();
	test_framing_settle();
	test_line_is_empty();
	test_framing_limits();
	test_framing_huge();
	test_parse_simple();
	test_parse_window_range();
	test_parse_errors_generic();
	test_parse_errors_args();
	test_parse_errors_window();
	test_parse_errors_range();
	test_parse_misc();
	test_command_names();
	test_reply_format();
	test_reply_parse();
	return tap_done();
}
