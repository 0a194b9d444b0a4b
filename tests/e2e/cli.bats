#!/usr/bin/env bats
# cli.bats: the command line, perf stat's options with perf's meaning, and
# clear errors (naming what is wrong, non-zero exit, workload never started)
# for bad input at start-up.

load helpers

@test "an unknown option: non-zero exit, a message naming it" {
	pg --no-such-option -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 129 no-such-option
}

@test "perf stat record / report: refused, naming --json-file; -- record runs a program" {
	local sub
	for sub in record report; do
		pg "$sub" -o - "$MARKER" say ran
		refused_naming 129 "perfgate: '$sub' is perf stat's subcommand that"
		grep -qF -- "--json-file FILE writes the whole run as one JSON document (to run a program called $sub: perfgate -- $sub)" "$T/err" ||
			{ show_run; fail "$sub: the message does not name --json-file"; }
	done
	# After --, the word is the workload's name, as any other.
	pg -x, -e "$GETPPID" -- record
	expect_status 255
	grep -qF "perfgate: cannot run 'record'" "$T/err" || { show_run; fail "-- record was not run"; }
	pg -x, -e "$GETPPID" -- "$MARKER" getppid 3 say record
	expect_status 0
	expect_out record
	expect_value "$GETPPID" 3
}

@test "-M and --topdown are refused_naming with the reason: no metric tables" {
	local opt
	for opt in "-M IPC" "--metrics=IPC" "--topdown"; do
		# shellcheck disable=SC2086  # opt is one or two words
		pg $opt -a -- "$MARKER" say ran
		expect_status 129
		grep -q "metrics are formulas from the CPU's event tables (perf's pmu-events), which neither libpfm4 nor sysfs provides" "$T/err" ||
			{ show_run; fail "$opt: no reason"; }
		[ ! -s "$T/out" ] || { show_run; fail "$opt: the workload ran"; }
	done
}

@test "a bad option value: non-zero exit, a message naming it" {
	pg -D abc -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 129 abc
	pg -I xyz -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 129 xyz
	pg --control nosuch:abc -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 129 nosuch:abc
}

@test "an unknown event: non-zero exit, a message naming it" {
	pg -x, -e "task-clock,nosuchevent" -- "$MARKER" say ran
	refused_naming 255 nosuchevent
	pg -x, -e "syscalls:sys_enter_nosuchcall" -- "$MARKER" say ran
	refused_naming 255 syscalls:sys_enter_nosuchcall
}

@test "a bad filter: non-zero exit, a message naming it" {
	pg -x, -e "$WRITE" --filter 'nosuchfield == 1' -- "$MARKER" say ran
	refused_naming 255 nosuchfield
}

@test "a bad filter: the message has a caret under the error" {
	local filter='count == 1 && nosuchfield == 2' line col
	pg -x, -e "$WRITE" --filter "$filter" -- "$MARKER" say ran
	refused_naming 255 nosuchfield
	# The line quoting the filter, then a caret under "nosuchfield" (offset 14).
	line=$(grep -nF -- "$filter" "$T/err" | head -n 1) || { show_run; fail "filter not quoted"; }
	col=$(awk -v l="${line#*:}" -v f="$filter" 'BEGIN { print index(l, f) + 13 }')
	sed -n "$((${line%%:*} + 1))p" "$T/err" | grep -Eq "^.{$col}\\^" ||
		{ show_run; fail "no caret at column $((col + 1)) under 'nosuchfield'"; }
}

@test "--filter with no tracepoint before it: non-zero exit" {
	pg -x, --filter 'count == 1' -e "$WRITE" -- "$MARKER" say ran
	refused_naming 129 filter
	pg -x, -e task-clock --filter 'count == 1' -- "$MARKER" say ran
	refused_naming 255 filter
}

@test "-p with a process that does not exist: non-zero exit, naming it" {
	pg -x, -e "$GETPPID" -p 2147483647
	expect_status 255
	grep -qF 2147483647 "$T/err" || { show_run; fail "the message does not name the pid"; }
}

@test "a workload that cannot be run: non-zero exit, naming it" {
	pg -x, -e "$GETPPID" -- "$T/no-such-program" arg
	expect_status 255
	grep -qF "no-such-program" "$T/err" || { show_run; fail "the message does not name the program"; }
}

