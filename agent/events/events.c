/*
 * events: -e lists resolved through perf's grammar (grammar/event_parse.c)
 * and agent/events/event_resolve.c, against the machine's sysfs PMUs and tracefs;
 * --pfm-events through libpfm4 (agent/events/event_pfm.c).
 *
 * The names of events come from the parser's tables, which carry perf's
 * spellings and aliases, so a script's -e list means the same thing here
 * as in perf, and reports name each event as it was written.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>
#include <unistd.h>

#include "agent/events/event_pfm.h"
#include "agent/events/event_resolve.h"
#include "agent/events/events.h"
#include "agent/events/filter_check.h"
#include "agent/base/log.h"
#include "agent/base/options.h"
#include "grammar/range_parse.h"

const char *const events_default_set[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles", "instructions", "branches", "branch-misses",
};
const size_t events_default_count = sizeof(events_default_set) / sizeof(events_default_set[0]);

/* tracefs's events/ directory (found, or mounted, by libtracefs) into
 * *dir: 0, -ENOENT when there is no tracefs, -ENOMEM. */
static int events_tracefs_dir(const char **dir)
{
	static char *events;
	static bool looked;

	if (!looked) {
		const char *tracing;

		errno = 0;
		tracing = tracefs_tracing_dir();
		/* Out of memory is not "no tracefs": looked for again next time.
		 * With a tracing directory, only its path's allocation fails. */
		if ((!tracing && errno == ENOMEM) ||
		    (tracing && !(events = tracefs_get_tracing_file("events"))))
			return -ENOMEM;
		looked = true;
	}
	*dir = events;
	return events ? 0 : -ENOENT;
}

static bool attr_is_clock(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_SOFTWARE &&
	       (attr->config == PERF_COUNT_SW_TASK_CLOCK || attr->config == PERF_COUNT_SW_CPU_CLOCK);
}

static void def_from_resolved(struct event_def *def, struct event_resolved *r)
{
	memset(def, 0, sizeof(*def));
	def->name = r->name;
	r->name = NULL;
	def->attr = r->attr;
	def->is_tracepoint = r->attr.type == PERF_TYPE_TRACEPOINT;
	def->is_clock = attr_is_clock(&r->attr);
	def->tool = r->tool;
}

/* Parse and resolve text[0..len): 0 with *out filled, or -1 with *err. */
static int events_parse_resolve(const char *text, size_t len, struct event_list **list,
				struct event_resolved_list *out, struct pg_error *err)
{
	struct event_resolve_roots roots = { EVENT_RESOLVE_SYSFS, NULL };
	bool tracepoints = false;
	size_t i;
	struct event_desc *ev;

	*list = event_list_parse(text, len, err);
	if (!*list)
		return -1;
	event_list_for_each_event(*list, ev, i)
		tracepoints |= ev->kind == EVENT_TRACEPOINT || ev->kind == EVENT_TRACEPOINT_GLOB;
	if (tracepoints) {
		int rc = events_tracefs_dir(&roots.tracepoints);

		if (rc == -ENOMEM) {
			pg_error_set(err, 0, "out of memory");
			return -1;
		}
		if (rc) {
			pg_error_set(err, 0, "cannot find or mount tracefs (needed for "
				     "tracepoints): mount it with "
				     "'mount -t tracefs nodev /sys/kernel/tracing'");
			return -1;
		}
	}
	return event_resolve_list(&roots, *list, out, err);
}

int events_resolve_name(const char *text, size_t len, struct event_def *def,
			struct pg_error *err)
{
	struct event_resolved_list out = { 0 };
	struct event_list *list = NULL;
	int rc = -1;

	memset(def, 0, sizeof(*def));
	if (events_parse_resolve(text, len, &list, &out, err) == 0) {
		if (out.n == 1 && list->ngroups == 1 && !list->groups[0].braced) {
			def_from_resolved(def, &out.events[0]);
			rc = 0;
		} else {
			pg_error_set(err, 0, "'%.*s' is not one event here", (int)len, text);
		}
	}
	if (!def->name)
		def->name = strndup(text, len);	/* NULL when out of memory: rc is -1 */
	event_resolved_list_free(&out);
	event_list_free(list);
	return rc;
}

/* The filter as the kernel wants it (bare words quoted where it needs). */
char *events_kernel_filter(const struct filter_node *tree)
{
	size_t len = filter_format(tree, FILTER_FORMAT_KERNEL, NULL, 0);
	char *text = malloc(len + 1);

	if (text)
		filter_format(tree, FILTER_FORMAT_KERNEL, text, len + 1);
	return text;
}

/* --filter: parsed and checked against the tracepoint's format, so the
 * caret lands on the real mistake before the kernel sees it. */
