#!/usr/bin/env bash
# ci-bench.sh: a windowed CI benchmark driven through clients/shell/perfgate.sh.
#
# usage: ci-bench.sh [N [OUT.json]] [-- COMMAND [ARGS...]]
#
# Runs the benchmarked work once as a warm-up, outside any window, then N
# timed repetitions, each inside `window begin rep` ... `window end rep`.
# Prints one line per repetition with that repetition's counts (taken from
# the window-end reply, so no report parsing is needed), then the agent's
# report of the whole run, and writes the run as one JSON document
# (--json-file) to OUT.json, for the CI system to store and compare.
#
#   N         repetitions (default 5)
#   OUT.json  the JSON document (default ./ci-bench.json)
#   COMMAND   the work to benchmark (default: a deterministic shell loop of
#             CI_BENCH_ITER printf's to /dev/null, i.e. CI_BENCH_ITER write()s)
#
# Environment:
#   PERFGATE         the agent binary (default: perfgate from PATH)
#   PERFGATE_SH      perfgate.sh (default: ../clients/shell/perfgate.sh from here)
#   CI_BENCH_EVENTS  events to count (default task-clock,syscalls:sys_enter_write)
#   CI_BENCH_ITER    iterations of the default loop (default 1000)
#   CI_BENCH_PARSER  jq or python3: what reads the replies' JSON (default:
#                    jq when installed, else python3)
#
# The agent attaches to this script (perfgate.sh's default, -p $$), so the
# script and everything it starts are measured, but only while a window is
# open.  Note: the client's own `window end rep` line is written inside the
# window, so with the default loop sys_enter_write is CI_BENCH_ITER + 1 per
# repetition, exactly.
#
# Output (tab-separated): a header "rep  time_ns  EVENT...", then one line
# per repetition; "-" for an event the machine does not support.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${PERFGATE_SH:=$here/../clients/shell/perfgate.sh}"
: "${CI_BENCH_EVENTS:=task-clock,syscalls:sys_enter_write}"
: "${CI_BENCH_ITER:=1000}"
if [ -z "${CI_BENCH_PARSER:-}" ]; then
	CI_BENCH_PARSER=python3
	if command -v jq >/dev/null 2>&1; then CI_BENCH_PARSER=jq; fi
fi

n=5
out=ci-bench.json
if [ $# -gt 0 ] && [ "$1" != -- ]; then n=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != -- ]; then out=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" = -- ]; then shift; fi
work=("$@")

if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: ci-bench.sh [N [OUT.json]] [-- COMMAND [ARGS...]] (N: a positive count)" >&2
	exit 2
fi
if ! [[ $CI_BENCH_ITER =~ ^[0-9]+$ ]]; then
	echo "ci-bench.sh: CI_BENCH_ITER='$CI_BENCH_ITER' is not a count" >&2
	exit 2
fi

# shellcheck source=../clients/shell/perfgate.sh
source "$PERFGATE_SH"

# bench_work: one run of the benchmarked work.
bench_work() {
	local i
	if [ ${#work[@]} -gt 0 ]; then
		"${work[@]}"
	else
		for ((i = 0; i < CI_BENCH_ITER; i++)); do
			printf '%d\n' "$i"
		done >/dev/null
	fi
}

# The JSON of a window-end reply, parsed with jq or python3.
if [ "$CI_BENCH_PARSER" = jq ]; then
	# json_header JSON: the column names: time_ns, then the events.
	json_header() {
		jq -r '["time_ns"] + (.call.counts | keys_unsorted) | @tsv' <<<"$1"
	}
	# json_row JSON: this call's open time and counts ("-" for null).
	json_row() {
		jq -r '[.call.time_ns] + [.call.counts[] | if . == null then "-" else . end] | @tsv' <<<"$1"
	}
else
	json_header() {
		python3 -c 'import json, sys
d = json.loads(sys.argv[1])
print("\t".join(["time_ns"] + list(d["call"]["counts"])))' "$1"
	}
	json_row() {
		python3 -c 'import json, sys
d = json.loads(sys.argv[1])
vals = [d["call"]["time_ns"]] + list(d["call"]["counts"].values())
print("\t".join("-" if v is None else str(v) for v in vals))' "$1"
	}
fi

perfgate_start -e "$CI_BENCH_EVENTS" --json-file "$out"

bench_work # warm-up: no window is open, nothing is counted

for ((rep = 1; rep <= n; rep++)); do
	perfgate_window_begin rep
	bench_work
	perfgate_window_end rep >/dev/null # the JSON is in PERFGATE_REPLY
	if [ "$rep" = 1 ]; then
		header=$(json_header "$PERFGATE_REPLY")
		printf 'rep\t%s\n' "$header"
	fi
	row=$(json_row "$PERFGATE_REPLY")
	printf '%d\t%s\n' "$rep" "$row"
done

perfgate_stop
echo
cat "$PERFGATE_REPORT"
echo "ci-bench: $n repetitions; run written to $out"
