/*
 * event_parse: perf's event syntax (what `perf stat -e` takes), from a
 * string to a list of groups of events.
 *
 *     list      = item { "," item }
 *     item      = "{" event { "," event } "}" [ ":" mods ]     a group
 *               | event                                      a group of one
 *     event     = pmu "/" [ term { "," term } ] "/" [ [":"] mods ]
 *               | name [ ":" mods ]          hardware, software, cache,
 *                                            raw rNNNN, duration_time,
 *                                            user_time, system_time
 *               | subsys ":" tpname [ ":" mods ]   tracepoint; '*' and '?'
 *                                                  make it a pattern
 *     term      = key [ "=" value ]           value: 123, 0x7b or a word
 *     mods      = { "u" | "k" | "h" | "G" | "H" | "p" | "P" | "S" | "D"
 *                 | "I" | "W" | "e" | "b" }   "p" up to three times
 *
 * e.g. "{cycles,instructions}:u,L1-dcache-load-misses,r1a3:k,
 * cpu/event=0x3c,umask=0x00,inv/,msr/tsc/,syscalls:sys_enter_*,duration_time".
 *
 * What needs no machine is decided here: hardware and software names,
 * perf's generic cache names (type-op-result, every alias perf takes), raw
 * codes and duration_time get their perf_event_attr type and config now,
 * and a name that is none of them and no tracepoint is an error with a
 * caret ("unknown event 'L1-dcache-lods'").  A name the machine lacks is
 * no error: the counter is shown <not supported> later.  What needs the
 * machine is left to the agent (agent/events/event_resolve.h): a PMU's type,
 * format bits and aliases (sysfs), a tracepoint's id and a pattern's
 * matches (tracefs).
 *
 * Modifiers are recorded as written (struct event_mods); the agent turns
 * them into attr fields the way perf does, a group's modifiers on top of
 * each member's own (event_resolve.h, event_mods_apply).
 *
 * Pure C: no I/O.  event_list_parse() allocates one list, freed with
 * event_list_free().  It returns NULL and sets errno (EINVAL for a syntax
 * error, ENOMEM) on failure, as range_parse() does; every error names the
 * byte it is about, so the agent prints the list with a caret under it
 * (event_parse_error_format).
 */
#ifndef PERFGATE_EVENT_PARSE_H
#define PERFGATE_EVENT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Most events in one list, and most terms in one PMU event. */
#define EVENT_LIST_MAX 4096
#define EVENT_TERMS_MAX 64

/* A piece of the text: bytes [offset, offset + len). */
struct event_span {
	size_t offset;
	size_t len;
};

enum event_kind {
	EVENT_HARDWARE,		/* PERF_TYPE_HARDWARE: cycles, instructions, ... */
	EVENT_SOFTWARE,		/* PERF_TYPE_SOFTWARE: task-clock, page-faults, ... */
	EVENT_CACHE,		/* PERF_TYPE_HW_CACHE: L1-dcache-load-misses, ... */
	EVENT_RAW,		/* PERF_TYPE_RAW: r1a3 */
	EVENT_TOOL,		/* perf's tool events: duration_time, user_time, system_time */
	EVENT_PMU,		/* pmu/terms/: type and config from sysfs */
	EVENT_TRACEPOINT,	/* subsys:name: the id from tracefs */
	EVENT_TRACEPOINT_GLOB,	/* subsys:pattern with '*' or '?': expanded from tracefs */
};

/*
 * perf's tool events: numbers perf takes itself, not from a counter (perf
 * 6.1 opens a software dummy event in their place: type 1, config 9).
 */
enum event_tool {
	EVENT_TOOL_NONE,
	EVENT_TOOL_DURATION_TIME,	/* wall-clock ns from the start of the run */
	EVENT_TOOL_USER_TIME,		/* the workload's user CPU time, ns (rusage) */
	EVENT_TOOL_SYSTEM_TIME,		/* the workload's system CPU time, ns (rusage) */
};

