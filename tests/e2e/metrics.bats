#!/usr/bin/env bats
# metrics.bats: perfgate in a Prometheus fleet (docs/metrics.md), against
# the real programs: promtool, a Prometheus server, a Pushgateway (Debian's
# prometheus and prometheus-pushgateway, installed by ./bootstrap), and
# prometheus_client's strict OpenMetrics parser.
#
# Every server runs on a loopback port picked at run time (a port taken
# meanwhile by someone else is retried with another), with its data in the
# test's private directory, and is killed in teardown.  The marker drives
# the windows itself and pauses on FIFOs while the test scrapes, so every
# count is exact; every wait is bounded.

load helpers

PY=/usr/bin/python3	# Debian's, with prometheus_client
R_GATE=syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid
# A range label that holds double quotes; the --metrics-label value below
# holds a backslash, a double quote and a newline.
Q_GATE='syscalls:sys_enter_getppid(comm == "marker")..syscalls:sys_enter_getpgid'
ODD_VALUE='a"b\c
d'

setup() {
	common_setup
	# curl does every scrape: without it a scrape would look like a
	# server that does not answer.
	needs curl curl
	for p in promtool prometheus prometheus-pushgateway; do
		command -v "$p" >/dev/null || fail "$p is missing: run ./bootstrap"
	done
	$PY -c 'import prometheus_client' || fail "python3-prometheus-client is missing: run ./bootstrap"
	SERVICE_PIDS=()
	control_setup
}

teardown() {
	local pid
	for pid in "${SERVICE_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	common_teardown
}

