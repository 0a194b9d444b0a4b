#!/usr/bin/env bats
# ranges.bats: tracepoint-gated counting, exact on real tracepoints.
#
# The ranger helper makes R ranges of "getppid(); K writes; getpgid()" per
# worker and M writes outside; the marker makes scripted syscalls.  So
# write@getppid..getpgid is exactly R*K per worker, whatever the threads,
# forks and CPU migrations in between.
#
# Every test runs on the backend PG_RANGE_BACKEND names (default bpf, the
# default one; `make check` runs the file again with sample, see
# ranges-sample.sh), given explicitly so that a backend that fails to open
# fails the test instead of falling back.

load helpers
: "${PG_RANGE_BACKEND:=bpf}"

R_GATE=syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid

setup() {
	common_setup
	[ -x "$RANGER" ] || fail "RANGER=$RANGER is not an executable"
	PG_ARGS="--range-backend $PG_RANGE_BACKEND"
	a_ranger_setup
}

# System-wide (-a), other processes make the marker calls too (bash calls
# getppid at start-up), so the -a tests keep to their ranger's own
# triggers with a comm filter.  "ranger" would match any other ranger on
# the machine (another checkout's tests, the sample-backend run of this
# file); so each test runs it as A_RANGER, a link named A_NAME, unique to
# this bats process and test: a task's comm is the name it was executed
# by, and threads and children inherit it.  At most 15 bytes (comm's).
a_ranger_setup() {
	A_NAME=rg$$.$BATS_TEST_NUMBER
	A_RANGER=$T/$A_NAME
	ln -s "$RANGER" "$A_RANGER"
	A_GATE="syscalls:sys_enter_getppid(comm == \"$A_NAME\")..syscalls:sys_enter_getpgid(comm == \"$A_NAME\")"
}

# The sample backend loses records when its agent cannot keep up (a busy
# machine, an ASan build), and then flags the views incomplete: such a
# count may be short, never over (its contract, perfgate-ranges(7)).  So a
# count other than the expected one passes only when it is short, the row
# itself says incomplete, and the agent reported N > 0 lost records: a
# short count, 0 included, with no loss reported is a failure.  The BPF
# backend has nothing to lose, so its counts are checked exactly.
if [ "$PG_RANGE_BACKEND" = sample ]; then
	eval "exact_$(declare -f expect_value)"
	expect_value() {	# EVENT EXPECTED [FILE]
		local file=${3:-$REPORT} got lost
		got=$(value "$1" "$file") && [ "$got" != "$2" ] &&
		[ "$got" -lt "$2" ] 2>/dev/null || { exact_expect_value "$@"; return; }
		lost=$(lost_records)
		if [ "$lost" -gt 0 ] && row_incomplete "$1" "$file"; then
			echo "# sample backend: $lost records lost, $1 = $got of $2, flagged incomplete"
			return 0
		fi
		show_run "${3:-}"
		fail "$1: expected $2, got $got ($lost records lost; row $(row_incomplete "$1" "$file" || echo "not ")flagged incomplete)"
	}
fi

# lost_records: the N of the agent's "N ring-buffer records were lost"
# warning on $T/err, 0 when there is none.
lost_records() {
	local n
	n=$(sed -n 's/^perfgate: warning: \([0-9][0-9]*\) ring-buffer records were lost: .*/\1/p' "$T/err" | tail -n 1)
	echo "${n:-0}"
}

# row_incomplete EVENT FILE: the last -x row of EVENT ends in "incomplete".
row_incomplete() {
	awk -F"$SEP" -v ev="$1" '{
		for (i = 3; i <= NF; i++)
			if ($i == ev) { last = $NF; break }
	} END { exit last != "incomplete" }' "$2"
}

