/*
 * log: error and warning messages on stderr, with carets for positions.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/log.h"
#include "grammar/range_parse.h"

static log_writer_fn log_writer;
static void *log_writer_ctx;

void log_route(log_writer_fn writer, void *ctx)
{
	log_writer = writer;
	log_writer_ctx = ctx;
}

/* One whole message to stderr, or to the writer that owns stderr now. */
static void log_emit(const char *text, size_t n)
{
	if (log_writer)
		log_writer(log_writer_ctx, text, n);
	else
		fwrite(text, 1, n, stderr);
}

static void log_vprint(const char *level, const char *fmt, va_list ap, const char *tail)
{
	char *body = NULL, *text = NULL;
	int n;

	/* Out of memory the message is lost: there is no smaller way to say it. */
	if (vasprintf(&body, fmt, ap) < 0)
		return;
	n = asprintf(&text, "perfgate: %s%s\n%s", level ? level : "", body, tail ? tail : "");
	if (n >= 0) {	/* else text is undefined */
		log_emit(text, (size_t)n);
		free(text);
	}
	free(body);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(NULL, fmt, ap, NULL);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint("warning: ", fmt, ap, NULL);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	char *body = NULL, *text = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = asprintf(&text, "%s\n", body);
	if (n >= 0) {	/* else text is undefined */
		log_emit(text, (size_t)n);
		free(text);
	}
	free(body);
}

/* The input and its caret, windowed when long (range_caret_format), and
 * sized for the text: no input is too long for its reason and caret. */
void log_caret(const char *input, size_t offset, const char *fmt, ...)
{
	va_list ap;
	size_t len = strlen(input), n = range_caret_format(input, len, offset, "  ", NULL, 0);
	char *lines = malloc(n + 2);

	if (lines) {
		range_caret_format(input, len, offset, "  ", lines, n + 1);
		strcat(lines, "\n");
	}
	va_start(ap, fmt);
	log_vprint(NULL, fmt, ap, lines);
	va_end(ap);
	free(lines);
}
