#!/usr/bin/env bats
# faults-control.bats: control channels under misuse (issue 8) -- clients
# that die mid-command, flood, grow the agent, or channels that belong to
# someone else or feed on themselves.  Each test is one class of fault;
# every refusal and every limit is checked by its exact text
# (docs/perfgate.1, docs/perfgate-protocol.7).
#
# Synchronisation is by replies, by the agent's own warnings, or by FIFOs;
# every wait is bounded.  No test depends on a quiet machine: the flood
# test asserts only loose shares, never a latency.

load helpers

setup() {
	common_setup
	control_setup
	mkfifos end
}

# batch FILE ACKS ERR: write FILE's commands on ch (in the background:
# the agent may make the writer wait for its replies to be read; teardown
# ends a writer left waiting), and read what must come back, ACKS bare acks
# then the one line ERR, into $T/replies (one reply a line, NULs dropped).
# Read by size in one process: a bash loop over thousands of replies is
# slow under bats.
batch() {
	cat "$1" >&"$CTL_FD" &
	BG_PIDS+=($!)
	timeout "$PG_TIMEOUT" head -c $(($2 * 5 + ${#3} + 2)) <&"$ACK_FD" | tr -d '\0' >"$T/replies" ||
		fail "fewer reply bytes than $2 acks and '$3' (agent alive: $(agent_alive))"
	[ "$(grep -c '^ack$' "$T/replies")" = "$2" ] || { cat "$T/replies" | sort | uniq -c; fail "not $2 acks"; }
	[ "$(tail -n 1 "$T/replies")" = "$3" ] || fail "last reply: got '$(tail -n 1 "$T/replies")'"
}

# ---- 4: a partial line from a dead writer --------------------------------

@test "a writer killed mid-command: its partial line is reported and not glued to the next command" {
	serve_writers
	# Half a command (no NAME yet, so no command on its own), no newline,
	# then the writer is killed.
	killed_writer w.ctl "window begin"
	# The agent saw the writer go and says what it dropped ...
	wait_err "perfgate: warning: control channel fifo:$T/w.ctl: discarded 12 bytes without a newline when the writer closed: 'window begin'"
	# ... so the next writer's command stands alone: glued, this would
	# open a window 'doomed'.
	write_once w.ctl ' doomed\n'
	expect_next_reply "err unknown command 'doomed'" "glued to the dead writer's bytes"
	write_once w.ctl 'window end doomed\n'
	expect_next_reply "err window 'doomed' is not open" "a glued window was opened"
	finish
}

@test "a writer killed after a whole command with no terminator: it is executed, once" {
	serve_writers
	killed_writer w.ctl "window begin killed"
	# perf ends a command where the bytes end: the window is open.
	expect_next_reply ack "window begin killed"
	local w
	open_rw w "$T/w.ctl"
	cmd "$w" "$ACK_FD" "window end killed"
	[[ $REPLY_LINE == 'ack {"window":"killed","calls":1,'* ]] || fail "window end: got '$REPLY_LINE'"
	expect_reply_on "$w" "$ACK_FD" ping ack
	finish
	! grep -q discarded "$T/err" || { show_run; fail "the command was discarded"; }
}

@test "an fd: pipe whose writer exits mid-command: the partial line is reported, no window opened" {
	local p
	# The only writer of this pipe writes half a command and exits.
	exec {p}< <(printf 'window begin doomed/')
	pg_bg -x, --control "fd:$p" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 wait "$T/end" exit 7
	exec {p}<&-
	wait_err "perfgate: warning: control channel fd:$p: discarded 20 bytes without a newline when the writer closed: 'window begin doomed/'"
	finish
	# The warning is the only mention: no window 'doomed' in the report.
	[ "$(grep -c doomed "$T/err")" = 1 ] || { show_run; fail "a window 'doomed' was opened"; }
}

# ---- 5: one channel cannot starve the others ------------------------------

# grows_past FILE SIZE: FILE is larger than SIZE bytes (for poll_until).
grows_past() {
	[ "$(stat -c %s "$1")" -gt "$2" ]
}

@test "a flooding channel: another channel and the interval lines keep their share" {
	chan two CTL2 ACK2
	pg_bg -x, -I 100 --control "fifo:$CTL,$ACK" --control "fifo:$T/two.ctl,$T/two.ack" \
		-e "$GETPPID" -- "$MARKER" pid "$T/m.pid" getppid 5 wait "$T/end" exit 7
	expect_reply ping ack
	# Channel ch floods, and its acks are read as fast as they come.
	yes ping >&"$CTL_FD" &
	BG_PIDS+=($!)
	cat <&"$ACK_FD" >"$T/flood.acks" &
	BG_PIDS+=($!)
	# No bound on a rate here (a busy machine may slow everything): the
	# share is an order of events.  The flood is served before the lines
	# are counted and still after the 20th: those lines came out, and
	# channel two was answered each time, while ch flooded.
	poll_until "the flood on ch was never answered" grows_past "$T/flood.acks" 0
	local pings=0 lines=0 base flood
	base=$(grep -c "^ *[0-9.]*,.*$GETPPID" "$T/err" || true)
	while [ "$lines" -lt $((base + 20)) ]; do
		expect_reply_on "$CTL2" "$ACK2" ping ack
		pings=$((pings + 1))
		lines=$(grep -c "^ *[0-9.]*,.*$GETPPID" "$T/err" || true)
		agent_alive | grep -qx yes || { show_run; fail "the agent ended after $((lines - base)) interval lines"; }
	done
	flood=$(stat -c %s "$T/flood.acks")
	poll_until "the flood on ch was not answered after the interval lines" \
		grows_past "$T/flood.acks" "$flood"
	for pid in "${BG_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
	echo "# $((lines - base)) interval lines; $pings pings on two, $((flood / 5)) flood pings" >&3
	release end
	pg_wait
	expect_status 7
}

@test "an ack reader that stops reading: its channel waits, no reply is dropped, others are served" {
	chan two CTL2 ACK2
	serve --control "fifo:$T/two.ctl,$T/two.ack"
	expect_reply ping ack
	# 50000 pings (250 KB of acks) while nobody reads ch.ack.
	yes ping | head -n 50000 >"$T/pings"
	cat "$T/pings" >&"$CTL_FD" &
	local writer=$!
	BG_PIDS+=("$writer")
	# The agent is not blocked: the other channel is served meanwhile.
	expect_reply_on "$CTL2" "$ACK2" ping ack
	# Reading ch.ack now lets the writer finish: every ack is there.
	got=$(timeout "$PG_TIMEOUT" head -c 250000 <&"$ACK_FD" | tr -d '\0' | grep -c '^ack$')
	[ "$got" = 50000 ] || fail "read $got of 50000 acks"
	timeout "$PG_TIMEOUT" tail --pid="$writer" -f /dev/null ||
		fail "the writer is still waiting after every ack was read"
	wait "$writer" || fail "the writer failed (status $?)"
	expect_reply ping ack
	finish
	! grep -q "dropping replies" "$T/err" || { show_run; fail "replies were dropped"; }
}

# ---- 6: what a client can grow is bounded ---------------------------------

@test "window nesting is capped: err names the limit, an end makes room again" {
	serve
	yes "window begin deep" | head -n 1025 >"$T/cmds"
	batch "$T/cmds" 1024 "err window 'deep' is nested too deep (at most 1024 begins without an end)"
	cmd "window end deep"
	[[ $REPLY_LINE == "ack {"* ]] || fail "window end: got '$REPLY_LINE'"
	expect_reply "window begin deep" ack
	expect_reply "window begin deep" "err window 'deep' is nested too deep (at most 1024 begins without an end)"
	finish
}

@test "open windows over all names are capped: err names the limit" {
	serve
	local i
	for i in $(seq 1 4); do yes "window begin w$i" | head -n 1024; done >"$T/cmds"
	echo "window begin w5" >>"$T/cmds"
	batch "$T/cmds" 4096 "err too many open windows (at most 4096 begins without an end, all windows together)"
	cmd "window end w3"
	[[ $REPLY_LINE == "ack {"* ]] || fail "window end: got '$REPLY_LINE'"
	expect_reply "window begin w5" ack
	finish
}

@test "loaded range sets are capped: err names the limit, an unload makes room" {
	# The cap does not depend on the backend; the sample backend with one
	# page loads fastest.
	serve --range-backend sample -m 1
	local i gate=syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid
	for i in $(seq 1 16); do
		expect_reply "range load r$i = $WRITE@$gate" ack
	done
	expect_reply "range load r17 = $WRITE@$gate" \
		"err too many loaded range sets (at most 16; unload one first)"
	expect_reply "range unload r1" ack
	expect_reply "range load r17 = $WRITE@$gate" ack
	finish
}

# ---- 7a: channels other users could drive ---------------------------------

@test "a FIFO owned by another user is refused; --control-shared allows it" {
	mkfifos theirs.ctl theirs.ack
	chown nobody "$T/theirs.ctl" "$T/theirs.ack"
	pg -x, --control "fifo:$T/theirs.ctl,$ACK" -e "$GETPPID" -- "$MARKER" say ran
	refused_with_line "perfgate: refusing control FIFO '$T/theirs.ctl': it is owned by nobody (uid 65534), not by root (uid 0) who runs perfgate (use --control-shared to allow it)"
	pg -x, --control "fifo:$CTL,$T/theirs.ack" -e "$GETPPID" -- "$MARKER" say ran
	refused_with_line "perfgate: refusing ack FIFO '$T/theirs.ack': it is owned by nobody (uid 65534), not by root (uid 0) who runs perfgate (use --control-shared to allow it)"
	# Even when they may be written by all: the owner decides.
	chmod 666 "$T/theirs.ctl"
	pg -x, --control "fifo:$T/theirs.ctl,$ACK" -e "$GETPPID" -- "$MARKER" say ran
	refused_with_line "perfgate: refusing control FIFO '$T/theirs.ctl': it is owned by nobody (uid 65534), not by root (uid 0) who runs perfgate (use --control-shared to allow it)"
	# Sharing on purpose: accepted, and served.
	local c
	open_rw c "$T/theirs.ctl"
	pg_bg -x, --control-shared --control "fifo:$T/theirs.ctl,$ACK" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 wait "$T/end" exit 7
	expect_reply_on "$c" "$ACK_FD" ping ack
	finish
	! grep -q warning "$T/err" || { show_run; fail "a warning with --control-shared"; }
}

# The named lock page the agent would make for a channel on FIFO $1.
lock_page() {
	echo "/dev/shm/perfgate-lock.$(stat -c %d.%i "$1")"
}

@test "FIFOs its group or others can write are served, as perf serves them, with one warning; range load/unload refused" {
	# As a launcher makes them: umask 0, or chmod 666.
	(umask 0; mkfifo "$T/open.ctl" "$T/open.ack")
	local c a range="$WRITE@syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid"
	open_rw c "$T/open.ctl"
	open_rw a "$T/open.ack"
	pg_bg -x, --range-backend sample -m 1 --control "fifo:$T/open.ctl,$T/open.ack" \
		-e "$GETPPID" -- "$MARKER" pid "$T/m.pid" getppid 5 wait "$T/end" exit 7
	expect_reply_on "$c" "$a" ping ack
	expect_reply_on "$c" "$a" "range load r = $range" \
		"err 'range load' refused: users other than its owner can write to this control FIFO (use --control-shared to allow it)"
	expect_reply_on "$c" "$a" "range unload r" \
		"err 'range unload' refused: users other than its owner can write to this control FIFO (use --control-shared to allow it)"
	expect_reply_on "$c" "$a" "window begin w" ack
	# No named lock page: other users' clients could not open it, so
	# every client takes the record lock.
	[ ! -e "$(lock_page "$T/open.ctl")" ] || fail "a lock page for a FIFO others can write"
	finish
	[ "$(grep -c warning "$T/err")" = 1 ] || { show_run; fail "not exactly one warning"; }
	grep -qxF "perfgate: warning: control channel fifo:$T/open.ctl: users other than its owner can write to its control FIFO (mode 0666) and its ack FIFO '$T/open.ack' (mode 0666), so they can drive this run and forge its replies; 'range load' and 'range unload' are refused on it (chmod go-w, or use --control-shared to allow them)" \
		"$T/err" || { show_run; fail "not the warning"; }
}

@test "an ack FIFO only its group can write: served, one warning, range load allowed" {
	mkfifos grp.ack
	chmod 620 "$T/grp.ack"
	local a
	open_rw a "$T/grp.ack"
	pg_bg -x, --range-backend sample -m 1 --control "fifo:$CTL,$T/grp.ack" \
		-e "$GETPPID" -- "$MARKER" pid "$T/m.pid" getppid 5 wait "$T/end" exit 7
	expect_reply_on "$CTL_FD" "$a" \
		"range load r = $WRITE@syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid" ack
	finish
	[ "$(grep -c warning "$T/err")" = 1 ] || { show_run; fail "not exactly one warning"; }
	grep -qxF "perfgate: warning: control channel fifo:$CTL: users other than its owner can write to its ack FIFO '$T/grp.ack' (mode 0620), so they can forge its replies (chmod go-w, or use --control-shared if that is meant)" \
		"$T/err" || { show_run; fail "not the warning"; }
}

@test "--control-shared: range load on a FIFO others can write is served, silently" {
	(umask 0; mkfifo "$T/open.ctl" "$T/open.ack")
	local c a
	open_rw c "$T/open.ctl"
	open_rw a "$T/open.ack"
	pg_bg -x, --control-shared --range-backend sample -m 1 \
		--control "fifo:$T/open.ctl,$T/open.ack" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 wait "$T/end" exit 7
	expect_reply_on "$c" "$a" \
		"range load r = $WRITE@syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid" ack
	expect_reply_on "$c" "$a" "range unload r" ack
	finish
	! grep -q warning "$T/err" || { show_run; fail "a warning with --control-shared"; }
}

@test "a second agent on FIFOs another agent reads is refused, naming it; the first serves on" {
	serve
	expect_reply ping ack
	local first
	first=$(agent_pid)
	# Its own outputs: the first agent still writes to out and err.
	status=0
	timeout -k 2 "$PG_TIMEOUT" "$PERFGATE" -x, --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" say ran >"$T/out2" 2>"$T/err2" </dev/null || status=$?
	[ "$status" = 255 ] || { cat "$T/err2"; fail "status $status, not 255"; }
	grep -qxF "perfgate: refusing control FIFO '$CTL': another perfgate (pid $first) reads it" \
		"$T/err2" || { cat "$T/err2"; fail "not the refusal naming pid $first"; }
	[ ! -s "$T/out2" ] || fail "the second agent's workload ran"
	expect_reply ping ack
	finish
}

# ---- 9a: a channel that feeds on itself ----------------------------------

@test "the same FIFO or pipe as control and ack is refused at start-up" {
	pg -x, --control "fifo:$CTL,$CTL" -e "$GETPPID" -- "$MARKER" say ran
	refused_with_line "perfgate: control channel fifo:$CTL: the control and ack FIFOs are the same pipe; every reply would be read back as a command"
	# Another name for the same FIFO (a hard link).
	ln "$CTL" "$T/alias"
	pg -x, --control "fifo:$CTL,$T/alias" -e "$GETPPID" -- "$MARKER" say ran
	refused_with_line "perfgate: control channel fifo:$CTL: the control and ack FIFOs are the same pipe; every reply would be read back as a command"
	pg -x, --control "fd:$CTL_FD,$CTL_FD" -e "$GETPPID" -- "$MARKER" say ran
	refused_with_line "perfgate: control channel fd:$CTL_FD: the control and ack fds are the same pipe; every reply would be read back as a command"
	# One channel's acks into another's commands.
	chan two CTL2 ACK2
	pg -x, --control "fifo:$CTL,$T/two.ctl" --control "fifo:$T/two.ctl,$ACK" \
		-e "$GETPPID" -- "$MARKER" say ran
	refused_with_line "perfgate: control channel fifo:$CTL: its ack FIFO '$T/two.ctl' is the control channel fifo:$T/two.ctl; every reply would be read back as a command"
	pg -x, --control "fifo:$CTL,$ACK" --control "fifo:$CTL,$T/two.ack" \
		-e "$GETPPID" -- "$MARKER" say ran
	refused_with_line "perfgate: control channels fifo:$CTL and fifo:$CTL read the same pipe; each command would go to one of them at random"
}

# ---- 9b: fd: channels on what cannot be waited on -------------------------

@test "fd: on a regular file or /dev/null is refused with a clear message" {
	: >"$T/plain"
	pg -x, --control "fd:5" -e "$GETPPID" -- "$MARKER" say ran 5<"$T/plain"
	refused_with_line "perfgate: control channel fd:5: fd 5 is a regular file ($T/plain); a control channel must be a pipe, FIFO or socket"
	pg -x, --control "fd:5" -e "$GETPPID" -- "$MARKER" say ran 5</dev/null
	refused_with_line "perfgate: control channel fd:5: fd 5 is a character device that cannot be polled (/dev/null); a control channel must be a pipe, FIFO or socket"
	pg -x, --control "fd:$CTL_FD,6" -e "$GETPPID" -- "$MARKER" say ran 6>/dev/null
	refused_with_line "perfgate: control channel fd:$CTL_FD: ack fd 6 is a character device that cannot be polled (/dev/null); an ack channel must be a pipe, FIFO or socket"
	! grep -q '\[warn\]' "$T/err" || { show_run; fail "a libevent warning leaked"; }
}
