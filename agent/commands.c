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
#include "agent/control/control.h"
#include "agent/count/counter.h"
#include "agent/session.h"
#include "proto/ctl_proto.h"

static void commands_window(struct session *s, struct control_channel *ch,
			    const struct ctl_command *cmd)
{
	char reason[CTL_REPLY_MAX];

	if (session_set_default_window(s, cmd->name, cmd->kind == CTL_CMD_ENABLE)) {
		control_reply(ch, true, NULL);
		return;
	}
	snprintf(reason, sizeof(reason), "unknown event '%s' (not in -e)", cmd->name);
	control_reply(ch, false, reason);
}

static void commands_window_begin(struct session *s, struct control_channel *ch,
				  const struct ctl_command *cmd)
{
	char reason[CTL_REPLY_MAX];

	if (session_window_begin(s, cmd->name, reason, sizeof(reason)))
		control_reply(ch, false, reason);
	else
		control_reply(ch, true, NULL);
}

/* "ack {...}": the call's counts and the window's totals, so a client has
 * its numbers at once without parsing the report. */
static void commands_window_end(struct session *s, struct control_channel *ch,
				const struct ctl_command *cmd)
{
	char reason[CTL_REPLY_MAX];
	const char *text = session_window_end(s, cmd->name, reason, sizeof(reason));

	control_reply(ch, text != NULL, text ? text : reason);
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
		rc = session_range_load(s, cmd->name, cmd->spec, reason, sizeof(reason));
	else
		rc = session_range_unload(s, cmd->name, reason, sizeof(reason));
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
	char *text = hello ? json_dumps(hello, JSON_COMPACT) : NULL;

	control_reply(ch, text != NULL, text ? text : "out of memory");
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
	size_t n;
	const struct counter *counters = session_counters(s, &n);

	for (size_t i = 0; i < n; i++) {
		const struct event_def *def = &counters[i].def;

		if (groups && def->group_n > 1) {
			fprintf(stderr, "{%s", def->name);
			for (size_t m = 1; m < def->group_n && i + m < n; m++)
				fprintf(stderr, ",%s", counters[i + m].def.name);
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
		if (session_snapshot(s, reason, sizeof(reason)))
			control_reply(ch, false, reason);
		else
			control_reply(ch, true, NULL);
		return;
	case CTL_CMD_STOP:
		/* Acked after the final report, so the client can read it; no
		 * channel reads more, so that ack is every channel's last. */
		counter_reading_end();	/* the final report reads the end of the run */
		session_stop(s, ch);
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
	struct ctl_command cmd;		/* 8 KiB: the loop's stack has room */
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
