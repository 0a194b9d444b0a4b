#!/usr/bin/env bats
# event_syntax.bats: perf's -e syntax in the agent (issue 9): groups,
# PMU events, raw codes, cache names, tool events and tracepoint patterns
# print what perf stat 6.1 prints for them (digits masked), tracepoints
# count exactly, and bad lists are refused with a caret under the byte.

load helpers

setup() {
	common_setup
	perf_setup
	export LC_NUMERIC=en_US.UTF-8
}

# count_of EVENT: the -x, count perfgate printed for EVENT.
count_of() {
	awk -F, -v ev="$1" '$3 == ev { print $1 }' "$T/err"
}

# bad_list LIST COLUMN REASON: perfgate -e LIST fails, printing REASON and
# the list with a caret under byte COLUMN (from 0).
bad_list() {
	pg -e "$1" -- true
	expect_status 255
	grep -qF -- "perfgate: $3" "$T/err" || { show_run; fail "no '$3'"; }
	grep -qxF -- "  $1" "$T/err" || { show_run; fail "the list is not quoted"; }
	grep -qx -- "  $(printf '%*s' "$2" '')^" "$T/err" ||
		{ show_run; fail "no caret at column $2"; }
}

@test "syntax: a group {task-clock,page-faults}" { same_as_perf -e '{task-clock,page-faults}'; }
@test "syntax: a group with modifiers {task-clock,page-faults}:u" {
	same_as_perf -e '{task-clock,page-faults}:u'
}
@test "syntax: a group with a member the machine lacks" { same_as_perf -e '{task-clock,cycles}'; }
# The failed group's task-clock gives the others no rate, in perf 6.1.
@test "syntax: a failed group's task-clock is no clock for rates, -x, -I" {
	SLEEP=250 same_as_perf -x, -I 100 --interval-count 2 -e 'duration_time,{task-clock,cycles}'
}
@test "syntax: a failed group's task-clock is no clock for rates, -j" {
	same_as_perf -j -e '{task-clock,cycles}:u,msr/tsc/'
}
@test "syntax: a cache event the machine lacks" { same_as_perf -e L1-dcache-loads; }
@test "syntax: a raw event r003c" { same_as_perf -e r003c; }
@test "syntax: a PMU event msr/tsc/ (exclude_guest fallback)" { same_as_perf -e msr/tsc/; }
# Not duration_time alone: perf 6.1 then calls the run 'system wide' and
# prints no user and sys times (perfgate(1), EVENTS, tool).
@test "syntax: duration_time" { same_as_perf -e duration_time,page-faults; }
@test "syntax: duration_time with task-clock, -x," { same_as_perf -x, -e duration_time,task-clock; }
@test "syntax: duration_time with task-clock, -j" { same_as_perf -j -e duration_time,task-clock; }
@test "syntax: a tracepoint pattern" { same_as_perf -e 'syscalls:sys_enter_getpp*'; }
# Six matches, which tracefs lists in another order than their names'.
@test "syntax: a pattern's matches in tracefs's directory order, as perf" {
	same_as_perf -e 'syscalls:sys_enter_getp*'
}
@test "syntax: a pattern's matches in tracefs's directory order, -x," {
	same_as_perf -x, -e 'syscalls:sys_enter_getp*'
}
@test "syntax: task-clock:k" { same_as_perf -e task-clock:k; }
@test "syntax: perf's names for a mixed list" {
	same_as_perf -e 'cycles:u,L1-dcache-loads,r003c,msr/tsc/,duration_time'
}

@test "exact: a pattern's match counts every getppid" {
	pg -x, -e 'syscalls:sys_enter_getpp*' -- "$MARKER" getppid 1234
	expect_status 0
	[ "$(count_of syscalls:sys_enter_getppid)" = 1234 ] || { show_run; fail "not 1234"; }
}

@test "exact: a group of tracepoints counts both exactly" {
	pg -x, -e "{$GETPPID,syscalls:sys_exit_getppid}" -- "$MARKER" getppid 1234
	expect_status 0
	[ "$(count_of "$GETPPID")" = 1234 ] || { show_run; fail "enter not 1234"; }
	[ "$(count_of syscalls:sys_exit_getppid)" = 1234 ] || { show_run; fail "exit not 1234"; }
}

@test "exact: a group's members count when it is enabled late (-D)" {
	# The calls wait for the agent's "Events enabled" (the delay is over).
	mkfifos go
	pg_bg -D 50 -x, -e "{task-clock,$GETPPID}" -- "$MARKER" wait "$T/go" getppid 1234
	wait_err "Events enabled"
	release go
	pg_wait
	expect_status 0
	[ "$(count_of "$GETPPID")" = 1234 ] || { show_run; fail "not 1234"; }
}

