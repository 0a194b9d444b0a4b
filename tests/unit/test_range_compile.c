/*
 * test_range_compile.c: unit tests for agent/ranges/range_compile, the
 * compiler of a range set into the BPF programs' tables: the gate
 * operations of every view, the triggers of each tracepoint (starts,
 * stops, filter chains, events counted at their hits), the numbering of
 * counted events, the syscall tracepoints routed through the raw syscall
 * programs, the filter predicates, and every refusal with its exact reason.
 *
 * No root, no BPF and no tracefs: the sets are built here from parsed
 * specs (grammar/range_parse) the way range_set numbers its members, with
 * tracepoint ids made up, and the tracepoint formats a filter needs are
 * copies of the kernel's, handed to range_compile_with.  Output is TAP
 * (tests/unit/tap.h).
 */
#include "agent/ranges/range_compile.h"
#include "agent/ranges/range_layout.h"
#include "grammar/range_parse.h"
#include "tests/unit/tap.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

/* ---- formats ----------------------------------------------------------------- */

#define COMMON_FIELDS \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const struct {
	const char *subsys, *name, *text;
} formats[] = {
	{ "syscalls", "sys_enter_write",
	  "name: sys_enter_write\nID: 840\nformat:\n" COMMON_FIELDS
	  "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n\n"
	  "print fmt: \"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", "
	  "((unsigned long)(REC->fd)), ((unsigned long)(REC->buf)), "
	  "((unsigned long)(REC->count))\n" },
	{ "sched", "sched_process_exec",
	  "name: sched_process_exec\nID: 365\nformat:\n" COMMON_FIELDS
	  "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	  "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	  "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), "
	  "REC->pid, REC->old_pid\n" },
	{ "sched", "sched_wakeup",
	  "name: sched_wakeup\nID: 374\nformat:\n" COMMON_FIELDS
	  "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, "
	  "REC->pid, REC->prio, REC->target_cpu\n" },
};

static int formats_read;

static char *canned_format(const char *subsys, const char *name, int *size, void *ctx)
{
	(void)ctx;
	formats_read++;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (strcmp(formats[i].subsys, subsys) || strcmp(formats[i].name, name))
			continue;
		*size = (int)strlen(formats[i].text);
		return strdup(formats[i].text);
	}
	return NULL;
}

/* ---- sets -------------------------------------------------------------------- */

#define MEMBERS_MAX 80

/* A set as range_set_compile makes it: member 1 the exit sampler, then
 * each trigger (tracepoint and filter) and each counted event once. */
struct tset {
	struct range_layout layout;
	struct range_spec *specs[RB_VIEWS_MAX + 1];
	struct event_def defs[MEMBERS_MAX];
	const struct range_trigger *trigger_of[MEMBERS_MAX];
	struct range_member members[MEMBERS_MAX + 1];
	struct range_view_def views[RB_VIEWS_MAX + 1];
	size_t *shown[RB_VIEWS_MAX + 1];
	const char *filter_of[MEMBERS_MAX];
	const char *names[MEMBERS_MAX];	/* distinct event names: the made-up ids */
	size_t nr_names;
};

static uint64_t id_of(struct tset *t, const char *name)
{
	for (size_t i = 0; i < t->nr_names; i++)
		if (!strcmp(t->names[i], name))
			return 1000 + i;
	t->names[t->nr_names] = name;
	return 1000 + t->nr_names++;
}

static size_t member_for(struct tset *t, const char *name, const struct range_trigger *trig)
{
	struct range_layout *layout = &t->layout;
	const char *filter = trig ? trig->filter_text : NULL;
	uint64_t id = id_of(t, name);

	for (size_t i = 0; i < layout->nr_events; i++) {
		if (layout->defs[i].attr.config != id ||
		    (filter ? !t->filter_of[i] || strcmp(filter, t->filter_of[i]) : !!t->filter_of[i]))
			continue;
		if (!layout->trigger_of[i])
			layout->trigger_of[i] = trig;
		return i + 1;
	}
	if (layout->nr_events >= MEMBERS_MAX) {
		fprintf(stderr, "test set too large\n");
		exit(2);
	}
	t->defs[layout->nr_events] = (struct event_def){
		.name = (char *)name, .is_tracepoint = strchr(name, ':') != NULL,
		.attr = { .type = strchr(name, ':') ? PERF_TYPE_TRACEPOINT : PERF_TYPE_SOFTWARE,
			  .config = id },
	};
	t->filter_of[layout->nr_events] = filter;
	layout->trigger_of[layout->nr_events] = trig;
	return ++layout->nr_events;
}

