/*
 * test_event_parse.c: unit tests for grammar/event_parse (perf's -e syntax)
 * and agent/events/event_resolve (the perf_event_attrs it stands for).
 *
 * Parsing: every kind of event, groups, modifiers, terms, blanks, and every
 * error reason with the byte offset its caret goes under.
 *
 * Resolving: each syntax must give the attr fields perf 6.1 gives on this
 * machine (Debian 12, no hardware PMU), read with
 *
 *     perf stat -vv -e 'EVENT' true
 *
 * which prints the perf_event_attr perf built (zero fields left out, as
 * attr_show() below leaves them out).  The expected strings are those
 * printouts with the fields the counter adds itself (size, sample_type,
 * read_format, disabled, inherit, enable_on_exec) taken away.  PMU events
 * and tracepoints resolve against a fake sysfs and tracefs built in a
 * temporary directory: an x86-like "cpu" PMU, and copies of this machine's
 * msr PMU (type 9, event = config:0-63, alias tsc = event=0x00) and
 * tracepoint ids.  Output is TAP (tests/unit/tap.h).
 */
#include "agent/events/event_resolve.h"
#include "agent/events/event_pfm.h"
#include "grammar/event_parse.h"
#include "tests/unit/tap.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char got[8192];
static char root[256];		/* the fake tree */
static char pmus[300], tracepoints[300];

/* ---- parsing ------------------------------------------------------------------ */

/* A one-line picture of a parsed list: "[hardware 0/0x0 cycles:u mods=u] ...". */
static const char *parse_show(const char *text)
{
	struct pg_error err = { 0 };
	struct event_list *l = event_list_parse(text, strlen(text), &err);
	size_t n = 0;

	got[0] = '\0';
	if (!l) {
		snprintf(got, sizeof(got), "ERR %zu: %s", err.offset, err.message);
		pg_error_clear(&err);
		return got;
	}
	for (size_t g = 0; g < l->ngroups; g++) {
		const struct event_group *grp = &l->groups[g];

		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s", g ? " " : "",
				      grp->braced ? "{" : "");
		for (size_t i = grp->first; i < grp->first + grp->n; i++) {
			const struct event_desc *e = &l->events[i];

			n += (size_t)snprintf(got + n, sizeof(got) - n, "%s[%s", i > grp->first ?
					      " " : "", event_kind_name(e->kind));
			if (e->kind <= EVENT_TOOL)
				n += (size_t)snprintf(got + n, sizeof(got) - n, " %u/%#llx",
						      e->type, (unsigned long long)e->config);
			if (e->kind == EVENT_PMU) {
				n += (size_t)snprintf(got + n, sizeof(got) - n, " %s", e->pmu);
				for (size_t t = 0; t < e->nterms; t++)
					n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s%s%s",
							      t ? "," : " ", e->terms[t].key,
							      e->terms[t].has_value ? "=" : "",
							      e->terms[t].has_value ?
							      e->terms[t].value : "");
			}
			if (e->kind >= EVENT_TRACEPOINT)
				n += (size_t)snprintf(got + n, sizeof(got) - n, " %s %s",
						      e->subsys, e->tp_name);
			if (e->mods.span.len)
				n += (size_t)snprintf(got + n, sizeof(got) - n, " mods=%.*s",
						      (int)e->mods.span.len, text + e->mods.span.offset);
			n += (size_t)snprintf(got + n, sizeof(got) - n, "]");
		}
		if (grp->braced)
			n += (size_t)snprintf(got + n, sizeof(got) - n, "}%s%.*s",
					      grp->mods.span.len ? ":" : "",
					      (int)grp->mods.span.len, text + grp->mods.span.offset);
	}
	event_list_free(l);
	return got;
}

/* One test point: show(text) is want; label names the test. */
static void ok_show(const char *(*show)(const char *), const char *label, const char *text,
		    const char *want)
{
	char what[512];

	snprintf(what, sizeof(what), "%s: %s", label, text);
	is_str(show(text), want, what);
}

/* One test point: show(text) is an error at this byte, for this reason. */
static void err_show(const char *(*show)(const char *), const char *label, const char *text,
		     size_t offset, const char *reason)
{
	char what[512], want[1024];

	snprintf(what, sizeof(what), "%s at %zu: %s", label, offset, text);
	snprintf(want, sizeof(want), "ERR %zu: %s", offset, reason);
	is_str(show(text), want, what);
}

#define ok_parse(text, want) ok_show(parse_show, "parses", (text), (want))
#define err_parse(text, offset, reason) err_show(parse_show, "error", (text), (offset), (reason))

