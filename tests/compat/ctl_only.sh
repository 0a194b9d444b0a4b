#!/bin/bash
# ctl_only.sh: a control FIFO with no ack FIFO, in the style of launcher
# scripts that run `perf stat -D -1 ... -o FILE --control fifo:perf_ctl.fifo
# -- BENCHMARK`, where the benchmark writes `enable` and `disable` into the
# FIFO (here: `echo enable > FIFO`, one open and close per command) and has
# no way to wait for them to take effect.  With --chmod666 the launcher
# makes the FIFO writable by everyone, as launchers do for a benchmark that
# runs as another user.
#
#   ctl_only.sh [--chmod666] DIR K MARKER -- TOOL [ARG...]
#   ctl_only.sh bench DIR K MARKER      (the benchmark, run by the tool)
#
# The benchmark makes 3 getppid() calls (through MARKER), writes `enable`,
# makes K calls, writes `disable` and makes 2 more.  With no ack the count
# would depend on timing, so the test makes it deterministic from outside
# the control protocol: after each command the benchmark tells the launcher
# (DIR/note) and waits (DIR/go) until settled.py has seen the FIFO drained
# and the tool back asleep in its wait for events, i.e. the command is done.
# The -x, report goes to DIR/stat and must count K.
set -u

fail() {
	echo "ctl_only.sh: $*" >&2
	[ -z "${tool_pid:-}" ] || kill -KILL "$tool_pid" 2>/dev/null
	exit 1
}

here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = bench ]; then
	[ $# -eq 4 ] || fail "usage: ctl_only.sh bench DIR K MARKER"
	dir=$2 k=$3 marker=$4
	"$marker" getppid 3 || exit 1
	echo enable >"$dir/perf_ctl.fifo"
	echo sent >"$dir/note"
	read -r -t 60 _ <"$dir/go" || exit 1
	"$marker" getppid "$k" || exit 1
	echo disable >"$dir/perf_ctl.fifo"
	echo sent >"$dir/note"
	read -r -t 60 _ <"$dir/go" || exit 1
	"$marker" getppid 2 || exit 1
	exit 0
fi

chmod666=
if [ "${1:-}" = --chmod666 ]; then
	chmod666=1
	shift
fi
if [ $# -lt 5 ] || [ "$4" != -- ]; then
	fail "usage: ctl_only.sh [--chmod666] DIR K MARKER -- TOOL [ARG...]"
fi
dir=$1 k=$2 marker=$3
shift 4

mkfifo "$dir/perf_ctl.fifo" "$dir/note" "$dir/go" || fail "mkfifo failed"
[ -z "$chmod666" ] || chmod 666 "$dir/perf_ctl.fifo" || fail "chmod failed"
exec {note_fd}<>"$dir/note" {go_fd}<>"$dir/go"

"$@" -D -1 -x, -o "$dir/stat" -e syscalls:sys_enter_getppid \
	--control "fifo:$dir/perf_ctl.fifo" -- bash "$here/ctl_only.sh" bench "$dir" "$k" "$marker" &
tool_pid=$!

for cmd in enable disable; do
	read -r -t 30 -u "$note_fd" _ || fail "the benchmark never wrote '$cmd'"
	python3 "$here/settled.py" "$tool_pid" "$dir/perf_ctl.fifo" ||
		fail "'$cmd' did not settle"
	echo go >&"$go_fd"
done
status=0
wait "$tool_pid" || status=$?
tool_pid=
[ "$status" = 0 ] || fail "the tool exited with status $status"
exit 0
