/*
 * options: parse perf stat's command line into struct options.
 *
 * Only the syntax of each value is checked here.  The option table mirrors
 * perf stat's (same letters, same meanings) so scripts written for perf run
 * unchanged; --ctl-fd/--ctl-fd-ack are the spelling of the original perf
 * patch set, which scripts written for it still use.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/log.h"
#include "agent/base/options.h"

enum {
	OPT_FILTER = 256,
	OPT_PFM_EVENTS,
	OPT_CONTROL,
	OPT_CTL_FD,
	OPT_CTL_FD_ACK,
	OPT_CONTROL_SHARED,
	OPT_INTERVAL_COUNT,
	OPT_LOG_FD,
	OPT_APPEND,
	OPT_JSON_FILE,
	OPT_RANGE_SCOPE,
	OPT_RANGE_BACKEND,
	OPT_CALL_VALUES,
	OPT_NO_BIG_NUM,
	OPT_SUMMARY,
	OPT_NO_CSV_SUMMARY,
	OPT_TOPDOWN,
	OPT_VERSION,
	OPT_METRICS_LISTEN,
	OPT_METRICS_TEXTFILE,
	OPT_METRICS_PUSH,
	OPT_METRICS_JOB,
	OPT_METRICS_LABEL,
	OPT_PER_THREAD,
	OPT_PER_CORE,
	OPT_PER_DIE,
	OPT_PER_SOCKET,
	OPT_PER_NODE,
	OPT_NO_MERGE,
};

static const struct option long_options[] = {
	{ "event",		required_argument, NULL, 'e' },
	{ "filter",		required_argument, NULL, OPT_FILTER },
	{ "pfm-events",		required_argument, NULL, OPT_PFM_EVENTS },
	{ "all-cpus",		no_argument,	   NULL, 'a' },
	{ "cpu",		required_argument, NULL, 'C' },
	{ "pid",		required_argument, NULL, 'p' },
	{ "tid",		required_argument, NULL, 't' },
	{ "no-inherit",		no_argument,	   NULL, 'i' },
	{ "null",		no_argument,	   NULL, 'n' },
	{ "big-num",		no_argument,	   NULL, 'B' },
	{ "no-big-num",		no_argument,	   NULL, OPT_NO_BIG_NUM },
	{ "delay",		required_argument, NULL, 'D' },
	{ "control",		required_argument, NULL, OPT_CONTROL },
	{ "ctl-fd",		required_argument, NULL, OPT_CTL_FD },
	{ "ctl-fd-ack",		required_argument, NULL, OPT_CTL_FD_ACK },
	{ "control-shared",	no_argument,	   NULL, OPT_CONTROL_SHARED },
	{ "interval-print",	required_argument, NULL, 'I' },
	{ "interval-count",	required_argument, NULL, OPT_INTERVAL_COUNT },
	{ "summary",		no_argument,	   NULL, OPT_SUMMARY },
	{ "no-csv-summary",	no_argument,	   NULL, OPT_NO_CSV_SUMMARY },
	/* perf's metrics: known, so that they are refused with the reason. */
	{ "metrics",		required_argument, NULL, 'M' },
	{ "topdown",		no_argument,	   NULL, OPT_TOPDOWN },
	{ "quiet",		no_argument,	   NULL, 'q' },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "field-separator",	required_argument, NULL, 'x' },
	{ "json-output",	no_argument,	   NULL, 'j' },	/* perf's spelling */
	{ "json",		no_argument,	   NULL, 'j' },
	{ "output",		required_argument, NULL, 'o' },
	{ "append",		no_argument,	   NULL, OPT_APPEND },
	{ "log-fd",		required_argument, NULL, OPT_LOG_FD },
	{ "json-file",		required_argument, NULL, OPT_JSON_FILE },
	{ "mmap-pages",		required_argument, NULL, 'm' },
	{ "range-scope",	required_argument, NULL, OPT_RANGE_SCOPE },
	{ "range-backend",	required_argument, NULL, OPT_RANGE_BACKEND },
	{ "call-values",	required_argument, NULL, OPT_CALL_VALUES },
	{ "repeat",		required_argument, NULL, 'r' },
	{ "metrics-listen",	required_argument, NULL, OPT_METRICS_LISTEN },
	{ "metrics-textfile",	required_argument, NULL, OPT_METRICS_TEXTFILE },
	{ "metrics-push",	required_argument, NULL, OPT_METRICS_PUSH },
	{ "metrics-job",	required_argument, NULL, OPT_METRICS_JOB },
	{ "metrics-label",	required_argument, NULL, OPT_METRICS_LABEL },
	{ "no-aggr",		no_argument,	   NULL, 'A' },
	{ "per-thread",		no_argument,	   NULL, OPT_PER_THREAD },
	{ "per-core",		no_argument,	   NULL, OPT_PER_CORE },
	{ "per-die",		no_argument,	   NULL, OPT_PER_DIE },
	{ "per-socket",		no_argument,	   NULL, OPT_PER_SOCKET },
	{ "per-node",		no_argument,	   NULL, OPT_PER_NODE },
	{ "no-merge",		no_argument,	   NULL, OPT_NO_MERGE },
	{ "cgroup",		required_argument, NULL, 'G' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
"usage: perfgate [options] [--] [command [args...]]\n"
"\n"
"  -e, --event EVENTS         events to count, in perf's syntax: cycles:u, {a,b} groups,\n"
"                             pmu/term=v/, subsys:name[*], r1a3, duration_time (see\n"
"                             perfgate(1), EVENTS); EVENTS@GATE counts them inside ranges\n"
"                             (perfgate-ranges(7))\n"
"      --filter FILTER        tracepoint filter for the last event of the preceding -e\n"
"                             (each match of a pattern)\n"
"      --pfm-events EVENTS    events named the libpfm4 way (perf::PERF_COUNT_SW_TASK_CLOCK)\n"
"  -a, --all-cpus             system-wide on all CPUs\n"
"  -C, --cpu LIST             system-wide on the listed CPUs\n"
"  -p, --pid PIDS             attach to existing processes\n"
"  -t, --tid TIDS             attach to existing threads\n"
"  -i, --no-inherit           do not count the workload's children\n"
"  -n, --null                 null run: no default events, only the times\n"
"  -B, --big-num / --no-big-num  thousands separators of the locale (default on)\n"
"  -A, --no-aggr              one row per CPU (with -a or -C)\n"
"      --per-thread           one row per thread (with -p, -t, or -a: every thread)\n"
"      --per-core, --per-die, --per-socket, --per-node\n"
"                             one row per core, die, socket or NUMA node (with -a or -C)\n"
"      --no-merge             accepted; each event is on one PMU: nothing to merge\n"
"  -G, --cgroup NAME          count only tasks of cgroup NAME (with -a or -C)\n"
"  -D, --delay MS             start counting after MS ms; -1: only on 'enable'\n"
"      --control fd:CTL[,ACK] | fifo:CTL[,ACK]\n"
"                             control channel (repeatable)\n"
"      --ctl-fd N --ctl-fd-ack M  the same, as spelled by perf's first patch set\n"
"      --control-shared       accept control FIFOs owned by another user or\n"
"                             writable by group or others\n"
"  -I, --interval-print MS    print counts every MS ms\n"
"      --interval-count N     stop after N intervals\n"
"  -r, --repeat N             run the command N times: means and perf's ( +- x% )\n"
"      --summary              with -I, the final report after the interval lines\n"
"      --no-csv-summary       with --summary -x, no 'summary' first column\n"
"  -q, --quiet                print no report (messages and warnings stay)\n"
"  -v, --verbose              per-counter raw values (NAME: count enabled running)\n"
"  -x, --field-separator SEP  CSV-style output with SEP between fields\n"
"  -j, --json-output          one JSON object per counter line\n"
"  -o, --output FILE          write the report to FILE (default: stderr)\n"
"      --append               append to the -o file\n"
"      --log-fd N             write the report to file descriptor N\n"
"      --json-file FILE       also write the whole run as one JSON document\n"
"  -m, --mmap-pages PAGES     ring-buffer pages per CPU for the sample backend (1024)\n"
"      --range-scope thread|cpu  range state per thread or per CPU (default: per CPU\n"
"                             when every trigger fires in irq/timer context)\n"
"      --range-backend bpf|sample  count ranges in BPF, or from trigger samples\n"
"                             (default: BPF, falling back to samples with a note)\n"
"      --call-values N        per-call values kept per window for quantiles and\n"
"                             --json-file (default 1000; past it, a uniform sample)\n"
"      --metrics-listen ADDR:PORT  serve GET /metrics for Prometheus (e.g. 127.0.0.1:9464)\n"
"      --metrics-textfile PATH.prom  write the metrics to PATH at every -I and at the end\n"
"      --metrics-push URL     PUT the final metrics to a Pushgateway at URL\n"
"      --metrics-job NAME     the Pushgateway job (default: perfgate)\n"
"      --metrics-label NAME=VALUE  a label on every metric (repeatable)\n"
"  -h, --help                 this text\n"
"\n"
"See perfgate(1) and docs/protocol.md for the control protocol.\n";

static int bad_value(const char *opt, const char *value, size_t offset, const char *why)
{
	log_caret(value, offset, "invalid value for %s: %s", opt, why);
	return -1;
}

/* A decimal integer in [min, max]; the caret points at the first bad byte. */
static int parse_long(const char *opt, const char *value, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (end == value)
		return bad_value(opt, value, 0, "expected a number");
	if (*end)
		return bad_value(opt, value, (size_t)(end - value), "expected a number");
	if (errno == ERANGE || v < min || v > max) {
		char why[96];

		snprintf(why, sizeof(why), "out of range (%ld..%ld)", min, max);
		return bad_value(opt, value, 0, why);
	}
	*out = v;
	return 0;
}

/* Out of memory while parsing: the run cannot start. */
static int no_memory(void)
{
	log_error("out of memory");
	return -1;
}

/* An option's string value, replacing the one a former use gave. */
static int set_string(char **slot, const char *arg)
{
	char *copy = strdup(arg);

	if (!copy)
		return no_memory();
	free(*slot);
	*slot = copy;
	return 0;
}

/* Room for one more element of *array (of *nr, each size bytes), zeroed;
 * NULL when out of memory, the array then unchanged. */
static void *grow_one(void *array_ptr, size_t *nr, size_t size)
{
	void **array = array_ptr;
	char *grown = realloc(*array, (*nr + 1) * size);

	if (!grown)
		return NULL;
	*array = grown;
	memset(grown + *nr * size, 0, size);
	return grown + (*nr)++ * size;
}

static int parse_fd(const char *opt, const char *value, int *fd)
{
	long v;

	if (parse_long(opt, value, 0, INT_MAX, &v))
		return -1;
	*fd = (int)v;
	return 0;
}

static struct event_spec *new_event_spec(struct options *opts, const char *arg, size_t offset,
					 size_t len)
{
	struct event_spec *spec = grow_one(&opts->events, &opts->nr_events, sizeof(*spec));

	if (!spec)
		return NULL;
	spec->name = strndup(arg + offset, len);
	spec->arg = strdup(arg);
	spec->offset = offset;
	if (!spec->name || !spec->arg)
		return NULL;	/* options_free() frees what was made */
	return spec;
}

/*
 * A -e list goes whole to perf's event grammar (events.c), unless it holds
 * range specs ("EVENTS@GATE", perfgate-ranges(7)): then it is split on the
 * commas outside parentheses and braces, so that "(a,b)@GATE" stays
 * one spec, and each piece is a range spec or a list of its own.
 */
static int add_events(struct options *opts, const char *list)
{
	const char *start = list, *p;
	int depth = 0;

	if (*list == '\0') {
		log_caret(list, 0, "empty event list in -e");
		return -1;
	}
	if (!strchr(list, '@'))
		return new_event_spec(opts, list, 0, strlen(list)) ? 0 : no_memory();
	for (p = list;; p++) {
		if (*p == '(' || *p == '{')
			depth++;
		else if ((*p == ')' || *p == '}') && depth > 0)
			depth--;
		if ((*p == ',' && depth == 0) || *p == '\0') {
			if (p == start) {
				log_caret(list, (size_t)(p - list), "empty event name in -e");
				return -1;
			}
			if (!new_event_spec(opts, list, (size_t)(start - list),
					    (size_t)(p - start)))
				return no_memory();
			start = p + 1;
		}
		if (*p == '\0')
			return 0;
	}
}

/* --pfm-events: libpfm4's names, resolved by libpfm4 (event_pfm.h). */
static int add_pfm_events(struct options *opts, const char *list)
{
	if (*list == '\0') {
		log_caret(list, 0, "empty event list in --pfm-events");
		return -1;
	}
	struct event_spec *spec = new_event_spec(opts, list, 0, strlen(list));

	if (!spec)
		return no_memory();
	spec->pfm = true;
	return 0;
}

/* --filter applies to the last event of the -e before it, as in perf. */
static int set_filter(struct options *opts, const char *filter)
{
	struct event_spec *last;

	if (opts->nr_events == 0) {
		log_error("--filter must follow a -e option naming a tracepoint");
		return -1;
	}
	last = &opts->events[opts->nr_events - 1];
	return set_string(&last->filter, filter);
}

static struct control_spec *new_control(struct options *opts)
{
	struct control_spec *c = grow_one(&opts->controls, &opts->nr_controls, sizeof(*c));

	if (c)
		c->ctl_fd = c->ack_fd = -1;
	return c;
}

/* "fd:CTL[,ACK]" or "fifo:CTL[,ACK]", as perf stat --control. */
static int add_control(struct options *opts, const char *value)
{
	const char *rest, *comma;
	struct control_spec *c;
	bool fifo;

	if (strncmp(value, "fd:", 3) == 0)
		fifo = false, rest = value + 3;
	else if (strncmp(value, "fifo:", 5) == 0)
		fifo = true, rest = value + 5;
	else
		return bad_value("--control", value, 0, "expected fd:CTL[,ACK] or fifo:CTL[,ACK]");
	if (*rest == '\0' || *rest == ',')
		return bad_value("--control", value, (size_t)(rest - value), "missing control channel");
	comma = strchr(rest, ',');
	c = new_control(opts);
	if (!c)
		return no_memory();
	c->is_fifo = fifo;
	if (fifo) {
		if (comma && comma[1] == '\0')
			return bad_value("--control", value, (size_t)(comma + 1 - value), "missing ack FIFO after ','");
		c->ctl_path = comma ? strndup(rest, (size_t)(comma - rest)) : strdup(rest);
		c->ack_path = comma ? strdup(comma + 1) : NULL;
		return c->ctl_path && (!comma || c->ack_path) ? 0 : no_memory();
	}
	char *ctl = comma ? strndup(rest, (size_t)(comma - rest)) : strdup(rest);

	if (!ctl)
		return no_memory();
	int rc = parse_fd("--control", ctl, &c->ctl_fd);

	free(ctl);
	if (rc == 0 && comma)
		rc = parse_fd("--control", comma + 1, &c->ack_fd);
	return rc;
}

/* The patch set's --ctl-fd N [--ctl-fd-ack M]: one channel, either order. */
static struct control_spec *seed_control(struct options *opts)
{
	for (size_t i = 0; i < opts->nr_controls; i++)
		if (opts->controls[i].seed_spelling)
			return &opts->controls[i];
	struct control_spec *c = new_control(opts);

	if (c)
		c->seed_spelling = true;
	return c;
}

/* -m: a power of two, as the kernel needs for a ring buffer. */
static int parse_pages(struct options *opts, const char *arg)
{
	long pages;

	if (parse_long("-m", arg, 1, 1 << 20, &pages))
		return -1;
	if (pages & (pages - 1))
		return bad_value("-m", arg, 0, "expected a power of two (e.g. 64, 1024)");
	opts->mmap_pages = (int)pages;
	return 0;
}

/* One of two words, stored as 1 or 2 (0 stays "not given"). */
static int parse_choice(const char *opt, const char *arg, const char *first,
			const char *second, int *out)
{
	char why[96];

	if (strcmp(arg, first) == 0)
		*out = 1;
	else if (strcmp(arg, second) == 0)
		*out = 2;
	else {
		snprintf(why, sizeof(why), "expected '%s' or '%s'", first, second);
		return bad_value(opt, arg, 0, why);
	}
	return 0;
}

/* Where range state lives; without the option, per CPU when every trigger
 * fires in CPU context (irq, softirq, timers), else per thread. */
static int parse_range_scope(struct options *opts, const char *arg)
{
	return parse_choice("--range-scope", arg, "thread", "cpu", &opts->range_scope);
}

/* Where ranges are counted; without the option, in BPF when the kernel
 * allows it and the set fits, else from samples (perfgate-ranges(7)). */
static int parse_range_backend(struct options *opts, const char *arg)
{
	return parse_choice("--range-backend", arg, "bpf", "sample", &opts->range_backend);
}

/* Label names perfgate's own metrics use (docs/metrics.md), and "job",
 * which --metrics-job sets. */
static const char *const reserved_labels[] = {
	"event", "filter", "gate", "window", "range", "version", "job",
};

/* --metrics-label NAME=VALUE: NAME as Prometheus wants label names. */
static int add_metrics_label(struct options *opts, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct metrics_label *l;
	size_t len;

	if (!eq)
		return bad_value("--metrics-label", arg, strlen(arg), "expected NAME=VALUE");
	len = (size_t)(eq - arg);
	if (len == 0)
		return bad_value("--metrics-label", arg, 0, "empty label name");
	for (size_t i = 0; i < len; i++) {
		char c = arg[i];

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (i > 0 && c >= '0' && c <= '9')))
			return bad_value("--metrics-label", arg, i,
					 "a label name is [a-zA-Z_][a-zA-Z0-9_]*");
	}
	if (len >= 2 && arg[0] == '_' && arg[1] == '_')
		return bad_value("--metrics-label", arg, 0, "names starting with __ are Prometheus' own");
	for (size_t i = 0; i < sizeof(reserved_labels) / sizeof(reserved_labels[0]); i++)
		if (strlen(reserved_labels[i]) == len && strncmp(arg, reserved_labels[i], len) == 0)
			return bad_value("--metrics-label", arg, 0, strcmp(reserved_labels[i], "job") == 0 ?
					 "the job is set with --metrics-job" :
					 "perfgate's own metrics use this label name");
	for (size_t i = 0; i < opts->nr_metrics_labels; i++)
		if (strlen(opts->metrics_labels[i].name) == len &&
		    strncmp(arg, opts->metrics_labels[i].name, len) == 0)
			return bad_value("--metrics-label", arg, 0, "label given twice");
	l = grow_one(&opts->metrics_labels, &opts->nr_metrics_labels, sizeof(*l));
	if (!l)
		return no_memory();
	l->name = strndup(arg, len);
	l->value = strdup(eq + 1);
	return l->name && l->value ? 0 : no_memory();
}