static struct tset *tset_new(const char *const *texts, size_t n)
{
	struct tset *t = calloc(1, sizeof(*t));
	struct range_layout *layout = &t->layout;

	if (!t)
		exit(2);
	layout->specs = t->specs;
	layout->nr_specs = n;
	layout->defs = t->defs;
	layout->trigger_of = t->trigger_of;
	layout->members = t->members;
	layout->views = t->views;
	layout->shown = t->shown;
	member_for(t, "sched:sched_process_exit", NULL);
	for (size_t s = 0; s < n; s++) {
		struct pg_error err = { 0 };
		struct range_spec *spec = range_parse(texts[s], &err);
		unsigned base = (unsigned)layout->nr_leaves;

		if (!spec) {
			fprintf(stderr, "'%s': %s\n", texts[s], err.message);
			exit(2);
		}
		t->specs[s] = spec;
		for (size_t i = 0; i < spec->nranges; i++)
			layout->leaves[base + i].has_starter = spec->ranges[i]->starter != NULL;
		layout->nr_leaves += spec->nranges;
		for (size_t i = 0; i < spec->ntriggers; i++) {
			const struct range_trigger *trig = spec->triggers[i];
			size_t m = member_for(t, trig->tracepoint, trig);

			if (trig->role == RANGE_STARTER)
				t->members[m].starts |= 1ull << (base + trig->range_index);
			else
				t->members[m].stops |= 1ull << (base + trig->range_index);
		}
		t->views[s] = (struct range_view_def){ spec->gate, base };
		t->shown[s] = calloc(spec->nevents ? spec->nevents : 1, sizeof(size_t));
		if (!t->shown[s])
			exit(2);
		for (size_t i = 0; i < spec->nevents; i++) {
			size_t m = member_for(t, spec->events[i].name, NULL);

			t->members[m].counted = true;
			t->shown[s][i] = m;
		}
	}
	return t;
}

static void tset_free(struct tset *t)
{
	for (size_t s = 0; s < t->layout.nr_specs; s++) {
		range_spec_free(t->specs[s]);
		free(t->shown[s]);
	}
	free(t);
}

/* ---- compiling and showing ------------------------------------------------- */

static struct rb_config cfg;
static int event_of_member[MEMBERS_MAX + 1];
static size_t first_of[MEMBERS_MAX + 1];
static size_t nr_events;
static char why[512];
static char got[16384];

static int compile_texts(const char *const *texts, size_t n)
{
	struct tset *t = tset_new(texts, n);
	int rc;

	why[0] = 0;
	rc = range_compile_with(&t->layout, canned_format, NULL, &cfg, event_of_member, first_of,
				&nr_events, why, sizeof(why));
	tset_free(t);
	return rc;
}

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...)
{
	size_t len = strlen(got);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(got + len, sizeof(got) - len, fmt, ap);
	va_end(ap);
}

static void add_ops(const char *what, const struct rb_op_code *ops, size_t n)
{
	static const char *const names[] = { "PUSH", "AND", "OR", "NOT", "TRUE", "VIEW" };

	add("%s:", what);
	for (size_t i = 0; i < n; i++) {
		if (ops[i].op == RB_OP_PUSH || ops[i].op == RB_OP_VIEW)
			add(" %s %u", names[ops[i].op], ops[i].arg);
		else
			add(" %s", ops[i].op < 6 ? names[ops[i].op] : "?");
	}
	add("\n");
}

static bool trigger_used(const struct rb_trigger *t)
{
	static const struct rb_trigger zero;

	return memcmp(t, &zero, sizeof(zero)) != 0;
}

/*
 * Everything the compiler wrote but the syscall tables, as text: events
 * (member -> event, member -> first trigger), leaves, views, gate ops, the
 * triggers in use, filter ops, and predicates.
 */
