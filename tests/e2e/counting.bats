#!/usr/bin/env bats
# counting.bats: perfgate counts exactly what perf stat would, on real
# kernel events.  The marker makes known numbers of getppid()/getpgid()/
# write() syscalls and opens and closes the agent's window itself over the
# control FIFOs, so every window count below is exact.

load helpers

setup() {
	common_setup
	control_setup
}

# only_inside_counts OPEN CLOSE: with the window closed at the start
# (-D -1), the marker makes 3 getppid() calls, opens the window with the
# command OPEN, makes 5, closes it with CLOSE and makes 7: both commands
# are acked and exactly the 5 inside count.
only_inside_counts() {
	pg -x, -D -1 --control "$CTL_OPT" -e "$GETPPID" -- \
		"$MARKER" getppid 3 "${W[@]}" "$1" getppid 5 "${W[@]}" "$2" getppid 7
	expect_status 0
	expect_out $'ack\nack'
	expect_value "$GETPPID" 5
}

@test "enable/disable: only the calls inside the window count" {
	only_inside_counts enable disable
}

@test "e/d (the seed's spelling): only the calls inside the window count" {
	only_inside_counts e d
}

@test "--ctl-fd/--ctl-fd-ack (the seed's options): the workload's window over inherited fds" {
	# The seed's script opens the FIFOs itself and passes fd numbers; the
	# workload inherits them, so the marker can drive the window with them.
	pg -x, -D -1 --ctl-fd "$CTL_FD" --ctl-fd-ack "$ACK_FD" -e "$GETPPID" -- \
		"$MARKER" getppid 3 fd "$CTL_FD" "$ACK_FD" e getppid 5 \
		fd "$CTL_FD" "$ACK_FD" d getppid 7
	expect_status 0
	expect_out $'ack\nack'
	expect_value "$GETPPID" 5
}

@test "two windows add up" {
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID,$GETPGID" -- \
		"$MARKER" getppid 1 getpgid 1 "${W[@]}" enable getppid 2 getpgid 3 \
		"${W[@]}" disable getppid 4 getpgid 4 "${W[@]}" e getppid 8 getpgid 9 \
		"${W[@]}" d getppid 16 getpgid 16
	expect_status 0
	expect_out $'ack\nack\nack\nack'
	expect_value "$GETPPID" 10
	expect_value "$GETPGID" 12
}

@test "without -D the whole run counts, and nothing else" {
	pg -x, --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" getppid 3 "${W[@]}" ping getppid 5 "${W[@]}" ping getppid 7
	expect_status 0
	expect_out $'ack\nack'
	expect_value "$GETPPID" 15
}

@test "-D -1 without any enable: <not counted>" {
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "task-clock,$GETPPID" -- \
		"$MARKER" getppid 5
	expect_status 0
	expect_value "$GETPPID" "<not counted>"
	expect_value task-clock "<not counted>"
}

@test "a window closed twice or opened twice counts once" {
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" "${W[@]}" enable getppid 2 "${W[@]}" enable getppid 3 \
		"${W[@]}" disable getppid 4 "${W[@]}" disable getppid 5
	expect_status 0
	expect_out $'ack\nack\nack\nack'
	expect_value "$GETPPID" 5
}

@test "enable EVENT opens that event's view only" {
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID,$GETPGID" -- \
		"$MARKER" getppid 1 getpgid 1 "${W[@]}" "enable $GETPPID" \
		getppid 5 getpgid 2 "${W[@]}" "disable $GETPPID" getppid 7 getpgid 3
	expect_status 0
	expect_out $'ack\nack'
	expect_value "$GETPPID" 5
	expect_value "$GETPGID" "<not counted>"
}

@test "disable EVENT closes that event's view only" {
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID,$GETPGID" -- \
		"$MARKER" getppid 1 getpgid 1 "${W[@]}" enable getppid 1 getpgid 1 \
		"${W[@]}" "disable $GETPGID" getppid 2 getpgid 4 \
		"${W[@]}" disable getppid 8 getpgid 8
	expect_status 0
	expect_out $'ack\nack\nack'
	expect_value "$GETPPID" 3
	expect_value "$GETPGID" 1
}

