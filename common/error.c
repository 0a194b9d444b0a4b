/*
 * error.c: struct pg_error's messages (the type and the conventions are in
 * error.h).
 */
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The message of a failure to make a message.  Static, so that running out
 * of memory still leaves one to print; pg_error_clear knows not to free it.
 */
static char out_of_memory[] = "out of memory";

/* Put message into err, freeing the one it held. */
static void replace(struct pg_error *err, char *message)
{
	if (err->message != out_of_memory)
		free(err->message);
	err->message = message;
}

/*
 * The formatted text in a new buffer, or NULL out of memory.  vsnprintf
 * twice (measure, then write) rather than vasprintf: standard C, so that the
 * fuzzers build this file without _GNU_SOURCE.
 */
static char *format(const char *fmt, va_list ap)
{
	va_list measure;
	char *text;
	int n;

	va_copy(measure, ap);
	n = vsnprintf(NULL, 0, fmt, measure);
	va_end(measure);
	if (n < 0)
		return NULL;
	text = malloc((size_t)n + 1);
	if (text)
		vsnprintf(text, (size_t)n + 1, fmt, ap);
	return text;
}

void pg_error_vset(struct pg_error *err, size_t offset, const char *fmt, va_list ap)
{
	int saved = errno;
	char *message;

	if (!err)
		return;
	message = format(fmt, ap);
	err->offset = offset;
	replace(err, message ? message : out_of_memory);
	errno = saved;
}

void pg_error_set(struct pg_error *err, size_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pg_error_vset(err, offset, fmt, ap);
	va_end(ap);
}

void pg_error_prefix(struct pg_error *err, const char *fmt, ...)
{
	int saved = errno;
	const char *rest;
	char *context, *message = NULL;
	va_list ap;

	if (!err)
		return;
	rest = err->message ? err->message : "";
	va_start(ap, fmt);
	context = format(fmt, ap);
	va_end(ap);
	if (context) {
		message = malloc(strlen(context) + strlen(rest) + 1);
		if (message)
			strcat(strcpy(message, context), rest);
		free(context);
	}
	replace(err, message ? message : out_of_memory);
	errno = saved;
}

void pg_error_move(struct pg_error *dst, struct pg_error *src, size_t shift)
{
	if (!dst) {
		pg_error_clear(src);
		return;
	}
	dst->offset = src->offset + shift;
	replace(dst, src->message);
	src->message = NULL;
	src->offset = 0;
}

void pg_error_clear(struct pg_error *err)
{
	if (!err)
		return;
	if (err->message != out_of_memory)
		free(err->message);
	err->message = NULL;
	err->offset = 0;
}
