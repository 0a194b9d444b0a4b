/*
 * log: error and warning messages on stderr, with carets for positions.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"
#include "proto/range_parse.h"

static void log_vprint(const char *level, const char *fmt, va_list ap)
{
	fputs("perfgate: ", stderr);
	if (level)
		fputs(level, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(NULL, fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint("warning: ", fmt, ap);
	va_end(ap);
}

/* The input and its caret, windowed when long (range_caret_format), and
 * sized for the text: no input is too long for its reason and caret. */
void log_caret(const char *input, size_t offset, const char *fmt, ...)
{
	va_list ap;
	size_t len = strlen(input), n = range_caret_format(input, len, offset, "  ", NULL, 0);
	char *lines = malloc(n + 1);

	va_start(ap, fmt);
	log_vprint(NULL, fmt, ap);
	va_end(ap);
	if (!lines)
		return;
	range_caret_format(input, len, offset, "  ", lines, n + 1);
	fprintf(stderr, "%s\n", lines);
	free(lines);
}
