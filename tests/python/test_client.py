"""The Python client against the real agent (and against fake FIFO pairs
nobody serves, for timeouts).  Counts are exact: the marker syscalls are
made K times by this process while a window is open, and the agent counts
this process only (-p)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Optional

import pytest

import perfgate
from conftest import EVENTS, GETPGID, GETPPID, package_env


def getppid_times(k: int) -> None:
    for _ in range(k):
        os.getppid()


def page_name(ctl_path: str) -> str:
    """Where the agent puts the lock page of the channel whose ctl FIFO is
    ctl_path (proto/ctl_lock.h)."""
    st = os.stat(ctl_path)
    return f"/dev/shm/perfgate-lock.{st.st_dev}.{st.st_ino}"


# ---- counts -------------------------------------------------------------------


def test_window_counts_exact_marker_syscalls(agent: perfgate.Agent) -> None:
    with agent.window("phase") as w:
        getppid_times(1000)
        os.getpgid(0)
    assert w.counts[GETPPID] == 1000
    assert w.counts[GETPGID] == 1
    assert w.counts["task-clock"] > 0
    assert w.time_ns > 0 and w.calls == 1
    with agent.window("phase") as w2:
        getppid_times(234)
    assert (w2.calls, w2.counts[GETPPID], w2.counts[GETPGID]) == (2, 234, 0)
    assert w2.total_counts[GETPPID] == 1234
    assert w2.total_time_ns >= w.time_ns + w2.time_ns
    assert w2.reply is not None and w2.reply["window"] == "phase"
    report = agent.stop()
    assert report.status == 0
    assert report.window("phase")["calls"] == 2
    assert report.window("phase")["counts"][GETPPID] == 1234
    # -D -1: the default window never opened.
    assert report.counts[GETPPID] == 0
    assert "Window 'phase': 2 calls" in report.text


def test_enable_disable_and_nested_windows(agent: perfgate.Agent) -> None:
    agent.enable()
    getppid_times(10)
    with agent.window("outer") as outer:
        getppid_times(20)
        with agent.window("inner") as inner:
            getppid_times(30)
    agent.disable()
    getppid_times(40)  # nothing is open: counted nowhere
    agent.enable(GETPGID)
    os.getpgid(0)
    agent.disable(GETPGID)
    assert inner.counts[GETPPID] == 30
    assert outer.counts[GETPPID] == 50
    report = agent.stop()
    assert report.counts[GETPPID] == 60
    assert report.counts[GETPGID] == 1


def test_window_end_returns_counts(agent: perfgate.Agent) -> None:
    agent.window_begin("w")
    getppid_times(17)
    w = agent.window_end("w")
    assert (w.name, w.calls, w.counts[GETPPID]) == ("w", 1, 17)


def test_hello_ping_snapshot(agent: perfgate.Agent) -> None:
    hello = agent.hello()
    assert hello["protocol"] == 1 and hello["agent"] == "perfgate"
    assert "window begin" in hello["commands"]
    agent.ping()
    agent.snapshot()
    assert agent.command("ping") == ""


def test_range_load_counts_inside_range(agent: perfgate.Agent) -> None:
    agent.range_load("g", f"{GETPPID}@{GETPGID}..syscalls:sys_enter_getsid")
    with agent.window("r") as w:
        getppid_times(2)   # before the range opens
        os.getpgid(0)
        getppid_times(3)   # inside
        os.getsid(0)
        getppid_times(4)   # after
    assert w.counts[GETPPID] == 9
    assert w.ranges == {f"{GETPPID}@g": 3}
    agent.range_unload("g")
    with pytest.raises(perfgate.AgentError) as e:
        agent.range_unload("g")
    assert e.value.reason == "range 'g' is not loaded"


# ---- errors ---------------------------------------------------------------------


def test_errors_carry_the_agents_reason(agent: perfgate.Agent) -> None:
    with pytest.raises(perfgate.AgentError) as e:
        agent.window_end("nope")
    assert e.value.reason == "window 'nope' is not open"
    assert e.value.command == "window end nope"
    assert str(e.value) == "window end nope: window 'nope' is not open"
    with pytest.raises(perfgate.AgentError) as e:
        agent.enable("nosuch")
    assert e.value.reason == "unknown event 'nosuch' (not in -e)"
    with pytest.raises(perfgate.AgentError) as e:
        agent.command("frobnicate now")
    assert e.value.reason == "unknown command 'frobnicate'"
    with pytest.raises(perfgate.AgentError) as e:
        agent.range_load("bad", "task-clock@nosuch:x..")
    assert e.value.reason == ("unknown tracepoint subsystem 'nosuch' at byte 11: "
                              "task-clock@<HERE>nosuch:x..")
    # The channel goes on after errors.
    agent.ping()
    assert isinstance(e.value, perfgate.PerfgateError)


def test_bad_names_and_lines_fail_before_any_io(agent: perfgate.Agent) -> None:
    for bad in ("", "a/b", "a b", "é", "x" * 65):
        with pytest.raises(ValueError, match="bad window name"):
            agent.window_begin(bad)
        with pytest.raises(ValueError, match="bad range name"):
            agent.range_unload(bad)
    for bad in ("", "ping\nping", "pi\0ng", "x" * 4096):
        with pytest.raises(ValueError):
            agent.command(bad)
    with agent.window("x" * 64) as w:
        os.getppid()
    assert w.counts[GETPPID] == 1
    agent.ping()  # nothing was sent: replies still pair with commands


def test_window_closed_when_block_raises(agent: perfgate.Agent) -> None:
    with pytest.raises(ZeroDivisionError):
        with agent.window("boom") as w:
            getppid_times(5)
            1 / 0
    assert w.counts[GETPPID] == 5
    with pytest.raises(perfgate.AgentError, match="window 'boom' is not open"):
        agent.window_end("boom")


def test_failing_window_end_does_not_hide_the_blocks_error(agent: perfgate.Agent) -> None:
    # The block closes the window itself: the with's own end then fails,
    # and the block's exception is the one raised, with a note.
    with pytest.raises(KeyError) as e:
        with agent.window("twice"):
            agent.window_end("twice")
            raise KeyError("mine")
    assert any("window 'twice' is not open" in n for n in e.value.__notes__)


# ---- the Agent as a context manager ----------------------------------------------


def test_agent_context_manager_stops_agent_when_block_raises(perfgate_bin: str) -> None:
    with pytest.raises(RuntimeError, match="in the block"):
        with perfgate.Agent(events=[GETPPID], perfgate_bin=perfgate_bin) as a:
            with a.window("before") as w:
                getppid_times(12)
            raise RuntimeError("in the block")
    assert w.counts[GETPPID] == 12
    assert a.process.poll() == 0          # stopped by `stop`, reaped
    assert a.report is not None and a.report.status == 0
    assert a.report.window("before")["counts"][GETPPID] == 12
    assert not os.path.exists(a.dir)      # the private FIFOs are gone
    with pytest.raises(perfgate.PerfgateError, match="closed"):
        a.ping()


def test_agent_private_dir_and_json_file(perfgate_bin: str, tmp_path) -> None:
    doc = tmp_path / "run.json"
    with perfgate.Agent(events=[GETPPID], perfgate_bin=perfgate_bin, json_file=str(doc)) as a:
        st = os.stat(a.dir)
        assert st.st_mode & 0o777 == 0o700
        assert a.args[a.args.index("-p") + 1] == str(os.getpid())
        with a.window("j"):
            getppid_times(4)
    assert json.loads(doc.read_text())["windows"][0]["name"] == "j"
    assert a.report.document is not None and a.report.document["run"]["exit_status"] == 0


def test_agent_with_workload(perfgate_bin: str) -> None:
    script = ("import os, perfgate\n"
              "c = perfgate.connect()\n"
              "with c.window('child') as w:\n"
              "    [os.getppid() for _ in range(77)]\n"
              "print(w.counts['syscalls:sys_enter_getppid'])\n")
    with perfgate.Agent(events=[GETPPID], perfgate_bin=perfgate_bin,
                        workload=[sys.executable, "-c", script], env=package_env()) as a:
        assert "-p" not in a.args
        report = a.wait(30)
    assert report.status == 0, report.stderr
    assert report.window("child")["counts"][GETPPID] == 77


def test_agent_start_failure_names_the_reason(perfgate_bin: str) -> None:
    with pytest.raises(perfgate.PerfgateError) as e:
        perfgate.Agent(events=["nosuch:event"], perfgate_bin=perfgate_bin)
    assert "the agent did not start" in str(e.value)
    assert "exit status 255" in str(e.value)
    with pytest.raises(perfgate.PerfgateError, match="not found"):
        perfgate.Agent(perfgate_bin="/nonexistent/perfgate")


def test_agent_gone_is_noticed_before_the_timeout(perfgate_bin: str) -> None:
    a = perfgate.Agent(events=[GETPPID], perfgate_bin=perfgate_bin, timeout=60)
    page = page_name(os.path.join(a.dir, "ctl"))
    a.process.send_signal(signal.SIGKILL)
    a.process.wait(10)
    # AgentGone, not Timeout (a class apart): the call saw the agent gone
    # instead of waiting out the 60 s, whatever the speed of the machine.
    with pytest.raises(perfgate.AgentGone, match=r"is not running \(exit status 137\)"):
        a.ping()
    with pytest.raises(perfgate.AgentGone):
        a.stop()
    assert a.report is not None and a.report.status == 137
    assert not os.path.exists(a.dir)
    # A killed agent leaves its lock page behind (for the next agent on
    # its FIFOs); these FIFOs are gone, and a later test's may reuse the
    # inode.
    if os.path.exists(page):
        os.unlink(page)


# ---- the workload's channel: connect() -------------------------------------------


def run_child(script: str, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*argv, sys.executable, "-c", script], env=env, text=True,
                          capture_output=True, timeout=60)


def test_connect_uses_the_workloads_channel(perfgate_bin: str, tmp_path) -> None:
    doc = tmp_path / "run.json"
    script = ("import os, json, perfgate\n"
              "c = perfgate.connect()\n"
              "assert not c.inert and c is perfgate.connect()\n"
              "with c.window('w') as w:\n"
              "    [os.getppid() for _ in range(321)]\n"
              "print(json.dumps(w.counts))\n")
    r = run_child(script, package_env(), perfgate_bin, "-D", "-1", "-e", GETPPID,
                  "--json-file", str(doc), "-o", str(tmp_path / "report"), "--")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {GETPPID: 321}
    views = json.loads(doc.read_text())["views"]
    assert [v["count"] for v in views if v.get("window") == "w"] == [321]


def test_inert_without_agent(no_agent_env: None) -> None:
    c = perfgate.Client()
    assert c.inert
    c.ping()
    c.enable()
    c.disable()
    c.snapshot()
    c.range_load("r", "task-clock@..")
    c.range_unload("r")
    assert c.hello() == {}
    assert c.command("anything at all") == ""
    with c.window("w") as w:
        getppid_times(3)
    assert (w.counts, w.time_ns, w.calls, w.reply) == ({}, 0, 0, None)
    assert c.window_end("never-opened").counts == {}
    assert c.stop() is None
    # Names are still checked: a program is told of a bad name without an agent.
    with pytest.raises(ValueError):
        c.window_begin("a b")


def test_connect_inert_in_a_program_without_agent() -> None:
    script = ("import perfgate\n"
              "c = perfgate.connect()\n"
              "with c.window('w') as w: pass\n"
              "print(c.inert, w.counts, w.time_ns)\n")
    r = run_child(script, package_env())
    assert (r.returncode, r.stdout, r.stderr) == (0, "True {} 0\n", "")


def test_bad_environment(no_agent_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFGATE_CTL_FD", "abc")
    monkeypatch.setenv("PERFGATE_ACK_FD", "4")
    with pytest.raises(perfgate.PerfgateError) as e:
        perfgate.Client()
    assert str(e.value) == ("PERFGATE_CTL_FD ('abc') and PERFGATE_ACK_FD ('4') must both "
                            "be file descriptor numbers")


def test_stale_or_foreign_environment_is_inert(no_agent_env: None,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # The environment outlives its descriptors: closed fds, other files at
    # those numbers, or other pipes than PERFGATE_CHANNEL_ID names leave the
    # client inert, and nothing is written into them (as libperfgate).
    ctl_r, ctl_w = os.pipe()
    ack_r, ack_w = os.pipe()
    os.set_blocking(ctl_r, False)
    ino = f"{os.fstat(ctl_w).st_ino}:{os.fstat(ack_r).st_ino}"
    wrong = f"{os.fstat(ctl_w).st_ino + 1000}:{os.fstat(ack_r).st_ino}"
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        cases = [("1021", "1022", None), (str(devnull), str(ack_r), None),
                 (str(ctl_r), str(ack_w), None), (str(ctl_w), str(ack_r), wrong)]
        for ctl, ack, channel in cases:
            monkeypatch.setenv("PERFGATE_CTL_FD", ctl)
            monkeypatch.setenv("PERFGATE_ACK_FD", ack)
            if channel:
                monkeypatch.setenv("PERFGATE_CHANNEL_ID", channel)
            else:
                monkeypatch.delenv("PERFGATE_CHANNEL_ID", raising=False)
            c = perfgate.Client()
            assert c.inert, (ctl, ack, channel)
            assert "PERFGATE_CTL_FD" in c.inert_reason
            c.window_begin("w")
        with pytest.raises(BlockingIOError):
            os.read(ctl_r, 1)
        monkeypatch.setenv("PERFGATE_CTL_FD", str(ctl_w))
        monkeypatch.setenv("PERFGATE_ACK_FD", str(ack_r))
        monkeypatch.setenv("PERFGATE_CHANNEL_ID", "12")
        with pytest.raises(perfgate.PerfgateError, match="PERFGATE_CHANNEL_ID"):
            perfgate.Client()
        monkeypatch.setenv("PERFGATE_CHANNEL_ID", ino)
        c = perfgate.Client(timeout=0.05)
        assert not c.inert
        with pytest.raises(perfgate.Timeout):
            c.ping()
        assert os.read(ctl_r, 5) == b"ping\n"
        c.close()
    finally:
        for fd in (ctl_r, ctl_w, ack_r, ack_w, devnull):
            os.close(fd)


# ---- timeouts: a FIFO pair nobody serves ----------------------------------------


class FakeAgent:
    """Both FIFOs held open by the test, which reads commands and writes
    replies by hand, or never."""

    def __init__(self, tmp_path) -> None:
        self.ctl_path = str(tmp_path / "ctl")
        self.ack_path = str(tmp_path / "ack")
        os.mkfifo(self.ctl_path, 0o600)
        os.mkfifo(self.ack_path, 0o600)
        self.ctl = os.open(self.ctl_path, os.O_RDWR)
        self.ack = os.open(self.ack_path, os.O_RDWR)

    def client(self, timeout: float) -> perfgate.Client:
        return perfgate.Client(ctl_path=self.ctl_path, ack_path=self.ack_path, timeout=timeout)

    def read_commands(self, n: int, timeout: float = 30) -> list[str]:
        data = b""
        poll = select.poll()
        poll.register(self.ctl, select.POLLIN)
        deadline = time.monotonic() + timeout
        while data.count(b"\n") < n:
            if not poll.poll(max(0, int((deadline - time.monotonic()) * 1000))):
                raise AssertionError(f"no command within {timeout} s (got {data!r})")
            data += os.read(self.ctl, 4096)
        return data.decode().splitlines()

    def reply(self, *lines: str) -> None:
        os.write(self.ack, b"".join(line.encode() + b"\n\0" for line in lines))

    def close(self) -> None:
        os.close(self.ctl)
        os.close(self.ack)


def test_timeout_when_the_agent_does_not_answer(tmp_path) -> None:
    fake = FakeAgent(tmp_path)
    c = fake.client(timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(perfgate.Timeout) as e:
        c.ping()
    # The timeout is the point: never before it (no upper bound, which a
    # loaded machine could overrun).
    assert time.monotonic() - t0 >= 0.3
    assert str(e.value) == "ping: timed out after 0.3 s waiting for the agent's reply"
    assert isinstance(e.value, TimeoutError)
    assert fake.read_commands(1) == ["ping"]
    # The late reply to that ping arrives; the next command must not take
    # it for its own.
    fake.reply("ack")
    answer = threading.Thread(
        target=lambda: (fake.read_commands(1), fake.reply("err reply to hello")))
    answer.start()
    with pytest.raises(perfgate.AgentError) as err:
        c.command("hello", timeout=30)
    answer.join(30)
    assert err.value.reason == "reply to hello"
    c.close()
    fake.close()


def test_blank_command_is_refused_unsent(tmp_path) -> None:
    # The agent, as perf, answers a blank line with nothing: sent, it
    # would leave a reply owed that never comes.
    fake = FakeAgent(tmp_path)
    c = fake.client(timeout=5)
    for line in ("", " ", " \t\r"):
        with pytest.raises(ValueError, match="non-empty line"):
            c.command(line)
    fake.reply("ack")
    assert c.command("ping") == ""
    assert fake.read_commands(1) == ["ping"]
    c.close()
    fake.close()


def test_timeout_from_environment(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAgent(tmp_path)
    monkeypatch.setenv("PERFGATE_TIMEOUT_MS", "250")
    c = perfgate.Client(ctl_path=fake.ctl_path, ack_path=fake.ack_path)
    assert c.timeout == 0.25
    with pytest.raises(perfgate.Timeout, match="timed out after 0.25 s"):
        c.window_begin("x")
    monkeypatch.setenv("PERFGATE_TIMEOUT_MS", "soon")
    with pytest.raises(perfgate.PerfgateError, match=r"PERFGATE_TIMEOUT_MS \('soon'\)"):
        perfgate.Client(ctl_path=fake.ctl_path, ack_path=fake.ack_path)
    c.close()
    fake.close()


def test_fifo_without_agent(tmp_path) -> None:
    os.mkfifo(tmp_path / "ctl")
    os.mkfifo(tmp_path / "ack")
    with pytest.raises(perfgate.PerfgateError, match="no agent reads it"):
        perfgate.Client(ctl_path=str(tmp_path / "ctl"), ack_path=str(tmp_path / "ack"))


def test_malformed_reply(tmp_path) -> None:
    fake = FakeAgent(tmp_path)
    fake.reply("hello there")
    c = fake.client(timeout=30)
    with pytest.raises(perfgate.ProtocolError, match="malformed reply from the agent: 'hello there'"):
        c.ping()
    c.close()
    fake.close()


# ---- threads and fork() ----------------------------------------------------------


def test_threads_share_one_channel(agent: perfgate.Agent) -> None:
    n_threads, rounds = 8, 100
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            for r in range(1, rounds + 1):
                with agent.window(f"t{i}") as w:
                    pass
                # Each reply is this thread's own: its window, its count.
                assert (w.reply or {}).get("window") == f"t{i}", w.reply
                assert w.calls == r
            getppid_times(i + 1)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    with agent.window("all") as total:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert not errors, errors
    # Every thread's getppid counted (threads created after -p are inherited).
    assert total.counts[GETPPID] == sum(range(1, n_threads + 1))


def wait_child(pid: int, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"child {pid} did not exit within {timeout} s")


def test_fork_parent_and_child_share_the_channel(agent: perfgate.Agent) -> None:
    agent.ping()
    pid = os.fork()
    if pid == 0:  # the child: its own window, counted exactly
        code = 1
        try:
            with agent.window("child") as w:
                getppid_times(55)
            for _ in range(200):
                agent.ping()
            code = 0 if w.counts[GETPPID] == 55 else 2
        finally:
            os._exit(code)
    # Meanwhile the parent hammers the same channel (no marker syscalls).
    for r in range(1, 201):
        with agent.window("parent") as w:
            pass
        assert w.calls == r and (w.reply or {}).get("window") == "parent"
    assert wait_child(pid) == 0
    report = agent.stop()
    assert report.window("child")["calls"] == 1
    assert report.window("child")["counts"][GETPPID] == 55
    assert report.window("parent")["calls"] == 200


def test_fork_child_does_not_read_the_parents_replies(tmp_path) -> None:
    fake = FakeAgent(tmp_path)
    c = fake.client(timeout=0.2)
    with pytest.raises(perfgate.Timeout):
        c.ping()  # the parent is now owed a reply
    c.timeout = 30
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            try:
                c.command("hello")
            except perfgate.AgentError as e:
                code = 0 if e.reason == "for the child" else 3
        finally:
            os._exit(code)
    assert fake.read_commands(2) == ["ping", "hello"]
    fake.reply("err for the child")
    assert wait_child(pid) == 0
    # The parent still skips its own late reply before taking the next one.
    answer = threading.Thread(target=lambda: (fake.read_commands(1),
                                              fake.reply("ack", "err for the parent")))
    answer.start()
    with pytest.raises(perfgate.AgentError, match="for the parent"):
        c.ping()
    answer.join(30)
    c.close()
    fake.close()


def test_fork_while_another_thread_is_in_a_call(agent: perfgate.Agent) -> None:
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            agent.ping()

    t = threading.Thread(target=busy)
    t.start()
    try:
        for _ in range(20):
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    agent.timeout = 10
                    agent.ping()  # must not wait for the parent thread's lock
                    code = 0
                except BaseException as e:  # noqa: BLE001
                    os.write(2, f"child: {e!r}\n".encode())
                finally:
                    os._exit(code)
            assert wait_child(pid) == 0
    finally:
        stop.set()
        t.join(30)


# ---- long replies and the Agent's option scan -------------------------------------


def test_long_window_end_reply(perfgate_bin: str) -> None:
    names = sorted(n for n in os.listdir("/sys/kernel/tracing/events/syscalls")
                   if n.startswith("sys_enter_") and n != "sys_enter_getppid")[:80]
    events = [f"syscalls:{n}" for n in names] + [GETPPID]
    with perfgate.Agent(events=[",".join(events)], perfgate_bin=perfgate_bin, timeout=30) as a:
        with a.window("big") as w:
            getppid_times(3)
    assert len(json.dumps(w.reply)) > 4352  # longer than any other reply
    assert len(w.counts) == 81 and w.counts[GETPPID] == 3


def test_agent_option_scan() -> None:
    from perfgate._agent import _scan_options as scan
    # (target, output, delay, json_file)
    assert scan([]) == (False, False, False, False)
    assert scan(["-a"]) == (True, False, False, False)
    assert scan(["-C", "0", "-I", "100"]) == (True, False, False, False)
    assert scan(["--pid=5"]) == (True, False, False, False)
    assert scan(["-t", "7"]) == (True, False, False, False)
    assert scan(["-o", "r.txt", "-D", "100"]) == (False, True, True, False)
    assert scan(["--log-fd", "3", "--delay=5"]) == (False, True, True, False)
    assert scan(["--json-file", "x"]) == (False, False, False, True)
    # An option's value is not an option: "-e -a" would be an event named -a.
    assert scan(["-e", "-a"]) == (False, False, False, False)
    assert scan(["-x", ",", "--range-scope", "cpu"]) == (False, False, False, False)
    assert scan(["-ao", "f"]) == (True, True, False, False)


def test_python_and_libperfgate_processes_take_turns(perfgate_bin: str) -> None:
    """A Python client and libperfgate in a forked child share the workload's
    channel: the same record lock keeps their replies apart."""
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(perfgate_bin))),
                       "clients", "c", ".libs", "libperfgate.so")
    if not os.path.exists(lib):
        pytest.skip(f"no {lib}: build libperfgate first")
    probe = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({lib!r})"],
                           text=True, capture_output=True, timeout=60)
    if probe.returncode != 0 and "ASan runtime does not come first" in probe.stderr:
        # The sanitizer build (.ci/run): an ASan library cannot be loaded
        # into an uninstrumented python.
        pytest.skip("libperfgate is built with AddressSanitizer: python cannot load it")
    assert probe.returncode == 0, probe.stderr
    script = r'''
import ctypes, os, sys, perfgate
c = perfgate.connect()
c.ping()
pid = os.fork()
if pid == 0:
    code = 9
    try:
        lib = ctypes.CDLL(sys.argv[1])
        lib.perfgate_default.restype = ctypes.c_void_p
        lib.perfgate_window_begin.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.perfgate_window_end.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                            ctypes.c_char_p, ctypes.c_size_t]
        pg = lib.perfgate_default()
        buf = ctypes.create_string_buffer(65536)
        code = 0
        for i in range(1, 301):
            if lib.perfgate_window_begin(pg, b"c") or lib.perfgate_window_end(pg, b"c", buf, 65536):
                code = 2
                break
            if not buf.value.startswith(b'{"window":"c","calls":%d,' % i):
                code = 3
                break
    finally:
        os._exit(code)
for i in range(1, 301):
    with c.window("py") as w:
        pass
    assert w.reply is not None and w.reply["window"] == "py" and w.calls == i, w.reply
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
'''
    r = subprocess.run([perfgate_bin, "-D", "-1", "-e", "task-clock", "-o", "/dev/null", "--",
                        sys.executable, "-c", script, lib],
                       env=package_env(), text=True, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_the_lock_page_keeps_processes_apart(perfgate_bin: str) -> None:
    """On the workload's channel the client takes the lock page's mutex:
    a program started with subprocess (no fork handler) takes turns with
    this one, a holder that died hands the lock on, and the reply it left
    unread is not taken for ours."""
    script = r'''
import os, signal, subprocess, sys, time, perfgate
from perfgate import _client
c = perfgate.connect()
page = c._page
assert page is not None, "no lock page on the workload's channel"
other = subprocess.Popen([sys.executable, "-c", """
import perfgate
c = perfgate.connect()
for i in range(1, 201):
    with c.window("spawned") as w:
        pass
    assert w.reply["window"] == "spawned" and w.calls == i, w.reply
