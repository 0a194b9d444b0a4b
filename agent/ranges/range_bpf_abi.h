/*
 * range_bpf_abi: the tables the agent compiles a range set into, and the
 * state the BPF programs keep -- the one header both halves include
 * (agent/ranges/range_compile.c and range_bpf.c in user space,
 * range_gate.bpf.c in the kernel).
 *
 * A set's gates become small programs in reverse Polish notation: a view's
 * gate is a list of gate ops over the set's leaves (one leaf per "S..T"),
 * a trigger's filter a list of filter ops over predicates.  The BPF
 * programs walk them with bounded loops; nothing here is specific to one
 * spec, so one compiled object serves every set.
 *
 * Types are the kernel's __u64 & co., so that the layout is the same on
 * both sides; every array is sized by a constant below, and the agent
 * refuses a set that does not fit, with the limit in the message.
 */
#ifndef PERFGATE_RANGE_BPF_ABI_H
#define PERFGATE_RANGE_BPF_ABI_H

/* The BPF side has the kernel's types from vmlinux.h, which
 * <linux/types.h> would define a second time. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define RB_EVENTS_MAX 8		/* counted events of one set */
#define RB_LEAVES_MAX 64	/* "S..T" ranges of one set */
#define RB_VIEWS_MAX 31		/* specs of one set; view RB_VIEWS_MAX is the total */
#define RB_VIEW_TOTAL RB_VIEWS_MAX
#define RB_GATE_OPS_MAX 256	/* gate ops of all views of a set */
#define RB_TRIGGERS_MAX 64	/* distinct trigger (tracepoint, filter) pairs */
#define RB_TRIGGER_LEAVES 16	/* leaves one trigger starts, and stops */
#define RB_CHAIN_MAX 8		/* triggers (filters) on one tracepoint */
#define RB_FILTER_OPS_MAX 128	/* filter ops of all triggers */
#define RB_PREDS_MAX 64		/* predicates of all filters */
#define RB_STR_MAX 64		/* bytes of a string a predicate compares with */
#define RB_STACK_MAX 32		/* depth of the RPN stacks (gate and filter) */
#define RB_CPUS_MAX 1024	/* CPUs the per-CPU counter table indexes */
#define RB_SYSCALLS_MAX 512	/* syscall numbers the raw syscall programs dispatch */

/* The limits the layout below is built on. */
_Static_assert(RB_LEAVES_MAX <= 64, "a leaf is one bit of no_starter, leaf_used, open_leaves");
_Static_assert(RB_LEAVES_MAX <= 256, "a trigger names its leaves in __u8");
_Static_assert(RB_VIEWS_MAX + 1 <= 64, "open_views has a bit per view, and one for the total");
_Static_assert(RB_EVENTS_MAX <= 32, "a view's events are the bits of a __u32");

/* Gate and filter ops: operands are pushed, operators pop them. */
enum rb_op {
	RB_OP_PUSH,		/* gate: leaf arg is open; filter: predicate arg matches */
	RB_OP_AND,		/* pop two, push both */
	RB_OP_OR,		/* pop two, push either */
	RB_OP_NOT,		/* pop one, push its complement */
	RB_OP_TRUE,		/* gate: push 1 (a spec without a gate) */
	RB_OP_VIEW,		/* gate: pop; view arg is open if it was 1 */
};

struct rb_op_code {
	__u8 op;		/* enum rb_op */
	__u8 arg;		/* RB_OP_PUSH: leaf or predicate index */
};

struct rb_view {
	__u32 events;		/* bit e: the view counts event e */
};

/* What a predicate reads from the tracepoint's record. */
enum rb_field_kind {
	RB_FIELD_NUMBER,	/* an integer of size 1, 2, 4 or 8 */
	RB_FIELD_ARRAY,		/* char name[size]: a string in place */
	RB_FIELD_DATA_LOC,	/* __data_loc char[]: u32 (length << 16 | offset) */
	RB_FIELD_COMM,		/* the kernel's pseudo-field: the current task's comm */
	RB_FIELD_CPU,		/* the kernel's pseudo-field: the CPU of the hit */
};

/* How a string predicate matches (the kernel's filter_parse_regex forms). */
enum rb_str_match {
	RB_MATCH_FULL,		/* "abc" (== and !=, or ~ without wildcards) */
	RB_MATCH_FRONT,		/* "abc*" */
	RB_MATCH_END,		/* "*abc" */
	RB_MATCH_MIDDLE,	/* "*abc*" */
};

