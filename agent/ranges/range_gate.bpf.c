// SPDX-License-Identifier: GPL-2.0
/*
 * range_gate.bpf.c: ranges counted in the kernel (docs/design.md, "The BPF
 * backend").
 *
 * The counted events are per-CPU perf events, opened by the agent and put
 * in the `counters` array at event * nr_cpus + cpu; a program reads its own
 * CPU's with bpf_perf_event_read_value().  Every measured task has a state
 * in task-local storage: the depth of each leaf ("S..T") and the views
 * whose gate is open.  Each CPU has a stretch: the counters when it began.
 * A stretch belongs to the task running on the CPU; it ends, and its delta
 * goes to that task's open views in `sums`, when a trigger flips a view's
 * gate, when the task leaves the CPU, or when the agent asks for numbers
 * (the flush program, run on each CPU by BPF_PROG_TEST_RUN, which also
 * copies the CPU's sums into `snapshot`): so what the agent reads is exact
 * and whole, with nothing to drain or lose.
 *
 * The switch-out is seen where perf switches its per-task counters: a
 * per-CPU "context-switches" software event with a sample period of 1
 * runs on_switch_out in the outgoing task (prepare_task_switch).  Nothing
 * needs the switch-in: the next stretch on a CPU begins where the last
 * one ended, whoever comes in.  (Not the sched_switch tracepoint: on this
 * project's VMs a task can come back onto a CPU without it firing; perf's
 * own hook sees every switch.)
 *
 * One object serves any set: the gates, triggers and filters are tables
 * (range_bpf_abi.h) the agent writes into `cfg` before loading.
 *
 * Trigger programs return 1: a BPF program on a tracepoint that returns 0
 * silences every perf event on that tracepoint, system-wide.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "agent/ranges/range_bpf_abi.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * A syscall's number, and whether it is a 32-bit task's (its numbers are
 * not these): the kernel's syscalls:* events leave those out, and so do
 * these programs.  bpf_tracing.h has the arguments' registers for every
 * architecture, but not these two.
 */
#if defined(__TARGET_ARCH_x86)
#define USER32_CS 0x23
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#define SYSCALL_COMPAT(regs) (BPF_CORE_READ(regs, cs) == USER32_CS)
#ifndef PT_REGS_PARM6_CORE_SYSCALL	/* libbpf before 1.2 names five */
#define PT_REGS_PARM6_CORE_SYSCALL(regs) BPF_CORE_READ(regs, r9)
#endif
#else
#error "range_gate.bpf.c reads the syscall number and mode of x86 only"
#endif

/* Set by the agent before loading. */
const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_events = 0;
const volatile __u32 perf_mask = 0;	/* bit e: event e is a perf counter, opened */
const volatile bool all_tasks = false;	/* -a, -C: every task is measured */
const volatile bool cpu_scope = false;	/* range state per CPU, not per thread */
const volatile bool cpu_list = false;	/* -C: only the CPUs in cpu_mask */
const volatile __u64 cpu_mask[RB_CPUS_MAX / 64] = {};
const volatile bool has_filters = false;	/* some trigger has a filter */

struct rb_config cfg = {};

/* Counted: a hit or a stretch the programs could not account exactly (a
 * trigger inside another program's cut on the CPU, a counter that could
 * not be read, a string longer than a filter keeps); the agent flags the
 * views incomplete. */
__u64 races = 0;
/* Counted: task storage could not be had for a measured task. */
__u64 storage_failures = 0;


struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);		/* nr_events * nr_cpus, set by the agent */
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rb_task);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rb_sums);
} sums SEC(".maps");

/*
 * The sums as the last flush on each CPU left them, which is what the
 * agent reads.  A program on another CPU adds a hit to its views, then to
 * the total; a copy of the live sums taken in between would show a total
 * one above its views.  The flush copies its CPU's sums while it holds the
 * CPU (busy), so every snapshot is whole: the views add up to the total.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rb_sums);
} snapshot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rb_cpu);
} cpus SEC(".maps");

/* The agent's flush while it loads a set: tasks it marked begin after the
 * cut, so that their stretch starts at the load, not before it. */
