/*
 * metrics: perfgate in a Prometheus fleet (docs/metrics.md) -- the run's
 * /metrics endpoint (metrics_http), the textfile for node_exporter
 * (metrics_textfile) and the push to a Pushgateway at the end of the run
 * (metrics_push).  All three show the same exposition of the run's views
 * (metrics_expo); docs/metrics.md lists its metrics.
 */
#ifndef PERFGATE_METRICS_H
#define PERFGATE_METRICS_H

struct metrics;
struct run;
struct event_base;

/* Start serving on base and write the first textfile; *out is NULL when
 * no --metrics-* option asks for anything, and must be freed with
 * metrics_free() otherwise, even on failure.  The run must outlive it.
 * -1 with a message when an address, the textfile or the push URL is
 * unusable (a start-up failure). */
int metrics_start(struct metrics **out, const struct run *run, struct event_base *base);
/* An -I interval ended: rewrite the textfile.  m may be NULL. */
void metrics_interval(struct metrics *m);
/* The run is over, the views final: last textfile, then the push.  -1 when
 * either failed (the message is printed).  m may be NULL. */
int metrics_finish(struct metrics *m);
/* Before the event base it serves on is freed. */
void metrics_free(struct metrics *m);

#endif
