#!/usr/bin/env bash
# plot-demo.sh: the run behind docs/img/perfgate-plot.png, the README's plot.
#
# usage: plot-demo.sh [BUILD_DIR [OUT.png]]    (as root, after `make check`
#                                              or `make tests/helpers/marker`)
#
# The marker helper (tests/helpers/marker) opens the default window, then 6
# times: window `parse` (3000 getppid()s between a getpgid() and a write(),
# which open and close the range, then 60 ms asleep), 300 getppid()s outside
# any window, window `compute` (1000, 2000 or 3000 getppid()s, 40 ms
# asleep).  The agent counts task-clock and getppid() with -I 25, the range
# counts getppid() between getpgid() and write(); `perfgate plot` draws it.
set -euo pipefail

build=${1:-build}
out=${2:-perfgate-plot.png}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/ctl" "$dir/ack"
c=(ctl "$dir/ctl" "$dir/ack")
steps=("${c[@]}" enable)
for i in 1 2 3 4 5 6; do
	steps+=("${c[@]}" "window begin parse" getpgid 1 getppid 3000 sleep 60 write 1
		"${c[@]}" "window end parse" getppid 300 sleep 30
		"${c[@]}" "window begin compute" getppid $((1000 * (i % 3 + 1))) sleep 40
		"${c[@]}" "window end compute" sleep 30)
done
steps+=("${c[@]}" disable)
"$build/agent/perfgate" -D -1 --control "fifo:$dir/ctl,$dir/ack" -I 25 \
	-e task-clock,syscalls:sys_enter_getppid \
	-e 'syscalls:sys_enter_getppid@syscalls:sys_enter_getpgid..syscalls:sys_enter_write' \
	-o "$dir/report" --json-file "$dir/run.json" -- "$build/tests/helpers/marker" "${steps[@]}" >/dev/null
"$build/agent/perfgate" plot "$dir/run.json" -o "$out" \
	--title "perfgate plot: windows parse and compute, a range, -I 25"
echo "plot-demo.sh: wrote $out"
