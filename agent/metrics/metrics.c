/*
 * metrics: the session's Prometheus outputs, started, refreshed and
 * finished together (metrics.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/log.h"
#include "agent/metrics/metrics.h"
#include "agent/metrics/metrics_http.h"
#include "agent/metrics/metrics_push.h"
#include "agent/metrics/metrics_textfile.h"
#include "agent/session.h"

struct metrics {
	struct metrics_http *http;
	bool textfile_warned;	/* an interval write failed: said once */
};

int metrics_start(struct session *s)
{
	const struct options *opts = s->opts;

	if (!opts->metrics_listen && !opts->metrics_textfile && !opts->metrics_push)
		return 0;
	s->metrics = calloc(1, sizeof(*s->metrics));
	if (metrics_push_check(opts))
		return -1;
	/* A textfile that cannot be written is better known now than at the
	 * end; node_exporter also sees the run from its start. */
	if (opts->metrics_textfile && metrics_textfile_write(s, opts->metrics_textfile)) {
		log_error("cannot write --metrics-textfile '%s': %s", opts->metrics_textfile,
			  strerror(errno));
		return -1;
	}
	if (opts->metrics_listen) {
		s->metrics->http = metrics_http_start(s, opts->metrics_listen);
		if (!s->metrics->http)
			return -1;
	}
	return 0;
}

void metrics_interval(struct session *s)
{
	const char *path = s->opts->metrics_textfile;

	if (!path || !s->metrics || metrics_textfile_write(s, path) == 0)
		return;
	if (!s->metrics->textfile_warned)
		log_warn("cannot write --metrics-textfile '%s': %s (will try again)", path,
			 strerror(errno));
	s->metrics->textfile_warned = true;
}

int metrics_finish(struct session *s)
{
	const struct options *opts = s->opts;
	int rc = 0;

	if (!s->metrics)
		return 0;
	if (opts->metrics_textfile && metrics_textfile_write(s, opts->metrics_textfile)) {
		log_error("cannot write --metrics-textfile '%s': %s", opts->metrics_textfile,
			  strerror(errno));
		rc = -1;
	}
	if (opts->metrics_push && metrics_push(s))
		rc = -1;
	return rc;
}

void metrics_free(struct session *s)
{
	if (!s->metrics)
		return;
	metrics_http_free(s->metrics->http);
	free(s->metrics);
	s->metrics = NULL;
}
