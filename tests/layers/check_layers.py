#!/usr/bin/env python3
"""The layer rule of docs/design.md ("Layers"), checked on #include lines.

Every C file of the tree belongs to a layer by its folder.  A file may
include headers of its own layer and of the layers below it, never above;
and no two modules (a .c with its .h) may depend on each other, directly
or through others.  Prints TAP: one test per layer rule broken or kept,
one for cycles.  Standard library only.
"""
import os
import re
import sys

# Bottom first.  A folder may include what its own entry and the entries
# before it hold, except where `uses` narrows it.
LAYERS = [
    ("common", {"uses": []}),
    ("proto", {"uses": []}),
    ("grammar", {"uses": ["common"]}),
    ("agent/base", {}),
    ("agent/events", {}),
    ("agent/count", {}),
    ("agent/ranges", {}),
    ("agent/control", {}),
    ("agent/report", {}),
    ("agent/metrics", {}),
    ("agent", {}),
    ("clients/c", {"uses": ["proto"]}),
]
ORDER = [name for name, _ in LAYERS]
# Trees above every layer: they may include anything, and are not checked.
UNCHECKED = ("tests/", "bench/", "examples/", "tools/")
# Edges the rule forbids that the tree still has: each is reported as a
# TAP TODO, so it shows in the summary, and one that is gone fails as
# XPASS until it is taken off this list.
PENDING = set()
# The same for cycles: one through any of these modules is a TODO.
PENDING_CYCLES = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for name in ORDER:
        if path.startswith(name + "/") and "/" not in path[len(name) + 1:]:
            best = name
    return best


def allowed(src, dst):
    if src == dst:
        return True
    spec = dict(LAYERS)[src]
    if "uses" in spec:
        return dst in spec["uses"]
    return ORDER.index(dst) < ORDER.index(src) and dst not in ("clients/c",)


def sources(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build",)]
        for f in files:
            if f.endswith((".c", ".h")):
                path = os.path.relpath(os.path.join(top, f), root)
                if not path.startswith(UNCHECKED) and layer_of(path):
                    yield path


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    upward, edges, n = [], {}, 0
    for path in sorted(sources(root)):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        src = layer_of(path)
        mod = path.rsplit(".", 1)[0]
        for inc in INCLUDE.findall(text):
            dst = layer_of(inc)
            if dst is None:
                continue	# generated beside the file (vmlinux.h) or system
            n += 1
            dmod = inc.rsplit(".", 1)[0]
            if dmod != mod:
                edges.setdefault(mod, set()).add(dmod)
            if not allowed(src, dst):
                upward.append((path, inc, src, dst))
    tests = []
    for path, inc, src, dst in upward:
        todo = (path, inc) in PENDING
        tests.append((False, "%s includes %s: %s may not use %s" % (path, inc, src, dst),
                      todo))
    for path, inc in sorted(PENDING):
        if not any(u[0] == path and u[1] == inc for u in upward):
            tests.append((True, "%s includes %s: listed as pending" % (path, inc), True))
    cycles = strongly_connected(edges)
    for comp in cycles:
        todo = bool(PENDING_CYCLES & set(comp))
        tests.append((False, "modules depend on each other: " + ", ".join(comp), todo))
    for mod in sorted(PENDING_CYCLES):
        if not any(mod in comp for comp in cycles):
            tests.append((True, "%s is in no cycle: listed as pending" % mod, True))
    tests.append((True, "%d includes checked against %d layers" % (n, len(ORDER)), False))
    if not cycles:
        tests.append((True, "no cycle between modules", False))
    print("1..%d" % len(tests))
    for i, (ok, text, todo) in enumerate(tests, 1):
        print("%s %d - %s%s" % ("ok" if ok else "not ok", i, text, " # TODO pending" if todo else ""))
    return 0


def strongly_connected(edges):
    """Tarjan's algorithm; the components with more than one module."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    nodes = set(edges) | {d for ds in edges.values() for d in ds}
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
