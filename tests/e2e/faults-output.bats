#!/usr/bin/env bats
# faults-output.bats: issue 8's report-output faults -- nothing hangs,
# nothing is lost, and what cannot be written is said.
#
# An output "nobody reads" is a FIFO the test holds open read-write and
# never reads: the agent's writes fill it and then find it full.  Progress
# is followed through replies (a snapshot's err says the backlog is full),
# never through sleeps; every wait is bounded.  The limits and texts
# asserted here are those of docs/perfgate.1 (OUTPUT, EXIT STATUS) and
# docs/perfgate-protocol.7 (snapshot).

load helpers

LIMIT=1048576
SNAP_REFUSED="err snapshot refused: the report output's backlog would pass its limit of $LIMIT bytes (its reader is not keeping up)"

setup() {
	common_setup
	control_setup
	mkfifos ready go
}

# pg_bg_stderr FIFO ARGS...: pg_bg with the agent's stderr on FIFO $T/FIFO,
# which the test holds open (in STDERR_FIFO_FD) and never reads.
pg_bg_stderr() {
	local fifo=$1
	shift
	mkfifos "$fifo"
	open_rw STDERR_FIFO_FD "$T/$fifo"
	# shellcheck disable=SC2086
	timeout --foreground -k 2 "$PG_TIMEOUT" "$PERFGATE" ${PG_ARGS:-} "$@" \
		>"$T/out" 2>"$T/$fifo" 3>&- </dev/null &
	AGENT_PID=$!
}

# pg_fd3 TARGET ARGS...: pg with fd 3 opened for writing on TARGET.
pg_fd3() {
	local target=$1
	shift
	status=0
	# shellcheck disable=SC2086
	timeout --foreground -k 2 "$PG_TIMEOUT" "$PERFGATE" ${PG_ARGS:-} "$@" \
		>"$T/out" 2>"$T/err" 3>"$target" </dev/null || status=$?
}

# fill_backlog: begin 100 windows (so that every report is 101 lines), then
# send snapshots until one is refused; its reply must be the documented err.
fill_backlog() {
	local i
	for i in $(seq 1 100); do
		expect_reply "window begin w$i" ack
	done
	for i in $(seq 1 400); do
		cmd snapshot
		[ "$REPLY_LINE" = ack ] || break
	done
	[ "$REPLY_LINE" = "$SNAP_REFUSED" ] ||
		fail "snapshot $i: expected '$SNAP_REFUSED', got '$REPLY_LINE'"
}

@test "an unread stderr pipe blocks nothing: acks keep coming, snapshots are refused, SIGTERM ends the run" {
	pg_bg_stderr err.fifo -D -1 -I 10 -e task-clock --control "fifo:$CTL,$ACK" -- \
		"$MARKER" pid "$T/m.pid" wait "$T/go"
	fill_backlog
	# The output is full and stays full: the loop still serves every channel.
	for i in $(seq 1 50); do
		expect_reply ping ack
	done
	cmd "window end w1"
	[[ $REPLY_LINE == "ack {\"window\":\"w1\","* ]] || fail "window end: got '$REPLY_LINE'"
	kill -TERM "$(agent_pid)"
	pg_wait
	# It died of SIGTERM (143), within the bounded final wait, not of the
	# test's timeout (124, 137).
	expect_status 143
	gone "$(cat "$T/m.pid")" || fail "the workload is still running"
}

@test "-o on a FIFO nobody reads: intervals dropped with one warning, the final report's loss said, exit 1" {
	mkfifos rep.fifo
	open_rw REP_FD "$T/rep.fifo"
	pg_bg -a -I 10 -e task-clock -o "$T/rep.fifo" --control "fifo:$CTL,$ACK"
	fill_backlog
	local warn="perfgate: warning: the report output '$T/rep.fifo' is not being read: more than $LIMIT bytes wait to be written; dropping interval reports until it catches up"
	# No ack tells that an interval was dropped: wait for the warning (bounded).
	poll_until "no warning '$warn'" grep -qF -- "$warn" "$T/err"
	expect_reply stop ack
	pg_wait
	expect_status 1
	[ "$(grep -cF -- "$warn" "$T/err")" = 1 ] || { show_run; fail "expected the warning once"; }
	grep -Eq "^perfgate: warning: the report output '$T/rep.fifo' fell behind: [0-9]+ interval reports? dropped, [0-9]+ snapshots? refused$" "$T/err" ||
		{ show_run; fail "no summary of what was dropped"; }
	tail -n 1 "$T/err" | grep -Eq "^perfgate: cannot write the report to '$T/rep.fifo': it was not read in time \(2 s without progress, 10 s in all\); [0-9]+ bytes were not written$" ||
		{ show_run; fail "the final report's loss is not said"; }
}

