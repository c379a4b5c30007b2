"""A dsh interrupted (it said ``dsh: interrupted`` and exits 130): a Ctrl-C that comes
while it exits (two quick Ctrl-C as it starts, the second after the first ended it)
ends it at once with 130 too, rather than raise a KeyboardInterrupt where nothing
catches it (Python then ends the process by SIGINT, or prints a traceback)."""

from __future__ import annotations

import os
import signal
import sys
from contextlib import suppress
from types import FrameType

__all__ = ["exit_on_ctrl_c", "interrupts_raise"]

#: The exit status of a dsh interrupted (128 + SIGINT).
INTERRUPTED = 130


def exit_on_ctrl_c() -> None:
    """From now on Ctrl-C (SIGINT) ends the process at once with status 130. Only for
    the process of the ``dsh`` command (``main()`` called without arguments): a program
    calling ``main(argv)`` keeps its own handler."""
    with suppress(ValueError, OSError):  # not the main thread, or no signals here
        signal.signal(signal.SIGINT, _exit)


def interrupts_raise() -> None:
    """Ctrl-C raises KeyboardInterrupt from here on, as in Python, for dsh to catch:
    the ``dsh`` command's entry point (``_dsh_command``) had it end the process while
    dsh was imported. Any other handler (a program's own, calling ``main()``) stays."""
    entry = sys.modules.get("_dsh_command")
    with suppress(ValueError, OSError):  # not the main thread, or no signals here
        if entry is not None and signal.getsignal(signal.SIGINT) is entry.on_ctrl_c:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _exit(signum: int, frame: FrameType | None) -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(INTERRUPTED)
