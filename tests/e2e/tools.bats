#!/usr/bin/env bats
# tools.bats: `perfgate diff` and `perfgate plot` (issue 11) on documents
# made from real runs of the marker, whose window calls make known numbers
# of getppid()s: call i of a window makes K(i) = 10 + i % 3 (so the calls
# have spread), or twice that in the run with a real change.  Assertions
# are on the syscall counts only, never on times, so a busy machine cannot
# change a verdict.  The plot checks go through the Figure objects
# (tests/tools/check_plot.py), not only the files.

load helpers

# Debian's Python, where python3-scipy and python3-matplotlib are.
PY=/usr/bin/python3

setup() {
	common_setup
	control_setup
}

# steps N MULT SHIFT [SLEEP]: marker steps for N calls of window W making
# MULT * K(i) getppid()s each, and N calls of window V making K(i + SHIFT)
# (the same values in another order); SLEEP ms inside each call.
steps() {
	local i zz=()
	[ -n "${4:-}" ] && zz=(sleep "$4")
	STEPS=()
	for i in $(seq 1 "$1"); do
		STEPS+=("${W[@]}" "window begin W" getppid $(((10 + i % 3) * $2)) "${zz[@]}"
			"${W[@]}" "window end W"
			"${W[@]}" "window begin V" getppid $((10 + (i + $3) % 3)) "${zz[@]}"
			"${W[@]}" "window end V")
	done
}

# run_doc FILE [AGENT OPTIONS...]: run the marker with $STEPS under the
# agent, the document in $T/FILE.
run_doc() {
	local file=$1
	shift
	pg -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID,task-clock" "$@" \
		--json-file "$T/$file" -- "$MARKER" "${STEPS[@]}"
	expect_status 0
	[ -s "$T/$file" ] || fail "no document $file"
}

# tool ARGS...: run `perfgate ARGS` (diff or plot, through the agent);
# stdout in $T/tool.out, stderr in $T/tool.err, status in $status.
tool() {
	status=0
	timeout 60 "$PERFGATE" "$@" >"$T/tool.out" 2>"$T/tool.err" || status=$?
}

show_tool() {
	echo "--- stdout"; cat "$T/tool.out"
	echo "--- stderr"; cat "$T/tool.err"
	echo "--- status: $status"
}

expect_tool_status() {
	[ "$status" = "$1" ] || { show_tool; fail "expected status $1, got $status"; }
	! grep -q Traceback "$T/tool.err" || { show_tool; fail "a traceback"; }
}

# check_diff_json PYTHON: run PYTHON with the --json output as `r` and its rows
# by view name as `rows`.
check_diff_json() {
	$PY - "$T/tool.out" "$1" <<'PY' || { show_tool; fail "diff --json"; }
import json, sys
r = json.load(open(sys.argv[1]))
rows = {x["view"]: x for x in r["rows"]}
exec(sys.argv[2])
PY
}

@test "perfgate NAME runs perfgate-NAME from PERFGATE_EXEC_PATH; a NAME without one is the workload" {
	mkdir "$T/bin"
	printf '#!/bin/sh\necho "helper $(basename "$0"): $*"\nexit 7\n' >"$T/bin/perfgate-hello"
	chmod +x "$T/bin/perfgate-hello"
	status=0
	out=$(PERFGATE_EXEC_PATH="$T/nothing:$T/bin" "$PERFGATE" hello a 'b c') || status=$?
	[ "$status" = 7 ] && [ "$out" = "helper perfgate-hello: a b c" ] ||
		fail "helper: status $status, output '$out'"
	# The exec path comes first, before the installed and source tools.
	cp "$T/bin/perfgate-hello" "$T/bin/perfgate-diff"
	out=$(PERFGATE_EXEC_PATH="$T/bin" "$PERFGATE" diff x y) || true
	[ "$out" = "helper perfgate-diff: x y" ] || fail "PERFGATE_EXEC_PATH not first: '$out'"
	# No helper perfgate-marker: the marker is the workload, as before;
	# and `--` always means a workload.
	PATH="$(dirname "$MARKER"):$PATH" pg marker getppid 3 exit 5
	expect_status 5
	grep -qF "Performance counter stats for 'marker getppid 3 exit 5'" "$T/err" ||
		{ show_run; fail "marker as the workload"; }
	PATH="$T/bin:$PATH" pg -e "$GETPPID" -x, -- perfgate-hello
	expect_status 7
}