/* Modifier letters, one bit each ("p" counts in event_mods.precise). */
enum event_mod_bit {
	EVENT_MOD_USER		= 1u << 0,	/* u: count user space (excludes the rest) */
	EVENT_MOD_KERNEL	= 1u << 1,	/* k: count the kernel */
	EVENT_MOD_HV		= 1u << 2,	/* h: count the hypervisor */
	EVENT_MOD_GUEST		= 1u << 3,	/* G: guest only (exclude_host) */
	EVENT_MOD_HOST		= 1u << 4,	/* H: host only (exclude_guest) */
	EVENT_MOD_PRECISE_MAX	= 1u << 5,	/* P: highest precise_ip the PMU has */
	EVENT_MOD_SAMPLE_READ	= 1u << 6,	/* S: read the group on samples (record) */
	EVENT_MOD_PINNED	= 1u << 7,	/* D: pinned (the group leader) */
	EVENT_MOD_NON_IDLE	= 1u << 8,	/* I: exclude_idle */
	EVENT_MOD_WEAK		= 1u << 9,	/* W: weak group: ungroup if it cannot be scheduled */
	EVENT_MOD_EXCLUSIVE	= 1u << 10,	/* e: exclusive (the group leader) */
	EVENT_MOD_BPF		= 1u << 11,	/* b: count through BPF (perf's bperf) */
};

struct event_mods {
	unsigned bits;		/* enum event_mod_bit */
	unsigned precise;	/* how many "p": 0..3 */
	struct event_span span;	/* the letters; len 0 when there are none */
};

/* One term of pmu/.../: "event=0x3c", "inv", "name=foo". */
struct event_term {
	char *key;
	struct event_span key_span;
	/* No "=": a flag (value 1) or one of the PMU's event aliases. */
	bool has_value;
	char *value;		/* as written ("0x3c", "foo"); NULL without '=' */
	struct event_span value_span;
	bool is_number;		/* decimal or 0x hex: number holds it */
	uint64_t number;
};

struct event_desc {
	enum event_kind kind;
	/* The event as written, modifiers included ("cycles:u"): its name in reports. */
	char *text;
	struct event_span span;
	struct event_span name_span;	/* without the modifiers */
	/* HARDWARE, SOFTWARE, CACHE, RAW, TOOL: the attr's type and config. */
	uint32_t type;
	uint64_t config;
	enum event_tool tool;		/* TOOL: which one */
	/* PMU: */
	char *pmu;
	struct event_span pmu_span;
	size_t nterms;
	struct event_term *terms;
	/* TRACEPOINT, TRACEPOINT_GLOB: */
	char *subsys;			/* "syscalls" (may hold '*' '?' for a glob) */
	char *tp_name;			/* "sys_enter_*" */
	struct event_span subsys_span, tp_span;
	struct event_mods mods;
	size_t group;			/* its group in event_list.groups */
};

struct event_group {
	struct event_span span;		/* "{...}:mods", or the event itself */
	bool braced;			/* written with { }: read as one group */
	struct event_mods mods;		/* after the '}' (none for a group of one) */
	size_t first;			/* members: events[first .. first + n) */
	size_t n;
};

struct event_list {
	char *text;			/* a copy of the list, NUL-terminated */
	size_t text_len;
	size_t nevents;
	struct event_desc *events;	/* left to right */
	size_t ngroups;
	struct event_group *groups;	/* left to right */
};

/*
 * Parse text[0..len) (need not be NUL-terminated; a NUL inside is an
 * error).  Returns the list, or NULL with *err filled (err may be NULL)
 * and errno set.  Blanks are allowed around ',', '{', '}', not inside an
 * event.
 */
struct event_list *event_list_parse(const char *text, size_t len,
				    struct pg_error *err);
void event_list_free(struct event_list *list);

/*
 * perf's generic cache event name ("L1-dcache-load-misses", "l1d-miss",
 * "branch-loads", ...) as PERF_TYPE_HW_CACHE's config: cache id |
 * (op << 8) | (result << 16), op "load" and result "refs" when not named.
 * Returns false when name[0..len) is not one.
 */
bool event_cache_config(const char *name, size_t len, uint64_t *config);

/*
 * A hardware or software event name, or a tool event: *ev gets its kind,
 * type, config and tool.  Returns false when name[0..len) is none of them.
 */
bool event_named_lookup(const char *name, size_t len, struct event_desc *ev);

/* The kind's name for messages and tests: "hardware", "cache", "tracepoint glob", ... */
const char *event_kind_name(enum event_kind kind);

/*
 * The error for a person, in two lines (no final newline), as
 * range_error_format() shows it:
 *
 *     cycles:q
 *            ^ unknown modifier 'q'
 *
 * snprintf's contract.
 */
size_t event_parse_error_format(const char *text, size_t len,
				const struct pg_error *err, char *buf, size_t cap);

/* Walks in the libperf style. */
#define event_list_for_each_event(list, ev, i)					\
	for ((i) = 0; (i) < (list)->nevents && ((ev) = &(list)->events[(i)], 1); (i)++)
#define event_list_for_each_group(list, grp, i)					\
	for ((i) = 0; (i) < (list)->ngroups && ((grp) = &(list)->groups[(i)], 1); (i)++)

#endif
