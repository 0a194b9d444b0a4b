"""perfgate diff: compare two runs, with a significance test per view.

    perfgate diff [--json] [--fail-if 'VIEW OP VALUE[%]']... BASE.json NEW.json

Views of the two --json-file documents are matched by event, gate and
window or range (the names the reports use: `event`, `event@WINDOW`,
`event@LABEL`), and for each the change in mean is shown.  A named
window has a value per call (windows[].per_call), and so does its wall
time (`wall-time@WINDOW`): with at least 2 calls on each side the change
gets a 95% confidence interval and Welch's t-test (SciPy's
ttest_ind(equal_var=False); the interval from the Welch-Satterthwaite
degrees of freedom and t.ppf).  The default window and range views have a
single value per run: there is no spread to test, and the plain change is
shown.

--fail-if is the CI gate: it fails (exit 1) only when a change is past its
threshold *and* significant, p < 0.05.  Exit statuses: 0 no gate failed,
1 a gate failed, 2 usage error or bad input (perfgate(1), DIFF).
"""

import json
import math
import re
import sys
import warnings

import numpy as np
from scipy import stats

import perfgate_doc as pd
from perfgate_doc import ToolError

ALPHA = 0.05
CONFIDENCE = 0.95

PROG = "perfgate diff"


class Side:
    """One run's values of one view: per-call values or a single value."""

    def __init__(self, values, calls=None, sampled=False, note=None):
        self.values = values          # list of numbers, or None (not supported)
        self.calls = calls            # calls in the run (windows), else None
        self.sampled = sampled
        self.note = note

    @property
    def n(self):
        return len(self.values) if self.values is not None else 0


def _view_side(doc, view):
    status = view.get("status")
    if status == "not supported":
        return Side(None, note="not supported")
    if view["gate"] != "window":
        return Side([view.get("count") or 0])
    w = pd.windows(doc).get(view["window"])
    if w is None:
        return Side([view.get("count") or 0])
    vals = pd.call_values(w, view["event"])
    if vals is None:
        return Side(None, note="not supported")
    calls = w.get("calls", len(vals))
    if not vals:
        # --call-values 0 keeps no values: the exact mean per call is in stats.
        st = ((w.get("stats") or {}).get("counts") or {}).get(view["event"])
        if st and st.get("count"):
            return Side([st["mean"]], calls, note="per-call values not kept")
        return Side([], calls, note="no calls")
    return Side(list(vals), calls, bool(w["per_call"].get("sampled")))


def _wall_side(doc, name):
    w = pd.windows(doc)[name]
    vals = pd.call_values(w, pd.WALL_TIME)
    return Side(vals, w.get("calls", len(vals)), bool(w["per_call"].get("sampled")),
                None if vals else "no calls")


def _rows(base, new):
    """(name, gate, event, window, range, Side base, Side new) for every view
    in both runs, and the names only in one."""
    def keyed(doc):
        out = {}
        for v in doc["views"]:
            out[(v["gate"], pd.view_name(v))] = v
        return out

    kb, kn = keyed(base), keyed(new)
    rows = []
    for key, vb in kb.items():
        if key not in kn:
            continue
        vn = kn[key]
        rows.append({"view": key[1], "gate": key[0], "event": vb["event"],
                     "window": vb.get("window"), "range": vb.get("range"),
                     "sides": (_view_side(base, vb), _view_side(new, vn))})
    wb, wn = pd.windows(base), pd.windows(new)
    for name in wb:
        if name in wn:
            rows.append({"view": f"{pd.WALL_TIME}@{name}", "gate": "window",
                         "event": pd.WALL_TIME, "window": name, "range": None,
                         "sides": (_wall_side(base, name), _wall_side(new, name))})
    only_base = [k[1] for k in kb if k not in kn]
    only_new = [k[1] for k in kn if k not in kb]
    return rows, only_base, only_new


