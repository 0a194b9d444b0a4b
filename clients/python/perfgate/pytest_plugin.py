"""pytest plugin: measure every test as a perfgate window.

    pytest --perfgate -e task-clock,syscalls:sys_enter_write --perfgate-json run.json

starts one agent for the session (``perfgate.Agent``, ``-p`` on the pytest
process, so the tests and the processes they start are counted), wraps the
*call* phase of each test (not its setup or teardown: fixtures are left
out) in a window named after the test's node id (:func:`window_name`; the
node id relative to the rootdir pytest would choose from the arguments,
whatever pytest made of ``--perfgate-bin PATH``), prints each test's counts
in the terminal summary and saves the run's ``--json-file`` document at
``--perfgate-json``.

The ``perfgate`` fixture gives the session's agent (a ``perfgate.Client``)
for windows of one's own inside a test; without ``--perfgate`` it gives
``perfgate.connect()``: the channel of an agent that runs pytest as its
workload, or an inert client.

Installed, the plugin is loaded through its ``pytest11`` entry point; from a
source tree, load it with ``-p perfgate.pytest_plugin`` (with the directory
holding the package on ``PYTHONPATH``).  It does nothing without
``--perfgate``.  pytest-xdist is not supported (each worker would need an
agent of its own): ``--perfgate`` with ``-n`` is a usage error.
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path
from typing import Any, Generator, Optional

import pytest

from ._agent import Agent
from ._client import Client, PerfgateError, Window, _NAME_CHARS, _NAME_MAX, connect, valid_name

__all__ = ["window_name", "perfgate"]

_HASH_LEN = 8


def window_name(nodeid: str) -> str:
    """The window name of the test NODEID.

    A node id that is a valid name (1 to 64 of ``A-Z a-z 0-9 _ . : -``) is
    used as it is.  Any other becomes: every ``/`` replaced by ``.`` and
    every other character that is not allowed by ``_``; of that, the last
    55 characters; then ``-`` and the first 8 hex digits of the SHA-1 of
    the node id (UTF-8).  So ``tests/test_io.py::test_read[a b]`` gives
    ``tests.test_io.py::test_read_a_b_-`` and 8 hex digits: readable, and
    two node ids that read alike still get different names.
    """
    if valid_name(nodeid):
        return nodeid
    text = "".join(
        c if c in _NAME_CHARS else ("." if c == "/" else "_") for c in nodeid
    )
    digest = hashlib.sha1(nodeid.encode("utf-8", "surrogatepass")).hexdigest()
    keep = _NAME_MAX - _HASH_LEN - 1
    return f"{text[-keep:]}-{digest[:_HASH_LEN]}"


def _intended_rootpath(config: pytest.Config) -> Path:
    """The rootdir pytest would have chosen had it known this plugin's options.

    pytest picks its rootdir (and ini file) before plugins add their
    options, so the value of ``--perfgate-bin PATH`` (space form) is taken
    for a test path when PATH exists (pytest issue #8846): with the build
    tree and the tests under one directory such as /tmp, the rootdir
    becomes that directory and every node id changes.  The choice is made
    again here with the arguments as parsed once every option is known
    (``config.option``: ``known_args_namespace`` is parsed before the
    plugins of conftest files add theirs), by pytest's own function; a
    pytest whose function this does not know keeps its rootdir.
    """
    ns = config.option
    try:
        from _pytest.config.findpaths import determine_setup

        params = inspect.signature(determine_setup).parameters
        kwargs: dict[str, Any] = {
            "inifile": ns.inifilename,
            "args": [str(a) for a in ns.file_or_dir],
            "rootdir_cmd_arg": ns.rootdir or None,
        }
        if "invocation_dir" in params:
            kwargs["invocation_dir"] = config.invocation_params.dir
        if "config" in params:
            kwargs["config"] = config
        return Path(determine_setup(**kwargs)[0])
    except Exception:  # pragma: no cover - another pytest's internals
        return config.rootpath


class _Session:
    """The session's agent and each test's window."""

    def __init__(self, agent: Agent, json_path: Optional[str], rootpath: Path,
                 pytest_rootpath: Path) -> None:
        self.agent = agent
        self.json_path = json_path
        self.rootpath = rootpath
        self.pytest_rootpath = pytest_rootpath
        self.windows: dict[str, Window] = {}
        self.error: Optional[str] = None

    def nodeid(self, item: pytest.Item) -> str:
        """item's node id relative to the intended rootdir."""
        if self.rootpath == self.pytest_rootpath:
            return item.nodeid
        try:
            rel = Path(item.path).relative_to(self.rootpath)
        except ValueError:
            return item.nodeid
        _, sep, rest = item.nodeid.partition("::")
        return rel.as_posix() + sep + rest

    @pytest.hookimpl(hookwrapper=True, trylast=True)  # type: ignore[misc]
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        # trylast: the innermost wrapper, so that other plugins' wrappers
        # (capture, logging) stay outside the window.
        nodeid = self.nodeid(item)
        w = Window(self.agent, window_name(nodeid))
        self.agent.window_begin(w.name)
        try:
            yield
        finally:
            self.agent._window_end_into(w)
            self.windows[nodeid] = w

    def stop(self) -> None:
        if self.agent.report is None:
            try:
                self.agent.stop()
            except PerfgateError as e:
                self.error = str(e)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.stop()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.stop()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        tr.section("perfgate")
        events: list[str] = []
        for w in self.windows.values():
            events += [e for e in w.counts if e not in events]
        header = ["time ms", *events, "test"]
        rows = []
        for nodeid, w in self.windows.items():
            rows.append([f"{w.time_ns / 1e6:.3f}",
                         *("-" if w.counts.get(e) is None else str(w.counts[e]) for e in events),
                         nodeid])
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
        for r in [header, *rows]:
            tr.write_line("  ".join([*(c.rjust(n) for c, n in zip(r, widths)), r[-1]]))
        if self.rootpath != self.pytest_rootpath:
            tr.write_line(f"perfgate: pytest took an option's value for a test path and chose "
                          f"rootdir {self.pytest_rootpath}; windows are named from "
                          f"{self.rootpath}. Write --perfgate-bin=PATH (with '=') for pytest's "
                          f"own rootdir and ini file to be there too.", yellow=True)
        if self.error:
            tr.write_line(f"perfgate: {self.error}", red=True)
        if self.json_path:
            tr.write_line(f"perfgate: JSON document saved to {self.json_path}")


_session_key = pytest.StashKey[_Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("perfgate", "perfgate: count perf events per test")
    g.addoption("--perfgate", action="store_true", default=False,
                help="measure each test's call phase as a perfgate window")
    events_help = ("events to count, perf's -e syntax (repeatable), "
                   "e.g. task-clock,syscalls:sys_enter_write")
    # pytest keeps lowercase short options for itself; -e is free in pytest
    # 7 and 8, so it is added through the group's internal method.
    add_short = getattr(g, "_addoption", None)
    if add_short is not None:
        add_short("-e", "--perfgate-events", dest="perfgate_events", action="append",
                  default=[], metavar="EVENTS", help=events_help)
    else:  # pragma: no cover
        g.addoption("--perfgate-events", dest="perfgate_events", action="append",
                    default=[], metavar="EVENTS", help=events_help)
    g.addoption("--perfgate-json", metavar="PATH", default=None,
                help="save the run's JSON document (perfgate --json-file) here")
    g.addoption("--perfgate-option", dest="perfgate_options", action="append", default=[],
                metavar="OPT", help="one more argument for the agent (repeatable), "
                "e.g. --perfgate-option=--range-backend=sample")
    g.addoption("--perfgate-bin", metavar="PATH", default=None,
                help="the perfgate agent (default: $PERFGATE, else perfgate from PATH)")
    g.addoption("--perfgate-timeout", metavar="SECONDS", type=float, default=None,
                help="how long each command waits for its reply (default 5)")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("perfgate", False):
        given = [o for o, dest in (("-e/--perfgate-events", "perfgate_events"),
                                   ("--perfgate-json", "perfgate_json"),
                                   ("--perfgate-option", "perfgate_options"))
                 if config.getoption(dest, None)]
        if given:
            # Counting nothing while the user asked for counts would pass
            # unnoticed: say so.
            raise pytest.UsageError(f"{', '.join(given)} given without --perfgate")
        return
    if getattr(config, "workerinput", None) is not None or config.getoption("numprocesses", None):
        raise pytest.UsageError("--perfgate does not support pytest-xdist (-n): run the tests "
                                "in one process")
    try:
        agent = Agent(events=config.getoption("perfgate_events"),
                      options=config.getoption("perfgate_options"),
                      perfgate_bin=config.getoption("perfgate_bin"),
                      timeout=config.getoption("perfgate_timeout"),
                      json_file=config.getoption("perfgate_json"))
    except (PerfgateError, ValueError) as e:
        raise pytest.UsageError(f"--perfgate: {e}") from None
    session = _Session(agent, agent.json_path if config.getoption("perfgate_json") else None,
                       _intended_rootpath(config), config.rootpath)
    config.stash[_session_key] = session
    config.pluginmanager.register(session, "perfgate-session")


@pytest.fixture
def perfgate(request: pytest.FixtureRequest) -> Client:
    """The perfgate client: the session's agent under ``--perfgate``, else
    ``perfgate.connect()`` (the environment's channel, or inert)."""
    session = request.config.stash.get(_session_key, None)
    if session is not None:
        return session.agent
    return connect()
