#!/usr/bin/env bats
# faults-input.bats: bad input is refused up front, with the reason and a
# caret under the byte it is about, before the kernel (or the file system)
# sees it: tracepoint names, -C lists, filters the kernel would refuse,
# filters too long for the kernel, long specs; and -x rows keep their field
# count whatever a label holds.  Each refusal is checked by its exact text,
# caret column and exit status, so a changed message fails here.

load helpers

@test "a tracepoint name with '/' or '..' is refused at the bad byte, no path is read" {
	mkdir -p /tmp/pg-faults-$$/X/tp
	echo 1 >/tmp/pg-faults-$$/X/tp/id
	pg -x, -e "syscalls:../../../../../tmp/pg-faults-$$/X/tp" -- "$MARKER" say ran
	rm -rf /tmp/pg-faults-$$
	refused_with_stderr "perfgate: expected a tracepoint name after 'syscalls:', found '.'
  syscalls:../../../../../tmp/pg-faults-$$/X/tp
           ^"
	# perf's grammar reads "sys/..." as a PMU event: refused all the same.
	pg -x, -e 'sys/calls:sys_enter_write' -- "$MARKER" say ran
	refused_with_stderr "perfgate: expected ',' or '/' after a term, found ':'
  sys/calls:sys_enter_write
           ^"
	pg -x, -e 'syscalls:sys_enter_write/../id' -- "$MARKER" say ran
	refused_with_stderr "perfgate: unexpected '/' in tracepoint name
  syscalls:sys_enter_write/../id
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

@test "-C with a CPU that is not online: <not supported> rows and the workload's status, as perf 6.1" {
	local bad
	bad=$(( $(getconf _NPROCESSORS_CONF) + 5 ))
	pg -x, -C "$bad" -e task-clock,syscalls:sys_enter_getppid -- "$MARKER" say ran exit 3
	expect_status 3
	expect_out ran
	[ "$(cat "$T/err")" = "<not supported>,msec,task-clock,0,100.00,,
<not supported>,,syscalls:sys_enter_getppid,0,100.00,," ] || { show_run; fail "expected two <not supported> rows"; }
	pg -C "0,$bad" -e task-clock -- "$MARKER" say ran
	expect_status 0
	grep -q "^ Performance counter stats for 'CPU(s) 0,$bad':\$" "$T/err" || { show_run; fail "header"; }
	grep -q '^   <not supported> msec task-clock  ' "$T/err" || { show_run; fail "no <not supported> row"; }
}

@test "-C LIST syntax errors name the position with a caret" {
	pg -x, -C "0,x" -e task-clock -- "$MARKER" say ran
	refused_with_stderr "perfgate: invalid value for -C: expected a CPU number or range (0,2-3)
  0,x
    ^"
	pg -x, -C "1-0" -e task-clock -- "$MARKER" say ran
	refused_with_stderr "perfgate: invalid value for -C: range 1-0 goes backwards
  1-0
    ^"
	pg -x, -C "0,1-99999999999" -e task-clock -- "$MARKER" say ran
	refused_with_stderr "perfgate: invalid value for -C: CPU number too large (at most 2147483647)
  0,1-99999999999
      ^"
}

# kernel_takes TRACEPOINT FILTER: does the kernel's own filter parser take
# FILTER on TRACEPOINT?  Asked through a private tracefs instance (its
# filter file parses exactly as PERF_EVENT_IOC_SET_FILTER does), so no
# other test's tracing is touched.
kernel_takes() {
	local inst=/sys/kernel/tracing/instances/pg-faults-$BATS_TEST_NUMBER-$$ rc=0
	ensure_tracefs
	mkdir "$inst" || fail "cannot create tracefs instance $inst"
	printf '%s' "$2" >"$inst/events/${1/://}/filter" 2>/dev/null || rc=1
	rmdir "$inst"
	return "$rc"
}

# Filters of syscalls:sys_enter_write (count: a number; buf: const char *)
# unless the line starts with another tracepoint and '@': sched_switch's
# prev_comm is a char[16], sched_process_exec's filename a __data_loc char[].
@test "filters the kernel refuses are refused up front with the kernel's rule and a caret" {
	local f col reason tp
	while IFS=';' read -r f col reason; do
		tp=$WRITE
		[[ $f == *@* ]] && { tp=${f%%@*}; f=${f#*@}; }
		! kernel_takes "$tp" "$f" || fail "the kernel takes '$f' on $tp: the case is wrong"
		pg -x, -e "$tp" --filter "$f" -- "$MARKER" say ran
		refused_with_stderr "perfgate: bad filter for '$tp': $reason
  $f
  $(printf '%*s' "$col" '')^"
	done <<'LIST'
comm & 1;5;operator '&' does not apply to string field 'comm' (use ==, != or ~)
comm > 3;5;operator '>' does not apply to string field 'comm' (use ==, != or ~)
COMM <= 3;5;operator '<=' does not apply to string field 'COMM' (use ==, != or ~)
comm == 3;8;field 'comm' is a string: quote the value
count == abc;9;field 'count' is a number: expected a number, not a word
count == "abc";9;field 'count' is a number: expected a number, not a string
count ~ "a*";8;field 'count' is a number: expected a number, not a string
count > "a";6;operator '>' does not apply to strings: use ==, != or ~
count > abc;8;expected a number after '>'
CPU == "a";7;field 'CPU' is a number: expected a number, not a string
common_cpu == x;14;field 'common_cpu' is a number: expected a number, not a word
buf == CPUS{0};7;CPUS{} needs a number, CPU or cpumask field; 'buf' is a string
comm == CPUS{0};8;CPUS{} needs a number, CPU or cpumask field; 'comm' is a string
stacktrace == CPUS{0};14;CPUS{} needs a number, CPU or cpumask field; 'stacktrace' is a stack trace
count == 1 && buf > 2;18;operator '>' does not apply to string field 'buf' (use ==, != or ~)
sched:sched_switch@prev_comm > 1;10;operator '>' does not apply to string field 'prev_comm' (use ==, != or ~)
sched:sched_switch@prev_pid == "x";12;field 'prev_pid' is a number: expected a number, not a string
sched:sched_process_exec@filename & 1;9;operator '&' does not apply to string field 'filename' (use ==, != or ~)
sched:sched_process_exec@filename == 1;12;field 'filename' is a string: quote the value
count == -1;9;field 'count' is unsigned (size_t): the kernel takes no negative value
count == 1 || fd > -0x1;19;field 'fd' is unsigned (unsigned int): the kernel takes no negative value
common_flags & -1;15;field 'common_flags' is unsigned (unsigned char): the kernel takes no negative value
stacktrace == -1;14;field 'stacktrace' is unsigned (char *): the kernel takes no negative value
syscalls:sys_exit_write@ret == 0xffffffffffffffff;7;field 'ret' is signed (long): the kernel takes at most 9223372036854775807 (-1 has these 64 bits)
syscalls:sys_exit_write@ret > 9223372036854775808;6;field 'ret' is signed (long): the kernel takes at most 9223372036854775807 (-9223372036854775808 has these 64 bits)
LIST
}

@test "filters the kernel takes are taken: the checker refuses no more than the kernel" {
	local f tp
	while read -r f; do
		tp=$WRITE
		[[ $f == *@* ]] && { tp=${f%%@*}; f=${f#*@}; }
		kernel_takes "$tp" "$f" || fail "the kernel refuses '$f' on $tp: the case is wrong"
		pg -x, -e "$tp" --filter "$f" -- "$MARKER" say ran
		expect_status 0
		expect_out ran
	done <<'LIST'
comm == "marker"
comm != "x" && COMM ~ "mark*"
count & 1
count >= 2 || fd < 3
CPU == 0
cpu & 1
common_cpu != 1
count == CPUS{0-1}
stacktrace == 1
buf == "x"
sched:sched_switch@prev_comm == "x" || prev_pid & 3
sched:sched_process_exec@filename ~ "/bin/*" && old_pid > 0
count != 18446744073709551615 && fd != 0xffffffff
common_pid != -1 && CPU != -1 && common_cpu > -0x10
syscalls:sys_exit_write@ret == -1 || ret >= -9223372036854775808 || ret < 9223372036854775807
LIST
}

@test "a range trigger's filter is checked as --filter is: no negative value for an unsigned field" {
	pg -x, -e "$GETPPID@$WRITE(fd == -1)..syscalls:sys_exit_write" -- "$MARKER" say ran
	refused_with_stderr "perfgate: bad range spec:
$GETPPID@$WRITE(fd == -1)..syscalls:sys_exit_write
                                                          ^ field 'fd' is unsigned (unsigned int): the kernel takes no negative value"
	pg -x, -e "$GETPPID@$WRITE..syscalls:sys_exit_write(ret > 0xffffffffffffffff)" -- "$MARKER" say ran
	refused_with_stderr "perfgate: bad range spec:
$GETPPID@$WRITE..syscalls:sys_exit_write(ret > 0xffffffffffffffff)
                                                                                   ^ field 'ret' is signed (long): the kernel takes at most 9223372036854775807 (-1 has these 64 bits)"
	# A negative value for a signed field is taken, and the range counts.
	pg -x, -e "$WRITE@$GETPPID(common_pid != -1)..$GETPGID" -- "$MARKER" getppid 1 write 2 getpgid 1
	expect_status 0
	expect_value "$WRITE@$GETPPID(common_pid != -1)..$GETPGID" 2
}

# long_filter LEN: "count == 1 || ... || count == 11..1", exactly LEN bytes.
long_filter() {
	python3 - "$1" <<'PY'
import sys
want = int(sys.argv[1])
n = (want - 10) // 14
f = " || ".join(["count == 1"] * n)
f += " || count == " + "1" * (want - len(f) - 13)
assert len(f) == want, len(f)
print(f)
PY
}

@test "a filter longer than the kernel's 4095 bytes is refused with its length; 4095 is taken" {
	local f
	f=$(long_filter 4095)
	pg -x, -e "$WRITE" --filter "$f" -- "$MARKER" say ran
	expect_status 0
	expect_out ran
	f=$(long_filter 4096)
	pg -x, -e "$WRITE" --filter "$f" -- "$MARKER" say ran
	expect_status 255
	[ "$(head -n 1 "$T/err")" = "perfgate: bad filter for '$WRITE': filter is 4096 bytes; the kernel takes at most 4095" ] ||
		{ show_run; fail "no length message"; }
	# The caret line is under the filter's first byte.
	[ "$(sed -n 3p "$T/err")" = "  ^" ] || { show_run; fail "no caret under the filter"; }
	# In a range trigger too.
	pg -x, -e "$WRITE@$GETPPID($f)..$GETPGID" -- "$MARKER" say ran
	expect_status 255
	grep -qF "filter is 4096 bytes; the kernel takes at most 4095" "$T/err" || { show_run; fail "no length message"; }
}

@test "a spec error in more than 8 KB keeps its reason and a caret under the byte, in a window" {
	local head spec line1 line2 pos
	head=$(python3 -c 'print("syscalls:sys_enter_read..syscalls:sys_exit_read && " * 200, end="")')
	spec="task-clock@${head}syscalls:sys_enter_read.syscalls:sys_exit_read && ${head}syscalls:sys_enter_read.."
	[ "${#spec}" -gt 16384 ]
	pg -x, -e "$spec" -- "$MARKER" say ran
	expect_status 255
	[ "$(sed -n 1p "$T/err")" = "perfgate: bad range spec:" ] || { show_run; fail "no header"; }
	line1=$(sed -n 2p "$T/err")
	line2=$(sed -n 3p "$T/err")
	[ "$(wc -l <"$T/err")" = 3 ] || { show_run; fail "expected three lines"; }
	# A window: "..." at both cut ends, short enough for a terminal line.
	[[ $line1 == ...*... ]] && [ "${#line1}" -le 130 ] || { show_run; fail "no window: $line1"; }
	# The reason whole, the caret under the single '.' after the 201st trigger.
	[ "${line2##*^ }" = "expected '..' after trigger" ] || { show_run; fail "reason lost: $line2"; }
	pos=${line2%%^*}
	[ "${line1:${#pos}:2}" = ".s" ] && [ "${line1:$((${#pos} - 4)):4}" = "read" ] ||
		{ show_run; fail "caret at column ${#pos}, not under the bad '.'"; }
}

@test "a long option value keeps its reason and a caret under the byte, in a window" {
	local list line1 line2 pos
	list=$(python3 -c 'print("0," * 3000, end="")')
	pg -x, -C "${list}x,${list}0" -e task-clock -- "$MARKER" say ran
	expect_status 255
	[ "$(sed -n 1p "$T/err")" = "perfgate: invalid value for -C: expected a CPU number or range (0,2-3)" ] ||
		{ show_run; fail "reason lost"; }
	line1=$(sed -n 2p "$T/err")
	line2=$(sed -n 3p "$T/err")
	[[ $line1 == "  ..."*... ]] && [ "${#line1}" -le 132 ] || { show_run; fail "no window: $line1"; }
	pos=${line2%^}
	[ "${line1:${#pos}:3}" = "x,0" ] && [ "${line1:$((${#pos} - 2)):2}" = "0," ] ||
		{ show_run; fail "caret at column ${#pos}, not under 'x'"; }
}

@test "-x rows keep perf's field count when a range label holds the separator" {
	local gate="$GETPPID..$GETPGID(comm != \"x,y z;w\")" sep nf
	for sep in , ' ' ';'; do
		pg -x"$sep" -e "$WRITE,$WRITE@$gate" -- "$MARKER" getppid 1 write 2 getpgid 1 say ran
		expect_status 0
		nf=$(awk -F"[$sep]" '{ print NF }' "$T/err" | sort -u)
		[ "$nf" = 7 ] || { show_run; fail "-x'$sep': rows of $nf fields, expected 7 for every row"; }
	done
	# -x,: the label's ',' became '_'; the count is the unfiltered range's.
	pg -x, -e "$WRITE@$GETPPID..$GETPGID,$WRITE@$gate" -- "$MARKER" getppid 1 write 2 getpgid 1 say ran
	expect_status 0
	expect_value "$WRITE@$GETPPID..$GETPGID(comm != \"x_y z;w\")" \
		"$(value "$WRITE@$GETPPID..$GETPGID")"
	# -j keeps the label exactly.
	pg -j -e "$WRITE@$gate" -- "$MARKER" getppid 1 write 2 getpgid 1 say ran
	python3 - "$T/err" "$gate" <<'PY' || { show_run; fail "-j lost the label"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert any(r.get("range") == sys.argv[2] for r in rows), rows
PY
}

# ---- CI that fails by chance or passes by accident -------------------------

@test ".ci/run's summary ends on a folder with no .trs file, even with stdin open" {
	local fd
	mkdir "$T/empty"
	# stdin is a FIFO held open (no EOF ever), as a CI runner's may be: a
	# grep left without file arguments would read it and hang until the
	# timeout (124).
	mkfifo "$T/stdin"
	open_rw fd "$T/stdin"
	status=0
	timeout 10 "$SRCDIR/.ci/run" --summary "$T/empty" "$T/missing" <&"$fd" >"$T/out" 2>&1 || status=$?
	exec {fd}<&-
	[ "$status" = 0 ] || { cat "$T/out"; fail "status $status (124: hung)"; }
	[ "$(cat "$T/out")" = "0 passed, 0 failed, 0 skipped" ] || { cat "$T/out"; fail "wrong summary"; }
}

@test ".ci/run's summary counts real results, skips apart, and shows the failing logs" {
	mkdir -p "$T/b/x"
	printf ':test-result: PASS\n:test-result: SKIP\n:test-result: PASS\n' >"$T/b/x/a.trs"
	printf ':test-result: FAIL\n:test-result: XPASS\n' >"$T/b/x/f.trs"
	echo "the failing log" >"$T/b/x/f.log"
	status=0
	timeout 10 "$SRCDIR/.ci/run" --summary "$T/b" </dev/null >"$T/out" 2>&1 || status=$?
	[ "$status" = 1 ] || { cat "$T/out"; fail "status $status, expected 1"; }
	[ "$(tail -n 1 "$T/out")" = "2 passed, 2 failed, 1 skipped" ] || { cat "$T/out"; fail "wrong summary"; }
	grep -qx "the failing log" "$T/out" || { cat "$T/out"; fail "the failing log is not shown"; }
}

@test "tests default to this checkout's build tree, never to an absolute checkout path" {
	local got src
	# A build configured as ../configure names the source root build/..
	src=$(cd "$SRCDIR" && pwd)
	got=$(env -u PERFGATE -u MARKER -u RANGER -u PERFGATE_BUILD_DIR -u PG_BUILD_DIR -u SRCDIR \
		BATS_TEST_DIRNAME="$src/tests/e2e" bash -c \
		'source "$BATS_TEST_DIRNAME/helpers.bash"; echo "$PERFGATE $MARKER $RANGER"')
	[ "$got" = "$src/build/agent/perfgate $src/build/tests/helpers/marker $src/build/tests/helpers/ranger" ] ||
		fail "defaults: $got"
	! grep -rnE '/work/(main|wt)' "$SRCDIR/tests" "$SRCDIR/.ci" "$SRCDIR/bootstrap" "$SRCDIR/Makefile.am" ||
		fail "an absolute checkout path above"
}

@test "no test skips for a missing package: bootstrap installs them, a missing one fails" {
	! grep -nE '(command -v|import) [^|]*\|\| *skip' "$SRCDIR"/tests/e2e/*.bats ||
		fail "a test above skips for a missing tool: use needs (helpers.bash)"
	local p
	for p in jq linux-perf python3-jsonschema python3; do
		grep -qE "(\(| )$p( |\))" "$SRCDIR/bootstrap" || fail "bootstrap does not install $p"
	done
}
