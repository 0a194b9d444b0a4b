#!/usr/bin/env bats
# repeat.bats: -r N (issue 9).  The workload runs N times; the report shows
# each row's mean over the runs and perf's "+-" (the standard deviation of
# the mean, relative to the mean), and --json-file's "repeat" object has
# every run's values.  The means and the +- are recomputed here, in Python,
# from the per-run values, and compared with what -x prints; counts that
# are known per run (marker's syscalls) are checked exactly.  perf_compare.bats
# checks the formats against perf stat -r.

load helpers

setup() {
	common_setup
	ensure_tracefs
	PG_TIMEOUT=60
	SEP=,
	REPORT=$T/err
}

# run_script: a workload that counts its runs in $T/n; run n makes n*n
# getppid()s, then one call of window W making n more, and exits with
# status EXIT_n (variables EXIT_1 ..., default 0).
run_script() {
	cat >"$T/run.sh" <<'EOF'
#!/bin/bash
n=$(( $(cat "$T/n" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$T/n"
code=EXIT_$n
exec "$MARKER" getppid $((n * n)) \
	fd "$PERFGATE_CTL_FD" "$PERFGATE_ACK_FD" "window begin W" getppid "$n" \
	fd "$PERFGATE_CTL_FD" "$PERFGATE_ACK_FD" "window end W" exit "${!code:-0}"
EOF
	chmod +x "$T/run.sh"
	export T MARKER
}

# check_runs PYTHON: run PYTHON with the document's "repeat" as `rep`, the
# -x report's lines as `lines` (split on ','), and `noise(values)`, perf's
# +- in percent, computed the textbook way.
check_runs() {
	python3 - "$T/run.json" "$T/err" "$1" <<'PY' || { show_run; fail "per-run values"; }
import json, math, sys
doc = json.load(open(sys.argv[1]))
rep = doc["repeat"]
lines = [l.rstrip("\n").split(",") for l in open(sys.argv[2]) if l.count(",") >= 5]
def line(event):
    return next(l for l in lines if l[2] == event)
def mean(v):
    return sum(v) / len(v)
def noise(v):
    m = mean(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
    return 100 * sd / math.sqrt(len(v)) / m if m else 0.0
exec(sys.argv[3])
PY
}

@test "-r 10, the same count every run: mean exact, +- 0.00%, every run's values in the document" {
	pg -r 10 -x, -e "task-clock,$GETPPID" --json-file "$T/run.json" -- "$MARKER" getppid 1234
	expect_status 0
	[ "$(grep -c "$GETPPID" "$T/err")" = 1 ] || { show_run; fail "one line per event, not one per run"; }
	grep -Eqx "1234,,$GETPPID,0.00%,[0-9]+,100.00,[0-9.]+,[KM]?/sec" "$T/err" ||
		{ show_run; fail "getppid line"; }
	check_runs '
v = rep["counts"]["syscalls:sys_enter_getppid"]
assert rep["runs"] == 10 and rep["runs_wanted"] == 10, rep
assert v["values"] == [1234] * 10, v
assert v["mean"] == 1234 and v["stddev"] == 0 and v["noise_pct"] == 0, v
tc = rep["counts"]["task-clock"]["values"]
assert len(tc) == 10 and all(x > 0 for x in tc), tc
l = line("task-clock")
assert l[0] == "%.2f" % (mean(tc) / 1e6), (l, mean(tc))
assert l[3] == "%.2f%%" % noise(tc), (l, noise(tc))
assert len(rep["elapsed_ns"]["values"]) == 10
assert rep["exit_status"] == [0] * 10
'
}

@test "-r 10, a count that differs per run: the means and +- of -x, of the window and the document are the per-run values'" {
	run_script
	pg -r 10 -x, -e "task-clock,$GETPPID" --json-file "$T/run.json" -- "$T/run.sh"
	expect_status 0
	check_runs '
v = rep["counts"]["syscalls:sys_enter_getppid"]["values"]
# bash may make getppid()s of its own before the exec: the same number each run.
base = v[0] - 2
assert v == [base + n * n + n for n in range(1, 11)], v
l = line("syscalls:sys_enter_getppid")
assert l[0] == "%.0f" % mean(v) and l[3] == "%.2f%%" % noise(v), (l, mean(v), noise(v))
w = rep["windows"]["W"]
assert w["counts"]["syscalls:sys_enter_getppid"]["values"] == list(range(1, 11)), w
assert w["calls"]["values"] == [1] * 10, w
assert abs(w["counts"]["syscalls:sys_enter_getppid"]["noise_pct"] - noise(list(range(1, 11)))) < 1e-9
l = line("syscalls:sys_enter_getppid@W")
assert l[0] == "%.0f" % 5.5 and l[3] == "%.2f%%" % noise(list(range(1, 11))), l
tc = rep["counts"]["task-clock"]["values"]
l = line("task-clock")
assert l[0] == "%.2f" % (mean(tc) / 1e6) and l[3] == "%.2f%%" % noise(tc), (l, tc)
'
	python3 -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator(schema).validate(json.load(open(sys.argv[2])))' \
		"$SRCDIR/docs/perfgate-report.schema.json" "$T/run.json" || fail "schema"
}

@test "-r 3 text report: '(3 runs)', the window's block with its +-, perf's elapsed line" {
	run_script
	pg -r 3 -e "$GETPPID" -- "$T/run.sh"
	expect_status 0
	grep -q "^ Performance counter stats for '$T/run.sh' (3 runs):\$" "$T/err" || { show_run; fail header; }
	# Runs make 1+1, 4+2, 9+3 getppid()s, plus bash's own: mean 6.67 + base,
	# so the +- is not 0 and is printed; no clock event, so no metric.
	grep -Eq "^ +[0-9]+      $GETPPID +\\( \\+- +[0-9]+\\.[0-9]{2}% \\)\$" "$T/err" ||
		{ show_run; fail "getppid line"; }
	grep -q "^ Window 'W' (3 runs): 1.00 calls, [0-9.]* seconds open per run:\$" "$T/err" ||
		{ show_run; fail "window header"; }
	# The window's calls make 1, 2, 3: mean 2, +- 28.87%.
	grep -Eq "^ +2      $GETPPID@W +\\( \\+- 28\\.87% \\)\$" "$T/err" ||
		{ show_run; fail "window line"; }
	grep -Eq '^ +[0-9.]+ \+- [0-9.]+ seconds time elapsed  \( \+- +[0-9.]+% \)$' "$T/err" ||
		{ show_run; fail "elapsed line"; }
	! grep -q "seconds user" "$T/err" || { show_run; fail "perf prints no user/sys with -r"; }
}

@test "-r -j: perf's variance key, one line per event" {
	pg -r 3 -j -e "$GETPPID" -- "$MARKER" getppid 7
	expect_status 0
	[ "$(grep -c . "$T/err")" = 1 ] || { show_run; fail "one line"; }
	jq -e '.["counter-value"] == "7.000000" and .variance == 0' "$T/err" >/dev/null ||
		{ show_run; fail "json line"; }
	grep -q '"event" : "syscalls:sys_enter_getppid", "variance" : 0.00, "event-runtime"' "$T/err" ||
		{ show_run; fail "key order"; }
}

@test "-r with a range: its mean and per-run values" {
	pg -r 3 -x, -e "$WRITE@$GETPPID..$GETPGID" --json-file "$T/run.json" -- "$RANGER" 10 3 5
	expect_status 0
	grep -qx "30,,$WRITE@${GETPPID}..${GETPGID},0.00%,[0-9]*,100.00,," "$T/err" ||
		{ show_run; fail "range line"; }
	check_runs '
r = rep["ranges"]["syscalls:sys_enter_write@syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid"]
assert r["values"] == [30, 30, 30] and r["noise_pct"] == 0, r
'
}

@test "-r: the exit status is the last run's, as perf's; each run's is in the document" {
	run_script
	EXIT_2=3 EXIT_3=5 pg -r 4 -x, -e "$GETPPID" --json-file "$T/run.json" -- "$T/run.sh"
	expect_status 0
	check_runs 'assert rep["exit_status"] == [0, 3, 5, 0], rep["exit_status"]'
	rm -f "$T/n"
	EXIT_3=7 pg -r 3 -x, -e "$GETPPID" -- "$T/run.sh"
	expect_status 7
	rm -f "$T/n"
	EXIT_2=9 pg -r 2 -x, -e "$GETPPID" -- "$T/run.sh"
	expect_status 9
}

@test "-r: bad values and combinations are refused, naming the option" {
	pg -r 0 -e "$GETPPID" -- true
	expect_status 129
	[ "$(head -n 1 "$T/err")" = "perfgate: invalid value for -r: 0 (perf's 'repeat forever') is not supported; give the number of runs" ] ||
		{ show_run; fail "-r 0"; }
	pg -r 3x -- true
	expect_status 129
	grep -q "invalid value for -r: expected a number" "$T/err" || { show_run; fail "-r 3x"; }
	pg -r -1 -- true
	expect_status 129
	grep -q "invalid value for -r: out of range (1..100000)" "$T/err" || { show_run; fail "-r -1"; }
	pg -r 2 -I 100 -- true
	expect_status 129
	[ "$(cat "$T/err")" = "perfgate: -r cannot be used with -I (see perfgate(1), -r)" ] || { show_run; fail "-I"; }
	pg -r 2 --control fd:0 -- true
	expect_status 129
	[ "$(cat "$T/err")" = "perfgate: -r cannot be used with --control (see perfgate(1), -r)" ] ||
		{ show_run; fail "--control"; }
	pg -r 2 -a --per-core -- true
	expect_status 129
	[ "$(cat "$T/err")" = "perfgate: -r cannot be used with --per-core (see perfgate(1), -r)" ] ||
		{ show_run; fail "--per-core"; }
	pg -r 2 -a -G / -- true
	expect_status 129
	[ "$(cat "$T/err")" = "perfgate: -r cannot be used with -G (see perfgate(1), -r)" ] || { show_run; fail "-G"; }
	pg -r 2 -p 1
	expect_status 129
	[ "$(cat "$T/err")" = "perfgate: -r cannot be used with -p (see perfgate(1), -r)" ] || { show_run; fail "-p"; }
	pg -r 2 -a
	expect_status 129
	[ "$(cat "$T/err")" = "perfgate: -r needs a command to run again (see perfgate(1), -r)" ] ||
		{ show_run; fail "-a"; }
}

@test "-r: SIGINT in run 2 of 5 ends the repetition: the report of the 2 runs, then the agent dies of SIGINT" {
	mkfifo "$T/started" "$T/hold"
	cat >"$T/run.sh" <<'SH'
#!/bin/bash
n=$(( $(cat "$T/n" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$T/n"
[ "$n" = 2 ] && exec "$MARKER" getppid 5 notify "$T/started" wait "$T/hold"
exec "$MARKER" getppid 5
SH
	chmod +x "$T/run.sh"
	export T MARKER
	pg_bg -r 5 -x, -e "$GETPPID" --json-file "$T/run.json" -- "$T/run.sh"
	wait_line started
	local pid
	pid=$(agent_pid) || fail "no agent under $AGENT_PID"
	kill -INT "$pid"
	pg_wait
	expect_status 130
	# bash makes getppid()s of its own before the exec, as many each run.
	grep -Eqx "[0-9]+,,$GETPPID,0.00%,[0-9]+,100.00,," "$T/err" || { show_run; fail "report"; }
	check_runs '
assert rep["runs"] == 2 and rep["runs_wanted"] == 5, rep
v = rep["counts"]["syscalls:sys_enter_getppid"]["values"]
assert len(v) == 2 and v[0] == v[1] and v[0] >= 5, rep
assert rep["exit_status"] == [0, 143], rep["exit_status"]
assert doc["run"]["ended_by"] == "SIGINT", doc["run"]
'
}

@test "-r -o: one '# started on' header for the runs, as perf; --append adds one per invocation" {
	pg -r 3 -o "$T/report" -e "$GETPPID" -- "$MARKER" getppid 4
	expect_status 0
	[ "$(grep -c '^# started on ' "$T/report")" = 1 ] || { cat "$T/report"; fail "one header"; }
	grep -q "(3 runs):\$" "$T/report" || { cat "$T/report"; fail "report"; }
	pg -r 2 -o "$T/report" --append -e "$GETPPID" -- "$MARKER" getppid 4
	expect_status 0
	[ "$(grep -c '^# started on ' "$T/report")" = 2 ] || { cat "$T/report"; fail "two headers"; }
	[ "$(grep -c "^ *4      $GETPPID" "$T/report")" = 2 ] || { cat "$T/report"; fail "two reports"; }
}