/* node_exporter's textfile collector reads only files named *.prom. */
static int set_metrics_textfile(struct options *opts, const char *arg)
{
	size_t len = strlen(arg);
	const char *slash = strrchr(arg, '/');
	const char *base = slash ? slash + 1 : arg;

	if (len < 5 || strcmp(arg + len - 5, ".prom") != 0 || strlen(base) <= 5)
		return bad_value("--metrics-textfile", arg, len,
				 "the file name must end in .prom (node_exporter reads only those)");
	return set_string(&opts->metrics_textfile, arg);
}

/* -r N: 1 <= N <= REPEAT_RUNS_MAX.  perf takes 0 for "repeat forever",
 * printing a report per run; perfgate does not, and says so.  Every run's
 * values are kept (the document's repeat object), so N is bounded: past
 * it the memory asked for up front (about 25 MB for 10 events here)
 * would grow past what a measurement agent should take. */
#define REPEAT_RUNS_MAX 100000

static int parse_repeat(struct options *opts, const char *arg)
{
	if (strcmp(arg, "0") == 0)
		return bad_value("-r", arg, 0, "0 (perf's 'repeat forever') is not supported; "
				 "give the number of runs");
	return parse_long("-r", arg, 1, REPEAT_RUNS_MAX, &opts->repeat);
}

