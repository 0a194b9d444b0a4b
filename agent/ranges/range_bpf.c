/*
 * range_bpf: a range set counted by range_gate.bpf.c.
 *
 * Opening a set: compile its gates and filters into the program's tables
 * (struct rb_config), open one per-CPU counter per counted event (shared
 * by every view of the set), load the programs, attach a trigger program
 * per (tracepoint, filter) with its index as the BPF cookie, then mark the
 * tasks to measure: the workload at its exec, or the threads that exist
 * (walked until no new one appears; later ones are marked by the fork
 * program).  Reading: a flush program runs on every CPU and copies that
 * CPU's sums whole (the snapshot map), then the snapshots are added up.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <event-parse.h>
#include <perf/cpumap.h>
#include <tracefs.h>

#include "agent/log.h"
#include "agent/target.h"
#include "agent/ranges/range_bpf.h"
#include "agent/ranges/range_bpf_abi.h"
#include "agent/ranges/range_gate.skel.h"
#include "agent/ranges/range_set.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

struct range_bpf {
	struct range_gate_bpf *skel;
	struct bpf_link **links;
	size_t nr_links;
	int *fds;			/* [event * nr_cpus + cpu], -1 where not open */
	int nr_cpus;			/* possible CPUs: the per-CPU tables' size */
	struct perf_cpu_map *online;
	size_t nr_events;
	int *event_of_member;		/* set member -> counted event, or -1 */
	size_t *first_of;		/* set member -> its tracepoint's first trigger */
	uint32_t supported;		/* bit e: event e can be counted */
	uint32_t perf_mask;		/* bit e: event e is a per-CPU perf counter */
	uint64_t *values;		/* [view][event], summed over CPUs */
	struct rb_sums *percpu;		/* read buffer */
	struct timespec opened;
	uint64_t flush_busy;		/* flushes that found a program mid-way */
	bool unloaded;			/* values and misses frozen */
	struct timespec ended;		/* when they were */
	uint64_t missed_at_unload;
};

/* ---- compiling a set into the program's tables --------------------------- */

/* This architecture's syscall numbers, from <asm/unistd.h> at build time. */
static const struct syscall_entry {
	const char *name;
	int nr;
} syscall_table[] = {
#include "agent/ranges/syscall_table.h"
};

/*
 * The syscall number behind a "syscalls:sys_enter_NAME" or
 * "syscalls:sys_exit_NAME" event, or -1 (another tracepoint, or a syscall
 * this build's table does not know: it keeps a program of its own).
 */
static int syscall_of(const char *event, bool *is_exit)
{
	const char *name;

	if (strncmp(event, "syscalls:sys_enter_", 19) == 0) {
		name = event + 19;
		*is_exit = false;
	} else if (strncmp(event, "syscalls:sys_exit_", 18) == 0) {
		name = event + 18;
		*is_exit = true;
	} else {
		return -1;
	}
	for (size_t i = 0; i < sizeof(syscall_table) / sizeof(syscall_table[0]); i++)
		if (strcmp(syscall_table[i].name, name) == 0)
			return syscall_table[i].nr < RB_SYSCALLS_MAX ? syscall_table[i].nr : -1;
	return -1;
}

struct compiler {
	struct rb_config *cfg;
	__u32 nr_preds;
	char *why;
	size_t cap;
};

static int refuse(struct compiler *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->cap, fmt, ap);
	va_end(ap);
	return -1;
}

static int emit(struct compiler *c, struct rb_op_code *ops, __u32 *nr, size_t max,
		enum rb_op op, unsigned arg)
{
	if (*nr >= max)
		return refuse(c, "a gate or filter longer than %zu operations", max);
	ops[(*nr)++] = (struct rb_op_code){ .op = (__u8)op, .arg = (__u8)arg };
	return 0;
}

static int emit_gate(struct compiler *c, const struct range_gate *g, unsigned base)
{
	struct rb_config *cfg = c->cfg;
	enum rb_op op = g->kind == RANGE_GATE_AND ? RB_OP_AND : RB_OP_OR;

	switch (g->kind) {
	case RANGE_GATE_RANGE:
		return emit(c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, RB_OP_PUSH,
			    base + (unsigned)g->index);
	case RANGE_GATE_NOT:
		if (emit_gate(c, g->children[0], base))
			return -1;
		return emit(c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, RB_OP_NOT, 0);
	default:
		for (size_t i = 0; i < g->nchildren; i++) {
			if (emit_gate(c, g->children[i], base))
				return -1;
			if (i && emit(c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, op, 0))
				return -1;
		}
		return 0;
	}
}

/* Where a trigger's predicates read: the tracepoint's format. */
struct format {
	struct tep_handle *tep;
	struct tep_event *event;
	char *text;
};

