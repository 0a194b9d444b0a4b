# perfgate.sh: drive the perfgate agent from bash.
#
# Source this file, start the agent on private FIFOs, then open and close
# windows around the work to measure:
#
#   source /path/to/perfgate.sh
#   perfgate_start -e task-clock,syscalls:sys_enter_write -x,
#   perfgate_window_begin build
#   make -j8
#   perfgate_window_end build json         # json={"window":"build","calls":1,...}
#   perfgate_stop                          # final report in $PERFGATE_REPORT
#
# perfgate_start [AGENT OPTIONS...] [-- WORKLOAD...]
#   Creates a private directory (mktemp -d, mode 0700) holding two FIFOs,
#   starts the agent in the background as
#     $PERFGATE -D -1 --control fifo:DIR/ctl,DIR/ack [-o REPORT] [-p $$] OPTIONS...
#   and waits until it answers `ping`.  Counting starts disabled (-D -1):
#   nothing is counted until perfgate_enable or a window opens.
#   * Target: when OPTIONS name no target (no workload, -a, -C, -p, -t), the
#     agent attaches to this shell, `-p $$`: the calling script and every
#     child it starts from then on are measured.  (The agent itself is
#     started before it attaches, so it is not measured.)  This includes
#     the client's own syscalls: the write() of a `window end` line happens
#     inside the window and is counted (one write per such command).
#   * Report: unless OPTIONS give -o/--output or --log-fd, the report goes to
#     a file named by $PERFGATE_REPORT (mode 0600), complete once perfgate_stop
#     has returned.  It is removed when the shell exits: copy it, or pass
#     -o FILE to keep it.  The agent's own messages go to this shell's stderr.
#   * A workload (`-- cmd args`) is ended by perfgate_stop (the agent sends it
#     SIGTERM); a workload that should run to its end is awaited with
#     perfgate_wait.  With a workload, perfgate_start fails if the workload
#     (and so the agent) ends before the agent answers `ping`.
#
# Commands (each waits for the agent's one-line reply):
#   perfgate_enable / perfgate_disable      open / close the default window
#   perfgate_window_begin NAME              open window NAME
#   perfgate_window_end NAME [VAR]          close it; put the reply's JSON in
#                                           VAR, or print it without VAR
#   perfgate_range_load NAME SPEC           load a range (perfgate-ranges(7));
#                                           its views are "event@NAME"
#   perfgate_range_unload NAME              stop it (its totals stay)
#   perfgate_snapshot                       print current counts to the report
#   perfgate_ping, perfgate_hello           liveness; protocol version (JSON)
#   perfgate_cmd TEXT                       any command; print its payload
#   perfgate_stop                           final report, end the agent; the
#                                           status is the workload's
#   perfgate_wait [SECONDS]                 wait for the agent to end by itself
#   perfgate_cleanup                        end the agent if still running,
#                                           remove the FIFOs (run at exit)
#
# Errors: every call returns non-zero with a message on stderr naming the
# command ("perfgate: window end x: window 'x' is not open") when the agent
# answers `err REASON`, when it does not answer within $PERFGATE_TIMEOUT
# seconds (default 5; decimals allowed), or when the agent is not running
# (a dead agent is noticed at once, not after the timeout).  So under
# `set -e` a failed call ends the script; guard it (`if ! perfgate_...`)
# to handle the failure yourself.  The file works under `set -euo pipefail`.
#
# perfgate_stop returns the agent's exit status, which is the workload's
# (143 for a workload ended by stop's SIGTERM; 0 with -p, -a, ...): under
# `set -e`, write `perfgate_stop || status=$?` when that status may be
# non-zero.  It also leaves the status in $PERFGATE_STATUS (empty when stop
# itself failed).
#
# Variables the caller may read:
#   PERFGATE_PID      the agent's pid (empty once stopped)
#   PERFGATE_DIR      the private directory holding ctl/ack (empty once stopped)
#   PERFGATE_REPORT   the report file perfgate_start chose (empty if -o/--log-fd)
#   PERFGATE_STATUS   the agent's exit status after perfgate_stop / perfgate_wait
#   PERFGATE_REPLY    the payload of the last reply (e.g. window end's JSON)
# Variables the caller may set:
#   PERFGATE          the agent binary (default: `perfgate` from PATH)
#   PERFGATE_TIMEOUT  seconds to wait for each reply (default 5)
#   PERFGATE_NO_TRAP  set to 1 before perfgate_start to install no EXIT trap
#
# Clean-up: perfgate_start installs an EXIT trap that runs perfgate_cleanup
# and then the EXIT trap that was set before (it chains, it does not replace
# it).  An EXIT trap set *after* perfgate_start replaces ours: call
# perfgate_cleanup from it.  perfgate_cleanup ends a still-running agent with
# SIGTERM (it writes its final report), removes the FIFOs and the directory.
#
# Limits: one agent per shell at a time.  perfgate_start, perfgate_stop and
# perfgate_wait must run in the shell that owns the agent (not in $(...));
# the other calls also work from subshells.  But json=$(perfgate_window_end x)
# forks that subshell while the window is still open, and the fork's own
# task-clock and page faults are counted in the window: write
# `perfgate_window_end x json` instead, which forks nothing.
# Commands are single lines: TEXT with a newline is refused.  Send one
# command at a time: not from concurrent background jobs.
#
# Requires bash >= 4.4; timeouts are precise to the millisecond with bash >= 5.

