/*
 * metrics: a run's Prometheus outputs, started, refreshed and finished
 * together (metrics.h).
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
#include "agent/report/run.h"

struct metrics {
	const struct run *run;
	struct metrics_http *http;
	bool textfile_warned;	/* an interval write failed: said once */
};

int metrics_start(struct metrics **out, const struct run *run, struct event_base *base)
{
	const struct options *opts = run->opts;
	struct metrics *m;

	*out = NULL;
	if (!opts->metrics_listen && !opts->metrics_textfile && !opts->metrics_push)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m) {
		log_error("cannot start the metrics: %s", strerror(ENOMEM));
		return -1;
	}
	m->run = run;
	*out = m;
	if (metrics_push_check(opts))
		return -1;
	/* A textfile that cannot be written is better known now than at the
	 * end; node_exporter also sees the run from its start. */
	if (opts->metrics_textfile && metrics_textfile_write(run, opts->metrics_textfile)) {
		log_error("cannot write --metrics-textfile '%s': %s", opts->metrics_textfile,
			  strerror(errno));
		return -1;
	}
	if (opts->metrics_listen) {
		m->http = metrics_http_start(run, base, opts->metrics_listen);
		if (!m->http)
			return -1;
	}
	return 0;
}

void metrics_interval(struct metrics *m)
{
	const char *path = m ? m->run->opts->metrics_textfile : NULL;

	if (!path || metrics_textfile_write(m->run, path) == 0)
		return;
	if (!m->textfile_warned)
		log_warn("cannot write --metrics-textfile '%s': %s (will try again)", path,
			 strerror(errno));
	m->textfile_warned = true;
}

int metrics_finish(struct metrics *m)
{
	const struct options *opts;
	int rc = 0;

	if (!m)
		return 0;
	opts = m->run->opts;
	if (opts->metrics_textfile && metrics_textfile_write(m->run, opts->metrics_textfile)) {
		log_error("cannot write --metrics-textfile '%s': %s", opts->metrics_textfile,
			  strerror(errno));
		rc = -1;
	}
	if (opts->metrics_push && metrics_push(m->run))
		rc = -1;
	return rc;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	metrics_http_free(m->http);
	free(m);
}
