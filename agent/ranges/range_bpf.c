/*
 * range_bpf: a range set counted by range_gate.bpf.c.
 *
 * Opening a set: compile its gates and filters into the program's tables
 * (range_compile.c), open one per-CPU counter per counted event (shared
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
#include <perf/cpumap.h>

#include "agent/base/log.h"
#include "agent/count/target.h"
#include "agent/ranges/range_bpf.h"
#include "agent/ranges/range_bpf_abi.h"
#include "agent/ranges/range_compile.h"
#include "agent/ranges/range_gate.skel.h"
#include "agent/ranges/range_layout.h"

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

static int open_counters(struct range_bpf *b, const struct range_layout *layout, char *why,
			 size_t cap)
{
	int nr_online = perf_cpu_map__nr(b->online);
	size_t nr_fds = b->nr_events * (size_t)b->nr_cpus;

	b->fds = malloc((nr_fds ? nr_fds : 1) * sizeof(int));
	if (!b->fds) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < b->nr_events * (size_t)b->nr_cpus; i++)
		b->fds[i] = -1;
	for (size_t m = 1; m <= layout->nr_events; m++) {
		int e = b->event_of_member[m];
		bool all = true;

		if (e < 0)
			continue;
		if (range_compile_counted_in_bpf(layout, m)) {
			b->supported |= 1u << e;	/* counted by the programs */
			continue;
		}
		for (int i = 0; i < nr_online; i++) {
			int cpu = perf_cpu_map__cpu(b->online, i).cpu;
			struct perf_event_attr attr = layout->defs[m - 1].attr;
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
						 layout->defs[m - 1].name, strerror(errno));
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
	struct bpf_link **links;

	if (!link) {
		explain_refusal(errno, what, why, cap);
		return -1;
	}
	links = realloc(b->links, (b->nr_links + 1) * sizeof(*b->links));
	if (!links) {
		bpf_link__destroy(link);
		snprintf(why, cap, "out of memory");
		return -1;
	}
	b->links = links;
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

static int attach_all(struct range_bpf *b, const struct range_layout *layout, char *why,
		      size_t cap)
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
	if (range_compile_any_routed(cfg->syscall_enter) &&
	    attach(b, bpf_program__attach(skel->progs.on_sys_enter),
		   "cannot attach to raw_syscalls:sys_enter", why, cap))
		return -1;
	if (range_compile_any_routed(cfg->syscall_exit) &&
	    attach(b, bpf_program__attach(skel->progs.on_sys_exit),
		   "cannot attach to raw_syscalls:sys_exit", why, cap))
		return -1;
	for (size_t m = 1; m <= layout->nr_events; m++) {
		LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = b->first_of[m]);
		char subsys[64] = "", name[256] = "";
		bool first = true;

		if (b->first_of[m] == SIZE_MAX)
			continue;
		for (size_t k = 1; k < m; k++)
			first &= b->first_of[k] != b->first_of[m];
		if (!first || range_compile_routed(cfg, layout->defs[m - 1].name, b->first_of[m]))
			continue;	/* attached already, or a syscall program's */
		/* A resolved tracepoint's name is "subsys:name", as written. */
		sscanf(layout->defs[m - 1].name, "%63[^:]:%255[^:]", subsys, name);
		snprintf(what, sizeof(what), "cannot attach to %s", layout->defs[m - 1].name);
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

		/* Out of memory, the walk marks what it found, and the
		 * next walk tries again. */
		for (size_t i = 0; i < target->nr_tree_roots; i++)
			if (target_process_tree(&now, target->tree_roots[i]))
				break;
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
static bool needs_tracepoint_program(const struct range_bpf *b, const struct range_layout *layout,
				     const struct rb_config *cfg)
{
	for (size_t m = 1; m <= layout->nr_events; m++)
		if (b->first_of[m] != SIZE_MAX &&
		    !range_compile_routed(cfg, layout->defs[m - 1].name, b->first_of[m]))
			return true;
	return false;
}

/* The verifier's time is most of a set's start-up (bench/ranges.md):
 * programs the set does not use are not loaded. */