static void test_parse_kinds(void)
{
	/* hardware and software names, every alias perf's lexer has */
	ok_parse("cycles", "[hardware 0/0]");
	ok_parse("cpu-cycles", "[hardware 0/0]");
	ok_parse("instructions", "[hardware 0/0x1]");
	ok_parse("cache-references", "[hardware 0/0x2]");
	ok_parse("cache-misses", "[hardware 0/0x3]");
	ok_parse("branches", "[hardware 0/0x4]");
	ok_parse("branch-instructions", "[hardware 0/0x4]");
	ok_parse("branch-misses", "[hardware 0/0x5]");
	ok_parse("bus-cycles", "[hardware 0/0x6]");
	ok_parse("stalled-cycles-frontend", "[hardware 0/0x7]");
	ok_parse("idle-cycles-frontend", "[hardware 0/0x7]");
	ok_parse("stalled-cycles-backend", "[hardware 0/0x8]");
	ok_parse("idle-cycles-backend", "[hardware 0/0x8]");
	ok_parse("ref-cycles", "[hardware 0/0x9]");
	ok_parse("cpu-clock", "[software 1/0]");
	ok_parse("task-clock", "[software 1/0x1]");
	ok_parse("page-faults", "[software 1/0x2]");
	ok_parse("faults", "[software 1/0x2]");
	ok_parse("context-switches", "[software 1/0x3]");
	ok_parse("cs", "[software 1/0x3]");
	ok_parse("cpu-migrations", "[software 1/0x4]");
	ok_parse("migrations", "[software 1/0x4]");
	ok_parse("minor-faults", "[software 1/0x5]");
	ok_parse("major-faults", "[software 1/0x6]");
	ok_parse("alignment-faults", "[software 1/0x7]");
	ok_parse("emulation-faults", "[software 1/0x8]");
	ok_parse("dummy", "[software 1/0x9]");
	ok_parse("bpf-output", "[software 1/0xa]");		/* perf stat -vv: type 1, config 0xa */
	ok_parse("cgroup-switches", "[software 1/0xb]");	/* perf stat -vv: type 1, config 0xb */
	/* tool events: perf 6.1 opens a software dummy (type 1, config 0x9) */
	ok_parse("duration_time", "[tool 1/0x9]");
	ok_parse("user_time", "[tool 1/0x9]");
	ok_parse("system_time", "[tool 1/0x9]");

	/* raw codes */
	ok_parse("r1a3", "[raw 4/0x1a3]");
	ok_parse("rFFFFffffFFFFffff", "[raw 4/0xffffffffffffffff]");
	ok_parse("r1a3:u", "[raw 4/0x1a3 mods=u]");

	/* tracepoints and patterns */
	ok_parse("syscalls:sys_enter_read", "[tracepoint syscalls sys_enter_read]");
	ok_parse("sched:sched_switch:k", "[tracepoint sched sched_switch mods=k]");
	ok_parse("syscalls:sys_enter_*", "[tracepoint glob syscalls sys_enter_*]");
	ok_parse("sys*:sys_?nter_read", "[tracepoint glob sys* sys_?nter_read]");
	ok_parse("rbd:rbd_x", "[tracepoint rbd rbd_x]");	/* hex-like, not raw */

	/* PMU events */
	ok_parse("msr/tsc/", "[pmu msr tsc]");
	ok_parse("msr//", "[pmu msr]");
	ok_parse("cpu/event=0x3c,umask=0x00,inv,cmask=1/",
		 "[pmu cpu event=0x3c,umask=0x00,inv,cmask=1]");
	ok_parse("msr/tsc/u", "[pmu msr tsc mods=u]");
	ok_parse("msr/tsc/:ku", "[pmu msr tsc mods=ku]");
	ok_parse("msr/tsc,name=my-tsc/", "[pmu msr tsc,name=my-tsc]");
	ok_parse("uncore_imc_0/event=0xff/", "[pmu uncore_imc_0 event=0xff]");
}

static void test_parse_cache(void)
{
	/* PERF_TYPE_HW_CACHE = 3; config = cache | op << 8 | result << 16 */
	ok_parse("L1-dcache-loads", "[cache 3/0]");
	ok_parse("L1-dcache-load-misses", "[cache 3/0x10000]");
	ok_parse("L1-dcache-stores", "[cache 3/0x100]");
	ok_parse("L1-dcache-store-misses", "[cache 3/0x10100]");
	ok_parse("L1-dcache-prefetches", "[cache 3/0x200]");
	ok_parse("L1-dcache-prefetch-misses", "[cache 3/0x10200]");
	ok_parse("L1-dcache", "[cache 3/0]");
	ok_parse("L1-dcache-misses", "[cache 3/0x10000]");
	ok_parse("L1-dcache-misses-load", "[cache 3/0x10000]");	/* perf: 0x10000 */
	ok_parse("l1d-store-miss", "[cache 3/0x10100]");		/* perf: 0x10100 */
	ok_parse("l1-d-read-access", "[cache 3/0]");
	ok_parse("L1-data-write-Reference", "[cache 3/0x100]");
	ok_parse("L1-icache-loads", "[cache 3/0x1]");
	ok_parse("L1-icache-load-misses", "[cache 3/0x10001]");
	ok_parse("l1i-prefetch", "[cache 3/0x201]");
	ok_parse("L1-instruction-speculative-read-ops", "[cache 3/0x201]");
	ok_parse("LLC-loads", "[cache 3/0x2]");
	ok_parse("LLC-load-misses", "[cache 3/0x10002]");		/* perf: 0x10002 */
	ok_parse("LLC-stores", "[cache 3/0x102]");
	ok_parse("LLC-prefetch-misses", "[cache 3/0x10202]");		/* perf: 0x10202 */
	ok_parse("L2-speculative-load-miss", "[cache 3/0x10202]");
	ok_parse("dTLB-loads", "[cache 3/0x3]");
	ok_parse("dTLB-load-misses", "[cache 3/0x10003]");		/* perf: 0x10003 */
	ok_parse("d-tlb-stores", "[cache 3/0x103]");
	ok_parse("Data-TLB-prefetches", "[cache 3/0x203]");
	ok_parse("iTLB-loads", "[cache 3/0x4]");
	ok_parse("iTLB-load-misses", "[cache 3/0x10004]");
	ok_parse("i-tlb-misses", "[cache 3/0x10004]");
	ok_parse("Instruction-TLB-read", "[cache 3/0x4]");
	ok_parse("branch-loads", "[cache 3/0x5]");			/* perf: 0x5 */
	ok_parse("branch-load-misses", "[cache 3/0x10005]");
	ok_parse("bpu-misses", "[cache 3/0x10005]");
	ok_parse("btb-read", "[cache 3/0x5]");
	ok_parse("bpc-loads", "[cache 3/0x5]");
	ok_parse("branches-misses", "[cache 3/0x10005]");
	ok_parse("node-loads", "[cache 3/0x6]");
	ok_parse("node-load-misses", "[cache 3/0x10006]");
	ok_parse("node-stores", "[cache 3/0x106]");
	ok_parse("node-prefetch-misses", "[cache 3/0x10206]");
	ok_parse("LLC-load-misses:u", "[cache 3/0x10002 mods=u]");

	/* the helper alone */
	{
		uint64_t c = 0;

		ok(event_cache_config("dTLB-store-misses", 17, &c) && c == 0x10103,
		   "event_cache_config: dTLB-store-misses is 0x10103");
		ok(!event_cache_config("dTLB-store-misses", 16, &c),
		   "event_cache_config: a cut name is none");
		ok(!event_cache_config("cycles", 6, &c), "event_cache_config: cycles is none");
	}
}