# Internal state (kept when the file is sourced twice).
_perfgate_ctl_fd=${_perfgate_ctl_fd:-}      # our end of DIR/ctl
_perfgate_ack_fd=${_perfgate_ack_fd:-}      # our end of DIR/ack
_perfgate_owner=${_perfgate_owner:-}        # BASHPID of the shell that started the agent
_perfgate_tmo_us=${_perfgate_tmo_us:-0}     # PERFGATE_TIMEOUT in microseconds
_perfgate_tmo_str=${_perfgate_tmo_str:-}    # the PERFGATE_TIMEOUT it was parsed from
_perfgate_line=${_perfgate_line:-}          # the reply line just read
_perfgate_msg=${_perfgate_msg:-}            # a message built by _perfgate_gone_msg
_perfgate_now=${_perfgate_now:-0}           # set by _perfgate_now_us
_perfgate_prev_trap=${_perfgate_prev_trap:-} # the EXIT trap we chain to
_perfgate_has_target=0                      # set by _perfgate_scan_args
_perfgate_has_output=0                      # set by _perfgate_scan_args
_perfgate_has_workload=0                    # set by _perfgate_scan_args
[ -n "${_perfgate_tmpfiles+set}" ] || _perfgate_tmpfiles=()  # report files to remove at exit
PERFGATE_PID=${PERFGATE_PID:-}
PERFGATE_DIR=${PERFGATE_DIR:-}
PERFGATE_REPORT=${PERFGATE_REPORT:-}
PERFGATE_STATUS=${PERFGATE_STATUS:-}
PERFGATE_REPLY=${PERFGATE_REPLY:-}

# ---- internals -------------------------------------------------------------

# _perfgate_error WHAT MESSAGE...: print "perfgate: WHAT: MESSAGE" on stderr.
_perfgate_error() {
	local what=$1
	shift
	printf 'perfgate: %s: %s\n' "$what" "$*" >&2
}

# _perfgate_now_us: the time in microseconds (seconds resolution before bash 5).
_perfgate_now_us() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		_perfgate_now=${EPOCHREALTIME/[.,]/}
	else
		_perfgate_now=$((SECONDS * 1000000))
	fi
}

