/*
 * session: the run's lifecycle -- events resolved, counters opened, views
 * attached, the event loop, the final report.  Control commands are
 * dispatched in commands.c, which main() hands in as the channels' line
 * handler; report rows are built from the run in agent/report/rows.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <event2/event.h>
#include <jansson.h>
#include <perf/core.h>

#include "agent/report/aggr.h"
#include "agent/count/cgroup.h"
#include "agent/control/channel_lock.h"
#include "agent/report/json_report.h"
#include "agent/base/log.h"
#include "agent/metrics/metrics.h"
#include "agent/report/repeat.h"
#include "agent/report/rows.h"
#include "agent/session.h"
#include "agent/control/control.h"
#include "agent/count/counter.h"
#include "agent/base/options.h"
#include "agent/base/output.h"
#include "agent/report/report.h"
#include "agent/report/run.h"
#include "agent/count/view.h"
#include "agent/count/window.h"
#include "agent/workload.h"
#include "agent/ranges/range_registry.h"
#include "agent/base/signals.h"
#include "agent/count/target.h"

/* What a session holds: private to this file; everything else goes
 * through session.h, and the reports read the run alone. */
struct session {
	struct run run;			/* what the reports read */
	control_line_fn on_line;	/* what serves a line of a control channel */
	bool released;			/* session_release() has run */

	struct json_t *window_index;	/* name -> index in run.windows: a command
					 * finds its window in O(1), however many */
	size_t nr_open_calls;		/* begins without an end, all windows */

	struct control_channel *channels;
	size_t nr_channels;
	struct control_channel *stop_channel;	/* acked after the final report */

	struct output output;		/* the report's destination */
	FILE *out;			/* output.fp: what the report writes to */
	struct report report;
	bool told_out_of_memory;	/* report.out_of_memory said on stderr */
	struct json_report *json;	/* the window-end reply and --json-file */

	struct workload workload;
	bool has_workload;
	int workload_ctl_fd, workload_ack_fd;	/* agent's ends, until a channel owns them */

	struct event_base *base;
	struct event *interval_timer, *delay_timer;
	struct event **signal_events;	/* SIGCHLD, then every run-ending signal */
	size_t nr_signal_events;
	struct event **target_watches;	/* -p/-t targets' pidfds */
	size_t nr_target_watches, targets_alive;
	struct metrics *metrics;	/* --metrics-*: agent/metrics/, or NULL */
	struct repeat *repeat;		/* -r N, N > 1: every run's rows, or NULL */
};

/* The plain -e events (or perf stat's default set when there is no -e at
 * all), each one counter with its default view; a -e list may give many
 * (a group, a pattern's matches).  Range specs are the range
 * registry's business. */
static int session_resolve_events(struct session *s)
{
	const struct options *opts = s->run.opts;
	struct event_def *defs = NULL;
	size_t n = 0;

	for (size_t i = 0; i < opts->nr_events; i++) {
		if (range_registry_is_spec(&opts->events[i]))
			continue;
		if (events_resolve(&opts->events[i], &defs, &n))
			goto fail;
	}
	for (size_t i = 0; !opts->nr_events && !opts->null_run && i < events_default_count; i++) {
		struct event_spec fallback = { .name = (char *)events_default_set[i] };

		/* As perf: counting CPUs (-a, -C), the clock is the CPUs'
		 * time, cpu-clock, rather than the tasks'. */
		if (i == 0 && (opts->system_wide || opts->cpu_list))
			fallback.name = "cpu-clock";

		if (events_resolve(&fallback, &defs, &n))
			goto fail;
	}
	s->run.counters = calloc(n ? n : 1, sizeof(*s->run.counters));
	s->run.default_views = calloc(n ? n : 1, sizeof(*s->run.default_views));
	if (!s->run.counters || !s->run.default_views) {
		log_error("out of memory");
		goto fail;	/* session_free frees what was made */
	}
	for (size_t i = 0; i < n; i++) {
		s->run.counters[i].def = defs[i];
		view_init(&s->run.default_views[i], &s->run.counters[i]);
	}
	s->run.nr_counters = n;
	free(defs);
	return range_registry_parse(s->run.ranges);
fail:
	for (size_t i = 0; i < n; i++)
		events_def_free(&defs[i]);
	free(defs);
	return -1;
}

/* libperf's own messages: only its errors are worth the user's attention.
 * They go through log.c, so that they queue behind the report when it is
 * on a stderr nobody reads instead of blocking the agent. */
static int session_libperf_print(enum libperf_print_level level, const char *fmt, va_list ap)
{
	char *text = NULL;
	int n;

	if (level != LIBPERF_ERR)
		return 0;
	n = vasprintf(&text, fmt, ap);
	if (n < 0) {
		log_error("libperf: an error, out of memory for its message");
		return n;
	}
	if (n > 0 && text[n - 1] == '\n')
		text[n - 1] = '\0';
	log_error("libperf: %s", text);
	free(text);
	return n;
}