static void load_only_what_is_used(struct range_bpf *b, const struct range_layout *layout,
				   const struct rb_config *cfg)
{
	struct range_gate_bpf *skel = b->skel;

	bpf_program__set_autoload(skel->progs.on_trigger, needs_tracepoint_program(b, layout, cfg));
	bpf_program__set_autoload(skel->progs.on_sys_enter,
				  range_compile_any_routed(cfg->syscall_enter));
	bpf_program__set_autoload(skel->progs.on_sys_exit,
				  range_compile_any_routed(cfg->syscall_exit));
	bpf_program__set_autoload(skel->progs.on_switch_out, b->perf_mask != 0);
}

/* The CPUs the set counts on: the possible ones size the per-CPU tables;
 * the online ones (or -C's, all online) get counters and flushes. */
static int find_cpus(struct range_bpf *b, const struct range_set_target *target, char *why,
		     size_t cap)
{
	b->nr_cpus = libbpf_num_possible_cpus();
	b->online = target->cpu_list ? perf_cpu_map__new(target->cpu_list) :
				       perf_cpu_map__new_online_cpus();
	if (target->cpu_list && b->online && cpus_offline(b->online, why, cap))
		return -1;
	if (b->nr_cpus <= 0 || b->nr_cpus > RB_CPUS_MAX || !b->online ||
	    perf_cpu_map__max(b->online).cpu >= b->nr_cpus) {
		snprintf(why, cap, "cannot tell this machine's CPUs%s%s", target->cpu_list ? " in " : "",
			 target->cpu_list ? target->cpu_list : "");
		return -1;
	}
	return 0;
}

/* The programs' constants, fixed before loading so that the verifier
 * prunes what the set does not use. */
static void set_constants(struct range_bpf *b, const struct range_layout *layout,
			  const struct range_set_target *target, const struct rb_config *cfg)
{
	struct range_gate_bpf__rodata *ro = b->skel->rodata;

	ro->nr_cpus = (__u32)b->nr_cpus;
	ro->nr_events = (__u32)b->nr_events;
	ro->perf_mask = b->perf_mask;
	ro->all_tasks = target->cpu_wide;
	ro->cpu_scope = layout->per_cpu;
	for (size_t i = 0; i < RB_TRIGGERS_MAX; i++)
		ro->has_filters |= cfg->triggers[i].nr_filter_ops > 0;
	ro->cpu_list = target->cpu_list != NULL;
	for (int i = 0; i < perf_cpu_map__nr(b->online); i++) {
		int cpu = perf_cpu_map__cpu(b->online, i).cpu;

		if (cpu >= 0 && cpu < RB_CPUS_MAX)
			ro->cpu_mask[cpu / 64] |= 1ull << (cpu % 64);
	}
}

/* Open the skeleton, give it the compiled tables, and load what is used. */
static int load_programs(struct range_bpf *b, const struct range_layout *layout,
			 const struct range_set_target *target, const struct rb_config *cfg,
			 char *why, size_t cap)
{
	int err;

	b->skel = range_gate_bpf__open();
	if (!b->skel) {
		explain_refusal(errno, "cannot open the range programs", why, cap);
		return -1;
	}
	set_constants(b, layout, target, cfg);
	b->skel->bss->cfg = *cfg;
	bpf_map__set_max_entries(b->skel->maps.counters,
				 (__u32)(b->nr_events ? b->nr_events : 1) * (__u32)b->nr_cpus);
	load_only_what_is_used(b, layout, cfg);
	err = range_gate_bpf__load(b->skel);
	if (err) {
		explain_refusal(-err > 0 ? -err : errno, "the kernel refused the range programs",
				why, cap);
		return -1;
	}
	return 0;
}

/* Put the per-CPU perf counters in the programs' counters array. */
static int hand_counters(struct range_bpf *b, char *why, size_t cap)
{
	for (size_t i = 0; i < b->nr_events * (size_t)b->nr_cpus; i++) {
		__u32 key = (__u32)i;

		if (b->fds[i] >= 0 &&
		    bpf_map_update_elem(bpf_map__fd(b->skel->maps.counters), &key, &b->fds[i], 0)) {
			explain_refusal(errno, "cannot hand the counters to the programs", why, cap);
			return -1;
		}
	}
	return 0;
}

/* Attach the programs and mark the tasks to measure: the workload before
 * its exec, the others once the programs run. */