static int format_load(struct format *f, const char *subsys, const char *name)
{
	int size = 0;

	f->tep = tep_alloc();
	f->text = tracefs_event_file_read(NULL, subsys, name, "format", &size);
	if (!f->tep || !f->text || size <= 0 ||
	    tep_parse_format(f->tep, &f->event, f->text, (unsigned long)size, subsys) != 0)
		return -1;
	return 0;
}

static void format_free(struct format *f)
{
	free(f->text);
	if (f->tep)
		tep_free(f->tep);
}

/* The kernel's forms of "~": abc, abc*, *abc, *abc*; anything else is a
 * full glob, which the programs do not evaluate. */
static int string_match(struct compiler *c, const char *value, enum filter_op op,
			struct rb_pred *p)
{
	size_t len = strlen(value);
	const char *s = value;

	p->match = RB_MATCH_FULL;
	if (op == FILTER_OP_GLOB) {
		bool front = len && value[len - 1] == '*', back = len && value[0] == '*';

		if (back) {
			s++;
			len--;
		}
		if (front && len) {
			len--;
		}
		if (memchr(s, '*', len) || memchr(s, '?', len) || memchr(s, '[', len) ||
		    memchr(s, '\\', len))
			return refuse(c, "the glob '%s' (only abc, abc*, *abc and *abc* are "
				      "evaluated in BPF)", value);
		p->match = front && back ? RB_MATCH_MIDDLE : front ? RB_MATCH_FRONT :
			   back ? RB_MATCH_END : RB_MATCH_FULL;
	}
	if (len >= RB_STR_MAX)
		return refuse(c, "a string of %zu bytes in a filter (at most %d)", len,
			      RB_STR_MAX - 1);
	memcpy(p->str, s, len);
	p->str_len = (__u8)len;
	p->cmp = op == FILTER_OP_NE ? RB_CMP_NE : RB_CMP_EQ;
	return 0;
}

static int compile_pred(struct compiler *c, const struct format *f,
			const struct filter_pred *fp, struct rb_pred *p)
{
	static const enum rb_cmp cmp_of[] = {
		[FILTER_OP_EQ] = RB_CMP_EQ, [FILTER_OP_NE] = RB_CMP_NE,
		[FILTER_OP_LT] = RB_CMP_LT, [FILTER_OP_LE] = RB_CMP_LE,
		[FILTER_OP_GT] = RB_CMP_GT, [FILTER_OP_GE] = RB_CMP_GE,
		[FILTER_OP_BAND] = RB_CMP_BAND,
	};
	struct tep_format_field *field = tep_find_any_field(f->event, fp->field);
	bool string;

	if (fp->suffix != FILTER_SUFFIX_NONE || fp->value_kind == FILTER_VALUE_CPUS)
		return refuse(c, "the filter on '%s' (.function, .ustring and CPUS{} are "
			      "evaluated by the kernel's filter only)", fp->field);
	if (!field && !strcasecmp(fp->field, "comm")) {
		p->kind = RB_FIELD_COMM;
		return string_match(c, fp->value, fp->op, p);
	}
	if (!field && (!strcasecmp(fp->field, "cpu") || !strcmp(fp->field, "common_cpu"))) {
		p->kind = RB_FIELD_CPU;
		p->size = 4;
	} else if (!field) {
		return refuse(c, "field '%s' not found", fp->field);
	} else {
		string = (field->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) ||
			 ((field->flags & TEP_FIELD_IS_ARRAY) && strstr(field->type, "char"));
		p->offset = (__u16)field->offset;
		if (string) {
			p->kind = field->flags & TEP_FIELD_IS_DYNAMIC ? RB_FIELD_DATA_LOC :
				  RB_FIELD_ARRAY;
			p->size = (__u8)(field->size < RB_STR_MAX ? field->size : RB_STR_MAX);
			return string_match(c, fp->value, fp->op, p);
		}
		if (field->size != 1 && field->size != 2 && field->size != 4 && field->size != 8)
			return refuse(c, "field '%s' of %d bytes", fp->field, field->size);
		p->kind = RB_FIELD_NUMBER;
		p->size = (__u8)field->size;
		p->is_signed = (field->flags & TEP_FIELD_IS_SIGNED) != 0;
	}
	if (fp->value_kind != FILTER_VALUE_NUMBER)
		return refuse(c, "a non-numeric value for '%s'", fp->field);
	p->cmp = (__u8)cmp_of[fp->op];
	p->value = fp->number;
	return 0;
}