/* perf's final report ends with a hint when the NMI watchdog holds a PMU
 * counter and some events were not counted; the report needs to know. */
static bool session_nmi_watchdog_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/nmi_watchdog", "re");
	int on = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	return on == 1;
}

/* The report's destination: stderr as perf stat's, -o FILE or --log-fd N,
 * written without ever blocking the loop (output.c). */
static int session_open_output(struct session *s)
{
	const struct options *opts = s->run.opts;
	enum report_format format = opts->json ? REPORT_JSON :
				    opts->csv_sep ? REPORT_CSV : REPORT_TEXT;
	char name[32];
	int rc;

	if (opts->quiet) {
		/* --quiet: the report is made and thrown away; as perf, no
		 * -o file is created. */
		rc = output_open_path(&s->output, "/dev/null", false, "output file");
	} else if (opts->output_path) {
		/* -r: the runs after the first append to what the first began. */
		bool later_run = s->repeat && s->repeat->runs_done > 0;

		rc = output_open_path(&s->output, opts->output_path, opts->append || later_run,
				      "output file");
		/* perf's header, at each run (so --append runs stay apart),
		 * once for all the runs of -r; ctime() ends the date with its
		 * own newline. */
		if (rc == 0 && !later_run) {
			time_t now = time(NULL);

			fprintf(s->output.fp, "# started on %s\n", ctime(&now));
		}
	} else if (opts->log_fd >= 0) {
		snprintf(name, sizeof(name), "fd %d", opts->log_fd);
		rc = output_open_fd(&s->output, opts->log_fd, name);
	} else {
		rc = output_open_fd(&s->output, STDERR_FILENO, "stderr");
	}
	if (rc)
		return -1;
	s->out = s->output.fp;
	report_init(&s->report, s->out, format, opts->csv_sep);
	s->report.interval_ns = (uint64_t)opts->interval_ms * 1000000u;
	s->report.no_big_num = opts->no_big_num;
	s->report.null_run = opts->null_run;
	s->report.csv_summary = opts->summary && !opts->no_csv_summary;
	s->report.nmi_watchdog = session_nmi_watchdog_on();
	s->report.aggr_mode = opts->aggr_mode;
	return 0;
}

struct session *session_new(const struct options *opts, struct repeat *repeat,
			    control_line_fn on_line)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s) {
		log_error("cannot start a session: %s", strerror(ENOMEM));
		return NULL;
	}
	s->run.opts = opts;
	s->repeat = repeat;
	s->on_line = on_line;
	s->output.fd = -1;
	s->workload_ctl_fd = s->workload_ack_fd = -1;
	return s;
}

/* The workload's pid, or -1 without one. */
static pid_t session_workload_pid(const struct session *s)
{
	return s->has_workload ? s->workload.pid : -1;
}

int session_init(struct session *s)
{
	const struct options *opts = s->run.opts;

	/* Before any mmap: libperf learns the page size here. */
	libperf_init(session_libperf_print);
	s->run.target = target_describe(opts);
	s->json = json_report_new();
	s->run.ranges = range_registry_new(opts, s->repeat ? &s->repeat->told_range_fallback : NULL);
	/* A client that goes away must never kill the agent. */
	signal(SIGPIPE, SIG_IGN);
	if (!s->run.target || !s->json || !s->run.ranges) {
		log_error("cannot start a session: %s", strerror(ENOMEM));
		return -1;
	}
	if (session_resolve_events(s) || session_open_output(s) ||
	    (opts->json_file && json_report_open(s->json, opts->json_file)))
		return -1;
	s->base = event_base_new();
	/* Two priorities: signals and timers (priority 0) are served
	 * before any channel or ring buffer (the default, 1), so a flooding
	 * client cannot delay the interval lines or the end of the run. */
	if (!s->base || event_base_priority_init(s->base, 2) ||
	    output_attach(&s->output, s->base)) {
		log_error("cannot create the event loop");
		return -1;
	}
	return 0;
}

/* A report that left rows out for want of memory says so, once; the run
 * then fails (session_finish). */
static void session_say_report_short(struct session *s)
{
	if (!s->report.out_of_memory || s->told_out_of_memory)
		return;
	log_error("out of memory: the report lacks some of its lines");
	s->told_out_of_memory = true;
}

/* One interval's lines (-I), each view's delta since the last ones.  An
 * interval goes out whole or not at all: one the output has no room for
 * is dropped (its deltas with it) and counted.  The last one, at the end
 * of the run, is always queued. */
static void session_print_interval_lines(struct session *s, bool last)
{
	if (!last)
		output_stage(&s->output);
	range_registry_drain(s->run.ranges);	/* range values wait in ring buffers */
	rows_print_interval(&s->run, &s->report, s->json, ROWS_INTERVAL);
	session_say_report_short(s);
	if (!last && output_commit(&s->output, false))
		output_drop_interval(&s->output);
}

