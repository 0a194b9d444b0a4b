/*
 * cpu_list: perf's -C LIST ("0,2-3"), from text to CPU ranges, each with
 * the byte offset it was written at.
 *
 *     list = item { "," item }     item = n [ "-" n ]     n = [0-9]+
 *
 * The agent checks each CPU against the online ones and puts a caret under
 * the item of one that is not; duplicates and overlaps ("0,0", "0-3,2")
 * are kept here, in the order written, and merged by the agent, as perf
 * merges them.  Pure C, no I/O; fuzzed with the range grammar.
 */
#ifndef PERFGATE_CPU_LIST_H
#define PERFGATE_CPU_LIST_H

#include <stddef.h>

#include "common/error.h"

/* The largest CPU number accepted (perf's struct perf_cpu holds an int). */
#define CPU_LIST_MAX 2147483647L

struct cpu_list_item {
	long lo, hi;		/* lo <= hi; "3" is 3..3 */
	size_t offset;		/* of the item's first digit */
};

/*
 * Parse text[0..len).  Returns the items (free() them) with *n set, or NULL
 * with *err filled (err may be NULL) and errno set (EINVAL, ENOMEM).
 */
struct cpu_list_item *cpu_list_parse(const char *text, size_t len, size_t *n,
				     struct pg_error *err);

#endif
