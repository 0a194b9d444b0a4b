/*
 * range_parse: the range grammar (perfgate-ranges(7)), from a string to a
 * tree the agent walks.
 *
 * A range spec names the events to count and the gate that decides, at the
 * instant tracepoints fire, when they count:
 *
 *     spec      = events [ "@" gate ]
 *     events    = event | "(" event { "," event } ")"
 *     gate      = term { "||" term }               union
 *     term      = factor { "&&" factor }            intersection
 *     factor    = "!" factor | "(" gate ")" | range complement, grouping
 *     range     = [ trigger ] ".." [ trigger ]      at least one trigger
 *     trigger   = tracepoint [ "(" filter ")" ]     filter: filter_parse.h
 *     event     = [A-Za-z0-9_.:-]+ without ".."     perf's event names
 *     tracepoint = subsys ":" name                 both [A-Za-z0-9_]+
 *
 * e.g. "task-clock@syscalls:sys_enter_read..syscalls:sys_exit_read" or
 * "(cycles,instructions)@irq:softirq_entry(vec == 3)..irq:softirq_exit".
 * docs/perfgate-ranges.7 gives the grammar in full and the meaning.
 *
 * This module checks the syntax only: whether events and tracepoints exist
 * and whether filter fields fit the tracepoint's format is for the agent
 * (tracefs, libtraceevent).  Every error names the byte it is about, so the
 * agent prints the spec with a caret under it (range_error_format).
 *
 * Pure C: no I/O.  range_parse() allocates one tree, freed with
 * range_spec_free().  It returns NULL and sets errno (EINVAL for a syntax
 * error, ENOMEM) on failure, as libbpf does.
 */
#ifndef PERFGATE_RANGE_PARSE_H
#define PERFGATE_RANGE_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "grammar/filter_parse.h"

/* Deepest nesting of '(' and '!' accepted in a gate. */
#define RANGE_NEST_MAX 64

struct range_event {
	char *name;		/* "cycles:u", as written */
	size_t offset;		/* of its first byte in the spec */
	size_t len;
};

enum range_trigger_role {
	RANGE_STARTER,		/* opens its range (one level deeper) */
	RANGE_STOPPER,		/* closes one level */
};

struct range_trigger {
	char *tracepoint;	/* "irq:softirq_entry" */
	char *subsys;		/* "irq" */
	char *name;		/* "softirq_entry" */
	size_t offset;		/* of "subsys:name" in the spec */
	size_t len;
	/*
	 * The filter between the parentheses, exactly as written (what the
	 * user typed, for PERF_EVENT_IOC_SET_FILTER), and its bytes in the
	 * spec; filter_text is NULL and filter_len 0 when there is none.
	 */
	char *filter_text;
	size_t filter_offset;
	size_t filter_len;
	struct filter_node *filter;	/* the same, parsed; NULL when none */
	enum range_trigger_role role;
	size_t range_index;	/* its range in range_spec.ranges */
};

enum range_gate_kind {
	RANGE_GATE_RANGE,	/* starter..stopper */
	RANGE_GATE_AND,		/* inside every child (n >= 2) */
	RANGE_GATE_OR,		/* inside any child (n >= 2) */
	RANGE_GATE_NOT,		/* outside the one child */
};

struct range_gate {
	enum range_gate_kind kind;
	/*
	 * The node's bytes in the spec: a group's parentheses belong to the
	 * node around the group ("!(a:b..)" is all NOT; the RANGE is "a:b..").
	 */
	size_t offset;
	size_t len;
	/* AND, OR: the operands, left to right; NOT: one. */
	size_t nchildren;
	struct range_gate **children;
	/* RANGE only: */
	struct range_trigger *starter;	/* NULL: open from the start ("..T") */
	struct range_trigger *stopper;	/* NULL: open to the end ("S..") */
	size_t dots_offset;		/* of ".." */
	size_t index;			/* in range_spec.ranges */
};

struct range_spec {
	char *text;		/* a copy of the spec, NUL-terminated */
	size_t text_len;
	size_t nevents;
	struct range_event *events;	/* in the order written, no duplicates */
	size_t at_offset;	/* of '@'; text_len when there is no gate */
	struct range_gate *gate;	/* NULL: no "@" (the events, ungated) */
	/* Every RANGE node, left to right: ranges[i]->index == i. */
	size_t nranges;
	struct range_gate **ranges;
	/* Every trigger, left to right (a starter before its stopper). */
	size_t ntriggers;
	struct range_trigger **triggers;
};