static void session_print_interval(struct session *s)
{
	session_print_interval_lines(s, false);
}

/* The last run's report: perf stat's final one, or -r's of all the runs;
 * with -I, the last partial interval, and then --summary's report or -v's
 * last lines. */
static void session_print_final(struct session *s)
{
	const struct options *opts = s->run.opts;
	enum rows_mode mode = ROWS_TOTAL;

	if (opts->interval_ms) {
		/* The last, partial interval, unless --interval-count ended the run. */
		if (!opts->interval_count || s->run.intervals_done < opts->interval_count)
			session_print_interval_lines(s, true);
		if (!opts->summary) {
			rows_print_verbose_end(&s->run, &s->report);
			session_say_report_short(s);
			return;
		}
		mode = ROWS_SHOWN;
	}
	if (s->repeat)
		repeat_print(s->repeat, &s->run, &s->report);
	else
		rows_print_final(&s->run, &s->report, mode);
	session_say_report_short(s);
}

/* --json-file: the run's document, with -r every run's values. */
static int session_write_json(struct session *s, int code)
{
	json_t *repeat = s->repeat ? repeat_json(s->repeat) : NULL;
	int rc;

	if (s->repeat && !repeat) {
		log_error("cannot write --json-file '%s': out of memory", s->run.opts->json_file);
		return -1;
	}
	rc = json_report_write(s->json, &s->run, code, repeat);
	json_decref(repeat);
	return rc;
}

/* Counters count from the workload's exec when the default window starts
 * open (no -D) and there is a workload to exec. */
static bool session_opens_at_exec(const struct session *s)
{
	return s->run.opts->delay_ms == 0 && s->has_workload &&
	       !s->run.opts->system_wide && !s->run.opts->cpu_list;
}

/* -G NAME: the cgroup's directory, which counters are opened on. */
static int session_open_cgroup(struct counter_target *target, const char *name)
{
	char path[4096];

	if (cgroup_find(name, path, sizeof(path)))
		return -1;
	target->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (target->cgroup_fd < 0) {
		log_error("-G: cannot open cgroup '%s' (%s): %s", name, path, strerror(errno));
		return -1;
	}
	target->cgroup = true;
	return 0;
}

/* -A, --per-*: the report's keys, and the default window's values kept
 * per CPU and thread to sum per key.  Named windows and ranges stay
 * summed over the whole target. */
static int session_track_aggr(struct session *s, const struct counter_target *target)
{
	s->run.aggr = aggr_map_new(s->run.opts->aggr_mode, target);
	if (!s->run.aggr) {
		if (errno == ENOMEM)
			log_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < s->run.nr_counters; i++)
		if (view_track_positions(&s->run.default_views[i], s->run.aggr->nr_cpus,
					 s->run.aggr->nr_threads)) {
			log_error("out of memory");
			return -1;
		}
	return 0;
}

/* One read for all software and tracepoint counters (counter_open_read_group):
 * 0, or -1 out of memory (said). */
static int session_open_read_group(struct session *s, const struct counter_target *target)
{
	struct counter **members = malloc((s->run.nr_counters ? s->run.nr_counters : 1) * sizeof(*members));
	size_t n = 0;
	int rc;

	if (!members) {
		log_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < s->run.nr_counters; i++)
		if (counter_may_join_read_group(&s->run.counters[i], target))
			members[n++] = &s->run.counters[i];
	rc = counter_open_read_group(members, n, target);
	free(members);
	if (rc) {
		log_error("out of memory");
		return -1;
	}
	return 0;
}

static int session_open_counters_once(struct session *s)
{
	struct counter_target target;
	int rc = 0;

	if (target_build(&target, s->run.opts, s->has_workload ? s->workload.pid : -1))
		return -1;
	target.enable_on_exec = session_opens_at_exec(s);
	if (s->run.opts->cgroup && session_open_cgroup(&target, s->run.opts->cgroup)) {
		target_free(&target);
		return -1;
	}
	for (size_t i = 0; i < s->run.nr_counters && !rc; i++) {
		size_t n = s->run.counters[i].def.group_n;

		/* As perf 6.1: an event that cannot open on every listed CPU
		 * is <not supported>, and the run goes on. */
		if (target.cpus_missing && s->run.counters[i].def.tool == EVENT_TOOL_NONE &&
		    !s->run.counters[i].backing) {
			s->run.counters[i].supported = false;
			continue;
		}
		if (n > 1) {
			rc = counter_open_group(&s->run.counters[i], n, &target);
			i += n - 1;
		} else {
			rc = counter_open(&s->run.counters[i], &target);
		}
	}
	if (!rc)
		rc = session_open_read_group(s, &target);
	if (!rc && s->run.opts->aggr_mode != AGGR_GLOBAL)
		rc = session_track_aggr(s, &target);
	if (target.cgroup)
		close(target.cgroup_fd);	/* the counters have theirs */
	target_free(&target);
	/* -r: perf warns at its one open, before the first run. */
	for (size_t i = 0; i < s->run.nr_counters && !rc && s->run.opts->verbose &&
	     (!s->repeat || s->repeat->runs_done == 0); i++)
		if (!s->run.counters[i].supported)
			log_info("Warning:\n%s event is not supported by the kernel.",
				 s->run.counters[i].def.name);
	return rc;
}