def compare(a, b):
    """The change from values A (base) to B (new): a dict with the means,
    the change, its 95% CI and Welch's test when both sides have spread."""
    out = {"n": [len(a), len(b)], "mean": [None, None], "stddev": [None, None],
           "change": None, "change_pct": None, "ci": None, "ci_pct": None,
           "test": None, "t": None, "df": None, "p": None, "significant": False}
    if not a or not b:
        return out
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ma, mb = float(xa.mean()), float(xb.mean())
    out["mean"] = [ma, mb]
    out["change"] = mb - ma
    out["change_pct"] = (mb - ma) / abs(ma) * 100 if ma else None
    if len(a) < 2 or len(b) < 2:
        return out
    va, vb = float(xa.var(ddof=1)), float(xb.var(ddof=1))
    out["stddev"] = [math.sqrt(va), math.sqrt(vb)]
    out["test"] = "welch"
    delta = mb - ma
    if va == 0 and vb == 0:
        # Every call of each side gave the same value: any difference is
        # certain (t is infinite), none is none.
        out["p"] = 0.0 if delta else 1.0
        out["ci"] = [delta, delta]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.ttest_ind(xb, xa, equal_var=False)
        sa, sb = va / len(a), vb / len(b)
        se = math.sqrt(sa + sb)
        df = (sa + sb) ** 2 / (sa ** 2 / (len(a) - 1) + sb ** 2 / (len(b) - 1))
        half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, df)) * se
        out.update(t=float(res.statistic), df=df, p=float(res.pvalue),
                   ci=[delta - half, delta + half])
    if ma and out["ci"]:
        out["ci_pct"] = [c / abs(ma) * 100 for c in out["ci"]]
    out["significant"] = out["p"] is not None and out["p"] < ALPHA
    return out


_GATE = re.compile(r"^\s*(?P<view>\S.*?)\s*(?P<op>[<>])\s*(?P<value>[+-]?(\d+(\.\d*)?|\.\d+))"
                   r"\s*(?P<pct>%)?\s*$")


def parse_gate(text):
    """'VIEW > +5%' -> (view, op, value, relative)."""
    m = _GATE.match(text)
    if not m or "<" in m["view"] or ">" in m["view"]:
        raise ToolError(f"--fail-if '{text}': expected VIEW > VALUE or VIEW < VALUE, the value "
                        f"a change in percent ('task-clock@bench > +5%') or in the view's "
                        f"unit ('task-clock@bench > 100000')")
    return m["view"], m["op"], float(m["value"]), bool(m["pct"])


def apply_gates(gates, rows):
    results = []
    for text in gates:
        view, op, value, relative = parse_gate(text)
        row = next((r for r in rows if r["view"] == view), None)
        if row is None:
            names = ", ".join(r["view"] for r in rows)
            raise ToolError(f"--fail-if '{text}': no view '{view}' in both runs "
                            f"(they have: {names})")
        c = row["result"]
        if relative:
            change = c["change_pct"]
            if change is None and c["change"]:
                change = math.copysign(math.inf, c["change"])
        else:
            change = c["change"]
        past = change is not None and (change > value if op == ">" else change < value)
        failed = past and c["significant"]
        if past and not failed:
            why = ("no spread to test: a single value per run" if c["test"] is None
                   else f"not significant (p = {c['p']:.3g} >= {ALPHA})")
        elif failed:
            why = f"past the threshold and significant (p = {c['p']:.3g} < {ALPHA})"
        else:
            why = "within the threshold"
        results.append({"gate": text, "view": view, "op": op, "threshold": value,
                        "relative": relative, "change": pd.finite(change), "past": past,
                        "significant": c["significant"], "failed": failed, "why": why})
    return results


def diff(base, new, base_name="BASE", new_name="NEW", gates=()):
    """Compare two checked documents; returns the report as a dict (the
    --json output).  Raises ToolError for runs that cannot be compared."""
    eb = [e["name"] for e in base["events"]]
    en = [e["name"] for e in new["events"]]
    if set(eb) != set(en):
        only_b = [e for e in eb if e not in en]
        only_n = [e for e in en if e not in eb]
        raise ToolError(f"the runs counted different events: only in {base_name}: "
                        f"{', '.join(only_b) or '-'}; only in {new_name}: "
                        f"{', '.join(only_n) or '-'}")
    rows, only_b, only_n = _rows(base, new)
    for r in rows:
        sb, sn = r.pop("sides")
        r["calls"] = [sb.calls, sn.calls]
        r["sampled"] = sb.sampled or sn.sampled
        if sb.values is None or sn.values is None:
            r["result"] = compare([], [])
            r["note"] = "not supported"
            continue
        r["result"] = compare(sb.values, sn.values)
        notes = [n for n in (sb.note, sn.note) if n]
        if r["result"]["test"] is None and r["result"]["mean"][0] is not None:
            notes.append("single value: no spread to test")
        elif r["result"]["test"] and r["result"]["t"] is None:
            notes.append("no variance: every call the same")
        if r["sampled"]:
            notes.append("per-call values sampled")
        r["note"] = "; ".join(dict.fromkeys(notes)) or None
    results = apply_gates(gates, rows)
    for r in rows:
        c = r["result"]
        for k in ("change", "change_pct", "t", "df", "p"):
            c[k] = pd.finite(c[k])
        for k in ("mean", "stddev", "ci", "ci_pct"):
            if c[k] is not None:
                c[k] = [pd.finite(x) for x in c[k]]
    failed = any(g["failed"] for g in results)
    return {"base": base_name, "new": new_name, "alpha": ALPHA, "confidence": CONFIDENCE,
            "rows": rows, "only_in_base": only_b, "only_in_new": only_n, "gates": results,
            "status": pd.EXIT_GATE_FAILED if failed else pd.EXIT_OK}