@test "diff: twice the syscalls in one window is a significant change and fails --fail-if; the unchanged window is not flagged" {
	steps 30 1 0
	run_doc base.json
	steps 30 2 1
	run_doc new.json
	tool diff --json "$T/base.json" "$T/new.json"
	expect_tool_status 0
	check_diff_json "
w = rows['$GETPPID@W']['result']
assert w['n'] == [30, 30] and w['mean'] == [11.0, 22.0], w
assert w['change'] == 11.0 and w['change_pct'] == 100.0, w
assert w['test'] == 'welch' and w['significant'] and w['p'] < 1e-6, w
lo, hi = w['ci']
assert 0 < lo < 11.0 < hi < 22.0, w['ci']
v = rows['$GETPPID@V']['result']
assert v['mean'] == [11.0, 11.0] and v['change'] == 0.0, v
assert v['p'] == 1.0 and not v['significant'], v
assert v['ci'][0] < 0 < v['ci'][1], v['ci']
d = rows['$GETPPID']
assert d['result']['test'] is None, d
assert 'wall-time@W' in rows and rows['wall-time@W']['result']['n'] == [30, 30]
assert r['status'] == 0 and r['gates'] == []
"
	tool diff --fail-if "$GETPPID@W > +5%" "$T/base.json" "$T/new.json"
	expect_tool_status 1
	grep -Eq "^$GETPPID@W +30/30 +11\.00 +22\.00 +\+11\.00 +\+100\.0% +\[\+[0-9.]+, \+[0-9.]+\] +<0\.001 +\*$" \
		"$T/tool.out" || { show_tool; fail "table row of W"; }
	grep -Eq "^$GETPPID@V +30/30 +11\.00 +11\.00 +\+0\.00 +\+0\.0% .* 1\.000$" "$T/tool.out" ||
		{ show_tool; fail "table row of V"; }
	grep -qF "perfgate diff: --fail-if '$GETPPID@W > +5%' failed: change +100.00%, past the threshold and significant" \
		"$T/tool.err" || { show_tool; fail "gate message"; }
	# The same change against a gate on the other direction, on the unchanged
	# window, or in absolute terms past it: only the last one fails.
	tool diff --fail-if "$GETPPID@W < -5%" --fail-if "$GETPPID@V > +5%" "$T/base.json" "$T/new.json"
	expect_tool_status 0
	tool diff --fail-if "$GETPPID@W > 20" "$T/base.json" "$T/new.json"
	expect_tool_status 0
	tool diff --fail-if "$GETPPID@W > 10" "$T/base.json" "$T/new.json"
	expect_tool_status 1
}

@test "diff: two runs with the same work: nothing flagged, --fail-if passes" {
	steps 30 1 0
	run_doc base.json
	steps 30 1 2
	run_doc same.json
	tool diff --json "$T/base.json" "$T/same.json"
	expect_tool_status 0
	check_diff_json "
for name in ('$GETPPID@W', '$GETPPID@V'):
    c = rows[name]['result']
    assert c['change'] == 0.0 and c['p'] == 1.0 and not c['significant'], (name, c)
"
	tool diff --fail-if "$GETPPID@W > +5%" --fail-if "$GETPPID@V > +5%" \
		--fail-if "$GETPPID@W < -5%" "$T/base.json" "$T/same.json"
	expect_tool_status 0
	grep -qF "* significant: p < 0.05 in Welch's t-test on the per-call values" "$T/tool.out" ||
		{ show_tool; fail "legend"; }
	! grep -Eq "^$GETPPID@[WV] .*\*" "$T/tool.out" || { show_tool; fail "flagged"; }
}