static const char *show(size_t nr_members)
{
	size_t nr_filter_ops = 0, nr_preds = 0;

	got[0] = 0;
	add("events %zu:", nr_events);
	for (size_t m = 0; m <= nr_members; m++)
		add(" %d", event_of_member[m]);
	add("\nfirst:");
	for (size_t m = 0; m <= nr_members; m++)
		if (first_of[m] == SIZE_MAX)
			add(" -");
		else
			add(" %zu", first_of[m]);
	add("\nleaves 0x%llx no_starter 0x%llx\nviews %u:", (unsigned long long)cfg.leaf_used,
	    (unsigned long long)cfg.no_starter, cfg.nr_views);
	for (size_t v = 0; v < cfg.nr_views; v++)
		add(" 0x%x", cfg.views[v].events);
	add("\n");
	add_ops("gate", cfg.gate_ops, cfg.nr_gate_ops);
	for (size_t i = 0; i < RB_TRIGGERS_MAX; i++) {
		const struct rb_trigger *t = &cfg.triggers[i];

		if (!trigger_used(t))
			continue;
		add("t%zu: chain %u starts", i, t->nr_chain);
		for (size_t k = 0; k < t->nr_starts; k++)
			add(" %u", t->starts[k]);
		add(" stops");
		for (size_t k = 0; k < t->nr_stops; k++)
			add(" %u", t->stops[k]);
		add(" filter %u+%u count 0x%x\n", t->first_filter_op, t->nr_filter_ops,
		    t->count_events);
		if (t->first_filter_op + t->nr_filter_ops > nr_filter_ops)
			nr_filter_ops = t->first_filter_op + t->nr_filter_ops;
	}
	if (nr_filter_ops)
		add_ops("filter", cfg.filter_ops, nr_filter_ops);
	for (size_t i = 0; i < nr_filter_ops; i++)
		if (cfg.filter_ops[i].op == RB_OP_PUSH && cfg.filter_ops[i].arg + 1u > nr_preds)
			nr_preds = cfg.filter_ops[i].arg + 1u;
	for (size_t i = 0; i < nr_preds; i++) {
		const struct rb_pred *p = &cfg.preds[i];

		add("p%zu: kind %u offset %u size %u signed %u cmp %u", i, p->kind, p->offset,
		    p->size, p->is_signed, p->cmp);
		if (p->kind == RB_FIELD_NUMBER || p->kind == RB_FIELD_CPU)
			add(" value %llu\n", (unsigned long long)p->value);
		else
			add(" match %u '%.*s'\n", p->match, p->str_len, p->str);
	}
	return got;
}

/* The routed syscalls, as "enter NR=first+1 ..." in syscall order. */
static const char *show_syscalls(void)
{
	got[0] = 0;
	add("enter");
	for (size_t i = 0; i < RB_SYSCALLS_MAX; i++)
		if (cfg.syscall_enter[i])
			add(" %zu=%u", i, cfg.syscall_enter[i]);
	add(" exit");
	for (size_t i = 0; i < RB_SYSCALLS_MAX; i++)
		if (cfg.syscall_exit[i])
			add(" %zu=%u", i, cfg.syscall_exit[i]);
	return got;
}

static void compiles(const char *const *texts, size_t n, size_t nr_members, const char *want,
		     const char *what)
{
	if (!ok(compile_texts(texts, n) == 0, what)) {
		printf("#   refused: %s\n", why);
		return;
	}
	is_str(show(nr_members), want, what);
}

static void refuses(const char *const *texts, size_t n, const char *reason, const char *what)
{
	is_int(compile_texts(texts, n), -1, what);
	is_str(why, reason, what);
}

/* ---- tests ------------------------------------------------------------------- */

static void test_window(void)
{
	const char *spec[] = {
		"syscalls:sys_enter_write@syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid"
	};
	char want[256];

	/* Members: 1 the exit sampler, 2 getppid (starts leaf 0), 3 getpgid
	 * (stops it), 4 write (counted, event 0, counted at its hits). */
	compiles(spec, 1, 4,
		 "events 1: -1 -1 -1 -1 0\n"
		 "first: - - 0 1 2\n"
		 "leaves 0x1 no_starter 0x0\n"
		 "views 1: 0x1\n"
		 "gate: PUSH 0 VIEW 0\n"
		 "t0: chain 1 starts 0 stops filter 0+0 count 0x0\n"
		 "t1: chain 1 starts stops 0 filter 0+0 count 0x0\n"
		 "t2: chain 1 starts stops filter 0+0 count 0x1\n",
		 "a window of getppid..getpgid counting write");
	/* In syscall order, whatever this architecture's numbers. */
	{
		int nr[3] = { SYS_write, SYS_getppid, SYS_getpgid }, val[3] = { 3, 1, 2 };

		for (int i = 0; i < 3; i++)
			for (int j = i + 1; j < 3; j++)
				if (nr[j] < nr[i]) {
					int a = nr[i], b = val[i];

					nr[i] = nr[j], val[i] = val[j];
					nr[j] = a, val[j] = b;
				}
		snprintf(want, sizeof(want), "enter %d=%d %d=%d %d=%d exit", nr[0], val[0],
			 nr[1], val[1], nr[2], val[2]);
	}
	is_str(show_syscalls(), want, "syscall tracepoints go through the raw syscall programs");
	ok(range_compile_routed(&cfg, "syscalls:sys_enter_getpgid", 1), "getpgid routed to t1");
	ok(!range_compile_routed(&cfg, "syscalls:sys_enter_getpgid", 0), "not to t0");
	ok(!range_compile_routed(&cfg, "sched:sched_switch", 0), "another tracepoint is not");
	ok(range_compile_any_routed(cfg.syscall_enter), "enter routes some");
	ok(!range_compile_any_routed(cfg.syscall_exit), "exit routes none");
}

