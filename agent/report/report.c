/*
 * report.c: perf stat 6.1's output, byte for byte, for perfgate's views.
 *
 * Every row becomes one line in one of three dialects: the human text table,
 * -x SEP columns, or -j JSON objects; in interval mode (-I) each line starts
 * with the time since the start of the run.  Beside the count perf prints a
 * "shadow metric": a clock event against wall time ("CPUs utilized"), any
 * other event against the clock events ("K/sec").  Scripts and parsers
 * written for perf read these lines, so the columns, widths, spacing and
 * even perf's quirks are reproduced as observed from /usr/bin/perf 6.1; the
 * perf command that showed each fact is named in tests/unit/test_report.c.
 *
 * Numbers go through printf under the current locale, as perf's do: the
 * text count uses the ' flag (thousands grouping where LC_NUMERIC has one,
 * none in the C locale), and the decimal point is the locale's everywhere.
 */
#include "agent/report/report.h"
#include "agent/base/utf8.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Column widths of perf's text table. */
#define REPORT_COUNT_WIDTH	18	/* the count, right-aligned */
#define REPORT_UNIT_WIDTH	4	/* strlen("msec"), our only unit */
#define REPORT_NAME_WIDTH	32	/* event name of a counted row ... */
#define REPORT_NAME_WIDTH_NC	25	/* ... and of a row without a count */
#define REPORT_METRIC_WIDTH	35	/* " #    0.123 CPUs utilized", padded */
#define REPORT_HEADER_EVERY	25	/* -I intervals between text headers */
#define REPORT_NSEC_TO_MSEC	1e-6	/* perf's scale for clock events */

/* A row after perf's scaling, ready to print. */
struct report_value {
	enum report_status status;	/* REPORT_COUNTED if it has a count */
	double shown;	/* the count in display units (msec for clocks) */
	double ns;	/* clock rows: the scaled count in nanoseconds */
	uint64_t run, ena;
};

/* The shadow metric printed after the event name. */
struct report_metric {
	bool has_value;		/* false: perf leaves the value empty */
	double value;
	const char *unit;	/* NULL: no metric at all */
};

/* What the rows' metrics are computed against. */
struct report_shadow {
	double wall_ns;		/* run time (final) or the -I period */
	bool have_clock;	/* a clock row exists, so others get rates */
	double clock_ns;	/* mean of the clock rows' nanoseconds */
};

/* Where a line is printed: the final report, or an interval at sec.nsec. */
struct report_when {
	bool interval;
	unsigned long sec, nsec;
};

void report_init(struct report *report, FILE *out, enum report_format format,
		 const char *csv_sep)
{
	*report = (struct report){ .out = out, .format = format };
	/* perf's text table separates its columns with its csv_sep, a space. */
	if (format == REPORT_CSV)
		report->csv_sep = csv_sep ? csv_sep : ",";
	else
		report->csv_sep = " ";
}

/*
 * perf scales a multiplexed count up by enabled/running, and shows a
 * counter that never ran as "<not counted>" whatever the caller thought.
 * A row that is not counted or not supported carries no times, which is
 * what perf prints for it ("0", "100.00").
 */
static struct report_value report_value_of(const struct report_row *row)
{
	struct report_value v = { .status = row->status };
	uint64_t count = row->count;

	if (row->status != REPORT_COUNTED)
		return v;
	v.run = row->running_ns;
	v.ena = row->enabled_ns;
	if (v.run == 0 || v.ena == 0) {
		v.status = REPORT_NOT_COUNTED;
		return v;
	}
	if (row->runs > 1) {
		/* -r: a mean of counts the runs already scaled. */
		v.ns = row->mean;
		v.shown = row->is_clock ? row->mean * REPORT_NSEC_TO_MSEC : row->mean;
		return v;
	}
	if (v.run < v.ena)
		count = (uint64_t)((double)count * (double)v.ena / (double)v.run);
	v.ns = (double)count;
	v.shown = row->is_clock ? (double)count * REPORT_NSEC_TO_MSEC
				: (double)count;
	return v;
}

