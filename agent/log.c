/*
 * log: error and warning messages on stderr, with carets for positions.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/log.h"

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

void log_caret(const char *input, size_t offset, const char *fmt, ...)
{
	va_list ap;
	size_t len = strlen(input);

	va_start(ap, fmt);
	log_vprint(NULL, fmt, ap);
	va_end(ap);
	if (offset > len)
		offset = len;
	fprintf(stderr, "  %s\n  %*s^\n", input, (int)offset, "");
}