static void test_parse_mods_groups(void)
{
	ok_parse("cycles:u", "[hardware 0/0 mods=u]");
	ok_parse("cycles:ukhGHpppPSDIWeb", "[hardware 0/0 mods=ukhGHpppPSDIWeb]");
	ok_parse("{cycles,instructions}", "{[hardware 0/0] [hardware 0/0x1]}");
	ok_parse("{cycles,instructions}:u", "{[hardware 0/0] [hardware 0/0x1]}:u");
	ok_parse("{cycles:k,msr/tsc/u}:W", "{[hardware 0/0 mods=k] [pmu msr tsc mods=u]}:W");
	ok_parse("task-clock,{cycles,instructions}:u,syscalls:sys_enter_*",
		 "[software 1/0x1] {[hardware 0/0] [hardware 0/0x1]}:u "
		 "[tracepoint glob syscalls sys_enter_*]");
	ok_parse(" task-clock , { cycles , instructions } , page-faults ",
		 "[software 1/0x1] {[hardware 0/0] [hardware 0/0x1]} [software 1/0x2]");
	{
		struct event_list *l = event_list_parse("a:b,{cycles,r1}:k", 17, NULL);

		ok(l && l->ngroups == 2 && l->nevents == 3, "groups: 2 groups, 3 events");
		ok(l && !l->groups[0].braced && l->groups[0].n == 1 &&
		   l->groups[1].braced && l->groups[1].first == 1 && l->groups[1].n == 2,
		   "groups: first and n");
		ok(l && l->groups[1].span.offset == 4 && l->groups[1].span.len == 13,
		   "groups: the span covers '{...}:k'");
		ok(l && l->events[2].group == 1 && !strcmp(l->events[2].text, "r1"),
		   "groups: members know their group; text as written");
		ok(l && l->events[0].subsys_span.offset == 0 && l->events[0].tp_span.offset == 2,
		   "tracepoint spans");
		event_list_free(l);
	}
	{
		struct event_list *l = event_list_parse("cpu/event=0x3c,inv/k", 20, NULL);
		const struct event_term *t = l ? l->events[0].terms : NULL;

		ok(t && t[0].is_number && t[0].number == 0x3c && t[0].value_span.offset == 10 &&
		   t[0].key_span.offset == 4 && !t[1].has_value && t[1].key_span.offset == 15,
		   "terms: values, numbers and offsets");
		ok(l && l->events[0].mods.bits == EVENT_MOD_KERNEL &&
		   l->events[0].mods.span.offset == 19, "PMU modifiers after '/'");
		event_list_free(l);
	}
}