@test "a group's members count system-wide (-a), not only its leader" {
	# Other processes may fault and call getppid too: only "more than 0".
	pg -a -x, -e '{task-clock,page-faults}' -- "$MARKER" getppid 1234
	expect_status 0
	[ "$(count_of page-faults)" -gt 0 ] || { show_run; fail "page-faults counted nothing"; }
}

@test "exact: --filter applies to each match of a pattern" {
	pg -x, -e 'syscalls:sys_enter_getpp*' --filter 'common_pid == 1' -- "$MARKER" getppid 100
	expect_status 0
	[ "$(count_of syscalls:sys_enter_getppid)" = 0 ] || { show_run; fail "the filter was not applied"; }
}

@test "exact: duration_time is the run's elapsed time" {
	pg -e duration_time -- "$MARKER" getppid 10
	expect_status 0
	local ns s
	ns=$(awk '$3 == "duration_time" { gsub(",", "", $1); print $1 }' "$T/err")
	s=$(awk '/seconds time elapsed/ { print $1 }' "$T/err")
	[ -n "$ns" ] && [ "$(awk -v s="$s" 'BEGIN { printf "%d", s * 1e9 + 0.5 }')" = "$ns" ] ||
		{ show_run; fail "duration_time $ns ns is not $s s"; }
}

@test "errors: an unknown modifier, with a caret" {
	bad_list 'cycles:q' 7 "unknown modifier 'q'"
}
@test "errors: an unknown cache operation, with a caret" {
	bad_list 'task-clock,L1-dcache-lods' 21 "unknown event 'L1-dcache-lods'"
}
@test "errors: an unbalanced group, with a caret" {
	bad_list '{cycles,instructions' 0 "unbalanced '{'"
}
@test "errors: the caret is in the whole -e when it also holds a range spec" {
	bad_list "task-clock,$GETPPID@$GETPGID..,{cs,L1-dcache-lods}" 81 "unknown event 'L1-dcache-lods'"
}
@test "errors: --filter after an event that is no tracepoint" {
	pg -e '{cs,task-clock}' --filter 'common_pid == 1' -- true
	expect_status 255
	grep -qF "perfgate: --filter 'common_pid == 1' follows 'task-clock', which is not a tracepoint" \
		"$T/err" || { show_run; fail "no reason"; }
}
@test "errors: an unknown PMU names the PMUs there are" {
	bad_list 'task-clock,cpuu/event=1/' 11 "unknown PMU 'cpuu' (PMUs: "
	local pmus
	pmus=$(cd /sys/bus/event_source/devices && ls | paste -sd, | sed 's/,/, /g')
	grep -qF "(PMUs: $pmus)" "$T/err" || { show_run; fail "not the PMUs of sysfs: $pmus"; }
}
@test "errors: an unknown term names the PMU's terms" {
	bad_list 'msr/foo=1/' 4 "unknown term 'foo' for PMU 'msr' (terms: "
}
@test "errors: an unknown tracepoint" {
	bad_list 'syscalls:sys_enter_nosuch' 9 "unknown tracepoint 'sys_enter_nosuch'"
}
@test "errors: a pattern that matches nothing" {
	bad_list 'syscalls:nosuch_*' 0 "no tracepoint matches 'syscalls:nosuch_*'"
}

@test "ranges: plain events and (a,b)@GATE in one -e" {
	pg -x, -e "task-clock,($GETPPID,$GETPGID)@$GETPPID..$GETPGID" -- \
		"$MARKER" getppid 1 getpgid 1 getppid 1 getpgid 1
	expect_status 0
	grep -q ',task-clock,' "$T/err" || { show_run; fail "no task-clock row"; }
	expect_value "$GETPPID@$GETPPID..$GETPGID" 2
	expect_value "$GETPGID@$GETPPID..$GETPGID" 2
}

@test "--pfm-events: a libpfm4 name counts" {
	pg -x, --pfm-events perf::PERF_COUNT_SW_TASK_CLOCK -- "$MARKER" getppid 1234
	expect_status 0
	local v
	v=$(count_of perf::PERF_COUNT_SW_TASK_CLOCK)
	[ -n "$v" ] && [ "${v%%.*}" != "<not counted>" ] && awk -v v="$v" 'BEGIN { exit !(v > 0) }' ||
		{ show_run; fail "no task-clock count from libpfm4"; }
}

@test "--pfm-events: a bad name is a clear error" {
	pg --pfm-events perf::NO_SUCH_EVENT -- true
	expect_status 255
	grep -qF "libpfm4 cannot resolve 'perf::NO_SUCH_EVENT'" "$T/err" || { show_run; fail "no reason"; }
	grep -qF "PMUs libpfm4 found:" "$T/err" || { show_run; fail "no PMU list"; }
}