/* --per-thread -a with a group {a,b}: how many thread maps to try when
 * threads keep ending between the reading of /proc and the opening of the
 * group (libperf opens a group on every thread or on none). */
#define SESSION_THREAD_MAP_TRIES 20

static int session_open_counters(struct session *s)
{
	int rc;

	for (int tries = 1;; tries++) {
		rc = session_open_counters_once(s);
		if (rc != -ESRCH)
			return rc;
		for (size_t i = 0; i < s->run.nr_counters; i++)
			counter_close(&s->run.counters[i]);
		if (tries == SESSION_THREAD_MAP_TRIES) {
			log_error("--per-thread -a: threads kept ending before their counters "
				  "opened, %d times; try again", tries);
			return -1;
		}
	}
}

/* perf's CPU identifier ("AuthenticAMD-26-2-1": vendor, family, model and
 * stepping, the last two in hex), which perf -v prints first; from
 * /proc/cpuinfo, where the kernel decoded CPUID the same way.  Nothing on
 * machines whose cpuinfo has no such fields. */
static void session_say_cpuid(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[256], vendor[64] = "";
	long family = -1, model = -1, stepping = -1;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && stepping < 0) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (strncmp(line, "vendor_id", 9) == 0)
			sscanf(colon + 1, " %63s", vendor);
		else if (strncmp(line, "cpu family", 10) == 0)
			family = strtol(colon + 1, NULL, 10);
		else if (strncmp(line, "model\t", 6) == 0)
			model = strtol(colon + 1, NULL, 10);
		else if (strncmp(line, "stepping", 8) == 0)
			stepping = strtol(colon + 1, NULL, 10);
	}
	fclose(f);
	if (*vendor && family >= 0 && model >= 0 && stepping >= 0)
		log_info("Using CPUID %s-%ld-%lX-%lX", vendor, family, model, stepping);
}

/*
 * Every workload gets a private channel of its own (PERFGATE_CTL_FD and
 * PERFGATE_ACK_FD), --control or not, so "perfgate -- ./prog" is all a
 * program instrumented with libperfgate needs.  Returns the workload's ends,
 * and its lock page (proto/ctl_lock.h; -1 when none could be made).
 */
static int session_make_workload_channel(struct session *s, int child_fds[3])
{
	int ctl[2], ack[2];

	if (pipe2(ctl, O_CLOEXEC) || pipe2(ack, O_CLOEXEC)) {
		log_error("cannot create the workload's control channel: %s", strerror(errno));
		return -1;
	}
	s->workload_ctl_fd = ctl[0];
	s->workload_ack_fd = ack[1];
	child_fds[0] = ctl[1];
	child_fds[1] = ack[0];
	child_fds[2] = channel_lock_create(ctl[1], ack[0]);
	return 0;
}

static int session_open_channels(struct session *s)
{
	const struct options *opts = s->run.opts;

	s->channels = calloc(opts->nr_controls + 1, sizeof(*s->channels));
	if (!s->channels) {
		log_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < opts->nr_controls; i++) {
		if (control_open(&s->channels[i], &opts->controls[i], s->base, s->on_line, s))
			return -1;
		s->nr_channels = i + 1;
	}
	if (s->workload_ctl_fd >= 0) {
		if (control_open_fds(&s->channels[s->nr_channels], s->workload_ctl_fd,
				     s->workload_ack_fd, "workload", s->base, s->on_line, s))
			return -1;
		s->nr_channels++;
		s->workload_ctl_fd = s->workload_ack_fd = -1;	/* the channel owns them */
	}
	return control_check_channels(s->channels, s->nr_channels);
}

/*
 * Open the default window.  At exec, counters start from zero.  At the
 * start of a run, so do counters the start-up ranges back: their groups
 * count from the moment they were enabled, and the plain view must see
 * the same counts as the range views for E@R + E@!R == E to hold.
 */
static void session_open_default_window(struct session *s, bool at_exec, bool at_start)
{
	range_registry_drain(s->run.ranges);	/* counters the ranges back are read as of now */
	counter_batch_begin();
	for (size_t i = 0; i < s->run.nr_counters; i++) {
		if (at_exec || (at_start && s->run.counters[i].backing))
			view_open_at_exec(&s->run.default_views[i]);
		else
			view_open(&s->run.default_views[i]);
	}
	counter_batch_end();
}