static void test_complement_and_gates(void)
{
	const char *specs[] = {
		"task-clock@!(syscalls:sys_enter_getppid..syscalls:sys_exit_getppid)",
		"(task-clock,syscalls:sys_enter_getpid)@a:b..c:d && ..c:d || e:f..",
		"task-clock",
	};

	/* Members: 1 exit sampler, 2 enter_getppid, 3 exit_getppid, 4
	 * task-clock (event 0, a perf counter: no trigger), 5 a:b, 6 c:d (stops
	 * leaves 1 and 2), 7 e:f, 8 getpid (event 1, counted at its hits).
	 * Leaves: 0 of the first spec; 1, 2, 3 of the second (2 "..c:d" has
	 * no starter). */
	compiles(specs, 3, 8,
		 "events 2: -1 -1 -1 -1 0 -1 -1 -1 1\n"
		 "first: - - 0 1 - 2 3 4 5\n"
		 "leaves 0xf no_starter 0x4\n"
		 "views 3: 0x1 0x3 0x1\n"
		 "gate: PUSH 0 NOT VIEW 0 PUSH 1 PUSH 2 AND PUSH 3 OR VIEW 1 TRUE VIEW 2\n"
		 "t0: chain 1 starts 0 stops filter 0+0 count 0x0\n"
		 "t1: chain 1 starts stops 0 filter 0+0 count 0x0\n"
		 "t2: chain 1 starts 1 stops filter 0+0 count 0x0\n"
		 "t3: chain 1 starts stops 1 2 filter 0+0 count 0x0\n"
		 "t4: chain 1 starts 3 stops filter 0+0 count 0x0\n"
		 "t5: chain 1 starts stops filter 0+0 count 0x2\n",
		 "a complement, && and ||, an ungated spec");
	ok(cfg.syscall_enter[SYS_getppid] == 1 && cfg.syscall_exit[SYS_getppid] == 2 &&
	   cfg.syscall_enter[SYS_getpid] == 6, "enter and exit routed apart");
}

static void test_filters(void)
{
	const char *specs[] = {
		"syscalls:sys_enter_write@"
		"syscalls:sys_enter_write(fd == 1 && !(count < 8))..syscalls:sys_enter_getppid",
		"task-clock@syscalls:sys_enter_write(fd == 2 || comm ~ \"mark*\")..",
		"task-clock@sched:sched_process_exec(filename ~ \"*/true\")..",
		"task-clock@sched:sched_wakeup(comm == \"ranger\" && cpu != 3)..",
	};

	formats_read = 0;
	/* Members: 1 exit sampler, 2 write (fd == 1 && ...) starting leaf 0,
	 * 3 getppid, 4 write (event 0), 5 write (fd == 2 || ...) starting
	 * leaf 1, 6 task-clock (event 1), 7 exec, 8 wakeup.  Write's triggers
	 * are one chain, t0 and t1, its first carrying the count of event 0. */
	compiles(specs, 4, 8,
		 "events 2: -1 -1 -1 -1 0 -1 1 -1 -1\n"
		 "first: - - 0 2 0 0 - 3 4\n"
		 "leaves 0xf no_starter 0x0\n"
		 "views 4: 0x1 0x2 0x2 0x2\n"
		 "gate: PUSH 0 VIEW 0 PUSH 1 VIEW 1 PUSH 2 VIEW 2 PUSH 3 VIEW 3\n"
		 "t0: chain 2 starts 0 stops filter 0+4 count 0x1\n"
		 "t1: chain 0 starts 1 stops filter 4+3 count 0x0\n"
		 "t2: chain 1 starts stops 0 filter 0+0 count 0x0\n"
		 "t3: chain 1 starts 2 stops filter 7+1 count 0x0\n"
		 "t4: chain 1 starts 3 stops filter 8+3 count 0x0\n"
		 "filter: PUSH 0 PUSH 1 NOT AND PUSH 2 PUSH 3 OR PUSH 4 PUSH 5 PUSH 6 AND\n"
		 "p0: kind 0 offset 16 size 8 signed 0 cmp 0 value 1\n"
		 "p1: kind 0 offset 32 size 8 signed 0 cmp 2 value 8\n"
		 "p2: kind 0 offset 16 size 8 signed 0 cmp 0 value 2\n"
		 "p3: kind 3 offset 0 size 0 signed 0 cmp 0 match 1 'mark'\n"
		 "p4: kind 2 offset 8 size 4 signed 0 cmp 0 match 2 '/true'\n"
		 "p5: kind 1 offset 8 size 16 signed 0 cmp 0 match 0 'ranger'\n"
		 "p6: kind 4 offset 0 size 4 signed 1 cmp 1 value 3\n",
		 "filters: numbers, comm, __data_loc, char[], cpu; a chain on one tracepoint");
	is_int(formats_read, 4, "a format read per filtered trigger");
}