static int emit_filter(struct compiler *c, const struct format *f, const struct filter_node *n,
		       __u32 *nr_ops)
{
	struct rb_config *cfg = c->cfg;

	switch (n->kind) {
	case FILTER_PRED:
		if (c->nr_preds >= RB_PREDS_MAX)
			return refuse(c, "more than %d filter predicates", RB_PREDS_MAX);
		if (compile_pred(c, f, &n->pred, &cfg->preds[c->nr_preds]))
			return -1;
		c->nr_preds++;
		return emit(c, cfg->filter_ops, nr_ops, RB_FILTER_OPS_MAX, RB_OP_PUSH,
			    c->nr_preds - 1);
	case FILTER_NOT:
		if (emit_filter(c, f, n->children[0], nr_ops))
			return -1;
		return emit(c, cfg->filter_ops, nr_ops, RB_FILTER_OPS_MAX, RB_OP_NOT, 0);
	case FILTER_AND:
	case FILTER_OR:
		for (size_t i = 0; i < n->nchildren; i++) {
			if (emit_filter(c, f, n->children[i], nr_ops))
				return -1;
			if (i && emit(c, cfg->filter_ops, nr_ops, RB_FILTER_OPS_MAX,
				      n->kind == FILTER_AND ? RB_OP_AND : RB_OP_OR, 0))
				return -1;
		}
		return 0;
	}
	return 0;
}

/* A counted tracepoint is counted in BPF, hit by hit; any other counted
 * event by a per-CPU perf counter. */
static bool counted_in_bpf(const struct range_set *rs, size_t m)
{
	return rs->members[m].counted && rs->defs[m - 1].is_tracepoint;
}

static int leaf_list(struct compiler *c, uint64_t mask, __u8 *list, __u8 *nr)
{
	for (unsigned i = 0; i < RB_LEAVES_MAX; i++) {
		if (!(mask & (1ull << i)))
			continue;
		if (*nr >= RB_TRIGGER_LEAVES)
			return refuse(c, "a trigger that starts or stops more than %d ranges",
				      RB_TRIGGER_LEAVES);
		list[(*nr)++] = (__u8)i;
	}
	return 0;
}

static bool same_trigger_tracepoint(const struct range_set *rs, size_t a, size_t b)
{
	return rs->defs[a - 1].attr.type == rs->defs[b - 1].attr.type &&
	       rs->defs[a - 1].attr.config == rs->defs[b - 1].attr.config;
}

static bool is_trigger(const struct range_set *rs, size_t m)
{
	return rs->members[m].starts || rs->members[m].stops;
}

/* Does a program go on member m's tracepoint? */
static bool needs_program(const struct range_set *rs, size_t m)
{
	return is_trigger(rs, m) || counted_in_bpf(rs, m);
}

static int compile_trigger(struct compiler *c, const struct range_set *rs, size_t m,
			   struct rb_trigger *t, __u32 *nr_ops)
{
	const struct range_member *mem = &rs->members[m];
	const struct range_trigger *trig = rs->trigger_of[m - 1];
	struct format f = { 0 };
	int rc;

	if (leaf_list(c, mem->starts, t->starts, &t->nr_starts) ||
	    leaf_list(c, mem->stops, t->stops, &t->nr_stops))
		return -1;
	if (!trig || !trig->filter)
		return 0;
	if (format_load(&f, trig->subsys, trig->name)) {
		format_free(&f);
		return refuse(c, "cannot read the format of %s", trig->tracepoint);
	}
	t->first_filter_op = (__u16)*nr_ops;
	rc = emit_filter(c, &f, trig->filter, nr_ops);
	format_free(&f);
	t->nr_filter_ops = (__u16)(*nr_ops - t->first_filter_op);
	return rc;
}

/* A syscall tracepoint's hits come from the raw syscall programs. */
static void route_syscall(struct rb_config *cfg, const char *event, size_t first)
{
	bool is_exit;
	int nr = syscall_of(event, &is_exit);

	if (nr < 0 || first + 1 > 255)
		return;
	if (is_exit)
		cfg->syscall_exit[nr] = (__u8)(first + 1);
	else
		cfg->syscall_enter[nr] = (__u8)(first + 1);
}

/* Does a syscall program carry the hits of the tracepoint whose first
 * trigger is first (so that it needs no program of its own)? */
static bool routed(const struct rb_config *cfg, const char *event, size_t first)
{
	bool is_exit;
	int nr = syscall_of(event, &is_exit);

	if (nr < 0)
		return false;
	return (is_exit ? cfg->syscall_exit[nr] : cfg->syscall_enter[nr]) == first + 1;
}

static bool any_routed(const __u8 *table)
{
	for (size_t i = 0; i < RB_SYSCALLS_MAX; i++)
		if (table[i])
			return true;
	return false;
}

