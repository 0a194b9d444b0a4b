#!/usr/bin/env bats
# shell_client.bats: clients/shell/perfgate.sh and examples/ci-bench.sh,
# end to end on real kernel events.
#
# Each test writes a small bash script that sources perfgate.sh under
# `set -euo pipefail` and runs it as its own process: perfgate.sh's default
# target is `-p $$`, that script, so the marker helper it starts is counted.
# The marker's getppid() calls are the marker event: bash never makes them,
# so the counts are exact.  Synchronisation is by acks and FIFOs only.
#
# Environment (set by `make check`; defaults for running `bats` by hand):
# helpers.bash's, and PERFGATE_SH  clients/shell/perfgate.sh.  The
# scripts see them exported.

load helpers

: "${PERFGATE_SH:=$SRCDIR/clients/shell/perfgate.sh}"
export PERFGATE MARKER SRCDIR PERFGATE_SH GETPPID

setup() {
	[ -x "$PERFGATE" ] || fail "PERFGATE=$PERFGATE is not an executable"
	[ -x "$MARKER" ] || fail "MARKER=$MARKER is not an executable"
	[ -r "$PERFGATE_SH" ] || fail "PERFGATE_SH=$PERFGATE_SH is not readable"
	T=$BATS_TEST_TMPDIR
	export T
	# The client's temporary files go to $T, so a test can look for leftovers.
	export TMPDIR=$T/tmp
	mkdir -p "$TMPDIR"
}

# teardown: kill an agent a failed test left behind (its pid is in $T/agent.pid).
teardown() {
	local pid
	for f in "$T"/agent*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		if grep -qa perfgate "/proc/$pid/cmdline" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
}

# script: the test's script from stdin, after a prelude that sources the client.
script() {
	{
		echo 'set -euo pipefail'
		# A loaded machine may take seconds to answer: a test that is not
		# about timeouts waits long enough for that (those that are set
		# their own).
		echo 'export PERFGATE_TIMEOUT=${PERFGATE_TIMEOUT:-30}'
		echo 'source "$PERFGATE_SH"'
		cat
	} >"$T/s.sh"
}

# runsh: run the script; stdout -> $T/out (and $output), stderr -> $T/err,
# exit status -> $status.  Outputs go to files, not a pipe, so a
# leftover agent cannot hang the test (nor bats' fd 3); a script running
# over 60 s is killed.
runsh() {
	status=0
	timeout -k 2 60 bash "$T/s.sh" >"$T/out" 2>"$T/err" 3>&- </dev/null || status=$?
	output=$(cat "$T/out")
}

# expect_line TEXT: stdout has the line TEXT.
expect_line() {
	grep -qxF -- "$1" "$T/out" || { show_run; fail "no line '$1' on stdout"; }
}

# no_leftovers: no private directory, report file or agent remains.
no_leftovers() {
	local left pid
	left=$(ls -A "$TMPDIR")
	[ -z "$left" ] || { show_run; fail "left in TMPDIR: $left"; }
	for f in "$T"/agent*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		if kill -0 "$pid" 2>/dev/null && grep -qa perfgate "/proc/$pid/cmdline" 2>/dev/null; then
			show_run
			fail "the agent (pid $pid) is still running"
		fi
	done
}

@test "start, ping, hello, stop: the lifecycle, and stop's status with -p \$\$" {
	script <<'EOF'
perfgate_start -e task-clock
echo "$PERFGATE_PID" >"$T/agent.pid"
kill -0 "$PERFGATE_PID"
grep -qa perfgate "/proc/$PERFGATE_PID/cmdline"
# The default target is this shell.
tr '\0' ' ' <"/proc/$PERFGATE_PID/cmdline" | grep -q -- "-p $$ "
perfgate_ping
perfgate_hello
pid=$PERFGATE_PID
perfgate_stop
echo "stopped status=$? PERFGATE_STATUS=$PERFGATE_STATUS pid='$PERFGATE_PID' dir='$PERFGATE_DIR'"
if kill -0 "$pid" 2>/dev/null; then echo "agent still running"; fi
test -s "$PERFGATE_REPORT" && echo "report written"
EOF
	runsh
	expect_status 0
	expect_line "stopped status=0 PERFGATE_STATUS=0 pid='' dir=''"
	expect_line "report written"
	run json_eval "$(sed -n 1p "$T/out")" 'd["protocol"]'
	[ "$output" = 1 ] || { show_run; fail "hello: no protocol 1"; }
	[ -z "$(cat "$T/err")" ] || { show_run; fail "unexpected stderr"; }
	no_leftovers
}