/* -r with what cannot be repeated: a channel or a target outlives a run,
 * and an interval series of several runs is not one series (perf 6.1
 * prints the first run's intervals only).  Returns -1 after the message. */
static int check_repeat(const struct options *opts)
{
	const char *with = NULL;

	if (opts->repeat <= 1)
		return 0;
	if (opts->interval_ms)
		with = "-I";
	else if (opts->nr_controls)
		with = opts->controls[0].seed_spelling ? "--ctl-fd" : "--control";
	else if (opts->pid_list || opts->tid_list)
		with = opts->pid_list ? "-p" : "-t";
	else if (opts->metrics_listen || opts->metrics_textfile || opts->metrics_push)
		with = opts->metrics_listen ? "--metrics-listen" :
		       opts->metrics_textfile ? "--metrics-textfile" : "--metrics-push";
	/* Not yet: the runs' means are kept per event, not per key. */
	else if (opts->aggr_mode != AGGR_GLOBAL)
		with = opts->aggr_option;
	else if (opts->cgroup)
		with = "-G";
	if (with) {
		log_error("-r cannot be used with %s (see perfgate(1), -r)", with);
		return -1;
	}
	if (!opts->nr_workload) {
		log_error("-r needs a command to run again (see perfgate(1), -r)");
		return -1;
	}
	return 0;
}

