#!/bin/bash
# echo_read.sh: a bash runner that drives the tool's control channel with
# `echo CMD >&$fd` and `read -u $ack_fd`, in the style of benchmark scripts
# (and of perf-stat(1)'s own example) that open their FIFOs with
# `exec {fd}<>FIFO`, pass the descriptors as --control fd:CTL,ACK, run the
# tool in the background and open and close the window around the work.
#
#   echo_read.sh DIR K MARKER -- TOOL [ARG...]
#
# The workload (MARKER) makes 3 getppid() calls, notifies DIR/done, waits
# for DIR/go, makes K calls, notifies, waits and makes 2 more; the window is
# open only between.  The -x, report goes to DIR/stat.  bash's `read` stops
# at the newline, so each ack's trailing NUL waits in the FIFO and the next
# `read` skips it: after the tool has exited exactly one NUL must be left.
set -u

fail() {
	echo "echo_read.sh: $*" >&2
	[ -z "${tool_pid:-}" ] || kill -KILL "$tool_pid" 2>/dev/null
	exit 1
}

if [ $# -lt 5 ] || [ "$4" != -- ]; then
	fail "usage: echo_read.sh DIR K MARKER -- TOOL [ARG...]"
fi
dir=$1 k=$2 marker=$3
shift 4

mkfifo "$dir/ctl" "$dir/ack" "$dir/go" "$dir/done" || fail "mkfifo failed"
exec {ctl_fd}<>"$dir/ctl" {ack_fd}<>"$dir/ack" {go_fd}<>"$dir/go" {done_fd}<>"$dir/done"

"$@" -D -1 -x, -o "$dir/stat" -e syscalls:sys_enter_getppid \
	--control "fd:${ctl_fd},${ack_fd}" \
	-- "$marker" getppid 3 notify "$dir/done" wait "$dir/go" getppid "$k" \
	notify "$dir/done" wait "$dir/go" getppid 2 &
tool_pid=$!

# A generous guard on each read: the real scripts have none, and hang.
read -r -t 30 -u "$done_fd" _ || fail "the workload never started"
# shellcheck disable=SC2015  # written as the scripts it mirrors write it
echo 'enable' >&"$ctl_fd" && read -r -t 30 -u "$ack_fd" e1 || fail "no reply to enable"
[ "$e1" = ack ] || fail "reply to enable: '$e1'"
echo go >&"$go_fd"
read -r -t 30 -u "$done_fd" _ || fail "the workload never finished"
# shellcheck disable=SC2015
echo 'disable' >&"$ctl_fd" && read -r -t 30 -u "$ack_fd" d1 || fail "no reply to disable"
[ "$d1" = ack ] || fail "reply to disable: '$d1'"
echo go >&"$go_fd"

status=0
wait "$tool_pid" || status=$?
tool_pid=
[ "$status" = 0 ] || fail "the tool exited with status $status"
# The tool is gone: whatever it wrote is in the FIFO now.
rest=$(dd if="/proc/self/fd/$ack_fd" iflag=nonblock bs=65536 count=1 status=none 2>/dev/null |
	od -An -tx1 | tr -d ' \n')
[ "$rest" = 00 ] || fail "left on the ack FIFO: '$rest' (hex), want one NUL (00)"
exit 0
