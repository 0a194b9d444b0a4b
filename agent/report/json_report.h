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

struct json_report;
struct run;
struct window;
struct window_end_result;
struct report_row;
struct json_t;

#define JSON_REPORT_SCHEMA_VERSION 2
/* -I intervals the document keeps; later ones are counted, not kept. */
#define JSON_REPORT_INTERVALS_MAX 100000

/* What a run's JSON is made in: the window-end reply's buffer and, with
 * --json-file, the document's file and its -I series.  NULL when out of
 * memory. */
struct json_report *json_report_new(void);
/* Remove what json_report_open() made and was not written, and free. */
void json_report_free(struct json_report *jr);

/* One line of JSON for "ack {...}" after "window end", in jr's kept
 * reply buffer (valid until the next call); NULL with the reason for
 * "err" in reason when it cannot be built. */
const char *json_report_window_end(struct json_report *jr, const struct run *run,
				   const struct window *w, const struct window_end_result *result,
				   char *reason, size_t len);
/* At start-up: check that --json-file PATH (kept, not copied) can be
 * written, and create what it is written through.  -1 with a message
 * printed when it cannot. */
int json_report_open(struct json_report *jr, const char *path);
/* Record one -I interval for the document (nothing unless jr is open):
 * begin it, add the rows of the default window (window NULL), of each
 * named window, and of the ranges (range rows name their range), end it.
 * jr may be NULL. */
void json_report_interval_begin(struct json_report *jr, uint64_t time_ns);
void json_report_interval_rows(struct json_report *jr, const char *window,
			       const struct report_row *rows, size_t n);
void json_report_interval_end(struct json_report *jr);
/* The whole run as one document, at the end of the run; with -r, repeat
 * is the "repeat" object (repeat_json()), else NULL.  -1 with a message
 * printed when the file cannot be written. */
int json_report_write(struct json_report *jr, const struct run *run, int exit_code,
		      struct json_t *repeat);
/* Remove what json_report_open() made and was not written (start-up
 * failed). */
void json_report_discard(struct json_report *jr);

#endif
