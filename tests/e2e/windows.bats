#!/usr/bin/env bats
# windows.bats: named windows over shared physical counters.  The marker
# opens and closes windows itself over a control channel, so every count is
# exact; the window-end reply, the -x/-j/text reports and --json-file must
# all agree with it.

load helpers

setup() {
	common_setup
	control_setup
}

@test "window end replies with the call's exact counts and the totals" {
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" getppid 3 "${W[@]}" "window begin A" getppid 5 "${W[@]}" "window end A" \
		getppid 7 "${W[@]}" "window begin A" getppid 2 "${W[@]}" "window end A"
	expect_status 0
	mapfile -t lines <"$T/out"
	[ "${lines[0]}" = ack ] || fail "begin: ${lines[0]}"
	[[ ${lines[1]} == "ack {"* ]] || fail "end: ${lines[1]}"
	json=${lines[1]#ack }
	[ "$(json_eval "$json" 'd["window"], d["calls"], d["call"]["counts"]["'$GETPPID'"], d["total"]["counts"]["'$GETPPID'"]')" = "('A', 1, 5, 5)" ]
	json=${lines[3]#ack }
	[ "$(json_eval "$json" 'd["calls"], d["call"]["counts"]["'$GETPPID'"], d["total"]["counts"]["'$GETPPID'"]')" = "(2, 2, 7)" ]
	expect_value "$GETPPID@A" 7
	# The default window was never opened.
	expect_value "$GETPPID" "<not counted>"
}

@test "windows that partition the run add up exactly to the total" {
	# A from the start, then B over the rest; the default window sees all.
	pg -x, --control "fifo:$CTL,$ACK" -e "$GETPPID,$GETPGID" -- \
		"$MARKER" "${W[@]}" "window begin A" getppid 11 getpgid 3 "${W[@]}" "window end A" \
		"${W[@]}" "window begin B" getppid 13 getpgid 5 "${W[@]}" "window end B"
	expect_status 0
	a=$(value "$GETPPID@A"); b=$(value "$GETPPID@B"); total=$(value "$GETPPID")
	[ "$a" = 11 ] && [ "$b" = 13 ] && [ "$total" = 24 ] || { show_run; fail "A=$a B=$b total=$total"; }
	[ $(( $(value "$GETPGID@A") + $(value "$GETPGID@B") )) = "$(value "$GETPGID")" ]
}

@test "the same name opened again nests: the gate stays open to the last end" {
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" "${W[@]}" "window begin N" getppid 1 "${W[@]}" "window begin N" getppid 2 \
		"${W[@]}" "window end N" getppid 4 "${W[@]}" "window end N" getppid 8
	expect_status 0
	expect_value "$GETPPID@N" 7
	grep -q '"calls":2' "$T/out" || { show_run; fail "second end should report 2 calls"; }
}

@test "overlapping windows of different names count independently" {
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" "${W[@]}" "window begin X" getppid 1 "${W[@]}" "window begin Y" getppid 2 \
		"${W[@]}" "window end X" getppid 4 "${W[@]}" "window end Y"
	expect_status 0
	expect_value "$GETPPID@X" 3
	expect_value "$GETPPID@Y" 6
}

@test "five windows over one event hold no more perf fds than one" {
	perf_fds() {
		local n=0 f
		for f in /proc/"$1"/fd/*; do
			[ "$(readlink "$f" 2>/dev/null)" = "anon_inode:[perf_event]" ] && n=$((n + 1))
		done
		echo "$n"
	}
	mkfifos go
	pg_bg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID,task-clock" -- \
		"$MARKER" "${W[@]}" "window begin w1" pid "$T/m.pid" wait "$T/go" \
		"${W[@]}" "window begin w2" "${W[@]}" "window begin w3" "${W[@]}" "window begin w4" \
		"${W[@]}" "window begin w5" pid "$T/m2.pid" wait "$T/go"
	poll_until "the marker wrote no m.pid" test -f "$T/m.pid"
	pid=$(agent_pid)
	one=$(perf_fds "$pid")
	release go
	poll_until "the marker wrote no m2.pid" test -f "$T/m2.pid"
	five=$(perf_fds "$pid")
	release go
	pg_wait
	expect_status 0
	[ "$one" -ge 2 ] || fail "expected the agent to hold perf fds, saw $one"
	[ "$one" = "$five" ] || fail "one window: $one perf fds, five windows: $five"
}

@test "windows appear in -j lines with a window key, and in the text report" {
	pg -j -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" "${W[@]}" "window begin J" getppid 6 "${W[@]}" "window end J"
	expect_status 0
	python3 - "$T/err" "$GETPPID" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
w = [r for r in rows if r.get("window") == "J"]
assert len(w) == 1 and w[0]["event"] == sys.argv[2], rows
assert float(w[0]["counter-value"]) == 6, w
PY
	pg -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID" -- \
		"$MARKER" "${W[@]}" "window begin T" getppid 6 "${W[@]}" "window end T"
	grep -q "^ Window 'T': 1 call, [0-9.]* seconds open:" "$T/err" || { show_run; false; }
	grep -Eq "^ +6 +$GETPPID@T" "$T/err" || { show_run; false; }
}

@test "window commands with bad names or no open window get err" {
	mkfifos never
	pg_bg -D -1 --control "fifo:$CTL,$ACK" -e "$GETPPID" -- "$MARKER" wait "$T/never"
	expect_reply "window end nope" "err window 'nope' is not open"
	expect_reply "window begin a b" "err 'window begin' takes exactly one NAME"
	expect_reply "window begin" "err 'window begin' needs a NAME"
	expect_reply "window begin $(printf 'x%.0s' $(seq 65))" "err window name too long (over 64 bytes)"
	expect_reply "window begin ok" "ack"
	expect_reply "stop" "ack"
	pg_wait
	# The workload was ended by stop's SIGTERM, as perf ends it.
	expect_status 143
}

@test "--json-file records every view, window calls and open time" {
	pg -D -1 --control "fifo:$CTL,$ACK" --json-file "$T/run.json" -e "$GETPPID,cycles" -- \
		"$MARKER" "${W[@]}" "window begin A" getppid 4 "${W[@]}" "window end A" exit 3
	expect_status 3
	python3 - "$T/run.json" "$GETPPID" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["run"]["exit_status"] == 3, doc["run"]
views = {(v["event"], v["gate"], v["window"]): v for v in doc["views"]}
assert views[(sys.argv[2], "window", "A")]["count"] == 4
assert views[(sys.argv[2], "default", None)]["status"] == "not counted"
assert views[("cycles", "window", "A")]["status"] == "not supported"
w = doc["windows"][0]
assert w["name"] == "A" and w["calls"] == 1 and w["open_ns"] > 0, w
PY
}

@test "--json-file validates against docs/perfgate-report.schema.json" {
	/usr/bin/python3 -c 'import jsonschema' ||
		fail "needs python3's jsonschema: install python3-jsonschema (./bootstrap installs it)"
	pg -D -1 --control "fifo:$CTL,$ACK" --json-file "$T/run.json" \
		-e "$GETPPID,task-clock,cycles" -e "$WRITE@$GETPPID..$GETPGID" -- \
		"$MARKER" "${W[@]}" "window begin A" getppid 2 "${W[@]}" "window end A" \
		"${W[@]}" enable write 1 "${W[@]}" disable
	expect_status 0
	/usr/bin/python3 - "$SRCDIR/docs/perfgate-report.schema.json" "$T/run.json" "$T/out" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.validate(json.load(open(sys.argv[2])), schema)
# The window-end reply has its own definition in the same schema.
reply = [l[4:] for l in open(sys.argv[3]) if l.startswith("ack {")][0]
sub = dict(schema["definitions"]["window_end_reply"], definitions=schema["definitions"])
jsonschema.validate(json.loads(reply), sub)
PY
}

@test "a window-end reply over 80 events is sent whole and parses" {
	ensure_tracefs
	events=$(ls /sys/kernel/tracing/events/syscalls | grep '^sys_enter_' | head -80 |
		sed 's/^/syscalls:/' | paste -sd, -)
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$events,$GETPPID" -- \
		"$MARKER" "${W[@]}" "window begin big" getppid 3 "${W[@]}" "window end big"
	expect_status 0
	json=$(sed -n 's/^ack {/{/p' "$T/out")
	[ "${#json}" -gt 4352 ] || fail "reply only ${#json} bytes: not a long one"
	[ "$(json_eval "$json" 'd["call"]["counts"]["'$GETPPID'"], len(d["call"]["counts"])')" = "(3, 81)" ]
}

@test "window end replies include the range views: the call's share and the totals" {
	R_GATE=$GETPPID..$GETPGID
	pg -x, -D -1 --control "fifo:$CTL,$ACK" -e "$WRITE" -e "$WRITE@$R_GATE" -- \
		"$MARKER" getppid 1 write 2 getpgid 1 \
		"${W[@]}" "window begin w" getppid 1 write 3 getpgid 1 write 5 "${W[@]}" "window end w"
	expect_status 0
	json=$(sed -n 's/^ack {/{/p' "$T/out")
	key="$WRITE@$R_GATE"
	[ "$(json_eval "$json" 'd["call"]["ranges"]["'"$key"'"], d["ranges"]["'"$key"'"]')" = "(3, 5)" ] ||
		{ show_run; fail "reply: $json"; }
	# The plain write is read from the ranges' sums, as of the end: 10, as
	# without ranges (3 + 5, the marker's print of the begin's ack, and
	# its write of "window end w").
	[ "$(json_eval "$json" 'd["call"]["counts"]["'"$WRITE"'"]')" = 10 ] ||
		{ show_run; fail "reply: $json"; }
}