static void test_parse_errors(void)
{
	err_parse("L1-dcache-lods", 10, "unknown event 'L1-dcache-lods': 'lods' is no cache "
		  "operation (load, store, prefetch) or result (refs, misses)");
	err_parse("cycels", 0, "unknown event 'cycels'");
	err_parse("task-clock,cycels-x:u", 11, "unknown event 'cycels-x'");
	err_parse("cycles:q", 7, "unknown modifier 'q' (modifiers: u k h G H p P S D I W e b)");
	err_parse("cycles:uq", 8, "unknown modifier 'q' (modifiers: u k h G H p P S D I W e b)");
	err_parse("cycles:uu", 8, "modifier 'u' given twice");
	err_parse("cycles:pppp", 10, "too many 'p' modifiers: precise level 3 ('ppp') is the "
		  "highest");
	err_parse("cycles:", 7, "expected modifiers after ':', found end of list");
	err_parse("cycles:u:k", 8, "unexpected ':' after event");
	err_parse("{cycles,instructions", 0, "unbalanced '{': the group has no '}'");
	err_parse("{cycles,instructions,", 0, "unbalanced '{': the group has no '}'");
	err_parse("cycles}", 6, "unbalanced '}': no group is open");
	err_parse("{cycles,{instructions}}", 8, "groups do not nest: '{' inside a group");
	err_parse("{}", 1, "empty group");
	err_parse("{cycles}x", 8, "unexpected 'x' after a group");
	err_parse("{cycles instructions}", 8, "expected ',' or '}' in a group, found 'i'");
	err_parse("", 0, "expected an event");
	err_parse("cycles,", 7, "expected an event after ','");
	err_parse(",cycles", 0, "expected an event");
	err_parse("cycles instructions", 7, "expected ',' between events, found 'i'");
	err_parse("L1-icache-stores", 10, "unknown event 'L1-icache-stores': L1-icache has no "
		  "store events");
	err_parse("branch-stores", 7, "unknown event 'branch-stores': branch has no store "
		  "events");
	err_parse("LLC-load-store", 9, "unknown event 'LLC-load-store': a second operation or "
		  "result");
	err_parse("r12345678123456789", 0, "raw event code longer than 16 hex digits");
	err_parse("cycle*", 5, "wildcards are only for tracepoints (subsys:name)");
	err_parse("sys:", 4, "expected a tracepoint name after 'sys:', found end of list");
	err_parse("sys:a/b", 5, "unexpected '/' in tracepoint name");
	err_parse("sys:a..b", 5, "unexpected '.' in tracepoint name");
	err_parse("sys:a-b", 5, "unexpected '-' in tracepoint name");
	err_parse("sys.x:a", 0, "unknown event 'sys.x'");
	err_parse("msr/tsc", 3, "unterminated PMU event: missing '/'");
	err_parse("msr/tsc,/", 8, "expected a term (name or name=value), found '/'");
	err_parse("msr/event=/", 10, "expected a value after '=', found '/'");
	err_parse("msr/event=0x1ffffffffffffffff/", 10, "number too large (64 bits at most)");
	err_parse("msr/event=0xfg/", 13, "bad hex number");
	err_parse("msr/event=12ab/", 12, "bad decimal number");
	err_parse("msr/tsc/x", 8, "unknown modifier 'x' (modifiers: u k h G H p P S D I W e b)");
	err_parse("msr/tsc/u/", 9, "unexpected '/' after PMU event");
	err_parse("ms*/tsc/", 2, "wildcards are not supported in PMU names");
	err_parse("cycles\001", 6, "unexpected byte 0x01 after event name");

	/* the two-line caret form */
	{
		const char *t = "cycles:q";
		struct pg_error err = { 0 };
		struct event_list *l = event_list_parse(t, strlen(t), &err);

		ok(!l && errno == EINVAL, "errno is EINVAL on a syntax error");
		event_parse_error_format(t, strlen(t), &err, got, sizeof(got));
		is_str(got, "cycles:q\n       ^ unknown modifier 'q' (modifiers: u k h G H p P S D "
		       "I W e b)", "caret under the modifier");
		pg_error_clear(&err);
	}
}

/* ---- the fake sysfs and tracefs ------------------------------------------------ */

__attribute__((format(printf, 2, 3)))
static void put(const char *content, const char *fmt, ...)
{
	char path[1024], dir[1024];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(s - path), path);
		mkdir(dir, 0755);
	}
	f = fopen(path, "w");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static void build_fake_tree(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/perfgate-events-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(pmus, sizeof(pmus), "%s/devices", root);
	snprintf(tracepoints, sizeof(tracepoints), "%s/events", root);
	/* This machine's PMUs, their types as /sys shows them. */
	put("5\n", "%s/breakpoint/type", pmus);
	put("1\n", "%s/software/type", pmus);
	put("2\n", "%s/tracepoint/type", pmus);
	put("8\n", "%s/uprobe/type", pmus);
	put("config:0\n", "%s/uprobe/format/retprobe", pmus);
	put("9\n", "%s/msr/type", pmus);
	put("config:0-63\n", "%s/msr/format/event", pmus);
	put("event=0x00\n", "%s/msr/events/tsc", pmus);
	/* An x86 core PMU, as Intel's: cpu/{format,events}/ */
	put("4\n", "%s/cpu/type", pmus);
	put("config:0-7\n", "%s/cpu/format/event", pmus);
	put("config:8-15\n", "%s/cpu/format/umask", pmus);
	put("config:18\n", "%s/cpu/format/edge", pmus);
	put("config:23\n", "%s/cpu/format/inv", pmus);
	put("config:24-31\n", "%s/cpu/format/cmask", pmus);
	put("config1:0-15\n", "%s/cpu/format/ldlat", pmus);
	put("config2:0-3,8-11\n", "%s/cpu/format/split", pmus);
	put("event=0x3c\n", "%s/cpu/events/cpu-cycles", pmus);
	put("event=0xc0\n", "%s/cpu/events/instructions", pmus);
	put("event=0x3c,umask=0x01\n", "%s/cpu/events/ref-cycles", pmus);
	put("event=0xcd,umask=0x1,ldlat=3\n", "%s/cpu/events/mem-loads", pmus);
	put("event=0x3c,nosuch=1\n", "%s/cpu/events/broken", pmus);
	put("cpu-cycles\n", "%s/cpu/events/loop", pmus);
	put("config:0-7,32-35\n", "%s/amd/format/event", pmus);
	put("10\n", "%s/amd/type", pmus);
	put("config:99\n", "%s/bad/format/event", pmus);
	put("11\n", "%s/bad/type", pmus);
	/* Tracepoints, this machine's ids */
	put("842\n", "%s/syscalls/sys_enter_read/id", tracepoints);
	put("841\n", "%s/syscalls/sys_exit_read/id", tracepoints);
	put("615\n", "%s/syscalls/sys_enter_readahead/id", tracepoints);
	put("848\n", "%s/syscalls/sys_enter_readlink/id", tracepoints);
	put("850\n", "%s/syscalls/sys_enter_readlinkat/id", tracepoints);
	put("834\n", "%s/syscalls/sys_enter_readv/id", tracepoints);
	put("0\n", "%s/syscalls/enable", tracepoints);
	put("0\n", "%s/syscalls/filter", tracepoints);
	put("372\n", "%s/sched/sched_switch/id", tracepoints);
	put("0\n", "%s/enable", tracepoints);
}

