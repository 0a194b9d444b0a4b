/*
 * events: resolve perf event names (software, hardware, tracepoints).
 *
 * The name tables carry perf's spellings and aliases (facts of perf's user
 * interface), so a script's -e list means the same thing here as in perf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>
#include <unistd.h>

#include "agent/events.h"
#include "agent/log.h"
#include "agent/options.h"

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

static int resolve_named(const struct event_spec *spec, struct event_def *def,
			 const struct named_event *ev, const char *mods)
{
	def->attr.type = ev->type;
	def->attr.config = ev->config;
	def->is_clock = ev->type == PERF_TYPE_SOFTWARE &&
			(ev->config == PERF_COUNT_SW_TASK_CLOCK || ev->config == PERF_COUNT_SW_CPU_CLOCK);
	if (mods) {
		long bad = apply_modifiers(&def->attr, mods);

		if (bad >= 0) {
			log_caret(spec->name, (size_t)(mods - spec->name + bad),
				  "unknown modifier '%c' in event '%s' (expected u, k or h)",
				  mods[bad], spec->name);
			return -1;
		}
	}
	if (spec->filter) {
		log_error("--filter '%s' follows '%s', which is not a tracepoint",
			  spec->filter, spec->name);
		return -1;
	}
	return 0;
}

/* The tracepoint's id from tracefs/events/SYS/NAME/id. */
static int resolve_tracepoint(const struct event_spec *spec, struct event_def *def,
			      const char *colon)
{
	char *sys = strndup(spec->name, (size_t)(colon - spec->name));
	const char *name = colon + 1;
	char *text = NULL, *dir;
	int size = 0, rc = -1;

	if (!tracefs_tracing_dir()) {
		log_error("cannot find or mount tracefs (needed for '%s'): mount it with "
			  "'mount -t tracefs nodev /sys/kernel/tracing'", spec->name);
		goto out;
	}
	dir = tracefs_get_tracing_file("events");
	if (dir) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, sys);
		tracefs_put_tracing_file(dir);
		if (access(path, F_OK) != 0) {
			log_caret(spec->name, 0, "unknown tracepoint subsystem '%s'", sys);
			goto out;
		}
	}
	text = tracefs_event_file_read(NULL, sys, name, "id", &size);
	if (!text || size <= 0) {
		log_caret(spec->name, (size_t)(name - spec->name),
			  "unknown tracepoint '%s' in subsystem '%s'", name, sys);
		goto out;
	}
	def->attr.type = PERF_TYPE_TRACEPOINT;
	def->attr.config = strtoull(text, NULL, 10);
	def->is_tracepoint = true;
	if (spec->filter)
		def->filter = strdup(spec->filter);
	rc = 0;
out:
	free(text);
	free(sys);
	return rc;
}

int events_resolve(const struct event_spec *spec, struct event_def *def)
{
	const char *colon = strchr(spec->name, ':');
	const struct named_event *ev;

	memset(def, 0, sizeof(*def));
	def->name = strdup(spec->name);
	def->attr.size = sizeof(def->attr);
	ev = named_event_find(spec->name, colon ? (size_t)(colon - spec->name) : strlen(spec->name));
	if (ev)
		return resolve_named(spec, def, ev, colon ? colon + 1 : NULL);
	if (colon && colon != spec->name && colon[1])
		return resolve_tracepoint(spec, def, colon);
	log_caret(spec->name, 0, "unknown event '%s' (software, hardware, or subsys:tracepoint)",
		  spec->name);
	return -1;
}

void events_def_free(struct event_def *def)
{
	free(def->name);
	free(def->filter);
}