@test "stop ends a workload and returns its status (143 after SIGTERM)" {
	mkfifo "$T/never"
	script <<'EOF'
perfgate_start -e "$GETPPID" -- "$MARKER" getppid 2 wait "$T/never" exit 3
echo "$PERFGATE_PID" >"$T/agent.pid"
st=0
perfgate_stop || st=$?
echo "stop=$st PERFGATE_STATUS=$PERFGATE_STATUS"
EOF
	runsh
	expect_status 0
	expect_line "stop=143 PERFGATE_STATUS=143"
	no_leftovers
}

@test "perfgate_wait returns the workload's own exit status" {
	mkfifo "$T/go"
	script <<'EOF'
perfgate_start -e "$GETPPID" -- "$MARKER" wait "$T/go" getppid 2 exit 3
echo "$PERFGATE_PID" >"$T/agent.pid"
perfgate_window_begin w
printf 'go\n' >"$T/go"    # opened write-only: waits for the marker to read
st=0
perfgate_wait 10 || st=$?
echo "wait=$st PERFGATE_STATUS=$PERFGATE_STATUS"
EOF
	runsh
	expect_status 0
	expect_line "wait=3 PERFGATE_STATUS=3"
	no_leftovers
}

@test "stop after the workload ended by itself says so and returns its status" {
	mkfifo "$T/go"
	script <<'EOF'
perfgate_start -e "$GETPPID" -- "$MARKER" wait "$T/go" exit 4
echo "$PERFGATE_PID" >"$T/agent.pid"
pid=$PERFGATE_PID
printf 'go\n' >"$T/go"
# Wait for the agent to have ended (it has no ack to give for this).
while kill -0 "$pid" 2>/dev/null && ! grep -q '^[^)]*) Z' "/proc/$pid/stat" 2>/dev/null; do sleep 0.01; done
st=0
perfgate_stop || st=$?
echo "stop=$st"
EOF
	runsh
	expect_status 0
	expect_line "stop=4"
	expect_err_has "perfgate: stop: the agent (pid"
	expect_err_has "had already exited with status 4"
	no_leftovers
}

@test "window end reports exact counts of marker syscalls made inside the window" {
	script <<'EOF'
perfgate_start -e "$GETPPID" -x,
echo "$PERFGATE_PID" >"$T/agent.pid"
"$MARKER" getppid 3
perfgate_window_begin rep
"$MARKER" getppid 5
first=$(perfgate_window_end rep)
"$MARKER" getppid 11
perfgate_window_begin rep
"$MARKER" getppid 2
perfgate_window_end rep >/dev/null
second=$PERFGATE_REPLY
# The default window (enable/disable) is independent of the named one.
perfgate_enable
"$MARKER" getppid 4
perfgate_disable
"$MARKER" getppid 6
perfgate_stop
echo "first $first"
echo "second $second"
cp "$PERFGATE_REPORT" "$T/report"
EOF
	runsh
	expect_status 0
	local first second
	first=$(sed -n 's/^first //p' "$T/out")
	second=$(sed -n 's/^second //p' "$T/out")
	run json_eval "$first" '(d["window"], d["calls"], d["call"]["counts"]["'$GETPPID'"], d["total"]["counts"]["'$GETPPID'"])'
	[ "$output" = "('rep', 1, 5, 5)" ] || { show_run; fail "first window end: got $output"; }
	run json_eval "$second" '(d["window"], d["calls"], d["call"]["counts"]["'$GETPPID'"], d["total"]["counts"]["'$GETPPID'"])'
	[ "$output" = "('rep', 2, 2, 7)" ] || { show_run; fail "second window end: got $output"; }
	run json_eval "$first" 'd["call"]["time_ns"] > 0'
	[ "$output" = True ]
	# The default view counted only the 4 calls made while enabled.
	grep -qx "4,,$GETPPID,.*" "$T/report" || { cat "$T/report"; fail "default view is not 4"; }
	grep -qx "7,,$GETPPID@rep,.*" "$T/report" || { cat "$T/report"; fail "window view is not 7"; }
	no_leftovers
}

