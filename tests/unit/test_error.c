/*
 * test_error: struct pg_error (common/error.h): messages of any length,
 * offsets, prefixes, moves, clearing, and the message left when memory
 * runs out (malloc is wrapped at link time so that it can be made to fail).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "tests/unit/tap.h"

/* -Wl,--wrap=malloc: error.c's malloc calls come here. */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
static bool fail_malloc;

void *__wrap_malloc(size_t size)
{
	if (fail_malloc)
		return NULL;
	return __real_malloc(size);
}

static void test_long_message_is_whole(void)
{
	struct pg_error err = { 0 };
	char word[2001];

	memset(word, 'x', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	pg_error_set(&err, 7, "unknown event '%s'", word);
	is_int(err.offset, 7, "set: the offset is kept");
	is_int(strlen(err.message), strlen("unknown event ''") + 2000,
	       "set: a message of 2016 bytes is not cut");
	ok(!strncmp(err.message, "unknown event 'xxx", 18) &&
	   !strcmp(err.message + strlen(err.message) - 4, "xxx'"), "set: its ends are there");
	pg_error_clear(&err);
}

static void test_set_replaces(void)
{
	struct pg_error err = { 0 };

	pg_error_set(&err, 1, "first");
	pg_error_set(&err, 2, "second %d", 2);
	is_str(err.message, "second 2", "set again: the message is replaced");
	is_int(err.offset, 2, "set again: so is the offset");
	pg_error_clear(&err);
	ok(err.message == NULL && err.offset == 0, "clear: zeroed");
	pg_error_clear(&err);
	ok(err.message == NULL, "clear twice: harmless");
	pg_error_set(NULL, 3, "nowhere");
	pg_error_clear(NULL);
	ok(1, "NULL error: set and clear do nothing");
}

static void test_errno_kept(void)
{
	struct pg_error err = { 0 };

	errno = EINVAL;
	pg_error_set(&err, 0, "bad");
	pg_error_prefix(&err, "context: ");
	is_int(errno, EINVAL, "set and prefix keep errno");
	pg_error_clear(&err);
}

static void test_prefix(void)
{
	struct pg_error err = { 0 };

	pg_error_set(&err, 12, "expected '..' after trigger");
	pg_error_prefix(&err, "bad filter for '%s': ", "sched:sched_switch");
	is_str(err.message, "bad filter for 'sched:sched_switch': expected '..' after trigger",
	       "prefix: context before the message");
	is_int(err.offset, 12, "prefix: the offset is kept");
	pg_error_clear(&err);
}

static void test_move(void)
{
	struct pg_error from = { 0 }, to = { 0 };

	pg_error_set(&to, 1, "old");
	pg_error_set(&from, 3, "inner");
	pg_error_move(&to, &from, 10);
	is_str(to.message, "inner", "move: the message goes to dst");
	is_int(to.offset, 13, "move: the offset is shifted");
	ok(from.message == NULL && from.offset == 0, "move: src is left zeroed");
	pg_error_set(&from, 0, "dropped");
	pg_error_move(NULL, &from, 0);
	ok(from.message == NULL, "move to NULL: src is cleared");
	pg_error_clear(&to);
}

static void test_out_of_memory(void)
{
	struct pg_error err = { 0 };

	pg_error_set(&err, 1, "a message that was made");
	fail_malloc = true;
	pg_error_set(&err, 5, "unknown event '%s'", "cycels");
	fail_malloc = false;
	is_str(err.message, "out of memory", "set out of memory: \"out of memory\"");
	is_int(err.offset, 5, "set out of memory: the offset is still set");
	pg_error_clear(&err);
	ok(err.message == NULL, "clear: the static message is not freed");

	pg_error_set(&err, 2, "why");
	fail_malloc = true;
	pg_error_prefix(&err, "context: ");
	fail_malloc = false;
	is_str(err.message, "out of memory", "prefix out of memory: \"out of memory\"");
	is_int(err.offset, 2, "prefix out of memory: the offset is kept");
	pg_error_prefix(&err, "bad filter: ");
	is_str(err.message, "bad filter: out of memory", "prefix on the static message");
	pg_error_clear(&err);

	fail_malloc = true;
	pg_error_set(&err, 0, "x");
	fail_malloc = false;
	pg_error_set(&err, 0, "after");
	is_str(err.message, "after", "set over the static message: replaced, not freed");
	pg_error_clear(&err);
}

int main(void)
{
	test_long_message_is_whole();
	test_set_replaces();
	test_errno_kept();
	test_prefix();
	test_move();
	test_out_of_memory();
	return tap_done();
}