# _perfgate_timeout: parse PERFGATE_TIMEOUT into _perfgate_tmo_us (fails if bad).
_perfgate_timeout() {
	local t=${PERFGATE_TIMEOUT:-5} frac
	[ "$t" != "$_perfgate_tmo_str" ] || return 0
	if ! [[ $t =~ ^([0-9]+)(\.([0-9]*))?$ ]]; then
		_perfgate_error "$1" "PERFGATE_TIMEOUT='$t' is not a number of seconds"
		return 1
	fi
	frac=${BASH_REMATCH[3]:-}000000
	_perfgate_tmo_us=$((10#${BASH_REMATCH[1]} * 1000000 + 10#${frac:0:6}))
	if [ "$_perfgate_tmo_us" -le 0 ]; then
		_perfgate_error "$1" "PERFGATE_TIMEOUT must be more than 0"
		return 1
	fi
	_perfgate_tmo_str=$t
}

# _perfgate_alive: the agent process exists and is not a zombie.  (The shell
# that started it reaps it at once; a subshell looks in /proc for a zombie.)
_perfgate_alive() {
	local stat=
	[ -n "$PERFGATE_PID" ] || return 1
	kill -0 "$PERFGATE_PID" 2>/dev/null || return 1
	if [ "${BASHPID:-$$}" != "$_perfgate_owner" ] && [ -r "/proc/$PERFGATE_PID/stat" ]; then
		# "PID (COMM) STATE ...": a zombie has ended, it is not yet reaped.
		read -r stat <"/proc/$PERFGATE_PID/stat" 2>/dev/null || return 0
		[[ $stat != *") Z "* ]] || return 1
	fi
	return 0
}

# _perfgate_reap: collect the ended agent's exit status into PERFGATE_STATUS.
_perfgate_reap() {
	local st=0
	if [ "${BASHPID:-$$}" = "$_perfgate_owner" ]; then
		wait "$PERFGATE_PID" 2>/dev/null || st=$?
		PERFGATE_STATUS=$st
	else
		PERFGATE_STATUS=
	fi
}

# _perfgate_gone_msg: describe an agent that is no longer running, in _perfgate_msg.
_perfgate_gone_msg() {
	_perfgate_msg="the agent (pid $PERFGATE_PID) is not running"
	if [ "${BASHPID:-$$}" = "$_perfgate_owner" ]; then
		_perfgate_reap
		_perfgate_msg+=" (exit status $PERFGATE_STATUS)"
	fi
}

# _perfgate_pause: wait about 10 ms, without forking when it can (a read that
# times out on a FIFO nobody writes).
_perfgate_pause() {
	local unused
	if [ -p "$PERFGATE_DIR/.pause" ]; then
		# shellcheck disable=SC2034
		read -r -t 0.01 unused <>"$PERFGATE_DIR/.pause" 2>/dev/null || true
	else
		sleep 0.01
	fi
}

# _perfgate_set_owed N: record that N replies are still due to commands that
# timed out (in a file, so that calls made in $(...) subshells count too).
_perfgate_set_owed() {
	local s=
	if [ "$1" -gt 0 ]; then
		printf -v s '%*s' "$1" ''
		printf '%s' "${s// /x}" >"$PERFGATE_DIR/owed" 2>/dev/null || true
	else
		rm -f -- "$PERFGATE_DIR/owed"
	fi
}

# _perfgate_read_line WHAT DEADLINE: read one reply line into _perfgate_line,
# giving up at DEADLINE (microseconds) or as soon as the agent is gone.
_perfgate_read_line() {
	local what=$1 deadline=$2 part rc
	_perfgate_line=
	while :; do
		part=
		IFS= read -r -t 0.05 -u "$_perfgate_ack_fd" part && {
			_perfgate_line+=$part
			return 0
		}
		rc=$?
		_perfgate_line+=$part
		if [ "$rc" -le 128 ]; then
			_perfgate_error "$what" "the reply channel failed (read status $rc)"
			return 1
		fi
		if ! _perfgate_alive; then
			# A reply written just before the agent ended is still in the FIFO.
			part=
			IFS= read -r -t 0.01 -u "$_perfgate_ack_fd" part && {
				_perfgate_line+=$part
				return 0
			}
			_perfgate_gone_msg
			_perfgate_error "$what" "no reply: $_perfgate_msg"
			return 1
		fi
		_perfgate_now_us
		if [ "$_perfgate_now" -ge "$deadline" ]; then
			_perfgate_error "$what" "no reply from the agent (pid $PERFGATE_PID) within ${PERFGATE_TIMEOUT:-5}s"
			return 1
		fi
	done
}

# _perfgate_request WHAT TEXT: send command TEXT, wait for its reply; the
# payload goes to PERFGATE_REPLY; `err REASON` and failures return non-zero.
_perfgate_request() {
	local what=$1 text=$2 deadline owed='' n reason
	PERFGATE_REPLY=
	if [ -z "$_perfgate_ctl_fd" ] || [ -z "$PERFGATE_PID" ]; then
		_perfgate_error "$what" "no agent: call perfgate_start first"
		return 1
	fi
	case $text in
	*$'\n'* | *$'\r'*)
		_perfgate_error "$what" "a command must be one line"
		return 2 ;;
	esac
	_perfgate_timeout "$what" || return 1
	if ! _perfgate_alive; then
		_perfgate_gone_msg
		_perfgate_error "$what" "$_perfgate_msg"
		return 1
	fi
	_perfgate_now_us
	deadline=$((_perfgate_now + _perfgate_tmo_us))
	# Replies come in order: first skip those still due to commands that
	# timed out, so that this command gets its own.
	if [ -s "$PERFGATE_DIR/owed" ]; then
		read -r owed <"$PERFGATE_DIR/owed" || true
		n=${#owed}
		while [ "$n" -gt 0 ]; do
			if ! _perfgate_read_line "$what (still waiting for the reply to an earlier command)" \
				"$deadline"; then
				_perfgate_set_owed "$n"
				return 1
			fi
			n=$((n - 1))
		done
		_perfgate_set_owed 0
	fi
	if ! printf '%s\n' "$text" >&"$_perfgate_ctl_fd"; then
		_perfgate_error "$what" "cannot write to the control FIFO"
		return 1
	fi
	if ! _perfgate_read_line "$what" "$deadline"; then
		if [ -d "$PERFGATE_DIR" ]; then printf x >>"$PERFGATE_DIR/owed" 2>/dev/null || true; fi
		return 1
	fi
	case $_perfgate_line in
	ack)
		return 0 ;;
	"ack "*)
		PERFGATE_REPLY=${_perfgate_line#ack }
		return 0 ;;
	err | "err "*)
		reason=${_perfgate_line#err}
		_perfgate_error "$what" "${reason# }"
		return 1 ;;
	*)
		_perfgate_error "$what" "unexpected reply '$_perfgate_line'"
		return 1 ;;
	esac
}

