"""Fixtures of the Python client's tests (run by tests/python/run-pytest.sh
under `make check`, or by hand: see that script).

The agent is $PERFGATE (make check sets it); the package is imported from
clients/python in the source tree (run-pytest.sh puts it on PYTHONPATH).
Each test starts agents of its own with -p on this process, so other
programs running at the same time are never counted; the marker syscalls
(getppid, getpgid, getsid) are made by this process only while a window
is open.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Iterator

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("SRCDIR") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRCDIR, "clients", "python"))

import perfgate  # noqa: E402

GETPPID = "syscalls:sys_enter_getppid"
GETPGID = "syscalls:sys_enter_getpgid"
EVENTS = ["task-clock", GETPPID, GETPGID]


def agent_binary() -> str:
    path = os.environ.get("PERFGATE") or shutil.which("perfgate")
    if not path:
        for cand in ("build/agent/perfgate", "agent/perfgate"):
            if os.access(os.path.join(SRCDIR, cand), os.X_OK):
                path = os.path.join(SRCDIR, cand)
                break
    if not path:
        pytest.fail("no perfgate agent: set PERFGATE to build/agent/perfgate")
    return path


@pytest.fixture(scope="session")
def perfgate_bin() -> str:
    return agent_binary()


@pytest.fixture
def agent(perfgate_bin: str) -> Iterator[perfgate.Agent]:
    """An agent counting this process, stopped after the test."""
    a = perfgate.Agent(events=EVENTS, perfgate_bin=perfgate_bin, timeout=10)
    try:
        yield a
    finally:
        if a.report is None:
            a.stop()


@pytest.fixture
def no_agent_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PERFGATE_CTL_FD", "PERFGATE_ACK_FD", "PERFGATE_CHANNEL_ID", "PERFGATE_LOCK_FD",
                "PERFGATE_TIMEOUT_MS"):
        monkeypatch.delenv(var, raising=False)


def package_env() -> dict[str, str]:
    """The environment for a child Python that imports this perfgate."""
    env = dict(os.environ)
    pkg = os.path.join(SRCDIR, "clients", "python")
    env["PYTHONPATH"] = pkg + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for var in ("PERFGATE_CTL_FD", "PERFGATE_ACK_FD", "PERFGATE_CHANNEL_ID", "PERFGATE_LOCK_FD",
                "PERFGATE_TIMEOUT_MS"):
        env.pop(var, None)
    return env