static int check_separator(const char *sep)
{
	if (*sep == '\0') {
		log_error("invalid value for -x: empty separator");
		return -1;
	}
	return 0;
}

/* -A and --per-*: the last one given wins, as in perf. */
static int set_aggr(struct options *opts, enum aggr_mode mode, const char *option)
{
	opts->aggr_mode = mode;
	opts->aggr_option = option;
	return 0;
}

/* -M and --topdown: perf computes metrics from formulas in the CPU's
 * event tables (its pmu-events, compiled into perf).  libpfm4 and sysfs
 * name events, not metrics, so perfgate has no table to take them from. */
static int refuse_metrics(const char *option)
{
	log_error("%s: metrics are formulas from the CPU's event tables (perf's pmu-events), "
		  "which neither libpfm4 nor sysfs provides, so perfgate takes none; "
		  "count the metric's events with -e instead (README: \"Not taken\")", option);
	return -1;
}

/* perf stat record / report write and read perf.data, a format of perf's
 * own; perfgate's record of a run is its JSON document.  "perfgate --
 * record" still runs a program called record. */
static bool is_perf_data_command(const char *word)
{
	if (strcmp(word, "record") && strcmp(word, "report"))
		return false;
	log_error("'%s' is perf stat's subcommand that %s perf.data, a format perfgate does "
		  "not write; --json-file FILE writes the whole run as one JSON document "
		  "(to run a program called %s: perfgate -- %s)", word,
		  strcmp(word, "record") ? "reads" : "writes", word, word);
	return true;
}

