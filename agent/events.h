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

/* Why a name did not resolve: reason, and the byte of the name it is at. */
struct event_error {
	size_t offset;
	char reason[192];
};

/* Resolve one -e entry (its --filter checked against the tracepoint's
 * format).  Prints an error with a caret and returns -1 on failure. */
int events_resolve(const struct event_spec *spec, struct event_def *def);
/* Resolve text[0..len) without printing: -1 with *err filled on failure.
 * def->name is set (and must be freed) either way. */
int events_resolve_name(const char *text, size_t len, struct event_def *def,
			struct event_error *err);
void events_def_free(struct event_def *def);

struct filter_node;
/* A parsed filter as text for PERF_EVENT_IOC_SET_FILTER (malloc'd). */
char *events_kernel_filter(const struct filter_node *tree);

/* perf stat's default set, used when no -e is given. */
extern const char *const events_default_set[];
extern const size_t events_default_count;

#endif
