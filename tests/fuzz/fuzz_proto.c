/*
 * fuzz_proto.c: libFuzzer target for proto/ctl_proto, the code that reads
 * bytes from control fds nobody vouches for.
 *
 * The input is a control stream.  It is framed three times: in one feed,
 * in pieces whose sizes derive from the input itself (how the kernel splits
 * reads must never change what the agent does), and by a byte-at-a-time
 * model of the rules in ctl_proto.h, written as plainly as possible so
 * that it can serve as the oracle.  All three must deliver the same lines
 * and hold the same unterminated bytes; settling those (the fd ran dry)
 * must do the same in both framers, and deliver them exactly when they
 * parse.  Every line is parsed and answered the way the agent answers it,
 * and every reply, also one echoing the raw input, must keep the framing
 * clients rely on: ends with "\n\0", no other '\n' or NUL, at most its
 * buffer (CTL_REPLY_MAX + 16) bytes, valid UTF-8, and parses back as the
 * same kind of reply.
 *
 * Build: clang -g -O1 -I. -fsanitize=fuzzer,address,undefined \
 *        -o fuzz_proto tests/fuzz/fuzz_proto.c proto/ctl_proto.c proto/utf8.c
 */
#include "proto/ctl_proto.h"
#include "proto/utf8.h"
#include "tests/fuzz/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one framing pass saw, reduced to a digest to compare passes. */
struct pass {
	uint64_t digest;
	size_t lines;
	size_t reply_cap;	/* cap for the truncation check, from the input */
	bool answer;		/* parse and reply (one pass is enough) */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* The framing every reply must keep, whatever went into it. */
static void check_reply(const char *out, size_t n, bool want_ok)
{
	bool got_ok;
	const char *text;
	size_t tlen;

	CHECK(n >= 5 && n <= CTL_REPLY_MAX + 16);
	CHECK(out[n - 2] == '\n' && out[n - 1] == '\0');
	CHECK(memchr(out, '\n', n - 2) == NULL);
	CHECK(memchr(out, '\0', n - 2) == NULL);
	for (size_t i = 0, c; i < n - 2; i += c)
		CHECK((c = utf8_seq_len(out + i, n - 2 - i)) > 0);
	CHECK(ctl_reply_parse(out, n - 2, &got_ok, &text, &tlen) == 0);
	CHECK(got_ok == want_ok);
	CHECK(text >= out && text + tlen <= out + n - 2);
}

static void reply(const char *text, bool ok, size_t small_cap)
{
	static char out[CTL_REPLY_MAX + 16];
	size_t n;

	n = ctl_reply_format(out, sizeof(out), ok, text);
	check_reply(out, n, ok);
	/* A reply too big for its buffer is cut or refused, never malformed.
	 * (The formatter trusts cap up to CTL_REPLY_LONG_MAX: never more
	 * than the buffer really has.) */
	if (small_cap > sizeof(out))
		small_cap = sizeof(out);
	n = ctl_reply_format(out, small_cap, ok, text);
	CHECK(n <= small_cap);
	/* An err needs room for the first character of its reason (up to 4
	 * bytes, U+FFFD for a stray byte is 3). */
	CHECK(n > 0 || small_cap < 10 || (ok && small_cap < 5));
	if (n > 0)
		check_reply(out, n, ok);
}

static void check_command(const struct ctl_command *cmd)
{
	size_t name_len = strnlen(cmd->name, sizeof(cmd->name));
	size_t spec_len = strnlen(cmd->spec, sizeof(cmd->spec));

	CHECK(name_len <= CTL_LINE_MAX && spec_len <= CTL_LINE_MAX);
	CHECK(strcmp(ctl_command_name(cmd->kind), "unknown") != 0);
	if (cmd->kind >= CTL_CMD_WINDOW_BEGIN && cmd->kind <= CTL_CMD_RANGE_UNLOAD)
		CHECK(name_len >= 1 && name_len <= CTL_NAME_MAX);
	if (cmd->kind == CTL_CMD_EVLIST)
		CHECK(name_len <= 3 && strspn(cmd->name, "vgF") == name_len);
	CHECK((cmd->kind == CTL_CMD_RANGE_LOAD) == (spec_len > 0));
}

/* Answer a line as the agent does: err with the reason, or ack. */
static void answer(const char *line, size_t len, bool too_long, size_t small_cap)
{
	static struct ctl_command cmd;
	static char reason[CTL_REPLY_MAX];
	static char text[CTL_LINE_MAX + 1];

	if (too_long) {
		reply(CTL_ERR_TOO_LONG, false, small_cap);
		return;
	}
	if (ctl_command_parse(line, len, &cmd, reason, sizeof(reason)) < 0) {
		CHECK(reason[0] != '\0' && strchr(reason, '\n') == NULL);
		CHECK(cmd.name[0] == '\0' && cmd.spec[0] == '\0');
		reply(reason, false, small_cap);
		return;
	}
	check_command(&cmd);
	reply(NULL, true, small_cap);
	/* Echoing client bytes (as "window end" JSON does with a name) must
	 * not break the framing either. */
	memcpy(text, line, len);
	text[len] = '\0';
	reply(text, true, small_cap);
}

static void on_line(void *ctx, const char *line, size_t len, bool too_long)
{
	struct pass *p = ctx;
	const char *text;
	size_t tlen;
	bool ok;

	CHECK(len <= CTL_LINE_MAX);
	CHECK(!too_long || len == CTL_LINE_MAX);
	CHECK(too_long || (memchr(line, '\n', len) == NULL && memchr(line, '\0', len) == NULL));
	p->digest = fnv(p->digest, &len, sizeof(len));
	p->digest = fnv(p->digest, &too_long, sizeof(too_long));
	p->digest = fnv(p->digest, line, len);
	p->lines++;
	if (!p->answer)
		return;
	answer(line, len, too_long, p->reply_cap);
	/* The client side reads the same hostile bytes. */
	if (ctl_reply_parse(line, len, &ok, &text, &tlen) == 0)
		CHECK(text >= line && text + tlen <= line + len);
}

/* The model's idea of an empty line: blanks and '\r' only. */
static bool model_empty(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

/* The oracle: the framing rules of ctl_proto.h, one byte at a time.
 * Returns the unterminated bytes left (0 inside a too-long line). */
static size_t model_feed(const uint8_t *data, size_t size, struct pass *p,
			 const char **partial)
{
	static char line[CTL_LINE_MAX];
	size_t len = 0;
	bool discarding = false;

	for (size_t i = 0; i < size; i++) {
		bool term = data[i] == '\n' || data[i] == '\0';

		if (term && !discarding && !model_empty(line, len))
			on_line(p, line, len, false);
		if (term) {
			len = 0;
			discarding = false;
		} else if (discarding) {
			continue;
		} else if (len == CTL_LINE_MAX) {
			on_line(p, line, len, true);
			len = 0;
			discarding = true;
		} else {
			line[len++] = (char)data[i];
		}
	}
	*partial = line;
	return discarding ? 0 : len;
}

/* Reply with arbitrary bytes as text (up to the first NUL, as C strings go). */
static void reply_raw(const uint8_t *data, size_t size)
{
	static char text[2 * CTL_REPLY_MAX];
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = '\0';
	reply(text, true, n);
	reply(text, false, n / 2);
}

/* Piece sizes: a small PRNG seeded from the input, bounded by a size class. */
static size_t next_piece(uint64_t *state, size_t max)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return 1 + (size_t)(*state % max);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t classes[] = { 1, 2, 3, 16, 100, 4095, 4097, 9000 };
	static struct ctl_framer whole, split;
	struct pass a = { 0xcbf29ce484222325ULL, 0, 0, false };
	struct pass b = a, m = a;
	uint64_t state = fnv(0x9e3779b97f4a7c15ULL, data, size < 16 ? size : 16) | 1;
	size_t max = classes[size ? data[0] % 8 : 0];
	const char *pm;
	size_t nm;

	b.answer = true;
	b.reply_cap = size ? (size_t)data[size - 1] * 19 : 5;
	ctl_framer_init(&whole);
	ctl_framer_init(&split);
	ctl_framer_feed(&whole, (const char *)data, size, on_line, &a);
	for (size_t off = 0, n; off < size; off += n) {
		n = next_piece(&state, max);
		if (n > size - off)
			n = size - off;
		ctl_framer_feed(&split, (const char *)data + off, n, on_line, &b);
	}
	nm = model_feed(data, size, &m, &pm);
	CHECK(a.lines == b.lines && a.digest == b.digest);
	CHECK(a.lines == m.lines && a.digest == m.digest);
	/* The fd ran dry: both framers hold the model's unterminated bytes,
	 * and settle them alike, as a line exactly when they parse. */
	{
		const char *pa, *pb;
		size_t na = ctl_framer_partial(&whole, &pa);
		size_t nb = ctl_framer_partial(&split, &pb);
		bool whole_cmd = na > 0 && ctl_command_is_whole(pa, na);
		bool sa, sb;

		CHECK(na == nm && nb == nm && memcmp(pa, pm, na) == 0 && memcmp(pb, pm, nb) == 0);
		sa = ctl_framer_settle(&whole, on_line, &a);
		sb = ctl_framer_settle(&split, on_line, &b);
		CHECK(sa == whole_cmd && sb == whole_cmd);
		CHECK(a.lines == b.lines && a.digest == b.digest);
		CHECK(a.lines == m.lines + (whole_cmd ? 1 : 0));
		CHECK(!sa || ctl_framer_partial(&whole, &pa) == 0);
		CHECK(sa || ctl_framer_partial(&whole, &pa) == na);
	}
	/* End of input: both framers hand back the same partial line (none
	 * when it was settled or blank), and start afresh (a terminator then
	 * delivers nothing, a command after it one line). */
	{
		const char *pa, *pb;
		size_t na = ctl_framer_discard(&whole, &pa);
		size_t nb = ctl_framer_discard(&split, &pb);
		struct pass e = a;

		CHECK(na == nb && na <= CTL_LINE_MAX && memcmp(pa, pb, na) == 0);
		ctl_framer_feed(&whole, "\nping\n", 6, on_line, &e);
		CHECK(e.lines == a.lines + 1 && whole.len == 0 && !whole.discarding);
	}
	/* The parser on its own also sees NULs; replies see control bytes. */
	answer((const char *)data, size < CTL_LINE_MAX ? size : CTL_LINE_MAX, false, 64);
	reply_raw(data, size);
	return 0;
}
