"""The ``dsh`` command's entry point (core/pyproject.toml, ``[project.scripts]``): a
module of its own, outside the dsh package, so that it runs before dsh is imported.

A Ctrl-C while dsh is imported (pluggy, the command line's modules: tens of
milliseconds, seconds on a busy machine) came before dsh catches one
(``dsh.cli._main``): Python printed its KeyboardInterrupt traceback, and the process
ended by the signal. From here until dsh catches it, Ctrl-C ends the process at once
as dsh ends an interrupted command, ``dsh: interrupted`` and status 130: nothing has
begun that needs a way out. dsh then hands Ctrl-C back to Python
(``dsh._cli_interrupted.interrupts_raise``).

``python -m dsh`` and ``python -m dsh.cli`` call ``quiet_ctrl_c`` first thing (in
dsh/__main__.py, at the top of dsh/cli.py). runpy imports the dsh package before either
runs; it imports nothing then (its names are imported on first use), so that nothing
that takes time comes before that."""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["main", "on_ctrl_c", "quiet_ctrl_c"]


def main() -> int:
    quiet_ctrl_c()
    from dsh.cli import main as dsh

    return dsh()


def quiet_ctrl_c() -> None:
    """From here until dsh catches Ctrl-C, end the process as ``on_ctrl_c`` does on one.
    SIGINT ignored (a background job of a script) stays ignored, as in Python."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_ctrl_c)


def on_ctrl_c(signum: int, frame: object) -> None:
    """Ctrl-C as dsh is imported: said as dsh says it (after the ``^C`` a terminal
    echoed, on a line of its own), and the process ends with 130."""
    try:  # noqa: SIM105 - not contextlib.suppress: contextlib may not be imported yet
        print("\n" * sys.stderr.isatty() + "dsh: interrupted", file=sys.stderr, flush=True)
    except Exception:  # stderr closed: ending is what is left to do
        pass
    os._exit(130)