static void remove_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", dir);
}

/* ---- resolving ---------------------------------------------------------------- */

/* The attr as perf stat -vv shows it: the fields we set, zero ones left out. */
static size_t attr_show(const struct perf_event_attr *a, char *buf, size_t cap)
{
	size_t n = 0;

#define F(field, fmt) do {							\
		if (a->field)							\
			n += (size_t)snprintf(buf + n, cap > n ? cap - n : 0, "%s" #field " " fmt, \
					      n ? ", " : "", (unsigned long long)a->field); \
	} while (0)
	F(type, "%llu");
	F(config, "%#llx");
	F(config1, "%#llx");
	F(config2, "%#llx");
	F(sample_period, "%llu");
	F(pinned, "%llu");
	F(exclusive, "%llu");
	F(exclude_user, "%llu");
	F(exclude_kernel, "%llu");
	F(exclude_hv, "%llu");
	F(exclude_idle, "%llu");
	F(precise_ip, "%llu");
	F(exclude_host, "%llu");
	F(exclude_guest, "%llu");
#undef F
	if (!n && cap)
		buf[0] = '\0';
	return n;
}

/* Resolve a list: each counter as "NAME{attr}" joined by " | ", or "ERR off: reason". */
static const char *resolve_show(const char *text)
{
	struct event_resolve_roots roots = { pmus, tracepoints };
	struct pg_error perr = { 0 }, err = { 0 };
	struct event_resolved_list out;
	struct event_list *l = event_list_parse(text, strlen(text), &perr);
	size_t n = 0;

	if (!l) {
		snprintf(got, sizeof(got), "PARSE ERR %zu: %s", perr.offset, perr.message);
		pg_error_clear(&perr);
		return got;
	}
	if (event_resolve_list(&roots, l, &out, &err)) {
		snprintf(got, sizeof(got), "ERR %zu: %s", err.offset, err.message);
		pg_error_clear(&err);
		event_list_free(l);
		return got;
	}
	got[0] = '\0';
	for (size_t i = 0; i < out.n; i++) {
		char a[512];

		attr_show(&out.events[i].attr, a, sizeof(a));
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s{%s}", i ? " | " : "",
				      out.events[i].name, a);
	}
	event_resolved_list_free(&out);
	event_list_free(l);
	return got;
}

/*
 * Parse text and resolve it against the fake PMUs and tp_root (NULL: no
 * tracefs): event_resolve_list's result, or -1 when text does not parse
 * (*l NULL).  The caller frees *l and out.
 */
static int parse_resolve(const char *text, const char *tp_root, struct event_list **l,
			 struct event_resolved_list *out, struct pg_error *err)
{
	struct event_resolve_roots roots = { pmus, tp_root };

	*l = event_list_parse(text, strlen(text), NULL);
	return *l ? event_resolve_list(&roots, *l, out, err) : -1;
}

#define ok_attr(text, want) ok_show(resolve_show, "attr as perf's", (text), (want))
#define err_resolve(text, offset, reason)						\
	err_show(resolve_show, "resolve error", (text), (offset), (reason))

/*
 * A pattern's expected matches, in the order perf 6.1 gives them: the
 * tracefs directories' own (readdir's, not sorted), here the fake tree's,
 * whose order its filesystem decides.  Each "SYS:NAME{type 2, config ID
 * MODS}", joined by " | ".
 */