@test "-o /dev/full and --log-fd on /dev/full: the failure is said, exit 1 or the workload's status" {
	pg -e task-clock -o /dev/full -- "$MARKER" exit 0
	expect_status 1
	expect_err_is "perfgate: cannot write the report to '/dev/full': No space left on device"

	pg -e task-clock -o /dev/full -- "$MARKER" exit 3
	expect_status 3
	expect_err_is "perfgate: cannot write the report to '/dev/full': No space left on device"

	pg_fd3 /dev/full -e task-clock --log-fd 3 -- "$MARKER" exit 0
	expect_status 1
	expect_err_is "perfgate: cannot write the report to 'fd 3': No space left on device"

	pg -e task-clock --json-file /dev/full -- "$MARKER" exit 0
	expect_status 1
	grep -qx "perfgate: cannot write --json-file '/dev/full': No space left on device" "$T/err" ||
		{ show_run; fail "--json-file /dev/full: no message"; }
}

@test "--log-fd on a pipe whose reader has gone: Broken pipe is said, exit 1" {
	mkfifos log.fifo
	open_rw LOG_FD "$T/log.fifo"
	status=0
	timeout --foreground -k 2 "$PG_TIMEOUT" "$PERFGATE" -e task-clock --log-fd 3 -- \
		"$MARKER" notify "$T/ready" wait "$T/go" exit 0 \
		>"$T/out" 2>"$T/err" 3>"$T/log.fifo" {LOG_FD}>&- </dev/null &
	AGENT_PID=$!
	wait_line ready
	# The agent has its output open: the last reader goes away.
	exec {LOG_FD}<&-
	release go
	pg_wait
	expect_status 1
	expect_err_is "perfgate: cannot write the report to 'fd 3': Broken pipe"
}

@test "text that is not UTF-8 (a workload argument, filters) gives valid JSON with every view" {
	local ff=$'\xff'
	local label="$WRITE(comm == \"$ff\").."
	pg -x, --json-file "$T/run.json" -e "$WRITE" --filter "comm == \"$ff\"" \
		-e "task-clock@$label" -- "$MARKER" say $'\xff\xfe'
	expect_status 0
	run json_file_asserts "$T/run.json" '
r = "\ufffd"
assert d["run"]["command"][1:] == ["say", r + r], d["run"]["command"]
assert d["events"][0]["filter"] == "comm == \"%s\"" % r, d["events"]
label = "syscalls:sys_enter_write(comm == \"%s\").." % r
views = [(v["event"], v["gate"], v.get("range")) for v in d["views"]]
assert ("syscalls:sys_enter_write", "default", None) in views, views
assert ("task-clock", "range", label) in views, views
assert d["ranges"][0]["label"] == label, d["ranges"]'
	[ "$status" = 0 ] || { show_run; echo "$output"; fail "the document lacks what was counted"; }
	# Written through a temporary file that is gone.
	[ -z "$(find "$T" -name '.run.json.*')" ] || fail "a temporary file was left"

	# The window-end reply and perf's -j lines: the same text, valid JSON.
	pg -j -D -1 --control "fifo:$CTL,$ACK" -e "task-clock@$label" -- \
		"$MARKER" ctl "$CTL" "$ACK" "window begin w" write 3 ctl "$CTL" "$ACK" "window end w"
	expect_status 0
	tail -n 1 "$T/out" | sed 's/^ack //' >"$T/reply.json"
	run json_file_asserts "$T/reply.json" '
key = "task-clock@syscalls:sys_enter_write(comm == \"\ufffd\").."
assert key in d["call"]["ranges"] and key in d["ranges"], d'
	[ "$status" = 0 ] || { show_run; echo "$output"; fail "window-end reply: $output"; }
	run python3 -c 'import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("{"):
        json.loads(line)' "$T/err"
	[ "$status" = 0 ] || { show_run; fail "-j lines: $output"; }
	grep -q '"range" : "syscalls:sys_enter_write(comm == \\"'$'\xef\xbf\xbd''\\")..' "$T/err" ||
		{ show_run; fail "-j: no range line"; }
}

