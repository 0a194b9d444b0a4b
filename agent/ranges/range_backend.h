/*
 * range_backend: what counts a range set, behind one table of operations.
 *
 * Two backends implement it: BPF (range_bpf.c), where programs account
 * every trigger hit and context switch in the kernel, and samples
 * (range_sample.c), where perf groups sample the hits and range_account
 * walks their records.  range_set picks one when the set starts and then
 * only calls through the table.
 */
#ifndef PERFGATE_RANGE_BACKEND_H
#define PERFGATE_RANGE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/count/counter.h"
#include "agent/ranges/range_layout.h"

struct event_base;

struct range_backend_ops {
	/* Does it account in the kernel?  Then what it misses are hits and
	 * switches; else ring-buffer records lost. */
	bool in_kernel;
	/* Count layout on target: the backend's object, or NULL with the
	 * reason in why (or printed).  *unfit: the backend cannot express
	 * the set, which is no fault of the machine. */
	void *(*start)(const struct range_layout *layout, const struct range_set_target *target,
		       struct event_base *base, bool *unfit, char *why, size_t cap);
	/* Account what the kernel wrote so far. */
	void (*drain)(void *obj, enum range_drain how);
	/* The run is over: account everything and stop counting. */
	void (*finish)(void *obj);
	/* After finish, "range unload": give back the kernel's resources;
	 * the values stay readable. */
	void (*release)(void *obj);
	/* Member m's value over every measured task (a plain counter it backs). */
	void (*read_member)(void *obj, size_t member, struct counter_value *value);
	/* Can it count member m on this machine? */
	bool (*supported)(const void *obj, size_t member);
	/* View v's count of member m. */
	uint64_t (*value)(const void *obj, size_t view, size_t member);
	/* Records lost or hits not accounted: the views are incomplete. */
	uint64_t (*lost)(const void *obj);
	void (*free)(void *obj);
};

#endif