@test "perfgate_window_end NAME VAR: the reply in VAR, nothing forked inside the window" {
	script <<'EOF'
perfgate_start -e sched:sched_process_fork -x,
perfgate_window_begin quiet
perfgate_window_end quiet json
echo "var $json"
perfgate_window_begin forked
forked=$(perfgate_window_end forked)
echo "subshell $forked"
perfgate_window_end quiet "bad name" || echo "bad=$?"
perfgate_stop
EOF
	runsh
	expect_status 0
	local quiet forked
	quiet=$(sed -n 's/^var //p' "$T/out")
	forked=$(sed -n 's/^subshell //p' "$T/out")
	run json_eval "$quiet" '(d["window"], d["call"]["counts"]["sched:sched_process_fork"])'
	[ "$output" = "('quiet', 0)" ] || { show_run; fail "window end into a variable: got $output"; }
	# The $(...) form forks inside its own window: the reason VAR exists.
	run json_eval "$forked" '(d["window"], d["call"]["counts"]["sched:sched_process_fork"])'
	[ "$output" = "('forked', 1)" ] || { show_run; fail "window end in a subshell: got $output"; }
	expect_line "bad=2"
	expect_err_has "perfgate: window end: usage: perfgate_window_end NAME [VARIABLE]"
}

@test "err replies: non-zero status, the agent's reason on stderr, the agent keeps going" {
	script <<'EOF'
perfgate_start -e "$GETPPID"
echo "$PERFGATE_PID" >"$T/agent.pid"
st=0
perfgate_window_end never || st=$?
echo "window_end=$st"
st=0
out=$(perfgate_cmd 'frobnicate now') || st=$?
echo "cmd=$st out='$out'"
st=0
perfgate_cmd $'ping\nping' || st=$?
echo "multiline=$st"
perfgate_ping
perfgate_window_begin w
perfgate_window_end w >/dev/null
echo "after: $PERFGATE_REPLY"
perfgate_stop
EOF
	runsh
	expect_status 0
	expect_line "window_end=1"
	expect_err_has "perfgate: window end never: window 'never' is not open"
	expect_line "cmd=1 out=''"
	expect_err_has "perfgate: frobnicate now: unknown command 'frobnicate'"
	expect_line "multiline=2"
	expect_err_has "a command must be one line"
	grep -q '^after: {"window":"w","calls":1,' "$T/out" || { show_run; fail "replies out of step after errors"; }
	no_leftovers
}

@test "under set -e an unguarded err ends the script; the EXIT trap ends the agent and cleans up" {
	script <<'EOF'
perfgate_start -e "$GETPPID"
echo "$PERFGATE_PID" >"$T/agent.pid"
echo "$PERFGATE_DIR" >"$T/dir"
perfgate_window_end never
echo "not reached"
EOF
	runsh
	expect_status 1
	[ -z "$output" ] || { show_run; fail "the script went on after the err"; }
	expect_err_has "window 'never' is not open"
	[ ! -e "$(cat "$T/dir")" ] || { show_run; fail "private directory left behind"; }
	no_leftovers
}

@test "the EXIT trap chains to the trap set before and keeps the exit status" {
	script <<'EOF'
trap 'echo "earlier trap, status $?" >"$T/trap.out"' EXIT
perfgate_start -e "$GETPPID"
echo "$PERFGATE_PID" >"$T/agent.pid"
trap -p EXIT | grep -q _perfgate_atexit
perfgate_window_begin w
# Exit with the agent still running and a window open.
exit 7
EOF
	runsh
	expect_status 7
	[ "$(cat "$T/trap.out")" = "earlier trap, status 7" ] || { show_run; cat "$T/trap.out"; fail "earlier trap not run"; }
	no_leftovers
}

