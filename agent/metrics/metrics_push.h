/*
 * metrics_push: the run's final values PUT to a Prometheus Pushgateway
 * (--metrics-push URL), with libevent's evhttp client.
 *
 * The grouping key is job (--metrics-job, default "perfgate"), instance
 * (the host name, or --metrics-label instance=...) and every other
 * --metrics-label, in order:
 *     PUT URL/metrics/job/JOB/instance/HOST[/NAME/VALUE...]
 * A PUT replaces every metric of the group, so a CI job that runs again
 * leaves only its latest values.  The push runs on a private event loop,
 * after the session's loop has ended: no control command is served while
 * it waits (at most METRICS_PUSH_TIMEOUT seconds).
 */
#ifndef PERFGATE_METRICS_PUSH_H
#define PERFGATE_METRICS_PUSH_H

#define METRICS_PUSH_TIMEOUT 10

struct run;
struct options;

/* Is url one we can push to?  -1 with a message when not (at start-up). */
int metrics_push_check(const struct options *opts);
/* Push now.  -1 with a message naming the URL and the reason. */
int metrics_push(const struct run *run);

#endif
