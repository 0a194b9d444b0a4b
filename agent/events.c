/*
 * events: resolve perf event names (software, hardware, tracepoints).
 *
 * The name tables carry perf's spellings and aliases (facts of perf's user
 * interface), so a script's -e list means the same thing here as in perf.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>
#include <unistd.h>

#include "agent/events.h"
#include "agent/filter_check.h"
#include "agent/log.h"
#include "agent/options.h"
#include "proto/range_parse.h"

struct named_event {
	const char *name;
	unsigned type;
	unsigned long long config;
};

static const struct named_event named_events[] = {
	{ "cpu-clock",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs",				PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cpu-cycles",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cycles",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles",			PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

const char *const events_default_set[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles", "instructions", "branches", "branch-misses",
};
const size_t events_default_count = sizeof(events_default_set) / sizeof(events_default_set[0]);

static const struct named_event *named_event_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++)
		if (strlen(named_events[i].name) == len && !strncmp(named_events[i].name, name, len))
			return &named_events[i];
	return NULL;
}

/* perf's privilege-level modifiers after a ':' ("cycles:u", "task-clock:k").
 * Returns the offset of a bad modifier letter, or -1 when all are valid. */
static long apply_modifiers(struct perf_event_attr *attr, const char *mods)
{
	bool u = false, k = false, h = false;

	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		default: return m - mods;
		}
	}
	/* As perf: naming some levels excludes the others. */
	attr->exclude_user = !u;
	attr->exclude_kernel = !k;
	attr->exclude_hv = !h;
	return -1;
}

static int fail(struct event_error *err, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct event_error *err, size_t offset, const char *fmt, ...)
{
	va_list ap;

	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	va_end(ap);
	return -1;
}

static int resolve_named(const char *text, struct event_def *def, const struct named_event *ev,
			 const char *mods, struct event_error *err)
{
	def->attr.type = ev->type;
	def->attr.config = ev->config;
	def->is_clock = ev->type == PERF_TYPE_SOFTWARE &&
			(ev->config == PERF_COUNT_SW_TASK_CLOCK || ev->config == PERF_COUNT_SW_CPU_CLOCK);
	if (mods) {
		long bad = apply_modifiers(&def->attr, mods);

		if (bad >= 0)
			return fail(err, (size_t)(mods - text + bad),
				    "unknown modifier '%c' in event '%s' (expected u, k or h)",
				    mods[bad], text);
	}
	return 0;
}

/* The tracepoint's id from tracefs/events/SYS/NAME/id. */
static int resolve_tracepoint(const char *text, struct event_def *def, const char *colon,
			      struct event_error *err)
{
	const char *name = colon + 1;
	struct range_error rerr;
	char *sys, *id = NULL, *dir;
	int size = 0, rc = -1;

	/* The name becomes a tracefs path below: only the grammar's bytes
	 * ([A-Za-z0-9_], one ':') may get there, never '/' or "..". */
	if (!range_tracepoint_check(text, strlen(text), &rerr))
		return fail(err, rerr.offset, "%s", rerr.reason);
	sys = strndup(text, (size_t)(colon - text));
	if (!tracefs_tracing_dir()) {
		fail(err, 0, "cannot find or mount tracefs (needed for '%s'): mount it with "
		     "'mount -t tracefs nodev /sys/kernel/tracing'", text);
		goto out;
	}
	dir = tracefs_get_tracing_file("events");
	if (dir) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, sys);
		tracefs_put_tracing_file(dir);
		if (access(path, F_OK) != 0) {
			fail(err, 0, "unknown tracepoint subsystem '%s'", sys);
			goto out;
		}
	}
	id = tracefs_event_file_read(NULL, sys, name, "id", &size);
	if (!id || size <= 0) {
		fail(err, (size_t)(name - text), "unknown tracepoint '%s' in subsystem '%s'", name, sys);
		goto out;
	}
	def->attr.type = PERF_TYPE_TRACEPOINT;
	def->attr.config = strtoull(id, NULL, 10);
	def->is_tracepoint = true;
	rc = 0;
out:
	free(id);
	free(sys);
	return rc;
}

int events_resolve_name(const char *text, size_t len, struct event_def *def,
			struct event_error *err)
{
	char *name = strndup(text, len);
	const char *colon = strchr(name, ':');
	const struct named_event *ev;
	int rc;

	memset(def, 0, sizeof(*def));
	def->name = name;
	def->attr.size = sizeof(def->attr);
	ev = named_event_find(name, colon ? (size_t)(colon - name) : strlen(name));
	if (ev)
		rc = resolve_named(name, def, ev, colon ? colon + 1 : NULL, err);
	else if (colon && colon != name && colon[1])
		rc = resolve_tracepoint(name, def, colon, err);
	else
		rc = fail(err, 0, "unknown event '%s' (software, hardware, or subsys:tracepoint)",
			  name);
	return rc;
}

/* The filter as the kernel wants it (bare words quoted where it needs). */
char *events_kernel_filter(const struct filter_node *tree)
{
	size_t len = filter_format(tree, FILTER_FORMAT_KERNEL, NULL, 0);
	char *text = malloc(len + 1);

	filter_format(tree, FILTER_FORMAT_KERNEL, text, len + 1);
	return text;
}

/* --filter: parsed and checked against the tracepoint's format, so the
 * caret lands on the real mistake before the kernel sees it. */
static int events_check_filter(struct event_def *def, const char *filter)
{
	struct filter_error ferr = { 0 };
	struct filter_node *tree = filter_parse(filter, strlen(filter), &ferr);
	const char *colon = strchr(def->name, ':');
	char *sys;
	int rc;

	if (!def->is_tracepoint) {
		log_error("--filter '%s' follows '%s', which is not a tracepoint", filter, def->name);
		return -1;
	}
	if (!tree) {
		log_caret(filter, ferr.offset, "bad filter for '%s': %s", def->name, ferr.reason);
		return -1;
	}
	sys = strndup(def->name, (size_t)(colon - def->name));
	rc = filter_check(sys, colon + 1, tree, &ferr);
	if (rc)
		log_caret(filter, ferr.offset, "bad filter for '%s': %s", def->name, ferr.reason);
	free(sys);
	if (!rc)
		def->filter = events_kernel_filter(tree);
	filter_free(tree);
	return rc;
}

int events_resolve(const struct event_spec *spec, struct event_def *def)
{
	struct event_error err = { 0 };

	if (events_resolve_name(spec->name, strlen(spec->name), def, &err)) {
		log_caret(spec->name, err.offset, "%s", err.reason);
		return -1;
	}
	return spec->filter ? events_check_filter(def, spec->filter) : 0;
}

void events_def_free(struct event_def *def)
{
	free(def->name);
	free(def->filter);
}