static void session_start_interval_timer(struct session *s)
{
	struct timeval tv = { s->run.opts->interval_ms / 1000, (s->run.opts->interval_ms % 1000) * 1000 };

	event_add(s->interval_timer, &tv);
}

/*
 * -D MS elapsed: as perf 6.1, the run's clock starts now (elapsed time and
 * interval timestamps count from here, intervals start now) and stderr
 * says "Events enabled".
 */
static void on_delay_elapsed(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	(void)fd, (void)what;
	session_open_default_window(s, false, false);
	clock_gettime(CLOCK_MONOTONIC, &s->run.started);
	for (size_t i = 0; i < s->run.nr_counters; i++)
		counter_tool_start(&s->run.counters[i], &s->run.started);
	if (s->interval_timer)
		session_start_interval_timer(s);
	log_info("Events enabled");
}

static void on_interval(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	(void)fd, (void)what;
	/* Every view of a counter (the default one, each window's) shares
	 * one read of it per interval. */
	counter_reading_begin();
	session_print_interval(s);
	metrics_interval(s->metrics);
	counter_reading_end();
	if (!s->run.opts->interval_count || ++s->run.intervals_done < s->run.opts->interval_count)
		return;
	/* As perf stat: the count ends the printing; a workload still runs
	 * to its end and its status passes through.  Without one, the run
	 * ends here. */
	event_del(s->interval_timer);
	if (!s->has_workload)
		session_end(s, 0);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct session *s = arg;

	(void)what;
	if (sig == SIGCHLD) {
		if (s->has_workload && workload_reap(&s->workload, false)) {
			clock_gettime(CLOCK_MONOTONIC, &s->run.ended);
			event_base_loopbreak(s->base);
		}
		return;
	}
	session_end(s, (int)sig);
}

static void on_target_ended(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	(void)what;
	for (size_t i = 0; i < s->nr_target_watches; i++) {
		if (s->target_watches[i] && event_get_fd(s->target_watches[i]) == fd) {
			event_free(s->target_watches[i]);
			s->target_watches[i] = NULL;
			close(fd);
			s->targets_alive--;
		}
	}
	if (s->targets_alive == 0)
		session_end(s, 0);
}

/* -p/-t: the run ends when the last target ends, as perf stat's does. */
/* Close fds[from..nr), no watch holds them, and free fds. */
static void session_close_fds(int *fds, size_t from, size_t nr)
{
	for (size_t i = from; i < nr; i++)
		close(fds[i]);
	free(fds);
}

static int session_watch_targets(struct session *s)
{
	int *fds;
	size_t nr = target_pidfds(s->run.opts, &fds);

	s->target_watches = calloc(nr ? nr : 1, sizeof(*s->target_watches));
	if (!s->target_watches) {
		session_close_fds(fds, 0, nr);
		log_error("out of memory");
		return -1;
	}
	s->nr_target_watches = nr;	/* session_free closes those watched */
	for (size_t i = 0; i < nr; i++) {
		s->target_watches[i] = event_new(s->base, fds[i], EV_READ, on_target_ended, s);
		if (!s->target_watches[i] || event_add(s->target_watches[i], NULL)) {
			if (!s->target_watches[i])
				log_error("out of memory");
			session_close_fds(fds, s->target_watches[i] ? i + 1 : i, nr);
			return -1;
		}
	}
	s->targets_alive = nr;
	free(fds);
	return 0;
}

static int session_add_timers(struct session *s)
{
	const struct options *opts = s->run.opts;
	int signals[SIGNALS_ENDING_MAX + 1] = { SIGCHLD };
	size_t nr = 1 + signals_ending(signals + 1);

	s->signal_events = calloc(nr, sizeof(*s->signal_events));
	if (!s->signal_events) {
		log_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < nr; i++) {
		s->signal_events[i] = evsignal_new(s->base, signals[i], on_signal, s);
		if (!s->signal_events[i] || event_priority_set(s->signal_events[i], 0) ||
		    event_add(s->signal_events[i], NULL)) {
			if (!s->signal_events[i])
				log_error("out of memory");
			return -1;
		}
		s->nr_signal_events = i + 1;
	}
	if (opts->interval_ms) {
		s->interval_timer = event_new(s->base, -1, EV_PERSIST, on_interval, s);
		if (!s->interval_timer) {
			log_error("out of memory");
			return -1;
		}
		event_priority_set(s->interval_timer, 0);
		/* With -D MS, intervals start when the delay has elapsed. */
		if (opts->delay_ms <= 0)
			session_start_interval_timer(s);
	}
	if (opts->delay_ms > 0) {
		struct timeval tv = { opts->delay_ms / 1000, (opts->delay_ms % 1000) * 1000 };

		s->delay_timer = evtimer_new(s->base, on_delay_elapsed, s);
		if (!s->delay_timer) {
			log_error("out of memory");
			return -1;
		}
		event_priority_set(s->delay_timer, 0);
		event_add(s->delay_timer, &tv);
	}
	return 0;
}

