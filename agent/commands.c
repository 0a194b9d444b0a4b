/*
 * commands: control command dispatch (enable, disable, ping, snapshot,
 * stop, hello, evlist, window begin/end, range load/unload).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "agent/commands.h"
#include "agent/report/json_report.h"
#include "agent/session.h"
#include "agent/ranges/range_registry.h"
#include "agent/report/session_rows.h"
#include "proto/ctl_proto.h"

/* Open or close the default window of every event, or of the events named
 * EVENT (perf's "enable EVENT").  Returns the number of views matched. */
static size_t commands_set_default_window(struct session *s, const char *event, bool open)
{
	size_t matched = 0;

	/* One batch, so that a read group switches once; closing releases
	 * every view before any is read (view_close_all). */
	counter_batch_begin();
	for (size_t i = 0; i < s->nr_counters; i++) {
		struct view *v = &s->default_views[i];

		if (*event && strcmp(v->counter->def.name, event) != 0)
			continue;
		matched++;
		if (open)
			view_open(v);
		else
			view_close_release(v);
	}
	counter_batch_end();
	for (size_t i = 0; !open && i < s->nr_counters; i++)
		if (s->default_views[i].released)
			view_close(&s->default_views[i]);
	return matched;
}

static void commands_window(struct session *s, struct control_channel *ch,
			    const struct ctl_command *cmd)
{
	char reason[CTL_REPLY_MAX];

	range_registry_drain(s->ranges);	/* counters the ranges back are read as of now */
	if (commands_set_default_window(s, cmd->name, cmd->kind == CTL_CMD_ENABLE)) {
		control_reply(ch, true, NULL);
		return;
	}
	snprintf(reason, sizeof(reason), "unknown event '%s' (not in -e)", cmd->name);
	control_reply(ch, false, reason);
}

/* Windows live as long as the run: a client naming a new one per call
 * must not grow the agent without bound. */
#define WINDOWS_MAX 4096
/* Begins without an end over all windows: each holds a value per event
 * and per range view until its end (WINDOW_DEPTH_MAX bounds one window). */
#define OPEN_CALLS_MAX 4096

static void commands_window_begin(struct session *s, struct control_channel *ch,
				  const struct ctl_command *cmd)
{
	struct window *w = session_window(s, cmd->name, false);
	char reason[CTL_REPLY_MAX];
	uint64_t *ranges;
	size_t nr_ranges;

	if (!w && s->nr_windows >= WINDOWS_MAX) {
		snprintf(reason, sizeof(reason), "too many windows (at most %d in a run)",
			 WINDOWS_MAX);
		control_reply(ch, false, reason);
		return;
	}
	if (w && w->depth >= WINDOW_DEPTH_MAX) {
		snprintf(reason, sizeof(reason), "window '%s' is nested too deep "
			 "(at most %d begins without an end)", cmd->name, WINDOW_DEPTH_MAX);
		control_reply(ch, false, reason);
		return;
	}
	if (s->nr_open_calls >= OPEN_CALLS_MAX) {
		snprintf(reason, sizeof(reason), "too many open windows (at most %d begins "
			 "without an end, all windows together)", OPEN_CALLS_MAX);
		control_reply(ch, false, reason);
		return;
	}
	range_registry_drain(s->ranges);
	ranges = range_registry_values(s->ranges, &nr_ranges);
	if (!w)
		w = session_window(s, cmd->name, true);
	if (!w || window_begin(w, ranges, nr_ranges)) {
		free(ranges);
		snprintf(reason, sizeof(reason), "window '%s': out of memory", cmd->name);
		control_reply(ch, false, reason);
		return;
	}
	s->nr_open_calls++;
	control_reply(ch, true, NULL);
}

/* "ack {...}": the call's counts and the window's totals, so a client has
 * its numbers at once without parsing the report. */
static void commands_window_end(struct session *s, struct control_channel *ch,
				const struct ctl_command *cmd)
{
	struct window *w = session_window(s, cmd->name, false);
	struct window_end_result result;
	char reason[CTL_REPLY_MAX];
	const char *text;

	/* Before the views close: an event the ranges count is read from
	 * their sums as of this drain, as the range values of the reply. */
	range_registry_drain(s->ranges);
	if (!w || window_end(w, &result)) {
		snprintf(reason, sizeof(reason), "window '%s' is not open", cmd->name);
		control_reply(ch, false, reason);
		return;
	}
	s->nr_open_calls--;
	text = json_report_window_end(s, w, &result, reason, sizeof(reason));
	control_reply(ch, text != NULL, text ? text : reason);
	free(result.ranges_at_begin);
}

static void commands_range(struct session *s, struct control_channel *ch,
			   const struct ctl_command *cmd)
{
	char reason[CTL_REPLY_MAX];
	int rc;

	/* Whoever can write the FIFO would make the agent load programs and
	 * attach them to the workload: only when the sharing is meant. */
	if (ch->open_to_others) {
		snprintf(reason, sizeof(reason), "'%s' refused: users other than its owner can "
			 "write to this control FIFO (use --control-shared to allow it)",
			 ctl_command_name(cmd->kind));
		control_reply(ch, false, reason);
		return;
	}
	if (cmd->kind == CTL_CMD_RANGE_LOAD)
		rc = range_registry_load(s->ranges, s->has_workload ? s->workload.pid : -1, s->base,
					 cmd->name, cmd->spec, reason, sizeof(reason));
	else
		rc = range_registry_unload(s->ranges, cmd->name, reason, sizeof(reason));
	control_reply(ch, rc == 0, rc == 0 ? NULL : reason);
}