/* What parse_one's helpers return for an option that is not theirs. */
#define NOT_MINE 1

/* --ctl-fd and --ctl-fd-ack: the one channel perf's spelling makes. */
static int parse_seed_fd(struct options *opts, const char *opt, const char *arg, bool ack)
{
	struct control_spec *c = seed_control(opts);

	if (!c)
		return no_memory();
	return parse_fd(opt, arg, ack ? &c->ack_fd : &c->ctl_fd);
}

/* -G: one cgroup for the whole run. */
static int parse_cgroup(struct options *opts, const char *arg)
{
	if (*arg == '\0')
		return bad_value("-G", arg, 0, "empty cgroup name");
	if (strchr(arg, ','))
		return bad_value("-G", arg, (size_t)(strchr(arg, ',') - arg),
				 "one cgroup for all events; a cgroup per event "
				 "(-G A,B) is not supported");
	return set_string(&opts->cgroup, arg);
}

/* What is counted, where, and when: events, targets, control, intervals. */
static int parse_counting_option(struct options *opts, int opt, const char *arg)
{
	switch (opt) {
	case 'M': return refuse_metrics("-M/--metrics");
	case OPT_TOPDOWN: return refuse_metrics("--topdown");
	case 'e': return add_events(opts, arg);
	case OPT_FILTER: return set_filter(opts, arg);
	case OPT_PFM_EVENTS: return add_pfm_events(opts, arg);
	case 'a': opts->system_wide = true; return 0;
	case 'C': return set_string(&opts->cpu_list, arg);
	case 'p': return set_string(&opts->pid_list, arg);
	case 't': return set_string(&opts->tid_list, arg);
	case 'G': return parse_cgroup(opts, arg);
	case 'i': opts->no_inherit = true; return 0;
	case 'n': opts->null_run = true; return 0;
	case 'D': return parse_long("-D", arg, -1, INT_MAX, &opts->delay_ms);
	case OPT_CONTROL: return add_control(opts, arg);
	case OPT_CTL_FD: return parse_seed_fd(opts, "--ctl-fd", arg, false);
	case OPT_CTL_FD_ACK: return parse_seed_fd(opts, "--ctl-fd-ack", arg, true);
	case OPT_CONTROL_SHARED: opts->control_shared = true; return 0;
	/* As perf 6.1: any period of 1 ms or more, and 0 for none. */
	case 'I': return parse_long("-I", arg, 0, INT_MAX, &opts->interval_ms);
	case OPT_INTERVAL_COUNT:
		return parse_long("--interval-count", arg, 1, LONG_MAX, &opts->interval_count);
	case 'm': return parse_pages(opts, arg);
	case OPT_RANGE_SCOPE: return parse_range_scope(opts, arg);
	case OPT_RANGE_BACKEND: return parse_range_backend(opts, arg);
	case OPT_CALL_VALUES:
		return parse_long("--call-values", arg, 0, CALL_VALUES_MAX, &opts->call_values);
	case 'r': return parse_repeat(opts, arg);
	}
	return NOT_MINE;
}

