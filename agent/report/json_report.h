/*
 * json_report: perfgate's own JSON, written with jansson -- the reply to
 * "window end" and the --json-file document of the whole run, whose schema
 * is docs/perfgate-report.schema.json (described in docs/json-report.md).
 * perf stat's -j lines are not here: they are report.c's, byte for byte perf's.
 */
#ifndef PERFGATE_JSON_REPORT_H
#define PERFGATE_JSON_REPORT_H

#include <stddef.h>
#include <stdint.h>

struct session;
struct window;
struct window_end_result;
struct report_row;

#define JSON_REPORT_SCHEMA_VERSION 2
/* -I intervals the document keeps; later ones are counted, not kept. */
#define JSON_REPORT_INTERVALS_MAX 100000

#include <stddef.h>

/* One line of JSON for "ack {...}" after "window end", in the session's
 * kept reply buffer (valid until the next call); NULL with the reason for
 * "err" in reason when it cannot be built. */
const char *json_report_window_end(struct session *s, const struct window *w,
				   const struct window_end_result *result, char *reason,
				   size_t len);
/* At start-up: check that --json-file can be written, and create what it
 * is written through.  -1 with a message printed when it cannot. */
int json_report_open(struct session *s, const char *path);
/* Record one -I interval for the document (only with --json-file):
 * begin it, add the rows of the default window (window NULL), of each
 * named window, and of the ranges (range rows name their range), end it. */
void json_report_interval_begin(struct session *s, uint64_t time_ns);
void json_report_interval_rows(struct session *s, const char *window,
			       const struct report_row *rows, size_t n);
void json_report_interval_end(struct session *s);
/* Free what the series holds (session_free). */
void json_report_free(struct session *s);
/* The whole run as one document, at the end of the run.  -1 with a message
 * printed when the file cannot be written. */
int json_report_write(struct session *s, int exit_code);
/* Remove what json_report_open() made and was not written (start-up
 * failed). */
void json_report_discard(struct session *s);

#endif
