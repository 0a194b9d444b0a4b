#!/usr/bin/env bats
# formats.bats: perfgate's reports have perf stat's structure, so parsers
# written for perf keep working.  Each test runs `perf stat` and perfgate on
# the same workload and events and compares the shape of the output (columns,
# keys, value types, event names, units), not the values.

load helpers

EVENTS="task-clock,context-switches,page-faults,cycles,$GETPPID"

setup() {
	common_setup
	perf_setup
	control_setup
}

# perf_stat ARGS...: the reference run; its stderr goes to $T/perf.
perf_stat() {
	timeout --foreground -k 2 "$PG_TIMEOUT" perf stat "$@" \
		>"$T/perf.out" 2>"$T/perf" 3>&- </dev/null ||
		fail "perf stat $* failed: $(cat "$T/perf")"
}

# csv_shape FILE [interval]: one line per report line of -x output:
# "fields|event|unit|value kind" (kind: N for a number, else the text, e.g.
# <not supported>).  For interval output only the first interval is shown,
# without the value kind (perf says <not counted> for an idle interval), and
# a line whose first field is not a timestamp is marked.
csv_shape() {
	awk -F"$SEP" -v iv="${2:-}" '
	NF >= 4 && $0 !~ /^#/ {
		for (i = 1; i <= NF; i++) { f[i] = $i; sub(/^ +/, "", f[i]) }
		o = iv ? 1 : 0
		if (iv) {
			if (first == "") first = f[1]
			if (f[1] != first) next
		}
		line = NF "|" f[3 + o] "|" f[2 + o]
		if (!iv)
			line = line "|" (f[1] ~ /^[0-9]+(\.[0-9]+)?$/ ? "N" : f[1])
		else if (f[1] !~ /^[0-9]+\.[0-9]+$/)
			line = line "|timestamp?" f[1]
		print line
	}' "$1"
}