static const char *report_unit(const struct report_row *row)
{
	return row->is_clock ? "msec" : row->unit ? row->unit : "";
}

static const char *report_status_text(enum report_status status)
{
	return status == REPORT_NOT_SUPPORTED ? "<not supported>"
					      : "<not counted>";
}

/*
 * Rates are relative to the clock rows.  With several (task-clock and
 * cpu-clock) perf uses their running mean; a clock row without a count
 * still counts, as 0, which is why perf prints "0.000 /sec" next to a
 * counted event when task-clock is <not counted>.
 */
static struct report_shadow report_shadow_of(const struct report_row *rows,
					     size_t n, double wall_ns,
					     const struct report_aggr_key *key)
{
	struct report_shadow s = { .wall_ns = wall_ns };
	unsigned clocks = 0;

	for (size_t i = 0; i < n; i++) {
		struct report_value v;

		if (rows[i].aggr != key || !rows[i].is_clock || rows[i].status == REPORT_NOT_SUPPORTED ||
		    rows[i].unread)
			continue;
		v = report_value_of(&rows[i]);
		clocks++;
		s.clock_ns += ((v.status == REPORT_COUNTED ? v.ns : 0) -
			       s.clock_ns) / clocks;
	}
	s.have_clock = clocks > 0;
	return s;
}

/* Events per second of clock time, scaled to K, M, G past 1000 as perf. */
static struct report_metric report_rate(double count, double clock_ns)
{
	static const char *const units[] = { "/sec", "K/sec", "M/sec", "G/sec" };
	struct report_metric m = { .has_value = true, .unit = units[0] };
	double rate;

	if (clock_ns == 0)
		return m;
	rate = 1000000000.0 * count / clock_ns;
	for (size_t i = 1; i < 4 && rate > 1000.0; i++) {
		rate /= 1000.0;
		m.unit = units[i];
	}
	m.value = rate;
	return m;
}

static struct report_metric report_metric_of(const struct report_row *row,
					     const struct report_value *v,
					     const struct report_shadow *s)
{
	struct report_metric m = { .unit = NULL };

	if (v->status != REPORT_COUNTED) {
		m.unit = "";
		return m;
	}
	if (row->is_clock) {
		/* No wall time: perf names the metric but leaves it empty. */
		m.unit = "CPUs utilized";
		if (s->wall_ns != 0) {
			m.has_value = true;
			m.value = v->shown / (s->wall_ns * REPORT_NSEC_TO_MSEC);
		}
		return m;
	}
	if (s->have_clock)
		return report_rate(v->shown, s->clock_ns);
	return m;
}

/* perf's share of enabled time the counter ran.  The integer division is
 * perf's: -x and -j show a whole percentage ("66.00"), text does not. */
static double report_running_pcnt(const struct report_value *v)
{
	if (v->run == v->ena || v->ena == 0)
		return 100;
	return (double)(100 * v->run / v->ena);
}

static struct report_when report_when_of(double timestamp_s)
{
	uint64_t ns = timestamp_s > 0 ? (uint64_t)(timestamp_s * 1e9 + 0.5) : 0;

	return (struct report_when){
		.interval = true,
		.sec = (unsigned long)(ns / 1000000000),
		.nsec = (unsigned long)(ns % 1000000000),
	};
}

/* ---- text ---------------------------------------------------------- */

static void report_text_metric(FILE *out, const struct report_metric *m)
{
	int n;

	if (!m->has_value) {
		fprintf(out, "%-*s", REPORT_METRIC_WIDTH, "");
		return;
	}
	/* The unit pads what the value left of the column; a value too wide
	 * makes the width negative, which printf reads as left-justify. */
	n = fprintf(out, " # %8.3f", m->value);
	fprintf(out, " %-*s", REPORT_METRIC_WIDTH - n - 1, m->unit);
}

