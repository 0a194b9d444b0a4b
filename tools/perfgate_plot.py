"""perfgate plot: draw a run from its --json-file document.

    perfgate plot RUN.json -o run.png|run.svg [-e EVENT]... [--title TEXT]

One panel per event.  With an -I series (the document's `intervals`), each
panel shows what the default window, each named window and each range
view of that event counted per interval, as step lines over the run's
time, and each window call is shaded from its begin to its end
(windows[].per_call), in the window's colour.  Without -I it draws the
per-call values of each window as bars, one group per window.

It stays readable at any size: panels go into 2 or 3 columns past 6
events; a window with more than MAX_SPANS calls is drawn as at most
MAX_SPANS spans (the calls separated by the smallest gaps are merged), and
bars past MAX_BARS per window are binned (bar: the bin's mean, line: its
min to max).  Each window is labelled once, not once per call.

plot_run() returns the matplotlib Figure, for tests and other callers;
main() is the command (exit 0, or 2 for usage errors and bad input).
"""

import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402  (after choosing the backend)

import perfgate_doc as pd  # noqa: E402
from perfgate_doc import ToolError  # noqa: E402

PROG = "perfgate plot"
MAX_SPANS = 100     # shaded spans per window and panel
MAX_BARS = 100      # bars per window and panel
FORMATS = ("png", "svg", "pdf")


def merge_spans(begins, ends, limit=MAX_SPANS):
    """Calls (begin, end) as at most LIMIT spans (begin, end, calls): when
    there are more, the calls separated by the smallest gaps are merged."""
    calls = sorted(zip(begins, ends))
    if not calls:
        return []
    # Overlapping calls (nested windows) form one span first.
    spans = []
    for b, e in calls:
        if spans and b <= spans[-1][1]:
            s = spans[-1]
            spans[-1] = (s[0], max(s[1], e), s[2] + 1)
        else:
            spans.append((b, e, 1))
    if len(spans) <= limit:
        return spans
    gaps = sorted(range(1, len(spans)), key=lambda i: spans[i][0] - spans[i - 1][1],
                  reverse=True)
    cuts = sorted(gaps[:limit - 1])
    out, start = [], 0
    for cut in cuts + [len(spans)]:
        group = spans[start:cut]
        out.append((group[0][0], max(s[1] for s in group), sum(s[2] for s in group)))
        start = cut
    return out


def _layout(n):
    ncols = 1 if n <= 6 else 2 if n <= 12 else 3
    return ncols, math.ceil(n / ncols)


def _unit(doc, event):
    e = next((e for e in doc["events"] if e["name"] == event), None)
    return "ns" if e and e.get("unit") == "ns" else "count"


def _supported(doc, event):
    e = next((e for e in doc["events"] if e["name"] == event), None)
    if e is not None:
        return e.get("supported", True)
    return any(v["event"] == event and v.get("status") != "not supported" for v in doc["views"])


def _window_colors(doc):
    # C0 is the default window's line; windows take the next colours.
    return {w["name"]: f"C{(i + 1) % 10}" for i, w in enumerate(doc["windows"])}


def _draw_series(ax, doc, event, colors, spans_of, label_windows):
    series = doc["intervals"]
    # An interval's value holds from the previous line's time (the run's
    # start for the first) to its own: steps "pre", from 0.
    x = [0.0] + [i["time_ns"] / 1e9 for i in series]

    def line(values, **kw):
        y = [math.nan if v is None else v for v in values]
        if any(not math.isnan(v) for v in y):
            ax.step(x, y[:1] + y, where="pre", linewidth=1.2, **kw)

    line([i["default"].get(event) for i in series], color="0.15", label="default")
    for w in doc["windows"]:
        name = w["name"]
        line([(i.get("windows") or {}).get(name, {}).get(event) for i in series],
             color=colors[name], label=f"@{name}")
    style = 0
    for v in doc["views"]:
        if v["gate"] != "range" or v["event"] != event:
            continue
        key = pd.view_name(v)
        line([(i.get("ranges") or {}).get(key) for i in series], linestyle="--",
             color=f"C{(len(colors) + 1 + style) % 10}",
             label="@" + v["range"].replace("..", "..\n"))  # range labels are long
        style += 1
    for w in doc["windows"]:
        pc = w["per_call"]
        spans = spans_of[w["name"]]
        for k, (b, e, n) in enumerate(spans):
            label = f"{w['name']}: {w.get('calls', len(pc['begin_ns']))} calls" if k == 0 else None
            patch = ax.axvspan(b / 1e9, e / 1e9, color=colors[w["name"]], alpha=0.18,
                               linewidth=0, label=label)
            patch.set_gid(f"call-span:{w['name']}")
        if spans and label_windows:
            ax.text(spans[0][0] / 1e9, 1.0, f" {w['name']}", transform=ax.get_xaxis_transform(),
                    va="bottom", ha="left", fontsize=7, color=colors[w["name"]], clip_on=False,
                    gid=f"window-label:{w['name']}")
    ax.set_xlim(0, max([doc["run"].get("elapsed_ns", 0) / 1e9] + x))


def _bin(values, limit=MAX_BARS):
    """values as at most LIMIT (mean, min, max, calls) bins, in order."""
    size = max(1, math.ceil(len(values) / limit))
    out = []
    for s in range(0, len(values), size):
        chunk = values[s:s + size]
        out.append((sum(chunk) / len(chunk), min(chunk), max(chunk), len(chunk)))
    return out, size


