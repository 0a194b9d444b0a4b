/*
 * range_registry: a run's range sets -- the specs given with -e at
 * start-up (one set, sharing its counters with the plain -e events) and
 * those loaded at run time with "range load" (a set each, opened on every
 * thread the target has at that moment).  An unloaded set stays, with its
 * totals, until the registry is freed.
 *
 * The registry knows the options it was made with; what belongs to the
 * run (the plain counters, the workload, the event loop) is passed in.
 */
#ifndef PERFGATE_RANGE_REGISTRY_H
#define PERFGATE_RANGE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct counter;
struct event_base;
struct event_spec;
struct options;
struct range_set;
struct range_registry;

/* An empty registry for a run with these options (kept, not copied), or
 * NULL when out of memory.  told_fallback remembers that ranges fell back
 * from BPF to samples and said why: runs that share one (-r) say it once.
 * NULL: the registry keeps its own. */
struct range_registry *range_registry_new(const struct options *opts, bool *told_fallback);
void range_registry_free(struct range_registry *reg);

/* Is this -e entry a range spec ("events@gate")? */
bool range_registry_is_spec(const struct event_spec *spec);
/* Parse the -e range specs; prints the spec with a caret on error. */
int range_registry_parse(struct range_registry *reg);
/* Were range specs given with -e? */
bool range_registry_has_startup_specs(const struct range_registry *reg);
/* Compile and start the start-up set, and back the plain counters with it.
 * Call after the workload (pid, or -1 for none) is forked, before the
 * counters are opened. */
int range_registry_start(struct range_registry *reg, struct counter *counters,
			 size_t nr_counters, pid_t workload, struct event_base *base);
/* "range load NAME = SPEC" in a run with this workload (or -1): 0, or -1
 * with a one-line reason. */
int range_registry_load(struct range_registry *reg, pid_t workload, struct event_base *base,
			const char *name, const char *spec, char *reason, size_t cap);
/* "range unload NAME". */
int range_registry_unload(struct range_registry *reg, const char *name, char *reason,
			  size_t cap);
/* Account what the ring buffers hold (before any report). */
void range_registry_drain(struct range_registry *reg);
/* The run is over (the workload reaped): account everything. */
void range_registry_finish(struct range_registry *reg);
/* Every range view's value now, in a fixed order (sets as loaded, specs,
 * events): a malloc'd array of *n, or NULL: errno 0 when there are none,
 * ENOMEM out of memory (not said).  Views of sets loaded later come
 * after, so an earlier array is a prefix. */
uint64_t *range_registry_values(const struct range_registry *reg, size_t *n);
/* Warn on stderr when range views are incomplete, saying why. */
void range_registry_warn_lost(const struct range_registry *reg);

/* The sets, start-up set first, then in the order they were loaded
 * (unloaded ones included): set i of range_registry_nr_sets(). */
size_t range_registry_nr_sets(const struct range_registry *reg);
struct range_set *range_registry_set(const struct range_registry *reg, size_t i);

#endif