static const char *in_dir_order(const char *sys_glob, const char *name_glob, const char *mods)
{
	static char want[8192];
	size_t n = 0;
	DIR *top = opendir(tracepoints), *sub;
	struct dirent *s, *e;
	char path[1024];

	want[0] = '\0';
	while (top && (s = readdir(top))) {
		if (s->d_name[0] == '.' || fnmatch(sys_glob, s->d_name, 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tracepoints, s->d_name);
		sub = opendir(path);
		while (sub && (e = readdir(sub))) {
			unsigned long long id;
			FILE *f;

			if (e->d_name[0] == '.' || fnmatch(name_glob, e->d_name, 0))
				continue;
			snprintf(path, sizeof(path), "%s/%s/%s/id", tracepoints, s->d_name, e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;	/* "enable", "filter": files, not events */
			if (fscanf(f, "%llu", &id) == 1)
				n += (size_t)snprintf(want + n, sizeof(want) - n,
						      "%s%s:%s{type 2, config 0x%llx%s}",
						      n ? " | " : "", s->d_name, e->d_name, id, mods);
			fclose(f);
		}
		if (sub)
			closedir(sub);
	}
	if (top)
		closedir(top);
	return want;
}

/* Each expectation is perf 6.1's own: perf stat -vv -e 'TEXT' true, on this machine. */
static void test_resolve_perf_attrs(void)
{
	/* no modifiers: event_attr_init()'s exclude_guest */
	ok_attr("task-clock", "task-clock{type 1, config 0x1, exclude_guest 1}");
	ok_attr("cycles", "cycles{exclude_guest 1}");
	ok_attr("instructions", "instructions{config 0x1, exclude_guest 1}");
	ok_attr("bpf-output", "bpf-output{type 1, config 0xa, exclude_guest 1}");
	ok_attr("L1-dcache-loads", "L1-dcache-loads{type 3, exclude_guest 1}");
	ok_attr("LLC-load-misses", "LLC-load-misses{type 3, config 0x10002, exclude_guest 1}");
	ok_attr("dTLB-load-misses", "dTLB-load-misses{type 3, config 0x10003, exclude_guest 1}");
	ok_attr("branch-loads", "branch-loads{type 3, config 0x5, exclude_guest 1}");
	ok_attr("r1a3", "r1a3{type 4, config 0x1a3, exclude_guest 1}");
	ok_attr("duration_time", "duration_time{type 1, config 0x9, exclude_guest 1}");
	ok_attr("user_time", "user_time{type 1, config 0x9, exclude_guest 1}");
	ok_attr("syscalls:sys_enter_read",
		"syscalls:sys_enter_read{type 2, config 0x34a, exclude_guest 1}");

	/* modifiers */
	ok_attr("cycles:u", "cycles:u{exclude_kernel 1, exclude_hv 1, exclude_guest 1}");
	ok_attr("task-clock:k", "task-clock:k{type 1, config 0x1, exclude_user 1, exclude_hv 1}");
	ok_attr("r1a3:u", "r1a3:u{type 4, config 0x1a3, exclude_kernel 1, exclude_hv 1, "
		"exclude_guest 1}");
	ok_attr("cycles:ukh", "cycles:ukh{exclude_guest 1}");
	ok_attr("instructions:ppp", "instructions:ppp{config 0x1, precise_ip 3, exclude_guest 1}");
	ok_attr("cycles:pp", "cycles:pp{precise_ip 2, exclude_guest 1}");
	ok_attr("cycles:kp", "cycles:kp{exclude_user 1, exclude_hv 1, precise_ip 1, "
		"exclude_guest 1}");
	ok_attr("cycles:G", "cycles:G{exclude_host 1}");
	ok_attr("cycles:H", "cycles:H{exclude_guest 1}");
	ok_attr("cycles:Gu", "cycles:Gu{exclude_kernel 1, exclude_hv 1, exclude_host 1}");
	ok_attr("cycles:Hk", "cycles:Hk{exclude_user 1, exclude_hv 1, exclude_guest 1}");
	ok_attr("task-clock:Gp", "task-clock:Gp{type 1, config 0x1, precise_ip 1, "
		"exclude_host 1}");
	ok_attr("task-clock:pH", "task-clock:pH{type 1, config 0x1, precise_ip 1, "
		"exclude_guest 1}");
	/* S (sample_read), P (precise max), W (weak), b (bpf) set no attr field in perf
	 * stat, and any modifier drops the default exclude_guest */
	ok_attr("cycles:S", "cycles:S{}");
	ok_attr("cycles:P", "cycles:P{}");
	ok_attr("cycles:W", "cycles:W{}");
	ok_attr("cycles:b", "cycles:b{}");
	ok_attr("page-faults:W", "page-faults:W{type 1, config 0x2}");
	ok_attr("cycles:D", "cycles:D{pinned 1}");
	ok_attr("cycles:e", "cycles:e{exclusive 1}");
	ok_attr("cycles:I", "cycles:I{exclude_idle 1}");
	ok_attr("sched:sched_switch:k", "sched:sched_switch{type 2, config 0x174, "
		"exclude_user 1, exclude_hv 1}");

	/* groups: a group's modifiers on top of each member's own */
	ok_attr("{task-clock,page-faults:k}:u",
		"task-clock{type 1, config 0x1, exclude_kernel 1, exclude_hv 1, exclude_guest 1} | "
		"page-faults:k{type 1, config 0x2, exclude_hv 1, exclude_guest 1}");
	ok_attr("{task-clock,page-faults}:D",
		"task-clock{type 1, config 0x1, pinned 1, exclude_guest 1} | "
		"page-faults{type 1, config 0x2, exclude_guest 1}");
	ok_attr("{task-clock,page-faults}:W",
		"task-clock{type 1, config 0x1, exclude_guest 1} | "
		"page-faults{type 1, config 0x2, exclude_guest 1}");
	ok_attr("{task-clock:p,page-faults}:p",
		"task-clock:p{type 1, config 0x1, precise_ip 2, exclude_guest 1} | "
		"page-faults{type 1, config 0x2, precise_ip 1, exclude_guest 1}");
	ok_attr("{task-clock:I,page-faults:e}:e",
		"task-clock:I{type 1, config 0x1, exclusive 1, exclude_idle 1} | "
		"page-faults:e{type 1, config 0x2, exclusive 1}");
	ok_attr("{task-clock:u,page-faults}:k",
		"task-clock:u{type 1, config 0x1, exclude_hv 1, exclude_guest 1} | "
		"page-faults{type 1, config 0x2, exclude_user 1, exclude_hv 1, exclude_guest 1}");
	ok_attr("{task-clock:G,page-faults}:u",
		"task-clock:G{type 1, config 0x1, exclude_kernel 1, exclude_hv 1, exclude_host 1} | "
		"page-faults{type 1, config 0x2, exclude_kernel 1, exclude_hv 1, exclude_guest 1}");
	/* perf stops at the first hardware member here; its attr is the leader's above */
	ok_attr("{cycles:u,instructions}:k",
		"cycles:u{exclude_hv 1, exclude_guest 1} | "
		"instructions{config 0x1, exclude_user 1, exclude_hv 1, exclude_guest 1}");
	err_resolve("{task-clock:pp,page-faults}:pp", 28,
		    "precise level above 3 for 'task-clock:pp' with the group's modifiers");

	/* msr, as this machine has it (perf stat -vv's first attempt) */
	ok_attr("msr/tsc/", "msr/tsc/{type 9, exclude_guest 1}");
	ok_attr("msr//", "msr//{type 9, exclude_guest 1}");
	ok_attr("msr/event=0x2/", "msr/event=0x2/{type 9, config 0x2, exclude_guest 1}");
	ok_attr("msr/config=5,config1=3/",
		"msr/config=5,config1=3/{type 9, config 0x5, config1 0x3, exclude_guest 1}");
	ok_attr("msr/tsc/u", "msr/tsc/u{type 9, exclude_kernel 1, exclude_hv 1, exclude_guest 1}");
	ok_attr("msr/tsc/k", "msr/tsc/k{type 9, exclude_user 1, exclude_hv 1}");
	ok_attr("msr/tsc,name=foo/", "foo{type 9, exclude_guest 1}");

	/* tracepoint patterns: every match, in the directories' order */
	ok(strstr(in_dir_order("syscalls", "sys_enter_rea*", ""), "sys_enter_readv{") != NULL,
	   "the fake tree has the matches of syscalls:sys_enter_rea*");
	ok_attr("syscalls:sys_enter_rea*",
		in_dir_order("syscalls", "sys_enter_rea*", ", exclude_guest 1"));
	ok_attr("s*:s*_re?d:k", in_dir_order("s*", "s*_re?d", ", exclude_user 1, exclude_hv 1"));
	ok_attr("*:*switch*", "sched:sched_switch{type 2, config 0x174, exclude_guest 1}");
}

static void test_resolve_fake_pmu(void)
{
	/* an x86 core PMU's format bits and aliases */
	ok_attr("cpu/event=0x3c,umask=0x01/",
		"cpu/event=0x3c,umask=0x01/{type 4, config 0x13c, exclude_guest 1}");
	ok_attr("cpu/event=0xc0,inv,cmask=2,edge/",
		"cpu/event=0xc0,inv,cmask=2,edge/{type 4, config 0x28400c0, exclude_guest 1}");
	ok_attr("cpu/cpu-cycles/", "cpu/cpu-cycles/{type 4, config 0x3c, exclude_guest 1}");
	ok_attr("cpu/cpu-cycles,umask=2/u",
		"cpu/cpu-cycles,umask=2/u{type 4, config 0x23c, exclude_kernel 1, exclude_hv 1, "
		"exclude_guest 1}");
	ok_attr("cpu/ref-cycles,umask=0/", "cpu/ref-cycles,umask=0/{type 4, config 0x3c, "
		"exclude_guest 1}");
	ok_attr("cpu/mem-loads/", "cpu/mem-loads/{type 4, config 0x1cd, config1 0x3, "
		"exclude_guest 1}");
	ok_attr("cpu/event=1,ldlat=0xffff,split=0xab/",
		"cpu/event=1,ldlat=0xffff,split=0xab/{type 4, config 0x1, config1 0xffff, "
		"config2 0xa0b, exclude_guest 1}");
	ok_attr("cpu/config=0x1234,period=1000/",
		"cpu/config=0x1234,period=1000/{type 4, config 0x1234, sample_period 1000, "
		"exclude_guest 1}");
	ok_attr("amd/event=0x1ff/", "amd/event=0x1ff/{type 10, config 0x1000000ff, "
		"exclude_guest 1}");
	ok_attr("{cpu/cpu-cycles/,cpu/instructions/}:u",
		"cpu/cpu-cycles/{type 4, config 0x3c, exclude_kernel 1, exclude_hv 1, "
		"exclude_guest 1} | cpu/instructions/{type 4, config 0xc0, exclude_kernel 1, "
		"exclude_hv 1, exclude_guest 1}");

	err_resolve("cpuu/event=1/", 0, "unknown PMU 'cpuu' (PMUs: amd, bad, breakpoint, cpu, "
		    "msr, software, tracepoint, uprobe)");
	err_resolve("task-clock,msr/foo=1/", 15, "unknown term 'foo' for PMU 'msr' (terms: "
		    "event, config, config1, config2, name, period)");
	err_resolve("cpu/event=1,umsk=2/", 12, "unknown term 'umsk' for PMU 'cpu' (terms: cmask, "
		    "edge, event, inv, ldlat, split, umask, config, config1, config2, name, "
		    "period)");
	err_resolve("cpu/event=0x100/", 10, "value 0x100 too big for 'event' (config:0-7): "
		    "0xff at most");
	err_resolve("cpu/inv=2/", 8, "value 0x2 too big for 'inv' (config:23): 0x1 at most");
	err_resolve("cpu/event=foo/", 10, "term 'event' takes a number, not 'foo'");
	err_resolve("cpu/name/", 4, "term 'name' needs a value (name=NAME)");
	err_resolve("cpu/broken/", 4, "unknown term 'nosuch' for PMU 'cpu' (terms: cmask, edge, "
		    "event, inv, ldlat, split, umask, config, config1, config2, name, period)");
	err_resolve("cpu/loop/", 4, "alias 'cpu-cycles' of PMU 'cpu' names another alias");
	err_resolve("bad/event=1/", 4, "cannot read format 'event' of PMU 'bad': 'config:99'");

	/* tracepoints that are not there */
	err_resolve("nosys:foo", 0, "unknown tracepoint subsystem 'nosys'");
	err_resolve("cycles,sched:nosuch", 13, "unknown tracepoint 'nosuch' in subsystem 'sched'");
	err_resolve("sched:x*", 0, "no tracepoint matches 'sched:x*'");

	/* names the machine cannot count are no error: the attr is perf's */
	ok_attr("ref-cycles,iTLB-load-misses",
		"ref-cycles{config 0x9, exclude_guest 1} | "
		"iTLB-load-misses{type 3, config 0x10004, exclude_guest 1}");

	/* leaders and groups in the result */
	{
		struct event_list *l;
		struct event_resolved_list out = { 0 };
		struct pg_error err = { 0 };
		int rc = parse_resolve("task-clock,{cycles,syscalls:sys_enter_read*}:u", tracepoints,
				       &l, &out, &err);

		/* task-clock, cycles, and sys_enter_read{,ahead,link,linkat,v} */
		ok(rc == 0 && out.n == 7, "a glob in a group: its matches join the group");
		ok(rc == 0 && out.events[0].leader == 0 && !out.events[0].braced &&
		   out.events[1].leader == 1 && out.events[6].leader == 1 && out.events[6].braced &&
		   out.events[6].group == 1 && out.events[6].desc == 2,
		   "leaders, groups and source events");
		ok(rc == 0 && out.events[6].attr.exclude_kernel && out.events[2].attr.exclude_kernel &&
		   !out.events[0].attr.exclude_kernel, "the group's modifiers reach every match");
		event_resolved_list_free(&out);
		event_list_free(l);
	}
	{
		struct event_list *l;
		struct event_resolved_list out = { 0 };
		struct pg_error err = { 0 };
		int rc = parse_resolve("duration_time:u,cycles:SPWb", NULL, &l, &out, &err);

		ok(rc == 0 && out.events[0].kind == EVENT_TOOL &&
		   out.events[0].tool == EVENT_TOOL_DURATION_TIME,
		   "duration_time stays a tool event for the agent");
		ok(rc == 0 && out.events[1].flags.sample_read && out.events[1].flags.precise_max &&
		   out.events[1].flags.weak_group && out.events[1].flags.bpf_counter,
		   "S, P, W and b are kept as flags");
		event_resolved_list_free(&out);
		event_list_free(l);
	}
	{
		struct event_list *l;
		struct event_resolved_list out = { 0 };
		struct pg_error err = { 0 };
		int rc = parse_resolve("sched:sched_switch", NULL, &l, &out, &err);

		ok(l && rc == -1 && err.offset == 0 &&
		   !strcmp(err.message, "no tracefs: cannot find tracepoint 'sched:sched_switch'"),
		   "no tracefs root: a clear error");
		pg_error_clear(&err);
		event_list_free(l);
	}
}

/* The real sysfs, where it has the msr PMU (this machine does). */
static void test_resolve_real_msr(void)
{
	struct event_list *l = event_list_parse("msr/tsc/", 8, NULL);
	struct perf_event_attr attr = { 0 };
	struct pg_error err = { 0 };
	char *name = NULL;
	FILE *f = fopen(EVENT_RESOLVE_SYSFS "/msr/type", "r");
	unsigned type = 0;

	if (!f || fscanf(f, "%u", &type) != 1) {
		ok(1, "# SKIP no msr PMU in " EVENT_RESOLVE_SYSFS);
	} else {
		ok(event_resolve_pmu(NULL, &l->events[0], &attr, &name, &err) == 0 &&
		   attr.type == type && attr.config == 0, "real sysfs: msr/tsc/ is the msr "
		   "PMU's type, config 0");
	}
	if (f)
		fclose(f);
	free(name);
	event_list_free(l);

	/* An unknown PMU lists the machine's: "... (PMUs: breakpoint, msr, software, ...)" */
	l = event_list_parse("cpuu/event=1/", 13, NULL);
	ok(l && event_resolve_pmu(NULL, &l->events[0], &attr, NULL, &err) == -1 &&
	   err.offset == 0 && !strncmp(err.message, "unknown PMU 'cpuu' (PMUs: ", 26) &&
	   strstr(err.message, "software"), "real sysfs: an unknown PMU lists the PMUs there");
	printf("# %s\n", err.message ? err.message : "");
	pg_error_clear(&err);
	event_list_free(l);
}

static void test_pfm(void)
{
	static const char want[] = "libpfm4 cannot resolve 'nosuch_event': event not found "
				   "(PMUs libpfm4 found: ";
	struct perf_event_attr attr;
	char err[512];

	/* libpfm4's generic perf:: events need no hardware PMU. */
	ok(event_pfm_resolve("perf::PERF_COUNT_SW_TASK_CLOCK", &attr, err, sizeof(err)) == 0 &&
	   attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_TASK_CLOCK &&
	   !attr.exclude_user && !attr.exclude_kernel && attr.exclude_hv,
	   "pfm: perf::PERF_COUNT_SW_TASK_CLOCK is task-clock (user and kernel)");
	ok(event_pfm_resolve("perf::PERF_COUNT_SW_PAGE_FAULTS:u", &attr, err, sizeof(err)) == 0 &&
	   attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_PAGE_FAULTS &&
	   attr.exclude_kernel && !attr.exclude_user, "pfm: the :u modifier");
	ok(event_pfm_resolve("nosuch_event", &attr, err, sizeof(err)) == -1 &&
	   !strncmp(err, want, strlen(want)),
	   "pfm: an unknown name says so, and which PMUs exist");
	printf("# %s\n", err);
}

int main(void)
{
	test_parse_kinds();
	test_parse_cache();
	test_parse_mods_groups();
	test_parse_errors();
	build_fake_tree();
	test_resolve_perf_attrs();
	test_resolve_fake_pmu();
	test_resolve_real_msr();
	test_pfm();
	remove_tree(root);
	return tap_done();
}