@test "after a window over every event, enable EVENT counts that event only" {
	# Software and tracepoint events share one read group whose leader
	# gates them (agent/count/counter.c, read_group_sync): a window's end turns
	# the leader off and leaves the members on, so enabling one event must
	# turn the others off before the leader goes on again, and one that
	# was turned off must come back on.
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID,$GETPGID" -- \
		"$MARKER" "${W[@]}" "window begin w" getppid 2 getpgid 3 "${W[@]}" "window end w" \
		"${W[@]}" "enable $GETPPID" getppid 5 getpgid 7 "${W[@]}" "disable $GETPPID" \
		getppid 11 getpgid 13 "${W[@]}" "enable $GETPGID" getppid 37 getpgid 31 \
		"${W[@]}" "disable $GETPGID" "${W[@]}" "window begin w" getppid 17 getpgid 19 \
		"${W[@]}" "window end w" getppid 23 getpgid 29
	expect_status 0
	expect_value "$GETPPID" 5
	expect_value "$GETPGID" 31
	expect_value "$GETPPID@w" 19
	expect_value "$GETPGID@w" 22
}

@test "-a: enable EVENT while another event of the read group counts" {
	# On a CPU-wide context a group member enabled by ioctl while its group
	# is on is not scheduled (Linux 6.18: it counted 0), so the members
	# follow the leader and only the leader is switched.  Other processes
	# may call getpgid too: at least the marker's 7000.
	pg -x, -a -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID,$GETPGID" -- \
		"$MARKER" "${W[@]}" "enable $GETPPID" getppid 5 "${W[@]}" "enable $GETPGID" \
		getpgid 7000 "${W[@]}" disable getpgid 3
	expect_status 0
	local got
	got=$(value "$GETPGID") || fail "no line for $GETPGID"
	[ "$got" -ge 7000 ] || { show_run; fail "$GETPGID: $got, expected at least 7000"; }
}

@test "the workload's exit status passes through" {
	pg -x, -e "$GETPPID" -- "$MARKER" getppid 2 exit 3
	expect_status 3
	expect_value "$GETPPID" 2
	pg -x, -e "$GETPPID" -- "$MARKER" getppid 1 exit 0
	expect_status 0
	expect_value "$GETPPID" 1
}

@test "a workload killed by signal N gives 128+N, and the report is printed" {
	pg -x, -e "$GETPPID" -- "$MARKER" getppid 4 kill 15
	expect_status 143
	expect_value "$GETPPID" 4
	pg -x, -e "$GETPPID" -- "$MARKER" getppid 6 kill 9
	expect_status 137
	expect_value "$GETPPID" 6
}

@test "hardware events print <not supported> and the run goes on" {
	if [ -e /sys/bus/event_source/devices/cpu ] ||
	   [ -e /sys/bus/event_source/devices/cpu_core ]; then
		skip "this machine has a hardware PMU"
	fi
	pg -x, -e "cycles,instructions,$GETPPID" -- "$MARKER" getppid 4 exit 0
	expect_status 0
	expect_value cycles "<not supported>"
	expect_value instructions "<not supported>"
	expect_value "$GETPPID" 4
}

@test "a tracepoint counts only the workload's calls (write)" {
	pg -x, -e "$WRITE" -- "$MARKER" write 3 write2 4
	expect_status 0
	expect_value "$WRITE" 7
}

@test "--filter narrows the preceding tracepoint" {
	pg -x, -e "$WRITE" --filter 'count == 1' -- "$MARKER" write 3 write2 4
	expect_status 0
	expect_value "$WRITE" 3
	# The filter applies to the tracepoint before it, not to the next -e.
	pg -x, -e "$WRITE" --filter 'count == 2' -e "$GETPPID" -- \
		"$MARKER" write 3 write2 4 getppid 5
	expect_status 0
	expect_value "$WRITE" 4
	expect_value "$GETPPID" 5
}