@test "diff: a single value per run (default window, a window with 1 call): no spread to test, the plain change" {
	STEPS=("${W[@]}" enable getppid 5 "${W[@]}" disable
		"${W[@]}" "window begin X" getppid 4 "${W[@]}" "window end X")
	run_doc one.json
	STEPS=("${W[@]}" enable getppid 10 "${W[@]}" disable
		"${W[@]}" "window begin X" getppid 6 "${W[@]}" "window end X")
	run_doc two.json
	tool diff --json "$T/one.json" "$T/two.json"
	expect_tool_status 0
	check_diff_json "
for name, means, pct in (('$GETPPID', [5.0, 10.0], 100.0), ('$GETPPID@X', [4.0, 6.0], 50.0)):
    x = rows[name]
    c = x['result']
    assert c['mean'] == means and c['change_pct'] == pct, (name, c)
    assert c['test'] is None and c['p'] is None and c['ci'] is None and not c['significant'], c
    assert x['note'] == 'single value: no spread to test', x
"
	tool diff "$T/one.json" "$T/two.json"
	expect_tool_status 0
	grep -Eq "^$GETPPID +- +5\.00 +10\.00 +\+5\.00 +\+100\.0% +- +- +single value: no spread to test$" \
		"$T/tool.out" || { show_tool; fail "table row"; }
	# A gate cannot fail without a test: it says why.
	tool diff --fail-if "$GETPPID > +5%" "$T/one.json" "$T/two.json"
	expect_tool_status 0
	grep -qF "$GETPPID > +5%': ok: no spread to test: a single value per run" "$T/tool.out" ||
		{ show_tool; fail "gate note"; }
}

@test "diff: bad input (another schema version, a truncated document, different events, bad --fail-if): a message, exit 2, no traceback" {
	STEPS=("${W[@]}" "window begin X" getppid 4 "${W[@]}" "window end X")
	run_doc a.json
	$PY -c 'import json, sys; d = json.load(open(sys.argv[1])); d["perfgate"]["schema"] = 1
json.dump(d, open(sys.argv[2], "w"))' "$T/a.json" "$T/v1.json"
	tool diff "$T/v1.json" "$T/a.json"
	expect_tool_status 2
	[ "$(cat "$T/tool.err")" = "perfgate diff: $T/v1.json: schema version 1, but this tool reads version 2 (docs/json-report.md); make the run again with this perfgate" ] ||
		{ show_tool; fail "schema message"; }

	$PY -c 'import json, sys; d = json.load(open(sys.argv[1])); d["views"][0]["count"] = "many"
json.dump(d, open(sys.argv[2], "w"))' "$T/a.json" "$T/odd.json"
	tool diff "$T/a.json" "$T/odd.json"
	expect_tool_status 2
	[ "$(cat "$T/tool.err")" = "perfgate diff: $T/odd.json: not a perfgate --json-file document: views[0].count is not an integer" ] ||
		{ show_tool; fail "layout message"; }

	head -c 400 "$T/a.json" >"$T/cut.json"
	tool diff "$T/a.json" "$T/cut.json"
	expect_tool_status 2
	[ "$(cat "$T/tool.err")" = "perfgate diff: $T/cut.json: truncated document: the JSON ends early (at byte 400); was the run or the copy cut short?" ] ||
		{ show_tool; fail "truncation message"; }

	pg -D -1 --control "fifo:$CTL,$ACK" -e "$GETPGID,task-clock" --json-file "$T/b.json" -- \
		"$MARKER" "${STEPS[@]}"
	expect_status 0
	tool diff "$T/a.json" "$T/b.json"
	expect_tool_status 2
	[ "$(cat "$T/tool.err")" = "perfgate diff: the runs counted different events: only in $T/a.json: $GETPPID; only in $T/b.json: $GETPGID" ] ||
		{ show_tool; fail "events message"; }

	tool diff "$T/a.json" "$T/missing.json"
	expect_tool_status 2
	grep -qF "perfgate diff: $T/missing.json: cannot read: No such file or directory" "$T/tool.err" ||
		{ show_tool; fail "missing file"; }
	tool diff --fail-if "$GETPPID@X >> 5" "$T/a.json" "$T/a.json"
	expect_tool_status 2
	grep -qF "perfgate diff: --fail-if '$GETPPID@X >> 5': expected VIEW > VALUE or VIEW < VALUE" "$T/tool.err" ||
		{ show_tool; fail "bad gate"; }
	tool diff --fail-if "$GETPPID@nowhere > 5%" "$T/a.json" "$T/a.json"
	expect_tool_status 2
	grep -qF "perfgate diff: --fail-if '$GETPPID@nowhere > 5%': no view '$GETPPID@nowhere' in both runs" \
		"$T/tool.err" || { show_tool; fail "unknown view"; }
	tool diff "$T/a.json"
	expect_tool_status 2
	grep -qF "perfgate diff: the following arguments are required: NEW.json" "$T/tool.err" ||
		{ show_tool; fail "usage"; }
	tool plot "$T/cut.json" -o "$T/x.png"
	expect_tool_status 2
	grep -qF "perfgate plot: $T/cut.json: truncated document" "$T/tool.err" || { show_tool; fail "plot"; }
	tool plot "$T/a.json" -o "$T/x.gif"
	expect_tool_status 2
	grep -qF "perfgate plot: -o $T/x.gif: unknown format 'gif': name it .png, .svg or .pdf" \
		"$T/tool.err" || { show_tool; fail "plot format"; }
}