"""], close_fds=False)
for i in range(1, 201):
    with c.window("parent") as w:
        pass
    assert w.reply["window"] == "parent" and w.calls == i, w.reply
assert other.wait() == 0
r, wr = os.pipe()
pid = os.fork()
if pid == 0:
    # Hold the lock, write a command, and die before reading its reply.
    page.lock(time.monotonic() + 10, "test", 10)
    os.write(int(os.environ["PERFGATE_CTL_FD"]), b"window begin z\n")
    page.owed += 1
    os.write(wr, b"r")
    signal.pause()
assert os.read(r, 1) == b"r"
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
c.window_begin("y")
w = c.window_end("y")
assert w.reply["window"] == "y" and w.calls == 1, w.reply
'''
    r = subprocess.run([perfgate_bin, "-D", "-1", "-e", "task-clock", "-o", "/dev/null", "--",
                        sys.executable, "-c", script],
                       env=package_env(), text=True, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_close_while_another_thread_waits_for_a_reply(tmp_path) -> None:
    fake = FakeAgent(tmp_path)
    c = fake.client(timeout=30)
    result: list[object] = []
    t = threading.Thread(target=lambda: result.append(c.command("hello")))
    t.start()
    assert fake.read_commands(1) == ["hello"]
    c.close()                       # the call in flight keeps its descriptors
    fake.reply('ack {"protocol":1}')
    t.join(30)
    assert result == ['{"protocol":1}']
    with pytest.raises(perfgate.PerfgateError, match="the client is closed"):
        c.ping()
    fake.close()


def test_agent_whose_workload_ended_stops_without_error(perfgate_bin: str) -> None:
    with perfgate.Agent(events=[GETPPID], perfgate_bin=perfgate_bin,
                        workload=[sys.executable, "-c", "import os; os.getppid()"]) as a:
        a.process.wait(60)        # the run ended with its workload
    assert a.report is not None and a.report.status == 0
    assert a.report.document is not None and a.report.document["run"]["exit_status"] == 0
    assert a.report.counts[GETPPID] == 0   # -D -1: the default window never opened


# ---- the named lock page of a FIFO channel -----------------------------------------


def connect_when_served(ctl: str, ack: str, proc: "subprocess.Popen[bytes]",
                        timeout: float = 60) -> perfgate.Client:
    """A client of the agent proc on FIFOs ctl/ack, once it answers.  Not a
    measure of time: the bound only ends a test whose agent never comes."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, f"the agent exited ({proc.returncode})"
        try:
            c = perfgate.Client(ctl_path=ctl, ack_path=ack, timeout=30)
            try:
                # The agent opens the ctl FIFO before the ack FIFO: until it
                # writes on the latter, a reply may find nobody there.
                c.ping()
                return c
            except perfgate.AgentGone:
                c.close()
        except perfgate.PerfgateError as e:
            if "no agent reads it" not in str(e):
                raise
        assert time.monotonic() < deadline, f"the agent did not serve {ctl} in {timeout} s"
        time.sleep(0.02)