static void report_text_row(struct report *report,
			    const struct report_row *row,
			    const struct report_value *v,
			    const struct report_metric *m)
{
	FILE *out = report->out;
	const char *unit = report_unit(row);

	if (v->status != REPORT_COUNTED)
		fprintf(out, "%*s %-*s %-*s", REPORT_COUNT_WIDTH,
			report_status_text(v->status), REPORT_UNIT_WIDTH, unit,
			REPORT_NAME_WIDTH_NC, row->event);
	else if (row->is_clock)
		fprintf(out, report->no_big_num ? "%*.2f %-*s %-*s" : "%'*.2f %-*s %-*s",
			REPORT_COUNT_WIDTH, v->shown,
			REPORT_UNIT_WIDTH, unit, REPORT_NAME_WIDTH, row->event);
	else
		fprintf(out, report->no_big_num ? "%*.0f %-*s %-*s" : "%'*.0f %-*s %-*s",
			REPORT_COUNT_WIDTH, v->shown,
			REPORT_UNIT_WIDTH, unit, REPORT_NAME_WIDTH, row->event);
	if (row->cgroup)
		fprintf(out, " %s", row->cgroup);
	report_text_metric(out, m);
	if (row->runs > 1 && row->noise_pct != 0)
		fprintf(out, "  ( +-%6.2f%% )", row->noise_pct);
	if (v->run != v->ena)
		fprintf(out, "  (%.2f%%)",
			100.0 * (double)v->run / (double)v->ena);
}

/* ---- -x SEP -------------------------------------------------------- */

/* perf prints the metric with "%8.3f" and keeps only the leading digits
 * and dots: so a locale's decimal comma cuts "0,980" down to "0". */
static void report_csv_metric(struct report *report,
			      const struct report_metric *m)
{
	const char *sep = report->csv_sep;
	char buf[64], *start = buf, *end;

	if (!m->has_value) {
		fprintf(report->out, "%s%s", sep, sep);
		return;
	}
	snprintf(buf, sizeof(buf), "%8.3f", m->value);
	while (*start == ' ')
		start++;
	for (end = start; isdigit((unsigned char)*end) || *end == '.'; end++)
		;
	*end = '\0';
	fprintf(report->out, "%s%s%s%s", sep, start, sep, m->unit);
}

/*
 * -x: a label (window name, range spec or name) may hold the separator --
 * a range's filter "(fd == CPUS{0,1})", a blank with -x ' ' -- and then a
 * row would have one field more than perf's.  perf escapes nothing (its
 * event names are printed as they are, separator or not), and perfgate's
 * event part stays perf's; but the label after '@' is perfgate's own, so
 * each of its bytes that occurs in the separator becomes the first of
 * '_', '-', '.', ';' that does not.  -j keeps the label exactly.
 */
static void report_csv_label(char *label, const char *sep)
{
	const char *subst = "_-.;", *c = subst;

	while (*c && strchr(sep, *c))
		c++;
	for (char *p = label; *p; p++)
		if (strchr(sep, *p))
			*p = *c ? *c : '?';
}

static void report_csv_row(struct report *report,
			   const struct report_row *row,
			   const struct report_value *v,
			   const struct report_metric *m)
{
	FILE *out = report->out;
	const char *sep = report->csv_sep;
	const char *unit = report_unit(row);

	if (v->status != REPORT_COUNTED)
		fprintf(out, "%s%s", report_status_text(v->status), sep);
	else if (row->is_clock)
		fprintf(out, "%.2f%s", v->shown, sep);
	else
		fprintf(out, "%.0f%s", v->shown, sep);
	fprintf(out, "%s%s%s", unit, sep, row->event);
	if (row->cgroup)
		fprintf(out, "%s%s", sep, row->cgroup);
	/* -r: perf's noise field, between the name and the run time. */
	if (row->runs > 1)
		fprintf(out, "%s%.2f%%", sep, row->noise_pct);
	fprintf(out, "%s%" PRIu64 "%s%.2f", sep, v->run, sep,
		report_running_pcnt(v));
	report_csv_metric(report, m);
}

/* ---- -j ------------------------------------------------------------ */

/* perf writes names unescaped; its names never need escaping, but a
 * window or range name from a client might, and the line must parse:
 * a byte that is not UTF-8 becomes U+FFFD, as in perfgate's own JSON. */