# _perfgate_scan_args ARGS...: note whether the agent options name a target,
# a report destination and a workload (perf stat's option syntax).
_perfgate_scan_args() {
	local a c i
	_perfgate_has_target=0 _perfgate_has_output=0 _perfgate_has_workload=0
	while [ $# -gt 0 ]; do
		a=$1
		shift
		case $a in
		--)
			[ $# -gt 0 ] && _perfgate_has_workload=1
			break ;;
		--all-cpus | --cpu=* | --pid=* | --tid=*)
			_perfgate_has_target=1 ;;
		--cpu | --pid | --tid)
			_perfgate_has_target=1
			if [ $# -gt 0 ]; then shift; fi ;;
		--output=* | --log-fd=*)
			_perfgate_has_output=1 ;;
		--output | --log-fd)
			_perfgate_has_output=1
			if [ $# -gt 0 ]; then shift; fi ;;
		--event | --filter | --delay | --control | --ctl-fd | --ctl-fd-ack | \
		--interval-print | --interval-count | --field-separator | --json-file | \
		--mmap-pages | --range | --range-scope)
			if [ $# -gt 0 ]; then shift; fi ;;
		--*) ;;
		-?*)
			# A cluster of short options, e.g. -ae EVENTS or -p123.
			for ((i = 1; i < ${#a}; i++)); do
				c=${a:i:1}
				case $c in
				a) _perfgate_has_target=1 ;;
				C | p | t | o | e | D | I | x | m)
					case $c in
					C | p | t) _perfgate_has_target=1 ;;
					o) _perfgate_has_output=1 ;;
					esac
					if [ $((i + 1)) -eq ${#a} ] && [ $# -gt 0 ]; then shift; fi
					break ;;
				esac
			done ;;
		*)
			_perfgate_has_workload=1
			break ;;
		esac
	done
	if [ "$_perfgate_has_workload" = 1 ]; then _perfgate_has_target=1; fi
	return 0
}

