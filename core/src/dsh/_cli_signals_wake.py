"""A signal wakes the event loop of a plugin's command, whichever thread the system
hands it to.

Python runs a signal's handler in the main thread only, when it next runs Python code.
The system may hand a signal to any thread that does not block it: a thread of the
command's (``read_prompt``'s reader of stdin, a worker thread) as well as the main one.
asyncio sets no wakeup fd unless a handler of its own is added: its loop, asleep in
the main thread, slept on, and the Ctrl-C went unanswered (asyncio's handler, which
cancels the command) till something else woke it, never while the prompt was typed.
``dsh run`` and ``dsh chat`` take their signals through the loop (``until_terminated``):
woken already."""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager, suppress

__all__ = ["signals_wake_the_loop"]


@contextmanager
def signals_wake_the_loop() -> Iterator[None]:
    """Within this block a signal wakes the running asyncio loop, so that Python's
    handler runs at once (in the main thread only: elsewhere Python runs none, and
    this does nothing)."""
    loop = asyncio.get_running_loop()
    woken, wake = socket.socketpair()
    previous: int | None = None
    try:
        wake.setblocking(False)
        woken.setblocking(False)
        with suppress(ValueError):  # not the main thread
            previous = signal.set_wakeup_fd(wake.fileno(), warn_on_full_buffer=False)
        if previous is not None:
            try:
                loop.add_reader(woken, _drain, woken)
            except NotImplementedError:  # Windows' proactor loop: as it was
                signal.set_wakeup_fd(previous)
                previous = None
        try:
            yield
        finally:
            if previous is not None:
                loop.remove_reader(woken)
                signal.set_wakeup_fd(previous)
    finally:
        woken.close()
        wake.close()


def _drain(woken: socket.socket) -> None:
    """Read what the signals wrote: the loop is awake; Python runs their handlers."""
    with suppress(OSError):  # nothing left to read
        while woken.recv(512):
            pass