/*
 * The set's triggers, a tracepoint's together (its filters in member
 * order), the first of each carrying the events counted at its hits;
 * first_of[m] is the index of member m's tracepoint's first trigger.
 */
static int compile_triggers(struct compiler *c, const struct range_set *rs,
			    const int *event_of_member, size_t *first_of)
{
	struct rb_config *cfg = c->cfg;
	__u32 nr_ops = 0;
	size_t n = 0;

	for (size_t head = 1; head <= rs->nr_events; head++) {
		size_t first = n;

		if (!needs_program(rs, head) || first_of[head] != SIZE_MAX)
			continue;
		for (size_t m = head; m <= rs->nr_events; m++) {
			if (!needs_program(rs, m) || !same_trigger_tracepoint(rs, head, m))
				continue;
			first_of[m] = first;
			if (counted_in_bpf(rs, m))
				cfg->triggers[first].count_events |= 1u << event_of_member[m];
			if (!is_trigger(rs, m) && n > first)
				continue;	/* counted only: the head carries it */
			if (n >= RB_TRIGGERS_MAX)
				return refuse(c, "more than %d triggers", RB_TRIGGERS_MAX);
			if (n - first >= RB_CHAIN_MAX)
				return refuse(c, "more than %d filters on %s", RB_CHAIN_MAX,
					      rs->defs[m - 1].name);
			if (compile_trigger(c, rs, m, &cfg->triggers[n++], &nr_ops))
				return -1;
		}
		cfg->triggers[first].nr_chain = (__u8)(n - first);
		route_syscall(cfg, rs->defs[head - 1].name, first);
	}
	return 0;
}

/* Number the counted members 0..n-1 (event_of_member[m], -1 if none). */
static size_t number_events(const struct range_set *rs, int *event_of_member)
{
	size_t n = 0;

	for (size_t m = 0; m <= rs->nr_events; m++)
		event_of_member[m] = m && rs->members[m].counted ? (int)n++ : -1;
	return n;
}

static int compile(const struct range_set *rs, struct rb_config *cfg, int *event_of_member,
		   size_t *first_of, size_t *nr_events, char *why, size_t cap)
{
	struct compiler c = { cfg, 0, why, cap };

	for (size_t m = 0; m <= rs->nr_events; m++)
		first_of[m] = SIZE_MAX;

	memset(cfg, 0, sizeof(*cfg));
	*nr_events = number_events(rs, event_of_member);
	if (*nr_events > RB_EVENTS_MAX)
		return refuse(&c, "%zu counted events in one set (at most %d)", *nr_events,
			      RB_EVENTS_MAX);
	if (rs->nr_specs > RB_VIEWS_MAX)
		return refuse(&c, "%zu range specs in one set (at most %d)", rs->nr_specs,
			      RB_VIEWS_MAX);
	for (size_t i = 0; i < rs->nr_leaves; i++) {
		cfg->leaf_used |= 1ull << i;
		if (!rs->leaves[i].has_starter)
			cfg->no_starter |= 1ull << i;
	}
	cfg->nr_views = (__u32)rs->nr_specs;
	for (size_t s = 0; s < rs->nr_specs; s++) {
		const struct range_view_def *v = &rs->views[s];

		for (size_t e = 0; e < rs->specs[s]->nevents; e++)
			cfg->views[s].events |= 1u << event_of_member[rs->shown[s][e]];
		if (v->gate ? emit_gate(&c, v->gate, v->leaf_base) :
			      emit(&c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, RB_OP_TRUE, 0))
			return -1;
		if (emit(&c, cfg->gate_ops, &cfg->nr_gate_ops, RB_GATE_OPS_MAX, RB_OP_VIEW,
			 (unsigned)s))
			return -1;
	}
	return compile_triggers(&c, rs, event_of_member, first_of);
}