/*
 * Parse a NUL-terminated spec.  Returns the tree, or NULL with *err filled
 * (err may be NULL) and errno set.  Leading and trailing blanks are allowed,
 * as is whitespace between tokens (not inside a name or an operator).
 */
struct range_spec *range_parse(const char *text, struct pg_error *err);
/* The same for text[0..len), which need not be NUL-terminated (a NUL
 * byte inside is a syntax error). */
struct range_spec *range_parse_n(const char *text, size_t len, struct pg_error *err);

void range_spec_free(struct range_spec *spec);

/*
 * Is text[0..len) one tracepoint name as the grammar spells it, "subsys:name"
 * with both parts [A-Za-z0-9_]+?  For names that come without a spec around
 * them (-e, --filter's event): the agent turns the name into a tracefs path,
 * so a '/' or ".." must never reach it.  Returns true, or false with *err
 * (err may be NULL) naming the first bad byte, and errno EINVAL.
 */
bool range_tracepoint_check(const char *text, size_t len, struct pg_error *err);

/*
 * The canonical text of a spec: no blanks except around "&&" and "||" and
 * inside filters ("(a,b)@x:y(n == 1)..z:w && !p:q.."), parentheses only
 * where precedence or the tree's shape needs them, filters in the
 * canonical form of filter_format().  Parsing it gives the same tree.
 * snprintf's contract: writes at most cap bytes (NUL included, when
 * cap > 0) and returns the length of the whole text.
 */
size_t range_spec_format(const struct range_spec *spec, char *buf, size_t cap);
/* The same for a gate alone (what follows '@'). */
size_t range_gate_format(const struct range_gate *gate, char *buf, size_t cap);

/*
 * Is the gate open, given the state of every range (open[i] for
 * spec->ranges[i], true when that range's depth is above 0)?  && is
 * intersection, || union, ! complement.
 */
bool range_gate_eval(const struct range_gate *gate, const bool *open);

/*
 * The error for a person, in two lines (no final newline):
 *
 *     cycles@irq:softirq_entry.irq:softirq_exit
 *                             ^ expected '..' after trigger
 *
 * Tabs and other control bytes of the spec are shown as spaces or '?' so
 * the caret stays under its byte (UTF-8 sequences count as one column).
 * A spec of more than RANGE_CARET_WIDTH columns is shown as a window of
 * about RANGE_CARET_WINDOW bytes around the caret, "..." marking each cut
 * end, so that however long the input, the reason and the caret are there
 * and the caret is under its byte.  snprintf's contract.
 */
size_t range_error_format(const char *text, size_t len, const struct pg_error *err,
			  char *buf, size_t cap);
#define RANGE_CARET_WIDTH 160
#define RANGE_CARET_WINDOW 120
/*
 * The two lines alone, each after indent, with no reason and no final
 * newline: "INDENT...shown...\nINDENT      ^".  For any input with a
 * position (option values, event lists, filters).  snprintf's contract.
 */
size_t range_caret_format(const char *text, size_t len, size_t offset, const char *indent,
			  char *buf, size_t cap);
/*
 * The same on one line, for an "err" reply on a control channel:
 * "expected '..' after trigger at byte 24: cycles@irq:softirq_entry<HERE>.irq:...".
 */
size_t range_error_format_line(const char *text, size_t len, const struct pg_error *err,
			       char *buf, size_t cap);

/* Walks in the libperf style:  size_t i; struct range_trigger *t;
 *                              range_spec_for_each_trigger(spec, t, i) { ... } */
#define range_spec_for_each_trigger(spec, trig, i)				\
	for ((i) = 0; (i) < (spec)->ntriggers && ((trig) = (spec)->triggers[(i)], 1); (i)++)
#define range_spec_for_each_range(spec, range, i)				\
	for ((i) = 0; (i) < (spec)->nranges && ((range) = (spec)->ranges[(i)], 1); (i)++)
#define range_spec_for_each_event(spec, event, i)				\
	for ((i) = 0; (i) < (spec)->nevents && ((event) = &(spec)->events[(i)], 1); (i)++)

#endif