def _draw_bars(ax, doc, event, colors):
    x0, ticks, names = 0, [], []
    binned = False
    for w in doc["windows"]:
        vals = pd.call_values(w, event) or []
        if not vals:
            continue
        bins, size = _bin(vals)
        xs = [x0 + i for i in range(len(bins))]
        ax.bar(xs, [b[0] for b in bins], width=0.85, color=colors[w["name"]],
               label=f"{w['name']}: {w.get('calls', len(vals))} calls", gid=f"bars:{w['name']}")
        if size > 1:
            binned = True
            ax.vlines(xs, [b[1] for b in bins], [b[2] for b in bins], color="0.2", linewidth=0.6)
        ticks.append(x0 + (len(bins) - 1) / 2)
        names.append(w["name"])
        x0 += len(bins) + max(2, len(bins) // 10)
    if not ticks:
        # No window calls: the views' totals, one bar each.
        views = [v for v in doc["views"] if v["event"] == event and v["gate"] != "window"]
        ax.bar(range(len(views)), [v.get("count") or 0 for v in views], color="C0")
        ticks = list(range(len(views)))
        names = ["default" if v["gate"] == "default" else f"@{v['range']}" for v in views]
    ax.set_xticks(ticks)
    ax.set_xticklabels(names, fontsize=7)
    return binned


def plot_run(doc, events=None, title=None):
    """The run in DOC (a checked document) as a matplotlib Figure: one
    panel (Axes) per event, in the order of `events` (default: every event
    of the run, range-only events last)."""
    names = events or pd.events(doc)
    colors = _window_colors(doc)
    series = bool(doc["intervals"])
    ncols, nrows = _layout(len(names))
    fig = Figure(figsize=(7 + 4.5 * (ncols - 1), 1.2 + 2.1 * nrows), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)  # a canvas of its own: no pyplot, no global state
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=series)
    flat = [a for row in axes for a in row]
    for ax in flat[len(names):]:
        fig.delaxes(ax)
    spans_of = {w["name"]: merge_spans(w["per_call"]["begin_ns"], w["per_call"]["end_ns"])
                for w in doc["windows"]}
    binned = False
    for k, (ax, event) in enumerate(zip(flat, names)):
        ax.set_title(event, fontsize=9, loc="left")
        ax.tick_params(labelsize=7)
        ax.yaxis.get_offset_text().set_fontsize(7)
        if not _supported(doc, event):
            ax.text(0.5, 0.5, "not supported", transform=ax.transAxes, ha="center",
                    va="center", fontsize=9, color="0.4")
            ax.set_yticks([])
            continue
        unit = _unit(doc, event)
        if series:
            _draw_series(ax, doc, event, colors, spans_of, label_windows=(k == 0))
            ax.set_ylabel(f"{unit} / interval", fontsize=7)
        else:
            binned |= _draw_bars(ax, doc, event, colors)
            ax.set_ylabel(f"{unit} / call", fontsize=7)
        # Every panel has its legend while there are few; past 6 panels the
        # first one says which colour is which window.
        if (len(names) <= 6 or k == 0) and ax.get_legend_handles_labels()[0]:
            # Beside the panel, not over the data; constrained layout makes room.
            ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    last_row = [a for a in flat[:len(names)] if a.get_subplotspec().is_last_row()
                or flat.index(a) + ncols >= len(names)]
    for ax in last_row:
        ax.xaxis.set_tick_params(labelbottom=True)
        if series:
            ax.set_xlabel("time since the start of the run (s)", fontsize=7)
        elif binned:
            ax.set_xlabel(f"calls per window (over {MAX_BARS} calls: bins, line from min to max)",
                          fontsize=7)
    command = doc["run"].get("command") or []
    what = " ".join([os.path.basename(command[0])] + command[1:4]) if command \
        else doc["run"].get("target", "")
    fig.suptitle(title or f"perfgate: {what}", fontsize=10)
    return fig


def save(fig, path):
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if ext not in FORMATS:
        raise ToolError(f"-o {path}: unknown format '{ext}': name it .png, .svg or .pdf")
    try:
        fig.savefig(path, format=ext)
    except OSError as e:
        raise ToolError(f"-o {path}: cannot write: {e.strerror}") from None


def main(argv=None):
    ap = pd.ArgumentParser(prog=PROG, description="Draw a perfgate --json-file run: one panel per "
                 "event, the -I series with each window call shaded, or per-call bars.",
                 epilog="Exit status: 0 drawn, 2 usage error or bad input.")
    ap.add_argument("run", metavar="RUN.json")
    ap.add_argument("-o", "--output", required=True, metavar="FILE",
                    help="the image: .png, .svg or .pdf")
    ap.add_argument("-e", "--event", action="append", metavar="EVENT",
                    help="draw only this event's panel (repeatable; default: every event)")
    ap.add_argument("--title", help="the figure's title (default: the run's command)")
    args = ap.parse_args(argv)
    try:
        doc = pd.load(args.run)
        known = pd.events(doc)
        for e in args.event or []:
            if e not in known:
                raise ToolError(f"-e {e}: not an event of {args.run} (it has: {', '.join(known)})")
        fig = plot_run(doc, args.event, args.title)
        save(fig, args.output)
    except ToolError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return pd.EXIT_BAD_INPUT
    return pd.EXIT_OK