# _perfgate_set_status N: return N (to hand $? on to a chained trap).
_perfgate_set_status() {
	return "$1"
}

# _perfgate_atexit: the EXIT trap: clean up, then run the trap we replaced.
_perfgate_atexit() {
	local st=$? f
	if [ "${BASHPID:-$$}" = "$_perfgate_owner" ]; then
		perfgate_cleanup || true
		for f in "${_perfgate_tmpfiles[@]}"; do
			rm -f -- "$f"
		done
		_perfgate_tmpfiles=()
	fi
	if [ -n "$_perfgate_prev_trap" ]; then
		if [ "$st" = 0 ]; then
			eval "$_perfgate_prev_trap"
		else
			_perfgate_set_status "$st" || eval "$_perfgate_prev_trap"
		fi
	fi
}

# _perfgate_install_trap: install _perfgate_atexit, chaining any EXIT trap.
_perfgate_install_trap() {
	local cur
	local -a words
	[ "${PERFGATE_NO_TRAP:-0}" != 1 ] || return 0
	cur=$(trap -p EXIT)
	case $cur in
	*_perfgate_atexit*) return 0 ;;
	esac
	_perfgate_prev_trap=
	if [ -n "$cur" ]; then
		# `trap -p` prints: trap -- 'COMMANDS' EXIT
		eval "words=($cur)"
		_perfgate_prev_trap=${words[2]:-}
	fi
	trap _perfgate_atexit EXIT
}

# _perfgate_close: close our FIFO ends, remove the FIFOs and the directory.
_perfgate_close() {
	if [ -n "$_perfgate_ctl_fd" ]; then exec {_perfgate_ctl_fd}>&-; fi
	if [ -n "$_perfgate_ack_fd" ]; then exec {_perfgate_ack_fd}>&-; fi
	_perfgate_ctl_fd='' _perfgate_ack_fd=''
	if [ -n "$PERFGATE_DIR" ] && [ -d "$PERFGATE_DIR" ]; then
		rm -f -- "$PERFGATE_DIR/ctl" "$PERFGATE_DIR/ack" "$PERFGATE_DIR/.pause" \
			"$PERFGATE_DIR/owed"
		rmdir -- "$PERFGATE_DIR" 2>/dev/null ||
			_perfgate_error cleanup "cannot remove $PERFGATE_DIR"
	fi
	PERFGATE_DIR='' PERFGATE_PID=''
	return 0
}

# _perfgate_await_exit WHAT: wait up to PERFGATE_TIMEOUT for the agent to end.
_perfgate_await_exit() {
	local deadline
	_perfgate_now_us
	deadline=$((_perfgate_now + _perfgate_tmo_us))
	while _perfgate_alive; do
		_perfgate_now_us
		if [ "$_perfgate_now" -ge "$deadline" ]; then
			_perfgate_error "$1" "the agent (pid $PERFGATE_PID) did not exit within ${PERFGATE_TIMEOUT:-5}s"
			return 1
		fi
		_perfgate_pause
	done
	return 0
}

# _perfgate_terminate WHAT: end a running agent: SIGTERM (final report), then
# SIGKILL if it has not exited within PERFGATE_TIMEOUT; collect its status.
_perfgate_terminate() {
	if _perfgate_alive; then
		kill -TERM "$PERFGATE_PID" 2>/dev/null || true
		if ! _perfgate_await_exit "$1"; then
			kill -KILL "$PERFGATE_PID" 2>/dev/null || true
		fi
	fi
	_perfgate_reap
}

# ---- the API ---------------------------------------------------------------

