"""perfgate: drive the perfgate measurement agent from Python.

    import perfgate

    # Inside a workload of `perfgate -e ... -- python3 prog.py` (inert
    # without an agent: every call does nothing, windows count nothing):
    client = perfgate.connect()
    with client.window("parse") as w:
        parse()
    print(w.counts, w.time_ns)

    # An agent of one's own, counting this process (-p):
    with perfgate.Agent(events=["task-clock", "syscalls:sys_enter_getppid"]) as agent:
        with agent.window("phase") as w:
            work()
    print(agent.report.window("phase"))

See clients/python/README.md, perfgate-protocol(7) and libperfgate(3).
"""

from ._agent import Agent, Report, find_agent
from ._client import (
    TIMEOUT_DEFAULT,
    AgentError,
    AgentGone,
    Client,
    PerfgateError,
    ProtocolError,
    Timeout,
    Window,
    connect,
    valid_name,
)

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentError",
    "AgentGone",
    "Client",
    "PerfgateError",
    "ProtocolError",
    "Report",
    "TIMEOUT_DEFAULT",
    "Timeout",
    "Window",
    "connect",
    "find_agent",
    "valid_name",
]
