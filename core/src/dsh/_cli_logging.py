"""What dsh and its plugins log, as the ``dsh`` command shows it on stderr: warnings
and errors, each message once; with ``-v`` their tracebacks, and dsh's DEBUG records
that carry one."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["logging_to_stderr"]


class _EachMessageOnce(logging.Handler):
    """What dsh and its plugins log (warnings and errors), on stderr as ``dsh: MESSAGE``,
    each distinct message once (a failing session flush is retried, and logged, at the
    end of the turn and again when the agent is disposed); tracebacks only with -v, and
    then the DEBUG records of dsh that carry one too (a hook's failure that ended the
    turn, a tool's exception)."""

    def __init__(self, verbose: bool) -> None:
        super().__init__(logging.DEBUG if verbose else logging.WARNING)
        self.verbose = verbose
        self.seen: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING and not (record.exc_info or record.exc_text):
            return  # -v is for tracebacks, not every detail a library logs
        from dsh._visible import visible

        try:
            message = record.getMessage()
            if message in self.seen:
                return
            self.seen.add(message)
            text = f"dsh: {message}\n"
            if self.verbose and record.exc_info:
                text += logging.Formatter().formatException(record.exc_info) + "\n"
            elif self.verbose and record.exc_text:  # HideKeys left only the text, keys hidden
                text += record.exc_text + "\n"
            sys.stderr.write(visible(text))  # a file name a tool logged may hold escapes
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


@contextmanager
def logging_to_stderr(verbose: bool) -> Iterator[None]:
    from dsh._secrets import HideKeys

    handler = _EachMessageOnce(verbose)
    handler.addFilter(HideKeys())  # plugins' and libraries' records (the core's hide their own)
    root = logging.getLogger()
    root.addHandler(handler)
    own = logging.getLogger("dsh")
    level = own.level
    if verbose:  # its DEBUG records with a traceback are for -v
        own.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        root.removeHandler(handler)
        own.setLevel(level)
