"""Start a perfgate agent on private FIFOs and drive it (as perfgate.sh's
perfgate_start does for bash)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import types
import weakref
from typing import Any, Mapping, Optional, Sequence

from ._client import AgentGone, Client, PerfgateError, Timeout, _timeout_from

__all__ = ["Agent", "Report", "find_agent"]


def find_agent(perfgate_bin: Optional[str] = None) -> str:
    """The agent binary: PERFGATE_BIN, else $PERFGATE, else ``perfgate``
    from PATH."""
    cand = perfgate_bin or os.environ.get("PERFGATE") or "perfgate"
    found = shutil.which(cand)
    if not found:
        raise PerfgateError(
            f"agent '{cand}' not found (give perfgate_bin=, or set PERFGATE to its path)"
        )
    return found


class Report:
    """What a run left: the ``--json-file`` document parsed (``document``),
    the text report (``text``), the agent's stderr and exit status."""

    def __init__(self, document: Optional[dict[str, Any]], text: str, stderr: str,
                 status: Optional[int]) -> None:
        self.document = document
        self.text = text
        self.stderr = stderr
        self.status = status

    def _views(self) -> list[dict[str, Any]]:
        return list((self.document or {}).get("views", []))

    @staticmethod
    def _count(view: dict[str, Any]) -> Optional[int]:
        return None if view.get("status") == "not supported" else int(view.get("count", 0))

    @property
    def counts(self) -> dict[str, Optional[int]]:
        """The default window's count per event (``None``: not supported)."""
        return {v["event"]: self._count(v) for v in self._views() if v.get("gate") == "default"}

    @property
    def windows(self) -> dict[str, dict[str, Any]]:
        """Every named window: ``{"calls", "open_ns", "counts": {event: n}}``."""
        out: dict[str, dict[str, Any]] = {}
        for w in (self.document or {}).get("windows", []):
            out[w["name"]] = {"calls": w.get("calls", 0), "open_ns": w.get("open_ns", 0),
                              "counts": {}}
        for v in self._views():
            if v.get("gate") == "window" and v.get("window") in out:
                out[v["window"]]["counts"][v["event"]] = self._count(v)
        return out

    def window(self, name: str) -> dict[str, Any]:
        """One named window, as in :attr:`windows` (KeyError if never opened)."""
        return self.windows[name]

    def __repr__(self) -> str:
        return f"<perfgate.Report status={self.status} windows={list(self.windows)}>"


def _scan_options(options: Sequence[str]) -> tuple[bool, bool, bool, bool]:
    """Whether agent OPTIONS name a target, a report output, a delay and a
    --json-file (perf stat's option syntax, as perfgate.sh scans it)."""
    target = output = delay = json_file = False
    it = iter(options)
    for a in it:
        if a == "--":
            break
        name = a.split("=", 1)[0]
        if name in ("--all-cpus", "--cpu", "--pid", "--tid"):
            target = True
        elif name in ("--output", "--log-fd"):
            output = True
        elif name == "--delay":
            delay = True
        elif name == "--json-file":
            json_file = True
        if a.startswith("--"):
            if "=" not in a and a in (
                "--cpu", "--pid", "--tid", "--output", "--log-fd", "--event", "--filter",
                "--delay", "--control", "--ctl-fd", "--ctl-fd-ack", "--interval-print",
                "--interval-count", "--field-separator", "--json-file", "--mmap-pages",
                "--range", "--range-scope", "--range-backend",
            ):
                next(it, None)
            continue
        if a.startswith("-") and len(a) > 1:
            for i, c in enumerate(a[1:], 1):
                if c == "a":
                    target = True
                    continue
                if c in "CptoeDIxm":
                    target = target or c in "Cpt"
                    output = output or c == "o"
                    delay = delay or c == "D"
                    if i == len(a) - 1:
                        next(it, None)
                    break
    return target, output, delay, json_file


def _cleanup(proc: "subprocess.Popen[bytes]", tmpdir: str, owner: int) -> None:
    """Finaliser: an agent nobody stopped is ended (SIGTERM, then SIGKILL)."""
    if os.getpid() != owner:
        return
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except OSError:
            pass
    shutil.rmtree(tmpdir, ignore_errors=True)