static void test_counted_head(void)
{
	const char *specs[] = {
		"syscalls:sys_enter_write",
		"task-clock@syscalls:sys_enter_write(fd == 1)..",
	};

	/* Members: 1 exit sampler, 2 write (event 0), 3 write (fd == 1)
	 * starting leaf 0, 4 task-clock (event 1).  The counted write comes
	 * first: the chain's head is a trigger that only counts. */
	compiles(specs, 2, 4,
		 "events 2: -1 -1 0 -1 1\n"
		 "first: - - 0 0 -\n"
		 "leaves 0x1 no_starter 0x0\n"
		 "views 2: 0x1 0x2\n"
		 "gate: TRUE VIEW 0 PUSH 0 VIEW 1\n"
		 "t0: chain 2 starts stops filter 0+0 count 0x1\n"
		 "t1: chain 0 starts 0 stops filter 0+1 count 0x0\n"
		 "filter: PUSH 0\n"
		 "p0: kind 0 offset 16 size 8 signed 0 cmp 0 value 1\n",
		 "a counted tracepoint ahead of its filtered trigger");
}

static void test_refusals(void)
{
	const char *glob[] = { "x@syscalls:sys_enter_write(comm ~ \"a*b\").." };
	const char *field[] = { "x@syscalls:sys_enter_write(nosuch == 1).." };
	const char *strnum[] = { "x@syscalls:sys_enter_write(fd == \"one\").." };
	const char *func[] = { "x@syscalls:sys_enter_write(fd.function == 1).." };
	const char *noformat[] = { "x@sched:sched_switch(prev_pid == 1).." };
	const char *longstr[] = { "x@sched:sched_wakeup(comm == "
		"\"0123456789012345678901234567890123456789012345678901234567890123\").." };
	const char *events[] = { "(a:a,a:b,a:c,a:d,a:e,a:f,a:g,a:h,a:i)" };
	char chain[1024] = "x@";
	const char *chain_spec[] = { chain };
	char leaves[2048] = "x@";
	const char *leaves_spec[] = { leaves };
	const char *views[RB_VIEWS_MAX + 1];

	refuses(glob, 1, "the glob 'a*b' (only abc, abc*, *abc and *abc* are evaluated in BPF)",
		"a full glob");
	refuses(field, 1, "field 'nosuch' not found", "an unknown field");
	refuses(strnum, 1, "a non-numeric value for 'fd'", "a string for a number");
	refuses(func, 1, "the filter on 'fd' (.function, .ustring and CPUS{} are evaluated by "
		"the kernel's filter only)", "a .function suffix");
	refuses(noformat, 1, "cannot read the format of sched:sched_switch", "no format");
	refuses(longstr, 1, "a string of 64 bytes in a filter (at most 63)", "a long string");
	refuses(events, 1, "9 counted events in one set (at most 8)", "too many events");
	for (int i = 0; i <= RB_CHAIN_MAX; i++)
		snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain),
			 "%ssyscalls:sys_enter_write(fd == %d)..", i ? "||" : "", i);
	refuses(chain_spec, 1, "more than 8 filters on syscalls:sys_enter_write",
		"too many filters on one tracepoint");
	for (int i = 0; i <= RB_TRIGGER_LEAVES; i++)
		snprintf(leaves + strlen(leaves), sizeof(leaves) - strlen(leaves),
			 "%sa:b..", i ? "||" : "");
	refuses(leaves_spec, 1, "a trigger that starts or stops more than 16 ranges",
		"a trigger of too many ranges");
	for (int i = 0; i <= RB_VIEWS_MAX; i++)
		views[i] = "task-clock";
	refuses(views, RB_VIEWS_MAX + 1, "32 range specs in one set (at most 31)",
		"too many specs");
}

int main(void)
{
	test_window();
	test_complement_and_gates();
	test_filters();
	test_counted_head();
	test_refusals();
	return tap_done();
}