static void report_json_string(FILE *out, const char *s)
{
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = utf8_char_len(s);

		if (n == 0) {
			fputs(UTF8_REPLACEMENT, out);
			n = 1;
		} else if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fwrite(s, 1, n, out);
		s += n;
	}
}

static void report_json_row(struct report *report,
			    const struct report_row *row,
			    const struct report_value *v,
			    const struct report_metric *m,
			    const char *window)
{
	FILE *out = report->out;

	if (v->status != REPORT_COUNTED)
		fprintf(out, "\"counter-value\" : \"%s\", ",
			report_status_text(v->status));
	else
		fprintf(out, "\"counter-value\" : \"%f\", ", v->shown);
	fprintf(out, "\"unit\" : \"%s\", \"event\" : \"",
		report_unit(row));
	report_json_string(out, row->event);
	if (row->cgroup) {
		fputs("\", \"cgroup\" : \"", out);
		report_json_string(out, row->cgroup);
	}
	fputs("\", ", out);
	/* -r: perf's key for the noise, in percent like the text's. */
	if (row->runs > 1)
		fprintf(out, "\"variance\" : %.2f, ", row->noise_pct);
	fprintf(out, "\"event-runtime\" : %" PRIu64
		", \"pcnt-running\" : %.2f, ", v->run, report_running_pcnt(v));
	/* A counted event with no metric: perf 6.1 passes a NULL unit to
	 * printf and glibc prints "(null)".  Parsers of perf's output have
	 * seen that string, so it is kept. */
	fprintf(out, "\"metric-value\" : %f, \"metric-unit\" : \"%s\"",
		m->value, m->unit ? m->unit : "(null)");
	/* A named window's or a range's view: perf's keys, then its name. */
	if (window || row->range) {
		fputs(window ? ", \"window\" : \"" : ", \"range\" : \"", out);
		report_json_string(out, window ? window : row->range);
		fputc('"', out);
	}
	if (row->incomplete)
		fputs(", \"incomplete\" : true", out);
	fputc('}', out);
}

/* ---- lines --------------------------------------------------------- */

/* A view that lost records says so, in the text and -x forms (-j has its
 * own key): never a short count that looks whole. */
static void report_incomplete(struct report *report, const struct report_row *row)
{
	if (!row->incomplete || report->format == REPORT_JSON)
		return;
	if (report->format == REPORT_CSV)
		fprintf(report->out, "%sincomplete", report->csv_sep);
	else
		fputs("  (incomplete)", report->out);
}

/* perf's key columns of an aggregation mode: text pads them (%-8d and
 * the like, the widths perf 6.1 prints), -x does not, -j names them. */
static void report_aggr_prefix(struct report *report, const struct report_row *row)
{
	const struct report_aggr_key *k = row->aggr;
	bool csv = report->format == REPORT_CSV, json = report->format == REPORT_JSON;
	const char *sep = report->csv_sep;
	FILE *out = report->out;

	if (!k || report->aggr_mode == AGGR_GLOBAL)
		return;
	switch (report->aggr_mode) {
	case AGGR_NONE:
		if (json)
			fprintf(out, "\"cpu\" : \"%d\", ", k->cpu);
		else
			fprintf(out, "CPU%-*d%s", csv ? 0 : 7, k->cpu, sep);
		return;
	case AGGR_THREAD:
		if (json) {
			fputs("\"thread\" : \"", out);
			report_json_string(out, k->comm);
			fprintf(out, "-%d\", ", (int)k->tid);
		} else if (csv)
			fprintf(out, "%s-%d%s", k->comm, (int)k->tid, sep);
		else
			fprintf(out, "%16s-%-8d%s", k->comm, (int)k->tid, sep);
		return;
	case AGGR_CORE:
		if (json)
			fprintf(out, "\"core\" : \"S%d-D%d-C%d\", ", k->socket, k->die, k->core);
		else
			fprintf(out, "S%d-D%d-C%-*d%s", k->socket, k->die, csv ? 0 : 8, k->core, sep);
		break;
	case AGGR_DIE:
		if (json)
			fprintf(out, "\"die\" : \"S%d-D%d\", ", k->socket, k->die);
		else
			fprintf(out, "S%d-D%-*d%s", k->socket, csv ? 0 : 8, k->die, sep);
		break;
	case AGGR_SOCKET:
		if (json)
			fprintf(out, "\"socket\" : \"S%d\", ", k->socket);
		else
			fprintf(out, "S%-*d%s", csv ? 0 : 5, k->socket, sep);
		break;
	case AGGR_NODE:
		if (json)
			fprintf(out, "\"node\" : \"N%d\", ", k->node);
		else
			fprintf(out, "N%-*d%s", csv ? 0 : 5, k->node, sep);
		break;
	case AGGR_GLOBAL:
		return;
	}
	/* The topology modes: how many CPUs the row sums. */
	if (json)
		fprintf(out, "\"aggregate-number\" : %d, ", row->aggr_nr);
	else
		fprintf(out, "%*d%s", csv ? 0 : 4, row->aggr_nr, sep);
}

