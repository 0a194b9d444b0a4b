#!/usr/bin/env bats
# compat.bats: perfgate as a drop-in for the programs that already drive
# `perf stat --control`.  Each client in this folder is written in the style
# of one family of real harnesses (README.md names them): how it starts the
# tool, opens the FIFOs or passes descriptors, frames its commands and reads
# the acks.  Every test runs one client twice, against perfgate and against
# perf stat 6.1 as the reference: a style that works with perf must work
# with perfgate.
#
# Each run counts syscalls:sys_enter_getppid around K getppid() calls made
# inside the window, with calls outside it before and after, and must
# report exactly K.  The clients check every reply they read; where the
# test or the client holds the ack channel, what is left on it once the
# tool has exited must be exactly what the style leaves with perf (nothing,
# or the trailing NUL of the last ack for readers that stop at the
# newline), so no command gets a second reply.  Every run is under a
# timeout, so a hang fails the test.

load ../e2e/helpers

setup() {
	common_setup
	perf_setup
	COMPAT=$SRCDIR/tests/compat
	COMPAT_BIN=${BUILDDIR:-$PG_BUILD_DIR}/tests/compat
	K=4321
}

# use_tool perfgate|perf: the tool the client starts, as a command prefix.
use_tool() {
	case $1 in
	perfgate) TOOL=("$PERFGATE") ;;
	perf) TOOL=(perf stat) ;;
	*) fail "no tool $1" ;;
	esac
}

# guarded CMD...: run CMD under a hang guard; its stdout and stderr go to
# $T/client, its status to $status.
guarded() {
	status=0
	timeout -k 2 60 "$@" >"$T/client" 2>&1 </dev/null || status=$?
}

# leftover FD: what is waiting on FD (an ack FIFO the test holds), in hex.
leftover() {
	dd if="/proc/self/fd/$1" iflag=nonblock bs=65536 count=1 status=none 2>/dev/null |
		od -An -tx1 | tr -d ' \n'
}

# expect_run: the client succeeded and the tool's report in $T/stat
# counts exactly K getppid() calls.
expect_run() {
	if [ "$status" != 0 ]; then
		show_run "$T/client" "$T/stat"
		fail "the client failed (status $status)"
	fi
	expect_value "$GETPPID" "$K" "$T/stat"
}

# expect_leftover HEX...: what is left on the ack FIFO held as $held is
# one of HEX ('' for nothing).
expect_leftover() {
	local rest want
	rest=$(leftover "$held")
	for want in "$@"; do
		[ "$rest" = "$want" ] && return 0
	done
	fail "left on the ack channel: '$rest' (hex); want one of: $*"
}

# hold_ack_fifo CTL ACK: make FIFOs $T/CTL and $T/ACK, and hold ACK open
# (in $held) to see what is left on it at the end.
hold_ack_fifo() {
	mkfifo "$T/$1" "$T/$2"
	exec {held}<>"$T/$2"
}

# client_run OPTIONS... -- CLIENT...: the tool with OPTIONS (the style's
# own spelling of the window and control options), a -x, report in
# $T/stat counting getppid, running CLIENT as its workload; expect_run.
client_run() {
	local opts=()
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	guarded "${TOOL[@]}" "${opts[@]}" -x, -o "$T/stat" -e "$GETPPID" -- "$@"
	expect_run
}

bare_rdwr() {
	use_tool "$1"
	guarded python3 "$COMPAT/bare_rdwr.py" launch "$T" "$K" -- "${TOOL[@]}"
	expect_run
}

nul_rdwr() {
	use_tool "$1"
	hold_ack_fifo ctl ack
	COMPAT_CTL_FIFO=$T/ctl COMPAT_ACK_FIFO=$T/ack client_run --delay=-1 \
		--control="fifo:$T/ctl,$T/ack" -- "$COMPAT_BIN/nul_rdwr" "$2" "$K"
	expect_leftover ''
}

nonblock_poll() {
	use_tool "$1"
	guarded "$COMPAT_BIN/nonblock_poll" "$T" "$K" "$MARKER" -- "${TOOL[@]}"
	expect_run
}

select_chunks() {
	use_tool "$1"
	hold_ack_fifo perfctl perfack
	PERF_STAT_CTL_FIFO=$T/perfctl PERF_STAT_ACK_FIFO=$T/perfack client_run \
		-D -1 --control "fifo:$T/perfctl,$T/perfack" -- python3 "$COMPAT/select_chunks.py" "$K"
	# Whether the last ack's NUL was read depends on how the replies fell
	# into the four-byte reads; nothing else may be there.
	expect_leftover '' 00
}