bool flush_at_load = false;

#define barrier() asm volatile("" ::: "memory")

/*
 * The CPU's counters now.  bpf_perf_event_read(), not _read_value(): the
 * counters are never multiplexed (per-CPU, always on), so their enabled
 * and running times, which cost a clock read each, are not needed.  An
 * error comes back as a negative value; an event that fails reads 0.
 */
static __always_inline void read_counters(__u64 *now, const __u64 *mark)
{
	__u32 cpu = bpf_get_smp_processor_id();

	for (__u32 e = 0; e < RB_EVENTS_MAX; e++) {
		__u64 v;

		now[e] = mark[e];
		if (e >= nr_events)
			break;
		if (!(perf_mask & (1u << e)))
			continue;
		v = bpf_perf_event_read(&counters, e * nr_cpus + cpu);
		if ((__s64)v < 0 && (__s64)v > -4096) {
			/* Not readable (a pinned counter that lost its place):
			 * the stretch is lost, and said so. */
			__sync_fetch_and_add(&races, 1);
			continue;
		}
		now[e] = v;
	}
}

/*
 * Add the stretch from base to now to every view open in views.  Plain
 * adds: the sums are per CPU, and nothing else on the CPU adds while a
 * program does (switches run with interrupts off; a flush waits while a
 * cut is under way, see rb_cpu.busy).
 */
static __always_inline void add_stretch(const __u64 *base, const __u64 *now, __u64 views)
{
	__u32 zero = 0;
	struct rb_sums *s = bpf_map_lookup_elem(&sums, &zero);

	if (!s)
		return;
	for (__u32 v = 0; v < RB_VIEWS_MAX; v++) {
		__u32 events;

		if (v >= cfg.nr_views)
			break;
		if (!(views & (1ull << v)))
			continue;
		events = cfg.views[v].events & perf_mask;
		for (__u32 e = 0; e < RB_EVENTS_MAX; e++) {
			if (e >= nr_events)
				break;
			if (events & (1u << e))
				s->count[v][e] += now[e] - base[e];
		}
	}
	if (!(views & (1ull << RB_VIEW_TOTAL)))
		return;
	for (__u32 e = 0; e < RB_EVENTS_MAX; e++) {
		if (e >= nr_events)
			break;
		if (perf_mask & (1u << e))
			s->count[RB_VIEW_TOTAL][e] += now[e] - base[e];
	}
}

/* One hit of a tracepoint counted in BPF: events (bits) go up by one in
 * every view open in views that shows them. */
__noinline int rb_count_hit(__u32 events, __u64 views)
{
	__u32 zero = 0;
	struct rb_sums *s = bpf_map_lookup_elem(&sums, &zero);

	if (!s)
		return 0;
	for (__u32 v = 0; v < RB_VIEWS_MAX; v++) {
		__u32 shown;

		if (v >= cfg.nr_views)
			break;
		if (!(views & (1ull << v)))
			continue;
		shown = cfg.views[v].events & events;
		for (__u32 e = 0; e < RB_EVENTS_MAX; e++) {
			if (e >= nr_events)
				break;
			if (shown & (1u << e))
				s->count[v][e]++;
		}
	}
	if (!(views & (1ull << RB_VIEW_TOTAL)))
		return 0;
	for (__u32 e = 0; e < RB_EVENTS_MAX; e++) {
		if (e >= nr_events)
			break;
		if (events & (1u << e))
			s->count[RB_VIEW_TOTAL][e]++;
	}
	return 0;
}

/*
 * Which views' gates are open when the leaves in open_leaves are.  The
 * heavier walks are global functions (rb_*): the verifier checks each
 * once on its own, not again at every call and every loop around it.
 */