static int events_check_filter(struct event_def *def, const char *filter)
{
	struct pg_error ferr = { 0 };
	struct filter_node *tree;
	const char *colon = strchr(def->name, ':');
	char *sys, *name;
	int rc;

	if (!def->is_tracepoint || !colon) {
		log_error("--filter '%s' follows '%s', which is not a tracepoint", filter, def->name);
		return -1;
	}
	tree = filter_parse(filter, strlen(filter), &ferr);
	if (!tree) {
		log_caret(filter, ferr.offset, "bad filter for '%s': %s", def->name, ferr.message);
		pg_error_clear(&ferr);
		return -1;
	}
	sys = strndup(def->name, (size_t)(colon - def->name));
	name = strndup(colon + 1, strcspn(colon + 1, ":"));	/* no modifiers */
	rc = sys && name ? filter_check(sys, name, tree, &ferr) : -ENOMEM;
	if (rc == -ENOMEM)
		log_error("out of memory checking the filter for '%s'", def->name);
	else if (rc)
		log_caret(filter, ferr.offset, "bad filter for '%s': %s", def->name, ferr.message);
	pg_error_clear(&ferr);
	free(sys);
	free(name);
	if (!rc && !(def->filter = events_kernel_filter(tree))) {
		log_error("out of memory for the filter of '%s'", def->name);
		rc = -1;
	}
	filter_free(tree);
	return rc ? -1 : 0;
}

static struct event_def *events_grow(struct event_def **defs, size_t *n, size_t more)
{
	struct event_def *grown = realloc(*defs, (*n + more) * sizeof(*grown));

	if (!grown)
		return NULL;
	*defs = grown;
	memset(grown + *n, 0, more * sizeof(*grown));
	return grown + *n;
}

/* --pfm-events: a comma list of libpfm4 names, each its own counter. */
static int events_resolve_pfm(const struct event_spec *spec, struct event_def **defs, size_t *n)
{
	const char *text = spec->name, *p = text;

	for (;;) {
		size_t len = strcspn(p, ",");
		char *one, why[512];
		struct event_def *def;

		if (len == 0) {
			log_caret(text, (size_t)(p - text), "empty event name in --pfm-events");
			return -1;
		}
		one = strndup(p, len);
		def = one ? events_grow(defs, n, 1) : NULL;
		if (!def || event_pfm_resolve(one, &def->attr, why, sizeof(why))) {
			log_caret(text, (size_t)(p - text), "%s", def ? why : "out of memory");
			free(one);
			return -1;
		}
		def->name = one;
		def->is_clock = attr_is_clock(&def->attr);
		(*n)++;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int events_resolve(const struct event_spec *spec, struct event_def **defs, size_t *n)
{
	struct event_resolved_list out = { 0 };
	struct event_list *list = NULL;
	struct pg_error err = { 0 };
	size_t first = *n, last_desc;
	struct event_def *added;
	int rc = -1;

	if (spec->pfm)
		return events_resolve_pfm(spec, defs, n);
	if (events_parse_resolve(spec->name, strlen(spec->name), &list, &out, &err)) {
		log_caret(spec->arg ? spec->arg : spec->name, spec->offset + err.offset,
			  "%s", err.message);
		pg_error_clear(&err);
		goto out;
	}
	added = events_grow(defs, n, out.n);
	if (!added) {
		log_error("out of memory resolving '%s'", spec->name);
		goto out;
	}
	for (size_t i = 0; i < out.n; i++) {
		struct event_resolved *r = &out.events[i];
		struct event_def *def = &added[i];
		size_t members = 0;

		bool tools = false;

		def_from_resolved(def, r);
		/* A group of one, or one with a tool event (no counter to put in
		 * it), is opened event by event. */
		if (!r->braced)
			continue;
		for (size_t j = r->leader; j < out.n && out.events[j].leader == r->leader; j++) {
			members++;
			tools |= out.events[j].tool != EVENT_TOOL_NONE;
		}
		if (members > 1 && !tools) {
			def->in_group = true;
			if (i == r->leader)
				def->group_n = members;
		}
	}
	*n += out.n;
	rc = 0;
	/* --filter: every event the list's last item became (each match of a
	 * pattern), as perf applies it to the last event. */
	last_desc = out.n ? out.events[out.n - 1].desc : 0;
	for (size_t i = 0; spec->filter && i < out.n && !rc; i++)
		if (out.events[i].desc == last_desc)
			rc = events_check_filter(&(*defs)[first + i], spec->filter);
out:
	event_resolved_list_free(&out);
	event_list_free(list);
	return rc;
}

void events_def_free(struct event_def *def)
{
	free(def->name);
	free(def->filter);
}
