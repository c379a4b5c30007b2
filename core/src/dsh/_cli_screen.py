"""The terminal's streams while ``dsh chat`` or ``dsh run`` runs: ``sys.stdout`` and
``sys.stderr``, each if it is the terminal, through a :class:`TerminalStream` of one
:class:`Screen`. While chat's line editor (``_cli_editor``) runs, whole lines are
printed above it and each stream's unfinished line is drawn by it; otherwise they are
written as they come. Once the terminal has gone (a write fails with EIO: its window
closed) what is written to it goes to /dev/null, with the editor or without
(``terminal_streams``), so that nothing written later fails again.
"""

from __future__ import annotations

import asyncio
import errno
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, TextIO, cast

from dsh._render import discard

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

__all__ = ["Screen", "TerminalStream", "streams_through", "terminal_streams"]


def terminal_streams() -> AbstractContextManager[None]:
    """sys.stdout and sys.stderr, each if it is the terminal, through streams that write
    to /dev/null once the terminal has gone (run, and chat without the editor; see
    ``Screen.gone``)."""
    return streams_through(Screen())


@contextmanager
def streams_through(screen: Screen) -> Iterator[None]:
    """sys.stdout and sys.stderr through ``screen``, each if it is the terminal."""
    saved = sys.stdout, sys.stderr
    if sys.stdout.isatty():
        sys.stdout = cast(TextIO, TerminalStream(sys.stdout, screen))
    if sys.stderr.isatty():
        sys.stderr = cast(TextIO, TerminalStream(sys.stderr, screen))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


class Screen:
    """Whole lines printed above the running Application, in the order written, all that
    came meanwhile at once; the streams' unfinished lines."""

    def __init__(self) -> None:
        self.app: Application[None] | None = None
        self.streams: list[TerminalStream] = []
        self._pending: list[tuple[TextIO, str]] = []
        #: Lines typed while a stream's line was unfinished, and the lines written after
        #: them (a command's answer): drawn below it, and printed once it has ended
        #: (above it they would look typed before it, the answer before the command).
        self._held: list[tuple[TextIO, str]] = []
        #: The streams whose unfinished lines the held lines wait for.
        self._ahead: list[TerminalStream] = []
        #: The event loop the Application runs in, and its thread: a write from another
        #: thread (a log record from a worker) is handed to it.
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = 0

    @property
    def running(self) -> bool:
        return self.app is not None and self.app.is_running

    def above(self, real: TextIO, text: str) -> None:
        if not self.running:
            self.flush()
            self.write(real, text)
            return
        self._pending.append((real, text))
        if len(self._pending) == 1:
            asyncio.get_running_loop().call_soon(self._print_pending)

    def _print_pending(self) -> None:
        """The lines pending, above the Application: its drawing erased, the lines written
        where it was, and the Application drawn again below them. The terminal stays in
        the Application's raw mode meanwhile: prompt_toolkit's ``run_in_terminal`` puts it
        back in canonical mode for the write, where the kernel echoes a key typed then
        into the answer and takes a Ctrl-D for itself (the question it was meant to
        deny would wait on)."""
        if self.app is not None and self.app.is_running:
            self.app.renderer.erase()
        self.flush()
        self.redraw()

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        for real, text in pending:
            self.write(real, text)

    def write(self, real: TextIO, text: str) -> None:
        """``text`` to the terminal now (see ``gone``)."""
        try:
            real.write(text)
            real.flush()
        except OSError as error:
            self.gone(error)

    def gone(self, error: OSError) -> None:
        """A write to the terminal failed: if with EIO, the terminal went away (its
        window closed), and from now on what is written to it goes to /dev/null, so that
        nothing written later fails again (a message, the answer, the flush at exit)."""
        if error.errno != errno.EIO:
            raise error
        for stream in self.streams:
            discard(stream.real)

    def redraw(self) -> None:
        if self.app is not None and self.app.is_running:
            self.app.invalidate()

    def echo(self, real: TextIO, text: str) -> None:
        """A line typed, as ``above``, but after the streams' unfinished lines."""
        if not self._held:
            self._ahead = [s for s in self.streams if s.tail]
        self._held.append((real, text))
        self.release()
        self.redraw()

    def line(self, stream: TerminalStream, text: str) -> None:
        """A whole line ``stream`` wrote: above, or held after the lines typed if they
        wait for another stream's line (it was written after them)."""
        if stream in self._ahead:  # its line the held ones wait for has ended
            self._ahead.remove(stream)
        elif self._held:
            self._held.append((stream.real, text))
            return
        self.above(stream.real, text)

    def release(self) -> None:
        """Print the lines held, once the unfinished lines they wait for have ended."""
        if self._held and not any(s.tail for s in self._ahead):
            held, self._held, self._ahead = self._held, [], []
            for real, text in held:
                self.above(real, text)

    def _drawn(self) -> list[tuple[TerminalStream | TextIO, str]]:
        """What the Application draws above the input line, in order, each with its
        stream: the unfinished lines the held ones wait for, the held lines, the
        streams' other unfinished lines (begun after the held ones)."""
        ahead = [(s, s.tail) for s in self._ahead if s.tail]
        after = [(s, s.tail) for s in self.streams if s.tail and s not in self._ahead]
        held = [(real, text.removesuffix("\n")) for real, text in self._held]
        return [*ahead, *held, *after]

    def tails(self) -> str:
        """What the Application draws above the input line (``_drawn``)."""
        return "\n".join(line.expandtabs() for _, line in self._drawn())

    def finish(self) -> None:
        """The Application has ended: what it drew above the input line is printed
        below what was printed above it, in the order drawn."""
        self.flush()
        drawn, self._held, self._ahead = self._drawn(), [], []
        for where, line in drawn:
            if isinstance(where, TerminalStream):
                where.tail = ""
                where = where.real
            self.write(where, line + "\n")


class TerminalStream:
    """``sys.stdout`` or ``sys.stderr``, when it is the terminal, while chat runs."""

    def __init__(self, real: TextIO, screen: Screen) -> None:
        self.real = real
        self.screen = screen
        #: What was written after the last line end: drawn by the Application.
        self.tail = ""
        screen.streams.append(self)

    def write(self, data: str) -> int:
        written = len(data)
        if not self.screen.running:
            try:
                self.real.write(data)
            except OSError as error:
                self.screen.gone(error)
            return written
        if threading.get_ident() != self.screen.thread and self.screen.loop is not None:
            # prompt_toolkit draws from its loop's thread only: write there, in order
            self.screen.loop.call_soon_threadsafe(self.write, data)
            return written
        others = [s for s in self.screen.streams if s is not self and s.tail]
        if data.startswith("\n") and not self.tail and others:
            # On a terminal this line end would end the other stream's unfinished line
            # ("\n(cancelled; ...)" after a partial answer): it ends that one instead.
            for other in others:
                other.end_line()
            data = data[1:]
        if "\n" not in data:
            self.tail += data
            self.screen.redraw()
            return written
        head, self.tail = (self.tail + data).rsplit("\n", 1)
        self.screen.line(self, head + "\n")
        self.screen.release()
        return written

    def end_line(self) -> None:
        if self.tail:
            self.write("\n")

    def flush(self) -> None:
        if not self.screen.running:
            self.screen.write(self.real, "")

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.real.fileno()

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return self.real.encoding

    @property
    def errors(self) -> str | None:
        return self.real.errors