__noinline __u64 rb_views_open(__u64 open_leaves)
{
	__u64 views = 1ull << RB_VIEW_TOTAL, stack = 0;

	for (__u32 i = 0; i < RB_GATE_OPS_MAX; i++) {
		struct rb_op_code op;
		__u64 a, b;

		if (i >= cfg.nr_gate_ops)
			break;
		op = cfg.gate_ops[i];
		switch (op.op) {
		case RB_OP_PUSH:
			stack = stack << 1 | ((open_leaves >> (op.arg & 63)) & 1);
			break;
		case RB_OP_TRUE:
			stack = stack << 1 | 1;
			break;
		case RB_OP_NOT:
			stack ^= 1;
			break;
		case RB_OP_AND:
		case RB_OP_OR:
			a = stack & 1;
			b = (stack >> 1) & 1;
			stack = (stack >> 2) << 1 | (op.op == RB_OP_AND ? a & b : a | b);
			break;
		case RB_OP_VIEW:
			if (stack & 1)
				views |= 1ull << (op.arg & 63);
			stack >>= 1;
			break;
		}
	}
	return views;
}

/* A range state as it begins: "..T" leaves open, others closed. */
static __always_inline void state_begin(struct rb_state *rs)
{
	for (__u32 i = 0; i < RB_LEAVES_MAX; i++)
		rs->depth[i] = (cfg.no_starter >> i) & 1;
	rs->open_leaves = cfg.no_starter & cfg.leaf_used;
	rs->open_views = rb_views_open(rs->open_leaves);
}

/* A task the agent or a program marked is measured from now on. */
static __always_inline void task_begin(struct rb_task *st)
{
	state_begin(&st->state);
	st->flags = (st->flags & ~(RB_TASK_NEW | RB_TASK_AT_EXEC)) | RB_TASK_TRACKED;
}


/*
 * End the CPU's stretch now: its delta goes to views, the views open for
 * the task that ran it, and a new one begins.  A set that counts only
 * tracepoints (counted in BPF, hit by hit) has no stretches.
 */
static __always_inline struct rb_cpu *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpus, &zero);
}

__noinline int rb_cut(__u64 views)
{
	struct rb_cpu *c = this_cpu();
	__u64 now[RB_EVENTS_MAX];

	if (!c)
		return 0;
	read_counters(now, c->mark);
	if (views)
		add_stretch(c->mark, now, views);
	for (__u32 e = 0; e < RB_EVENTS_MAX; e++)
		c->mark[e] = now[e];
	return 0;
}

/* End the CPU's stretch now (a set of tracepoints only has none). */
static __always_inline void stretch_cut(__u64 views)
{
	if (perf_mask)
		rb_cut(views);
}

static __always_inline bool cpu_listed(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return !cpu_list || ((cpu_mask[(cpu / 64) % (RB_CPUS_MAX / 64)] >> (cpu % 64)) & 1);
}

/* The range state a hit changes: the thread's, or its CPU's. */
static __always_inline struct rb_state *state_of(struct rb_cpu *c, struct rb_task *st)
{
	if (!cpu_scope)
		return &st->state;
	if (!c->begun) {
		state_begin(&c->state);
		c->begun = 1;
	}
	return &c->state;
}

/*
 * The storage of task, the running task (or, for a fork, its parent, also
 * running); under -a every task gets one on first sight.  A task the
 * agent marked begins here: the CPU's stretch so far is cut first and
 * goes to nobody, so that its first stretch starts now.
 */
static __always_inline struct rb_task *task_state(struct task_struct *task)
{
	struct rb_task *st;

	st = bpf_task_storage_get(&tasks, task, 0, all_tasks ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!st) {
		if (all_tasks)
			__sync_fetch_and_add(&storage_failures, 1);
		return 0;
	}
	if (!(st->flags & RB_TASK_NEW) && !(all_tasks && !(st->flags & RB_TASK_TRACKED)))
		return st;
	stretch_cut(0);
	task_begin(st);
	return st;
}

/* The views the CPU's stretch goes to: those open for the running task. */
static __always_inline __u64 running_views(struct rb_cpu *c, struct rb_task *st)
{
	if (!st || !(st->flags & RB_TASK_TRACKED))
		return 0;
	return state_of(c, st)->open_views;
}

/*
 * Filters.  A predicate reads the trigger's record at the offsets of the
 * tracepoint's format; strings are copied into a per-CPU scratch slot.
 * rb_pred_match() is a global function, so that the verifier checks it
 * once on its own, not once for every op and every byte of every string.
 */
