# helpers.bash: shared set-up and helpers for perfgate's end-to-end tests.
#
# The tests run the agent on real kernel events (as root) with the marker
# workload (tests/helpers/marker.c), which makes known numbers of syscalls
# and can drive the agent's control channel itself, so window counts are
# exact without sleeps.  Synchronisation is by acks or FIFOs, and where
# there is neither (a file appearing, a line in a log) by poll_until; every
# blocking step has a timeout so a broken agent fails a test instead of
# hanging the suite.
#
# Environment (set by `make check`; defaults for running `bats` by hand):
#   PERFGATE  the agent binary      MARKER  the marker helper
#   RANGER    the ranger helper     SRCDIR  the source root
#   PG_TIMEOUT  seconds before giving up (10)
#   PG_ARGS   options put before every agent command line (a file's setup
#             sets them, e.g. ranges.bats its --range-backend)
# By hand, the binaries default to the build tree of this checkout
# ($PERFGATE_BUILD_DIR, or build/ as ./bootstrap makes it): never to
# another checkout's, which would test other code.

: "${SRCDIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${PG_BUILD_DIR:=${PERFGATE_BUILD_DIR:-$SRCDIR/build}}"
: "${PERFGATE:=$PG_BUILD_DIR/agent/perfgate}"
: "${MARKER:=$PG_BUILD_DIR/tests/helpers/marker}"
: "${RANGER:=$PG_BUILD_DIR/tests/helpers/ranger}"
: "${PG_TIMEOUT:=10}"

# The marker events: one per syscall the marker makes on request.
GETPPID=syscalls:sys_enter_getppid
GETPGID=syscalls:sys_enter_getpgid
WRITE=syscalls:sys_enter_write

# ---- set-up and tear-down ------------------------------------------------

# common_setup: check the binaries, give each test a private directory $T.
common_setup() {
	[ -x "$PERFGATE" ] || fail "PERFGATE=$PERFGATE is not an executable"
	[ -x "$MARKER" ] || fail "MARKER=$MARKER is not an executable (build tests/helpers/marker.c)"
	T=$BATS_TEST_TMPDIR
	AGENT_PID=
	BG_PIDS=()
	REPORT=$T/err
	SEP=,
}