# attach OPTION: -p / -t on a marker of our own, window driven by the test.
attach() {
	mkfifos done0 go1 done1 go2 done2 end
	marker_bg getppid 3 notify "$T/done0" wait "$T/go1" getppid 5 notify "$T/done1" \
		wait "$T/go2" getppid 7 notify "$T/done2" wait "$T/end"
	pg_bg -x, -D -1 --control "fifo:$CTL,$ACK" "$1" "$MARKER_PID" -e "$GETPPID"
	wait_line done0
	expect_reply enable ack
	release go1
	wait_line done1
	expect_reply disable ack
	release go2
	wait_line done2
	kill -INT "$AGENT_PID"
	pg_wait
	release end
	expect_value "$GETPPID" 5
}

@test "-p PID: attach to a running process and count its window" {
	attach -p
}

@test "-t TID: attach to a running thread and count its window" {
	attach -t
}

# no_target_run SIGNAL FORMAT...: perfgate with no command and no target
# (system-wide, as perf) while a marker of our own makes 7 getppid() calls
# once the agent has answered a ping (its counters are open then); the
# filter keeps other processes' calls out.  SIGNAL then ends the run.
no_target_run() {
	local sig=$1
	shift
	mkfifos go done end
	marker_bg wait "$T/go" getppid 7 notify "$T/done" wait "$T/end"
	pg_bg "$@" --control "fifo:$CTL,$ACK" -e "$GETPPID" --filter "common_pid == $MARKER_PID"
	expect_reply ping ack
	release go
	wait_line done
	kill "-$sig" "$AGENT_PID"
	pg_wait
	release end
}

@test "no command and no target: system-wide until SIGINT, then the report; status 130" {
	no_target_run INT
	expect_status 130
	grep -qF " Performance counter stats for 'system wide':" "$T/err" || { show_run; fail "no header"; }
	grep -Eq "^ +7 +$GETPPID +\$" "$T/err" || { show_run; fail "expected a count of 7"; }
	grep -q " seconds time elapsed" "$T/err" || { show_run; fail "no elapsed time"; }
}

@test "no command and no target: SIGTERM ends the run with the report; status 143" {
	no_target_run TERM -x,
	expect_status 143
	expect_value "$GETPPID" 7
}

@test "no command and no target: --interval-count ends the run; status 0" {
	pg -x, -I 100 --interval-count 2 -e "$GETPPID" --filter "common_pid == 1"
	expect_status 0
	[ "$(values "$GETPPID" | wc -l)" = 2 ] || { show_run; fail "expected 2 intervals"; }
}

# at_least N: the last run counted at least N of the marker's getppid calls.
at_least() {
	local n
	n=$(value "$GETPPID") || { show_run; fail "no $GETPPID line"; }
	is_number "$n" && [ "$n" -ge "$1" ] || { show_run; fail "expected >= $1, got $n"; }
}

@test "-a counts system-wide, on every CPU, the workload's calls included" {
	local cpu
	# The workload pinned to each CPU in turn: every CPU's counter counts.
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		pg -x, -a -e "$GETPPID" -- taskset -c "$cpu" "$MARKER" getppid 1000
		expect_status 0
		at_least 1000
	done
}

@test "-C LIST counts on those CPUs only" {
	[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
	local n
	pg -x, -C 0 -e "$GETPPID" -- taskset -c 0 "$MARKER" getppid 100000
	expect_status 0
	at_least 100000
	pg -x, -C 0,1 -e "$GETPPID" -- taskset -c 1 "$MARKER" getppid 100000
	expect_status 0
	at_least 100000
	pg -x, -C 1 -e "$GETPPID" -- taskset -c 0 "$MARKER" getppid 100000
	expect_status 0
	n=$(value "$GETPPID") || { show_run; fail "no $GETPPID line"; }
	is_number "$n" && [ "$n" -lt 100000 ] || { show_run; fail "-C 1: expected < 100000, got $n"; }
}

@test "children are counted by default, not with --no-inherit" {
	pg -x, -e "$GETPPID" -- "$MARKER" getppid 2 fork 5
	expect_status 0
	expect_value "$GETPPID" 7
	pg -x, --no-inherit -e "$GETPPID" -- "$MARKER" getppid 2 fork 5
	expect_status 0
	expect_value "$GETPPID" 2
}

@test "-D MS starts counting MS milliseconds after the workload starts" {
	pg_across_delay -x,
	expect_status 0
	expect_value "$GETPPID" 7
}