/* How the counts are reported: formats, files, aggregation, metrics. */
static int parse_report_option(struct options *opts, int opt, const char *arg)
{
	switch (opt) {
	case 'B': opts->no_big_num = false; return 0;
	case OPT_NO_BIG_NUM: opts->no_big_num = true; return 0;
	case OPT_SUMMARY: opts->summary = true; return 0;
	case OPT_NO_CSV_SUMMARY: opts->no_csv_summary = true; return 0;
	case 'q': opts->quiet = true; return 0;
	case 'v': opts->verbose++; return 0;
	case 'x': return set_string(&opts->csv_sep, arg) ? -1 : check_separator(arg);
	case 'j': opts->json = true; return 0;
	case 'o': return set_string(&opts->output_path, arg);
	case OPT_APPEND: opts->append = true; return 0;
	case OPT_LOG_FD: return parse_fd("--log-fd", arg, &opts->log_fd);
	case OPT_JSON_FILE: return set_string(&opts->json_file, arg);
	case OPT_METRICS_LISTEN: return set_string(&opts->metrics_listen, arg);
	case OPT_METRICS_TEXTFILE: return set_metrics_textfile(opts, arg);
	case OPT_METRICS_PUSH: return set_string(&opts->metrics_push, arg);
	case OPT_METRICS_JOB:
		if (*arg == '\0')
			return bad_value("--metrics-job", arg, 0, "empty job name");
		return set_string(&opts->metrics_job, arg);
	case OPT_METRICS_LABEL: return add_metrics_label(opts, arg);
	case 'A': return set_aggr(opts, AGGR_NONE, "-A/--no-aggr");
	case OPT_PER_THREAD: return set_aggr(opts, AGGR_THREAD, "--per-thread");
	case OPT_PER_CORE: return set_aggr(opts, AGGR_CORE, "--per-core");
	case OPT_PER_DIE: return set_aggr(opts, AGGR_DIE, "--per-die");
	case OPT_PER_SOCKET: return set_aggr(opts, AGGR_SOCKET, "--per-socket");
	case OPT_PER_NODE: return set_aggr(opts, AGGR_NODE, "--per-node");
	/* perf merges the counters of an event's several PMUs (uncore
	 * boxes, hybrid cores) into one row; perfgate opens each event on
	 * one PMU, so its rows are perf's unmerged rows already. */
	case OPT_NO_MERGE: return 0;
	}
	return NOT_MINE;
}