static void report_line_start(struct report *report,
			      const struct report_when *when, const struct report_row *row)
{
	if (report->format == REPORT_JSON) {
		if (when->interval)
			fprintf(report->out, "{\"interval\" : %lu.%09lu, ",
				when->sec, when->nsec);
		else
			fputc('{', report->out);
		report_aggr_prefix(report, row);
		return;
	}
	if (when->interval)
		fprintf(report->out, "%6lu.%09lu%s", when->sec, when->nsec,
			report->csv_sep);
	else if (report->format == REPORT_CSV && report->csv_summary)
		fprintf(report->out, "%16s%s", "summary", report->csv_sep);
	report_aggr_prefix(report, row);
}

/* Print every row; returns whether one showed "<not counted>".  Rows of a
 * named window are named "event@window" (text, -x) or carry a "window"
 * key (-j); their metrics are relative to that window's own clock rows. */
static bool report_rows(struct report *report, const struct report_when *when,
			const struct report_row *rows, size_t n, double wall_ns,
			const char *window)
{
	struct report_shadow shadow = report_shadow_of(rows, n, wall_ns, NULL);
	const struct report_aggr_key *shadow_key = NULL;
	bool not_counted = false;
	char name[512];

	for (size_t i = 0; i < n; i++) {
		struct report_row row = rows[i];
		struct report_value v;
		struct report_metric m;

		/* Aggregation modes: rates against the clock rows of the same key. */
		if (row.aggr != shadow_key) {
			shadow = report_shadow_of(rows, n, wall_ns, row.aggr);
			shadow_key = row.aggr;
		}

		if (!row.event)
			row.event = "";
		if ((window || row.range) && report->format != REPORT_JSON) {
			snprintf(name, sizeof(name), "%s@%s", row.event, window ? window : row.range);
			if (report->format == REPORT_CSV && strlen(row.event) < strlen(name))
				report_csv_label(name + strlen(row.event) + 1, report->csv_sep);
			row.event = name;
		}
		v = report_value_of(&row);
		m = report_metric_of(&row, &v, &shadow);
		not_counted |= v.status == REPORT_NOT_COUNTED;
		report_line_start(report, when, &rows[i]);
		if (report->format == REPORT_JSON)
			report_json_row(report, &row, &v, &m, window);
		else if (report->format == REPORT_CSV)
			report_csv_row(report, &row, &v, &m);
		else
			report_text_row(report, &row, &v, &m);
		report_incomplete(report, &row);
		fputc('\n', report->out);
	}
	return not_counted;
}

/* ---- final report -------------------------------------------------- */

static void report_header(struct report *report, const struct report_run *run)
{
	fprintf(report->out, "\n Performance counter stats for %s",
		run->target ? run->target : "");
	if (run->runs > 1)
		fprintf(report->out, " (%u runs)", run->runs);
	fputs(":\n\n", report->out);
	report->header_printed = true;
}

/*
 * -r: perf's "MEAN +- SD seconds time elapsed  ( +- P% )", with two digits
 * more than the first significant one of SD (perf's precision; SD 0 gets
 * 2, what perf's lround(inf) comes to on x86-64), and no user and sys
 * lines, as perf prints none with -r.
 */