# perfgate_start [AGENT OPTIONS...] [-- WORKLOAD...]: start the agent (see top).
perfgate_start() {
	local agent=${PERFGATE:-perfgate} dir report=
	local -a extra
	if [ -n "$PERFGATE_PID" ] && _perfgate_alive; then
		_perfgate_error start "an agent is already running (pid $PERFGATE_PID)"
		return 1
	fi
	_perfgate_close
	PERFGATE_STATUS='' PERFGATE_REPLY='' PERFGATE_REPORT=''
	_perfgate_timeout start || return 1
	if ! command -v "$agent" >/dev/null 2>&1; then
		_perfgate_error start "agent '$agent' not found (set PERFGATE to its path)"
		return 1
	fi
	_perfgate_scan_args "$@"
	if ! dir=$(mktemp -d "${TMPDIR:-/tmp}/perfgate.XXXXXXXXXX"); then
		_perfgate_error start "cannot create a private directory"
		return 1
	fi
	if ! chmod 0700 "$dir" || ! mkfifo -m 0600 "$dir/ctl" "$dir/ack" "$dir/.pause"; then
		_perfgate_error start "cannot create FIFOs in $dir"
		rm -rf -- "$dir"
		return 1
	fi
	PERFGATE_DIR=$dir
	extra=(-D -1 --control "fifo:$dir/ctl,$dir/ack")
	if [ "$_perfgate_has_output" = 0 ]; then
		if ! report=$(mktemp "${TMPDIR:-/tmp}/perfgate-report.XXXXXXXXXX"); then
			_perfgate_error start "cannot create a report file"
			_perfgate_close
			return 1
		fi
		_perfgate_tmpfiles+=("$report")
		extra+=(-o "$report")
	fi
	if [ "$_perfgate_has_target" = 0 ]; then
		extra+=(-p "$$")
	fi
	_perfgate_owner=${BASHPID:-$$}
	_perfgate_install_trap
	# The agent opens both FIFOs read-write itself; it is started before we
	# open our ends, so neither it nor its workload inherits them.
	"$agent" "${extra[@]}" "$@" &
	PERFGATE_PID=$!
	PERFGATE_REPORT=$report
	if ! exec {_perfgate_ctl_fd}<>"$dir/ctl" || ! exec {_perfgate_ack_fd}<>"$dir/ack"; then
		_perfgate_error start "cannot open the FIFOs in $dir"
		_perfgate_terminate start
		_perfgate_close
		return 1
	fi
	if ! _perfgate_request "start (waiting for ping)" ping; then
		if _perfgate_alive; then
			_perfgate_terminate start
		else
			_perfgate_reap
		fi
		_perfgate_error start "the agent did not start: $agent ${extra[*]} $*${PERFGATE_STATUS:+ (exit status $PERFGATE_STATUS)}"
		_perfgate_close
		return 1
	fi
	return 0
}

# perfgate_enable: open the default window (perf's `enable`).
perfgate_enable() {
	_perfgate_request enable enable
}

# perfgate_disable: close the default window (perf's `disable`).
perfgate_disable() {
	_perfgate_request disable disable
}

# perfgate_ping: check that the agent answers.
perfgate_ping() {
	_perfgate_request ping ping
}

# perfgate_hello: print the agent's protocol version and capabilities (JSON).
perfgate_hello() {
	_perfgate_request hello hello || return
	printf '%s\n' "$PERFGATE_REPLY"
}

# perfgate_snapshot: have the agent print the current counts to its report.
perfgate_snapshot() {
	_perfgate_request snapshot snapshot
}