static void commands_hello(struct control_channel *ch)
{
	json_t *hello = json_pack("{s:i, s:s, s:s, s:[s,s,s,s,s,s,s,s,s,s,s]}",
				  "protocol", CTL_PROTO_VERSION,
				  "agent", "perfgate",
				  "version", PACKAGE_VERSION,
				  "commands", "enable", "disable", "ping", "snapshot", "stop", "hello",
				  "evlist", "window begin", "window end", "range load",
				  "range unload");
	char *text = json_dumps(hello, JSON_COMPACT);

	control_reply(ch, true, text);
	free(text);
	json_decref(hello);
}

/*
 * perf's "evlist": the events, one a line, on stderr as perf prints them;
 * -g shows a group as {a,b} on its leader's line, -v adds each event's
 * type and config (and filter), -F its sample period (0: perfgate counts).
 */
static void commands_evlist(struct session *s, const char *opts)
{
	bool groups = strchr(opts, 'g'), verbose = strchr(opts, 'v'), freq = strchr(opts, 'F');

	for (size_t i = 0; i < s->nr_counters; i++) {
		const struct event_def *def = &s->counters[i].def;

		if (groups && def->group_n > 1) {
			fprintf(stderr, "{%s", def->name);
			for (size_t m = 1; m < def->group_n && i + m < s->nr_counters; m++)
				fprintf(stderr, ",%s", s->counters[i + m].def.name);
			fprintf(stderr, "}\n");
			i += def->group_n - 1;
			continue;
		}
		fprintf(stderr, "%s", def->name);
		if (verbose)
			fprintf(stderr, ": type: %" PRIu32 ", config: %#" PRIx64 "%s%s%s",
				def->attr.type, (uint64_t)def->attr.config,
				def->filter ? ", filter: '" : "", def->filter ? def->filter : "",
				def->filter ? "'" : "");
		if (freq)
			fprintf(stderr, "%ssample_period=%" PRIu64, verbose ? ", " : ": ",
				(uint64_t)def->attr.sample_period);
		fprintf(stderr, "\n");
	}
	fflush(stderr);
}

static void commands_dispatch(struct session *s, struct control_channel *ch,
			      const struct ctl_command *cmd)
{
	char reason[CTL_REPLY_MAX];

	switch (cmd->kind) {
	case CTL_CMD_ENABLE:
	case CTL_CMD_DISABLE:
		commands_window(s, ch, cmd);
		return;
	case CTL_CMD_PING:
		control_reply(ch, true, NULL);
		return;
	case CTL_CMD_WINDOW_BEGIN:
		commands_window_begin(s, ch, cmd);
		return;
	case CTL_CMD_WINDOW_END:
		commands_window_end(s, ch, cmd);
		return;
	case CTL_CMD_RANGE_LOAD:
	case CTL_CMD_RANGE_UNLOAD:
		commands_range(s, ch, cmd);
		return;
	case CTL_CMD_HELLO:
		commands_hello(ch);
		return;
	case CTL_CMD_EVLIST:
		commands_evlist(s, cmd->name);
		control_reply(ch, true, NULL);
		return;
	case CTL_CMD_SNAPSHOT:
		if (session_print_snapshot(s, reason, sizeof(reason)))
			control_reply(ch, false, reason);
		else
			control_reply(ch, true, NULL);
		return;
	case CTL_CMD_STOP:
		/* Acked after the final report, so the client can read it; no
		 * channel reads more, so that ack is every channel's last. */
		s->stop_channel = ch;
		for (size_t i = 0; i < s->nr_channels; i++)
			control_pause(&s->channels[i]);
		counter_reading_end();	/* the final report reads the end of the run */
		session_end(s, 0);
		return;
	default:
		snprintf(reason, sizeof(reason), "'%s' is not supported by this agent yet",
			 ctl_command_name(cmd->kind));
		control_reply(ch, false, reason);
		return;
	}
}

void commands_on_line(void *ctx, struct control_channel *ch, const char *line, size_t len,
		      bool too_long)
{
	static struct ctl_command cmd;	/* 8 KiB: not on the stack */
	char reason[CTL_REPLY_MAX];
	struct session *s = ctx;

	if (too_long) {
		control_reply(ch, false, CTL_ERR_TOO_LONG);
		return;
	}
	if (ctl_command_parse(line, len, &cmd, reason, sizeof(reason))) {
		control_reply(ch, false, reason);
		return;
	}
	/* One reading per command: each counter is read once, and every view
	 * the command touches sees it at that one instant (counter.h). */
	counter_reading_begin();
	commands_dispatch(s, ch, &cmd);
	counter_reading_end();
}