def _num(x, signed=False):
    if x is None:
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    s = f"{x:+.2f}" if signed else f"{x:.2f}"
    if s.endswith(".00") and abs(x) >= 1000:
        s = s[:-3]
    return s


def _p(p):
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def format_text(report):
    head = ["view", "calls", "base mean", "new mean", "change", "change %",
            "95% CI of change", "p", ""]
    lines = []
    for r in report["rows"]:
        c = r["result"]
        calls = "/".join("-" if n is None else str(n) for n in r["calls"]) \
            if r["gate"] == "window" else "-"
        if c["ci"] is not None:
            ci = f"[{_num(c['ci'][0], True)}, {_num(c['ci'][1], True)}]"
        else:
            ci = "-"
        pct = "-" if c["change_pct"] is None else f"{c['change_pct']:+.1f}%"
        sig = "*" if c["significant"] else ""
        note = r["note"] or ""
        lines.append([r["view"], calls, _num(c["mean"][0]), _num(c["mean"][1]),
                      _num(c["change"], True), pct, ci, _p(c["p"]), (sig + " " + note).strip()])
    widths = [max(len(x[i]) for x in lines + [head]) for i in range(len(head) - 1)]
    out = [f"perfgate diff: {report['base']} -> {report['new']}", ""]

    def fmt(cols):
        left = cols[0].ljust(widths[0])
        rest = "  ".join(c.rjust(w) for c, w in zip(cols[1:-1], widths[1:]))
        return f"{left}  {rest}  {cols[-1]}".rstrip()

    out.append(fmt(head))
    out.extend(fmt(x) for x in lines)
    out.append("")
    out.append(f"* significant: p < {report['alpha']} in Welch's t-test on the per-call values; "
               f"CI: {report['confidence']:.0%} confidence interval of the change in mean")
    if report["only_in_base"]:
        out.append(f"only in {report['base']}: {', '.join(report['only_in_base'])}")
    if report["only_in_new"]:
        out.append(f"only in {report['new']}: {', '.join(report['only_in_new'])}")
    for g in report["gates"]:
        verdict = "FAILED" if g["failed"] else "ok"
        out.append(f"--fail-if '{g['gate']}': {verdict}: {g['why']}")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = pd.ArgumentParser(prog=PROG, description="Compare two perfgate --json-file runs, view by view, "
                 "with a 95%% confidence interval and Welch's t-test on the per-call values.",
                 epilog="Exit status: 0 no --fail-if gate failed, 1 a gate failed (a change past "
                 "its threshold and significant, p < 0.05), 2 usage error or bad input.")
    ap.add_argument("base", metavar="BASE.json")
    ap.add_argument("new", metavar="NEW.json")
    ap.add_argument("--json", action="store_true", help="print the comparison as JSON")
    ap.add_argument("--fail-if", action="append", default=[], metavar="'VIEW OP VALUE[%]'",
                    help="exit 1 when VIEW's change is past VALUE (> or <; %% for a relative "
                    "change) and significant (p < 0.05); repeatable")
    args = ap.parse_args(argv)
    try:
        for g in args.fail_if:
            parse_gate(g)
        base = pd.load(args.base)
        new = pd.load(args.new)
        report = diff(base, new, args.base, args.new, args.fail_if)
    except ToolError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return pd.EXIT_BAD_INPUT
    if args.json:
        json.dump(report, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(report))
    for g in report["gates"]:
        if g["failed"]:
            print(f"{PROG}: --fail-if '{g['gate']}' failed: change "
                  f"{_num(g['change'], True)}{'%' if g['relative'] else ''}, {g['why']}",
                  file=sys.stderr)
    return report["status"]
