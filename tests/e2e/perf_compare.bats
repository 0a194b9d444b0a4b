#!/usr/bin/env bats
# perf_compare.bats: perfgate as a drop-in for perf stat 6.1.  Each test
# runs `perf stat OPTIONS -- marker ...` and `perfgate OPTIONS -- marker
# ...` on the same deterministic workload and requires the same output,
# line for line, once digits are masked (counts, times, percentages and
# the magnitude of rates differ between any two runs).
#
# The differences perfgate intends are listed in perfgate(1), "perf stat
# compatibility"; none of the option sets below may show one.

load helpers

setup() {
	common_setup
	command -v perf >/dev/null || fail "needs perf (linux-perf, which ./bootstrap installs)"
	ensure_tracefs
	# Thousands separators must show where perf shows them.
	export LC_NUMERIC=en_US.UTF-8
	# Intervals need a workload that outlives a few of them.
	SLEEP=250
}

EVENTS="task-clock,page-faults,$GETPPID"

@test "perf: the default event set" { same_as_perf; }
@test "perf: -e software and tracepoint events" { same_as_perf -e "$EVENTS"; }
@test "perf: -e with an unsupported hardware event" { same_as_perf -e "cycles,instructions,$GETPPID"; }
@test "perf: -x," { same_as_perf -x, -e "$EVENTS"; }
@test "perf: -x';'" { same_as_perf "-x;" -e "$EVENTS"; }
@test "perf: -x with a multi-byte separator" { same_as_perf -x '::' -e "$EVENTS"; }
@test "perf: -j" { same_as_perf -j -e "$EVENTS"; }
@test "perf: --json-output" { same_as_perf --json-output -e "$EVENTS"; }
@test "perf: -I 100 --interval-count 2" { same_as_perf -I 100 --interval-count 2 -e "$EVENTS"; }
@test "perf: -I 100 -x," { same_as_perf -I 100 --interval-count 2 -x, -e "$EVENTS"; }
@test "perf: -I 100 -j" { same_as_perf -I 100 --interval-count 2 -j -e "$EVENTS"; }
@test "perf: -a" { same_as_perf -a -e "task-clock,$GETPPID"; }
@test "perf: -a -x," { same_as_perf -a -x, -e "task-clock,$GETPPID"; }
@test "perf: -a -I 100" { same_as_perf -a -I 100 --interval-count 2 -e task-clock; }
@test "perf: -C 0" { same_as_perf -C 0 -e task-clock; }
@test "perf: -C 0,1 -x," { same_as_perf -C 0,1 -x, -e task-clock; }
@test "perf: modifiers :u :k" { same_as_perf -e "task-clock:u,page-faults:k,cycles:u"; }
@test "perf: --filter" { same_as_perf -e "$GETPPID" --filter 'common_pid != 0'; }
@test "perf: -i / --no-inherit" { same_as_perf -i -e "$EVENTS"; }
@test "perf: -n" { same_as_perf -n; }
@test "perf: -n -x," { same_as_perf -n -x,; }
@test "perf: -n -e task-clock" { same_as_perf -n -e task-clock; }
@test "perf: -B" { same_as_perf -B -e "$EVENTS"; }
@test "perf: --no-big-num" { same_as_perf --no-big-num -e "$EVENTS"; }
@test "perf: a locale with a decimal comma" { LC_NUMERIC=de_DE.UTF-8 same_as_perf -e "$EVENTS"; }
@test "perf: -x, in a locale with a decimal comma" { LC_NUMERIC=de_DE.UTF-8 same_as_perf -x, -e "$EVENTS"; }
# -r: the mean and +- of task-clock (never the same twice, so both print
# the +-) and of getppid (1234 every run: +- 0, which text leaves out).
# perf 6.1 prints the last run's count where perfgate prints the mean:
# digits only, masked here (perfgate(1), -r).
@test "perf: -r 3" { same_as_perf -r 3 -e "task-clock,$GETPPID"; }
@test "perf: --repeat 3 -x," { same_as_perf --repeat 3 -x, -e "task-clock,$GETPPID"; }
@test "perf: -r 3 -j" { same_as_perf -r 3 -j -e "task-clock,$GETPPID"; }
@test "perf: -r 3 with an unsupported event" { same_as_perf -r 3 -e "cycles,$GETPPID"; }
@test "perf: -r 3 -x, with an unsupported event" { same_as_perf -r 3 -x, -e "cycles,$GETPPID"; }
@test "perf: -r 3 -a" { same_as_perf -r 3 -a -e task-clock; }
@test "perf: -r 3 -n" { same_as_perf -r 3 -n; }
@test "perf: --log-fd" {
	# Both write the report to fd 3, which goes to the file both are read from.
	local workload=("$MARKER" getppid 1234)
	perf stat --log-fd 3 -e "$EVENTS" -- "${workload[@]}" 3>"$T/perf" 2>/dev/null </dev/null ||
		fail "perf failed"
	"$PERFGATE" --log-fd 3 -e "$EVENTS" -- "${workload[@]}" 3>"$T/err" 2>/dev/null </dev/null ||
		fail "perfgate failed"
	diff <(mask_digits <"$T/perf") <(mask_digits <"$T/err") || fail "--log-fd output differs"
}