@test "a symbolic link in a sticky world-writable directory is refused for -o and --json-file" {
	mkdir "$T/sticky"
	chmod 1777 "$T/sticky"
	ln -s "$T/victim" "$T/sticky/link"
	chown -h nobody "$T/sticky/link"
	pg -e task-clock -o "$T/sticky/link" -- "$MARKER" say ran
	expect_status 255
	expect_err_is "perfgate: refusing output file '$T/sticky/link': it is a symbolic link in the sticky world-writable directory '$T/sticky', owned by neither us nor the directory's owner"
	pg -e task-clock --json-file "$T/sticky/link" -- "$MARKER" say ran
	expect_status 255
	expect_err_is "perfgate: refusing --json-file '$T/sticky/link': it is a symbolic link in the sticky world-writable directory '$T/sticky', owned by neither us nor the directory's owner"
	expect_out ""
	[ ! -e "$T/victim" ] || fail "the link was followed"
	# Our own link there is followed, as the kernel would; the file it
	# names gets the document, the link stays.
	ln -s "$T/mine.json" "$T/sticky/mine"
	pg -e task-clock --json-file "$T/sticky/mine" -- "$MARKER" exit 0
	expect_status 0
	[ -L "$T/sticky/mine" ] && json_file_asserts "$T/mine.json" 'assert d["run"]["exit_status"] == 0'
}

@test "a --json-file that cannot be written is refused at start-up" {
	pg -e task-clock --json-file "$T/nodir/run.json" -- "$MARKER" say ran
	expect_status 255
	expect_err_is "perfgate: cannot write --json-file '$T/nodir/run.json': cannot create a file in '$T/nodir': No such file or directory"
	expect_out ""
	pg -e task-clock --json-file "$T" -- "$MARKER" say ran
	expect_status 255
	expect_err_is "perfgate: cannot write --json-file '$T': Is a directory"
	expect_out ""
}

# snapshot_not_refused: ask for a snapshot; its reply (in REPLY_LINE) is
# not the refusal for a full backlog.
snapshot_not_refused() {
	cmd snapshot
	[ "$REPLY_LINE" != "$SNAP_REFUSED" ]
}

@test "snapshot: refused with an err naming the limit when it would pass the output's backlog limit" {
	mkfifos rep.fifo
	open_rw REP_FD "$T/rep.fifo"
	pg_bg -D -1 -e task-clock -o "$T/rep.fifo" --control "fifo:$CTL,$ACK" -- \
		"$MARKER" pid "$T/m.pid" wait "$T/go"
	fill_backlog
	# Refused again while nobody reads; other commands are served.
	expect_reply snapshot "$SNAP_REFUSED"
	expect_reply ping ack
	# Once the reader reads, snapshots are taken again.
	# (teardown ends it: it never sees an end of file on our FIFO)
	cat <&"$REP_FD" >/dev/null 2>&1 3>&- &
	BG_PIDS+=($!)
	# No ack tells that the backlog drained: ask again (bounded).
	poll_until "snapshots still refused while the output is read" snapshot_not_refused
	[ "$REPLY_LINE" = ack ] || fail "snapshot: got '$REPLY_LINE'"
	release go
	pg_wait
	expect_status 0
}

@test "snapshot: one bigger than the limit is refused even to a regular file (4096 windows)" {
	# 4096 round trips take seconds on a loaded machine: a longer bound.
	PG_TIMEOUT=60
	pg_bg -D -1 -e "task-clock,$GETPPID,$GETPGID" -o "$T/report" \
		--control "fifo:$CTL,$ACK" -- "$MARKER" pid "$T/m.pid" wait "$T/go"
	# 4096 windows in one go, then their 4096 replies.
	for i in $(seq 1 4096); do printf 'window begin w%d\n' "$i"; done >&"$CTL_FD"
	for i in $(seq 1 4096); do
		expect_next_reply ack "window begin w$i"
	done
	# 3 x 4097 text lines of about 107 bytes: more than 1 MiB at once.
	cmd snapshot
	[[ $REPLY_LINE =~ ^err\ snapshot\ refused:\ it\ would\ be\ [0-9]+\ bytes,\ more\ than\ the\ report\ output\'s\ limit\ of\ $LIMIT\ bytes$ ]] ||
		fail "snapshot: got '$REPLY_LINE'"
	# perf's "# started on DATE" header and its blank line, nothing more.
	[ "$(grep -cv '^# started on \|^$' "$T/report")" = 0 ] ||
		{ show_run "$T/report"; fail "a refused snapshot printed lines"; }
	expect_reply ping ack
	release go
	pg_wait
	expect_status 0
	grep -q "^perfgate: warning: the report output '$T/report' fell behind: 0 interval reports dropped, 1 snapshot refused$" "$T/err" ||
		{ show_run; fail "no count of the refused snapshot"; }
}