/* ---- opening --------------------------------------------------------------- */

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	/* The agent explains failures itself; libbpf's own log (the
	 * verifier's, say) is for whoever debugs the programs. */
	if (getenv("PERFGATE_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* What to change when the kernel refuses BPF (err: a positive errno). */
static void explain_refusal(int err, const char *what, char *why, size_t cap)
{
	char lockdown[128] = "";
	FILE *f = fopen("/sys/kernel/security/lockdown", "re");

	if (f) {
		if (!fgets(lockdown, sizeof(lockdown), f))
			lockdown[0] = 0;
		fclose(f);
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		snprintf(why, cap, "%s: this kernel has no BTF (/sys/kernel/btf/vmlinux); "
			 "ranges in BPF need CONFIG_DEBUG_INFO_BTF=y", what);
	else if (strstr(lockdown, "[confidentiality]") || strstr(lockdown, "[integrity]"))
		snprintf(why, cap, "%s: %s (kernel lockdown is on: %.*s)", what, strerror(err),
			 (int)strcspn(lockdown, "\n"), lockdown);
	else if (err == EPERM || err == EACCES)
		snprintf(why, cap, "%s: %s (ranges in BPF need root, or CAP_BPF and "
			 "CAP_PERFMON; see also kernel.unprivileged_bpf_disabled)",
			 what, strerror(err));
	else
		snprintf(why, cap, "%s: %s", what, strerror(err));
}

static int open_counters(struct range_bpf *b, const struct range_set *rs, char *why, size_t cap)
{
	int nr_online = perf_cpu_map__nr(b->online);

	b->fds = malloc(b->nr_events * (size_t)b->nr_cpus * sizeof(int));
	for (size_t i = 0; i < b->nr_events * (size_t)b->nr_cpus; i++)
		b->fds[i] = -1;
	for (size_t m = 1; m <= rs->nr_events; m++) {
		int e = b->event_of_member[m];
		bool all = true;

		if (e < 0)
			continue;
		if (counted_in_bpf(rs, m)) {
			b->supported |= 1u << e;	/* counted by the programs */
			continue;
		}
		for (int i = 0; i < nr_online; i++) {
			int cpu = perf_cpu_map__cpu(b->online, i).cpu;
			struct perf_event_attr attr = rs->defs[m - 1].attr;
			int fd;

			attr.size = sizeof(attr);
			attr.disabled = 0;
			attr.inherit = 0;
			attr.read_format = 0;
			/* Never multiplexed: a rotated counter reads stale
			 * values; a pinned one that cannot be scheduled fails
			 * its reads instead, which the programs count. */
			attr.pinned = 1;
			fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				if (errno == EACCES || errno == EPERM) {
					snprintf(why, cap, "cannot count '%s' on every CPU: %s (lower "
						 "kernel.perf_event_paranoid or grant CAP_PERFMON)",
						 rs->defs[m - 1].name, strerror(errno));
					return -1;
				}
				all = false;	/* the machine lacks it: <not supported> */
				break;
			}
			b->fds[(size_t)e * (size_t)b->nr_cpus + (size_t)cpu] = fd;
		}
		if (all) {
			b->supported |= 1u << e;
			b->perf_mask |= 1u << e;
		}
	}
	return 0;
}

static int attach(struct range_bpf *b, struct bpf_link *link, const char *what, char *why,
		  size_t cap)
{
	if (!link) {
		explain_refusal(errno, what, why, cap);
		return -1;
	}
	b->links = realloc(b->links, (b->nr_links + 1) * sizeof(*b->links));
	b->links[b->nr_links++] = link;
	return 0;
}

/*
 * on_switch_out runs at every context switch of every online CPU, from a
 * per-CPU "context-switches" software event with a period of 1: perf's
 * own switch hook, which sees every switch its per-task counters see.
 */
static int attach_switches(struct range_bpf *b, char *why, size_t cap)
{
	if (!b->perf_mask)
		return 0;	/* only tracepoints, counted hit by hit: no stretches */
	for (int i = 0; i < perf_cpu_map__nr(b->online); i++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
			.config = PERF_COUNT_SW_CONTEXT_SWITCHES, .sample_period = 1,
		};
		int cpu = perf_cpu_map__cpu(b->online, i).cpu;
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
				      PERF_FLAG_FD_CLOEXEC);
		struct bpf_link *link;

		if (fd < 0) {
			explain_refusal(errno, "cannot watch context switches", why, cap);
			return -1;
		}
		link = bpf_program__attach_perf_event(b->skel->progs.on_switch_out, fd);
		if (!link)
			close(fd);
		if (attach(b, link, "cannot attach to context switches", why, cap))
			return -1;
	}
	return 0;
}

