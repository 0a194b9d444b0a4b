#!/usr/bin/env bats
# control.bats: the control channels and the protocol, end to end.
#
# The agent runs a marker that blocks (`wait end`) so it stays up while the
# test drives it; every exchange is command -> reply, read with a timeout.
# Exact reply texts come from the protocol (docs/protocol.md): every command
# gets exactly one reply line, framed "ack\n\0" / "err REASON\n\0"; an
# empty line is no command and gets none.  A command ends at '\n', at '\0',
# or where the bytes written end, as in perf 6.1.

load helpers

setup() {
	common_setup
	control_setup
	mkfifos end ready go
}

# raw_reply N: read exactly N bytes from the ack channel, as hex.
raw_reply() {
	timeout 5 dd bs=1 count="$1" status=none <&"$ACK_FD" | od -An -tx1 | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'
}

# expect_raw_ack WHAT: the next 5 bytes on the ack channel are exactly
# "ack\n\0" (WHAT names the command in the failure).
expect_raw_ack() {
	local got
	got=$(raw_reply 5)
	[ "$got" = "61 63 6b 0a 00" ] || fail "$1: reply bytes '$got'"
}

@test "ping, and an unknown command: one err with the reason, then served" {
	serve
	expect_reply ping ack
	expect_reply enablexyz "err unknown command 'enablexyz'"
	expect_reply ping ack
	finish
}

@test "empty lines get no reply: the next bytes on the ack channel are the next command's" {
	serve
	# A stray "err ..." would be read here instead of ping's 5 bytes.
	printf '\n' >&"$CTL_FD"
	printf ' \t\r\n' >&"$CTL_FD"
	printf 'ping\n' >&"$CTL_FD"
	expect_raw_ack "after empty lines"
	expect_reply enablexyz "err unknown command 'enablexyz'"
	finish
}

@test "a 100 KB line without newline: one err as soon as it passes 4096 bytes" {
	serve
	head -c 102400 /dev/zero | tr '\0' x >"$T/big"
	timeout 5 cat "$T/big" >&"$CTL_FD"
	# The reply comes before the line ends ...
	expect_next_reply "err command too long (over 4096 bytes)"
	# ... and its terminator, when it comes, is discarded with the rest.
	printf '\n' >&"$CTL_FD"
	expect_reply ping ack
	finish
}

@test "4096 bytes is a command, 4097 is too long" {
	serve
	local x4096
	x4096=$(head -c 4096 /dev/zero | tr '\0' x)
	# Exactly 4096 bytes is still a line: parsed, and unknown.  (The reply
	# may quote a shortened prefix of it.)
	cmd "$x4096"
	[[ $REPLY_LINE == "err unknown command 'xxxxxxxx"* ]] || fail "4096 bytes: got '$REPLY_LINE'"
	expect_reply "${x4096}y" "err command too long (over 4096 bytes)"
	expect_reply ping ack
	finish
}

@test "a NUL ends a command like a newline" {
	serve
	printf 'ping\0' >&"$CTL_FD"
	expect_next_reply ack "ping\\0"
	printf 'ping\0ping\n' >&"$CTL_FD"
	expect_next_reply ack "first"
	expect_next_reply ack "second"
	expect_reply enablexyz "err unknown command 'enablexyz'"
	finish
}

@test "NUL bytes: an empty command gets nothing, each broken one one err" {
	serve
	printf '\0' >&"$CTL_FD"
	printf '\n\0' >&"$CTL_FD"
	printf 'en\0able\n' >&"$CTL_FD"
	expect_next_reply "err unknown command 'en'" "en\\0"
	expect_next_reply "err unknown command 'able'" "able\\n"
	expect_reply ping ack
	finish
}

@test "commands split across writes, and several in one write" {
	serve
	printf 'pi' >&"$CTL_FD"
	printf 'ng\n' >&"$CTL_FD"
	expect_next_reply ack "split ping"
	printf 'ping\nbogus\nping\n' >&"$CTL_FD"
	expect_next_reply ack "1st"
	expect_next_reply "err unknown command 'bogus'" "2nd"
	expect_next_reply ack "3rd"
	# Nothing extra is pending: the next reply is the next command's.
	expect_reply enablexyz "err unknown command 'enablexyz'"
	finish
}

