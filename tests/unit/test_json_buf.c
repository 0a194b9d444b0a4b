/*
 * test_json_buf: agent/base/json_buf.c gives the bytes jansson gives (compact,
 * in order) for the same strings and numbers -- every byte value, UTF-8
 * of each length, stray and cut sequences, and random byte strings -- so
 * that the window-end reply it writes parses as it did with jansson.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "agent/base/json_buf.h"
#include "agent/base/utf8.h"
#include "tests/unit/tap.h"

/* jansson's text for {key: [text, number]}, text made UTF-8 as the agent
 * did before (utf8_sanitize). */
static char *with_jansson(const char *text, int64_t number)
{
	char *clean = utf8_sanitize(text), *out;
	json_t *obj = json_object();

	json_object_set_new_nocheck(obj, clean, json_pack("[s, I]", clean, (json_int_t)number));
	out = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	free(clean);
	return out;
}

static const char *with_buf(struct json_buf *b, const char *text, int64_t number)
{
	json_buf_reset(b, 1 << 20);
	json_buf_raw(b, "{", 1);
	json_buf_string(b, text);
	json_buf_raw(b, ":[", 2);
	json_buf_string(b, text);
	json_buf_raw(b, ",", 1);
	json_buf_int(b, (uint64_t)number);
	json_buf_raw(b, "]}", 2);
	return json_buf_text(b);
}

static int same(struct json_buf *b, const char *text, int64_t number)
{
	char *want = with_jansson(text, number);
	const char *got = with_buf(b, text, number);
	int equal = want && got && strcmp(want, got) == 0;

	if (!equal)
		printf("#   got:  %s\n#   want: %s\n", got ? got : "(null)", want ? want : "(null)");
	free(want);
	return equal;
}

int main(void)
{
	static const char *cases[] = {
		"task-clock", "", "a\"b\\c/d", "tab\there\nnl\r\b\f", "\x01\x1f\x7f",
		"caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\xa0\x80", "\xc0\xaf",
		"\xe0\x80\xaf", "\xf4\x90\x80\x80", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xff\xfe",
		"syscalls:sys_enter_write@w",
	};
	static const int64_t numbers[] = { 0, 1, -1, 9, 10, 1234567890123LL, INT64_MAX, INT64_MIN };
	struct json_buf b = { 0 };
	char one[2] = { 0 }, text[40];
	uint64_t rng = 42;
	int good;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		ok(same(&b, cases[i], 7), cases[i][0] ? "a string as jansson writes it" :
		   "the empty string as jansson writes it");
	for (size_t i = 0; i < sizeof(numbers) / sizeof(*numbers); i++)
		ok(same(&b, "n", numbers[i]), "a number as jansson's json_int_t");
	good = 1;
	for (int c = 1; c < 256; c++) {
		one[0] = (char)c;
		good &= same(&b, one, c);
	}
	ok(good, "every single byte as jansson writes it (stray bytes as U+FFFD)");
	good = 1;
	for (int n = 0; n < 20000; n++) {
		size_t len = (size_t)(rng % (sizeof(text) - 1));

		for (size_t i = 0; i < len; i++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			text[i] = (char)((rng >> 33) % 255 + 1);
		}
		text[len] = '\0';
		good &= same(&b, text, (int64_t)rng);
	}
	ok(good, "20000 random byte strings as jansson writes them");

	json_buf_reset(&b, 8);
	json_buf_string(&b, "longer than eight");
	ok(json_buf_text(&b) == NULL, "past its limit the text fails, no cut JSON");
	json_buf_reset(&b, 64);
	json_buf_string2(&b, "ev", "@", "r\"1");
	is_str(json_buf_text(&b), "\"ev@r\\\"1\"", "three pieces as one string");
	json_buf_free(&b);
	return tap_done();
}