# free_port: a loopback TCP port nobody listened on a moment ago.
free_port() {
	$PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# alive PID: PID runs and is not a zombie.
alive() {
	local state
	state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

# wait_ready URL PID [GREP]: poll URL (each try bounded) until it answers
# (and its body matches GREP), for PG_TIMEOUT seconds, while PID lives.
wait_ready() {
	local url=$1 pid=$2 pattern=${3:-} i
	for ((i = 0; i < PG_TIMEOUT * 20; i++)); do
		if [ -n "$pattern" ]; then
			curl -sf -m 1 "$url" 2>/dev/null | grep -q "$pattern" && return 0
		else
			curl -sf -m 1 -o /dev/null "$url" 2>/dev/null && return 0
		fi
		alive "$pid" || return 1
		sleep 0.05
	done
	return 1
}

# agent_listen ARGS...: the agent in the background serving /metrics on a
# free loopback port ($PORT, $URL); returns once /metrics answers.
agent_listen() {
	local try
	for try in 1 2 3 4 5; do
		PORT=$(free_port)
		URL=http://127.0.0.1:$PORT/metrics
		pg_bg --metrics-listen "127.0.0.1:$PORT" "$@"
		wait_ready "$URL" "$AGENT_PID" '^perfgate_info' && return 0
		pg_wait
		grep -q 'Address already in use' "$T/err" || { show_run; fail "the agent did not serve $URL"; return 1; }
	done
	fail "no free port in 5 tries"
}

# service NAME READY-PATH CMD...: start a server whose command line holds
# the word __PORT__ (replaced by a free port, $SVC_PORT), wait for READY-PATH.
service() {
	local name=$1 ready=$2 try pid
	shift 2
	for try in 1 2 3 4 5; do
		SVC_PORT=$(free_port)
		"${@//__PORT__/$SVC_PORT}" >"$T/$name.log" 2>&1 &
		pid=$!
		SERVICE_PIDS+=("$pid")
		wait_ready "http://127.0.0.1:$SVC_PORT$ready" "$pid" && return 0
		kill -KILL "$pid" 2>/dev/null || true
		grep -q 'address already in use' "$T/$name.log" || { cat "$T/$name.log"; fail "$name did not start"; return 1; }
	done
	fail "$name: no free port in 5 tries"
}

# scrape FILE [ACCEPT]: GET /metrics into FILE; the Content-Type into $CTYPE.
scrape() {
	local accept=${2:-}
	CTYPE=$(curl -sf -m 5 ${accept:+-H "Accept: $accept"} -o "$1" -w '%{content_type}' "$URL") ||
		fail "scrape of $URL failed"
}

# promtool_ok FILE: promtool (Prometheus' text format 0.0.4) accepts FILE.
promtool_ok() {
	promtool check metrics <"$1" >"$T/promtool.out" 2>&1 || {
		cat "$T/promtool.out"; cat -A "$1"; fail "promtool rejected $1"
	}
}

# om FILE PYEXPR: parse FILE with the strict OpenMetrics parser, then print
# PYEXPR over v(name, **labels) -> the sample's value (None if absent).
om() {
	$PY - "$1" "$2" <<'EOF'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
samples = [s for f in text_string_to_metric_families(open(sys.argv[1]).read()) for s in f.samples]
def v(name, **labels):
    hits = [s.value for s in samples if s.name == name and all(s.labels.get(k) == x for k, x in labels.items())]
    assert len(hits) <= 1, (name, labels, hits)
    return hits[0] if hits else None
def label(name, key, **labels):
    return [s.labels.get(key) for s in samples if s.name == name and all(s.labels.get(k) == x for k, x in labels.items())]
print(eval(sys.argv[2]))
EOF
}

# json_view FILE EVENT GATE NAME: a view's count in a --json-file document.
json_view() {
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([v["count"] for v in d["views"] if v["event"] == sys.argv[2] and v["gate"] == sys.argv[3]
       and v.get("window", v.get("range")) == (sys.argv[4] or None)][0])' "$@"
}

@test "every scrape passes promtool and the OpenMetrics parser: windows, ranges, odd labels, exact counts" {
	mkfifos ready go
	agent_listen -x, -D -1 --control "$CTL_OPT" -e "task-clock,$GETPPID" \
		-e "$WRITE@$R_GATE" -e "$WRITE@$Q_GATE" --metrics-label "note=$ODD_VALUE" \
		--json-file "$T/run.json" -- \
		"$MARKER" "${W[@]}" "window begin parse" getppid 1 write 2 getpgid 1 "${W[@]}" "window end parse" \
		getppid 1 write 3 getpgid 1 "${W[@]}" "window begin parse" notify "$T/ready" wait "$T/go" \
		"${W[@]}" "window end parse"
	wait_line ready
	scrape "$T/om.txt" "application/openmetrics-text; version=1.0.0"
	[ "$CTYPE" = "application/openmetrics-text; version=1.0.0; charset=utf-8" ] || fail "content type: $CTYPE"
	# What the ecosystem's tools do: curl's own Accept (*/*) into promtool.
	curl -sf -m 5 "$URL" | promtool check metrics || fail "promtool rejected a plain curl scrape"
	scrape "$T/text.txt"
	[ "$CTYPE" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "content type: $CTYPE"
	promtool_ok "$T/text.txt"
	# 0.0.4 has no info type, no UNIT and no EOF; families named as their samples.
	grep -qx '# TYPE perfgate_info gauge' "$T/text.txt" || { cat "$T/text.txt"; fail "info not a gauge"; }
	grep -qx '# TYPE perfgate_count_total counter' "$T/text.txt" || fail "counter family name"
	! grep -qE '^# (UNIT|EOF)' "$T/text.txt" || fail "OpenMetrics lines in 0.0.4"
	[ "$(tail -n1 "$T/om.txt")" = "# EOF" ] || fail "OpenMetrics without # EOF"
	# The window is open (depth 1) and has one call; ranges count exactly.
	run om "$T/om.txt" "v('perfgate_count_total', event='$GETPPID', gate='window', window='parse'), \
v('perfgate_window_calls_total', window='parse'), v('perfgate_window_depth', window='parse'), \
v('perfgate_count_total', event='$WRITE', gate='range', range='$R_GATE'), \
v('perfgate_count_total', event='$WRITE', gate='range', range='''$Q_GATE'''), \
v('perfgate_count_total', event='$GETPPID', gate='default'), \
v('perfgate_incomplete', event='$WRITE', range='$R_GATE'), v('perfgate_info', version='0.1.0'), \
label('perfgate_info', 'note') == ['''$ODD_VALUE''']"
	[ "$output" = "(1, 1, 1, 5, 5, 0, 0, 1, True)" ] || { cat "$T/om.txt"; fail "$output"; }
	grep -qF 'note="a\"b\\c\nd"' "$T/text.txt" || fail "label value not escaped"
	# The same samples in both formats.
	[ "$(grep -c '^perfgate' "$T/om.txt")" = "$(grep -c '^perfgate' "$T/text.txt")" ]
	release go
	pg_wait
	expect_status 0
	[ "$(json_view "$T/run.json" "$GETPPID" window parse)" = 1 ]
}

@test "views of a lossy range are flagged incomplete in the exposition" {
	PG_TIMEOUT=60	# 1.2 M records through one page: slow under ASan on a busy machine
	pg -x, --range-backend sample -m 1 --json-file "$T/run.json" \
		--metrics-textfile "$T/run.prom" -e "$WRITE@$R_GATE" -- "$RANGER" -t 2 200000 3 0
	expect_status 0
	grep -q "records were lost" "$T/err" || { show_run; false; }
	promtool_ok "$T/run.prom"
	grep -qx "perfgate_incomplete{event=\"$WRITE\",gate=\"range\",range=\"$R_GATE\"} 1" "$T/run.prom" ||
		{ cat "$T/run.prom"; fail "no incomplete flag"; }
	count=$(json_view "$T/run.json" "$WRITE" range "$R_GATE")
	grep -qx "perfgate_count_total{event=\"$WRITE\",gate=\"range\",range=\"$R_GATE\"} $count" "$T/run.prom" ||
		{ cat "$T/run.prom"; fail "count is not the JSON's $count"; }
}

@test "/metrics is read-only: other paths 404, other methods 405, the Accept header picks the format" {
	mkfifos ready go
	agent_listen -x, -D -1 --control "$CTL_OPT" -e "$GETPPID" -- \
		"$MARKER" getppid 3 notify "$T/ready" wait "$T/go"
	wait_line ready
	code() { curl -s -m 5 -o /dev/null -w '%{http_code} %{header_json}' "$@" | $PY -c '
import json, sys; code, h = sys.stdin.read().split(" ", 1); h = json.loads(h)
print(code, h.get("allow", ["-"])[0])'; }
	[ "$(code "http://127.0.0.1:$PORT/")" = "404 -" ]
	[ "$(code "http://127.0.0.1:$PORT/api/v1/stop")" = "404 -" ]
	[ "$(code -X POST -d stop "$URL")" = "405 GET, HEAD" ]
	[ "$(code -X PUT -d enable "$URL")" = "405 GET, HEAD" ]
	[ "$(code -X DELETE "$URL")" = "405 GET, HEAD" ]
	[ "$(code -X PATCH "$URL")" = "405 GET, HEAD" ]
	[ "$(code -I "$URL")" = "200 -" ]
	# Prometheus' own Accept header gets OpenMetrics, as does any header
	# that names it (on a tie with text/plain too); anything else, 0.0.4.
	scrape "$T/a" 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
	[ "$CTYPE" = "application/openmetrics-text; version=1.0.0; charset=utf-8" ] || fail "$CTYPE"
	scrape "$T/a" 'text/plain, Application/OpenMetrics-Text'
	[[ $CTYPE == application/openmetrics-text* ]] || fail "$CTYPE"
	scrape "$T/b" 'application/openmetrics-text;q=0.2, text/plain;q=0.9'
	[ "$CTYPE" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "$CTYPE"
	scrape "$T/b" 'application/openmetrics-text;q=0, */*'
	[ "$CTYPE" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "$CTYPE"
	scrape "$T/c" '*/*'
	[ "$CTYPE" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "$CTYPE"
	scrape "$T/c" 'application/json'
	[ "$CTYPE" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "$CTYPE"
	# No Accept header at all ("Accept:" makes curl send none).
	CTYPE=$(curl -sf -m 5 -H 'Accept:' -o "$T/c" -w '%{content_type}' "$URL")
	[ "$CTYPE" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "$CTYPE"
	# Nothing above opened the default window or stopped the run.
	release go
	pg_wait
	expect_status 0
	expect_value "$GETPPID" "<not counted>"
}

@test "stalled scrapers block neither control commands nor counting" {
	mkfifos ready go
	agent_listen -x, -D -1 --control "$CTL_OPT" -e "$GETPPID" -- \
		"$MARKER" notify "$T/ready" wait "$T/go" "${W[@]}" "window begin w" getppid 7 "${W[@]}" "window end w" \
		"${W[@]}" "window begin w" getppid 9 "${W[@]}" "window end w"
	wait_line ready
	# 20 connections that send half a request and wait, and 20 that ask
	# for /metrics and never read the reply.
	$PY - "$PORT" "$T/stall.ready" <<'EOF' &
import socket, sys, time
port = int(sys.argv[1])
conns = []
for i in range(40):
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    c.connect(("127.0.0.1", port))
    c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + (b"\r\n" if i % 2 else b""))
    conns.append(c)
open(sys.argv[2], "w").close()
time.sleep(60)
EOF
	BG_PIDS+=($!)
	poll_until "the stalling client did not connect" test -e "$T/stall.ready"
	release go
	pg_wait
	expect_status 0
	expect_value "$GETPPID@w" 16
	[ "$(grep -c '^ack' "$T/out")" = 4 ] || { show_run; fail "acks missing"; }
}

@test "a bad --metrics-listen address, or a port in use, is a start-up error naming it" {
	pg --metrics-listen 127.0.0.1 -- true
	expect_status 255
	[ "$(cat "$T/err")" = "perfgate: --metrics-listen '127.0.0.1': expected ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464" ] ||
		{ show_run; false; }
	pg --metrics-listen 127.0.0.1:65536 -- true
	expect_status 255
	grep -qx "perfgate: --metrics-listen '127.0.0.1:65536': expected ADDR:PORT, e.g. 127.0.0.1:9464 or \[::1\]:9464" "$T/err"
	pg --metrics-listen 'no-such-host.invalid:9464' -- true
	expect_status 255
	grep -q "^perfgate: --metrics-listen 'no-such-host.invalid:9464': cannot resolve the address: " "$T/err" ||
		{ show_run; false; }
	# A port someone listens on.
	$PY -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open(sys.argv[1], "w").write(str(s.getsockname()[1])); time.sleep(60)' "$T/busy.tmp" &
	BG_PIDS+=($!)
	poll_until "the listener did not write its port" test -s "$T/busy.tmp"
	busy=$(cat "$T/busy.tmp")
	pg -e "$GETPPID" --metrics-listen "127.0.0.1:$busy" -- "$MARKER" getppid 1
	expect_status 255
	[ "$(cat "$T/err")" = "perfgate: --metrics-listen '127.0.0.1:$busy': cannot listen: Address already in use" ] ||
		{ show_run; false; }
	# The workload never ran.
	[ ! -s "$T/out" ]
}

@test "a real Prometheus scrapes the agent: its query API gives the --json-file's counts, and per-call rates" {
	PG_TIMEOUT=60
	mkfifos ready1 go1 ready2 go2
	call=("${W[@]}" "window begin w" getppid 4 "${W[@]}" "window end w")
	agent_listen -x, -D -1 --control "$CTL_OPT" -e "task-clock,$GETPPID" --json-file "$T/run.json" -- \
		"$MARKER" "${call[@]}" notify "$T/ready1" wait "$T/go1" "${call[@]}" "${call[@]}" \
		notify "$T/ready2" wait "$T/go2"
	cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 100ms
  scrape_timeout: 100ms
scrape_configs:
  - job_name: perfgate
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
	service prometheus /-/ready prometheus --config.file="$T/prometheus.yml" \
		--storage.tsdb.path="$T/prometheus-data" --web.listen-address=127.0.0.1:__PORT__
	PROM=http://127.0.0.1:$SVC_PORT
	# q QUERY [TIME]: the single result's value, or "none".
	q() {
		curl -sf -m 5 "$PROM/api/v1/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} |
			$PY -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if len(r) == 1 else "none" if not r else "many")'
	}
	# until_after T: Prometheus holds a sample of the window taken after T.
	until_after() {
		local i
		for ((i = 0; i < 600; i++)); do
			[ "$(q "timestamp(perfgate_window_calls_total{window=\"w\"}) > $1")" != none ] && return 0
			sleep 0.05
		done
		fail "Prometheus took no sample after $1"
	}
	wait_line ready1
	t1=$(date +%s.%N)
	until_after "$t1"
	release go1
	wait_line ready2
	t2=$(date +%s.%N)
	until_after "$t2"
	[ "$(q 'up{job="perfgate"}')" = 1 ]
	count=$(q "perfgate_count_total{job=\"perfgate\",event=\"$GETPPID\",window=\"w\"}")
	calls=$(q 'perfgate_window_calls_total{window="w"}')
	seconds=$(q 'perfgate_seconds_total{event="task-clock",window="w"}')
	per_call=$(q "sum by (instance, window) (perfgate_count_total{event=\"$GETPPID\",gate=\"window\"})
		/ sum by (instance, window) (perfgate_window_calls_total)")
	# The README's rate query, over a range that starts after the first
	# call: (12 - 4) getppid over (3 - 1) calls.
	now=$(date +%s.%N)
	ms=$($PY -c "print(int(($now - $t1) * 1000) - 1)")
	rate_per_call=$(q "sum by (instance, window) (rate(perfgate_count_total{event=\"$GETPPID\",gate=\"window\"}[${ms}ms]))
		/ sum by (instance, window) (rate(perfgate_window_calls_total[${ms}ms]))" "$now")
	ipc_like=$(q "sum by (instance, window) (rate(perfgate_count_total{event=\"$GETPPID\",gate=\"window\"}[${ms}ms]))
		/ sum by (instance, window) (rate(perfgate_seconds_total{event=\"task-clock\",gate=\"window\"}[${ms}ms]))" "$now")
	release go2
	pg_wait
	expect_status 0
	[ "$count" = "$(json_view "$T/run.json" "$GETPPID" window w)" ] || fail "count $count"
	[ "$count" = 12 ] && [ "$calls" = 3 ] && [ "$per_call" = 4 ] && [ "$rate_per_call" = 4 ] ||
		fail "count=$count calls=$calls per_call=$per_call rate_per_call=$rate_per_call"
	ns=$(json_view "$T/run.json" task-clock window w)
	$PY -c "import sys; assert abs($seconds - $ns / 1e9) < 1e-9, ($seconds, $ns)"
	$PY -c "assert $ipc_like > 0, $ipc_like"
}

@test "--metrics-push leaves the final counts in a real Pushgateway, grouped by job, instance and labels" {
	service pushgateway /-/ready prometheus-pushgateway --web.listen-address=127.0.0.1:__PORT__ \
		--persistence.file="$T/pushgateway.data"
	GW=http://127.0.0.1:$SVC_PORT
	pg -x, --control "$CTL_OPT" -e "task-clock,$GETPPID" --json-file "$T/run.json" \
		--metrics-push "$GW" --metrics-job nightly --metrics-label runner=r7 --metrics-label "note=$ODD_VALUE" -- \
		"$MARKER" "${W[@]}" "window begin w" getppid 6 "${W[@]}" "window end w" getppid 2
	expect_status 0
	curl -sf -m 5 "$GW/metrics" >"$T/gw.txt"
	labels="instance=\"$(hostname)\",job=\"nightly\",note=\"a\\\"b\\\\c\\nd\",runner=\"r7\""
	grep -qxF "perfgate_count_total{event=\"$GETPPID\",gate=\"window\",$labels,window=\"w\"} 6" "$T/gw.txt" ||
		{ grep perfgate "$T/gw.txt"; fail "window count not in the Pushgateway"; }
	grep -qxF "perfgate_count_total{event=\"$GETPPID\",gate=\"default\",$labels} 8" "$T/gw.txt"
	grep -qxF "perfgate_window_calls_total{$labels,window=\"w\"} 1" "$T/gw.txt"
	# The Pushgateway's own API agrees, and groups by the pushed key.
	curl -sf -m 5 "$GW/api/v1/metrics" | $PY -c 'import json, sys
g = json.load(sys.stdin)["data"]
assert len(g) == 1 and g[0]["labels"] == {"job": "nightly", "instance": sys.argv[1], "runner": "r7",
    "note": "a\"b\\c\nd"}, g[0]["labels"]
m = g[0]["perfgate_count_total"]["metrics"]
assert [x["value"] for x in m if x["labels"].get("window") == "w"] == ["6"], m' "$(hostname)"
}

@test "a push to a dead port fails clearly, with status 1; the report and the JSON are still written" {
	port=$(free_port)
	pg -x, -e "$GETPPID" --json-file "$T/run.json" --metrics-push "http://127.0.0.1:$port/" -- \
		"$MARKER" getppid 3
	expect_status 1
	grep -qxF "perfgate: --metrics-push to http://127.0.0.1:$port/metrics/job/perfgate/instance/$(hostname) failed: cannot connect" "$T/err" ||
		{ show_run; false; }
	expect_value "$GETPPID" 3
	[ "$(json_view "$T/run.json" "$GETPPID" default "")" = 3 ]
	# A failing workload keeps its own status.
	pg -x, -e "$GETPPID" --metrics-push "http://127.0.0.1:$port" -- "$MARKER" exit 3
	expect_status 3
	# A URL that is not http:// is refused before the run.
	pg --metrics-push "https://127.0.0.1:$port" -- "$MARKER" getppid 1
	expect_status 255
	[ "$(cat "$T/err")" = "perfgate: --metrics-push 'https://127.0.0.1:$port': expected http://HOST[:PORT][/PATH] (https is not supported)" ]
}

@test "textfile rewrites are atomic: a reader never sees part of one" {
	# -I 10 for about a second: about 100 rewrites while a reader polls.
	$PY - "$T/node/perfgate.prom" "$T/reader.out" "$T/reader.stop" <<'EOF' &
import os, re, sys, time
path, out, stop = sys.argv[1:]
line = re.compile(r'^[a-z_]+(\{.*\})? [0-9.]+$')
reads = bad = 0
seen = set()
deadline = time.time() + 60
while not os.path.exists(stop) and time.time() < deadline:
    try:
        text = open(path).read()
    except FileNotFoundError:
        continue
    reads += 1
    seen.add(text)
    lines = text.split("\n")
    ok = (text.endswith('perfgate_info{version="0.1.0"} 1\n') and
          sum(l.startswith("# TYPE ") for l in lines) == 9 and
          all(l.startswith("# ") or line.match(l) for l in lines[:-1]))
    if not ok:
        bad += 1
        sys.stderr.write("partial read:\n" + text)
open(out, "w").write("%d %d %d\n" % (reads, bad, len(seen)))
EOF
	reader=$!
	BG_PIDS+=("$reader")
	mkdir "$T/node"
	steps=()
	for i in $(seq 1 50); do steps+=(getppid 1 sleep 20); done
	pg -x, -I 10 -e "task-clock,$GETPPID" --json-file "$T/run.json" \
		--metrics-textfile "$T/node/perfgate.prom" -- "$MARKER" "${steps[@]}"
	: >"$T/reader.stop"
	wait "$reader"
	expect_status 0
	read -r reads bad distinct <"$T/reader.out"
	echo "# $reads reads, $bad partial, $distinct distinct files"
	[ "$bad" = 0 ] && [ "$reads" -ge 20 ] && [ "$distinct" -ge 10 ] ||
		fail "reads=$reads partial=$bad distinct=$distinct"
	# The last one holds the final counts; no temporary file is left.
	promtool_ok "$T/node/perfgate.prom"
	grep -qxF "perfgate_count_total{event=\"$GETPPID\",gate=\"default\"} 50" "$T/node/perfgate.prom"
	[ "$(json_view "$T/run.json" "$GETPPID" default "")" = 50 ]
	[ "$(ls -A "$T/node")" = perfgate.prom ]
	[ "$(stat -c %a "$T/node/perfgate.prom")" = 644 ]
}

@test "--metrics-textfile wants a .prom name and a writable directory; other option errors" {
	pg --metrics-textfile "$T/metrics.txt" -- true
	expect_status 129
	grep -qx "perfgate: invalid value for --metrics-textfile: the file name must end in .prom (node_exporter reads only those)" "$T/err"
	pg --metrics-textfile "$T/no/such/dir/x.prom" -- "$MARKER" getppid 1
	expect_status 255
	[ "$(cat "$T/err")" = "perfgate: cannot write --metrics-textfile '$T/no/such/dir/x.prom': No such file or directory" ]
	pg --metrics-label 'bad-name=1' -- true
	expect_status 129
	grep -qx "perfgate: invalid value for --metrics-label: a label name is \[a-zA-Z_\]\[a-zA-Z0-9_\]\*" "$T/err"
	pg --metrics-label window=x -- true
	expect_status 129
	grep -qx "perfgate: invalid value for --metrics-label: perfgate's own metrics use this label name" "$T/err"
	pg --metrics-job ci -- true
	expect_status 129
	[ "$(cat "$T/err")" = "perfgate: --metrics-job needs --metrics-push" ]
}