static void report_footer_runs(struct report *report, const struct report_run *run)
{
	double sd = run->elapsed_sd_s, avg = run->elapsed_s;
	int precision = 2;

	if (sd > 0 && sd <= 1)
		precision += (int)lround(ceil(-log10(sd)));
	fprintf(report->out, report->null_run ? " %17.*f +- %.*f seconds time elapsed" :
		"\n %17.*f +- %.*f seconds time elapsed", precision, avg, precision, sd);
	if (avg != 0 && sd != 0)
		fprintf(report->out, "  ( +-%6.2f%% )", 100.0 * sd / avg);
}

static void report_footer(struct report *report, const struct report_run *run,
			  bool nmi_hint)
{
	FILE *out = report->out;

	if (run->runs > 1)
		report_footer_runs(report, run);
	else
		/* perf -n leaves out the blank line before the time. */
		fprintf(out, report->null_run ? " %17.9f seconds time elapsed" :
			"\n %17.9f seconds time elapsed", run->elapsed_s);
	if (run->runs <= 1 && run->user_s >= 0 && run->sys_s >= 0) {
		fprintf(out, "\n\n %17.9f seconds user\n", run->user_s);
		fprintf(out, " %17.9f seconds sys\n", run->sys_s);
	}
	fputs("\n\n", out);
	if (nmi_hint)
		fputs("Some events weren't counted. Try disabling the NMI watchdog:\n"
		      "\techo 0 > /proc/sys/kernel/nmi_watchdog\n"
		      "\tperf stat ...\n"
		      "\techo 1 > /proc/sys/kernel/nmi_watchdog\n", out);
}

void report_final(struct report *report, const struct report_run *run,
		  const struct report_row *rows, size_t n)
{
	struct report_when when = { .interval = false };
	uint64_t wall_ns;
	bool not_counted;

	/* -x and -j print the rows alone, without header or footer. */
	if (report->format == REPORT_TEXT)
		report_header(report, run);
	/* perf keeps the wall time in whole nanoseconds. */
	wall_ns = run->elapsed_s > 0 ? (uint64_t)(run->elapsed_s * 1e9 + 0.5) : 0;
	not_counted = report_rows(report, &when, rows, n, (double)wall_ns, NULL);
	if (report->format == REPORT_TEXT)
		report_footer(report, run,
			      not_counted && report->nmi_watchdog);
	fflush(report->out);
}

/* ---- intervals ----------------------------------------------------- */

static void report_interval_header(struct report *report)
{
	/* perf 6.1's headers, the key's columns named as it names them. */
	static const char *const keys[] = {
		[AGGR_GLOBAL] = "",
		[AGGR_NONE] = "CPU        ",
		[AGGR_THREAD] = "            comm-pid      ",
		[AGGR_CORE] = "core            cpus ",
		[AGGR_DIE] = "die          cpus ",
		[AGGR_SOCKET] = "socket cpus ",
		[AGGR_NODE] = "node   cpus ",
	};

	if (report->lines_since_header == 0) {
		fprintf(report->out, "#           time %s            counts %*s events\n",
			keys[report->aggr_mode], REPORT_UNIT_WIDTH, "unit");
		report->header_printed = true;
	}
	if (++report->lines_since_header == REPORT_HEADER_EVERY)
		report->lines_since_header = 0;
}

void report_interval(struct report *report, double timestamp_s,
		     const struct report_row *rows, size_t n)
{
	struct report_when when = report_when_of(timestamp_s);
	double wall_ns = (double)report->interval_ns;

	if (report->interval_ns == 0)
		wall_ns = (timestamp_s - report->last_timestamp_s) * 1e9;
	report->last_timestamp_s = timestamp_s;
	if (report->format == REPORT_TEXT)
		report_interval_header(report);
	report_rows(report, &when, rows, n, wall_ns, NULL);
	/* A script reads interval lines as they come: do not sit on them. */
	fflush(report->out);
}

/* ---- named windows --------------------------------------------------- */

static void report_stat_number(FILE *out, double v, bool integer)
{
	if (isnan(v))
		fprintf(out, " %12s", "-");
	else if (integer)
		fprintf(out, " %12.0f", v);
	else
		fprintf(out, " %12.2f", v);
}