struct scratch {
	__u64 record;		/* the trigger's record (its address) */
	/* A syscall hit's record, as the syscalls:* event would have it:
	 * common_pid at 4, __syscall_nr at 8, the arguments (or ret) at 16. */
	__u64 syscall_record[8];
	__u64 stack;		/* the filter's RPN stack (in a map, so that the
				 * verifier does not follow every value of it) */
	__u32 first;		/* the trigger's first filter op */
	char buf[2 * RB_STR_MAX];	/* indexed with & BUF_MASK */
};

#define BUF_MASK (2 * RB_STR_MAX - 1)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* Does buf hold p's string at byte at? */
static __always_inline bool str_at(const char *buf, __u32 at, const struct rb_pred *p)
{
	for (__u32 i = 0; i < RB_STR_MAX; i++) {
		if (i >= p->str_len)
			break;
		if (buf[(at + i) & BUF_MASK] != p->str[i & (RB_STR_MAX - 1)])
			return false;
	}
	return true;
}

struct str_search {
	const char *buf;
	const struct rb_pred *p;
	bool found;
};

static long search_step(__u32 at, void *arg)
{
	struct str_search *s = arg;

	s->found = str_at(s->buf, at, s->p);
	return s->found;	/* 1 stops the loop */
}

/* A string field against p: "==" / "!=" and the forms of "~". */
static __always_inline bool str_match(const char *buf, __u32 len, const struct rb_pred *p)
{
	__u32 n = p->str_len;
	bool eq;

	switch (p->match) {
	case RB_MATCH_FULL:
		eq = len == n && str_at(buf, 0, p);
		break;
	case RB_MATCH_FRONT:
		eq = len >= n && str_at(buf, 0, p);
		break;
	case RB_MATCH_END:
		eq = len >= n && str_at(buf, len - n, p);
		break;
	default: {
		struct str_search s = { buf, p, false };

		if (len >= n)
			bpf_loop(len - n + 1, search_step, &s, 0);
		eq = s.found;
	}
	}
	return p->cmp == RB_CMP_NE ? !eq : eq;
}

static __always_inline bool number_match(__u64 raw, const struct rb_pred *p)
{
	__s64 sv;

	switch (p->size) {
	case 1: sv = (__s8)raw; raw &= 0xff; break;
	case 2: sv = (__s16)raw; raw &= 0xffff; break;
	case 4: sv = (__s32)raw; raw &= 0xffffffff; break;
	default: sv = (__s64)raw; break;
	}
	switch (p->cmp) {
	case RB_CMP_EQ: return raw == p->value;
	case RB_CMP_NE: return raw != p->value;
	case RB_CMP_BAND: return (raw & p->value) != 0;
	}
	if (p->is_signed) {
		__s64 pv = (__s64)p->value;

		switch (p->cmp) {
		case RB_CMP_LT: return sv < pv;
		case RB_CMP_LE: return sv <= pv;
		case RB_CMP_GT: return sv > pv;
		default: return sv >= pv;
		}
	}
	switch (p->cmp) {
	case RB_CMP_LT: return raw < p->value;
	case RB_CMP_LE: return raw <= p->value;
	case RB_CMP_GT: return raw > p->value;
	default: return raw >= p->value;
	}
}

