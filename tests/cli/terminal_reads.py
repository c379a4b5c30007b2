"""Waiting until a process in a pseudo-terminal has read what was typed, from what
Linux's /proc says of it (its threads' system calls, its read count) and the terminal's
queue, imported as ``terminal_reads``: a key sent next cannot race its start-up, and a
line sent next does not come in the same read. Where /proc does not say so (another
system), a pause."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import signal
import termios
import time
from pathlib import Path

import pexpect


def read_by(child: pexpect.spawn) -> None:
    """Return once the canonical reader of the chat in ``child`` has read the line typed
    (echoed: it is in the terminal's queue) and looked whether more is behind it
    (lines_typed: a line read with more already waiting is part of a block): once
    nothing waits on the terminal and chat waits for input again (its main thread in
    epoll_wait, which lines_typed's read and look do not reach between them: its
    /proc/PID/syscall, or where that cannot be read its wchan). Where /proc does not say
    so (another system), a pause. Fails after 30 seconds."""
    proc = Path(f"/proc/{child.pid}")
    if not (proc / "wchan").exists():
        time.sleep(0.3)
        return
    terminal = os.open(os.readlink(proc / "fd" / "0"), os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        start = time.monotonic()
        while True:
            waiting = fcntl.ioctl(terminal, termios.FIONREAD, b"\0\0\0\0")
            if waiting == b"\0\0\0\0" and _in_epoll_wait(proc):
                return
            # a kernel that hides both ("0" whatever the process does): read, and more
            # than the pause above, is what can be known
            if waiting == b"\0\0\0\0" and time.monotonic() - start > 5:
                return
            assert time.monotonic() - start < 30, "the line typed was never read"
            time.sleep(0.01)
    finally:
        os.close(terminal)


#: The numbers of epoll_wait, epoll_pwait and epoll_pwait2 on the machines
#: /proc/PID/syscall is looked at on.
_EPOLL_SYSCALLS = {"x86_64": {"232", "281", "441"}, "aarch64": {"22", "441"}}.get(
    os.uname().machine, set()
)


def _in_epoll_wait(proc: Path) -> bool:
    """Whether the main thread of process ``proc`` waits in epoll_wait now."""
    try:
        call = (proc / "syscall").read_text().split()[:1]
    except OSError:  # not ours to look at: its wchan, which some kernels hide
        return "epoll" in (proc / "wchan").read_text()
    return bool(call) and call[0] in _EPOLL_SYSCALLS


#: The number of read(2) on the machines /proc/PID/task/*/syscall is looked at on.
_READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}.get(os.uname().machine)


def reading_stdin(child: pexpect.spawn) -> None:
    """Return once a thread of ``child`` is blocked reading its stdin (fd 0) with
    nothing typed left unread on the terminal: no start-up left to race a key sent next.
    Where /proc does not say so (another kernel or machine), a pause. Fails after 30
    seconds."""
    tasks = Path(f"/proc/{child.pid}/task")
    if _READ_SYSCALL is None or not tasks.exists():
        time.sleep(1)
        return
    terminal = os.open(os.readlink(f"/proc/{child.pid}/fd/0"), os.O_RDONLY | os.O_NOCTTY)
    try:
        start = time.monotonic()
        while True:
            calls = []
            for task in tasks.iterdir():
                with contextlib.suppress(OSError):  # a thread that ended meanwhile
                    calls.append((task / "syscall").read_text().split()[:2])
            waiting = fcntl.ioctl(terminal, termios.FIONREAD, b"\0\0\0\0")
            if [_READ_SYSCALL, "0x0"] in calls and waiting == b"\0\0\0\0":
                return
            assert time.monotonic() - start < 30, "stdin was never read"
            time.sleep(0.01)
    finally:
        os.close(terminal)


def _reads(pid: int) -> int:
    """How many read(2) calls (and the like) process ``pid`` has made and seen return."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("syscr:"):
            return int(line.split()[1])
    raise AssertionError(f"no syscr in /proc/{pid}/io")


def typed_and_read(child: pexpect.spawn, *keys: str) -> None:
    """Send ``keys`` to dsh's terminal, one write each (Ctrl-D, the end-of-file key,
    hands over what is typed on the line without a line end), while dsh waits to read
    them, and return once dsh has read them: a read of dsh's has returned since they
    were sent, and nothing is left unread on the terminal. Fails after 30 seconds; where
    /proc does not say so, a pause."""
    try:
        before = _reads(child.pid)
    except OSError:  # no /proc, or not ours to read
        for key in keys:
            child.send(key)
        time.sleep(0.5)
        return
    terminal = os.open(os.readlink(f"/proc/{child.pid}/fd/0"), os.O_RDONLY | os.O_NOCTTY)
    try:
        for key in keys:
            child.send(key)
        deadline = time.monotonic() + 30
        while True:
            waiting = fcntl.ioctl(terminal, termios.FIONREAD, b"\0\0\0\0")
            if _reads(child.pid) > before and waiting == b"\0\0\0\0":
                return
            assert time.monotonic() < deadline, f"{keys!r} was never read"
            time.sleep(0.01)
    finally:
        os.close(terminal)


def interrupt_stdin_reader(child: pexpect.spawn) -> None:
    """Send SIGINT to the one thread of ``child`` that is blocked reading its stdin, as
    the system may hand a Ctrl-C to any thread of the process that does not block it,
    once ``child``'s main thread waits in epoll_wait (its event loop asleep). Linux
    only (tgkill); call ``reading_stdin`` first."""
    proc = Path(f"/proc/{child.pid}")
    start = time.monotonic()
    while not _in_epoll_wait(proc):
        assert time.monotonic() - start < 30, "the event loop never waited"
        time.sleep(0.01)
    readers = []
    for task in (proc / "task").iterdir():
        with contextlib.suppress(OSError):
            if (task / "syscall").read_text().split()[:2] == [_READ_SYSCALL, "0x0"]:
                readers.append(int(task.name))
    assert len(readers) == 1 and readers[0] != child.pid, readers  # a thread of its own
    tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    assert tgkill(child.pid, readers[0], signal.SIGINT) == 0, os.strerror(ctypes.get_errno())


def keyboard_signals_as_at_a_terminal() -> None:
    """In a child before it starts dsh (or bash): SIGINT and SIGQUIT neither ignored nor blocked,
    as a terminal's shell starts a command, whatever the tests were started with (a
    shell without job control starts a command run with ``&`` with both ignored, and
    bash cannot undo what it was started ignoring; dsh keeps SIGQUIT ignored then)."""
    for signum in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT, signal.SIGQUIT])