fd_env() {
	local ctl ack
	use_tool "$1"
	mkfifo "$T/ctl.fifo" "$T/ack.fifo"
	exec {ctl}<>"$T/ctl.fifo" {ack}<>"$T/ack.fifo"
	held=$ack
	PERF_CTL_FD=$ctl PERF_CTL_ACK_FD=$ack client_run --delay=-1 \
		--control "fd:$ctl,$ack" -- "$COMPAT_BIN/fd_env" "$K"
	expect_leftover ''
}

echo_read() {
	use_tool "$1"
	guarded bash "$COMPAT/echo_read.sh" "$T" "$K" "$MARKER" -- "${TOOL[@]}"
	expect_run
}

rawio() {
	use_tool "$1"
	shift
	guarded python3 "$COMPAT/rawio_launcher.py" "$@" "$T" "$K" "$MARKER" -- "${TOOL[@]}"
	expect_run
}

ctl_only() {
	use_tool "$1"
	shift
	guarded bash "$COMPAT/ctl_only.sh" "$@" "$T" "$K" "$MARKER" -- "${TOOL[@]}"
	expect_run
}

@test "bare writes, no terminator, one 5-byte read (Python, FIFOs O_RDWR): perfgate" { bare_rdwr perfgate; }
@test "bare writes, no terminator, one 5-byte read (Python, FIFOs O_RDWR): perf" { bare_rdwr perf; }
@test "sizeof(\"enable\") writes, one 5-byte read and strcmp (C, O_RDWR): perfgate" { nul_rdwr perfgate nul; }
@test "sizeof(\"enable\") writes, one 5-byte read and strcmp (C, O_RDWR): perf" { nul_rdwr perf nul; }
@test "sizeof(\"enable\\n\") writes, one 5-byte read and strcmp (C, O_RDWR): perfgate" { nul_rdwr perfgate nlnul; }
@test "sizeof(\"enable\\n\") writes, one 5-byte read and strcmp (C, O_RDWR): perf" { nul_rdwr perf nlnul; }
@test "runner on O_RDWR|O_NONBLOCK FIFOs, \\n\\0 writes, poll() 1 s, exact acks, ping (C): perfgate" { nonblock_poll perfgate; }
@test "runner on O_RDWR|O_NONBLOCK FIFOs, \\n\\0 writes, poll() 1 s, exact acks, ping (C): perf" { nonblock_poll perf; }
@test "O_NONBLOCK write-only and read-only opens, select() 1 s, 4-byte reads (Python): perfgate" { select_chunks perfgate; }
@test "O_NONBLOCK write-only and read-only opens, select() 1 s, 4-byte reads (Python): perf" { select_chunks perf; }
@test "fds inherited by the workload, named by PERF_CTL_FD and PERF_CTL_ACK_FD (C): perfgate" { fd_env perfgate; }
@test "fds inherited by the workload, named by PERF_CTL_FD and PERF_CTL_ACK_FD (C): perf" { fd_env perf; }
@test "echo CMD >&fd; read -u ack over --control fd: (bash): perfgate" { echo_read perfgate; }
@test "echo CMD >&fd; read -u ack over --control fd: (bash): perf" { echo_read perf; }
@test "Popen, then open(wb/rb, buffering=0) on the FIFOs (Python): perfgate" { rawio perfgate; }
@test "Popen, then open(wb/rb, buffering=0) on the FIFOs (Python): perf" { rawio perf; }
@test "FIFOs made under umask 0, mode 0666 (Python): perfgate" { rawio perfgate --umask0; }
@test "FIFOs made under umask 0, mode 0666 (Python): perf" { rawio perf --umask0; }
@test "a control FIFO and no ack FIFO, echo CMD > FIFO (bash): perfgate" { ctl_only perfgate; }
@test "a control FIFO and no ack FIFO, echo CMD > FIFO (bash): perf" { ctl_only perf; }
@test "a control FIFO with no ack FIFO, chmod 666 (bash): perfgate" { ctl_only perfgate --chmod666; }
@test "a control FIFO with no ack FIFO, chmod 666 (bash): perf" { ctl_only perf --chmod666; }