enum rb_cmp {
	RB_CMP_EQ, RB_CMP_NE, RB_CMP_LT, RB_CMP_LE, RB_CMP_GT, RB_CMP_GE, RB_CMP_BAND,
};

struct rb_pred {
	__u16 offset;		/* of the field in the record */
	__u8 size;		/* bytes: the number's, or the char array's */
	__u8 kind;		/* enum rb_field_kind */
	__u8 is_signed;
	__u8 cmp;		/* enum rb_cmp (strings: EQ or NE) */
	__u8 match;		/* strings: enum rb_str_match */
	__u8 str_len;		/* strings: bytes of str (no NUL) */
	__u64 value;		/* numbers */
	char str[RB_STR_MAX];
};

/* A trigger: a tracepoint with a filter.  The triggers of one tracepoint
 * are consecutive, and the first says how many (one program is attached
 * per tracepoint, with the first's index as its cookie). */
struct rb_trigger {
	__u8 nr_chain;		/* the first of a tracepoint's: how many */
	__u8 nr_starts, nr_stops;
	__u8 starts[RB_TRIGGER_LEAVES];	/* leaves whose depth a hit raises */
	__u8 stops[RB_TRIGGER_LEAVES];	/* leaves whose depth a hit lowers */
	__u16 first_filter_op, nr_filter_ops;	/* 0 ops: every hit */
	/* The first of a tracepoint's: counted events that are this very
	 * tracepoint.  They are counted here, one per hit, not by a perf
	 * counter; a hit counts in the views open before it or after it, so
	 * that it is inside the ranges it starts and those it stops. */
	__u32 count_events;
};

/* The compiled set, in the program's .bss, written before it loads.
 * gate_ops is one program for all views: each view's gate, then
 * RB_OP_VIEW v, so that one loop evaluates every view. */
struct rb_config {
	__u32 nr_views;
	__u32 nr_gate_ops;
	__u64 no_starter;	/* bit i: leaf i is "..T", open from the start */
	__u64 leaf_used;	/* bit i: leaf i exists */
	struct rb_view views[RB_VIEWS_MAX];
	struct rb_op_code gate_ops[RB_GATE_OPS_MAX];
	struct rb_trigger triggers[RB_TRIGGERS_MAX];
	struct rb_op_code filter_ops[RB_FILTER_OPS_MAX];
	struct rb_pred preds[RB_PREDS_MAX];
	/* Syscall tracepoints go through the raw sys_enter / sys_exit
	 * programs, far cheaper than a program on each syscalls:* event:
	 * by syscall number, the index of the tracepoint's first trigger
	 * plus one (0: not a trigger). */
	__u8 syscall_enter[RB_SYSCALLS_MAX];
	__u8 syscall_exit[RB_SYSCALLS_MAX];
};

/* A task's state, in task-local storage. */
enum rb_task_flags {
	RB_TASK_TRACKED = 1,	/* counted: its stretches go to its open views */
	RB_TASK_AT_EXEC = 2,	/* becomes tracked when it execs (the workload) */
	RB_TASK_NEW = 4,	/* marked by the agent: tracked from its next event */
};

/* A range state: a thread's (--range-scope thread) or a CPU's (cpu). */
struct rb_state {
	__u64 open_leaves;	/* bit i: depth[i] > 0 */
	__u64 open_views;	/* bit v: view v's gate is open (bit RB_VIEW_TOTAL always) */
	__u32 depth[RB_LEAVES_MAX];	/* nesting depth of every leaf */
};

struct rb_task {
	__u32 flags;
	__u32 pad;
	struct rb_state state;	/* per-thread scope */
};

/* A CPU's stretch: the counters when it began (at the last switch-out or
 * cut on the CPU); it belongs to the task running there now. */
struct rb_cpu {
	__u64 mark[RB_EVENTS_MAX];
	__u32 busy;		/* a cut is under way: a flush waits */
	__u32 begun;		/* state is set (per-CPU scope) */
	struct rb_state state;	/* per-CPU scope */
};

/* What every view counted, per CPU (the agent adds the CPUs). */
struct rb_sums {
	__u64 count[RB_VIEWS_MAX + 1][RB_EVENTS_MAX];
};

/* Return codes of the flush program (run on one CPU by the agent). */
enum rb_flush_result {
	RB_FLUSH_DONE = 0,	/* nothing in flight, or flushed into the sums */
	RB_FLUSH_BUSY = 1,	/* a program was mid-way on that CPU: try again */
};

#endif