static int attach_all(struct range_bpf *b, const struct range_set *rs, char *why, size_t cap)
{
	struct range_gate_bpf *skel = b->skel;
	char what[300];

	const struct rb_config *cfg = &skel->bss->cfg;

	if (attach_switches(b, why, cap) ||
	    attach(b, bpf_program__attach(skel->progs.on_fork),
		   "cannot attach to sched_process_fork", why, cap) ||
	    attach(b, bpf_program__attach(skel->progs.on_exec),
		   "cannot attach to sched_process_exec", why, cap))
		return -1;
	if (any_routed(cfg->syscall_enter) &&
	    attach(b, bpf_program__attach(skel->progs.on_sys_enter),
		   "cannot attach to raw_syscalls:sys_enter", why, cap))
		return -1;
	if (any_routed(cfg->syscall_exit) &&
	    attach(b, bpf_program__attach(skel->progs.on_sys_exit),
		   "cannot attach to raw_syscalls:sys_exit", why, cap))
		return -1;
	for (size_t m = 1; m <= rs->nr_events; m++) {
		LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = b->first_of[m]);
		char subsys[64] = "", name[256] = "";
		bool first = true;

		if (b->first_of[m] == SIZE_MAX)
			continue;
		for (size_t k = 1; k < m; k++)
			first &= b->first_of[k] != b->first_of[m];
		if (!first || routed(cfg, rs->defs[m - 1].name, b->first_of[m]))
			continue;	/* attached already, or a syscall program's */
		/* A resolved tracepoint's name is "subsys:name", as written. */
		sscanf(rs->defs[m - 1].name, "%63[^:]:%255[^:]", subsys, name);
		snprintf(what, sizeof(what), "cannot attach to %s", rs->defs[m - 1].name);
		if (attach(b, bpf_program__attach_tracepoint_opts(skel->progs.on_trigger,
								  subsys, name, &opts),
			   what, why, cap))
			return -1;
	}
	return 0;
}

/* Measure task tid (flags: RB_TASK_AT_EXEC or RB_TASK_NEW).
 * 1 when marked now, 0 when it already was (or is gone). */
static int mark_task(struct range_bpf *b, pid_t tid, __u32 flags)
{
	struct rb_task st = { .flags = flags };
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD), rc;

	if (fd < 0)
		return 0;	/* gone meanwhile */
	rc = bpf_map_update_elem(bpf_map__fd(b->skel->maps.tasks), &fd, &st, BPF_NOEXIST);
	close(fd);
	return rc == 0;
}

/*
 * The target's threads, marked.  A thread made by a marked thread is
 * marked by the fork program; one made meanwhile by a thread not marked
 * yet is found by walking the tree again, as long as a walk still marks
 * some thread (at most 16 walks, so a tree that never stops forking
 * cannot hold the agent).
 */
static void mark_threads(struct range_bpf *b, const struct range_set_target *target)
{
	int marked = 0;

	for (size_t i = 0; i < target->nr_roots; i++)
		marked += mark_task(b, target->roots[i], RB_TASK_NEW);
	for (int walk = 0; target->trees && marked && walk < 16; walk++) {
		struct tid_list now = { 0 };

		for (size_t i = 0; i < target->nr_tree_roots; i++)
			target_process_tree(&now, target->tree_roots[i]);
		marked = 0;
		for (size_t i = 0; i < now.nr; i++)
			marked += mark_task(b, now.tids[i], RB_TASK_NEW);
		free(now.tids);
	}
}

/* Is a CPU of the -C list offline?  (Its counters cannot be opened.) */
static bool cpus_offline(struct perf_cpu_map *list, char *why, size_t cap)
{
	struct perf_cpu_map *online = perf_cpu_map__new_online_cpus();
	bool off = false;

	for (int i = 0; !off && online && i < perf_cpu_map__nr(list); i++) {
		struct perf_cpu cpu = perf_cpu_map__cpu(list, i);

		if (!perf_cpu_map__has(online, cpu)) {
			snprintf(why, cap, "CPU %d of the -C list is not online", cpu.cpu);
			off = true;
		}
	}
	perf_cpu_map__put(online);
	return off;
}

/* Does a member's tracepoint need a program of its own (not routed
 * through the raw syscall programs)? */
static bool needs_tracepoint_program(const struct range_bpf *b, const struct range_set *rs,
				     const struct rb_config *cfg)
{
	for (size_t m = 1; m <= rs->nr_events; m++)
		if (b->first_of[m] != SIZE_MAX && !routed(cfg, rs->defs[m - 1].name, b->first_of[m]))
			return true;
	return false;
}

/* The verifier's time is most of a set's start-up (bench/ranges.md):
 * programs the set does not use are not loaded. */
static void load_only_what_is_used(struct range_bpf *b, const struct range_set *rs,
				   const struct rb_config *cfg)
{
	struct range_gate_bpf *skel = b->skel;

	bpf_program__set_autoload(skel->progs.on_trigger, needs_tracepoint_program(b, rs, cfg));
	bpf_program__set_autoload(skel->progs.on_sys_enter, any_routed(cfg->syscall_enter));
	bpf_program__set_autoload(skel->progs.on_sys_exit, any_routed(cfg->syscall_exit));
	bpf_program__set_autoload(skel->progs.on_switch_out, b->perf_mask != 0);
}