int session_start(struct session *s)
{
	const struct options *opts = s->run.opts;

	int child_fds[3];

	if (opts->cgroup && range_registry_has_startup_specs(s->run.ranges)) {
		log_error("-G/--cgroup cannot be combined with range specs (EVENTS@GATE) yet");
		return -1;
	}
	s->has_workload = opts->nr_workload > 0;
	if (s->has_workload) {
		if (session_make_workload_channel(s, child_fds) ||
		    workload_prepare(&s->workload, opts->workload, child_fds))
			return -1;
		close(child_fds[0]);
		close(child_fds[1]);
		if (child_fds[2] >= 0)
			close(child_fds[2]);
	}
	/* -r: perf says these once, then which run each starts. */
	if (opts->verbose && (!s->repeat || s->repeat->runs_done == 0)) {
		session_say_cpuid();
		if (!opts->nr_controls)
			log_info("Control descriptor is not initialized");
	}
	if (opts->verbose && s->repeat)	/* on the report's output, as perf */
		fprintf(s->out, "[ perf stat: executing run #%u ... ]\n", s->repeat->runs_done + 1);
	if (range_registry_start(s->run.ranges, s->run.counters, s->run.nr_counters,
				 session_workload_pid(s), s->base) ||
	    session_open_counters(s) || session_open_channels(s) || session_add_timers(s) ||
	    session_watch_targets(s) || metrics_start(&s->metrics, &s->run, s->base))
		return -1;
	if (opts->delay_ms == 0)
		session_open_default_window(s, session_opens_at_exec(s), true);
	else if (opts->delay_ms > 0)
		log_info("Events disabled");	/* perf's line; "Events enabled" follows */
	clock_gettime(CLOCK_MONOTONIC, &s->run.started);
	for (size_t i = 0; i < s->run.nr_counters; i++)
		counter_tool_start(&s->run.counters[i], &s->run.started);
	if (s->has_workload && workload_start(&s->workload, opts->workload[0]))
		return -1;
	return 0;
}

void session_end(struct session *s, int sig)
{
	if (sig && !s->run.exit_signal)
		s->run.exit_signal = sig;
	clock_gettime(CLOCK_MONOTONIC, &s->run.ended);
	event_base_loopbreak(s->base);
}

void session_run(struct session *s)
{
	/* The workload may have exited before the SIGCHLD handler existed. */
	if (s->has_workload && workload_reap(&s->workload, false))
		clock_gettime(CLOCK_MONOTONIC, &s->run.ended);
	else
		event_base_dispatch(s->base);
	/* As perf stat: a run ended by us ends the workload too. */
	if (s->has_workload)
		workload_end(&s->workload, 3000);
}

/* The named window NAME, created (closed) when create is set. */
static struct window *session_window(struct session *s, const char *name, bool create)
{
	json_t *at = s->window_index ? json_object_get(s->window_index, name) : NULL;
	struct window **windows, *w;

	if (at)
		return s->run.windows[json_integer_value(at)];
	if (!create)
		return NULL;
	if (!s->window_index && !(s->window_index = json_object()))
		return NULL;
	windows = realloc(s->run.windows, (s->run.nr_windows + 1) * sizeof(*s->run.windows));
	if (!windows)
		return NULL;
	s->run.windows = windows;
	w = window_new(name, s->run.counters, s->run.nr_counters, (size_t)s->run.opts->call_values);
	if (!w)
		return NULL;
	if (json_object_set_new_nocheck(s->window_index, name,
					json_integer((json_int_t)s->run.nr_windows))) {
		window_free(w);
		return NULL;
	}
	s->run.windows[s->run.nr_windows] = w;
	return s->run.windows[s->run.nr_windows++];
}

const struct counter *session_counters(const struct session *s, size_t *n)
{
	*n = s->run.nr_counters;
	return s->run.counters;
}

size_t session_set_default_window(struct session *s, const char *event, bool open)
{
	size_t matched = 0;

	range_registry_drain(s->run.ranges);	/* counters the ranges back are read as of now */
	/* One batch, so that a read group switches once; closing releases
	 * every view before any is read (view_close_all). */
	counter_batch_begin();
	for (size_t i = 0; i < s->run.nr_counters; i++) {
		struct view *v = &s->run.default_views[i];

		if (*event && strcmp(v->counter->def.name, event) != 0)
			continue;
		matched++;
		if (open)
			view_open(v);
		else
			view_close_release(v);
	}
	counter_batch_end();
	for (size_t i = 0; !open && i < s->run.nr_counters; i++)
		if (s->run.default_views[i].released)
			view_close(&s->run.default_views[i]);
	return matched;
}

