#!/usr/bin/env python3
"""select_chunks: a benchmark that gates its own counting through FIFOs it
opens non-blocking, in the style of interpreters and servers that take the
FIFOs' paths from environment variables (the user runs
`perf stat -D -1 --control fifo:CTL,ACK` with them set): the control FIFO is
opened O_WRONLY | O_NONBLOCK and the ack FIFO O_RDONLY | O_NONBLOCK, a
command is written as "enable\\n", the ack is awaited with select() and a
one-second timeout, then read in four-byte chunks until a newline comes.

    select_chunks.py K      (FIFOs in $PERF_STAT_CTL_FIFO, $PERF_STAT_ACK_FIFO)

Reading up to the newline leaves the ack's trailing NUL in the FIFO, so the
next select() can wake for that NUL alone: the client selects again until a
newline has come, and each reply, NULs dropped, must be exactly b"ack\\n".
(The harnesses it mirrors return after the first wake-up, or carry on
silently after a timeout, and so may run ahead of the window; this client
fails instead, since its count would be wrong.)

3 getppid() calls come before `enable`, K inside, 2 after `disable`.
Standard library only.
"""
import os
import select
import signal
import stat
import sys


def fail(msg):
    sys.stderr.write("select_chunks: %s\n" % msg)
    sys.exit(1)


def open_fifo(var, flags):
    path = os.environ.get(var)
    if not path:
        fail("$%s is not set" % var)
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISFIFO(os.fstat(fd).st_mode):
        fail("%s is not a FIFO" % path)
    return fd


def main(argv):
    if len(argv) != 2:
        fail("usage: select_chunks.py K")
    k = int(argv[1])
    # A tool that never answers must not leave the benchmark blocked.
    signal.alarm(90)
    ctl = open_fifo("PERF_STAT_CTL_FIFO", os.O_WRONLY)
    ack = open_fifo("PERF_STAT_ACK_FIFO", os.O_RDONLY)

    def command(cmd):
        if os.write(ctl, cmd) != len(cmd):
            fail("%r: short write" % cmd)
        got = b""
        while b"\n" not in got:
            ready, _, _ = select.select([ack], [], [], 1.0)
            if not ready:
                fail("%r: no ack within 1 s (got %r)" % (cmd, got))
            while True:
                try:
                    chunk = os.read(ack, 4)
                except BlockingIOError:
                    break
                if not chunk:
                    fail("%r: end of file on the ack FIFO" % cmd)
                got += chunk
                if b"\n" in chunk:
                    break
        if got.replace(b"\0", b"") != b"ack\n":
            fail("reply to %r: %r, want b'ack\\n' (NULs aside)" % (cmd, got))

    for _ in range(3):
        os.getppid()
    command(b"enable\n")
    for _ in range(k):
        os.getppid()
    command(b"disable\n")
    for _ in range(2):
        os.getppid()


if __name__ == "__main__":
    main(sys.argv)