struct range_bpf *range_bpf_open(const struct range_set *rs,
				 const struct range_set_target *target, bool *unfit,
				 char *why, size_t cap)
{
	struct range_bpf *b = calloc(1, sizeof(*b));
	struct rb_config *cfg = calloc(1, sizeof(*cfg));
	int err;

	if (!b || !cfg) {
		snprintf(why, cap, "out of memory");
		free(b);
		free(cfg);
		return NULL;
	}
	libbpf_set_print(libbpf_quiet);
	clock_gettime(CLOCK_MONOTONIC, &b->opened);
	b->nr_cpus = libbpf_num_possible_cpus();
	/* -C: counters, switch events and flushes on the listed CPUs only. */
	b->online = target->cpu_list ? perf_cpu_map__new(target->cpu_list) :
				       perf_cpu_map__new_online_cpus();
	b->event_of_member = calloc(rs->nr_events + 1, sizeof(int));
	b->first_of = calloc(rs->nr_events + 1, sizeof(size_t));
	if (!b->event_of_member || !b->first_of) {
		snprintf(why, cap, "out of memory");
		goto fail;
	}
	if (target->cpu_list && b->online && cpus_offline(b->online, why, cap))
		goto fail;
	if (b->nr_cpus <= 0 || b->nr_cpus > RB_CPUS_MAX || !b->online ||
	    perf_cpu_map__max(b->online).cpu >= b->nr_cpus) {
		snprintf(why, cap, "cannot tell this machine's CPUs%s%s", target->cpu_list ? " in " : "",
			 target->cpu_list ? target->cpu_list : "");
		goto fail;
	}
	*unfit = false;
	if (compile(rs, cfg, b->event_of_member, b->first_of, &b->nr_events, why, cap)) {
		*unfit = true;
		goto fail;
	}
	if (open_counters(b, rs, why, cap))
		goto fail;
	b->skel = range_gate_bpf__open();
	if (!b->skel) {
		explain_refusal(errno, "cannot open the range programs", why, cap);
		goto fail;
	}
	b->skel->rodata->nr_cpus = (__u32)b->nr_cpus;
	b->skel->rodata->nr_events = (__u32)b->nr_events;
	b->skel->rodata->perf_mask = b->perf_mask;
	b->skel->rodata->all_tasks = target->cpu_wide;
	b->skel->rodata->cpu_scope = range_set_per_cpu(rs);
	for (size_t i = 0; i < RB_TRIGGERS_MAX; i++)
		b->skel->rodata->has_filters |= cfg->triggers[i].nr_filter_ops > 0;
	b->skel->rodata->cpu_list = target->cpu_list != NULL;
	for (int i = 0; i < perf_cpu_map__nr(b->online); i++) {
		int cpu = perf_cpu_map__cpu(b->online, i).cpu;

		if (cpu >= 0 && cpu < RB_CPUS_MAX)
			b->skel->rodata->cpu_mask[cpu / 64] |= 1ull << (cpu % 64);
	}
	b->skel->bss->cfg = *cfg;
	bpf_map__set_max_entries(b->skel->maps.counters,
				 (__u32)(b->nr_events ? b->nr_events : 1) * (__u32)b->nr_cpus);
	load_only_what_is_used(b, rs, cfg);
	err = range_gate_bpf__load(b->skel);
	if (err) {
		explain_refusal(-err > 0 ? -err : errno, "the kernel refused the range programs",
				why, cap);
		goto fail;
	}
	for (size_t i = 0; i < b->nr_events * (size_t)b->nr_cpus; i++) {
		__u32 key = (__u32)i;

		if (b->fds[i] >= 0 &&
		    bpf_map_update_elem(bpf_map__fd(b->skel->maps.counters), &key, &b->fds[i], 0)) {
			explain_refusal(errno, "cannot hand the counters to the programs", why, cap);
			goto fail;
		}
	}
	if (!target->cpu_wide) {
		/* The workload is marked before its exec; the others now. */
		if (target->enable_on_exec) {
			for (size_t i = 0; i < target->nr_roots; i++)
				mark_task(b, target->roots[i], RB_TASK_AT_EXEC);
		}
	}
	if (attach_all(b, rs, why, cap))
		goto fail;
	if (!target->cpu_wide && !target->enable_on_exec)
		mark_threads(b, target);
	b->values = calloc((RB_VIEWS_MAX + 1) * RB_EVENTS_MAX, sizeof(uint64_t));
	b->percpu = calloc((size_t)b->nr_cpus, sizeof(struct rb_sums));
	if (!b->values || !b->percpu) {
		snprintf(why, cap, "out of memory");
		goto fail;
	}
	/* Marked tasks that run now are measured from this flush on. */
	b->skel->bss->flush_at_load = true;
	range_bpf_refresh(b);
	b->skel->bss->flush_at_load = false;
	free(cfg);
	return b;
fail:
	free(cfg);
	range_bpf_close(b);
	return NULL;
}