/* Does the current trigger's record pass predicate pred? */
__noinline int rb_pred_match(__u32 pred)
{
	const struct rb_pred *p = &cfg.preds[pred & (RB_PREDS_MAX - 1)];
	__u32 zero = 0, loc = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	__u64 raw = 0;
	long len;

	if (!s)
		return 0;
	if (p->kind == RB_FIELD_CPU)
		return number_match(bpf_get_smp_processor_id(), p);
	if (p->kind == RB_FIELD_NUMBER) {
		if (bpf_probe_read_kernel(&raw, p->size & 15, (void *)(s->record + p->offset)))
			return 0;
		return number_match(raw, p);
	}
	/* A string: in place (char name[size]), at a __data_loc, or comm. */
	if (p->kind == RB_FIELD_COMM) {
		bpf_get_current_comm(s->buf, 16);
		s->buf[16] = 0;
		len = bpf_probe_read_kernel_str(s->buf, RB_STR_MAX + 1, s->buf);
	} else if (p->kind == RB_FIELD_DATA_LOC) {
		if (bpf_probe_read_kernel(&loc, sizeof(loc), (void *)(s->record + p->offset)))
			return 0;
		len = bpf_probe_read_kernel_str(s->buf, RB_STR_MAX + 1,
						(void *)(s->record + (loc & 0xffff)));
	} else {
		/* char name[size]: the string ends at its NUL or at size, as
		 * the kernel's filter reads it; never past the array. */
		__u32 size = p->size < RB_STR_MAX ? p->size : RB_STR_MAX;

		if (!size || bpf_probe_read_kernel(s->buf, size & (2 * RB_STR_MAX - 1),
						   (void *)(s->record + p->offset)))
			return 0;
		for (len = 0; len < RB_STR_MAX; len++)
			if (len >= size || !s->buf[len & BUF_MASK])
				break;
		len++;	/* as the _str helpers count: with the NUL */
	}
	if (len <= 0)
		return 0;
	if (len - 1 >= RB_STR_MAX && (p->match == RB_MATCH_END || p->match == RB_MATCH_MIDDLE)) {
		/* Longer than the bytes kept: where it ends is unknown. */
		__sync_fetch_and_add(&races, 1);
		return 0;
	}
	return str_match(s->buf, len - 1 < RB_STR_MAX ? (__u32)(len - 1) : RB_STR_MAX, p);
}

/* One filter op, through bpf_loop(). */
static long filter_step(__u32 i, void *arg)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct rb_op_code op;
	__u64 a, b, top;

	if (!s)
		return 1;
	op = cfg.filter_ops[(s->first + i) & (RB_FILTER_OPS_MAX - 1)];
	if (op.op == RB_OP_PUSH) {
		top = rb_pred_match(op.arg) != 0;
		s->stack = s->stack << 1 | top;
	} else if (op.op == RB_OP_NOT) {
		s->stack ^= 1;
	} else {
		a = s->stack & 1;
		b = (s->stack >> 1) & 1;
		s->stack = (s->stack >> 2) << 1 | (op.op == RB_OP_AND ? a & b : a | b);
	}
	return 0;
}

/* The trigger's filter on the record in scratch, evaluated as the
 * kernel's filter would be. */
static __always_inline bool filter_match(const struct rb_trigger *t)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s)
		return false;
	s->stack = 0;
	s->first = t->first_filter_op;
	bpf_loop(t->nr_filter_ops < RB_FILTER_OPS_MAX ? t->nr_filter_ops : RB_FILTER_OPS_MAX,
		 filter_step, 0, 0);
	return s->stack & 1;
}

/*
 * A hit of the tracepoint whose triggers start at cfg.triggers[first]
 * (its record in scratch): the depths of st change.  Returns the views
 * open now if they changed, else 0 (open views always include the total).
 */
__noinline __u64 rb_trigger_apply(__u32 first, struct rb_state *st)
{
	bool flipped = false;
	__u64 views;
	__u32 chain;

	if (!st)
		return 0;
	/* The caller checked first; the verifier needs the bound here too,
	 * and barrier_var keeps clang from folding the mask away. */
	barrier_var(first);
	first &= RB_TRIGGERS_MAX - 1;
	chain = cfg.triggers[first].nr_chain;
	for (__u32 k = 0; k < RB_CHAIN_MAX; k++) {
		const struct rb_trigger *t;

		if (k >= chain || first + k >= RB_TRIGGERS_MAX)
			break;
		t = &cfg.triggers[(first + k) & (RB_TRIGGERS_MAX - 1)];
		if (has_filters && t->nr_filter_ops && !filter_match(t))
			continue;
		for (__u32 i = 0; i < RB_TRIGGER_LEAVES; i++) {
			__u32 leaf;

			if (i >= t->nr_starts)
				break;
			leaf = t->starts[i] & (RB_LEAVES_MAX - 1);
			if (st->depth[leaf]++ == 0) {
				st->open_leaves |= 1ull << leaf;
				flipped = true;
			}
		}
		for (__u32 i = 0; i < RB_TRIGGER_LEAVES; i++) {
			__u32 leaf;

			if (i >= t->nr_stops)
				break;
			leaf = t->stops[i] & (RB_LEAVES_MAX - 1);
			if (st->depth[leaf] == 0)
				continue;
			if (--st->depth[leaf] == 0) {
				st->open_leaves &= ~(1ull << leaf);
				flipped = true;
			}
		}
	}
	if (!flipped)
		return 0;
	views = rb_views_open(st->open_leaves);
	return views != st->open_views ? views : 0;
}