# agent_child: the pid of the agent's child (its workload); fails if none.
agent_child() {
	local c
	c=$(cat /proc/"$(agent_pid)"/task/*/children 2>/dev/null | awk '{ print $1; exit }')
	[ -n "$c" ] && echo "$c"
}

# json_views FILE: "event|gate|label|count|incomplete" per view of --json-file.
json_views() {
	python3 - "$1" <<'PY'
import json, sys
for v in json.load(open(sys.argv[1]))["views"]:
    print("|".join(str(x) for x in (v["event"], v["gate"], v.get("range") or v.get("window") or "",
                                    v["count"], v.get("incomplete", False))))
PY
}

@test "R ranges of K writes count exactly R*K; the total is R*K + M" {
	pg -x, -e "$WRITE" -e "$WRITE@$R_GATE" -- "$RANGER" 1000 3 7
	expect_status 0
	expect_value "$WRITE@$R_GATE" 3000
	expect_value "$WRITE" 3007
}

@test "E@R + E@!R == E exactly, for writes and for task-clock (in ns)" {
	# The sample backend's agent, slowed down by ASan, was seen twice in
	# CI to miss part of task-clock (37 ms of 281) with no record lost:
	# the defect the BPF backend replaces (perfgate-ranges(7), BUGS).  The
	# BPF pass checks this exactly in every build.
	[ "$PG_RANGE_BACKEND" = sample ] && [ -n "${ASAN_OPTIONS:-}" ] &&
		skip "sample backend under ASan: see perfgate-ranges(7), BUGS"
	pg -x, --json-file "$T/run.json" -e "$WRITE,task-clock" \
		-e "($WRITE,task-clock)@$R_GATE" -e "($WRITE,task-clock)@!($R_GATE)" -- \
		"$RANGER" -t 2 20000 2 5
	expect_status 0
	# The BPF backend has nothing to lose: exact, always.  The sample
	# backend loses records when its agent cannot keep up (a loaded
	# machine, an ASan build) and then flags the views: exact, or flagged
	# and never over (its documented contract, perfgate-ranges(7)).
	python3 - "$T/run.json" "$WRITE" "$PG_RANGE_BACKEND" <<'PY'
import json, sys
views = json.load(open(sys.argv[1]))["views"]
def view(event, label):
    return [v for v in views if v["event"] == event and (v.get("range") or "") == label][0]
gate = "syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid"
doc = json.load(open(sys.argv[1]))
lost = sum(r["lost_records"] for r in doc["ranges"])
flagged = [v for v in views if v.get("incomplete")]
assert not (lost and sys.argv[3] == "bpf"), "the BPF backend lost records"
# A view is flagged exactly when its set lost records (one set here).
assert bool(flagged) == bool(lost), ("flagged", len(flagged), "lost", lost)
assert all(v.get("incomplete") for v in views if v["gate"] == "range") or not lost
# The ungated total needs no record: exact whatever was lost.
assert view(sys.argv[2], "")["count"] == 2 * (20000 * 2 + 5), view(sys.argv[2], "")
for ev in (sys.argv[2], "task-clock"):
    total, inside, outside = (view(ev, l)["count"] for l in ("", gate, "!(" + gate + ")"))
    if lost:
        assert inside + outside <= total and inside <= 2 * 20000 * 2, (ev, inside, outside, total)
        continue
    if ev == "task-clock" and sys.argv[3] == "sample":
        # The sample backend's slowed agent may miss part of a clock
        # range's time with no record lost (perfgate-ranges(7), BUGS):
        # short, never over.  The BPF backend's clock is exact.
        assert inside + outside <= total, (ev, inside, outside, total)
    else:
        assert inside + outside == total, (ev, inside, outside, total)
    assert inside > 0 and outside > 0, (ev, inside, outside)
if lost:
    print(f"# sample backend: {lost} records lost, views flagged incomplete", file=sys.stderr)
else:
    assert view(sys.argv[2], gate)["count"] == 2 * 20000 * 2
PY
}

@test "4 threads and a forked child: exact per-worker sums" {
	pg -x, -e "$WRITE" -e "$WRITE@$R_GATE" -- "$RANGER" -t 4 -f 5000 3 5
	expect_status 0
	expect_value "$WRITE@$R_GATE" $((5 * 5000 * 3))
	expect_value "$WRITE" $((5 * (5000 * 3 + 5)))
}

@test "4 threads and a forked child migrating between CPUs inside every range" {
	[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
	pg -x, -e "$WRITE" -e "$WRITE@$R_GATE" -- "$RANGER" -t 4 -f -m 2000 3 5
	expect_status 0
	expect_value "$WRITE@$R_GATE" $((5 * 2000 * 3))
	expect_value "$WRITE" $((5 * (2000 * 3 + 5)))
}

@test "nested starters keep the range open to the matching stopper" {
	pg -x, -e "$WRITE@$R_GATE" -- \
		"$MARKER" write 1 getppid 2 write 3 getpgid 1 write 4 getpgid 1 write 5 getpgid 1 write 6
	expect_status 0
	expect_value "$WRITE@$R_GATE" 7
}

@test "open ends: S.. counts to the end, ..T from the start" {
	pg -x, -e "$WRITE@$GETPPID.." -e "$WRITE@..$GETPGID" -- \
		"$MARKER" write 1 getppid 1 write 2 getpgid 1 write 4 getppid 1 write 8
	expect_status 0
	expect_value "$WRITE@$GETPPID.." 14
	expect_value "$WRITE@..$GETPGID" 3
}

@test "|| and && of two ranges" {
	A=syscalls:sys_enter_getppid..syscalls:sys_enter_getpgid
	B=syscalls:sys_enter_getpid..syscalls:sys_enter_gettid
	# marker has no getpid/gettid steps: use ranges over getppid/getpgid and
	# over write2/.. instead, built from the marker's own syscalls.
	OR="$WRITE@($GETPPID..$GETPGID) || ($GETPGID..$GETPPID)"
	AND="$WRITE@($GETPPID..) && (..$GETPGID)"
	pg -x, -e "$OR" -e "$AND" -- \
		"$MARKER" write 1 getppid 1 write 2 getpgid 1 write 4 getppid 1 write 8
	expect_status 0
	# OR: inside A from getppid to getpgid (2), inside B from getpgid to the
	# next getppid (4), then A again (8): 14.
	expect_value "$WRITE@($GETPPID..$GETPGID) || ($GETPGID..$GETPPID)" 14
	# AND: after the first getppid and before the first getpgid: 2.
	expect_value "$WRITE@($GETPPID..) && (..$GETPGID)" 2
}

@test "a trigger that is also counted: its own hits are inside its range" {
	pg -x, -e "($GETPPID,$GETPGID)@$R_GATE" -- "$MARKER" getppid 1 getpgid 1 getppid 1 getpgid 1
	expect_status 0
	expect_value "$GETPPID@$R_GATE" 2
	expect_value "$GETPGID@$R_GATE" 2
}

@test "a counted trigger's own hit is in its range, never also in the complement" {
	IN="$WRITE@$WRITE..syscalls:sys_exit_write"
	OUT="$WRITE@!($WRITE..syscalls:sys_exit_write)"
	pg -x, -e "$WRITE" -e "$IN" -e "$OUT" -- "$MARKER" write 3 getppid 2 write 1
	expect_status 0
	expect_value "$WRITE" 4
	expect_value "$IN" 4
	expect_value "$OUT" 0
}

@test "a filter narrows a trigger (write(count == 2) opens, write(count == 1) closes)" {
	spec="$GETPGID@$WRITE(count == 2)..$WRITE(count == 1)"
	pg -x, -e "$spec" -- "$MARKER" getpgid 1 write2 1 getpgid 3 write 1 getpgid 5
	expect_status 0
	expect_value "$spec" 3
}

@test "a range loaded at run time covers threads that already run" {
	chan ch
	mkfifos start
	pg_bg -x, --control "fifo:$T/ch.ctl,$T/ch.ack" -e "$WRITE" -- \
		"$RANGER" -t 3 -w "$T/start" 1000 2 4
	expect_reply ping ack
	# Load the range only once the ranger's 3 threads exist (blocked until
	# we write to start): a test that went on without them would not test
	# threads that already run.
	poll_until "the agent started no workload" agent_child
	child=$(agent_child)
	poll_until "ranger $child: fewer than 4 tasks (main and 3 threads)" \
		eval '[ "$(ls /proc/'"$child"'/task 2>/dev/null | wc -l)" -ge 4 ]'
	expect_reply "range load rl = $WRITE@$R_GATE" ack
	expect_reply "range load rl = $WRITE@$R_GATE" "err range 'rl' is already loaded"
	release start
	pg_wait
	expect_status 0
	expect_value "$WRITE@rl" $((3 * 1000 * 2))
}

@test "range unload keeps the totals; a bad run-time spec gets err with the place" {
	chan ch
	mkfifos go
	pg_bg -x, --control "fifo:$T/ch.ctl,$T/ch.ack" -e "$WRITE" -- "$MARKER" wait "$T/go" write 3
	expect_reply "range load x = $WRITE@$GETPPID.." ack
	expect_reply "range unload x" ack
	expect_reply "range unload x" "err range 'x' is not loaded"
	cmd "range load y = $WRITE@$GETPPID.$GETPGID"
	[[ $REPLY_LINE == "err "*"at byte"* ]] || fail "reply: $REPLY_LINE"
	cmd "range load z = $WRITE@syscalls:no_such_event.."
	[[ $REPLY_LINE == "err unknown tracepoint 'no_such_event' in subsystem 'syscalls'"* ]] ||
		fail "reply: $REPLY_LINE"
	release go
	pg_wait
	expect_status 0
	expect_value "$WRITE@x" 0
}

@test "bad specs at start-up: the reason and a caret under the byte" {
	pg -e "task-clock@$GETPPID.$GETPGID" -- true
	[ "$status" != 0 ]
	grep -q "expected '..'" "$T/err" || { show_run; false; }
	# The caret sits under the offending byte of the echoed spec.
	python3 - "$T/err" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
spec = [i for i, l in enumerate(lines) if "task-clock@" in l][0]
caret = lines[spec + 1]
col = caret.index("^")
assert lines[spec][col] == ".", (lines[spec], caret)
PY
	pg -e "task-clock@irq:irq_handler_entry(dsig == 3).." -- true
	[ "$status" != 0 ]
	grep -q "field 'dsig' not in irq:irq_handler_entry" "$T/err" || { show_run; false; }
	python3 - "$T/err" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
spec = [i for i, l in enumerate(lines) if "dsig" in l and "@" in l][0]
col = lines[spec + 1].index("^")
assert lines[spec][col:col + 4] == "dsig", lines[spec:spec + 2]
PY
}

@test "--filter is checked against the tracepoint's format, with a caret" {
	pg -e "$WRITE" --filter 'count == "x"' -- true
	[ "$status" != 0 ]
	grep -q "field 'count' is a number" "$T/err" || { show_run; false; }
	pg -x, -e "$WRITE" --filter 'count == 2' -- "$MARKER" write 3 write2 4
	expect_status 0
	expect_value "$WRITE" 4
}

@test "a tiny -m loses records: views say incomplete everywhere, spoilt stretches are dropped" {
	[ "$PG_RANGE_BACKEND" = sample ] || skip "the BPF backend has no ring buffer to lose"
	# 2 x 100000 ranges overflow a 1-page buffer whatever the load; on a
	# busy machine they take long, hence the longer timeout.
	PG_TIMEOUT=60 pg -x, -m 1 --json-file "$T/run.json" -e "$WRITE@$R_GATE" -- "$RANGER" -t 2 100000 3 0
	expect_status 0
	grep -q "records were lost" "$T/err" || { show_run; false; }
	grep -q ",incomplete$" "$T/err" || { show_run; false; }
	json_views "$T/run.json" | grep -q "|True$"
	# Stretches a loss falls in are dropped, never over-counted: the view
	# holds less than the 2 x 100000 x 3 writes made in ranges, but some.
	inside=$(value "$WRITE@$R_GATE")
	[ "$inside" -lt $((2 * 100000 * 3)) ] && [ "$inside" -gt 0 ] ||
		{ show_run; fail "inside: $inside"; }
}

# System-wide: A_GATE keeps to A_RANGER's own triggers (a_ranger_setup).

@test "-a: ranges count every process's own ranges, exactly, a competitor's too" {
	mkfifos go done
	# The competitor exists before the agent, waits, and runs its ranges
	# while the workload runs its own, both pinned to one CPU so that they
	# preempt each other inside their ranges.  The workload ends after the
	# competitor is done (bash's read writes nothing a range could count).
	taskset -c 0 "$A_RANGER" -w "$T/go" -d "$T/done" 3000 2 7 &
	competitor=$!
	BG_PIDS+=("$competitor")
	pg -a -x, -e "$WRITE@$A_GATE" -- taskset -c 0 bash -c \
		'"$1" -n "$2" -t 2 2000 3 5 && read -r line <"$3"' _ "$A_RANGER" "$T/go" "$T/done"
	wait "$competitor"
	expect_status 0
	# Inside: the workload's 2 x 2000 x 3 and the competitor's 3000 x 2.
	expect_value "$WRITE@$A_GATE" $((2 * 2000 * 3 + 3000 * 2))
}

@test "-a: a competitor preempting a range without ranges of its own is not counted" {
	mkfifos go
	taskset -c 0 "$MARKER" wait "$T/go" write 50000 &
	competitor=$!
	BG_PIDS+=("$competitor")
	pg -a -x, -e "$WRITE@$A_GATE" -- taskset -c 0 "$A_RANGER" -n "$T/go" 3000 3 0
	wait "$competitor"
	expect_status 0
	expect_value "$WRITE@$A_GATE" 9000
}

@test "-a: E@R + E@!R == E exactly, for writes and cpu-clock, whatever else runs" {
	pg -a -x, --json-file "$T/run.json" -e "$WRITE,cpu-clock" \
		-e "($WRITE,cpu-clock)@$A_GATE" -e "($WRITE,cpu-clock)@!($A_GATE)" -- \
		"$A_RANGER" -t 2 2000 3 5
	expect_status 0
	python3 - "$T/run.json" "$WRITE" <<'PY'
import json, sys
views = json.load(open(sys.argv[1]))["views"]
for ev in (sys.argv[2], "cpu-clock"):
    counts = [v["count"] for v in views if v["event"] == ev]
    total, inside, outside = counts
    assert inside + outside == total, (ev, inside, outside, total)
    assert inside > 0 and outside > 0, (ev, inside, outside)
assert [v["count"] for v in views if v["event"] == sys.argv[2]][1] == 2 * 2000 * 3
PY
}

@test "-a -I 10: every interval line has E == E@R + E@!R, while other tasks write" {
	# The sample backend's range views lag the records it has drained;
	# the BPF backend reads the plain view and its range views from one
	# refresh of one set of sums, whole on every CPU.  A copy of sums
	# another CPU was adding to (views, then the total) was once off by
	# one; dd with bs=1 writes all the time to catch that.
	[ "$PG_RANGE_BACKEND" = sample ] && skip "sample backend: views lag the drained records"
	dd if=/dev/zero of=/dev/null bs=1 count=20000000 2>/dev/null &
	local writer=$!
	pg -a -x, -I 10 -e "$WRITE" -e "$WRITE@$A_GATE" -e "$WRITE@!($A_GATE)" -- \
		"$A_RANGER" -t 2 20000 3 5
	kill "$writer" 2>/dev/null || true
	wait "$writer" 2>/dev/null || true
	expect_status 0
	python3 - "$T/err" "$WRITE" <<'PY'
import collections, sys
lines = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split(",")
    if len(f) > 3 and f[3].startswith(sys.argv[2]):
        lines[f[0]].append(int(f[1]))
assert lines, "no interval lines"
for t, (total, inside, outside) in lines.items():
    assert inside + outside == total, (t, total, inside, outside)
PY
}

@test "--range-scope cpu keeps one state per CPU; 'bogus' is refused" {
	PG_ARGS=	# per-CPU state is counted from samples, by default
	pg -x, --range-scope cpu -e "$WRITE@$R_GATE" -- "$RANGER" 100 3 5
	expect_status 0
	expect_value "$WRITE@$R_GATE" 300
	pg --range-scope bogus -e "$WRITE@$R_GATE" -- true
	expect_status 129
	grep -q "expected 'thread' or 'cpu'" "$T/err" || { show_run; false; }
}

@test "filters mean what the kernel's filters mean: numbers, &, !, ||, common_pid and common_cpu" {
	# Expected values are the kernel filter's own (the sample backend sets
	# the filter with PERF_EVENT_IOC_SET_FILTER); the BPF backend evaluates
	# the same filters itself.  The marker writes to its own fd, not 1.
	local f want
	while IFS=';' read -r f want; do
		spec="$WRITE@$GETPPID..$WRITE($f)"
		pg -x, -e "$spec" -- "$MARKER" getppid 1 write 2 write2 1 write 3
		expect_status 0
		expect_value "$spec" "$want"
	done <<'LIST'
fd == 1;6
count == 1;1
common_pid != 0;1
common_cpu < 100000;1
count > 5;6
count >= 2;3
count & 2;3
!(count == 1);3
count == 2 || fd == 99;3
LIST
}

@test "without CAP_BPF: --range-backend bpf says why and exits 255; by default, samples and a warning" {
	[ "$PG_RANGE_BACKEND" = bpf ] || skip "about the BPF backend"
	needs setpriv util-linux
	no_bpf=(setpriv --bounding-set -bpf,-sys_admin --inh-caps=-bpf,-sys_admin --)
	status=0
	"${no_bpf[@]}" "$PERFGATE" --range-backend bpf -x, -e "$WRITE@$R_GATE" -- "$RANGER" 10 3 5 \
		>"$T/out" 2>"$T/err" || status=$?
	expect_status 255
	grep -q "ranges cannot be counted in BPF: .*Operation not permitted (ranges in BPF need root, or CAP_BPF and CAP_PERFMON" "$T/err" ||
		{ show_run; false; }
	status=0
	"${no_bpf[@]}" "$PERFGATE" -x, -e "$WRITE@$R_GATE" -- "$RANGER" 10 3 5 \
		>"$T/out" 2>"$T/err" || status=$?
	expect_status 0
	grep -q "warning: ranges are counted from samples, not in BPF: .*CAP_BPF" "$T/err" || { show_run; false; }
	expect_value "$WRITE@$R_GATE" 30
}

@test "--range-backend: a bad value is refused with what is expected" {
	pg --range-backend ebpf -e "$WRITE@$R_GATE" -- true
	expect_status 129
	grep -q "expected 'bpf' or 'sample'" "$T/err" || { show_run; false; }
}
