#!/usr/bin/env bats
# window_stats.bats: per-call statistics of named windows (issue 11) -- the
# text report's per-call table and the --json-file document's stats,
# per_call and -I series, against values worked out here from the known
# per-call counts of marker syscalls (call i makes i getppid()s).

load helpers

setup() {
	common_setup
	control_setup
}

# run_calls N OPTIONS...: the agent (window closed at the start, OPTIONS,
# the document in $T/run.json) on N calls of window W, call i making i
# getppid()s; the run must succeed.
run_calls() {
	local i steps=()
	for i in $(seq 1 "$1"); do
		steps+=("${W[@]}" "window begin W" getppid "$i" "${W[@]}" "window end W")
	done
	shift
	pg -D -1 --control "$CTL_OPT" "$@" --json-file "$T/run.json" -- "$MARKER" "${steps[@]}"
	expect_status 0
}

# check_doc PYTHON: run PYTHON with the document as `doc` and the window
# as `w`; fails the test with the run's output when an assertion fails.
check_doc() {
	python3 - "$T/run.json" "$GETPPID" "$1" <<'PY' || { show_run; fail "document"; }
import json, math, statistics, sys
doc = json.load(open(sys.argv[1]))
ev = sys.argv[2]
w = next(w for w in doc["windows"] if w["name"] == "W")
exec(sys.argv[3])
PY
}

@test "per-call statistics of 100 calls making 1..100 syscalls: exact, in the table and the document" {
	run_calls 100 -e "$GETPPID,task-clock"
	check_doc '
values = list(range(1, 101))
st = w["stats"]["counts"][ev]
assert (st["count"], st["min"], st["max"]) == (100, 1, 100), st
assert st["mean"] == 50.5, st
assert math.isclose(st["stddev"], statistics.stdev(values), rel_tol=1e-12), st
# NumPy percentile (linear): rank q*(n-1).
assert (st["median"], st["p90"], st["p99"]) == (50.5, 90.1, 99.01) or all(
    math.isclose(a, b) for a, b in zip((st["median"], st["p90"], st["p99"]), (50.5, 90.1, 99.01))), st
pc = w["per_call"]
assert pc["kept"] == 100 and pc["sampled"] is False, pc["kept"]
assert pc["counts"][ev] == values, pc["counts"][ev]
assert all(b < e for b, e in zip(pc["begin_ns"], pc["end_ns"])), "a call ends before it begins"
assert pc["begin_ns"] == sorted(pc["begin_ns"]), "calls out of order"
assert all(e <= doc["run"]["elapsed_ns"] for e in pc["end_ns"]), "a call ends after the run"
t = w["stats"]["time_ns"]
assert t["count"] == 100 and t["min"] == min(e - b for b, e in zip(pc["begin_ns"], pc["end_ns"])), t
tc = w["stats"]["counts"]["task-clock"]
assert sum(pc["counts"]["task-clock"]) == round(tc["mean"] * 100), tc
'
	grep -Eq "^   per call +min +max +mean +stddev +median +p90 +p99$" "$T/err" ||
		{ show_run; fail "no per-call table header"; }
	grep -Eq "^   $GETPPID +1 +100 +50\.50 +29\.01 +50\.50 +90\.10 +99\.01$" "$T/err" ||
		{ show_run; fail "no per-call line for $GETPPID"; }
	grep -Eq "^   wall time \(ns\) +[0-9]+ +[0-9]+ " "$T/err" || { show_run; fail "no wall time line"; }
}

@test "--call-values caps the kept calls: a uniform sample, said so; exact statistics still" {
	run_calls 60 -e "$GETPPID" --call-values 7
	check_doc '
pc = w["per_call"]
assert pc["kept"] == 7 and pc["sampled"] is True, (pc["kept"], pc["sampled"])
kept = pc["counts"][ev]
assert len(kept) == 7 == len(set(kept)) and all(1 <= v <= 60 for v in kept), kept
# The kept calls keep their own times: call i began before call i+1.
assert pc["begin_ns"] == sorted(pc["begin_ns"]) and kept == sorted(kept), kept
st = w["stats"]["counts"][ev]
assert (st["count"], st["min"], st["max"], st["mean"]) == (60, 1, 60, 30.5), st
'
	grep -Eq "^   per call \(sampled\) +min " "$T/err" || { show_run; fail "table does not say sampled"; }
}

@test "--call-values 0 keeps no values: no quantiles, the rest exact" {
	run_calls 3 -e "$GETPPID" --call-values 0
	check_doc '
st = w["stats"]["counts"][ev]
assert (st["count"], st["mean"], st["median"], st["p99"]) == (3, 2.0, None, None), st
assert w["per_call"]["kept"] == 0 and w["per_call"]["counts"][ev] == [], w["per_call"]
'
	grep -Eq "^   $GETPPID +1 +3 +2\.00 +1\.00 +- +- +-$" "$T/err" || { show_run; fail "table line"; }
}

@test "--call-values out of range is refused with the bound" {
	pg --call-values 1000001 -e task-clock -- true
	expect_status 129
	grep -q "invalid value for --call-values" "$T/err" || { show_run; fail "message"; }
}

@test "the -I series is in the document: a window's intervals add up to its total" {
	run_calls 40 -I 10 -e "$GETPPID"
	check_doc '
series = doc["intervals"]
assert series and doc["intervals_dropped"] == 0, len(series)
times = [i["time_ns"] for i in series]
assert times == sorted(times) and times[-1] <= doc["run"]["elapsed_ns"] + 10**7, times
total = sum((i["windows"].get("W", {}).get(ev) or 0) for i in series)
assert total == sum(range(1, 41)), total
view = next(v for v in doc["views"] if v.get("window") == "W" and v["event"] == ev)
assert view["count"] == total, (view["count"], total)
assert all(i["default"][ev] is None for i in series), "default window was never opened"
'
	python3 -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator(schema).validate(json.load(open(sys.argv[2])))' \
		"$SRCDIR/docs/perfgate-report.schema.json" "$T/run.json" || fail "schema"
}
