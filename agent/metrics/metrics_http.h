/*
 * metrics_http: the read-only /metrics endpoint (--metrics-listen), served
 * by libevent's evhttp on the session's own event loop.
 *
 * GET (or HEAD) /metrics answers with the exposition: OpenMetrics when
 * the scraper's Accept header asks for it by name, else text 0.0.4; any other path is 404 and
 * any other method 405.  Nothing over HTTP changes the run.  Replies are
 * queued on evhttp's non-blocking buffers: a slow or stalled scraper holds
 * its own connection's memory (dropped after a timeout), never the loop.
 */
#ifndef PERFGATE_METRICS_HTTP_H
#define PERFGATE_METRICS_HTTP_H

#include "agent/metrics/metrics_expo.h"

struct run;
struct event_base;
struct metrics_http;

/* Listen on addr ("HOST:PORT", "[V6]:PORT").  NULL with a message naming
 * the address and the reason when it cannot. */
struct metrics_http *metrics_http_start(const struct run *run, struct event_base *base,
				       const char *addr);
void metrics_http_free(struct metrics_http *h);
/* The format an Accept header asks for (NULL, no header: text 0.0.4). */
enum metrics_format metrics_http_negotiate(const char *accept);

#endif