# common_teardown: end whatever a failed test left running: the agent, the
# marker processes we started, and markers that wrote $T/*.pid.
common_teardown() {
	local pid f
	if [ -n "${AGENT_PID:-}" ]; then
		# The agent itself, then its timeout wrapper.
		pid=$(agent_pid) && kill -KILL "$pid" 2>/dev/null || true
		kill -KILL "$AGENT_PID" 2>/dev/null || true
		wait "$AGENT_PID" 2>/dev/null || true
	fi
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	for f in "$T"/*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		# Only a process that is still one of our markers.
		if grep -qa marker "/proc/$pid/cmdline" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	cgroup_unmount
}

setup() { common_setup; }
teardown() { common_teardown; }

# cgroup_root: set CG_ROOT to the cgroup hierarchy where perf and perfgate
# find -G's cgroups: the v1 one with the perf_event controller, else the
# cgroup2 mount.  A machine may show none: a chroot (../shared/fresh-root
# binds /sys without /sys/fs/cgroup's mounts) lists no cgroup mount in
# /proc/mounts.  Then cgroup2 is mounted under $T, which both tools find
# there, and cgroup_unmount (after the test's cgroups are gone) undoes it.
cgroup_root() {
	CG_ROOT=$(awk '$3 == "cgroup" && $4 ~ /(^|,)perf_event(,|$)/ { print $2; exit }' /proc/mounts)
	[ -n "$CG_ROOT" ] || CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -z "$CG_ROOT" ] || return 0
	CG_ROOT=$T/cgroup2
	mkdir -p "$CG_ROOT" && mount -t cgroup2 none "$CG_ROOT" ||
		fail "no cgroup hierarchy is mounted, and cgroup2 cannot be mounted on $CG_ROOT"
	CG_MOUNTED=$CG_ROOT
}

cgroup_unmount() {
	[ -z "${CG_MOUNTED:-}" ] || umount "$CG_MOUNTED" || umount -l "$CG_MOUNTED" || true
	CG_MOUNTED=
}

fail() {
	echo "$*" >&2
	return 1
}

# needs COMMAND PACKAGE: a tool a test needs is a failure when missing, not
# a skip: ./bootstrap installs every package the suite uses, so a machine
# without it is set up wrong, and a skipped test passes CI by accident.
needs() {
	command -v "$1" >/dev/null ||
		fail "needs $1: install the $2 package (./bootstrap installs it)"
}

# perf_setup: what a test that runs perf stat itself needs: perf, and
# tracefs mounted.
perf_setup() {
	needs perf linux-perf
	ensure_tracefs
}

# ensure_tracefs: mount tracefs if it is not (for tests that use it
# themselves, e.g. to run `perf stat` on tracepoints; the agent mounts it
# on its own).
ensure_tracefs() {
	[ -d /sys/kernel/tracing/events ] && return 0
	mount -t tracefs nodev /sys/kernel/tracing
}

# ---- running the agent ---------------------------------------------------

# pg ARGS...: run the agent in the foreground.  The workload's stdout goes to
# $T/out, the agent's stderr (the report, by default) to $T/err; the exit
# status is left in $status.  A run longer than PG_TIMEOUT is killed (124).
pg() {
	status=0
	# shellcheck disable=SC2086  # PG_ARGS is a list of words
	timeout --foreground -k 2 "$PG_TIMEOUT" "$PERFGATE" ${PG_ARGS:-} "$@" \
		>"$T/out" 2>"$T/err" 3>&- </dev/null || status=$?
}

# pg_bg ARGS...: start the agent in the background (outputs as pg).
# AGENT_PID is a `timeout --foreground` wrapper around the agent: it passes
# SIGINT and SIGTERM on to the agent alone and returns the agent's status,
# and it kills an agent that runs for longer than PG_TIMEOUT.
pg_bg() {
	# shellcheck disable=SC2086
	timeout --foreground -k 2 "$PG_TIMEOUT" "$PERFGATE" ${PG_ARGS:-} "$@" \
		>"$T/out" 2>"$T/err" 3>&- </dev/null &
	AGENT_PID=$!
}

# pg_wait: wait for the background agent; its exit status goes to $status.
pg_wait() {
	status=0
	wait "$AGENT_PID" || status=$?
	AGENT_PID=
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		echo "# the agent did not exit within ${PG_TIMEOUT}s (status $status)"
	fi
}

# pg_across_delay OPTIONS...: the agent with -D 300 and OPTIONS on a
# workload that makes 5 getppid() calls at once (its first steps, well
# within the delay), then 7 more once the agent has said "Events enabled"
# (the delay is over); the outputs and status as pg_wait leaves them.
pg_across_delay() {
	mkfifos ready go
	pg_bg "$@" -D 300 -e "$GETPPID" -- \
		"$MARKER" getppid 5 notify "$T/ready" wait "$T/go" getppid 7
	wait_line ready
	wait_err "Events enabled"
	release go
	pg_wait
}

# marker_bg STEPS...: start a marker of our own in the background
# (for -p / -t); its pid is MARKER_PID.
marker_bg() {
	"$MARKER" "$@" >"$T/marker.out" 2>&1 3>&- </dev/null &
	MARKER_PID=$!
	BG_PIDS+=("$MARKER_PID")
}

# ---- control channels, driven from the test ------------------------------

# mkfifos NAME...: create FIFOs $T/NAME (one that exists already is kept:
# serve and a test's set-up may both want $T/end).
mkfifos() {
	local f
	for f in "$@"; do
		[ -p "$T/$f" ] || mkfifo "$T/$f"
	done
}

# open_rw VAR PATH: open PATH read-write (never blocks on a FIFO) into fd $VAR.
open_rw() {
	local __fd
	exec {__fd}<>"$2"
	printf -v "$1" '%s' "$__fd"
}

# chan NAME: create FIFOs $T/NAME.ctl and $T/NAME.ack and open both in the
# test (CTL_FD / ACK_FD for the first channel; pass VAR names for others).
# Holding the ack FIFO open before the agent starts also lets `perf stat`,
# which opens it write-only and blocking, start.
chan() {
	local name=${1:-ch} ctlvar=${2:-CTL_FD} ackvar=${3:-ACK_FD}
	mkfifos "$name.ctl" "$name.ack"
	open_rw "$ctlvar" "$T/$name.ctl"
	open_rw "$ackvar" "$T/$name.ack"
}

# control_setup: the channel most tests use, ch: its FIFOs $CTL and $ACK,
# open in the test as CTL_FD / ACK_FD (chan), CTL_OPT, the agent's
# --control argument for it, and W, the marker's step prefix "send the next
# argument on ch" (so that the workload can drive its own windows).
control_setup() {
	chan ch
	CTL=$T/ch.ctl
	ACK=$T/ch.ack
	CTL_OPT="fifo:$CTL,$ACK"
	W=(ctl "$CTL" "$ACK")
}

# serve [OPTIONS...]: start the agent on channel ch (control_setup) and
# OPTIONS, counting a workload that makes 5 getppid() calls, writes its pid
# to $T/m.pid, says so on $T/ready and blocks until released ($T/end),
# then exits 7.
serve() {
	mkfifos ready end
	pg_bg -x, --control "$CTL_OPT" "$@" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 notify "$T/ready" wait "$T/end" exit 7
}

# serve_writers: serve's agent and workload, with the control channel's
# commands on FIFO $T/w.ctl (replies on ch's ack), for writers that come
# and go (write_once, killed_writer).
serve_writers() {
	mkfifos w.ctl ready end
	pg_bg -x, --control "fifo:$T/w.ctl,$ACK" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 notify "$T/ready" wait "$T/end" exit 7
}

# finish: release serve's workload and wait for the agent; it must exit
# with the workload's status 7 and report its 5 calls.
finish() {
	release end
	pg_wait
	expect_status 7
	expect_value "$GETPPID" 5
}

# send [FD] TEXT: write TEXT and '\n' on a control fd (default $CTL_FD).
send() {
	local fd=$CTL_FD
	[ $# -ge 2 ] && { fd=$1; shift; }
	printf '%s\n' "$1" >&"$fd"
}

# reply [FD]: read one reply line (bash's read drops the NUL framing byte)
# into $REPLY_LINE; fails after PG_TIMEOUT seconds without one.
reply() {
	local fd=${1:-$ACK_FD}
	REPLY_LINE=
	if ! read -r -t "$PG_TIMEOUT" -u "$fd" REPLY_LINE; then
		fail "no reply on fd $fd within ${PG_TIMEOUT}s (agent alive: $(agent_alive))"
	fi
}

# expect_next_reply EXPECTED [WHAT]: the next reply on the default channel
# (for a command written by hand, or by another writer) is exactly
# EXPECTED; WHAT names it in the failure.
expect_next_reply() {
	reply
	[ "$REPLY_LINE" = "$1" ] || fail "${2:+$2: }expected '$1', got '$REPLY_LINE'"
}

# cmd [CTLFD ACKFD] TEXT: send a command, read its reply into $REPLY_LINE.
cmd() {
	if [ $# -ge 3 ]; then
		send "$1" "$3"
		reply "$2"
	else
		send "$CTL_FD" "$1"
		reply "$ACK_FD"
	fi
}

# expect_reply TEXT EXPECTED: send TEXT on the default channel, and check
# that the reply is exactly EXPECTED.
expect_reply() {
	expect_reply_on "$CTL_FD" "$ACK_FD" "$@"
}

# expect_reply_on CTLFD ACKFD TEXT EXPECTED: the same on another channel.
expect_reply_on() {
	cmd "$1" "$2" "$3"
	[ "$REPLY_LINE" = "$4" ] ||
		fail "command '$3': expected reply '$4', got '$REPLY_LINE'"
}

# agent_pid: the agent's own pid (the child of the timeout wrapper).
agent_pid() {
	local kids
	kids=$(cat "/proc/$AGENT_PID/task/$AGENT_PID/children" 2>/dev/null) || return 1
	set -- $kids
	[ -n "${1:-}" ] || return 1
	echo "$1"
}

# cpu_ticks PID: user + system CPU time of PID so far, in clock ticks.
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# wakeups PID: how many times PID has blocked and been woken so far
# (voluntary context switches).
wakeups() {
	awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$1/status"
}

# gone PID: PID has exited (or is a zombie), waiting up to 2 s for it.
gone() {
	local i state
	for i in $(seq 1 200); do
		state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 0
		[ -z "$state" ] || [ "$state" = Z ] && return 0
		sleep 0.01
	done
	return 1
}

agent_alive() {
	if [ -n "${AGENT_PID:-}" ] && kill -0 "$AGENT_PID" 2>/dev/null; then
		echo yes
	else
		echo no
	fi
}

# poll_until MESSAGE CMD...: run CMD every 10 ms until it succeeds, for
# what gives no ack and no FIFO line to wait on (a file appearing, a line
# in a log); fail with MESSAGE if it has not within PG_TIMEOUT seconds (a
# hang guard only).
poll_until() {
	local msg=$1 end=$((SECONDS + PG_TIMEOUT))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || { show_run; fail "after ${PG_TIMEOUT}s: $msg"; }
		sleep 0.01
	done
}

# has_line FILE TEXT: FILE holds the line TEXT (for poll_until).
has_line() {
	grep -qxF -- "$2" "$1" 2>/dev/null
}

# wait_err TEXT: block until the agent's stderr holds the line TEXT.
wait_err() {
	poll_until "no line '$1' on the agent's stderr" has_line "$T/err" "$1"
}

# signal_ends_run SIG STATUS [OPTIONS...]: the agent (with OPTIONS) counts
# a workload of 5 getppid() calls that then blocks; SIG sent to the agent
# itself ends the run: the final report with the count of 5, the workload
# ended, and the agent dead of SIG too (exit STATUS, 128 + its number).
signal_ends_run() {
	local sig=$1 want=$2
	shift 2
	rm -f "$T/sig.ready" "$T/sig.end"
	mkfifos sig.ready sig.end
	pg_bg "$@" -e "$GETPPID" -- \
		"$MARKER" pid "$T/m.pid" getppid 5 notify "$T/sig.ready" wait "$T/sig.end"
	wait_line sig.ready
	kill "-$sig" "$(agent_pid)"
	pg_wait
	[ "$status" = "$want" ] || { show_run; fail "SIG$sig: expected status $want, got $status"; }
	grep -q "Performance counter stats for" "$T/err" || { show_run; fail "SIG$sig: no final report"; }
	grep -Eq "^ +5 +$GETPPID" "$T/err" || { show_run; fail "SIG$sig: no count of 5"; }
	gone "$(cat "$T/m.pid")" || fail "the workload is still running after SIG$sig"
}

# wait_line FIFO: block until the marker writes a line on FIFO $T/FIFO.
wait_line() {
	local fd line
	open_rw fd "$T/$1"
	read -r -t "$PG_TIMEOUT" -u "$fd" line || {
		exec {fd}<&-
		fail "no line on $1 within ${PG_TIMEOUT}s"
	}
	exec {fd}<&-
}

# release FIFO: write a line to $T/FIFO for a marker blocked in `wait FIFO`.
# The open is write-only, so it waits for the marker to have the FIFO open
# (a line written with no reader holding the FIFO would be lost).
release() {
	timeout "$PG_TIMEOUT" bash -c 'printf "go\n" >"$1"' _ "$T/$1" ||
		fail "nobody opened $1 within ${PG_TIMEOUT}s"
}

# write_once FIFO TEXT: a writer of its own opens $T/FIFO, writes TEXT
# (with printf's backslash escapes) and closes it, as a one-shot client
# does; the open waits (bounded) for the agent to have the FIFO open.
write_once() {
	timeout 5 bash -c 'printf "%b" "$2" >"$1"' _ "$T/$1" "$2" ||
		fail "cannot write '$2' to $1"
}

# killed_writer FIFO TEXT: the same writer, killed (SIGKILL) right after
# writing TEXT, so that it never closes the FIFO itself.
killed_writer() {
	run timeout 5 bash -c 'printf "%b" "$2" >"$1"; kill -KILL $$' _ "$T/$1" "$2"
	[ "$status" = 137 ] || fail "the writer was not killed (status $status)"
}

# ---- reading reports -----------------------------------------------------

# values EVENT [FILE]: every value printed for EVENT in -x output (final
# lines "value,unit,event,..." or interval lines "time,value,unit,event,..."),
# one per line, leading blanks stripped.
values() {
	awk -F"$SEP" -v ev="$1" '{
		for (i = 3; i <= NF; i++)
			if ($i == ev) {
				v = $(i - 2); sub(/^ +/, "", v); print v; break
			}
	}' "${2:-$REPORT}"
}

# value EVENT [FILE]: the last value printed for EVENT (fails if none).
value() {
	local v
	v=$(values "$@" | tail -n 1)
	[ -n "$v" ] || return 1
	printf '%s\n' "$v"
}

# show_run: the run's outputs, for a failing test's log.
show_run() {
	local f
	for f in "$T"/out "$T"/err "$@"; do
		[ -f "$f" ] || continue
		echo "--- $f"
		cat -v "$f"
	done
	echo "--- status: ${status:-?}"
}

# expect_value EVENT EXPECTED [FILE]: EVENT's (last) value is EXPECTED.
expect_value() {
	local got
	got=$(value "$1" "${3:-$REPORT}") || {
		show_run "${3:-}"
		fail "no line for $1 in ${3:-$REPORT}"
		return 1
	}
	if [ "$got" != "$2" ]; then
		show_run "${3:-}"
		fail "$1: expected $2, got $got"
	fi
}

# expect_status N: the run's exit status was N.
expect_status() {
	if [ "$status" != "$1" ]; then
		show_run
		fail "expected exit status $1, got $status"
	fi
}

# expect_out TEXT: the workload's stdout ($T/out) is exactly TEXT.
expect_out() {
	local got
	got=$(cat "$T/out")
	if [ "$got" != "$1" ]; then
		show_run
		fail "workload output: expected '$1', got '$got'"
	fi
}

# expect_no_workload: the workload (marker "say ran", or any that prints)
# never ran: it printed nothing.
expect_no_workload() {
	[ ! -s "$T/out" ] || { show_run; fail "the workload ran"; }
}

# refused_naming STATUS WHAT: the agent refused its command line (something
# it cannot use) with exit STATUS exactly, so that a crash (134, 139) or a
# hang (124) cannot pass, a message naming WHAT somewhere on stderr, and
# the workload never ran.
refused_naming() {
	[ "$status" -ne 0 ] || { show_run; fail "accepted; expected a refusal naming '$2'"; }
	expect_status "$1"
	grep -qF -- "$2" "$T/err" || { show_run; fail "the message does not name '$2'"; }
	expect_no_workload
}

# refused_with_line TEXT: the run failed at start-up (255) with the error
# line TEXT among stderr's lines, and the workload never ran.
refused_with_line() {
	expect_status 255
	grep -qxF -- "$1" "$T/err" || { show_run; fail "expected the line: $1"; }
	expect_no_workload
}

# refused_with_stderr TEXT: the run failed at start-up (255), the workload
# never ran, and stderr is exactly TEXT (e.g. the reason, the input, the
# caret line).
refused_with_stderr() {
	expect_status 255
	expect_no_workload
	local got
	got=$(cat "$T/err")
	if [ "$got" != "$1" ]; then
		show_run
		printf -- '--- expected:\n%s\n' "$1"
		fail "stderr differs"
	fi
}

# expect_err_is TEXT: the run's stderr ($T/err: the agent's, or a test
# script's) is exactly TEXT.
expect_err_is() {
	local got
	got=$(cat "$T/err")
	[ "$got" = "$1" ] || { show_run; fail "stderr: expected '$1', got '$got'"; }
}

# expect_err_has TEXT: the run's stderr ($T/err) contains TEXT.
expect_err_has() {
	grep -qF -- "$1" "$T/err" || { show_run; fail "no '$1' on stderr"; }
}

# json_eval JSON PYEXPR: print PYEXPR evaluated (python3) on the JSON text
# JSON parsed as `d` (e.g. a window-end reply's payload).
json_eval() {
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

# json_file_asserts FILE PYTHON: load FILE as JSON into `d` and run
# PYTHON's asserts (status 1, and the failing assert on stderr, if one
# fails).
json_file_asserts() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])' "$1" "$2"
}

# is_number S: S is a plain count or a decimal (as -x prints them).
is_number() {
	[[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]
}

# ---- perf stat side by side ------------------------------------------------

# Two reports of the same events differ in their digits (times, rates,
# counts of anything but a tracepoint over a fixed workload), so they are
# compared masked; the mask keeps everything a format decides:
#  - a number is each run of digits masked to N with the '.' and ','
#    between runs kept: 1,234.56 is N,N.N and 1234.56 is N.N, 0,74 is N,N
#    and 0.74 is N.N, so a missing thousands separator or the wrong decimal
#    mark shows, and in -x output a dropped field changes the number of runs
#    (5140000,100.00,0.35 is N,N.N,N.N);
#  - digit counts are not kept (N, not 999): the magnitude of a time or a
#    rate is not the format.  The one exception is grouping: 999 and 1,002
#    are both well-formed in a locale that groups, so report_compare (below)
#    takes two such numbers as the same format even where the runs differ;
#  - alignment is compared by field width, not by digits: a number and the
#    blanks before it are one right-aligned field, so report_compare wants
#    the same width (blanks + the number, in the locale's form) wherever
#    either side pads (two or more blanks), and the same single blank or
#    none otherwise;
#  - rate prefixes (K/sec, M/sec) follow the magnitude and are dropped.
# mask_digits shows a report so (blanks before a number collapsed to one);
# report_compare is the comparison itself.
mask_digits() {
	sed -E 's/[0-9]+/N/g; s/[KMG]?\/sec/\/sec/g; s/ +N/ N/g; s/ +$//'
}

# report_compare PERF_FILE PG_FILE [EVENT...]: the two reports are the same
# once masked (above), line for line; and the count of each EVENT (the last
# number before the event's name on its line: text, -x and -j rows alike)
# is the same number, digit for digit, in both.  Give EVENTs only where the
# count is deterministic: a tracepoint of the workload's own syscalls,
# counted per task.  An EVENT that perf's report names without a count is
# an error, so that the check cannot pass by finding nothing.  --sep=SEP
# (-x's separator) among the EVENTs: the count is the last field with
# digits before the name.
# Reads LC_NUMERIC (the report's locale) for the grouping rule.
report_compare() {
	/usr/bin/python3 - "$@" <<'PY'
import locale, re, sys

perf_file, pg_file = sys.argv[1], sys.argv[2]
exact = [a for a in sys.argv[3:] if not a.startswith("--sep=")]
seps = [a[6:] for a in sys.argv[3:] if a.startswith("--sep=") and len(a) > 6]
try:
    locale.setlocale(locale.LC_NUMERIC, "")
except locale.Error:
    pass
conv = locale.localeconv()
tsep, dp = re.escape(conv["thousands_sep"]), re.escape(conv["decimal_point"])
well_formed = re.compile(rf"\d{{1,3}}({tsep}\d{{3}})*({dp}\d+)?" if tsep else rf"\d+({dp}\d+)?")
number = re.compile(r"( *)(\d+(?:[.,]\d+)*)")

def split(line):
    """literals[i] (blanks before a number left out) and (blanks, number)s."""
    lits, nums, pos = [], [], 0
    for m in number.finditer(line):
        lits.append(re.sub(r"[KMG]?/sec", "/sec", line[pos:m.start()]))
        nums.append((len(m.group(1)), m.group(2)))
        pos = m.end()
    lits.append(re.sub(r"[KMG]?/sec", "/sec", line[pos:]).rstrip())
    return lits, nums

def shape(tok):
    return re.sub(r"\d+", "N", tok)

def same_number_format(a, b):
    if shape(a) == shape(b):
        return True
    return bool(tsep) and bool(well_formed.fullmatch(a)) and bool(well_formed.fullmatch(b))

first_number = re.compile(rf"\d+(?:{tsep}\d{{3}})*(?:{dp}\d+)?" if tsep else rf"\d+(?:{dp}\d+)?")

def width(blanks, tok):
    """A padded number's field width: blanks + the number's length.  The
    first number in the locale's form, not the whole token, as in -x rows
    a token runs on into the next fields ("     0.001803434,9.00,msec")."""
    return blanks + len(first_number.match(tok).group(0))

def compare(a, b):
    """None when lines a (perf) and b (perfgate) agree, else why not."""
    la, na = split(a)
    lb, nb = split(b)
    if la != lb or len(na) != len(nb):
        return "text differs"
    for (sa, ta), (sb, tb) in zip(na, nb):
        if not same_number_format(ta, tb):
            return f"number format: {ta!r} vs {tb!r}"
        if max(sa, sb) >= 2 and width(sa, ta) != width(sb, tb):
            return f"field width: {' ' * sa + ta!r} vs {' ' * sb + tb!r}"
        if max(sa, sb) < 2 and sa != sb:
            return f"blanks before {ta!r} vs {tb!r}"
    return None

def count_of(line, event):
    """The last number before EVENT's name on line (in -x rows, the last
    field with digits: "comm-TID,500,," is 500), or None."""
    m = re.search(rf"(?<!\w){re.escape(event)}(?!\w|:\w)", line)
    if not m:
        return None
    head = line[:m.start()]
    if seps:
        fields = [f for f in head.split(seps[0]) if re.search(r"\d", f)]
        head = fields[-1] if fields else ""
    nums = re.findall(r"\d+(?:[.,]\d+)*", head)
    return nums[-1] if nums else None

pa = open(perf_file, errors="replace").read().splitlines()
pb = open(pg_file, errors="replace").read().splitlines()
bad = []
if len(pa) != len(pb):
    bad.append(f"perf has {len(pa)} lines, perfgate {len(pb)}")
for i, (a, b) in enumerate(zip(pa, pb), 1):
    why = compare(a, b)
    if why:
        bad.append(f"line {i}: {why}\n  < {a}\n  > {b}")
for event in exact:
    seen = 0
    for i, (a, b) in enumerate(zip(pa, pb), 1):
        ca, cb = count_of(a, event), count_of(b, event)
        if ca is None:
            continue
        seen += 1
        if ca != cb:
            bad.append(f"line {i}: {event} counted {ca} by perf, {cb} by perfgate\n  < {a}\n  > {b}")
    if not seen and any(re.search(rf"(?<!\w){re.escape(event)}(?!\w)", a) for a in pa):
        bad.append(f"no count of {event} in perf's report to compare")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

# exact_events OPTIONS...: the events of same_as_perf's workload whose
# counts are deterministic under OPTIONS: getppid, counted per task over
# the whole run.  None system-wide (other tasks call getppid too), per CPU
# (where the calls run is the scheduler's), with a delay or intervals
# (which calls fall in which is timing), or when getppid is not counted.
exact_events() {
	local o
	for o in "$@"; do
		case $o in
		-a|-A|-C*|-G*|-D*|-I*|-p*|-t*|--no-aggr|--per-*|--interval*|--all-cpus|--cpu*|--delay*|--cgroup*) return 0 ;;
		esac
	done
	[[ " $* " == *"$GETPPID"* ]] && echo "$GETPPID"
	csv_sep "$@"
}

# csv_sep OPTIONS...: --sep=SEP for report_compare when OPTIONS have -x SEP.
csv_sep() {
	while [ $# -gt 0 ]; do
		case $1 in
		-x) echo "--sep=$2"; return 0 ;;
		-x*) echo "--sep=${1#-x}"; return 0 ;;
		--field-separator=*) echo "--sep=${1#*=}"; return 0 ;;
		esac
		shift
	done
	return 0
}

# same_reports PERF_FILE PG_FILE WHAT [EVENT...]: report_compare, or fail
# showing both reports, masked and whole, and what differs.
same_reports() {
	local perf_file=$1 pg_file=$2 what=$3
	shift 3
	if ! report_compare "$perf_file" "$pg_file" "$@" >"$T/diff"; then
		echo "--- perf stat $what"; cat "$perf_file"
		echo "--- perfgate $what"; cat "$pg_file"
		echo "--- masked diff (< perf, > perfgate)"
		diff <(mask_digits <"$perf_file") <(mask_digits <"$pg_file")
		echo "--- what differs"; cat "$T/diff"
		fail "perfgate's output differs from perf's for: $what"
	fi
}

# same_as_perf OPTIONS...: perf stat and perfgate with OPTIONS on `marker
# getppid 1234` (then a sleep of $SLEEP ms, when set) print the same
# report (report_compare), getppid's count the same where it is exact.
same_as_perf() {
	local workload=("$MARKER" getppid 1234 ${SLEEP:+sleep "$SLEEP"})
	timeout --foreground -k 2 "$PG_TIMEOUT" perf stat "$@" -- "${workload[@]}" \
		>"$T/perf.out" 2>"$T/perf" 3>&- </dev/null || fail "perf stat $* failed: $(cat "$T/perf")"
	pg "$@" -- "${workload[@]}"
	expect_status 0
	# shellcheck disable=SC2046 # one word per event
	same_reports "$T/perf" "$T/err" "$*" $(exact_events "$@")
}
