/*
 * events: turn event names as perf users write them into perf_event_attr.
 *
 * Names come in three families: software events (task-clock, page-faults,
 * ...), hardware events (cycles, instructions, ...; on a machine without a
 * PMU they are later shown as <not supported>), and tracepoints written
 * "subsys:name", whose ids are read from tracefs (found, or mounted, through
 * libtracefs).  Software and hardware names take perf's :u/:k/:h modifiers.
 */
#ifndef PERFGATE_EVENTS_H
#define PERFGATE_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

struct event_spec;

struct event_def {
	char *name;			/* as the user wrote it, printed in reports */
	char *filter;			/* tracepoint filter, or NULL */
	struct perf_event_attr attr;	/* type and config; the rest is the counter's */
	bool is_tracepoint;
	bool is_clock;			/* value in ns, shown as msec */
};

/* Resolve one -e entry.  Prints an error with a caret and returns -1 when
 * the name is unknown. */
int events_resolve(const struct event_spec *spec, struct event_def *def);
void events_def_free(struct event_def *def);

/* perf stat's default set, used when no -e is given. */
extern const char *const events_default_set[];
extern const size_t events_default_count;

#endif