/* The per-call table, LIKWID's region table in perf's text style: one
 * line per event, the calls' min, max, mean, stddev and quantiles. */
static void report_call_table(struct report *report, const struct report_window *w)
{
	static const char *const heads[] = { "min", "max", "mean", "stddev", "median",
					     "p90", "p99" };
	int width = 14;

	for (size_t i = 0; i < w->nr_call_stats; i++)
		if ((int)strlen(w->call_stats[i].name) > width)
			width = (int)strlen(w->call_stats[i].name);
	fprintf(report->out, "\n   %-*s", width, w->call_stats_sampled ?
		"per call (sampled)" : "per call");
	for (size_t h = 0; h < sizeof(heads) / sizeof(heads[0]); h++)
		fprintf(report->out, " %12s", heads[h]);
	fputc('\n', report->out);
	for (size_t i = 0; i < w->nr_call_stats; i++) {
		const struct report_call_stat *st = &w->call_stats[i];

		fprintf(report->out, "   %-*s", width, st->name);
		if (!st->supported) {
			fprintf(report->out, " %12s\n", "<not supported>");
			continue;
		}
		fprintf(report->out, " %12" PRIu64 " %12" PRIu64, st->min, st->max);
		report_stat_number(report->out, st->mean, false);
		report_stat_number(report->out, st->stddev, false);
		report_stat_number(report->out, st->median, false);
		report_stat_number(report->out, st->p90, false);
		report_stat_number(report->out, st->p99, false);
		fputc('\n', report->out);
	}
}

void report_final_window(struct report *report, const struct report_window *w,
			 const struct report_row *rows, size_t n)
{
	struct report_when when = { .interval = false };
	/* "CPUs utilized" of a window is relative to the time it was open. */
	double open_ns = (double)(uint64_t)(w->open_s * 1e9 + 0.5);

	if (report->format == REPORT_TEXT && w->runs > 1) {
		fprintf(report->out, " Window '%s' (%u runs): %.2f calls, %.6f seconds open per run",
			w->name, w->runs, w->calls_mean, w->open_s);
		if (w->open_at_end)
			fprintf(report->out, " (%u still open at the end)", w->open_at_end);
		fputs(":\n\n", report->out);
	} else if (report->format == REPORT_TEXT) {
		fprintf(report->out, " Window '%s': %lu call%s, %.6f seconds open", w->name,
			w->calls, w->calls == 1 ? "" : "s", w->open_s);
		if (w->open_at_end)
			fprintf(report->out, " (%u still open at the end)", w->open_at_end);
		fputs(":\n\n", report->out);
	}
	report_rows(report, &when, rows, n, open_ns, w->name);
	if (report->format == REPORT_TEXT && w->nr_call_stats && w->calls)
		report_call_table(report, w);
	if (report->format == REPORT_TEXT)
		fputs("\n\n", report->out);
	fflush(report->out);
}

void report_final_ranges(struct report *report, double wall_s,
			 const struct report_row *rows, size_t n)
{
	struct report_when when = { .interval = false };

	if (report->format == REPORT_TEXT)
		fputs(" Ranges:\n\n", report->out);
	report_rows(report, &when, rows, n, (double)(uint64_t)(wall_s * 1e9 + 0.5), NULL);
	if (report->format == REPORT_TEXT)
		fputs("\n\n", report->out);
	fflush(report->out);
}

void report_interval_ranges(struct report *report, double timestamp_s,
			    const struct report_row *rows, size_t n)
{
	struct report_when when = report_when_of(timestamp_s);

	report_rows(report, &when, rows, n, (double)report->interval_ns, NULL);
	fflush(report->out);
}

void report_interval_window(struct report *report, double timestamp_s,
			    const struct report_window *w,
			    const struct report_row *rows, size_t n)
{
	struct report_when when = report_when_of(timestamp_s);
	double wall_ns = (double)report->interval_ns;

	report_rows(report, &when, rows, n, wall_ns, w->name);
	fflush(report->out);
}
