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

__all__ = ["exit_on_ctrl_c"]

#: The exit status of a dsh interrupted (128 + SIGINT).
INTERRUPTED = 130


def exit_on_ctrl_c() -> None:
    """From now on Ctrl-C (SIGINT) ends the process at once with status 130. Only for
    the process of the ``dsh`` command (``main()`` called without arguments): a program
    calling ``main(argv)`` keeps its own handler."""
    with suppress(ValueError, OSError):  # not the main thread, or no signals here
        signal.signal(signal.SIGINT, _exit)


def _exit(signum: int, frame: FrameType | None) -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(INTERRUPTED)