@test "a killed agent: the next call fails at once, with a message" {
	# The reply timeout is far longer than runsh's hang guard (60 s): a
	# call that waited for it instead of seeing the agent gone would fail
	# the test (status 124), however fast or slow the machine.
	script <<'EOF'
export PERFGATE_TIMEOUT=600
perfgate_start -e "$GETPPID"
echo "$PERFGATE_PID" >"$T/agent.pid"
perfgate_window_begin w
kill -KILL "$PERFGATE_PID"
st=0
perfgate_window_end w || st=$?
echo "status=$st"
st=0
perfgate_stop || st=$?
echo "stop=$st"
EOF
	runsh
	expect_status 0
	expect_line "status=1"
	expect_err_has "perfgate: window end w:"
	expect_err_has "is not running (exit status 137)"
	! grep -q "within 600s" "$T/err" || { show_run; fail "the call waited for the timeout"; }
	expect_line "stop=137"
	no_leftovers
}

@test "an agent that does not answer: the call times out after PERFGATE_TIMEOUT, and later replies stay in step" {
	script <<'EOF'
export PERFGATE_TIMEOUT=1
perfgate_start -e "$GETPPID"
echo "$PERFGATE_PID" >"$T/agent.pid"
kill -STOP "$PERFGATE_PID"
t0=${EPOCHREALTIME//[!0-9]/}
st=0
perfgate_window_begin w || st=$?
t1=${EPOCHREALTIME//[!0-9]/}
echo "status=$st"
echo "ms=$(((t1 - t0) / 1000))"
kill -CONT "$PERFGATE_PID"
# The late reply to `window begin w` must not be taken for this one's.
perfgate_window_begin v
"$MARKER" getppid 3
json=$(perfgate_window_end v)
echo "v: $json"
json=$(perfgate_window_end w)
echo "w: $json"
perfgate_stop
EOF
	runsh
	expect_status 0
	expect_line "status=1"
	expect_err_has "perfgate: window begin w: no reply from the agent (pid"
	expect_err_has "within 1s"
	# The timeout is the point here: the call gave up by the timeout (its
	# message above), and not before it.  No upper bound: a loaded machine
	# may notice the deadline late.
	local ms
	ms=$(sed -n 's/^ms=//p' "$T/out")
	[ "$ms" -ge 1000 ] || { show_run; fail "timed out after ${ms} ms, before PERFGATE_TIMEOUT=1"; }
	run json_eval "$(sed -n 's/^v: //p' "$T/out")" '(d["window"], d["call"]["counts"]["'$GETPPID'"])'
	[ "$output" = "('v', 3)" ] || { show_run; fail "window v: got $output"; }
	run json_eval "$(sed -n 's/^w: //p' "$T/out")" '(d["window"], d["calls"])'
	[ "$output" = "('w', 1)" ] || { show_run; fail "window w: got $output"; }
	no_leftovers
}

@test "an agent that dies while a call waits: the call fails well before the timeout" {
	# As above, the reply timeout is far longer than runsh's hang guard.
	script <<'EOF'
export PERFGATE_TIMEOUT=600
perfgate_start -e "$GETPPID"
echo "$PERFGATE_PID" >"$T/agent.pid"
kill -STOP "$PERFGATE_PID"
# Fault injection, not synchronisation: the agent dies 0.3 s into the call.
( sleep 0.3; kill -KILL "$PERFGATE_PID" ) &
st=0
perfgate_ping || st=$?
wait $!
echo "status=$st"
EOF
	runsh
	expect_status 0
	expect_line "status=1"
	expect_err_has "perfgate: ping: no reply: the agent (pid"
	expect_err_has "is not running"
	! grep -q "within 600s" "$T/err" || { show_run; fail "the call waited for the timeout"; }
	no_leftovers
}

@test "the private directory is mode 0700 with FIFOs, removed after stop; the report file at exit" {
	script <<'EOF'
perfgate_start -e "$GETPPID"
echo "$PERFGATE_PID" >"$T/agent.pid"
dir=$PERFGATE_DIR
echo "mode $(stat -c %a "$dir") owner $(stat -c %u "$dir")"
for f in ctl ack; do
	[ -p "$dir/$f" ] && [ ! -L "$dir/$f" ] && echo "$f fifo $(stat -c %a "$dir/$f")"
done
echo "report $(stat -c %a "$PERFGATE_REPORT")"
perfgate_stop
[ -e "$dir" ] || echo "dir removed"
[ -s "$PERFGATE_REPORT" ] && echo "report kept until exit"
echo "$PERFGATE_REPORT" >"$T/report.path"
EOF
	runsh
	expect_status 0
	expect_line "mode 700 owner $(id -u)"
	expect_line "ctl fifo 600"
	expect_line "ack fifo 600"
	expect_line "report 600"
	expect_line "dir removed"
	expect_line "report kept until exit"
	[ ! -e "$(cat "$T/report.path")" ] || fail "report file not removed at exit"
	no_leftovers
}

@test "-o FILE: no report file of our own; --json-file is written by stop" {
	script <<'EOF'
perfgate_start -e "$GETPPID" -x, -o "$T/report" --json-file "$T/run.json"
echo "$PERFGATE_PID" >"$T/agent.pid"
echo "PERFGATE_REPORT='$PERFGATE_REPORT'"
perfgate_window_begin w
"$MARKER" getppid 9
perfgate_window_end w >/dev/null
perfgate_stop
EOF
	runsh
	expect_status 0
	expect_line "PERFGATE_REPORT=''"
	grep -qx "9,,$GETPPID@w,.*" "$T/report" || { show_run; cat "$T/report"; fail "no window line in -o report"; }
	run python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print([(w["name"], w["calls"]) for w in d["windows"]])' "$T/run.json"
	[ "$output" = "[('w', 1)]" ] || { show_run; fail "json-file windows: $output"; }
	no_leftovers
}

@test "a start that fails (bad event): non-zero, the agent's message shown, nothing left" {
	script <<'EOF'
st=0
perfgate_start -e nosuchsubsys:nosuchevent || st=$?
echo "start=$st pid='$PERFGATE_PID' dir='$PERFGATE_DIR'"
st=0
perfgate_ping || st=$?
echo "ping=$st"
EOF
	runsh
	expect_status 0
	expect_line "start=1 pid='' dir=''"
	expect_err_has "nosuchsubsys"
	expect_err_has "perfgate: start: the agent did not start"
	expect_line "ping=1"
	expect_err_has "perfgate: ping: no agent: call perfgate_start first"
	no_leftovers
}

@test "bad PERFGATE_TIMEOUT and a second start are refused" {
	script <<'EOF'
st=0
PERFGATE_TIMEOUT=soon perfgate_start || st=$?
echo "badtimeout=$st"
perfgate_start -e "$GETPPID"
echo "$PERFGATE_PID" >"$T/agent.pid"
st=0
perfgate_start -e "$GETPPID" || st=$?
echo "second=$st"
perfgate_ping
perfgate_stop
EOF
	runsh
	expect_status 0
	expect_line "badtimeout=1"
	expect_err_has "PERFGATE_TIMEOUT='soon' is not a number of seconds"
	expect_line "second=1"
	expect_err_has "an agent is already running"
	no_leftovers
}

@test "the target is -p \$\$ only when the options name none" {
	script <<'EOF'
check() {
	_perfgate_scan_args "$@"
	echo "$_perfgate_has_target$_perfgate_has_output$_perfgate_has_workload: $*"
}
check -e task-clock -x,
check -e task-clock -I 100 --json-file x.json
check -a
check -ae task-clock
check -C 0
check --cpu=1
check -p 42
check -p42
check --pid 42
check -t 42
check --tid=42
check -- true
check -e task-clock true
check -o out
check -xo, out
check --output=out
check --log-fd 3
check -e -p
check --control fifo:a,b -x -p
check --
EOF
	runsh
	expect_status 0
	diff -u - "$T/out" <<'EOF'
000: -e task-clock -x,
000: -e task-clock -I 100 --json-file x.json
100: -a
100: -ae task-clock
100: -C 0
100: --cpu=1
100: -p 42
100: -p42
100: --pid 42
100: -t 42
100: --tid=42
101: -- true
101: -e task-clock true
010: -o out
101: -xo, out
010: --output=out
010: --log-fd 3
000: -e -p
000: --control fifo:a,b -x -p
000: --
EOF
}

@test "examples/ci-bench.sh: per-repetition counts, exact; its --json-file parses" {
	local parser
	for parser in python3 jq; do
		if [ "$parser" = jq ] && ! command -v jq >/dev/null; then continue; fi
		rm -f "$T/bench.json"
		status=0
		CI_BENCH_PARSER=$parser CI_BENCH_ITER=200 timeout -k 2 60 \
			bash "$SRCDIR/examples/ci-bench.sh" 3 "$T/bench.json" \
			>"$T/out" 2>"$T/err" 3>&- </dev/null || status=$?
		expect_status 0
		head -n 1 "$T/out" | grep -qx $'rep\ttime_ns\ttask-clock\tsyscalls:sys_enter_write' ||
			{ show_run; fail "$parser: bad header"; }
		# 200 printf's plus the client's own `window end rep` line: 201 writes.
		run awk -F'\t' 'NR > 1 && NR <= 4 && $1 == NR - 1 && $2 > 0 && $3 > 0 && $4 == 201 { n++ } END { print n + 0 }' "$T/out"
		[ "$output" = 3 ] || { show_run; fail "$parser: expected 3 repetitions with 201 writes"; }
		run python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = [w for w in d["windows"] if w["name"] == "rep"]
v = [v["count"] for v in d["views"] if v.get("window") == "rep" and v["event"] == "syscalls:sys_enter_write"]
print(len(w), w[0]["calls"], v, d["run"]["exit_status"])' "$T/bench.json"
		[ "$output" = "1 3 [603] 0" ] || { show_run; fail "$parser: json-file: $output"; }
	done
	[ -z "$(ls -A "$TMPDIR")" ] || fail "ci-bench.sh left files in TMPDIR"
}

@test "examples/ci-bench.sh benchmarks a given command" {
	status=0
	timeout -k 2 60 bash "$SRCDIR/examples/ci-bench.sh" 2 "$T/bench.json" -- "$MARKER" write 7 \
		>"$T/out" 2>"$T/err" 3>&- </dev/null || status=$?
	expect_status 0
	run awk -F'\t' 'NR > 1 && NR <= 3 && $4 == 8 { n++ } END { print n + 0 }' "$T/out"
	[ "$output" = 2 ] || { show_run; fail "expected 2 repetitions with 7 + 1 writes"; }
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/bench.json"
}

@test "perfgate_range_load: a range loaded at run time counts exactly; a bad spec fails with the place" {
	script <<'EOF2'
perfgate_start -e "$GETPPID" -x,
echo "$PERFGATE_PID" >"$T/agent.pid"
perfgate_range_load r "$GETPPID@syscalls:sys_enter_getpgid..syscalls:sys_enter_getsid"
"$MARKER" getppid 2 getpgid 1 getppid 3
st=0
perfgate_range_load bad "$GETPPID@syscalls:sys_enter_getpgid.syscalls:sys_enter_getsid" 2>"$T/bad.err" || st=$?
echo "bad=$st"
perfgate_range_unload r
perfgate_stop
cp "$PERFGATE_REPORT" "$T/report"
EOF2
	runsh
	expect_status 0
	expect_line "bad=1"
	grep -q "range load bad: .*at byte" "$T/bad.err" || { cat "$T/bad.err"; fail "no place in the error"; }
	# The marker is a process of its own: its range opens at getpgid and
	# stays open (no getsid), so its last 3 getppid calls count.
	grep -qx "3,,$GETPPID@r,.*" "$T/report" || { cat "$T/report"; fail "range view is not 3"; }
	no_leftovers
}
