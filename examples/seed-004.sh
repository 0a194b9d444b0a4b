#!/bin/bash
# The example script from seed 004 (the 2020 perf patch set that added -D -1,
# --ctl-fd and --ctl-fd-ack), run against perfgate instead of `perf stat`.
#
# Usage: examples/seed-004.sh [PERFGATE]
#   PERFGATE defaults to $PERFGATE, then to `perfgate` in PATH.
#
# Changed from the seed only where needed, each change marked "perfgate:":
#   - `perf stat` is the perfgate binary;
#   - events: task-clock added next to the seed's cpu-cycles;
#   - sleeps shortened (40 s run -> 4 s; 5/10/5/10 s -> 0.5/1/0.5/1 s) and
#     -I 1000 -> -I 200, so the same pattern of intervals fits in 4 s;
#   - the FIFOs live in a private directory, not in /tmp/.
# The control lines themselves ('e' / 'd' written to the ctl fd, one reply
# read from the ack fd per command) are the seed's, unchanged.

# perfgate: the agent binary.
perfgate=${1:-${PERFGATE:-perfgate}}

# perfgate: a private directory (mktemp -d: mode 0700, unpredictable name)
# instead of /tmp/.  Fixed names in a world-writable directory let another
# user create the FIFOs first (or symlinks in their place) and read or
# inject control commands.
ctl_dir=$(mktemp -d)/

ctl_fifo=${ctl_dir}perf_ctl.fifo
test -p ${ctl_fifo} && unlink ${ctl_fifo}
mkfifo ${ctl_fifo} && exec {ctl_fd}<>${ctl_fifo}

ctl_ack_fifo=${ctl_dir}perf_ctl_ack.fifo
test -p ${ctl_ack_fifo} && unlink ${ctl_ack_fifo}
mkfifo ${ctl_ack_fifo} && exec {ctl_fd_ack}<>${ctl_ack_fifo}

# perfgate: cpu-cycles is kept, as in the seed, but needs a hardware PMU:
# on a machine without one (most VMs) it prints <not supported> on every
# line.  task-clock, a software event, counts everywhere, so the script
# shows <not counted> while disabled and counts while enabled on any machine.
"${perfgate}" -D -1 -e cpu-cycles,task-clock -a -I 200 \
--ctl-fd ${ctl_fd} --ctl-fd-ack ${ctl_fd_ack} \
-- sleep 4 &
perf_pid=$!

sleep 0.5 && echo 'e' >&${ctl_fd} && read -u ${ctl_fd_ack} e1 && echo "enabled(${e1})"
sleep 1 && echo 'd' >&${ctl_fd} && read -u ${ctl_fd_ack} d1 && echo "disabled(${d1})"
sleep 0.5 && echo 'e' >&${ctl_fd} && read -u ${ctl_fd_ack} e2 && echo "enabled(${e2})"
sleep 1 && echo 'd' >&${ctl_fd} && read -u ${ctl_fd_ack} d2 && echo "disabled(${d2})"

exec {ctl_fd_ack}>&- && unlink ${ctl_ack_fifo}
exec {ctl_fd}>&- && unlink ${ctl_fifo}
# perfgate: remove the private directory too.
rmdir ${ctl_dir}

wait -n ${perf_pid}
exit $?
