"""The pytest plugin: a tiny test file run with `pytest --perfgate -e ...` in
a child pytest, and its counts checked in the run's JSON document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from conftest import GETPPID, package_env
from perfgate.pytest_plugin import window_name

TINY = textwrap.dedent('''
    import os
    import pytest

    def test_seven():
        for _ in range(7):
            os.getppid()

    @pytest.mark.parametrize("k", [3, 50])
    def test_param(k):
        for _ in range(k):
            os.getppid()

    def test_fixture_window(perfgate):
        with perfgate.window("inner") as w:
            for _ in range(11):
                os.getppid()
        os.getppid()
        assert w.counts.get("syscalls:sys_enter_getppid") == (None if perfgate.inert else 11)

    def test_fails():
        os.getppid()
        os.getppid()
        assert False, "on purpose"
''')

NODE_IDS = {  # node id -> getppid calls in its call phase
    "test_tiny.py::test_seven": 7,
    "test_tiny.py::test_param[3]": 3,
    "test_tiny.py::test_param[50]": 50,
    "test_tiny.py::test_fixture_window": 12,
    "test_tiny.py::test_fails": 2,
}


def run_pytest(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_tiny.py").write_text(TINY)
    # An ini file makes tmp_path the rootdir, whatever lies above it: node
    # ids are then "test_tiny.py::...".
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "perfgate.pytest_plugin", "-p", "no:cacheprovider",
         "-rA", *args, "test_tiny.py"],
        cwd=tmp_path, env=package_env(), text=True, capture_output=True, timeout=120)


def test_plugin_counts_each_test_in_its_window(tmp_path, perfgate_bin: str) -> None:
    doc = tmp_path / "out" / "run.json"
    doc.parent.mkdir()
    r = run_pytest(tmp_path, "--perfgate", "-e", f"task-clock,{GETPPID}",
                   "--perfgate-bin", perfgate_bin, "--perfgate-json", "out/run.json")
    assert r.returncode == 1, r.stdout + r.stderr   # test_fails fails, the rest pass
    assert "1 failed, 4 passed" in r.stdout
    run = json.loads(doc.read_text())
    counts = {(v["window"], v["event"]): v["count"]
              for v in run["views"] if v["gate"] == "window"}
    calls = {w["name"]: w["calls"] for w in run["windows"]}
    for nodeid, k in NODE_IDS.items():
        name = window_name(nodeid)
        assert counts[(name, GETPPID)] == k, nodeid
        assert counts[(name, "task-clock")] > 0, nodeid
        assert calls[name] == 1, nodeid
    assert counts[("inner", GETPPID)] == 11
    assert set(calls) == {window_name(n) for n in NODE_IDS} | {"inner"}
    # The terminal summary: one row per test, its count in the column.
    section = r.stdout.split(" perfgate ")[1].split("short test summary info")[0]
    rows = {line.split()[-1]: line.split() for line in section.splitlines()
            if line.split() and line.split()[-1] in NODE_IDS}
    assert set(rows) == set(NODE_IDS)
    for nodeid, k in NODE_IDS.items():
        assert rows[nodeid][2] == str(k), rows[nodeid]
    assert f"perfgate: JSON document saved to {doc}" in r.stdout
    header = [line.split() for line in section.splitlines() if line.startswith("time ms")]
    assert header == [["time", "ms", "task-clock", GETPPID, "test"]]


def test_plugin_is_inert_without_the_option(tmp_path) -> None:
    r = run_pytest(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 4 passed" in r.stdout      # the fixture is an inert client
    assert "= perfgate =" not in r.stdout


def test_plugin_options_without_perfgate_are_a_usage_error(tmp_path) -> None:
    r = run_pytest(tmp_path, "-e", "task-clock", "--perfgate-json", "x.json")
    assert r.returncode == 4, r.stdout + r.stderr
    assert "-e/--perfgate-events, --perfgate-json given without --perfgate" in r.stderr
    assert not (tmp_path / "x.json").exists()


def test_plugin_agent_that_cannot_start_is_a_usage_error(tmp_path, perfgate_bin: str) -> None:
    r = run_pytest(tmp_path, "--perfgate", "-e", "nosuch:event", "--perfgate-bin", perfgate_bin)
    assert r.returncode == 4, r.stdout + r.stderr  # pytest's usage error
    assert "--perfgate: the agent did not start" in r.stderr
    assert "exit status 255" in r.stderr


def test_window_names() -> None:
    assert window_name("test_x.py::test_a") == "test_x.py::test_a"
    long_id = "tests/python/test_a_rather_long_module_name.py::TestClass::test_method[param-é x]"
    name = window_name(long_id)
    assert name == "_long_module_name.py::TestClass::test_method_param-__x_-" + name[-8:]
    assert len(name) == 64 and name == window_name(long_id)
    import hashlib
    assert name[-8:] == hashlib.sha1(long_id.encode()).hexdigest()[:8]
    # Ids that read alike get different names.
    assert window_name("t.py::f[a b]") != window_name("t.py::f[a_b]")
    assert window_name("a/b.py::t") == "a.b.py::t-" + hashlib.sha1(b"a/b.py::t").hexdigest()[:8]
    assert os.path.sep == "/"


def test_plugin_names_windows_from_the_intended_rootdir(tmp_path, perfgate_bin: str) -> None:
    # The agent and the tests under one directory, as a build tree and its
    # tests in a clone under /tmp are: pytest takes the value of the space
    # form of --perfgate-bin for a test path, and its rootdir becomes
    # tmp_path, not the ini file's directory t.
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "perfgate").symlink_to(os.path.abspath(perfgate_bin))
    t = tmp_path / "t"
    t.mkdir()
    (t / "pytest.ini").write_text("[pytest]\n")
    (t / "test_one.py").write_text("import os\ndef test_one():\n    for _ in range(9):\n"
                                   "        os.getppid()\n")
    for spelling in (["--perfgate-bin", str(tmp_path / "bin" / "perfgate")],
                     [f"--perfgate-bin={tmp_path / 'bin' / 'perfgate'}"]):
        r = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "perfgate.pytest_plugin",
             "-p", "no:cacheprovider", "--perfgate", "-e", GETPPID, *spelling,
             "--perfgate-json", "run.json"],
            cwd=t, env=package_env(), text=True, capture_output=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        views = json.loads((t / "run.json").read_text())["views"]
        assert [(v["window"], v["count"]) for v in views if v["gate"] == "window"] == \
            [("test_one.py::test_one", 9)], spelling
        space_form = len(spelling) == 2
        assert (f"rootdir: {tmp_path}\n" in r.stdout) == space_form, r.stdout
        assert ("windows are named from " + str(t)) in r.stdout.replace("\n", "") or \
            not space_form, r.stdout
        (t / "run.json").unlink()