/*
 * A hit of the tracepoint whose triggers start at cfg.triggers[first],
 * record: its record's address (for the filters).
 *
 * Programs can nest on a CPU: a trigger in interrupt context (irq, timer,
 * a wakeup) can fire inside a syscall trigger or inside the agent's flush
 * on its own CPU.  The CPU's busy flag makes the inner one a counted miss
 * (the views are flagged) instead of a cut inside a cut.
 */
static __always_inline void trigger_hit(__u64 first, __u64 record)
{
	struct rb_task *st;
	const struct rb_trigger *head;
	struct rb_state *rs;
	struct rb_cpu *c = this_cpu();
	__u64 views = 0, before;
	__u32 zero = 0;

	if (!c || !cpu_listed() || first >= RB_TRIGGERS_MAX)
		return;
	if (c->busy) {
		__sync_fetch_and_add(&races, 1);
		return;
	}
	c->busy = 1;
	barrier();
	st = task_state(bpf_get_current_task_btf());
	if (!st || !(st->flags & RB_TASK_TRACKED))
		goto out;
	if (has_filters) {
		struct scratch *scr = bpf_map_lookup_elem(&scratch, &zero);

		if (!scr)
			goto out;
		scr->record = record;
	}
	barrier_var(first);
	first &= RB_TRIGGERS_MAX - 1;	/* for the verifier: the check is above */
	head = &cfg.triggers[first];
	rs = state_of(c, st);
	before = rs->open_leaves;
	/* A tracepoint that is only counted (the hot case: the events in a
	 * range) changes no depth. */
	if (head->nr_starts || head->nr_stops || head->nr_chain > 1)
		views = rb_trigger_apply(first, rs);
	/* The hit is inside the ranges it starts and those it stops: it
	 * counts in the views open when every range open before it or
	 * after it is. */
	if (head->count_events)
		rb_count_hit(head->count_events,
			     views ? rb_views_open(before | rs->open_leaves) : rs->open_views);
	if (views) {
		stretch_cut(rs->open_views);	/* the stretch under the old gates */
		rs->open_views = views;
	}
out:
	barrier();
	c->busy = 0;
}

/* A trigger on a tracepoint of its own; the cookie is its first trigger. */
SEC("tracepoint")
int on_trigger(void *ctx)
{
	trigger_hit(bpf_get_attach_cookie(ctx), (__u64)ctx);
	return 1;
}

/* A syscall's record, for filters, where the syscalls:* event has it. */
static __always_inline __u64 syscall_record(long nr, const unsigned long *vals, int n)
{
	__u32 zero = 0;
	struct scratch *scr;

	if (!has_filters)
		return 0;
	scr = bpf_map_lookup_elem(&scratch, &zero);
	if (!scr)
		return 0;
	scr->syscall_record[0] = (bpf_get_current_pid_tgid() & 0xffffffff) << 32;
	scr->syscall_record[1] = (__u64)nr;
	for (int i = 0; i < 6; i++)
		scr->syscall_record[2 + i] = i < n ? vals[i] : 0;
	return (__u64)&scr->syscall_record;
}

