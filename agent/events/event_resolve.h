/*
 * event_resolve: a parsed -e list (grammar/event_parse.h) made into
 * perf_event_attrs, as perf builds them.
 *
 * What the parser could not know comes from the machine, read under root
 * directories the caller gives (so the unit tests run on a fake tree):
 *
 * - PMU events pmu/term=value,.../: the PMU's type from
 *   SYSFS/PMU/type, each term's bits from SYSFS/PMU/format/TERM
 *   ("config:0-7", "config1:0-63", "config:0-7,32-35"), and aliases
 *   (pmu/alias/) from SYSFS/PMU/events/ALIAS ("event=0x3c,umask=0x00");
 * - tracepoints subsys:name from EVENTS/subsys/name/id, and patterns
 *   (syscalls:sys_enter_*) expanded against EVENTS, matches sorted by name.
 *
 * Modifiers become attr fields the way perf 6.1 does it
 * (event_mods_apply); a group's modifiers are applied to each member on
 * top of its own.  An event perf knows by name always resolves, whether
 * the machine can count it or not: opening it later says <not supported>.
 *
 * Errors carry the byte offset in the -e text, for a caret, and say what
 * exists: the PMUs there are for an unknown PMU, the PMU's terms for an
 * unknown term.
 */
#ifndef PERFGATE_EVENT_RESOLVE_H
#define PERFGATE_EVENT_RESOLVE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "grammar/event_parse.h"

/* Where the machine's facts are read. */
struct event_resolve_roots {
	const char *pmus;	/* "/sys/bus/event_source/devices" (NULL: that) */
	const char *tracepoints;/* tracefs's events/ directory; NULL: no tracepoints */
};

#define EVENT_RESOLVE_SYSFS "/sys/bus/event_source/devices"

/* What perf keeps beside the attr (struct evsel's flags). */
struct event_attr_flags {
	bool exclude_GH;	/* G or H was given: exclude_guest/host are set by hand */
	bool sample_read;	/* S */
	bool precise_max;	/* P */
	bool weak_group;	/* W */
	bool bpf_counter;	/* b */
};

/* One counter to open: an event of the list, or one match of a pattern. */
struct event_resolved {
	char *name;			/* for reports: "cycles:u", "syscalls:sys_enter_read" */
	struct perf_event_attr attr;	/* type, config, config1, config2, exclude_*,
					 * precise_ip, pinned, exclusive, exclude_idle,
					 * sample_period; the rest is the counter's */
	struct event_attr_flags flags;
	enum event_kind kind;
	enum event_tool tool;		/* TOOL: which number the agent takes itself */
	size_t desc;			/* its event in event_list.events */
	size_t group;			/* its group in event_list.groups */
	size_t leader;			/* index of its group's leader in the result */
	bool braced;			/* its group was written { }: open as one group */
};

struct event_resolved_list {
	size_t n;
	struct event_resolved *events;
};

/*
 * perf's modifier rules (its event parser's parse_events__modifier_list): u,
 * k and h each keep one level and exclude the levels not named; u also
 * excludes guests unless G or H decided that; G and H keep one side of
 * guest/host; p raises precise_ip (and excludes guests); I sets
 * exclude_idle; D and e set pinned and exclusive on a group's leader only.
 * An event's own modifiers start from a clean slate (so "cycles:D" drops
 * the default exclude_guest, as perf 6.1 does); a group's (group = true)
 * start from each member's current attr.  Returns -1 when precise_ip would
 * pass 3.
 */
int event_mods_apply(struct perf_event_attr *attr, struct event_attr_flags *flags,
		     const struct event_mods *mods, bool group, bool leader);

/*
 * Resolve every event of the list: groups keep their members together,
 * patterns become their matches in place.  0, or -1 with *err filled.
 * The result is freed with event_resolved_list_free().
 */
int event_resolve_list(const struct event_resolve_roots *roots, const struct event_list *list,
		       struct event_resolved_list *out, struct pg_error *err);
void event_resolved_list_free(struct event_resolved_list *out);

/*
 * The PMU part alone: attr's type from PMU/type, and config, config1,
 * config2 (and sample_period, *name for name=) from ev's terms.  0, or -1
 * with *err filled.  For tests and for perf's pmu/.../ in other places.
 */
int event_resolve_pmu(const char *pmus_root, const struct event_desc *ev,
		      struct perf_event_attr *attr, char **name,
		      struct pg_error *err);

#endif
