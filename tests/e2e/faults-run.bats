#!/usr/bin/env bats
# faults-run.bats: the run itself under faults (issue 8) -- every signal
# that would end the agent ends the run the way SIGTERM does, and a
# window's single call is exactly its total.

load helpers

setup() {
	common_setup
	chan ch
	CTL=$T/ch.ctl
	ACK=$T/ch.ack
	W=(ctl "$CTL" "$ACK")
}

# signal_ends_run SIG N: SIG (number N) sent to the agent ends the workload,
# prints the final report, writes a document naming SIG, and the agent
# then dies of SIG.
signal_ends_run() {
	mkfifos ready end
	ulimit -c 0	# SIGQUIT's default action dumps core
	pg_bg -e "$GETPPID" --json-file "$T/run.json" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 notify "$T/ready" wait "$T/end"
	wait_line ready
	kill "-$1" "$(agent_pid)"
	pg_wait
	[ "$status" = $((128 + $2)) ] || { show_run; fail "expected status $((128 + $2)), got $status"; }
	grep -Eq "^ +5 +$GETPPID" "$T/err" || { show_run; fail "no final report with a count of 5"; }
	gone "$(cat "$T/m.pid")" || fail "the workload is still running after SIG$1"
	python3 - "$T/run.json" "SIG$1" <<'PY' || { show_run; fail "document"; }
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["run"]["ended_by"] == sys.argv[2], doc["run"]["ended_by"]
assert doc["run"]["exit_status"] == 143, doc["run"]["exit_status"]
assert any(v["event"].endswith("getppid") and v["count"] == 5 for v in doc["views"]), doc["views"]
PY
}

@test "SIGHUP ends the run as SIGTERM does: report, document, workload ended" {
	signal_ends_run HUP 1
}

@test "SIGQUIT ends the run as SIGTERM does" {
	signal_ends_run QUIT 3
}

@test "SIGUSR1 and SIGUSR2 end the run as SIGTERM does" {
	signal_ends_run USR1 10
	rm -f "$T"/ready "$T"/end "$T"/run.json
	signal_ends_run USR2 12
}

@test "SIGALRM and a real-time signal end the run as SIGTERM does" {
	signal_ends_run ALRM 14
	rm -f "$T"/ready "$T"/end "$T"/run.json
	signal_ends_run RTMIN+2 $(( $(kill -l RTMIN) + 2 ))
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