@test "plot: PNG and SVG of a -I run with windows: a panel per event, a shaded span per call, each window labelled once" {
	steps 30 1 0 2
	run_doc run.json -I 10
	tool plot "$T/run.json" -o "$T/run.png"
	expect_tool_status 0
	tool plot "$T/run.json" -o "$T/run.svg"
	expect_tool_status 0
	$PY "$SRCDIR/tests/tools/check_plot.py" series "$T/run.json" "$T/run.png" "$T/run.svg" ||
		fail "figure"
}

@test "plot: 5000 calls of a window stay bounded: at most MAX_SPANS spans, one label" {
	local i
	STEPS=()
	for i in $(seq 1 5000); do
		STEPS+=("${W[@]}" "window begin B" getppid $((1 + i % 4)) "${W[@]}" "window end B")
	done
	PG_TIMEOUT=120 run_doc many.json -I 10 --call-values 5000
	tool plot "$T/many.json" -o "$T/many.png"
	expect_tool_status 0
	$PY "$SRCDIR/tests/tools/check_plot.py" many "$T/many.json" "$T/many.png" || fail "figure"
}

@test "plot: 20 events give 20 readable panels; without -I, per-call bars per window" {
	local ev=task-clock s
	for s in getppid getpgid write read openat close mmap munmap brk futex clock_nanosleep \
		newfstatat lseek pread64 ioctl rt_sigaction rt_sigprocmask exit_group getpid; do
		ev+=",syscalls:sys_enter_$s"
	done
	steps 5 1 0
	pg -D -1 --control "fifo:$CTL,$ACK" -e "$ev" -I 10 --json-file "$T/wide.json" -- \
		"$MARKER" "${STEPS[@]}"
	expect_status 0
	steps 30 1 0
	run_doc bars.json
	$PY "$SRCDIR/tests/tools/check_plot.py" wide "$T/wide.json" "$T/wide.png" || fail "20 events"
	$PY "$SRCDIR/tests/tools/check_plot.py" bars "$T/bars.json" "$T/bars.svg" || fail "bars"
}