@test "-I with --interval-count 3 prints exactly 3 intervals" {
	# As perf stat: the count ends the printing; the workload runs to its
	# end (0.6 s) and its exit status passes through.
	pg -x, -I 100 --interval-count 3 -e "task-clock,$GETPPID" -- "$MARKER" getppid 2 sleep 600 exit 3
	local stamps
	stamps=$(grep -E '^ *[0-9]+\.[0-9]+,' "$T/err" | cut -d, -f1 | tr -d ' ' | uniq)
	[ "$(wc -l <<<"$stamps")" = 3 ] || { show_run; fail "expected 3 intervals, got: $stamps"; }
	# Every interval has a line per event, in increasing time.
	[ "$(values task-clock | wc -l)" = 3 ] || { show_run; fail "not 3 task-clock lines"; }
	[ "$(values "$GETPPID" | wc -l)" = 3 ] || { show_run; fail "not 3 $GETPPID lines"; }
	sort -n -c <<<"$stamps" || fail "timestamps not increasing: $stamps"
	# The 2 calls are counted once at most.  (Not "the first interval holds
	# them": when the machine is busy, or under ASan, the marker may reach
	# them after the first 100 ms, or after all three intervals.)
	[ "$(values "$GETPPID" | awk '{ s += $1 } END { print s + 0 }')" -le 2 ] ||
		{ show_run; fail "more than the 2 calls counted"; }
	expect_status 3
}

@test "-o FILE writes the report there, not to stderr" {
	pg -x, -o "$T/report" -e "$GETPPID" -- "$MARKER" getppid 4 say hi
	expect_status 0
	expect_out hi
	expect_value "$GETPPID" 4 "$T/report"
	! grep -q "$GETPPID" "$T/err" || { show_run "$T/report"; fail "report also on stderr"; }
}

@test "--log-fd N writes the report to fd N" {
	status=0
	timeout --foreground -k 2 "$PG_TIMEOUT" "$PERFGATE" --log-fd 5 -x, -e "$GETPPID" -- \
		"$MARKER" getppid 6 say hi >"$T/out" 2>"$T/err" 5>"$T/log" 3>&- </dev/null || status=$?
	expect_status 0
	expect_out hi
	expect_value "$GETPPID" 6 "$T/log"
	! grep -q "$GETPPID" "$T/err" || { show_run "$T/log"; fail "report also on stderr"; }
}

@test "the workload gets its arguments verbatim, options included" {
	pg -x, -e "$GETPPID" -- "$MARKER" say "two words" say -x say -- getppid 2
	expect_status 0
	expect_out $'two words\n-x\n--'
	expect_value "$GETPPID" 2
	# Without "--", option parsing stops at the workload's name, as perf's.
	pg -x, -e "$GETPPID" "$MARKER" say -e getppid 3
	expect_status 0
	expect_out -e
	expect_value "$GETPPID" 3
}

@test "the workload's stdin, stdout and stderr are the agent's" {
	status=0
	echo input | timeout --foreground -k 2 "$PG_TIMEOUT" "$PERFGATE" -o "$T/report" -x, \
		-e "$GETPPID" -- bash -c 'read l; echo "out:$l"; echo "err:$l" >&2' \
		>"$T/out" 2>"$T/err" 3>&- || status=$?
	expect_status 0
	expect_out out:input
	[ "$(cat "$T/err")" = err:input ] || { show_run; fail "workload stderr"; }
}

@test "-I takes perf's range: 1 ms prints intervals, 0 means none" {
	pg -x, -I 1 -e "$GETPPID" -- "$MARKER" getppid 3 sleep 50
	expect_status 0
	[ "$(values "$GETPPID" | wc -l)" -ge 5 ] || { show_run; fail "expected many 1 ms intervals"; }
	[ "$(values "$GETPPID" | awk "{ s += \$1 } END { print s }")" = 3 ] || { show_run; fail "intervals do not add up to 3"; }
	pg -x, -I 0 -e "$GETPPID" -- "$MARKER" getppid 3
	expect_status 0
	expect_value "$GETPPID" 3
	[ "$(grep -c "$GETPPID" "$T/err")" = 1 ] || { show_run; fail "-I 0 printed intervals"; }
}

@test "aggregation modes and -G without the target they need: refused, saying what is needed" {
	local opt
	for opt in -A --no-aggr --per-core --per-die --per-socket --per-node; do
		pg "$opt" -e "$GETPPID" -- "$MARKER" say ran
		refused_naming 129 "$opt"
		grep -qF "needs -a or -C" "$T/err" || { show_run; fail "$opt: does not say it needs -a or -C"; }
	done
	pg --per-thread -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 129 "--per-thread needs -p, -t or -a: a workload's threads are counted together (inherited counters)"
	pg --per-thread -C 0 -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 129 "--per-thread cannot be used with -C: a thread's counter counts on every CPU (use -a)"
	pg --per-thread -a -p 1 -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 129 "--per-thread counts the threads of -p and -t, or with -a every thread: not both"
	pg -G perfgate-nosuch -e "$GETPPID" -- "$MARKER" say ran
	refused_naming 129 "-G/--cgroup needs -a or -C"
}

@test "-G with a cgroup that does not exist: refused, naming it" {
	local name="perfgate-nosuch-$$-$BATS_TEST_NUMBER"
	cgroup_root
	pg -a -G "$name" -e "$GETPPID" -- "$MARKER" say ran
	cgroup_unmount
	refused_naming 255 "no cgroup '$name'"
}