class Agent(Client):
    """A perfgate agent of one's own, on private FIFOs, and a client of it.

    ``Agent(events=["task-clock"], options=[...], workload=None)`` starts::

        PERFGATE -D -1 --control fifo:DIR/ctl,DIR/ack -o DIR/report \\
                 --json-file DIR/run.json -e EVENT... [-p PID] OPTIONS... [-- WORKLOAD...]

    in a private directory DIR (mode 0700) and waits until it answers
    ``ping``.  ``-D -1`` is left out when OPTIONS give ``-D``; ``-o`` when
    they give ``-o`` or ``--log-fd``; ``-p`` (the calling process: its
    threads and the children it starts later are counted) when there is a
    workload or OPTIONS name a target (``-a``, ``-C``, ``-p``, ``-t``).
    ``json_file`` keeps the document at a path of one's choosing; ``env``
    is the environment of the agent and its workload (default: ours).

    Used as a context manager it stops the agent when the block ends, also
    when the block raises, and leaves the :class:`Report` in ``report``.
    Every :class:`Client` method works on it.
    """

    def __init__(
        self,
        events: Sequence[str] = (),
        options: Sequence[str] = (),
        workload: Optional[Sequence[str]] = None,
        *,
        perfgate_bin: Optional[str] = None,
        timeout: Optional[float] = None,
        json_file: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
    ) -> None:
        if isinstance(events, str) or isinstance(options, str) or isinstance(workload, str):
            raise TypeError("events, options and workload are sequences of strings")
        self._owner = os.getpid()
        self.report: Optional[Report] = None
        self.binary = find_agent(perfgate_bin)
        tmo = _timeout_from(timeout)
        target, output, delay, has_json = _scan_options(options)
        if has_json:
            raise ValueError("give the JSON document's path as json_file=, not --json-file")
        self.dir = tempfile.mkdtemp(prefix="perfgate.")  # mode 0700
        ctl, ack = os.path.join(self.dir, "ctl"), os.path.join(self.dir, "ack")
        self._report_path: Optional[str] = None if output else os.path.join(self.dir, "report")
        self.json_path = os.path.abspath(json_file) if json_file else os.path.join(self.dir, "run.json")
        self._keep_json = json_file is not None
        args = [self.binary]
        if not delay:
            args += ["-D", "-1"]
        args += ["--control", f"fifo:{ctl},{ack}", "--json-file", self.json_path]
        if self._report_path:
            args += ["-o", self._report_path]
        for e in events:
            args += ["-e", e]
        if not target and not workload:
            args += ["-p", str(os.getpid())]
        args += list(options)
        if workload:
            args += ["--", *workload]
        self.args = args
        self._stderr_path = os.path.join(self.dir, "stderr")
        try:
            os.mkfifo(ctl, 0o600)
            os.mkfifo(ack, 0o600)
            with open(self._stderr_path, "wb") as err:
                # Its own session: a ^C at the terminal reaches us, not the
                # agent, so the with-block's exit still stops it cleanly.
                self.process = subprocess.Popen(
                    args, stdin=subprocess.DEVNULL, stderr=err, start_new_session=True,
                    env=None if env is None else dict(env))
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self._finalizer = weakref.finalize(self, _cleanup, self.process, self.dir, self._owner)
        self.pid = self.process.pid
        try:
            # Read-write: opening does not wait for the agent, and neither
            # end ever sees end-of-file; a dead agent is noticed by its pid.
            flags = os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW
            ctl_fd = os.open(ctl, flags)
            try:
                ack_fd = os.open(ack, flags)
            except BaseException:
                os.close(ctl_fd)
                raise
            super().__init__(timeout=tmo, _adopt=(ctl_fd, ack_fd))
        except BaseException:
            self._finalizer()
            raise
        self._gone = self._why_gone
        try:
            self.ping()
        except PerfgateError as e:
            self._terminate()
            self._finalizer()
            raise PerfgateError(
                f"the agent did not start: {' '.join(args)}: {e}"
                + (f"\n{self.stderr().rstrip()}" if self.stderr().strip() else "")
            ) from None
        except BaseException:
            self._finalizer()
            raise

    # ---- the process ----------------------------------------------------

    def _why_gone(self) -> Optional[str]:
        if os.getpid() != self._owner:
            # A forked child cannot wait for its parent's child: look in /proc.
            try:
                with open(f"/proc/{self.pid}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                return f"the agent (pid {self.pid}) is not running"
            return f"the agent (pid {self.pid}) has exited" if state in (b"Z", b"X") else None
        st = self.process.poll()
        if st is None:
            return None
        return f"the agent (pid {self.pid}) is not running (exit status {_status(st)})"

    def stderr(self) -> str:
        """What the agent has written on its stderr so far."""
        try:
            with open(self._stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _terminate(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(self.timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def _collect(self) -> Report:
        status = self.process.poll()
        document: Optional[dict[str, Any]] = None
        try:
            with open(self.json_path, encoding="utf-8") as f:
                document = json.load(f)
        except (OSError, ValueError):
            document = None
        text = ""
        if self._report_path:
            try:
                with open(self._report_path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:
                pass
        self.report = Report(document, text, self.stderr(),
                             None if status is None else _status(status))
        self.close()
        self._finalizer()  # the agent has exited: this removes the directory
        return self.report

    def stop(self) -> Report:
        """Send ``stop``, wait for the agent to exit, and return its report
        (again on later calls).  An agent that has already ended its run by
        itself (its workload exited) is not an error: its report is
        returned.  If the agent does not answer it is ended with SIGTERM
        (then SIGKILL) and the error is raised; so is an agent that died
        without writing its document."""
        if self.report is not None:
            return self.report
        if os.getpid() != self._owner:
            raise PerfgateError("stop: only the process that started the agent may stop it")
        try:
            self.command("stop")
        except PerfgateError as e:
            ended = self.process.poll() is not None
            self._terminate()
            report = self._collect()
            if ended and isinstance(e, AgentGone) and report.document is not None:
                return report
            raise
        try:
            self.process.wait(self.timeout)
        except subprocess.TimeoutExpired:
            self._terminate()
            self._collect()
            raise Timeout(f"stop: the agent (pid {self.pid}) did not exit within "
                          f"{self.timeout:g} s") from None
        return self._collect()

    def wait(self, timeout: Optional[float] = None) -> Report:
        """Wait for the agent to end by itself (its workload ended), at most
        TIMEOUT seconds (default: no limit); return its report."""
        if self.report is not None:
            return self.report
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise Timeout(f"wait: the agent (pid {self.pid}) did not exit within "
                          f"{timeout:g} s") from None
        return self._collect()

    def __enter__(self) -> "Agent":
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[types.TracebackType],
    ) -> None:
        if os.getpid() != self._owner:
            return
        if exc is None:
            self.stop()
            return
        try:
            self.stop()
        except Exception as stop_exc:  # noqa: BLE001
            exc.add_note(f"perfgate: stopping the agent failed too: {stop_exc}")

    def __repr__(self) -> str:
        return f"<perfgate.Agent pid={self.pid} {'stopped' if self.report else 'running'}>"


def _status(returncode: int) -> int:
    """subprocess's returncode as a shell's exit status (128+N for signal N)."""
    return 128 - returncode if returncode < 0 else returncode

