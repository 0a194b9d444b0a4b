/*
 * session_ranges: the session's range sets -- the specs given with -e at
 * start-up (one set, sharing its counters with the plain -e events) and
 * those loaded at run time with "range load" (a set each, opened on every
 * thread the target has at that moment).
 */
#ifndef PERFGATE_SESSION_RANGES_H
#define PERFGATE_SESSION_RANGES_H

#include <stdbool.h>
#include <stddef.h>

struct session;
struct event_spec;

/* Is this -e entry a range spec ("events@gate")? */
bool session_ranges_is_spec(const struct event_spec *spec);
/* Parse the -e range specs; prints the spec with a caret on error. */
int session_ranges_parse(struct session *s);
/* Compile and open the start-up set, and back plain counters with it.
 * Call after the workload is forked, before the counters are opened. */
int session_ranges_open(struct session *s);
/* "range load NAME = SPEC": 0, or -1 with a one-line reason. */
int session_ranges_load(struct session *s, const char *name, const char *spec,
			char *reason, size_t cap);
/* "range unload NAME". */
int session_ranges_unload(struct session *s, const char *name, char *reason, size_t cap);
/* Account what the ring buffers hold (before any report). */
void session_ranges_drain(struct session *s);
/* The run is over (the workload reaped): account everything. */
void session_ranges_finish(struct session *s);
/* Every range view's value now, in a fixed order (sets as loaded, specs,
 * events): a malloc'd array of *n, or NULL when there are none.  Views of
 * sets loaded later come after, so an earlier array is a prefix. */
uint64_t *session_ranges_values(const struct session *s, size_t *n);
/* Warn on stderr when range views are incomplete, saying why. */
void session_ranges_warn_lost(const struct session *s);
void session_ranges_free(struct session *s);

#endif
