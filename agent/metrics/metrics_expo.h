/*
 * metrics_expo: the run's views as a Prometheus exposition -- the
 * OpenMetrics 1.0 text format, or Prometheus' text format 0.0.4.
 *
 * Every view (default window, named window, range) becomes one sample of a
 * counter family, labelled event / gate / window / range; the families and
 * their labels are listed in docs/metrics.md.  Both formats carry the same
 * samples in the same order: the /metrics endpoint serves either, the
 * textfile and the Pushgateway get 0.0.4 (what node_exporter and the
 * Pushgateway parse).  Numbers are written with integer arithmetic only,
 * so the user's locale (perf's reports follow it) never reaches them.
 */
#ifndef PERFGATE_METRICS_EXPO_H
#define PERFGATE_METRICS_EXPO_H

#include <stdbool.h>

struct evbuffer;
struct run;

enum metrics_format {
	METRICS_OPENMETRICS,	/* application/openmetrics-text; version=1.0.0 */
	METRICS_TEXT,		/* text/plain; version=0.0.4 */
};

/* The Content-Type header of a format. */
const char *metrics_expo_content_type(enum metrics_format format);
/* Append the exposition of every view to out.  With constant_labels, the
 * --metrics-label pairs are put on every sample (not for a push: there they
 * are the grouping key).  Reads the counters and drains the range sets.
 * 0, or -ENOMEM when out of memory: out then holds part of it. */
int metrics_expo_render(const struct run *run, enum metrics_format format,
			bool constant_labels, struct evbuffer *out);

#endif
