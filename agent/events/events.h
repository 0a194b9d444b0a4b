/*
 * events: turn the -e lists perf users write into perf_event_attrs.
 *
 * A list goes whole to perf's grammar (grammar/event_parse.h): hardware,
 * software and cache names, raw codes, PMU events pmu/term=value/ (sysfs),
 * tracepoints and their patterns (tracefs, found or mounted through
 * libtracefs), perf's tool events (duration_time, ...) and groups {a,b}
 * with their modifiers; agent/events/event_resolve.h makes each into an attr the
 * way perf 6.1 does.  --pfm-events lists go through libpfm4
 * (agent/events/event_pfm.h).  Errors are printed with the -e text and a caret
 * under the byte they are about.
 */
#ifndef PERFGATE_EVENTS_H
#define PERFGATE_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "grammar/event_parse.h"

struct event_spec;

struct event_def {
	char *name;			/* as the user wrote it, printed in reports */
	char *filter;			/* tracepoint filter, or NULL */
	struct perf_event_attr attr;	/* type, config, exclude_*; the rest is the counter's */
	bool is_tracepoint;
	bool is_clock;			/* value in ns, shown as msec */
	enum event_tool tool;		/* a number the agent takes itself (no counter) */
	/* Written in { } with others: the leader has group_n members (itself
	 * included) and the next group_n - 1 defs are the rest; 0 when alone. */
	size_t group_n;
	bool in_group;			/* leader or member of such a group */
};

/* Resolve one -e (or --pfm-events) entry into *n defs appended to *defs
 * (realloc'd), its --filter checked against each tracepoint's format.
 * Prints an error with a caret and returns -1 on failure. */
int events_resolve(const struct event_spec *spec, struct event_def **defs, size_t *n);
/* Resolve text[0..len), one event, without printing: -1 with *err (err
 * may be NULL) filled on failure, its offset in text.  def->name is set
 * (and must be freed) either way; only out of memory leaves it NULL. */
int events_resolve_name(const char *text, size_t len, struct event_def *def,
			struct pg_error *err);
void events_def_free(struct event_def *def);

struct filter_node;
/* A parsed filter as text for PERF_EVENT_IOC_SET_FILTER (malloc'd), or
 * NULL when out of memory. */
char *events_kernel_filter(const struct filter_node *tree);

/* perf stat's default set, used when no -e is given. */
extern const char *const events_default_set[];
extern const size_t events_default_count;

#endif