# json_shape FILE [interval]: per JSON line, its sorted keys with the type
# of each value, its event and its unit (first interval only for -I).
json_shape() {
	if command -v jq >/dev/null; then
		grep '^{' "$1" | jq -cs --arg iv "${2:-}" '
			(.[0].interval) as $t
			| .[] | select($iv == "" or .interval == $t)
			| [(to_entries | map([.key, (.value | type)]) | sort), .event, .unit]'
	elif command -v python3 >/dev/null; then
		python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
t = rows[0].get("interval") if rows else None
def ty(v):
    return {str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null", list: "array", dict: "object"}[type(v)]
for r in rows:
    if sys.argv[2] and r.get("interval") != t:
        continue
    print(json.dumps([sorted([k, ty(v)] for k, v in r.items()), r.get("event"), r.get("unit")],
                     separators=(",", ":")))
' "$1" "${2:-}"
	else
		needs python3 python3
	fi
}

# same_shape SHAPER [interval]: perfgate's report ($T/err) has the shape of
# perf's ($T/perf), line for line.
same_shape() {
	local ours theirs
	theirs=$("$1" "$T/perf" "${2:-}")
	ours=$("$1" "$T/err" "${2:-}")
	[ -n "$theirs" ] || fail "no perf output to compare with"
	if [ "$ours" != "$theirs" ]; then
		echo "--- perf stat:"; cat "$T/perf"
		echo "--- perfgate:"; cat "$T/err"
		diff <(echo "$theirs") <(echo "$ours") || true
		fail "perfgate's output does not have perf stat's shape"
	fi
}

@test "-x, final report: perf stat's columns" {
	perf_stat -x, -e "$EVENTS" -- "$MARKER" getppid 5
	pg -x, -e "$EVENTS" -- "$MARKER" getppid 5
	expect_status 0
	same_shape csv_shape
}

@test "-x, after a window: perf stat's columns" {
	perf_stat -x, -D -1 --control "fifo:$T/ch.ctl,$T/ch.ack" -e "$EVENTS" -- \
		"$MARKER" getppid 3 "${W[@]}" enable getppid 5 "${W[@]}" disable
	pg -x, -D -1 --control "fifo:$T/ch.ctl,$T/ch.ack" -e "$EVENTS" -- \
		"$MARKER" getppid 3 "${W[@]}" enable getppid 5 "${W[@]}" disable
	expect_status 0
	same_shape csv_shape
}

@test "-x';' uses the separator in every column" {
	SEP=';'
	perf_stat -x';' -e "$EVENTS" -- "$MARKER" getppid 5
	pg -x';' -e "$EVENTS" -- "$MARKER" getppid 5
	expect_status 0
	same_shape csv_shape
	expect_value "$GETPPID" 5
}

@test "-x, interval report (-I): perf stat's columns" {
	perf_stat -x, -I 100 --interval-count 2 -e "$EVENTS" -- "$MARKER" getppid 5 sleep 250
	pg -x, -I 100 --interval-count 2 -e "$EVENTS" -- "$MARKER" getppid 5 sleep 250
	# (The exit status after --interval-count is checked in cli.bats.)
	same_shape csv_shape interval
}

@test "-j final report: perf stat's keys and value types" {
	perf_stat -j -e "$EVENTS" -- "$MARKER" getppid 5
	pg -j -e "$EVENTS" -- "$MARKER" getppid 5
	expect_status 0
	same_shape json_shape
}

@test "-j interval report (-I): perf stat's keys and value types" {
	perf_stat -j -I 100 --interval-count 2 -e "$EVENTS" -- "$MARKER" getppid 5 sleep 250
	pg -j -I 100 --interval-count 2 -e "$EVENTS" -- "$MARKER" getppid 5 sleep 250
	# (The exit status after --interval-count is checked in cli.bats.)
	same_shape json_shape interval
}

@test "-j lines are JSON objects with the counts" {
	needs jq jq
	pg -j -D -1 --control "fifo:$T/ch.ctl,$T/ch.ack" -e "$GETPPID,$GETPGID" -- \
		"$MARKER" getppid 3 "${W[@]}" "enable $GETPPID" getppid 5 getpgid 2 \
		"${W[@]}" "disable $GETPPID"
	expect_status 0
	jq -e . "$T/err" >/dev/null || { show_run; fail "not JSON lines"; }
	[ "$(jq -r "select(.event == \"$GETPPID\") | .[\"counter-value\"] | tonumber" "$T/err")" = 5 ] ||
		{ show_run; fail "$GETPPID is not 5"; }
	[ "$(jq -r "select(.event == \"$GETPGID\") | .[\"counter-value\"]" "$T/err")" = "<not counted>" ] ||
		{ show_run; fail "$GETPGID is not <not counted>"; }
}

@test "no -e: perf stat's default events" {
	perf_stat -x, -- "$MARKER" getppid 1
	pg -x, -- "$MARKER" getppid 1
	expect_status 0
	same_shape csv_shape
}

# text_skeleton FILE: the text report's event lines with numbers replaced
# by N and the "# metric" comments dropped.
text_skeleton() {
	grep -E '^ +([0-9]|<not)' "$1" | grep -v 'seconds' |
		sed -E 's/#.*//; s/[0-9][0-9,.]*/N/g; s/ +/ /g; s/ $//'
}

@test "text report: perf stat's header, event lines and footer" {
	perf_stat -e "$EVENTS" -- "$MARKER" getppid 5
	pg -e "$EVENTS" -- "$MARKER" getppid 5
	expect_status 0
	# The header, exactly as perf prints it (blank line, header, blank line).
	[ "$(head -n 3 "$T/err")" = "$(printf "\n Performance counter stats for '%s getppid 5':\n\n" "$MARKER")" ] ||
		{ show_run; fail "header differs from perf's"; }
	grep -Eq '^ +[0-9]+\.[0-9]+ seconds time elapsed$' "$T/err" || { show_run; fail "no 'seconds time elapsed'"; }
	grep -Eq '^ +[0-9]+\.[0-9]+ seconds user$' "$T/err" || { show_run; fail "no 'seconds user'"; }
	grep -Eq '^ +[0-9]+\.[0-9]+ seconds sys$' "$T/err" || { show_run; fail "no 'seconds sys'"; }
	grep -Eq "^ +5 +$GETPPID( |\$)" "$T/err" || { show_run; fail "no line with 5 $GETPPID"; }
	[ "$(text_skeleton "$T/err")" = "$(text_skeleton "$T/perf")" ] || {
		diff <(text_skeleton "$T/perf") <(text_skeleton "$T/err") || true
		show_run; fail "event lines differ from perf's"
	}
}

@test "text report: perf stat's header for -a" {
	pg -a -e task-clock -- "$MARKER" getppid 1
	expect_status 0
	grep -qx " Performance counter stats for 'system wide':" "$T/err" ||
		{ show_run; fail "no system-wide header"; }
}

@test "text interval report: perf stat's column header and <not counted>" {
	pg -D -1 -I 100 --interval-count 2 -e "task-clock,$GETPPID" -- "$MARKER" sleep 250
	# (The exit status after --interval-count is checked in cli.bats.)
	perf_stat -D -1 -I 100 --interval-count 2 -e "task-clock,$GETPPID" -- "$MARKER" sleep 250
	[ "$(grep -m1 '^#' "$T/err")" = "$(grep -m1 '^#' "$T/perf")" ] ||
		{ show_run; fail "interval header differs from perf's: $(grep -m1 '^#' "$T/perf")"; }
	grep -Eq "^ +[0-9]+\.[0-9]+ +<not counted> +$GETPPID" "$T/err" ||
		{ show_run; fail "no <not counted> interval line"; }
}