static int attach_and_mark(struct range_bpf *b, const struct range_layout *layout,
			   const struct range_set_target *target, char *why, size_t cap)
{
	if (!target->cpu_wide && target->enable_on_exec) {
		for (size_t i = 0; i < target->nr_roots; i++)
			mark_task(b, target->roots[i], RB_TASK_AT_EXEC);
	}
	if (attach_all(b, layout, why, cap))
		return -1;
	if (!target->cpu_wide && !target->enable_on_exec)
		mark_threads(b, target);
	return 0;
}

/* The read buffers, and a first flush: marked tasks that run now are
 * measured from here on. */
static int first_reading(struct range_bpf *b, char *why, size_t cap)
{
	b->values = calloc((RB_VIEWS_MAX + 1) * RB_EVENTS_MAX, sizeof(uint64_t));
	b->percpu = calloc((size_t)b->nr_cpus, sizeof(struct rb_sums));
	if (!b->values || !b->percpu) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	b->skel->bss->flush_at_load = true;
	range_bpf_refresh(b);
	b->skel->bss->flush_at_load = false;
	return 0;
}

struct range_bpf *range_bpf_new(const struct range_layout *layout,
				const struct range_set_target *target, bool *unfit,
				char *why, size_t cap)
{
	struct range_bpf *b = calloc(1, sizeof(*b));
	struct rb_config *cfg = calloc(1, sizeof(*cfg));

	*unfit = false;
	if (!b || !cfg) {
		snprintf(why, cap, "out of memory");
		free(b);
		free(cfg);
		return NULL;
	}
	libbpf_set_print(libbpf_quiet);
	clock_gettime(CLOCK_MONOTONIC, &b->opened);
	if (find_cpus(b, target, why, cap))
		goto fail;
	b->event_of_member = calloc(layout->nr_events + 1, sizeof(int));
	b->first_of = calloc(layout->nr_events + 1, sizeof(size_t));
	if (!b->event_of_member || !b->first_of) {
		snprintf(why, cap, "out of memory");
		goto fail;
	}
	if (range_compile(layout, cfg, b->event_of_member, b->first_of, &b->nr_events, why, cap)) {
		*unfit = true;
		goto fail;
	}
	if (open_counters(b, layout, why, cap) || load_programs(b, layout, target, cfg, why, cap) ||
	    hand_counters(b, why, cap) || attach_and_mark(b, layout, target, why, cap) ||
	    first_reading(b, why, cap))
		goto fail;
	free(cfg);
	return b;
fail:
	free(cfg);
	range_bpf_free(b);
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

void range_bpf_free(struct range_bpf *b)
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

/* ---- as a range backend ----------------------------------------------------- */

static void *bpf_start(const struct range_layout *layout, const struct range_set_target *target,
		       struct event_base *base, bool *unfit, char *why, size_t cap)
{
	(void)base;	/* the programs need no loop: values are read on demand */
	return range_bpf_new(layout, target, unfit, why, cap);
}

static void bpf_drain(void *obj, enum range_drain how)
{
	(void)how;	/* nothing waits in a buffer: the sums are whole */
	range_bpf_refresh(obj);
}

/* The end of the run and "range unload" alike: the programs detach, the
 * counters close, the values freeze (a second call changes nothing). */
static void bpf_finish(void *obj)
{
	range_bpf_unload(obj);
}

static void bpf_read_member(void *obj, size_t member, struct counter_value *value)
{
	value->val = range_bpf_total(obj, member, &value->ena);
	value->run = value->ena;
}

static bool bpf_supported(const void *obj, size_t member)
{
	return range_bpf_supported(obj, member);
}

static uint64_t bpf_value(const void *obj, size_t view, size_t member)
{
	return range_bpf_value(obj, view, member);
}

static uint64_t bpf_lost(const void *obj)
{
	return range_bpf_missed(obj);
}

static void bpf_free(void *obj)
{
	range_bpf_free(obj);
}

const struct range_backend_ops range_bpf_backend = {
	.in_kernel = true,
	.start = bpf_start,
	.drain = bpf_drain,
	.finish = bpf_finish,
	.release = bpf_finish,
	.read_member = bpf_read_member,
	.supported = bpf_supported,
	.value = bpf_value,
	.lost = bpf_lost,
	.free = bpf_free,
};
