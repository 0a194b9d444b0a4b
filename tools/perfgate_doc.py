"""perfgate_doc: reading perfgate's --json-file documents, for the tools.

perfgate diff and perfgate plot (tools/perfgate-diff, tools/perfgate-plot)
read the run document the agent writes with --json-file (schema version 2,
docs/json-report.md).  This module loads one, checks that it is a complete
document of the version the tools read, and turns it into views keyed the
way the reports name them: ``event`` for the default window,
``event@WINDOW`` for a named window, ``event@LABEL`` for a range.

Every problem with an input is a ToolError, whose text is the message the
tools print (exit status 2): no traceback reaches the user.
"""

import argparse
import json
import math
import sys

SCHEMA_VERSION = 2

# The tools' exit statuses (perfgate(1), DIFF AND PLOT).
EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2

# The metric of a window's per-call wall times, next to its events.
WALL_TIME = "wall-time"


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error exits with EXIT_BAD_INPUT (2), as bad
    input does, after the usage line and "PROG: MESSAGE"."""

    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: {message}\n")
        sys.exit(EXIT_BAD_INPUT)


class ToolError(Exception):
    """A problem with the tool's input, said in words for the user."""


def _need(cond, path, what):
    if not cond:
        raise ToolError(f"{path}: not a perfgate --json-file document: {what}")


def load(path):
    """Load and check the document at PATH; returns the parsed JSON."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ToolError(f"{path}: cannot read: {e.strerror}") from None
    if not raw.strip():
        raise ToolError(f"{path}: empty file: not a perfgate --json-file document")
    try:
        doc = json.loads(raw)
    except UnicodeDecodeError:
        raise ToolError(f"{path}: not a perfgate --json-file document: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        # perfgate writes one object: text that stops before its closing
        # brace is a document cut short (a run killed while writing it, a
        # copy that stopped), whatever the parser tripped over first.
        if e.pos >= len(raw.rstrip()) or not raw.rstrip().endswith(b"}"):
            raise ToolError(f"{path}: truncated document: the JSON ends early "
                            f"(at byte {len(raw)}); was the run or the copy cut short?") from None
        raise ToolError(f"{path}: not valid JSON: {e.msg} (line {e.lineno}, "
                        f"column {e.colno})") from None
    check(doc, path)
    return doc


def check(doc, path):
    """Check the parts of a document the tools read; raises ToolError."""
    _need(isinstance(doc, dict) and isinstance(doc.get("perfgate"), dict),
          path, "no 'perfgate' object")
    version = doc["perfgate"].get("schema")
    if version != SCHEMA_VERSION:
        raise ToolError(f"{path}: schema version {version}, but this tool reads version "
                        f"{SCHEMA_VERSION} (docs/json-report.md); make the run again with "
                        f"this perfgate")
    for key, kind in (("events", list), ("views", list), ("windows", list),
                      ("intervals", list), ("run", dict)):
        _need(isinstance(doc.get(key), kind), path, f"'{key}' missing or not a {kind.__name__}")
    for i, e in enumerate(doc["events"]):
        _need(isinstance(e, dict) and isinstance(e.get("name"), str), path,
              f"events[{i}] has no name")
    for i, v in enumerate(doc["views"]):
        _need(isinstance(v, dict) and isinstance(v.get("event"), str)
              and v.get("gate") in ("default", "window", "range"), path,
              f"views[{i}] has no event or gate")
        _need(v.get("count") is None or isinstance(v.get("count"), int), path,
              f"views[{i}].count is not an integer")
        if v["gate"] != "default":
            _need(isinstance(v.get(v["gate"]), str), path, f"views[{i}] has no {v['gate']} name")
    for i, w in enumerate(doc["windows"]):
        _need(isinstance(w, dict) and isinstance(w.get("name"), str), path,
              f"windows[{i}] has no name")
        pc = w.get("per_call")
        _need(isinstance(pc, dict) and isinstance(pc.get("begin_ns"), list)
              and isinstance(pc.get("end_ns"), list) and isinstance(pc.get("counts"), dict)
              and len(pc["begin_ns"]) == len(pc["end_ns"]), path,
              f"windows[{i}].per_call missing or inconsistent")
        for ev, vals in pc["counts"].items():
            _need(vals is None or (isinstance(vals, list) and len(vals) == len(pc["begin_ns"])),
                  path, f"windows[{i}].per_call.counts['{ev}'] does not match its calls")
        for key in ("begin_ns", "end_ns"):
            _need(all(isinstance(x, int) for x in pc[key]), path,
                  f"windows[{i}].per_call.{key} holds a value that is not an integer")
        for ev, vals in pc["counts"].items():
            _need(vals is None or all(isinstance(x, (int, float)) for x in vals), path,
                  f"windows[{i}].per_call.counts['{ev}'] holds a value that is not a number")
        _need(w.get("stats") is None or isinstance(w["stats"], dict), path,
              f"windows[{i}].stats is not an object")
    for i, iv in enumerate(doc["intervals"]):
        _need(isinstance(iv, dict) and isinstance(iv.get("time_ns"), int)
              and isinstance(iv.get("default"), dict)
              and isinstance(iv.get("windows", {}), dict)
              and all(isinstance(x, dict) for x in iv.get("windows", {}).values())
              and isinstance(iv.get("ranges", {}), dict), path, f"intervals[{i}] is malformed")
        for counts in [iv["default"], iv.get("ranges", {})] + list(iv.get("windows", {}).values()):
            _need(all(x is None or isinstance(x, (int, float)) for x in counts.values()), path,
                  f"intervals[{i}] holds a count that is not a number")
    _need(isinstance(doc["run"].get("command", []), list)
          and all(isinstance(x, str) for x in doc["run"].get("command", [])), path,
          "run.command is not an array of strings")


def view_name(view):
    """The name the reports give a view: event, event@window, event@range."""
    if view["gate"] == "window":
        return f"{view['event']}@{view['window']}"
    if view["gate"] == "range":
        return f"{view['event']}@{view['range']}"
    return view["event"]


def events(doc):
    """Every event with a panel or a row: those of -e, then range-only events."""
    names = [e["name"] for e in doc["events"]]
    for v in doc["views"]:
        if v["event"] not in names:
            names.append(v["event"])
    return names


def windows(doc):
    """Window name -> window object."""
    return {w["name"]: w for w in doc["windows"]}


def call_values(window, metric):
    """A window's kept per-call values of METRIC (an event, or WALL_TIME);
    None when the event is not supported (null in the document)."""
    pc = window["per_call"]
    if metric == WALL_TIME:
        return [e - b for b, e in zip(pc["begin_ns"], pc["end_ns"])]
    return pc["counts"].get(metric)


def finite(x):
    """x as JSON can carry it: None for NaN and infinities."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return x