/* Every syscall's entry: those that are triggers or counted go on. */
SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	unsigned long args[6] = {};
	__u8 first;

	if ((unsigned long)id >= RB_SYSCALLS_MAX)
		return 0;
	first = cfg.syscall_enter[id];
	if (!first || SYSCALL_COMPAT(regs))
		return 0;
	if (has_filters) {
		args[0] = PT_REGS_PARM1_CORE_SYSCALL(regs);
		args[1] = PT_REGS_PARM2_CORE_SYSCALL(regs);
		args[2] = PT_REGS_PARM3_CORE_SYSCALL(regs);
		args[3] = PT_REGS_PARM4_CORE_SYSCALL(regs);
		args[4] = PT_REGS_PARM5_CORE_SYSCALL(regs);
		args[5] = PT_REGS_PARM6_CORE_SYSCALL(regs);
	}
	trigger_hit(first - 1, syscall_record(id, args, has_filters ? 6 : 0));
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	unsigned long id = SYSCALL_NR(regs), vals[1] = { (unsigned long)ret };
	__u8 first;

	if (id >= RB_SYSCALLS_MAX)
		return 0;
	first = cfg.syscall_exit[id];
	if (!first || SYSCALL_COMPAT(regs))
		return 0;
	trigger_hit(first - 1, syscall_record((long)id, vals, 1));
	return 0;
}

/* The running task leaves its CPU: its stretch ends (perf's context-switch
 * hook, in the outgoing task; see the top of the file). */
SEC("perf_event")
int on_switch_out(void *ctx)
{
	struct rb_task *st = task_state(bpf_get_current_task_btf());
	struct rb_cpu *c = this_cpu();

	if (!c)
		return 0;
	if (c->busy)
		__sync_fetch_and_add(&races, 1);
	stretch_cut(running_views(c, st));
	return 0;	/* no sample */
}

/* A measured task's new thread or child is measured, from its own start. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	struct rb_task *p, *c;

	if (all_tasks)
		return 0;
	p = task_state(parent);		/* a parent the agent marked is measured now */
	if (!p || !(p->flags & RB_TASK_TRACKED))
		return 0;
	c = bpf_task_storage_get(&tasks, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c) {
		__sync_fetch_and_add(&storage_failures, 1);
		return 0;
	}
	task_begin(c);
	return 0;
}

/* The workload is measured from its exec, as perf's enable_on_exec. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	struct rb_task *st = bpf_task_storage_get(&tasks, p, 0, 0);
	struct rb_cpu *c;

	if (!st || !(st->flags & RB_TASK_AT_EXEC))
		return 0;
	c = this_cpu();
	if (!c)
		return 0;
	c->busy = 1;
	barrier();
	stretch_cut(0);	/* what ran before the exec is not counted */
	task_begin(st);
	barrier();
	c->busy = 0;
	return 0;
}

/* This CPU's sums into its snapshot: called with the CPU held (busy). */
static __always_inline void take_snapshot(void)
{
	__u32 zero = 0;
	struct rb_sums *live = bpf_map_lookup_elem(&sums, &zero);
	struct rb_sums *copy = bpf_map_lookup_elem(&snapshot, &zero);

	if (live && copy)
		bpf_probe_read_kernel(copy, sizeof(*copy), live);
}

/*
 * Run by the agent on one CPU (BPF_PROG_TEST_RUN, BPF_F_TEST_RUN_ON_CPU) in
 * an interrupt: the task running there closes its stretch into the sums and
 * starts a new one, so the sums are whole when the agent reads them.  A
 * task the agent just began to measure starts its first stretch here.
 */
SEC("raw_tp")
int flush(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rb_task *st;
	struct rb_cpu *c = this_cpu();

	if (!c)
		return RB_FLUSH_DONE;
	if (c->busy)
		return RB_FLUSH_BUSY;
	c->busy = 1;	/* an interrupt's trigger during the flush is a miss */
	barrier();
	if (flush_at_load) {
		/* Up to now the task was not measured; from now on it is. */
		st = bpf_task_storage_get(&tasks, task, 0,
					  all_tasks ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
		stretch_cut(running_views(c, st));
		if (st && ((st->flags & RB_TASK_NEW) ||
			   (all_tasks && !(st->flags & RB_TASK_TRACKED))))
			task_begin(st);
	} else {
		stretch_cut(running_views(c, task_state(task)));
	}
	take_snapshot();
	barrier();
	c->busy = 0;
	return RB_FLUSH_DONE;
}
