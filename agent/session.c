/*
 * session: the run's lifecycle -- events resolved, counters opened, views
 * attached, the event loop, the final report.  Control commands are
 * dispatched in commands.c; report rows are built in session_rows.c.
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
#include "agent/commands.h"
#include "agent/report/json_report.h"
#include "agent/base/log.h"
#include "agent/metrics/metrics.h"
#include "agent/report/repeat.h"
#include "agent/session.h"
#include "agent/ranges/range_registry.h"
#include "agent/report/session_rows.h"
#include "agent/base/signals.h"
#include "agent/count/target.h"

/* The plain -e events (or perf stat's default set when there is no -e at
 * all), each one counter with its default view; a -e list may give many
 * (a group, a pattern's matches).  Range specs are the range
 * registry's business. */
static int session_resolve_events(struct session *s)
{
	const struct options *opts = s->opts;
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
	s->counters = calloc(n ? n : 1, sizeof(*s->counters));
	s->default_views = calloc(n ? n : 1, sizeof(*s->default_views));
	for (size_t i = 0; i < n; i++) {
		s->counters[i].def = defs[i];
		view_init(&s->default_views[i], &s->counters[i]);
	}
	s->nr_counters = n;
	free(defs);
	return range_registry_parse(s->ranges);
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
	if (n < 0)
		return n;
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
	const struct options *opts = s->opts;
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

int session_init(struct session *s, const struct options *opts, struct repeat *repeat)
{
	memset(s, 0, sizeof(*s));
	s->opts = opts;
	s->repeat = repeat;
	s->output.fd = -1;
	s->json_out.fd = -1;
	s->json_tmp_fd = -1;
	s->workload_ctl_fd = s->workload_ack_fd = -1;
	/* Before any mmap: libperf learns the page size here. */
	libperf_init(session_libperf_print);
	s->target = target_describe(opts);
	/* A client that goes away must never kill the agent. */
	signal(SIGPIPE, SIG_IGN);
	s->ranges = range_registry_new(opts, repeat ? &repeat->told_range_fallback : NULL);
	if (!s->ranges) {
		log_error("out of memory");
		return -1;
	}
	if (session_resolve_events(s) || session_open_output(s) ||
	    (opts->json_file && json_report_open(s, opts->json_file)))
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

/* Counters count from the workload's exec when the default window starts
 * open (no -D) and there is a workload to exec. */
static bool session_opens_at_exec(const struct session *s)
{
	return s->opts->delay_ms == 0 && s->has_workload &&
	       !s->opts->system_wide && !s->opts->cpu_list;
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
	s->aggr = aggr_map_new(s->opts->aggr_mode, target);
	if (!s->aggr)
		return -1;
	for (size_t i = 0; i < s->nr_counters; i++)
		view_track_positions(&s->default_views[i], s->aggr->nr_cpus, s->aggr->nr_threads);
	return 0;
}

/* One read for all software and tracepoint counters (counter_open_read_group). */
static void session_open_read_group(struct session *s, const struct counter_target *target)
{
	struct counter **members = malloc((s->nr_counters ? s->nr_counters : 1) * sizeof(*members));
	size_t n = 0;

	if (!members)
		return;
	for (size_t i = 0; i < s->nr_counters; i++)
		if (counter_may_join_read_group(&s->counters[i], target))
			members[n++] = &s->counters[i];
	counter_open_read_group(members, n, target);
	free(members);
}

static int session_open_counters_once(struct session *s)
{
	struct counter_target target;
	int rc = 0;

	if (target_build(&target, s->opts, s->has_workload ? s->workload.pid : -1))
		return -1;
	target.enable_on_exec = session_opens_at_exec(s);
	if (s->opts->cgroup && session_open_cgroup(&target, s->opts->cgroup)) {
		target_free(&target);
		return -1;
	}
	for (size_t i = 0; i < s->nr_counters && !rc; i++) {
		size_t n = s->counters[i].def.group_n;

		/* As perf 6.1: an event that cannot open on every listed CPU
		 * is <not supported>, and the run goes on. */
		if (target.cpus_missing && s->counters[i].def.tool == EVENT_TOOL_NONE &&
		    !s->counters[i].backing) {
			s->counters[i].supported = false;
			continue;
		}
		if (n > 1) {
			rc = counter_open_group(&s->counters[i], n, &target);
			i += n - 1;
		} else {
			rc = counter_open(&s->counters[i], &target);
		}
	}
	if (!rc)
		session_open_read_group(s, &target);
	if (!rc && s->opts->aggr_mode != AGGR_GLOBAL)
		rc = session_track_aggr(s, &target);
	if (target.cgroup)
		close(target.cgroup_fd);	/* the counters have theirs */
	target_free(&target);
	/* -r: perf warns at its one open, before the first run. */
	for (size_t i = 0; i < s->nr_counters && !rc && s->opts->verbose &&
	     (!s->repeat || s->repeat->runs_done == 0); i++)
		if (!s->counters[i].supported)
			log_info("Warning:\n%s event is not supported by the kernel.",
				 s->counters[i].def.name);
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
		for (size_t i = 0; i < s->nr_counters; i++)
			counter_close(&s->counters[i]);
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
	const struct options *opts = s->opts;

	s->channels = calloc(opts->nr_controls + 1, sizeof(*s->channels));
	for (size_t i = 0; i < opts->nr_controls; i++) {
		if (control_open(&s->channels[i], &opts->controls[i], s->base,
				 commands_on_line, s))
			return -1;
		s->nr_channels = i + 1;
	}
	if (s->workload_ctl_fd >= 0) {
		if (control_open_fds(&s->channels[s->nr_channels], s->workload_ctl_fd,
				     s->workload_ack_fd, "workload", s->base, commands_on_line, s))
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
	range_registry_drain(s->ranges);	/* counters the ranges back are read as of now */
	counter_batch_begin();
	for (size_t i = 0; i < s->nr_counters; i++) {
		if (at_exec || (at_start && s->counters[i].backing))
			view_open_at_exec(&s->default_views[i]);
		else
			view_open(&s->default_views[i]);
	}
	counter_batch_end();
}

static void session_start_interval_timer(struct session *s)
{
	struct timeval tv = { s->opts->interval_ms / 1000, (s->opts->interval_ms % 1000) * 1000 };

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
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	for (size_t i = 0; i < s->nr_counters; i++)
		counter_tool_start(&s->counters[i], &s->started);
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
	metrics_interval(s);
	counter_reading_end();
	if (!s->opts->interval_count || ++s->intervals_done < s->opts->interval_count)
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
			clock_gettime(CLOCK_MONOTONIC, &s->ended);
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
static int session_watch_targets(struct session *s)
{
	int *fds;
	size_t nr = target_pidfds(s->opts, &fds);

	s->target_watches = calloc(nr ? nr : 1, sizeof(*s->target_watches));
	for (size_t i = 0; i < nr; i++) {
		s->target_watches[i] = event_new(s->base, fds[i], EV_READ, on_target_ended, s);
		if (!s->target_watches[i] || event_add(s->target_watches[i], NULL)) {
			free(fds);
			return -1;
		}
	}
	s->nr_target_watches = s->targets_alive = nr;
	free(fds);
	return 0;
}

static int session_add_timers(struct session *s)
{
	const struct options *opts = s->opts;
	int signals[SIGNALS_ENDING_MAX + 1] = { SIGCHLD };
	size_t nr = 1 + signals_ending(signals + 1);

	s->signal_events = calloc(nr, sizeof(*s->signal_events));
	for (size_t i = 0; i < nr; i++) {
		s->signal_events[i] = evsignal_new(s->base, signals[i], on_signal, s);
		if (!s->signal_events[i] || event_priority_set(s->signal_events[i], 0) ||
		    event_add(s->signal_events[i], NULL))
			return -1;
		s->nr_signal_events = i + 1;
	}
	if (opts->interval_ms) {
		s->interval_timer = event_new(s->base, -1, EV_PERSIST, on_interval, s);
		event_priority_set(s->interval_timer, 0);
		/* With -D MS, intervals start when the delay has elapsed. */
		if (opts->delay_ms <= 0)
			session_start_interval_timer(s);
	}
	if (opts->delay_ms > 0) {
		struct timeval tv = { opts->delay_ms / 1000, (opts->delay_ms % 1000) * 1000 };

		s->delay_timer = evtimer_new(s->base, on_delay_elapsed, s);
		event_priority_set(s->delay_timer, 0);
		event_add(s->delay_timer, &tv);
	}
	return 0;
}

int session_start(struct session *s)
{
	const struct options *opts = s->opts;

	int child_fds[3];

	if (opts->cgroup && range_registry_has_startup_specs(s->ranges)) {
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
	if (range_registry_start(s->ranges, s->counters, s->nr_counters,
				 s->has_workload ? s->workload.pid : -1, s->base) ||
	    session_open_counters(s) || session_open_channels(s) || session_add_timers(s) ||
	    session_watch_targets(s) || metrics_start(s))
		return -1;
	if (opts->delay_ms == 0)
		session_open_default_window(s, session_opens_at_exec(s), true);
	else if (opts->delay_ms > 0)
		log_info("Events disabled");	/* perf's line; "Events enabled" follows */
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	for (size_t i = 0; i < s->nr_counters; i++)
		counter_tool_start(&s->counters[i], &s->started);
	if (s->has_workload && workload_start(&s->workload, opts->workload[0]))
		return -1;
	return 0;
}

void session_end(struct session *s, int sig)
{
	if (sig && !s->exit_signal)
		s->exit_signal = sig;
	clock_gettime(CLOCK_MONOTONIC, &s->ended);
	event_base_loopbreak(s->base);
}

void session_run(struct session *s)
{
	/* The workload may have exited before the SIGCHLD handler existed. */
	if (s->has_workload && workload_reap(&s->workload, false))
		clock_gettime(CLOCK_MONOTONIC, &s->ended);
	else
		event_base_dispatch(s->base);
	/* As perf stat: a run ended by us ends the workload too. */
	if (s->has_workload)
		workload_end(&s->workload, 3000);
}

struct window *session_window(struct session *s, const char *name, bool create)
{
	json_t *at = s->window_index ? json_object_get(s->window_index, name) : NULL;
	struct window **windows, *w;

	if (at)
		return s->windows[json_integer_value(at)];
	if (!create)
		return NULL;
	if (!s->window_index && !(s->window_index = json_object()))
		return NULL;
	windows = realloc(s->windows, (s->nr_windows + 1) * sizeof(*s->windows));
	if (!windows)
		return NULL;
	s->windows = windows;
	w = window_new(name, s->counters, s->nr_counters, (size_t)s->opts->call_values);
	if (!w)
		return NULL;
	if (json_object_set_new_nocheck(s->window_index, name,
					json_integer((json_int_t)s->nr_windows))) {
		window_free(w);
		return NULL;
	}
	s->windows[s->nr_windows] = w;
	return s->windows[s->nr_windows++];
}

/* Tool events stop at the run's end ("seconds time elapsed" is their
 * duration_time) and learn the workload's CPU times. */
static void session_end_tools(struct session *s)
{
	uint64_t user_ns = 0, sys_ns = 0;

	if (s->ended.tv_sec == 0 && s->ended.tv_nsec == 0)
		clock_gettime(CLOCK_MONOTONIC, &s->ended);
	if (s->has_workload && !s->workload.running) {
		const struct rusage *ru = &s->workload.usage;

		user_ns = (uint64_t)ru->ru_utime.tv_sec * 1000000000u +
			  (uint64_t)ru->ru_utime.tv_usec * 1000u;
		sys_ns = (uint64_t)ru->ru_stime.tv_sec * 1000000000u +
			 (uint64_t)ru->ru_stime.tv_usec * 1000u;
	}
	for (size_t i = 0; i < s->nr_counters; i++)
		counter_tool_end(&s->counters[i], &s->ended, user_ns, sys_ns);
}

/* At the end of the run every gate closes, so every view's sum is final. */
static void session_close_windows(struct session *s)
{
	view_close_all(s->default_views, s->nr_counters);
	for (size_t i = 0; i < s->nr_windows; i++)
		window_finish(s->windows[i]);
}

static void session_free(struct session *s)
{
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
	metrics_free(s);	/* evhttp first: it lives on the base */
	if (s->interval_timer)
		event_free(s->interval_timer);
	if (s->delay_timer)
		event_free(s->delay_timer);
	for (size_t i = 0; i < s->nr_counters; i++) {
		view_free_positions(&s->default_views[i]);
		counter_close(&s->counters[i]);
		events_def_free(&s->counters[i].def);
	}
	aggr_map_free(s->aggr);
	range_registry_free(s->ranges);
	s->ranges = NULL;
	json_report_free(s);
	if (s->base)
		event_base_free(s->base);
	output_close(&s->output);
	s->out = NULL;
	json_report_discard(s);
	for (size_t i = 0; i < s->nr_windows; i++)
		window_free(s->windows[i]);
	free(s->windows);
	json_decref(s->window_index);
	s->window_index = NULL;
	free(s->counters);
	free(s->default_views);
	free(s->channels);
	free(s->target);
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
	session_free(s);
}

int session_finish(struct session *s)
{
	bool last = true;
	int code = 0;

	/* The workload is reaped: every thread left its final record. */
	range_registry_finish(s->ranges);
	session_end_tools(s);
	session_close_windows(s);
	if (s->has_workload)
		code = workload_exit_code(&s->workload);
	if (s->repeat) {
		repeat_record(s->repeat, s, code);
		/* -r: a signal or "stop" ends the repetition too. */
		if (s->exit_signal || s->stop_channel)
			s->repeat->stopped = true;
		last = repeat_done(s->repeat);
	}
	/* -r -v: each run's own "NAME: count enabled running" lines. */
	if (s->repeat)
		session_print_verbose_end(s);
	if (!last)
		;	/* -r: the last run reports them all */
	else if (s->opts->interval_ms) {
		/* The last, partial interval, unless --interval-count ended the run. */
		if (!s->opts->interval_count || s->intervals_done < s->opts->interval_count)
			session_print_last_interval(s);
		if (s->opts->summary)
			session_print_summary(s);
		else
			session_print_verbose_end(s);
	} else
		session_print_final(s);
	fflush(s->out);
	if (last && s->opts->json_file && json_report_write(s, code) && !code)
		code = 1;
	range_registry_warn_lost(s->ranges);
	/* The report reaches its reader, or the run says it did not. */
	if (output_finish(&s->output) && !code)
		code = 1;
	/* Textfile and Pushgateway: failures count as --json-file's do. */
	if (metrics_finish(s) && !code)
		code = 1;
	/* The last thing "stop" waits for: report and document are written. */
	if (s->stop_channel)
		control_reply(s->stop_channel, true, NULL);
	session_free(s);
	if (s->exit_signal) {
		/* As perf stat: die of the signal that ended the run. */
		signal(s->exit_signal, SIG_DFL);
		raise(s->exit_signal);
	}
	return code;
}
