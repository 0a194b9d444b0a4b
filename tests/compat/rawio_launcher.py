#!/usr/bin/env python3
"""rawio_launcher: a Python runner that starts the tool with Popen, then
opens its FIFOs as unbuffered file objects and drives the counting window
from outside the workload.

In the style of Python runners that do `open(ctl, "wb", buffering=0)` and
`open(ack, "rb", buffering=0)` after starting the tool (the blocking opens
return once the tool has its ends open), write b"enable\\n" and read the
ack until five bytes have come.  With --umask0 the FIFOs are made under
umask 0 (mode 0666), as launchers do so that a benchmark running as
another user can write to them.

    rawio_launcher.py [--umask0] DIR K MARKER -- TOOL [ARG...]

The workload (MARKER) makes 3 getppid() calls, notifies DIR/done, waits for
DIR/go, makes K calls, notifies again, waits again and makes 2 more; the
window is open only between.  The -x, report goes to DIR/stat.  After the
tool has exited, the ack FIFO must hold nothing more (end of file).
Standard library only.
"""
import os
import signal
import subprocess
import sys

EVENT = "syscalls:sys_enter_getppid"
ACK = b"ack\n\0"
TOOL = []  # the tool's Popen, once started: ended with the launcher


def fail(msg):
    sys.stderr.write("rawio_launcher: %s\n" % msg)
    for proc in TOOL:
        proc.kill()
    sys.exit(1)


def on_alarm(_sig, _frame):
    fail("gave up after 30 s (a blocking open or read never returned)")


def read_exact(f, n):
    got = b""
    while len(got) < n:
        chunk = f.read(n - len(got))
        if not chunk:
            fail("end of file after %r" % got)
        got += chunk
    return got


def main(argv):
    args = argv[1:]
    umask0 = bool(args) and args[0] == "--umask0"
    if umask0:
        args = args[1:]
    if len(args) < 5 or args[3] != "--":
        fail("usage: rawio_launcher.py [--umask0] DIR K MARKER -- TOOL [ARG...]")
    folder, k, marker, tool = args[0], int(args[1]), args[2], args[4:]
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(30)

    paths = {n: os.path.join(folder, n) for n in ("ctl", "ack", "go", "done")}
    if umask0:
        os.umask(0)
    for p in paths.values():
        os.mkfifo(p, 0o666)

    proc = subprocess.Popen(
        tool + ["-D", "-1", "-x,", "-o", os.path.join(folder, "stat"), "-e", EVENT,
                "--control", "fifo:%s,%s" % (paths["ctl"], paths["ack"]), "--",
                marker, "getppid", "3", "notify", paths["done"], "wait", paths["go"],
                "getppid", str(k), "notify", paths["done"], "wait", paths["go"],
                "getppid", "2"])
    TOOL.append(proc)
    ctl = open(paths["ctl"], "wb", buffering=0)
    ack = open(paths["ack"], "rb", buffering=0)
    done = open(paths["done"], "rb", buffering=0)
    go = open(paths["go"], "wb", buffering=0)

    def command(cmd):
        ctl.write(cmd)
        got = read_exact(ack, len(ACK))
        if got != ACK:
            fail("reply to %r: %r, want %r" % (cmd, got, ACK))

    read_exact(done, 3)
    command(b"enable\n")
    go.write(b"go\n")
    read_exact(done, 3)
    command(b"disable\n")
    go.write(b"go\n")
    status = proc.wait()
    TOOL.clear()
    if status != 0:
        fail("the tool exited with status %d" % status)
    rest = ack.read()
    if rest:
        fail("stray bytes on the ack FIFO: %r" % rest)


if __name__ == "__main__":
    main(sys.argv)
