/*
 * options: perfgate's command line, with perf stat's options and meanings.
 *
 * options_parse() fills a struct options and validates each value on its own
 * (numbers, separators, --control specs); whether events exist is decided
 * later, when they are resolved.  Errors are printed with the offending
 * argument and a caret, and parsing fails.
 */
#ifndef PERFGATE_OPTIONS_H
#define PERFGATE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

/* One --control pair (or the seed's --ctl-fd/--ctl-fd-ack). */
struct control_spec {
	bool is_fifo;
	int ctl_fd, ack_fd;		/* fd: form; ack_fd -1 when absent */
	char *ctl_path, *ack_path;	/* fifo: form; ack_path NULL when absent */
	bool seed_spelling;		/* built by --ctl-fd/--ctl-fd-ack */
	bool shared;			/* --control-shared: other users' FIFOs allowed */
};

/* One --metrics-label NAME=VALUE. */
struct metrics_label {
	char *name, *value;
};

/* One event as the user wrote it in -e, with the --filter that follows it. */
struct event_spec {
	char *name;		/* an event list, or one range spec */
	char *filter;
	/* The -e value it came from and where in it: errors point there. */
	char *arg;
	size_t offset;
	bool pfm;		/* --pfm-events: names for libpfm4 */
};

/* How the report aggregates each event's values (perf stat's modes):
 * one row for the run, per CPU (-A), per thread, or per topology key. */
enum aggr_mode {
	AGGR_GLOBAL,	/* the default: summed over CPUs and threads */
	AGGR_NONE,	/* -A, --no-aggr: one row per CPU */
	AGGR_THREAD,	/* --per-thread: one row per thread of -p/-t */
	AGGR_CORE,	/* --per-core: per socket, die and core */
	AGGR_DIE,	/* --per-die */
	AGGR_SOCKET,	/* --per-socket */
	AGGR_NODE,	/* --per-node: per NUMA node */
};

/* --call-values at most: 8 bytes per event and 16 per call are kept, so
 * the cap bounds a window's memory at about 1.6 GB with 100 events. */
#define CALL_VALUES_MAX 1000000

struct options {
	struct event_spec *events;
	size_t nr_events;

	bool system_wide;	/* -a */
	char *cpu_list;		/* -C */
	char *pid_list;		/* -p */
	char *tid_list;		/* -t */
	bool no_inherit;	/* -i, --no-inherit */
	bool null_run;		/* -n: no default events, only the times */
	bool no_big_num;	/* --no-big-num (-B, perf's default, is a no-op) */
	enum aggr_mode aggr_mode;	/* -A, --per-thread, --per-core, ... */
	const char *aggr_option;	/* the option that chose it, for messages */
	char *cgroup;		/* -G, --cgroup NAME */

	long delay_ms;		/* -D: 0 none, -1 start disabled */
	struct control_spec *controls;
	size_t nr_controls;
	bool control_shared;	/* --control-shared */

	long interval_ms;	/* -I, 0 when absent */
	long interval_count;	/* --interval-count, 0 when absent */
	bool summary;		/* --summary: the final report after the -I lines too */
	bool no_csv_summary;	/* --no-csv-summary: no "summary" column with -x */
	bool quiet;		/* --quiet, -q: no report at all (messages stay) */
	int verbose;		/* -v: perf's per-counter "NAME: val ena run" lines */
	char *csv_sep;		/* -x */
	bool json;		/* -j */
	char *output_path;	/* -o */
	bool append;		/* --append */
	int log_fd;		/* --log-fd, -1 when absent */
	char *json_file;	/* --json-file: the whole run as one JSON document */
	int mmap_pages;		/* -m: ring-buffer data pages per CPU for ranges */
	int range_scope;	/* --range-scope: 0 auto, 1 thread, 2 cpu */
	int range_backend;	/* --range-backend: 0 auto, 1 bpf, 2 sample */
	long call_values;	/* --call-values: per-call values kept per window */
	long repeat;		/* -r: runs of the workload (1 without -r) */

	/* Prometheus (agent/metrics/, docs/metrics.md); NULL when absent. */
	char *metrics_listen;	/* --metrics-listen ADDR:PORT */
	char *metrics_textfile;	/* --metrics-textfile PATH.prom */
	char *metrics_push;	/* --metrics-push URL */
	char *metrics_job;	/* --metrics-job NAME (push; default "perfgate") */
	struct metrics_label *metrics_labels;	/* --metrics-label, in order */
	size_t nr_metrics_labels;

	char **workload;	/* argv after the options, NULL-terminated */
	int nr_workload;
};

/* Returns 0, 1 when the run should end successfully now (--help,
 * --version), or -1 after printing an error. */
int options_parse(struct options *opts, int argc, char **argv);
void options_free(struct options *opts);

#endif
