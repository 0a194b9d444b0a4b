#!/usr/bin/env python3
"""settled: wait until a tool has taken in and acted on everything written
to its control FIFO, without asking the tool: the FIFO holds no unread
bytes, and after that the tool's main thread is blocked in its wait for
events (poll, select or epoll).  A tool reads a command and carries it out
before it waits again, so once both hold, a command written before this
check has been executed.  For a channel with no ack, where the client has
nothing to wait for.  (A command without a terminator may wait for more
bytes before it runs: use terminated commands with this check.)

    settled.py PID FIFO

Exits 0 once settled, 1 after 20 s.  Standard library only; reads
/proc/PID/syscall, so it runs as root or as the tool's user.
"""
import array
import fcntl
import os
import platform
import sys
import termios
import time

# The blocking waits for events, by architecture.
WAITS = {
    "x86_64": {7, 23, 232, 270, 271, 281, 441},  # poll select epoll_wait pselect6 ppoll epoll_pwait epoll_pwait2
    "aarch64": {22, 72, 73, 441},  # epoll_pwait pselect6 ppoll epoll_pwait2
}


def pending(fd):
    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf, True)
    return buf[0]


def waiting(pid, waits):
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, pid)) as f:
            first = f.read().split()
    except OSError:
        return False
    return bool(first) and first[0].isdigit() and int(first[0]) in waits


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: settled.py PID FIFO\n")
        return 2
    pid, path = int(argv[1]), argv[2]
    waits = WAITS.get(platform.machine())
    if waits is None:
        sys.stderr.write("settled.py: no wait syscalls known for %s\n" % platform.machine())
        return 2
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            if pending(fd) == 0 and waiting(pid, waits):
                return 0
            time.sleep(0.001)
    finally:
        os.close(fd)
    sys.stderr.write("settled.py: %s still holds %d bytes or pid %d is busy after 20 s\n"
                     % (path, pending_safe(path), pid))
    return 1


def pending_safe(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return -1
    try:
        return pending(fd)
    finally:
        os.close(fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
