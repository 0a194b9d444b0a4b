#!/usr/bin/env bats
# faults-input.bats: bad input is refused up front, with the reason and a
# caret under the byte it is about, before the kernel (or the file system)
# sees it: tracepoint names, -C lists, filters the kernel would refuse,
# filters too long for the kernel, long specs; and -x rows keep their field
# count whatever a label holds.  Each refusal is checked by its exact text,
# caret column and exit status, so a changed message fails here.

load helpers

# expect_refusal TEXT: the run exited 255, the workload never ran, and
# stderr is exactly TEXT (the reason, the input, the caret line).
expect_refusal() {
	expect_status 255
	[ ! -s "$T/out" ] || { show_run; fail "the workload ran"; }
	local got
	got=$(cat "$T/err")
	if [ "$got" != "$1" ]; then
		show_run
		printf -- '--- expected:\n%s\n' "$1"
		fail "stderr differs"
	fi
}

@test "a tracepoint name with '/' or '..' is refused at the bad byte, no path is read" {
	mkdir -p /tmp/pg-faults-$$/X/tp
	echo 1 >/tmp/pg-faults-$$/X/tp/id
	pg -x, -e "syscalls:../../../../../tmp/pg-faults-$$/X/tp" -- "$MARKER" say ran
	rm -rf /tmp/pg-faults-$$
	expect_refusal "perfgate: invalid character '.' in tracepoint name
  syscalls:../../../../../tmp/pg-faults-$$/X/tp
           ^"
	pg -x, -e 'sys/calls:sys_enter_write' -- "$MARKER" say ran
	expect_refusal "perfgate: invalid character '/' in tracepoint subsystem
  sys/calls:sys_enter_write
     ^"
	pg -x, -e 'syscalls:sys_enter_write/../id' -- "$MARKER" say ran
	expect_refusal "perfgate: invalid character '/' in tracepoint name
  syscalls:sys_enter_write/../id
                          ^"
	pg -x, -e 'syscalls:sys_enter_write:u' -- "$MARKER" say ran
	expect_refusal "perfgate: a tracepoint has exactly one ':' (subsys:name)
  syscalls:sys_enter_write:u
                          ^"
}

@test "-C 0,0 is CPU 0, duplicates merged, as perf reads it" {
	pg -x, -C 0,0 -e task-clock -- "$MARKER" say ran
	expect_status 0
	[ "$(grep -c ',task-clock,' "$T/err")" = 1 ] || { show_run; fail "expected one task-clock row"; }
	expect_out ran
	pg -x, -C 0,0-0,0 -e task-clock -- "$MARKER" say ran
	expect_status 0
	expect_out ran
}

@test "-C with a CPU that is not online names it, the online CPUs, and has a caret under it" {
	local online bad
	online=$(cat /sys/devices/system/cpu/online)
	bad=$(( $(getconf _NPROCESSORS_CONF) + 5 ))
	pg -x, -C "$bad" -e task-clock -- "$MARKER" say ran
	expect_refusal "perfgate: invalid value for -C: CPU $bad is not online (online CPUs: $online)
  $bad
  ^"
	pg -x, -C "0,$bad" -e task-clock -- "$MARKER" say ran
	expect_refusal "perfgate: invalid value for -C: CPU $bad is not online (online CPUs: $online)
  0,$bad
    ^"
	pg -x, -C "0,x" -e task-clock -- "$MARKER" say ran
	expect_refusal "perfgate: invalid value for -C: expected a CPU number or range (0,2-3)
  0,x
    ^"
	pg -x, -C "1-0" -e task-clock -- "$MARKER" say ran
	expect_refusal "perfgate: invalid value for -C: range 1-0 goes backwards
  1-0
    ^"
}