@test "reply bytes are exactly ack\\n\\0 and err REASON\\n\\0" {
	serve
	local c
	for c in ping enable disable e d ping; do
		printf '%s\n' "$c" >&"$CTL_FD"
		expect_raw_ack "$c"
	done
	printf 'x\n' >&"$CTL_FD"
	got=$(raw_reply 25)
	want=$(printf "err unknown command 'x'\n\0" | od -An -tx1 | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
	[ "$got" = "$want" ] || fail "err reply bytes '$got', expected '$want'"
	printf 'ping\n' >&"$CTL_FD"
	expect_raw_ack "ping after err"
	release end
	pg_wait
	expect_status 7
}

@test "disable\\n\\0 (sizeof \"disable\\n\"): exactly the 5 bytes ack\\n\\0, nothing more" {
	serve
	wait_line ready		# its 5 calls are counted: the window is open
	printf 'disable\n\0' >&"$CTL_FD"
	expect_raw_ack "disable\\n\\0"
	printf 'enable\n\0' >&"$CTL_FD"
	expect_raw_ack "enable\\n\\0"
	# The NULs left nothing behind: the next 5 bytes are ping's.
	printf 'ping\n' >&"$CTL_FD"
	expect_raw_ack "ping"
	finish
}

# bare_serve: the agent, default window closed (-D -1), on channel ch; the
# workload makes 5 getppid() calls, says "ready", waits for "go", makes 7,
# says "ready2", waits for "end", makes 11 and exits 7.  Only the 7 between
# an enable and a disable count.
bare_serve() {
	mkfifos ready2
	pg_bg -x, -D -1 --control "fifo:${1:-$CTL},$ACK" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 notify "$T/ready" wait "$T/go" \
		getppid 7 notify "$T/ready2" wait "$T/end" getppid 11 exit 7
}

# bare_finish: release the workload; exactly its 7 calls between were counted.
bare_finish() {
	release end
	pg_wait
	expect_status 7
	expect_value "$GETPPID" 7
	! grep -q "discarded" "$T/err" || { show_run; fail "bytes were discarded"; }
}

@test "a bare enable and disable, no terminator, as perf takes them: acked, and they count" {
	bare_serve
	wait_line ready
	printf 'enable' >&"$CTL_FD"
	expect_raw_ack "bare enable"
	release go
	wait_line ready2
	printf 'disable' >&"$CTL_FD"
	expect_raw_ack "bare disable"
	expect_reply ping ack
	bare_finish
}

@test "a bare command whose writer then closes is executed, not dropped" {
	mkfifos w.ctl
	bare_serve "$T/w.ctl"
	wait_line ready
	write_once w.ctl enable
	expect_next_reply ack "enable, then close"
	release go
	wait_line ready2
	write_once w.ctl disable
	expect_next_reply ack "disable, then close"
	bare_finish
}

@test "a command split into a fragment and its rest, written apart: one ack" {
	serve
	# "window be" is no command: it waits, silently, however long its
	# rest takes (here longer than the agent's 2 ms grace for bare
	# commands; the test does not depend on how much longer).
	printf 'window be' >&"$CTL_FD"
	sleep 0.1
	printf 'gin rep\n' >&"$CTL_FD"
	expect_raw_ack "window be + gin rep"
	cmd "window end rep"
	[[ $REPLY_LINE == 'ack {"window":"rep","calls":1,'* ]] || fail "window end: got '$REPLY_LINE'"
	expect_reply ping ack
	finish
}

@test "evlist, as perf acks it: ack, and the events listed on stderr" {
	serve
	printf 'evlist\n' >&"$CTL_FD"
	expect_raw_ack "evlist"
	printf 'evlist -v' >&"$CTL_FD"
	expect_raw_ack "bare evlist -v"
	expect_reply "evlist -x" "err 'evlist' takes -v, -g or -F"
	finish
	grep -qxF "$GETPPID" "$T/err" || { show_run; fail "evlist: no line '$GETPPID'"; }
	grep -qxE "$GETPPID: type: 2, config: 0x[0-9a-f]+" "$T/err" ||
		{ show_run; fail "evlist -v: no line with the event's type and config"; }
}

@test "an err quoting a command keeps its reply valid UTF-8" {
	serve
	# 63 bytes and a 2-byte character: the quote stops before it.
	local x63
	x63=$(head -c 63 /dev/zero | tr '\0' x)
	expect_reply "${x63}é" "err unknown command '$x63'"
	# Invalid bytes are shown as U+FFFD.
	printf 'caf\xff\xc3\n' >&"$CTL_FD"
	expect_next_reply "err unknown command 'caf��'" "invalid bytes"
	expect_reply ping ack
	finish
}

@test "hello: ack with a JSON object giving the protocol version" {
	needs jq jq
	serve
	cmd hello
	[[ $REPLY_LINE == "ack {"* ]] || fail "hello: got '$REPLY_LINE'"
	json=${REPLY_LINE#ack }
	jq -e 'type == "object"' <<<"$json" >/dev/null || fail "not a JSON object: $json"
	jq -e '[paths(scalars) as $p | select(($p | map(tostring) | join(".")) | test("version|protocol"; "i")) | getpath($p)] | any(. == 1 or . == "1")' \
		<<<"$json" >/dev/null || fail "no protocol version 1 in $json"
	expect_reply ping ack
	finish
}

@test "enable EVENT for an event not being counted: err naming it" {
	serve
	cmd "enable syscalls:sys_enter_nosuchcall"
	[[ $REPLY_LINE == "err "*syscalls:sys_enter_nosuchcall* ]] ||
		fail "got '$REPLY_LINE'"
	expect_reply ping ack
	finish
}

@test "two --control channels at once, each with its own acks" {
	chan two CTL2 ACK2
	mkfifos ready0
	pg_bg -x, -D -1 --control "fifo:$CTL,$ACK" --control "fifo:$T/two.ctl,$T/two.ack" \
		-e "$GETPPID" -- "$MARKER" pid "$T/m.pid" getppid 3 notify "$T/ready0" \
		wait "$T/go" getppid 5 notify "$T/ready" wait "$T/end" getppid 7
	# Commands on both before reading either: each gets its own reply.
	send "$CTL_FD" ping
	send "$CTL2" enablexyz
	reply "$ACK2"
	[ "$REPLY_LINE" = "err unknown command 'enablexyz'" ] || fail "two: got '$REPLY_LINE'"
	reply "$ACK_FD"
	[ "$REPLY_LINE" = ack ] || fail "ch: got '$REPLY_LINE'"
	# A window opened on one channel and closed on the other.
	wait_line ready0
	expect_reply_on "$CTL_FD" "$ACK_FD" enable ack
	release go
	wait_line ready
	expect_reply_on "$CTL2" "$ACK2" disable ack
	# No reply went to the wrong channel.
	expect_reply_on "$CTL2" "$ACK2" ping ack
	expect_reply_on "$CTL_FD" "$ACK_FD" ping ack
	release end
	pg_wait
	expect_status 0
	expect_value "$GETPPID" 5
}

@test "two channels driven concurrently by the workload and the test" {
	chan two CTL2 ACK2
	local steps=() i
	for i in $(seq 200); do steps+=(ctl "$T/two.ctl" "$T/two.ack" ping); done
	pg_bg -x, --control "fifo:$CTL,$ACK" --control "fifo:$T/two.ctl,$T/two.ack" \
		-e "$GETPPID" -- "$MARKER" pid "$T/m.pid" "${steps[@]}" getppid 5 wait "$T/end"
	for i in $(seq 200); do
		expect_reply ping ack
	done
	release end
	pg_wait
	expect_status 0
	[ "$(grep -c '^ack$' "$T/out")" = 200 ] || { show_run; fail "workload did not get 200 acks"; }
	[ "$(wc -l <"$T/out")" = 200 ] || { show_run; fail "workload got extra replies"; }
	expect_value "$GETPPID" 5
}

@test "--control fd:CTL,ACK and --ctl-fd/--ctl-fd-ack" {
	local c a
	mkfifos fd.ctl fd.ack
	open_rw c "$T/fd.ctl"
	open_rw a "$T/fd.ack"
	pg_bg -x, --control "fd:$c,$a" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 wait "$T/end" exit 7
	expect_reply_on "$c" "$a" ping ack
	expect_reply_on "$c" "$a" bogus "err unknown command 'bogus'"
	finish
	# The seed's spelling.  The window is open from the start (no -D): the
	# 5 calls, made before "ready", count; e keeps it open, d closes it.
	pg_bg -x, --ctl-fd "$c" --ctl-fd-ack "$a" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 notify "$T/ready" wait "$T/end" exit 7
	wait_line ready
	expect_reply_on "$c" "$a" e ack
	expect_reply_on "$c" "$a" d ack
	finish
}

@test "a FIFO writer that closes does not end the channel; the next is served" {
	serve_writers
	local i
	for i in 1 2 3; do
		# Each writer opens the FIFO, writes one command and closes it.
		write_once w.ctl 'ping\n'
		expect_next_reply ack "writer $i"
	done
	# With no writer left, the agent is idle: no spinning on end-of-file,
	# and (no -I) no wakeups at all.  (A measurement over 0.5 s, not a
	# synchronisation.)
	# The agent wakes once more when it sees the last writer gone (and
	# reopens the FIFO for the next); that may fall in the first window,
	# so a spinning or periodically waking agent is one that never has a
	# quiet window out of three.
	local pid ticks wake try
	pid=$(agent_pid) || fail "no agent process"
	for try in 1 2 3; do
		ticks=$(cpu_ticks "$pid")
		wake=$(wakeups "$pid")
		sleep 0.5
		ticks=$(($(cpu_ticks "$pid") - ticks))
		wake=$(($(wakeups "$pid") - wake))
		[ "$ticks" -le 5 ] && [ "$wake" = 0 ] && break
	done
	[ "$ticks" -le 5 ] || fail "agent used $ticks ticks in 0.5 s with no writer"
	[ "$wake" = 0 ] || fail "idle agent woke up $wake times in 0.5 s"
	write_once w.ctl 'ping\n'
	expect_next_reply ack "last writer"
	finish
}

@test "the ack reader going away neither kills nor blocks the agent" {
	chan two CTL2 ACK2
	serve --control "fifo:$T/two.ctl,$T/two.ack"
	expect_reply ping ack
	# The only reader of ch.ack leaves; 250 KB of acks are then due on it.
	# Past a bound the agent stops reading ch (its writer waits, as perf's
	# blocking ack write would make it wait): the writer runs in the
	# background, and is ended with the test (by its own pid: a timeout
	# wrapper killed would leave it behind).
	exec {ACK_FD}<&-
	yes ping | head -n 50000 >"$T/pings"
	cat "$T/pings" >&"$CTL_FD" &
	BG_PIDS+=($!)
	# The other channel is still served, and the run ends normally.
	expect_reply_on "$CTL2" "$ACK2" ping ack
	finish
}

@test "nobody ever reading the ack FIFO does not block the agent" {
	mkfifos lone.ctl lone.ack
	pg -x, --control "fifo:$T/lone.ctl,$T/lone.ack" -e "$GETPPID" -- \
		"$MARKER" getppid 5 exit 4
	expect_status 4
	expect_value "$GETPPID" 5
}

@test "a symlink given as a FIFO is refused, naming the path" {
	ln -s "$CTL" "$T/link.ctl"
	pg -x, --control "fifo:$T/link.ctl,$ACK" -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 255 "$T/link.ctl"
	ln -s "$ACK" "$T/link.ack"
	pg -x, --control "fifo:$CTL,$T/link.ack" -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 255 "$T/link.ack"
}

@test "a path that is not a FIFO is refused, naming the path" {
	: >"$T/plain.ctl"
	pg -x, --control "fifo:$T/plain.ctl,$ACK" -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 255 "$T/plain.ctl"
	: >"$T/plain.ack"
	pg -x, --control "fifo:$CTL,$T/plain.ack" -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 255 "$T/plain.ack"
}

@test "stop: final report, then ack, then the run ends" {
	serve -o "$T/report"
	wait_line ready
	expect_reply stop ack
	# The report was complete before the ack was written.
	expect_value "$GETPPID" 5 "$T/report"
	pg_wait
	# The agent ended the workload with SIGTERM, whose status it passes on.
	expect_status 143
	gone "$(cat "$T/m.pid")" || fail "the workload is still running"
}

@test "snapshot: prints the counts so far, now" {
	pg_bg -x, -o "$T/report" --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" getppid 5 notify "$T/ready" wait "$T/go" getppid 2
	wait_line ready
	expect_reply snapshot ack
	expect_value "$GETPPID" 5 "$T/report"
	release go
	pg_wait
	expect_status 0
	[ "$(values "$GETPPID" "$T/report" | tr '\n' ' ')" = "5 7 " ] ||
		{ show_run "$T/report"; fail "expected a snapshot (5) and a final report (7)"; }
}

@test "SIGINT to the agent prints the final report and ends the run" {
	signal_ends_run INT 130
}

@test "SIGTERM to the agent prints the final report and ends the run" {
	signal_ends_run TERM 143
}
