"""The client side of the perfgate control protocol (perfgate-protocol(7)).

A :class:`Client` writes one command line on the control descriptor and
waits, within a timeout, for its one reply line on the ack descriptor.  It
follows libperfgate (clients/c/perfgate.c) closely:

- Threads: one process-wide lock around every command and its reply.
- Processes: children forked by the workload, and programs it starts,
  inherit the same pipes, so every exchange also holds a lock other
  processes see, the same one libperfgate takes, so that Python and C
  clients in one process tree serialise with each other:

  - On a channel with a lock page, the process-shared, robust mutex in
    the page (proto/ctl_lock.h has the layout), taken through ctypes with
    glibc's ``pthread_mutex_clocklock``.  The channel the agent gives its
    workload has one (``PERFGATE_LOCK_FD``), and so has a private FIFO
    channel (``--control fifo:CTL,ACK``): /dev/shm/perfgate-lock.DEV.INO,
    after the ctl FIFO's device and inode.  The page also counts the
    replies owed on the channel, so a reply another process left unread is
    dropped here.  An agent that stops serving a FIFO channel marks its
    page retired, and the next exchange looks the name up again: an agent
    started since on the same FIFOs has its own.
  - Elsewhere (a shared FIFO channel, descriptors set up by hand), a POSIX
    record lock (``fcntl.lockf``, i.e. ``F_SETLK`` with ``F_WRLCK`` over
    the whole file) on the control pipe.  Record locks belong to a process,
    not to a descriptor, which is why the thread lock is one for the whole
    process, and why descriptors are only closed under it (closing any
    descriptor of the pipe drops the process's lock).
- fork(): a child starts with a fresh thread lock (the parent's may have
  been held by a thread the child does not have) and forgets the replies
  its parent was owed and had buffered: they are the parent's.
- Replies owed to commands that timed out come first on the wire; they are
  read and dropped before the reply of the next command.
- Without an agent in the environment a client is *inert*: every call
  returns at once and does nothing.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import math
import mmap
import os
import select
import signal
import stat
import sys
import threading
import time
import types
from typing import Any, Callable, Optional

__all__ = [
    "PerfgateError",
    "AgentError",
    "Timeout",
    "AgentGone",
    "ProtocolError",
    "Client",
    "Window",
    "connect",
    "TIMEOUT_DEFAULT",
    "valid_name",
]

#: Seconds a call waits for its reply unless told otherwise (libperfgate's
#: PERFGATE_TIMEOUT_MS_DEFAULT).
TIMEOUT_DEFAULT = 5.0

# A command and its newline fit in PIPE_BUF, so the kernel writes it whole
# or not at all: no other writer's bytes land inside it.
_LINE_MAX = 4095
_NAME_MAX = 64  # CTL_NAME_MAX
_REPLY_LONG_MAX = 1024 * 1024  # CTL_REPLY_LONG_MAX: the longest reply
_NAME_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-"
)


class PerfgateError(Exception):
    """Base class of every error this package raises about the agent."""


class AgentError(PerfgateError):
    """The agent answered ``err REASON``.

    ``reason`` is the agent's text, exactly (e.g. ``window 'nope' is not
    open``); ``command`` is the line that was sent.
    """

    def __init__(self, command: str, reason: str) -> None:
        super().__init__(f"{command}: {reason}")
        self.command = command
        self.reason = reason


class Timeout(PerfgateError, TimeoutError):
    """No reply (or no room to write the command) within the timeout."""


class AgentGone(PerfgateError, ConnectionError):
    """The agent has exited or closed the channel."""


class ProtocolError(PerfgateError):
    """The agent sent something that is not a reply."""


def valid_name(name: str) -> bool:
    """True when NAME is a valid window or range name: 1 to 64 of
    ``A-Z a-z 0-9 _ . : -`` (perfgate-protocol(7), "Names")."""
    return 0 < len(name) <= _NAME_MAX and all(c in _NAME_CHARS for c in name)


def _check_name(kind: str, name: str) -> None:
    if not isinstance(name, str) or not valid_name(name):
        raise ValueError(
            f"bad {kind} name {name!r}: give 1 to {_NAME_MAX} of A-Z a-z 0-9 _ . : -"
        )


# ---- process-wide state -----------------------------------------------------

_channel_lock = threading.Lock()
_fork_generation = 0
_pending_close: list[int] = []  # descriptors to close when the lock is free
_default_lock = threading.Lock()  # around connect()'s first open


def _after_fork_in_child() -> None:
    global _channel_lock, _default_lock, _fork_generation
    # The parent's locks may have been held by threads the child does not
    # have: the child starts with fresh ones.
    _channel_lock = threading.Lock()
    _default_lock = threading.Lock()
    _fork_generation += 1


os.register_at_fork(after_in_child=_after_fork_in_child)


def _release(lock: threading.Lock) -> None:
    while _pending_close:
        try:
            os.close(_pending_close.pop())
        except OSError:
            pass
    lock.release()


def _timeout_from(timeout: Optional[float]) -> float:
    if timeout is not None:
        if not timeout > 0:
            raise ValueError(f"timeout ({timeout!r}) must be more than 0 seconds")
        return float(timeout)
    env = os.environ.get("PERFGATE_TIMEOUT_MS", "")
    if env:
        if not env.isdigit() or int(env) == 0:
            raise PerfgateError(
                f"PERFGATE_TIMEOUT_MS ('{env}') is not a positive number of milliseconds"
            )
        return int(env) / 1000.0
    return TIMEOUT_DEFAULT


def _reopen(fd: int, mode: int, what: str) -> int:
    """Our own non-blocking, close-on-exec descriptor on the caller's pipe.

    A pipe or FIFO is reopened through /proc (a new open file description,
    so the caller's own blocking reads are unchanged); anything else is
    duplicated and made non-blocking."""
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        st = os.fstat(fd)
    except OSError:
        raise PerfgateError(f"{what}: fd {fd} is not open") from None
    access = flags & os.O_ACCMODE
    if access != mode and access != os.O_RDWR:
        raise PerfgateError(
            f"{what}: fd {fd} is not open for "
            + ("writing" if mode == os.O_WRONLY else "reading")
        )
    if stat.S_ISFIFO(st.st_mode):
        try:
            return os.open(f"/proc/self/fd/{fd}", mode | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            if e.errno == errno.ENXIO:
                raise PerfgateError(
                    f"{what}: nobody reads fd {fd}: is the agent running?"
                ) from None
    nfd = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 0)
    fcntl.fcntl(nfd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    return nfd


def _open_fifo(path: str, mode: int, what: str) -> int:
    try:
        fd = os.open(path, mode | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as e:
        hint = {
            errno.ENXIO: " (no agent reads it: start perfgate --control fifo:...)",
            errno.ELOOP: " (it is a symbolic link: give the FIFO itself)",
        }.get(e.errno or 0, "")
        raise PerfgateError(
            f"cannot open the {what} FIFO '{path}': {e.strerror}{hint}"
        ) from None
    if not stat.S_ISFIFO(os.fstat(fd).st_mode):
        os.close(fd)
        raise PerfgateError(f"the {what} path '{path}' is not a FIFO")
    return fd


# ---- windows ----------------------------------------------------------------


class Window:
    """A named window: ``with client.window("parse") as w: ...``.

    The window is opened when the block starts and closed when it ends
    (also when it raises).  After the block:

    - ``counts``: this call's count per event (``None`` for an event the
      machine cannot count), from the ``window end`` reply's ``call.counts``;
    - ``time_ns``: this call's wall time in ns;
    - ``ranges``: what each range view counted during this call;
    - ``calls``, ``total_counts``, ``total_time_ns``, ``total_ranges``:
      the window's totals over the run so far;
    - ``reply``: the whole reply object (``None`` for an inert client).

    An inert client leaves ``counts`` empty and the times 0.
    """

    def __init__(self, client: "Client", name: str) -> None:
        _check_name("window", name)
        self.client = client
        self.name = name
        self.counts: dict[str, Optional[int]] = {}
        self.time_ns = 0
        self.ranges: dict[str, int] = {}
        self.calls = 0
        self.total_counts: dict[str, Optional[int]] = {}
        self.total_time_ns = 0
        self.total_ranges: dict[str, int] = {}
        self.reply: Optional[dict[str, Any]] = None

    def _fill(self, reply: dict[str, Any]) -> None:
        call = reply.get("call", {})
        total = reply.get("total", {})
        self.reply = reply
        self.calls = int(reply.get("calls", 0))
        self.counts = dict(call.get("counts", {}))
        self.time_ns = int(call.get("time_ns", 0))
        self.ranges = dict(call.get("ranges", {}))
        self.total_counts = dict(total.get("counts", {}))
        self.total_time_ns = int(total.get("time_ns", 0))
        self.total_ranges = dict(reply.get("ranges", {}))

    def __enter__(self) -> "Window":
        self.client.window_begin(self.name)
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[types.TracebackType],
    ) -> None:
        if exc is None:
            self.client._window_end_into(self)
            return
        # The block raised: close the window all the same, without hiding
        # the block's exception behind a failure to do so.
        try:
            self.client._window_end_into(self)
        except Exception as end_exc:  # noqa: BLE001
            exc.add_note(f"perfgate: closing window {self.name!r} failed too: {end_exc}")

    def __repr__(self) -> str:
        return f"<perfgate.Window {self.name!r} time_ns={self.time_ns} counts={self.counts}>"


# ---- the client -------------------------------------------------------------



def _pipe_end(fd: int, mode: int) -> Optional[int]:
    """The inode of fd when it is a pipe or FIFO open for mode, else None."""
    try:
        st = os.fstat(fd)
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        return None
    if not stat.S_ISFIFO(st.st_mode):
        return None
    access = flags & os.O_ACCMODE
    return st.st_ino if access in (mode, os.O_RDWR) else None


class _timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


_libc: Optional[ctypes.CDLL] = None


def _pthread() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        libc = ctypes.CDLL(None)
        for name in ("pthread_mutex_clocklock", "pthread_mutex_unlock",
                     "pthread_mutex_consistent"):
            fn = getattr(libc, name)
            fn.restype = ctypes.c_int
        libc.pthread_mutex_clocklock.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(_timespec)]
        libc.pthread_mutex_unlock.argtypes = [ctypes.c_void_p]
        libc.pthread_mutex_consistent.argtypes = [ctypes.c_void_p]
        _libc = libc
    return _libc


class _LockPage:
    """The lock page of a channel (proto/ctl_lock.h): the workload's, which
    PERFGATE_LOCK_FD names, or a FIFO channel's, which has a name."""

    MAGIC = b"perfgate-lock-1\0"
    SIZE = 4096
    OWED = 36
    RETIRED = 40
    MUTEX = 64
    # CTL_LOCK_NAME_FMT, under the directory where glibc's shm_open keeps it.
    NAME = "/dev/shm/perfgate-lock.{dev}.{ino}"

    def __init__(self, mm: mmap.mmap, ino: int, path: Optional[str]) -> None:
        self._mm = mm
        self._cells = (ctypes.c_char * self.SIZE).from_buffer(mm)
        self._mutex = ctypes.addressof(self._cells) + self.MUTEX
        #: The page file's inode, and its path if it is a named page (None
        #: for the workload's page: its name is an fd number).
        self.ino = ino
        self.path = path

    @classmethod
    def map(cls, ctl_fd: int, ack_fd: int) -> Optional["_LockPage"]:
        """The page PERFGATE_LOCK_FD names when it guards this channel."""
        env = os.environ.get("PERFGATE_LOCK_FD", "")
        if not env.isdigit():
            return None
        fd = int(env)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size < cls.SIZE:
                return None
            # Sealed against shrinking: a page cut short under the mapping
            # would raise SIGBUS at the next command.
            if not fcntl.fcntl(fd, fcntl.F_GET_SEALS) & fcntl.F_SEAL_SHRINK:
                return None
            mm = mmap.mmap(fd, cls.SIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            _pthread()
        except (OSError, AttributeError):
            return None
        ctl_ino, ack_ino = os.fstat(ctl_fd).st_ino, os.fstat(ack_fd).st_ino
        return cls._checked(mm, ctl_ino, ack_ino, st.st_ino, None)

    @classmethod
    def named(cls, ctl_fd: int, ack_fd: int) -> Optional["_LockPage"]:
        """The named page of the FIFO channel ctl_fd/ack_fd, when its agent
        made one (a private channel); None otherwise (a shared channel, a
        pipe, an older agent, no agent yet).

        The agent's page is the ctl FIFO's owner's alone: a file under the
        name that is not was put there by someone else, and is ignored.  It
        cannot be sealed (a tmpfs file is not a memfd), but only its owner,
        who owns the channel too, could shrink it."""
        try:
            ctl, ack_ino = os.fstat(ctl_fd), os.fstat(ack_fd).st_ino
            if not stat.S_ISFIFO(ctl.st_mode):
                return None
            path = cls.NAME.format(dev=ctl.st_dev, ino=ctl.st_ino)
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if (not stat.S_ISREG(st.st_mode) or st.st_uid != ctl.st_uid
                    or st.st_mode & 0o077 or st.st_size < cls.SIZE):
                return None
            mm = mmap.mmap(fd, cls.SIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            _pthread()
        except (OSError, AttributeError):
            return None
        finally:
            os.close(fd)  # the mapping keeps the page
        return cls._checked(mm, ctl.st_ino, ack_ino, st.st_ino, path)

    @classmethod
    def _checked(cls, mm: mmap.mmap, ctl_ino: int, ack_ino: int, ino: int,
                 path: Optional[str]) -> Optional["_LockPage"]:
        """The page in mm if it is the agent's for the channel of these
        pipe inodes: one inherited or found next to other pipes is not."""
        # The agent writes the magic last: the rest is read after it.
        if mm[:16] != cls.MAGIC:
            mm.close()
            return None
        inodes = mm[16:32]
        if (int.from_bytes(inodes[:8], sys.byteorder) != ctl_ino
                or int.from_bytes(inodes[8:], sys.byteorder) != ack_ino):
            mm.close()
            return None
        return cls(mm, ino, path)

    def close(self) -> None:
        # The ctypes view holds an export of the mapping, which mmap
        # refuses to close under it.
        del self._cells
        self._mm.close()

    @property
    def retired(self) -> bool:
        """Set by the agent when it stops serving the channel (read under
        the mutex)."""
        return self._mm[self.RETIRED:self.RETIRED + 4] != b"\0\0\0\0"

    @property
    def owed(self) -> int:
        return int.from_bytes(self._mm[self.OWED:self.OWED + 4], sys.byteorder)

    @owed.setter
    def owed(self, n: int) -> None:
        self._mm[self.OWED:self.OWED + 4] = n.to_bytes(4, sys.byteorder)

    def lock(self, deadline: float, what: str, timeout: float) -> None:
        # time.monotonic() is CLOCK_MONOTONIC, the clock the deadline is on.
        ts = _timespec(int(deadline), int((deadline % 1) * 1e9))
        libc = _pthread()
        rc = libc.pthread_mutex_clocklock(self._mutex, time.CLOCK_MONOTONIC, ctypes.byref(ts))
        if rc == errno.EOWNERDEAD:
            # Its holder died: the channel is whole (commands are written in
            # one piece) and the reply it left unread is counted in owed.
            rc = libc.pthread_mutex_consistent(self._mutex)
        if rc == errno.ETIMEDOUT:
            raise Timeout(
                f"{what}: timed out after {timeout:g} s: another process kept "
                "the control channel busy"
            )
        if rc:
            raise PerfgateError(
                f"{what}: cannot take the control channel's lock: {os.strerror(rc)}")

    def unlock(self) -> None:
        _pthread().pthread_mutex_unlock(self._mutex)


def _not_the_agents(ctl_fd: int, ack_fd: int, channel_id: str) -> str:
    """Why PERFGATE_CTL_FD/PERFGATE_ACK_FD are not the agent's pipes, or "".

    The agent names the pipes' inodes in PERFGATE_CHANNEL_ID
    ("CTL_INODE:ACK_INODE"); without it (a channel set up by hand) any pipe
    pair of the right direction is taken."""
    ctl_ino = _pipe_end(ctl_fd, os.O_WRONLY)
    ack_ino = _pipe_end(ack_fd, os.O_RDONLY)
    if ctl_ino is None or ack_ino is None or ctl_ino == ack_ino:
        return (f"PERFGATE_CTL_FD {ctl_fd} and PERFGATE_ACK_FD {ack_fd} are not the "
                "agent's pipes (closed, or other files)")
    if channel_id:
        want = channel_id.split(":")
        if len(want) != 2 or not all(w.isdigit() for w in want):
            raise PerfgateError(
                f"PERFGATE_CHANNEL_ID ('{channel_id}') must be CTL_INODE:ACK_INODE")
        if (int(want[0]), int(want[1])) != (ctl_ino, ack_ino):
            return (f"PERFGATE_CTL_FD {ctl_fd} and PERFGATE_ACK_FD {ack_fd} are other "
                    "pipes than PERFGATE_CHANNEL_ID names")
    return ""

class Client:
    """One control channel to a perfgate agent.

    ``Client()`` uses the channel the agent exports to its workload
    (``PERFGATE_CTL_FD``/``PERFGATE_ACK_FD``), and is inert when neither is
    set.  ``Client(ctl_fd, ack_fd)`` uses inherited descriptors;
    ``Client(ctl_path=..., ack_path=...)`` a FIFO pair (``perfgate
    --control fifo:CTL,ACK``).  ``timeout`` is in seconds per call (default:
    ``PERFGATE_TIMEOUT_MS`` from the environment, else 5).

    Every method raises :class:`AgentError` when the agent answers ``err``,
    :class:`Timeout` when no reply comes in time, :class:`AgentGone` when
    the agent has gone; names are checked before any I/O (``ValueError``).
    """

    def __init__(
        self,
        ctl_fd: Optional[int] = None,
        ack_fd: Optional[int] = None,
        *,
        ctl_path: Optional[str] = None,
        ack_path: Optional[str] = None,
        timeout: Optional[float] = None,
        _adopt: Optional[tuple[int, int]] = None,
    ) -> None:
        self._ctl = -1
        self._ack = -1
        self._inert = False
        self._closed = False
        self._shared = False
        self._buf = bytearray()
        self._owed = 0
        self._page: Optional[_LockPage] = None
        # The page (if any) is, or was, a FIFO channel's named page: when it
        # goes, every call looks for the next agent's, as libperfgate does.
        self._page_by_name = False
        # No page found on opening: look until the agent first answers.
        self._find_page = False
        self._generation = _fork_generation
        # Set by Agent: returns why the agent is not running, or None.
        self._gone: Optional[Callable[[], Optional[str]]] = None
        if _adopt is not None:
            # Agent: descriptors it opened itself, non-blocking, ours to close.
            self._ctl, self._ack = _adopt
        elif ctl_path is not None or ack_path is not None:
            if ctl_path is None or ack_path is None or ctl_fd is not None or ack_fd is not None:
                raise ValueError("give both ctl_path and ack_path, and no fds with them")
            self._ack = _open_fifo(ack_path, os.O_RDONLY, "ack")
            try:
                self._ctl = _open_fifo(ctl_path, os.O_WRONLY, "ctl")
            except BaseException:
                os.close(self._ack)
                raise
        elif ctl_fd is not None or ack_fd is not None:
            if ctl_fd is None or ack_fd is None:
                raise ValueError("give both ctl_fd and ack_fd")
            self._connect_fds(ctl_fd, ack_fd, "Client(ctl_fd, ack_fd)")
        else:
            ctl = os.environ.get("PERFGATE_CTL_FD", "")
            ack = os.environ.get("PERFGATE_ACK_FD", "")
            if not ctl and not ack:
                self._inert = True
                self.timeout: float = TIMEOUT_DEFAULT
                return
            if not ctl.isdigit() or not ack.isdigit():
                raise PerfgateError(
                    f"PERFGATE_CTL_FD ('{ctl}') and PERFGATE_ACK_FD ('{ack}') must both "
                    "be file descriptor numbers"
                )
            why = _not_the_agents(int(ctl), int(ack), os.environ.get("PERFGATE_CHANNEL_ID", ""))
            if why:
                # The environment outlived its descriptors (closed, or other
                # files now): run as if alone, as libperfgate does.
                self._inert = True
                self.inert_reason = why
                self.timeout = TIMEOUT_DEFAULT
                return
            self._connect_fds(int(ctl), int(ack), "PERFGATE_CTL_FD/PERFGATE_ACK_FD")
        if self._ctl >= 0:
            # Every client of a channel that has a page must take its mutex
            # (the page and the record lock do not exclude each other): the
            # workload's page, else a FIFO channel's named page, also for
            # the Agent's own descriptors.
            if _adopt is None:
                self._page = _LockPage.map(self._ctl, self._ack)
            if self._page is None:
                self._page = _LockPage.named(self._ctl, self._ack)
                self._page_by_name = self._page is not None
            # The agent makes a FIFO channel's page before it reads the ctl
            # FIFO, but a reader of ours (the Agent's descriptors, opened
            # read-write) lets us connect before that: keep looking until
            # the agent has answered.
            self._find_page = self._page is None
        try:
            self.timeout = _timeout_from(timeout)
        except BaseException:
            self.close()
            raise
        self._make_pollers()

    #: Why an environment client is inert although PERFGATE_CTL_FD is set.
    inert_reason: str = ""

    def _connect_fds(self, ctl_fd: int, ack_fd: int, what: str) -> None:
        # The ack side first: an error then never closes a ctl descriptor,
        # which would drop a record lock another client of ours holds.
        self._ack = _reopen(ack_fd, os.O_RDONLY, what)
        try:
            self._ctl = _reopen(ctl_fd, os.O_WRONLY, what)
        except BaseException:
            os.close(self._ack)
            raise

    def _make_pollers(self) -> None:
        self._poll_in = select.poll()
        self._poll_in.register(self._ack, select.POLLIN)
        self._poll_out = select.poll()
        self._poll_out.register(self._ctl, select.POLLOUT)

    # ---- state ----------------------------------------------------------

    @property
    def inert(self) -> bool:
        """True when there is no agent: every call does nothing."""
        return self._inert

    def close(self) -> None:
        """Close this client's descriptors.  (The shared client of
        :func:`connect` is never closed.)"""
        if self._shared or self._closed:
            return
        self._closed = True
        fds = [fd for fd in (self._ctl, self._ack) if fd >= 0]
        if not fds:
            return
        lock = _channel_lock
        # Closing a descriptor of the ctl pipe drops this process's record
        # lock on it: only when no thread is in an exchange.  A thread in
        # one (on this client too) goes on with the descriptors, which are
        # closed when it releases the lock; later calls see _closed.
        _pending_close.extend(fds)
        if lock.acquire(blocking=False):
            _release(lock)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> "Client":
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[types.TracebackType],
    ) -> None:
        self.close()

    # ---- one command, one reply -----------------------------------------

    def command(self, line: str, *, timeout: Optional[float] = None) -> str:
        """Send any command LINE; return the reply's text after ``ack ``
        (``""`` for a bare ``ack``, and always for an inert client)."""
        if self._inert:
            return ""
        if (
            not isinstance(line, str)
            # A blank line is no command: the agent, as perf, sends no
            # reply, and one counted as owed would drop another's reply.
            or not line.strip(" \t\r")
            or "\n" in line
            or "\0" in line
        ):
            raise ValueError("a command is one non-empty line, without NUL bytes")
        data = line.encode() + b"\n"
        if len(data) > _LINE_MAX + 1:
            raise ValueError(f"a command is at most {_LINE_MAX} bytes")
        return self._exchange(data, line, self.timeout if timeout is None else timeout)

    def _exchange(self, data: bytes, what: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        lock = _channel_lock
        if not lock.acquire(timeout=timeout):
            raise Timeout(
                f"{what}: timed out after {timeout:g} s: another thread kept the "
                "control channel busy"
            )
        try:
            if self._closed:
                raise PerfgateError(f"{what}: the client is closed")
            if self._generation != _fork_generation:
                # Forked: what the parent was owed and had buffered is its
                # own (also when this call moves to another lock, below),
                # and a poll object a parent's thread was waiting in is
                # marked busy for good (select.poll: "concurrent poll()
                # invocation").
                self._generation = _fork_generation
                self._owed = 0
                self._buf.clear()
                self._make_pollers()
            while True:
                if self._page is None and (self._page_by_name or self._find_page):
                    self._page = _LockPage.named(self._ctl, self._ack)
                    if self._page is not None:
                        self._page_by_name = True
                page = self._page
                if page is None:
                    break
                page.lock(deadline, what, timeout)
                if page.retired:
                    # The agent that made the page no longer serves the
                    # channel (it removed the name first).  One started
                    # since on the same FIFOs has a page of its own, or
                    # none, and its other clients take that: so does this
                    # one, taking along the replies the old page owed (the
                    # first client to leave it takes them all) for
                    # whichever lock comes next.  The workload's page has
                    # no successor.
                    self._owed += page.owed
                    page.owed = 0
                    page.unlock()
                    page.close()
                    self._page = None
                    continue
                try:
                    if self._owed:
                        # Replies owed under the lock this client held
                        # before are owed on this page now.
                        page.owed += self._owed
                        self._owed = 0
                    return self._round_trip(data, what, deadline, timeout)
                finally:
                    # A call that timed out may leave the head of its reply
                    # here; the page's count owes that whole line, so the
                    # next holder, in any process, reads the rest as one.
                    self._buf.clear()
                    page.unlock()
            looking = self._find_page
            self._record_lock(deadline, what, timeout)
            try:
                return self._round_trip(data, what, deadline, timeout)
            finally:
                fcntl.lockf(self._ctl, fcntl.LOCK_UN)
                if looking and not self._find_page:
                    # The agent answered, so it serves the channel: its
                    # page, if it makes one, exists now.  No page then
                    # means none to find (a shared channel): stop looking.
                    self._page = _LockPage.named(self._ctl, self._ack)
                    if self._page is not None:
                        self._page_by_name = True
        finally:
            _release(lock)

    def _record_lock(self, deadline: float, what: str, timeout: float) -> None:
        # F_SETLKW could wait forever behind a stopped process: retry
        # F_SETLK after short, growing pauses, within the call's timeout.
        pause = 20e-6
        while True:
            try:
                fcntl.lockf(self._ctl, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise PerfgateError(
                        f"{what}: cannot lock the control channel: {e.strerror}"
                    ) from None
            if time.monotonic() >= deadline:
                raise Timeout(
                    f"{what}: timed out after {timeout:g} s: another process kept "
                    "the control channel busy"
                )
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)

    def _round_trip(self, data: bytes, what: str, deadline: float, timeout: float) -> str:
        self._write(data, what, deadline, timeout)
        self._owe(1)
        while True:
            line = self._read_line(what, deadline, timeout)
            self._find_page = False  # an agent serves the channel
            if self._owe(-1) == 0:
                return self._use(line, what)

    def _owe(self, n: int) -> int:
        """Add n to the replies owed, and return how many are: the channel's
        count with a lock page (replies other processes left unread too),
        else this client's."""
        page = self._page
        if page is not None:
            page.owed += n
            return page.owed
        self._owed += n
        return self._owed

    def _wait(self, poller: Any, what: str, deadline: float, timeout: float, doing: str) -> None:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(f"{what}: timed out after {timeout:g} s {doing}")
            ms = math.ceil(left * 1000)
            if self._gone is not None:
                ms = min(ms, 50)  # notice a dead agent quickly
            if poller.poll(ms):
                return
            if self._gone is not None:
                why = self._gone()
                if why:
                    raise AgentGone(f"{what}: no reply: {why}")

    def _write(self, data: bytes, what: str, deadline: float, timeout: float) -> None:
        while data:
            try:
                n = self._write_nosigpipe(data)
            except BlockingIOError:
                self._wait(self._poll_out, what, deadline, timeout,
                           "(the agent does not read its control channel)")
                continue
            except BrokenPipeError:
                raise AgentGone(
                    f"{what}: the agent is gone: nobody reads its control channel"
                ) from None
            except OSError as e:
                raise PerfgateError(f"{what}: cannot write to the agent: {e.strerror}") from None
            data = data[n:]

    def _write_nosigpipe(self, data: bytes) -> int:
        # Python ignores SIGPIPE unless the program restored it: then block
        # it around the write, and take back one that the write raised.
        if signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN:
            return os.write(self._ctl, data)
        was_pending = signal.SIGPIPE in signal.sigpending()
        old = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGPIPE])
        try:
            return os.write(self._ctl, data)
        except BrokenPipeError:
            if not was_pending:
                signal.sigtimedwait([signal.SIGPIPE], 0)
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def _read_line(self, what: str, deadline: float, timeout: float) -> bytes:
        buf = self._buf
        while True:
            # The NUL after each reply ("ack\n\0", perf's framing) starts
            # the next one in the buffer: skip it.
            skip = 0
            while skip < len(buf) and buf[skip] == 0:
                skip += 1
            if skip:
                del buf[:skip]
            nl = buf.find(b"\n")
            if nl >= 0:
                line = bytes(buf[:nl])
                del buf[: nl + 1]
                return line
            if len(buf) > _REPLY_LONG_MAX:
                buf.clear()
                raise ProtocolError(
                    f"{what}: reply from the agent longer than {_REPLY_LONG_MAX} bytes"
                )
            # Wait first: right after a command the reply is not there yet
            # (the agent runs when we block), and a read that fails with
            # EAGAIN costs a syscall and a Python exception.
            self._wait(self._poll_in, what, deadline, timeout, "waiting for the agent's reply")
            try:
                chunk = os.read(self._ack, 65536)
            except BlockingIOError:
                continue
            except OSError as e:
                raise PerfgateError(f"{what}: cannot read from the agent: {e.strerror}") from None
            if not chunk:
                why = self._gone() if self._gone is not None else None
                raise AgentGone(
                    f"{what}: the agent is gone: "
                    + (why or "its reply channel was closed")
                )
            buf += chunk

    @staticmethod
    def _use(line: bytes, what: str) -> str:
        text = line.decode("utf-8", "replace")
        if text == "ack":
            return ""
        if text.startswith("ack "):
            return text[4:]
        if text == "err" or text.startswith("err "):
            raise AgentError(what, text[4:])
        raise ProtocolError(f"{what}: malformed reply from the agent: {text[:80]!r}")

    # ---- commands -------------------------------------------------------

    def enable(self, event: Optional[str] = None) -> None:
        """Open the default window (of every event, or of EVENT only)."""
        self.command("enable" if event is None else f"enable {event}")

    def disable(self, event: Optional[str] = None) -> None:
        """Close the default window (of every event, or of EVENT only)."""
        self.command("disable" if event is None else f"disable {event}")

    def ping(self) -> None:
        """Check that the agent answers."""
        self.command("ping")

    def snapshot(self) -> None:
        """Have the agent print the counts so far to its report output."""
        self.command("snapshot")

    def hello(self) -> dict[str, Any]:
        """The agent's protocol version and commands (``{}`` when inert)."""
        text = self.command("hello")
        return dict(json.loads(text)) if text else {}

    def stop(self) -> Any:
        """End the run: the agent writes its final report and
        ``--json-file`` document, then acks; nothing is read after it."""
        self.command("stop")
        return None

    def window_begin(self, name: str) -> None:
        """Open the named window NAME (nestable)."""
        _check_name("window", name)
        self.command(f"window begin {name}")

    def window_end(self, name: str) -> Window:
        """Close one ``begin`` of window NAME; return its counts."""
        w = Window(self, name)
        self._window_end_into(w)
        return w

    def _window_end_into(self, w: Window) -> None:
        text = self.command(f"window end {w.name}")
        if text:
            try:
                w._fill(json.loads(text))
            except (ValueError, AttributeError) as e:
                raise ProtocolError(
                    f"window end {w.name}: reply is not a JSON object: {e}"
                ) from None

    def window(self, name: str) -> Window:
        """A context manager around window NAME: ``with c.window("x") as w``."""
        return Window(self, name)

    def range_load(self, name: str, spec: str) -> None:
        """Load range NAME = SPEC (perfgate-ranges(7)); its views are
        ``event@NAME``.  A bad SPEC raises AgentError with the place of the
        mistake in ``reason``."""
        _check_name("range", name)
        if not isinstance(spec, str) or not spec.strip() or "\n" in spec:
            raise ValueError("bad range spec: give one non-empty line")
        self.command(f"range load {name} = {spec}")

    def range_unload(self, name: str) -> None:
        """Stop range NAME; its totals stay in the report."""
        _check_name("range", name)
        self.command(f"range unload {name}")

    def __repr__(self) -> str:
        if self._inert:
            return "<perfgate.Client inert>"
        return f"<perfgate.Client ctl_fd={self._ctl} ack_fd={self._ack} timeout={self.timeout:g}>"


_default: Optional[Client] = None


def connect(timeout: Optional[float] = None) -> Client:
    """The process's shared client on the channel the agent gave it
    (``PERFGATE_CTL_FD``/``PERFGATE_ACK_FD``), opened on first use; inert
    when the program runs without an agent.  ``timeout`` (seconds), when
    given, becomes the shared client's timeout."""
    global _default
    with _default_lock:
        if _default is None:
            c = Client(timeout=timeout)
            c._shared = True
            _default = c
        elif timeout is not None:
            _default.timeout = _timeout_from(timeout)
        return _default
