#!/usr/bin/env bats
# faults-run.bats: the run itself under faults (issue 8) -- every signal
# that would end the agent ends the run the way SIGTERM does, and a
# window's single call is exactly its total.

load helpers

setup() {
	common_setup
	control_setup
}

# signal_ends_run_with_document SIG N: signal_ends_run (helpers.bash) with
# SIG (number N), and the --json-file document names SIG as what ended the
# run, with the workload's status (143: the agent ended it with SIGTERM).
signal_ends_run_with_document() {
	ulimit -c 0	# SIGQUIT's default action dumps core
	signal_ends_run "$1" $((128 + $2)) --json-file "$T/run.json"
	python3 - "$T/run.json" "SIG$1" <<'PY' || { show_run; fail "document"; }
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["run"]["ended_by"] == sys.argv[2], doc["run"]["ended_by"]
assert doc["run"]["exit_status"] == 143, doc["run"]["exit_status"]
assert any(v["event"].endswith("getppid") and v["count"] == 5 for v in doc["views"]), doc["views"]
PY
}

@test "SIGHUP ends the run as SIGTERM does: report, document, workload ended" {
	signal_ends_run_with_document HUP 1
}

@test "SIGQUIT ends the run as SIGTERM does" {
	signal_ends_run_with_document QUIT 3
}

@test "SIGUSR1 and SIGUSR2 end the run as SIGTERM does" {
	signal_ends_run_with_document USR1 10
	rm -f "$T"/run.json
	signal_ends_run_with_document USR2 12
}

@test "SIGALRM and a real-time signal end the run as SIGTERM does" {
	signal_ends_run_with_document ALRM 14
	rm -f "$T"/run.json
	signal_ends_run_with_document RTMIN+2 $(( $(kill -l RTMIN) + 2 ))
}

# A window's one call starts where its gate opens: the call's counts and
# time equal the window's totals exactly, in every run.
@test "a window's single call equals its total (50 runs)" {
	local i json
	for i in $(seq 1 50); do
		pg -x, -D -1 --control "fifo:$CTL,$ACK" -e task-clock,"$GETPPID" -- \
			"$MARKER" "${W[@]}" "window begin S" getppid 50 "${W[@]}" "window end S"
		expect_status 0
		json=$(sed -n 2p "$T/out")
		json=${json#ack }
		python3 - "$json" "$GETPPID" <<'PY' || { show_run; fail "run $i: call differs from total"; }
import json, sys
r = json.loads(sys.argv[1])
call, total = r["call"], r["total"]
assert r["calls"] == 1, r
assert call["counts"] == total["counts"], (call["counts"], total["counts"])
assert call["time_ns"] == total["time_ns"], (call["time_ns"], total["time_ns"])
assert call["counts"][sys.argv[2]] == 50, call["counts"]
PY
	done
}