/* Windows live as long as the run: a client naming a new one per call
 * must not grow the agent without bound. */
#define WINDOWS_MAX 4096
/* Begins without an end over all windows: each holds a value per event
 * and per range view until its end (WINDOW_DEPTH_MAX bounds one window). */
#define OPEN_CALLS_MAX 4096

int session_window_begin(struct session *s, const char *name, char *reason, size_t len)
{
	struct window *w = session_window(s, name, false);
	uint64_t *ranges;
	size_t nr_ranges;

	if (!w && s->run.nr_windows >= WINDOWS_MAX) {
		snprintf(reason, len, "too many windows (at most %d in a run)", WINDOWS_MAX);
		return -1;
	}
	if (w && w->depth >= WINDOW_DEPTH_MAX) {
		snprintf(reason, len, "window '%s' is nested too deep "
			 "(at most %d begins without an end)", name, WINDOW_DEPTH_MAX);
		return -1;
	}
	if (s->nr_open_calls >= OPEN_CALLS_MAX) {
		snprintf(reason, len, "too many open windows (at most %d begins "
			 "without an end, all windows together)", OPEN_CALLS_MAX);
		return -1;
	}
	range_registry_drain(s->run.ranges);
	ranges = range_registry_values(s->run.ranges, &nr_ranges);
	if (!ranges && errno == ENOMEM)
		w = NULL;	/* the range values at the begin are part of it */
	else if (!w)
		w = session_window(s, name, true);
	if (!w || window_begin(w, ranges, nr_ranges)) {
		free(ranges);
		snprintf(reason, len, "window '%s': out of memory", name);
		return -1;
	}
	s->nr_open_calls++;
	return 0;
}

const char *session_window_end(struct session *s, const char *name, char *reason, size_t len)
{
	struct window *w = session_window(s, name, false);
	struct window_end_result result;
	const char *text;

	/* Before the views close: an event the ranges count is read from
	 * their sums as of this drain, as the range values of the reply. */
	range_registry_drain(s->run.ranges);
	if (!w || window_end(w, &result)) {
		snprintf(reason, len, "window '%s' is not open", name);
		return NULL;
	}
	s->nr_open_calls--;
	text = json_report_window_end(s->json, &s->run, w, &result, reason, len);
	free(result.ranges_at_begin);
	return text;
}

int session_snapshot(struct session *s, char *reason, size_t len)
{
	struct output *o = &s->output;
	size_t backlog = output_backlog(o), staged = 0;

	if (o->error) {
		snprintf(reason, len, "snapshot refused: the report output '%s' failed: %s",
			 o->name, strerror(o->error));
		return -1;
	}
	/* Already over: not even worth building. */
	if (backlog < OUTPUT_BACKLOG_MAX) {
		bool short_before = s->report.out_of_memory;
		int rc;

		output_stage(o);
		range_registry_drain(s->run.ranges);
		rows_print_interval(&s->run, &s->report, s->json, ROWS_TOTAL);
		session_say_report_short(s);
		staged = output_staged(o);
		rc = output_commit(o, true);
		o->refused_snapshots += rc != 0;
		if (!short_before && s->report.out_of_memory) {
			snprintf(reason, len, "snapshot: out of memory, some of its lines are missing");
			return -1;
		}
		if (rc == 0)
			return 0;
	} else {
		o->refused_snapshots++;
	}
	if (backlog)
		snprintf(reason, len, "snapshot refused: the report output's backlog would pass "
			 "its limit of %d bytes (its reader is not keeping up)", OUTPUT_BACKLOG_MAX);
	else
		snprintf(reason, len, "snapshot refused: it would be %zu bytes, more than the "
			 "report output's limit of %d bytes", staged, OUTPUT_BACKLOG_MAX);
	return -1;
}

int session_range_load(struct session *s, const char *name, const char *spec, char *reason,
		       size_t len)
{
	return range_registry_load(s->run.ranges, session_workload_pid(s), s->base, name, spec,
				   reason, len);
}

int session_range_unload(struct session *s, const char *name, char *reason, size_t len)
{
	return range_registry_unload(s->run.ranges, name, reason, len);
}

void session_stop(struct session *s, struct control_channel *ch)
{
	s->stop_channel = ch;
	s->run.stopped = true;
	for (size_t i = 0; i < s->nr_channels; i++)
		control_pause(&s->channels[i]);
	session_end(s, 0);
}

/* Tool events stop at the run's end ("seconds time elapsed" is their
 * duration_time) and learn the workload's CPU times. */
