/*
 * range_bpf: the BPF backend of ranges -- a range set compiled into the
 * tables of range_gate.bpf.c, its per-CPU counters opened, its programs
 * loaded and attached, and its sums read back (docs/design.md, "The BPF
 * backend").
 *
 * The kernel does the accounting: at every trigger hit and context switch
 * of a measured task, a program adds the counters' delta to the views
 * whose gate was open.  The agent only reads the sums, after a flush on
 * every CPU, so the values are whole when they are read and nothing can
 * be lost on the way.
 */
#ifndef PERFGATE_RANGE_BPF_H
#define PERFGATE_RANGE_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/ranges/range_backend.h"

struct range_layout;
struct range_set_target;
struct range_bpf;

/*
 * A BPF backend counting layout on target: counters opened, programs
 * loaded and attached, the target's tasks measured.
 * NULL with the reason (and what to change) in why; *unfit tells a set the
 * programs do not express (limits of the tables, filter forms), decided
 * before anything opens, from a kernel that refused.
 */
struct range_bpf *range_bpf_new(const struct range_layout *layout,
				const struct range_set_target *target, bool *unfit,
				char *why, size_t cap);
/* "range unload", and the end of the run: a last refresh, then the
 * programs detach and the counters close, so that every later reading
 * (the final report's rows, the plain views it backs) sees the same
 * values; they stay readable until range_bpf_free. */
void range_bpf_unload(struct range_bpf *b);
void range_bpf_free(struct range_bpf *b);

/* Flush every CPU and read the sums: values are now as of this call. */
void range_bpf_refresh(struct range_bpf *b);
/* View v's count of set member m, as of the last refresh. */
uint64_t range_bpf_value(const struct range_bpf *b, size_t view, size_t member);
/* Every measured task's count of member m (the plain view it backs), as
 * of the last refresh, like the views' values: a reading of the plain view
 * and of the range views between two refreshes is one reading, so that
 * E == E@R + E@!R holds in every interval line, not only at the end.
 * *ns is how long the set has been counting. */
uint64_t range_bpf_total(const struct range_bpf *b, size_t member, uint64_t *ns);
bool range_bpf_supported(const struct range_bpf *b, size_t member);
/* Hits or switches the programs could not account exactly (another BPF
 * program busy on the CPU, no task storage): the views are incomplete. */
uint64_t range_bpf_missed(const struct range_bpf *b);
/* perf fds the set holds (for the benchmark). */
size_t range_bpf_nr_fds(const struct range_bpf *b);

/* The backend range_set calls, over the functions above. */
extern const struct range_backend_ops range_bpf_backend;

#endif