# perfgate_window_begin NAME: open the named window NAME.
perfgate_window_begin() {
	if [ $# -ne 1 ]; then
		_perfgate_error "window begin" "usage: perfgate_window_begin NAME"
		return 2
	fi
	_perfgate_request "window begin $1" "window begin $1"
}

# perfgate_window_end NAME [VAR]: close window NAME; the reply's JSON goes
# into the variable VAR (no subshell, nothing forked inside the window), or
# is printed when VAR is not given.
perfgate_window_end() {
	if [ $# -lt 1 ] || [ $# -gt 2 ] ||
	   { [ $# = 2 ] && ! [[ $2 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; }; then
		_perfgate_error "window end" "usage: perfgate_window_end NAME [VARIABLE]"
		return 2
	fi
	_perfgate_request "window end $1" "window end $1" || return
	if [ $# = 2 ]; then
		printf -v "$2" '%s' "$PERFGATE_REPLY"
	else
		printf '%s\n' "$PERFGATE_REPLY"
	fi
}

# perfgate_range_load NAME SPEC: load a range at run time (perfgate-ranges(7));
# its views are "event@NAME".  A bad SPEC: non-zero, the agent's reason shown.
perfgate_range_load() {
	if [ $# -ne 2 ]; then
		_perfgate_error "range load" "usage: perfgate_range_load NAME SPEC"
		return 2
	fi
	_perfgate_request "range load $1" "range load $1 = $2"
}

# perfgate_range_unload NAME: stop range NAME (its totals stay in the report).
perfgate_range_unload() {
	if [ $# -ne 1 ]; then
		_perfgate_error "range unload" "usage: perfgate_range_unload NAME"
		return 2
	fi
	_perfgate_request "range unload $1" "range unload $1"
}

# perfgate_cmd TEXT: send any command line; print the reply's payload, if any.
perfgate_cmd() {
	if [ $# -ne 1 ]; then
		_perfgate_error cmd "usage: perfgate_cmd 'COMMAND'"
		return 2
	fi
	_perfgate_request "$1" "$1" || return
	if [ -n "$PERFGATE_REPLY" ]; then printf '%s\n' "$PERFGATE_REPLY"; fi
}

# perfgate_stop: final report, end the agent; return its (the workload's) status.
perfgate_stop() {
	PERFGATE_STATUS=
	if [ -z "$PERFGATE_PID" ]; then
		_perfgate_error stop "no agent: call perfgate_start first"
		return 1
	fi
	if [ "${BASHPID:-$$}" != "$_perfgate_owner" ]; then
		_perfgate_error stop "must run in the shell that called perfgate_start, not in a subshell"
		return 1
	fi
	if ! _perfgate_alive; then
		_perfgate_reap
		_perfgate_error stop "the agent (pid $PERFGATE_PID) had already exited with status $PERFGATE_STATUS"
		_perfgate_close
		return "$PERFGATE_STATUS"
	fi
	if ! _perfgate_request stop stop; then
		_perfgate_terminate stop
		PERFGATE_STATUS=
		_perfgate_close
		return 1
	fi
	# The report is written before the ack; the agent now ends its workload.
	if ! _perfgate_await_exit stop; then
		_perfgate_terminate stop
		PERFGATE_STATUS=
		_perfgate_close
		return 1
	fi
	_perfgate_reap
	_perfgate_close
	return "$PERFGATE_STATUS"
}

# perfgate_wait [SECONDS]: wait for the agent to end by itself (its workload
# ended), at most SECONDS (default: no limit); return its status, clean up.
perfgate_wait() {
	local PERFGATE_TIMEOUT=${1:-}
	PERFGATE_STATUS=
	if [ -z "$PERFGATE_PID" ]; then
		_perfgate_error wait "no agent: call perfgate_start first"
		return 1
	fi
	if [ "${BASHPID:-$$}" != "$_perfgate_owner" ]; then
		_perfgate_error wait "must run in the shell that called perfgate_start, not in a subshell"
		return 1
	fi
	if [ -n "$PERFGATE_TIMEOUT" ]; then
		_perfgate_timeout wait || return 1
		_perfgate_await_exit wait || return 1
	fi
	_perfgate_reap
	_perfgate_close
	return "$PERFGATE_STATUS"
}

# perfgate_cleanup: end a still-running agent (SIGTERM), remove FIFOs and dir.
perfgate_cleanup() {
	if [ -n "$PERFGATE_PID" ] && [ "${BASHPID:-$$}" = "$_perfgate_owner" ]; then
		_perfgate_timeout cleanup 2>/dev/null || _perfgate_tmo_us=5000000
		_perfgate_terminate cleanup
	fi
	_perfgate_close
}