def start_fifo_agent(perfgate_bin: str, ctl: str, ack: str,
                     *options: str) -> "subprocess.Popen[bytes]":
    """An agent serving ctl/ack, counting this process, until `stop`."""
    return subprocess.Popen([perfgate_bin, "-D", "-1", *options, "--control", f"fifo:{ctl},{ack}",
                             "-e", GETPPID, "-o", "/dev/null", "-p", str(os.getpid())],
                            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stop_fifo_agent(c: perfgate.Client, proc: "subprocess.Popen[bytes]") -> None:
    c.stop()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode(errors="replace")


def test_private_fifo_channel_has_a_named_lock_page(perfgate_bin: str) -> None:
    """A private FIFO channel's clients take the page the agent names after
    the ctl FIFO, the Agent's own client too (it connects before the agent
    has made the page), and a client in another process with them."""
    with perfgate.Agent(events=[GETPPID], perfgate_bin=perfgate_bin, timeout=30) as a:
        ctl, ack = os.path.join(a.dir, "ctl"), os.path.join(a.dir, "ack")
        name = page_name(ctl)
        st = os.stat(name)
        assert st.st_uid == os.getuid() and st.st_mode & 0o777 == 0o600
        assert a._page is not None and a._page.ino == st.st_ino and a._page.path == name
        with perfgate.Client(ctl_path=ctl, ack_path=ack, timeout=30) as c:
            assert c._page is not None and c._page.ino == st.st_ino and c._page.path == name
            with c.window("by-path") as w:
                getppid_times(9)
            assert w.counts[GETPPID] == 9
        # A program of its own on the channel: no fork handler, no shared
        # state but the page.  Its replies and ours stay apart.
        script = r'''
import sys, perfgate
c = perfgate.Client(ctl_path=sys.argv[1], ack_path=sys.argv[2], timeout=30)
assert c._page is not None and c._page.path == sys.argv[3], "no named page"
for i in range(1, 201):
    with c.window("other") as w:
        pass
    assert w.reply["window"] == "other" and w.calls == i, w.reply
'''
        other = subprocess.Popen([sys.executable, "-c", script, ctl, ack, name],
                                 env=package_env(), stderr=subprocess.PIPE, text=True)
        for i in range(1, 201):
            with a.window("agent") as w:
                pass
            assert (w.reply or {}).get("window") == "agent" and w.calls == i, w.reply
        _, err = other.communicate(timeout=120)
        assert other.returncode == 0, err
    assert not os.path.exists(name)  # removed when the agent stopped


def test_shared_fifo_channel_uses_the_record_lock(perfgate_bin: str) -> None:
    with perfgate.Agent(events=[GETPPID], options=["--control-shared"],
                        perfgate_bin=perfgate_bin, timeout=30) as a:
        ctl, ack = os.path.join(a.dir, "ctl"), os.path.join(a.dir, "ack")
        assert not os.path.exists(page_name(ctl))
        assert a._page is None and not a._find_page  # it has stopped looking
        with perfgate.Client(ctl_path=ctl, ack_path=ack, timeout=30) as c:
            assert c._page is None
            with c.window("shared") as w:
                getppid_times(6)
            assert w.counts[GETPPID] == 6
            assert c._page is None and not c._find_page


def test_client_follows_the_page_of_a_restarted_agent(perfgate_bin: str, tmp_path) -> None:
    """An agent that stops marks its page retired; a client opened before
    takes the page of the next agent on the same FIFOs, or the record lock
    when that one has none."""
    ctl, ack = str(tmp_path / "ctl"), str(tmp_path / "ack")
    os.mkfifo(ctl, 0o600)
    os.mkfifo(ack, 0o600)
    name = page_name(ctl)
    procs = []
    try:
        procs.append(start_fifo_agent(perfgate_bin, ctl, ack))
        c = connect_when_served(ctl, ack, procs[-1])
        assert c._page is not None and c._page.path == name
        first = c._page
        first_ino = os.stat(name).st_ino
        assert first.ino == first_ino
        stop_fifo_agent(c, procs[-1])
        assert not os.path.exists(name)

        procs.append(start_fifo_agent(perfgate_bin, ctl, ack))
        probe = connect_when_served(ctl, ack, procs[-1])
        second_ino = os.stat(name).st_ino
        assert probe._page is not None and probe._page.ino == second_ino
        # The first page is still mapped here, so its inode is not reused.
        assert second_ino != first_ino
        with c.window("again") as w:
            getppid_times(5)
        assert w.counts[GETPPID] == 5 and w.calls == 1
        assert c._page is not None and c._page is not first
        assert c._page.ino == second_ino and c._page.path == name
        probe.close()
        stop_fifo_agent(c, procs[-1])

        procs.append(start_fifo_agent(perfgate_bin, ctl, ack, "--control-shared"))
        probe = connect_when_served(ctl, ack, procs[-1])
        assert probe._page is None
        probe.close()
        with c.window("shared") as w:
            getppid_times(3)
        assert w.counts[GETPPID] == 3
        assert c._page is None
        stop_fifo_agent(c, procs[-1])
        c.close()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


class FakePage:
    """A lock page made by the test under the name of FakeAgent's channel,
    as the agent would (or, with other arguments, as it would not)."""

    def __init__(self, fake: FakeAgent, mode: int = 0o600, size: int = 4096,
                 ack_ino: Optional[int] = None, uid: int = -1) -> None:
        self.path = page_name(fake.ctl_path)
        ctl_ino = os.stat(fake.ctl_path).st_ino
        if ack_ino is None:
            ack_ino = os.stat(fake.ack_path).st_ino
        head = (b"perfgate-lock-1\0" + ctl_ino.to_bytes(8, sys.byteorder)
                + ack_ino.to_bytes(8, sys.byteorder))
        # The rest zero: no replies owed, not retired, and an unlocked
        # mutex (a zeroed pthread_mutex_t is PTHREAD_MUTEX_INITIALIZER).
        # Anything under the name now is stale: a page an agent killed on
        # other FIFOs left behind, whose inode the new ctl FIFO reuses.
        self.remove()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(fd, mode)
            os.fchown(fd, uid, -1)
            os.write(fd, head.ljust(size, b"\0"))
        finally:
            os.close(fd)
        self.ino = os.stat(self.path).st_ino

    def owe(self, n: int) -> None:
        """As a client that wrote n commands and left without their replies."""
        with open(self.path, "r+b") as f:
            f.seek(36)
            f.write(n.to_bytes(4, sys.byteorder))

    def retire(self) -> None:
        """What the agent does when it stops: the name goes, then the flag."""
        with open(self.path, "r+b") as f:
            os.unlink(self.path)
            f.seek(40)
            f.write((1).to_bytes(4, sys.byteorder))

    def remove(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def test_named_page_is_used_only_when_it_is_the_agents(tmp_path) -> None:
    fake = FakeAgent(tmp_path)
    ctl, ack = fake.ctl_path, fake.ack_path
    cases = {
        "the agent's": dict(),
        "others may read it": dict(mode=0o640),
        "others may write it": dict(mode=0o602),
        "cut short": dict(size=1024),
        "another channel's": dict(ack_ino=1),
    }
    if os.geteuid() == 0:
        cases["another user's"] = dict(uid=os.stat(ctl).st_uid + 1)
    try:
        for what, kwargs in cases.items():
            page = FakePage(fake, **kwargs)
            try:
                with perfgate.Client(ctl_path=ctl, ack_path=ack, timeout=30) as c:
                    if what == "the agent's":
                        assert c._page is not None and c._page.ino == page.ino, what
                    else:
                        assert c._page is None, what
            finally:
                page.remove()
        # A symbolic link under the name is not followed, not even to a
        # page that would do.
        real = FakePage(fake)
        os.rename(real.path, real.path + ".real")
        os.symlink(real.path + ".real", real.path)
        try:
            with perfgate.Client(ctl_path=ctl, ack_path=ack, timeout=30) as c:
                assert c._page is None
        finally:
            os.unlink(real.path)
            os.unlink(real.path + ".real")
    finally:
        fake.close()


def test_retired_page_is_looked_for_again(tmp_path) -> None:
    """A page found retired under its mutex is left for the page now under
    the name, or for the record lock when there is none, with the replies
    it owed; a client that has none looks for one on every call after, and
    one that found none on opening until the agent first answers."""
    fake = FakeAgent(tmp_path)
    pages = [FakePage(fake)]
    try:
        c = fake.client(timeout=30)
        assert c._page is not None and c._page.ino == pages[0].ino

        def exchange(expect: str, meanwhile: Callable[[], object] = lambda: None) -> None:
            answer = threading.Thread(
                target=lambda: (fake.read_commands(1), meanwhile(), fake.reply(f"err {expect}")))
            answer.start()
            with pytest.raises(perfgate.AgentError, match=expect):
                c.ping()
            answer.join(30)

        exchange("first")
        # Another client left a reply unread on the old page's channel:
        # whoever leaves the page first takes it along.
        pages[0].owe(1)
        fake.reply("err stale")
        pages[0].retire()
        pages.append(FakePage(fake))
        assert pages[1].ino != pages[0].ino  # the first is still mapped
        exchange("second")
        assert c._page is not None and c._page.ino == pages[1].ino

        pages[1].retire()  # and no page after it: the record lock
        exchange("third")
        assert c._page is None
        # Until the next agent's page comes, on every call.
        exchange("fourth", meanwhile=lambda: pages.append(FakePage(fake)))
        assert c._page is None
        exchange("fifth")
        assert c._page is not None and c._page.ino == pages[2].ino
        c.close()
        pages[2].remove()

        # A client that connects before the agent has made its page (as
        # the Agent's own does) finds it once the agent answers.
        c = fake.client(timeout=30)
        assert c._page is None and c._find_page
        exchange("sixth", meanwhile=lambda: pages.append(FakePage(fake)))
        assert c._page is not None and c._page.ino == pages[3].ino
        assert not c._find_page
        exchange("seventh")  # under the page's mutex now
        c.close()
    finally:
        for p in pages:
            p.remove()
        fake.close()
