"""check_plot.py: check perfgate plot's figures through matplotlib's objects.

Run by tests/e2e/tools.bats with Debian's python3 on documents made from
real marker runs:

    check_plot.py series RUN.json OUT.png OUT.svg   -I run, windows W and V (30 calls each)
    check_plot.py many RUN.json OUT.png             -I run, window B with 5000 calls
    check_plot.py wide RUN.json OUT.png             20 events
    check_plot.py bars RUN.json OUT.svg             no -I: per-call bars

Fails with an AssertionError (and a non-zero status) on the first check
that does not hold.
"""

import os
import struct
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ.get("SRCDIR", "."), "tools"))

import perfgate_doc as pd  # noqa: E402
import perfgate_plot as pp  # noqa: E402

GETPPID = "syscalls:sys_enter_getppid"


def spans(ax, window):
    return [p for p in ax.patches if p.get_gid() == f"call-span:{window}"]


def span_extent(patch):
    xs = [v[0] for v in patch.get_xy()]
    return min(xs), max(xs)


def texts(fig, gid):
    return [t for ax in fig.axes for t in ax.texts if t.get_gid() == gid]


def legend_labels(ax):
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def check_series(doc, png, svg):
    fig = pp.plot_run(doc)
    events = [e["name"] for e in doc["events"]]
    assert len(fig.axes) == len(events) == 2, len(fig.axes)
    assert [ax.get_title(loc="left") for ax in fig.axes] == events
    wins = pd.windows(doc)
    for ax in fig.axes:
        for name in ("W", "V"):
            pc = wins[name]["per_call"]
            got = sorted(span_extent(p) for p in spans(ax, name))
            want = sorted((b / 1e9, e / 1e9) for b, e in zip(pc["begin_ns"], pc["end_ns"]))
            assert len(got) == 30 == len(want), (name, len(got))
            assert all(abs(g[0] - w[0]) < 1e-9 and abs(g[1] - w[1]) < 1e-9
                       for g, w in zip(got, want)), (name, got[:3], want[:3])
            assert f"{name}: 30 calls" in legend_labels(ax), legend_labels(ax)
    # Each window labelled once in the figure, not once per call.
    for name in ("W", "V"):
        assert len(texts(fig, f"window-label:{name}")) == 1, name
    # The window's line is the -I series: its steps add up to the view's count.
    ax = fig.axes[events.index(GETPPID)]
    for name in ("W", "V"):
        line = next(ln for ln in ax.lines if ln.get_label() == f"@{name}")
        total = sum(y for y in line.get_ydata()[1:] if y == y)
        view = next(v for v in doc["views"] if v.get("window") == name and v["event"] == GETPPID)
        assert total == view["count"] == 330, (name, total, view["count"])
    # The default window was never opened: no line for it.
    assert not [ln for ln in ax.lines if ln.get_label() == "default"]
    w, h = png_size(png)
    assert (w, h) == tuple(round(x * fig.dpi) for x in fig.get_size_inches()), (w, h)
    text = open(svg).read()
    assert text.count('id="call-span:W"') == 60 and text.count('id="call-span:V"') == 60, \
        text.count('id="call-span:W"')


def check_many(doc, png):
    fig = pp.plot_run(doc)
    pc = pd.windows(doc)["B"]["per_call"]
    assert pc["kept"] == 5000 and not pc["sampled"], pc["kept"]
    merged = pp.merge_spans(pc["begin_ns"], pc["end_ns"])
    assert len(merged) == pp.MAX_SPANS and sum(n for _, _, n in merged) == 5000, len(merged)
    assert merged[0][0] == min(pc["begin_ns"]) and merged[-1][1] == max(pc["end_ns"])
    for ax in fig.axes:
        assert 1 <= len(spans(ax, "B")) <= pp.MAX_SPANS, len(spans(ax, "B"))
        # Bounded whatever the number of calls: spans, a few lines, axes furniture.
        assert len(ax.get_children()) < pp.MAX_SPANS + 50, len(ax.get_children())
        assert "B: 5000 calls" in legend_labels(ax), legend_labels(ax)
    assert len(texts(fig, "window-label:B")) == 1
    png_size(png)
    fig.savefig(png)
    assert os.path.getsize(png) < 500_000, os.path.getsize(png)


def check_wide(doc, png):
    fig = pp.plot_run(doc)
    assert len(doc["events"]) == 20
    assert len(fig.axes) == 20, len(fig.axes)
    fig.savefig(png)
    png_size(png)
    renderer = fig.canvas.get_renderer()
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]
    for ax, box in zip(fig.axes, boxes):
        ext = ax.get_window_extent(renderer)
        # Room to read a panel: at least 80 x 250 pixels of plot.
        assert ext.height >= 80 and ext.width >= 250, (ax.get_title(loc="left"), ext)
    for i, a in enumerate(boxes):
        for j, b in enumerate(boxes[i + 1:], i + 1):
            # Titles, tick labels and axis labels of two panels never overlap.
            assert not a.overlaps(b) or a.intersection(a, b).width * a.intersection(a, b).height < 1, \
                (fig.axes[i].get_title(loc="left"), fig.axes[j].get_title(loc="left"))
    assert sum(1 for ax in fig.axes if ax.get_legend()) == 1


def check_bars(doc, svg):
    assert doc["intervals"] == []
    fig = pp.plot_run(doc)
    assert len(fig.axes) == 2
    ax = fig.axes[[e["name"] for e in doc["events"]].index(GETPPID)]
    for name in ("W", "V"):
        bars = [p for p in ax.patches if p.get_gid() == f"bars:{name}"]
        want = pd.windows(doc)[name]["per_call"]["counts"][GETPPID]
        assert [b.get_height() for b in bars] == want, (name, len(bars))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["W", "V"]
    fig.savefig(svg)
    assert open(svg).read().count('id="bars:W"') == 60
    # 5000 calls: binned into MAX_BARS bars, with a min-max line each.
    w = pd.windows(doc)["W"]["per_call"]
    n = 5000
    w["begin_ns"], w["end_ns"] = list(range(n)), list(range(1, n + 1))
    w["counts"] = {k: [i % 7 for i in range(n)] for k in w["counts"]}
    fig = pp.plot_run(doc)
    for ax in fig.axes:
        bars = [p for p in ax.patches if p.get_gid() == "bars:W"]
        assert len(bars) == pp.MAX_BARS, len(bars)
        assert len(ax.get_children()) < 2 * pp.MAX_BARS + 50


def main():
    mode, path = sys.argv[1], sys.argv[2]
    doc = pd.load(path)
    {"series": check_series, "many": check_many, "wide": check_wide,
     "bars": check_bars}[mode](doc, *sys.argv[3:])


if __name__ == "__main__":
    main()
