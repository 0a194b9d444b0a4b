/*
 * metrics: perfgate in a Prometheus fleet (docs/metrics.md) -- the
 * session's hooks for the /metrics endpoint (metrics_http), the textfile
 * for node_exporter (metrics_textfile) and the push to a Pushgateway at the
 * end of the run (metrics_push).  All three show the same exposition
 * (metrics_expo); docs/metrics.md lists its metrics.
 */
#ifndef PERFGATE_METRICS_H
#define PERFGATE_METRICS_H

struct session;

/* Start serving and write the first textfile.  -1 with a message when an
 * address, the textfile or the push URL is unusable (a start-up failure). */
int metrics_start(struct session *s);
/* An -I interval ended: rewrite the textfile. */
void metrics_interval(struct session *s);
/* The run is over, the views final: last textfile, then the push.  -1 when
 * either failed (the message is printed). */
int metrics_finish(struct session *s);
void metrics_free(struct session *s);

#endif