static int parse_one(struct options *opts, int opt, const char *arg)
{
	int rc = parse_counting_option(opts, opt, arg);

	if (rc == NOT_MINE)
		rc = parse_report_option(opts, opt, arg);
	return rc == NOT_MINE ? -1 : rc;
}

/* Aggregation modes and -G need a target that has what they split by:
 * CPUs (-a, -C) for -A, --per-core, ... and -G, threads for --per-thread:
 * those of -p and -t, or with -a every thread of the machine, as perf.
 * perf says "only available in system-wide mode". */
static int options_check_aggr(const struct options *opts)
{
	bool cpus = opts->system_wide || opts->cpu_list;
	bool threads = opts->pid_list || opts->tid_list;

	if (opts->aggr_mode == AGGR_THREAD && threads && cpus) {
		log_error("--per-thread counts the threads of -p and -t, or with -a every "
			  "thread: not both");
		return -1;
	}
	if (opts->aggr_mode == AGGR_THREAD && !threads && opts->cpu_list) {
		log_error("--per-thread cannot be used with -C: a thread's counter counts "
			  "on every CPU (use -a)");
		return -1;
	}
	if (opts->aggr_mode == AGGR_THREAD && !threads && !cpus) {
		log_error("--per-thread needs -p, -t or -a: a workload's threads are counted "
			  "together (inherited counters)");
		return -1;
	}
	if (opts->aggr_mode != AGGR_GLOBAL && opts->aggr_mode != AGGR_THREAD && !cpus) {
		log_error("%s needs -a or -C: there are per-CPU counts only system-wide",
			  opts->aggr_option);
		return -1;
	}
	if (opts->cgroup && !cpus) {
		log_error("-G/--cgroup needs -a or -C: cgroup counters are per CPU");
		return -1;
	}
	return 0;
}

