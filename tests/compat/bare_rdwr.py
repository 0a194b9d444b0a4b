#!/usr/bin/env python3
"""bare_rdwr: a Python benchmark that opens and closes its own counting
window with bare commands, and the launcher that starts it under the tool.

In the style of Python harnesses whose launcher makes two FIFOs in a
temporary directory, names them to the benchmark in environment variables
and runs the tool with --delay=-1 --control=fifo:CTL,ACK, while the
benchmark opens both FIFOs O_RDWR, writes "enable" or "disable" with no
terminator at all (os.write of the bare word) and reads the ack with one
os.read(fd, 5) that must return b"ack\\n\\0".

    bare_rdwr.py launch DIR K -- TOOL [ARG...]
    bare_rdwr.py bench K            (run by the launcher, under the tool)

The benchmark makes 3 getppid() calls before `enable`, K inside the window
and 2 after `disable`.  The launcher writes the tool's -x, report to
DIR/stat, and once the tool has exited checks that nothing is left on the
ack FIFO.  Standard library only.
"""
import os
import signal
import subprocess
import sys

EVENT = "syscalls:sys_enter_getppid"
CTL_VAR = "BENCH_PERF_CTL_FIFO"
ACK_VAR = "BENCH_PERF_ACK_FIFO"
ACK = b"ack\n\0"


def fail(msg):
    sys.stderr.write("bare_rdwr: %s\n" % msg)
    sys.exit(1)


def bench(k):
    # A tool that never answers must not leave the benchmark blocked.
    signal.alarm(90)
    ctl = os.open(os.environ[CTL_VAR], os.O_RDWR)
    ack = os.open(os.environ[ACK_VAR], os.O_RDWR)

    def command(word):
        if os.write(ctl, word) != len(word):
            fail("%r: short write" % word)
        got = os.read(ack, len(ACK))
        if got != ACK:
            fail("reply to %r: %r, want %r" % (word, got, ACK))

    for _ in range(3):
        os.getppid()
    command(b"enable")
    for _ in range(k):
        os.getppid()
    command(b"disable")
    for _ in range(2):
        os.getppid()


def launch(folder, k, tool):
    ctl = os.path.join(folder, "ctl")
    ack = os.path.join(folder, "ack")
    os.mkfifo(ctl)
    os.mkfifo(ack)
    # Held only to look at what is left on the ack FIFO at the end.
    held = os.open(ack, os.O_RDWR | os.O_NONBLOCK)
    env = dict(os.environ)
    env[CTL_VAR] = ctl
    env[ACK_VAR] = ack
    run = subprocess.run(
        tool + ["--delay=-1", "--control=fifo:%s,%s" % (ctl, ack), "-x,",
                "-o", os.path.join(folder, "stat"), "-e", EVENT, "--",
                sys.executable, os.path.abspath(__file__), "bench", str(k)],
        env=env, check=False, timeout=60)
    if run.returncode != 0:
        fail("the tool exited with status %d" % run.returncode)
    try:
        rest = os.read(held, 4096)
    except BlockingIOError:
        rest = b""
    if rest:
        fail("stray bytes on the ack FIFO: %r" % rest)


def main(argv):
    if len(argv) == 3 and argv[1] == "bench":
        bench(int(argv[2]))
    elif len(argv) >= 6 and argv[1] == "launch" and argv[4] == "--":
        launch(argv[2], int(argv[3]), argv[5:])
    else:
        fail("usage: bare_rdwr.py launch DIR K -- TOOL [ARG...] | bench K")


if __name__ == "__main__":
    main(sys.argv)
