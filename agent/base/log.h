/*
 * log: how the agent talks to its user about problems.
 *
 * Messages go to stderr prefixed "perfgate: ", never to the report output
 * (which may be a file or a pipe another program parses).  Input errors that
 * have a position (an option value, an event list) are shown with the input
 * and a caret under the offending byte, so the user sees where, not only what.
 */
#ifndef PERFGATE_LOG_H
#define PERFGATE_LOG_H

#include <stddef.h>

/* Where messages go instead of stderr while another module owns it (the
 * report output, when it is stderr and written without blocking); NULL
 * for stderr again. */
typedef void (*log_writer_fn)(void *ctx, const char *text, size_t n);
void log_route(log_writer_fn writer, void *ctx);

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line of perf's own, verbatim and without the "perfgate: " prefix
 * ("Events enabled", -v's "failed to read counter NAME"), so that what
 * reads perf's stderr reads ours. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "perfgate: REASON" then INPUT on its own line and a caret under byte OFFSET. */
void log_caret(const char *input, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