/* Checks that need all the options at once. */
static int options_check(struct options *opts)
{
	for (size_t i = 0; i < opts->nr_controls; i++) {
		struct control_spec *c = &opts->controls[i];

		if (c->seed_spelling && c->ctl_fd < 0) {
			log_error("--ctl-fd-ack needs --ctl-fd");
			return -1;
		}
		c->shared = opts->control_shared;
	}
	if (opts->interval_count && !opts->interval_ms) {
		log_error("--interval-count needs -I");
		return -1;
	}
	if (opts->csv_sep && opts->json) {
		log_error("-x and -j cannot be used together");
		return -1;
	}
	if (opts->output_path && opts->log_fd >= 0) {
		log_error("-o and --log-fd cannot be used together");
		return -1;
	}
	if (opts->append && !opts->output_path) {
		log_error("--append needs -o");
		return -1;
	}
	if (opts->metrics_job && !opts->metrics_push) {
		log_error("--metrics-job needs --metrics-push");
		return -1;
	}
	/* As perf: with no command and no target, count system-wide until
	 * a signal (or --interval-count, or "stop") ends the run. */
	if (!opts->nr_workload && !opts->system_wide && !opts->cpu_list &&
	    !opts->pid_list && !opts->tid_list)
		opts->system_wide = true;
	if (options_check_aggr(opts))
		return -1;
	return check_repeat(opts);
}

int options_parse(struct options *opts, int argc, char **argv)
{
	int opt;

	memset(opts, 0, sizeof(*opts));
	opts->log_fd = -1;
	opts->call_values = 1000;
	opts->repeat = 1;
	opts->mmap_pages = 1024;	/* bench/ranges.md: no record lost at this size */
	opterr = 0;
	/* getopt keeps its place between calls: a second parse in one
	 * process (a program making many sessions) starts afresh. */
	optind = 0;
	/* '+': stop at the workload's name, so its own options stay its own. */
	while ((opt = getopt_long(argc, argv, "+:e:aC:p:t:D:I:x:jo:m:r:hinBqvAG:M:", long_options, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return 1;
		}
		if (opt == OPT_VERSION) {
			printf("perfgate %s\n", PACKAGE_VERSION);
			return 1;
		}
		if (opt == '?' || opt == ':') {
			const char *what = argv[optind - 1];

			if (opt == ':')
				log_error("option '%s' needs a value", what);
			else if (optopt)
				log_error("unknown option '-%c' (see perfgate --help)", optopt);
			else
				log_error("unknown option '%s' (see perfgate --help)", what);
			return -1;
		}
		if (parse_one(opts, opt, optarg))
			return -1;
	}
	opts->workload = argv + optind;
	opts->nr_workload = argc - optind;
	if (opts->nr_workload && strcmp(argv[optind - 1], "--") && is_perf_data_command(argv[optind]))
		return -1;
	return options_check(opts);
}

void options_free(struct options *opts)
{
	for (size_t i = 0; i < opts->nr_events; i++) {
		free(opts->events[i].name);
		free(opts->events[i].filter);
		free(opts->events[i].arg);
	}
	free(opts->events);
	for (size_t i = 0; i < opts->nr_controls; i++) {
		free(opts->controls[i].ctl_path);
		free(opts->controls[i].ack_path);
	}
	free(opts->controls);
	free(opts->cpu_list);
	free(opts->pid_list);
	free(opts->tid_list);
	free(opts->cgroup);
	free(opts->csv_sep);
	free(opts->output_path);
	free(opts->json_file);
	free(opts->metrics_listen);
	free(opts->metrics_textfile);
	free(opts->metrics_push);
	free(opts->metrics_job);
	for (size_t i = 0; i < opts->nr_metrics_labels; i++) {
		free(opts->metrics_labels[i].name);
		free(opts->metrics_labels[i].value);
	}
	free(opts->metrics_labels);
}