static uint64_t recursion_misses(struct bpf_program *prog)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_program__fd(prog) < 0 ||	/* not loaded: the set did not need it */
	    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return 0;
	return info.recursion_misses;
}

static void detach(struct range_bpf *b)
{
	/* The counters array holds the perf files too: empty it, so that an
	 * unloaded set gives its counters back. */
	for (size_t i = 0; b->skel && b->fds && i < b->nr_events * (size_t)b->nr_cpus; i++) {
		__u32 key = (__u32)i;

		if (b->fds[i] >= 0)
			bpf_map_delete_elem(bpf_map__fd(b->skel->maps.counters), &key);
	}
	for (size_t i = 0; i < b->nr_links; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	b->links = NULL;
	b->nr_links = 0;
	for (size_t i = 0; b->fds && i < b->nr_events * (size_t)b->nr_cpus; i++) {
		if (b->fds[i] >= 0)
			close(b->fds[i]);
		b->fds[i] = -1;
	}
}

void range_bpf_unload(struct range_bpf *b)
{
	if (b->unloaded)
		return;
	range_bpf_refresh(b);
	b->missed_at_unload = range_bpf_missed(b);
	clock_gettime(CLOCK_MONOTONIC, &b->ended);
	detach(b);
	b->unloaded = true;
}

void range_bpf_close(struct range_bpf *b)
{
	if (!b)
		return;
	detach(b);
	range_gate_bpf__destroy(b->skel);
	free(b->fds);
	perf_cpu_map__put(b->online);
	free(b->event_of_member);
	free(b->first_of);
	free(b->values);
	free(b->percpu);
	free(b);
}

/* ---- reading ----------------------------------------------------------------- */

static void flush_cpu(struct range_bpf *b, int cpu)
{
	int prog = bpf_program__fd(b->skel->progs.flush);

	for (int tries = 0; tries < 1000; tries++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU,
			    .cpu = (__u32)cpu);

		if (bpf_prog_test_run_opts(prog, &opts) || opts.retval != RB_FLUSH_BUSY)
			return;
		sched_yield();
	}
	b->flush_busy++;
}

void range_bpf_refresh(struct range_bpf *b)
{
	__u32 zero = 0;

	if (b->unloaded)
		return;	/* the values are final */
	for (int i = 0; i < perf_cpu_map__nr(b->online); i++)
		flush_cpu(b, perf_cpu_map__cpu(b->online, i).cpu);
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.snapshot), &zero, b->percpu))
		return;
	memset(b->values, 0, (RB_VIEWS_MAX + 1) * RB_EVENTS_MAX * sizeof(uint64_t));
	for (int cpu = 0; cpu < b->nr_cpus; cpu++)
		for (size_t v = 0; v <= RB_VIEWS_MAX; v++)
			for (size_t e = 0; e < b->nr_events; e++)
				b->values[v * RB_EVENTS_MAX + e] += b->percpu[cpu].count[v][e];
}

uint64_t range_bpf_value(const struct range_bpf *b, size_t view, size_t member)
{
	int e = b->event_of_member[member];

	return e < 0 ? 0 : b->values[view * RB_EVENTS_MAX + (size_t)e];
}

uint64_t range_bpf_total(const struct range_bpf *b, size_t member, uint64_t *ns)
{
	struct timespec now;

	if (b->unloaded)
		now = b->ended;
	else
		clock_gettime(CLOCK_MONOTONIC, &now);
	*ns = (uint64_t)(now.tv_sec - b->opened.tv_sec) * 1000000000ull +
	      (uint64_t)now.tv_nsec - (uint64_t)b->opened.tv_nsec;
	return range_bpf_value(b, RB_VIEW_TOTAL, member);
}

bool range_bpf_supported(const struct range_bpf *b, size_t member)
{
	int e = b->event_of_member[member];

	return e >= 0 && (b->supported & (1u << e));
}

uint64_t range_bpf_missed(const struct range_bpf *b)
{
	if (b->unloaded)
		return b->missed_at_unload;
	return b->skel->bss->races + b->skel->bss->storage_failures + b->flush_busy +
	       recursion_misses(b->skel->progs.on_trigger) +
	       recursion_misses(b->skel->progs.on_sys_enter) +
	       recursion_misses(b->skel->progs.on_sys_exit) +
	       recursion_misses(b->skel->progs.on_switch_out) +
	       recursion_misses(b->skel->progs.on_fork) +
	       recursion_misses(b->skel->progs.on_exec);
}

size_t range_bpf_nr_fds(const struct range_bpf *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->nr_events * (size_t)b->nr_cpus; i++)
		n += b->fds[i] >= 0;
	return n;
}
