#!/usr/bin/env bats
# seed.bats: the seed 004 script (examples/seed-004.sh: the 2020 perf patch
# set's example, perf stat replaced by perfgate, sleeps shortened) runs to
# the end, gets one ack per e/d, and its interval lines show <not counted>
# while the events are disabled and counts while they are enabled.

load helpers

# The script runs once for the file (4 s); the tests read its output.
# stdout and stderr share one file, so the order of the script's echo lines
# and the agent's interval lines is kept.
setup_file() {
	SEED=$SRCDIR/examples/seed-004.sh
	SEED_OUT=$BATS_FILE_TMPDIR/seed
	SEED_STATUS=0
	timeout --foreground -k 2 15 bash "$SEED" "$PERFGATE" >"$SEED_OUT" 2>&1 3>&- </dev/null ||
		SEED_STATUS=$?
	export SEED SEED_OUT SEED_STATUS
}

setup() {
	common_setup
	[ -f "$SEED" ] || fail "no $SEED"
	cp "$SEED_OUT" "$T/err"
	status=$SEED_STATUS
}

@test "seed 004 script: exit 0, an ack for every e and d" {
	expect_status 0
	# bash's read drops the reply's NUL: "ack\n\0" reads as "ack".
	[ "$(grep -E '^(en|dis)abled\(' "$SEED_OUT" | tr '\n' ' ')" = \
	  "enabled(ack) disabled(ack) enabled(ack) disabled(ack) " ] ||
		{ show_run; fail "replies are not enabled(ack) disabled(ack) enabled(ack) disabled(ack)"; }
}

@test "seed 004 script: <not counted> while disabled, counts while enabled" {
	expect_status 0
	# Split the output in the five phases the script's replies mark, and
	# count task-clock interval lines with a count / with <not counted>.
	awk '
		BEGIN { phase = 0 }
		/^(en|dis)abled\(/ { phase++; next }
		/^ *[0-9]+\.[0-9]+ +<not counted> +msec +task-clock/ { nc[phase]++; next }
		/^ *[0-9]+\.[0-9]+ +[0-9][0-9,.]* +msec +task-clock/ { c[phase]++; next }
		END {
			for (p = 0; p <= 4; p++)
				printf "phase %d: %d counted, %d not counted\n", p, c[p], nc[p]
		}' "$SEED_OUT" >"$T/phases"
	cat "$T/phases"
	# Disabled phases (between d and e, after the last d) have <not
	# counted> lines; enabled phases (1 s each) have counts.
	grep -q '^phase 1: [1-9][0-9]* counted' "$T/phases" || { show_run; fail "no counts in the first window"; }
	grep -q '^phase 2: .*, [1-9][0-9]* not counted$' "$T/phases" || { show_run; fail "no <not counted> between the windows"; }
	grep -q '^phase 3: [1-9][0-9]* counted' "$T/phases" || { show_run; fail "no counts in the second window"; }
	grep -q '^phase 4: .*, [1-9][0-9]* not counted$' "$T/phases" || { show_run; fail "no <not counted> after the last disable"; }
	# -D -1 starts disabled: the first interval line, if it comes before
	# the first enable, is <not counted>.  None is required there: whether
	# the agent prints one in the script's first 0.5 s depends on how fast
	# it starts.  (Only the first: a line of the interval the enable falls
	# in may be printed before the script echoes the ack, and count.)
	! awk '/^enabled\(/ { exit } /^ *[0-9]+\.[0-9]+ .*task-clock/ { print; exit }' "$SEED_OUT" |
		grep -qv '<not counted>' || { show_run; fail "the first interval was counted before any enable"; }
}

@test "seed 004 script: -a task-clock covers every CPU (about nproc x 200 ms)" {
	expect_status 0
	# System-wide task-clock counts each CPU's time, as perf stat -a does:
	# an interval wholly inside a window shows about nproc x its length.
	# The length is measured from the interval's timestamps, not taken as
	# the nominal 200 ms: on a busy machine an interval may last 230 ms.
	local best
	best=$(awk -v n="$(nproc)" '
		/^ *[0-9]+\.[0-9]+ / { t = $1 + 0 }
		/^ *[0-9]+\.[0-9]+ +[0-9][0-9,.]* +msec +task-clock/ && prev > 0 {
			v = $2; gsub(/,/, "", v)
			r = v / (n * (t - prev) * 1000)
			if (r > m) m = r
		}
		/task-clock/ { prev = t }
		END { printf "%d\n", m * 100 }' "$SEED_OUT")
	[ "$best" -ge 90 ] && [ "$best" -le 110 ] ||
		{ show_run; fail "fullest interval task-clock is ${best}% of nproc x its length, expected about 100%"; }
}

@test "seed 004 script: cpu-cycles prints <not supported> without a PMU" {
	if [ -e /sys/bus/event_source/devices/cpu ] ||
	   [ -e /sys/bus/event_source/devices/cpu_core ]; then
		skip "this machine has a hardware PMU"
	fi
	expect_status 0
	grep -Eq '^ *[0-9]+\.[0-9]+ +<not supported> +cpu-cycles' "$SEED_OUT" ||
		{ show_run; fail "no <not supported> cpu-cycles interval line"; }
	! grep -Eq '^ *[0-9]+\.[0-9]+ +[0-9][0-9,.]* +cpu-cycles' "$SEED_OUT" ||
		{ show_run; fail "cpu-cycles counted without a PMU"; }
}

@test "seed 004 script: with no argument and no \$PERFGATE, perfgate from PATH" {
	status=0
	mkdir "$T/bin"
	ln -s "$PERFGATE" "$T/bin/perfgate"
	env -u PERFGATE PATH="$T/bin:$PATH" timeout --foreground -k 2 15 \
		bash "$SEED" >"$T/err" 2>&1 3>&- </dev/null || status=$?
	expect_status 0
	[ "$(grep -c '^enabled(ack)$' "$T/err")" = 2 ] || { show_run; fail "no acks"; }
}
