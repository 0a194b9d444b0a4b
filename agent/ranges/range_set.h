/*
 * range_set: range specs (grammar/range_parse.h) compiled into one layout
 * (range_layout.h), counted by one backend (range_backend.h: BPF, or
 * samples), and the views they show.
 *
 * The specs given with -e at start-up form one set, so that every event
 * they count is one physical counter: a plain "-e E" of the same event
 * reads that counter too (range_set_back_counter), which is what makes
 * E@R + E@!R == E exact.  Each "range load NAME = SPEC" makes a set of its
 * own, opened on the threads that exist at that moment.
 *
 * Compiling resolves every event and trigger (tracefs), checks trigger
 * filters against the tracepoint formats (filter_check), and numbers:
 * group members (0: the switch sampler, then triggers and counted events,
 * each once however often it is named), leaves (every "S..T" of every
 * spec), and views (one per spec, each showing its own events).
 */
#ifndef PERFGATE_RANGE_SET_H
#define PERFGATE_RANGE_SET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/count/counter.h"
#include "agent/ranges/range_layout.h"
#include "common/error.h"
#include "grammar/range_parse.h"

struct event_base;
struct range_set;

/* Takes ownership of specs (an array of n) on success; on failure they
 * stay the caller's, so that it can show the spec with the error: *err
 * is about specs[*err_spec] (err_spec may be NULL), at an offset in its
 * text. */
struct range_set *range_set_compile(struct range_spec **specs, size_t n, const char *name,
				    size_t *err_spec, struct pg_error *err);

/* Start the backend counting: 0, or -1 (message printed, or in reason
 * when reason is not NULL).  When BPF cannot be had and samples count
 * instead, the reason is printed unless *told_fallback, which is then set:
 * a run says it once, however many sets it starts. */
int range_set_start(struct range_set *rs, const struct range_set_target *target,
		    struct event_base *base, bool *told_fallback, char *reason, size_t cap);
void range_set_free(struct range_set *rs);

/* Account what the kernel wrote so far (see range_groups_drain). */
void range_set_drain(struct range_set *rs, enum range_drain how);
/* Everything, and the roots' last stretch: the run is over. */
void range_set_finish(struct range_set *rs);
/* "range unload": finish now and close the groups; the totals stay. */
void range_set_unload(struct range_set *rs);

/* The member counting the same thing as def (no filter), or 0 if none. */
size_t range_set_find_counted(const struct range_set *rs, const struct event_def *def);
/* Make the plain counter c read member m of the set (before
 * counter_open): its value is the kernel's current one (sample backend),
 * or as of the last range_set_drain (BPF backend). */
void range_set_back_counter(struct range_set *rs, struct counter *c, size_t member);
/* Is the set counted by the BPF backend (else by samples)? */
bool range_set_is_bpf(const struct range_set *rs);

/* The "range load" NAME, or NULL for the start-up set. */
const char *range_set_name(const struct range_set *rs);
/* Has the set been unloaded ("range unload")?  Its totals stay. */
bool range_set_is_unloaded(const struct range_set *rs);
/* The set's specs, one view each; spec s as written. */
size_t range_set_nr_specs(const struct range_set *rs);
const char *range_set_spec_text(const struct range_set *rs, size_t spec);
/* A view row: spec s, its event e. */
size_t range_set_nr_events(const struct range_set *rs, size_t spec);
const struct event_def *range_set_event(const struct range_set *rs, size_t spec, size_t e);
bool range_set_supported(const struct range_set *rs, size_t spec, size_t e);
uint64_t range_set_value(const struct range_set *rs, size_t spec, size_t e);
/* What follows "event@" in a row: the NAME of "range load", or the gate
 * as written in a start-up spec ("" for a spec without one). */
const char *range_set_label(const struct range_set *rs, size_t spec);
/* The event's name as written in the spec. */
const char *range_set_event_name(const struct range_set *rs, size_t spec, size_t e);
/* The row's value at the last interval line, for the report to keep. */
uint64_t *range_set_interval_base(struct range_set *rs, size_t spec, size_t e);
/* Records lost (sample) or hits not accounted (BPF): views incomplete. */
uint64_t range_set_lost(const struct range_set *rs);

#endif