static void session_end_tools(struct session *s)
{
	uint64_t user_ns = 0, sys_ns = 0;

	if (s->run.ended.tv_sec == 0 && s->run.ended.tv_nsec == 0)
		clock_gettime(CLOCK_MONOTONIC, &s->run.ended);
	if (s->has_workload && !s->workload.running) {
		const struct rusage *ru = &s->workload.usage;

		s->run.workload_usage = ru;
		user_ns = (uint64_t)ru->ru_utime.tv_sec * 1000000000u +
			  (uint64_t)ru->ru_utime.tv_usec * 1000u;
		sys_ns = (uint64_t)ru->ru_stime.tv_sec * 1000000000u +
			 (uint64_t)ru->ru_stime.tv_usec * 1000u;
	}
	for (size_t i = 0; i < s->run.nr_counters; i++)
		counter_tool_end(&s->run.counters[i], &s->run.ended, user_ns, sys_ns);
}

/* At the end of the run every gate closes, so every view's sum is final. */
static void session_close_windows(struct session *s)
{
	view_close_all(s->run.default_views, s->run.nr_counters);
	for (size_t i = 0; i < s->run.nr_windows; i++)
		window_finish(s->run.windows[i]);
}

static void session_release(struct session *s)
{
	if (s->released)
		return;
	s->released = true;
	for (size_t i = 0; i < s->nr_channels; i++) {
		control_flush(&s->channels[i], 100);
		control_close(&s->channels[i]);
	}
	for (size_t i = 0; i < s->nr_signal_events; i++)
		event_free(s->signal_events[i]);
	free(s->signal_events);
	for (size_t i = 0; i < s->nr_target_watches; i++) {
		if (s->target_watches[i]) {
			close(event_get_fd(s->target_watches[i]));
			event_free(s->target_watches[i]);
		}
	}
	free(s->target_watches);
	metrics_free(s->metrics);	/* evhttp first: it lives on the base */
	s->metrics = NULL;
	if (s->interval_timer)
		event_free(s->interval_timer);
	if (s->delay_timer)
		event_free(s->delay_timer);
	for (size_t i = 0; i < s->run.nr_counters; i++) {
		view_free_positions(&s->run.default_views[i]);
		counter_close(&s->run.counters[i]);
		events_def_free(&s->run.counters[i].def);
	}
	aggr_map_free(s->run.aggr);
	range_registry_free(s->run.ranges);
	s->run.ranges = NULL;
	if (s->base)
		event_base_free(s->base);
	output_close(&s->output);
	s->out = NULL;
	json_report_free(s->json);
	for (size_t i = 0; i < s->run.nr_windows; i++)
		window_free(s->run.windows[i]);
	free(s->run.windows);
	json_decref(s->window_index);
	s->window_index = NULL;
	free(s->run.counters);
	free(s->run.default_views);
	free(s->channels);
	free(s->run.target);
}

void session_free(struct session *s)
{
	if (!s)
		return;
	session_release(s);
	free(s);
}

void session_abort(struct session *s)
{
	if (s->has_workload && s->workload.pid > 0) {
		/* A held child exits when its go pipe closes; one already
		 * running is ended as at any other end of a run. */
		if (s->workload.go_fd >= 0)
			close(s->workload.go_fd);
		s->workload.go_fd = -1;
		workload_end(&s->workload, 3000);
	}
	/* The reason for the failure may wait in the output's backlog. */
	output_finish(&s->output);
	session_release(s);
}

int session_finish(struct session *s)
{
	bool last = true;
	int code = 0;

	/* The workload is reaped: every thread left its final record. */
	range_registry_finish(s->run.ranges);
	session_end_tools(s);
	session_close_windows(s);
	if (s->has_workload)
		code = workload_exit_code(&s->workload);
	if (s->repeat) {
		repeat_record(s->repeat, &s->run, code);
		/* -r: a signal or "stop" ends the repetition too. */
		if (s->run.exit_signal || s->stop_channel)
			s->repeat->stopped = true;
		last = repeat_done(s->repeat);
	}
	/* -r -v: each run's own "NAME: count enabled running" lines. */
	if (s->repeat)
		rows_print_verbose_end(&s->run, &s->report);
	if (last)
		session_print_final(s);
	session_say_report_short(s);
	/* Rows left out of the report, or of a -r run's record. */
	if ((s->report.out_of_memory || (last && s->repeat && s->repeat->out_of_memory)) && !code)
		code = 1;
	fflush(s->out);
	if (last && s->run.opts->json_file && session_write_json(s, code) && !code)
		code = 1;
	range_registry_warn_lost(s->run.ranges);
	/* The report reaches its reader, or the run says it did not. */
	if (output_finish(&s->output) && !code)
		code = 1;
	/* Textfile and Pushgateway: failures count as --json-file's do. */
	if (metrics_finish(s->metrics) && !code)
		code = 1;
	/* The last thing "stop" waits for: report and document are written. */
	if (s->stop_channel)
		control_reply(s->stop_channel, true, NULL);
	session_release(s);
	if (s->run.exit_signal) {
		/* As perf stat: die of the signal that ended the run. */
		signal(s->run.exit_signal, SIG_DFL);
		raise(s->run.exit_signal);
	}
	return code;
}
