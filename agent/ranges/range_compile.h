/*
 * range_compile: a range set's layout (range_layout.h) compiled into the
 * tables the BPF programs of range_gate.bpf.c read (struct rb_config,
 * range_bpf_abi.h): the views' gates as stack-machine operations, the
 * triggers of each tracepoint with their filters, the counted events
 * numbered, and the syscall tracepoints routed through the raw syscall
 * programs.
 *
 * Compiling opens nothing and loads nothing; it only reads the formats of
 * the tracepoints whose triggers carry a filter, through a reader the
 * caller may replace (range_compile_with), so that the compiler can be
 * tested without tracefs.  range_bpf.c runs what it produces.
 */
#ifndef PERFGATE_RANGE_COMPILE_H
#define PERFGATE_RANGE_COMPILE_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/ranges/range_bpf_abi.h"

struct range_layout;

/* A tracepoint's format file ("subsys/name/format"): its text, malloc'd,
 * and its size in *size; NULL when it cannot be read. */
typedef char *range_format_reader(const char *subsys, const char *name, int *size,
				  void *ctx);

/*
 * Compile layout into *cfg (zeroed first).  event_of_member and first_of
 * have layout->nr_events + 1 entries: event_of_member[m] is the counted event
 * member m is (0..*nr_events - 1), or -1; first_of[m] the index of the
 * first trigger on member m's tracepoint, or SIZE_MAX when no program goes
 * there.  -1 with the reason in why when the programs cannot express the
 * set (limits of the tables, filter forms): the set is unfit for BPF, not
 * the machine.  Formats are read from tracefs.
 */
int range_compile(const struct range_layout *layout, struct rb_config *cfg, int *event_of_member,
		  size_t *first_of, size_t *nr_events, char *why, size_t cap);
/* The same, with the formats read by read_format(..., ctx). */
int range_compile_with(const struct range_layout *layout, range_format_reader *read_format,
		       void *ctx, struct rb_config *cfg, int *event_of_member, size_t *first_of,
		       size_t *nr_events, char *why, size_t cap);

/* Is member m counted by the programs, hit by hit (a tracepoint), rather
 * than by a per-CPU perf counter? */
bool range_compile_counted_in_bpf(const struct range_layout *layout, size_t m);
/* Do the raw syscall programs carry the hits of event, whose tracepoint's
 * first trigger is first (so that it needs no program of its own)? */
bool range_compile_routed(const struct rb_config *cfg, const char *event, size_t first);
/* Does a syscall table (cfg->syscall_enter or syscall_exit) route any? */
bool range_compile_any_routed(const __u8 *table);

#endif
